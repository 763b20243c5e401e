"""A roster: which tag id stands for which unit, whose it is, and the base it stands on.

A roster file (JSON) looks like:

    {"game": "valknut",
     "units": [{"tag": 12, "name": "Ulf", "profile": "warrior", "owner": "red",
                "base_mm": 32, "base_height_in": 0.125, "tag_offset_in": [0, 0], "tag_in": 0.65}]}

tag: the AprilTag id on the base (10 and up; 0-9 are anchors). base_mm: the base diameter in millimetres
(round bases; 25, 28, 32, 40, 50 are usual). base_height_in: the height of the tag's face above the
underside of the base, inches. tag_offset_in: where the tag's centre sits relative to the base centre,
inches, in the base's own frame (the tag's +x, +y). tag_in: the printed tag's black square side, inches
(optional; default: the size `tablesight tags --base` prints for base_mm); the pipeline uses it to tell a
unit on a ruin floor from one on the table. profile: the game's name for the unit's stat line or card (each
game says what it accepts). Extra keys per unit are kept in `extra` for the game to read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rules.engine import Inches, RosterError, UnitId
from rules.fields import field_number

MM_PER_INCH = 25.4
FIRST_BASE_TAG = 10
"""Tag ids below this are anchors, never bases."""
LAST_TAG = 586
"""The largest tag36h11 id."""
TAG_CELLS, TAG_BLACK_CELLS = 10, 8
"""A tag36h11 tag is 10 cells across, its black square 8 (a one-cell white border each side)."""


def tag_side_for_base(base_mm: float) -> Inches:
    """The largest tag (black square side, inches, to 0.01") whose white border fits a round base of base_mm
    with 8 % to spare: what `tablesight tags --base` prints."""
    white_side = 0.92 * (base_mm / MM_PER_INCH) / math.sqrt(2.0)
    return math.floor(white_side * TAG_BLACK_CELLS / TAG_CELLS * 100) / 100


@dataclass(frozen=True)
class RosterUnit:
    """One unit on the table, named by the tag id on its base."""

    tag: UnitId
    name: str
    profile: str
    owner: str
    base_mm: float = 32.0
    base_height_in: Inches = 0.125
    tag_offset_in: tuple[Inches, Inches] = (0.0, 0.0)
    extra: Mapping[str, Any] = field(default_factory=dict)
    tag_in: Inches | None = None
    """The printed tag's black square side, inches, when the roster says; else see `printed_tag_in`."""

    @property
    def base_radius_in(self) -> Inches:
        """Half the base diameter, inches."""
        return self.base_mm / MM_PER_INCH / 2.0

    @property
    def printed_tag_in(self) -> Inches:
        """The tag's black square side, inches: the roster's `tag_in`, else what `tablesight tags --base` prints."""
        return self.tag_in if self.tag_in is not None else tag_side_for_base(self.base_mm)

    def to_json(self) -> dict[str, Any]:
        return {
            "tag": self.tag,
            "name": self.name,
            "profile": self.profile,
            "owner": self.owner,
            "base_mm": self.base_mm,
            "base_height_in": self.base_height_in,
            "tag_offset_in": list(self.tag_offset_in),
            **({"tag_in": self.tag_in} if self.tag_in is not None else {}),
            **dict(self.extra),
        }


@dataclass(frozen=True)
class Roster:
    """Every unit of a game, by tag id."""

    game: str
    units: Mapping[UnitId, RosterUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)
    """The file's other top-level keys (a game's unit cards, an army limit), kept for the game to read."""

    def owners(self) -> list[str]:
        """The players, in the order their first unit appears."""
        seen: dict[str, None] = {}
        for unit in self.units.values():
            seen.setdefault(unit.owner, None)
        return list(seen)

    def of(self, owner: str) -> list[RosterUnit]:
        return [u for u in self.units.values() if u.owner == owner]

    def to_json(self) -> dict[str, Any]:
        return {**dict(self.extra), "game": self.game, "units": [u.to_json() for u in self.units.values()]}


_KNOWN = {"tag", "name", "profile", "owner", "base_mm", "base_height_in", "tag_offset_in", "tag_in"}


def _number(entry: Mapping[str, Any], key: str, default: float, where: str, low: float, high: float) -> float:
    return field_number(entry, key, default, where, RosterError, low=low, high=high)


def parse_roster(obj: Any, source: str = "the roster") -> Roster:
    """A Roster from its JSON form; raises RosterError naming the entry and field at fault."""
    if not isinstance(obj, Mapping):
        raise RosterError(f'{source} must be a JSON object with "game" and "units".')
    game = obj.get("game")
    if not isinstance(game, str) or not game:
        raise RosterError(f'{source} has no "game" name; add e.g. "game": "valknut".')
    units_in = obj.get("units")
    if not isinstance(units_in, list) or not units_in:
        raise RosterError(f'{source} has no "units" list; add one entry per tagged base.')
    units: dict[UnitId, RosterUnit] = {}
    for i, entry in enumerate(units_in):
        where = f"{source}, unit {i + 1}"
        if not isinstance(entry, Mapping):
            raise RosterError(f"{where} must be an object with tag, profile and owner.")
        tag = entry.get("tag")
        if isinstance(tag, bool) or not isinstance(tag, int):
            raise RosterError(f"{where} has no whole-number tag id; add e.g. \"tag\": 12.")
        where = f"{source}, tag {tag}"
        if tag < FIRST_BASE_TAG:
            raise RosterError(f"{where}: ids 0-{FIRST_BASE_TAG - 1} are anchor tags; give bases ids from 10 up.")
        if tag > LAST_TAG:
            raise RosterError(f"{where}: tag36h11 has ids up to {LAST_TAG} only; give the id printed on the base.")
        if tag in units:
            raise RosterError(f"{where} is listed twice; every base needs its own tag id.")
        for key in ("profile", "owner"):
            if not isinstance(entry.get(key), str) or not entry.get(key):
                raise RosterError(f'{where} has no "{key}"; every unit needs its {key}\'s name.')
        offset = entry.get("tag_offset_in", [0.0, 0.0])
        if (
            not isinstance(offset, list | tuple)
            or len(offset) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in offset)
        ):
            raise RosterError(f"{where}: tag_offset_in must be two numbers [dx, dy] in inches; got {offset!r}.")
        name = entry.get("name", f"{entry['profile']} {tag}")
        if not isinstance(name, str):
            raise RosterError(f"{where}: name must be text; got {name!r}.")
        units[tag] = RosterUnit(
            tag=tag,
            name=name,
            profile=entry["profile"],
            owner=entry["owner"],
            base_mm=_number(entry, "base_mm", 32.0, where, 10.0, 200.0),
            base_height_in=_number(entry, "base_height_in", 0.125, where, 0.0, 12.0),
            tag_offset_in=(float(offset[0]), float(offset[1])),
            extra={k: v for k, v in entry.items() if k not in _KNOWN},
            tag_in=_number(entry, "tag_in", 0.0, where, 0.1, 12.0) if "tag_in" in entry else None,
        )
    extra = {k: v for k, v in obj.items() if k not in ("game", "units")}
    return Roster(game=game.lower(), units=units, extra=extra)
