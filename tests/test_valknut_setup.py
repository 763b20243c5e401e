"""Valknut's Pregame Setup on tiny boards: battlefield, sections, Runic Stockpiles, roll-off, Drop Zones, deployment."""

from __future__ import annotations

import random
from typing import Any

import pytest

from rules.engine import Action, RosterError, RulesInputError, find_game
from rules.valknut.board import Battlefield, adjacent, second_drop_zone_allowed

GAME = find_game("valknut")


def unit(tag: int, owner: str, at: list[float] | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"tag": tag, "owner": owner, "base_mm": 25.4}
    if at is not None:
        d["at"] = at
    return d | kw


def judge(units: list[dict[str, Any]], action: dict[str, Any], state: dict[str, Any] | None = None) -> dict[str, Any]:
    scenario = {"game": "valknut", "seed": 1, "units": units, "action": action, "state": state or {}}
    return GAME.judge(scenario, random.Random(1))


def roster(per_player: int = 5, owners: tuple[str, ...] = ("red", "blue"), profile: str = "soldier") -> dict[str, Any]:
    units = []
    for k, owner in enumerate(owners):
        units += [{"tag": 10 + 10 * k + i, "owner": owner, "profile": profile} for i in range(per_player)]
    return {"game": "valknut", "units": units}


def test_battlefield_is_22_by_30_inches() -> None:
    assert Battlefield(30, 22).area.area == 660
    assert Battlefield(22, 30).area.area == 660
    with pytest.raises(RulesInputError, match='22" x 30"'):
        Battlefield(24, 30)


def test_six_sections_of_11_by_10_inches() -> None:
    sections = Battlefield(30, 22).sections()
    assert [s.number for s in sections] == [1, 2, 3, 4, 5, 6]
    assert all(round(s.area.area, 6) == 110 for s in sections)
    assert [(s.x0, s.y0) for s in sections] == [(0, 0), (10, 0), (20, 0), (0, 11), (10, 11), (20, 11)]
    upright = Battlefield(22, 30).sections()
    assert [(s.x1 - s.x0, s.y1 - s.y0) for s in upright] == [(11, 10)] * 6
    assert [(s.x0, s.y0) for s in upright] == [(0, 0), (0, 10), (0, 20), (11, 0), (11, 10), (11, 20)]


def test_odd_and_even_sections_form_a_checkerboard() -> None:
    field = Battlefield(30, 22)
    assert [field.section_at(x, y) for x, y in [(5, 5), (15, 5), (25, 5), (5, 15), (15, 15), (25, 15)]] == [1, 2, 3, 4, 5, 6]
    for a in (1, 3, 5):
        assert not any(adjacent(a, b) for b in (1, 3, 5) if b != a)


def test_sections_are_adjacent_when_they_share_an_edge() -> None:
    assert {b for b in range(1, 7) if adjacent(1, b)} == {2, 4}
    assert {b for b in range(1, 7) if adjacent(2, b)} == {1, 3, 5}
    assert {b for b in range(1, 7) if adjacent(6, b)} == {3, 5}


def test_runic_stockpile_in_an_odd_section_for_the_odd_player() -> None:
    units = [unit(12, "red"), unit(20, "blue")]
    assert judge(units, {"kind": "place_stockpile", "params": {"at": [5, 5]}})["outcome"] == "legal"
    wrong = judge(units, {"kind": "place_stockpile", "params": {"at": [15, 5]}})
    assert wrong["outcome"] == "illegal" and wrong["numbers"]["section"] == 2


def test_runic_stockpiles_one_in_each_section_odd_player_first_then_even() -> None:
    state = GAME.new_state({"roster": roster()})
    assert state.phase == "stockpiles" and state.odd_player == "red"
    rng = random.Random(1)
    for at in ([5, 5], [25, 5], [15, 15]):
        state = GAME.apply(state, {}, Action("place_stockpile", None, {"at": at}), rng).state
    again = GAME.apply(state, {}, Action("place_stockpile", None, {"at": [15, 5]}), rng)
    assert again.legal  # blue's turn now, in an even section
    state = again.state
    dup = GAME.apply(state, {}, Action("place_stockpile", None, {"at": [16, 6]}), rng)
    assert not dup.legal and "already has its Runic Stockpile" in dup.verdicts[0].message
    for at in ([5, 15], [25, 15]):
        state = GAME.apply(state, {}, Action("place_stockpile", None, {"at": at}), rng).state
    assert state.phase == "roll_off"
    assert [(s.section, s.owner, s.stones) for s in state.stockpiles] == [
        (1, "red", 2), (3, "red", 2), (5, "red", 2), (2, "blue", 2), (4, "blue", 2), (6, "blue", 2)]


def test_roll_off_higher_roller_chooses_the_first_drop_zone() -> None:
    ans = judge([unit(12, "red"), unit(20, "blue")], {"kind": "roll_off", "params": {"rolls": [6, 6, 1, 4]}})
    assert ans["first_player"] == "blue" and ans["phase"] == "drop_zones"
    assert ans["numbers"] == {"red": 1, "blue": 4, "rounds": [[6, 6], [1, 4]], "higher": "blue"}


