"""Sample sessions: scripted scenes rendered with `vision.synth.render` and written with `vision.recorder`, each with
its ground truth, so that the whole pipeline can be replayed and checked against what really happened.

A `SessionScript` says what every base does frame by frame (`ScriptFrame`: where each base is, the hands in
view, the camera pose, the light, motion blur) and lists the physical moves (`TrueMove`, with true lengths)
and the quiet spans where nothing moves but something else happens (a hand over the board, the light
changing, the camera knocked). `ScriptBuilder` writes scripts in the players' terms (place, carry, slide,
cover, declare). `record_session(script, directory)` renders and records it and writes beside the frames:

    calibration.json     calibrate_table on the FIRST recorded frame with the true intrinsics (camera.json)
    roster.json, terrain.json, setup.json (the game's setup object), declarations.jsonl
                         ({"frame": n, "action": {...}}: the actions players declared at frame n)
    truth.json           true tag/base positions per frame (base centre, tag centre and face height, the floor the
                         base stands on, mount, visible share), the true moves and the quiet spans

Lengths in inches, pixels in OpenCV's convention, times in seconds. Deterministic: the same script and seed
give the same frames. `python -m vision.synth.samples --out sample_frames` regenerates the bundled ones
(their golden transcripts are written by `python -m session.replay --golden DIR...`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, collect_anchors
from vision.recorder import Recorder
from vision.session_dir import write_bytes_atomic, write_json_atomic
from vision.synth.figures import Figure, Topper
from vision.synth.render import (
    BasePlacement,
    Block,
    CameraPose,
    Hand,
    Scene,
    camera_framing_board,
    render_scene,
)
from vision.tags import detect_tags, gray_frame

BGR = tuple[float, float, float]
JPEG_QUALITY = 85
RED: BGR = (45.0, 45.0, 165.0)
BLUE: BGR = (160.0, 70.0, 40.0)
BASE_Z_IN = 0.125
"""Height of a base's top standing on the table, inches (the tag face's, for a tag flat on the base)."""
TOPPER_IN = 1.85
"""The tag face's height above the base's underside on the samples' toppers, inches (the roster's
`base_height_in`)."""


NO_GAME = ""
"""A sample's manifest `"game": ""`: no game is played; its roster tells the bases' mounts only (the replay
takes the manifest's game before the roster's)."""

# ---------------------------------------------------------------------------------------------- values


@dataclass(frozen=True)
class BaseLook:
    """How a base looks: tag black square (inches), diameter (mm), colour (BGR), the base's own height
    (inches), the figure standing on it and the topper carrying its tag (None: the tag lies on the base top)."""

    tag_in: float = 0.75
    base_mm: float = 32.0
    colour: BGR = RED
    base_height_in: float = BASE_Z_IN
    figure: Figure | None = None
    topper: Topper | None = None

    @property
    def tag_height_in(self) -> float:
        """The tag face's height above the base's underside: the roster's `base_height_in`."""
        return self.topper.height_in if self.topper is not None else self.base_height_in


def miniature(colour: BGR, tag_in: float = 0.75, reach_in: float | None = None, reach_deg: float = 90.0,
              facing_deg: float = 90.0) -> BaseLook:
    """A 32 mm base in `colour` with a 1.35" figure on it (a tunic of the same colour, a spear reaching
    `reach_in` past the base edge when given) and its tag on a topper TOPPER_IN up."""
    tunic: BGR = (min(255.0, colour[0] * 1.15 + 10), min(255.0, colour[1] * 1.15 + 10), min(255.0, colour[2] * 1.15 + 10))
    return BaseLook(tag_in, 32.0, colour, figure=Figure(colour=tunic, reach_in=reach_in, reach_deg=reach_deg,
                                                        facing_deg=facing_deg),
                    topper=Topper(height_in=TOPPER_IN))


STRAIGHT_PINS = {"mount_lean_deg": 0.0}
"""The renderer's topper pins stand straight (a leaning one is rendered only when asked): its rosters say so,
as a club's roster would for pins glued square, so the ± carries no allowance for a lean (rules/roster.py)."""


