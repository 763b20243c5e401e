"""Valknut's deployment and redeployment by the camera (issue 31, item 4), and every action tryable with its reason.

Putting a figure down in deployment is its deployment, ruled against its Drop Zone; it may be moved in, or placed
again, while deployment lasts. A killed unit that made its return roll is placed where the camera sees it, never
moved from where it died. On a 30" x 22" battlefield red's Drop Zone is section 1 (x 0-10, y 0-11) and blue's
section 6 (x 20-30, y 11-22); 25.4 mm bases have a 0.5" radius.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from rules.engine import Action, Measured, Outcome, find_game
from rules.valknut.setup import scenario_state
from rules.valknut.state import ValknutState

GAME = find_game("valknut")
ZONES = {"drop_zones": {"red": 1, "blue": 6}, "first_player": "red"}


def unit(tag: int, owner: str, at: list[float] | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"tag": tag, "owner": owner, "base_mm": 25.4, "name": f"{owner.title()} {tag % 10 + 1}"}
    if at is not None:
        d["at"] = at
    return d | kw


def deploying(*units: dict[str, Any]) -> tuple[ValknutState, dict[int, Any]]:
    """The deploy phase with red (the higher roller) to place: red 10 and 11, blue 20 and 21."""
    return scenario_state({"units": list(units) or [unit(10, "red"), unit(11, "red"), unit(20, "blue"),
                                                    unit(21, "blue")],
                           "state": {"phase": "deploy", **ZONES}})


def camera(state: ValknutState, tag: int, seen: str, at: tuple[float, float], came_from: tuple[float, float] | None = None,
           **kw: Any) -> Action:
    """What the camera seeing `tag` put down (or moved) stands for: an action to rule, never None here."""
    action = GAME.camera_action(state, tag, seen, at, came_from, **kw)
    assert action is not None
    return action


def outcomes(verdicts: Any) -> dict[str, Outcome]:
    return {v.rule: v.outcome for v in verdicts}


def test_deploy_is_the_cameras_so_the_declare_panel_offers_no_fixed_points() -> None:
    assert {"move", "disengage", "deploy", "redeploy"} <= GAME.camera_kinds
    state, positions = deploying()
    assert not [a for a in GAME.tryable_actions(state, positions) if a.kind not in GAME.camera_kinds]


def test_a_figure_put_down_inside_its_drop_zone_is_deployed_where_the_camera_sees_it() -> None:
    state, positions = deploying()
    action = camera(state, 10, "placed", (8.0, 9.5), positions=positions)
    assert action == Action("deploy", 10, {"to": [8.0, 9.5]})
    res = GAME.apply(state, positions, action, None)
    assert outcomes(res.verdicts) == {"valknut.deploy.wholly_within": Outcome.LEGAL}
    assert res.verdicts[0].numbers["margin_in"] == pytest.approx(1.0)  # the base edge 1" inside y = 11
    assert res.state.unit(10).on_table and res.positions[10].xy == (8.0, 9.5)
    assert GAME.status(res.state).player == "blue"  # the players alternate


def test_a_figure_put_down_outside_is_refused_with_where_to_put_it_then_moved_in() -> None:
    state, positions = deploying()
    out = GAME.apply(state, positions, camera(state, 10, "placed", (12.0, 5.0)), None)
    (v,) = out.verdicts
    assert v.outcome is Outcome.ILLEGAL and v.numbers["margin_in"] == pytest.approx(-2.5)
    assert v.message == ('Unit 10 at (12.00, 5.00) is not wholly within its Drop Zone (section 1): its base edge is '
                         '2.50" ± 0.00" outside the section edge; put Red 1 wholly inside red\'s Drop Zone: its centre at x '
                         '0.5 to 9.5, y 0.5 to 10.5.')
    assert not out.state.unit(10).on_table and 10 not in out.positions and GAME.status(out.state).player == "red"
    # moved in while deployment lasts: its deployment, not "move belongs to the activations phase"
    moved = camera(out.state, 10, "move", (9.0, 5.0), (12.0, 5.0), positions=out.positions,
                               measured=Measured(3.0, 0.02, 0.0))
    assert moved.kind == "deploy" and moved.params["to"] == [9.0, 5.0]
    assert moved.params["pm_in"] == pytest.approx(0.0141, abs=1e-4)  # one end's share of the move's ± 0.02
    res = GAME.apply(out.state, out.positions, moved, None)
    assert res.legal and res.state.unit(10).on_table and res.positions[10].xy == (9.0, 5.0)
    assert res.verdicts[0].numbers["margin_in"] == pytest.approx(0.5)


def test_a_deployed_figure_placed_again_within_deployment_is_ruled_again() -> None:
    state, positions = deploying()
    res = GAME.apply(state, positions, Action("deploy", 10, {"to": [5.0, 5.0]}), None)
    res = GAME.apply(res.state, res.positions, Action("deploy", 20, {"to": [25.0, 16.0]}), None)
    assert GAME.status(res.state).player == "red"
    again = camera(res.state, 20, "move", (21.0, 12.0), (25.0, 16.0), positions=res.positions,
                               measured=Measured(5.66, 0.0, 0.0))
    assert again == Action("deploy", 20, {"to": [21.0, 12.0], "pm_in": 0.0})
    moved = GAME.apply(res.state, res.positions, again, None)
    assert outcomes(moved.verdicts) == {"valknut.deploy.again": Outcome.INFO, "valknut.deploy.wholly_within": Outcome.LEGAL}
    assert moved.positions[20].xy == (21.0, 12.0) and GAME.status(moved.state).player == "red"  # not a placement
    # placed again outside: refused, and the rules keep it where it legally stood
    out = GAME.apply(moved.state, moved.positions, Action("deploy", 20, {"to": [19.0, 12.0]}), None)
    assert outcomes(out.verdicts)["valknut.deploy.wholly_within"] is Outcome.ILLEGAL
    assert out.positions[20].xy == (21.0, 12.0) and "put Blue 1 wholly inside blue's Drop Zone" in out.verdicts[1].message


def test_placing_out_of_turn_is_refused_and_a_figure_beside_the_battlefield_is_no_news() -> None:
    state, positions = deploying()
    res = GAME.apply(state, positions, camera(state, 20, "placed", (25.0, 16.0)), None)
    assert outcomes(res.verdicts) == {"valknut.deploy.alternate": Outcome.ILLEGAL}
    assert "It is red's turn to place a unit" in res.verdicts[0].message
    assert GAME.camera_action(state, 20, "placed", (32.5, 16.0)) is None  # lined up beside the table
    assert GAME.camera_action(state, 99, "placed", (5.0, 5.0)) is None  # no unit of this game


def test_the_last_figure_deployed_by_the_camera_begins_turn_1() -> None:
    state, positions = deploying(unit(10, "red"), unit(20, "blue"))
    for tag, at in ((10, (5.0, 5.0)), (20, (25.0, 16.0))):
        res = GAME.apply(state, positions, camera(state, tag, "placed", at), None)
        state, positions = res.state, dict(res.positions)
    assert state.phase == "turn_start" and state.turn == 1 and positions[20].xy == (25.0, 16.0)


def _last_activation(**dead: Any) -> tuple[ValknutState, dict[int, Any]]:
    """Turn 4, red 10's activation the last one; blue 20 was killed at (6.5, 5) and rolls to return."""
    return scenario_state({"units": [unit(10, "red", [5, 5]), unit(21, "blue", [25, 16], activated=True),
                                     unit(20, "blue", dead=True, **dead)],
                           "state": {"phase": "activations", "turn": 4, "active_player": "red", **ZONES}})


