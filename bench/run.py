"""Speed and accuracy on this machine: what `tablesight bench` measures (docs/bench.md says what each row means).

Vision rows: for each resolution, `frames` scenes of a 30" x 22" board (40 tagged bases of mixed sizes
0.5-1.0" with their faces 0-3" up, the 4 default anchors, 3 terrain blocks; sensor noise, slight blur,
webcam JPEG) are rendered once, seeded, before any timing. The table is calibrated on the first frame's
detected anchors (`calibrate_table`, with the renderer's true intrinsics, or none for the "no intrinsics"
row), the decimation is picked from the smallest expected tag (`smallest_tag_px`, `decimation_for`), and
then each frame is timed through detection + mapping (`detect_tags` then `measure_bases`) and, right after
on the same grey frame, through a bare pupil-apriltags Detector (one thread, the same decimation), so both
see the same load from whatever else runs on the machine. Accuracy is against the renderer's ground truth:
recall over the fully visible base tags, base-centre error in inches.

Live rows: what the server runs a frame (`vision.windowed.WindowedDetector`, built as session/pipeline.py builds
it, sweeping at `session.runtime.LIVE_FINE_SCAN_EVERY`, then `measure_bases`) over a short rendered sequence
starting from the resolution's first scene: a few bases slide a little every frame, one is lifted and put
down elsewhere. Each frame is followed by a full scan of it (`detect_tags` + `measure_bases`) for the ratio
and the recall the frames allow; the pixels each frame scanned, the recall and the frames the sweep took to
find the base put down are reported beside the times.

Other rows: rules geometry (line of sight, edge distances, engagement) for 40 units, the tracker's update
with 40 tags, and the per-frame image costs the web UI pays (grey conversion, JPEG encode and decode).
All times are `time.perf_counter` wall clock, milliseconds, after one warm-up call; median and p95.
"""

from __future__ import annotations

import dataclasses
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, collect_anchors
from rules.engine import Placement
from rules.geometry import all_pairs_sight, edge_distance, engagement_zone, line_of_sight
from rules.terrain import TerrainPiece
from session.runtime import LIVE_FINE_SCAN_EVERY
from vision.positions import BaseFix, measure_bases, smallest_tag_px
from vision.synth.render import (
    BasePlacement,
    Block,
    CameraPose,
    Rendered,
    Scene,
    TagTruth,
    camera_framing_board,
    render_scene,
)
from vision.tags import FAMILY, decimation_for, detect_tags, gray_frame, release_detector
from vision.tracker import Tracker
from vision.windowed import WindowedDetector

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


# ------------------------------------------------------------------------------------------------ values


@dataclass(frozen=True)
class Timing:
    """Wall-clock times of one repeated operation, milliseconds."""

    median_ms: float
    p95_ms: float
    runs: int

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Timing:
        ms = np.asarray(seconds, np.float64) * 1000.0
        return cls(float(np.median(ms)), float(np.percentile(ms, 95)), len(ms))


@dataclass(frozen=True)
class VisionRow:
    """Detection + mapping at one resolution: speed against the bare detector, and accuracy against truth."""

    label: str
    image_size: tuple[int, int]
    intrinsics: bool
    """True: calibrated with the renderer's true camera; False: no camera file (focal from the anchors)."""
    focal_source: str
    residual_px: float
    """RMS reprojection of the anchor corners in the calibration, px."""
    decimate: int
    smallest_tag_px: float
    ours: Timing
    """detect_tags + measure_bases per frame."""
    mapping: Timing
    """measure_bases alone (pixels -> inches for every base) per frame."""
    bare: Timing
    """pupil-apriltags Detector(nthreads=1, quad_decimate=decimate).detect(gray) per frame."""
    ratio: float
    """ours.median_ms / bare.median_ms."""
    fps: float
    """1000 / ours.median_ms."""
    found: int
    eligible: int
    """Base tags fully visible (and whole inside the frame) over all frames."""
    recall: float
    false_ids: int
    bases_measured: int
    error_p50_in: float
    error_p95_in: float
    error_max_in: float