def mounts_roster(game: str, looks: Mapping[int, BaseLook], owners: Mapping[int, str]) -> dict[str, Any]:
    """Roster entries that tell the pipeline each base's mount: diameter, tag height and tag side (pins straight)."""
    return {"game": game, **STRAIGHT_PINS, "units": [{"tag": t, "name": f"{owners[t].title()} {t}", "profile": "soldier",
                                     "owner": owners[t], "base_mm": round(lk.base_mm), "base_height_in": lk.tag_height_in,
                                     "tag_in": lk.tag_in} for t, lk in sorted(looks.items())]}


@dataclass(frozen=True)
class Pose:
    """A base's centre (x, y), the height of its top z_in (inches; the tag face's for a tag flat on it),
    turned yaw_deg."""

    x: float
    y: float
    z_in: float = BASE_Z_IN
    yaw_deg: float = 0.0

    @property
    def xy(self) -> tuple[float, float]:
        return (self.x, self.y)


@dataclass(frozen=True)
class Light:
    """The room's light on one frame: overall gain (1 = as rendered) and a linear falloff across the frame."""

    gain: float = 1.0
    gradient: float = 0.12
    angle_deg: float = 30.0


@dataclass(frozen=True)
class ScriptFrame:
    """One frame of a script: the bases in view (tag -> pose), hands, camera pose index, light, blur (px)."""

    bases: tuple[tuple[int, Pose], ...]
    hands: tuple[Hand, ...] = ()
    camera: int = 0
    light: Light = Light()
    blur_px: float = 0.0

    def pose_of(self, tag: int) -> Pose | None:
        return next((p for t, p in self.bases if t == tag), None)


@dataclass(frozen=True)
class TrueMove:
    """A base physically moved: centre from -> to (inches), its straight length, heights of the tag face
    before and after, the first frame it was away from its place and the first frame it stood at the new one."""

    tag: int
    from_in: tuple[float, float]
    to_in: tuple[float, float]
    from_z_in: float
    to_z_in: float
    left_frame: int
    placed_frame: int
    lifted: bool

    @property
    def length_in(self) -> float:
        return math.hypot(self.to_in[0] - self.from_in[0], self.to_in[1] - self.from_in[1])

    def to_json(self) -> dict[str, Any]:
        return {"tag": self.tag, "from_in": _pt(self.from_in), "to_in": _pt(self.to_in),
                "length_in": round(self.length_in, 4), "from_z_in": self.from_z_in, "to_z_in": self.to_z_in,
                "left_frame": self.left_frame, "placed_frame": self.placed_frame, "lifted": self.lifted}


@dataclass(frozen=True)
class Quiet:
    """Frames first..last (inclusive) in which nothing moves although something changes (`what`)."""

    first: int
    last: int
    what: str

    def to_json(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last, "what": self.what}


@dataclass(frozen=True, eq=False)
class SessionScript:
    """Everything a sample session is: the table, the camera poses, the looks of the bases, the frames, and
    what the players declared; `moves` and `quiet` are the ground truth of what happened."""

    name: str
    board: tuple[float, float]
    poses: tuple[CameraPose, ...]
    looks: Mapping[int, BaseLook]
    frames: tuple[ScriptFrame, ...]
    moves: tuple[TrueMove, ...]
    quiet: tuple[Quiet, ...] = ()
    declarations: tuple[tuple[int, dict[str, Any]], ...] = ()
    terrain: Mapping[str, Any] | None = None
    roster: Mapping[str, Any] | None = None
    setup: Mapping[str, Any] | None = None
    game: str | None = None
    fps: float = 10.0
    seed: int = 0
    anchor_turns: Mapping[int, int] = field(default_factory=dict)
    noise_sigma: float = 1.5
    description: str = ""

    @property
    def camera(self) -> CameraModel:
        return self.poses[0].camera

    def blocks(self) -> tuple[Block, ...]:
        """The terrain pieces as the renderer draws them (extruded footprints)."""
        if not self.terrain:
            return ()
        out = []
        for piece in self.terrain["pieces"]:
            colour = (95.0, 110.0, 120.0) if "blocking" in piece["kind"] else (120.0, 135.0, 140.0)
            out.append(Block(tuple((float(x), float(y)) for x, y in piece["polygon"]), float(piece["height_in"]),
                             colour))
        return tuple(out)

    def scene(self, i: int) -> Scene:
        f = self.frames[i]
        bases = tuple(BasePlacement(tag, p.x, p.y, p.z_in, p.yaw_deg, self.looks[tag].tag_in, self.looks[tag].base_mm,
                                    self.looks[tag].colour, base_height_in=self.looks[tag].base_height_in,
                                    figure=self.looks[tag].figure, topper=self.looks[tag].topper)
                      for tag, p in f.bases)
        return Scene.at(self.poses[f.camera], self.board, bases=bases, terrain=self.blocks(), hands=f.hands,
                        anchor_turns=dict(self.anchor_turns), light_gradient=0.0, blur_px=f.blur_px,
                        noise_sigma=self.noise_sigma, jpeg_quality=None)


