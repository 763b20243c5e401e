"""Every action tryable and declarable at a clicked point (issue 31, item 4) in Valyr, Hex Skirmish, Rise of the
Magni and Valknut: `tryable_actions` lists the legal actions first, then refused ones a player may well try (an
attack on any enemy, a card out of turn, a tile on a taken cell), each ruled with its reason in one sentence;
`actions_at` gives what could be declared at the clicked table point (a move there with its measured length, an
attack on the unit there, a placement on the cell there...). Examples are the games' own small example states.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from rules.engine import Action, Game, Outcome, Positions, find_game
from rules.hexgrid import Hex
from rules.valknut.setup import scenario_state
from webui.routes.live import _actions

VALYR, HEX, MAGNI, VALKNUT = (find_game(n) for n in ("valyr", "hex_skirmish", "magni", "valknut"))


def ruled(game: Game, state: Any, positions: Positions, action: Action) -> list[tuple[str, Outcome, str]]:
    """(clause, outcome, sentence) of each verdict on `action`, nobody rolling for the players."""
    res = game.apply(state, positions, action, None)
    return [(v.rule, v.outcome, v.message) for v in res.verdicts]


@pytest.mark.parametrize("name", ["valyr", "hex_skirmish", "magni", "valknut"])
def test_tryable_lists_the_legal_actions_first_each_once_and_bounded(name: str) -> None:
    game = find_game(name)
    state, positions = game.example(random.Random(3))
    legal = game.legal_actions(state, positions)
    tried = game.tryable_actions(state, positions)
    assert tried[:len(legal)] == legal
    assert len({repr(a.to_json()) for a in tried}) == len(tried) <= 200


# ---------------------------------------------------------------------------------------------------------- Valyr
# The example: red Shieldbearer 10 at (6, 8), Archer 11 at (6, 14); blue Scout 20 (25 mm) at (20, 8), Mender 21 at
# (20, 14); 32 mm bases are 0.630" in radius, 25 mm 0.492"; a wall x 15-15.5, y 12-17. Blue (the lower appraisal)
# acts first.


def test_valyr_an_attack_out_of_range_and_sight_can_be_tried_and_says_why() -> None:
    state, positions = VALYR.example(random.Random(3))
    assert state.to_play == "blue"
    attack = Action("attack", 21, {"target": 11})
    assert attack in VALYR.tryable_actions(state, positions) and attack not in VALYR.legal_actions(state, positions)
    assert ruled(VALYR, state, positions, attack) == [
        ("valyr.attack.range", Outcome.ILLEGAL, 'Mender 21 is out of range: 12.74" > max range 4".'),  # 14 - 2 x 0.63
        ("valyr.attack.sight", Outcome.ILLEGAL, "Mender 21 cannot see Archer 11: wall blocks the line of sight."),
    ]
    mend = Action("ability", 21, {"name": "Mend", "target": 10})  # an enemy
    assert mend in VALYR.tryable_actions(state, positions)
    assert ruled(VALYR, state, positions, mend)[0][1:] == (
        Outcome.ILLEGAL, "Mend works only on a friendly unit; Shieldbearer 10 is an enemy.")


def test_valyr_actions_at_a_clicked_point() -> None:
    state, positions = VALYR.example(random.Random(3))
    move = VALYR.actions_at(state, positions, 20, (10.0, 8.0))
    assert move == [Action("move", 20, {"to": [10.0, 8.0], "length_in": 10.0})]
    res = VALYR.apply(state, positions, move[0], None)
    assert res.verdicts[0].rule == "valyr.move.sprint" and res.verdicts[0].outcome is Outcome.ILLEGAL
    assert res.verdicts[0].numbers["length_in"] == 10.0 and res.verdicts[0].numbers["allowance_in"] == 8
    on_enemy = VALYR.actions_at(state, positions, 20, (6.5, 8.3))  # inside Shieldbearer 10's base
    assert on_enemy == [Action("attack", 20, {"target": 10})]
    assert ruled(VALYR, state, positions, on_enemy[0])[0][2] == 'Scout 20 is out of range: 12.88" > max range 6".'
    assert VALYR.actions_at(state, positions, 21, (20.0, 14.0)) == [Action("ability", 21, {"name": "Mend", "target": 21})]
    assert VALYR.actions_at(state, positions, None, (10.0, 8.0)) == []


# --------------------------------------------------------------------------------------------------- Hex Skirmish
# The example board: red Shield Knight 10 (Range 1) on [-2, -1], Marsh Archer 11 on [-3, 2]; blue Hawk Rider 20 on
# [2, 1], Stone Giant 21 on [3, -2]. Red wins initiative 15 to 5 and chooses the Shield Knight.


def _hex_red_acting() -> tuple[Any, Positions]:
    state, positions = HEX.example(random.Random(3))
    state = HEX.apply(state, positions, Action("initiative", None, {"rolls": [15, 5]}), None).state
    state = HEX.apply(state, positions, Action("choose", 10), None).state
    assert state.player == "red" and state.chosen == 10
    return state, positions


def test_hex_skirmish_attacks_and_army_cards_out_of_turn_can_be_tried_and_say_why() -> None:
    state, positions = _hex_red_acting()
    legal, tried = HEX.legal_actions(state, positions), HEX.tryable_actions(state, positions)
    assert tried[:len(legal)] == legal and len(tried) == len(legal) + 5
    far = Action("attack", 10, {"target": 20})
    assert far in tried and far not in legal
    res = HEX.apply(state, positions, far, None)
    assert [(v.rule, v.outcome, v.message, v.numbers["distance"]) for v in res.verdicts] == [
        ("hex_skirmish.attack.range", Outcome.ILLEGAL, "Hawk Rider 20 is 6 hexes away; Shield Knight 10 has Range 1.", 6)]
    assert ruled(HEX, state, positions, Action("choose", 20)) == [
        ("hex_skirmish.round.choose", Outcome.ILLEGAL, "It is red's turn; Hawk Rider 20 is blue's.")]
    assert ruled(HEX, state, positions, Action("choose", 11))[0][2] == (
        "red already acts with Shield Knight 10 this turn; a player chooses one army card a turn.")


def test_hex_skirmish_actions_at_a_clicked_hex() -> None:
    state, positions = _hex_red_acting()
    x, y = state.layout.to_table(Hex(-1, -1))
    step = HEX.actions_at(state, positions, 10, (x + 0.2, y - 0.1))
    assert step == [Action("move", 10, {"to": [-1, -1]})]
    assert ruled(HEX, state, positions, step[0]) == [
        ("hex_skirmish.move.path", Outcome.LEGAL, "Shield Knight moves 1 hex for 1 of 4 movement points.")]
    x, y = state.layout.to_table(Hex(2, 1))
    assert HEX.actions_at(state, positions, 10, (x, y)) == [Action("attack", 10, {"target": 20})]
    assert HEX.actions_at(state, positions, None, (x, y)) == [Action("choose", 20)]
    x, y = state.layout.to_table(Hex(9, 9))
    off = HEX.actions_at(state, positions, 10, (x, y))
    assert off == [Action("move", 10, {"to": [9, 9]})]
    assert ruled(HEX, state, positions, off[0])[0][1:] == (Outcome.ILLEGAL, "[9, 9] is not on the board.")


def _hex_archer_acting(giant_at: list[int]) -> tuple[Any, Positions]:
    """Red's Marsh Archer 11 (Range 6, Height 5) on [-2, 0] chosen; blue's Hawk Rider 20 (Height 6) on [2, 0] behind a
    level-9 hill on [0, 0]; blue's Stone Giant 21 at `giant_at`."""
    from rules.engine import Placement
    from rules.hex_skirmish.game import DEFAULT_LAYOUT, EXAMPLE_CARDS
    units = [{"tag": 11, "owner": "red", "card": "Marsh Archer"}, {"tag": 20, "owner": "blue", "card": "Hawk Rider"},
             {"tag": 21, "owner": "blue", "card": "Stone Giant"}]
    state = HEX.new_state({"board": {"layout": DEFAULT_LAYOUT.to_json(), "hexagon": 3,
                                     "cells": [{"hex": [0, 0], "elevation": 9}]},
                           "cards": list(EXAMPLE_CARDS), "units": units})
    cells = {11: Hex(-2, 0), 20: Hex(2, 0), 21: Hex(*giant_at)}
    positions = {t: Placement(t, *state.layout.to_table(h)) for t, h in cells.items()}
    state = HEX.apply(state, positions, Action("initiative", None, {"rolls": [15, 5]}), None).state
    return HEX.apply(state, positions, Action("choose", 11), None).state, positions


