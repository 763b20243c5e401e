"""The table's setup as one value: the calibration, the roster, the terrain pieces, the game chosen, and what a
recorded session carries (its game setup object and declared actions). The server holds one; recordings copy it
into each session folder."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from rules.engine import Action
from rules.roster import Roster, parse_roster
from rules.terrain import TerrainPiece, terrain_to_json


@dataclass
class TableSetup:
    """The current calibration (TableCalibration or None), roster, terrain pieces and game name."""

    calibration: Any = None
    roster: Roster | None = None
    terrain: tuple[TerrainPiece, ...] = ()
    game: str | None = None
    game_setup: dict[str, Any] | None = None
    """The game's setup object a recorded session carries (None: start from the roster and terrain)."""
    declarations: dict[int, list[Action]] = field(default_factory=dict)
    """Actions the players declared in a recorded session, by frame index."""
    roll_for_us: bool | None = None
    """A recorded session's replay: whether Tablesight rolls the dice its declarations lack (session/replay.py
    `replay_rolls`); None: as the game setup's "roll_for_us" says (the live table)."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def terrain_json(self) -> dict[str, Any]:
        return terrain_to_json(self.terrain)


ROLL_FOR_US = "roll_for_us"
"""The game setup's (the roster file's) top-level key: Tablesight rolls the dice the players do not give (default
false: the table waits for them)."""


def with_roll_for_us(setup: TableSetup, on: bool) -> dict[str, Any] | None:
    """Set "roll_for_us" in the game's setup: the roster (returned as the file to save) and a recorded session's game
    setup object; None when there is no roster to save it with."""
    with setup.lock:
        if setup.game_setup is not None:
            setup.game_setup = {**setup.game_setup, ROLL_FOR_US: bool(on)}
        if setup.roster is None:
            return None
        obj = setup.roster.to_json()
        obj[ROLL_FOR_US] = bool(on)
        setup.roster = parse_roster(obj)
        return obj
