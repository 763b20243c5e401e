"""Hex maths against the values in Red Blob Games' implementation guide and its test suite."""

from __future__ import annotations

import math

import pytest

from rules.hexgrid import (
    DIRECTIONS,
    Corner,
    Edge,
    FractionalHex,
    Hex,
    Layout,
    corners_of,
    direction_between,
    distance,
    edges_of,
    hex_line,
    hexagon,
    neighbor,
    neighbors,
    opposite,
    ray,
)


def test_hex_arithmetic_and_s() -> None:
    assert Hex(1, -3) + Hex(3, -7) == Hex(4, -10)
    assert Hex(1, -3) - Hex(3, -7) == Hex(-2, 4)
    assert Hex(1, -3) * 2 == Hex(2, -6)
    assert Hex(3, -7).s == 4


def test_directions_are_red_blobs_order() -> None:
    assert (Hex(1, 0), Hex(1, -1), Hex(0, -1), Hex(-1, 0), Hex(-1, 1), Hex(0, 1)) == DIRECTIONS
    assert all(DIRECTIONS[d] + DIRECTIONS[opposite(d)] == Hex(0, 0) for d in range(6))


def test_neighbor_red_blob_value() -> None:
    # Red Blob: hex_neighbor(Hex(1, -2, 1), 2) == Hex(1, -3, 2)
    assert neighbor(Hex(1, -2), 2) == Hex(1, -3)
    assert len(set(neighbors(Hex(5, 5)))) == 6
    assert direction_between(Hex(0, 0), Hex(0, 1)) == 5
    assert direction_between(Hex(0, 0), Hex(2, 0)) is None


def test_distance_red_blob_value() -> None:
    # Red Blob: hex_distance(Hex(3, -7, 4), Hex(0, 0, 0)) == 7
    assert distance(Hex(3, -7), Hex(0, 0)) == 7
    assert distance(Hex(-2, 2), Hex(2, -1)) == 4


def test_round_red_blob_values() -> None:
    a, b, c = Hex(0, 0), Hex(1, -1), Hex(0, -1)
    fa, fb = FractionalHex(0, 0), FractionalHex(1, -1)
    assert FractionalHex(0, 0).lerp(FractionalHex(10, -20), 0.5).round() == Hex(5, -10)
    assert fa.lerp(fb, 0.499).round() == a
    assert fa.lerp(fb, 0.501).round() == b
    assert FractionalHex(a.q * 0.4 + b.q * 0.3 + c.q * 0.3, a.r * 0.4 + b.r * 0.3 + c.r * 0.3).round() == a
    assert FractionalHex(a.q * 0.3 + b.q * 0.3 + c.q * 0.4, a.r * 0.3 + b.r * 0.3 + c.r * 0.4).round() == c


def test_hex_line_red_blob_value() -> None:
    # Red Blob: hex_linedraw(Hex(0,0,0), Hex(1,-5,4)) == [(0,0),(0,-1),(0,-2),(1,-3),(1,-4),(1,-5)]
    assert hex_line(Hex(0, 0), Hex(1, -5)) == (Hex(0, 0), Hex(0, -1), Hex(0, -2), Hex(1, -3), Hex(1, -4), Hex(1, -5))


def test_hex_line_along_an_edge_nudges_both_ways() -> None:
    # (0,0) -> (2,-1) runs exactly between (1,0) and (1,-1): each nudge picks one side, consistently
    one, other = hex_line(Hex(0, 0), Hex(2, -1)), hex_line(Hex(0, 0), Hex(2, -1), nudge_sign=-1)
    assert {one[1], other[1]} == {Hex(1, 0), Hex(1, -1)}
    assert len(one) == len(other) == 3


def test_ray_is_a_straight_line_through_an_edge_direction() -> None:
    assert ray(Hex(0, 0), 1, 3) == (Hex(1, -1), Hex(2, -2), Hex(3, -3))
    assert ray(Hex(2, 0), 3, 2) == hex_line(Hex(2, 0), Hex(0, 0))[1:]


def test_hexagon_of_radius_2_has_19_cells() -> None:
    cells = hexagon(2)
    assert len(cells) == 19 and all(distance(h, Hex(0, 0)) <= 2 for h in cells)


def test_edge_is_the_same_from_both_sides() -> None:
    h = Hex(2, -1)
    for d in range(6):
        assert Edge(h, d) == Edge(neighbor(h, d), opposite(d))
        assert set(Edge(h, d).hexes) == {h, neighbor(h, d)}
        assert Edge(h, d).dir in (0, 1, 2)
    assert len(set(edges_of(h))) == 6
    assert hash(Edge(h, 4)) == hash(Edge(neighbor(h, 4), 1))


