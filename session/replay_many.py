"""Replay a folder of recorded sessions (a league's week of games): one process per session, on every core.

`replay_one(path, options)` replays one recorded session and returns a `SessionReplay`: its events (or the
file they were written to), its summary, or the one sentence that says why it could not be replayed. It is a
plain function of picklable values, so anything that can call a function on another core or machine can
fan it out: `replay_folder` does it with a local `concurrent.futures.ProcessPoolExecutor` (`tablesight replay
FOLDER`), and docs/leagues.md shows the same call under Dask or Ray across machines.

A folder of sessions is a directory whose subdirectories include recorded sessions (vision/session_dir.py);
other subdirectories and files are left alone. Sessions are replayed in parallel but reported in name order,
so the output does not depend on which finished first. A session that cannot be replayed (a missing
calibration, a corrupt frame) is reported and the others still finish.

Each process gets its share of the cores for the read-ahead's detection threads (session/read_ahead.py):
with more sessions than cores, one thread each beside its ruling thread.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path
from queue import Empty
from typing import Any, TextIO

from calibration.errors import InputError
from calibration.file_write import why_not_written
from rules.engine import RulesInputError
from session.read_ahead import usable_cores
from session.replay import ReplayRun, json_line, load_setup, open_source
from vision.session_dir import is_session_dir

PROGRESS_EVERY = 10
"""A worker reports its frames to the progress bar every this many frames."""


@dataclass(frozen=True)
class ReplayOptions:
    """What every session of a folder is replayed with: setup files that override the sessions' own (as
    `tablesight replay`'s flags do), where to write each session's JSON lines (`out_dir`: DIR/<session>.jsonl,
    exactly what `tablesight replay SESSION --json` prints; None: the events come back in the result), and
    the read-ahead's detection threads (None: one a usable core)."""

    calibration: str | None = None
    roster: str | None = None
    terrain: str | None = None
    game: str | None = None
    out_dir: str | None = None
    workers: int | None = None


@dataclass(frozen=True)
class SessionReplay:
    """One session's replay: its events (unless written to `out_file`), its summary event, or why it failed.

    status: 0 replayed, 2 bad input (`error` is one sentence naming the file and the fix), 1 a fault of ours.
    A session that fails part-way keeps what it replayed before (as a replay of it alone prints it): the events
    before the failure, or with `out_dir` the lines in DIR/<session>.jsonl.part (no summary: not a result)."""

    name: str
    path: str
    events: tuple[dict[str, Any], ...] = ()
    summary: dict[str, Any] | None = None
    out_file: str | None = None
    error: str | None = None
    status: int = 0
    frames: int = 0


def sessions_in(folder: Path | str) -> list[Path]:
    """The recorded sessions directly inside `folder`, sorted by name (empty if it is itself a session)."""
    path = Path(folder)
    if not path.is_dir() or is_session_dir(path):
        return []
    return sorted((p for p in path.iterdir() if p.is_dir() and is_session_dir(p)), key=lambda p: p.name)


_progress: Queue[tuple[str, int]] | None = None
"""Set in each worker process of `replay_folder` when someone watches a progress bar."""


def _init_worker(progress: Queue[tuple[str, int]] | None) -> None:
    global _progress
    _progress = progress


def replay_one(path: str, options: ReplayOptions | None = None) -> SessionReplay:
    """Replay the recorded session at `path`; never raises for a bad session (see `SessionReplay.status`)."""
    opts = options or ReplayOptions()
    name = Path(path).name
    frames = 0
    events: list[dict[str, Any]] = []  # kept up to a failure, as a replay of the session alone prints them
    try:
        source = open_source(path)
        try:
            setup = load_setup(source, _path(opts.calibration), _path(opts.roster), _path(opts.terrain), opts.game)
            run = ReplayRun(source, setup, workers=opts.workers)
            told = 0
            out_file = Path(opts.out_dir) / f"{name}.jsonl" if opts.out_dir is not None else None
            part = out_file.with_name(out_file.name + ".part") if out_file is not None else None
            with _out_file(part) if part is not None else _nothing() as fh:
                for event in run.events():
                    frames = run.frames
                    if fh is not None:
                        _writing(fh.write, json_line(event) + "\n")
                    else:
                        events.append(event)
                    if _progress is not None and run.frames - told >= PROGRESS_EVERY:
                        _progress.put((name, run.frames - told))
                        told = run.frames
            if part is not None and out_file is not None:
                _writing(part.replace, out_file)
            if _progress is not None and run.frames > told:
                _progress.put((name, run.frames - told))
            frames = run.frames
            summary = events[-1] if events else _last_line(out_file)
            return SessionReplay(name, str(path), tuple(events), summary,
                                 str(out_file) if out_file is not None else None, frames=frames)
        finally:
            source.close()
    except (InputError, RulesInputError) as err:
        return SessionReplay(name, str(path), tuple(events), error=str(err), status=2, frames=frames)
    except _OutWriteError as out_err:
        with contextlib.suppress(OSError):  # the --out folder refused: no half-written file is left behind
            (Path(str(opts.out_dir)) / f"{name}.jsonl.part").unlink()
        return SessionReplay(name, str(path), tuple(events), status=2, frames=frames,
                             error=f"The events of session {name} could not be written to {opts.out_dir}: "
                                   f"{why_not_written(out_err.err)}; free some space or give an --out folder you can write "
                                   "to.")
    except Exception as err:  # noqa: BLE001 - a fault of ours: this session says so, the others go on
        return SessionReplay(name, str(path), tuple(events), status=1, frames=frames,
                             error=f"Session {name} stopped on an internal fault ({type(err).__name__}: {err}); "
                                   "please report it with the session.")