def test_a_returning_unit_is_placed_where_the_camera_sees_it_not_where_it_died() -> None:
    state, positions = _last_activation()
    ended = GAME.apply(state, positions, Action("end_activation", 10, {"rolls": [5]}), None)  # the return roll
    assert ended.state.phase == "turn_start" and ended.state.turn == 5 and ended.state.unit(20).ready
    back = camera(ended.state, 20, "move", (27.0, 19.0), (6.5, 5.0), positions=ended.positions,
                              measured=Measured(25.6, 0.03, 0.0))
    assert back.kind == "redeploy" and back.params["to"] == [27.0, 19.0]
    res = GAME.apply(ended.state, ended.positions, back, None)
    assert outcomes(res.verdicts) == {"valknut.redeploy.wholly_within": Outcome.LEGAL}
    assert res.state.unit(20).alive and res.state.unit(20).hp == 10 and res.positions[20].xy == (27.0, 19.0)
    # first seen again (its track lost) is the same redeployment
    assert camera(ended.state, 20, "placed", (27.0, 19.0)) == Action("redeploy", 20, {"to": [27.0, 19.0]})


def test_a_returning_unit_put_down_outside_its_drop_zone_is_refused_with_the_fix() -> None:
    state, positions = _last_activation(ready=True)
    state = replace(state, phase="turn_start")
    res = GAME.apply(state, positions, camera(state, 20, "placed", (15.0, 16.0)), None)
    assert outcomes(res.verdicts) == {"valknut.redeploy.wholly_within": Outcome.ILLEGAL}
    assert "put Blue 1 wholly inside blue's Drop Zone: its centre at x 20.5 to 29.5, y 11.5 to 21.5" in \
        res.verdicts[0].message
    assert not res.state.unit(20).alive and 20 not in res.positions