@dataclass(frozen=True)
class LiveRow:
    """What the live server runs a frame (`WindowedDetector` + measure_bases) over a short rendered sequence at
    one resolution, against a full scan (detect_tags + measure_bases) of each same frame right after it."""

    label: str
    image_size: tuple[int, int]
    decimate: int
    smallest_tag_px: float
    fine_every: int
    cells: int
    """Sweep cells the detector cut this frame size into (at most fine_every)."""
    frames: int
    """Frames timed: the sequence less its first frame (the detector's full scan, the warm-up)."""
    live: Timing
    """WindowedDetector.detect + measure_bases per frame."""
    live_max_ms: float
    full: Timing
    """detect_tags + measure_bases on the same frame, right after."""
    ratio: float
    """live.median_ms / full.median_ms."""
    scanned_fraction: float
    """Mean over the timed frames of scanned_px / the pixels of a full scan at the fine decimation."""
    scanned_fraction_max: float
    found: int
    eligible: int
    """Base tags fully visible (and whole inside the frame) over the timed frames."""
    recall: float
    full_found: int
    full_recall: float
    """The same count for the full scans: what the frames allow at this resolution."""
    false_ids: int
    placed_tag: int
    """The base lifted at LIVE_LIFT_FRAME and put down elsewhere at LIVE_PLACE_FRAME."""
    placed_found_after: int | None
    """Frames from its putting down until the live detector reported it (1: that very frame); None: never."""
    placed_full_found_after: int | None
    """The same for the full scans (1 unless the tag is too small for the detector there)."""


@dataclass(frozen=True)
class CostRow:
    """One timed operation outside detection (rules geometry, tracker, image costs)."""

    name: str
    what: str
    timing: Timing
    size_kb: float | None = None
    """Encoded size for JPEG rows, kB."""


@dataclass(frozen=True)
class MachineFacts:
    """What the figures were measured on."""

    cores: int
    usable_cores: int
    machine: str
    python: str
    opencv: str
    opencv_threads: int
    numpy: str
    pupil_apriltags: str
    shapely: str
    detector_threads: int
    openblas_coretype: str | None
    load_average: tuple[float, float, float]
    """1, 5 and 15 minute load average when the bench started (other work on the machine)."""


@dataclass(frozen=True)
class BenchReport:
    """Everything `tablesight bench` prints."""

    machine: MachineFacts
    settings: dict[str, Any]
    vision: tuple[VisionRow, ...]
    live: tuple[LiveRow, ...]
    rules: tuple[CostRow, ...]
    tracker: tuple[CostRow, ...]
    frame_costs: tuple[CostRow, ...]
    seconds: float
    """Wall-clock length of the whole bench, rendering included."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-ready dict (times in ms, lengths in inches), rounded."""
        return _rounded(asdict(self))


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return round(value, 5) + 0.0
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


# ------------------------------------------------------------------------------------------ machine facts


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def machine_facts() -> MachineFacts:
    """Cores, library versions and threads of this machine (the environment is read, never changed)."""
    import shapely

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 1
    try:
        load = os.getloadavg()
    except OSError:
        load = (math.nan, math.nan, math.nan)
    return MachineFacts(
        cores=os.cpu_count() or 1,
        usable_cores=usable,
        machine=f"{platform.system()} {platform.machine()}",
        python=platform.python_version(),
        opencv=cv2.__version__,
        opencv_threads=cv2.getNumThreads(),
        numpy=np.__version__,
        pupil_apriltags=_version("pupil-apriltags"),
        shapely=shapely.__version__,
        detector_threads=1,
        openblas_coretype=os.environ.get("OPENBLAS_CORETYPE"),
        load_average=(float(load[0]), float(load[1]), float(load[2])),
    )


# ------------------------------------------------------------------------------------------------ scenes


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


class BareDetector:
    """A plain pupil-apriltags Detector(families="tag36h11", nthreads=1, quad_decimate=d), released safely.

    pupil-apriltags' own destructor frees the tag family before the detector and can crash the process
    (see vision/tags.py); `release` destroys the detector first and disarms that destructor.
    """

    def __init__(self, decimate: int) -> None:
        from pupil_apriltags import Detector

        self._det: Any = Detector(families=FAMILY, nthreads=1, quad_decimate=float(decimate))

    def detect(self, gray: np.ndarray) -> list[Any]:
        return list(self._det.detect(gray))

    def release(self) -> None:
        det, self._det = self._det, None
        release_detector(det)


# ------------------------------------------------------------------------------------------- vision rows


def _eligible(truth: Any, w: int, h: int) -> bool:
    """A base tag the detector must find: fully visible, its white border whole inside the frame."""
    if truth.anchor or truth.visible_fraction < 0.999:
        return False
    outer = truth.center_px + (truth.corners_px - truth.center_px) * 1.25
    return bool(outer.min() >= 1 and outer[:, 0].max() <= w - 2 and outer[:, 1].max() <= h - 2)


