"""The tracker on real pixels: rendered frames recorded into a session, replayed, detected, measured, tracked
and stored. A hand hides one base (no move); another is lifted and put down elsewhere (one move)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from calibration.layout import default_layout
from calibration.table import calibrate_table, collect_anchors
from session.store import SessionStore
from vision.positions import measure_bases
from vision.recorder import Recorder
from vision.sources import SessionSource
from vision.synth.render import BasePlacement, Hand, Scene, camera_looking_at, render_scene
from vision.tags import detect_tags, gray_frame
from vision.tracker import Move, Placed, Tracker, TrackState

BOARD = (24.0, 18.0)
FPS = 10.0
START = {10: (5.0, 5.0), 11: (12.0, 9.0), 12: (18.0, 13.0)}
MOVED_TO = (9.0, 3.5)


def scene_at(i: int, pose_args: tuple) -> Scene:  # type: ignore[type-arg]
    """Frames 0-7 still; 8-15 a hand over base 11; 14-19 base 10 lifted away; 20-29 base 10 at MOVED_TO."""
    pose = camera_looking_at(*pose_args)
    bases = []
    for tag, (x, y) in START.items():
        if tag == 10 and 14 <= i < 20:
            continue
        if tag == 10 and i >= 20:
            x, y = MOVED_TO
        bases.append(BasePlacement(tag, x, y, yaw_deg=15.0 * tag))
    hands = (Hand(12.0, 9.0, 4.0),) if 8 <= i < 16 else ()
    return Scene.at(pose, BOARD, bases=tuple(bases), hands=hands, jpeg_quality=None, blur_px=0.6)


@pytest.mark.slow
def test_rendered_session_replays_into_one_move_and_no_false_move(tmp_path: Path) -> None:
    pose_args = (BOARD, 30.0, 0.0, 0.0, (1280, 720), 75.0)
    camera = camera_looking_at(*pose_args).camera
    with Recorder(tmp_path / "session", source="renderer") as rec:
        for i in range(30):
            rec.write(render_scene(scene_at(i, pose_args), i).image, i / FPS)

    layout = default_layout(*BOARD)
    tracker = Tracker(known_tags=[10, 11, 12])
    events = []
    hidden_11 = []
    with SessionSource(tmp_path / "session") as frames, SessionStore(tmp_path / "store.sqlite") as store:
        cal = None
        for frame in frames:
            tags = detect_tags(gray_frame(frame.image))
            if cal is None:
                anchors = collect_anchors([(t.id, t.corners_px) for t in tags], layout)
                cal = calibrate_table(anchors, layout, frames.size, camera)
            fixes = measure_bases(tags, cal)
            store.add_frame(frame.index, frame.t, frames.session.entries[frame.index].file)
            for event in tracker.update(frame.index, frame.t, fixes):
                store.add_event(event)
                events.append(event)
            if 9 <= frame.index < 15:
                hidden_11.append(tracker.tracks[11])
        stored = [e.type for e in store.events()]
        assert len(store.frames()) == 30

    assert [type(e) for e in events] == [Placed, Placed, Placed, Move]
    assert stored == ["placed", "placed", "placed", "move"]
    move = events[-1]
    assert isinstance(move, Move) and move.tag == 10 and move.lifted
    true_length = math.dist(START[10], MOVED_TO)
    print(f"rendered move: {move.length_in:.4f} ± {move.pm_in:.4f} in, true {true_length:.4f} in")
    assert abs(move.length_in - true_length) <= 0.05
    assert math.dist(move.from_in, START[10]) < 0.03 and math.dist(move.to_in, MOVED_TO) < 0.03
    assert move.elapsed_s == pytest.approx(0.7, abs=0.11)  # last seen at frame 13, down at frame 20
    assert all(v.state is TrackState.OCCLUDED for v in hidden_11)  # under the hand, kept in place
    assert all(math.dist((v.x, v.y), START[11]) < 0.03 for v in hidden_11)
    end = tracker.tracks
    for tag, place in ((10, MOVED_TO), (11, START[11]), (12, START[12])):
        assert end[tag].state is TrackState.ON_TABLE
        assert math.dist((end[tag].x, end[tag].y), place) < 0.03
