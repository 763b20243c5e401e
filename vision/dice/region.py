"""Where dice are read when a region (the tray, the table's free area) is given: the part of the picture cut out
around it, and which dice found there count as in it.

A die counts when its centre lies in the region or within half its size outside it: one leaning on the tray's
wall, or lying across the edge the players marked, is seen from above with its centre past the edge. The cut
reaches CUT_SHARE of the region's larger side past its bounding box, so that such a die is seen whole.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

CUT_SHARE = 0.15
"""The cut reaches this share of the region's larger side (pixels) past its bounding box: a 7" tray holds dice of
0.63", 9 % of its side, so a die across the edge is seen whole ..."""
LEAST_CUT_PX = 8
"""... and at least this many pixels."""
OUTSIDE_SHARE = 0.5
"""A die whose centre lies outside the region by up to this share of its box's larger side still counts."""


def polygon_px(region: np.ndarray) -> np.ndarray:
    """The region as OpenCV's contour (N x 1 x 2, float32)."""
    return np.asarray(region, np.float32).reshape(-1, 1, 2)


def cut_box(region: np.ndarray, width: int, height: int, share: float = CUT_SHARE,
            cell_px: int = 1) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1), pixels: the part of a `width` x `height` picture dice in `region` are looked for in, `share`
    of the region's larger side (at least LEAST_CUT_PX) past its bounding box; x0 and y0 rounded down to a multiple
    of `cell_px` (a finder's cell: its cells then fall where they fall on the whole picture)."""
    bx, by, bw, bh = cv2.boundingRect(polygon_px(region))
    margin = max(LEAST_CUT_PX, math.ceil(share * max(bw, bh)))
    x0, y0 = max(0, bx - margin), max(0, by - margin)
    return x0 - x0 % cell_px, y0 - y0 % cell_px, min(width, bx + bw + margin), min(height, by + bh + margin)


def counts(region: np.ndarray, centre_px: tuple[float, float], side_px: float) -> bool:
    """Whether a die centred at `centre_px` whose box's larger side is `side_px` (picture pixels) counts as in
    `region`: its centre in it, or outside by at most OUTSIDE_SHARE of its side."""
    inside = cv2.pointPolygonTest(polygon_px(region), (float(centre_px[0]), float(centre_px[1])), True)
    return inside >= -OUTSIDE_SHARE * side_px
