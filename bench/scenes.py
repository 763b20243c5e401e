"""The benchmark's tables: seeded rendered scenes of a 30" x 22" board with 40 bases, a figure standing on each
(its tag on a topper or the base's rim), terrain, a ruin floor and the four anchors (vision rows), and the short live sequences in which bases slide and one is lifted (live rows).
The constants say what is measured."""


from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.layout import default_layout
from vision.synth.figures import Figure, Topper
from vision.synth.render import (
    BasePlacement,
    BaseTruth,
    Block,
    CameraPose,
    Rendered,
    Scene,
    TagTruth,
    camera_framing_board,
    render_scene,
)
from vision.tags import gray_frame

SEED = 20260704
BOARD = (30.0, 22.0)
BASES = 40
TAG_RANGE_IN = (0.5, 1.0)
"""Black square sides of the base tags, inches (uniform)."""
BASE_HEIGHT_IN = 0.125
"""Every base's own height (the base top above what it stands on), inches."""
TOPPER_HEIGHT_IN = (1.6, 2.2)
"""A topper's tag face above its base's underside, inches (uniform): above a 1.1-1.5" figure's head."""
TOPPER_LEAN_MAX_DEG = 2.0
"""Topper pins lean 0-2 degrees (uniform, each its own way): the tag's true offset is the render's."""
TOPPER_BASES_MM = (25.0, 28.0, 32.0, 40.0)
FIGURE_HEIGHT_IN = (1.1, 1.5)
SPEAR_SHARE = 0.3
"""About this share of the figures hold a spear reaching 0.2-0.5" past their base's edge."""
RIM_BASES = 4
"""Bases a scene with their tag flat on the rim of a 60 mm base (in front of the figure), ..."""
RIM_BASE_MM = 60.0
RIM_OFFSET_IN = 0.68
RIM_TAG_RANGE_IN = (0.5, 0.7)
"""... 0.68" from the centre toward the tag's +y, black squares 0.5-0.7" (uniform; what the rim takes)."""
RUIN_FLOORS = 1
RUIN_FLOOR_IN = 3.0
RUIN_SIZE_IN = ((6.0, 7.5), (4.0, 5.0))
"""A ruin's floor: a block 3" high, 6-7.5" x 4-5", ..."""
RUIN_BASES = 4
"""... on which this many of the bases (toppers) stand."""
SCENE_BASES = (
    f'each with a figure: {BASES - RIM_BASES} tags on toppers {TOPPER_HEIGHT_IN[0]:g}-{TOPPER_HEIGHT_IN[1]:g}" up '
    f'({RUIN_BASES} on a {RUIN_FLOOR_IN:g}" ruin floor), {RIM_BASES} on 60 mm rims'
)
"""What the scene's bases carry, for the report's header."""
HEIGHT_RANGE_IN = (BASE_HEIGHT_IN, RUIN_FLOOR_IN + TOPPER_HEIGHT_IN[1])
"""Heights of the tag faces above the table, inches: a rim tag on a base on the table to a topper on a ruin."""
BARE_HEIGHT_RANGE_IN = (0.0, 3.0)
"""`--bare` scenes: heights of the bare tag faces above the table, inches (uniform)."""
SMALLEST_TAG_IN = TAG_RANGE_IN[0]
"""The smallest expected tag: it picks the decimation, ..."""
SMALLEST_TAG_HEIGHT_IN = 0.0
"""... taken this high (on the table, as session/pipeline.py takes it)."""
TERRAIN_BLOCKS = 3
CAMERA_HEIGHT_IN = 36.0
CAMERA_TILT_DEG = 20.0
RESOLUTIONS: tuple[tuple[str, tuple[int, int]], ...] = (
    ("720p", (1280, 720)),
    ("1080p", (1920, 1080)),
    ("4K", (3840, 2160)),
)
QUICK_RESOLUTIONS = ("720p", "1080p")
NO_INTRINSICS_RESOLUTION = "1080p"
DEFAULT_FRAMES = 10
QUICK_FRAMES = 3
MIN_REPEATS = 20
"""Cheap rows (rules, tracker, image costs) run at least this many times whatever `frames` is."""
JPEG_QUALITY = 80
"""The web UI's live feed encodes at this quality (session/live_loop.py)."""
SIGHT_UNITS = 40
SIGHT_PIECES = 20
TRACKER_TAGS = 40
LIVE_LIFT_FRAME = 2
"""In the live sequences one base leaves the table in this frame ..."""
LIVE_PLACE_FRAME = 4
"""... and is put down elsewhere in this one."""
LIVE_FRAMES_PER_FRAME = {"720p": 3, "1080p": 3, "4K": 2}
"""A live sequence has this many frames per `frames` (30 at 720p and 1080p, 20 at 4K by default), ..."""
LIVE_MAX_FRAMES = {"720p": 90, "1080p": 90, "4K": 60}
"""... at most this many ..."""
LIVE_MIN_FRAMES = 20
"""... and at least this many (the base put down is read where the picture changed, in the frame it shows)."""
LIVE_SLIDERS = 4
"""Bases slid a little every frame of a live sequence, ..."""
LIVE_SLIDE_IN = (0.05, 0.3)
"""... by this much (inches, uniform, any direction), turning by up to 5 degrees."""
LIVE_LIFTED_TAG_IN = 0.6
"""The lifted base is the one whose tag is nearest this size (small, but above what 720p misses anyway)."""
LIVE_PLACE_AWAY_IN = 6.0
"""It is put down at least this far from where it stood."""
LIVE_STREAM = 50
"""Seed stream of the live sequences (the detection frames use 0-2)."""
def _covers_an_anchor(pose: CameraPose, x: float, y: float, z: float, r: float, floor: float = 0.0) -> bool:
    """True if a base there (its figure and tags up to `z`, standing on `floor`) would hide part of an anchor
    or its paper in the image."""
    a = np.linspace(0.0, 2.0 * math.pi, 16, endpoint=False)
    ring = np.column_stack([x + r * np.cos(a), y + r * np.sin(a)])
    disc = np.vstack([np.column_stack([ring, np.full(16, z)]), np.column_stack([ring, np.full(16, floor)])])
    px, _ = cv2.projectPoints(disc, pose.rvec, pose.tvec, pose.camera.K, pose.camera.dist)
    hull = cv2.convexHull(px.reshape(-1, 2).astype(np.float32))
    for anchor in default_layout(*BOARD).anchors.values():
        cx, cy = anchor.centre
        s = anchor.size_in * 1.5 / 2.0 + 0.3  # the paper round the tag, and some room
        paper = np.array(
            [[cx - s, cy - s, 0.0], [cx + s, cy - s, 0.0], [cx + s, cy + s, 0.0], [cx - s, cy + s, 0.0]]
        )
        ppx, _ = cv2.projectPoints(paper, pose.rvec, pose.tvec, pose.camera.K, pose.camera.dist)
        inter, _ = cv2.intersectConvexConvex(hull, ppx.reshape(-1, 2).astype(np.float32))
        if inter > 0:
            return True
    return False


