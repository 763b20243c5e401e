"""Valyr's rule clauses, one test each, on tiny boards (bases 25.4 mm across: radius 0.5", so edge-to-edge
figures are easy to check by hand). Scenarios go through the real judge; dice come from a seeded Random."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from rules.engine import Action, Outcome, Result, RulesInputError, ScenarioError, Shape, find_game
from rules.valyr.game import Valyr, ValyrState

GAME = Valyr()
BASE_MM = 25.4


def card(name: str = "Tester", attack: str = "3-12", defense: str = "0-0", rng: str = "0-[0/0]-12",
         energy: int = 2, move: str = "6-4", health: int = 5, appraisal: float = 10,
         abilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """A test card (ours, not the author's)."""
    return {
        "Identity": {"Name": name, "Type": "Hero", "Dynasty": "Test", "Class": "Test", "Species": "Test",
                     "Distinctions": [], "Size": "1"},
        "Combat": {"Attack": attack, "Defense": defense, "Range": rng, "Energy": energy, "Movement": move,
                   "Health": health, "Appraisal": appraisal},
        "Abilities": abilities or {},
        "Components": [],
    }


def unit(tag: int, owner: str, at: tuple[float, float], profile: str = "Tester", **extra: Any) -> dict[str, Any]:
    return {"tag": tag, "owner": owner, "profile": profile, "at": list(at), "base_mm": BASE_MM, **extra}


def scenario(units: list[dict[str, Any]], cards: list[dict[str, Any]] | None = None,
             state: dict[str, Any] | None = None, terrain: list[dict[str, Any]] | None = None,
             action: dict[str, Any] | None = None, seed: int = 0) -> dict[str, Any]:
    s: dict[str, Any] = {"game": "valyr", "seed": seed, "units": units, "cards": cards or [card()],
                         "state": state or {}, "board": {"width_in": 30, "depth_in": 22}}
    if terrain:
        s["terrain"] = {"pieces": terrain}
    if action is not None:
        s["action"] = action
    return s


def judge(s: dict[str, Any]) -> dict[str, Any]:
    return GAME.judge(s, random.Random(s.get("seed", 0)))


def rules_of(answer: dict[str, Any]) -> dict[str, str]:
    """Each verdict's outcome by rule name."""
    return {v["rule"]: v["outcome"] for v in answer["verdicts"]}


def messages(answer: dict[str, Any]) -> str:
    return " | ".join(v["message"] for v in answer["verdicts"])


def act(state: ValyrState, positions: Any, kind: str, unit_tag: int | None = None, seed: int = 0,
        **params: Any) -> Result:
    return GAME.apply(state, positions, Action(kind, unit_tag, params), random.Random(seed))


def two(**kw: Any) -> list[dict[str, Any]]:
    """Red 12 at (5, 5) and blue 14 at (15, 5): 10" between centres, 9" edge to edge."""
    return [unit(12, "red", (5, 5), **kw), unit(14, "blue", (15, 5))]


def move(to: list[float], unit_tag: int = 12, **params: Any) -> dict[str, Any]:
    return {"kind": "move", "unit": unit_tag, "params": {"to": to, **params}}


def attack(target: int = 14, unit_tag: int = 12, **params: Any) -> dict[str, Any]:
    return {"kind": "attack", "unit": unit_tag, "params": {"target": target, **params}}


ROCK = {"name": "rock", "kind": ["elevated"], "polygon": [[8, 3], [10, 3], [10, 7], [8, 7]], "height_in": 1.5}

# -------------------------------------------------------------------------------------- army and priority


def test_army_within_appraisal_limit_is_legal() -> None:
    s = scenario(two(), state={"round": 0, "appraisal_limit": 10})
    s["question"] = {"kind": "army"}
    ans = judge(s)
    assert ans["outcome"] == "legal"
    assert "red's army is appraised at 10, within the agreed 10" in messages(ans)


def test_army_over_appraisal_limit_blocks_first_round() -> None:
    cards = [card(), card("Giant", appraisal=20)]
    units = [unit(12, "red", (5, 5)), unit(14, "blue", (15, 5), profile="Giant")]
    ans = judge(scenario(units, cards, state={"round": 0, "appraisal_limit": 15}, action={"kind": "start_round"}))
    assert ans["outcome"] == "illegal"
    assert "blue's army is appraised at 20, over the agreed 15" in messages(ans)
    assert ans["state"]["round"] == 0


def test_priority_token_goes_to_lowest_appraisal() -> None:
    cards = [card(), card("Giant", appraisal=20)]
    units = [unit(12, "red", (5, 5), profile="Giant"), unit(14, "blue", (15, 5))]
    ans = judge(scenario(units, cards, state={"round": 0}, action={"kind": "start_round"}))
    assert ans["outcome"] == "legal"
    assert ans["numbers"]["priority"] == "blue" and ans["numbers"]["appraisals"] == {"red": 20, "blue": 10}
    assert ans["state"]["to_play"] == "blue" and ans["state"]["round"] == 1


def test_priority_tie_is_a_coin_flip_from_the_rng() -> None:
    s = scenario(two(), state={"round": 0}, action={"kind": "start_round"})
    winners = {}
    for seed in range(12):
        s["seed"] = seed
        ans = judge(s)
        assert "red and blue tie at 10; a coin flip gives" in messages(ans)
        winners[seed] = ans["numbers"]["priority"]
        assert judge(s)["numbers"]["priority"] == winners[seed]  # same seed, same flip
    assert set(winners.values()) == {"red", "blue"}


# ---------------------------------------------------------------------------------------- rounds and turns


def test_round_start_turns_every_card_vertical() -> None:
    units = [unit(12, "red", (5, 5), exhausted=True), unit(14, "blue", (15, 5), exhausted=True)]
    state, pos = GAME.read_scenario(scenario(units, state={"round": 1, "priority": "red"}))
    assert state.to_play is None
    res = act(state, pos, "start_round")
    assert res.legal and res.state.round == 2
    assert all(u.vertical for u in res.state.units)


def test_round_cannot_start_while_cards_are_vertical() -> None:
    ans = judge(scenario(two(), action={"kind": "start_round"}))
    assert ans["outcome"] == "illegal" and "still stand vertical" in messages(ans)


def test_priority_token_passes_right_each_new_round() -> None:
    units = [unit(12, "red", (5, 5), exhausted=True), unit(14, "blue", (15, 5), exhausted=True),
             unit(16, "green", (25, 5), exhausted=True)]
    state, pos = GAME.read_scenario(scenario(units, state={"players": ["red", "blue", "green"], "priority": "red"}))
    res = act(state, pos, "start_round")
    # turns pass to the left (next in seating order); the token passes to the right (previous)
    assert res.state.priority == "green" and res.state.to_play == "green"


def test_turns_pass_to_the_left() -> None:
    units = [unit(12, "red", (5, 5)), unit(14, "blue", (15, 5)), unit(16, "green", (25, 5))]
    state, pos = GAME.read_scenario(scenario(units, state={"players": ["red", "blue", "green"], "priority": "red"}))
    res = act(state, pos, "end_turn", 12)
    assert res.state.to_play == "blue"


def test_player_without_vertical_cards_is_passed_over() -> None:
    units = [unit(12, "red", (5, 5)), unit(14, "blue", (15, 5), exhausted=True), unit(16, "green", (25, 5))]
    state, pos = GAME.read_scenario(scenario(units, state={"players": ["red", "blue", "green"], "priority": "red"}))
    assert act(state, pos, "end_turn", 12).state.to_play == "green"


def test_unit_takes_actions_equal_to_energy_then_is_exhausted() -> None:
    state, pos = GAME.read_scenario(scenario(two()))
    first = act(state, pos, "move", 12, to=[7, 5])
    assert first.legal and first.state.active == 12 and first.state.actions_used == 1
    assert not first.state.unit(12).exhausted and first.state.to_play == "red"
    second = act(first.state, first.positions, "move", 12, to=[9, 5])
    assert second.legal
    assert second.state.unit(12).exhausted and second.state.active is None and second.state.to_play == "blue"
    assert "has taken 2 of 2 actions (energy 2)" in second.verdicts[-1].message


def test_exhausted_unit_cannot_act() -> None:
    ans = judge(scenario([unit(12, "red", (5, 5), exhausted=True), unit(13, "red", (5, 9)),
                          unit(14, "blue", (15, 5))], action=move([7, 5])))
    assert ans["outcome"] == "illegal"
    assert rules_of(ans) == {"valyr.turn.exhausted": "illegal"}
    assert "Tester 12 is exhausted (its card is horizontal) and cannot act until the next round" in messages(ans)


def test_turn_order_only_the_player_to_play_acts() -> None:
    ans = judge(scenario(two(), state={"priority": "red"}, action=move([13, 5], unit_tag=14)))
    assert rules_of(ans) == {"valyr.turn.order": "illegal"}
    assert "It is red's turn; blue's Tester 14 cannot act now." in messages(ans)


def test_one_unit_takes_its_turn_at_a_time() -> None:
    units = [unit(12, "red", (5, 5)), unit(13, "red", (5, 9)), unit(14, "blue", (15, 5))]
    ans = judge(scenario(units, state={"active": 12, "actions_used": 1, "moves_made": 1},
                         action=move([6, 9], unit_tag=13)))
    assert rules_of(ans) == {"valyr.turn.one_unit": "illegal"}
    assert "Tester 12 is taking its turn (1 of 2 actions used)" in messages(ans)


def test_end_turn_early_exhausts_the_unit() -> None:
    ans = judge(scenario(two(), state={"active": 12, "actions_used": 1, "moves_made": 1},
                         action={"kind": "end_turn", "unit": 12}))
    assert ans["outcome"] == "legal" and ans["numbers"]["unused_actions"] == 1
    assert ans["state"]["units"][0]["exhausted"] is True and ans["state"]["to_play"] == "blue"


def test_round_ends_when_every_card_is_exhausted() -> None:
    units = [unit(12, "red", (5, 5)), unit(14, "blue", (15, 5), exhausted=True)]
    state, pos = GAME.read_scenario(scenario(units))
    res = act(state, pos, "end_turn", 12)
    assert res.state.to_play is None
    assert "round 1 is over" in res.verdicts[-1].message
    assert GAME.legal_actions(res.state, res.positions) == [Action("start_round")]
    assert act(res.state, res.positions, "move", 12, to=[6, 5]).verdicts[0].rule == "valyr.turn.round"


# -------------------------------------------------------------------------------------------------- move


def test_move_first_move_up_to_sprint() -> None:
    ans = judge(scenario(two(), action=move([11.3, 5], pm_in=0.02)))
    assert ans["outcome"] == "illegal"
    assert 'Tester 12 moved 6.30" ± 0.02", its Sprint is 6": illegal.' in messages(ans)
    assert ans["numbers"]["length_in"] == pytest.approx(6.3)
    ok = judge(scenario(two(), action=move([10.9, 5], pm_in=0.02)))
    assert ok["outcome"] == "legal" and ok["positions"]["12"] == [10.9, 5, 0]


def test_move_later_moves_up_to_stamina() -> None:
    state = {"active": 12, "actions_used": 1, "moves_made": 1}
    cards = [card(energy=3)]
    ans = judge(scenario(two(), cards, state=state, action=move([9.5, 5])))
    assert ans["outcome"] == "illegal" and 'its Stamina is 4": illegal' in messages(ans)
    assert judge(scenario(two(), cards, state=state, action=move([8.9, 5])))["outcome"] == "legal"


def test_move_too_close_to_call_inside_pm() -> None:
    ans = judge(scenario(two(), action=move([11, 5], pm_in=0.05)))
    assert ans["outcome"] == "too close to call"
    assert ans["state"]["actions_used"] == 0 and ans["positions"]["12"] == [5, 5, 0]


def test_move_pm_comes_from_the_measured_placement() -> None:
    units = [unit(12, "red", (5, 5), pm=0.03), unit(14, "blue", (15, 5))]
    ans = judge(scenario(units, action=move([10.98, 5])))
    # start and end measured with ±0.03 each: ±0.042 on the length, so 5.98" against 6" cannot be called
    assert ans["numbers"]["pm_in"] == pytest.approx(0.0424, abs=1e-4)
    assert ans["outcome"] == "too close to call"


def test_move_split_into_straight_parts_sums_lengths() -> None:
    ans = judge(scenario(two(), action={"kind": "move", "unit": 12, "params": {"segments": [[8, 5], [8, 9]]}}))
    assert ans["numbers"]["length_in"] == pytest.approx(7.0) and ans["numbers"]["parts"] == 2
    assert ans["outcome"] == "illegal"  # straight from (5, 5) to (8, 9) would be 5"


def test_move_climbing_over_1_inch_counts_double() -> None:
    path = {"segments": [[7.4, 5, 0], [7.4, 5, 1.5], [8.5, 5, 1.5]]}
    ans = judge(scenario(two(), terrain=[ROCK], action={"kind": "move", "unit": 12, "params": path}))
    # 2.4" + 1.1" across, 1.5" up counted double: 3.5 + 3.0 = 6.5 > Sprint 6
    assert ans["numbers"]["length_in"] == pytest.approx(6.5) and ans["numbers"]["doubled_in"] == pytest.approx(1.5)
    assert ans["outcome"] == "illegal" and "counted double without a ladder" in messages(ans)


def test_move_climbing_1_inch_or_less_counts_single() -> None:
    low = {**ROCK, "height_in": 1.0}
    path = {"segments": [[7.4, 5, 0], [7.4, 5, 1.0], [8.5, 5, 1.0]]}
    ans = judge(scenario(two(), terrain=[low], action={"kind": "move", "unit": 12, "params": path}))
    assert ans["numbers"]["length_in"] == pytest.approx(4.5) and ans["numbers"]["doubled_in"] == 0
    assert ans["outcome"] == "legal" and ans["positions"]["12"] == [8.5, 5, 1.0]


def test_move_ladder_climbs_single() -> None:
    path = {"segments": [[7.4, 5, 0], [7.4, 5, 1.5], [8.5, 5, 1.5]], "ladder": True}
    ans = judge(scenario(two(), terrain=[ROCK], action={"kind": "move", "unit": 12, "params": path}))
    assert ans["numbers"]["length_in"] == pytest.approx(5.0) and ans["outcome"] == "legal"


def test_move_climbing_down_counts_like_climbing_up() -> None:
    units = [unit(12, "red", (9, 5), z=1.5), unit(14, "blue", (20, 5))]
    path = {"segments": [[10.6, 5, 1.5], [10.6, 5, 0]]}
    ans = judge(scenario(units, terrain=[ROCK], action={"kind": "move", "unit": 12, "params": path}))
    assert ans["numbers"]["length_in"] == pytest.approx(1.6 + 3.0) and ans["outcome"] == "legal"


def test_move_climber_ability_climbs_single() -> None:
    climber = card("Climber", abilities={"Climb": {"Type": "Passive", "Ability": "climbs", "Hook": "climber"}})
    path = {"segments": [[7.4, 5, 0], [7.4, 5, 1.5], [8.5, 5, 1.5]]}
    ans = judge(scenario(two(profile="Climber"), [card(), climber], terrain=[ROCK],
                         action={"kind": "move", "unit": 12, "params": path}))
    assert ans["numbers"]["length_in"] == pytest.approx(5.0) and ans["outcome"] == "legal"


def test_move_through_wall_must_climb() -> None:
    wall = {"name": "wall", "kind": ["blocking"], "polygon": [[8, 3], [8.5, 3], [8.5, 7], [8, 7]], "height_in": 1}
    units = [unit(12, "red", (6, 5)), unit(14, "blue", (20, 5))]
    ans = judge(scenario(units, terrain=[wall], action=move([10.5, 5])))
    assert rules_of(ans)["valyr.move.vertical"] == "illegal" and "runs through wall" in messages(ans)
    over = {"segments": [[7.4, 5, 0], [7.4, 5, 1], [9.1, 5, 1], [9.1, 5, 0]]}
    ans = judge(scenario(units, terrain=[wall], action={"kind": "move", "unit": 12, "params": over}))
    # 1.4 + 1.7 across, 1" up and 1" down (each 1" or less: single) = 5.1"
    assert ans["outcome"] == "legal" and ans["numbers"]["length_in"] == pytest.approx(5.1)


def test_move_falling_exhausts_and_ends_turn() -> None:
    high = {**ROCK, "height_in": 3.0}
    path = {"segments": [[7.4, 5, 0], [7.4, 5, 2.0]]}  # stops 2" up the rock's face: no floor there
    ans = judge(scenario(two(profile="Runner"), [card(), card("Runner", move="8-4")], terrain=[high],
                         action={"kind": "move", "unit": 12, "params": path}))
    assert ans["outcome"] == "legal" and ans["numbers"]["fell"] is True
    assert ans["numbers"]["length_in"] == pytest.approx(2.4 + 4.0)
    assert ans["positions"]["12"] == [7.4, 5, 0.0]
    assert ans["state"]["units"][0]["exhausted"] is True and ans["state"]["to_play"] == "blue"
    assert "falls" in messages(ans)


def test_move_cannot_cross_impassable() -> None:
    pit = {"name": "pit", "kind": ["impassable"], "polygon": [[8, 3], [9, 3], [9, 7], [8, 7]]}
    ans = judge(scenario(two(), terrain=[pit], action=move([10.5, 5])))
    assert rules_of(ans)["valyr.move.impassable"] == "illegal" and "crosses impassable pit" in messages(ans)


def test_move_cannot_end_on_another_base() -> None:
    units = [unit(12, "red", (5, 5)), unit(14, "blue", (10, 5))]
    ans = judge(scenario(units, action=move([9.5, 5])))
    assert rules_of(ans)["valyr.move.overlap"] == "illegal" and ans["numbers"]["overlap_in"] == pytest.approx(0.5)


def test_move_cannot_leave_table() -> None:
    units = [unit(12, "red", (2, 5)), unit(14, "blue", (15, 5))]
    ans = judge(scenario(units, action=move([-2, 5])))
    assert rules_of(ans)["valyr.move.table"] == "illegal"


def test_move_measured_length_overrides_points() -> None:
    ans = judge(scenario(two(), action=move([10, 5], length_in=6.2, pm_in=0.1)))
    assert ans["numbers"]["length_in"] == pytest.approx(6.2) and ans["outcome"] == "illegal"


# ------------------------------------------------------------------------------------------------ attack


def test_attack_out_of_max_range() -> None:
    units = [unit(12, "red", (5, 5)), unit(14, "blue", (20.2, 5))]
    ans = judge(scenario(units, action=attack()))
    assert ans["outcome"] == "illegal"
    assert 'Tester 12 is out of range: 14.20" > max range 12".' in messages(ans)
    assert "rolls" not in ans["numbers"]


def test_attack_inside_min_range_is_illegal() -> None:
    units = [unit(12, "red", (5, 5), profile="Archer"), unit(14, "blue", (7, 5))]
    ans = judge(scenario(units, [card(), card("Archer", rng="2-[0/0]-12")], action=attack()))
    assert rules_of(ans)["valyr.attack.range"] == "illegal"
    assert 'too close for Archer 12: 1.00" < min range 2"' in messages(ans)


def test_attack_distances_are_edge_to_edge() -> None:
    units = [unit(12, "red", (5, 5)), {**unit(14, "blue", (17.5, 5)), "base_mm": 50.8}]
    ans = judge(scenario(units, action=attack()))
    assert ans["numbers"]["distance_in"] == pytest.approx(11.0) and ans["outcome"] == "legal"


def test_attack_needs_line_of_sight() -> None:
    wall = {"name": "wall", "kind": ["blocking"], "polygon": [[9, 3], [10, 3], [10, 7], [9, 7]], "height_in": 3}
    ans = judge(scenario(two(), terrain=[wall], action=attack()))
    assert rules_of(ans)["valyr.attack.sight"] == "illegal"
    assert "Tester 12 cannot see Tester 14: wall blocks the line of sight." in messages(ans)


def test_attack_partial_sight_counts() -> None:
    corner = {"name": "corner", "kind": ["blocking"], "polygon": [[9, 5.2], [10, 5.2], [10, 7], [9, 7]],
              "height_in": 3}
    ans = judge(scenario(two(), terrain=[corner], action=attack()))
    assert rules_of(ans)["valyr.attack.sight"] == "legal" and ans["numbers"]["sight"] == "partial"
    assert ans["numbers"]["fraction_clear"] == pytest.approx(0.6) and ans["outcome"] == "legal"


def test_attack_opposing_unit_only() -> None:
    units = [unit(12, "red", (5, 5)), unit(13, "red", (8, 5)), unit(14, "blue", (15, 5))]
    ans = judge(scenario(units, action=attack(13)))
    assert rules_of(ans) == {"valyr.attack.opponent": "illegal"}


def test_attack_range_band_modifies_strength_and_skill() -> None:
    bander = card("Bander", attack="3-12", rng="0-[+2/+3]-6-[-1/-2]-12")
    near = [unit(12, "red", (5, 5), profile="Bander"), unit(14, "blue", (9, 5))]
    ans = judge(scenario(near, [card(), bander], action=attack()))
    assert (ans["numbers"]["strength"], ans["numbers"]["skill"], len(ans["numbers"]["rolls"])) == (5, 15, 5)
    far = [unit(12, "red", (5, 5), profile="Bander"), unit(14, "blue", (15, 5))]
    ans = judge(scenario(far, [card(), bander], action=attack()))
    assert (ans["numbers"]["strength"], ans["numbers"]["skill"], len(ans["numbers"]["rolls"])) == (2, 10, 2)


def test_attack_band_boundary_too_close_to_call() -> None:
    bander = card("Bander", attack="3-12", rng="0-[+2/+3]-6-[-1/-2]-12")
    units = [unit(12, "red", (5, 5), profile="Bander", pm=0.03), unit(14, "blue", (12, 5), pm=0.03)]
    ans = judge(scenario(units, [card(), bander], action=attack()))
    assert ans["outcome"] == "too close to call" and rules_of(ans)["valyr.attack.band"] == "too close to call"
    assert "rolls" not in ans["numbers"] and ans["state"]["actions_used"] == 0
    settled = judge(scenario(units, [card(), bander], action=attack(range_in=6.0)))
    assert settled["outcome"] == "legal" and settled["numbers"]["strength"] == 5  # a boundary is the closer band


def test_attack_hit_when_roll_plus_armor_below_skill() -> None:
    cards = [card("Striker", attack="5-14"), card("Guard", defense="2-1")]
    units = [unit(12, "red", (5, 5), profile="Striker"), unit(14, "blue", (15, 5), profile="Guard")]
    ans = judge(scenario(units, cards, action=attack(), seed=7))
    n = ans["numbers"]
    assert n["rolls"] == [11, 5, 13, 2, 3] and n["totals"] == [13, 7, 15, 4, 5]
    assert (n["on_target"], n["hits"], n["distress"], n["defeated"]) == (4, 3, 3, False)


def test_attack_roll_plus_armor_equal_to_skill_misses() -> None:
    assert random.Random(23).randint(1, 20) == 10
    units = [unit(12, "red", (5, 5), profile="One"), unit(14, "blue", (15, 5), profile="Guard")]
    for skill, on_target in ((12, 0), (13, 1)):
        cards = [card("One", attack=f"1-{skill}"), card("Guard", defense="2-0")]
        ans = judge(scenario(units, cards, action=attack(), seed=23))
        assert ans["numbers"]["totals"] == [12] and ans["numbers"]["on_target"] == on_target


def test_attack_dodge_removes_hits() -> None:
    for dodge, hits in ((2, 1), (5, 0)):
        cards = [card("Sure", attack="3-21"), card("Dodger", defense=f"0-{dodge}")]
        units = [unit(12, "red", (5, 5), profile="Sure"), unit(14, "blue", (15, 5), profile="Dodger")]
        ans = judge(scenario(units, cards, action=attack()))
        assert ans["numbers"]["on_target"] == 3 and ans["numbers"]["hits"] == hits


def test_attack_distress_beyond_health_defeats() -> None:
    cards = [card("Sure", attack="3-21"), card("Dodger", defense="0-2", health=5)]
    for before, defeated in ((4, False), (5, True)):
        units = [unit(12, "red", (5, 5), profile="Sure"), unit(14, "blue", (15, 5), profile="Dodger",
                                                               distress=before), unit(16, "blue", (25, 15))]
        ans = judge(scenario(units, cards + [card()], action=attack()))
        assert ans["numbers"]["distress"] == before + 1 and ans["numbers"]["defeated"] is defeated
        assert ("14" not in ans["positions"]) is defeated
        target = ans["state"]["units"][1]
        assert target["defeated"] is defeated and target["exhausted"] is defeated


def test_end_of_game_last_player_standing_wins() -> None:
    cards = [card("Sure", attack="3-21"), card("Dodger", defense="0-2", health=0)]
    units = [unit(12, "red", (5, 5), profile="Sure"), unit(14, "blue", (15, 5), profile="Dodger")]
    state, pos = GAME.read_scenario(scenario(units, cards))
    res = act(state, pos, "attack", 12, target=14)
    assert res.state.over and res.state.winner == "red" and GAME.is_over(res.state)
    assert GAME.legal_actions(res.state, res.positions) == []
    assert act(res.state, res.positions, "end_turn", 12).verdicts[0].outcome is Outcome.ILLEGAL


def test_concede_ends_the_game() -> None:
    state, pos = GAME.read_scenario(scenario(two()))
    res = act(state, pos, "concede", player="blue")
    assert res.state.over and res.state.winner == "red" and "blue concedes" in res.verdicts[0].message


# ------------------------------------------------------------------------------------------------- abilities

MENDER = card("Mender", abilities={"Mend": {"Type": "Active", "Ability": "heals", "Template": None,
                                            "Hook": {"name": "mend", "amount": 2, "reach_in": 3}},
                                   "Rally": {"Type": "Active", "Ability": "Friends take heart."},
                                   "Calm": {"Type": "Passive", "Ability": "Never panics."}})


def test_ability_active_takes_an_action() -> None:
    units = [unit(12, "red", (5, 5), profile="Mender"), unit(13, "red", (8, 5), distress=3), unit(14, "blue", (15, 5))]
    ans = judge(scenario(units, [card(), MENDER],
                         action={"kind": "ability", "unit": 12, "params": {"name": "Mend", "target": 13}}))
    assert ans["outcome"] == "legal" and ans["numbers"]["distress_change"] == -2
    assert ans["state"]["units"][1]["distress"] == 1 and ans["state"]["actions_used"] == 1
    assert ans["state"]["active"] == 12


def test_ability_hook_checks_its_own_conditions() -> None:
    far = [unit(12, "red", (5, 5), profile="Mender"), unit(13, "red", (10, 5), distress=3), unit(14, "blue", (15, 5))]
    ans = judge(scenario(far, [card(), MENDER],
                         action={"kind": "ability", "unit": 12, "params": {"name": "mend", "target": 13}}))
    assert ans["outcome"] == "illegal" and "beyond Mend's reach of 3\"" in messages(ans)
    ans = judge(scenario(far, [card(), MENDER],
                         action={"kind": "ability", "unit": 12, "params": {"name": "Mend", "target": 14}}))
    assert ans["outcome"] == "illegal" and "only on a friendly unit" in messages(ans)


def test_ability_passive_is_not_an_action() -> None:
    ans = judge(scenario(two(profile="Mender"), [card(), MENDER],
                         action={"kind": "ability", "unit": 12, "params": {"name": "Calm"}}))
    assert ans["outcome"] == "illegal" and "is a Passive ability" in messages(ans)


def test_ability_without_hook_is_resolved_by_hand() -> None:
    ans = judge(scenario(two(profile="Mender"), [card(), MENDER],
                         action={"kind": "ability", "unit": 12, "params": {"name": "Rally"}}))
    assert ans["outcome"] == "legal" and "resolve its effect by hand: Friends take heart." in messages(ans)
    assert ans["state"]["actions_used"] == 1


def test_ability_passive_hooks_change_attack_and_defense() -> None:
    keen = card("Keen", attack="3-12", abilities={"Eye": {"Type": "Passive", "Hook": {"name": "keen_eye", "skill": 1}}})
    stal = card("Stal", defense="1-0", abilities={"Wall": {"Type": "Passive", "Hook": {"name": "stalwart",
                                                                                          "armor": 2}}})
    units = [unit(12, "red", (5, 5), profile="Keen"), unit(14, "blue", (15, 5), profile="Stal")]
    ans = judge(scenario(units, [keen, stal], action=attack()))
    assert (ans["numbers"]["skill"], ans["numbers"]["armor"]) == (13, 3)


# ------------------------------------------------------------------------------------- state, play, overlays


def test_state_round_trips_and_compares_equal() -> None:
    rng = random.Random(4)
    state, pos = GAME.example(rng)
    for _ in range(15):
        dumped = json.loads(json.dumps(GAME.dump_state(state)))
        assert GAME.load_state(dumped) == state
        if GAME.is_over(state):
            break
        acts = [a for a in GAME.legal_actions(state, pos) if a.kind != "concede"]
        res = GAME.apply(state, pos, rng.choice(acts), rng)
        state, pos = res.state, res.positions


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_legal_actions_are_all_legal(seed: int) -> None:
    rng = random.Random(seed)
    state, pos = GAME.example(rng)
    for _ in range(40):
        if GAME.is_over(state):
            break
        acts = GAME.legal_actions(state, pos)
        assert acts
        for a in acts:
            assert GAME.apply(state, pos, a, random.Random(0)).legal, a
        res = GAME.apply(state, pos, rng.choice([a for a in acts if a.kind != "concede"] or acts), rng)
        state, pos = res.state, res.positions


def test_overlays_show_allowance_range_bands_and_sight() -> None:
    state, pos = GAME.read_scenario(scenario(two(profile="Bander"),
                                             [card(), card("Bander", rng="0-[+2/+3]-6-[-1/-2]-12")]))
    shapes = GAME.overlays(state, pos, 12)
    circles = sorted((o.radius, o.label) for o in shapes if o.style == "move-allowance")
    assert circles == [(4.5, 'Stamina 4"'), (6.5, 'Sprint 6" (next move)')]
    rings = sorted((o.inner, o.radius, o.label) for o in shapes if o.shape is Shape.RING)
    assert rings == [(0.5, 6.5, "+2/+3"), (0.5, 12.5, 'range 0"-12"'), (6.5, 12.5, "-1/-2")]
    sight = [o for o in shapes if o.shape is Shape.SEGMENT]
    assert [(o.style, o.label, o.points) for o in sight] == [("los-clear", '9.00"', ((5, 5), (15, 5)))]


def test_registered_as_valyr() -> None:
    assert isinstance(find_game("valyr"), Valyr)


@pytest.mark.parametrize(
    "change,needle",
    [
        (lambda s: s.pop("units"), 'needs a "units" list'),
        (lambda s: s["units"][0].update(at=[1]), '"at" must be [x, y] in inches'),
        (lambda s: s.update(action={"kind": "fly", "unit": 12}), "Valyr has no action 'fly'"),
        (lambda s: s.update(action={"kind": "attack", "unit": 12, "params": {}}), 'needs "target"'),
        (lambda s: s.update(action={"kind": "move", "unit": 99, "params": {"to": [1, 1]}}), "no Valyr unit with tag 99"),
        (lambda s: s["state"].update(active=77), '"active" names tag 77'),
        (lambda s: s.pop("action"), 'needs an "action"'),
    ],
)
def test_scenario_errors_name_the_field(change, needle: str) -> None:  # type: ignore[no-untyped-def]
    s = scenario(two(), action=move([6, 5]))
    change(s)
    with pytest.raises(RulesInputError) as err:
        judge(s)
    assert needle in str(err.value)


def test_malformed_action_is_a_scenario_error() -> None:
    with pytest.raises(ScenarioError, match='The scenario\'s "action"'):
        judge(scenario(two(), action={"kind": "move", "unit": 12, "params": {"to": "north"}}))
