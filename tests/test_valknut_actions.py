"""Valknut's Unit Actions, Making an Attack and Life After Death, one rule clause per test on a tiny board.

Bases of 25.4 mm have a 0.5" radius, so gaps are easy to check by hand.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from rules.engine import Action, find_game
from rules.valknut.game import action_from_move_event
from rules.valknut.setup import scenario_state
from rules.valknut.units import PROFILES, to_hit

GAME = find_game("valknut")
FAR = {"tag": 29, "owner": "blue", "at": [28, 20], "base_mm": 25.4}


def unit(tag: int, owner: str, at: list[float] | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"tag": tag, "owner": owner, "base_mm": 25.4}
    if at is not None:
        d["at"] = at
    return d | kw


def judge(units: list[dict[str, Any]], kind: str, tag: int | None = None, seed: int = 1, **extra: Any) -> dict[str, Any]:
    params = extra.pop("params", {})
    scenario = {"game": "valknut", "seed": seed, "units": units, "action": {"kind": kind, "unit": tag, "params": params}}
    scenario |= extra
    return GAME.judge(scenario, random.Random(seed))


def rules_of(ans: dict[str, Any]) -> dict[str, str]:
    return {v["rule"]: v["outcome"] for v in ans["verdicts"]}


def test_unit_statistics_are_the_rule_books() -> None:
    p = PROFILES["soldier"]
    assert (p.hp, p.speed_in, p.armor, p.evasion, p.accuracy, p.damage, p.actions) == (10, 6.0, 0, 1, 1, 2, 2)


def test_move_up_to_speed() -> None:
    ans = judge([unit(12, "red", [5, 5]), FAR], "move", 12, params={"to": [11, 5]})
    assert ans["outcome"] == "legal" and ans["numbers"]["length_in"] == pytest.approx(6.0)


def test_move_beyond_speed_is_illegal_and_says_the_numbers() -> None:
    ans = judge([unit(14, "red", [5, 5]), FAR], "move", 14, params={"to": [11.3, 5], "pm_in": 0.02})
    assert ans["outcome"] == "illegal"
    assert 'Unit 14 moved 6.30" ± 0.02", its Speed 6": illegal.' in [v["message"] for v in ans["verdicts"]]
    assert ans["units"]["14"]["at"] == [5, 5]


def test_move_too_close_to_call_inside_the_pm() -> None:
    ans = judge([unit(12, "red", [5, 5], pm=0.05), FAR], "move", 12, params={"to": [11.03, 5]})
    assert ans["outcome"] == "too close to call"
    assert ans["numbers"]["pm_in"] == pytest.approx(0.0707, abs=1e-3)  # two placements of ± 0.05


def test_move_uses_the_tracker_length_when_given() -> None:
    ans = judge([unit(12, "red", [5, 5]), FAR], "move", 12, params={"to": [10, 5], "length_in": 6.4, "pm_in": 0.03})
    assert ans["outcome"] == "illegal" and ans["numbers"]["length_in"] == pytest.approx(6.4)


def test_move_climbing_counts_double() -> None:
    ruin = {"pieces": [{"name": "ruin", "kind": ["elevated"], "height_in": 1.5, "polygon": [[3, 3], [7, 3], [7, 7], [3, 7]]}]}
    ans = judge([unit(12, "red", [1, 5]), FAR], "move", 12, params={"to": [4, 5, 1.5]}, terrain=ruin)
    assert ans["numbers"]["length_in"] == pytest.approx(3 + 2 * 1.5)
    assert ans["outcome"] == "legal"
    ans = judge([unit(12, "red", [0.6, 5]), FAR], "move", 12, params={"to": [4, 5, 1.5]}, terrain=ruin)
    assert ans["outcome"] == "illegal" and ans["numbers"]["length_in"] == pytest.approx(3.4 + 3)


def test_move_with_a_climbing_path() -> None:
    ruin = {"pieces": [{"name": "ruin", "kind": ["elevated"], "height_in": 1, "polygon": [[3, 3], [7, 3], [7, 7], [3, 7]]}]}
    path = [[3.5, 5, 0], [3.5, 5, 1], [4.5, 5, 1]]
    ans = judge([unit(12, "red", [1, 5]), FAR], "move", 12, params={"to": [4.5, 5], "path": path}, terrain=ruin)
    assert ans["numbers"]["horizontal_in"] == pytest.approx(3.5)
    assert ans["numbers"]["vertical_in"] == pytest.approx(1.0)
    assert ans["numbers"]["length_in"] == pytest.approx(5.5) and ans["outcome"] == "legal"


def test_move_over_unclimbable_terrain_is_illegal() -> None:
    tower = {"pieces": [{"name": "tower", "kind": ["blocking"], "height_in": 0.5, "climbable": False,
                         "polygon": [[3, 0], [3.2, 0], [3.2, 10], [3, 10]]}]}
    ans = judge([unit(12, "red", [1, 5]), FAR], "move", 12, params={"to": [5, 5]}, terrain=tower)
    assert rules_of(ans)["valknut.move.climb"] == "illegal"


def test_move_through_impassable_terrain_is_illegal() -> None:
    chasm = {"pieces": [{"name": "chasm", "kind": ["impassable"], "polygon": [[3, 0], [4, 0], [4, 10], [3, 10]]}]}
    ans = judge([unit(12, "red", [1, 5]), FAR], "move", 12, params={"to": [6, 5]}, terrain=chasm)
    assert rules_of(ans)["valknut.terrain.impassable"] == "illegal"


def test_move_off_the_battlefield_is_illegal() -> None:
    ans = judge([unit(12, "red", [2, 5]), FAR], "move", 12, params={"to": [0.2, 5]})
    assert rules_of(ans)["valknut.battlefield.edge"] == "illegal"


def test_move_within_engagement_zone_is_illegal() -> None:
    ans = judge([unit(12, "red", [5, 5]), unit(20, "blue", [6.9, 5])], "move", 12, params={"to": [3, 5]})
    assert rules_of(ans)["valknut.move.engagement"] == "illegal"
    assert 'Unit 12 is within 1" of an enemy (unit 20, 0.90" ± 0.00") and cannot Move; Disengage instead.' in [
        v["message"] for v in ans["verdicts"]]


def test_move_just_outside_engagement_zone_is_legal() -> None:
    ans = judge([unit(12, "red", [5, 5]), unit(20, "blue", [7.1, 5])], "move", 12, params={"to": [3, 5]})
    assert ans["outcome"] == "legal"


def test_disengage_up_to_3_inches() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5])]
    assert judge(units, "disengage", 12, params={"to": [2, 5]})["outcome"] == "legal"
    over = judge(units, "disengage", 12, params={"to": [1.9, 5]})
    assert over["outcome"] == "illegal" and over["numbers"]["length_in"] == pytest.approx(3.1)


def test_disengage_only_within_1_inch_of_an_enemy() -> None:
    ans = judge([unit(12, "red", [5, 5]), unit(20, "blue", [8, 5])], "disengage", 12, params={"to": [3, 5]})
    assert rules_of(ans)["valknut.disengage.engagement"] == "illegal"


def test_attack_melee_only_within_1_inch() -> None:
    near = judge([unit(12, "red", [5, 5]), unit(20, "blue", [6.9, 5])], "attack", 12,
                 params={"target": 20, "mode": "melee", "rolls": [1]})
    assert near["outcome"] == "legal" and near["numbers"]["gap_in"] == pytest.approx(0.9)
    far = judge([unit(12, "red", [5, 5]), unit(20, "blue", [7.2, 5])], "attack", 12, params={"target": 20, "mode": "melee"})
    assert far["outcome"] == "illegal" and far["numbers"]["gap_in"] == pytest.approx(1.2)


def test_ranged_attack_only_with_no_enemy_within_1_inch() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.9, 5]), unit(21, "blue", [15, 5])]
    ans = judge(units, "attack", 12, params={"target": 21})
    assert rules_of(ans)["valknut.attack.ranged_engaged"] == "illegal"
    units[1]["at"] = [5, 8]
    ans = judge(units, "attack", 12, params={"target": 21, "rolls": [1]})
    assert ans["outcome"] == "legal" and ans["numbers"]["mode"] == "ranged"


def test_ranged_attack_needs_sight_is_our_option() -> None:
    wall = {"pieces": [{"name": "wall", "kind": ["blocking"], "height_in": 3, "polygon": [[9, 0], [10, 0], [10, 10], [9, 10]]}]}
    units = [unit(12, "red", [5, 5]), unit(21, "blue", [15, 5])]
    assert judge(units, "attack", 12, params={"target": 21}, terrain=wall)["outcome"] == "illegal"
    off = judge(units, "attack", 12, params={"target": 21, "rolls": [1]}, terrain=wall,
                state={"options": {"ranged_needs_sight": False}})
    assert off["outcome"] == "legal"


def test_attack_an_ally_is_illegal() -> None:
    ans = judge([unit(12, "red", [5, 5]), unit(13, "red", [6.5, 5]), FAR], "attack", 12, params={"target": 13})
    assert ans["outcome"] == "illegal"


@pytest.mark.parametrize("acc,eva,need", [(3, 1, 2), (5, 1, 2), (2, 1, 3), (1, 1, 4), (1, 2, 5), (1, 3, 6), (0, 4, 6)])
def test_to_hit_table(acc: int, eva: int, need: int) -> None:
    assert to_hit(acc, eva) == need


def test_roll_to_hit_needs_the_number_or_more_and_a_miss_has_no_effect() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5])]
    miss = judge(units, "attack", 12, params={"target": 20, "rolls": [3]})
    assert miss["numbers"]["hit"] is False and miss["units"]["20"]["hp"] == 10
    hit = judge(units, "attack", 12, params={"target": 20, "rolls": [4]})
    assert hit["numbers"]["hit"] is True and hit["units"]["20"]["hp"] == 8


def test_damage_goes_to_armor_before_hp() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 2}), unit(20, "blue", [6.5, 5], armor=3)]
    ans = judge(units, "attack", 12, params={"target": 20, "rolls": [6]})  # damage 4: 3 to Armor, 1 to HP
    assert ans["units"]["20"]["armor"] == 0 and ans["units"]["20"]["hp"] == 9
    assert (ans["numbers"]["armor_absorbed"], ans["numbers"]["hp_lost"]) == (3, 1)


def test_armor_restored_at_the_beginning_of_each_turn() -> None:
    # unit 12 (Bear 2: Armor 2) lost its Armor this turn; blue has activated, so ending 12's activation ends the turn
    state, positions = scenario_state({"units": [unit(12, "red", [5, 5], paths={"bear": 2}, armor=0),
                                                 unit(20, "blue", [20, 5], activated=True)],
                                       "state": {"turn_first": "red"}})
    res = GAME.apply(state, positions, Action("end_activation", 12), random.Random(1))
    assert res.state.turn == 2 and res.state.phase == "turn_start"
    assert res.state.unit(12).armor == 2


def test_killed_unit_is_removed_and_drops_its_runestone() -> None:
    state, positions = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], hp=2, carrying=1, stone_origin=2)]})
    res = GAME.apply(state, positions, Action("attack", 12, {"target": 20, "rolls": [6]}), random.Random(1))
    assert 20 not in res.positions
    dead = res.state.unit(20)
    assert (dead.alive, dead.on_table, dead.hp, dead.carrying, dead.redeploy_target) == (False, False, 10, (), 4)
    assert [(g.x, g.y, g.origin) for g in res.state.ground] == [(6.5, 5.0, 2)]
    assert res.state.kills.of("red") == 1 and res.state.deaths.of("blue") == 1


def _turn_with_dead(unit20: dict[str, Any], rolls: list[int]) -> Any:
    state, positions = scenario_state({"units": [unit(12, "red", [5, 5]), unit20 | {"tag": 20, "owner": "blue", "dead": True}],
                                       "state": {"turn_first": "red"}})
    return GAME.apply(state, positions, Action("end_activation", 12, {"rolls": rolls}), random.Random(1))


def test_redeploy_roll_4_plus_the_first_turn() -> None:
    assert _turn_with_dead({}, [4]).state.unit(20).ready
    failed = _turn_with_dead({}, [3]).state.unit(20)
    assert not failed.ready and failed.redeploy_target == 3


def test_redeploy_roll_target_falls_each_turn_then_guaranteed() -> None:
    assert _turn_with_dead({"redeploy_target": 3}, [3]).state.unit(20).ready
    after = _turn_with_dead({"redeploy_target": 2}, [1]).state.unit(20)
    assert not after.ready and after.redeploy_target == 1
    sure = _turn_with_dead({"redeploy_target": 1}, [])
    assert sure.state.unit(20).ready and "without a roll" in " ".join(v.message for v in sure.verdicts)


def test_redeploy_wholly_within_drop_zone() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", dead=True, ready=True)]
    state = {"drop_zones": {"red": 1, "blue": 6}}
    assert judge(units, "redeploy", 20, params={"to": [25, 15]}, state=state)["outcome"] == "legal"
    assert judge(units, "redeploy", 20, params={"to": [25, 11.2]}, state=state)["outcome"] == "illegal"
    assert judge([unit(12, "red", [5, 5]), unit(20, "blue", dead=True)], "redeploy", 20, params={"to": [25, 15]},
                 state=state)["outcome"] == "illegal"


def test_redeploy_penalty_once_reinforcements_are_depleted() -> None:
    state, positions = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], hp=1)],
                                       "state": {"deaths": {"blue": 3}}})
    res = GAME.apply(state, positions, Action("attack", 12, {"target": 20, "rolls": [6]}), random.Random(1))
    assert res.state.unit(20).penalty_due  # the 4th death with 3 reinforcements
    units = [unit(12, "red", [5, 5]), unit(20, "blue", dead=True, ready=True, penalty_due=True)]
    zones = {"drop_zones": {"red": 1, "blue": 6}}
    assert judge(units, "redeploy", 20, params={"to": [25, 15]}, state=zones)["outcome"] == "illegal"
    ans = judge(units, "redeploy", 20, params={"to": [25, 15], "penalty": "speed"}, state=zones)
    assert ans["outcome"] == "legal" and ans["units"]["20"]["penalties"] == ["speed"]


def test_penalties_reduce_stats_to_a_minimum_of_0() -> None:
    units = [unit(12, "red", [5, 5], penalties=["speed", "speed", "speed", "speed", "damage", "damage", "damage",
                                                "accuracy"]), FAR]
    sc = {"game": "valknut", "units": units, "question": {"kind": "stats", "unit": 12}}
    n = GAME.judge(sc, random.Random(1))["numbers"]
    assert (n["speed_in"], n["damage"], n["accuracy"], n["armor"]) == (0.0, 0, 0, 0)


def test_redeploy_removes_temporary_bonuses() -> None:
    state, positions = scenario_state({
        "units": [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], hp=1, paths={"bear": 1}, marks=1),
                  unit(21, "blue", [20, 5], paths={"raven": 1})],
        "state": {"blessings": [[21, 20, "speed"]]}})
    res = GAME.apply(state, positions, Action("attack", 12, {"target": 20, "rolls": [6, 1, 1]}), random.Random(1))
    dead = res.state.unit(20)
    assert not dead.alive and dead.marks == 0 and res.state.blessings == ()
    assert dead.steps.bear == 1  # the fixed bonuses of its Path steps stay


def test_pick_up_runestone_within_reach() -> None:
    units = [unit(12, "red", [5, 5]), FAR]
    ok = judge(units, "pick_up_runestone", 12, state={"stockpiles": [{"at": [6.4, 5]}]})
    assert ok["outcome"] == "legal" and ok["numbers"]["distance_in"] == pytest.approx(0.9)
    far = judge(units, "pick_up_runestone", 12, state={"stockpiles": [{"at": [6.6, 5]}]})
    assert far["outcome"] == "illegal"
    ground = judge(units, "pick_up_runestone", 12, params={"stone": 0}, state={"ground": [{"at": [5.5, 5], "origin": 4}]})
    assert ground["outcome"] == "legal" and ground["units"]["12"]["carrying"] == 1


def test_pick_up_runestone_one_at_a_time() -> None:
    ans = judge([unit(12, "red", [5, 5], carrying=1), FAR], "pick_up_runestone", 12, state={"stockpiles": [{"at": [6, 5]}]})
    assert rules_of(ans)["valknut.runestone.one_at_a_time"] == "illegal"


def test_carrying_runestone_halves_movement() -> None:
    units = [unit(12, "red", [5, 5], carrying=1), FAR]
    assert judge(units, "move", 12, params={"to": [8, 5]})["outcome"] == "legal"
    assert judge(units, "move", 12, params={"to": [8.2, 5]})["outcome"] == "illegal"


def test_carrying_halves_permanent_bonuses_not_temporary_ones() -> None:
    units = [unit(12, "red", [5, 5], carrying=1, paths={"deer": 1}), unit(13, "red", [8, 5], paths={"raven": 1}), FAR]
    sc = {"game": "valknut", "units": units, "state": {"blessings": [[13, 12, "speed"]]},
          "question": {"kind": "stats", "unit": 12}}
    assert GAME.judge(sc, random.Random(1))["numbers"]["speed_in"] == pytest.approx((6 + 2) / 2 + 2)


def test_actions_two_per_activation_then_the_activation_ends() -> None:
    state, positions = scenario_state({"units": [unit(12, "red", [5, 5]), unit(13, "red", [5, 8]),
                                                 unit(20, "blue", [25, 18])], "state": {"turn_first": "red"}})
    rng = random.Random(1)
    res = GAME.apply(state, positions, Action("move", 12, {"to": [7, 5]}), rng)
    assert res.state.active_unit == 12 and res.state.active_player == "red"
    again = GAME.apply(res.state, res.positions, Action("move", 12, {"to": [8, 5]}), rng)
    assert not again.legal and "valknut.actions.different" in [v.rule for v in again.verdicts]
    other = GAME.apply(res.state, res.positions, Action("move", 13, {"to": [6, 8]}), rng)
    assert not other.legal and "still activating" in other.verdicts[0].message
    res = GAME.apply(res.state, res.positions, Action("attack", 12, {"target": 20, "rolls": [1]}), rng)
    assert res.state.unit(12).activated and res.state.active_player == "blue"


def test_repeated_actions_allowed_when_the_option_says_so() -> None:
    state, positions = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [25, 18])],
                                       "state": {"options": {"distinct_actions": False}}})
    rng = random.Random(1)
    res = GAME.apply(state, positions, Action("move", 12, {"to": [7, 5]}), rng)
    assert GAME.apply(res.state, res.positions, Action("move", 12, {"to": [9, 5]}), rng).legal


def test_action_from_move_event() -> None:
    state, positions = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5]), unit(13, "red", [2, 15])]})
    event = {"type": "move", "frame": 40, "tag": 12, "from_in": [5, 5], "to_in": [2.5, 5], "length_in": 2.5, "pm_in": 0.02}
    act = action_from_move_event(event, state, positions)
    assert act == Action("disengage", 12, {"to": [2.5, 5], "length_in": 2.5, "pm_in": 0.02})
    free = action_from_move_event(event | {"tag": 13, "to_in": [2, 18]}, state, positions)
    assert free.kind == "move"
    res = GAME.apply(state, positions, free, random.Random(1))
    # the tracker's 2.5" is shorter than the 3" between the placements: the longer counts
    assert res.legal and res.verdicts[-1].numbers["length_in"] == pytest.approx(3.0)
    assert res.positions[13].xy == (2.0, 18.0)
