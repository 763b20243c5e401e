"""The Declare panel's buttons say each game's actions in its rule book's words (`Game.describe`), units by name:
never a parameter dump such as "assign spirits Blue 1 (blessings ((14, evasion)))"."""

from __future__ import annotations

import random

import pytest

from rules.engine import Action, Game, find_game, game_names, listed
from rules.roster import parse_roster
from rules.vigtavl.judge import build_position
from tests.vigtavl_positions import act, judge, rules_of, scenario, unit
from webui.routes.live import action_label

NAMES = {10: "Red 1", 11: "Red 2", 12: "Red 3", 20: "Blue 1", 21: "Blue 2", 31: "Blue Cog"}


def words(game: str, action: Action) -> str:
    return find_game(game).describe(action, lambda u: NAMES.get(u, f"tag {u}"))


def test_listed_says_a_list_as_a_sentence() -> None:
    assert [listed(w) for w in ([], ["A"], ["A", "B"], ["A", "B", "C"])] == ["", "A", "A and B", "A, B and C"]


@pytest.mark.parametrize(
    ("game", "action", "said"),
    [
        ("hex_skirmish", Action("initiative"), "roll the d20 for Initiative"),
        ("hex_skirmish", Action("choose", 10), "choose Red 1's army card"),
        ("hex_skirmish", Action("attack", 10, {"target": 20}), "Red 1 attacks Blue 1"),
        ("hex_skirmish", Action("end_turn"), "end the turn"),
        ("magni", Action("lead", None, {"red": 10, "blue": 20}), "Lead Units Red 1 (red) and Blue 1 (blue) fight for the center"),
        # a tie's dice given with it are said apart (the dice panel showed "lead (red red 1, blue blue 1)")
        ("magni", Action("lead", None, {"red": 10, "blue": 20, "rolls": [3, 3, 5, 2]}),
         "Lead Units Red 1 (red) and Blue 1 (blue) fight for the center"),
        ("magni", Action("place", 11, {"hex": [2, -1]}), "place Red 2 on hex [2, -1]"),
        ("magni", Action("place", 11, {"hex": [0, 0]}), "place Red 2 on the center"),
        ("valyr", Action("attack", 11, {"target": 20}), "Red 2 attacks Blue 1"),
        ("valyr", Action("ability", 21, {"name": "Mend", "target": 20}), "Blue 2 uses Mend on Blue 1"),
        ("valyr", Action("ability", 21, {"name": "Mend", "target": 21}), "Blue 2 uses Mend on itself"),
        ("valyr", Action("ability", 21, {"name": "Rally"}), "Blue 2 uses Rally"),
        ("valyr", Action("end_turn", 20), "end Blue 1's turn"),
        ("valyr", Action("start_round"), "start a new round"),
        # as a button says it (`as_ruled` names the round), as the game panel does
        ("valyr", Action("start_round", None, {"round": 1}), "start the first round"),
        ("valyr", Action("start_round", None, {"round": 3}), "start round 3"),
        ("valyr", Action("concede", None, {"player": "blue"}), "concede the game"),
        ("valknut", Action("assign_spirits", 10, {"blessings": [[10, "evasion"]]}),
         "Red 1 assigns Spirit Blessings: Evasion to itself"),
        ("valknut", Action("assign_spirits", 10, {"blessings": [[10, "evasion"], [11, "armor"], [10, "evasion"]]}),
         "Red 1 assigns Spirit Blessings: Evasion x2 to itself and Armor to Red 2"),
        ("valknut", Action("bear_restore", 11, {"targets": [11, 12]}), "Red 2 rolls 2d6 to restore HP to itself and Red 3"),
        ("vigtavl", Action("attack", 10, {"target": 20}), "Red 1 attacks Blue 1"),
        ("vigtavl", Action("attack", 10, {"target": 20, "mode": "close", "occupy": True}),
         "Red 1 attacks Blue 1 in close combat and moves in if it wins"),
        ("vigtavl", Action("attack", 10, {"target": 20, "mode": "ranged"}), "Red 1 attacks Blue 1 at range"),
        ("vigtavl", Action("attack", 10, {"target": 20, "mode": "ranged", "occupy": True}), "Red 1 attacks Blue 1 at range"),
        ("vigtavl", Action("fire_artillery", 10, {"artillery": 12, "target": 20}), "Red 1 fires Red 3 at Blue 1"),
        ("vigtavl", Action("seize", 10, {"hex": [1, 0]}), "Red 1 seizes hex [1, 0]"),
        ("vigtavl", Action("build", None, {"kind": "archer", "aboard": 31}), "build an archer aboard Blue Cog"),
        ("vigtavl", Action("seize", 10, {"hex": [1, 0], "target": "development"}), "Red 1 seizes the development on hex [1, 0]"),
        ("vigtavl", Action("seize", 10, {"hex": [1, 0], "target": 12}), "Red 1 seizes the artillery on hex [1, 0]"),
        ("vigtavl", Action("seize", 10, {"hex": [0, -1], "target": "artillery", "occupy": True}),
         "Red 1 seizes the artillery on hex [0, -1] and moves onto it"),
        # an edge [q, r, dir]: direction 2 of [-1, 3] is its neighbour [-1, 2] (docs/hex_boards.md)
        ("vigtavl", Action("breach", 11, {"edge": [-1, 3, 2]}), "Red 2 tries to breach the wall between hex [-1, 3] and hex [-1, 2]"),
        ("vigtavl", Action("build", None, {"kind": "wall", "edge": [-4, 1, 0]}), "build a wall between hex [-4, 1] and hex [-3, 1]"),
        ("vigtavl", Action("build", None, {"kind": "encampment", "hex": [-2, 1]}), "build an encampment on hex [-2, 1]"),
        ("vigtavl", Action("build", None, {"kind": "fort", "hex": [0, 1]}), "build a fort on hex [0, 1]"),
        ("vigtavl", Action("move_wall", None, {"from": [0, 0, 1], "to": [0, 0, 4]}),
         "move the wall between hex [0, 0] and hex [1, -1] to between hex [-1, 1] and hex [0, 0]"),
        ("vigtavl", Action("discharge", 10, {"to": [-1, 1]}), "discharge Red 1 and recruit a new one on hex [-1, 1]"),
        ("vigtavl", Action("load", 11, {"freighter": 31}), "load Red 2 onto Blue Cog"),
        ("vigtavl", Action("place", 12, {"hex": [-3, 0]}), "place Red 3 on hex [-3, 0]"),
        ("vigtavl", Action("activate", 12), "activate Red 3"),
        ("vigtavl", Action("finish"), "finish the active unit's activation"),
        ("vigtavl", Action("finish", 12), "finish the active unit's activation"),  # whichever unit is named
        ("vigtavl", Action("end_turn"), "end the turn"),
        ("vigtavl", Action("end_retaliation"), "end the retaliation"),
    ],
)
def test_an_action_in_the_games_words(game: str, action: Action, said: str) -> None:
    assert words(game, action) == said


