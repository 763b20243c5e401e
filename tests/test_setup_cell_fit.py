"""How many round bases fit in one hex cell (rules/cell_fit.py), checked with shapely's own geometry: every base
wholly inside the cell and no two overlapping, and a cell a little smaller than the least one is too small."""

from __future__ import annotations

import itertools
import math

import pytest
from shapely.geometry import Point, Polygon

from rules.cell_fit import MOST_PIECES, fits, packing, proposed_size, smallest_inradius

MM = 25.4


def cell(inradius: float) -> Polygon:
    """A flat-topped hexagon centred on the origin with this inradius (corners at 0, 60, ... degrees)."""
    corner = inradius * 2 / math.sqrt(3)
    return Polygon([(corner * math.cos(math.radians(a)), corner * math.sin(math.radians(a))) for a in range(0, 360, 60)])


@pytest.mark.parametrize("n", range(1, MOST_PIECES + 1))
@pytest.mark.parametrize("base_mm", [25, 32, 66])
def test_every_base_lies_inside_the_least_cell_and_none_overlap(n: int, base_mm: float) -> None:
    d = base_mm / MM
    r = smallest_inradius(n, d)
    hexagon = cell(r + 1e-9)
    bases = [Point(x, y).buffer(d / 2, quad_segs=64) for x, y in packing(n, d)]
    assert all(hexagon.buffer(1e-6).contains(b) for b in bases)
    for a, b in itertools.combinations(packing(n, d), 2):
        assert math.dist(a, b) >= d - 1e-9
    # the least cell: 1% smaller and some base pokes out
    smaller = cell(r * 0.99)
    assert not all(smaller.contains(b) for b in bases)


def test_the_inradii_of_the_packings_in_base_diameters() -> None:
    """1: half a base; 2 along the corner-to-corner line: (1 + sqrt(3)/2) / 2; 3 in alternate corners: 1;
    4 as a rhombus: 1.25; 5-7 round a middle one, toward the corners: (1 + sqrt(3)) / 2."""
    want = [0.5, (1 + math.sqrt(3) / 2) / 2, 1.0, 1.25, (1 + math.sqrt(3)) / 2, (1 + math.sqrt(3)) / 2,
            (1 + math.sqrt(3)) / 2]
    for n, r in enumerate(want, start=1):
        assert smallest_inradius(n, 1.0) == pytest.approx(r, abs=1e-12)


def test_a_vigtavl_cell_three_units_and_a_development_on_25_mm_bases() -> None:
    d = 25 / MM
    assert not fits(2, d, 1.0)  # 1" hexes (the example map): two bases do not even fit side by side
    assert not fits(4, d, 1.4)
    assert fits(4, d, 1.45)
    assert proposed_size(4, d) == 1.45  # 1.25 * 0.984" inradius = 1.2303"; / (sqrt(3)/2) = 1.4206" -> 1.45"
    assert proposed_size(1, d) == 0.6  # 0.492" inradius -> 0.568" centre to corner


def test_a_magni_tile_fits_its_1_5_inch_cell() -> None:
    """A 66 mm hero (2.598") in the 19-cell board's 1.5" hexes (2.598" edge to edge): a thousandth to spare."""
    assert fits(1, 66 / MM, 1.5)
    assert proposed_size(1, 66 / MM) == 1.5
    assert not fits(1, 66 / MM, 1.45)


@pytest.mark.parametrize("n, d", [(0, 1.0), (8, 1.0), (True, 1.0), (2, 0.0), (2, -1.0), (2, math.nan)])
def test_a_packing_that_cannot_be_asked_for(n: int, d: float) -> None:
    with pytest.raises(ValueError):
        packing(n, d)