def _pt(p: Sequence[float]) -> list[float]:
    return [round(float(p[0]), 4), round(float(p[1]), 4)]


# ---------------------------------------------------------------------------------------------- builder


class ScriptBuilder:
    """Writes a script frame by frame in the players' terms. Mutable; `build()` gives the frozen script."""

    def __init__(self, looks: Mapping[int, BaseLook], light: Light | None = None) -> None:
        self.looks = dict(looks)
        self.at: dict[int, Pose] = {}
        self.frames: list[ScriptFrame] = []
        self.moves: list[TrueMove] = []
        self.quiet: list[Quiet] = []
        self.declarations: list[tuple[int, dict[str, Any]]] = []
        self.camera = 0
        self.light = light or Light()
        self.blur_px = 0.0

    @property
    def next_frame(self) -> int:
        return len(self.frames)

    def frame(self, hands: Sequence[Hand] = (), hidden: Sequence[int] = (), extra: Mapping[int, Pose] | None = None,
              blur_px: float | None = None) -> int:
        """Add one frame with the bases where they stand (minus `hidden`, plus `extra`); returns its index."""
        bases = {t: p for t, p in self.at.items() if t not in hidden}
        bases.update(extra or {})
        self.frames.append(ScriptFrame(tuple(sorted(bases.items())), tuple(hands), self.camera, self.light,
                                       self.blur_px if blur_px is None else blur_px))
        return len(self.frames) - 1

    def hold(self, n: int) -> None:
        """n frames in which nothing happens."""
        for _ in range(n):
            self.frame()

    def place(self, poses: Mapping[int, Pose], hand_z: float = 3.0) -> None:
        """Hands put bases down: one frame with a hand over each spot, then the bases stand there."""
        self.frame(hands=[Hand(p.x, p.y, hand_z, 1.2) for p in poses.values()])
        self.at.update(poses)

    def carry(self, tag: int, to: Pose, frames: int = 6) -> TrueMove:
        """Pick a base up, carry it out of the camera's sight in a hand, put it down at `to`."""
        start = self.at[tag]
        first = self.frame(hands=[Hand(start.x, start.y, start.z_in + 1.8, 1.3)])
        for k in range(frames):
            f = (k + 1) / (frames + 1)
            x, y = start.x + (to.x - start.x) * f, start.y + (to.y - start.y) * f
            self.frame(hands=[Hand(x, y, max(start.z_in, to.z_in) + 3.0, 1.3)], hidden=[tag])
        self.at[tag] = to
        placed = self.frame(hands=[Hand(to.x + 1.6, to.y - 1.6, to.z_in + 2.5, 1.1)])
        move = TrueMove(tag, start.xy, to.xy, start.z_in, to.z_in, first + 1, placed, True)
        self.moves.append(move)
        return move

    def slide(self, tag: int, to: Pose, frames: int = 8) -> TrueMove:
        """Push a base along the table to `to` in view, a hand beside it."""
        start = self.at[tag]
        dx, dy = to.x - start.x, to.y - start.y
        n = math.hypot(dx, dy) or 1.0
        side = (-dy / n * 1.7, dx / n * 1.7)
        first = self.next_frame
        for k in range(frames):
            f = (k + 1) / frames
            p = replace(start, x=start.x + dx * f, y=start.y + dy * f, yaw_deg=start.yaw_deg + 10.0 * f)
            self.at[tag] = p
            self.frame(hands=[Hand(p.x + side[0], p.y + side[1], 2.0, 1.0)])
        self.at[tag] = replace(to, yaw_deg=start.yaw_deg + 10.0)
        move = TrueMove(tag, start.xy, to.xy, start.z_in, to.z_in, first, first + frames - 1, False)
        self.moves.append(move)
        return move

    def cover(self, x: float, y: float, frames: int, radius_in: float = 2.2, z: float = 4.0) -> Quiet:
        """A hand hovers over (x, y) for `frames` frames and moves nothing."""
        first = self.next_frame
        for k in range(frames):
            wobble = 0.3 * math.sin(k * 0.7)
            self.frame(hands=[Hand(x + wobble, y - wobble, z, radius_in)])
        q = Quiet(first, self.next_frame - 1, "a hand over the board")
        self.quiet.append(q)
        return q

    def declare(self, kind: str, unit: int | None = None, **params: Any) -> None:
        """A player declares an action at the current frame (ruled after that frame's own events)."""
        frame = max(0, self.next_frame - 1)
        self.declarations.append((frame, {"kind": kind, "unit": unit, "params": params}))


