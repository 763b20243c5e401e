"""Rise of the Magni: scenarios from a clause-by-clause audit against the rule text (seed 001).

Each test is one judge scenario on a few tiles of the 19-cell board: skirmish ties and rim cells,
fortifications, the Lead fight, placement order, and the malformed-but-plausible inputs a scenario author
writes (a tile off the board, a hero placed twice, a Lead fight after tiles are down).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from rules.engine import ScenarioError, find_game


def hero(tag: int, owner: str, lav: int, cav: int, rav: int, hex: list[int] | None = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"tag": tag, "owner": owner, "name": f"{owner}{tag}", "rating": 1, "lav": lav, "cav": cav,
                           "rav": rav}
    if hex is not None:
        out["hex"] = hex
    out.update(more)
    return out


LEADS = [hero(10, "red", 3, 6, 2, [0, 0]), hero(20, "blue", 2, 5, 4, [0, -1])]


def judge(units: list[dict[str, Any]], **asked: Any) -> dict[str, Any]:
    return find_game("magni").judge({"game": "magni", "units": units, **asked}, random.Random(0))


def test_equal_values_across_an_edge_score_nothing() -> None:
    # red [1, 0] and blue [2, -1]: [2, -1] is NE of [1, 0]; red fights with RAV 2, blue with LAV 2: a draw
    ans = judge(LEADS + [hero(11, "red", 0, 0, 2, [1, 0]), hero(21, "blue", 2, 0, 0, [2, -1])],
                question={"kind": "score"})
    fights = [s for s in ans["skirmishes"] if s["units"] in ([11, 21], [21, 11])]
    assert fights == [{"cells": fights[0]["cells"], "units": fights[0]["units"], "values": [2, 2], "winner": None,
                       "point_to": None, "lead": False}]
    assert ans["score"] == {"red": 0, "blue": 0}


def test_rim_cells_skirmish_and_no_fortification_with_an_off_board_corner() -> None:
    # [2, -2] and [2, -1] are rim cells (N and S of each other); their outer corner has no third cell
    ans = judge(LEADS + [hero(11, "red", 1, 4, 1, [2, -2]), hero(12, "red", 1, 1, 1, [2, -1])],
                question={"kind": "score"})
    assert ans["numbers"]["fortifications"] == 0 and ans["score"] == {"red": 0, "blue": 0}
    ans = judge(LEADS + [hero(11, "red", 1, 4, 1, [2, -2]), hero(21, "blue", 1, 2, 1, [2, -1])],
                question={"kind": "score"})
    assert ans["score"] == {"red": 1, "blue": 0}  # CAV 4 on red's S edge beats CAV 2 on blue's N edge


def test_a_tile_given_on_a_cell_off_the_board_is_a_scenario_error() -> None:
    with pytest.raises(ScenarioError, match=r"unit 11's \"hex\" \[3, 0\] is not on the 19-cell board"):
        judge(LEADS + [hero(11, "red", 1, 1, 1, [3, 0])], question={"kind": "score"})


def test_placing_at_a_table_position_off_the_board_says_so() -> None:
    ans = judge(LEADS + [hero(11, "red", 1, 1, 1)], action={"kind": "place", "unit": 11, "params": {"at": [40, 40]}})
    assert ans["outcome"] == "illegal"
    assert [v["rule"] for v in ans["verdicts"]] == ["magni.place.cell"]
    assert "not on the 19-cell board" in ans["verdicts"][0]["message"]
    assert "astride" not in ans["verdicts"][0]["message"]


def test_placing_a_hero_already_on_the_board_is_illegal_not_a_missing_lead() -> None:
    ans = judge(LEADS + [hero(11, "red", 1, 1, 1, [1, 0]), hero(21, "blue", 1, 1, 1)],
                action={"kind": "place", "unit": 10, "params": {"hex": [-1, 0]}})
    assert ans["outcome"] == "illegal"
    assert any(v["rule"] == "magni.place.hero" and "already on the board" in v["message"] for v in ans["verdicts"])


def test_a_tile_seen_where_it_is_being_placed_is_the_placement() -> None:
    ans = judge(LEADS + [hero(11, "red", 1, 1, 1, [1, 0])], action={"kind": "place", "unit": 11, "params": {"hex": [1, 0]}})
    assert ans["outcome"] == "legal" and ans["numbers"]["placed"] == 3


def test_lead_fight_after_tiles_are_down_is_illegal() -> None:
    ans = judge(LEADS + [hero(11, "red", 1, 1, 1)], action={"kind": "lead", "params": {"red": 11, "blue": 20}})
    assert ans["outcome"] == "illegal"
    assert ans["verdicts"][0]["rule"] == "magni.lead.phase"
