"""Every unit in the roster accounted for: the ones the camera has lost, the ones not put down yet, and the bases
standing so close that a tag cannot be read.

- Not seen: a unit seen before and not seen for UNSEEN_S seconds or more (the frames' own timestamps, so a replay
  says what the live table said), unless the game has taken it off the table (`Game.off_table`: destroyed, sunk,
  aboard a ship). A hand passing over a base hides it for a moment; five seconds is longer than a reach.
- Not seen on the table yet: a roster unit never seen (before deployment): said quietly, not as a warning.
- Too close: two units whose bases' circles (at their last known positions, inches) overlap by more than
  OVERLAP_TOLERANCE_IN (or their combined ±), both standing still where the camera sees them, or one seen and the
  other lost for UNSEEN_S next to it (a figure put down over another's tag). Bases cannot overlap on a real
  table: either the tags are misread or one hides the other.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rules.engine import listed
from rules.roster import Roster
from vision.tracker import TrackState, TrackView

UNSEEN_S = 5.0
"""Seconds of frames without a unit's tag before the page says it is not seen (a hand's reach is 1-3 s)."""

OVERLAP_TOLERANCE_IN = 0.1
"""Bases in contact overlap by their measurement's ± (0.01-0.05" each); more than this (inches), or than the two
positions' combined ± where that is larger, is no contact."""


@dataclass(frozen=True)
class Unseen:
    """A unit not seen for `seconds` (its tag covered, or `lifted`: picked up and not put down in view)."""

    tag: int
    seconds: float
    lifted: bool


@dataclass(frozen=True)
class TooClose:
    """Two units whose bases overlap by `overlap_in` inches, at their last known positions."""

    a: int
    b: int
    overlap_in: float


@dataclass(frozen=True)
class RollCall:
    """What a frame says of the roster's units beyond their positions."""

    unseen: tuple[Unseen, ...] = ()
    not_yet: tuple[int, ...] = ()
    too_close: tuple[TooClose, ...] = ()

    def to_json(self, roster: Roster | None) -> dict[str, Any]:
        """The roll call in the players' words, units by roster name and side: {"unseen": [{"tag", "seconds",
        "text"}], "too_close": [{"tags", "overlap_in", "text"}], "not_yet": [tag...], "not_yet_text": "..."}."""
        return {
            "unseen": [{"tag": u.tag, "seconds": int(u.seconds), "text": unseen_words(u, roster)} for u in self.unseen],
            "too_close": [{"tags": [c.a, c.b], "overlap_in": round(c.overlap_in, 2), "text": too_close_words(c, roster)}
                          for c in self.too_close],
            "not_yet": list(self.not_yet),
            "not_yet_text": not_yet_words(self.not_yet, roster),
        }


def unit_words(tag: int, roster: Roster | None) -> str:
    """A unit as a player names it: its roster name, with its side when the name does not say it ("Ulf (red)")."""
    unit = roster.units.get(tag) if roster is not None else None
    if unit is None:
        return f"tag {tag}"
    if unit.owner.lower() in unit.name.lower():
        return unit.name
    return f"{unit.name} ({unit.owner})"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def unseen_words(u: Unseen, roster: Roster | None) -> str:
    """"Red 4 not seen for 10 s: is its tag covered?" (or still in a hand, when it was picked up)."""
    why = "is it still in a hand?" if u.lifted else "is its tag covered?"
    return _sentence(f"{unit_words(u.tag, roster)} not seen for {int(u.seconds)} s: {why}")


def too_close_words(c: TooClose, roster: Roster | None) -> str:
    """"Red 4 and Blue 7 stand too close: their bases overlap by 0.4"; part them so both tags can be read.\""""
    return _sentence(f"{unit_words(c.a, roster)} and {unit_words(c.b, roster)} stand too close: their bases overlap "
                     f'by {c.overlap_in:.1f}"; part them so both tags can be read.')


def not_yet_words(tags: Collection[int], roster: Roster | None) -> str:
    """"Not seen on the table yet: Red 4 and Blue 7." ("" when every unit has been seen)."""
    if not tags:
        return ""
    return f"Not seen on the table yet: {listed([unit_words(t, roster) for t in tags])}."


def call_roll(tracks: Mapping[int, TrackView], roster: Roster | None, t: float,
              off_table: Collection[int] = ()) -> RollCall:
    """The roll call at time `t` (seconds, the frame's own) from the tracker's tracks (positions in inches)."""
    if roster is None or not roster.units:
        return RollCall()
    out = frozenset(off_table)
    unseen: list[Unseen] = []
    not_yet: list[int] = []
    still: list[TrackView] = []  # units where they stand: seen still, or lost long enough where they stood
    for tag in sorted(roster.units):
        if tag in out:
            continue
        view = tracks.get(tag)
        if view is None:
            not_yet.append(tag)
            continue
        gone = t - view.last_seen_t
        if gone >= UNSEEN_S - 1e-9:  # the frames' times as floats: 7.9 - 2.9 may fall short of 5.0
            unseen.append(Unseen(tag, gone, view.state is TrackState.LIFTED))
            if view.state is TrackState.OCCLUDED:
                still.append(view)
        elif view.state is TrackState.ON_TABLE:
            still.append(view)
    too_close = _overlaps(still, roster, t)
    named = {tag for c in too_close for tag in (c.a, c.b)}
    return RollCall(tuple(u for u in unseen if u.tag not in named), tuple(not_yet), too_close)


def _overlaps(still: list[TrackView], roster: Roster, t: float) -> tuple[TooClose, ...]:
    """Pairs of bases overlapping by more than OVERLAP_TOLERANCE_IN (or their positions' combined ±), at least one
    of them seen at `t` (two lost bases are each said not seen)."""
    if len(still) < 2:
        return ()
    xy = np.array([(v.x, v.y) for v in still], dtype=np.float64)
    r = np.array([roster.units[v.tag].base_radius_in for v in still], dtype=np.float64)
    d = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    overlap = r[:, None] + r[None, :] - d
    seen = np.array([v.last_seen_t >= t for v in still])
    pm = np.array([v.pm for v in still], dtype=np.float64)
    tolerance = np.maximum(OVERLAP_TOLERANCE_IN, np.hypot(pm[:, None], pm[None, :]))
    i, j = np.nonzero(np.triu(overlap > tolerance, k=1) & (seen[:, None] | seen[None, :]))
    pairs = [TooClose(still[a].tag, still[b].tag, float(overlap[a, b])) for a, b in zip(i.tolist(), j.tolist())]
    return tuple(sorted(pairs, key=lambda c: (-c.overlap_in, c.a, c.b)))

