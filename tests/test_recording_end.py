"""The last move of a recording is kept: a base put down in the last moments before the recording stops
(too few frames to settle) is reported when the stream ends (`Tracker.finish`, `Pipeline.finish`), by
`tablesight replay` and on the replay page's timeline alike; a base still in a hand is not."""

from __future__ import annotations

import json
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from session.replay import ReplayRun, load_setup, open_source
from session.runtime import load_setup_files, make_pipeline, with_session_plan
from session.timeline import Timeline
from vision.tracker import END_SETTLE_FRAMES, SETTLE_FRAMES, Move, Tracker

SAMPLE = Path(__file__).resolve().parents[1] / "sample_frames" / "valknut_skirmish"
FPS = 30.0


@dataclass(frozen=True)
class Fix:
    """A base fix as the tracker reads it (vision.tracker.FixLike), inches."""

    tag: int
    x: float
    y: float
    z: float
    yaw_deg: float
    pm: float
    margin: float = 60.0


def _fix(x: float, y: float, k: int) -> Fix:
    wobble = 0.003 * math.sin(k * 1.7)  # detector noise, inches
    return Fix(tag=12, x=x + wobble, y=y - wobble, z=0.125, yaw_deg=0.0, pm=0.01)


def _tracker_put_down(frames_still: int) -> tuple[Tracker, int]:
    """A base settled at (5, 5), lifted for 10 frames, put down at (9, 5) for `frames_still` frames."""
    tracker, frame = Tracker(), 0
    for _ in range(20):
        tracker.update(frame, frame / FPS, [_fix(5.0, 5.0, frame)])
        frame += 1
    for _ in range(10):
        tracker.update(frame, frame / FPS, [])
        frame += 1
    for _ in range(frames_still):
        assert not [e for e in tracker.update(frame, frame / FPS, [_fix(9.0, 5.0, frame)]) if isinstance(e, Move)]
        frame += 1
    return tracker, frame


def test_a_base_put_down_just_before_the_end_is_a_move() -> None:
    tracker, _ = _tracker_put_down(END_SETTLE_FRAMES)
    assert END_SETTLE_FRAMES < SETTLE_FRAMES  # too short to settle while the recording ran
    (move,) = tracker.finish()
    assert isinstance(move, Move) and move.tag == 12 and move.lifted
    assert move.length_in == pytest.approx(4.0, abs=0.01)
    assert tracker.finish() == []  # reported once


def test_a_base_in_a_hand_at_the_end_is_not_a_move() -> None:
    tracker, _ = _tracker_put_down(END_SETTLE_FRAMES - 1)  # seen for too few frames to say it was put down
    assert tracker.finish() == []
    lifted, frame = _tracker_put_down(0)
    assert lifted.finish() == []  # still in the hand when the recording stopped


def _truncated(tmp_path: Path, frames: int) -> Path:
    """The bundled sample cut after `frames` frames, as a recording stopped early would be."""
    session = tmp_path / "cut"
    shutil.copytree(SAMPLE, session)
    index = (session / "frames.jsonl").read_text(encoding="utf-8").splitlines()[:frames]
    (session / "frames.jsonl").write_text("\n".join(index) + "\n", encoding="utf-8")
    manifest = json.loads((session / "manifest.json").read_text(encoding="utf-8"))
    manifest["frames"] = frames
    (session / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (session / "golden.jsonl").unlink()
    return session


def test_replay_reports_the_last_move_of_a_recording_stopped_early(tmp_path: Path) -> None:
    golden = [json.loads(line) for line in (SAMPLE / "golden.jsonl").read_text().splitlines()]
    last = [e for e in golden if e["type"] == "move"][-1]  # Red 5 put down at frame 127, reported at 131
    assert last["placed_frame"] + 4 == last["frame"]
    session = _truncated(tmp_path, last["placed_frame"] + END_SETTLE_FRAMES)  # stopped 0.1 s after it
    source = open_source(session)
    with source:
        events = list(ReplayRun(source, load_setup(source)).events())
    moves = [e for e in events if e["type"] == "move"]
    assert len(moves) == len([e for e in golden if e["type"] == "move"])  # every move once, none lost
    end = moves[-1]
    assert end["tag"] == last["tag"] and end["frame"] == last["placed_frame"] + END_SETTLE_FRAMES - 1
    assert end["length_in"] == pytest.approx(last["length_in"], abs=0.01)
    assert math.dist(end["to_in"], last["to_in"]) < 0.01
    ruled = [e for e in events if e["type"] == "verdict" and e.get("event") == "move" and e["frame"] == end["frame"]]
    # ruled as the full recording rules it (a move: Blue 3, whose illegal move was taken back, is not beside it)
    assert {v["rule"] for v in ruled} == {"valknut.move.engagement", "valknut.move.distance"}
    assert events[-1]["moves"] == len(moves)


def test_the_replay_pages_timeline_marks_it_too(tmp_path: Path) -> None:
    session = _truncated(tmp_path, 130)
    setup = with_session_plan(load_setup_files(session / "calibration.json", session / "roster.json",
                                               session / "terrain.json", "valknut"), session)
    timeline = Timeline(session, lambda: make_pipeline(setup)).start()
    deadline = time.monotonic() + 120
    while not timeline.snapshot()["complete"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    moves = [e for e in timeline.snapshot()["events"] if e.get("type") == "move"]
    assert [m["tag"] for m in moves][-1] == 14 and moves[-1]["frame"] == 129