def bench_calibration(label: str, first: BenchFrame, camera: CameraModel | None) -> TableCalibration:
    """The table calibrated on the detected anchors of `first` (with `camera`'s intrinsics, or none)."""
    layout = default_layout(*BOARD)
    anchors = collect_anchors(((t.id, t.corners_px) for t in detect_tags(first.gray)), layout)
    try:
        return calibrate_table(anchors, layout, first.rendered.camera.image_size, camera)
    except CalibrationError as err:  # our own rendered frame: a fault of ours, not the user's
        raise RuntimeError(f"The bench could not calibrate its own {label} frame: {err}") from err


def vision_row(label: str, frames: Sequence[BenchFrame], camera: CameraModel | None) -> VisionRow:
    """Time and score detection + mapping over `frames` (calibrated on the first one)."""
    first = frames[0]
    w, h = first.rendered.camera.image_size
    cal = bench_calibration(label, first, camera)
    small = smallest_tag_px(cal, SMALLEST_TAG_IN, HEIGHT_RANGE_IN[0])
    decimate = decimation_for(small)
    rosters = [
        ({b.tag: b.z_in for b in f.scene.bases}, {b.tag: b.tag_offset_in for b in f.scene.bases})
        for f in frames
    ]

    bare = BareDetector(decimate)
    try:
        detect_tags(first.gray, decimate=decimate)  # warm up both
        bare.detect(first.gray)
        our_s, map_s, bare_s, results = [], [], [], []
        for i, f in enumerate(frames):
            t0 = time.perf_counter()
            tags = detect_tags(f.gray, decimate=decimate)
            t1 = time.perf_counter()
            fixes = measure_bases(tags, cal, rosters[i][0], rosters[i][1])
            t2 = time.perf_counter()
            bare.detect(f.gray)
            t3 = time.perf_counter()
            our_s.append(t2 - t0)
            map_s.append(t2 - t1)
            bare_s.append(t3 - t2)
            results.append(fixes)
    finally:
        bare.release()

    found = eligible = false_ids = 0
    errors: list[float] = []
    for f, fixes in zip(frames, results):
        truth = f.rendered.tags
        bases = {b.tag: b for b in f.scene.bases}
        seen = {fx.tag for fx in fixes}
        for tid, t in truth.items():
            if _eligible(t, w, h):
                eligible += 1
                found += tid in seen
        for fx in fixes:
            if fx.tag not in bases:
                false_ids += 1
                continue
            errors.append(math.hypot(fx.x - bases[fx.tag].x, fx.y - bases[fx.tag].y))
    e = np.asarray(errors) if errors else np.array([math.nan])
    ours_t, bare_t = Timing.of(our_s), Timing.of(bare_s)
    return VisionRow(
        label=label,
        image_size=(w, h),
        intrinsics=camera is not None,
        focal_source=cal.focal_source,
        residual_px=cal.residual_px,
        decimate=decimate,
        smallest_tag_px=small,
        ours=ours_t,
        mapping=Timing.of(map_s),
        bare=bare_t,
        ratio=ours_t.median_ms / bare_t.median_ms,
        fps=1000.0 / ours_t.median_ms,
        found=found,
        eligible=eligible,
        recall=found / eligible if eligible else math.nan,
        false_ids=false_ids,
        bases_measured=len(errors),
        error_p50_in=float(np.median(e)),
        error_p95_in=float(np.percentile(e, 95)),
        error_max_in=float(np.max(e)),
    )


# ----------------------------------------------------------------------------------------- live detection


def live_frame_count(label: str, frames: int) -> int:
    """Frames of the live sequence at `label` for `frames` a resolution: 3 (2 at 4K) per frame, at least
    LIVE_MIN_FRAMES (the lifted base's putting down plus a whole sweep), at most LIVE_MAX_FRAMES."""
    per = LIVE_FRAMES_PER_FRAME.get(label, 2)
    return max(LIVE_MIN_FRAMES, min(LIVE_MAX_FRAMES.get(label, 60), per * frames))


@dataclass(frozen=True, eq=False)
class LiveFrame:
    """One frame of a live sequence: the scene, the renderer's truth and the grey image (the BGR is dropped)."""

    scene: Scene
    tags: dict[int, TagTruth]
    gray: np.ndarray


