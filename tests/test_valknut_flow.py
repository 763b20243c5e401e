"""Valknut's flow under our options (the rule book's Turn Structure and Winning are empty), state round trips,
legal actions and overlays."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from rules.engine import Action, Outcome, Shape, find_game
from rules.valknut.setup import scenario_state

GAME = find_game("valknut")


def unit(tag: int, owner: str, at: list[float] | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"tag": tag, "owner": owner, "base_mm": 25.4}
    if at is not None:
        d["at"] = at
    return d | kw


def test_turn_activations_alternate_between_players() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(13, "red", [5, 8]), unit(20, "blue", [25, 18]),
                                        unit(21, "blue", [25, 14])], "state": {"turn_first": "red"}})
    rng = random.Random(1)
    order = []
    for tag in (12, 20, 13, 21):
        order.append(st.active_player)
        res = GAME.apply(st, pos, Action("end_activation", tag), rng)
        assert res.legal, res.verdicts
        st, pos = res.state, dict(res.positions)
    assert order == ["red", "blue", "red", "blue"]
    assert st.turn == 2 and st.phase == "turn_start" and st.turn_first == "blue"


def test_turn_player_turns_option_activates_all_of_one_player_first() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(13, "red", [5, 8]), unit(20, "blue", [25, 18])],
                              "state": {"options": {"activation": "player_turns"}}})
    res = GAME.apply(st, pos, Action("end_activation", 12), random.Random(1))
    assert res.state.active_player == "red"


def test_turn_initiative_roll_off_option() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [25, 18], activated=True)],
                              "state": {"options": {"initiative": "roll_off"}, "turn_first": "red"}})
    res = GAME.apply(st, pos, Action("end_activation", 12, {"rolls": [2, 5]}), random.Random(1))
    assert res.state.turn_first == "blue"


def test_turn_start_needs_every_step_then_activations() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [25, 18])],
                              "state": {"phase": "turn_start", "turn_first": "blue"}})
    rng = random.Random(1)
    st = GAME.apply(st, pos, Action("choose_path", 12, {"path": "bear"}), rng).state
    assert st.phase == "turn_start"
    early = GAME.apply(st, pos, Action("move", 20, {"to": [24, 18]}), rng)
    assert not early.legal and early.verdicts[0].rule == "valknut.turn.phase"
    st = GAME.apply(st, pos, Action("choose_path", 20, {"path": "wolf"}), rng).state
    assert st.phase == "activations" and st.active_player == "blue"


def test_win_runestones_first_to_target() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5], carrying=1, stone_origin=3, actions_taken=["move"]),
                                        unit(20, "blue", [25, 18])],
                              "state": {"drop_zones": {"red": 1, "blue": 6}, "active_unit": 12, "delivered": {"red": 2}}})
    res = GAME.apply(st, pos, Action("end_activation", 12), random.Random(1))
    assert res.state.phase == "over" and res.state.winner == "red" and GAME.is_over(res.state)
    after = GAME.apply(res.state, res.positions, Action("end_activation", 20), random.Random(1))
    assert not after.legal and "The game is over" in after.verdicts[0].message


def test_win_runestone_from_its_own_section_does_not_score() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5], carrying=1, stone_origin=1), unit(20, "blue", [25, 18])],
                              "state": {"drop_zones": {"red": 1, "blue": 6}}})
    res = GAME.apply(st, pos, Action("end_activation", 12), random.Random(1))
    assert res.state.delivered.of("red") == 0 and len(res.state.unit(12).carrying) == 1


def test_win_at_turn_limit_most_points_else_draw() -> None:
    base = {"units": [unit(12, "red", [5, 5]), unit(20, "blue", [25, 18], activated=True)],
            "state": {"turn": 6, "delivered": {"blue": 1}}}
    st, pos = scenario_state(base)
    res = GAME.apply(st, pos, Action("end_activation", 12), random.Random(1))
    assert res.state.phase == "over" and res.state.winner == "blue"
    st, pos = scenario_state(base | {"state": {"turn": 6}})
    assert GAME.apply(st, pos, Action("end_activation", 12), random.Random(1)).state.winner == "draw"


def test_win_kills_option() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], hp=2)],
                              "state": {"options": {"win": "kills", "target": 2}, "kills": {"red": 1}}})
    res = GAME.apply(st, pos, Action("attack", 12, {"target": 20, "rolls": [6]}), random.Random(1))
    assert res.state.winner == "red"


def test_state_round_trips_through_json() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5], paths={"raven": 2}, carrying=1),
                                        unit(20, "blue", dead=True, redeploy_target=3)],
                              "terrain": {"pieces": [{"name": "ruin", "kind": ["elevated"], "height_in": 3,
                                                      "polygon": [[1, 1], [3, 1], [3, 3]]}]},
                              "state": {"blessings": [[12, 12, "armor"]], "delivered": {"red": 1},
                                        "drop_zones": {"red": 1, "blue": 6}, "stockpiles": [{"at": [5, 5]}],
                                        "ground": [{"at": [2, 2], "origin": 3}]}})
    again = GAME.load_state(json.loads(json.dumps(GAME.dump_state(st))))
    assert again == st and hash(again) == hash(st)


def test_load_state_names_a_bad_field() -> None:
    st, _ = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [6, 9])]})
    bad = GAME.dump_state(st) | {"turn": "two"}
    with pytest.raises(Exception, match="turn must be a whole number"):
        GAME.load_state(bad)


def test_example_and_legal_actions_are_all_legal() -> None:
    rng = random.Random(5)
    st, pos = GAME.example(rng)
    assert st.phase == "turn_start" and len(pos) == 10
    for _ in range(40):
        acts = GAME.legal_actions(st, pos)
        assert acts
        act = rng.choice(acts)
        res = GAME.apply(st, pos, act, rng)
        assert all(v.outcome in (Outcome.LEGAL, Outcome.INFO) for v in res.verdicts), (act, res.verdicts)
        st, pos = res.state, res.positions
        if GAME.is_over(st):
            break


def test_legal_moves_are_offered_in_eight_directions_at_full_and_half_speed() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [15, 11]), unit(20, "blue", [25, 18])]})
    moves = [a for a in GAME.legal_actions(st, pos) if a.kind == "move" and a.unit == 12]
    assert len(moves) == 16
    lengths = sorted({round(((a.params["to"][0] - 15) ** 2 + (a.params["to"][1] - 11) ** 2) ** 0.5, 2) for a in moves})
    assert lengths == [3.0, 5.82]


def test_overlays_show_sections_zones_stockpiles_rings_and_the_selected_unit() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [15, 5])],
                              "terrain": {"pieces": [{"name": "wall", "kind": ["blocking"], "height_in": 3,
                                                      "polygon": [[9.5, 4.6], [10.5, 4.6], [10.5, 9], [9.5, 9]]}]},
                              "state": {"drop_zones": {"red": 1, "blue": 6}, "stockpiles": [{"at": [5, 8]}]}})
    shapes = GAME.overlays(st, pos, 12)
    styles = [o.style for o in shapes]
    assert styles.count("section") == 6 and styles.count("drop-zone") == 2 and styles.count("engagement") == 2
    assert "score" in styles and "terrain-blocking" in styles
    allowance = next(o for o in shapes if o.style == "move-allowance")
    assert allowance.radius == 6.0 and allowance.shape is Shape.CIRCLE
    melee = next(o for o in shapes if o.style == "range-band" and o.shape is Shape.RING)
    assert (melee.inner, melee.radius) == (0.5, 1.5)
    los = [o for o in shapes if o.style.startswith("los-")]
    assert [o.style for o in los] == ["los-partial"] and "wall" in los[0].label
    json.dumps([o.to_json() for o in shapes])
