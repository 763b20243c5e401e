"""The table's setup as one value: the calibration, the roster, the terrain pieces, the game chosen, and what a
recorded session carries (its game setup object and declared actions). The server holds one; recordings copy it
into each session folder."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from rules.engine import Action
from rules.roster import Roster
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
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def terrain_json(self) -> dict[str, Any]:
        return terrain_to_json(self.terrain)
