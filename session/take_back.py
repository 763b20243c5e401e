"""An illegal move is taken back: the rules keep the unit where it legally stood, the page asks for the figure to
be put back there, and its next move is measured from that spot, not from where it was wrongly put.

A hold lasts until the camera sees the unit again within `BACK_WITHIN_IN` of its legal spot (put back: nothing
to rule), or sees it moved elsewhere (that move is measured from the legal spot and ruled: legal, the hold ends;
illegal, the hold stays).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rules.engine import Outcome, Overlay, Placement, Shape, UnitId
from vision.tracker import Move

BACK_WITHIN_IN = 0.25
"""A figure put down this close to its legal spot (inches, centre to centre) is back where it stood."""


@dataclass(frozen=True)
class Hold:
    """Where the rules keep a unit after an illegal move (`legal`), and where the camera saw it put (`seen`)."""

    legal: Placement
    seen: tuple[float, float]


class TakeBacks:
    """The units whose last move was taken back, by unit id."""

    def __init__(self) -> None:
        self.holds: dict[UnitId, Hold] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> TakeBacks:
        out = TakeBacks()
        out.holds = dict(self.holds)  # Holds are immutable
        return out

    def placements(self, placements: dict[UnitId, Placement]) -> dict[UnitId, Placement]:
        """The camera's placements with every held unit where the rules keep it."""
        for unit, hold in self.holds.items():
            if unit in placements:
                placements[unit] = hold.legal
        return placements

    def measured_from(self, event: Move) -> Move:
        """A camera move of a held unit, measured from its legal spot (straight, as the crow flies from there to
        where it was put down, with the tracker's ±); any other move as it is."""
        hold = self.holds.get(event.tag)
        if hold is None:
            return event
        start = (hold.legal.x, hold.legal.y)
        length = math.hypot(event.to_in[0] - start[0], event.to_in[1] - start[1])
        return dataclasses.replace(event, from_in=start, length_in=length, path_in=(start, event.to_in),
                                   path_length_in=length)

    def is_back(self, event: Move) -> bool:
        """Whether `event` puts a held unit back on its legal spot (then nothing is ruled: see `release`)."""
        hold = self.holds.get(event.tag)
        return hold is not None and math.hypot(event.to_in[0] - hold.legal.x,
                                                event.to_in[1] - hold.legal.y) <= BACK_WITHIN_IN

    def release(self, unit: UnitId) -> None:
        """The unit stands where the rules keep it again: its hold ends."""
        self.holds.pop(unit, None)

    def ruled(self, event: Move, start: Placement | None, verdicts: list[dict[str, Any]],
              name_of: Callable[[UnitId], str]) -> list[dict[str, Any]]:
        """After a camera move was ruled: an illegal one holds the unit at `start` (where it legally stood) and
        gains a verdict that asks for the figure to be put back; a legal one ends the unit's hold."""
        illegal = any(v.get("outcome") == Outcome.ILLEGAL.value for v in verdicts)
        if not illegal or start is None:
            self.holds.pop(event.tag, None)
            return verdicts
        self.holds[event.tag] = Hold(start, (float(event.to_in[0]), float(event.to_in[1])))
        off = math.hypot(event.to_in[0] - start.x, event.to_in[1] - start.y)
        return [*verdicts, {
            "rule": "tablesight.take_back", "outcome": Outcome.INFO.value, "unit": event.tag,
            "numbers": {"legal_in": [round(start.x, 3), round(start.y, 3)],
                        "seen_in": [round(event.to_in[0], 3), round(event.to_in[1], 3)], "off_in": round(off, 3)},
            "message": f"The move is taken back: put {name_of(event.tag)} back where it stood, at "
                       f"({start.x:.1f}, {start.y:.1f}), {off:.1f}\" from where it is now; its next move is measured "
                       "from there."}]

    def overlays(self, radius_of: Mapping[UnitId, float], name_of: Callable[[UnitId], str]) -> tuple[Overlay, ...]:
        """A ghost of each held unit's base on its legal spot, labelled, and an arrow from where it was put."""
        out: list[Overlay] = []
        for unit, hold in self.holds.items():
            r = radius_of.get(unit, 0.5)
            at = (hold.legal.x, hold.legal.y)
            out.append(Overlay(Shape.CIRCLE, (at,), "illegal", radius=r, unit=unit,
                               label=f"put {name_of(unit)} back here"))
            out.append(Overlay(Shape.SEGMENT, (hold.seen, at), "illegal", unit=unit))
        return tuple(out)