def test_a_failed_return_roll_refuses_the_figure_put_back() -> None:
    state, positions = _last_activation()
    ended = GAME.apply(state, positions, Action("end_activation", 10, {"rolls": [3]}), None)
    assert not ended.state.unit(20).ready and ended.state.unit(20).redeploy_target == 3
    res = GAME.apply(ended.state, ended.positions, camera(ended.state, 20, "placed", (25.0, 19.0)), None)
    assert [v.message for v in res.verdicts] == [
        "Unit 20 cannot be redeployed: it was killed and returns on a 3+ at the beginning of the next turn. Take "
        "Blue 1 off the table until then."]


def test_a_penalty_chosen_after_death_lets_the_camera_redeploy() -> None:
    state, positions = _last_activation(ready=True, penalty_due=True)
    state = replace(state, phase="turn_start")
    put = camera(state, 20, "placed", (27.0, 19.0))
    refused = GAME.apply(state, positions, put, None)
    assert outcomes(refused.verdicts) == {"valknut.redeploy.penalty": Outcome.ILLEGAL}
    assert "must choose a penalty" in refused.verdicts[0].message
    offered = [a for a in GAME.tryable_actions(state, positions) if a.kind == "choose_penalty"]
    assert [a.params["penalty"] for a in offered] == ["accuracy", "speed", "damage", "armor"]
    chose = GAME.apply(state, positions, Action("choose_penalty", 20, {"penalty": "speed"}), None)
    assert chose.legal and chose.state.unit(20).penalties == ("speed",) and not chose.state.unit(20).penalty_due
    res = GAME.apply(chose.state, chose.positions, put, None)
    assert res.legal and res.positions[20].xy == (27.0, 19.0) and res.state.unit(20).penalties == ("speed",)
    again = GAME.apply(res.state, res.positions, Action("choose_penalty", 20, {"penalty": "armor"}), None)
    assert [v.message for v in again.verdicts] == ["Unit 20 owes no penalty: it is on the battlefield."]


def test_an_attack_on_any_enemy_can_be_tried_and_is_refused_with_its_reason() -> None:
    wall = {"pieces": [{"name": "wall", "kind": ["blocking"], "height_in": 3, "polygon": [[8, 2], [9, 2], [9, 8], [8, 8]]}]}
    state, positions = scenario_state({
        "units": [unit(10, "red", [5, 5]), unit(20, "blue", [6.5, 5]), unit(21, "blue", [13.2, 5])],
        "terrain": wall, "state": {"phase": "activations", "active_player": "red", **ZONES}})
    legal = [a for a in GAME.legal_actions(state, positions) if a.kind == "attack"]
    tried = [a for a in GAME.tryable_actions(state, positions) if a.kind == "attack"]
    assert [a.params["target"] for a in legal] == [20] and [a.params["target"] for a in tried] == [20, 21]
    far = GAME.apply(state, positions, tried[1], None)  # ranged, with blue 20 within 1"
    assert far.state == state and outcomes(far.verdicts)["valknut.attack.ranged_engaged"] is Outcome.ILLEGAL
    assert "has enemy unit 20 0.50\" ± 0.00\" away; ranged attacks need no enemy within 1\"" in far.verdicts[0].message
    melee = GAME.apply(state, positions, Action("attack", 10, {"target": 21, "mode": "melee"}), None)
    assert [v.message for v in melee.verdicts] == [
        'Unit 10 is 7.20" ± 0.00" from unit 21; melee attacks need 1" or less: illegal (out of range: 7.20" > 1").']