CAMP = [((2, -2), "encampment", "red")]


@pytest.mark.parametrize(
    ("archer_at", "target_at", "said", "ruled"),
    [
        ((-2, 0), (-1, 0), "Red 1 attacks Blue 1 in close combat and moves in if it wins", "vigtavl.combat.close"),
        ((-2, 0), (0, 0), "Red 1 attacks Blue 1 at range", "vigtavl.combat.ranged"),  # two hexes: fired, no moving in
        ((-2, 0), (1, 0), "Red 1 attacks Blue 1 at range", "vigtavl.combat.ranged"),
        ((0, 0), (0, 0), "Red 1 attacks Blue 1 in close combat", "vigtavl.combat.close"),  # already on its hex
    ],
)
def test_a_vigtavl_attack_with_no_mode_is_said_as_the_rule_resolves_it(
        archer_at: tuple[int, int], target_at: tuple[int, int], said: str, ruled: str) -> None:
    """{"target", "occupy": true} with no "mode": close combat (and moving in after a win) only from an adjacent
    hex, as the attack rule decides; at range it fires and never moves in."""
    game = find_game("vigtavl")
    scn = scenario([unit(10, "archer", "red", *archer_at), unit(20, "infantry", "blue", *target_at)], devs=CAMP,
                   action=act("attack", 10, target=20, occupy=True))
    state, _ = build_position(game, scn)
    action = Action("attack", 10, {"target": 20, "occupy": True})
    assert game.describe(game.as_ruled(state, action), lambda u: NAMES[u]) == said
    assert ruled in rules_of(judge(scn))
    roster = parse_roster({"game": "vigtavl", "units": [
        {"tag": 10, "name": "Red 1", "owner": "red", "profile": "archer"},
        {"tag": 20, "name": "Blue 1", "owner": "blue", "profile": "infantry"}]})
    assert action_label(game, action, "red", roster, state) == f"Red: {said}"  # the Declare panel's button


def test_a_vigtavl_attack_with_no_mode_and_no_state_never_says_it_moves_in() -> None:
    assert words("vigtavl", Action("attack", 10, {"target": 20, "occupy": True})) == "Red 1 attacks Blue 1"


