"""The players' last word over the camera: overruling a verdict, or correcting where a unit stands.

Both are declared actions of Tablesight's own (not a game's), so they travel the road every declaration
travels: ruled at a frame by the pipeline, written to the session's declarations.jsonl, replayed at the same
frame by `tablesight replay`, shown in the live events, the replay page and the battle report.

- `{"kind": "overrule", "unit": U, "params": {"rule": R, "frame": F, "outcome": "legal"|"illegal", "by": who,
  "reason": why}}`: verdict R on unit U ruled at frame F now stands as `outcome`. Overruled to illegal, the
  action it was ruled on is taken back when it is the last action ruled (the game continues from the state
  before it); otherwise the record changes and the game's state stays. An overrule must change the verdict
  (legal to legal is refused), and Tablesight's own records (`tablesight.*`) are not verdicts to overrule.
  The first overrule of a verdict stands against its own side: a second one is refused with a sentence naming
  the first, unless it comes from a player of the other side ("side": an owner in the roster), who may undo it
  (an action the first took back is then put back, when nothing was ruled since). Two players overruling at
  once always end the same way (in the order the server received them), live and in replay.
- `{"kind": "correct", "unit": U, "params": {"at_in": [x, y], "by": who, "reason": why}}`: unit U stands at
  (x, y) table inches, whatever the camera says, until the camera sees it move again; a place more than
  OFF_BOARD_MARGIN_IN outside the board is refused. If the last action
  ruled was U's move, it is ruled again to the corrected place.

Each yields verdicts: `tablesight.overrule` / `tablesight.correct` (who, why, the camera's reading and the
correction in `numbers`), and the re-ruled verdicts after a correction.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rules.engine import Action, Outcome, Placement, RulesInputError, UnitId

KINDS = frozenset({"overrule", "correct"})
"""Declared-action kinds that are Tablesight's own, never a game's."""
OUTCOMES = ("legal", "illegal")
OFF_BOARD_MARGIN_IN = 3.0
"""How far outside the board's edge (inches) a corrected position may lie: a base at the edge, an anchor's strip."""
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
    camera: bool = False
    """The action was a camera move's (a figure moved), not a declaration."""


