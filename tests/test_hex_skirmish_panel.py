"""Hex Skirmish's game panel: a short game on a tiny board played with given rolls, the panel read after each
step against the state (Life left, what the chosen figure may still do, figures standing, the winner)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from calibration.table import load_calibration
from rules.engine import Action, Panel, Positions
from rules.hex_skirmish.game import HexSkirmish, SkirmishState, _positions
from session.live_loop import LiveLoop
from session.pipeline import Pipeline

GAME = HexSkirmish()
SAMPLE_CALIBRATION = Path(__file__).resolve().parents[1] / "sample_frames" / "valknut_skirmish" / "calibration.json"
CARDS = [
    {"name": "Brute", "life": 4, "move": 4, "range": 1, "attack": 3, "defense": 2, "height": 5, "abilities": []},
    {"name": "Archer", "life": 2, "move": 5, "range": 4, "attack": 2, "defense": 1, "height": 5,
     "abilities": ["Water Ignore"]},
]
UNITS = [{"tag": 10, "owner": "red", "card": "Brute", "hex": [0, 0]},
         {"tag": 20, "owner": "blue", "card": "Archer", "hex": [1, 0]}]
BOARD = {"layout": {"size_in": 1.0, "orientation": "pointy", "origin": [12, 12]}, "hexagon": 2, "cells": []}


def start(units: list[dict[str, Any]] = UNITS) -> tuple[SkirmishState, Positions]:
    state = GAME.new_state({"board": BOARD, "cards": CARDS, "units": units})
    return state, _positions(units, state.layout)


def play(state: SkirmishState, positions: Positions, kind: str, unit: int | None = None, **params: Any
         ) -> tuple[SkirmishState, Positions]:
    res = GAME.apply(state, positions, Action(kind, unit, params), None)
    assert res.pending is None and res.legal, res.verdicts
    return res.state, res.positions


def line(panel: Panel, tag: int) -> Any:
    return next(u for u in panel.units if u.unit == tag)


def test_a_short_game_read_from_the_panel_step_by_step() -> None:
    state, pos = start()
    panel = GAME.panel(state, pos)
    assert panel.headline == "Round 1 · roll for initiative" and not panel.over and panel.winner is None
    assert panel.to_do == ("Roll initiative: red and blue each roll a d20; highest goes first, ties re-roll",)
    assert [(s.side, s.words, s.points) for s in panel.score] == [
        ("red", "1 of 1 figure standing, 0 wounds taken", 1.0), ("blue", "1 of 1 figure standing, 0 wounds taken", 1.0)]

    state, pos = play(state, pos, "initiative", rolls=[15, 3])
    panel = GAME.panel(state, pos)
    assert panel.headline == "Round 1 · turn 1 of 2: red chooses an army card"
    assert panel.to_do == ("red: choose an army card: Brute 10", "Then end the turn", "Still to play this round: blue")

    state, pos = play(state, pos, "choose", 10)
    assert line(GAME.panel(state, pos), 10).left == "move, attack"
    state, pos = play(state, pos, "attack", 10, target=20, rolls=[1, 6, 6, 6])  # 1 skull, no shield: 1 wound
    panel = GAME.panel(state, pos)
    assert panel.headline == "Round 1 · turn 1 of 2: red acts with Brute 10"
    assert panel.to_do[0] == "Brute 10 may still move"
    assert line(panel, 10).left == "move" and line(panel, 20).left == ""
    archer = line(panel, 20)
    assert archer.words.startswith("Life 1 of 2 (1 wound), Move 5, Range 4, Attack 2, Defense 1, Height 5, Water Ignore")
    assert "at [1, 0], engaged with Brute 10" in archer.words and not archer.gone
    assert panel.score[1].words == "1 of 1 figure standing, 1 wound taken"

    state, pos = play(state, pos, "end_turn")
    state, pos = play(state, pos, "choose", 20)
    state, pos = play(state, pos, "attack", 20, target=10, rolls=[2, 6, 4, 5])  # 1 skull, 2 shields: no wound
    assert line(GAME.panel(state, pos), 10).words.startswith("Life 4 of 4, ")
    state, pos = play(state, pos, "end_turn")
    assert GAME.panel(state, pos).headline == "Round 2 · roll for initiative"

    state, pos = play(state, pos, "initiative", rolls=[4, 11])
    state, pos = play(state, pos, "end_turn")  # blue passes
    state, pos = play(state, pos, "choose", 10)
    state, pos = play(state, pos, "attack", 10, target=20, rolls=[3, 3, 5, 6])  # 2 skulls, no shield: destroyed
    panel = GAME.panel(state, pos)
    assert panel.over and panel.winner == "Red wins: the last figures standing"
    assert panel.headline == "Round 2 · game over: red's figures alone stand" and panel.to_do == ()
    gone = line(panel, 20)
    assert gone.gone and gone.words == "destroyed (2 wounds on Life 2)" and line(panel, 10).left == ""
    assert [(s.side, s.points) for s in panel.score] == [("red", 1.0), ("blue", 0.0)]
    assert GAME.score(state) == {"standing": {"red": 1, "blue": 0}, "wounds": {"red": 0, "blue": 3}, "winner": "red"}
    assert GAME.is_over(state) and GAME.legal_actions(state, pos) == []


def test_score_and_is_over_agree_with_the_panel_before_the_end() -> None:
    state, pos = start()
    panel, score = GAME.panel(state, pos), GAME.score(state)
    assert GAME.is_over(state) is panel.over is False and score["winner"] is None is panel.winner
    assert {s.side: s.points for s in panel.score} == score["standing"] == {"red": 1, "blue": 1}
    assert panel.victory.startswith("Destroy every opposing figure: the last player with figures on the board wins")


def test_a_game_where_no_figure_stands_is_over_without_a_winner() -> None:
    units = [{**UNITS[0], "wounds": 4}, {**UNITS[1], "wounds": 2}]
    state, pos = start(units)
    panel = GAME.panel(state, pos)
    assert panel.over and panel.winner is None
    assert panel.headline == "Round 1 · game over: no figure is left standing"
    assert all(u.gone for u in panel.units) and GAME.score(state)["winner"] is None


def test_the_example_panel_lists_every_figure() -> None:
    state, pos = GAME.example(random.Random(0))
    panel = GAME.panel(state, pos)
    assert [(u.name, u.side) for u in panel.units] == [
        ("Shield Knight 10", "red"), ("Marsh Archer 11", "red"), ("Hawk Rider 20", "blue"), ("Stone Giant 21", "blue")]
    assert line(panel, 21).words == "Life 6 of 6, Move 4, Range 1, Attack 4, Defense 3, Height 12; at [3, -2]"


def test_a_figure_destroyed_by_counterstrike_on_its_own_turn_says_so() -> None:
    cards = [*CARDS, {"name": "Knight", "life": 4, "move": 4, "range": 1, "attack": 3, "defense": 4, "height": 5,
                      "abilities": ["Counterstrike"]}]
    units = [{"tag": 11, "owner": "red", "card": "Archer", "hex": [-2, 0]},
             {"tag": 12, "owner": "red", "card": "Brute", "hex": [-2, 2]},
             {"tag": 20, "owner": "blue", "card": "Knight", "hex": [0, 0]}]
    state = GAME.new_state({"board": BOARD, "cards": cards, "units": units})
    pos: Positions = _positions(units, state.layout)
    state, pos = play(state, pos, "initiative", rolls=[8, 2])
    state, pos = play(state, pos, "choose", 11)
    state, pos = play(state, pos, "attack", 11, target=20, rolls=[6, 6, 4, 5, 1, 6])  # no skull, 2 shields back
    panel = GAME.panel(state, pos)
    assert panel.to_do[:2] == ("Archer 11 is destroyed", "Then end the turn") and not panel.over
    assert line(panel, 11).gone and line(panel, 11).words == "destroyed (2 wounds on Life 2)"
    assert [(s.side, s.words) for s in panel.score] == [("red", "1 of 2 figures standing, 2 wounds taken"),
                                                        ("blue", "1 of 1 figure standing, 0 wounds taken")]


TURN_STYLES = {"hex-highlight", "hex-reachable", "attack-line", "los-blocked"}
"""What the overlays draw of a turn: the chosen figure's cell, where it may move, whom it may attack."""


