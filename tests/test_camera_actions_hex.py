"""What a piece the camera sees put down or moved stands for in the hex games (`Game.camera_action`): the
same action a player would declare, ruled by the same rules. Before this hook every hex game got a "place",
which Vigtavl's pieces and Hex Skirmish's figures cannot take."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from rules.engine import Action, Outcome, Placement, find_game
from rules.hexgrid import Hex
from rules.vigtavl.units import is_ship


def _play_until(name: str, want: str, seed: int = 3, steps: int = 400,
                on_board: bool = False) -> tuple[Any, Any, dict[int, Placement], Any]:
    """Random legal play from the game's example until an action of kind `want` is offered (on_board: by a
    Vigtavl piece standing on a hex of its own, not aboard a freighter)."""
    game = find_game(name)
    rng = random.Random(seed)
    state, positions = game.example(rng)
    positions = dict(positions)
    for _ in range(steps):
        actions = game.legal_actions(state, positions)
        wanted = [a for a in actions if a.kind == want and set(a.params) == ({"to"} if want == "move" else {"hex"})
                  and (not on_board or (state.piece(a.unit).hex is not None and state.piece(a.unit).aboard is None))]
        if wanted:
            return game, state, positions, wanted[0]
        result = game.apply(state, positions, rng.choice(actions), rng)
        state, positions = result.state, dict(result.positions)
    raise AssertionError(f"{name}: no {want} offered in {steps} steps")


def _centre(state: Any, cell: Any) -> tuple[float, float]:
    x, y = state.layout.to_table(Hex(int(cell[0]), int(cell[1])))
    return float(x), float(y)


def test_vigtavl_a_ship_put_on_the_sea_in_the_placement_phase_is_placed_there() -> None:
    game, state, positions, offered = _play_until("vigtavl", "place")
    at = _centre(state, offered.params["hex"])
    action = game.camera_action(state, offered.unit, "placed", (at[0] + 0.1, at[1] - 0.1))  # off centre, same hex
    assert action == Action("place", offered.unit, {"hex": list(offered.params["hex"])})
    result = game.apply(state, positions, action, random.Random(0))
    assert all(v.outcome is Outcome.LEGAL for v in result.verdicts), result.verdicts
    assert result.state.piece(offered.unit).hex == Hex(*offered.params["hex"])
    # seen again where the state has it: no news
    assert game.camera_action(result.state, offered.unit, "placed", at) is None


def test_vigtavl_a_piece_moved_to_another_hex_is_a_move_ruled_by_the_move_rules() -> None:
    game, state, positions, offered = _play_until("vigtavl", "move", on_board=True)
    piece = state.piece(offered.unit)
    here, there = _centre(state, (piece.hex.q, piece.hex.r)), _centre(state, offered.params["to"])
    action = game.camera_action(state, offered.unit, "move", there, here)
    assert action == Action("move", offered.unit, {"to": list(offered.params["to"])})
    result = game.apply(state, positions, action, random.Random(0))
    assert all(v.outcome is Outcome.LEGAL for v in result.verdicts), result.verdicts
    # a nudge within its hex is no news; a ship carried onto land (or a soldier into the sea) is ruled, and
    # refused, by the move rules, not lost
    assert game.camera_action(state, offered.unit, "move", (here[0] + 0.2, here[1]), here) is None
    wrong = "land" if is_ship(piece.kind) else "sea"
    cell = next(h for h, t in state.cells if t == wrong)
    refused = game.apply(state, positions, game.camera_action(state, offered.unit, "move", _centre(state, (cell.q, cell.r)),
                                                              here), random.Random(0))
    assert any(v.outcome is Outcome.ILLEGAL for v in refused.verdicts), refused.verdicts


def test_hex_skirmish_a_figure_moved_to_another_cell_is_a_move_with_the_movement_rules() -> None:
    game, state, positions, offered = _play_until("hex_skirmish", "move")
    here = (positions[offered.unit].x, positions[offered.unit].y)
    there = _centre(state, offered.params["to"])
    action = game.camera_action(state, offered.unit, "move", there, here)
    assert action == Action("move", offered.unit, {"at": [there[0], there[1]]})
    declared = game.apply(state, positions, offered, random.Random(0))
    seen = game.apply(state, positions, action, random.Random(0))
    assert [(v.rule, v.outcome) for v in seen.verdicts] == [(v.rule, v.outcome) for v in declared.verdicts]
    assert all(v.outcome is Outcome.LEGAL for v in seen.verdicts)
    # first seen, or nudged within its cell: nothing to rule
    assert game.camera_action(state, offered.unit, "placed", here) is None
    assert game.camera_action(state, offered.unit, "move", (here[0] + 0.1, here[1]), here) is None


def test_magni_keeps_placing_a_tile_where_it_is_put_down() -> None:
    game = find_game("magni")
    state, _positions = game.example(random.Random(0))
    assert game.camera_action(state, 10, "placed", (3.0, 4.0)) == Action("place", 10, {"at": [3.0, 4.0]})


NAN, INF = float("nan"), float("inf")
ODD_POINTS = [(NAN, 5.0), (5.0, NAN), (NAN, NAN), (INF, 5.0), (5.0, -INF), (INF, INF), (1e9, 1e9), (-1e9, 5.0), (1e300, -1e300)]


def _ruled_or_none(game: Any, state: Any, positions: Any, unit: int, seen: str, at: Any, came_from: Any) -> None:
    """camera_action runs inside the live loop: it must not raise, and whatever it returns the game rules."""
    action = game.camera_action(state, unit, seen, at, came_from)
    if action is not None:
        result = game.apply(state, positions, action, random.Random(0))
        assert result.verdicts and all(v.outcome is not Outcome.LEGAL for v in result.verdicts), (at, result.verdicts)


@pytest.mark.parametrize("at", ODD_POINTS, ids=str)
@pytest.mark.parametrize(("name", "want", "seen"), [("vigtavl", "place", "placed"), ("vigtavl", "move", "move"),
                                                    ("hex_skirmish", "move", "move")])
def test_a_position_off_the_board_or_not_finite_is_none_or_ruled(name: str, want: str, seen: str,
                                                                  at: tuple[float, float]) -> None:
    game, state, positions, offered = _play_until(name, want, on_board=name == "vigtavl" and want == "move")
    here = (positions[offered.unit].x, positions[offered.unit].y) if offered.unit in positions else (5.0, 5.0)
    _ruled_or_none(game, state, positions, offered.unit, seen, at, here)  # seen moved to an odd point
    _ruled_or_none(game, state, positions, offered.unit, seen, here, at)  # or from one
    _ruled_or_none(game, state, positions, offered.unit, seen, at, None)  # or first seen there
    for not_a_piece in (9999, 3, -1):  # a tag the game has no piece for
        assert game.camera_action(state, not_a_piece, seen, at, here) is None
        assert game.camera_action(state, not_a_piece, seen, here, None) is None


def test_vigtavl_a_sunk_piece_or_one_aboard_moved_on_camera_is_no_news() -> None:
    game, state, positions, offered = _play_until("vigtavl", "move", on_board=True)
    piece = state.piece(offered.unit)
    there = _centre(state, offered.params["to"])
    here = _centre(state, (piece.hex.q, piece.hex.r))
    for changed in (replace(piece, sunk_by="red"), replace(piece, aboard=9999, hex=None)):
        other = replace(state, pieces=tuple(changed if p.id == piece.id else p for p in state.pieces))
        assert game.camera_action(other, offered.unit, "move", there, here) is None