# ---------------------------------------------------------------------------------------------- recording


def _lit(image: np.ndarray, light: Light) -> np.ndarray:
    """The rendered frame under `light` (gain and a linear falloff along angle_deg)."""
    if light.gain == 1.0 and light.gradient == 0.0:
        return image
    h, w = image.shape[:2]
    c, s = math.cos(math.radians(light.angle_deg)), math.sin(math.radians(light.angle_deg))
    xn = np.linspace(-1.0, 1.0, w, dtype=np.float32)
    yn = np.linspace(-1.0, 1.0, h, dtype=np.float32)
    ramp = (c * xn[None, :] + s * yn[:, None]) / (abs(c) + abs(s))
    field_ = light.gain * (1.0 - light.gradient * (0.5 + 0.5 * ramp))
    return np.clip(image.astype(np.float32) * field_[:, :, None], 0, 255).astype(np.uint8)


def render_frame(script: SessionScript, i: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Frame i as the camera sees it (BGR uint8, before JPEG) and its truth record."""
    rendered = render_scene(script.scene(i), script.seed * 100_003 + i)
    f = script.frames[i]
    image = _lit(rendered.image, f.light)
    tags = {}
    for tag, truth in sorted(rendered.tags.items()):
        if truth.anchor:
            continue
        base = rendered.bases.get(truth.unit if truth.unit is not None else tag)
        tags[str(tag)] = {"base_in": _pt(truth.base_in or (0.0, 0.0)), "tag_in": _pt(truth.center_in[:2]),
                          "z_in": round(float(truth.center_in[2]), 4), "yaw_deg": round(truth.yaw_deg, 3),
                          "visible": round(truth.visible_fraction, 3), "mount": truth.mount,
                          "floor_in": round(base.center_in[2], 4) if base is not None else 0.0}
    record = {"index": i, "t": round(i / script.fps, 6), "tags": tags, "hands": len(f.hands), "camera": f.camera,
              "light": {"gain": f.light.gain, "gradient": f.light.gradient}, "blur_px": f.blur_px}
    return image, record


def calibrate_first_frame(image: np.ndarray, script: SessionScript) -> TableCalibration:
    """calibrate_table on the frame as recorded (JPEG at JPEG_QUALITY) with the true intrinsics."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    assert ok
    seen = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), np.uint8)
    layout = default_layout(*script.board)
    anchors = collect_anchors(((t.id, t.corners_px) for t in detect_tags(gray_frame(seen))), layout)
    return calibrate_table(anchors, layout, script.camera.image_size, script.camera)


def truth_json(script: SessionScript, frames: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "tablesight-truth", "version": 1, "session": script.name, "description": script.description,
            "board_in": list(script.board), "fps": script.fps, "frames": frames,
            "moves": [m.to_json() for m in script.moves], "quiet": [q.to_json() for q in script.quiet],
            "cameras": [{"rvec": p.rvec.tolist(), "tvec": p.tvec.tolist()} for p in script.poses]}


