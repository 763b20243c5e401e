"""Hex Skirmish: scenarios from a clause-by-clause audit against the Movement and Engagement Rules (seed 002).

Each test is one judge scenario on a tiny board: Move points, water stops, climbing exactly Height and
Height - 1, the fall damage thresholds (Height, 10 and 20 levels), disengagement, Flying/Leaping and Water
Ignore, and the malformed-but-plausible inputs a scenario author writes (a figure on a cell off the board).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from rules.engine import ScenarioError, find_game

CARDS = [
    {"name": "Knight", "life": 4, "move": 5, "range": 1, "attack": 3, "defense": 4, "height": 5, "abilities": []},
    {"name": "Hawk", "life": 3, "move": 5, "range": 1, "attack": 2, "defense": 2, "height": 6,
     "abilities": ["Flying/Leaping"]},
    {"name": "Frog", "life": 3, "move": 5, "range": 1, "attack": 2, "defense": 2, "height": 4,
     "abilities": ["Water Ignore"]},
]
FAR = {"tag": 90, "owner": "blue", "card": "Knight", "hex": [-3, 3]}


def judge(cells: list[dict[str, Any]], units: list[dict[str, Any]], action: dict[str, Any], seed: int = 1) -> dict[str, Any]:
    scenario = {"game": "hex_skirmish", "seed": seed, "cards": CARDS, "units": units, "action": action,
                "board": {"layout": {"size_in": 1.0, "orientation": "pointy", "origin": [12, 12]}, "hexagon": 3,
                          "cells": cells}}
    return find_game("hex_skirmish").judge(scenario, random.Random(seed))


def knight(h: list[int], card: str = "Knight", tag: int = 10) -> dict[str, Any]:
    return {"tag": tag, "owner": "red", "card": card, "hex": h}


def move(to: list[int] | None = None, path: list[list[int]] | None = None) -> dict[str, Any]:
    return {"kind": "move", "unit": 10, "params": {"to": to} if path is None else {"path": path}}


def test_climbing_exactly_height_is_refused_and_says_why() -> None:
    ans = judge([{"hex": [0, 0], "elevation": 5}], [knight([-1, 0]), FAR], move([0, 0]))
    assert ans["outcome"] == "illegal"
    msg = ans["verdicts"][0]["message"]
    assert "climbs 5 levels" in msg and "Height 5" in msg


def test_climbing_height_minus_one_costs_that_many_points() -> None:
    ans = judge([{"hex": [0, 0], "elevation": 4}], [knight([-1, 0]), FAR], move([0, 0]))
    assert ans["outcome"] == "legal" and ans["numbers"]["cost"] == 4
    over = judge([{"hex": [0, 0], "elevation": 4}, {"hex": [1, 0], "elevation": 4}, {"hex": [2, 0], "elevation": 4}],
                 [knight([-1, 0]), FAR], move(path=[[-1, 0], [0, 0], [1, 0], [2, 0]]))
    assert over["outcome"] == "illegal" and over["numbers"]["cost"] == 6


def test_a_hill_too_high_on_every_side_says_so() -> None:
    cells = [{"hex": [2, 0], "elevation": 7}]
    ans = judge(cells, [knight([-1, 0]), FAR], move([2, 0]))
    assert ans["outcome"] == "illegal"
    assert "Height 5" in ans["verdicts"][0]["message"]


@pytest.mark.parametrize(("drop", "roll"), [(4, None), (5, "1 die"), (9, "1 die"), (10, "3 dice"), (19, "3 dice"),
                                           (20, "d20")])
def test_fall_damage_thresholds(drop: int, roll: str | None) -> None:
    ans = judge([{"hex": [-1, 0], "elevation": drop}], [knight([-1, 0]), FAR], move([0, 0]))
    assert ans["outcome"] == "legal"
    assert [f["roll"] for f in ans["numbers"]["falls"]] == ([roll] if roll else [])


def test_flyer_takes_no_fall_damage_and_ignores_water_and_height() -> None:
    ans = judge([{"hex": [-1, 0], "elevation": 20}], [knight([-1, 0], "Hawk"), FAR], move([0, 0]))
    assert ans["outcome"] == "legal" and ans["numbers"]["falls"] == [] and ans["numbers"]["wounds"] == 0
    over = judge([{"hex": [0, 0], "terrain": "water"}, {"hex": [1, 0], "elevation": 30}],
                 [knight([-1, 0], "Hawk"), {"tag": 20, "owner": "blue", "card": "Knight", "hex": [2, 0]}, FAR],
                 move(path=[[-1, 0], [0, 0], [1, 0], [2, 0], [3, 0]]))
    assert over["outcome"] == "legal" and over["numbers"]["cost"] == 4


def test_water_stops_a_walker_but_not_water_ignore() -> None:
    cells = [{"hex": [0, 0], "terrain": "water"}, {"hex": [1, 0], "terrain": "water"}]
    path = [[-1, 0], [0, 0], [1, 0], [2, 0]]
    assert judge(cells, [knight([-1, 0]), FAR], move(path=path))["outcome"] == "illegal"
    assert judge(cells, [knight([-1, 0], "Frog"), FAR], move(path=path))["outcome"] == "legal"


def test_moving_while_engaged_rolls_one_die_even_for_a_flyer() -> None:
    for card in ("Knight", "Hawk"):
        ans = judge([], [knight([0, 0], card), {"tag": 20, "owner": "blue", "card": "Knight", "hex": [1, 0]}],
                    move([-2, 0]), seed=3)
        dis = [v for v in ans["verdicts"] if v["rule"] == "hex_skirmish.engagement.disengage"]
        assert len(dis) == 1 and len(dis[0]["numbers"]["dice"]) == 1


def test_a_figure_on_a_cell_off_the_board_is_a_scenario_error() -> None:
    with pytest.raises(ScenarioError, match=r"unit 10 stands on \[7, 0\], which is not a cell of the board"):
        judge([], [knight([7, 0]), FAR], move([1, 0]))
