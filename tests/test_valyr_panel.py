"""Valyr's game panel (rules/valyr/panel.py) against the state it shows: a tiny board, given dice, a short game
played to its end. Red Striker 12 at (5, 5), blue Guard 14 at (15, 5): 9" apart edge to edge."""

from __future__ import annotations

from typing import Any

from rules.engine import Action, Panel, UnitLine
from rules.valyr.game import Valyr, ValyrState

GAME = Valyr()


def card(name: str, attack: str = "3-12", defense: str = "0-0", health: int = 5, appraisal: float = 10,
         abilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """A test card (ours): energy 2, Sprint 6", Stamina 4", range 0"-12"."""
    return {"Identity": {"Name": name, "Type": "Hero"},
            "Combat": {"Attack": attack, "Defense": defense, "Range": "0-[0/0]-12", "Energy": 2, "Movement": "6-4",
                       "Health": health, "Appraisal": appraisal}, "Abilities": abilities or {}}


CARDS = [card("Striker", attack="3-14"), card("Guard", defense="2-1", health=2)]


def start(players: int = 2, **state: Any) -> tuple[ValyrState, Any]:
    units = [{"tag": 12, "owner": "red", "profile": "Striker", "at": [5, 5], "base_mm": 25.4},
             {"tag": 14, "owner": "blue", "profile": "Guard", "at": [15, 5], "base_mm": 25.4}]
    if players == 3:
        units.append({"tag": 16, "owner": "green", "profile": "Guard", "at": [15, 15], "base_mm": 25.4})
    return GAME.read_scenario({"game": "valyr", "cards": CARDS, "units": units,
                               "state": {"round": 1, "priority": "red", **state}})


def play(state: ValyrState, positions: Any, kind: str, unit: int | None = None, **params: Any) -> tuple[ValyrState, Any]:
    res = GAME.apply(state, positions, Action(kind, unit, params), None)
    assert res.pending is None, res.verdicts
    return res.state, res.positions


def line(panel: Panel, tag: int) -> UnitLine:
    return next(u for u in panel.units if u.unit == tag)


def test_a_fresh_round_shows_whose_turn_and_every_card() -> None:
    state, pos = start()
    p = GAME.panel(state, pos)
    assert p.headline == "Round 1 · red's turn · priority token: red"
    assert p.to_do == ("red: pick a vertical card to act: Striker 12", "Cards still vertical this round: blue: Guard 14")
    assert line(p, 12).words == "distress 0 of health 5, armor 0, dodge 0; card vertical"
    assert line(p, 12).left == '2 actions: move up to Sprint 6", attack' and line(p, 14).left == ""
    assert [(s.side, s.words, s.points) for s in p.score] == [
        ("red", "1 of 1 units standing, 0 distress on them; holds the priority token", None),
        ("blue", "1 of 1 units standing, 0 distress on them", None)]
    assert p.victory.startswith("The last player standing wins") and p.winner is None and p.over is False


def test_an_attack_with_given_dice_shows_in_the_panel() -> None:
    state, pos = start()
    missed, missed_pos = play(state, pos, "attack", 12, target=14, rolls=[3, 15, 20])  # +2 armor: 5, 17, 22
    assert line(GAME.panel(missed, missed_pos), 14).words.startswith("distress 0 of health 2")  # dodge 1 cancels 1
    state2, pos2 = play(state, pos, "attack", 12, target=14, rolls=[3, 4, 20])  # 5, 6, 22: 2 on target, 1 hit
    guard = state2.unit(14)
    assert guard is not None and guard.distress == 1
    p = GAME.panel(state2, pos2)
    assert line(p, 14).words == "distress 1 of health 2, armor 2, dodge 1; card vertical"
    assert line(p, 12).words == "distress 0 of health 5, armor 0, dodge 0; card vertical; acting, 1 of 2 actions used"
    assert line(p, 12).left == '1 of 2 actions left: move up to Sprint 6", attack'
    assert p.headline == "Round 1 · red's turn · Striker 12 acting (1 of 2 actions used) · priority token: red"
    assert p.to_do == ('Striker 12: 1 of 2 actions left: move up to Sprint 6", attack; or end its turn',)
    assert p.score[1].words == "1 of 1 units standing, 1 distress on them"
    assert GAME.score(state2)["distress"] == {"red": 0, "blue": 1}


def test_a_later_move_is_up_to_stamina_and_the_round_end_says_who_gets_the_token() -> None:
    state, pos = start()
    state, pos = play(state, pos, "move", 12, to=[7, 5])
    p = GAME.panel(state, pos)
    assert line(p, 12).left == '1 of 2 actions left: move up to Stamina 4", attack'
    state, pos = play(state, pos, "end_turn", 12)
    state, pos = play(state, pos, "end_turn", 14)
    p = GAME.panel(state, pos)
    assert p.headline == "Round 1 is over · every card is exhausted · priority token: red"
    assert p.to_do == ("Start round 2: every card turns vertical; the priority token passes right to blue",)
    assert line(p, 12).words.endswith("card horizontal (exhausted)") and all(u.left == "" for u in p.units)
    state, pos = play(state, pos, "start_round")
    assert state.priority == "blue" and GAME.panel(state, pos).headline == "Round 2 · blue's turn · priority token: blue"


def test_a_short_game_ends_with_the_winner_banner() -> None:
    state, pos = start()
    state, pos = play(state, pos, "attack", 12, target=14, rolls=[1, 2, 3])  # 3, 4, 5: 3 on target, 2 hits
    assert not state.over  # 2 distress does not exceed health 2
    state, pos = play(state, pos, "attack", 12, target=14, rolls=[1, 2, 20])  # 3, 4, 22: 2 on target, 1 hit: 3 > 2
    assert state.over and state.winner == "red" and GAME.is_over(state)
    p = GAME.panel(state, pos)
    assert p.over is True and p.winner == "Red wins: blue is defeated"
    assert p.headline == "Game over after round 1 · red wins, the last player standing" and p.to_do == ()
    assert line(p, 14).gone is True and line(p, 14).words == "distress 3 of health 2, armor 2, dodge 1; defeated"
    assert line(p, 12).gone is False
    assert [s.words for s in p.score] == ["1 of 1 units standing, 0 distress on them",
                                          "0 of 1 units standing, 0 distress on them; defeated"]
    assert GAME.score(state) == {"standing": {"red": 1, "blue": 0}, "distress": {"red": 0, "blue": 0},
                                 "conceded": [], "winner": "red"}


def test_a_concession_shows_and_a_game_over_without_a_winner_says_why() -> None:
    state, pos = start(players=3)
    state, pos = play(state, pos, "concede", None, player="green")
    p = GAME.panel(state, pos)
    assert p.over is False and p.score[2].words == "1 of 1 units standing, 0 distress on them; conceded"
    assert line(p, 16).words.endswith("; green conceded") and GAME.score(state)["conceded"] == ["green"]
    state, pos = start(over=True)
    p = GAME.panel(state, pos)
    assert p.over is True and p.winner is None and GAME.is_over(state)
    assert p.headline == "Game over after round 1 · nobody is left standing (every player defeated or conceded)"


def test_before_the_first_round_a_tie_asks_for_the_coin() -> None:
    state, pos = start(round=0, priority=None)
    state = Valyr().load_state({**GAME.dump_state(state), "priority": None})
    p = GAME.panel(state, pos)
    assert p.headline == "Before the first round"
    assert p.to_do == ("Start the first round: red and blue tie for the lowest appraisal, so flip a coin "
                       "(1 d6: 1-3 red, 4-6 blue) for the priority token",)


def test_the_winner_banner_says_how_the_others_went_out() -> None:
    """A concession is said as one, not as a defeat."""
    state, pos = start()
    state, pos = play(state, pos, "concede", player="blue")
    assert state.over and GAME.panel(state, pos).winner == "Red wins: blue conceded"
