"""All of Vigtavl declarable from the page (issue 31, items 2 and 4): `tryable_actions` offers refused actions too
(an attack blocked by a mountain, a castle the player cannot pay for), `actions_at` gives the actions at a clicked
table point, the camera's knight put down on land is an unload (and on its freighter a load), and every ruling that
leaves the table wrong says the physical fix with the hex named. Tiny boards; layout 1" a cell, pointy, (0, 0) at
the table's origin, so hex (1, 0) is centred at (1.732, 0)."""

from __future__ import annotations

import math
import random

from rules.engine import Action, Outcome
from rules.hexgrid import Hex
from rules.vigtavl.game import Vigtavl
from rules.vigtavl.judge import build_position
from rules.vigtavl.state import VigtavlState
from tests.vigtavl_positions import act, board, judge_given, messages, scenario, unit

GAME = Vigtavl()
CAMP = [((2, -2), "encampment", "red")]  # red's development: where its prisoners go
COAST = board(m2_0="sea", m2_1="sea", m1_m1="sea")  # land but for three sea hexes on the west


def position(units: list[dict], **more: object) -> VigtavlState:
    state, _ = build_position(GAME, scenario(units, **more))  # type: ignore[arg-type]
    return state


def centre(state: VigtavlState, q: int, r: int) -> tuple[float, float]:
    return state.layout.to_table(Hex(q, r))


def ruled(state: VigtavlState, action: Action | None) -> tuple[bool, str]:
    assert action is not None
    res = GAME.apply(state, {}, action, None)
    return res.legal, " | ".join(v.message for v in res.verdicts)


# ------------------------------------------------------------------------------------------------ tryable_actions


def test_an_attack_blocked_by_a_mountain_is_offered_and_its_ruling_says_why() -> None:
    units = [unit(10, "archer", "red", -1, 0), unit(20, "infantry", "blue", 1, 0)]
    state = position(units, brd=board(m0_0="mountain"), devs=CAMP)
    offered = GAME.tryable_actions(state, {})
    blocked = Action("attack", 10, {"target": 20})
    assert blocked in offered
    assert blocked not in GAME.legal_actions(state, {})
    legal, said = ruled(state, blocked)
    assert not legal and said == "The line of fire is blocked: mountain at [0, 0]."
    # the refused come after every legal action
    verdicts = [ruled(state, a)[0] for a in offered]
    assert verdicts == sorted(verdicts, reverse=True) and verdicts.count(True) >= 1


def test_builds_of_every_kind_on_every_allowed_hex_paid_for_or_not() -> None:
    # red's infantry on [0, 0] and an encampment on [2, -2]; red has 1 gold
    state = position([unit(10, "infantry", "red", 0, 0)], devs=CAMP, state={"gold": {"red": 1}})
    builds = [a.params for a in GAME.tryable_actions(state, {}) if a.kind == "build"]
    dev_sites = {(0, 0), (1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1),  # on and beside the infantry
                 (2, -1), (1, -2)}  # beside the encampment (its own hex holds a development)
    for kind in ("encampment", "fort", "castle"):
        assert {tuple(b["hex"]) for b in builds if b["kind"] == kind} == dev_sites, kind
    unit_sites = {(2, -2), (2, -1), (1, -1), (1, -2)}  # on and beside the encampment, on the map
    for kind in ("infantry", "archer", "cavalry", "artillery"):
        assert {tuple(b["hex"]) for b in builds if b["kind"] == kind} == unit_sites, kind
    assert not [b for b in builds if b["kind"] in ("caravel", "freighter", "galleon")]  # no coast: all land
    assert len([b for b in builds if b["kind"] == "wall"]) == 6 + 6  # the edges of [0, 0] and of [2, -2]
    legal, said = ruled(state, Action("build", None, {"kind": "castle", "hex": [1, 0]}))
    assert not legal and said == "A castle costs 3 gold; red has 1."
    assert ruled(state, Action("build", None, {"kind": "encampment", "hex": [1, 0]}))[0]


def test_loads_and_unloads_are_offered() -> None:
    units = [unit(15, "cavalry", "red", -1, 1), unit(16, "freighter", "red", -2, 0), unit(17, "infantry", "red", aboard=16)]
    state = position(units, brd=COAST)
    offered = GAME.tryable_actions(state, {})
    assert Action("load", 15, {"freighter": 16}) in offered
    assert [a for a in offered if a.kind == "unload"] == [Action("unload", 17, {"to": [-1, 0]})]  # its one land neighbour
    legal, said = ruled(state, Action("unload", 17, {"to": [-1, 0]}))
    assert legal and "infantry 17 moves [-2, 0] -> [-1, 0]: 1 of 3 movement" in said
    assert GAME.describe(Action("unload", 17, {"to": [-1, 0]}), lambda u: f"Unit {u}") == "unload Unit 17 onto hex [-1, 0]"


