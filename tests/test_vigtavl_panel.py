"""Vigtavl's game panel against the state: the phase and round of 6, what is left to do, each piece (a prisoner
after a given-rolls battle), the victory tokens after scoring, and the winner banner at the end of a short game
played with given rolls; `score` and `is_over` agree with it."""

from __future__ import annotations

import random

from rules.engine import Action, Panel, find_game
from rules.vigtavl.judge import build_position
from rules.vigtavl.state import VigtavlState
from tests.vigtavl_positions import act, judge_given, scenario, unit

GAME = find_game("vigtavl")
UNITS = [unit(10, "cavalry", "red", -1, 0), unit(11, "infantry", "red", 1, 1), unit(20, "archer", "blue", 0, 0),
         unit(21, "caravel", "blue", sunk_by="red")]
CAMP = [((2, -2), "encampment", "red")]
WIN = [6, 2, 2, 3, 5]  # cavalry 10's three dice, then archer 20's two: 6 against 5


def last_round() -> VigtavlState:
    state, _ = build_position(GAME, scenario(UNITS, devs=CAMP, state={"round": 6}))
    return state


def line(panel: Panel, unit_id: int) -> dict:
    return next(u.to_json() for u in panel.units if u.unit == unit_id)


def points(panel: Panel) -> dict[str, float | None]:
    return {s.side: s.points for s in panel.score}


def play(state: VigtavlState, *actions: Action) -> VigtavlState:
    for a in actions:
        res = GAME.apply(state, {}, a, None)
        assert res.legal and res.pending is None, [v.message for v in res.verdicts]
        state = res.state
    return state


def test_the_example_start_is_the_placement_phase() -> None:
    state, pos = GAME.example(random.Random(0))
    panel = GAME.panel(state, pos)
    assert panel.headline == "Placement phase · round 1 of 6 · red places a ship"
    assert panel.to_do == ("Ships to place on a sea hex (red): Caravel 16, Caravel 17, Caravel 18, Freighter 19, "
                           "Freighter 20, Galleon 21",)
    assert len(panel.units) == 24 and all(u.gone for u in panel.units)  # ships unplaced, knights aboard
    assert line(panel, 10)["words"] == "infantry aboard Freighter 19; cost 1, movement 3"
    assert line(panel, 19)["words"].endswith("carries Infantry 10, Infantry 11 and Infantry 12")
    assert points(panel) == {"red": 0.0, "blue": 0.0} and not panel.over and panel.winner is None
    assert "most victory tokens at the end of round 6" in panel.victory


def test_a_battle_with_given_rolls_shows_in_the_panel() -> None:
    state = last_round()
    before = GAME.panel(state, {})
    assert before.headline == "Battle phase · round 6 of 6 · red's turn"
    assert before.to_do == ("Units to activate (6 silver): Cavalry 10 (3), Infantry 11 (1)",
                            "Gold to spend: 6 (units, developments, walls)",
                            "End the turn (unspent gold and silver are lost)")
    assert line(before, 10)["left"] == "move, attack" and line(before, 20)["left"] == ""
    after = GAME.panel(play(state, Action("attack", 10, {"target": 20, "rolls": WIN})), {})
    assert line(after, 10) == {"unit": 10, "name": "Cavalry 10", "side": "red", "gone": False, "left": "move",
                               "words": "cavalry on [-1, 0]; cost 3, movement 4; active, attack taken"}
    assert line(after, 20)["gone"] and line(after, 20)["words"].startswith("archer prisoner of red, held at [2, -2]")
    assert after.to_do[:3] == ("Cavalry 10: move left", "Blue may retaliate once Cavalry 10 has finished",
                               "Units to activate (3 silver): Infantry 11 (1)")
    red = next(s for s in after.score if s.side == "red")
    assert red.points == 2.0 and red.words == ("2 victory tokens (battle 2); gold 6, silver 3; 1 prisoner held, "
                                               "1 ship sunk, 1 development")


def test_retaliation_in_the_headline_and_to_do() -> None:
    state = play(last_round(), Action("attack", 10, {"target": 20, "rolls": WIN}), Action("finish"))
    panel = GAME.panel(state, {})
    assert panel.headline == "Battle phase · round 6 of 6 · red's turn · blue retaliates"
    assert panel.to_do == ("Blue retaliates with 1 unit and 1 silver (no building), or ends the retaliation",)
    assert "laid on its side" in line(panel, 10)["words"] and line(panel, 10)["left"] == ""


def test_a_short_game_ends_with_the_winner_banner() -> None:
    state = play(last_round(), Action("attack", 10, {"target": 20, "rolls": WIN}), Action("finish"),
                 Action("end_retaliation"), Action("end_turn"), Action("end_turn"))
    panel = GAME.panel(state, {})
    # battle 2, then General (1 prisoner), Admiral (1 ship sunk) and Builder (1 development): 3 each
    assert panel.over and GAME.is_over(state) and panel.headline == "Game over after round 6"
    assert panel.winner == "Red wins: 11 victory tokens to 0." and panel.to_do == ()
    assert points(panel) == {"red": 11.0, "blue": 0.0}
    assert GAME.score(state) == {"tokens": {"red": 11, "blue": 0}, "winner": "red"}
    assert all(u.left == "" for u in panel.units)


def test_a_draw_ends_with_no_winner() -> None:
    state, _ = build_position(GAME, scenario([unit(10, "infantry", "red", 0, 0), unit(20, "infantry", "blue", 1, 0)],
                                             state={"round": 6, "player": "blue"}))
    over = play(state, Action("end_turn"))
    panel = GAME.panel(over, {})
    assert panel.over and panel.winner is None
    assert panel.headline == "Game over after round 6: a draw, 0 victory tokens each"
    assert GAME.score(over) == {"tokens": {"red": 0, "blue": 0}, "winner": None}


def test_the_judge_says_the_winner_of_the_last_turn() -> None:
    units = [unit(10, "infantry", "red", 0, 0, captor="blue"), unit(20, "infantry", "blue", 1, 0)]
    scn = scenario(units, devs=[((0, 0), "fort", "blue")], state={"round": 6, "player": "blue"},
                   action=act("end_turn"))
    ans = judge_given(scn)
    assert ans["winner"] == "blue" and ans["over"] is True and ans["after"]["tokens"] == {"red": 0, "blue": 6}
    assert ans["after"]["phase"] == "over"


def test_build_phase_units_have_only_a_move() -> None:
    state, _ = build_position(GAME, scenario(UNITS, devs=CAMP, state={"phase": "build"}))
    panel = GAME.panel(state, {})
    assert panel.headline == "Build phase · round 3 of 6 · red's turn"
    assert line(panel, 10)["left"] == "move" and line(panel, 11)["left"] == "move"


def test_status_says_the_round_not_the_seat() -> None:
    state, _ = build_position(GAME, scenario(UNITS, devs=CAMP, state={"round": 5, "player": "blue"}))
    assert GAME.status(state).to_json() == {"phase": "battle", "round": 5, "player": "blue"}
    assert GAME.panel(state, {}).headline == "Battle phase · round 5 of 6 · blue's turn"
