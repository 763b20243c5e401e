"""Dice rolled on the table itself, away from the bases (session/dice_watch.py's TableArea; issue 30, item 3): with no
tray marked, the camera reads the board less a zone round every base and tag, the bases and tags painted out.

Rendered 1080p frames (vision/synth): the 30" x 22" board, three 32 mm bases of the sample roster with a 1.35"
figure each and its tag on a topper 1.85" up, a white d6 showing 5 rolled on the bare table at (12, 12) and, in one
frame, a second one (a 2) 0.35" beyond base 17's edge, inside its zone. The real Valknut rules: Red 3 (tag 12)
attacks Blue 3 (tag 17), a melee attack needing 4+ on 1 d6 (tests/test_session_dice.py).
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.layout import default_layout
from calibration.table import TableCalibration
from rules.engine import Placement, find_game
from rules.roster import parse_roster
from session.dice_watch import (
    BASE_MARGIN_IN,
    NEEDED_FRAMES,
    PAINT_IN,
    DiceWatch,
    bases_on_table,
    table_area,
    table_seen,
)
from session.paths import SAMPLE_SESSION_DIR
from session.pipeline import Pipeline
from vision.dice.die import Die
from vision.sources import Frame

BOARD = (30.0, 22.0)
UNITS = {12: (5.0, 5.0), 17: (6.8, 5.0), 18: (5.0, 6.8)}
"""Where the bases stand, inches: as tests/test_session_dice.py's Valknut scenario has them."""
AWAY_IN = (12.0, 12.0)
BASE_R_IN = 32.0 / 25.4 / 2.0
NEAR_IN = (UNITS[17][0] + BASE_R_IN + 0.35, UNITS[17][1])
"""0.35" beyond base 17's edge: inside its zone (BASE_MARGIN_IN)."""


def _roster() -> Any:
    return parse_roster(json.loads((SAMPLE_SESSION_DIR / "setup.json").read_text())["roster"])


@functools.cache
def _scene() -> tuple[Any, TableCalibration]:
    from vision.synth.render import BasePlacement, camera_framing_board
    from vision.synth.samples import miniature

    pose = camera_framing_board(BOARD, 34.0, 12.0, 0.0, (1920, 1080))
    looks = {12: miniature((45.0, 45.0, 150.0)), 17: miniature((150.0, 60.0, 40.0)), 18: miniature((150.0, 60.0, 40.0))}
    bases = tuple(BasePlacement(t, x, y, look.base_height_in, 0.0, look.tag_in, look.base_mm, look.colour,
                                figure=look.figure, topper=look.topper, base_height_in=look.base_height_in)
                  for t, (x, y) in UNITS.items() for look in (looks[t],))
    cal = TableCalibration(pose.camera, pose.rvec, pose.tvec, BOARD, default_layout(*BOARD), 0.0, 0.0, (),
                           "intrinsics")
    return (pose, bases), cal


@functools.cache
def _frame(dice: tuple[tuple[int, tuple[float, float]], ...]) -> tuple[np.ndarray, list[Any]]:
    """The table with its figures and `dice` ((face, (x, y) inches) each) rolled on it: the frame and their truth."""
    from vision.synth.dice import DieAt, Tray, render_table_with_dice
    from vision.synth.render import Scene

    (pose, bases), _cal = _scene()
    scene = Scene.at(pose, BOARD, bases=bases, noise_sigma=1.0, supersample=2)
    spot = Tray((0.0, 0.0))  # places the dice only: x, y are table inches
    rendered, truth = render_table_with_dice(scene, spot, [DieAt(6, f, x, y, yaw_deg=20.0 + 25.0 * k)
                                                           for k, (f, (x, y)) in enumerate(dice)], seed=3)
    assert [d.value for d in truth] == [f for f, _ in dice]
    return rendered.image, truth


BOTH = ((5, AWAY_IN), (2, NEAR_IN))
"""The 5 away from the bases and the 2 in base 17's zone."""


