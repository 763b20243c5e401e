"""The hex board each game plays on (`Game.hex_board`), and where a base sits on it in words: "astride [1, 0] and
[1, -1]" only for a base on the board near a border, "off the board" for one off it. One tiny board per game."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any

from rules.engine import Placement, find_game
from rules.hexgrid import SQRT3, Edge, Hex, Layout, straddle_words
from rules.magni.game import tiles_on_board
from rules.vigtavl.state import Wall
from tests.vigtavl_positions import board, judge, scenario, unit

POINTY = Layout(size_in=1.0, orientation="pointy", origin=(10.0, 10.0))
"""Pointy cells 1" centre to corner: [1, 0] is 1.732" east of [0, 0], the border between them at x = 10.866."""


def _between(lay: Layout, a: Hex, b: Hex, toward_a: float = 0.05) -> tuple[float, float]:
    """A table point on the line between two cells' centres, `toward_a` inches from their border on a's side."""
    (ax, ay), (bx, by) = lay.to_table(a), lay.to_table(b)
    d = math.hypot(bx - ax, by - ay)
    t = 0.5 - toward_a / d
    return ax + (bx - ax) * t, ay + (by - ay) * t


# ------------------------------------------------------------------------------ the words, on a 3-cell board


def test_straddle_words_name_both_cells_the_board_edge_or_off_the_board() -> None:
    cells = {Hex(0, 0), Hex(1, 0), Hex(1, -1)}
    margin = 0.5 * POINTY.inradius_in  # the games' default snap_fraction
    x, y = _between(POINTY, Hex(0, 0), Hex(1, 0))
    assert straddle_words(cells, POINTY, x, y, margin) == "astride [0, 0] and [1, 0]"
    x, y = _between(POINTY, Hex(1, 0), Hex(1, -1))
    assert straddle_words(cells, POINTY, x, y, margin) == "astride [1, 0] and [1, -1]"
    assert straddle_words(cells, POINTY, *POINTY.to_table(Hex(1, 0)), margin) == ""  # the middle of a cell
    # near the rim: on the board in [0, 0], its west neighbour [-1, 0] not on it
    x, y = _between(POINTY, Hex(0, 0), Hex(-1, 0))
    assert straddle_words(cells, POINTY, x, y, margin) == "astride [0, 0] and the board's edge"
    x, y = _between(POINTY, Hex(-1, 0), Hex(0, 0))  # just outside the rim, its base reaching onto [0, 0]
    assert straddle_words(cells, POINTY, x, y, margin) == "astride [0, 0] and the board's edge"
    # far off the board, and near a border there between two cells that are not on it
    assert straddle_words(cells, POINTY, 30.0, 2.0, margin) == "off the board"
    x, y = _between(POINTY, Hex(5, 0), Hex(6, 0))
    assert POINTY.astride(x, y, margin)
    assert straddle_words(cells, POINTY, x, y, margin) == "off the board"


def test_across_is_the_cell_over_the_nearest_border_in_every_direction() -> None:
    for lay in (POINTY, Layout(size_in=1.5, orientation="flat", origin=(3.0, -2.0), rotation_deg=17.0)):
        for h in (Hex(0, 0), Hex(2, -1)):
            for d, step in enumerate((Hex(1, 0), Hex(1, -1), Hex(0, -1), Hex(-1, 0), Hex(-1, 1), Hex(0, 1))):
                x, y = _between(lay, h, h + step, 0.1)
                assert lay.from_table(x, y)[0] == h and lay.across(x, y) == h + step, (lay, h, d)


# ------------------------------------------------------------------------------ Hex Skirmish


def _skirmish(units: list[dict[str, Any]]) -> tuple[Any, dict[int, Placement]]:
    game = find_game("hex_skirmish")
    cards = [{"name": "Walker", "life": 4, "move": 4, "range": 1, "attack": 3, "defense": 3, "height": 5,
              "abilities": []}]
    setup = {"board": {"layout": {"size_in": 1.0, "orientation": "pointy", "origin": [10.0, 10.0]},
                       "cells": [{"hex": [0, 0]}, {"hex": [1, 0], "terrain": "water"}, {"hex": [1, -1], "elevation": 2}]},
             "cards": cards, "units": [{"tag": u["tag"], "owner": u["owner"], "card": "Walker"} for u in units]}
    state = game.new_state(setup)
    return state, {u["tag"]: Placement(u["tag"], *u["at"]) for u in units}


def test_hex_skirmish_says_astride_for_a_figure_on_the_board_and_off_the_board_for_one_off_it() -> None:
    game = find_game("hex_skirmish")
    astride = _between(POINTY, Hex(1, 0), Hex(1, -1))
    state, positions = _skirmish([
        {"tag": 10, "owner": "red", "at": astride},
        {"tag": 11, "owner": "red", "at": POINTY.to_table(Hex(0, 0))},  # the middle of a cell: nothing said
        {"tag": 20, "owner": "blue", "at": (28.0, 3.0)},  # far off the 3-cell board
    ])
    said = {o.unit: o.label for o in game.overlays(state, positions) if o.style == "too-close"}
    assert said == {10: "astride [1, 0] and [1, -1]", 20: "off the board"}
    assert not any(o.style == "section" for o in game.overlays(state, positions))  # terrain is the grid's now


def test_hex_skirmish_judge_names_the_two_hexes() -> None:
    game = find_game("hex_skirmish")
    cards = [{"name": "Walker", "life": 4, "move": 4, "range": 1, "attack": 3, "defense": 3, "height": 5,
              "abilities": []}]
    lay = Layout(size_in=1.0, orientation="pointy")
    x, y = _between(lay, Hex(0, 0), Hex(1, 0))
    ans = game.judge({"board": {"layout": lay.to_json(), "hexagon": 1}, "cards": cards,
                      "units": [{"tag": 10, "owner": "red", "card": "Walker", "at": [x, y]},
                                {"tag": 20, "owner": "blue", "card": "Walker", "hex": [-1, 0]}],
                      "action": {"kind": "move", "unit": 10, "params": {"to": [0, 1]}}}, random.Random(1))
    assert ans["outcome"] == "illegal"
    assert ans["verdicts"][0]["message"].startswith("Tag 10 stands astride [0, 0] and [1, 0] (0.82\" from")


def test_hex_skirmish_board_is_the_states_own() -> None:
    game = find_game("hex_skirmish")
    state, _ = _skirmish([{"tag": 10, "owner": "red", "at": (10.0, 10.0)}])
    laid = game.hex_board(state)
    assert laid is not None
    brd, lay = laid
    assert lay == POINTY and sorted(brd.cells) == [Hex(0, 0), Hex(1, -1), Hex(1, 0)]
    assert brd.terrain(Hex(1, 0)) == "water" and brd.elevation(Hex(1, -1)) == 2 and not brd.edges


# ------------------------------------------------------------------------------ Rise of the Magni


def test_magni_tile_astride_names_both_cells_and_a_tile_off_the_board_is_in_hand() -> None:
    game = find_game("magni")
    state, _ = game.example(random.Random(0))
    lay = state.layout
    x, y = _between(lay, Hex(1, 0), Hex(1, -1))
    tiles, problems = tiles_on_board(state, {10: Placement(10, x, y), 11: Placement(11, 40.0, 40.0)})
    assert tiles == {} and len(problems) == 1
    assert "lies astride two cells, [1, 0] and [1, -1] (" in problems[0].message
    # a tile astride the rim: the other side is not a cell of the 19
    x, y = _between(lay, Hex(2, 0), Hex(3, 0))
    _tiles, problems = tiles_on_board(state, {12: Placement(12, x, y)})
    assert "[2, 0] and the board's edge" in problems[0].message


def test_magni_board_is_the_19_land_cells() -> None:
    game = find_game("magni")
    state, _ = game.example(random.Random(0))
    laid = game.hex_board(state)
    assert laid is not None
    brd, lay = laid
    assert len(brd) == 19 and {c.terrain for c in brd.cells.values()} == {"land"} and lay == state.layout
    assert lay.to_table(Hex(0, 0)) == (12.0, 12.0) and math.isclose(lay.size_in * SQRT3, 2.598, abs_tol=1e-3)
    # the empty cells are the grid's to draw; a tile's cell is highlighted in its owner's colour with its name
    tile = Placement(10, *lay.to_table(Hex(0, 0)))
    shapes = game.overlays(state, {10: tile})
    assert not any(o.style == "section" for o in shapes)
    assert [(o.unit, o.owner, o.label) for o in shapes if o.style == "hex-highlight"] == [(10, "red", "Ember Warden")]


# ------------------------------------------------------------------------------ Vigtavl


def test_vigtavl_base_astride_names_both_cells() -> None:
    brd = {**board("land", 1, **{"1_0": "sea"}), "layout": {"size_in": 1.0, "orientation": "pointy",
                                                            "origin": [10.0, 10.0]}}
    x, y = _between(POINTY, Hex(0, 0), Hex(1, 0), 0.1)
    ans = judge(scenario([unit(10, "infantry", "red", at=[x, y], base_mm=25)], brd=brd,
                         question={"kind": "occupancy", "hex": [0, 0]}))
    assert ans["outcome"] == "too close to call"
    text = ans["verdicts"][0]["message"]
    assert text.startswith("Unit 10's base stands astride [0, 0] and [1, 0] (0.10\" from the border"), text
    # at the rim of the 7-cell board
    x, y = _between(POINTY, Hex(1, 0), Hex(2, 0), 0.1)
    rim = judge(scenario([unit(10, "caravel", "red", at=[x, y], base_mm=25)], brd=brd,
                         question={"kind": "occupancy", "hex": [1, 0]}))
    assert "astride [1, 0] and the board's edge" in rim["verdicts"][0]["message"]


def test_vigtavl_board_has_its_terrain_and_the_walls_built() -> None:
    game = find_game("vigtavl")
    state, _ = game.example(random.Random(0))
    laid = game.hex_board(state)
    assert laid is not None
    brd, lay = laid
    assert len(brd) == 37 and lay == state.layout and not brd.edges
    assert {brd.terrain(h) for h, _t in state.cells} == {t for _h, t in state.cells}
    walled = replace(state, walls=(Wall(Edge(Hex(0, 0), 3), "red"),))
    brd2, _lay = game.hex_board(walled) or (None, None)
    assert brd2 is not None and brd2.edges == {Edge(Hex(-1, 0), 0): "wall"} and brd2.cells == brd.cells


def test_open_tables_have_no_hex_board() -> None:
    for name in ("valknut", "valyr"):
        game = find_game(name)
        state, _ = game.example(random.Random(0))
        assert game.hex_board(state) is None