def base_top_in(b: BasePlacement) -> float:
    """The highest point of a base with its figure and tags (a topper's card reaches ~half a tag above its
    face), inches above the table: what may hide an anchor."""
    top = b.z_in + (b.figure.height_in + 0.2 if b.figure is not None else 0.0)
    if b.topper is not None:
        top = max(top, b.floor_z_in + b.topper.height_in + b.tag_in * 0.8)
    return top


def covers_an_anchor(pose: CameraPose, b: BasePlacement, x: float, y: float) -> bool:
    """`_covers_an_anchor` for base `b` (figure, topper and all) standing at (x, y); a bare base (`--bare`) as
    before figures: its top and 0.2" under it."""
    r = max(b.radius_in, b.tag_in * 0.8)
    if b.figure is None and b.topper is None:
        return _covers_an_anchor(pose, x, y, b.z_in, r, max(0.0, b.z_in - 0.2))
    return _covers_an_anchor(pose, x, y, base_top_in(b), r, b.floor_z_in)


def on_a_ruin(b: BasePlacement) -> bool:
    """True for a base standing on the ruin's floor (the live and replay sequences lift only bases on the table,
    to put them down on the table again)."""
    return b.floor_z_in >= RUIN_FLOOR_IN - 1e-9


def _blocks(rng: np.random.Generator, ruin_floors: int = 0) -> list[Block]:
    """TERRAIN_BLOCKS blocks 1-3" high, then `ruin_floors` 3" floors big enough to stand bases on."""
    blocks: list[Block] = []
    while len(blocks) < TERRAIN_BLOCKS + ruin_floors:
        ruin = len(blocks) >= TERRAIN_BLOCKS
        if ruin:
            w, d = float(rng.uniform(*RUIN_SIZE_IN[0])), float(rng.uniform(*RUIN_SIZE_IN[1]))
        else:
            w, d = float(rng.uniform(2.5, 5.0)), float(rng.uniform(1.5, 3.5))
        m = 4.0 if ruin else 2.0  # a ruin's bases and their toppers well inside the board
        x, y = float(rng.uniform(m, BOARD[0] - m - w)), float(rng.uniform(m, BOARD[1] - m - d))
        if any(
            x < b.polygon[1][0] + 2
            and b.polygon[0][0] < x + w + 2
            and y < b.polygon[2][1] + 2
            and b.polygon[0][1] < y + d + 2
            for b in blocks
        ):
            continue
        poly = ((x, y), (x + w, y), (x + w, y + d), (x, y + d))
        if ruin:
            blocks.append(Block(poly, RUIN_FLOOR_IN, colour=(95.0, 110.0, 120.0)))
        else:
            blocks.append(Block(poly, float(rng.uniform(1.0, 3.0))))
    return blocks


