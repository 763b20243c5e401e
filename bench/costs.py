"""Other rows: rules geometry for 40 units, the tracker's update with 40 tags, and the per-frame image costs
the web UI pays (grey conversion, JPEG encode and decode)."""


from __future__ import annotations

import math
import time
from collections.abc import Callable

import cv2
import numpy as np

from bench.report import (
    CostRow,
    Timing,
)
from bench.scenes import (
    BOARD,
    JPEG_QUALITY,
    SEED,
    SIGHT_PIECES,
    SIGHT_UNITS,
    TRACKER_TAGS,
)
from rules.engine import Placement
from rules.geometry import all_pairs_sight, edge_distance, engagement_zone, line_of_sight
from rules.terrain import TerrainPiece
from vision.positions import BaseFix
from vision.synth.render import Rendered
from vision.tags import gray_frame
from vision.tracker import Tracker


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


def tracker_rows(rendered: Rendered, repeats: int) -> list[CostRow]:
    """Tracker.update with 40 still bases (their true places, from the render's truth, plus 0.003" noise a
    frame), once settled."""
    rng = np.random.default_rng([SEED, 98])
    bases = list(rendered.bases.values())[:TRACKER_TAGS]
    main = [rendered.tags[b.unit] for b in bases]  # each base's main tag: its true height and centre
    tracker = Tracker(known_tags=[b.unit for b in bases])
    settle = 30

    def frame() -> list[BaseFix]:
        noise = rng.normal(0.0, 0.003, (len(bases), 2))
        return [
            BaseFix(b.unit, b.center_in[0] + dx, b.center_in[1] + dy, t.center_in[2], b.yaw_deg, 0.01,
                    (t.center_in[0], t.center_in[1]), 50.0)
            for b, t, (dx, dy) in zip(bases, main, noise.tolist())
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
        *camera_decode_rows(label, buf.tobytes(), repeats),
    ]


def camera_decode_rows(label: str, jpeg: bytes, repeats: int) -> list[CostRow]:
    """A camera's JPEG made a frame and pictured at half size for the page: its grey and picture decoded apart by
    OpenCV, and in one decode (vision/jpeg_planes.py, when libturbojpeg0 is installed)."""
    from vision import jpeg_planes
    from vision.sources import Frame

    def made(colour: bool) -> None:
        frame = Frame.of_jpeg(0, 0.0, jpeg, "the bench's frame", colour=colour)
        frame.picture(-(-frame.size[0] // 2))

    rows = [CostRow("camera frame", f"{label} grey + half-size picture, decoded twice (OpenCV)",
                    _time(lambda: made(False), repeats))]
    if jpeg_planes.available():
        rows.append(CostRow("camera frame", f"{label} grey + half-size picture, decoded once (TurboJPEG)",
                            _time(lambda: made(True), repeats)))
    return rows


# ---------------------------------------------------------------------------------------------- the bench


