"""Live rows: what the server runs a frame (the windowed detector and mapping) over a rendered sequence,
against a full scan of each frame, with the frames the sweep takes to find a base put down."""


from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bench.report import (
    LiveRow,
    Timing,
)
from bench.scenes import (
    BOARD,
    LIVE_FRAMES_PER_FRAME,
    LIVE_LIFT_FRAME,
    LIVE_LIFTED_TAG_IN,
    LIVE_MAX_FRAMES,
    LIVE_MIN_FRAMES,
    LIVE_PLACE_AWAY_IN,
    LIVE_PLACE_FRAME,
    LIVE_SLIDE_IN,
    LIVE_SLIDERS,
    LIVE_STREAM,
    SEED,
    SMALLEST_TAG_HEIGHT_IN,
    SMALLEST_TAG_IN,
    covers_an_anchor,
    on_a_ruin,
    roster_truth,
)
from bench.vision import BareDetector, fully_visible
from calibration.table import TableCalibration
from vision.positions import measure_bases, smallest_tag_px
from vision.synth.render import (
    BasePlacement,
    BaseTruth,
    CameraPose,
    Scene,
    TagTruth,
    render_scene,
)
from vision.tags import detect_tags, gray_frame
from vision.windowed import FINE_EVERY, WindowedDetector


def live_frame_count(label: str, frames: int) -> int:
    """Frames of the live sequence at `label` for `frames` a resolution: 3 (2 at 4K) per frame, at least
    LIVE_MIN_FRAMES, at most LIVE_MAX_FRAMES."""
    per = LIVE_FRAMES_PER_FRAME.get(label, 2)
    return max(LIVE_MIN_FRAMES, min(LIVE_MAX_FRAMES.get(label, 60), per * frames))


@dataclass(frozen=True, eq=False)
class LiveFrame:
    """One frame of a live sequence: the scene, the renderer's truth and the grey image (the BGR is dropped)."""

    scene: Scene
    tags: dict[int, TagTruth]
    gray: np.ndarray
    bases: dict[int, BaseTruth]
    """The render's truth of every base shown (its true centre, yaw and tags)."""


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
    return not covers_an_anchor(CameraPose(scene.camera, scene.rvec, scene.tvec), b, x, y)


def _live_frame(scene: Scene, shown: Sequence[BasePlacement], stream: int, k: int) -> LiveFrame:
    """Frame k of a live sequence: its own seed, so sensor noise (and the table's grain and light) change."""
    at = dataclasses.replace(scene, bases=tuple(shown))
    rendered = render_scene(at, np.random.default_rng([SEED, LIVE_STREAM, stream, k]))
    return LiveFrame(at, rendered.tags, gray_frame(rendered.image), rendered.bases)


def render_live_sequence(first: Scene, count: int, stream: int) -> LiveSequence:
    """`count` frames starting from the bench scene `first`: every frame after the first LIVE_SLIDERS bases
    slide 0.05-0.3"; the base whose tag is nearest LIVE_LIFTED_TAG_IN leaves at LIVE_LIFT_FRAME and is put
    down >= LIVE_PLACE_AWAY_IN away at LIVE_PLACE_FRAME (where its tag is fully visible)."""
    rng = np.random.default_rng([SEED, LIVE_STREAM, stream])
    bases = list(first.bases)
    on_table = [b for b in bases if not on_a_ruin(b)]  # put down on the table, as it was
    placed = min(on_table, key=lambda b: (abs(b.tag_in - LIVE_LIFTED_TAG_IN), b.tag)).tag
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
                if truth is not None and fully_visible(truth, w, h):
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
    small = float(smallest_tag_px(cal, SMALLEST_TAG_IN, SMALLEST_TAG_HEIGHT_IN))  # as session/pipeline.py does
    det = WindowedDetector(min_tag_px=small, fine_every=FINE_EVERY)
    d = det.decimate
    full_px = (w // d) * (h // d)
    # each tag's true height and offset (the roster's), from the first frame's truth: every base is in it
    heights, offsets = roster_truth(frames[0].tags, frames[0].bases)
    bare = BareDetector(d)
    try:
        det.detect(frames[0].gray)  # warm up all three
        detect_tags(frames[0].gray, decimate=d)
        bare.detect(frames[0].gray)
        live_s, full_s, bare_s, shares, live_seen, full_seen = [], [], [], [], [], []
        for f in frames[1:]:
            t0 = time.perf_counter()
            fixes = measure_bases(det.detect(f.gray), cal, heights, offsets)
            t1 = time.perf_counter()
            full_fixes = measure_bases(detect_tags(f.gray, decimate=d), cal, heights, offsets)
            t2 = time.perf_counter()
            bare.detect(f.gray)
            t3 = time.perf_counter()
            live_s.append(t1 - t0)
            full_s.append(t2 - t1)
            bare_s.append(t3 - t2)
            shares.append(det.scanned_px / full_px)
            live_seen.append({fx.tag for fx in fixes})
            full_seen.append({fx.tag for fx in full_fixes})
    finally:
        bare.release()

    found = full_found = eligible = hidden = false_ids = 0
    for f, seen, full in zip(frames[1:], live_seen, full_seen):
        tags = {t for b in f.bases.values() for t in b.tags}
        for tid, t in f.tags.items():
            if t.anchor:
                continue
            if fully_visible(t, w, h):
                eligible += 1
                found += tid in seen
                full_found += tid in full
            else:
                hidden += 1
        false_ids += len(seen - tags)

    def found_after(seen_by_frame: Sequence[set[int]]) -> int | None:
        after = seen_by_frame[sequence.place_frame - 1 :]  # seen_by_frame[i] is frame i + 1
        return next((n + 1 for n, seen in enumerate(after) if sequence.placed_tag in seen), None)

    live_t, full_t, bare_t = Timing.of(live_s), Timing.of(full_s), Timing.of(bare_s)
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
        bare=bare_t,
        bare_ratio=live_t.median_ms / bare_t.median_ms,
        scanned_fraction=float(np.mean(shares)),
        scanned_fraction_max=float(np.max(shares)),
        found=found,
        eligible=eligible,
        recall=found / eligible if eligible else math.nan,
        full_found=full_found,
        full_recall=full_found / eligible if eligible else math.nan,
        hidden=hidden,
        false_ids=false_ids,
        placed_tag=sequence.placed_tag,
        placed_found_after=found_after(live_seen),
        placed_full_found_after=found_after(full_seen),
    )


# ------------------------------------------------------------------------------------- other cost rows


