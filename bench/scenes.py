"""The benchmark's tables: seeded rendered scenes of a 30" x 22" board with 40 tagged bases, terrain and
the four anchors (vision rows), and the short live sequences in which bases slide and one is lifted (live rows).
The constants say what is measured."""


from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.layout import default_layout
from session.runtime import LIVE_FINE_SCAN_EVERY
from vision.synth.render import (
    BasePlacement,
    Block,
    CameraPose,
    Rendered,
    Scene,
    camera_framing_board,
    render_scene,
)
from vision.tags import gray_frame

SEED = 20260704
BOARD = (30.0, 22.0)
BASES = 40
TAG_RANGE_IN = (0.5, 1.0)
"""Black square sides of the base tags, inches (uniform)."""
HEIGHT_RANGE_IN = (0.0, 3.0)
"""Heights of the tag faces above the table, inches (uniform)."""
SMALLEST_TAG_IN = TAG_RANGE_IN[0]
"""The smallest expected tag: it picks the decimation."""
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
LIVE_MIN_FRAMES = LIVE_PLACE_FRAME + LIVE_FINE_SCAN_EVERY + 1
"""... and at least this many: the sweep covers the frame within `fine_every` frames of the putting down."""
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
def _covers_an_anchor(pose: CameraPose, x: float, y: float, z: float, r: float) -> bool:
    """True if a base there would hide part of an anchor or its paper in the image."""
    a = np.linspace(0.0, 2.0 * math.pi, 16, endpoint=False)
    ring = np.column_stack([x + r * np.cos(a), y + r * np.sin(a)])
    disc = np.vstack(
        [np.column_stack([ring, np.full(16, z)]), np.column_stack([ring, np.full(16, max(0.0, z - 0.2))])]
    )
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


def _blocks(rng: np.random.Generator) -> list[Block]:
    blocks: list[Block] = []
    while len(blocks) < TERRAIN_BLOCKS:
        w, d = float(rng.uniform(2.5, 5.0)), float(rng.uniform(1.5, 3.5))
        x, y = float(rng.uniform(2.0, BOARD[0] - 2.0 - w)), float(rng.uniform(2.0, BOARD[1] - 2.0 - d))
        if any(
            x < b.polygon[1][0] + 2
            and b.polygon[0][0] < x + w + 2
            and y < b.polygon[2][1] + 2
            and b.polygon[0][1] < y + d + 2
            for b in blocks
        ):
            continue
        poly = ((x, y), (x + w, y), (x + w, y + d), (x, y + d))
        blocks.append(Block(poly, float(rng.uniform(1.0, 3.0))))
    return blocks


def bench_scene(pose: CameraPose, rng: np.random.Generator) -> Scene:
    """One seeded scene: 40 bases of mixed tag sizes and heights, 3 terrain blocks, the default anchors."""
    blocks = _blocks(rng)
    bases: list[BasePlacement] = []
    for _ in range(5000):
        if len(bases) >= BASES:
            break
        tag_in = float(rng.uniform(*TAG_RANGE_IN))
        base_mm = max(25.0, tag_in * 1.8 * 25.4)
        r = base_mm / 25.4 / 2.0
        x, y = float(rng.uniform(r, BOARD[0] - r)), float(rng.uniform(r, BOARD[1] - r))
        z = float(rng.uniform(*HEIGHT_RANGE_IN))
        if any(
            b.polygon[0][0] - r - 0.2 < x < b.polygon[1][0] + r + 0.2
            and b.polygon[0][1] - r - 0.2 < y < b.polygon[2][1] + r + 0.2
            for b in blocks
        ):
            continue
        if any(math.hypot(x - b.x, y - b.y) < r + b.base_mm / 25.4 / 2.0 + 0.15 for b in bases):
            continue
        if _covers_an_anchor(pose, x, y, z, r):
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


@dataclass(frozen=True, eq=False)
class BenchFrame:
    """A rendered frame, its grey image and the scene it shows."""

    scene: Scene
    rendered: Rendered
    gray: np.ndarray


def render_frames(size: tuple[int, int], frames: int, stream: int) -> list[BenchFrame]:
    """`frames` seeded frames at `size` (w, h) from one camera 36" up, tilted 20 degrees."""
    pose = camera_framing_board(BOARD, CAMERA_HEIGHT_IN, CAMERA_TILT_DEG, 0.0, size)
    out = []
    for i in range(frames):
        rng = np.random.default_rng([SEED, stream, i])
        scene = bench_scene(pose, rng)
        rendered = render_scene(scene, rng)
        out.append(BenchFrame(scene, rendered, gray_frame(rendered.image)))
    return out


# ------------------------------------------------------------------------------------ the bare detector


