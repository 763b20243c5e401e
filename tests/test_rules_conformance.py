"""One conformance test over every registered game: random legal play never crashes, every legal action is
ruled legal, and every state round-trips through JSON."""

from __future__ import annotations

import json
import random

import pytest

from rules.engine import Outcome, find_game, game_names

GAMES = game_names()


def test_all_five_games_are_registered() -> None:
    assert set(GAMES) == {"valknut", "valyr", "magni", "hex_skirmish", "vigtavl"}


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_legal_play(name: str, seed: int) -> None:
    game = find_game(name)
    rng = random.Random(seed)
    state, positions = game.example(rng)
    for step in range(60):
        assert game.load_state(json.loads(json.dumps(game.dump_state(state)))) == state, f"step {step}"
        game.overlays(state, positions, None)
        if game.is_over(state):
            break
        actions = game.legal_actions(state, positions)
        assert actions, f"{name}: no legal action at step {step} and the game is not over"
        action = rng.choice(actions)
        result = game.apply(state, positions, action, rng)
        bad = [v for v in result.verdicts if v.outcome is Outcome.ILLEGAL]
        assert not bad, f"{name} step {step}: legal_actions offered {action} but it was ruled {bad[0].message}"
        state, positions = result.state, result.positions


def test_unknown_game_names_the_choices() -> None:
    from rules.engine import UnknownGame

    with pytest.raises(UnknownGame, match="There is no game called 'chess'; choose one of: .*valknut"):
        find_game("chess")