def test_hex_skirmish_an_attack_behind_a_hill_or_past_an_engaging_figure_says_why() -> None:
    state, positions = _hex_archer_acting([3, -3])
    hidden = Action("attack", 11, {"target": 20})
    assert hidden in HEX.tryable_actions(state, positions) and hidden not in HEX.legal_actions(state, positions)
    assert ruled(HEX, state, positions, hidden) == [
        ("hex_skirmish.attack.line_of_sight", Outcome.ILLEGAL,
         "Higher ground at [0, 0] blocks Marsh Archer 11's line of sight to Hawk Rider 20.")]
    state, positions = _hex_archer_acting([-1, -1])  # beside the archer: engaged
    assert ruled(HEX, state, positions, hidden) == [
        ("hex_skirmish.engagement.target", Outcome.ILLEGAL,
         "Marsh Archer 11 is engaged with Stone Giant 21 and may attack only it, not Hawk Rider 20.")]


# ---------------------------------------------------------------------------------------------- Rise of the Magni
# The example teams; red's Ember Warden (CAV 6) takes the centre from blue's Tide Caller (CAV 5), which goes above
# it on [0, -1]: red places next, 9 heroes in hand on 17 empty cells.


def _magni_placing() -> tuple[Any, Positions]:
    state, positions = MAGNI.example(random.Random(3))
    res = MAGNI.apply(state, positions, Action("lead", None, {"red": 10, "blue": 20}), None)
    assert res.state.turn() == "red"
    return res.state, res.positions


