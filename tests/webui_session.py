"""A small recorded session for the web UI tests: rendered frames of a 30" x 22" table, unit 12 moved once.

Frames are drawn by the project's renderer (vision/synth/render.py) and written by the real Recorder; the
calibration attached to the session is made by the real calibrate_table from the first frame's anchors.
Ground truth: ten units (UNITS); unit 12 starts at (8, 6) and stands at (14, 9) from frame MOVE_AT on (a 6.708" move).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

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


def roster_json(game: str = ROSTER_GAME) -> dict[str, object]:
    return {
        "game": game,
        "units": [
            {"tag": tag, "name": f"{owner} {tag}", "profile": "soldier", "owner": owner, "base_mm": 32}
            for tag, (owner, _xy) in UNITS.items()
        ],
    }


def make_session(directory: Path, frames: int = FRAMES) -> Path:
    """Render and record the session into `directory` (created); returns it."""
    from calibration.table import calibrate_table, collect_anchors
    from vision.recorder import Recorder
    from vision.synth.render import BasePlacement, Block, Scene, camera_looking_at, render_scene
    from vision.tags import detect_tags, gray_frame

    pose = camera_looking_at(BOARD, height_in=34.0, tilt_deg=12.0, yaw_deg=0.0, image_size=SIZE, hfov_deg=62.0)
    blocks = (Block(WALL, 3.0),)
    images = []
    for i in range(frames):
        bases = []
        for tag, (owner, xy) in UNITS.items():
            x, y = (END_12 if i >= MOVE_AT else START_12) if tag == 12 else xy
            colour = (45.0, 45.0, 170.0) if owner == "red" else (170.0, 80.0, 40.0)
            bases.append(BasePlacement(tag=tag, x=x, y=y, tag_in=0.75, base_mm=32.0, colour=colour))
        scene = Scene.at(pose, BOARD, bases=tuple(bases), terrain=blocks, noise_sigma=1.0, supersample=2)
        images.append(render_scene(scene, np.random.default_rng(i)).image)
    tags = detect_tags(gray_frame(images[0]))
    from calibration.layout import default_layout

    layout = default_layout(*BOARD)
    cal = calibrate_table(collect_anchors(((t.id, t.corners_px) for t in tags), layout), layout, SIZE, pose.camera)
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
            rec.write(image, i / FPS)
    return directory


def write_json(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path