def record_session(script: SessionScript, directory: Path | str, *, fsync: bool = True,
                   on_frame: Callable[[int], None] | None = None) -> Path:
    """Render `script` and record it into `directory` (new or empty) with its setup files and truth."""
    out = Path(directory)
    first, first_truth = render_frame(script, 0)
    cal = calibrate_first_frame(first, script)
    extra: dict[str, Any] = {"sample": script.name, "fps": script.fps}
    if script.game is not None:
        extra["game"] = script.game
    if script.setup is not None:
        extra["setup"] = "setup.json"
    if script.declarations:
        extra["declarations"] = "declarations.jsonl"
    truths = [first_truth]
    with Recorder(out, source=f"sample session {script.name} (rendered)", calibration=cal.to_json(),
                  roster=dict(script.roster) if script.roster is not None else None,
                  terrain=dict(script.terrain) if script.terrain is not None else None,
                  jpeg_quality=JPEG_QUALITY, fsync=fsync, extra=extra) as rec:
        write_json_atomic(out / "camera.json", script.camera.to_json(), fsync=fsync)
        if script.setup is not None:
            write_json_atomic(out / "setup.json", dict(script.setup), fsync=fsync)
        if script.declarations:
            lines = "".join(json.dumps({"frame": f, "action": a}) + "\n" for f, a in script.declarations)
            write_bytes_atomic(out / "declarations.jsonl", lines.encode("utf-8"), fsync=fsync)
        for i in range(len(script.frames)):
            if i == 0:
                image = first
            else:
                image, record = render_frame(script, i)
                truths.append(record)
            rec.write(image, i / script.fps)
            if on_frame is not None:
                on_frame(i)
    write_json_atomic(out / "truth.json", truth_json(script, truths), fsync=fsync)
    return out


# ---------------------------------------------------------------------------------------------- scripts


def _knocked(pose: CameraPose, degrees: tuple[float, float, float], shift_in: tuple[float, float, float]) -> CameraPose:
    """The same camera turned by small angles (about its own x, y, z axes) and shifted (its own frame)."""
    R, _ = cv2.Rodrigues(np.asarray(pose.rvec, np.float64).reshape(3, 1))
    d, _ = cv2.Rodrigues(np.radians(np.asarray(degrees, np.float64)).reshape(3, 1))
    R2 = d @ R
    t2 = d @ np.asarray(pose.tvec, np.float64).reshape(3) + np.asarray(shift_in, np.float64)
    rvec, _ = cv2.Rodrigues(R2)
    return CameraPose(pose.camera, rvec.reshape(3), t2)


VALKNUT_TERRAIN: dict[str, Any] = {"pieces": [
    {"name": "west ruin", "kind": ["elevated", "obscuring"], "polygon": [[10.5, 3.0], [14.5, 3.0], [14.5, 7.0], [10.5, 7.0]],
     "height_in": 3.0, "climbable": True},
    {"name": "north ruin", "kind": ["elevated", "obscuring"], "polygon": [[16.5, 14.0], [20.0, 14.0], [20.0, 17.5], [16.5, 17.5]],
     "height_in": 3.0, "climbable": True},
    {"name": "stone wall", "kind": ["blocking"], "polygon": [[9.3, 8.8], [9.9, 8.8], [9.9, 12.5], [9.3, 12.5]],
     "height_in": 2.0, "climbable": True},
    {"name": "field wall", "kind": ["blocking"], "polygon": [[22.5, 4.0], [23.1, 4.0], [23.1, 8.5], [22.5, 8.5]],
     "height_in": 2.0, "climbable": True},
]}


def _valknut_roster() -> dict[str, Any]:
    units = [{"tag": 10 + i, "name": f"{'Red' if i < 5 else 'Blue'} {i % 5 + 1}", "profile": "soldier",
              "owner": "red" if i < 5 else "blue", "base_mm": 32, "base_height_in": TOPPER_IN, "tag_in": 0.75}
             for i in range(10)]
    return {"game": "valknut", "units": units, **STRAIGHT_PINS}


SPEARS = {11: 0.4, 13: 0.3, 16: 0.45, 18: 0.35}
"""Figures whose spear reaches past their base's edge (inches) in the Valknut sample."""


