"""The board files shown in docs/hex_boards.md parse, and the errors it quotes are the ones raised."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rules.hexgrid import BoardError, Cell, Edge, Hex, parse_board, parse_layout

DOC = Path(__file__).resolve().parent.parent / "docs" / "hex_boards.md"
BOARDS = [json.loads(b) for b in re.findall(r"```json board\n(.*?)```", DOC.read_text(), re.S)]


def test_doc_shows_two_boards() -> None:
    assert len(BOARDS) == 2


def test_doc_hexagon_board() -> None:
    board = parse_board(BOARDS[0])
    assert len(board) == 19
    assert board.cell(Hex(1, 0)) == Cell("water", 0) and board.cell(Hex(-1, 1)) == Cell("mountain", 3)
    assert board.edges == {Edge(Hex(0, -1), 5): "wall"}
    lay = parse_layout(BOARDS[0]["layout"])
    assert lay.to_table(Hex(0, 0)) == pytest.approx((12.0, 12.0))


def test_doc_cell_list_board() -> None:
    board = parse_board(BOARDS[1])
    assert len(board) == 5 and board.elevation(Hex(0, 1)) == 2


@pytest.mark.parametrize(
    "obj,quoted",
    [
        ({"cells": [{"hex": [q, r]} for q, r in [(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)]]},
         "the board has a hole: cell [0, 0] is missing inside the board's outline; add it."),
        ({"cells": [{"hex": [2, 0], "terrain": "lava"}]},
         "the board, cell [2, 0] has unknown terrain 'lava'; use one of land, mountain, sea, water."),
        ({"cells": [{"hex": [1, 0]}, {"hex": [1, 0]}]}, "the board, cell [1, 0] is listed twice; list every cell once."),
        ({"hexagon": 2, "cells": [{"hex": [5, 0]}]},
         "the board, cell [5, 0] lies outside the hexagon of radius 2; enlarge it or drop the cell."),
    ],
)
def test_doc_quoted_errors(obj: object, quoted: str) -> None:
    assert quoted in DOC.read_text()
    with pytest.raises(BoardError) as err:
        parse_board(obj)
    assert str(err.value) == quoted


def test_doc_quoted_layout_error() -> None:
    with pytest.raises(BoardError) as err:
        parse_layout({"size_in": 1, "orientation": "round"})
    assert str(err.value) == """the board layout: orientation is 'round'; use "pointy" or "flat"."""