def _pipeline() -> Pipeline:
    """The real Valknut rules on the rendered table's calibration, the three units where the bases stand."""
    from rules.valknut.setup import scenario_state

    _scene_, cal = _scene()
    pipe = Pipeline(cal, _roster(), (), find_game("valknut"))
    pipe.state, pipe.positions = scenario_state({"game": "valknut", "units": [
        {"tag": t, "owner": "red" if t == 12 else "blue", "at": list(xy), "base_mm": 32} for t, xy in UNITS.items()]})
    return pipe


def _table(image: np.ndarray) -> Any:
    """The frame processed by the pipeline (tags, fixes) and the TableArea it gives."""
    pipe = _pipeline()
    result = pipe.process(Frame(0, 0.0, image))
    return result, table_seen(result, pipe.positions, pipe.roster)


class TruthReader:
    """A stand-in for vision.dice.read_dice that reads what the renderer drew: the dice's truth, and a die (a 6) at
    every spot of the picture where a tag's black square shows (a reader fooled by tags), in the crop's pixels."""

    def __init__(self, truth: Sequence[Any]) -> None:
        self.truth = list(truth)
        self.calls = 0
        self.last: list[Die] = []
        """What it read last, before the watch kept dice out."""
        _scene_, cal = _scene()
        board = table_area(cal, (1920, 1080), (), ())
        assert board is not None
        self.outline = board.outline_px
        """The board's outline in the frame: the region the watch gives, in its crop's pixels."""

    def __call__(self, image: np.ndarray, sides: int, region: Sequence[tuple[float, float]]) -> list[Die]:
        out: list[Die] = []
        self.calls += 1
        assert sides == 6 and len(region) == len(self.outline)
        dx, dy = self.outline[0][0] - region[0][0], self.outline[0][1] - region[0][1]  # where the crop lies
        dark = (cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) < 35).astype(np.uint8)  # ink black (a shadow is ~45)
        n, _labels, stats, centres = cv2.connectedComponentsWithStats(dark)
        for k in range(1, n):
            if stats[k, cv2.CC_STAT_AREA] > 150:  # a tag's black square (a pip is a few pixels)
                x, y = centres[k]
                out.append(Die(6, 6, (float(x), float(y)), (x - 15, y - 15, x + 15, y + 15), 0.99))
        for d in self.truth:
            x, y = d.centre_px[0] - dx, d.centre_px[1] - dy
            out.append(Die(d.value, 6, (x, y), (x - 15, y - 15, x + 15, y + 15), 0.97))
        inside = np.asarray(region, np.float32).reshape(-1, 1, 2)  # as read_dice: the dice centred in the region
        out = [d for d in out if cv2.pointPolygonTest(inside, d.centre_px, False) >= 0]
        self.last = out
        return out


