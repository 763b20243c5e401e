"""vision.windowed: windowed live detection finds what a full decimate-1 scan finds, on rendered sequences."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

import numpy as np
import pytest

from vision.render import BasePlacement, Scene, camera_framing_board, render_scene
from vision.tags import detect_tags, gray_frame
from vision.windowed import TILE_PX, Window, WindowedDetector, coarse_decimation, merge_windows
from webui.bench import BOARD, CAMERA_HEIGHT_IN, CAMERA_TILT_DEG, bench_scene

FRAMES = 18
FINE_EVERY = 8
LIFT_FRAME = 4
PLACE_FRAME = 6
SLIDERS = 10
"""Bases slid each frame, by 0.2-0.5" in a random direction."""


@dataclasses.dataclass(frozen=True, eq=False)
class Sequence1080:
    grays: list[np.ndarray]
    scenes: list[Scene]
    lifted: int
    min_tag_px: float


def _clear(b: BasePlacement, x: float, y: float, others: Sequence[BasePlacement], scene: Scene) -> bool:
    r = b.base_mm / 25.4 / 2.0
    if not (r + 0.3 < x < BOARD[0] - r - 0.3 and r + 0.3 < y < BOARD[1] - r - 0.3):
        return False
    if any(
        blk.polygon[0][0] - r - 0.3 < x < blk.polygon[1][0] + r + 0.3
        and blk.polygon[0][1] - r - 0.3 < y < blk.polygon[2][1] + r + 0.3
        for blk in scene.terrain
    ):
        return False
    return all(
        math.hypot(x - o.x, y - o.y) > r + o.base_mm / 25.4 / 2.0 + 0.15 for o in others if o.tag != b.tag
    )


@pytest.fixture(scope="module")
def sequence() -> Sequence1080:
    return make_sequence()


def make_sequence(size: tuple[int, int] = (1920, 1080), frames: int = FRAMES) -> Sequence1080:
    """18 frames at 1080p: 40 bases (tags 0.5-1.0"), 10 of them slid up to 0.5" every frame, one small base
    lifted at frame 4 and put down far away at frame 6."""
    rng = np.random.default_rng(20260705)
    pose = camera_framing_board(BOARD, CAMERA_HEIGHT_IN, CAMERA_TILT_DEG, 0.0, size)
    first = bench_scene(pose, rng)
    bases = list(first.bases)
    small = min((b for b in bases if b.z_in < 1.0), key=lambda b: b.tag_in)
    scenes: list[Scene] = []
    grays: list[np.ndarray] = []
    min_tag_px = math.inf
    for k in range(frames):
        if k > 0:
            for i in rng.choice(len(bases), SLIDERS, replace=False):
                b = bases[i]
                for _ in range(20):
                    step, heading = rng.uniform(0.2, 0.5), rng.uniform(0, 2 * math.pi)
                    x, y = b.x + step * math.cos(heading), b.y + step * math.sin(heading)
                    if _clear(b, x, y, bases, first):
                        bases[i] = dataclasses.replace(b, x=x, y=y, yaw_deg=b.yaw_deg + rng.uniform(-5, 5))
                        break
        shown = [b for b in bases if b.tag != small.tag]
        if k < LIFT_FRAME:
            shown.append(next(b for b in bases if b.tag == small.tag))
        elif k >= PLACE_FRAME:
            if k == PLACE_FRAME:
                for _ in range(500):
                    x, y = rng.uniform(1, BOARD[0] - 1), rng.uniform(1, BOARD[1] - 1)
                    if math.hypot(x - small.x, y - small.y) > 6 and _clear(small, x, y, shown, first):
                        break
                idx = next(i for i, b in enumerate(bases) if b.tag == small.tag)
                bases[idx] = dataclasses.replace(small, x=x, y=y)
            shown.append(next(b for b in bases if b.tag == small.tag))
        scene = dataclasses.replace(first, bases=tuple(shown))
        rendered = render_scene(scene, np.random.default_rng([20260705, k]))
        scenes.append(scene)
        grays.append(gray_frame(rendered.image))
        for t in rendered.tags.values():
            if not t.anchor and t.visible_fraction > 0.99:
                min_tag_px = min(min_tag_px, t.side_px / t.tag_in * 0.5)  # a 0.5" tag there
    return Sequence1080(grays, scenes, small.tag, min_tag_px)


@pytest.fixture(scope="module")
def runs(sequence: Sequence1080) -> dict[str, list]:
    """Full decimate-1 detect_tags and the windowed detector on every frame (timed, for the report)."""
    det = WindowedDetector(min_tag_px=sequence.min_tag_px, fine_every=FINE_EVERY)
    assert det.decimate == 1  # 0.5" tags at 1080p: the slow case this is for
    full, windowed, scans, t_full, t_win = [], [], [], [], []
    for gray in sequence.grays:
        t0 = time.perf_counter()
        full.append(detect_tags(gray, decimate=1))
        t1 = time.perf_counter()
        windowed.append(det.detect(gray))
        t2 = time.perf_counter()
        scans.append(det.last_scan)
        t_full.append(t1 - t0)
        t_win.append(t2 - t1)
    win_only = [t for t, s in zip(t_win, scans) if s == "windows"]
    print(
        f"\n1080p, {len(sequence.grays)} frames: full decimate-1 median {1e3 * np.median(t_full):.1f} ms; "
        f"windowed median {1e3 * np.median(t_win):.1f} ms (windowed-only frames {1e3 * np.median(win_only):.1f} "
        f"ms, mean over all {1e3 * np.mean(t_win):.1f} ms); scans {scans}"
    )
    return {"full": full, "windowed": windowed, "scans": scans}


