"""The live loop's next frame read and prepared on a thread of its own while the loop rules this one.

`FeedAhead(feed, prepare)` wraps a live loop's feed (a camera, a video, a recording played on the page). As soon
as the loop takes a frame, a worker thread reads the next one (for a recorded camera: the JPEG the recording
keeps, encoded and decoded, session/recording.py) and runs `prepare(frame, detector)` on it: the part of its
work that the frame needs before its turn and that depends on nothing but the frame (`Pipeline.prepare`: grey
image, its tiles, which tell where the picture changed and which tags stand still). The loop then takes the frame
with `read()` and its prepared part from `prepared` (None when there was nothing to prepare it with, or it
failed: the pipeline then does that work itself and meets the problem in its place). Once the frame is ready
for the loop, the worker runs `then(frame)` (the page's picture of it, which the page needs as soon as the loop
is done) and goes on to the next frame, and a second thread, the backstop thread, runs the prepared part's
`backstop(detector)` (the frame's coarse scan and sweep cell, ~5 ms of a core at 1080p, which the loop looks at
only in the next frame): C calls that release the interpreter lock, off the frame's way to the page.

When the loop keeps up with its feed (it asked for the frame before the feed gave it: a camera), it rules the
frame at once, and the backstop waits until the loop moves on (asks for its next frame, seeks or closes; at most
TURN_WAIT_S): made while the loop rules the frame, it would take the second core from the loop, and the frame
would reach the page later (docs/bench.md, "camera at 30 fps"). A loop that is behind (a recording played flat
out) finds its next frame read already, and that frame's backstop is made at once, beside the loop. A seek or a
close drops the backstops not yet made of the frames asked for before it: no frame will look at them.

One frame is read ahead, never more: a camera's frame is at most one frame older than it would have been, and
`read_at` says when it was read (the page's latency counts from there). An error from the feed comes out of the
`read()` that would have returned its frame. `seek` (for a recording) and `close` wait for the frame being read,
drop it and then seek or close the feed (`close` also waits, up to WORKER_JOIN_S each, for the worker and then the
backstop thread to finish what they do after a frame; each releases its detector as it ends). `read(ahead=False)`
takes the frame being read without reading another, so the loop can finish the frames already taken before it
changes its pipeline.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from session.drivable import Feed
from vision.tags import TagDetector

Prepare = Callable[[Any, TagDetector], Any]
"""(frame, the worker's own detector) -> the frame's prepared part, or None."""
Then = Callable[[Any], None]
"""Work on a frame once it is handed over (the page's picture of it), on the worker, beside the loop's ruling."""
After = Callable[[tuple[Any, Any, float]], None]
"""(frame, prepared, read at) -> None: what the worker does once a frame is handed over."""
WORKER_JOIN_S = 10.0
"""Longest wait, at close, for the worker and then for the backstop thread to finish what they do after a frame
(each releases its detector then)."""
TURN_WAIT_S = 0.1
"""Longest wait of a frame's backstop scans for the loop to move on from the frame (see the module docstring)."""


class FeedAhead:
    """A feed whose next frame is read and prepared on a worker thread (see the module docstring)."""

    def __init__(self, inner: Feed, prepare: Prepare, *, ahead: bool = True, then: Then | None = None) -> None:
        self.inner = inner
        self._prepare = prepare
        self._then = then
        self._ahead = ahead
        """False: every frame is read when asked for, on the caller's thread (a feed that must know each frame
        was ruled before it gives the next: the phone answers each frame with what was measured in it)."""
        self._next: Future[tuple[Any, Any, float]] | None = None
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any], After] | None] | None = None
        """The worker thread's requests (None: no worker yet; a None request ends it)."""
        self._worker: threading.Thread | None = None
        self._detector: TagDetector | None = None
        self._backstops: queue.SimpleQueue[tuple[Callable[[TagDetector], Any], int | None, int] | None] | None = None
        """The backstop thread's requests: (a frame's `backstop`, the loop's turns it waits past or None, the
        drops when it was asked for)."""
        self._backstopper: threading.Thread | None = None
        self.prepared: Any = None
        """The prepared part of the frame the last `read()` returned (None: not prepared)."""
        self._turns = 0
        """How many times the loop moved on (asked for a frame, sought or closed); under `_turned`."""
        self._turned = threading.Condition()
        self._asked: Future[tuple[Any, Any, float]] | None = None
        """The frame the loop asked for last (its future): one it took, or waits for."""
        self._drops = 0
        """How many times the frame read ahead was dropped (a seek, a close): the backstops of frames asked for
        before are wanted by no one."""
        self._handing: tuple[int | None, int] = (None, 0)
        """The worker's, for the frame it reads now: (the loop's turns its backstop waits past, or None: made at
        once; the drops when it was asked for). It waits when the loop asked for the frame before the feed gave it
        (the feed sets the pace: a camera), since the loop then rules it at once."""
        self.read_at = 0.0
        """Wall clock (time.time) when the frame the last `read()` returned came: when the camera gave it (its
        `at`; else when it was read from a live feed), when it was taken from a recording (played at its pace,
        its frame is due then, however early it was read)."""

    def _start(self) -> Future[tuple[Any, Any, float]]:
        """Read and prepare the next frame on the feed's worker: one daemon thread (a camera stuck in its read
        does not hold up the server's exit) that waits for the next request (a thread started a frame cost ~1 ms
        and a wait for the interpreter lock); one at a time, so the frames keep their order."""
        fut: Future[tuple[Any, Any, float]] = Future()
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            self._worker = threading.Thread(target=_work, args=(self._jobs, self._release), name="feed ahead",
                                            daemon=True)
            self._worker.start()
            self._backstops = queue.SimpleQueue()
            self._backstopper = threading.Thread(target=self._backstop_work, args=(self._backstops,),
                                                 name="feed backstop", daemon=True)
            self._backstopper.start()
        drops = self._drops
        self._jobs.put((lambda: self._fetch(fut, drops), fut, self._after))
        return fut

    def _turn(self) -> None:
        """The loop moves on: it asks for a frame, seeks or closes (a backstop waiting for it goes ahead)."""
        with self._turned:
            self._turns += 1
            self._turned.notify_all()

    def _after(self, got: tuple[Any, Any, float]) -> None:
        """On the worker, once a frame is ready for the loop: `then` (the page's picture), then the frame's backstop
        scans (`prepared.backstop`, which the loop needs only at the next frame) to the backstop thread, to be made
        once the loop has moved on from the frame if the feed set the pace (`_handing`: the loop was waiting for
        it, so it rules it now), else at once. The worker goes on to the next frame meanwhile. What fails here is made
        again where it is needed."""
        frame, prepared, _ = got
        if frame is None:
            return
        if self._then is not None:
            with contextlib.suppress(Exception):
                self._then(frame)
        backstop = getattr(prepared, "backstop", None)
        if backstop is not None and self._backstops is not None and self._backstopper is not None \
                and self._backstopper.is_alive():  # else the loop makes them itself, when it needs them
            self._backstops.put((backstop, *self._handing))

    def _backstop_work(self, jobs: queue.SimpleQueue[tuple[Callable[[TagDetector], Any], int | None, int] | None],
                       ) -> None:
        """The backstop thread: each frame's backstop scans, with a detector of its own (released as it ends),
        once the loop's turns pass the request's (at most TURN_WAIT_S later), unless the frame read ahead was
        dropped since it was asked for; until a None request."""
        detector: TagDetector | None = None
        try:
            while (job := jobs.get()) is not None:
                backstop, ruling, drops = job
                if ruling is not None:
                    with self._turned:
                        self._turned.wait_for(lambda: self._turns > ruling, TURN_WAIT_S)  # noqa: B023 - used at once
                if drops != self._drops:
                    continue
                with contextlib.suppress(Exception):
                    detector = detector or TagDetector(at_exit=False)
                    backstop(detector)
        finally:
            if detector is not None:
                detector.release()

    def _release(self) -> None:
        """Release the worker's detector (on the worker, as it ends)."""
        detector, self._detector = self._detector, None
        if detector is not None:
            detector.release()

    @property
    def pending(self) -> bool:
        """A frame is being (or has been) read ahead and not taken yet."""
        return self._next is not None

    def _fetch(self, fut: Future[tuple[Any, Any, float]] | None = None, drops: int = 0) -> tuple[Any, Any, float]:
        frame = self.inner.read()
        self._handing = (self._turns if fut is not None and self._asked is fut else None, drops)
        at = getattr(frame, "at", None) or time.time()  # a camera's frame is as old as when the camera gave it
        prepared = None
        if frame is not None:
            try:
                if self._detector is None:
                    self._detector = TagDetector(at_exit=False)
                prepared = self._prepare(frame, self._detector)
            except Exception:  # noqa: BLE001 - the pipeline does the work itself and reports what is wrong
                prepared = None
        return frame, prepared, at

    def read(self, ahead: bool = True) -> Any | None:
        """The next frame (None at the end of a recording); with `ahead`, start reading the one after."""
        if not self._ahead:
            frame = self.inner.read()
            self.prepared, self.read_at = None, getattr(frame, "at", None) or time.time()
            return frame
        self._turn()
        fut, self._next = self._next, None
        self._asked = fut = fut or self._start()
        frame, self.prepared, self.read_at = fut.result()
        if isinstance(self, SeekableFeedAhead):
            self.read_at = time.time()
        if frame is not None and ahead:
            self._next = self._start()
        return frame

    def _drop(self) -> None:
        """Wait for the frame being read, if any, and drop it (with any error it met)."""
        self._drops += 1
        self._turn()
        fut, self._next = self._next, None
        if fut is not None:
            with contextlib.suppress(Exception):  # a frame nobody will take: its error goes with it
                fut.result()

    def close(self) -> None:
        try:
            self._drop()
            if self._jobs is not None:
                self._jobs.put(None)
                self._jobs = None
            if self._worker is not None:
                self._worker.join(WORKER_JOIN_S)  # it releases its detector as it ends
            if self._backstops is not None:  # after the worker: its last frame's backstop is asked for first
                self._backstops.put(None)
                self._backstops = None
            if self._backstopper is not None:
                self._backstopper.join(WORKER_JOIN_S)
        finally:
            self.inner.close()