def test_magni_placements_out_of_turn_or_on_a_taken_cell_can_be_tried_and_say_why() -> None:
    state, positions = _magni_placing()
    legal, tried = MAGNI.legal_actions(state, positions), MAGNI.tryable_actions(state, positions)
    assert len(legal) == 9 * 17 and tried[:len(legal)] == legal
    assert len(tried) == 153 + 9 + 2 + 1  # blue's 9 out of turn, the 2 taken cells, the Ember Warden again
    assert Action("place", 23, {"hex": [-2, 0]}) in tried
    assert ruled(MAGNI, state, positions, Action("place", 23, {"hex": [-2, 0]})) == [
        ("magni.place.turn", Outcome.ILLEGAL, "It is red's turn to place a tile; Kelp Witch is blue's.")]
    assert ruled(MAGNI, state, positions, Action("place", 11, {"hex": [0, -1]})) == [
        ("magni.place.cell", Outcome.ILLEGAL, "Cell [0, -1] already holds a tile (Tide Caller); a cell holds one tile.")]


def test_magni_actions_at_a_clicked_cell_place_each_hero_in_hand_there() -> None:
    state, positions = _magni_placing()
    x, y = state.layout.to_table(Hex(1, 0))
    here = MAGNI.actions_at(state, positions, None, (x + 0.1, y))
    assert [a.unit for a in here] == [*range(11, 20), *range(21, 30)]  # red's hand first, then blue's
    assert {tuple(a.params["hex"]) for a in here} == {(1, 0)}
    assert [MAGNI.apply(state, positions, a, None).legal for a in here] == [True] * 9 + [False] * 9
    x, y = state.layout.to_table(Hex(5, 0))
    off = MAGNI.actions_at(state, positions, 11, (x, y))
    assert off == [Action("place", 11, {"hex": [5, 0]})]
    assert ruled(MAGNI, state, positions, off[0])[0][2] == "Cell [5, 0] is not on the 19-cell board."
    lead, _ = MAGNI.example(random.Random(3))
    assert MAGNI.actions_at(lead, {}, None, (x, y)) == []  # the centre is fought for first


