"""The dice between the table and the rules: the roll the table waits for, the last action ruled with dice, and
the rolls taken, as the pipeline keeps them and the dice panel shows them (docs: the dice API).

At most one roll is pending at a time. It is answered by declaring its action again with the faces so far plus
the new ones (`DiceAnswer`), ruled against the positions as they stood when the action was declared or seen.
A correction after the verdict is an overrule of the last action ruled with dice: the state goes back to before
it and the action is ruled again with the corrected faces. Cancelling drops the pending roll unruled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from calibration.errors import InputError
from rules.dice import ROLLS_KEY, Rolled, RollError, RollRequest, dice_words
from rules.engine import Action, Placement, UnitId

CANCEL = "dice_cancel"
"""Tablesight's own action: drop the pending roll (its action is not ruled)."""
CORRECT = "dice_correct"
"""Tablesight's own action: the last action ruled with dice is ruled again with params["faces"]."""
DICE_KINDS = frozenset({CANCEL, CORRECT})
"""Actions that never reach the game: the session answers them (and records them for replay)."""

SOURCES = ("typed", "camera", "phone", "rolled", "correction")
"""Where a roll's faces came from: typed on the page, read by the table camera, read by the phone's dice camera,
rolled by Tablesight ("roll for us"), or given in a correction."""
ANSWER_SOURCES = ("typed", "camera", "phone")
"""The sources a player's answer to a pending roll may name."""


class NoRollPending(InputError):
    """Faces given while no roll is pending (HTTP 409)."""


class RollsAsRecorded(InputError):
    """"Roll for us" changed while a recorded session plays its own script, whose dice are as recorded (HTTP 409)."""

    def __init__(self) -> None:
        super().__init__("This recorded session rolls its dice as they were recorded; set up a game on the New game "
                         "page to choose who rolls.")


class NothingToCorrect(InputError):
    """A dice correction with no action to correct, or after the game moved on (HTTP 409)."""


@dataclass(frozen=True)
class DiceAnswer(Action):
    """An action declared again with all its faces (its params' "rolls"), and where the newest ones came from.
    camera_faces: what the table camera read meanwhile (None: it read nothing), kept beside what was typed."""

    source: str = "typed"
    camera_faces: tuple[int, ...] | None = None

    def note(self) -> dict[str, Any]:
        """The line's "dice" object in declarations.jsonl."""
        return {"source": self.source,
                "camera_faces": list(self.camera_faces) if self.camera_faces is not None else None}

    @staticmethod
    def of(action: Action, faces: Sequence[int], source: str,
           camera_faces: Sequence[int] | None = None) -> DiceAnswer:
        """`action` with "rolls" = `faces` (all of them, in the order the rules take them)."""
        params = {**dict(action.params), ROLLS_KEY: [int(f) for f in faces]}
        return DiceAnswer(action.kind, action.unit, params, source,
                          tuple(int(f) for f in camera_faces) if camera_faces is not None else None)


def without_rolls(action: Action) -> tuple[str, UnitId | None, dict[str, Any]]:
    """What names an action whatever faces it carries."""
    return action.kind, action.unit, {k: v for k, v in action.params.items() if k != ROLLS_KEY}


def same_action(a: Action, b: Action) -> bool:
    """Whether `b` is `a` declared again (with other faces, or none)."""
    return without_rolls(a) == without_rolls(b)


def faces_given(action: Action) -> list[int]:
    """The faces an action carries (its "rolls"; [] when none or when they are not a list; true and false are not
    faces, as the rules say)."""
    value = action.params.get(ROLLS_KEY)
    return [int(f) for f in value if isinstance(f, int) and not isinstance(f, bool)] if isinstance(value, list) else []


def check_count(request: RollRequest, faces: Sequence[int]) -> None:
    """RollError in the rules' own words when `faces` is not the `count` dice the roll asks for."""
    if len(faces) != request.count:
        were = "1 was" if len(faces) == 1 else f"{len(faces)} were"
        what = request.what[:1].upper() + request.what[1:]
        raise RollError(f"{what} takes {dice_words(request.count, request.sides)}; {were} given.")


@dataclass(frozen=True)
class PendingRoll:
    """The roll the table waits for: the action (as declared or as the camera saw it, its "rolls" the faces given
    so far), the rules' request, the positions as they stood, the frame it was asked at."""

    id: int
    action: Action
    request: RollRequest
    positions: Mapping[UnitId, Placement]
    frame: int
    camera: bool = False
    """A camera move's (else a declared action's)."""

    def to_json(self, words: Callable[[Action], str]) -> dict[str, Any]:
        return {"id": self.id, "action": self.action.to_json(), "words": words(self.action),
                "request": self.request.to_json(), "since_frame": self.frame}


@dataclass(frozen=True)
class DiceRuling:
    """The last action ruled with dice: as ruled (its "rolls" all its faces), the rolls taken, its verdicts, where
    the faces came from, and what a correction needs (the state before it, the positions it was ruled on, and the
    ruling it made, which must still be the last one for a correction to be taken)."""

    id: int
    action: Action
    rolls: tuple[Rolled, ...]
    verdicts: tuple[dict[str, Any], ...]
    source: str
    frame: int
    state_before: Any = field(repr=False)
    positions: Mapping[UnitId, Placement] = field(repr=False)
    ruling: Any = field(repr=False)
    """The pipeline's LastRuling it made (session/overrule.py)."""

    @property
    def faces(self) -> list[int]:
        return [f for r in self.rolls for f in r.faces]

    def to_json(self, words: Callable[[Action], str]) -> dict[str, Any]:
        return {"id": self.id, "action": self.action.to_json(), "words": words(self.action),
                "rolls": [r.to_json() for r in self.rolls], "verdicts": list(self.verdicts), "source": self.source,
                "frame": self.frame}


@dataclass(frozen=True)
class RollTaken:
    """A roll the rules took (a frame's event, and a row of the store the battle report reads)."""

    kind: ClassVar[str] = "roll"
    frame: int
    rolled: Rolled
    source: str
    by: str
    camera_faces: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        r = self.rolled.request
        return {"type": "roll", "frame": self.frame, "clause": r.clause, "what": r.what, "unit": r.unit,
                "side": r.side, "sides": r.sides, "faces": list(self.rolled.faces), "by": self.by,
                "source": self.source,
                "camera_faces": list(self.camera_faces) if self.camera_faces is not None else None}


@dataclass(frozen=True)
class RollCorrected:
    """A correction of the last action ruled with dice: its faces as first ruled and as corrected."""

    kind: ClassVar[str] = "roll_correction"
    frame: int
    action: Action
    faces_before: tuple[int, ...]
    faces: tuple[int, ...]
    ruled_frame: int

    def to_json(self) -> dict[str, Any]:
        return {"type": "roll_correction", "frame": self.frame, "action": self.action.to_json(),
                "faces_before": list(self.faces_before), "faces": list(self.faces), "ruled_frame": self.ruled_frame}


DiceEvent = RollTaken | RollCorrected