def test_every_runestone_pick_up_and_drop_can_be_declared() -> None:
    state, positions = scenario_state({
        "units": [unit(10, "red", [5, 5], carrying=1, stone_origin=4), unit(20, "blue", [25, 16])],
        "state": {"phase": "activations", "active_player": "red", "stockpiles": [{"at": [5, 6.2]}, {"at": [15, 5]}],
                  **ZONES}})
    tried = GAME.tryable_actions(state, positions)
    assert {(a.kind, tuple(a.params.items())) for a in tried if a.kind in ("pick_up_runestone", "drop_runestone")} == {
        ("pick_up_runestone", (("stockpile", 0),)), ("pick_up_runestone", (("stockpile", 1),)), ("drop_runestone", ())}
    far = GAME.apply(state, positions, Action("pick_up_runestone", 10, {"stockpile": 1}), None)
    assert outcomes(far.verdicts) == {"valknut.runestone.one_at_a_time": Outcome.ILLEGAL}  # it carries one already
    dropped = GAME.apply(state, positions, Action("drop_runestone", 10), None)
    assert dropped.legal and dropped.state.unit(10).carrying == () and dropped.state.unit(10).actions_taken == ()
    assert [(g.x, g.y, g.origin) for g in dropped.state.ground] == [(5.0, 5.0, 4)]
    took = GAME.apply(dropped.state, dropped.positions, Action("pick_up_runestone", 10, {"stone": 0}), None)
    assert took.legal and len(took.state.unit(10).carrying) == 1 and took.state.ground == ()
    nothing = GAME.apply(took.state, took.positions, Action("drop_runestone", 20), None)
    assert nothing.verdicts[0].message == "It is red's activation; unit 20 belongs to blue."


def test_setup_choices_can_all_be_tried() -> None:
    state, positions = scenario_state({"units": [unit(10, "red"), unit(20, "blue")],
                                       "state": {"phase": "drop_zones", "first_player": "red",
                                                 "drop_zones": {"red": 1}}})
    zones = [a for a in GAME.tryable_actions(state, positions) if a.kind == "choose_drop_zone"]
    assert [a.params["section"] for a in zones] == [3, 5, 6, 1, 2, 4]  # the legal ones first
    res = GAME.apply(state, positions, zones[-1], None)
    assert res.verdicts[0].message == "blue's Drop Zone may be neither red's section 1 nor adjacent to it; section 4 is adjacent to it."
    state, positions = scenario_state({"units": [unit(10, "red"), unit(20, "blue")], "state": {"phase": "stockpiles"}})
    spots = [a for a in GAME.tryable_actions(state, positions) if a.kind == "place_stockpile"]
    assert len(spots) == 6 and sum(GAME.apply(state, positions, a, None).legal for a in spots) == 3


