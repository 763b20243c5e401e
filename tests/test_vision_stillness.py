"""vision.stillness: a tag's motion since it was measured, fitted from its tiles, on real photos moved by known
amounts (sub-pixel shifts and turns, light, noise, a hand over it, the tag taken away)."""

from __future__ import annotations

import math
import pickle
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from vision.stillness import KEEP_PX, moved_all, moved_px, reference, still, still_all, tile_grid
from vision.tags import detect_tags, load_gray
from vision.windowed import TILE_PX, outer_box

REAL = Path(__file__).resolve().parent / "data" / "apriltag_test"
PHOTOS = sorted(p.name for p in REAL.glob("*.jpg"))


def _ref(gray: np.ndarray, corners: np.ndarray, box: tuple[float, float, float, float] | None = None) -> Any:
    """The reference of the tag with these corners in `gray` (its outer box unless `box` is given)."""
    return reference(gray, tile_grid(gray, TILE_PX), corners, outer_box(corners) if box is None else box, TILE_PX)


def _tags(name: str) -> tuple[np.ndarray, list]:
    gray = load_gray(REAL / name)
    tags = [t for t in detect_tags(gray, decimate=1) if _ref(gray, t.corners_px)]
    assert tags, name
    return gray, tags


def _moved(gray: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """`gray` with its content moved by the 2x3 affine `matrix` (bilinear, as a sub-pixel slide looks)."""
    return cv2.warpAffine(gray, matrix, (gray.shape[1], gray.shape[0]), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def _true_shift(corners: np.ndarray, matrix: np.ndarray) -> float:
    moved = corners @ matrix[:, :2].T + matrix[:, 2]
    return float(np.hypot(*(moved - corners).T).max())


@pytest.mark.parametrize("name", PHOTOS)
def test_a_still_tag_is_still_and_a_slide_or_turn_is_measured_in_px(name: str) -> None:
    gray, tags = _tags(name)
    # the same blur for both: bilinear resampling at a shift of 0 is the photo itself
    then = _moved(gray, np.array([[1, 0, 1e-9], [0, 1, 0]], np.float64))
    for tag in tags:
        ref = _ref(then, tag.corners_px)
        assert ref is not None
        assert moved_px(tile_grid(then, TILE_PX), ref) < 0.01
        centre = tag.corners_px.mean(axis=0)
        for dx, dy, turn_deg in ((0.05, -0.04, 0.0), (0.3, 0.0, 0.0), (-0.1, 0.25, 0.0), (0.0, 0.0, 0.6)):
            m: np.ndarray = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), turn_deg, 1.0)
            m[:, 2] += (dx, dy)
            true = _true_shift(tag.corners_px, m)
            now = tile_grid(_moved(gray, m), TILE_PX)
            est = moved_px(now, ref)
            # never much less than the truth (a tag kept must stand within ~KEEP_PX), and not so much more that
            # still tags are scanned again for nothing
            assert 0.85 * true - 0.02 < est < 1.6 * true + 0.03, f"{name} tag {tag.id}: {est:.3f} px, truly {true:.3f}"
            assert still(now, ref) == (est <= KEEP_PX)


@pytest.mark.parametrize("name", PHOTOS)
def test_light_and_noise_leave_a_tag_still(name: str) -> None:
    gray, tags = _tags(name)
    rng = np.random.default_rng(7)
    ramp = np.linspace(0.8, 0.95, gray.shape[1], dtype=np.float32)[None, :]  # dimmer, and unevenly so
    noisy = gray.astype(np.float32) * ramp + 6.0 + rng.normal(0.0, 2.0, gray.shape).astype(np.float32)
    now = np.clip(np.rint(noisy), 0, 255).astype(np.uint8)
    ok, jpeg = cv2.imencode(".jpg", now, [cv2.IMWRITE_JPEG_QUALITY, 80])
    now = cv2.imdecode(jpeg, cv2.IMREAD_GRAYSCALE)
    assert now is not None
    for tag in tags:
        ref = _ref(gray, tag.corners_px)
        assert ref is not None
        assert moved_px(tile_grid(now, TILE_PX), ref) < 0.1, f"{name} tag {tag.id}"


