"""Reading the JSON files a table's setup is made of: roster, terrain, game setup (for serve and replay alike)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from calibration import json_input
from calibration.errors import InputError


class SetupFileError(InputError):
    """A setup file that is missing, unreadable or not JSON."""


def read_json_file(path: Path, what: str) -> Any:
    """The JSON value in `path`; one sentence naming the `what` file (e.g. "roster") if it cannot be had."""
    return json_input.read_json_file(path, f"The {what} file", "fix it", SetupFileError)


def check_tags_apart(roster: Any, terrain: Any) -> None:
    """A tag carries either a unit or a terrain piece, never both; one sentence naming the tag otherwise."""
    if roster is None:
        return
    for piece in terrain:
        if piece.tag is not None and piece.tag in roster.units:
            raise SetupFileError(
                f"Tag {piece.tag} is both unit {roster.units[piece.tag].name!r} in the roster and terrain piece "
                f"{piece.name!r}; give the terrain piece a tag id no base uses."
            )
