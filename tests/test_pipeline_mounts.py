"""Several tags on one base, through the pipeline on rendered frames: a 50 mm base with a figure and two rim
tags (the unit's own and an extra one from the roster's `more_tags`). One fix per unit whichever tags are seen;
each tag is told table from ruin floor by its own printed size; a hand hiding one tag, then the other, moves
nothing."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, collect_anchors
from rules.roster import parse_roster
from rules.terrain import TerrainPiece
from session.pipeline import Pipeline
from vision.synth.figures import Figure, RimTag
from vision.synth.render import BasePlacement, Block, Hand, Scene, camera_framing_board, render_scene
from vision.tags import detect_tags, gray_frame
from vision.tracker import Move, Placed

BOARD = (30.0, 22.0)
SIZE = (1920, 1080)
BASE_H = 0.125
RUIN_H = 3.0
RUIN = ((12.0, 13.0), (18.0, 13.0), (18.0, 19.0), (12.0, 19.0))
OWN, EXTRA = (0.0, 0.66), (0.0, -0.66)  # rim tag offsets on a 50 mm base, base frame


@dataclass(frozen=True)
class Frame:
    index: int
    t: float
    image: np.ndarray


def _base(tag: int, x: float, y: float, z: float, yaw: float, own_in: float, extra_in: float) -> BasePlacement:
    return BasePlacement(tag, x, y, z_in=z, yaw_deg=yaw, tag_in=own_in, base_mm=50.0, tag_offset_in=OWN,
                         figure=Figure(height_in=1.0), more_tags=(RimTag(tag + 100, EXTRA, extra_in),))


def _unit(tag: int, own_in: float, extra_in: float, extra_offset: tuple[float, float] = EXTRA) -> dict[str, object]:
    return {"tag": tag, "profile": "soldier", "owner": "red", "base_mm": 50, "tag_in": own_in,
            "tag_offset_in": list(OWN),
            "more_tags": [{"tag": tag + 100, "tag_in": extra_in, "tag_offset_in": list(extra_offset)}]}


def _calibrated(scene: Scene) -> tuple[np.ndarray, TableCalibration]:
    image = render_scene(scene, 0).image
    layout = default_layout(*BOARD)
    tags = detect_tags(gray_frame(image))
    anchors = collect_anchors([(t.id, t.corners_px) for t in tags], layout)
    return image, calibrate_table(anchors, layout, SIZE, scene.camera)


@pytest.mark.slow
def test_each_tag_is_told_floor_from_table_by_its_own_printed_size() -> None:
    """Unit 30 on a 3" ruin floor, unit 31 on the table: own tags 0.6", extra tags 0.5". With the extra tags'
    own printed side each tag's size says which plane it is on (none assumed), and the fused fix is the base."""
    on_floor = _base(30, 14.5, 16.0, RUIN_H + BASE_H, 100.0, 0.6, 0.5)  # tags to -x, +x: both seen
    on_table = _base(31, 7.0, 8.0, BASE_H, -80.0, 0.6, 0.5)
    pose = camera_framing_board(BOARD, 36.0, 10.0, 0.0, SIZE)
    scene = Scene.at(pose, BOARD, bases=(on_floor, on_table), terrain=(Block(RUIN, RUIN_H),), jpeg_quality=None,
                     blur_px=0.5, supersample=2)
    image, cal = _calibrated(scene)
    roster = parse_roster({"game": "valknut", "units": [_unit(30, 0.6, 0.5), _unit(31, 0.6, 0.5)]})
    pipe = Pipeline(cal, roster, (TerrainPiece("ruin", RUIN, frozenset({"elevated"}), RUIN_H),))
    tags = detect_tags(gray_frame(image))
    per_tag = {f.tag: f for f in pipe.measure_tags(tags)}
    assert {30, 130, 31, 131} <= set(per_tag)
    for base in (on_floor, on_table):
        for tag in (base.tag, base.tag + 100):
            fix = per_tag[tag]
            assert fix.z == pytest.approx(base.z_in, abs=1e-9), fix
            assert not fix.height_assumed, fix
            assert math.hypot(fix.x - base.x, fix.y - base.y) < 0.05, fix
    fused = {f.tag: f for f in pipe.process(Frame(0, 0.0, image)).fixes}
    assert set(fused) == {30, 31}  # one fix per unit, named by the unit
    for base in (on_floor, on_table):
        fix = fused[base.tag]
        err = math.hypot(fix.x - base.x, fix.y - base.y)
        print(f"unit {base.tag}: fused error {err:.4f} in, ± {fix.pm:.4f} in, z {fix.z:.3f}")
        assert err < 0.03 and fix.z == pytest.approx(base.z_in, abs=1e-9)
    # had the extra tag been read with the unit's printed side, its size would fit no plane: the floor assumed
    wrong = Pipeline(cal, parse_roster({"game": "valknut", "units": [_unit(30, 0.6, 0.6), _unit(31, 0.6, 0.6)]}),
                     (TerrainPiece("ruin", RUIN, frozenset({"elevated"}), RUIN_H),))
    assert {f.tag: f for f in wrong.measure_tags(tags)}[130].height_assumed


@pytest.mark.slow
def test_a_hand_hiding_one_tag_then_the_other_moves_nothing() -> None:
    """A still unit at the board's centre: both rim tags seen, then a hand over its own tag (the extra one seen),
    then over the extra one (its own seen), then none. The roster has the extra tag 0.06" off where it is glued
    (as a ruler gives it): its tag alone would put the base 0.06" off, beyond the tracker's still radius.
    One Placed, no move, and the reported position stays within a hundredth."""
    x, y, yaw = 15.0, 11.0, 0.0
    base = _base(40, x, y, BASE_H, yaw, 0.5, 0.5)
    pose = camera_framing_board(BOARD, 30.0, 0.0, 0.0, SIZE)
    first = Scene.at(pose, BOARD, bases=(base,), jpeg_quality=None, blur_px=0.5, supersample=2)
    _, cal = _calibrated(first)
    roster = parse_roster({"game": "valknut", "units": [_unit(40, 0.5, 0.5, (0.0, -0.60))]})
    pipe = Pipeline(cal, roster)
    fps, phase = 10.0, 8
    hands = [None, Hand(x + OWN[0], y + OWN[1], 1.5, 0.4), Hand(x + EXTRA[0], y + EXTRA[1], 1.5, 0.4), None]
    events, positions = [], []
    for i in range(phase * len(hands)):
        hand = hands[i // phase]
        scene = Scene.at(pose, BOARD, bases=(base,), hands=(hand,) if hand else (), jpeg_quality=None, blur_px=0.5,
                         supersample=2)
        result = pipe.process(Frame(i, i / fps, render_scene(scene, i).image))
        seen = {t.id for t in result.tags}
        assert seen >= {40, 140} if hand is None else seen & {40, 140} == ({140} if i // phase == 1 else {40})
        events += [e for e in result.events if isinstance(e, Move | Placed)]
        view = pipe.tracker.tracks.get(40)
        if view is not None and view.settled:
            positions.append((view.x, view.y, view.pm))
    assert [type(e) for e in events] == [Placed]
    spread = max(math.dist(p[:2], q[:2]) for p in positions for q in positions)
    err = max(math.hypot(p[0] - x, p[1] - y) for p in positions)
    print(f"reported position over the switches: spread {spread:.4f} in, error <= {err:.4f} in, "
          f"± {min(p[2] for p in positions):.4f}-{max(p[2] for p in positions):.4f} in")
    assert spread < 0.01 and spread < min(p[2] for p in positions)
    assert err < 0.045  # the extra tag's 0.06" roster error, half-weighted while both are seen
