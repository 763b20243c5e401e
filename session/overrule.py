"""The players' last word over the camera: overruling a verdict, or correcting where a unit stands.

Both are declared actions of Tablesight's own (not a game's), so they travel the road every declaration
travels: ruled at a frame by the pipeline, written to the session's declarations.jsonl, replayed at the same
frame by `tablesight replay`, shown in the live events, the replay page and the battle report.

- `{"kind": "overrule", "unit": U, "params": {"rule": R, "frame": F, "outcome": "legal"|"illegal", "by": who,
  "reason": why}}`: verdict R on unit U ruled at frame F now stands as `outcome`. Overruled to illegal, the
  action it was ruled on is taken back when it is the last action ruled (the game continues from the state
  before it); otherwise the record changes and the game's state stays. The first overrule of a verdict
  stands: a second one, whoever makes it, is refused with a sentence naming the first, so two players
  overruling at once always end the same way (in the order the server received them), live and in replay.
- `{"kind": "correct", "unit": U, "params": {"at_in": [x, y], "by": who, "reason": why}}`: unit U stands at
  (x, y) table inches, whatever the camera says, until the camera sees it move again. If the last action
  ruled was U's move, it is ruled again to the corrected place.

Each yields verdicts: `tablesight.overrule` / `tablesight.correct` (who, why, the camera's reading and the
correction in `numbers`), and the re-ruled verdicts after a correction.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rules.engine import Action, Placement, RulesInputError, UnitId

KINDS = frozenset({"overrule", "correct"})
"""Declared-action kinds that are Tablesight's own, never a game's."""
OUTCOMES = ("legal", "illegal")
HISTORY = 2000
"""Verdicts remembered for overruling (the most recent ones; an older one is named as too old)."""

VerdictKey = tuple[int, str, "int | None"]
"""(frame it was ruled at, rule, unit)."""


@dataclass(frozen=True)
class LastRuling:
    """What the most recent ruled action changed, so it can be taken back or ruled again."""

    state_before: Any
    action: Action
    before: Mapping[UnitId, Placement]
    keys: frozenset[VerdictKey]


class Overrules:
    """The overrules and corrections made so far, and the verdicts they may refer to."""

    def __init__(self) -> None:
        self.ruled: OrderedDict[VerdictKey, str] = OrderedDict()
        """Outcome of each remembered verdict, as the camera and the rules gave it."""
        self.overruled: dict[VerdictKey, Mapping[str, Any]] = {}
        """Verdict -> the overrule that stands for it (the first)."""
        self.corrections: dict[UnitId, tuple[float, float]] = {}
        """Unit -> where the players say it stands (table inches), until the camera sees it move."""

    def remember(self, frame: int, verdicts: list[dict[str, Any]]) -> None:
        for v in verdicts:
            key = (int(frame), str(v.get("rule", "")), v.get("unit"))
            self.ruled[key] = str(v.get("outcome", ""))
            self.ruled.move_to_end(key)
        while len(self.ruled) > HISTORY:
            self.ruled.popitem(last=False)

    def moved(self, unit: UnitId) -> None:
        """The camera saw `unit` move or put down again: its correction no longer holds."""
        self.corrections.pop(unit, None)

    def placements(self, placements: dict[UnitId, Placement]) -> dict[UnitId, Placement]:
        """The camera's placements with the players' corrections in."""
        for unit, (x, y) in self.corrections.items():
            if unit in placements:
                placements[unit] = placements[unit].moved_to(x, y)
        return placements


def _text(params: Mapping[str, Any], key: str, limit: int) -> str:
    value = params.get(key, "")
    if not isinstance(value, str) or not value.strip():
        raise RulesInputError(f'An overrule needs "{key}": who makes it and why, in words.')
    return " ".join(value.split())[:limit]


def overrule_key(action: Action) -> tuple[VerdictKey, str, str, str]:
    """The verdict an overrule names, the outcome it asks for, who and why; a sentence if malformed."""
    p = action.params
    frame, rule, outcome = p.get("frame"), p.get("rule"), p.get("outcome")
    if isinstance(frame, bool) or not isinstance(frame, int) or frame < 0 or not isinstance(rule, str) or not rule:
        raise RulesInputError('An overrule names the verdict it overrules by "frame" (a whole number) and "rule".')
    if outcome not in OUTCOMES:
        raise RulesInputError(f'An overrule says what the verdict should have been: "outcome" is legal or illegal, '
                              f"not {outcome!r}.")
    return (frame, rule, action.unit), str(outcome), _text(p, "by", 60), _text(p, "reason", 300)


def correction_of(action: Action) -> tuple[float, float, str, str]:
    """(x, y, who, why) of a position correction; a sentence if malformed."""
    at = action.params.get("at_in")
    if action.unit is None:
        raise RulesInputError("A position correction names the unit it moves.")
    if (not isinstance(at, list | tuple) or len(at) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in at)):
        raise RulesInputError('A position correction gives "at_in": [x, y], table inches.')
    return float(at[0]), float(at[1]), _text(action.params, "by", 60), _text(action.params, "reason", 300)