def _path(value: str | None) -> Path | None:
    return Path(value) if value is not None else None


class _OutWriteError(Exception):
    """An OSError met writing the --out file (not reading the session)."""

    def __init__(self, err: OSError) -> None:
        super().__init__(str(err))
        self.err = err


@contextlib.contextmanager
def _out_file(part: Path) -> Iterator[TextIO]:
    """The --out file being written, each failure to write or close it an _OutWriteError (a close after a failed
    write cannot flush either, and is not allowed to hide the first failure)."""
    fh = _writing(part.open, "w", encoding="utf-8")
    try:
        yield fh
    except BaseException:
        with contextlib.suppress(OSError):
            fh.close()
        raise
    _writing(fh.close)


def _writing(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`call(*args, **kwargs)`, an OSError raised as _OutWriteError: a write to the --out folder failed."""
    try:
        return call(*args, **kwargs)
    except OSError as err:
        raise _OutWriteError(err) from err


class _nothing:
    """A context manager that gives None (no file to write)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _last_line(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - 65536))
        lines = fh.read().decode("utf-8", "replace").splitlines()
    return json.loads(lines[-1]) if lines else None


def replay_folder(sessions: Sequence[Path], options: ReplayOptions | None = None, processes: int | None = None,
                  on_frames: Callable[[int], None] | None = None) -> Iterator[SessionReplay]:
    """Replay `sessions` in a pool of `processes` (default: one a usable core, at most one a session) and yield
    their results in the order of `sessions`, each as soon as it and those before it are done. on_frames(n):
    n more frames were replayed (for a progress bar; None: the workers do not count)."""
    if not sessions:
        return
    cores = usable_cores()
    procs = max(1, min(len(sessions), processes if processes is not None else cores))
    opts = options or ReplayOptions()
    if opts.workers is None:  # the cores shared out: read-ahead threads a process
        opts = ReplayOptions(opts.calibration, opts.roster, opts.terrain, opts.game, opts.out_dir,
                             max(1, cores // procs))
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads and locks
    progress: Queue[tuple[str, int]] | None = ctx.Queue() if on_frames is not None else None
    results: dict[int, SessionReplay] = {}
    nxt = 0
    with ProcessPoolExecutor(max_workers=procs, mp_context=ctx, initializer=_init_worker,
                             initargs=(progress,)) as pool:
        futures: dict[Future[SessionReplay], int] = {
            pool.submit(replay_one, str(p), opts): k for k, p in enumerate(sessions)
        }
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            _drain(progress, on_frames)
            for f in done:
                k = futures[f]
                try:
                    results[k] = f.result()
                except BrokenProcessPool as err:  # a worker died (out of memory, a crash in a library)
                    name = sessions[k].name
                    results[k] = SessionReplay(name, str(sessions[k]), status=1,
                                               error=f"Session {name}: its replay process died ({err}); replay it on "
                                                     "its own to see why.")
            while nxt in results:
                yield results.pop(nxt)
                nxt += 1
        _drain(progress, on_frames)
    if progress is not None:
        progress.close()


def _drain(progress: Queue[tuple[str, int]] | None, on_frames: Callable[[int], None] | None) -> None:
    if progress is None or on_frames is None:
        return
    while True:
        try:
            _, n = progress.get_nowait()
        except (Empty, OSError, ValueError):
            return
        on_frames(n)


def total_frames(sessions: Sequence[Path]) -> int | None:
    """Frames the sessions' indexes list (for a progress bar), None if an index cannot be read."""
    from vision.session_dir import read_index

    try:
        return sum(len(read_index(p)) for p in sessions)
    except (InputError, OSError):
        return None

