"""Hex Skirmish: one test per rule clause on a tiny board, through the judge (as a scenario would ask)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rules.dice import DiceCup, roll
from rules.engine import Action, Outcome, RosterError, ScenarioError, find_game
from rules.hex_skirmish.cards import parse_card, skulls
from rules.hex_skirmish.game import EXAMPLE_CARDS, EXAMPLE_UNITS, HexSkirmish, roll_initiative

ROOT = Path(__file__).resolve().parent.parent


def card(name: str, **kw: Any) -> dict[str, Any]:
    base = {"name": name, "life": 4, "move": 4, "range": 1, "attack": 3, "defense": 3, "height": 5, "abilities": []}
    base.update(kw)
    return base


def judge(
    units: list[dict[str, Any]],
    action: dict[str, Any],
    cards: list[dict[str, Any]],
    cells: list[dict[str, Any]] | None = None,
    options: dict[str, Any] | None = None,
    seed: int = 1,
    radius: int = 4,
) -> dict[str, Any]:
    scenario = {
        "game": "hex_skirmish",
        "board": {"layout": {"size_in": 1.0, "orientation": "pointy"}, "hexagon": radius, "cells": cells or []},
        "cards": cards,
        "units": units,
        "options": options or {},
    }
    key = "question" if action["kind"] == "reachable" else "action"
    scenario[key] = action
    return find_game("hex_skirmish").judge(scenario, random.Random(seed))


def mover(tag: int = 10, at: tuple[int, int] = (0, 0), name: str = "Walker", owner: str = "red") -> dict[str, Any]:
    return {"tag": tag, "owner": owner, "card": name, "hex": list(at)}


def move(to: tuple[int, int] | None = None, path: list[tuple[int, int]] | None = None, unit: int = 10) -> dict[str, Any]:
    params: dict[str, Any] = {"to": list(to)} if to else {"path": [list(p) for p in path or []]}
    return {"kind": "move", "unit": unit, "params": params}


FOE = {"tag": 20, "owner": "blue", "card": "Walker", "hex": [-4, 0]}


# ------------------------------------------------------------------------------ initiative


def test_initiative_highest_d20_goes_first() -> None:
    order, rolls = roll_initiative(("red", "blue", "green"), DiceCup([], random.Random(3)))
    first = rolls[0]
    assert len(set(first.values())) == 3  # this seed has no tie
    assert list(order) == sorted(first, key=lambda o: -first[o])


def test_initiative_ties_are_rerolled() -> None:
    seed = next(s for s in range(1000) if len(set(roll(random.Random(s), 20, 2))) == 1)
    order, rolls = roll_initiative(("red", "blue"), DiceCup([], random.Random(seed)))
    assert rolls[0]["red"] == rolls[0]["blue"] and len(rolls) >= 2
    last = rolls[-1]
    assert last["red"] != last["blue"] and order[0] == max(last, key=lambda o: last[o])


def test_initiative_action_sets_the_order() -> None:
    ans = judge([mover(), FOE], {"kind": "initiative"}, [card("Walker")], seed=3)
    assert ans["outcome"] == "info" and ans["state"]["order"] == ans["numbers"]["order"]


# ------------------------------------------------------------------------------ movement


def test_move_up_to_the_move_value() -> None:
    cards = [card("Walker", move=3)]
    assert judge([mover(), FOE], move((3, 0)), cards)["outcome"] == "legal"
    bad = judge([mover(), FOE], move((4, -4)), cards)
    assert bad["outcome"] == "illegal" and "costs 4 movement points; Walker has Move 3" in bad["verdicts"][0]["message"]


def test_move_into_water_must_stop() -> None:
    cells = [{"hex": [1, 0], "terrain": "water"}]
    cards = [card("Walker", move=4)]
    ok = judge([mover(), FOE], move((1, 0)), cards, cells)
    assert ok["outcome"] == "legal" and ok["hexes"]["10"] == [1, 0]
    bad = judge([mover(), FOE], move(path=[(0, 0), (1, 0), (2, 0)]), cards, cells)
    assert bad["outcome"] == "illegal" and "must end at [1, 0] (water)" in bad["verdicts"][0]["message"]


def test_water_ignore_does_not_stop() -> None:
    cells = [{"hex": [1, 0], "terrain": "water"}]
    cards = [card("Walker", move=4, abilities=["Water Ignore"])]
    assert judge([mover(), FOE], move(path=[(0, 0), (1, 0), (2, 0)]), cards, cells)["outcome"] == "legal"


def test_climb_only_below_height() -> None:
    cells = [{"hex": [1, 0], "elevation": 4}, {"hex": [0, 1], "elevation": 5}]
    cards = [card("Walker", move=6, height=5)]
    assert judge([mover(), FOE], move(path=[(0, 0), (1, 0)]), cards, cells)["outcome"] == "legal"
    bad = judge([mover(), FOE], move(path=[(0, 0), (0, 1)]), cards, cells)
    assert bad["outcome"] == "illegal" and "climbs 5 levels" in bad["verdicts"][0]["message"]


def test_climb_costs_one_movement_point_per_level() -> None:
    cells = [{"hex": [1, 0], "elevation": 3}]
    cards = [card("Walker", move=6, height=5)]
    assert judge([mover(), FOE], move(path=[(0, 0), (1, 0)]), cards, cells)["numbers"]["cost"] == 3
    plus = judge([mover(), FOE], move(path=[(0, 0), (1, 0)]), cards, cells, {"climb_cost": "step_plus_levels"})
    assert plus["numbers"]["cost"] == 4
    tight = judge([mover(), FOE], move(path=[(0, 0), (1, 0)]), [card("Walker", move=2, height=5)], cells)
    assert tight["outcome"] == "illegal"


def _fall(drop: int, height: int, seed: int, flying: bool = False) -> dict[str, Any]:
    cells: list[dict[str, Any]] = [{"hex": [0, 0], "elevation": drop}]
    abilities = ["Flying/Leaping"] if flying else []
    return judge([mover(), FOE], move((1, 0)), [card("Walker", height=height, life=9, abilities=abilities)], cells,
                 seed=seed)


def test_fall_below_height_does_no_damage() -> None:
    ans = _fall(4, 5, 1)
    assert ans["outcome"] == "legal" and ans["numbers"]["falls"] == [] and ans["figures"]["10"]["wounds"] == 0


def test_fall_equal_to_height_rolls_one_attack_die() -> None:
    ans = _fall(5, 5, 7)
    faces = roll(random.Random(7), 6, 1)
    fall = next(v for v in ans["verdicts"] if v["rule"] == "hex_skirmish.move.fall")
    assert fall["numbers"]["dice"] == list(faces) and ans["figures"]["10"]["wounds"] == skulls(faces)


def test_fall_of_10_levels_rolls_three_attack_dice() -> None:
    ans = _fall(10, 5, 8)
    faces = roll(random.Random(8), 6, 3)
    fall = next(v for v in ans["verdicts"] if v["rule"] == "hex_skirmish.move.fall")
    assert fall["numbers"]["dice"] == list(faces) and ans["figures"]["10"]["wounds"] == skulls(faces)


def test_fall_of_10_levels_below_height_does_no_damage() -> None:
    assert _fall(10, 12, 1)["numbers"]["falls"] == []


def test_fall_of_20_levels_d20_19_or_20_survives_else_destroyed() -> None:
    lucky = next(s for s in range(2000) if random.Random(s).randint(1, 20) >= 19)
    unlucky = next(s for s in range(2000) if random.Random(s).randint(1, 20) < 19)
    ok = _fall(20, 5, lucky)
    assert ok["figures"]["10"] == {"wounds": 0, "destroyed": False} and ok["hexes"]["10"] == [1, 0]
    dead = _fall(20, 5, unlucky)
    assert dead["figures"]["10"]["destroyed"] and "10" not in dead["hexes"]


def test_flying_takes_no_fall_damage() -> None:
    assert _fall(20, 5, 2, flying=True)["numbers"]["falls"] == []


def test_flying_ignores_elevation_and_water_and_passes_over_figures() -> None:
    cells: list[dict[str, Any]] = [{"hex": [1, 0], "terrain": "water"}, {"hex": [2, 0], "elevation": 9}]
    units = [mover(), {"tag": 11, "owner": "red", "card": "Walker", "hex": [3, 0]}, FOE]
    cards = [card("Walker", move=4, height=5, abilities=["Flying"])]
    ans = judge(units, move(path=[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]), cards, cells)
    assert ans["outcome"] == "legal" and ans["numbers"]["cost"] == 4
    walker = judge(units, move(path=[(0, 0), (0, 1), (1, 1), (2, 1), (3, 1)]), [card("Walker", move=6)], cells)
    assert walker["outcome"] == "legal"  # walking round is fine, but never through the figure at [3, 0]
    through = judge(units, move(path=[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]), [card("Walker", move=6)])
    assert through["outcome"] == "illegal"
    assert "enters a hex holding a figure; only flyers pass over figures" in through["verdicts"][0]["message"]


def test_flying_passes_enemies_without_becoming_engaged() -> None:
    units = [mover(), {"tag": 20, "owner": "blue", "card": "Walker", "hex": [2, -1]}]
    fly = judge(units, move(path=[(0, 0), (1, 0), (2, 0), (3, 0)]), [card("Walker", abilities=["Leaping"])])
    assert fly["outcome"] == "legal"
    walk = judge(units, move(path=[(0, 0), (1, 0), (2, 0), (3, 0)]), [card("Walker")])
    assert walk["outcome"] == "illegal" and "engaged with an enemy" in walk["verdicts"][0]["message"]


# ------------------------------------------------------------------------------ engagement


def test_engaged_when_adjacent_and_may_attack_only_the_engaged() -> None:
    units = [mover(), {"tag": 20, "owner": "blue", "card": "Walker", "hex": [1, 0]},
             {"tag": 21, "owner": "blue", "card": "Walker", "hex": [-2, 0]}]
    cards = [card("Walker", range=3)]
    bad = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 21}}, cards)
    assert bad["outcome"] == "illegal" and bad["verdicts"][0]["rule"] == "hex_skirmish.engagement.target"
    assert judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, cards)["outcome"] == "legal"


def test_disengagement_rolls_one_attack_die() -> None:
    units = [mover(), {"tag": 20, "owner": "blue", "card": "Walker", "hex": [1, 0]}]
    ans = judge(units, move((-2, 0)), [card("Walker")], seed=11)
    faces = roll(random.Random(11), 6, 1)
    dis = next(v for v in ans["verdicts"] if v["rule"] == "hex_skirmish.engagement.disengage")
    assert dis["numbers"]["dice"] == list(faces) and ans["figures"]["10"]["wounds"] == skulls(faces)


# ------------------------------------------------------------------------------ attacks


def test_attack_range_in_hexes() -> None:
    units = [mover(), {"tag": 20, "owner": "blue", "card": "Walker", "hex": [3, 0]}]
    assert judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, [card("Walker", range=3)])[
        "outcome"
    ] == "legal"
    bad = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, [card("Walker", range=2)])
    assert bad["verdicts"][0]["rule"] == "hex_skirmish.attack.range" and bad["numbers"]["distance"] == 3


def test_attack_skulls_beyond_shields_wound_and_life_destroys() -> None:
    units = [mover(), {"tag": 20, "owner": "blue", "card": "Target", "hex": [1, 0]}]
    cards = [card("Walker", attack=6), card("Target", defense=1, life=1)]
    for seed in range(10):
        ans = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, cards, seed=seed)
        rng = random.Random(seed)
        a, d = roll(rng, 6, 6), roll(rng, 6, 1)
        wounds = max(0, skulls(a) - sum(1 for f in d if f in (4, 5)))
        assert ans["numbers"]["wounds"] == wounds
        assert ans["figures"]["20"]["destroyed"] == (wounds >= 1)


def test_counterstrike_excess_shields_hit_the_attacker() -> None:
    units = [mover(), {"tag": 20, "owner": "blue", "card": "Knight", "hex": [1, 0]}]
    cards = [card("Walker", attack=1, life=9), card("Knight", defense=6, abilities=["Counterstrike"])]
    seen = False
    for seed in range(20):
        ans = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, cards, seed=seed)
        excess = max(0, ans["numbers"]["shields"] - ans["numbers"]["skulls"])
        assert ans["numbers"]["counter_wounds"] == excess and ans["figures"]["10"]["wounds"] == excess
        seen |= excess > 0
    assert seen
    plain = [card("Walker", attack=1, life=9), card("Knight", defense=6)]
    ans = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, plain, seed=3)
    assert ans["numbers"]["counter_wounds"] == 0


def test_line_of_sight_blocked_by_high_ground() -> None:
    units = [mover(), {"tag": 20, "owner": "blue", "card": "Walker", "hex": [4, 0]}]
    cells: list[dict[str, Any]] = [{"hex": [2, 0], "elevation": 9}, {"hex": [2, -1], "elevation": 9},
                                   {"hex": [1, 0], "elevation": 9}]
    cards = [card("Walker", range=6, height=5)]
    bad = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, cards, cells)
    assert bad["verdicts"][0]["rule"] == "hex_skirmish.attack.line_of_sight"
    low: list[dict[str, Any]] = [{"hex": [2, 0], "elevation": 3}]
    assert judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, cards, low)["outcome"] == "legal"
    none = judge(units, {"kind": "attack", "unit": 10, "params": {"target": 20}}, cards, cells,
                 {"line_of_sight": "none"})
    assert none["outcome"] == "legal"


# ------------------------------------------------------------------------------ turn order and input


def test_only_the_chosen_card_moves_and_only_once() -> None:
    g = find_game("hex_skirmish")
    assert isinstance(g, HexSkirmish)
    state, pos = g.example(random.Random(1))
    res = g.apply(state, pos, Action("initiative"), random.Random(1))
    st, pos = res.state, res.positions
    player = st.player
    mine = next(f.tag for f in st.figures if f.owner == player)
    theirs = next(f.tag for f in st.figures if f.owner != player)
    assert g.apply(st, pos, Action("choose", theirs), random.Random(1)).verdicts[0].outcome is Outcome.ILLEGAL
    st = g.apply(st, pos, Action("choose", mine), random.Random(1)).state
    mv = next(a for a in g.legal_actions(st, pos) if a.kind == "move")
    res = g.apply(st, pos, mv, random.Random(1))
    again = next(a for a in g.legal_actions(st, pos) if a.kind == "move")
    second = g.apply(res.state, res.positions, again, random.Random(1))
    assert "already moved" in second.verdicts[0].message
    assert not any(a.kind == "move" for a in g.legal_actions(res.state, res.positions))


def test_figure_astride_two_hexes_is_reported() -> None:
    units = [{"tag": 10, "owner": "red", "card": "Walker", "at": [0.8, 0.0]}, FOE]
    ans = judge(units, move((-1, 0)), [card("Walker")])
    assert ans["outcome"] == "illegal" and ans["verdicts"][0]["rule"] == "hex_skirmish.figure.astride"


def test_unknown_ability_and_card_are_refused() -> None:
    with pytest.raises(RosterError, match="ability 'Teleport'"):
        parse_card(card("X", abilities=["Teleport"]), "card 1")
    with pytest.raises(ScenarioError, match="names the army card 'Ghost'"):
        judge([{"tag": 10, "owner": "red", "card": "Ghost", "hex": [0, 0]}], move((1, 0)), [card("Walker")])


def test_example_files_match_the_module_and_are_labelled_ours() -> None:
    roster = json.loads((ROOT / "examples/rosters/hex_skirmish.json").read_text())
    assert "not the author" in roster["note"].lower()
    assert roster["cards"] == list(EXAMPLE_CARDS)
    assert [{k: u[k] for k in ("tag", "owner", "card", "hex")} for u in roster["units"]] == list(EXAMPLE_UNITS)
    state = find_game("hex_skirmish").new_state(roster)
    board = state.board
    assert {c.terrain for c in board.cells.values()} == {"land", "water"}
    assert max(c.elevation for c in board.cells.values()) == 4
    from rules.hexgrid import parse_board

    assert parse_board(json.loads((ROOT / "examples/boards/hex_skirmish.json").read_text())) == board


def test_engagement_lines_join_each_opposing_pair_in_neighbouring_cells_once() -> None:
    """The overlay draws one line per engaged pair: opposing figures in neighbouring cells. Two red figures
    share a cell next to one blue; a red and a blue two cells apart are not engaged; a destroyed blue is not."""
    from rules.hex_skirmish.game import _positions, engaged_pairs, engaged_with

    units = [
        {"tag": 10, "owner": "red", "card": "Walker", "hex": [0, 0]},
        {"tag": 11, "owner": "red", "card": "Walker", "hex": [0, 0]},
        {"tag": 20, "owner": "blue", "card": "Walker", "hex": [1, 0]},
        {"tag": 21, "owner": "blue", "card": "Walker", "hex": [-2, 0]},
        {"tag": 12, "owner": "red", "card": "Walker", "hex": [0, 1]},
        {"tag": 22, "owner": "blue", "card": "Walker", "hex": [1, 1], "destroyed": True},
    ]
    game = find_game("hex_skirmish")
    state = game.new_state({"board": {"layout": {"size_in": 1.0, "orientation": "pointy"}, "hexagon": 3, "cells": []},
                            "cards": [card("Walker")], "units": units})
    positions = _positions(units, state.layout)
    cells = {f.tag: state.layout.from_table(positions[f.tag].x, positions[f.tag].y)[0] for f in state.living()}
    assert engaged_pairs(state, cells) == [(10, 20), (11, 20), (20, 12)]
    brute = {tuple(sorted((t, o))) for t in cells for o in engaged_with(state, cells, t)}
    assert {tuple(sorted(p)) for p in engaged_pairs(state, cells)} == brute
    lines = [o for o in game.overlays(state, positions) if o.style == "engagement"]
    assert [(o.unit, len(o.points)) for o in lines] == [(10, 2), (11, 2), (20, 2)]


def test_a_figure_off_the_board_neither_attacks_nor_is_attacked() -> None:
    """The camera may see a figure set down beside the board (the judge refuses one in a scenario): until it is put
    on its hex it takes no part in a fight, either way."""
    game = find_game("hex_skirmish")
    state, positions = game.example(random.Random(1))
    state = game.apply(state, dict(positions), Action("initiative"), random.Random(3)).state  # blue, red
    state = game.apply(state, dict(positions), Action("choose", 20), None).state
    rider = positions[20]
    near = {t: p for t, p in positions.items() if t != 20}
    far = {**near, 20: rider, 10: positions[10].moved_to(rider.x + 40.0, rider.y)}  # 40" off: no cell of the board
    assert state.layout.from_table(far[10].x, far[10].y)[0] not in state.board
    out = game.apply(state, far, Action("attack", 20, {"target": 10}), None)
    assert not out.legal and out.verdicts[0].rule == "hex_skirmish.attack.on_board"
    assert out.verdicts[0].message == ("Shield Knight 10 stands off the board; only figures on the board fight: put it "
                                       "on its hex first.")
    assert all(a.params.get("target") != 10 for a in game.legal_actions(state, far) if a.kind == "attack")


def test_initiative_says_each_roll_and_who_goes_first() -> None:
    """The verdict names every player's d20, each re-roll of a tie, and the order."""
    plain = judge([mover(), FOE], {"kind": "initiative", "params": {"rolls": [9, 17]}}, [card("Walker")])
    assert plain["verdicts"][0]["message"] == "Round 1 initiative: red 9, blue 17; blue goes first, then red."
    tied = judge([mover(), FOE], {"kind": "initiative", "params": {"rolls": [12, 12, 3, 15]}}, [card("Walker")])
    assert tied["verdicts"][0]["message"] == ("Round 1 initiative: red 12, blue 12; re-rolled red 3, blue 15; blue goes "
                                              "first, then red.")