def _figure(rng: np.random.Generator) -> Figure:
    reach = float(rng.uniform(0.2, 0.5)) if rng.random() < SPEAR_SHARE else None
    return Figure(
        height_in=float(rng.uniform(*FIGURE_HEIGHT_IN)),
        colour=(float(rng.uniform(20, 200)), float(rng.uniform(20, 200)), float(rng.uniform(20, 200))),
        reach_in=reach,
        reach_deg=float(rng.uniform(30.0, 150.0)),
        facing_deg=float(rng.uniform(60.0, 120.0)),
    )


def _base(tag: int, x: float, y: float, floor: float, rim: bool, rng: np.random.Generator) -> BasePlacement:
    """A base standing on `floor` (inches) with a figure on it: a 60 mm base with its tag on the rim, or a
    25-40 mm one with its tag on a topper TOPPER_HEIGHT_IN above the base's underside (pins leaning a little)."""
    yaw = float(rng.uniform(-180.0, 180.0))
    colour = (float(rng.uniform(20, 200)), float(rng.uniform(20, 200)), float(rng.uniform(20, 200)))
    figure = _figure(rng)
    if rim:
        tag_in = float(rng.uniform(*RIM_TAG_RANGE_IN))
        return BasePlacement(tag, x, y, z_in=floor + BASE_HEIGHT_IN, yaw_deg=yaw, tag_in=tag_in, base_mm=RIM_BASE_MM,
                             colour=colour, tag_offset_in=(0.0, RIM_OFFSET_IN), base_height_in=BASE_HEIGHT_IN,
                             figure=figure)
    tag_in = float(rng.uniform(*TAG_RANGE_IN))
    topper = Topper(float(rng.uniform(*TOPPER_HEIGHT_IN)), float(rng.uniform(0.0, TOPPER_LEAN_MAX_DEG)),
                    float(rng.uniform(0.0, 360.0)))
    return BasePlacement(tag, x, y, z_in=floor + BASE_HEIGHT_IN, yaw_deg=yaw, tag_in=tag_in,
                         base_mm=float(rng.choice(TOPPER_BASES_MM)), colour=colour, base_height_in=BASE_HEIGHT_IN,
                         figure=figure, topper=topper)


def bench_scene(pose: CameraPose, rng: np.random.Generator, bare: bool = False) -> Scene:
    """One seeded scene: 40 bases, each with a figure (toppers on most, a few rim tags on 60 mm bases, some
    standing on a 3" ruin floor), 3 terrain blocks and a ruin floor, the default anchors. `bare`: the older
    scene of bare tags lying on bases 0-3" up (`bare_scene`)."""
    if bare:
        return bare_scene(pose, rng)
    blocks = _blocks(rng, RUIN_FLOORS)
    ruins, obstacles = blocks[TERRAIN_BLOCKS:], blocks[:TERRAIN_BLOCKS]
    bases: list[BasePlacement] = []
    for _ in range(5000):
        if len(bases) >= BASES:
            break
        on_ruin = len(bases) < RUIN_BASES
        rim = not on_ruin and len(bases) < RUIN_BASES + RIM_BASES
        b = _base(10 + len(bases), 0.0, 0.0, RUIN_FLOOR_IN if on_ruin else 0.0, rim, rng)
        r = b.radius_in
        if on_ruin:
            (x0, y0), (x1, y1) = ruins[len(bases) % len(ruins)].polygon[0], ruins[len(bases) % len(ruins)].polygon[2]
            x, y = float(rng.uniform(x0 + r + 0.1, x1 - r - 0.1)), float(rng.uniform(y0 + r + 0.1, y1 - r - 0.1))
        else:
            x, y = float(rng.uniform(r, BOARD[0] - r)), float(rng.uniform(r, BOARD[1] - r))
            if any(
                blk.polygon[0][0] - r - 0.2 < x < blk.polygon[1][0] + r + 0.2
                and blk.polygon[0][1] - r - 0.2 < y < blk.polygon[2][1] + r + 0.2
                for blk in blocks
            ):
                continue
        if any(math.hypot(x - o.x, y - o.y) < r + o.radius_in + 0.15 for o in bases):
            continue
        if covers_an_anchor(pose, b, x, y):
            continue
        bases.append(dataclasses.replace(b, x=x, y=y))
    if len(bases) < BASES:
        raise RuntimeError(
            f"Only {len(bases)} of {BASES} bases fit the bench's board; the scene maker is at fault."
        )
    return _scene(pose, rng, bases, obstacles + ruins)