def valknut_skirmish(size: tuple[int, int] = (1280, 720), seed: int = 7) -> SessionScript:
    """Valknut on the example roster, a 1.35" figure on every base and each tag on a topper 1.85" up: deployment, a hand over the board, turn 1 (a carried move, an illegal
    slide beyond Speed that ends within 1" of an enemy, a climb onto the 3" west ruin, a ranged attack the
    stone wall blocks, a clear one) and turn 2 (a melee attack and a disengage)."""
    board = (30.0, 22.0)
    pose = camera_framing_board(board, 38.0, 14.0, 0.0, size, [-0.06, 0.015, 0.0005, -0.0003, 0.0])
    looks = {10 + i: miniature(RED if i < 5 else BLUE, 0.75, SPEARS.get(10 + i), 70.0 if i < 5 else 250.0,
                               60.0 if i < 5 else 240.0) for i in range(10)}
    b = ScriptBuilder(looks)
    deploy = {10: Pose(2.0, 2.0), 11: Pose(4.5, 8.5), 12: Pose(7.0, 2.5), 13: Pose(8.8, 5.0), 14: Pose(8.6, 7.4),
              15: Pose(28.0, 20.0), 16: Pose(25.5, 19.5), 17: Pose(22.0, 12.5), 18: Pose(27.0, 15.0),
              19: Pose(24.0, 17.0)}
    b.hold(3)
    # the higher roller (red) first, then alternating, in pairs red and blue; 13 goes down before 12, so that no
    # arm reaching in to put a unit down crosses the topper of one put down just before
    for red in (10, 11, 13, 12, 14):
        b.place({red: deploy[red], red + 5: deploy[red + 5]})
        b.hold(2)
    b.hold(6)
    for tag in range(10, 20):
        b.declare("choose_path", tag, path="bear" if tag < 15 else "raven")
    b.hold(1)
    b.cover(5.5, 5.0, 16)  # a hand hovers over red's deployment zone for 1.5 s
    b.hold(2)
    # turn 1, red first, alternating activations
    b.carry(14, Pose(13.2, 10.2))                          # legal (~5.4")
    b.hold(10)
    b.declare("end_activation", 14)
    b.slide(17, Pose(14.9, 10.9), frames=9)                 # ~7.3": beyond Speed 6; ends within 1" of unit 14
    b.hold(10)
    b.declare("end_activation", 17)
    b.carry(13, Pose(12.0, 5.2, 3.0 + BASE_Z_IN))          # climbs onto the 3" west ruin
    b.hold(10)
    b.declare("end_activation", 13)
    b.carry(16, Pose(21.2, 17.6))                          # legal (~4.7")
    b.hold(10)
    b.declare("end_activation", 16)
    b.declare("attack", 11, target=17)                     # ranged: the stone wall blocks the sight
    b.declare("end_activation", 11)
    b.declare("attack", 15, target=13)                     # blue 15 at the ruin top: a clear or partial view
    b.declare("end_activation", 15)
    for red, blue in ((10, 18), (12, 19)):
        b.declare("end_activation", red)
        b.declare("end_activation", blue)
    b.hold(2)
    for tag in range(10, 20):
        b.declare("choose_path", tag, path="bear" if tag < 15 else "raven")
    b.hold(1)
    b.declare("attack", 17, target=14)                     # turn 2, blue first: melee within 1"
    b.declare("end_activation", 17)
    b.hold(1)
    b.carry(14, Pose(12.0, 8.3))                           # engaged: a disengage (~2.2")
    b.hold(12)
    setup = {"roster": _valknut_roster(), "terrain": VALKNUT_TERRAIN,
             "stockpiles": [{"at": [5.0, 9.5]}, {"at": [15.0, 1.5]}, {"at": [25.0, 9.5]},
                            {"at": [5.0, 14.0]}, {"at": [15.0, 20.5]}, {"at": [25.0, 13.0]}],
             "first_player": "red", "drop_zones": {"red": 1, "blue": 6}}
    return SessionScript(
        name="valknut_skirmish", board=board, poses=(pose,), looks=looks, frames=tuple(b.frames),
        moves=tuple(b.moves), quiet=tuple(b.quiet), declarations=tuple(b.declarations), terrain=VALKNUT_TERRAIN,
        roster=_valknut_roster(), setup=setup, game="valknut", fps=10.0, seed=seed,
        anchor_turns={0: 0, 1: 1, 2: 2, 3: 3},
        description=valknut_skirmish.__doc__ or "")


