"""Valknut clauses found wrong by a rule-text audit, each on a tiny board (bases of 25.4 mm: 0.5" radius).

- Move: a climb given as "path" waypoints ends on the floor it climbed to, not back on the table.
- The 1" engagement zone, melee range and base overlap are measured as a tape would between the bases: a
  unit on a ruin floor 3" up is not within 1" of the enemy on the ground beneath it.
- Pick up Runestone from an empty Runic Stockpile is an illegal action, not malformed input.
"""

from __future__ import annotations

import random
from typing import Any

from rules.engine import find_game

GAME = find_game("valknut")
FAR = {"tag": 29, "owner": "blue", "at": [28, 20], "base_mm": 25.4}
STEP = {"pieces": [{"name": "step", "kind": ["elevated"], "polygon": [[8, 3], [10, 3], [10, 7], [8, 7]],
                    "height_in": 1, "climbable": True}]}
RUIN = {"pieces": [{"name": "ruin", "kind": ["elevated"], "polygon": [[7, 3], [12, 3], [12, 8], [7, 8]],
                    "height_in": 3, "climbable": True}]}


def unit(tag: int, owner: str, at: list[float], **kw: Any) -> dict[str, Any]:
    return {"tag": tag, "owner": owner, "at": at, "base_mm": 25.4} | kw


def judge(units: list[dict[str, Any]], kind: str, tag: int, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    scenario = {"game": "valknut", "seed": 1, "units": units,
                "action": {"kind": kind, "unit": tag, "params": params}} | extra
    return GAME.judge(scenario, random.Random(1))


def rules_of(ans: dict[str, Any]) -> dict[str, str]:
    return {v["rule"]: v["outcome"] for v in ans["verdicts"]}


def test_a_climb_by_waypoints_ends_on_the_floor_it_reached() -> None:
    # 3" to the foot of a 1" step, 1" up (x2), 0.5" across its top: 3 + 2 + 0.5 = 5.5" of 6".
    ans = judge([unit(12, "red", [5, 5]), FAR], "move", 12,
                {"path": [[8, 5, 0], [8, 5, 1]], "to": [8.5, 5]}, terrain=STEP)
    assert ans["outcome"] == "legal", ans["verdicts"]
    assert ans["numbers"]["length_in"] == 5.5
    assert ans["numbers"]["vertical_in"] == 1.0


def test_a_climb_up_the_face_counts_once() -> None:
    # The base touches the step's face at x = 7.5 and climbs 1" there, as in the Valyr scenarios:
    # 2.5" across, 1" up (x2), 1" across the top = 5.5".
    ans = judge([unit(12, "red", [5, 5]), FAR], "move", 12,
                {"path": [[7.5, 5, 0], [7.5, 5, 1]], "to": [8.5, 5]}, terrain=STEP)
    assert ans["outcome"] == "legal", ans["verdicts"]
    assert ans["numbers"]["length_in"] == 5.5
    assert ans["numbers"]["vertical_in"] == 1.0
    assert ans["units"]["12"]["at"] == [8.5, 5]


def test_a_move_off_a_floor_by_waypoints_comes_down() -> None:
    # From the step's top to its edge, down its face to the table, then on: 1" + 1" down (x2) + 1.5" = 4.5".
    ans = judge([unit(12, "red", [9, 5], z=1), FAR], "move", 12,
                {"path": [[10, 5, 1], [10, 5, 0]], "to": [11.5, 5]}, terrain=STEP)
    assert ans["outcome"] == "legal", ans["verdicts"]
    assert ans["numbers"]["length_in"] == 4.5


def test_a_unit_on_a_floor_3_inches_up_is_not_within_1_inch_of_the_enemy_below() -> None:
    ans = judge([unit(12, "red", [9, 5], z=3), unit(20, "blue", [9, 5.2])], "move", 12, {"to": [10, 6]},
                terrain=RUIN)
    assert rules_of(ans)["valknut.move.engagement"] == "legal", ans["verdicts"]
    assert ans["outcome"] == "legal", ans["verdicts"]


def test_melee_across_floors_measures_the_vertical_gap() -> None:
    ans = judge([unit(12, "red", [9, 5], z=3), unit(20, "blue", [10, 5])], "attack", 12,
                {"target": 20, "mode": "melee"}, terrain=RUIN)
    assert rules_of(ans)["valknut.attack.melee_range"] == "illegal"
    assert ans["numbers"]["gap_in"] == 3.0


def test_bases_touching_with_a_1_inch_drop_are_exactly_within_1_inch() -> None:
    ans = judge([unit(12, "red", [9.5, 5], z=1), unit(20, "blue", [10.5, 5])], "attack", 12,
                {"target": 20, "rolls": [4]}, terrain=STEP)
    assert rules_of(ans)["valknut.attack.melee_range"] == "legal"
    assert ans["numbers"]["gap_in"] == 1.0


def test_bases_on_different_floors_do_not_overlap() -> None:
    ans = judge([unit(12, "red", [9, 3.5], z=3), unit(13, "red", [9, 5.2]), FAR], "move", 12, {"to": [9, 5]},
                terrain=RUIN)
    assert "valknut.bases.overlap" not in rules_of(ans), ans["verdicts"]
    assert ans["outcome"] == "legal", ans["verdicts"]


def test_picking_up_from_an_empty_stockpile_is_illegal() -> None:
    ans = judge([unit(12, "red", [5, 5]), FAR], "pick_up_runestone", 12, {"stockpile": 0},
                state={"stockpiles": [{"at": [6.2, 5], "stones": 0}]})
    assert ans["outcome"] == "illegal"
    v = ans["verdicts"][0]
    assert v["rule"] == "valknut.runestone.reach" and "empty" in v["message"]
