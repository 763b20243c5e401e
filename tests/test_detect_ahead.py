"""The replay's read-ahead (session/detect_ahead.py): the tags of the next frames found on worker threads are
exactly the serial full scan's, handed over in order; an error comes in its place, after every frame before
it; closing early stops the workers; and a replay gives the same events with and without it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from session.detect_ahead import DetectAhead
from session.replay import ReplayRun, load_setup, open_source
from vision.errors import FrameError
from vision.sources import Frame
from vision.synth.samples import record_session, tiny
from vision.tags import TagObservation, detect_tags, gray_frame, load_image

ROOT = Path(__file__).resolve().parent.parent
FRAMES = sorted((ROOT / "sample_frames" / "stress").glob("frame_*.jpg"))[::9][:7]


def _frames() -> list[Frame]:
    return [Frame(index=i, t=i / 10.0, image=load_image(p)) for i, p in enumerate(FRAMES)]


def _key(tags: tuple[TagObservation, ...]) -> list[tuple[int, bytes, bytes, float]]:
    return [(t.id, t.corners_px.tobytes(), t.center_px.tobytes(), t.margin) for t in tags]


def _workers_alive() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("detect ahead")]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_tags_are_the_serial_full_scans_in_order(workers: int) -> None:
    frames = _frames()
    serial = [_key(detect_tags(gray_frame(f.image), decimate=1)) for f in frames]
    with DetectAhead(frames, 1, workers=workers) as ahead:
        got = [(f.index, _key(tags)) for f, tags in ahead]
    assert [i for i, _ in got] == list(range(len(frames)))
    assert [k for _, k in got] == serial
    assert all(len(k) >= 8 for k in serial)  # the stress session's eight bases and four anchors
    assert _workers_alive() == []


def test_a_source_error_comes_after_every_frame_before_it() -> None:
    frames = _frames()

    def source() -> Iterator[Frame]:
        yield from frames[:4]
        raise FrameError("Frame file frame_000004.jpg is cut short (corrupt); delete it.")

    seen = []
    with pytest.raises(FrameError, match="cut short"), DetectAhead(source(), 1, workers=2) as ahead:
        for f, _ in ahead:
            seen.append(f.index)
    assert seen == [0, 1, 2, 3]
    assert _workers_alive() == []


def test_a_detection_error_comes_in_its_place() -> None:
    frames = _frames()[:4]
    bad = Frame(index=2, t=0.2, image=np.zeros((40, 40, 3), np.float32))  # not 8-bit: gray_frame refuses it
    frames[2] = bad
    seen = []
    with pytest.raises(FrameError, match="8-bit"), DetectAhead(frames, 1, workers=2) as ahead:
        for f, _ in ahead:
            seen.append(f.index)
    assert seen == [0, 1]


def test_closing_early_stops_the_workers_and_reads_no_further() -> None:
    frames = _frames()
    read: list[int] = []

    def source() -> Iterator[Frame]:
        for f in frames:
            read.append(f.index)
            yield f

    ahead = DetectAhead(source(), 1, workers=2, depth=2)
    first = next(ahead)
    assert first[0].index == 0
    ahead.close()
    assert _workers_alive() == []
    assert len(read) <= 1 + 2 + 2  # the frame taken, the depth, one more a worker may have started
    with pytest.raises(StopIteration):
        next(ahead)


def test_an_empty_source_just_ends() -> None:
    with DetectAhead([], 1, workers=2) as ahead:
        assert list(ahead) == []
    assert _workers_alive() == []


def test_a_replay_gives_the_same_events_with_and_without_it(tmp_path: Path) -> None:
    session = record_session(tiny(), tmp_path / "tiny", fsync=False)
    runs = []
    for workers in (0, 2):
        source = open_source(session)
        with source:
            events = list(ReplayRun(source, load_setup(source), workers=workers).events())
        events[-1].pop("seconds")
        runs.append(events)
    assert runs[0] == runs[1]
    assert runs[0][-1]["frames"] == 12 and runs[0][-1]["moves"] == 1