def test_the_zones_round_the_bases_are_measured_in_inches() -> None:
    roster = _roster()
    placed = {12: Placement(12, 5.0, 5.0), 99: Placement(99, 20.0, 10.0, 3.0)}
    bases = {round(b.x): b for b in bases_on_table(placed, (), roster)}
    assert bases[5].radius_in == pytest.approx(0.63, abs=0.005) and (bases[5].floor_in, bases[5].top_in) == (0.0, 1.85)
    assert (bases[20].radius_in, bases[20].floor_in, bases[20].top_in) == (pytest.approx(0.63, abs=0.005), 3.0, 5.0)
    _scene_, cal = _scene()
    area = table_area(cal, (1920, 1080), (), bases_on_table({12: Placement(12, 5.0, 5.0)}, (), roster))
    assert area is not None
    eye = cal.camera_position_in[:2] - np.array([5.0, 5.0])
    eye = eye / np.linalg.norm(eye)
    kept, allowed_near = 0, 0
    for a in np.linspace(0.0, 2 * math.pi, 16, endpoint=False):  # round the base, on the table
        way = np.array([math.cos(a), math.sin(a)])
        for gap in (BASE_MARGIN_IN - 0.1, BASE_MARGIN_IN + 0.1):
            at = np.array([5.0, 5.0]) + way * (BASE_R_IN + gap)
            px = cal.table_to_image(np.array([[at[0], at[1], 0.0]]))[0]
            allowed = area.allows((float(px[0]), float(px[1])))
            kept += gap < BASE_MARGIN_IN and not allowed
            allowed_near += gap > BASE_MARGIN_IN and allowed and float(way @ eye) > 0.2
    # within the margin all round; beyond it toward the camera, the die is read (away from the camera the zone reaches
    # further: the figure and topper seen leaning away, up to 1.85" high)
    assert kept == 16 and allowed_near == sum(float(np.array([math.cos(a), math.sin(a)]) @ eye) > 0.2
                                              for a in np.linspace(0.0, 2 * math.pi, 16, endpoint=False)) > 4
    corners = cal.table_to_image(np.array([[0.0, 0.0, 0.0], [30.0, 22.0, 0.0]]))
    xs, ys = [p[0] for p in area.outline_px], [p[1] for p in area.outline_px]
    assert abs(min(xs) - corners[0][0]) < 80 and abs(max(ys) - corners[0][1]) < 2 and min(ys) > 150
    assert BASE_MARGIN_IN - PAINT_IN >= 0.45  # a die read is never touched by the paint: half a 16 mm d6's diagonal


def test_the_bases_and_tags_are_painted_out_and_the_dice_on_the_table_are_not() -> None:
    image, truth = _frame(BOTH)
    result, area = _table(image)
    assert sorted(t.id for t in result.tags) == [0, 1, 2, 3, 12, 17, 18]
    painted = area.paint_out(image, 0, 0)
    grey = cv2.cvtColor(painted, cv2.COLOR_BGR2GRAY)
    for tag in result.tags:
        if tag.id >= 10:  # every topper's tag is gone: no black square, no white border
            x, y = np.rint(tag.center_px).astype(int)
            patch = grey[y - 12 : y + 13, x - 12 : x + 13]
            assert patch.min() > 45 and patch.max() < 140, (tag.id, patch.min(), patch.max())
    away, near = truth
    x0, y0, x1, y1 = np.rint(away.box_px).astype(int)  # the die away from the bases is left as it was drawn
    assert (painted[y0 - 5 : y1 + 5, x0 - 5 : x1 + 5] == image[y0 - 5 : y1 + 5, x0 - 5 : x1 + 5]).all()
    assert area.allows(away.centre_px) and not area.allows(near.centre_px)


def _fill(read: Any, frame: tuple[tuple[int, tuple[float, float]], ...]) -> Any:
    """The live loop with no tray, a Valknut attack waiting for its d6, fed the frame NEEDED_FRAMES + 2 times (each
    with its own sensor noise); returns the loop's pipeline, its events and its DiceWatch when the frames end."""
    from session.live_loop import LiveLoop

    image, _truth = _frame(frame)
    noise = np.random.default_rng(0)

    def waiting() -> Pipeline:
        pipe = _pipeline()
        out = pipe.declare(_attack())
        assert [(v["rule"], v["outcome"]) for v in out] == [("dice.pending", "waiting")]
        return pipe

    class StillTable:
        def __init__(self) -> None:
            self.n = 0

        def read(self) -> Frame | None:
            if self.n >= NEEDED_FRAMES + 2:
                return None
            self.n += 1
            grain = noise.normal(0.0, 1.5, image.shape)
            return Frame(self.n - 1, (self.n - 1) / 10.0, np.clip(image + grain, 0, 255).astype(np.uint8))

        def close(self) -> None:
            pass

    loop = LiveLoop(StillTable, waiting, paced=False, at_end="pause", name="table")
    if read is not None:
        loop.dice = DiceWatch(read=read)
    assert loop.dice.tray is None
    loop.start()
    try:
        deadline = time.monotonic() + 60
        while loop.status().status != "ended":
            assert time.monotonic() < deadline, loop.status()
            time.sleep(0.05)
        return loop.pipeline, list(loop.events), loop.dice
    finally:
        loop.stop()


