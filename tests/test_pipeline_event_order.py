"""Events the camera finds in one frame are ruled in an order the game accepts: two Magni tiles put down in
turn but found together (the second player's has the lower tag) are both legal, not one "out of turn"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rules.hexgrid import Hex
from session.feeds import RecordingFeed
from session.runtime import load_setup_files, make_pipeline, with_session_plan
from vision.tracker import Placed

SESSION = Path(__file__).resolve().parent.parent / "sample_frames" / "magni_placement"


def _pipeline_in_place_phase() -> Any:
    setup = with_session_plan(load_setup_files(SESSION / "calibration.json", SESSION / "roster.json", None, None),
                              SESSION)
    pipe: Any = make_pipeline(setup)
    feed = RecordingFeed.open(SESSION)
    while pipe.state.phase != "place" or len(pipe.state.placed) < 3:
        frame = feed.read()
        assert frame is not None, "the sample never reached the place phase"
        pipe.process(frame)
    feed.close()
    return pipe


def _placed(tag: int, cell: Hex, state: Any) -> Placed:
    x, y = state.layout.to_table(cell)
    return Placed(frame=0, t=0.0, tag=tag, at_in=(x, y), pm_in=0.003, yaw_deg=0.0)


def test_two_tiles_found_together_are_ruled_in_turn_order() -> None:
    pipe = _pipeline_in_place_phase()
    state = pipe.state
    to_act = state.turn()
    waiting = state.other(to_act)
    free = [c for c in (Hex(q, r) for q in range(-2, 3) for r in range(-2, 3) if abs(q + r) <= 2)
            if c not in state.tiles()]
    theirs, mine = state.in_hand(waiting)[0], state.in_hand(to_act)[0]
    # the waiting player's tile comes first in the frame's events (as a lower tag would put it)
    events = [_placed(theirs.tag, free[0], state), _placed(mine.tag, free[1], state)]
    before = dict(pipe.positions)
    assert events[pipe._next_to_rule(events, before)].tag == mine.tag  # the player to act goes first
    ruled = []
    pending = list(events)
    while pending:
        ruled += pipe._rule(pending.pop(pipe._next_to_rule(pending, before)), dict(before))
    assert [v["outcome"] for v in ruled if v["rule"].startswith("magni.place")] == ["legal", "legal"], ruled
    assert len(pipe.state.placed) == len(state.placed) + 2


def test_recordings_and_cameras_are_swept_alike(tmp_path: Path) -> None:
    """The sample, a replayed recording and a camera all get the live sweep: a recording replays as it was ruled."""
    from session.runtime import Runtime
    from session.settings import Settings
    from vision.windowed import FINE_EVERY

    base = Settings(sessions_dir=tmp_path / "sessions", setup_dir=tmp_path / "setup")
    runtime = Runtime(base)
    pipe: Any = runtime.live._make_pipeline()
    assert pipe.detector.fine_every == FINE_EVERY > 1
    runtime.stop()