def _work(jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any], After] | None],
          release: Callable[[], None]) -> None:
    """A feed's worker: run each request, its result or error into its future, then `after` on what was handed
    over, until a None request; then `release` (its detector: only this thread uses it)."""
    try:
        while (job := jobs.get()) is not None:
            fetch, fut, after = job
            try:
                got = fetch()
            except BaseException as err:  # noqa: BLE001 - handed to the reader with its frame's place
                fut.set_exception(err)
                continue
            fut.set_result(got)
            after(got)
    finally:
        release()


class SeekableFeedAhead(FeedAhead):
    """`FeedAhead` over a recording, which can be sought."""

    def seek(self, index: int) -> None:
        self._drop()
        self.inner.seek(index)  # type: ignore[attr-defined]

    def __len__(self) -> int:
        return len(self.inner)  # type: ignore[arg-type]


def feed_ahead(inner: Feed, prepare: Prepare, then: Then | None = None) -> FeedAhead:
    """`inner` read ahead (seekable if it is), unless it says `read_ahead = False`; `then` runs on each frame read
    ahead once it is handed over."""
    ahead = bool(getattr(inner, "read_ahead", True))
    if hasattr(inner, "seek") and hasattr(inner, "__len__"):
        return SeekableFeedAhead(inner, prepare, ahead=ahead, then=then)
    return FeedAhead(inner, prepare, ahead=ahead, then=then)
