"""Valknut's dice are the players' input: every dice clause on a tiny board with GIVEN faces (exact numbers),
the waiting answer when a roll is missing and nobody rolls for us, and the one-sentence refusals of a roll given
in part, a face out of range and faces left over."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rules.dice import WAITING_RULE, RollError
from rules.engine import Action, Outcome, find_game
from rules.valknut.setup import scenario_state

GAME = find_game("valknut")
FAR = {"tag": 29, "owner": "blue", "at": [28, 20], "base_mm": 25.4}


def unit(tag: int, owner: str, at: list[float] | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"tag": tag, "owner": owner, "base_mm": 25.4}
    if at is not None:
        d["at"] = at
    return d | kw


def apply(units: list[dict[str, Any]], action: Action, state: dict[str, Any] | None = None,
          rng: random.Random | None = None) -> Any:
    st, positions = scenario_state({"units": units, "state": state or {}, "action": action.to_json()})
    return GAME.apply(st, positions, action, rng)


def attack(rolls: list[int], **defender: Any) -> Any:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], **defender)]
    return apply(units, Action("attack", 12, {"target": 20, "rolls": rolls}))


def numbers(res: Any, rule: str) -> dict[str, Any]:
    """The numbers of the last verdict of `rule` (the roll's, after the check's)."""
    return dict([v for v in res.verdicts if v.rule == rule][-1].numbers)


# ------------------------------------------------------------------------------------- each dice clause


def test_to_hit_roll_hits_on_the_number_and_deals_damage() -> None:
    res = attack([4])
    hit = numbers(res, "valknut.attack.roll")
    assert (hit["to_hit"], hit["roll"], hit["hit"]) == (4, 4, True)
    assert numbers(res, "valknut.attack.damage")["hp_lost"] == 2 and res.state.unit(20).hp == 8
    assert [(r.request.clause, r.faces, r.by) for r in res.rolls] == [("valknut.attack.roll", (4,), "players")]


def test_to_hit_roll_below_the_number_misses() -> None:
    res = attack([3])
    assert numbers(res, "valknut.attack.roll")["hit"] is False and res.state.unit(20).hp == 10
    assert not any(v.rule == "valknut.attack.damage" for v in res.verdicts)


def test_wolf_2_miss_still_deals_half_damage_and_the_roll_says_so() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 2}), unit(20, "blue", [6.5, 5])]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [1]}))
    assert res.state.unit(20).hp == 8  # Damage 4, half of it rounded up on a miss
    assert res.rolls[0].request.reads == "4+ hits (Accuracy 1 against Evasion 1); a miss still deals 2 (Path of the Wolf)"


def test_wolf_3_two_attacks_two_rolls() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 3}), unit(20, "blue", [6.5, 5])]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [4, 1]}))
    assert [v.numbers["roll"] for v in res.verdicts if v.rule == "valknut.attack.roll"] == [4, 1]
    assert res.state.unit(20).hp == 10 - 5 - 3  # a hit for 5, a miss for ceil(5 / 2) (Wolf 2)
    assert [r.request.what for r in res.rolls] == [
        "soldier 12's attack on soldier 20 (first of two, Path of the Wolf)",
        "soldier 12's attack on soldier 20 (second of two, Path of the Wolf)"]


def test_bear_1_defender_rolls_a_d6_per_point_and_sixes_ignore() -> None:
    res = attack([4, 6, 2], paths={"bear": 1}, armor=0)
    dmg = numbers(res, "valknut.attack.damage")
    assert dmg["bear_rolls"] == [6, 2] and dmg["ignored"] == 1 and dmg["hp_lost"] == 1
    assert res.state.unit(20).hp == 9
    bear = res.rolls[1].request
    assert (bear.clause, bear.count, bear.side, bear.unit) == ("valknut.path.bear.1", 2, "blue", 20)


def test_wolf_3_strikes_a_unit_disengaging_with_its_owners_roll() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], paths={"wolf": 3})]
    res = apply(units, Action("disengage", 12, {"to": [2.5, 5], "rolls": [6]}))
    strike = numbers(res, "valknut.path.wolf.3")
    assert (strike["to_hit"], strike["roll"], strike["hit"]) == (4, 6, True)
    assert res.state.unit(12).hp == 5 and res.positions[12].x == 2.5  # Damage 5, then it disengages
    assert res.rolls[0].request.side == "blue"
    waiting = apply(units, Action("disengage", 12, {"to": [2.5, 5]}))
    assert waiting.pending.sentence() == ("blue rolls 1 d6 for soldier 20's attack on soldier 12 as it disengages "
                                          "(Path of the Wolf); 4+ hits (Accuracy 1 against Evasion 1); a miss still "
                                          "deals 3 (Path of the Wolf)")


def test_bear_2_restore_rolls_2d6_heals_then_armor() -> None:
    units = [unit(12, "red", [5, 5], paths={"bear": 2}, hp=6, armor=2), unit(13, "red", [8, 5], hp=9), FAR]
    res = apply(units, Action("bear_restore", 12, {"targets": [13, 12], "rolls": [3, 5]}))
    v = numbers(res, "valknut.path.bear.2")
    assert v["rolls"] == [3, 5] and v["extra_armor"] == 3  # 8 points: 1 to unit 13, 4 to unit 12, 3 left
    assert res.state.unit(13).hp == 10 and res.state.unit(12).hp == 10 and res.state.unit(13).armor == 3
    assert res.rolls[0].request.reads == ("the total restores HP to soldier 13, then soldier 12; any excess becomes "
                                          "Armor on soldier 13")


def test_roll_off_for_drop_zones_ties_roll_again() -> None:
    units = [unit(12, "red"), unit(20, "blue")]
    res = apply(units, Action("roll_off", None, {"rolls": [3, 3, 2, 5]}))
    v = numbers(res, "valknut.drop_zones.roll")
    assert (v["red"], v["blue"], v["rounds"], v["higher"]) == (2, 5, [[3, 3], [2, 5]], "blue")
    assert res.state.first_player == "blue" and res.state.phase == "drop_zones"
    assert [(r.request.side, r.faces) for r in res.rolls] == [("red", (3,)), ("blue", (3,)), ("red", (2,)),
                                                              ("blue", (5,))]


def test_roll_off_tie_is_asked_for_again() -> None:
    units = [unit(12, "red"), unit(20, "blue")]
    res = apply(units, Action("roll_off", None, {"rolls": [4, 4]}))
    assert res.pending is not None and res.state.phase == "roll_off" and res.state.first_player is None
    assert res.pending.given == (4, 4) and res.pending.side == "red"
    assert res.pending.sentence() == ("red rolls 1 d6 for the roll-off for the Drop Zones, again after a tie at 4; "
                                      "the higher roll chooses its Drop Zone first")
    blue = apply(units, Action("roll_off", None, {"rolls": [4, 4, 6]})).pending
    assert blue.side == "blue" and blue.given == (4, 4, 6)
    done = apply(units, Action("roll_off", None, {"rolls": [4, 4, 6, 1]}))
    assert done.state.first_player == "red"


def test_initiative_roll_off_at_the_start_of_a_turn() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [25, 18], activated=True)]
    state = {"options": {"initiative": "roll_off"}, "turn_first": "red"}
    res = apply(units, Action("end_activation", 12, {"rolls": [2, 5]}), state)
    v = numbers(res, "valknut.turn.initiative")
    assert (v["red"], v["blue"]) == (2, 5) and res.state.turn_first == "blue" and res.state.turn == 2
    waiting = apply(units, Action("end_activation", 12), state)
    assert waiting.pending.sentence() == ("red rolls 1 d6 for the initiative roll-off for turn 2; the higher roll "
                                          "activates first")
    assert waiting.state.turn == 1


@pytest.mark.parametrize("face,ready,target", [(4, True, 4), (3, False, 3)])
def test_redeploy_roll_at_the_start_of_a_turn_takes_the_players_face(face: int, ready: bool, target: int) -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", dead=True)]
    res = apply(units, Action("end_activation", 12, {"rolls": [face]}), {"drop_zones": {"red": 1, "blue": 6}})
    v = numbers(res, "valknut.redeploy.roll")
    assert (v["roll"], v["target"]) == (face, 4)
    back = res.state.unit(20)
    assert back.ready is ready and back.redeploy_target == target and res.state.turn == 2


def test_redeploy_roll_follows_the_attack_that_ends_the_turn() -> None:
    """The attack's to-hit die first, then the dead unit's return roll of the turn it begins."""
    units = [unit(12, "red", [5, 5], actions_taken=["move"]), unit(20, "blue", [6.5, 5], activated=True),
             unit(21, "blue", dead=True, redeploy_target=2)]
    res = apply(units, Action("attack", 12, {"target": 20, "rolls": [5, 1]}), {"active_unit": 12})
    assert [r.request.clause for r in res.rolls] == ["valknut.attack.roll", "valknut.redeploy.roll"]
    assert res.state.unit(20).hp == 8 and res.state.unit(21).redeploy_target == 1 and res.state.turn == 2


# ------------------------------------------------------------------------------ waiting, refusals, judge


def test_a_missing_roll_waits_and_changes_nothing() -> None:
    units = [unit(12, "red", [5, 5], paths={"wolf": 1}), unit(20, "blue", [6.5, 5], paths={"bear": 1}, armor=0)]
    st, positions = scenario_state({"units": units})
    res = GAME.apply(st, positions, Action("attack", 12, {"target": 20}), None)
    assert res.state is st and dict(res.positions) == dict(positions)
    (v,) = res.verdicts
    assert v.rule == WAITING_RULE and v.outcome is Outcome.WAITING and v.unit == 12
    assert v.message == ("Waiting for the dice: roll 1 d6 for soldier 12's attack on soldier 20; "
                         "4+ hits (Accuracy 1 against Evasion 1).")
    # answered: the to-hit face; then the defender's Bear dice are asked for, the hit's face kept as given
    bear = GAME.apply(st, positions, Action("attack", 12, {"target": 20, "rolls": [5]}), None)
    assert bear.pending is not None and bear.pending.given == (5,) and bear.pending.count == 3 and bear.state is st
    assert bear.pending.sentence() == ("blue rolls 3 d6 for soldier 20's Path of the Bear against 3 damage; "
                                       "each 6 ignores a point of damage")
    done = GAME.apply(st, positions, Action("attack", 12, {"target": 20, "rolls": [5, 6, 1, 2]}), None)
    assert done.pending is None and done.state.unit(20).hp == 8


def test_roll_for_us_rolls_from_the_generator_and_lists_every_die() -> None:
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5])]
    st, positions = scenario_state({"units": units})
    got = GAME.apply(st, positions, Action("attack", 12, {"target": 20}), random.Random(3))
    (rolled,) = got.rolls
    assert rolled.by == "tablesight" and 1 <= rolled.faces[0] <= 6
    assert numbers(got, "valknut.attack.roll")["roll"] == rolled.faces[0]


@pytest.mark.parametrize("rolls,message", [
    ([4, 6], "Soldier 20's Path of the Bear against 2 damage takes 2 d6; 1 was given."),
    ([7], "A d6 shows 1 to 6; the roll for soldier 12's attack on soldier 20 was given 7."),
    ([0], "A d6 shows 1 to 6; the roll for soldier 12's attack on soldier 20 was given 0."),
])
def test_a_roll_given_in_part_or_out_of_range_is_one_sentence(rolls: list[int], message: str) -> None:
    with pytest.raises(RollError) as err:
        attack(rolls, paths={"bear": 1}, armor=0)
    assert str(err.value) == message


def test_faces_left_over_are_refused() -> None:
    with pytest.raises(RollError, match=r"^2 were given but the rules took 1: give only the dice rolled for this "
                                        r"action\.$"):
        attack([4, 4])


def test_an_illegal_action_ignores_its_faces() -> None:
    """Nothing was done, so no die was rolled for it: the answer is the illegal verdict, not a miscount."""
    units = [unit(12, "red", [5, 5]), unit(20, "blue", [15, 5])]
    res = apply(units, Action("attack", 12, {"target": 20, "mode": "melee", "rolls": [4]}))
    assert not res.legal and res.rolls == () and res.state.unit(20).hp == 10


def _scenario(action: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"game": "valknut", "units": [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], hp=2)],
            "action": action, **extra}


def test_judge_without_a_seed_answers_waiting_with_the_roll() -> None:
    ans = GAME.judge(_scenario({"kind": "attack", "unit": 12, "params": {"target": 20}}), None)
    assert ans["outcome"] == "waiting" and ans["verdicts"][0]["rule"] == WAITING_RULE
    assert ans["pending"]["sentence"] == "roll 1 d6 for soldier 12's attack on soldier 20; 4+ hits (Accuracy 1 against Evasion 1)"
    assert (ans["pending"]["count"], ans["pending"]["sides"], ans["pending"]["given"]) == (1, 6, [])
    assert ans["units"]["20"]["hp"] == 2 and ans["winner"] is None


def test_judge_answer_lists_the_rolls_and_the_winner_when_it_ends_the_game() -> None:
    sc = _scenario({"kind": "attack", "unit": 12, "params": {"target": 20, "rolls": [6]}},
                   state={"options": {"win": "kills", "target": 1}})
    ans = GAME.judge(sc, None)
    assert ans["outcome"] == "legal" and ans["winner"] == "red" and ans["phase"] == "over"
    assert ans["rolls"] == [{"sides": 6, "clause": "valknut.attack.roll", "what": "soldier 12's attack on soldier 20",
                             "unit": 12, "side": None, "faces": [6], "by": "players"}]


def test_judge_cli_says_a_miscount_in_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from webui.cli import main

    path = tmp_path / "s.json"
    path.write_text(json.dumps(_scenario({"kind": "attack", "unit": 12, "params": {"target": 20, "rolls": [4, 4]}})))
    assert main(["judge", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert err == "2 were given but the rules took 1: give only the dice rolled for this action.\n"