@dataclass(frozen=True, eq=False)
class LiveSequence:
    """Consecutive frames of one table: a few bases sliding, one lifted and put down elsewhere."""

    frames: list[LiveFrame]
    placed_tag: int
    lift_frame: int
    place_frame: int
    placed_from_to: tuple[tuple[float, float], tuple[float, float]]
    """Where the lifted base stood and where it was put down, table inches."""


def _free(b: BasePlacement, x: float, y: float, others: Sequence[BasePlacement], scene: Scene) -> bool:
    """True if base `b` fits at (x, y): on the board, off the terrain, clear of the other bases and anchors."""
    r = b.base_mm / 25.4 / 2.0
    if not (r < x < scene.board[0] - r and r < y < scene.board[1] - r):
        return False
    if any(
        blk.polygon[0][0] - r - 0.2 < x < blk.polygon[1][0] + r + 0.2
        and blk.polygon[0][1] - r - 0.2 < y < blk.polygon[2][1] + r + 0.2
        for blk in scene.terrain
    ):
        return False
    if any(math.hypot(x - o.x, y - o.y) < r + o.base_mm / 25.4 / 2.0 + 0.15 for o in others if o.tag != b.tag):
        return False
    return not _covers_an_anchor(CameraPose(scene.camera, scene.rvec, scene.tvec), x, y, b.z_in, r)


def _live_frame(scene: Scene, shown: Sequence[BasePlacement], stream: int, k: int) -> LiveFrame:
    """Frame k of a live sequence: its own seed, so sensor noise (and the table's grain and light) change."""
    at = dataclasses.replace(scene, bases=tuple(shown))
    rendered = render_scene(at, np.random.default_rng([SEED, LIVE_STREAM, stream, k]))
    return LiveFrame(at, rendered.tags, gray_frame(rendered.image))


def render_live_sequence(first: Scene, count: int, stream: int) -> LiveSequence:
    """`count` frames starting from the bench scene `first`: every frame after the first LIVE_SLIDERS bases
    slide 0.05-0.3"; the base whose tag is nearest LIVE_LIFTED_TAG_IN leaves at LIVE_LIFT_FRAME and is put
    down >= LIVE_PLACE_AWAY_IN away at LIVE_PLACE_FRAME (where its tag is fully visible)."""
    rng = np.random.default_rng([SEED, LIVE_STREAM, stream])
    bases = list(first.bases)
    placed = min(bases, key=lambda b: (abs(b.tag_in - LIVE_LIFTED_TAG_IN), b.tag)).tag
    frames: list[LiveFrame] = []
    start = end = (0.0, 0.0)
    for k in range(count):
        if k > 0:
            for i in rng.choice(len(bases), LIVE_SLIDERS, replace=False):
                b = bases[i]
                if b.tag == placed:
                    continue
                for _ in range(20):
                    step, heading = rng.uniform(*LIVE_SLIDE_IN), rng.uniform(0.0, 2.0 * math.pi)
                    x, y = b.x + step * math.cos(heading), b.y + step * math.sin(heading)
                    if _free(b, x, y, bases, first):
                        bases[i] = dataclasses.replace(
                            b, x=float(x), y=float(y), yaw_deg=b.yaw_deg + float(rng.uniform(-5.0, 5.0))
                        )
                        break
        others = [b for b in bases if b.tag != placed]
        idx = next(i for i, b in enumerate(bases) if b.tag == placed)
        if k < LIVE_LIFT_FRAME:
            frames.append(_live_frame(first, bases, stream, k))
        elif k < LIVE_PLACE_FRAME:
            frames.append(_live_frame(first, others, stream, k))
        elif k > LIVE_PLACE_FRAME:
            frames.append(_live_frame(first, bases, stream, k))
        else:
            old = bases[idx]
            for _ in range(2000):
                x, y = float(rng.uniform(0.0, BOARD[0])), float(rng.uniform(0.0, BOARD[1]))
                if math.hypot(x - old.x, y - old.y) < LIVE_PLACE_AWAY_IN or not _free(old, x, y, others, first):
                    continue
                bases[idx] = dataclasses.replace(old, x=x, y=y, yaw_deg=float(rng.uniform(-180.0, 180.0)))
                frame = _live_frame(first, bases, stream, k)
                truth = frame.tags.get(placed)
                w, h = first.camera.image_size
                if truth is not None and _eligible(truth, w, h):
                    break
            else:
                raise RuntimeError("The bench found no clear spot to put its lifted base down; its scene is at fault.")
            start, end = (old.x, old.y), (x, y)
            frames.append(frame)
    return LiveSequence(frames, placed, LIVE_LIFT_FRAME, LIVE_PLACE_FRAME, (start, end))


