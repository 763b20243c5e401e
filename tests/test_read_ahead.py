"""The replay's read-ahead (session/read_ahead.py): the next frames prepared on worker threads are exactly
what the serial run makes, handed over in order; an error comes in its place, after every frame before it;
closing early stops the workers; and a replay gives the same events with and without it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from session.read_ahead import ReadAhead
from session.replay import ReplayRun, load_setup, open_source
from vision.errors import FrameError
from vision.sources import Frame
from vision.synth.samples import record_session, tiny
from vision.tags import TagDetector, TagObservation, detect_tags, gray_frame, load_image

ROOT = Path(__file__).resolve().parent.parent
FRAMES = sorted((ROOT / "sample_frames" / "stress").glob("frame_*.jpg"))[::9][:7]


def _frames() -> list[Frame]:
    return [Frame(index=i, t=i / 10.0, image=load_image(p)) for i, p in enumerate(FRAMES)]


def _key(tags: tuple[TagObservation, ...]) -> list[tuple[int, bytes, bytes, float]]:
    return [(t.id, t.corners_px.tobytes(), t.center_px.tobytes(), t.margin) for t in tags]


def _full_scan(frame: Frame, detector: TagDetector) -> tuple[TagObservation, ...]:
    return detect_tags(gray_frame(frame.image), decimate=1, detector=detector)


def _workers_alive() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("read ahead")]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_frames_come_prepared_as_the_serial_run_prepares_them_in_order(workers: int) -> None:
    frames = _frames()
    serial = [_key(detect_tags(gray_frame(f.image), decimate=1)) for f in frames]
    with ReadAhead(frames, _full_scan, workers=workers) as ahead:
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
    with pytest.raises(FrameError, match="cut short"), ReadAhead(source(), _full_scan, workers=2) as ahead:
        for f, _ in ahead:
            seen.append(f.index)
    assert seen == [0, 1, 2, 3]
    assert _workers_alive() == []


def test_a_detection_error_comes_in_its_place() -> None:
    frames = _frames()[:4]
    bad = Frame(index=2, t=0.2, image=np.zeros((40, 40, 3), np.float32))  # not 8-bit: gray_frame refuses it
    frames[2] = bad
    seen = []
    with pytest.raises(FrameError, match="8-bit"), ReadAhead(frames, _full_scan, workers=2) as ahead:
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

    ahead = ReadAhead(source(), _full_scan, workers=2, depth=2)
    first = next(ahead)
    assert first[0].index == 0
    ahead.close()
    assert _workers_alive() == []
    assert len(read) <= 1 + 2 + 2  # the frame taken, the depth, one more a worker may have started
    with pytest.raises(StopIteration):
        next(ahead)


def test_an_empty_source_just_ends() -> None:
    none: list[Frame] = []
    with ReadAhead(none, _full_scan, workers=2) as ahead:
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


def test_a_sweeping_pipeline_finds_the_same_tags_prepared_ahead_or_not(tmp_path: Path) -> None:
    """Windows, coarse scan and the sweep's cell by frame number: `Pipeline.prepare` on worker threads gives every
    frame the very tags (to the last bit) the pipeline finds on its own."""
    session = record_session(tiny(), tmp_path / "tiny", fsync=False)
    runs = []
    for workers in (0, 2):
        source = open_source(session)
        with source:
            run = ReplayRun(source, load_setup(source), workers=workers)
            assert run.pipeline.detector.fine_every > 1
            tags = []
            for frame, prepared in run._frames():
                tags.append(_key(run.pipeline.process(frame, prepared=prepared).tags))
                assert (prepared is None) == (workers == 0)
        runs.append(tags)
    assert runs[0] == runs[1] and len(runs[0]) == 12 and all(runs[0])