def test_corner_is_the_same_from_its_three_hexes() -> None:
    h = Hex(0, 0)
    for c in range(6):
        corner = Corner(h, c)
        trio = {h, neighbor(h, c), neighbor(h, c + 1)}
        assert set(corner.hexes) == trio
        for other in trio:
            assert corner in corners_of(other)
    # the whole grid has two corners per hex: a 19-cell board's 19 hexes name 19*6/3 + border corners
    assert len({c for x in hexagon(2) for c in corners_of(x)}) == 54


def test_layout_pointy_red_blob_positions() -> None:
    lay = Layout(size_in=1.0, orientation="pointy")
    x, y = lay.to_table(Hex(1, 0))
    assert (x, y) == pytest.approx((math.sqrt(3), 0.0))
    x, y = lay.to_table(Hex(0, 1))  # Red Blob (y down): (sqrt3/2, 1.5); table frame is y up
    assert (x, y) == pytest.approx((math.sqrt(3) / 2, -1.5))


def test_layout_flat_positions_and_direction_names() -> None:
    lay = Layout(size_in=2.0, orientation="flat", origin=(10.0, 5.0))
    assert lay.to_table(Hex(0, -1)) == pytest.approx((10.0, 5.0 + 2 * math.sqrt(3)))  # direction 2 is north
    assert lay.to_table(Hex(1, 0)) == pytest.approx((13.0, 5.0 - math.sqrt(3)))  # direction 0 is south-east
    for d in range(6):
        x, y = lay.to_table(neighbor(Hex(0, 0), d))
        assert math.degrees(math.atan2(y - 5.0, x - 10.0)) % 360 == pytest.approx(lay.direction_angle_deg(d))


@pytest.mark.parametrize("orientation", ["pointy", "flat"])
@pytest.mark.parametrize("rotation", [0.0, 17.0, -90.0])
def test_layout_round_trip_and_rotation(orientation: str, rotation: float) -> None:
    lay = Layout(size_in=1.25, orientation=orientation, origin=(3.0, -2.0), rotation_deg=rotation)
    for h in hexagon(3):
        x, y = lay.to_table(h)
        back, off = lay.from_table(x, y)
        assert back == h and off == pytest.approx(0.0, abs=1e-9)
    # rotation turns every centre about the origin by the same angle
    plain = Layout(size_in=1.25, orientation=orientation, origin=(3.0, -2.0))
    for h in (Hex(1, 0), Hex(-2, 1)):
        px, py = plain.to_table(h)
        rx, ry = lay.to_table(h)
        a0 = math.atan2(py + 2.0, px - 3.0)
        a1 = math.atan2(ry + 2.0, rx - 3.0)
        assert math.degrees(a1 - a0) % 360 == pytest.approx(rotation % 360)


def test_layout_polygon_corners_lie_at_size_from_the_centre() -> None:
    lay = Layout(size_in=1.5, orientation="flat")
    poly = lay.polygon(Hex(0, 0))
    assert all(math.hypot(x, y) == pytest.approx(1.5) for x, y in poly)
    assert poly[0] == pytest.approx((1.5, 0.0))  # flat: corner 0 points east
    # corner 0 is shared with the neighbours in directions 0 and 1
    for other in (neighbor(Hex(0, 0), 0), neighbor(Hex(0, 0), 1)):
        assert any(math.dist(poly[0], p) < 1e-9 for p in lay.polygon(other))
    assert lay.corner_point(Corner(Hex(0, 0), 0)) == pytest.approx(poly[0])
    a, b = lay.edge_segment(Edge(Hex(0, 0), 2))  # the north edge runs between corners 1 and 2
    assert {tuple(round(v, 9) for v in a), tuple(round(v, 9) for v in b)} == {
        tuple(round(v, 9) for v in poly[1]),
        tuple(round(v, 9) for v in poly[2]),
    }


def test_from_table_reports_offset_and_astride() -> None:
    lay = Layout(size_in=1.0, orientation="pointy")
    inr = lay.inradius_in
    h, off = lay.from_table(0.2, 0.1)
    assert h == Hex(0, 0) and off == pytest.approx(math.hypot(0.2, 0.1))
    # a point just inside the east edge: clearance ~0.01", a 0.3" base there is astride two cells
    assert lay.edge_clearance(inr - 0.01, 0.0) == pytest.approx(0.01)
    assert lay.astride(inr - 0.01, 0.0, 0.3)
    assert not lay.astride(0.0, 0.0, 0.3)
    assert lay.edge_clearance(0.0, 0.0) == pytest.approx(inr)
    # across the edge the point belongs to the east neighbour
    assert lay.from_table(inr + 0.01, 0.0)[0] == Hex(1, 0)