def live_row(label: str, sequence: LiveSequence, cal: TableCalibration) -> LiveRow:
    """Time and score the server's windowed detector (+ mapping) over `sequence`, each frame followed by a
    full scan of it; the first frame (the detector's full scan) warms both up and is not timed."""
    frames = sequence.frames
    w, h = frames[0].scene.camera.image_size
    small = float(smallest_tag_px(cal, SMALLEST_TAG_IN, HEIGHT_RANGE_IN[0]))  # as session/pipeline.py does
    det = WindowedDetector(min_tag_px=small, fine_every=LIVE_FINE_SCAN_EVERY)
    d = det.decimate
    full_px = (w // d) * (h // d)
    heights = {b.tag: b.z_in for b in frames[0].scene.bases}
    offsets = {b.tag: b.tag_offset_in for b in frames[0].scene.bases}
    det.detect(frames[0].gray)  # warm up both
    detect_tags(frames[0].gray, decimate=d)
    live_s, full_s, shares, live_seen, full_seen = [], [], [], [], []
    for f in frames[1:]:
        t0 = time.perf_counter()
        fixes = measure_bases(det.detect(f.gray), cal, heights, offsets)
        t1 = time.perf_counter()
        full_fixes = measure_bases(detect_tags(f.gray, decimate=d), cal, heights, offsets)
        t2 = time.perf_counter()
        live_s.append(t1 - t0)
        full_s.append(t2 - t1)
        shares.append(det.scanned_px / full_px)
        live_seen.append({fx.tag for fx in fixes})
        full_seen.append({fx.tag for fx in full_fixes})

    found = full_found = eligible = false_ids = 0
    for f, seen, full in zip(frames[1:], live_seen, full_seen):
        tags = {b.tag for b in f.scene.bases}
        for tid, t in f.tags.items():
            if _eligible(t, w, h):
                eligible += 1
                found += tid in seen
                full_found += tid in full
        false_ids += len(seen - tags)

    def found_after(seen_by_frame: Sequence[set[int]]) -> int | None:
        after = seen_by_frame[sequence.place_frame - 1 :]  # seen_by_frame[i] is frame i + 1
        return next((n + 1 for n, seen in enumerate(after) if sequence.placed_tag in seen), None)

    live_t, full_t = Timing.of(live_s), Timing.of(full_s)
    return LiveRow(
        label=label,
        image_size=(w, h),
        decimate=d,
        smallest_tag_px=small,
        fine_every=det.fine_every,
        cells=len(det.cells),
        frames=len(live_s),
        live=live_t,
        live_max_ms=float(np.max(live_s)) * 1000.0,
        full=full_t,
        ratio=live_t.median_ms / full_t.median_ms,
        scanned_fraction=float(np.mean(shares)),
        scanned_fraction_max=float(np.max(shares)),
        found=found,
        eligible=eligible,
        recall=found / eligible if eligible else math.nan,
        full_found=full_found,
        full_recall=full_found / eligible if eligible else math.nan,
        false_ids=false_ids,
        placed_tag=sequence.placed_tag,
        placed_found_after=found_after(live_seen),
        placed_full_found_after=found_after(full_seen),
    )


# ------------------------------------------------------------------------------------- other cost rows


def _time(fn: Callable[[], object], repeats: int) -> Timing:
    fn()  # warm up
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - t0)
    return Timing.of(seconds)


def rules_table(
    rng: np.random.Generator,
) -> tuple[list[Placement], dict[int, float], dict[int, str], list[TerrainPiece]]:
    """40 units (half of them red, half blue, some on 3" floors) and 20 terrain pieces on the 30" x 22" board."""
    units = [
        Placement(
            unit=10 + i,
            x=float(rng.uniform(1.0, BOARD[0] - 1.0)),
            y=float(rng.uniform(1.0, BOARD[1] - 1.0)),
            z=3.0 if rng.uniform() < 0.2 else 0.0,
            pm=0.01,
        )
        for i in range(SIGHT_UNITS)
    ]
    radii = {p.unit: float(rng.choice([0.49, 0.63, 0.79, 0.98])) for p in units}
    owners = {p.unit: ("red" if i % 2 else "blue") for i, p in enumerate(units)}
    pieces = []
    for k in range(SIGHT_PIECES):
        cx, cy = float(rng.uniform(2.0, BOARD[0] - 2.0)), float(rng.uniform(2.0, BOARD[1] - 2.0))
        n = int(rng.integers(4, 9))
        angles = np.sort(rng.uniform(0.0, 2.0 * math.pi, n))
        radius = rng.uniform(0.6, 2.2, n)
        poly = tuple(
            (cx + float(r * math.cos(a)), cy + float(r * math.sin(a))) for a, r in zip(angles, radius)
        )
        kinds = frozenset({"blocking"} if k % 3 else {"obscuring"})
        pieces.append(TerrainPiece(f"piece {k}", poly, kinds, float(rng.uniform(0.5, 4.0))))
    return units, radii, owners, pieces