def test_second_drop_zone_not_the_same_section() -> None:
    assert not second_drop_zone_allowed(3, 3)
    ans = judge([unit(12, "red"), unit(20, "blue")], {"kind": "choose_drop_zone", "params": {"section": 3}},
                {"first_player": "red", "drop_zones": {"red": 3}})
    assert ans["outcome"] == "illegal" and "same section" in ans["verdicts"][0]["message"]


def test_second_drop_zone_not_adjacent() -> None:
    ans = judge([unit(12, "red"), unit(20, "blue")], {"kind": "choose_drop_zone", "params": {"section": 5}},
                {"first_player": "red", "drop_zones": {"red": 2}})
    assert ans["outcome"] == "illegal" and "adjacent" in ans["verdicts"][0]["message"]


def test_second_drop_zone_anywhere_else() -> None:
    ans = judge([unit(12, "red"), unit(20, "blue")], {"kind": "choose_drop_zone", "params": {"section": 6}},
                {"first_player": "red", "drop_zones": {"red": 2}})
    assert ans["outcome"] == "legal" and ans["drop_zones"] == {"red": 2, "blue": 6} and ans["phase"] == "deploy"


def test_first_drop_zone_any_section() -> None:
    ans = judge([unit(12, "red"), unit(20, "blue")], {"kind": "choose_drop_zone", "params": {"section": 2}},
                {"first_player": "blue"})
    assert ans["outcome"] == "legal" and ans["drop_zones"] == {"blue": 2}


def test_deploy_wholly_within_drop_zone() -> None:
    units = [unit(12, "red"), unit(20, "blue")]
    state = {"first_player": "red", "drop_zones": {"red": 1, "blue": 6}}
    inside = judge(units, {"kind": "deploy", "unit": 12, "params": {"to": [9.5, 5]}}, state)
    assert inside["outcome"] == "legal" and inside["numbers"]["margin_in"] == pytest.approx(0.0)
    out = judge(units, {"kind": "deploy", "unit": 12, "params": {"to": [9.7, 5]}}, state)
    assert out["outcome"] == "illegal" and out["numbers"]["margin_in"] == pytest.approx(-0.2)
    close = judge(units, {"kind": "deploy", "unit": 12, "params": {"to": [9.45, 5], "pm_in": 0.1}}, state)
    assert close["outcome"] == "too close to call"


def test_deploy_alternates_higher_roller_first() -> None:
    units = [unit(12, "red"), unit(13, "red"), unit(20, "blue")]
    state = {"first_player": "blue", "drop_zones": {"blue": 1, "red": 6}}
    ans = judge(units, {"kind": "deploy", "unit": 12, "params": {"to": [25, 15]}}, state)
    assert ans["outcome"] == "illegal" and "blue's turn" in ans["verdicts"][0]["message"]


def test_deploy_five_units_each_then_the_first_turn_begins() -> None:
    rng = random.Random(2)
    state = GAME.new_state({"roster": roster(), "first_player": "red", "drop_zones": {"red": 1, "blue": 6},
                            "stockpiles": [{"at": [5, 5]}, {"at": [15, 5]}, {"at": [25, 5]},
                                           {"at": [5, 15]}, {"at": [15, 15]}, {"at": [25, 15]}]})
    assert state.phase == "deploy"
    positions: dict[int, Any] = {}
    order = []
    for k in range(10):
        owner = "red" if k % 2 == 0 else "blue"
        tag = next(u.tag for u in state.units if u.owner == owner and not u.on_table)
        x = 1.5 + 1.5 * (k // 2) + (20 if owner == "blue" else 0)
        res = GAME.apply(state, positions, Action("deploy", tag, {"to": [x, 5 if owner == "red" else 16]}), rng)
        assert res.legal, res.verdicts
        state, positions = res.state, dict(res.positions)
        order.append(owner)
    assert order == ["red", "blue"] * 5
    assert state.phase == "turn_start" and state.turn == 1 and len(positions) == 10


def test_roster_needs_two_players_with_five_units_each() -> None:
    with pytest.raises(RosterError, match="Red has 4 units in the roster; each Valknut player fields 5"):
        GAME.new_state({"roster": roster(per_player=4)})
    with pytest.raises(RosterError, match="Valknut is for two players; the roster has 3"):
        GAME.new_state({"roster": roster(owners=("red", "blue", "green"))})


def test_roster_profile_must_be_the_soldier() -> None:
    with pytest.raises(RosterError, match='Valknut has no profile "dragon"; every unit is a "soldier"'):
        GAME.new_state({"roster": roster(profile="dragon")})


def test_roster_for_another_game_is_refused() -> None:
    with pytest.raises(RosterError, match='The roster is for "valyr", not Valknut'):
        GAME.new_state({"roster": roster() | {"game": "valyr"}})


def test_example_roster_file_sets_up_a_game() -> None:
    import json
    from pathlib import Path

    obj = json.loads((Path(__file__).resolve().parent.parent / "examples" / "rosters" / "valknut.json").read_text())
    state = GAME.new_state({"roster": obj})
    assert len(state.units) == 10 and state.players == ("red", "blue")


def test_unknown_option_is_refused() -> None:
    with pytest.raises(RulesInputError, match='Valknut has no option "speed"'):
        GAME.new_state({"roster": roster(), "options": {"speed": 3}})
    with pytest.raises(RulesInputError, match='option "win" is .*one of runestones, kills'):
        GAME.new_state({"roster": roster(), "options": {"win": "points"}})