def test_the_live_pipeline_deploys_what_the_camera_puts_down_and_moves() -> None:
    """The real Pipeline (the bundled sample's setup, in its deploy phase) rules the tracker's events through
    `camera_action`: red 1 put down outside section 1 is refused with where to put it, then moved in: deployed."""
    from pathlib import Path

    from session.runtime import load_setup_files, make_pipeline, with_session_plan
    from vision.tracker import Move, Placed

    sample = Path(__file__).resolve().parent.parent / "sample_frames" / "valknut_skirmish"
    pipe: Any = make_pipeline(with_session_plan(load_setup_files(sample / "calibration.json", sample / "roster.json",
                                                                 None, None), sample))
    assert pipe.state.phase == "deploy" and GAME.status(pipe.state).player == "red"
    out = pipe._rule(Placed(frame=3, t=0.3, tag=10, at_in=(12.0, 4.0), pm_in=0.004, yaw_deg=0.0), {})
    assert [v["outcome"] for v in out] == ["illegal"]
    assert out[0]["message"].endswith("put Red 1 wholly inside red's Drop Zone: its centre at x 0.63 to 9.37, "
                                      "y 0.63 to 10.37.")  # a 32 mm base: 0.63" from each edge
    assert not pipe.state.unit(10).on_table
    move = Move(frame=9, t=0.9, tag=10, from_in=(12.0, 4.0), to_in=(8.0, 4.0), length_in=4.0, pm_in=0.006,
                path_in=((12.0, 4.0), (8.0, 4.0)), path_length_in=4.0, elapsed_s=0.5, lifted=True, left_frame=5,
                placed_frame=9)
    out = pipe._rule(move, {})
    assert [(v["rule"], v["outcome"]) for v in out] == [("valknut.deploy.wholly_within", "legal")]
    assert out[0]["numbers"]["margin_in"] == pytest.approx(10.0 - 8.0 - 0.63, abs=0.005)
    assert pipe.state.unit(10).on_table and GAME.status(pipe.state).player == "blue"
    # later red 1 is killed at (8, 4) and makes its return roll: the tracker matches its figure put down at (3, 3)
    # to where it died, and the pipeline rules it as its redeployment there
    dead = replace(pipe.state.unit(10), alive=False, on_table=False, ready=True)
    pipe.state = replace(pipe.state.with_unit(dead), phase="turn_start")
    back = replace(move, frame=400, from_in=(8.0, 4.0), to_in=(3.0, 3.0), length_in=5.1, path_in=((8.0, 4.0), (3.0, 3.0)))
    out = pipe._rule(back, {})
    assert [(v["rule"], v["outcome"]) for v in out] == [("valknut.redeploy.wholly_within", "legal")]
    assert pipe.state.unit(10).alive and pipe.state.unit(10).on_table


def test_the_new_actions_in_the_rule_books_words() -> None:
    names = {10: "Red 1", 20: "Blue 1"}.__getitem__
    assert GAME.describe(Action("choose_penalty", 20, {"penalty": "speed"}), names) == \
        'Blue 1 returns with -2" Speed (reinforcements depleted)'
    assert GAME.describe(Action("drop_runestone", 10), names) == "Red 1 drops a Runestone"
    assert GAME.describe(Action("deploy", 20, {"to": [27.0, 19.0]}), names) == "deploy Blue 1 at (27.0, 19.0)"
    assert GAME.kind_titles["choose_penalty"] == "Reinforcements depleted: choose a penalty"


def test_figures_already_standing_are_offered_as_deployments_where_they_stand() -> None:
    """Figures set out before deployment began were never seen put down, so the camera deployed none of them: the
    Declare list offers each one's deployment where it stands, taken for the side to deploy within its Drop Zone
    and refused (with the reason, when tried) otherwise."""
    from rules.engine import Placement
    from webui.routes.live import _actions, standing_put_downs

    state, _ = deploying()
    positions = {10: Placement(10, 8.0, 9.5), 11: Placement(11, 12.0, 5.0), 20: Placement(20, 25.0, 18.0)}
    offered = {a.unit: (a, ok) for a, ok in standing_put_downs(GAME, state, positions)}
    assert offered[10] == (Action("deploy", 10, {"to": [8.0, 9.5]}), True)
    assert offered[11][1] is False  # 2.5" outside red's Drop Zone
    assert offered[20][1] is False  # blue's, but red deploys now
    assert [a.unit for a, _ in standing_put_downs(GAME, state, positions, unit=20)] == [20]
    # the live page's list: red's standing figure as a legal deployment, the game no longer "waiting for the camera"
    answer = _actions(GAME, state, positions, None, None, None)
    (group,) = answer["groups"]
    assert group["kind"] == "deploy" and [a["legal"] for a in group["actions"]] == [True, False, False]
    assert group["actions"][0]["label"] == "Deploy tag 10 at (8.0, 9.5), where it stands"
    res = GAME.apply(state, positions, offered[10][0], None)
    assert res.legal and res.state.unit(10).on_table and GAME.status(res.state).player == "blue"
    # once deployment is over nothing standing is offered (a figure put down then is no news)
    assert standing_put_downs(GAME, replace(state, phase="activations"), positions) == []