def _attack() -> Any:
    from rules.engine import Action

    return Action("attack", 12, {"target": 17})


def _filled_with_the_five(pipe: Any, events: list[dict[str, Any]]) -> None:
    assert isinstance(pipe, Pipeline) and pipe.pending is None
    assert pipe.last_dice is not None and pipe.last_dice.source == "camera" and pipe.last_dice.faces == [5]
    assert int(pipe.state.unit(17).hp) == 8  # a 5 hits (4+): 2 damage
    roll = next(e for e in events if e.get("type") == "roll")
    assert roll["source"] == "camera" and roll["faces"] == [5] and roll["camera_faces"] == [5]
    assert roll["frame"] == NEEDED_FRAMES - 1  # filled at the fifth still frame


def test_the_live_loop_fills_a_pending_roll_from_a_die_on_the_table() -> None:
    """The loop's path from frames to the rules with no tray marked, the reader a stand-in that reads both dice
    and every tag's black square: the die in base 17's zone and the tags are not read, the 5 away fills the roll."""
    _image, truth = _frame(BOTH)
    reader = TruthReader(truth)
    pipe, events, watch = _fill(reader, BOTH)
    _filled_with_the_five(pipe, events)
    assert reader.calls == NEEDED_FRAMES  # read each frame until the roll counted, then no more
    assert sorted(d.value for d in reader.last) == [2, 5]  # the tags painted out; the 2 in base 17's zone not taken
    assert watch.where == "table"


def test_no_dice_on_the_table_is_nothing_read_and_nothing_filled() -> None:
    """Figures on their bases, tags in view, no dice: the stand-in reader's tag 'dice' are all kept out."""
    image, _truth = _frame(())
    result, area = _table(image)
    watch = DiceWatch(read=TruthReader([]), needed_frames=2)
    got = [watch.look(image, k, roll=1, sides=6, count=1, table=area) for k in range(3)]
    assert got == [None] * 3 and watch.read_json() == {
        "frame": 2, "dice": [], "still_frames": 1, "needed_frames": 2, "low": [], "left_over": False, "where": "table"}
    # the same reader on the frame as it is, kept out nothing: the tags would be read as dice
    reader = TruthReader([])
    bare = reader(image, 6, reader.outline)
    assert len(bare) == 3  # the three toppers (the anchors lie outside the board)


def _models_missing() -> bool:
    from vision.dice import d6

    return not all((d6.MODELS / name).is_file() for name in ("d6_finder.onnx", "d6_reader.onnx"))


@pytest.mark.skipif(_models_missing(), reason="the d6 reader's models (vision/dice/models) are not built yet")
def test_the_real_reader_reads_no_dice_on_a_table_of_figures() -> None:
    """vision.dice.read_dice over the table with no dice: nothing (unpainted, the first models read a 'die' at
    every topper's tag: 3 on this frame, and the anchors')."""
    image, _truth = _frame(())
    _result, area = _table(image)
    watch = DiceWatch()
    assert watch.available
    got = [watch.look(image, k, roll=1, sides=6, count=1, table=area) for k in range(2)]
    read = watch.read_json()
    assert got == [None, None] and read is not None and read["dice"] == []


@pytest.mark.skipif(_models_missing(), reason="the d6 reader's models (vision/dice/models) are not built yet")
def test_the_table_camera_reads_a_die_rolled_on_the_table_into_a_valknut_attack() -> None:
    """The same as the stand-in test, read by vision.dice.read_dice."""
    pipe, events, _watch = _fill(None, BOTH)
    _filled_with_the_five(pipe, events)