def rules_rows(repeats: int) -> list[CostRow]:
    """Line of sight, edge distances and engagement for 40 units among 20 terrain pieces."""
    units, radii, owners, pieces = rules_table(np.random.default_rng([SEED, 99]))
    positions = {p.unit: p for p in units}
    n_pairs = len(units) * (len(units) - 1) // 2

    def all_edges() -> None:
        for i, a in enumerate(units):
            for b in units[i + 1 :]:
                edge_distance(a, radii[a.unit], b, radii[b.unit])

    def all_engagement() -> None:
        for p in units:
            engagement_zone(p.unit, positions, radii, owners)

    a, b = units[0], units[1]
    return [
        CostRow(
            "all_pairs_sight",
            f"{len(units)} units x {len(pieces)} terrain pieces ({n_pairs} pairs, 5 sight lines each)",
            _time(lambda: all_pairs_sight(units, radii, pieces), repeats),
        ),
        CostRow(
            "line_of_sight",
            f"one pair among {len(pieces)} terrain pieces",
            _time(lambda: line_of_sight(a, radii[a.unit], b, radii[b.unit], pieces), repeats),
        ),
        CostRow("edge_distance", f"all {n_pairs} pairs of {len(units)} units", _time(all_edges, repeats)),
        CostRow(
            "engagement_zone",
            f'each of {len(units)} units (1" zone, 2 players)',
            _time(all_engagement, repeats),
        ),
    ]


def tracker_rows(bases: Sequence[BasePlacement], repeats: int) -> list[CostRow]:
    """Tracker.update with 40 still bases (their true places plus 0.003" noise a frame), once settled."""
    rng = np.random.default_rng([SEED, 98])
    bases = list(bases)[:TRACKER_TAGS]
    tracker = Tracker(known_tags=[b.tag for b in bases])
    settle = 30

    def frame() -> list[BaseFix]:
        noise = rng.normal(0.0, 0.003, (len(bases), 2))
        return [
            BaseFix(b.tag, b.x + dx, b.y + dy, b.z_in, b.yaw_deg, 0.01, b.tag_center_in, 50.0)
            for b, (dx, dy) in zip(bases, noise.tolist())
        ]

    frames = [frame() for _ in range(settle + repeats)]
    for k in range(settle):
        tracker.update(k, k / 30.0, frames[k])
    seconds = []
    for k in range(settle, settle + repeats):
        t0 = time.perf_counter()
        tracker.update(k, k / 30.0, frames[k])
        seconds.append(time.perf_counter() - t0)
    return [CostRow("Tracker.update", f"{len(bases)} settled bases a frame", Timing.of(seconds))]


