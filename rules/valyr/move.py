"""Valyr's "True Movement": what a move costs, measured along its straight parts, and whether the unit can stand.

Rules (in our words):
- A move may be split into parts; each part is a straight line (a segment between two declared points).
- A climb (consecutive parts going the same way up or down) of more than 1" must go to the foot of the
  object and then up it; without a handhold or ladder, every inch of it costs 2". A climb of 1" or less
  costs its length. Our option ``CLIMB_DOWN_DOUBLE``: climbing down counts like climbing up (the rule book
  says "moves vertically"), since both need a handhold.
- A unit that ends where its base cannot stand flat falls (to the surface below), is exhausted and its
  turn ends. A base stands flat on the table (z = 0) or on the top of an "elevated" or "blocking" piece
  (a ruin floor, a rock) whose outline holds the base centre, within ``STAND_TOLERANCE_IN``.
- A straight part may not pass through a "blocking" piece below its top (`through_blocking`): the unit
  must climb it with its own parts (to the foot, up, across, down).

Cost of one part = horizontal length + vertical travel (x2 in a long climb without a ladder).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import shapely

from rules.engine import Inches
from rules.geometry import Measure, path_length
from rules.terrain import TerrainPiece

VERTICAL_FREE_IN = 1.0
"""A climb up to this height (inches) costs its length; a longer one costs double without a ladder."""
CLIMB_COST_FACTOR = 2.0
CLIMB_DOWN_DOUBLE = True
STAND_TOLERANCE_IN = 0.1
"""How far (inches) a base's declared height may be from a surface and still stand on it."""

Point3 = tuple[Inches, Inches, Inches]


@dataclass(frozen=True)
class MoveCost:
    """A measured move. Lengths in inches.

    horizontal_in: the straight parts' length along the table; vertical_in: all vertical travel;
    doubled_in: the vertical travel in long climbs that costs double; cost: what the move spends, with its ±.
    """

    points: tuple[Point3, ...]
    horizontal_in: Inches
    vertical_in: Inches
    doubled_in: Inches
    cost: Measure


def climbs(points: Sequence[Point3]) -> list[float]:
    """The height of each climb: runs of consecutive parts that go the same way vertically (signed, inches)."""
    out: list[float] = []
    run = 0.0
    for a, b in zip(points, points[1:]):
        dz = b[2] - a[2]
        if abs(dz) < 1e-9:
            if run:
                out.append(run)
            run = 0.0
            continue
        if run and (dz > 0) != (run > 0):
            out.append(run)
            run = 0.0
        run += dz
    if run:
        out.append(run)
    return out


def move_cost(
    points: Sequence[Point3],
    *,
    pm: Inches,
    ladder: bool = False,
    climb_factor: float = CLIMB_COST_FACTOR,
    horizontal_in: Inches | None = None,
) -> MoveCost:
    """The cost of a move through `points` (start first), each consecutive pair one straight part.

    ladder: a handhold or ladder is present (climbs cost single). climb_factor: what a long climb costs per
    inch without one (2; an ability may lower it). horizontal_in: a measured horizontal length that replaces
    the one computed from the points (e.g. from the tracker); pm: the ± of the move's length.
    """
    pts = tuple((float(x), float(y), float(z)) for x, y, z in points)
    flat = path_length([(p[0], p[1]) for p in pts]) if horizontal_in is None else float(horizontal_in)
    heights = climbs(pts)
    vertical = sum(abs(h) for h in heights)
    doubled = 0.0
    if not ladder:
        doubled = sum(abs(h) for h in heights if abs(h) > VERTICAL_FREE_IN and (h > 0 or CLIMB_DOWN_DOUBLE))
    cost = flat + vertical + doubled * (climb_factor - 1.0)
    return MoveCost(pts, flat, vertical, doubled, Measure(cost, pm))


def surfaces_at(x: Inches, y: Inches, terrain: Sequence[TerrainPiece]) -> tuple[Inches, ...]:
    """The heights a base centred at (x, y) could stand at: the table and the tops of elevated pieces over it."""
    tops = [0.0]
    point = shapely.Point(x, y)
    for piece in terrain:
        if (piece.has("elevated") or piece.has("blocking")) and piece.shape.covers(point):
            tops.append(float(piece.height_in))
    return tuple(sorted(set(tops)))


def through_blocking(points: Sequence[Point3], terrain: Sequence[TerrainPiece]) -> tuple[str, ...]:
    """The blocking pieces a straight part of the move runs through below their top (not climbed)."""
    out: dict[str, None] = {}
    for a, b in zip(points, points[1:]):
        if math.hypot(b[0] - a[0], b[1] - a[1]) < 1e-9:
            continue
        seg = shapely.LineString([(a[0], a[1]), (b[0], b[1])])
        low = min(a[2], b[2])
        for piece in terrain:
            if not piece.has("blocking") or low >= piece.height_in - STAND_TOLERANCE_IN:
                continue
            inside = seg.intersection(piece.shape)
            if not inside.is_empty and inside.length > 1e-6:
                out[piece.name] = None
    return tuple(out)


def landing(x: Inches, y: Inches, z: Inches, terrain: Sequence[TerrainPiece]) -> tuple[bool, Inches]:
    """(stands, z): whether a base ending at height z stands flat, and the height it rests at (after a fall)."""
    tops = surfaces_at(x, y, terrain)
    for top in tops:
        if math.isclose(top, z, abs_tol=STAND_TOLERANCE_IN):
            return True, top
    below = [t for t in tops if t <= z]
    return False, max(below) if below else 0.0
