"""session.feed_ahead: the live loop's next frame read and prepared on the feed's worker thread, over a real
recorded session (the bundled sample's JPEG frames): frames in order, each with its own prepared part, a seek
drops the frame read ahead, and closing ends the worker."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from session.feed_ahead import SeekableFeedAhead, feed_ahead
from session.feeds import RecordingFeed
from vision.errors import FrameError
from vision.tags import TagDetector, detect_tags, gray_frame

SAMPLE = Path(__file__).resolve().parents[1] / "sample_frames" / "magni_placement"


def _prepare(frame: Any, detector: TagDetector) -> tuple[int, tuple[int, ...]]:
    """The frame's number and the ids of the tags the worker's own detector reads in it."""
    return int(frame.index), tuple(sorted(t.id for t in detect_tags(gray_frame(frame.image), detector=detector)))


def _workers() -> int:
    """The feeds' threads running: each feed's worker and backstop thread."""
    return sum(1 for t in threading.enumerate() if t.name in ("feed ahead", "feed backstop"))


def test_frames_come_in_order_each_with_its_own_prepared_part_and_close_ends_the_worker() -> None:
    before = _workers()
    feed = feed_ahead(RecordingFeed.open(SAMPLE), _prepare)
    assert isinstance(feed, SeekableFeedAhead)
    seen = []
    for _ in range(6):
        frame = feed.read()
        assert frame is not None
        index, ids = feed.prepared
        assert index == frame.index  # the prepared part is this frame's, not the one read ahead
        assert ids == tuple(sorted(t.id for t in detect_tags(gray_frame(frame.image))))
        seen.append(frame.index)
    assert seen == sorted(seen) and len(set(seen)) == 6
    assert feed.pending and _workers() == before + 2  # a worker and a backstop thread, for any number of frames
    feed.seek(0)  # the frame read ahead is dropped: the next one is the first again
    assert not feed.pending
    first = feed.read(ahead=False)
    assert first is not None and first.index == seen[0] and not feed.pending
    feed.close()
    deadline = time.monotonic() + 5.0
    while _workers() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _workers() == before


class _Backstop:
    """A prepared part whose backstop scans note which thread made them, with which detector, and when."""

    def __init__(self, index: int, log: list[tuple[str, int, str]]) -> None:
        self.index, self.log = index, log
        self.detector: TagDetector | None = None

    def backstop(self, detector: TagDetector) -> None:
        self.detector = detector
        self.log.append(("backstop", self.index, threading.current_thread().name))


def test_the_worker_makes_each_frames_picture_then_the_backstop_thread_its_backstop_once_it_is_handed_over() -> None:
    """The page's picture (`then`) of each frame is made on the worker, frame after frame, and then its backstop
    scans on the backstop thread, with a detector of its own; closing waits for the work on the frame read ahead."""
    log: list[tuple[str, int, str]] = []
    feed = feed_ahead(RecordingFeed.open(SAMPLE), lambda frame, _: _Backstop(int(frame.index), log),
                      then=lambda frame: log.append(("picture", int(frame.index), threading.current_thread().name)))
    parts = []
    for _ in range(4):
        assert feed.read() is not None
        parts.append(feed.prepared)
    _wait_for(log, ("backstop", 2, "feed backstop"), 5.0)
    feed.close()
    parts = parts[:3]
    assert all(isinstance(p.detector, TagDetector) for p in parts)
    assert len({id(p.detector) for p in parts}) == 1  # the backstop thread's own, frame after frame
    pictures = [e for e in log if e[0] == "picture"]
    backstops = [e for e in log if e[0] == "backstop"]
    assert pictures[:3] == [("picture", i, "feed ahead") for i in range(3)]
    assert backstops[:3] == [("backstop", i, "feed backstop") for i in range(3)]
    assert all(log.index(("picture", i, "feed ahead")) < log.index(("backstop", i, "feed backstop")) for i in range(3))


class _Camera:
    """A recording that gives each frame only once the test lets it through (`give`), as a camera does when its
    next frame comes: the loop asks for the frame before it comes."""

    def __init__(self) -> None:
        self.inner = RecordingFeed.open(SAMPLE)
        self._gate = threading.Semaphore(0)

    def give(self, after_s: float) -> None:
        threading.Timer(after_s, self._gate.release).start()

    def read(self) -> Any:
        self._gate.acquire()
        return self.inner.read()

    def close(self) -> None:
        self.inner.close()


def _wait_for(log: list[tuple[str, int, str]], entry: tuple[str, int, str], seconds: float) -> float:
    """Seconds until `entry` is in `log` (polled), or fail after `seconds`."""
    start = time.monotonic()
    while entry not in log:
        assert time.monotonic() - start < seconds, (entry, log)
        time.sleep(0.005)
    return time.monotonic() - start


def test_a_frame_the_loop_waited_for_has_its_backstop_made_once_the_loop_moves_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A camera: the loop asks for each frame before it comes, and rules it at once. The frame's backstop scans
    (which only the next frame needs) wait until the loop asks for its next frame, so they do not take the
    second core from the loop while it rules the frame; then they are made at once."""
    monkeypatch.setattr("session.feed_ahead.TURN_WAIT_S", 30.0)  # the wait ends when the loop moves on, not later
    log: list[tuple[str, int, str]] = []
    camera = _Camera()
    feed = feed_ahead(camera, lambda frame, _: _Backstop(int(frame.index), log))
    try:
        for i in range(3):
            camera.give(0.05)  # the frame comes after the loop asked for it
            frame = feed.read()
            assert frame is not None and frame.index == i
            time.sleep(0.2)  # the loop rules the frame: its backstop waits
            assert ("backstop", i, "feed backstop") not in log, log
            if i:
                assert ("backstop", i - 1, "feed backstop") in log  # made when the loop asked for frame i
        camera.give(0.05)
        assert feed.read() is not None
        assert _wait_for(log, ("backstop", 2, "feed backstop"), 5.0) < 5.0
    finally:
        camera.give(0.0)
        feed.close()