def flat_hex_centre(q: int, r: int, size_in: float, origin: tuple[float, float], rotation_deg: float) -> tuple[float, float]:
    """Table position (inches) of flat-topped axial cell (q, r) as docs/hex_boards.md lays a board on the table
    (r grows toward -y, "north" is +y), turned rotation_deg about the origin."""
    x, y = 1.5 * q * size_in, -(math.sqrt(3.0) / 2.0 * q + math.sqrt(3.0) * r) * size_in
    a = math.radians(rotation_deg)
    return (origin[0] + math.cos(a) * x - math.sin(a) * y, origin[1] + math.sin(a) * x + math.cos(a) * y)


MAGNI_CELLS = ((1, -1), (0, 1), (-1, 0), (1, 0), (-1, 1), (0, -2), (2, -2), (2, 0), (-2, 2), (0, 2), (-2, 0),
               (2, -1), (1, 1), (-1, -1), (1, -2), (-1, 2), (-2, 1))
"""Where the 17 tiles after the Leads go, in order (axial q, r)."""


def magni_placement(size: tuple[int, int] = (1280, 720), seed: int = 11) -> SessionScript:
    """Rise of the Magni on the 19-cell board: the Leads fight for the centre, then the players put their tiles
    down one by one, Player 1 first, until the map is full."""
    root = Path(__file__).resolve().parents[2] / "examples"
    roster = json.loads((root / "rosters" / "magni.json").read_text(encoding="utf-8"))
    board_json = json.loads((root / "boards" / "magni_19.json").read_text(encoding="utf-8"))
    lay = board_json["layout"]
    board = (24.0, 24.0)
    pose = camera_framing_board(board, 34.0, 10.0, 0.0, size, [-0.05, 0.01, 0.0, 0.0, 0.0])
    looks = {u["tag"]: BaseLook(1.0, float(u["base_mm"]), RED if u["owner"] == "red" else BLUE) for u in roster["units"]}
    b = ScriptBuilder(looks)
    b.hold(3)
    b.declare("lead", None, red=10, blue=20)
    b.hold(1)

    def cell(q: int, r: int) -> Pose:
        x, y = flat_hex_centre(q, r, float(lay["size_in"]), (float(lay["origin"][0]), float(lay["origin"][1])),
                               float(lay.get("rotation_deg", 0.0)))
        return Pose(round(x, 4), round(y, 4))

    b.place({10: cell(0, 0)})
    b.place({20: cell(0, -1)})
    reds, blues = [11, 12, 13, 14, 15, 16, 17, 18, 19], [21, 22, 23, 24, 25, 26, 27, 28]
    order = [reds[i // 2] if i % 2 == 0 else blues[i // 2] for i in range(17)]
    for tag, (q, r) in zip(order, MAGNI_CELLS, strict=True):
        b.place({tag: cell(q, r)})
        b.hold(1)
    b.hold(8)
    setup = {"units": roster["units"], "board": board_json}
    return SessionScript(
        name="magni_placement", board=board, poses=(pose,), looks=looks, frames=tuple(b.frames), moves=(),
        quiet=(), declarations=tuple(b.declarations), terrain=None, roster=roster, setup=setup, game="magni",
        fps=10.0, seed=seed, anchor_turns={0: 1, 1: 0, 2: 3, 3: 2}, description=magni_placement.__doc__ or "")


def stress(size: tuple[int, int] = (1280, 720), seed: int = 23) -> SessionScript:
    """Eight bases with figures and toppers, no game (the roster gives the mounts only): the light dims and brightens with a changing falloff, the camera is knocked a
    little (a small turn and shift, one motion-blurred frame), other frames are motion-blurred; two moves."""
    board = (30.0, 22.0)
    pose = camera_framing_board(board, 36.0, 12.0, 3.0, size, [-0.07, 0.02, 0.0, 0.0, 0.0])
    knocked = _knocked(pose, (0.35, -0.45, 0.3), (0.12, -0.08, 0.05))
    looks = {20 + i: miniature(RED if i % 2 else BLUE, 0.75, 0.35 if i % 3 == 0 else None, 45.0 * i) for i in range(8)}
    b = ScriptBuilder(looks, Light(1.0, 0.1, 20.0))
    b.at.update({20: Pose(4.0, 4.0), 21: Pose(9.0, 16.0), 22: Pose(14.0, 6.0), 23: Pose(18.0, 18.0),
                 24: Pose(23.0, 5.0, yaw_deg=40.0), 25: Pose(26.0, 14.0, yaw_deg=-25.0), 26: Pose(6.0, 11.0),
                 27: Pose(20.0, 11.0, yaw_deg=90.0)})
    b.hold(8)
    first = b.next_frame
    for k in range(14):  # the light dims, the falloff swings, then it brightens past where it was
        g = 1.0 - 0.4 * math.sin(math.pi * k / 13.0) + (0.15 * k / 13.0)
        b.light = Light(round(g, 4), round(0.1 + 0.25 * k / 13.0, 4), 20.0 + 8.0 * k)
        b.frame()
    b.quiet.append(Quiet(first, b.next_frame - 1, "the light changing"))
    b.hold(4)
    b.slide(22, Pose(17.5, 8.0), frames=8)
    b.hold(7)
    first = b.next_frame
    b.camera = 1
    b.frame(blur_px=2.5)  # knocked: the frame blurs as the camera jolts
    b.hold(6)
    b.quiet.append(Quiet(first, b.next_frame - 1, "the camera knocked"))
    for k in range(4):  # motion blur (a shaky table)
        b.frame(blur_px=1.2 + 0.2 * k)
    b.hold(2)
    b.carry(25, Pose(22.0, 16.5, yaw_deg=10.0))
    b.hold(8)
    roster = mounts_roster("valknut", looks, {t: "red" if t % 2 else "blue" for t in looks})
    return SessionScript(
        name="stress", board=board, poses=(pose, knocked), looks=looks, frames=tuple(b.frames),
        moves=tuple(b.moves), quiet=tuple(b.quiet), roster=roster, game=NO_GAME, fps=10.0, seed=seed,
        anchor_turns={0: 2, 1: 3, 2: 0, 3: 1}, description=stress.__doc__ or "")


def tiny(size: tuple[int, int] = (640, 480), seed: int = 3, frames: int = 12) -> SessionScript:
    """A short session for tests: two bases (figures, toppers; no game) on a 12" x 10" board, one carried 3" (`frames` frames)."""
    board = (12.0, 10.0)
    pose = camera_framing_board(board, 20.0, 8.0, 0.0, size)
    looks = {10: miniature(RED), 11: miniature(BLUE, reach_in=0.3)}
    b = ScriptBuilder(looks)
    b.at.update({10: Pose(3.0, 3.0), 11: Pose(8.0, 7.0)})
    b.hold(5)
    b.carry(10, Pose(6.0, 3.0), frames=1)
    b.hold(max(0, frames - b.next_frame))
    roster = mounts_roster("valknut", looks, {10: "red", 11: "blue"})
    return SessionScript(name="tiny", board=board, poses=(pose,), looks=looks, frames=tuple(b.frames[:frames]),
                         moves=tuple(b.moves), roster=roster, game=NO_GAME, fps=10.0, seed=seed,
                         description=tiny.__doc__ or "")


SCRIPTS: dict[str, Callable[[], SessionScript]] = {
    "valknut_skirmish": valknut_skirmish,
    "magni_placement": magni_placement,
    "stress": stress,
    "tiny": tiny,
}
BUNDLED = ("valknut_skirmish", "magni_placement", "stress")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.synth.samples", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="folder to write the sessions into")
    parser.add_argument("--only", choices=sorted(SCRIPTS), action="append", help="just these sessions")
    parser.add_argument("--no-fsync", action="store_true", help="faster; a crash may lose more than one frame")
    parser.add_argument("--progress", action="store_true", help="print 'frame N' after each recorded frame")
    args = parser.parse_args(argv)
    for name in args.only or BUNDLED:
        script = SCRIPTS[name]()
        target = args.out / name

        def report(i: int) -> None:
            print(f"frame {i}", flush=True)

        record_session(script, target, fsync=not args.no_fsync, on_frame=report if args.progress else None)
        print(f"{name}: {len(script.frames)} frames, {len(script.moves)} moves -> {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
