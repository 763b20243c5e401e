"""Detection of the next frames on worker threads while the caller maps, tracks and rules this one.

A replay (and the replay page's timeline scan) runs every frame through a full scan at one decimation
(`Pipeline(fine_every=1)`): the tags of a frame are a pure function of its pixels, so they can be found
ahead of time, out of order, on other cores, and handed over in order. `DetectAhead(frames, decimate)`
iterates `(frame, tags)` pairs in the order of `frames`, where `tags` is exactly what
`detect_tags(gray_frame(frame.image), decimate=decimate)` gives, which is what the pipeline's own full scan
gives (`vision.windowed.WindowedDetector` with fine_every 1); `Pipeline.process(frame, tags=tags)` then skips
its own detection. The transcript is byte-for-byte the serial one (the sample sessions' goldens).

Why threads and not processes: reading the next frame (file read, JPEG decode), grey conversion and
pupil-apriltags' detect are C calls that release the interpreter lock, and they are ~90 % of a frame's work;
a frame's tags are small to hand over, its pixels are not. Each worker owns its own `vision.tags.TagDetector`
(a detector serves one call at a time) and releases it when it stops.

The workers pull frames from `frames` one at a time, in order (under a lock: a source is read by one thread
at a time), so reading is spread over them too. At most `depth` frames are read and not yet taken by the
caller (bounded memory: a 1080p frame is 6 MB). An exception from `frames` or from detection is raised to
the caller at its place in the order, after every frame before it; `close()` (or leaving a `with` block,
or the caller's generator being closed) stops the workers, waits for them (so the source may be closed
right after) and releases their detectors.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Generic, Protocol, Self, TypeVar

import numpy as np

from vision.tags import TagDetector, TagObservation, detect_tags, gray_frame

MAX_WORKERS = 4
"""More detection threads than this gain nothing a frame's hand-over does not eat (and a 1080p frame each)."""


class HasImage(Protocol):
    @property
    def image(self) -> np.ndarray: ...


FrameT = TypeVar("FrameT", bound=HasImage)


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_workers() -> int:
    """Detection threads for a replay that has the machine to itself: one a core (the caller's thread, which
    maps, tracks and rules, takes ~10 % of a frame's work and shares them)."""
    return max(1, min(MAX_WORKERS, usable_cores()))


class DetectAhead(Generic[FrameT]):
    """Iterate `(frame, tags)` over `frames`, the tags found ahead on `workers` threads (see the module
    docstring). Use as a context manager, or call `close()`."""

    def __init__(self, frames: Iterable[FrameT], decimate: int, *, workers: int | None = None,
                 depth: int | None = None) -> None:
        self.decimate = int(decimate)
        self.workers = max(1, int(workers if workers is not None else default_workers()))
        self.depth = max(self.workers, int(depth if depth is not None else 2 * self.workers))
        self._source: Iterator[FrameT] = iter(frames)
        self._read_lock = threading.Lock()  # the source is read by one thread at a time, in order
        self._cond = threading.Condition()
        self._results: dict[int, tuple[FrameT, tuple[TagObservation, ...]] | BaseException] = {}
        self._read = 0  # frames taken from the source (the next one's sequence number)
        self._taken = 0  # frames handed to the caller
        self._end: int | None = None  # sequence number after the last: the source ended or failed there
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"detect ahead {k}", daemon=True)
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
                item: tuple[FrameT, tuple[TagObservation, ...]] | BaseException
                try:
                    item = (frame, detect_tags(gray_frame(frame.image), decimate=self.decimate, detector=detector))
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

    def __next__(self) -> tuple[FrameT, tuple[TagObservation, ...]]:
        item: tuple[FrameT, tuple[TagObservation, ...]] | BaseException | None
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

