"""Move geometry: path length, climbing (the vertical part), unclimbable pieces and impassable terrain."""

from __future__ import annotations

import pytest

from rules.geometry import crosses_impassable, move_cost, path_length, trace_move
from rules.terrain import TerrainPiece


def piece(name: str, x0: float, y0: float, x1: float, y1: float, kinds: tuple[str, ...], h: float,
          climbable: bool = True) -> TerrainPiece:
    return TerrainPiece(name, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)), frozenset(kinds), h, climbable)


RUIN = piece("ruin", 3, 3, 7, 7, ("elevated", "obscuring"), 3.0)
WALL = piece("wall", 3.9, 0, 4.1, 10, ("blocking",), 1.0)


def test_path_length_sums_the_legs() -> None:
    assert path_length([(0, 0), (3, 4), (3, 10)]) == pytest.approx(11.0)
    assert path_length([(1, 1)]) == 0.0


def test_move_flat_costs_its_length() -> None:
    assert move_cost([(0, 0, 0), (3, 4, 0)], []).value == pytest.approx(5.0)


def test_move_climbing_onto_a_ruin_counts_double() -> None:
    trace = trace_move([(2, 5, 0), (4, 5, 3)], [RUIN])
    assert (trace.horizontal_in, trace.vertical_in, trace.climbed) == (pytest.approx(2.0), pytest.approx(3.0), ("ruin",))
    assert move_cost([(2, 5, 0), (4, 5, 3)], [RUIN], pm=0.02) == pytest.approx(move_cost([(2, 5, 0), (4, 5, 3)], [RUIN], pm=0.02))
    assert move_cost([(2, 5, 0), (4, 5, 3)], [RUIN]).value == pytest.approx(8.0)
    assert move_cost([(2, 5, 0), (4, 5, 3)], [RUIN], climb_factor=1.0).value == pytest.approx(5.0)


def test_move_walking_off_a_ruin_floor_climbs_down() -> None:
    trace = trace_move([(5, 5, 3), (9, 5, 0)], [RUIN])
    assert trace.vertical_in == pytest.approx(3.0)
    assert trace.horizontal_in == pytest.approx(4.0)


def test_move_along_a_ruin_floor_stays_up() -> None:
    assert trace_move([(4, 4, 3), (6, 6, 3)], [RUIN]).vertical_in == pytest.approx(0.0)


def test_move_through_a_ruin_at_ground_level_is_flat() -> None:
    assert trace_move([(1, 5, 0), (9, 5, 0)], [RUIN]).vertical_in == pytest.approx(0.0)


def test_move_straight_over_a_wall_climbs_up_and_down() -> None:
    trace = trace_move([(2, 5, 0), (6, 5, 0)], [WALL])
    assert (trace.vertical_in, trace.climbed) == (pytest.approx(2.0), ("wall",))
    assert trace.cost() == pytest.approx(8.0)


def test_move_over_an_unclimbable_piece_is_reported() -> None:
    tower = piece("tower", 3.9, 0, 4.1, 10, ("blocking",), 5.0, climbable=False)
    assert trace_move([(2, 5, 0), (6, 5, 0)], [tower]).unclimbable == ("tower",)


def test_move_with_a_path_round_a_wall_does_not_climb() -> None:
    trace = trace_move([(2, 5, 0), (2, 11, 0), (6, 11, 0), (6, 5, 0)], [WALL])
    assert trace.vertical_in == 0.0
    assert trace.horizontal_in == pytest.approx(16.0)


def test_crosses_impassable_tests_the_swept_base() -> None:
    pit = piece("pit", 4, 2, 6, 4, ("impassable",), 0.0)
    assert crosses_impassable([(0, 5), (10, 5)], [pit], 0.5) == ()  # passes 1" above it, radius 0.5
    assert crosses_impassable([(0, 4.4), (10, 4.4)], [pit], 0.5) == ("pit",)  # base edge dips 0.1" in
    assert crosses_impassable([(5, 3)], [pit], 0.5) == ("pit",)  # standing on it
