"""Valyr's dice as the players' input (rules/dice.py): every dice clause on a tiny board with GIVEN faces and the
exact numbers it rules, the waiting answer when nobody rolls for the players, and the one-sentence refusals of
faces that do not fit. Bases are 25.4 mm across (radius 0.5"), so red 12 at (5, 5) and blue 14 at (15, 5) stand 9"
apart edge to edge."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rules.dice import RollError
from rules.engine import Action, Outcome, ScenarioError
from rules.valyr.game import Valyr, ValyrState
from webui.cli import main

GAME = Valyr()


def card(name: str, attack: str = "3-12", defense: str = "0-0", rng: str = "0-[0/0]-12", health: int = 5,
         appraisal: float = 10) -> dict[str, Any]:
    """A test card (ours, not the author's): energy 2, Sprint 6", Stamina 4"."""
    return {"Identity": {"Name": name, "Type": "Hero"},
            "Combat": {"Attack": attack, "Defense": defense, "Range": rng, "Energy": 2, "Movement": "6-4",
                       "Health": health, "Appraisal": appraisal}}


CARDS = [card("Striker", attack="3-14"), card("Guard", defense="2-1"), card("Bander", rng="0-[+2/+3]-6-[-1/-2]-12"),
         card("Weakling", attack="1-12", rng="0-[-1/0]-12"), card("Pricey", appraisal=20)]


def unit(tag: int, owner: str, at: tuple[float, float], profile: str, **extra: Any) -> dict[str, Any]:
    return {"tag": tag, "owner": owner, "profile": profile, "at": list(at), "base_mm": 25.4, **extra}


def duel(attacker: str = "Striker", defender: str = "Guard", at: float = 15.0, **defender_extra: Any) -> dict[str, Any]:
    """Red `attacker` 12 at (5, 5) against blue `defender` 14 at (at, 5), red to play in round 1."""
    return {"game": "valyr", "cards": CARDS, "board": {"width_in": 30, "depth_in": 22},
            "units": [unit(12, "red", (5, 5), attacker), unit(14, "blue", (at, 5), defender, **defender_extra)],
            "state": {"round": 1, "priority": "red", "to_play": "red"}}


def tie(players: int = 2) -> dict[str, Any]:
    """Before round 1, every army one 10-point unit: a tie for the priority token among `players` players."""
    owners = ["red", "blue", "green"][:players]
    return {"game": "valyr", "cards": CARDS, "board": {"width_in": 30, "depth_in": 22},
            "units": [unit(12 + 2 * i, p, (5 + 8 * i, 5), "Guard") for i, p in enumerate(owners)],
            "state": {"round": 0, "players": owners}}


def apply(s: dict[str, Any], action: Action, rng: random.Random | None = None) -> tuple[ValyrState, Any]:
    state, positions = GAME.read_scenario(s)
    return state, GAME.apply(state, positions, action, rng)


def attack(rolls: list[int] | None = None, target: int = 14) -> Action:
    return Action("attack", 12, {"target": target} if rolls is None else {"target": target, "rolls": rolls})


def start(rolls: list[int] | None = None) -> Action:
    return Action("start_round", None, {} if rolls is None else {"rolls": rolls})


def verdict(result: Any, rule: str) -> Any:
    return next(v for v in result.verdicts if v.rule == rule)


# ----------------------------------------------------------------------------------------- valyr.attack.roll


def test_attack_roll_reads_the_players_faces() -> None:
    """3 d20 [4, 12, 9] plus Guard's armor 2 -> [6, 14, 11]: 2 below skill 14 on target; dodge 1 leaves 1 hit."""
    state, res = apply(duel(), attack([4, 12, 9]))
    roll = verdict(res, "valyr.attack.roll").numbers
    assert (roll["rolls"], roll["totals"], roll["on_target"], roll["hits"]) == ([4, 12, 9], [6, 14, 11], 2, 1)
    assert (roll["strength"], roll["skill"], roll["armor"], roll["dodge"]) == (3, 14, 2, 1)
    assert verdict(res, "valyr.attack.distress").numbers == {"distress": 1, "health": 5, "defeated": False}
    guard = res.state.unit(14)
    assert guard is not None and guard.distress == 1 and res.state.actions_used == 1
    (rolled,) = res.rolls
    assert (rolled.faces, rolled.by, rolled.request.count, rolled.request.sides) == ((4, 12, 9), "players", 3, 20)
    assert rolled.request.what == "Striker 12's attack on Guard 14"
    assert rolled.request.reads == "each below 14 after Guard 14's +2 armor is on target; dodge 1 cancels 1"
    assert rolled.request.side is None  # the attacker, the acting unit's owner, rolls


def test_attack_dice_follow_the_range_band() -> None:
    """Bander's 0"-6" band is [+2/+3]: 5 d20 below 15; its 6"-12" band [-1/-2]: 2 d20 below 10."""
    near = duel("Bander", "Striker", at=9.0)  # 3" edge to edge
    _, res = apply(near, attack([14, 15, 1, 20, 2]))
    roll = verdict(res, "valyr.attack.roll").numbers
    assert (roll["strength"], roll["skill"], roll["on_target"], roll["hits"]) == (5, 15, 3, 3)
    _, res = apply(duel("Bander", "Striker"), attack([9, 10]))
    roll = verdict(res, "valyr.attack.roll").numbers
    assert (roll["strength"], roll["skill"], roll["on_target"], roll["hits"]) == (2, 10, 1, 1)


def test_attack_at_strength_zero_takes_no_dice() -> None:
    _, res = apply(duel("Weakling", "Striker"), attack())  # 1 - 1 = 0 d20, no generator
    assert res.pending is None and res.rolls == ()
    assert verdict(res, "valyr.attack.roll").numbers["hits"] == 0
    with pytest.raises(RollError, match="1 was given but the rules took 0"):
        apply(duel("Weakling", "Striker"), attack([7]))


def test_attack_that_defeats_the_last_unit_ends_the_game() -> None:
    s = duel(distress=4)
    s["units"].append(unit(15, "blue", (25, 15), "Guard", defeated=True))
    _, res = apply(s, attack([1, 2, 20]))  # totals 3, 4, 22: 2 on target, dodge 1: 1 hit; 5 distress is not a defeat
    assert verdict(res, "valyr.attack.distress").numbers == {"distress": 5, "health": 5, "defeated": False}
    ans = GAME.judge({**s, "action": attack([1, 2, 3]).to_json()}, None)  # 3 on target, 2 hits: 6 > 5
    assert ans["numbers"]["defeated"] is True and ans["winner"] == "red" and ans["state"]["over"] is True
    assert "14" not in ans["positions"] and ans["rolls"][0]["faces"] == [1, 2, 3]


def test_attack_waits_for_the_dice_when_nobody_rolls() -> None:
    state, res = apply(duel(), attack())
    assert res.state == state and res.pending is not None and res.rolls == ()
    (v,) = res.verdicts
    assert v.outcome is Outcome.WAITING and v.rule == "dice.pending" and v.unit == 12
    assert v.message == ("Waiting for the dice: roll 3 d20 for Striker 12's attack on Guard 14; each below 14 "
                         "after Guard 14's +2 armor is on target; dodge 1 cancels 1.")
    assert (res.pending.count, res.pending.sides, res.pending.clause, res.pending.given) == (3, 20, "valyr.attack.roll", ())
    ans = GAME.judge({**duel(), "action": attack().to_json()}, None)
    assert ans["outcome"] == "waiting" and ans["pending"]["count"] == 3
    assert ans["state"] == GAME.dump_state(state)


def test_an_illegal_attack_asks_for_no_dice() -> None:
    _, res = apply(duel(at=20.0), attack())  # 14" edge to edge, beyond max range 12"
    assert res.pending is None and verdict(res, "valyr.attack.range").outcome is Outcome.ILLEGAL


def test_roll_for_us_rolls_only_the_faces_not_given() -> None:
    _, ours = apply(duel(), attack(), random.Random(7))
    faces = list(ours.rolls[0].faces)
    assert ours.rolls[0].by == "tablesight" and verdict(ours, "valyr.attack.roll").numbers["rolls"] == faces
    _, given = apply(duel(), attack([4, 12, 9]), random.Random(7))  # the players' faces win over the generator
    assert given.rolls[0].by == "players" and list(given.rolls[0].faces) == [4, 12, 9]


# ------------------------------------------------------------------------------------------ wrong faces


@pytest.mark.parametrize("rolls,sentence", [
    ([4, 12], "Striker 12's attack on Guard 14 takes 3 d20; 2 were given."),
    ([4, 21, 9], "A d20 shows 1 to 20; the roll for Striker 12's attack on Guard 14 was given 21."),
    ([4, 0, 9], "A d20 shows 1 to 20; the roll for Striker 12's attack on Guard 14 was given 0."),
    ([4, 12, 9, 3], "4 were given but the rules took 3: give only the dice rolled for this action."),
])
def test_faces_that_do_not_fit_are_one_sentence(rolls: list[int], sentence: str) -> None:
    with pytest.raises(RollError) as err:
        apply(duel(), attack(rolls))
    assert str(err.value) == sentence
    with pytest.raises(ScenarioError) as judged:
        GAME.judge({**duel(), "action": attack(rolls).to_json()}, None)
    assert str(judged.value) == f'The scenario\'s "action": {sentence}'


def test_the_judge_command_says_a_short_roll_in_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "short.json"
    path.write_text(json.dumps({**duel(), "action": attack([4]).to_json()}))
    assert main(["judge", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == 'The scenario\'s "action": Striker 12\'s attack on Guard 14 takes 3 d20; 1 was given.\n'


# ------------------------------------------------------------------------------------- valyr.round.priority


@pytest.mark.parametrize("face,holder", [(1, "red"), (3, "red"), (4, "blue"), (6, "blue")])
def test_a_tie_for_the_priority_token_is_a_coin_flip_with_a_d6(face: int, holder: str) -> None:
    _, res = apply(tie(), start([face]))
    pri = verdict(res, "valyr.round.priority")
    assert pri.numbers["coin"] == face and pri.numbers["priority"] == holder and pri.numbers["tied"] == ["red", "blue"]
    assert res.state.priority == holder and res.state.to_play == holder and res.state.round == 1


def test_the_coin_flip_waits_for_its_die() -> None:
    state, res = apply(tie(), start())
    assert res.state == state and res.pending is not None
    assert res.verdicts[0].message == ("Waiting for the dice: roll 1 d6 for the coin flip between red and blue for the "
                                       "priority token; 1-3 gives it to red, 4-6 to blue.")


def test_no_tie_takes_no_dice() -> None:
    s = tie()
    s["units"][0]["profile"] = "Pricey"  # red 20, blue 10
    _, res = apply(s, start())
    assert res.pending is None and res.rolls == () and res.state.priority == "blue"


def test_three_tied_players_roll_off_one_roll_at_a_time() -> None:
    asked = []
    rolls: list[int] = []
    for face in (2, 6, 4):
        _, res = apply(tie(3), start(rolls))
        assert res.pending is not None and res.pending.given == tuple(rolls)
        asked.append(res.pending.sentence())
        rolls.append(face)
    assert asked == [f"{p} rolls 1 d6 for the roll-off for the priority token; the highest takes it; a tie for the "
                     "highest rolls again" for p in ("red", "blue", "green")]
    _, res = apply(tie(3), start(rolls))
    assert res.state.priority == "blue" and verdict(res, "valyr.round.priority").numbers["roll_off"] == [
        {"red": 2, "blue": 6, "green": 4}]
    assert [r.request.side for r in res.rolls] == ["red", "blue", "green"]


def test_a_tie_in_the_roll_off_is_asked_for_again() -> None:
    state, res = apply(tie(3), start([5, 2, 5]))  # red and green tie on 5
    assert res.state == state and res.pending is not None
    assert (res.pending.side, res.pending.given) == ("red", (5, 2, 5))
    assert res.pending.what == "the roll-off for the priority token again (red and green tied on 5)"
    _, res = apply(tie(3), start([5, 2, 5, 3]))
    assert res.pending is not None and res.pending.side == "green"  # blue is out of it
    _, res = apply(tie(3), start([5, 2, 5, 3, 3, 1, 6]))  # tied again on 3, then green wins
    pri = verdict(res, "valyr.round.priority")
    assert pri.numbers["roll_off"] == [{"red": 5, "blue": 2, "green": 5}, {"red": 3, "green": 3}, {"red": 1, "green": 6}]
    assert res.state.priority == "green"
    assert pri.message == ("red, blue and green tie at 10; they roll off: red 5, blue 2, green 5; red and green roll "
                           "again: red 3, green 3; red and green roll again: red 1, green 6; green rolls highest and "
                           "takes the priority token.")


def test_a_face_off_the_d6_is_refused() -> None:
    with pytest.raises(RollError, match="A d6 shows 1 to 6; the roll for the coin flip between red and blue .* given 7"):
        apply(tie(), start([7]))


# ------------------------------------------------------------------------------------- the rest is unchanged


def test_actions_without_dice_need_no_generator() -> None:
    _, res = apply(duel(), Action("move", 12, {"to": [9, 5]}))
    assert res.pending is None and verdict(res, "valyr.move.sprint").outcome is Outcome.LEGAL


def test_the_example_keeps_its_own_generator() -> None:
    a, _ = GAME.example(random.Random(3))
    b, _ = GAME.example(random.Random(3))
    assert a == b and a.round == 1