def test_the_example_state_offers_a_bounded_list() -> None:
    state, positions = GAME.example(random.Random(1))
    offered = GAME.tryable_actions(state, positions)  # placement: one ship of each kind on every free sea hex
    assert {a.kind for a in offered} == {"place"}
    assert {(p.kind, p.owner) for a in offered if a.unit is not None and (p := state.piece(a.unit)) is not None} == {
        ("caravel", "red"), ("freighter", "red"), ("galleon", "red")}
    assert len(offered) == 3 * 26  # 26 sea hexes on the radius-3 map


# ------------------------------------------------------------------------------------------------ actions_at


def test_actions_at_a_clicked_enemy_for_the_selected_unit() -> None:
    units = [unit(10, "archer", "red", -1, 0), unit(30, "artillery", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    state = position(units, devs=CAMP + [((0, 0), "encampment", "blue")],
                     walls=[((0, 0, 3), "blue")])  # blue's wall between [0, 0] and [-1, 0]
    at = (0.3, 0.0)  # inside [0, 0], nearest its east edge
    got = GAME.actions_at(state, {}, 10, at)
    assert sorted(map(repr, got)) == sorted(map(repr, [
        Action("move", 10, {"to": [0, 0]}), Action("tow", 10, {"to": [0, 0], "artillery": 30}),
        Action("attack", 10, {"target": 20}), Action("attack", 10, {"target": 20, "occupy": True}),
        Action("attack", 10, {"target": 20, "mode": "ranged"}),
        Action("fire_artillery", 10, {"artillery": 30, "target": 20}),
        Action("seize", 10, {"hex": [0, 0]}), Action("build", None, {"kind": "wall", "edge": [0, 0, 0]}),
        Action("discharge", 10, {"to": [0, 0]}),
    ]))
    # near the west edge instead: blue's wall there is breached, not built on
    west = GAME.actions_at(state, {}, 10, (-0.7, 0.0))
    assert Action("breach", 10, {"edge": [-1, 0, 0]}) in west
    assert not [a for a in west if a.kind == "build"]
    # the wall refuses the close combat, with its reason
    legal, said = ruled(state, Action("attack", 10, {"target": 20}))
    assert not legal and "blue's wall stands between [-1, 0] and [0, 0]" in said


def test_actions_at_with_no_unit_builds_everything_there() -> None:
    units = [unit(10, "infantry", "red", -1, 1), unit(16, "freighter", "red", -2, 1)]
    state = position(units, brd=COAST, devs=[((-1, 0), "encampment", "red")], walls=[((-1, 1, 0), "red")])
    land = GAME.actions_at(state, {}, None, centre(state, 0, 0))
    assert [(a.kind, a.params.get("kind")) for a in land if "hex" in a.params] == [
        ("build", k) for k in ("encampment", "fort", "castle", "infantry", "archer", "cavalry", "artillery")]
    assert all(a.params.get("hex") == [0, 0] for a in land if "hex" in a.params)
    sea_at = centre(state, -2, 1)
    sea = GAME.actions_at(state, {}, None, (sea_at[0] + 0.05, sea_at[1]))
    assert {(a.params.get("kind"), a.params.get("hex") and tuple(a.params["hex"]), a.params.get("aboard"))
            for a in sea if a.kind == "build" and a.params.get("kind") != "wall"} == {
        ("caravel", (-2, 1), None), ("freighter", (-2, 1), None), ("galleon", (-2, 1), None),
        ("infantry", None, 16), ("archer", None, 16), ("cavalry", None, 16)}
    assert Action("move_wall", None, {"from": [-1, 1, 0], "to": [-2, 1, 0]}) in sea  # red's one wall moved here
    # a placement-phase click offers each ship of the player's still to place
    placing = position([unit(11, "caravel", "red", unplaced=True), unit(12, "galleon", "red", unplaced=True)],
                       brd=board("sea"), state={"phase": "placement"})
    assert GAME.actions_at(placing, {}, None, (0.0, 0.0)) == [Action("place", 11, {"hex": [0, 0]}),
                                                            Action("place", 12, {"hex": [0, 0]})]


def test_actions_at_a_point_off_the_numbers_is_nothing() -> None:
    state = position([unit(10, "infantry", "red", 0, 0)])
    assert GAME.actions_at(state, {}, 10, (math.nan, 0.0)) == []
    assert GAME.actions_at(state, {}, 99, (0.0, 0.0)) == []


# ------------------------------------------------------------------------------------------------ the camera


def test_a_knight_put_on_land_from_its_freighter_is_an_unload_ruled() -> None:
    units = [unit(16, "freighter", "red", -2, 0), unit(17, "infantry", "red", aboard=16), unit(15, "infantry", "red", 1, 0)]
    state = position(units, brd=COAST)
    x, y = centre(state, 0, 0)
    action = GAME.camera_action(state, 17, "move", (x + 0.1, y), centre(state, -2, 0))
    assert action == Action("unload", 17, {"to": [0, 0]})
    res = GAME.apply(state, {}, action, None)
    assert res.legal and res.state.piece(17).hex == Hex(0, 0) and res.state.piece(17).aboard is None
    assert "infantry 17 moves [-2, 0] -> [0, 0]: 2 of 3 movement" in " | ".join(v.message for v in res.verdicts)
    # seen at sea it rides its freighter: no news; put down too far inland, the unload is refused with the fix
    assert GAME.camera_action(state, 17, "move", centre(state, -2, 1)) is None
    far = GAME.camera_action(state, 17, "move", centre(state, 2, 0))
    legal, said = ruled(state, far)
    assert far == Action("unload", 17, {"to": [2, 0]}) and not legal
    assert said.endswith("Put Infantry 17 back aboard Freighter 16 on [-2, 0].")
    # a knight put on its freighter's hex boards it
    load = GAME.camera_action(res.state, 15, "move", centre(state, -2, 0))
    assert load == Action("load", 15, {"freighter": 16})


def test_a_knight_put_on_a_freighter_boards_it() -> None:
    units = [unit(15, "infantry", "red", -1, 0), unit(16, "freighter", "red", -2, 0)]
    state = position(units, brd=COAST, state={"phase": "build"})
    action = GAME.camera_action(state, 15, "move", centre(state, -2, 0), centre(state, -1, 0))
    assert action == Action("load", 15, {"freighter": 16})
    legal, said = ruled(state, action)
    assert legal and said.endswith("infantry 15 boards freighter 16: 1 of 3 movement (boarding counts 1). "
                                   "Put Infantry 15 on Freighter 16 at [-2, 0].")


# ------------------------------------------------------------------------------------------------ the table's fixes


def test_a_lost_battle_by_move_says_put_it_back() -> None:
    units = [unit(15, "cavalry", "red", -1, 0), unit(20, "infantry", "blue", 1, 0)]
    ans = judge_given(scenario(units, devs=CAMP, action=act("move", 15, to=[1, 0], rolls=[1, 1, 1, 6])))
    retreat = next(v for v in ans["verdicts"] if v["rule"] == "vigtavl.results.retreat")
    assert retreat["message"] == ("The defender wins: cavalry 15 retreats to [-1, 0], where its move began. "
                                  "Put Cavalry 15 back on [-1, 0].")
    assert ans["after"]["units"]["15"]["hex"] == [-1, 0]


def test_an_illegal_move_says_put_it_back() -> None:
    ans = judge_given(scenario([unit(15, "cavalry", "red", -1, 0)], brd=COAST, action=act("move", 15, to=[-2, 1])))
    assert ans["outcome"] == "illegal"
    assert messages(ans) == ("cavalry 15 (movement 4, 4 left) may not move to [-2, 1]: hex [-2, 1] is sea, not land. "
                             "Put Cavalry 15 back on [-1, 0].")


def test_a_captured_knight_says_where_the_prisoner_goes() -> None:
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge_given(scenario(units, devs=CAMP, action=act("attack", 10, target=20, rolls=[6, 1])))
    assert "infantry 20 is captured and held at [2, -2]. The prisoner goes to [2, -2]: put Infantry 20 there, " \
           "red's prisoner." in messages(ans)
    assert ans["after"]["units"]["20"] == {"kind": "infantry", "owner": "blue", "hex": [2, -2], "aboard": None,
                                           "captor": "red", "sunk_by": None}


def test_a_sunk_ship_says_take_it_off_the_table_with_its_cargo() -> None:
    units = [unit(10, "galleon", "red", -1, 0), unit(20, "freighter", "blue", 0, 0), unit(21, "infantry", "blue", aboard=20)]
    ans = judge_given(scenario(units, brd=board("sea"), action=act("attack", 10, target=20, rolls=[6, 1, 1, 1, 1])))
    assert "freighter 20 is sunk and goes to red's ship graveyard. Take Freighter 20, with Infantry 21 aboard, off " \
           "the table to red's ship graveyard." in messages(ans)
    ans = judge_given(scenario([unit(10, "caravel", "red", -1, 0), unit(20, "caravel", "blue", 0, 0)], brd=board("sea"),
                               action=act("attack", 10, target=20, rolls=[6, 1])))
    assert "Take Caravel 20 off the table to red's ship graveyard." in messages(ans)


def test_builds_walls_and_breaches_say_what_to_put_on_or_take_off_the_table() -> None:
    units = [unit(10, "infantry", "red", 0, 0), unit(20, "infantry", "blue", 1, 0)]
    state = position(units, devs=CAMP, walls=[((0, 0, 0), "blue")])
    assert ruled(state, Action("build", None, {"kind": "fort", "hex": [-1, 0]}))[1].endswith("Put red's fort on [-1, 0].")
    assert ruled(state, Action("build", None, {"kind": "wall", "edge": [0, 0, 2]}))[1].endswith(
        "Put a wall of red's between [0, 0] and [0, -1].")
    assert ruled(state, Action("build", None, {"kind": "archer", "hex": [2, -1], "tag": 40}))[1].endswith(
        "Put the new Archer 40 on [2, -1].")
    legal, said = ruled(state, Action("breach", 10, {"edge": [0, 0, 0], "rolls": [2]}))
    assert legal and said.endswith("the wall is removed. Take the wall between [0, 0] and [1, 0] off the table.")
    legal, said = ruled(state, Action("breach", 10, {"edge": [0, 0, 0], "rolls": [5]}))
    assert legal and said.endswith("the wall holds.")  # nothing to do on the table
    legal, said = ruled(state, Action("seize", 10, {"hex": [0, 0]}))
    assert not legal  # nothing of blue's to seize on its own hex


def test_a_won_attack_that_moves_in_and_a_seizure_say_so() -> None:
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge_given(scenario(units, devs=CAMP, action=act("attack", 10, target=20, occupy=True, rolls=[6, 1])))
    assert "infantry 10 occupies [0, 0]. Move Infantry 10 onto [0, 0]." in messages(ans)
    state = position([unit(10, "infantry", "red", -1, 0)], devs=CAMP + [((0, 0), "fort", "blue")])
    legal, said = ruled(state, Action("seize", 10, {"hex": [0, 0]}))
    assert legal and "red seizes blue's fort on [0, 0]. Replace blue's fort on [0, 0] with one of red's." in said
    assert all(v.outcome is not Outcome.ILLEGAL for v in GAME.apply(state, {}, Action("seize", 10, {"hex": [0, 0]}),
                                                                     None).verdicts)


def test_discharge_a_moved_wall_a_tow_and_a_refused_placement_say_their_fixes() -> None:
    units = [unit(10, "infantry", "red", 0, 0), unit(11, "cavalry", "red", 1, -2), unit(30, "artillery", "red", 1, -2)]
    state = position(units, devs=CAMP, walls=[((0, 0, 0), "red")], state={"phase": "build"})
    assert ruled(state, Action("discharge", 10, {"to": [2, -1]}))[1].endswith(
        "Take Infantry 10 from [0, 0] and put it on [2, -1] as the recruit.")
    assert ruled(state, Action("move_wall", None, {"from": [0, 0, 0], "to": [0, 0, 1]}))[1].endswith(
        "Move the wall between [0, 0] and [1, 0] to stand between [0, 0] and [1, -1].")
    legal, said = ruled(state, Action("tow", 11, {"to": [0, -1], "artillery": 30}))
    assert legal and said.endswith("Move Artillery 30 along to [0, -1] too.")
    assert GAME.describe(Action("tow", 11, {"to": [0, -1], "artillery": 30}), lambda u: f"Unit {u}") == \
        "move Unit 11 to hex [0, -1], towing Unit 30"
    placing = position([unit(11, "caravel", "red", unplaced=True)], brd=board("sea", m0_0="land"),
                       state={"phase": "placement"})
    put = GAME.camera_action(placing, 11, "placed", centre(placing, 0, 0))
    assert put == Action("place", 11, {"hex": [0, 0]})
    legal, said = ruled(placing, put)
    assert not legal and said == ("Ship 11 may not be placed: hex [0, 0] is land, not sea. Take Caravel 11 off the map.")
