"""A live table with only a roster file starts its game: every example roster, through the pipeline's default setup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules.engine import find_game, game_names
from rules.roster import parse_roster
from rules.terrain import parse_terrain
from session.pipeline import default_setup

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "rosters"


@pytest.mark.parametrize("game", game_names())
def test_example_roster_starts_its_game(game: str) -> None:
    obj = json.loads((EXAMPLES / f"{game}.json").read_text())
    roster = parse_roster(obj)
    assert set(obj) - {"game", "units"} == set(roster.extra)  # cards, boards and limits are kept
    state = find_game(game).new_state(default_setup(roster, ()))
    assert state is not None


def test_table_terrain_wins_over_the_roster_files_own() -> None:
    obj = json.loads((EXAMPLES / "valyr.json").read_text())
    wall = parse_terrain({"pieces": [{"name": "wall", "kind": ["blocking"], "polygon": [[1, 1], [2, 1], [2, 2]],
                                      "height_in": 2}]})
    setup = default_setup(parse_roster(obj), wall)
    assert [p["name"] for p in setup["terrain"]["pieces"]] == ["wall"]
    assert setup["roster"]["game"] == "valyr" and "cards" in setup
