"""A camera read on its own thread: a loop slower than the camera gets the newest frame, numbered without
gaps; the camera's end and its errors reach the loop."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from session.feeds import NewestFrameFeed
from vision.sources import CameraLost, Frame

PERIOD_S = 0.005
"""The test camera's frame interval (200 frames a second)."""


class _Camera:
    """A camera delivering `count` frames every PERIOD_S, then ending, or failing with `fail`."""

    description = "Test camera"

    def __init__(self, count: int, fail: BaseException | None = None) -> None:
        self.count, self.fail, self.closed, self.delivered = count, fail, False, 0
        self.started = time.monotonic()

    def __iter__(self) -> Iterator[Frame]:
        for i in range(self.count):
            if self.closed:
                return
            time.sleep(PERIOD_S)
            self.delivered += 1
            yield Frame(index=i, t=time.monotonic() - self.started, image=np.full((4, 4, 3), i % 256, np.uint8))
        if self.fail is not None:
            raise self.fail

    def close(self) -> None:
        self.closed = True


def _feed(camera: _Camera) -> NewestFrameFeed:
    src: Any = camera
    return NewestFrameFeed(src)


def test_a_slow_loop_gets_the_newest_frame_numbered_without_gaps() -> None:
    camera = _Camera(400)
    feed = _feed(camera)
    try:
        got: list[Frame] = []
        for _ in range(10):
            frame = feed.read()
            assert frame is not None
            got.append(frame)
            time.sleep(0.03)  # a pipeline six times slower than the camera
        assert [f.index for f in got] == list(range(10))
        # the camera's own numbers (in the pixels) jump: the frames queued meanwhile were skipped, not handed on
        # one by one (a queue would give 0, 1, 2, ... 9); ~6 a read at full speed, at least 15 in all on a busy machine
        camera_numbers = [int(f.image[0, 0, 0]) for f in got]
        assert camera_numbers == sorted(camera_numbers) and camera_numbers[-1] - camera_numbers[0] >= 15
        assert feed.skipped >= 6
    finally:
        feed.close()
    assert camera.closed


def test_the_end_of_the_source_is_none_after_its_last_frame() -> None:
    camera = _Camera(3)
    feed = _feed(camera)
    deadline = time.monotonic() + 10
    while camera.delivered < 3 or feed._newest is None or int(feed._newest.image[0, 0, 0]) != 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)  # all three delivered: only the newest is left to read
    last = feed.read()
    assert last is not None and int(last.image[0, 0, 0]) == 2 and last.index == 0
    assert feed.read() is None
    feed.close()


def test_a_camera_error_reaches_the_loop_after_the_frames_before_it() -> None:
    feed = _feed(_Camera(2, CameraLost("Test camera stopped delivering frames; check its cable.")))
    seen = 0
    with pytest.raises(CameraLost, match="check its cable"):
        while feed.read(timeout=5) is not None:
            seen += 1
    assert seen >= 1
    feed.close()


def test_closing_stops_the_reading_thread() -> None:
    camera = _Camera(100000)
    feed = _feed(camera)
    assert feed.read() is not None
    feed.close()
    n = camera.delivered
    time.sleep(0.05)
    assert camera.delivered <= n + 1 and not feed._thread.is_alive()
