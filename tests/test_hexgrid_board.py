"""Board files and movement search on tiny boards."""

from __future__ import annotations

import pytest

from rules.hexgrid import (
    BoardError,
    Cell,
    Edge,
    Hex,
    HexBoard,
    holes,
    parse_board,
    parse_layout,
    reachable,
    shortest_path,
)


def test_parse_board_hexagon_with_restyled_cells() -> None:
    board = parse_board(
        {"hexagon": 1, "cells": [{"hex": [1, 0], "terrain": "water"}, {"hex": [0, 1], "elevation": 3}]}
    )
    assert len(board) == 7
    assert board.cell(Hex(1, 0)) == Cell("water", 0)
    assert board.elevation(Hex(0, 1)) == 3 and board.terrain(Hex(0, 1)) == "land"
    assert len(board.corners()) == 6 and len(board.inner_edges()) == 12


def test_parse_board_cell_list_and_edges() -> None:
    board = parse_board(
        {
            "cells": [{"hex": [0, 0]}, {"hex": [1, 0], "terrain": "sea"}, {"hex": [0, 1], "terrain": "mountain"}],
            "edges": [{"hex": [1, 0], "dir": 3, "kind": "wall"}],
        }
    )
    assert board.edges == {Edge(Hex(0, 0), 0): "wall"}
    assert parse_board(board.to_json()) == board


def test_board_hole_is_refused() -> None:
    cells = [{"hex": [q, r]} for q in range(-1, 2) for r in range(-1, 2) if -2 <= q + r <= 2 and (q, r) != (0, 0)]
    with pytest.raises(BoardError, match=r"has a hole: cell \[0, 0\] is missing"):
        parse_board({"cells": cells})


def test_board_notch_on_the_rim_is_not_a_hole() -> None:
    assert holes([Hex(0, 0), Hex(1, 0), Hex(2, 0), Hex(0, 1), Hex(2, -1)]) == ()


def test_board_unknown_terrain_is_refused() -> None:
    with pytest.raises(BoardError, match=r"cell \[0, 0\] has unknown terrain 'lava'; use one of land, mountain"):
        parse_board({"cells": [{"hex": [0, 0], "terrain": "lava"}]})


def test_board_duplicate_cell_is_refused() -> None:
    with pytest.raises(BoardError, match=r"cell \[1, 0\] is listed twice"):
        parse_board({"cells": [{"hex": [0, 0]}, {"hex": [1, 0]}, {"hex": [1, 0], "terrain": "sea"}]})


@pytest.mark.parametrize(
    "obj,needle",
    [
        ({"cells": []}, "has no cells"),
        ({"cells": [{"hex": [0]}]}, "must be a hex [q, r]"),
        ({"cells": [{"hex": [0, 0], "elevation": -1}]}, "elevation must be a whole number"),
        ({"hexagon": 1, "cells": [{"hex": [5, 0]}]}, "outside the hexagon of radius 1"),
        ({"hexagon": 1, "edges": [{"hex": [1, 0], "dir": 0}]}, "not between two cells"),
        ({"hexagon": 1, "edges": [{"hex": [0, 0], "dir": 7}]}, "direction 0..5"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_board_bad_input_names_the_fault(obj: object, needle: str) -> None:
    with pytest.raises(BoardError, match=None) as err:
        parse_board(obj)
    assert needle in str(err.value)


def test_parse_layout_and_its_errors() -> None:
    lay = parse_layout({"size_in": 1.5, "orientation": "flat", "origin": [4, 5], "rotation_deg": 30})
    assert lay.orientation == "flat" and lay.origin == (4.0, 5.0) and lay.rotation_deg == 30.0
    with pytest.raises(BoardError, match='use "pointy" or "flat"'):
        parse_layout({"size_in": 1, "orientation": "round"})
    with pytest.raises(BoardError, match="more than 0 inches"):
        parse_layout({"size_in": 0})
    with pytest.raises(BoardError, match='no "size_in"'):
        parse_layout({})


def _line_board(*terrains: str) -> HexBoard:
    return HexBoard({Hex(q, 0): Cell(t) for q, t in enumerate(terrains)})


def test_reachable_counts_costs_within_budget() -> None:
    board = HexBoard({h: Cell() for h in [Hex(q, r) for q in range(-3, 4) for r in range(-3, 4)]})

    def cost(a: Hex, b: Hex) -> int | None:
        return 1 if b in board else None

    got = reachable(Hex(0, 0), 2, cost)
    assert len(got) == 19 and got[Hex(0, 0)] == 0 and got[Hex(2, -2)] == 2


def test_reachable_stops_in_a_stopping_cell() -> None:
    board = _line_board("land", "water", "land", "land")

    def cost(a: Hex, b: Hex) -> int | None:
        return 1 if b in board else None

    got = reachable(Hex(0, 0), 5, cost, stops=lambda h: board.terrain(h) == "water")
    assert got == {Hex(0, 0): 0, Hex(1, 0): 1}


def test_shortest_path_goes_round_a_wall_of_impassable_cells() -> None:
    blocked = {Hex(1, -1), Hex(1, 0), Hex(1, 1)}
    board = {Hex(q, r) for q in range(0, 3) for r in range(-2, 3)}

    def cost(a: Hex, b: Hex) -> int | None:
        return None if b in blocked or b not in board else 1

    found = shortest_path(Hex(0, 0), Hex(2, 0), cost)
    assert found is not None
    path, total = found
    assert path[0] == Hex(0, 0) and path[-1] == Hex(2, 0) and not blocked & set(path)
    assert total == len(path) - 1 == 5  # round either end of the three-cell wall
    assert shortest_path(Hex(0, 0), Hex(9, 9), cost) is None
