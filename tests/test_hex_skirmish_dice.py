"""Hex Skirmish's dice are the players' input: every dice clause on a tiny board with the faces given, the
waiting answer when a roll is missing, and the one-sentence errors for faces that do not fit the roll."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rules.dice import RollError
from rules.engine import Action, Outcome
from rules.hex_skirmish.game import HexSkirmish, _positions

GAME = HexSkirmish()
CARDS = [
    {"name": "Knight", "life": 4, "move": 4, "range": 1, "attack": 3, "defense": 4, "height": 5,
     "abilities": ["Counterstrike"]},
    {"name": "Archer", "life": 2, "move": 5, "range": 4, "attack": 2, "defense": 1, "height": 5, "abilities": []},
    {"name": "Brute", "life": 4, "move": 4, "range": 1, "attack": 3, "defense": 2, "height": 5, "abilities": []},
]


def scenario(units: list[dict[str, Any]], action: dict[str, Any], rolls: list[int] | None = None,
             cells: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    act = json.loads(json.dumps(action))
    if rolls is not None:
        act.setdefault("params", {})["rolls"] = rolls
    return {"game": "hex_skirmish", "cards": CARDS, "units": units, "action": act,
            "board": {"layout": {"size_in": 1.0, "orientation": "pointy", "origin": [12, 12]}, "hexagon": 3,
                      "cells": cells or []}, **extra}


def judge(units: list[dict[str, Any]], action: dict[str, Any], rolls: list[int] | None = None,
          cells: list[dict[str, Any]] | None = None, rng: random.Random | None = None, **extra: Any) -> dict[str, Any]:
    return json.loads(json.dumps(GAME.judge(scenario(units, action, rolls, cells, **extra), rng)))


def unit(tag: int, owner: str, card: str, q: int, r: int, wounds: int = 0) -> dict[str, Any]:
    return {"tag": tag, "owner": owner, "card": card, "hex": [q, r], "wounds": wounds}


def verdict(answer: dict[str, Any], rule: str) -> dict[str, Any]:
    return next(v for v in answer["verdicts"] if v["rule"] == f"hex_skirmish.{rule}")


ATTACK = {"kind": "attack", "unit": 11, "params": {"target": 20}}
ARCHER_AND_KNIGHT = [unit(11, "red", "Archer", -3, 0), unit(20, "blue", "Knight", 0, 0)]
TWO_PLAYERS = [unit(10, "red", "Brute", 0, 0), unit(20, "blue", "Archer", 3, -3)]


# ------------------------------------------------------------------------------ initiative


def test_initiative_each_player_rolls_a_d20_and_the_highest_goes_first() -> None:
    ans = judge(TWO_PLAYERS, {"kind": "initiative"}, [9, 15])
    assert ans["outcome"] == "info" and ans["state"]["order"] == ["blue", "red"]
    assert ans["numbers"]["rolls"] == [{"red": 9, "blue": 15}]
    assert [(r["side"], r["faces"], r["by"]) for r in ans["rolls"]] == [("red", [9], "players"), ("blue", [15], "players")]


def test_initiative_tied_players_reroll_among_themselves_asked_for_again() -> None:
    three = [*TWO_PLAYERS, unit(30, "green", "Brute", -3, 3)]
    first = judge(three, {"kind": "initiative"}, [12, 5, 12])
    assert first["outcome"] == "waiting"
    pending = first["pending"]
    assert (pending["side"], pending["count"], pending["sides"], pending["given"]) == ("red", 1, 20, [12, 5, 12])
    assert pending["sentence"] == ("red rolls 1 d20 for the round 1 initiative, re-rolled (tied with green at 12); "
                                   "highest goes first; tied players re-roll")
    second = judge(three, {"kind": "initiative"}, [12, 5, 12, 3])
    assert second["pending"]["side"] == "green" and second["pending"]["given"] == [12, 5, 12, 3]
    done = judge(three, {"kind": "initiative"}, [12, 5, 12, 3, 18])
    assert done["state"]["order"] == ["green", "red", "blue"]
    assert done["numbers"]["rolls"] == [{"red": 12, "blue": 5, "green": 12}, {"red": 3, "green": 18}]
    assert done["verdicts"][0]["message"] == ("Round 1 initiative: red 12, blue 5, green 12; re-rolled red 3, green 18; "
                                              "green goes first, then red and blue.")


# ------------------------------------------------------------------------------ attack and defense


def test_attack_dice_then_defense_dice_wound_and_counterstrike_hits_back() -> None:
    """Archer: skull 1 and blank 6 = 1 skull; the Knight's shields 4, 5 (6, 2 are blank and skull) = 2: no wound,
    1 shield beyond the skull hits the Archer back (Life 2 -> 1)."""
    ans = judge(ARCHER_AND_KNIGHT, ATTACK, [1, 6, 4, 5, 6, 2])
    n = ans["numbers"]
    assert (n["attack_dice"], n["defense_dice"], n["skulls"], n["shields"]) == ([1, 6], [4, 5, 6, 2], 1, 2)
    assert (n["wounds"], n["counter_wounds"]) == (0, 1)
    assert ans["figures"] == {"11": {"wounds": 1, "destroyed": False}, "20": {"wounds": 0, "destroyed": False}}
    assert [(r["clause"], r["side"], r["faces"]) for r in ans["rolls"]] == [
        ("hex_skirmish.attack.roll", None, [1, 6]), ("hex_skirmish.attack.defense", "blue", [4, 5, 6, 2])]
    assert "winner" not in ans


def test_skulls_beyond_shields_wound_the_target() -> None:
    units = [unit(10, "red", "Brute", 0, 0), unit(20, "blue", "Knight", 1, 0, wounds=1)]
    ans = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, [1, 2, 3, 4, 6, 6, 6])
    assert (ans["numbers"]["skulls"], ans["numbers"]["shields"], ans["numbers"]["wounds"]) == (3, 1, 2)
    assert ans["figures"]["20"] == {"wounds": 3, "destroyed": False}  # Life 4: 1 left


def test_the_attack_that_destroys_the_last_enemy_names_the_winner() -> None:
    units = [unit(10, "red", "Brute", 0, 0), unit(20, "blue", "Archer", 1, 0)]
    ans = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, [1, 3, 6, 6])
    assert ans["numbers"]["wounds"] == 2 and ans["figures"]["20"]["destroyed"] and ans["winner"] == "red"


def test_the_attack_waits_for_the_attacker_then_for_the_defender() -> None:
    first = judge(ARCHER_AND_KNIGHT, ATTACK)
    assert first["outcome"] == "waiting" and first["figures"]["20"]["wounds"] == 0
    assert first["pending"]["sentence"] == "roll 2 d6 for Archer 11's attack on Knight 20; each 1-3 is a skull"
    assert first["verdicts"][0]["message"] == "Waiting for the dice: " + first["pending"]["sentence"] + "."
    second = judge(ARCHER_AND_KNIGHT, ATTACK, [1, 6])
    assert second["outcome"] == "waiting" and second["pending"]["given"] == [1, 6]
    assert second["pending"]["sentence"] == (
        "blue rolls 4 d6 for Knight 20's defense against Archer 11; each 4-5 is a shield against the 1 skull; "
        "each shield beyond them hits back (Counterstrike)")


# ------------------------------------------------------------------------------ disengagement and falls


@pytest.mark.parametrize("face,wounds", [(2, 1), (5, 0)])
def test_disengagement_rolls_one_attack_die_a_skull_is_a_wound(face: int, wounds: int) -> None:
    units = [unit(10, "red", "Brute", 0, 0), unit(20, "blue", "Archer", 0, 1)]
    ans = judge(units, {"kind": "move", "unit": 10, "params": {"to": [0, -2]}}, [face])
    dis = verdict(ans, "engagement.disengage")
    assert dis["numbers"] == {"dice": [face], "wounds": wounds, "destroyed": False}
    assert ans["figures"]["10"]["wounds"] == wounds and ans["hexes"]["10"] == [0, -2]
    assert ans["rolls"][0]["what"] == "Brute 10's disengagement from Archer 20"


@pytest.mark.parametrize("drop,rolls,wounds", [(7, [3], 1), (7, [4], 0), (10, [1, 4, 2], 2), (12, [6, 5, 4], 0)])
def test_a_fall_rolls_attack_dice_a_wound_per_skull(drop: int, rolls: list[int], wounds: int) -> None:
    cells = [{"hex": [0, 0], "elevation": drop}]
    units = [unit(10, "red", "Brute", 0, 0), unit(20, "blue", "Archer", 3, -3)]
    ans = judge(units, {"kind": "move", "unit": 10, "params": {"to": [1, 0]}}, rolls, cells)
    fall = verdict(ans, "move.fall")
    assert fall["numbers"] == {"drop": drop, "dice": rolls, "wounds": wounds, "destroyed": False}
    assert ans["figures"]["10"]["wounds"] == wounds


@pytest.mark.parametrize("face,destroyed", [(19, False), (20, False), (18, True), (1, True)])
def test_a_fall_of_20_levels_rolls_the_d20_19_or_20_is_fine(face: int, destroyed: bool) -> None:
    cells = [{"hex": [0, 0], "elevation": 22}]
    units = [unit(10, "red", "Brute", 0, 0), unit(20, "blue", "Archer", 3, -3)]
    ans = judge(units, {"kind": "move", "unit": 10, "params": {"to": [1, 0]}}, [face], cells)
    assert verdict(ans, "move.fall")["numbers"] == {"drop": 22, "d20": face, "destroyed": destroyed}
    assert ans["figures"]["10"] == {"wounds": 4 if destroyed else 0, "destroyed": destroyed}
    assert ans.get("winner") == ("blue" if destroyed else None)


def test_disengagement_then_the_fall_take_the_faces_in_that_order() -> None:
    cells = [{"hex": [0, 0], "elevation": 7}]
    units = [unit(10, "red", "Brute", 0, 0), unit(20, "blue", "Archer", -1, 0)]
    move = {"kind": "move", "unit": 10, "params": {"to": [1, 0]}}
    waiting = judge(units, move, [5], cells)
    assert waiting["pending"]["sentence"] == "roll 1 d6 for Brute 10's fall of 7 levels; each skull (1-3) is a wound"
    ans = judge(units, move, [5, 2], cells)
    assert verdict(ans, "engagement.disengage")["numbers"]["wounds"] == 0
    assert verdict(ans, "move.fall")["numbers"]["wounds"] == 1 and ans["numbers"]["wounds"] == 1


# ------------------------------------------------------------------------------ waiting, roll for us, bad faces


def test_a_missing_roll_waits_and_changes_nothing() -> None:
    units = [unit(10, "red", "Brute", 0, 0), unit(20, "blue", "Archer", 1, 0)]
    sc = scenario(units, {"kind": "attack", "unit": 10, "params": {"target": 20}})
    state = GAME.new_state(sc)
    state = GAME.apply(state, _positions(units, state.layout), Action("initiative", None, {"rolls": [20, 1]}), None).state
    positions = _positions(units, state.layout)
    state = GAME.apply(state, positions, Action("choose", 10), None).state
    res = GAME.apply(state, positions, Action("attack", 10, {"target": 20}), None)
    assert res.state is state and res.positions is positions and res.rolls == ()
    assert [v.outcome for v in res.verdicts] == [Outcome.WAITING]
    assert res.verdicts[0].message == "Waiting for the dice: roll 3 d6 for Brute 10's attack on Archer 20; each 1-3 is a skull."
    assert res.pending is not None and (res.pending.count, res.pending.sides, res.pending.unit) == (3, 6, 10)


def test_roll_for_us_rolls_every_die_from_the_generator_and_lists_them() -> None:
    rng = random.Random(4)
    expected = [rng.randint(1, 6) for _ in range(2 + 4)]
    ans = judge(ARCHER_AND_KNIGHT, ATTACK, rng=random.Random(4))
    assert ans["numbers"]["attack_dice"] + ans["numbers"]["defense_dice"] == expected
    assert [r["by"] for r in ans["rolls"]] == ["tablesight", "tablesight"]
    part = judge(ARCHER_AND_KNIGHT, ATTACK, [3, 3], rng=random.Random(4))  # the players' faces first, then ours
    assert part["numbers"]["attack_dice"] == [3, 3] and [r["by"] for r in part["rolls"]] == ["players", "tablesight"]


@pytest.mark.parametrize("rolls,sentence", [
    ([1], "Archer 11's attack on Knight 20 takes 2 d6; 1 was given."),
    ([1, 7], "A d6 shows 1 to 6; the roll for Archer 11's attack on Knight 20 was given 7."),
    ([1, 6, 4, 5, 6, 2, 3], "7 were given but the rules took 6: give only the dice rolled for this action."),
    ([1, 6, 4, 5, 6], "Knight 20's defense against Archer 11 takes 4 d6; 3 were given."),
])
def test_faces_that_do_not_fit_the_roll_are_one_sentence(rolls: list[int], sentence: str) -> None:
    with pytest.raises(RollError) as err:
        judge(ARCHER_AND_KNIGHT, ATTACK, rolls)
    assert str(err.value) == sentence


def test_the_judge_command_waits_without_a_seed_and_refuses_a_short_roll(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from webui.cli import main

    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario(ARCHER_AND_KNIGHT, ATTACK, [1, 6])))
    assert main(["judge", str(path), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["outcome"] == "waiting" and answer["pending"]["side"] == "blue" and answer["pending"]["count"] == 4
    path.write_text(json.dumps(scenario(ARCHER_AND_KNIGHT, ATTACK, [1])))
    assert main(["judge", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("Archer 11's attack on Knight 20 takes 2 d6; 1 was given.") and err.count("\n") == 1