def _scene(pose: CameraPose, rng: np.random.Generator, bases: list[BasePlacement], blocks: list[Block]) -> Scene:
    return Scene.at(
        pose,
        BOARD,
        bases=tuple(bases),
        terrain=tuple(blocks),
        anchor_turns={a: int(rng.integers(0, 4)) for a in range(4)},
        light_gradient=float(rng.uniform(0.05, 0.25)),
        blur_px=float(rng.uniform(0.3, 0.7)),
        noise_sigma=float(rng.uniform(1.0, 2.0)),
        jpeg_quality=int(rng.integers(85, 96)),
    )


def bare_scene(pose: CameraPose, rng: np.random.Generator) -> Scene:
    """The bench's scene before figures (`--bare`): 40 bare tags lying on bases 0-3" up, 3 terrain blocks."""
    blocks = _blocks(rng)
    bases: list[BasePlacement] = []
    for _ in range(5000):
        if len(bases) >= BASES:
            break
        tag_in = float(rng.uniform(*TAG_RANGE_IN))
        base_mm = max(25.0, tag_in * 1.8 * 25.4)
        r = base_mm / 25.4 / 2.0
        x, y = float(rng.uniform(r, BOARD[0] - r)), float(rng.uniform(r, BOARD[1] - r))
        z = float(rng.uniform(*BARE_HEIGHT_RANGE_IN))
        if any(
            b.polygon[0][0] - r - 0.2 < x < b.polygon[1][0] + r + 0.2
            and b.polygon[0][1] - r - 0.2 < y < b.polygon[2][1] + r + 0.2
            for b in blocks
        ):
            continue
        if any(math.hypot(x - b.x, y - b.y) < r + b.base_mm / 25.4 / 2.0 + 0.15 for b in bases):
            continue
        if _covers_an_anchor(pose, x, y, z, r, max(0.0, z - 0.2)):
            continue
        bases.append(
            BasePlacement(
                10 + len(bases),
                x,
                y,
                z_in=z,
                yaw_deg=float(rng.uniform(-180.0, 180.0)),
                tag_in=tag_in,
                base_mm=base_mm,
                colour=(
                    float(rng.uniform(20, 200)),
                    float(rng.uniform(20, 200)),
                    float(rng.uniform(20, 200)),
                ),
                tag_offset_in=(float(rng.uniform(-0.08, 0.08)), float(rng.uniform(-0.08, 0.08))),
            )
        )
    if len(bases) < BASES:
        raise RuntimeError(
            f"Only {len(bases)} of {BASES} bases fit the bench's board; the scene maker is at fault."
        )
    return _scene(pose, rng, bases, blocks)


def roster_truth(
    tags: Mapping[int, TagTruth], bases: Mapping[int, BaseTruth]
) -> tuple[dict[int, float], dict[int, tuple[float, float]]]:
    """Each base tag's true height (its centre above the table) and offset from its base's true centre in the
    base's frame, from the render's ground truth (`TagTruth`, `Rendered.bases`): what a perfect roster says."""
    heights: dict[int, float] = {}
    offsets: dict[int, tuple[float, float]] = {}
    for tid, t in tags.items():
        if t.unit is None or t.unit not in bases:
            continue
        base = bases[t.unit]
        a = math.radians(base.yaw_deg)
        dx, dy = t.center_in[0] - base.center_in[0], t.center_in[1] - base.center_in[1]
        heights[tid] = float(t.center_in[2])
        offsets[tid] = (dx * math.cos(a) + dy * math.sin(a), -dx * math.sin(a) + dy * math.cos(a))
    return heights, offsets


@dataclass(frozen=True, eq=False)
class BenchFrame:
    """A rendered frame, its grey image and the scene it shows."""

    scene: Scene
    rendered: Rendered
    gray: np.ndarray


def render_frames(size: tuple[int, int], frames: int, stream: int, bare: bool = False) -> list[BenchFrame]:
    """`frames` seeded frames at `size` (w, h) from one camera 36" up, tilted 20 degrees (`bare`: bare tags)."""
    pose = camera_framing_board(BOARD, CAMERA_HEIGHT_IN, CAMERA_TILT_DEG, 0.0, size)
    out = []
    for i in range(frames):
        rng = np.random.default_rng([SEED, stream, i])
        scene = bench_scene(pose, rng, bare)
        rendered = render_scene(scene, rng)
        out.append(BenchFrame(scene, rendered, gray_frame(rendered.image)))
    return out


# ------------------------------------------------------------------------------------ the bare detector


