"""Reading the JSON files a table's setup is made of: roster, terrain, game setup (for serve and replay alike)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration import json_input
from calibration.errors import InputError


class SetupFileError(InputError):
    """A setup file that is missing, unreadable or not JSON."""


TERRAIN_BEFORE_GAMES = "terrain.json"
"""In the setup folder: the terrain drawn while no game was chosen (and, in a setup folder from before each game kept
its own, the one terrain of every game): an open-table game with no terrain of its own starts from it."""


def terrain_file(game: str | None) -> str:
    """The name of game `game`'s terrain file in the setup folder ("terrain-valknut.json"; each game keeps its own),
    TERRAIN_BEFORE_GAMES while no game is chosen."""
    return f"terrain-{game}.json" if game else TERRAIN_BEFORE_GAMES


def read_json_file(path: Path, what: str) -> Any:
    """The JSON value in `path`; one sentence naming the `what` file (e.g. "roster") if it cannot be had."""
    return json_input.read_json_file(path, f"The {what} file", "fix it", SetupFileError)


def check_tags_apart(roster: Any, terrain: Any) -> None:
    """A tag carries either a unit or a terrain piece, never both; one sentence naming the tag otherwise."""
    if roster is None:
        return
    for piece in terrain:
        unit = roster.unit_of_tag(piece.tag) if piece.tag is not None else None
        if unit is not None:
            raise SetupFileError(
                f"Tag {piece.tag} is both {'unit' if unit == piece.tag else 'an extra tag of unit'} "
                f"{roster.units[unit].name!r} in the roster and terrain piece {piece.name!r}; give the terrain piece "
                "a tag id no base uses."
            )
