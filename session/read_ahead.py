"""The next frames' own work done on worker threads while the caller maps, tracks and rules this one.

Much of a frame's work depends on nothing but the frame: reading it (file read, JPEG decode), its grey image,
and the part of its tag scan that does not follow the tags of the frames before it (`Pipeline.prepare`: the
coarse scan and the sweep's cell for its frame number, or a full scan). So it can be done ahead, out of order,
on other cores, and handed over in order. `ReadAhead(frames, prepare)` iterates `(frame, prepare(frame,
detector))` pairs in the order of `frames`; the caller passes each to `Pipeline.process(frame,
prepared=...)`, which then scans only the windows round the last frame's tags. The transcript is byte for
byte the serial one (the sample sessions' goldens): `prepare` is a function of the frame.

Why threads and not processes: reading, decoding, grey conversion and pupil-apriltags' detect are C calls
that release the interpreter lock, and they are most of a frame's work; what a frame's scan found is small to
hand over, its pixels are not. Each worker owns its own `vision.tags.TagDetector` (a detector serves one
call at a time) and releases it when it stops.

The workers pull frames from `frames` one at a time, in order (under a lock: a source is read by one thread
at a time), so reading is spread over them too. At most `depth` frames are read and not yet taken by the
caller (bounded memory: a 1080p frame is 6 MB). An exception from `frames` or from `prepare` is raised to
the caller at its place in the order, after every frame before it; `close()` (or leaving a `with` block,
or the caller's generator being closed) stops the workers, waits for them (so the source may be closed
right after) and releases their detectors.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Generic, Self, TypeVar

from vision.tags import TagDetector

MAX_WORKERS = 4
"""More detection threads than this gain nothing a frame's hand-over does not eat (and a 1080p frame each)."""


FrameT = TypeVar("FrameT")
PreparedT = TypeVar("PreparedT")


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_workers() -> int:
    """Read-ahead threads for a replay that has the machine to itself: one a core (the caller's thread, which
    maps, tracks and rules, takes ~10 % of a frame's work and shares them)."""
    return max(1, min(MAX_WORKERS, usable_cores()))


class ReadAhead(Generic[FrameT, PreparedT]):
    """Iterate `(frame, prepare(frame, detector))` over `frames`, prepared ahead on `workers` threads (see the
    module docstring). Use as a context manager, or call `close()`."""

    def __init__(self, frames: Iterable[FrameT], prepare: Callable[[FrameT, TagDetector], PreparedT], *,
                 workers: int | None = None, depth: int | None = None) -> None:
        self._prepare = prepare
        self.workers = max(1, int(workers if workers is not None else default_workers()))
        self.depth = max(self.workers, int(depth if depth is not None else 2 * self.workers))
        self._source: Iterator[FrameT] = iter(frames)
        self._read_lock = threading.Lock()  # the source is read by one thread at a time, in order
        self._cond = threading.Condition()
        self._results: dict[int, tuple[FrameT, PreparedT] | BaseException] = {}
        self._read = 0  # frames taken from the source (the next one's sequence number)
        self._taken = 0  # frames handed to the caller
        self._end: int | None = None  # sequence number after the last: the source ended or failed there
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"read ahead {k}", daemon=True)
                         for k in range(self.workers)]
        for t in self._threads:
            t.start()

    # ------------------------------------------------------------------------------------------ workers
    def _work(self) -> None:
        detector: TagDetector | None = None
        try:
            detector = TagDetector(at_exit=False)
            while True:
                with self._cond:
                    while not self._stopping() and self._read - self._taken >= self.depth:
                        self._cond.wait()
                    if self._stopping():
                        return
                with self._read_lock:
                    if self._stopping():
                        return
                    try:
                        frame = next(self._source)
                    except StopIteration:
                        self._finish(self._read, None)
                        return
                    except BaseException as err:  # noqa: BLE001 - handed to the caller in its place
                        self._finish(self._read, err)
                        return
                    with self._cond:
                        seq = self._read
                        self._read += 1
                item: tuple[FrameT, PreparedT] | BaseException
                try:
                    item = (frame, self._prepare(frame, detector))
                except BaseException as err:  # noqa: BLE001 - handed to the caller in its place
                    item = err
                with self._cond:
                    if not self._closed:  # nobody takes it after close (and its frame is let go)
                        self._results[seq] = item
                    self._cond.notify_all()
        except BaseException as err:  # noqa: BLE001 - the detector could not be made: the caller hears of it
            with self._read_lock:
                self._finish(self._read, err)
        finally:
            if detector is not None:
                detector.release()

    def _stopping(self) -> bool:
        return self._closed or self._end is not None

    def _finish(self, seq: int, err: BaseException | None) -> None:
        """The source ended (err None) or failed at sequence number `seq`."""
        with self._cond:
            if err is not None:
                self._results.setdefault(seq, err)
                seq += 1
            self._end = seq if self._end is None else min(self._end, seq)
            self._cond.notify_all()

    # ------------------------------------------------------------------------------------------ the caller
    def __iter__(self) -> Self:
        return self

    def __next__(self) -> tuple[FrameT, PreparedT]:
        item: tuple[FrameT, PreparedT] | BaseException | None
        with self._cond:
            while True:
                if self._closed:
                    item = None
                    break
                if self._taken in self._results:
                    item = self._results.pop(self._taken)
                    self._taken += 1
                    self._cond.notify_all()
                    break
                if self._end is not None and self._taken >= self._end:
                    item = None
                    break
                self._cond.wait()
        if item is None:
            self.close()
            raise StopIteration
        if isinstance(item, BaseException):
            self.close()
            raise item
        return item

    def close(self) -> None:
        """Stop the workers and wait for them (a frame they are reading or detecting is finished first)."""
        with self._cond:
            self._closed = True
            self._results.clear()
            self._cond.notify_all()
        me = threading.current_thread()
        for t in self._threads:
            if t is not me and t.ident is not None:
                t.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

