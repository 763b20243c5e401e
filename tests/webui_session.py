"""A small recorded session for the web UI tests: rendered frames of a 30" x 22" table, unit 12 moved once.

Frames are drawn by the project's renderer (vision/synth/render.py) and written by the real Recorder; the
calibration attached to the session is made by the real calibrate_table from the first frame's anchors.
Ground truth: ten units (UNITS); unit 12 starts at (8, 6) and stands at (14, 9) from frame MOVE_AT on (a 6.708" move).

A miniature 1.15-1.45" tall stands on every base (MOUNTS; vision/synth/figures.py), as on the real table, its
tag where a player puts it so the camera sees it. Eight 32 mm bases carry theirs (0.65" black square) on a
topper: a brass pin and a white card 0.475" above the figure's head, 1.75-2.05" above the table; the pins lean
0-1.8 degrees, so a card sits up to 0.054" off its base's centre. Units 11 and 23 stand on 60 mm bases with
their tag (0.6") flat on the rim, 0.68" in front of the figure, turned toward the camera. Two figures hold a
spear past their base's edge. No figure or topper hides an anchor. The roster (roster_json) says how each tag
is mounted (base_height_in, tag_offset_in, tag_in): the renderer's own geometry of each base
(BasePlacement.tag_poses, which the render's ground truth is made from), to 0.0001"; the first frame and frame
MOVE_AT check it against their ground truth.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from vision.synth.render import BasePlacement, CameraPose, Rendered

BOARD = (30.0, 22.0)
SIZE = (960, 720)
FRAMES = 24
FPS = 10.0
MOVE_AT = 8
START_12 = (8.0, 6.0)
END_12 = (14.0, 9.0)
UNITS = {
    10: ("red", (3.0, 3.0)), 11: ("red", (3.0, 19.0)), 12: ("red", START_12), 13: ("red", (6.0, 15.0)),
    14: ("red", (10.0, 19.0)), 20: ("blue", (27.0, 3.0)), 21: ("blue", (22.0, 12.0)), 22: ("blue", (24.0, 5.0)),
    23: ("blue", (27.0, 19.0)), 24: ("blue", (21.0, 19.0)),
}
"""Five soldiers a side, as Valknut fields them."""
WALL = ((17.0, 10.0), (19.0, 10.0), (19.0, 14.0), (17.0, 14.0))
TERRAIN: dict[str, list[dict[str, object]]] = {
    "pieces": [
        {"name": "wall", "kind": ["blocking"], "polygon": [[17, 10], [19, 10], [19, 14], [17, 14]], "height_in": 3.0}
    ]
}
ROSTER_GAME = "valknut"

BASE_HEIGHT_IN = 0.125
"""Every base's own height (its top above the table), inches."""
TOPPER_BASE_MM, TOPPER_TAG_IN = 32.0, 0.65
"""A topper's base and its tag's black square (what `tablesight tags --base 32` prints), inches."""
RIM_BASE_MM, RIM_OFFSET_IN, RIM_TAG_IN = 60.0, (0.0, 0.68), 0.6
"""A rim base: 60 mm, its tag 0.68" from the centre toward the tag's +y (where the figure faces), 0.6" black."""


class Mount(NamedTuple):
    """How a unit's figure and tag stand on its base (fixed: the session renders the same every time).

    yaw_deg: the base's turn. figure_in: the figure's height above the base top. facing_deg: where it looks
    (base frame). topper_in: the topper's tag face above the table (None: the tag is on a 60 mm base's rim in
    front of the figure). lean_deg, lean_dir_deg: the topper pin's lean. spear: a spear reaching this far past
    the base edge toward spear_deg (None: a sword)."""

    yaw_deg: float
    figure_in: float
    facing_deg: float
    topper_in: float | None
    lean_deg: float = 0.0
    lean_dir_deg: float = 0.0
    spear: float | None = None
    spear_deg: float = 90.0


MOUNTS: dict[int, Mount] = {
    10: Mount(30.0, 1.30, 80.0, 1.90, 1.0, 40.0),
    11: Mount(190.0, 1.25, 90.0, None),
    12: Mount(-60.0, 1.40, 100.0, 2.00, 0.7, 220.0, spear=0.3, spear_deg=60.0),
    13: Mount(120.0, 1.20, 70.0, 1.80, 1.5, 300.0),
    14: Mount(75.0, 1.35, 110.0, 1.95),
    20: Mount(-150.0, 1.15, 95.0, 1.75, 1.2, 120.0),
    21: Mount(10.0, 1.45, 85.0, 2.05, 0.8, 250.0, spear=0.25, spear_deg=120.0),
    22: Mount(165.0, 1.25, 105.0, 1.85, 1.8, 10.0),
    23: Mount(170.0, 1.35, 90.0, None),
    24: Mount(-100.0, 1.30, 75.0, 1.90, 0.6, 75.0),
}
"""Each unit's figure and tag mount, by tag id."""

_TUNICS = {
    "red": ((45.0, 45.0, 170.0), (40.0, 60.0, 150.0), (60.0, 40.0, 185.0), (35.0, 50.0, 135.0),
            (55.0, 55.0, 160.0)),
    "blue": ((170.0, 80.0, 40.0), (150.0, 95.0, 55.0), (185.0, 70.0, 50.0), (140.0, 85.0, 35.0),
             (160.0, 100.0, 60.0)),
}
"""Each side's tunic colours (BGR), in UNITS order."""