def frame_cost_rows(label: str, image: np.ndarray, repeats: int) -> list[CostRow]:
    """Grey conversion, JPEG encode (the web UI's quality) and decode of one BGR frame."""
    params = [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
    ok, buf = cv2.imencode(".jpg", image, params)
    size_kb = len(buf) / 1024.0 if ok else math.nan
    return [
        CostRow("gray_frame", f"{label} BGR -> grey", _time(lambda: gray_frame(image), repeats)),
        CostRow(
            "jpeg encode",
            f"{label} cv2.imencode quality {JPEG_QUALITY}",
            _time(lambda: cv2.imencode(".jpg", image, params), repeats),
            size_kb,
        ),
        CostRow(
            "jpeg decode",
            f"{label} cv2.imdecode",
            _time(lambda: cv2.imdecode(buf, cv2.IMREAD_COLOR), repeats),
        ),
    ]


# ---------------------------------------------------------------------------------------------- the bench


def run_bench(
    frames: int = DEFAULT_FRAMES, quick: bool = False, progress: Callable[[str], None] | None = None
) -> BenchReport:
    """Render, time and score everything; `quick` benches 720p and 1080p only."""
    say = progress or (lambda _m: None)
    start = time.perf_counter()
    facts = machine_facts()
    chosen = [
        (k, label, size)
        for k, (label, size) in enumerate(RESOLUTIONS)
        if not quick or label in QUICK_RESOLUTIONS
    ]
    repeats = max(frames, MIN_REPEATS)
    vision: list[VisionRow] = []
    live: list[LiveRow] = []
    costs: list[CostRow] = []
    tracker_bases: tuple[BasePlacement, ...] = ()
    live_frames: dict[str, int] = {}
    for stream, label, size in chosen:
        say(f"rendering {frames} frame(s) at {label}")
        rendered = render_frames(size, frames, stream)
        say(f"timing detection + mapping at {label}")
        vision.append(vision_row(label, rendered, rendered[0].rendered.camera))
        if label == NO_INTRINSICS_RESOLUTION:
            vision.append(vision_row(f"{label} no intrinsics", rendered, None))
        tracker_bases = tracker_bases or rendered[0].scene.bases
        costs += frame_cost_rows(label, rendered[0].rendered.image, repeats)
        first = rendered[0]
        cal = bench_calibration(label, first, first.rendered.camera)
        del rendered  # the BGR frames: a 4K sequence is big enough without them
        live_frames[label] = live_frame_count(label, frames)
        say(f"rendering a live sequence of {live_frames[label]} frames at {label}")
        sequence = render_live_sequence(first.scene, live_frames[label], stream)
        say(f"timing live (windowed) detection at {label}")
        live.append(live_row(label, sequence, cal))
        del first, sequence
    say("timing rules geometry and the tracker")
    rules = rules_rows(repeats)
    tracker = tracker_rows(tracker_bases, repeats)
    settings = {
        "frames": frames,
        "quick": quick,
        "seed": SEED,
        "board_in": list(BOARD),
        "bases": BASES,
        "tag_in": list(TAG_RANGE_IN),
        "tag_height_in": list(HEIGHT_RANGE_IN),
        "terrain_blocks": TERRAIN_BLOCKS,
        "camera_height_in": CAMERA_HEIGHT_IN,
        "camera_tilt_deg": CAMERA_TILT_DEG,
        "smallest_tag_in": SMALLEST_TAG_IN,
        "repeats": repeats,
        "live_frames": live_frames,
        "live_fine_every": LIVE_FINE_SCAN_EVERY,
        "live_sliders": LIVE_SLIDERS,
        "live_slide_in": list(LIVE_SLIDE_IN),
        "live_lift_frame": LIVE_LIFT_FRAME,
        "live_place_frame": LIVE_PLACE_FRAME,
        "live_place_away_in": LIVE_PLACE_AWAY_IN,
    }
    return BenchReport(
        machine=facts,
        settings=settings,
        vision=tuple(vision),
        live=tuple(live),
        rules=tuple(rules),
        tracker=tuple(tracker),
        frame_costs=tuple(costs),
        seconds=time.perf_counter() - start,
    )


# ---------------------------------------------------------------------------------------------- the table


def _f(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


ERR_P50, ERR_P95, ERR_MAX = 'err p50"', 'p95"', 'max"'


def format_table(report: Mapping[str, Any]) -> str:
    """The report (as `BenchReport.to_json()` gives it) as a plain-text table."""
    m, s = report["machine"], report["settings"]
    load = " ".join(_f(v, ".2f") for v in m["load_average"])
    lines = [
        "Tablesight bench",
        f"machine: {m['cores']} cores ({m['usable_cores']} usable), {m['machine']}, Python {m['python']}, "
        f"OpenCV {m['opencv']} ({m['opencv_threads']} threads), numpy {m['numpy']}, "
        f"pupil-apriltags {m['pupil_apriltags']}, shapely {m['shapely']}",
        f"detector threads {m['detector_threads']}; OPENBLAS_CORETYPE={m['openblas_coretype'] or '(unset)'}; "
        f"load average at start {load}",
        f'scene: {s["board_in"][0]:g}"x{s["board_in"][1]:g}" board, {s["bases"]} bases (tags '
        f'{s["tag_in"][0]:g}-{s["tag_in"][1]:g}", faces {s["tag_height_in"][0]:g}-{s["tag_height_in"][1]:g}" up), '
        f'4 anchors, {s["terrain_blocks"]} terrain blocks; camera {s["camera_height_in"]:g}" up, tilted '
        f"{s['camera_tilt_deg']:g} deg; {s['frames']} frame(s) a resolution, seed {s['seed']}",
        "",
        "Detection + mapping per frame (detect_tags + measure_bases) vs bare pupil-apriltags, 1 thread each",
        f"{'row':<20} {'focal':<10} {'dec':>3} {'tag px':>6} {'med ms':>7} {'p95 ms':>7} {'map ms':>6} "
        f"{'bare ms':>7} "
        f"{'ratio':>5} {'fps':>6} {'recall':>14} {ERR_P50:>9} {ERR_P95:>7} {ERR_MAX:>7}",
    ]
    for r in report["vision"]:
        recall = f"{r['found']}/{r['eligible']} {_f(r['recall'], '.3f')}"
        lines.append(
            f"{r['label']:<20} {r['focal_source']:<10} {r['decimate']:>3} {_f(r['smallest_tag_px'], '6.1f')} "
            f"{r['ours']['median_ms']:7.1f} {r['ours']['p95_ms']:7.1f} {r['mapping']['median_ms']:6.2f} "
            f"{r['bare']['median_ms']:7.1f} "
            f"{r['ratio']:5.2f} {r['fps']:6.1f} {recall:>14} {_f(r['error_p50_in'], '9.4f')} "
            f"{_f(r['error_p95_in'], '7.4f')} {_f(r['error_max_in'], '7.4f')}"
        )
    lines += _live_lines(report)
    for title, key in (
        ("Rules geometry", "rules"),
        ("Tracker", "tracker"),
        ("Frame image costs", "frame_costs"),
    ):
        lines += ["", title, f"{'operation':<18} {'what':<62} {'med ms':>8} {'p95 ms':>8}"]
        for row in report[key]:
            extra = f"  {row['size_kb']:.0f} kB" if row.get("size_kb") is not None else ""
            lines.append(
                f"{row['name']:<18} {row['what']:<62} {row['timing']['median_ms']:8.3f} "
                f"{row['timing']['p95_ms']:8.3f}{extra}"
            )
    lines += ["", f"bench took {report['seconds']:.1f} s (rendering included)"]
    return "\n".join(lines)


LIVE_HEADER = (
    f"{'row':<6} {'dec':>3} {'tag px':>6} {'frames':>6} {'cells':>5} {'med ms':>7} {'p95 ms':>7} {'max ms':>7} "
    f"{'full ms':>7} {'ratio':>5} {'scanned':>7} {'recall':>14} {'full recall':>14} {'placed':>6}"
)


def _live_lines(report: Mapping[str, Any]) -> list[str]:
    """The live detection section of the table (none for a report without it)."""
    rows = report.get("live") or []
    if not rows:
        return []
    s = report["settings"]
    lines = [
        "",
        f"Live detection per frame (WindowedDetector, fine_every {s['live_fine_every']}, + measure_bases) vs a "
        "full scan of the same frame, 1 thread",
        f"sequence: {s['live_sliders']} bases slid {s['live_slide_in'][0]:g}-{s['live_slide_in'][1]:g}\" a frame; "
        f"one lifted at frame {s['live_lift_frame']}, put down >= {s['live_place_away_in']:g}\" away at frame "
        f"{s['live_place_frame']}; first frame (a full scan) not timed",
        LIVE_HEADER,
    ]
    for r in rows:
        recall = f"{r['found']}/{r['eligible']} {_f(r['recall'], '.3f')}"
        full_recall = f"{r['full_found']}/{r['eligible']} {_f(r['full_recall'], '.3f')}"
        placed = "-" if r["placed_found_after"] is None else str(r["placed_found_after"])
        lines.append(
            f"{r['label']:<6} {r['decimate']:>3} {_f(r['smallest_tag_px'], '6.1f')} {r['frames']:>6} {r['cells']:>5} "
            f"{r['live']['median_ms']:7.1f} {r['live']['p95_ms']:7.1f} {r['live_max_ms']:7.1f} "
            f"{r['full']['median_ms']:7.1f} {r['ratio']:5.2f} {_f(r['scanned_fraction'], '7.3f')} "
            f"{recall:>14} {full_recall:>14} {placed:>6}"
        )
    return lines


def main_progress(message: str) -> None:
    """Progress lines for a person watching: to stderr, so stdout stays the table or the JSON."""
    sys.stderr.write(f"bench: {message}\n")
    sys.stderr.flush()