def test_a_loop_that_does_not_move_on_has_the_backstop_made_after_the_longest_wait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A loop still on its frame after TURN_WAIT_S (a slow frame, a pause) does not hold the backstop up longer."""
    monkeypatch.setattr("session.feed_ahead.TURN_WAIT_S", 0.4)
    log: list[tuple[str, int, str]] = []
    camera = _Camera()
    feed = feed_ahead(camera, lambda frame, _: _Backstop(int(frame.index), log))
    try:
        camera.give(0.05)
        assert feed.read() is not None
        time.sleep(0.1)
        assert ("backstop", 0, "feed backstop") not in log
        assert _wait_for(log, ("backstop", 0, "feed backstop"), 5.0) < 5.0  # without the loop's next ask
    finally:
        camera.give(0.0)
        feed.close()


def test_a_seek_drops_the_backstops_asked_for_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay page seeks: the backstop scans of the frames before the seek, which no frame will look at, are
    not made (they would take a core from the frames after it)."""
    monkeypatch.setattr("session.feed_ahead.TURN_WAIT_S", 30.0)
    log: list[tuple[str, int, str]] = []
    feed = feed_ahead(RecordingFeed.open(SAMPLE), lambda frame, _: _Backstop(int(frame.index), log))
    assert isinstance(feed, SeekableFeedAhead)
    try:
        frame = feed.read()  # asked for before it was read: its backstop waits for the loop to move on
        assert frame is not None and frame.index == 0
        feed.seek(0)
        frame = feed.read()
        assert frame is not None and frame.index == 0
        time.sleep(0.3)  # the worker reads frame 1 ahead
        frame = feed.read()
        assert frame is not None and frame.index == 1
        time.sleep(0.3)  # and frame 2, whose backstop is made at once
        _wait_for(log, ("backstop", 2, "feed backstop"), 5.0)
        # frames 0 and 1 once each: after the seek, not before it
        assert [e[1] for e in log] == [0, 1, 2], log
    finally:
        feed.close()


def test_a_frame_read_before_the_loop_asked_has_its_backstop_made_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A recording played flat out: the next frame is read before the loop asks for it, and its backstop scans
    are made at once, beside the loop's ruling (the loop is behind, and will want them as soon as it is done)."""
    monkeypatch.setattr("session.feed_ahead.TURN_WAIT_S", 30.0)
    log: list[tuple[str, int, str]] = []
    feed = feed_ahead(RecordingFeed.open(SAMPLE), lambda frame, _: _Backstop(int(frame.index), log))
    try:
        assert feed.read() is not None  # the first frame: asked for before it was read
        time.sleep(0.3)  # the worker reads frame 1 ahead meanwhile
        assert feed.read() is not None
        # and frame 2, whose backstop is made before the loop even takes the frame
        assert _wait_for(log, ("backstop", 2, "feed backstop"), 5.0) < 5.0
        frame = feed.read()
        assert frame is not None and frame.index == 2
    finally:
        feed.close()


def test_an_error_in_the_feed_comes_out_of_the_read_of_its_frame(tmp_path: Path) -> None:
    copy = tmp_path / "sample"
    shutil.copytree(SAMPLE, copy)
    plain = RecordingFeed.open(copy)
    plain.files[2].write_bytes(b"\xff\xd8 not a picture")  # the third frame's file is corrupt on disk
    feed = feed_ahead(plain, _prepare)
    try:
        assert feed.read() is not None and feed.read() is not None
        with pytest.raises(FrameError):
            feed.read()
        frame = feed.read()  # the feed goes on after the frame that failed
        assert frame is not None and frame.index == plain.indices[3] and feed.prepared[0] == frame.index
    finally:
        feed.close()