# ------------------------------------------------------------------------------------------------------- Valknut
# A 30" x 22" battlefield; 25.4 mm bases (0.5" radius); red 10 at (5, 5) has blue 20 0.5" away at (6.5, 5).


def _unit(tag: int, owner: str, at: list[float] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"tag": tag, "owner": owner, "base_mm": 25.4, "name": f"{owner.title()} {tag % 10 + 1}"}
    return d | ({"at": at} if at is not None else {})


ZONES = {"drop_zones": {"red": 1, "blue": 6}, "first_player": "red"}


def _valknut_activating() -> tuple[Any, Positions]:
    return scenario_state({
        "units": [_unit(10, "red", [5, 5]), _unit(11, "red", [5, 8]), _unit(20, "blue", [6.5, 5]),
                  _unit(21, "blue", [13.2, 5])],
        "state": {"phase": "activations", "active_player": "red", "stockpiles": [{"at": [9, 9]}], **ZONES}})


def test_valknut_actions_at_a_clicked_point_for_a_unit() -> None:
    state, positions = _valknut_activating()
    far = Action("attack", 10, {"target": 21})
    assert far in VALKNUT.tryable_actions(state, positions) and far not in VALKNUT.legal_actions(state, positions)
    assert VALKNUT.actions_at(state, positions, 10, (13.5, 5.2)) == [far]
    assert ruled(VALKNUT, state, positions, far)[0][1] is Outcome.ILLEGAL  # ranged with blue 20 within 1"
    away = VALKNUT.actions_at(state, positions, 10, (12.0, 12.0))
    assert away == [Action("disengage", 10, {"to": [12.0, 12.0], "length_in": 9.899})]  # engaged: 7" x sqrt 2
    assert ruled(VALKNUT, state, positions, away[0])[1] == (
        "valknut.disengage.distance", Outcome.ILLEGAL, 'Unit 10 disengaged 9.90" ± 0.00", its Disengage limit 3": illegal.')
    pile = VALKNUT.actions_at(state, positions, 10, (9.2, 9.0))
    assert pile == [Action("pick_up_runestone", 10, {"stockpile": 0})]
    assert ruled(VALKNUT, state, positions, pile[0])[0][2] == (
        'Runic Stockpile 0 is 5.16" ± 0.00" from unit 10\'s base; it can pick up within 1": illegal.')
    ally = VALKNUT.actions_at(state, positions, 10, (5.0, 8.2))
    assert ally == [Action("bear_restore", 10, {"targets": [11]}),
                    Action("assign_spirits", 10, {"blessings": [[11, "evasion"]]})]
    assert [ruled(VALKNUT, state, positions, a)[0][2] for a in ally] == [
        "Unit 10 needs Bear step 2 to restore HP.", "Unit 10 has no Spirits: it has no Raven steps."]
    assert VALKNUT.actions_at(state, positions, None, (12.0, 12.0)) == []


