"""Disks that refuse, for the tests of writes: a tiny tmpfs that fills at once and a read-only one, mounted where
this machine lets the tests mount (root, as here and in CI); elsewhere the nearest thing a user can make: a
file-size limit (RLIMIT_FSIZE, EFBIG) for a full disk, a folder without write permission for a read-only one."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path


def _mount(folder: Path, options: str) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True,
                          check=False)
    return done.returncode == 0


def _unmount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def _limit_file_size() -> None:  # in the child, before it runs: a write past 4 kB fails with EFBIG
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


@contextlib.contextmanager
def full_disk(tmp: Path) -> Iterator[tuple[Path, Callable[[], None] | None]]:
    """(a folder on a disk with 4 kB of room, a preexec_fn for the subprocess that writes there, or None)."""
    folder = tmp / "full"
    if _mount(folder, "size=4k,mode=0777"):
        try:
            yield folder, None
        finally:
            _unmount(folder)
    else:
        yield folder, _limit_file_size


@contextlib.contextmanager
def read_only_folder(tmp: Path, files: dict[str, bytes] | None = None) -> Iterator[Path]:
    """A read-only folder holding `files` (name -> bytes)."""
    folder = tmp / "read_only"
    if _mount(folder, "size=1m,mode=0777"):
        for name, data in (files or {}).items():
            (folder / name).write_bytes(data)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True, capture_output=True)
        try:
            yield folder
        finally:
            _unmount(folder)
    else:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in (files or {}).items():
            (folder / name).write_bytes(data)
        os.chmod(folder, 0o555)
        try:
            yield folder
        finally:
            os.chmod(folder, 0o755)
