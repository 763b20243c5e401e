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

Other rows: rules geometry (line of sight, edge distances, engagement) for 40 units, the tracker's update
with 40 tags, and the per-frame image costs the web UI pays (grey conversion, JPEG encode and decode).
All times are `time.perf_counter` wall clock, milliseconds, after one warm-up call; median and p95.
"""

from __future__ import annotations

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
from vision.positions import BaseFix, measure_bases, smallest_tag_px
from vision.render import (
    BasePlacement,
    Block,
    CameraPose,
    Rendered,
    Scene,
    camera_framing_board,
    render_scene,
)
from vision.tags import FAMILY, decimation_for, detect_tags, gray_frame, release_detector
from vision.tracker import Tracker

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
"""The web UI's live feed encodes at this quality (webui/live.py)."""
SIGHT_UNITS = 40
SIGHT_PIECES = 20
TRACKER_TAGS = 40


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


def vision_row(label: str, frames: Sequence[BenchFrame], camera: CameraModel | None) -> VisionRow:
    """Time and score detection + mapping over `frames` (calibrated on the first one)."""
    layout = default_layout(*BOARD)
    first = frames[0]
    w, h = first.rendered.camera.image_size
    anchors = collect_anchors(((t.id, t.corners_px) for t in detect_tags(first.gray)), layout)
    try:
        cal: TableCalibration = calibrate_table(anchors, layout, (w, h), camera)
    except CalibrationError as err:  # our own rendered frame: a fault of ours, not the user's
        raise RuntimeError(f"The bench could not calibrate its own {label} frame: {err}") from err
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
    costs: list[CostRow] = []
    tracker_bases: tuple[BasePlacement, ...] = ()
    for stream, label, size in chosen:
        say(f"rendering {frames} frame(s) at {label}")
        rendered = render_frames(size, frames, stream)
        say(f"timing detection + mapping at {label}")
        vision.append(vision_row(label, rendered, rendered[0].rendered.camera))
        if label == NO_INTRINSICS_RESOLUTION:
            vision.append(vision_row(f"{label} no intrinsics", rendered, None))
        tracker_bases = tracker_bases or rendered[0].scene.bases
        costs += frame_cost_rows(label, rendered[0].rendered.image, repeats)
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
    }
    return BenchReport(
        facts,
        settings,
        tuple(vision),
        tuple(rules),
        tuple(tracker),
        tuple(costs),
        time.perf_counter() - start,
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


def main_progress(message: str) -> None:
    """Progress lines for a person watching: to stderr, so stdout stays the table or the JSON."""
    sys.stderr.write(f"bench: {message}\n")
    sys.stderr.flush()
