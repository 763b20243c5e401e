"""The Paths and Path Boons, and Spirits: every step's stat increase and each boon on a tiny board."""

from __future__ import annotations

import random
from typing import Any

import pytest

from rules.engine import Action, find_game
from rules.valknut.setup import scenario_state

GAME = find_game("valknut")
FAR = {"tag": 29, "owner": "blue", "at": [28, 20], "base_mm": 25.4}


def unit(tag: int, owner: str, at: list[float] | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"tag": tag, "owner": owner, "base_mm": 25.4}
    if at is not None:
        d["at"] = at
    return d | kw


def stats(units: list[dict[str, Any]], tag: int, state: dict[str, Any] | None = None) -> dict[str, Any]:
    sc = {"game": "valknut", "units": units, "state": state or {}, "question": {"kind": "stats", "unit": tag}}
    return dict(GAME.judge(sc, random.Random(1))["numbers"])


def apply(units: list[dict[str, Any]], action: Action, state: dict[str, Any] | None = None) -> Any:
    st, positions = scenario_state({"units": units, "state": state or {}})
    return GAME.apply(st, positions, action, random.Random(1))


@pytest.mark.parametrize(
    "path,steps,expected",
    [
        ("bear", 2, {"armor": 2}),
        ("deer", 2, {"speed_in": 10.0, "accuracy": 3}),
        ("raven", 3, {"evasion": 4}),
        ("wolf", 3, {"damage": 5}),
    ],
)
def test_path_stat_increase_each_step(path: str, steps: int, expected: dict[str, Any]) -> None:
    got = stats([unit(12, "red", [5, 5], paths={path: steps}), FAR], 12)
    assert {k: got[k] for k in expected} == expected


def test_path_one_step_each_turn_any_path_progress_kept() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 1}), FAR]
    res = apply(units, Action("choose_path", 12, {"path": "raven"}), {"phase": "turn_start"})
    assert res.legal and res.state.unit(12).steps.wolf == 1 and res.state.unit(12).steps.raven == 1
    again = GAME.apply(res.state, res.positions, Action("choose_path", 12, {"path": "wolf"}), random.Random(1))
    assert not again.legal and "already taken its Step" in again.verdicts[0].message


def test_path_steps_beyond_the_fourth_still_count() -> None:
    assert stats([unit(12, "red", [5, 5], paths={"deer": 5}), FAR], 12)["actions"] == 2 + 2


def test_path_bear_1_sixes_ignore_damage() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], paths={"bear": 1}, armor=0)]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [6, 6, 2]}))
    assert res.state.unit(20).hp == 9  # 2 damage, one 6 ignores 1


def test_path_bear_2_restores_hp_to_allies_within_6_inches() -> None:
    units = [unit(12, "red", [5, 5], paths={"bear": 2}, hp=5), unit(13, "red", [10, 5], hp=7), FAR]
    res = apply(units, Action("bear_restore", 12, {"targets": [13, 12], "rolls": [4, 4]}))
    assert res.state.unit(13).hp == 10 and res.state.unit(12).hp == 10 and res.state.unit(13).armor == 0
    far = units[:1] + [unit(13, "red", [12, 5], hp=7), FAR]  # 6.0" gap is fine, 7 - 1 = 6
    assert apply(far, Action("bear_restore", 12, {"targets": [13], "rolls": [1, 1]})).legal
    too_far = units[:1] + [unit(13, "red", [12.5, 5], hp=7), FAR]
    assert not apply(too_far, Action("bear_restore", 12, {"targets": [13], "rolls": [1, 1]})).legal


def test_path_bear_2_excess_becomes_armor_not_restored_next_turn() -> None:
    units = [unit(12, "red", [5, 5], paths={"bear": 2}, hp=9), unit(20, "blue", [20, 5], activated=True)]
    res = apply(units, Action("bear_restore", 12, {"targets": [12], "rolls": [6, 6]}), {"turn_first": "red"})
    assert res.state.unit(12).hp == 10
    # the activation went on (1 action of 2); ending it ends the turn and Armor falls back to its value, 2
    end = GAME.apply(res.state, res.positions, Action("end_activation", 12), random.Random(1))
    assert res.state.unit(12).armor == 2 + 11 and end.state.unit(12).armor == 2


def test_path_bear_3_aura_gives_allies_the_bear_passives() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], armor=0), unit(21, "blue", [9, 5], paths={"bear": 3})]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [6, 6, 6]}))
    assert res.state.unit(20).hp == 10  # both points ignored on 6s: the Bear 1 passive from 21's aura
    outside = units[:2] + [unit(21, "blue", [14, 5], paths={"bear": 3})]
    assert apply(outside, Action("attack", 12, {"target": 20, "rolls": [6]})).state.unit(20).hp == 8


def test_path_bear_3_stats_cannot_be_lowered_by_the_enemy() -> None:
    units = [unit(12, "red", [5, 5], paths={"deer": 1}), unit(20, "blue", [6.5, 5], paths={"bear": 3}, armor=0)]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [6, 1, 1]}))
    assert res.state.unit(20).marks == 0
    slowed = stats([unit(20, "blue", [6.5, 5], paths={"bear": 3}), unit(13, "red", [2, 2], paths={"raven": 3}), FAR],
                   20, {"blessings": [[13, 20, "slow"]]})
    assert slowed["speed_in"] == 6.0


