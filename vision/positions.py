"""Where each base stands: detected tags -> base centres in table inches, with their ±.

A tag is measured on the plane of its own face (z = the tag's height above the table), never on the
table plane: a tag 0.125" up seen from a camera 36" up at the board's corner would otherwise be off by
~0.06". Its four corners are mapped to that plane (lens distortion removed by the calibration); the tag
centre is their mean (a square's centre), its yaw the mean direction of its edges, its side the mean length
of its edges. The base centre is the tag centre minus the roster's tag offset turned by that yaw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from calibration.table import TableCalibration
from vision.tags import CORNER_NOISE_PX, TagObservation

DEFAULT_TAG_HEIGHT_IN = 0.125
"""A tag on top of a usual base: its face is this far above the table, inches."""


@dataclass(frozen=True)
class BaseFix:
    """One base measured in one frame. Inches and degrees in the table frame."""

    tag: int
    x: float
    """Base centre x, inches."""
    y: float
    """Base centre y, inches."""
    z: float
    """Height of the tag's face above the table (the plane it was measured on), inches."""
    yaw_deg: float
    """The tag's (and base's) facing, counter-clockwise from +x seen from above, in (-180, 180]."""
    pm: float
    """Two-sigma ± of the position, inches."""
    tag_center_in: tuple[float, float]
    margin: float
    """The detector's decision margin."""
    side_in: float = math.nan
    """The tag's side as measured on this plane, inches (the mean of its four edges): on the tag's true plane
    it is the printed side, on a plane 3" off it is ~3 / (camera distance) larger or smaller."""
    height_assumed: bool = False
    """True when the plane was not measured but assumed: the tag's side could not tell the table from the floor
    under it, and the floor was taken because the base lies within its footprint (see session/floors.py)."""


def tag_on_plane(tag: TagObservation, cal: TableCalibration, height_in: float) -> tuple[np.ndarray, float]:
    """The tag's centre (2,) in table inches and its yaw (degrees), measured on the plane z = height_in."""
    corners = cal.image_to_table(tag.corners_px, height_in)
    if not np.all(np.isfinite(corners)):
        return np.full(2, np.nan), math.nan
    centre = corners.mean(axis=0)
    c0, c1, c2, c3 = corners
    along_x = (c1 - c0) + (c2 - c3)
    along_y = (c3 - c0) + (c2 - c1)
    direction = along_x + np.array([along_y[1], -along_y[0]])  # +y turned back by 90 degrees is +x
    yaw = math.degrees(math.atan2(float(direction[1]), float(direction[0]))) + 0.0  # no -0.0
    return centre, yaw


def measure_bases(
    tags: Sequence[TagObservation],
    cal: TableCalibration,
    heights: Mapping[int, float] | None = None,
    offsets: Mapping[int, tuple[float, float]] | None = None,
    *,
    default_height_in: float = DEFAULT_TAG_HEIGHT_IN,
    corner_noise_px: float = CORNER_NOISE_PX,
) -> list[BaseFix]:
    """Base centres of every non-anchor tag, in the order given.

    heights: tag id -> height of the tag face above the table (inches; default `default_height_in`).
    offsets: tag id -> (dx, dy) the tag centre's offset from the base centre in the base's frame (inches;
    default (0, 0)). Tags whose rays miss the plane (behind the camera) are left out.
    """
    heights = heights or {}
    offsets = offsets or {}
    anchors = set(cal.layout.anchors)
    bases = [t for t in tags if t.id not in anchors]
    if not bases:
        return []
    # One batched mapping for every corner of every tag (the hot path: 40 tags in well under a millisecond).
    z = np.array([float(heights.get(t.id, default_height_in)) for t in bases])
    corners_px = np.concatenate([t.corners_px for t in bases]).reshape(-1, 2)
    corners = cal.image_to_table(corners_px, np.repeat(z, 4)).reshape(-1, 4, 2)
    centres = corners.mean(axis=1)
    c0, c1, c2, c3 = (corners[:, k] for k in range(4))
    along_x = (c1 - c0) + (c2 - c3)
    along_y = (c3 - c0) + (c2 - c1)
    direction = along_x + np.column_stack([along_y[:, 1], -along_y[:, 0]])  # +y turned back 90 degrees is +x
    yaws = np.degrees(np.arctan2(direction[:, 1], direction[:, 0])) + 0.0  # no -0.0
    sides = np.linalg.norm(np.diff(corners, axis=1, append=corners[:, :1]), axis=2).mean(axis=1)
    pms = cal.position_pm(np.stack([t.center_px for t in bases]), z, corner_noise_px)
    fixes: list[BaseFix] = []
    for i, tag in enumerate(bases):
        if not np.all(np.isfinite(corners[i])):
            continue
        dx, dy = offsets.get(tag.id, (0.0, 0.0))
        yaw = float(yaws[i])
        a = math.radians(yaw)
        cx, cy = float(centres[i, 0]), float(centres[i, 1])
        fixes.append(
            BaseFix(
                tag=tag.id,
                x=cx - (dx * math.cos(a) - dy * math.sin(a)),
                y=cy - (dx * math.sin(a) + dy * math.cos(a)),
                z=float(z[i]),
                yaw_deg=yaw,
                pm=float(pms[i]),
                tag_center_in=(cx, cy),
                margin=tag.margin,
                side_in=float(sides[i]),
            )
        )
    return fixes


def smallest_tag_px(cal: TableCalibration, tag_in: float, height_in: float = 0.0) -> float:
    """The fewest pixels a tag of side `tag_in` spans anywhere on the board (at `height_in`): for decimation.

    Taken where one pixel covers the most table (the far side of a tilted view), on a 5 x 5 grid over the
    board.
    """
    w, d = cal.board_in
    xs, ys = np.meshgrid(np.linspace(0.0, w, 5), np.linspace(0.0, d, 5))
    pts = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, float(height_in))])
    px = cal.table_to_image(pts)
    ipp = cal.inches_per_px(px, height_in)
    ipp = ipp[np.isfinite(ipp)]
    if ipp.size == 0:
        return math.nan
    return float(tag_in / ipp.max())
