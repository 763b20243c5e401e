"""The one way a file a user asked for is written (a report, a PDF, a roster, a calibration): whole or not at all.

The bytes go to a new temporary file of a random name beside the target (created, never opened through a link
left there), are flushed to the disk, and the temporary file is renamed over the target. When the disk refuses,
the temporary file is removed, the target is as it was, and `FileWriteError` says in one sentence which file
and why ("the disk is full", "the folder is read-only"). Lives in `calibration/`, the bottom layer, beside the
one JSON reader, so every layer can use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from calibration.errors import InputError


class FileWriteError(InputError):
    """A file that could not be written; the message names it, the reason and the fix."""


REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file would be larger than this system allows",
    errno.EROFS: "the folder is read-only",
    errno.EACCES: "this user may not write there",
    errno.EPERM: "this user may not write there",
    errno.ENOENT: "the folder does not exist",
    errno.ENOTDIR: "part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EIO: "the disk gave an input/output error",
}


def why_not_written(err: OSError) -> str:
    """The reason an OSError gives, in words ("the disk is full")."""
    return REASONS.get(err.errno or 0, err.strerror or type(err).__name__)


def write_file(path: Path | str, data: bytes | str, what: str = "file", mode: int = 0o644,
               fsync: bool = True) -> Path:
    """Write `data` (text as UTF-8) to `path` atomically; FileWriteError (one sentence naming the `what`, the
    path and the reason) when it cannot be, with no partial or temporary file left behind."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if path.is_dir():
        raise FileWriteError(f"The {what} {path} cannot be written: it is a folder; give a file name.")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".part", dir=path.parent)
    except OSError as err:
        raise _sentence(what, path, err) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode & ~_umask())
            fh.write(payload)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _sentence(what, path, err) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _sentence(what: str, path: Path, err: OSError) -> FileWriteError:
    return FileWriteError(f"The {what} {path} could not be written: {why_not_written(err)}; free some space or "
                          "choose a folder you can write to, and try again.")


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
