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
    return sum(1 for t in threading.enumerate() if t.name == "feed ahead")


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
    assert feed.pending and _workers() == before + 1  # one worker, whatever the number of frames
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


def test_the_worker_makes_each_frames_picture_then_its_backstop_once_it_is_handed_over() -> None:
    """The page's picture (`then`) and then the backstop scans of each frame are made on the worker, with its own
    detector, frame after frame; closing waits for the work on the frame read ahead."""
    log: list[tuple[str, int, str]] = []
    feed = feed_ahead(RecordingFeed.open(SAMPLE), lambda frame, _: _Backstop(int(frame.index), log),
                      then=lambda frame: log.append(("picture", int(frame.index), threading.current_thread().name)))
    parts = []
    for _ in range(3):
        assert feed.read() is not None
        parts.append(feed.prepared)
    feed.close()
    assert all(isinstance(p.detector, TagDetector) for p in parts)
    assert log[:6] == [(what, i, "feed ahead") for i in range(3) for what in ("picture", "backstop")]


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
