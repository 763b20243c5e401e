"""How many round bases fit in one hex cell: n circles of one diameter packed in a regular hexagon.

The hexagon is centred on the origin with an edge facing +y (a flat-topped cell; a pointy cell is the same
turned 30 degrees, with the same inradius). The arrangements are the ones we use, not proven optimal:

- 1 base: in the middle;
- 2 bases: side by side along the line through two opposite corners, touching;
- 3 bases: each in its own alternate corner, all three touching;
- 4 bases: a rhombus of two touching triangles, its long axis corner to corner;
- 5 to 7 bases: one in the middle and the rest around it, each toward a corner.

The hexagon a packing needs is the smallest whose every edge is a base radius away from every centre.
"""

from __future__ import annotations

import math

from rules.basics import Inches

MOST_PIECES = 7
"""The most bases a cell's packing is known for here."""
SIZE_STEP_IN = 0.05
"""A proposed hex size is rounded up to this, inches."""
_R3 = math.sqrt(3.0)
_EDGE_NORMALS = tuple((math.cos(math.radians(30 + 60 * k)), math.sin(math.radians(30 + 60 * k))) for k in range(6))
"""The outward normals of a flat-topped hexagon's six edges."""
_CORNER = 2 / _R3
"""A circle of radius 1 touching both edges of a 120-degree corner has its centre this far from the corner."""


def _unit_centres(n: int) -> tuple[tuple[float, float], ...]:
    """The centres for n circles of radius 1 (see the module docstring)."""
    if n == 1:
        return ((0.0, 0.0),)
    if n == 2:
        return ((-1.0, 0.0), (1.0, 0.0))
    if n == 3:
        c = _CORNER
        return tuple((c * math.cos(math.radians(a)), c * math.sin(math.radians(a))) for a in (0, 120, 240))
    if n == 4:
        return ((-_R3, 0.0), (_R3, 0.0), (0.0, -1.0), (0.0, 1.0))
    ring = tuple((2 * math.cos(math.radians(a)), 2 * math.sin(math.radians(a))) for a in range(0, 360, 60))
    return ((0.0, 0.0), *ring[: n - 1])


def packing(n: int, diameter_in: Inches) -> tuple[tuple[Inches, Inches], ...]:
    """Where n bases of `diameter_in` stand in a flat-topped cell centred on the origin (inches); raises ValueError
    for n outside 1 to MOST_PIECES or a diameter that is not positive."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MOST_PIECES:
        raise ValueError(f"A cell's packing is known for 1 to {MOST_PIECES} bases; got {n!r}.")
    if not diameter_in > 0 or not math.isfinite(diameter_in):
        raise ValueError(f"A base's diameter must be a positive length in inches; got {diameter_in!r}.")
    rho = diameter_in / 2
    return tuple((x * rho, y * rho) for x, y in _unit_centres(n))


def smallest_inradius(n: int, diameter_in: Inches) -> Inches:
    """The inradius (centre to edge, inches) of the smallest cell that holds n bases of `diameter_in`."""
    rho = diameter_in / 2
    centres = packing(n, diameter_in)
    return max(x * nx + y * ny for x, y in centres for nx, ny in _EDGE_NORMALS) + rho


TOLERANCE_IN = 1e-3
"""How far a packing may overrun its cell and still fit, inches: bases are not made to a thousandth of an inch."""


def fits(n: int, diameter_in: Inches, size_in: Inches) -> bool:
    """Whether n bases of `diameter_in` fit a cell `size_in` from centre to corner (to TOLERANCE_IN)."""
    return size_in * _R3 / 2 >= smallest_inradius(n, diameter_in) - TOLERANCE_IN


def proposed_size(n: int, diameter_in: Inches) -> Inches:
    """The smallest cell size (centre to corner, inches), a whole number of SIZE_STEP_IN, that holds n bases."""
    least = (smallest_inradius(n, diameter_in) - TOLERANCE_IN) * 2 / _R3
    return round(math.ceil(least / SIZE_STEP_IN - 1e-9) * SIZE_STEP_IN, 4)
