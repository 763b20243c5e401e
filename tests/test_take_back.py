"""An illegal move is taken back (issue 31 item 3): the bundled Valknut session's own frames, where Blue 3 (tag 17)
is carried 7.28" against its Speed 6" at frame 73. The rules keep it where it stood, the page is asked to put the
figure back there (a ghost of its base is drawn), and its next move is measured from that spot: a 1" nudge after the
illegal move is a 1" move, not 8"; a figure put back within 0.25" of its spot ends the hold with nothing ruled."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from session.feeds import RecordingFeed
from session.paths import SAMPLE_SESSION_DIR
from session.runtime import load_setup_files, make_pipeline, with_session_plan
from session.take_back import BACK_WITHIN_IN
from vision.tracker import Move

SESSION = Path(SAMPLE_SESSION_DIR)
BLUE_3 = 17


@pytest.fixture(scope="module")
def after_illegal_move() -> tuple[Any, list[dict[str, Any]]]:
    """The sample's pipeline after frame 73 (Blue 3's illegal move), and that frame's verdicts."""
    setup = with_session_plan(load_setup_files(SESSION / "calibration.json", SESSION / "roster.json",
                                               SESSION / "terrain.json", None), SESSION)
    pipe: Any = make_pipeline(setup)
    feed = RecordingFeed.open(SESSION)
    try:
        for _ in range(74):
            result = pipe.process(feed.read())
    finally:
        feed.close()
    return pipe, list(result.verdicts)


def _move(pipe: Any, to: tuple[float, float]) -> Move:
    """Blue 3 carried from where the camera last saw it to `to` (table inches), as the tracker reports it."""
    seen = pipe._camera_placements()[BLUE_3]
    start = (seen.x, seen.y)
    length = math.dist(start, to)
    return Move(frame=200, t=20.0, tag=BLUE_3, from_in=start, to_in=to, length_in=length, pm_in=0.004,
                path_in=(start, to), path_length_in=length, elapsed_s=0.6, lifted=True, left_frame=190, placed_frame=200)


def test_an_illegal_move_is_taken_back_with_the_physical_fix(after_illegal_move: tuple[Any, list]) -> None:
    pipe, verdicts = after_illegal_move
    illegal = next(v for v in verdicts if v["rule"] == "valknut.move.distance")
    assert illegal["outcome"] == "illegal" and illegal["numbers"]["length_in"] == pytest.approx(7.28, abs=0.01)
    fix = next(v for v in verdicts if v["rule"] == "tablesight.take_back")
    legal_x, legal_y = fix["numbers"]["legal_in"]
    assert fix["numbers"]["off_in"] == pytest.approx(7.28, abs=0.01)
    assert "put Blue 3 back where it stood" in fix["message"]
    # the rules see Blue 3 where it legally stands, the camera where it was put
    held = pipe.positions[BLUE_3]
    seen = pipe._camera_placements()[BLUE_3]
    assert (held.x, held.y) == pytest.approx((legal_x, legal_y), abs=1e-3)
    assert math.dist((seen.x, seen.y), (held.x, held.y)) == pytest.approx(7.28, abs=0.01)
    ghost = [o for o in pipe.overlays_now() if o["unit"] == BLUE_3 and o["label"] == "put Blue 3 back here"]
    assert len(ghost) == 1 and ghost[0]["points"][0] == pytest.approx([legal_x, legal_y], abs=1e-3)


def test_the_next_move_is_measured_from_the_legal_spot(after_illegal_move: tuple[Any, list]) -> None:
    pipe, _ = after_illegal_move
    saved = pipe.checkpoint(73)
    try:
        held = pipe.positions[BLUE_3]
        nudge = (held.x + 1.0, held.y)  # 1" from where it legally stands, ~8" from where the camera had it
        out = pipe._rule(_move(pipe, nudge), dict(pipe.positions))
        ruled = next(v for v in out if v["rule"] == "valknut.move.distance")
        assert ruled["outcome"] == "legal" and ruled["numbers"]["length_in"] == pytest.approx(1.0, abs=1e-3)
        assert BLUE_3 not in pipe.take_backs.holds  # a legal move ends the hold
    finally:
        pipe.resume(saved)


def test_a_figure_put_back_ends_the_hold_with_nothing_ruled(after_illegal_move: tuple[Any, list]) -> None:
    pipe, _ = after_illegal_move
    saved = pipe.checkpoint(73)
    try:
        held = pipe.positions[BLUE_3]
        state = pipe.state
        out = pipe._rule(_move(pipe, (held.x + BACK_WITHIN_IN * 0.6, held.y)), dict(pipe.positions))
        assert [(v["rule"], v["outcome"]) for v in out] == [("tablesight.take_back", "info")]
        assert out[0]["message"] == "Blue 3 is back where it legally stood."
        assert pipe.state is state and BLUE_3 not in pipe.take_backs.holds
    finally:
        pipe.resume(saved)
