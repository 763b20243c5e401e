"""Valknut's game panel against the state: HP after a given-rolls attack, the score after a delivery, what is
left to do, and the banner at the end of a short game played with given rolls."""

from __future__ import annotations

from typing import Any

from rules.engine import Action, find_game
from rules.valknut.setup import scenario_state

GAME = find_game("valknut")


def unit(tag: int, owner: str, at: list[float] | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"tag": tag, "owner": owner, "base_mm": 25.4}
    if at is not None:
        d["at"] = at
    return d | kw


def line(panel: Any, tag: int) -> Any:
    return next(u for u in panel.units if u.unit == tag)


def test_hp_after_an_attack_with_given_rolls_and_the_actions_left() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5], paths={"wolf": 1}), unit(13, "red", [5, 9]),
                                        unit(20, "blue", [6.5, 5], paths={"bear": 1}, armor=1)]})
    res = GAME.apply(st, pos, Action("attack", 12, {"target": 20, "rolls": [4, 6, 1, 2]}), None)
    panel = GAME.panel(res.state, res.positions)
    # Damage 3, one point ignored on a 6, 1 to Armor, 1 to HP
    assert line(panel, 20).words == "HP 9 of 10, Armor 0, Speed 6\", Paths: Bear 1"
    assert res.state.unit(20).hp == 9 and not line(panel, 20).gone
    assert line(panel, 12).left == "1 action: Disengage, Pick up Runestone"  # 0.5" from blue 20: no Move
    assert panel.headline == "Turn 1 of 6 · activations · red to activate"
    assert panel.to_do == ("soldier 12: 1 action: Disengage, Pick up Runestone left; or end its activation",)
    assert not panel.over and panel.winner is None


def test_units_to_activate_and_a_killed_unit_is_gone() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(13, "red", [5, 9], activated=True),
                                        unit(20, "blue", [25, 18]), unit(21, "blue", dead=True, redeploy_target=3)]})
    panel = GAME.panel(st, pos)
    assert panel.to_do == ("Red units to activate: soldier 12", "Blue units to activate: soldier 20")
    dead = line(panel, 21)
    assert dead.gone and dead.words == "killed, returns on 3+ at the beginning of the next turn" and dead.left == ""
    assert line(panel, 13).left == "" and line(panel, 13).words.endswith("activated")
    assert line(panel, 12).left == "2 actions: Move, Attack, Pick up Runestone"  # no enemy within 1": no Disengage


def test_score_after_a_delivery_matches_the_state_and_score() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5], carrying=1, stone_origin=3, actions_taken=["move"]),
                                        unit(20, "blue", [25, 18])],
                              "state": {"drop_zones": {"red": 1, "blue": 6}, "active_unit": 12, "delivered": {"red": 1},
                                        "kills": {"blue": 2}}})
    res = GAME.apply(st, pos, Action("end_activation", 12), None)
    panel = GAME.panel(res.state, res.positions)
    assert [(s.side, s.words, s.points) for s in panel.score] == [
        ("red", "2 of 3 Runestones delivered, 0 kills", 2), ("blue", "0 of 3 Runestones delivered, 2 kills", 0)]
    assert GAME.score(res.state) == {"delivered": {"red": 2, "blue": 0}, "kills": {"red": 0, "blue": 2}, "winner": None}
    assert panel.victory.startswith("The first player to deliver 3 Runestones")


def test_a_short_game_played_with_given_rolls_ends_with_the_banner() -> None:
    """Kills to 1, two turns: red misses (a 2), the turn ends, red rolls the initiative; then red kills."""
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [6.5, 5], hp=2)],
                              "state": {"options": {"win": "kills", "target": 1, "turn_limit": 2,
                                                    "initiative": "roll_off"}}})
    for action in (Action("attack", 12, {"target": 20, "rolls": [2]}), Action("end_activation", 12),
                   Action("end_activation", 20, {"rolls": [5, 3]}),
                   Action("choose_path", 12, {"path": "wolf"}), Action("choose_path", 20, {"path": "deer"}),
                   Action("attack", 12, {"target": 20, "rolls": [4]})):
        res = GAME.apply(st, pos, action, None)
        assert res.legal and res.pending is None, (action, res.verdicts)
        st, pos = res.state, dict(res.positions)
        if action.kind == "end_activation" and action.unit == 20:
            panel = GAME.panel(st, pos)
            assert panel.headline == "Turn 2 of 2 · beginning of the turn"
            assert panel.to_do == ("Units to take a Step down a Path: soldier 12, soldier 20",)
            assert line(panel, 12).left == "a Step down a Path"
    panel = GAME.panel(st, pos)
    assert panel.over and GAME.is_over(st) and st.winner == "red"
    assert panel.winner == "Red wins: 1 of 1 kills"
    assert panel.headline == "Game over after turn 2 · red reached 1"
    assert line(panel, 20).gone and panel.to_do == ()
    assert (GAME.score(st) or {})["winner"] == "red"


def test_a_draw_at_the_turn_limit_is_over_without_a_winner() -> None:
    st, pos = scenario_state({"units": [unit(12, "red", [5, 5]), unit(20, "blue", [25, 18], activated=True)],
                              "state": {"turn": 6}})
    res = GAME.apply(st, pos, Action("end_activation", 12), None)
    panel = GAME.panel(res.state, res.positions)
    assert panel.over and panel.winner is None
    assert panel.headline == "Game over after turn 6 · the turn limit (6) is reached: a draw"
    assert (GAME.score(res.state) or {})["winner"] == "draw"


def test_setup_phases_say_who_does_what() -> None:
    st, pos = scenario_state({"units": [unit(12, "red"), unit(20, "blue")], "state": {"phase": "roll_off"}})
    panel = GAME.panel(st, pos)
    assert panel.headline == "Setup · roll-off for the Drop Zones"
    assert panel.to_do == ("Roll off: each player rolls 1d6; the higher roller chooses its Drop Zone first",)
    assert all(u.gone and u.words == "not deployed yet" for u in panel.units)
    res = GAME.apply(st, pos, Action("roll_off", None, {"rolls": [2, 6]}), None)
    panel = GAME.panel(res.state, res.positions)
    assert panel.headline == "Setup · Drop Zones · blue chooses"
    assert panel.to_do == ("blue chooses a section as its Drop Zone",)