@pytest.mark.parametrize("name", PHOTOS)
def test_a_hand_over_a_tag_or_the_tag_taken_away_is_not_still(name: str) -> None:
    gray, tags = _tags(name)
    for tag in tags:
        ref = _ref(gray, tag.corners_px)
        assert ref is not None
        x0, y0, x1, y1 = (int(round(v)) for v in outer_box(tag.corners_px))
        covered = gray.copy()
        finger = np.array([[x0, y0], [x0 + (x1 - x0) // 3, y0], [x0 + (x1 - x0) // 2, y1], [x0, y1]], np.int32)
        cv2.fillPoly(covered, [finger], 200)  # a finger over a third of it
        assert moved_px(tile_grid(covered, TILE_PX), ref) == math.inf, f"{name} tag {tag.id}"
        gone = gray.copy()  # the table where the tag was: the grey round its box
        around = np.concatenate([gray[y0 - 3, x0:x1], gray[y1 + 3, x0:x1]]).astype(np.float64)
        gone[y0 - 2 : y1 + 3, x0 - 2 : x1 + 3] = int(np.median(around))
        assert moved_px(tile_grid(gone, TILE_PX), ref) == math.inf, f"{name} tag {tag.id}"


def test_every_tag_of_a_frame_fitted_at_once_gives_each_its_own_fit() -> None:
    """`moved_all` over all the tags of a photo (tiles of many sizes, a tag covered, one without a reference)
    gives each tag what fitting it alone gives, to 1e-9 px: the batch is only a faster way to the same numbers."""
    gray, tags = max((_tags(name) for name in PHOTOS), key=lambda gt: len(gt[1]))
    assert len(tags) >= 5
    refs = [_ref(gray, t.corners_px) for t in tags]
    assert len({r.then.size for r in refs if r is not None}) >= 2  # tags of different sizes in one batch
    m: np.ndarray = cv2.getRotationMatrix2D((gray.shape[1] / 2.0, gray.shape[0] / 2.0), 0.01, 1.0)
    m[:, 2] += (0.2, -0.1)
    now = _moved(gray, m)
    x0, y0, x1, y1 = (int(round(v)) for v in outer_box(tags[0].corners_px))
    now[y0:y1, x0 : (x0 + x1) // 2] = 200  # a finger over the first tag
    grid = tile_grid(now, TILE_PX)
    batch = moved_all(grid, [*refs, None])
    alone = [moved_px(grid, r) if r is not None else math.inf for r in refs]
    assert batch[0] == math.inf and batch[-1] == math.inf
    assert np.allclose(batch[:-1], alone, rtol=0.0, atol=1e-9) and np.isfinite(batch[1:-1]).sum() >= len(tags) // 2
    assert still_all(grid, [*refs, None]) == [b <= KEEP_PX for b in batch]


def test_a_reference_survives_a_checkpoint_and_refuses_the_frame_edge() -> None:
    gray, tags = _tags(PHOTOS[0])
    tag = tags[0]
    ref = _ref(gray, tag.corners_px)
    assert ref is not None
    shifted = _moved(gray, np.array([[1, 0, 0.2], [0, 1, 0.1]], np.float64))
    back = pickle.loads(pickle.dumps(ref))
    grid = tile_grid(shifted, TILE_PX)
    assert moved_px(grid, back) == pytest.approx(moved_px(grid, ref), abs=1e-9)
    assert 0.15 < moved_px(grid, back) < 0.3
    h, w = gray.shape
    assert _ref(gray, tag.corners_px, (1.0, 10.0, 30.0, 40.0)) is None  # its tiles pass the left edge
    assert _ref(gray, tag.corners_px, (w - 20.0, 10.0, w - 2.0, 40.0)) is None


@pytest.mark.parametrize("tile", [4, 8, 12, 16, 3])
def test_tile_grid_is_opencvs_area_mean_bit_for_bit(tile: int) -> None:
    """The tile means come from the integral image; they must equal OpenCV's area resize of the float frame
    exactly (live and replay decide stillness on them), on real photos, odd sizes, all-white and noise."""
    rng = np.random.default_rng(tile)
    frames = [load_gray(REAL / name) for name in PHOTOS[:3]]
    frames += [rng.integers(0, 256, (721, 1283), dtype=np.uint8), np.full((1080, 1920), 255, np.uint8),
               rng.integers(0, 256, (tile + 1, 3 * tile + 2), dtype=np.uint8)]
    for gray in frames:
        h, w = gray.shape
        rows, cols = h // tile, w // tile
        opencv = cv2.resize(gray[: rows * tile, : cols * tile].astype(np.float32), (cols, rows),
                            interpolation=cv2.INTER_AREA)
        ours = tile_grid(gray, tile)
        assert ours.dtype == np.float32 and ours.shape == (rows, cols)
        assert np.array_equal(ours, opencv), (gray.shape, tile, float(np.abs(ours - opencv).max()))
    assert tile_grid(np.zeros((tile - 1, 50), np.uint8), tile).shape == (0, 50 // tile)