def test_nothing_of_a_turn_is_drawn_once_the_game_is_over() -> None:
    """Blue's Archer destroyed by red's Brute, which has not moved yet: while the game went on the Brute's cell and
    reachable hexes were drawn; once it is over, neither for the chosen figure nor for one selected on the page."""
    state, pos = start([*UNITS, {"tag": 21, "owner": "blue", "card": "Archer", "hex": [-2, 0]}])
    for kind, unit, params in (("initiative", None, {"rolls": [15, 3]}), ("choose", 10, {}),
                               ("attack", 10, {"target": 20, "rolls": [1, 1, 6, 6]})):  # 2 skulls: destroyed
        state, pos = play(state, pos, kind, unit, **params)
    going = {o.style for o in GAME.overlays(state, pos)}
    assert {"hex-highlight", "hex-reachable"} <= going and not GAME.is_over(state)
    state = _destroyed(state, 21)  # the other Archer falls too (its own fight, told elsewhere)
    pos = {tag: p for tag, p in pos.items() if tag != 21}  # taken off the table
    assert GAME.is_over(state) and state.chosen == 10 and not state.moved
    for selected in (None, 10):
        assert not {o.style for o in GAME.overlays(state, pos, selected)} & TURN_STYLES


def _destroyed(state: SkirmishState, tag: int) -> SkirmishState:
    """`state` with figure `tag` (an Archer, Life 2) destroyed."""
    fig = next(f for f in state.figures if f.tag == tag)
    return state.with_figure(replace(fig, wounds=2, destroyed=True))


def test_a_destroyed_figures_last_move_is_no_longer_drawn() -> None:
    """The live table draws each unit's last move; a figure the game has destroyed (taken off the table) is no
    longer on it, so its arrow goes with it, while a standing figure's stays."""
    state, pos = start()
    pipe = Pipeline(load_calibration(SAMPLE_CALIBRATION), game=GAME, game_setup={"board": BOARD, "cards": CARDS,
                                                                                  "units": UNITS})
    loop = LiveLoop(lambda: None, lambda: pipe)  # type: ignore[arg-type,return-value]  # never started: no thread
    loop._pipeline = pipe
    moves = {tag: {"type": "move", "frame": 3, "tag": tag, "from_in": [10.0, 12.0], "to_in": [12.0, 12.0],
                   "length_in": 2.0, "pm_in": 0.01} for tag in (10, 20)}
    loop._moves.update(moves)
    pipe.state = state
    assert [m["tag"] for m in loop._moves_shown()] == [10, 20]
    pipe.state = _destroyed(state, 20)
    assert pipe.off_table() == frozenset({20}) and [m["tag"] for m in loop._moves_shown()] == [10]
