"""Rise of the Magni's only die, the tied Lead fight's (option lead_tie "roll"), is the players' input: given
faces decide it, a tie is asked for again, a missing face waits, and a miscount is one sentence."""

from __future__ import annotations

import random

import pytest

from rules.dice import WAITING_RULE, RollError
from rules.engine import Action, Outcome, find_game
from rules.magni.game import EXAMPLE_TEAMS, MagniState
from rules.magni.scoring import ABOVE, CENTRE

GAME = find_game("magni")
TIE = {"red": 14, "blue": 22}
"""Soot Runner and Gull Rider: both CAV 2."""


def state() -> MagniState:
    st = GAME.new_state({"units": [dict(h) for h in EXAMPLE_TEAMS]})
    assert isinstance(st, MagniState)
    return st


def lead(rolls: list[int], rng: random.Random | None = None) -> object:
    return GAME.apply(state(), {}, Action("lead", None, {**TIE, "rolls": rolls}), rng)


def test_tied_lead_is_decided_by_the_players_faces_ties_rolled_again() -> None:
    res = GAME.apply(state(), {}, Action("lead", None, {**TIE, "rolls": [3, 3, 2, 6]}), None)
    assert res.state.placed == ((22, CENTRE), (14, ABOVE)) and res.state.first == "blue"
    (v,) = res.verdicts
    assert v.numbers["tie_rolls"] == [{"red": 3, "blue": 3}, {"red": 2, "blue": 6}]
    assert "blue wins the roll 6 to 2" in v.message
    assert [(r.request.side, r.request.unit, r.faces, r.by) for r in res.rolls] == [
        ("red", 14, (3,), "players"), ("blue", 22, (3,), "players"), ("red", 14, (2,), "players"),
        ("blue", 22, (6,), "players")]


def test_a_missing_face_waits_and_a_tie_is_asked_for_again() -> None:
    st = state()
    res = GAME.apply(st, {}, Action("lead", None, {**TIE, "rolls": [5, 5]}), None)
    assert res.state is st and res.pending is not None
    (v,) = res.verdicts
    assert v.rule == WAITING_RULE and v.outcome is Outcome.WAITING
    assert v.message == ("Waiting for the dice: red rolls 1 d6 for the fight for the centre, Soot Runner against "
                         "Gull Rider at CAV 2, again after a tie at 5; the higher roll takes the centre.")
    assert res.pending.given == (5, 5) and res.pending.clause == "magni.lead.tie"


def test_roll_for_us_rolls_from_the_generator() -> None:
    res = GAME.apply(state(), {}, Action("lead", None, TIE), random.Random(4))
    assert res.pending is None and res.state.first in ("red", "blue")
    assert all(r.by == "tablesight" for r in res.rolls) and len(res.rolls) % 2 == 0
    last = res.verdicts[0].numbers["tie_rolls"][-1]
    assert [r.faces[0] for r in res.rolls[-2:]] == [last["red"], last["blue"]]


def test_an_untied_lead_rolls_nothing_and_refuses_faces() -> None:
    res = GAME.apply(state(), {}, Action("lead", None, {"red": 11, "blue": 20}), None)  # CAV 1 against 5
    assert res.state.first == "blue" and res.rolls == ()
    with pytest.raises(RollError, match=r"^1 was given but the rules took 0: give only the dice rolled for this action\.$"):
        GAME.apply(state(), {}, Action("lead", None, {"red": 11, "blue": 20, "rolls": [4]}), None)


def test_a_face_out_of_range_is_one_sentence() -> None:
    with pytest.raises(RollError) as err:
        lead([9])
    assert str(err.value) == ("A d6 shows 1 to 6; the roll for the fight for the centre, Soot Runner against Gull "
                              "Rider at CAV 2 was given 9.")


def test_judge_without_a_seed_answers_waiting() -> None:
    units = [dict(h) for h in EXAMPLE_TEAMS]
    ans = GAME.judge({"game": "magni", "units": units, "action": {"kind": "lead", "params": TIE}}, None)
    assert ans["outcome"] == "waiting" and ans["pending"]["side"] == "red" and ans["pending"]["given"] == []
    assert ans["state"]["placed"] == [] and ans["rolls"] == []
