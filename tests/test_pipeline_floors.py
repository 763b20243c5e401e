"""Units on a 3" ruin floor and on the table beside it, measured by the pipeline on rendered frames.

A unit near the ruin's edge that faces away from the camera, measured at table height, lands outside the
ruin (its ray meets the table further out); the pipeline must still find it on the floor, where it stands.
Units on the table beside the ruin must stay on the table, also one that, measured at floor height, would
land inside the footprint the players drew. Ground truth is the rendered scene.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from shapely.geometry import Point, Polygon

from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, collect_anchors
from rules.roster import parse_roster
from rules.terrain import TerrainPiece
from session.floors import stand_on_floors
from session.frame_message import unit_list
from session.pipeline import Pipeline
from vision.positions import BaseFix
from vision.synth.render import BasePlacement, Block, Scene, camera_framing_board, render_scene
from vision.tags import detect_tags, gray_frame

BOARD = (30.0, 22.0)
SIZE = (1920, 1080)
TAG_IN = 0.75
BASE_H = 0.125
RUIN_H = 3.0
RUIN = ((12.0, 13.0), (16.0, 13.0), (16.0, 17.0), (12.0, 17.0))
FLOOR_Z = RUIN_H + BASE_H
# tag: (x, y, z of the tag face); the far edge is y = 17 (the cameras lean back toward -y)
ON_FLOOR = {
    10: (12.8, 16.7, FLOOR_Z),  # 0.3" from the far edge
    11: (14.1, 16.45, FLOOR_Z),  # 0.55" from the far edge
    12: (15.4, 16.2, FLOOR_Z),  # 0.8" from the far edge
    13: (14.0, 13.5, FLOOR_Z),  # 0.5" from the near edge
    14: (12.5, 15.0, FLOOR_Z),  # 0.5" from the left edge
    15: (15.3, 14.6, FLOOR_Z),  # 0.7" from the right edge
}
FAR_EDGE = (10, 11, 12)
ON_TABLE = {
    20: (14.0, 12.3, BASE_H),  # 0.7" beyond the near edge: its base almost touches the ruin
    21: (12.6, 12.35, BASE_H),
    22: (5.0, 5.0, BASE_H),
}
CAMERAS = {  # (height, tilt from straight down, yaw), inches and degrees
    "30in-tilt25": (30.0, 25.0, 0.0),
    "36in-tilt10": (36.0, 10.0, 0.0),
    "28in-tilt30-yaw20": (28.0, 30.0, 20.0),
    "40in-straight-down": (40.0, 0.0, 0.0),
}


@dataclass(frozen=True)
class Frame:
    index: int
    t: float
    image: np.ndarray


def _bases() -> tuple[BasePlacement, ...]:
    where = {**ON_FLOOR, **ON_TABLE}
    return tuple(BasePlacement(t, x, y, z_in=z, yaw_deg=23.0 * t, tag_in=TAG_IN, base_mm=32.0) for t, (x, y, z) in where.items())


def _ruin_piece() -> TerrainPiece:
    return TerrainPiece("ruin", RUIN, frozenset({"elevated", "obscuring"}), RUIN_H)


def _frame_and_calibration(camera: tuple[float, float, float]) -> tuple[Frame, TableCalibration]:
    pose = camera_framing_board(BOARD, camera[0], camera[1], camera[2], SIZE)
    scene = Scene.at(pose, BOARD, bases=_bases(), terrain=(Block(RUIN, RUIN_H),), jpeg_quality=None, blur_px=0.5,
                     supersample=2)
    image = render_scene(scene, 0).image
    layout = default_layout(*BOARD)
    tags = detect_tags(gray_frame(image))
    cal = calibrate_table(collect_anchors([(t.id, t.corners_px) for t in tags], layout), layout, SIZE, pose.camera)
    return Frame(0, 0.0, image), cal


def _roster(printed: dict[int, float | None]) -> dict[str, object]:
    units = []
    for tag, side in printed.items():
        unit: dict[str, object] = {"tag": tag, "profile": "soldier", "owner": "red", "base_mm": 32}
        if side is not None:
            unit["tag_in"] = side
        units.append(unit)
    return {"game": "valknut", "units": units}


def _fixes(frame: Frame, cal: TableCalibration, printed: dict[int, float | None]) -> dict[int, BaseFix]:
    pipe = Pipeline(cal, parse_roster(_roster(printed)), (_ruin_piece(),))
    return {f.tag: f for f in pipe.process(frame).fixes}


@pytest.fixture(scope="module", params=list(CAMERAS), ids=list(CAMERAS))
def rendered(request: pytest.FixtureRequest) -> tuple[Frame, TableCalibration]:
    return _frame_and_calibration(CAMERAS[request.param])


def _table_plane_position(cal: TableCalibration, x: float, y: float, z: float) -> tuple[float, float]:
    """Where a tag centre at (x, y, z) lands when measured at base height above the table."""
    px = cal.table_to_image(np.array([[x, y, z]]))
    out = cal.image_to_table(px, BASE_H)[0]
    return float(out[0]), float(out[1])


def test_units_on_the_ruin_floor_stand_on_it_even_at_its_far_edge(rendered: tuple[Frame, TableCalibration]) -> None:
    frame, cal = rendered
    fixes = _fixes(frame, cal, {t: TAG_IN for t in (*ON_FLOOR, *ON_TABLE)})
    # the case the old pipeline got wrong is in this view: a far-edge unit that lands off the ruin at table height
    ruin = Polygon(RUIN)
    assert any(not ruin.covers(Point(_table_plane_position(cal, *ON_FLOOR[t]))) for t in FAR_EDGE)
    for tag, (x, y, z) in ON_FLOOR.items():
        fix = fixes[tag]
        assert np.hypot(fix.x - x, fix.y - y) < 0.05, (tag, fix)
        assert fix.z == pytest.approx(z, abs=1e-9), (tag, fix)
        assert not fix.height_assumed
        assert fix.side_in == pytest.approx(TAG_IN, rel=0.02)  # the printed side, on the plane it was put on


def test_units_on_the_table_beside_the_ruin_stay_on_the_table(rendered: tuple[Frame, TableCalibration]) -> None:
    frame, cal = rendered
    fixes = _fixes(frame, cal, {t: TAG_IN for t in (*ON_FLOOR, *ON_TABLE)})
    for tag, (x, y, z) in ON_TABLE.items():
        fix = fixes[tag]
        assert np.hypot(fix.x - x, fix.y - y) < 0.05, (tag, fix)
        assert fix.z == pytest.approx(z, abs=1e-9), (tag, fix)
        assert not fix.height_assumed


def test_a_unit_on_the_table_inside_a_loosely_drawn_footprint_stays_on_the_table() -> None:
    """The ruin's footprint as the players drew it reaches 1.5" beyond the block's far side, where a unit
    stands on the table, seen by a camera looking straight down. Measured on the floor's plane it lands
    inside the drawn footprint: only its size can say it is on the table."""
    loose = ((12.0, 13.0), (16.0, 13.0), (16.0, 18.5), (12.0, 18.5))
    behind = BasePlacement(30, 14.0, 18.15, z_in=BASE_H, yaw_deg=5.0, tag_in=TAG_IN, base_mm=32.0)
    on_floor = BasePlacement(31, 14.2, 16.5, z_in=FLOOR_Z, yaw_deg=-40.0, tag_in=TAG_IN, base_mm=32.0)
    pose = camera_framing_board(BOARD, 40.0, 0.0, 0.0, SIZE)
    scene = Scene.at(pose, BOARD, bases=(behind, on_floor), terrain=(Block(RUIN, RUIN_H),), jpeg_quality=None,
                     blur_px=0.5, supersample=2)
    image = render_scene(scene, 0).image
    layout = default_layout(*BOARD)
    tags = detect_tags(gray_frame(image))
    cal = calibrate_table(collect_anchors([(t.id, t.corners_px) for t in tags], layout), layout, SIZE, pose.camera)
    foot, height = cal.camera_position_in[:2], cal.camera_position_in[2]
    on_floor_plane = foot + (np.array([behind.x, behind.y]) - foot) * (height - FLOOR_Z) / (height - BASE_H)
    assert Polygon(loose).covers(Point(*on_floor_plane)), "not a real floor candidate: the test shows nothing"
    piece = TerrainPiece("ruin", loose, frozenset({"elevated"}), RUIN_H)
    pipe = Pipeline(cal, parse_roster(_roster({30: TAG_IN, 31: TAG_IN})), (piece,))
    fixes = {f.tag: f for f in pipe.process(Frame(0, 0.0, image)).fixes}
    for base in (behind, on_floor):
        fix = fixes[base.tag]
        assert np.hypot(fix.x - base.x, fix.y - base.y) < 0.05, fix
        assert fix.z == pytest.approx(base.z_in, abs=1e-9), fix
        assert not fix.height_assumed


def test_a_printed_side_that_fits_no_plane_leaves_the_floor_assumed(rendered: tuple[Frame, TableCalibration]) -> None:
    """The roster gives no tag_in, so the print is taken as 32 mm bases get it (0.65"), but the tags are 0.75":
    the size fits neither plane, the footprint decides, and the fix says the height was assumed."""
    frame, cal = rendered
    fixes = _fixes(frame, cal, {t: None for t in (*ON_FLOOR, *ON_TABLE)})  # 32 mm bases: 0.65" by default
    for tag, (x, y, z) in ON_FLOOR.items():
        fix = fixes[tag]
        assert np.hypot(fix.x - x, fix.y - y) < 0.05, (tag, fix)
        assert fix.z == pytest.approx(z, abs=1e-9)
        assert fix.height_assumed, "a 0.75\" tag fits neither plane's size for a 0.65\" print"
    assert fixes[22].z == pytest.approx(BASE_H) and not fixes[22].height_assumed  # no floor near it: no question
    # the page is told, so the selected unit can say its height was assumed
    units = {u["tag"]: u for u in unit_list(list(fixes.values()), None, {})}
    assert all(units[t]["height_assumed"] for t in ON_FLOOR) and not units[22]["height_assumed"]


def _seen_from(camera: np.ndarray, x: float, y: float, z: float, side: float) -> BaseFix:
    """A tag of `side` inches at (x, y, z) as measure_bases reports it on the plane z = BASE_H: rays through the
    camera scale positions and lengths about it by (H - BASE_H) / (H - z)."""
    k = (camera[2] - BASE_H) / (camera[2] - z)
    cx, cy = camera[0] + (x - camera[0]) * k, camera[1] + (y - camera[1]) * k
    return BaseFix(40, cx, cy, BASE_H, 0.0, 0.002, (cx, cy), 100.0, side_in=side * k)


@pytest.mark.parametrize("floor_in, decided", [(3.0, True), (0.25, False)])
def test_a_low_floor_seen_from_far_cannot_be_told_from_the_table(floor_in: float, decided: bool) -> None:
    """Camera 40" up: a 3" floor changes a 0.75" tag's size by 8 %, far beyond the print's 1 %; a 0.25" board
    by 0.6 %, within it. The unit on the floor is put on it either way; only the first is measured."""
    camera = np.array([15.0, 11.0, 40.0])
    piece = TerrainPiece("platform", RUIN, frozenset({"elevated"}), floor_in)
    on_floor = _seen_from(camera, 14.0, 16.7, floor_in + BASE_H, TAG_IN)
    (fix,) = stand_on_floors([on_floor], camera, [piece], {40: TAG_IN})
    assert (fix.x, fix.y) == pytest.approx((14.0, 16.7), abs=1e-9)
    assert fix.z == pytest.approx(floor_in + BASE_H) and fix.height_assumed is not decided