class Overrules:
    """The overrules and corrections made so far, and the verdicts they may refer to."""

    def __init__(self) -> None:
        self.ruled: OrderedDict[VerdictKey, str] = OrderedDict()
        """Outcome of each remembered verdict, as the camera and the rules gave it."""
        self.said: dict[VerdictKey, str] = {}
        """What each remembered verdict said (its message), so that an overrule names it in the game's words."""
        self.overruled: dict[VerdictKey, Mapping[str, Any]] = {}
        """Verdict -> the overrule that stands for it (the first)."""
        self.corrections: dict[UnitId, tuple[float, float]] = {}
        """Unit -> where the players say it stands (table inches), until the camera sees it move."""
        self.taken_back: dict[VerdictKey, tuple[Any, Any]] = {}
        """Verdict -> the game's states (after, before) the action an overrule took back: put back when the other
        side undoes the overrule and nothing was ruled since (the state is still `before`)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Overrules:
        """A copy for a checkpoint: its own records, the game's states shared (they are immutable values), so that
        a replay resumed from it tells "nothing ruled since" as the live table did."""
        out = Overrules()
        out.ruled = OrderedDict(self.ruled)
        out.said = dict(self.said)
        out.overruled = {k: dict(v) for k, v in self.overruled.items()}
        out.corrections = dict(self.corrections)
        out.taken_back = dict(self.taken_back)
        return out

    def remember(self, frame: int, verdicts: list[dict[str, Any]]) -> None:
        for v in verdicts:
            key = verdict_key(frame, v)
            self.ruled[key] = str(v.get("outcome", ""))
            self.ruled.move_to_end(key)
            self.said[key] = str(v.get("message") or "")
        while len(self.ruled) > HISTORY:
            self.said.pop(self.ruled.popitem(last=False)[0], None)

    def forget(self, keys: Iterable[VerdictKey]) -> None:
        """The verdicts of an action taken back (Undo): they stand no more, so none of them can be overruled."""
        for key in keys:
            self.ruled.pop(key, None)
            self.said.pop(key, None)

    def moved(self, unit: UnitId) -> None:
        """The camera saw `unit` move or put down again: its correction no longer holds."""
        self.corrections.pop(unit, None)

    def placements(self, placements: dict[UnitId, Placement]) -> dict[UnitId, Placement]:
        """The camera's placements with the players' corrections in."""
        for unit, (x, y) in self.corrections.items():
            if unit in placements:
                placements[unit] = placements[unit].moved_to(x, y)
        return placements

    def overrule(self, action: Action, state: Any, last: LastRuling | None, name_of: Callable[[UnitId | None], str],
                 sides: Sequence[str]) -> OverruleRuling:
        """Rule an overrule (see the module docstring) against the verdicts remembered, the game's `state` and the
        `last` action ruled; a sentence (RulesInputError) when it names no verdict or would change nothing."""
        key, outcome, by, reason = overrule_key(action)
        frame, rule, unit = key
        name = name_of(unit)
        if rule.startswith("tablesight."):
            raise RulesInputError(f"{rule} is Tablesight's own record, not a verdict of the rules; overrule the "
                                  "verdict it is about instead.")
        side = overrule_side(action, list(sides))
        camera = self.ruled.get(key)
        if camera is None:
            raise RulesInputError(f"There is no verdict {rule} on {name} at frame {frame} to overrule (or it is among "
                                  "the oldest, no longer kept); pick the verdict from the events list.")
        first = self.overruled.get(key)
        standing = first["outcome"] if first is not None else camera
        if outcome == standing:
            raise RulesInputError(f"The verdict {_quoted(self.said.get(key, ''), rule, frame)} on {name} already "
                                  f"stands as {outcome}; an "
                                  "overrule must change it.")
        numbers: dict[str, Any] = {"frame": frame, "rule": rule, "camera_outcome": camera, "outcome": outcome,
                                   "by": by, "reason": reason, "side": side}
        if first is not None and (side is None or first.get("side") in (None, side)):
            return OverruleRuling([{
                "rule": "tablesight.overrule.once", "outcome": Outcome.ILLEGAL.value, "unit": unit, "numbers": numbers,
                "message": f"{first['by']} already overruled this verdict on {name} ({first['outcome']}: "
                           f"{first['reason']}); the first overrule stands, and only a player of the other side may "
                           "undo it."}], state, last)
        undone = put_back = False
        if outcome == "illegal" and camera != "illegal" and last is not None and key in last.keys:
            self.taken_back[key] = (state, last.state_before)  # (after, before) the action
            state, last = last.state_before, None  # the game goes on from before the overruled action
            undone = True
        elif first is not None and key in self.taken_back and state is self.taken_back[key][1]:
            state = self.taken_back.pop(key)[0]  # nothing ruled since: the action the first overrule took back stands
            put_back = True
        self.overruled[key] = {"by": by, "reason": reason, "outcome": outcome, "side": side}
        numbers["undone"] = undone
        numbers["put_back"] = put_back
        who = f"{by} ({side})" if side and side != by else by  # a player named as their side: once
        verdict = _quoted(self.said.get(key, ""), rule, frame)
        words = (f"{who} overruled {first['by']}'s overrule on {name}: {verdict} now stands as {outcome}"
                 if first is not None else
                 f"{who} overruled the camera on {name}: {verdict} was {camera}, now {outcome}")
        tail = "; the action is taken back" if undone else "; the action is put back" if put_back else ""
        return OverruleRuling([{"rule": "tablesight.overrule", "outcome": Outcome.INFO.value, "unit": unit,
                                "numbers": numbers, "message": words + tail + f". Why: {reason}"}], state, last)

    def correct(self, action: Action, seen: Placement | None, board_in: tuple[float, float],
                last: LastRuling | None, name_of: Callable[[UnitId | None], str]) -> Correction:
        """Rule a position correction: where the unit stands from now on, and the move of it to rule again (the
        last action ruled, when it was that unit's move); a sentence when the place or the unit is wrong."""
        x, y, by, reason = correction_of(action)
        unit = action.unit
        assert unit is not None
        w, d = board_in
        m = OFF_BOARD_MARGIN_IN
        if w > 0 and d > 0 and not (-m <= x <= w + m and -m <= y <= d + m):
            raise RulesInputError(f"({x:.4g}, {y:.4g}) is off the {w:g}\" x {d:g}\" board; correct "
                                  f"{name_of(unit)}'s position to where it stands on the board (0 to {w:g} across, "
                                  f"0 to {d:g} deep).")
        if seen is None:
            raise RulesInputError(f"{name_of(unit)} is not on the table as the camera sees it now; correct its "
                                  "position once it stands on the table.")
        self.corrections[unit] = (x, y)
        rerule = None
        to = last.action.params.get("to") if last is not None else None
        if last is not None and last.action.unit == unit and isinstance(to, list | tuple) and len(to) == 2:
            params: dict[str, Any] = {**last.action.params, "to": [x, y]}  # its move, to where it really stands
            start = last.before.get(unit)
            if start is not None and "length_in" in params:
                params["length_in"] = round(math.hypot(x - start.x, y - start.y), 4)
            rerule = Action(last.action.kind, unit, params)
        shift = math.hypot(x - seen.x, y - seen.y)
        numbers = {"camera_in": [round(seen.x, 4), round(seen.y, 4)], "at_in": [round(x, 4), round(y, 4)],
                   "shift_in": round(shift, 4), "by": by, "reason": reason}
        words = (f"{by} corrected {name_of(unit)}'s position: the camera measured ({seen.x:.2f}, {seen.y:.2f}), "
                 f"it stands at ({x:.2f}, {y:.2f}), {shift:.2f}\" away")
        return Correction(unit, numbers, words, reason, rerule)


@dataclass(frozen=True)
class OverruleRuling:
    """What an overrule decided: its verdicts, and the game's state and last ruling after it."""

    verdicts: list[dict[str, Any]]
    state: Any
    last: LastRuling | None


@dataclass(frozen=True)
class Correction:
    """What a position correction decided: its record's parts, and the unit's move to rule again (or None)."""

    unit: UnitId
    numbers: dict[str, Any]
    words: str
    reason: str
    rerule: Action | None

    def record(self, reruled: bool) -> dict[str, Any]:
        """The correction's own verdict, once its move was (or was not) ruled again."""
        return {"rule": "tablesight.correct", "outcome": Outcome.INFO.value, "unit": self.unit,
                "numbers": {**self.numbers, "reruled": reruled},
                "message": self.words + ("; its move is ruled again" if reruled else "") + f". Why: {self.reason}"}


def verdict_key(frame: int, verdict: Mapping[str, Any]) -> VerdictKey:
    """How a verdict (JSON) is named for an overrule: (the frame it was ruled at, its rule, its unit)."""
    return (int(frame), str(verdict.get("rule", "")), verdict.get("unit"))


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


def overrule_side(action: Action, sides: list[str]) -> str | None:
    """The side ("side": an owner in the roster) the overruling player plays, if given; a sentence if unknown."""
    side = action.params.get("side")
    if side is None or side == "":
        return None
    if not isinstance(side, str) or (sides and side not in sides):
        raise RulesInputError(f"An overrule's side is one of the sides in the roster ({', '.join(sides)}), "
                              f"not {side!r}.")
    return side


def correction_of(action: Action) -> tuple[float, float, str, str]:
    """(x, y, who, why) of a position correction; a sentence if malformed."""
    at = action.params.get("at_in")
    if action.unit is None:
        raise RulesInputError("A position correction names the unit it moves.")
    if (not isinstance(at, list | tuple) or len(at) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in at)):
        raise RulesInputError('A position correction gives "at_in": [x, y], table inches.')
    return float(at[0]), float(at[1]), _text(action.params, "by", 60), _text(action.params, "reason", 300)


SAID_CHARS = 120
"""An overrule quotes the verdict it overrules up to this many characters."""


def _quoted(said: str, rule: str, frame: int) -> str:
    """The verdict an overrule is about, in the game's words: '"Blue 3 is within 1\" of Red 4" (frame 2)'; its rule
    name when it said nothing."""
    text = said.strip().rstrip(".")
    if not text:
        return f"{rule} at frame {frame}"
    if len(text) > SAID_CHARS:
        text = text[:SAID_CHARS - 1].rstrip() + "…"
    return f"“{text}” (frame {frame})"