def test_valknut_offers_every_blessing_of_the_raven_step_and_a_restore_of_each_ally_within_6_inches() -> None:
    """The Declare list (not only a click on the ally): red 10 (Raven 3, Bear 2) at (5, 5); red 11 4.0" from its
    base edge at (5, 10); red 12 14.0" away at (5, 20); blue 20 and 21."""
    units = [{**_unit(10, "red", [5, 5]), "paths": {"raven": 3, "bear": 2}}, _unit(11, "red", [5, 10]),
             _unit(12, "red", [5, 20]), _unit(20, "blue", [20, 5]), _unit(21, "blue", [24, 5])]
    state, positions = scenario_state({"units": units, "state": {"phase": "activations", "active_player": "red",
                                                                 "stockpiles": [], **ZONES}})
    tried = VALKNUT.tryable_actions(state, positions)
    blessed = {(a.params["blessings"][0][0], a.params["blessings"][0][1]) for a in tried
               if a.kind == "assign_spirits" and a.unit == 10}
    allied = {"speed", "evasion", "armor", "accuracy", "damage"}  # Raven 3 grants these, and "slow" for an enemy
    assert blessed == {(t, e) for t in (10, 11, 12) for e in allied} | {(20, "slow"), (21, "slow")}
    assert all(len(a.params["blessings"]) == 3 for a in tried if a.kind == "assign_spirits")  # all 3 Spirits on one
    restores = [a.params["targets"] for a in tried if a.kind == "bear_restore" and a.unit == 10]
    assert restores == [[10], [11]]  # red 12 is 14.0" from its edge: beyond 6"
    for a in tried:
        if a.kind in ("assign_spirits", "bear_restore") and a.unit == 10:
            assert ruled(VALKNUT, state, positions, a)[0][1] in (Outcome.LEGAL, Outcome.WAITING), a
    assert VALKNUT.describe(Action("bear_restore", 10, {"targets": [11]}), lambda t: f"red {t}") == \
        "red 10 rolls 2d6 to restore HP to red 11"


def test_valknut_actions_at_a_clicked_point_for_no_unit_in_setup() -> None:
    state, positions = scenario_state({"units": [_unit(10, "red"), _unit(20, "blue")], "state": {"phase": "stockpiles"}})
    assert state.odd_player == "red"
    there = VALKNUT.actions_at(state, positions, None, (15.0, 5.0))
    assert there == [Action("place_stockpile", None, {"at": [15.0, 5.0]})]
    assert ruled(VALKNUT, state, positions, there[0])[0][1:] == (
        Outcome.ILLEGAL, "red places Runic Stockpiles in the odd sections; (15.00, 5.00) is in section 2.")
    assert VALKNUT.apply(state, positions, VALKNUT.actions_at(state, positions, None, (5.0, 5.0))[0], None).legal
    state, positions = scenario_state({"units": [_unit(10, "red"), _unit(20, "blue")],
                                       "state": {"phase": "drop_zones", "first_player": "red", "drop_zones": {"red": 1}}})
    assert VALKNUT.actions_at(state, positions, None, (25.0, 18.0)) == [Action("choose_drop_zone", None, {"section": 6})]
    near = VALKNUT.actions_at(state, positions, None, (15.0, 5.0))
    assert near == [Action("choose_drop_zone", None, {"section": 2})]
    assert ruled(VALKNUT, state, positions, near[0])[0][2] == (
        "blue's Drop Zone may be neither red's section 1 nor adjacent to it; section 2 is adjacent to it.")


@pytest.mark.parametrize("name", ["vigtavl", "valyr", "hex_skirmish", "magni", "valknut"])
def test_the_declare_list_marks_refused_exactly_the_actions_the_rules_refuse(name: str) -> None:
    """`legal_actions` may list only a few of a kind (Vigtavl's first placements: 8 of the 78 the rules take, and the
    other 70 were drawn as refused); the Declare list marks each action as its dry ruling says."""
    game = find_game(name)
    state, positions = game.example(random.Random(1))
    answer = _actions(game, state, dict(positions), None, None, None)
    offered = [(a["action"], a["legal"]) for g in answer["groups"] for a in g["actions"]]
    assert offered
    for action, legal in offered:
        res = game.apply(state, dict(positions), Action.from_json(action), None)
        if res.pending is None:  # one waiting for its dice is as `legal_actions` says
            assert legal == res.legal, (action, [v.message for v in res.verdicts])
