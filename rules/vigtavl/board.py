"""The Vigtavl map: its cells and layout from a scenario's board, the size check of Setup, and where each piece
stands on the table (the centre of its hex, inches). Shared by the game and its judge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.engine import Json, Outcome, Placement, RulesInputError, ScenarioError, UnitId, Verdict
from rules.hexgrid import Hex, Layout, parse_board, parse_layout
from rules.vigtavl.state import VigtavlState, board_cells, hexagon_side, standard_map_side


def positions_of(state: VigtavlState, base_mm: float = 25.0) -> dict[UnitId, Placement]:
    """Each piece on the map at its hex centre (table inches); sunk and unplaced pieces have none."""
    out = {}
    for p in state.pieces:
        h = state.where(p)
        if h is None:
            continue
        x, y = state.layout.to_table(h)
        out[p.id] = Placement(p.id, x, y)
    return out


def scenario_board(obj: Any) -> tuple[tuple[tuple[Hex, str], ...], Layout]:
    if not isinstance(obj, Mapping):
        raise ScenarioError('The Vigtavl scenario needs "board": {"hexagon": N, "default": {"terrain": "sea"}, "cells": [...]}.')
    try:
        board = parse_board(obj, terrains=("land", "sea", "mountain"), where="the Vigtavl board")
        layout = parse_layout(obj.get("layout", {"size_in": 1.0}), "the board's layout")
    except RulesInputError as err:
        raise ScenarioError(str(err)) from None
    return board_cells(board), layout


def map_check(cells: tuple[tuple[Hex, str], ...], players: int) -> Verdict:
    """Setup, Size: is the map a hexagon with the recommended hexes a side for this many players?"""
    want = standard_map_side(players)
    side = hexagon_side(cells)
    counts = {t: sum(1 for _, x in cells if x == t) for t in ("land", "sea", "mountain")}
    nums: dict[str, Json] = {"side": side, "recommended_side": want, "cells": len(cells), **counts}
    if side == want:
        return Verdict("vigtavl.setup.size", Outcome.LEGAL, f"A hexagonal map {side} hexes a side: the recommended size for {players} players.", None, nums)
    what = f"{side} hexes a side" if side else "not a regular hexagon"
    return Verdict("vigtavl.setup.size", Outcome.INFO, f"The map is {what}; the guideline for {players} players is {want} hexes a side "
                 "(players may build the map as they like).", None, nums)