def _placement(tag: int, x: float, y: float) -> BasePlacement:
    """Unit `tag`'s base standing at (x, y) with its figure and tag."""
    from vision.synth.figures import Figure, Topper
    from vision.synth.render import BasePlacement

    owner, _xy = UNITS[tag]
    m = MOUNTS[tag]
    side = [t for t, (o, _) in UNITS.items() if o == owner].index(tag)
    tunic = _TUNICS[owner][side]
    colour = (45.0, 45.0, 170.0) if owner == "red" else (170.0, 80.0, 40.0)
    rim = m.topper_in is None
    figure = Figure(height_in=m.figure_in, colour=tunic, reach_in=m.spear, reach_deg=m.spear_deg,
                    facing_deg=m.facing_deg, stance_in=(0.0, -0.25) if rim else (0.0, 0.0))
    if rim:
        return BasePlacement(tag, x, y, z_in=BASE_HEIGHT_IN, yaw_deg=m.yaw_deg, tag_in=RIM_TAG_IN,
                             base_mm=RIM_BASE_MM, colour=colour, tag_offset_in=RIM_OFFSET_IN,
                             base_height_in=BASE_HEIGHT_IN, figure=figure)
    assert m.topper_in is not None
    return BasePlacement(tag, x, y, z_in=BASE_HEIGHT_IN, yaw_deg=m.yaw_deg, tag_in=TOPPER_TAG_IN,
                         base_mm=TOPPER_BASE_MM, colour=colour, base_height_in=BASE_HEIGHT_IN, figure=figure,
                         topper=Topper(m.topper_in, m.lean_deg, m.lean_dir_deg))


@functools.cache
def _mounted(tag: int) -> tuple[float, float, tuple[float, float], float]:
    """Unit `tag`'s base_mm, and its tag's height above the base's underside, centre offset from the base centre
    in the base's frame, and black side: from the renderer's own geometry (the ground truth's source)."""
    _owner, (x, y) = UNITS[tag]
    b = _placement(tag, x, y)
    tid, pose, _where = b.tag_poses()[0]
    assert tid == tag
    a = math.radians(b.yaw_deg)
    dx, dy = float(pose.centre[0]) - b.x, float(pose.centre[1]) - b.y
    offset = (dx * math.cos(a) + dy * math.sin(a), -dx * math.sin(a) + dy * math.cos(a))
    return b.base_mm, float(pose.centre[2]) - b.floor_z_in, offset, float(pose.side)


def roster_json(game: str = ROSTER_GAME) -> dict[str, object]:
    units = []
    for tag, (owner, _xy) in UNITS.items():
        base_mm, height, (ox, oy), side = _mounted(tag)
        units.append({"tag": tag, "name": f"{owner} {tag}", "profile": "soldier", "owner": owner,
                      "base_mm": int(base_mm), "base_height_in": round(height, 4),
                      "tag_offset_in": [round(ox, 4) + 0.0, round(oy, 4) + 0.0], "tag_in": side})
    return {"game": game, "units": units}


def _check_roster(rendered: Rendered) -> None:
    """The roster's mount numbers are the rendered frame's ground truth (to the roster's 0.0001")."""
    from bench.scenes import roster_truth

    heights, offsets = roster_truth(rendered.tags, rendered.bases)
    units = {u["tag"]: u for u in roster_json()["units"]}  # type: ignore[attr-defined]
    assert set(heights) == set(units), (sorted(heights), sorted(units))
    for tag, u in units.items():
        assert abs(u["base_height_in"] - heights[tag]) <= 1e-4, (tag, u, heights[tag])
        assert math.dist(u["tag_offset_in"], offsets[tag]) <= 2e-4, (tag, u, offsets[tag])
        assert u["tag_in"] == rendered.tags[tag].tag_in, (tag, u, rendered.tags[tag].tag_in)


def make_session(directory: Path, frames: int = FRAMES) -> Path:
    """Render and record the session into `directory` (created); returns it."""
    from calibration.layout import default_layout
    from calibration.table import calibrate_table, collect_anchors
    from vision.recorder import Recorder
    from vision.tags import detect_tags, gray_frame

    images = [_frame(i) for i in range(frames)]
    tags = detect_tags(gray_frame(images[0]))
    layout = default_layout(*BOARD)
    anchors = collect_anchors(((t.id, t.corners_px) for t in tags), layout)
    cal = calibrate_table(anchors, layout, SIZE, _pose().camera)
    directory.mkdir(parents=True, exist_ok=True)
    with Recorder(
        directory,
        source="rendered test table",
        calibration=cal.to_json(),
        roster=roster_json(),
        terrain=TERRAIN,
        fsync=False,
    ) as rec:
        for i, image in enumerate(images):
            rec.write(image.copy(), i / FPS)
    return directory


@functools.cache
def _pose() -> CameraPose:
    from vision.synth.render import camera_looking_at

    return camera_looking_at(BOARD, height_in=34.0, tilt_deg=12.0, yaw_deg=0.0, image_size=SIZE, hfov_deg=62.0)


@functools.lru_cache(maxsize=FRAMES)
def _frame(i: int) -> np.ndarray:
    """Frame i of the session, rendered once per process (~0.3 s a frame with ten figures; every call renders
    the same picture). supersample=4: at 2 a topper's pin, seen edge-on, shows through its card."""
    from vision.synth.render import Block, Scene, render_scene

    bases = []
    for tag, (_owner, xy) in UNITS.items():
        x, y = (END_12 if i >= MOVE_AT else START_12) if tag == 12 else xy
        bases.append(_placement(tag, x, y))
    blocks = (Block(WALL, 3.0),)
    scene = Scene.at(_pose(), BOARD, bases=tuple(bases), terrain=blocks, noise_sigma=1.0, supersample=4)
    rendered = render_scene(scene, np.random.default_rng(i))
    if i in (0, MOVE_AT):
        _check_roster(rendered)
    image = rendered.image
    image.flags.writeable = False
    return image


def write_json(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path
