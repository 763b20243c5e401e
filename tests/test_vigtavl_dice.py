"""Vigtavl's dice as the players' input: every dice clause (close combat, ranged, artillery, breach, battle by
movement) with GIVEN faces on a tiny board, the exact numbers it rules, and the roll it waits for when a face is
missing (no generator: nobody rolls for the players)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rules.dice import RollError
from rules.engine import Action, Outcome, find_game
from rules.vigtavl.judge import build_position
from tests.vigtavl_positions import act, board, judge, judge_given, scenario, unit
from webui.cli import main

GAME = find_game("vigtavl")
CAMP = [((2, -2), "encampment", "red")]  # red needs a development to hold prisoners
CAV_ARCHER = [unit(10, "cavalry", "red", -1, 0), unit(20, "archer", "blue", 0, 0)]  # 3 dice against 2


def numbers(ans: dict, rule: str) -> dict:
    return next(v for v in ans["verdicts"] if v["rule"] == rule)["numbers"]


def attack(rolls: list[int], units: list[dict] = CAV_ARCHER, **params: object) -> dict:
    return judge_given(scenario(units, devs=CAMP, action=act("attack", 10, target=20, rolls=rolls, **params)))


# ------------------------------------------------------------------------------------------ close combat


def test_close_combat_attacker_wins_with_the_given_faces() -> None:
    ans = attack([6, 2, 2, 3, 5])
    n = numbers(ans, "vigtavl.combat.close")
    assert (n["attack_dice"], n["defend_dice"]) == (3, 2)
    assert n["attacker_rolls"] == [[6, 2, 2]] and n["defender_rolls"] == [[3, 5]]
    assert (n["attacker_high"], n["defender_high"], n["winner"], n["rerolls"]) == (6, 5, "attacker", 0)
    assert ans["after"]["units"]["20"]["captor"] == "red" and ans["after"]["units"]["20"]["hex"] == [2, -2]
    assert ans["after"]["tokens"] == {"red": 2, "blue": 0}  # Battle: the archer's value
    # the attacker's dice, then the defender's, rolled by blue; both given by the players
    assert [(r["what"], r["side"], r["faces"], r["by"]) for r in ans["rolls"]] == [
        ("Cavalry 10's attack on Archer 20", None, [6, 2, 2], "players"),
        ("Archer 20's defence against Cavalry 10", "blue", [3, 5], "players")]


def test_close_combat_defender_wins_and_nothing_is_captured() -> None:
    ans = attack([1, 2, 3, 4, 1])
    n = numbers(ans, "vigtavl.combat.close")
    assert (n["attacker_high"], n["defender_high"], n["winner"]) == (3, 4, "defender")
    assert ans["after"]["units"]["20"]["captor"] is None and ans["after"]["tokens"] == {"red": 0, "blue": 0}


def test_a_tie_asks_both_players_again_then_the_re_roll_decides() -> None:
    first = attack([5, 1, 1, 5, 2])
    assert first["outcome"] == "waiting" and first["after"]["units"]["20"]["captor"] is None
    pending = first["pending"]
    assert (pending["count"], pending["sides"], pending["side"], pending["given"]) == (3, 6, None, [5, 1, 1, 5, 2])
    assert pending["sentence"] == ("roll 3 d6 for Cavalry 10's attack on Archer 20, re-roll 1 after a tie; "
                                   "highest die against blue's highest wins, a tie is re-rolled")
    second = attack([5, 1, 1, 5, 2, 2, 2, 2])
    assert second["pending"]["side"] == "blue" and second["pending"]["count"] == 2
    assert "Archer 20's defence against Cavalry 10, re-roll 1 after a tie" in second["pending"]["sentence"]
    done = attack([5, 1, 1, 5, 2, 2, 2, 2, 3, 1])
    n = numbers(done, "vigtavl.combat.close")
    assert n["attacker_rolls"] == [[5, 1, 1], [2, 2, 2]] and n["defender_rolls"] == [[5, 2], [3, 1]]
    assert (n["rerolls"], n["attacker_high"], n["defender_high"], n["winner"]) == (1, 2, 3, "defender")


def test_moving_into_an_enemy_hex_rolls_the_battle_and_a_loss_retreats() -> None:
    units = [unit(10, "cavalry", "red", -2, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge_given(scenario(units, devs=CAMP, action=act("move", 10, to=[0, 0], rolls=[2, 2, 2, 3])))
    n = numbers(ans, "vigtavl.combat.close")
    assert (n["attack_dice"], n["defend_dice"], n["attacker_high"], n["defender_high"]) == (3, 1, 2, 3)
    assert n["winner"] == "defender" and ans["after"]["units"]["10"]["hex"] == [-2, 0]  # back where it began
    won = judge_given(scenario(units, devs=CAMP, action=act("move", 10, to=[0, 0], rolls=[4, 1, 1, 3])))
    assert won["after"]["units"]["10"]["hex"] == [0, 0] and won["after"]["units"]["20"]["captor"] == "red"


def test_flank_dice_are_rolled_too() -> None:
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "cavalry", "blue", 0, 0)]  # rear: 1 + 3 dice against 3
    ans = judge_given(scenario(units, devs=CAMP, state={"fronts": [{"hex": [0, 0], "dir": 0}]},
                               action=act("attack", 10, target=20, rolls=[1, 1, 6, 1, 5, 5, 5])))
    n = numbers(ans, "vigtavl.combat.close")
    assert (n["attack_dice"], n["defend_dice"], n["flank"], n["winner"]) == (4, 3, "rear", "attacker")
    assert ans["after"]["tokens"]["red"] == 3


def test_overwhelm_takes_no_dice() -> None:
    units = [unit(10, "cavalry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    scn = scenario(units, devs=CAMP, state={"fronts": [{"hex": [0, 0], "dir": 0}]}, action=act("attack", 10, target=20))
    ans = judge_given(scn)
    assert ans["outcome"] == "legal" and ans["rolls"] == [] and ans["after"]["units"]["20"]["captor"] == "red"
    scn["action"]["params"]["rolls"] = [6]
    with pytest.raises(RollError, match="^1 was given but the rules took 0: give only the dice rolled"):
        judge_given(scn)


# ------------------------------------------------------------------------------------------ ranged and artillery


@pytest.mark.parametrize("target,faces,hit_on,hit,reads", [
    ((-1, 0), [4, 3], 3, True, "any 1-3 hits"),
    ((0, 0), [3, 3], 2, False, "any 1 or 2 hits"),
    ((1, 0), [2, 1], 1, True, "a 1 hits"),
])
def test_ranged_accuracy_by_range_with_given_faces(target: tuple[int, int], faces: list[int], hit_on: int, hit: bool,
                                                   reads: str) -> None:
    units = [unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", *target)]
    scn = scenario(units, devs=CAMP, action=act("attack", 10, target=20, mode="ranged"))
    waiting = judge_given(scn)
    assert waiting["pending"]["sentence"] == (f"roll 2 d6 for Archer 10's shot at Infantry 20 (range {4 - hit_on}); "
                                              f"{reads}")
    scn["action"]["params"]["rolls"] = faces
    n = numbers(judge_given(scn), "vigtavl.combat.ranged")
    assert (n["range"], n["hit_on"], n["rolls"], n["hit"]) == (4 - hit_on, hit_on, faces, hit)


def test_given_faces_are_used_even_with_a_seed() -> None:
    """The issue: a scenario given [6, 6] rolled [1, 1] from its seed. The players' faces come first."""
    units = [unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", 0, 0)]
    scn = scenario(units, devs=CAMP, action=act("attack", 10, target=20, rolls=[6, 6]), seed=2)
    ans = judge(scn)
    n = numbers(ans, "vigtavl.combat.ranged")
    assert (n["rolls"], n["hit"]) == ([6, 6], False) and ans["after"]["units"]["20"]["captor"] is None
    seeded = judge(scenario(units, devs=CAMP, action=act("attack", 10, target=20), seed=2))
    assert numbers(seeded, "vigtavl.combat.ranged")["rolls"] == [1, 1]  # roll for us: the seed's faces
    assert [r["by"] for r in seeded["rolls"]] == ["tablesight"]


def test_a_galleon_fires_three_dice_at_sea() -> None:
    units = [unit(10, "galleon", "red", -2, 0), unit(20, "caravel", "blue", 1, 0)]
    ans = judge_given(scenario(units, brd=board("sea"), action=act("attack", 10, target=20, rolls=[2, 2, 1])))
    n = numbers(ans, "vigtavl.combat.ranged")
    assert (n["attack_dice"], n["range"], n["hit_on"], n["hit"]) == (3, 3, 1, True)
    assert ans["after"]["units"]["20"]["sunk_by"] == "red" and ans["after"]["tokens"]["red"] == 1


def test_fire_artillery_names_the_gun_and_the_knight() -> None:
    units = [unit(10, "infantry", "red", -2, 0), unit(11, "artillery", "red", -2, 0), unit(20, "cavalry", "blue", 0, 0)]
    scn = scenario(units, devs=CAMP, action=act("fire_artillery", 10, artillery=11, target=20))
    assert judge_given(scn)["pending"]["sentence"] == ("roll 2 d6 for Artillery 11's shot at Cavalry 20, fired by "
                                                       "Infantry 10 (range 2); any 1 or 2 hits")
    scn["action"]["params"]["rolls"] = [5, 2]
    ans = judge_given(scn)
    n = numbers(ans, "vigtavl.combat.ranged")
    assert (n["attack_dice"], n["rolls"], n["hit"]) == (2, [5, 2], True)
    assert ans["after"]["units"]["20"]["captor"] == "red" and ans["after"]["tokens"]["red"] == 3


# ------------------------------------------------------------------------------------------ breach


def test_breach_with_given_faces() -> None:
    scn = scenario([unit(10, "cavalry", "red", -1, 0)], walls=[((-1, 0, 0), "blue")], action=act("breach", 10, edge=[-1, 0, 0]))
    assert judge_given(scn)["pending"]["sentence"] == ("roll 3 d6 for Cavalry 10's breach of blue's wall between "
                                                       "[-1, 0] and [0, 0]; any 1-3 breaches it")
    scn["action"]["params"]["rolls"] = [4, 5, 6]
    held = judge_given(scn)
    assert held["numbers"] == {"dice": 3, "attempt": 1, "rolls": [4, 5, 6], "breached": False}
    assert held["after"]["walls"] == [{"edge": [-1, 0, 0], "owner": "blue"}]
    scn["action"]["params"]["rolls"] = [6, 6, 3]
    assert judge_given(scn)["after"]["walls"] == []


def test_third_breach_attempt_rolls_two_more_dice() -> None:
    st = {"breach_tries": [{"player": "red", "edge": [-1, 0, 0], "count": 2}]}
    scn = scenario([unit(10, "infantry", "red", -1, 0)], walls=[((-1, 0, 0), "blue")], state=st,
                   action=act("breach", 10, edge=[-1, 0, 0], rolls=[6, 4, 2]))
    assert judge_given(scn)["numbers"] == {"dice": 3, "attempt": 3, "rolls": [6, 4, 2], "breached": True}


# ------------------------------------------------------------------------------------------ waiting and bad faces


def test_no_generator_waits_and_leaves_the_state_as_it_was() -> None:
    state, _ = build_position(GAME, scenario(CAV_ARCHER, devs=CAMP))
    res = GAME.apply(state, {}, Action("attack", 10, {"target": 20}), None)
    assert res.state == state and res.pending is not None and res.rolls == ()
    (v,) = res.verdicts
    assert v.outcome is Outcome.WAITING and v.rule == "dice.pending" and v.unit == 10
    assert v.message == ("Waiting for the dice: roll 3 d6 for Cavalry 10's attack on Archer 20; "
                         "highest die against blue's highest wins, a tie is re-rolled.")
    defence = GAME.apply(state, {}, Action("attack", 10, {"target": 20, "rolls": [6, 2, 2]}), None)
    assert defence.state == state and defence.pending is not None
    assert (defence.pending.side, defence.pending.count, defence.pending.unit, defence.pending.given) == ("blue", 2, 20, (6, 2, 2))
    assert defence.pending.sentence().startswith("blue rolls 2 d6 for Archer 20's defence against Cavalry 10")


def test_roll_for_us_rolls_what_the_players_did_not_give() -> None:
    state, _ = build_position(GAME, scenario(CAV_ARCHER, devs=CAMP))
    res = GAME.apply(state, {}, Action("attack", 10, {"target": 20, "rolls": [6, 6, 6]}), random.Random(1))
    assert [(r.faces, r.by) for r in res.rolls][0] == ((6, 6, 6), "players")
    rng = random.Random(1)
    assert res.rolls[1].by == "tablesight" and res.rolls[1].faces == (rng.randint(1, 6), rng.randint(1, 6))


@pytest.mark.parametrize("rolls,sentence", [
    ([6, 2], "Cavalry 10's attack on Archer 20 takes 3 d6; 2 were given."),
    ([6, 2, 2, 7, 1], "A d6 shows 1 to 6; the roll for Archer 20's defence against Cavalry 10 was given 7."),
    ([6, 2, 2, 0, 1], "A d6 shows 1 to 6; the roll for Archer 20's defence against Cavalry 10 was given 0."),
    ([6, 2, 2, 3, 5, 4], "6 were given but the rules took 5: give only the dice rolled for this action."),
])
def test_faces_that_do_not_fit_are_one_sentence(rolls: list[int], sentence: str) -> None:
    with pytest.raises(RollError) as err:
        attack(rolls)
    assert str(err.value) == sentence


def test_the_judge_command_says_a_wrong_count_in_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scn = scenario(CAV_ARCHER, devs=CAMP, action=act("attack", 10, target=20, rolls=[6, 2]))
    del scn["seed"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scn))
    assert main(["judge", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert err == "Cavalry 10's attack on Archer 20 takes 3 d6; 2 were given.\n"
    scn["action"]["params"]["rolls"] = []
    path.write_text(json.dumps(scn))
    assert main(["judge", str(path), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["outcome"] == "waiting" and answer["pending"]["count"] == 3 and answer["after"]["tokens"]["red"] == 0


def test_legal_actions_roll_nothing() -> None:
    state, _ = build_position(GAME, scenario(CAV_ARCHER, devs=CAMP))
    attacks = [a for a in GAME.legal_actions(state, {}) if a.kind == "attack" and a.unit == 10]
    assert attacks and all("rolls" not in a.params for a in attacks)


def test_an_illegal_attack_takes_no_dice() -> None:
    units = [unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", 0, 0)]
    scn = scenario(units, brd=board(m1_0="mountain"), devs=CAMP, action=act("attack", 10, target=20, rolls=[1, 1]))
    ans = judge_given(scn)
    assert ans["outcome"] == "illegal" and ans["numbers"]["blocked_by"] == ["mountain at [-1, 0]"] and ans["rolls"] == []


def test_the_dice_are_not_part_of_the_action_in_words() -> None:
    names = {10: "Red cavalry", 20: "Blue archer"}.__getitem__
    with_dice = GAME.describe(Action("attack", 10, {"target": 20, "mode": "close", "rolls": [6, 2, 2, 3, 5]}), names)
    assert with_dice == GAME.describe(Action("attack", 10, {"target": 20, "mode": "close"}), names)
    assert with_dice == "Red cavalry attacks Blue archer in close combat"
