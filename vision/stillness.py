"""Has a tag moved since it was measured? A least-squares fit of how its picture changed to a small motion.

When a tag is measured we keep, for the square of tiles round its white border (a tile more each side; tiles
of `tile` px, the library's threshold tiles), each tile's mean grey and the mean of the grey's x and y
derivatives over it (`reference`). A small motion of the tag shifts each tile's mean by minus the derivative
times the shift there, so a later frame's tile means are fitted (least squares, all the tiles at once) by

    now = gain * then + offset - (dx, dy) . grad - rotation * (r x grad) - scale * (r . grad)

with r a tile's centre less the tag's centre: gain and offset follow the light, the four others are the
tag's motion in the picture (a slide, a turn, a lift towards the camera). The fit gives each corner's
shift, px; the largest is `moved_px`. A tag whose corners moved by at most KEEP_PX, and whose tiles the fit
explains (residual within FIT_GREY: nothing else came over it; contrast within LIGHT_GAIN of what it was: a
tag lifted away leaves a flat patch that offset and a gain of 0 would fit), stands where it was measured and keeps that
measurement (vision/windowed.py). Camera noise, JPEG and changing light average out over the ~150 tiles
(rendered 1080p with noise, JPEG and light whose direction changes every frame: a still tag's shift is
estimated within 0.11 px in 9 of 10 frames; the library's own corners move by ~0.05 px from frame to frame).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

KEEP_PX = 0.15
"""A tag whose corners moved by at most this, px (~0.005" at 1080p over a 4-foot board), is still."""
FIT_GREY = 6.0
"""...if the fit leaves an rms residual of at most this, grey levels (noise and JPEG leave ~2.5; a hand or a
figure over part of the tag, tens)."""

LIGHT_GAIN = 1.5
"""...and if its contrast changed by at most this factor either way (the light: ~5 % frame to frame on the bench's
rendered frames whose light changes direction every frame)."""


class Reference:
    """A tag's tiles in the frame it was measured in: rows r0..r1-1 and columns c0..c1-1 of `tile`-px tiles."""

    __slots__ = ("r0", "c0", "r1", "c1", "tile", "means", "basis", "corners", "then", "_fit", "_flat")

    def __init__(self, box: tuple[int, int, int, int], tile: int, means: np.ndarray, basis: np.ndarray,
                 corners: np.ndarray) -> None:
        self.r0, self.c0, self.r1, self.c1 = box
        self.tile = tile
        self.means = means
        """(rows, columns) float32: mean grey of each tile then."""
        self.basis = basis
        """(tiles, 4) float32: each tile's change for a unit slide in x, in y, turn (radians) and scale."""
        self.corners = np.asarray(corners, np.float64).reshape(4, 2)
        """The tag's 4 corners less its centre, px."""
        self.then = means.astype(np.float64).ravel()
        self._fit: tuple[np.ndarray, np.ndarray] | None = None
        self._flat: tuple[int, np.ndarray] | None = None

    def fit(self) -> tuple[np.ndarray, np.ndarray]:
        """(Q^T, R^-1) of the full design (gain, offset, the 4 motions) = QR: orthonormal columns, the map back
        (R's pseudo-inverse when the design is degenerate: a patch with no edges)."""
        if self._fit is None:
            design = np.column_stack([self.then, np.ones(self.then.size), self.basis.astype(np.float64)])
            q, r = np.linalg.qr(design)
            diag = np.abs(np.diag(r))
            back = np.linalg.inv(r) if diag.min() > 1e-9 * diag.max() else np.linalg.pinv(r)
            self._fit = (np.ascontiguousarray(q.T), back)
        return self._fit

    def flat(self, columns: int) -> np.ndarray:
        """Where this tag's tiles are in a `tile_grid` of `columns` columns, raveled (row by row, as `then`)."""
        if self._flat is None or self._flat[0] != columns:
            rows = np.arange(self.r0, self.r1, dtype=np.intp)[:, None] * columns
            self._flat = (columns, (rows + np.arange(self.c0, self.c1, dtype=np.intp)).ravel())
        return self._flat[1]

    def __getstate__(self) -> dict[str, Any]:  # the fit is made again when needed: checkpoints stay small
        return {k: getattr(self, k) for k in self.__slots__ if k not in ("_fit", "_flat", "then")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self.corners = np.asarray(self.corners, np.float64).reshape(4, 2)
        self.then = self.means.astype(np.float64).ravel()
        self._fit = None
        self._flat = None


def tile_grid(gray: np.ndarray, tile: int) -> np.ndarray:
    """The frame's mean grey a `tile`-px tile (rows, columns), float32; partial tiles at the right and bottom
    edges dropped. Each tile's sum is read off the frame's integral image (whole numbers, exact), then scaled in
    float32 as OpenCV's area resize of the float frame scales it: the same values bit for bit, in a third to a
    half of the time (no float copy of the whole frame)."""
    h, w = gray.shape
    rows, cols = h // tile, w // tile
    if rows < 1 or cols < 1:
        return np.zeros((max(rows, 0), max(cols, 0)), np.float32)
    depth = cv2.CV_32S if rows * cols * tile * tile * 255 < 2**31 else cv2.CV_64F  # a sum that fits in 32 bits
    whole = cv2.integral(gray[: rows * tile, : cols * tile], sdepth=depth)[::tile, ::tile]
    sums = whole[1:, 1:] - whole[:-1, 1:] - whole[1:, :-1] + whole[:-1, :-1]
    return sums.astype(np.float32) * np.float32(1.0 / (tile * tile))


def _tile_means(image: np.ndarray, tile: int) -> np.ndarray:
    h, w = image.shape
    return cv2.resize(image, (w // tile, h // tile), interpolation=cv2.INTER_AREA)


def reference(gray: np.ndarray, grid: np.ndarray, corners_px: np.ndarray, box_px: tuple[float, float, float, float],
              tile: int) -> Reference | None:
    """The reference of a tag with these corners and outer box (x0, y0, x1, y1), px, measured in `gray` (whose
    `tile_grid` is `grid`); None when its tiles would reach past the frame's edge."""
    x0, y0, x1, y1 = box_px
    c0, r0 = int(x0 // tile) - 1, int(y0 // tile) - 1
    c1, r1 = int(x1 // tile) + 2, int(y1 // tile) + 2
    height, width = gray.shape
    if c0 < 1 or r0 < 1 or c1 * tile >= width or r1 * tile >= height or r1 > grid.shape[0] or c1 > grid.shape[1]:
        return None
    around = gray[r0 * tile - 1 : r1 * tile + 1, c0 * tile - 1 : c1 * tile + 1].astype(np.float32)
    gx = cv2.Sobel(around, cv2.CV_32F, 1, 0, ksize=3, scale=0.125)[1:-1, 1:-1]
    gy = cv2.Sobel(around, cv2.CV_32F, 0, 1, ksize=3, scale=0.125)[1:-1, 1:-1]
    gx, gy = _tile_means(np.ascontiguousarray(gx), tile).ravel(), _tile_means(np.ascontiguousarray(gy), tile).ravel()
    centre = np.asarray(corners_px, np.float64).mean(axis=0)
    xs = np.arange(c0, c1) * tile + (tile - 1) / 2.0 - centre[0]
    ys = np.arange(r0, r1) * tile + (tile - 1) / 2.0 - centre[1]
    rx, ry = (a.ravel().astype(np.float32) for a in np.meshgrid(xs, ys))
    basis = np.column_stack([-gx, -gy, ry * gx - rx * gy, -(rx * gx + ry * gy)])
    means = grid[r0:r1, c0:c1].copy()
    return Reference((r0, c0, r1, c1), tile, means, basis, np.asarray(corners_px, np.float64) - centre)


def moved_all(grid: np.ndarray, refs: Sequence[Reference | None]) -> np.ndarray:
    """`moved_px` of each of `refs` (infinity for None), px, from one later frame's `tile_grid`: all the tags
    fitted at once (each its own least squares; one pass of numpy for a table of bases)."""
    out = np.full(len(refs), math.inf)
    rows, cols = grid.shape
    fits = [(k, ref) for k, ref in enumerate(refs) if ref is not None and ref.r1 <= rows and ref.c1 <= cols]
    if not fits:
        return out
    parts = [ref.fit() for _, ref in fits]
    sizes = np.array([ref.then.size for _, ref in fits])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    change = grid.ravel()[np.concatenate([ref.flat(cols) for _, ref in fits])] - np.concatenate(
        [ref.then for _, ref in fits])  # each tag's tiles now less then, one tag after another
    along = np.add.reduceat(np.concatenate([q for q, _ in parts], axis=1) * change, starts, axis=1).T
    residual = np.add.reduceat(change * change, starts) - (along * along).sum(axis=1)
    gain, _, dx, dy, turn, scale = np.matmul(np.stack([b for _, b in parts]), along[:, :, None])[:, :, 0].T
    corners = np.stack([ref.corners for _, ref in fits])
    x, y = corners[:, :, 0], corners[:, :, 1]
    shift = np.hypot(dx[:, None] - turn[:, None] * y + scale[:, None] * x,
                     dy[:, None] + turn[:, None] * x + scale[:, None] * y).max(axis=1)
    unexplained = residual > FIT_GREY * FIT_GREY * sizes
    faded = ~((1.0 + gain >= 1.0 / LIGHT_GAIN) & (1.0 + gain <= LIGHT_GAIN))  # lifted, covered
    out[[k for k, _ in fits]] = np.where(unexplained | faded, math.inf, shift)
    return out


def moved_px(grid: np.ndarray, ref: Reference) -> float:
    """How far, px, the tag's corners moved since `ref` was taken (the largest corner's shift), from a later
    frame's `tile_grid`; infinity when the fit does not explain the change (residual rms over FIT_GREY:
    something covers the tag, or it moved too far for a small-motion fit; or its contrast changed by more than
    LIGHT_GAIN)."""
    return float(moved_all(grid, [ref])[0])


def still(grid: np.ndarray, ref: Reference | None) -> bool:
    """True if the tag of `ref` stands where it was measured (within KEEP_PX, its tiles explained), from a later
    frame's `tile_grid`."""
    return ref is not None and moved_px(grid, ref) <= KEEP_PX


def still_all(grid: np.ndarray, refs: Sequence[Reference | None]) -> list[bool]:
    """`still` for each of `refs`, from one later frame's `tile_grid`."""
    return (moved_all(grid, refs) <= KEEP_PX).tolist()