@pytest.mark.parametrize(
    ("game", "action", "said"),
    [
        ("valknut", Action("assign_spirits", 10, {"blessings": []}), "Red 1 withdraws its Spirit Blessings"),
    ],
)
def test_words_for_an_edge_case(game: str, action: Action, said: str) -> None:
    """Blessings of none: the rule withdraws the unit's earlier ones (not "assigns Spirit Blessings: ")."""
    assert words(game, action) == said


@pytest.mark.parametrize(
    ("game", "action"),
    [
        ("vigtavl", Action("build", None, {"kind": "", "hex": [0, 1]})),  # no kind of building: not "build an  on"
        ("vigtavl", Action("build", None, {"kind": " ", "hex": [0, 1]})),
        ("magni", Action("lead", None, {"red": True, "blue": 20})),  # true is no unit
        ("magni", Action("lead", None, {"red": False})),
        ("vigtavl", Action("breach", 11, {"edge": "north"})),  # not an edge: said as given, not raised
        ("vigtavl", Action("build", None, {"kind": "fort", "hex": [0, 1], "extra": 1})),
        ("valknut", Action("assign_spirits", 10, {"blessings": [["Red 1", "evasion"]]})),
        ("valknut", Action("bear_restore", 11, {"targets": [11, "x"]})),
        ("magni", Action("place", 11, {"hex": [2, -1], "at": [1.0, 2.0]})),
        ("magni", Action("place", 11, {"hex": {"at": [1.0, 2.0]}})),  # a table position, not a hex
        ("vigtavl", Action("build", None, {"kind": "fort", "edge": [0, 0, 1]})),  # a fort is never built on an edge
        ("vigtavl", Action("place", 12, {"hex": {"at": [3.0, 4.0]}})),  # a table position, not a hex
        ("valknut", Action("deploy", 10, {"to": [1.0, 2.0, 3.0]})),
        ("valknut", Action("place_stockpile", None, {"at": ["a", "b"]})),
    ],
)
def test_an_action_the_words_do_not_fit_keeps_every_parameter(game: str, action: Action) -> None:
    """What the game's words do not cover is said whole by the generic words, so nothing a player declares
    is hidden from the button."""
    generic = Game.describe(find_game(game), action, lambda u: NAMES.get(u, f"tag {u}"))
    assert words(game, action) == generic


@pytest.mark.parametrize("name", game_names())
def test_every_action_offered_in_play_has_the_games_own_words(name: str) -> None:
    """Random legal play from each game's example (the conformance test's walk): every action a player would
    declare from the panel (not the camera's) is said in the game's words, not the generic parameter list."""
    game = find_game(name)
    seen: set[str] = set()
    for seed in range(1, 4):
        rng = random.Random(seed)
        state, positions = game.example(rng)
        for _ in range(60):
            if game.is_over(state):
                break
            actions = game.legal_actions(state, positions)
            if not actions:
                break
            for a in actions:
                if a.kind in game.camera_kinds:
                    continue
                seen.add(a.kind)
                said = words(name, a)
                assert said != Game.describe(game, a, lambda u: NAMES.get(u, f"tag {u}")), (a, said)
                assert not any(mark in said for mark in ("((", "{", "'s (", "_")), said
            result = game.apply(state, positions, rng.choice(actions), rng)
            state, positions = result.state, result.positions
    assert seen, f"{name}: no action offered"



@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"stockpile": 1}, "Red 1 picks up a Runestone from the Runic Stockpile in Section 5"),
        ({"stockpile": 0}, "Red 1 picks up a Runestone from the Runic Stockpile in Section 1"),
        ({"stockpile": 7}, "Red 1 picks up a Runestone from Runic Stockpile 7"),  # no such stockpile: its number
        ({"stone": 0}, "Red 1 picks up a Runestone from the ground"),
        ({}, "Red 1 picks up the nearest Runestone"),
    ],
)
def test_a_valknut_runestone_is_picked_up_from_a_stockpile_named_by_its_section(params: dict, said: str) -> None:
    """Players know a Runic Stockpile by where it stands (the board labels its section), not by its number."""
    from rules.valknut.setup import scenario_state

    game = find_game("valknut")
    state, _ = scenario_state({"units": [{"tag": 10, "owner": "red", "at": [2, 2]}, {"tag": 20, "owner": "blue",
                                                                                     "at": [28, 20]}],
                               "state": {"stockpiles": [{"at": [3, 3]}, {"at": [15, 18]}]}})
    assert [s.section for s in state.stockpiles] == [1, 5]
    action = Action("pick_up_runestone", 10, params)
    assert game.describe(game.as_ruled(state, action), lambda u: NAMES[u]) == said
    assert game.as_ruled(None, action) is action  # no game state: the action as it was