def test_windowed_finds_what_full_detection_finds_with_the_same_corners(
    sequence: Sequence1080, runs: dict[str, list]
) -> None:
    """Same ids and corners (< 0.01 px) as a full decimate-1 scan on every frame, except a tag the windowed
    detector has not seen for FINE_EVERY frames (newly placed, or uncovered by a slid neighbour), which it
    finds within FINE_EVERY frames, and the base put down somewhere new (test_placed_base_...)."""
    full, windowed = runs["full"], runs["windowed"]
    worst = 0.0
    late = 0
    for k, (f, w) in enumerate(zip(full, windowed)):
        full_ids, win_ids = [t.id for t in f], [t.id for t in w]
        assert len(full_ids) >= 40
        assert not set(win_ids) - set(full_ids), f"frame {k}: found what a full scan does not"
        for i in set(full_ids) - set(win_ids):
            if i == sequence.lifted and k >= PLACE_FRAME:
                continue
            recent = windowed[max(0, k - FINE_EVERY + 1) : k]
            assert not any(i in {t.id for t in tags} for tags in recent), f"frame {k}: lost tag {i}"
            later = range(k, min(FRAMES, k + FINE_EVERY))
            assert any(i in {t.id for t in windowed[j]} or i not in {t.id for t in full[j]} for j in later) or (
                k + FINE_EVERY > FRAMES
            ), f"tag {i} not found within {FINE_EVERY} frames of frame {k}"
            late += 1
        by_id = {t.id: t for t in w}
        for a in f:
            if a.id in by_id:
                worst = max(worst, float(np.abs(a.corners_px - by_id[a.id].corners_px).max()))
    assert worst < 0.01, f"corner difference {worst:.4f} px"
    assert late <= FINE_EVERY * 3


def test_placed_base_is_found_at_the_next_fine_scan(sequence: Sequence1080, runs: dict[str, list]) -> None:
    scans = runs["scans"]
    found = [sequence.lifted in {t.id for t in tags} for tags in runs["windowed"]]
    assert all(found[:LIFT_FRAME]) and not any(found[LIFT_FRAME:PLACE_FRAME])
    first = found.index(True, PLACE_FRAME)
    assert scans[first] == "full"
    assert all(s == "windows" for s in scans[PLACE_FRAME:first])
    assert first - PLACE_FRAME < FINE_EVERY
    assert all(found[first:])


def test_slides_stay_in_their_windows(runs: dict[str, list]) -> None:
    """A full scan comes only on the first frame, every FINE_EVERY frames, or when a tag seen last frame is
    really gone (lifted, or covered by a slid neighbour: the full scan does not find it either); never
    because a base slid out of its window."""
    scans, full, windowed = runs["scans"], runs["full"], runs["windowed"]
    since = 0
    for k in range(1, FRAMES):
        since += 1
        if scans[k] != "full":
            continue
        if since < FINE_EVERY:
            gone = {t.id for t in windowed[k - 1]} - {t.id for t in full[k]}
            assert gone, f"frame {k}: a full scan though every tag of frame {k - 1} is still there"
        since = 0
    assert scans.count("windows") >= FRAMES // 2


def test_windows_are_tile_aligned_and_merged_only_when_cheaper() -> None:
    det = WindowedDetector(min_tag_px=13.0)
    corners = np.array([[100.3, 130.2], [130.1, 130.4], [130.2, 100.1], [100.4, 100.2]])
    w = det.window_round(corners, 1920, 1080)
    assert all(v % TILE_PX == 0 for v in w)
    grow = 1.5 * 13.0
    assert w.x0 <= 115.25 - 18.75 - grow and w.x1 >= 115.25 + 18.75 + grow
    clipped = det.window_round(corners - 95.0, 1920, 1080)
    assert clipped.x0 == 0 and clipped.y0 == 0
    a, b, far = Window(0, 0, 100, 100), Window(80, 0, 180, 100), Window(90, 90, 300, 300)
    assert merge_windows([a, b]) == [Window(0, 0, 180, 100)]
    assert sorted(merge_windows([a, far])) == sorted([a, far])  # their box would cost more than both
    assert coarse_decimation(1920, 1080, 1) == 6 and coarse_decimation(3840, 2160, 2) == 8


def test_roi_detection_gives_full_frame_corners(sequence: Sequence1080) -> None:
    gray = sequence.grays[0]
    full = detect_tags(gray, decimate=1)
    tag = full[len(full) // 2]
    x, y = (int(v) // 4 * 4 - 60 for v in tag.center_px)
    inside = detect_tags(gray, decimate=1, roi=(x, y, 120, 120))
    same = [t for t in inside if t.id == tag.id]
    assert len(same) == 1
    assert np.abs(same[0].corners_px - tag.corners_px).max() < 0.01
    cut = detect_tags(gray, decimate=1, roi=(int(tag.center_px[0]), y, 120, 120))
    assert tag.id not in {t.id for t in cut}  # a tag cut by the window's edge is not reported


def test_new_detector_and_reset_start_with_a_full_scan(sequence: Sequence1080) -> None:
    det = WindowedDetector(min_tag_px=sequence.min_tag_px, fine_every=FINE_EVERY, coarse=False)
    det.detect(sequence.grays[0])
    assert det.last_scan == "full"
    det.detect(sequence.grays[1])
    assert det.last_scan == "windows"
    det.reset()
    det.detect(sequence.grays[2])
    assert det.last_scan == "full"
    det.detect(sequence.grays[3][:1072, :1912].copy())  # another frame size
    assert det.last_scan == "full"
