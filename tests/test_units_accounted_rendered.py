"""Bases too close for their tags to be read, on rendered frames: figures on 25 mm bases with their tags on toppers
1.85" up; Blue 7 is put down 0.6" from Red 4 (the bases overlap by 0.38") and its topper hides Red 4's tag. The
pipeline names both units and the overlap once Red 4 has been lost for 5 s, in the frame message the page draws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from calibration.layout import default_layout
from calibration.table import calibrate_table, collect_anchors
from rules.roster import parse_roster
from session.frame_message import build_frame_message
from session.pipeline import FrameResult, Pipeline
from session.roll_call import UNSEEN_S
from vision.synth.figures import Figure, Topper
from vision.synth.render import BasePlacement, Scene, camera_framing_board, render_scene
from vision.tags import detect_tags, gray_frame

BOARD = (24.0, 18.0)
SIZE = (1280, 720)
SECONDS_A_FRAME = 0.5
"""Frames stamped 0.5 s apart: 5 s of a lost tag in 10 frames."""
RED_4, BLUE_7 = (8.0, 8.0), (8.6, 8.0)
PUT_DOWN = 6
"""The frame Blue 7 stands 0.6" from Red 4 from."""


@dataclass(frozen=True)
class Frame:
    index: int
    t: float
    image: np.ndarray


def base(tag: int, at: tuple[float, float]) -> BasePlacement:
    return BasePlacement(tag, *at, tag_in=0.6, base_mm=25.0, figure=Figure(), topper=Topper(height_in=1.85))


UNITS = [{"tag": t, "name": n, "profile": "soldier", "owner": o, "base_mm": 25, "tag_in": 0.6, "base_height_in": 1.85}
         for t, n, o in ((10, "Red 4", "red"), (11, "Blue 7", "blue"), (12, "Red 5", "red"))]


@pytest.mark.slow
def test_a_figure_put_down_over_anothers_tag_names_both_units_and_the_overlap() -> None:
    pose = camera_framing_board(BOARD, 30.0, 15.0, 0.0, SIZE)
    roster = parse_roster({"game": "valknut", "units": UNITS})
    pipe: Pipeline | None = None
    results: list[FrameResult] = []
    seen: list[set[int]] = []
    for i in range(PUT_DOWN + 14):
        bases = [base(10, RED_4), base(12, (16.0, 5.0))]
        if i >= PUT_DOWN:
            bases.append(base(11, BLUE_7))
        image = render_scene(Scene.at(pose, BOARD, bases=tuple(bases), jpeg_quality=None, blur_px=0.5), i).image
        if pipe is None:
            tags = detect_tags(gray_frame(image))
            layout = default_layout(*BOARD)
            cal = calibrate_table(collect_anchors([(t.id, t.corners_px) for t in tags], layout), layout, SIZE,
                                  pose.camera)
            pipe = Pipeline(cal, roster)
        results.append(pipe.process(Frame(i, i * SECONDS_A_FRAME, image)))
        seen.append({t.id for t in results[-1].tags if t.id >= 10})
    # the renderer: Blue 7's topper hides Red 4's tag from the frame it is put down on; Blue 7's is read
    assert [10 in s for s in seen] == [True] * PUT_DOWN + [False] * 14
    assert all(11 in s for s in seen[PUT_DOWN:])
    # before: Blue 7 not on the table yet, quietly; nothing too close
    first = results[0].roll_call.to_json(roster)
    assert first["not_yet"] == [11] and first["not_yet_text"] == "Not seen on the table yet: Blue 7."
    assert first["too_close"] == [] and first["unseen"] == []
    lost_at = (PUT_DOWN - 1) * SECONDS_A_FRAME  # Red 4 last seen
    said = [r for r in results if r.roll_call.too_close]
    assert said and said[0].t == pytest.approx(lost_at + UNSEEN_S)  # not before 5 s: a hand may be passing
    (pair,) = results[-1].roll_call.too_close
    assert {pair.a, pair.b} == {10, 11}
    true_overlap = 25.0 / 25.4 - 0.6  # two 25 mm bases 0.6" apart: 0.384"
    assert pair.overlap_in == pytest.approx(true_overlap, abs=0.03)
    message = build_frame_message(results[-1], roster=roster, shapes=False)
    (words,) = message["roll_call"]["too_close"]
    assert words["text"] == ('Red 4 and Blue 7 stand too close: their bases overlap by 0.4"; part them so both tags '
                             "can be read.")
    assert message["roll_call"]["unseen"] == []  # Red 4 is named in the pair, not twice