def test_path_bear_4_no_spill_after_armor_and_regain_hp() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 3}), unit(20, "blue", [6.5, 5], paths={"bear": 4}, armor=1)]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [6, 1, 1, 1, 1, 1, 6, 1, 1, 1, 1, 1]}))
    d = res.state.unit(20)
    # first attack: 5 damage, 1 blocked by Armor, none spills; second: Armor 0, so all 5 reach HP
    assert d.hp == 5 and d.armor == 0
    units = [unit(12, "red", [5, 5], activated=True), unit(20, "blue", [20, 5], paths={"bear": 5}, hp=4)]
    st, positions = scenario_state({"units": units, "state": {"active_player": "blue"}})
    res = GAME.apply(st, positions, Action("end_activation", 20), random.Random(1))
    assert res.state.turn == 2 and res.state.unit(20).hp == 4 + 3  # 2, +1 for the fifth Bear step


def test_path_deer_1_marks_lower_evasion_until_next_turn() -> None:
    units = [unit(12, "red", [5, 5], paths={"deer": 1}), unit(20, "blue", [6.5, 5])]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [6]}))
    assert res.state.unit(20).marks == 1
    assert stats([unit(20, "blue", [6.5, 5], marks=1, paths={"raven": 1}), unit(12, "red", [2, 2])], 20)["evasion"] == 1


def test_path_deer_2_carries_two_runestones_without_penalty() -> None:
    units = [unit(12, "red", [5, 5], paths={"deer": 2}, carrying=1), FAR]
    res = apply(units, Action("pick_up_runestone", 12, {}), {"stockpiles": [{"at": [6, 5]}]})
    assert res.legal and len(res.state.unit(12).carrying) == 2
    assert stats([unit(12, "red", [5, 5], paths={"deer": 2}, carrying=2), FAR], 12)["speed_in"] == 10.0


def test_path_deer_3_damaged_enemy_speed_halved() -> None:
    units = [unit(12, "red", [5, 5], paths={"deer": 3}), unit(20, "blue", [6.5, 5])]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [6]}))
    assert res.state.unit(20).halvings == 1
    assert stats([unit(20, "blue", [6.5, 5], halvings=1), unit(12, "red", [2, 2])], 20)["speed_in"] == 3.0


def test_path_deer_4_extra_action_each_activation() -> None:
    assert stats([unit(12, "red", [5, 5], paths={"deer": 4}), FAR], 12)["actions"] == 3


def test_path_raven_spirit_pool_and_effects_by_step() -> None:
    units = [unit(12, "red", [5, 5], paths={"raven": 1}), unit(13, "red", [8, 5]), FAR]
    assert apply(units, Action("assign_spirits", 12, {"blessings": [[13, "speed"]]})).legal
    assert not apply(units, Action("assign_spirits", 12, {"blessings": [[13, "speed"], [12, "evasion"]]})).legal
    assert not apply(units, Action("assign_spirits", 12, {"blessings": [[13, "armor"]]})).legal


@pytest.mark.parametrize(
    "raven,effect,key,value",
    [
        (1, "speed", "speed_in", 8.0), (1, "evasion", "evasion", 2), (2, "armor", "armor", 1),
        (2, "accuracy", "accuracy", 2), (3, "damage", "damage", 3), (3, "slow", "speed_in", 4.0),
        (4, "speed", "speed_in", 10.0), (4, "accuracy", "accuracy", 3), (4, "slow", "speed_in", 4.0),
    ],
)
def test_path_raven_blessings(raven: int, effect: str, key: str, value: float) -> None:
    units = [unit(13, "red", [8, 5], paths={"raven": raven}), unit(12, "red", [5, 5]), FAR]
    assert stats(units, 12, {"blessings": [[13, 12, effect]]})[key] == value


def test_path_raven_2_blessed_units_climb_1_for_1() -> None:
    units = [unit(13, "red", [8, 5], paths={"raven": 2}), unit(12, "red", [5, 5]), FAR]
    assert stats(units, 12, {"blessings": [[13, 12, "evasion"]]})["climb_factor"] == 1.0
    assert stats(units, 12)["climb_factor"] == 2.0


def test_path_wolf_1_extra_move_to_reach_an_enemy() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 1}), unit(20, "blue", [14.5, 5])]
    to_enemy = apply(units, Action("move", 12, {"to": [13, 5]}))  # 8" ending 0.5" from the enemy: 6 + 3
    assert to_enemy.legal
    elsewhere = apply(units, Action("move", 12, {"to": [5, 13]}))
    assert not elsewhere.legal


def test_path_wolf_2_miss_still_deals_half_damage_rounded_up() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 2}), unit(20, "blue", [6.5, 5])]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [1]}))
    assert res.state.unit(20).hp == 10 - 2  # damage 4, half rounded up


def test_path_wolf_3_attacks_twice_and_strikes_disengaging_units() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 3}), unit(20, "blue", [6.5, 5])]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [6, 1]}))
    assert res.state.unit(20).hp == 10 - 5 - 3  # a hit for 5, then a miss for half of 5 rounded up (Wolf 2)
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], paths={"wolf": 3})]
    res = apply(units, Action("disengage", 12, {"to": [2.5, 5], "rolls": [6]}))
    assert res.legal and res.state.unit(12).hp == 10 - 5 and res.positions[12].x == 2.5


def test_path_wolf_4_once_per_turn_stays_at_1_hp() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 3}), unit(20, "blue", [6.5, 5], paths={"wolf": 4}, hp=3)]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [6, 6]}))
    d = res.state.unit(20)
    assert not d.alive  # the first hit leaves it at 1 HP, the second kills it
    res = apply(units[:1] + [unit(20, "blue", [6.5, 5], paths={"wolf": 5}, hp=3)],
                Action("attack", 12, {"target": 20, "rolls": [6, 6]}))
    assert res.state.unit(20).alive and res.state.unit(20).hp == 1
