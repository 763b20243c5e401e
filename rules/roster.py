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

Several tags on one base (a rim tag each side, or a rim tag and a topper card): a unit may add

    "more_tags": [{"tag": 112, "base_height_in": 0.125, "tag_offset_in": [0.66, 0.0], "tag_in": 0.5}]

each entry an extra tag on the same base with the same mount keys as the unit's own (its height and printed
side default to the unit's own tag's, its offset to [0, 0]). The
unit is still named by its own `tag`; any of its tags seen is enough, several seen are fused
(vision/fuse.py). mount_pm_in (on the unit, and on each extra tag; inches, >= 0): the ± left over after
mount calibration (`tablesight calibrate-mounts` writes it), added in quadrature to every position measured
from that tag. A mount without it was never measured: its tag may sit off where the roster says (a topper's pin
pushed in by hand leans; measured: about 2°, 0.06" at a 1.85" card), so every position measured from it carries
that too, `(height - 0.125") × tan(mount_lean_deg)` inches added to its ±, and the page marks the unit "mount not
measured". mount_lean_deg (on a unit or extra tag, or once for the whole roster at its top level; degrees,
default MOUNT_LEAN_DEG): how far an unmeasured pin may lean. Every tag id, a unit's own or an extra one, is used
once in a roster.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from rules.engine import Inches, RosterError, UnitId, game_names, listed
from rules.fields import field_number

MM_PER_INCH = 25.4
FIRST_BASE_TAG = 10
"""Tag ids below this are anchors, never bases."""
LAST_TAG = 586
"""The largest tag36h11 id."""
LEAN_PIVOT_IN = 0.125
"""Where a pin leans from: the top of a usual base, inches above its underside."""
MOUNT_LEAN_DEG = 2.0
"""How far a tag's mount may lean until it is measured, degrees (a topper's pin pushed in by hand)."""
UNMEASURED_NOTE_IN = 0.01
"""An unmeasured mount whose lean may move its tag by more than this (inches) is marked "mount not measured"
on the page: a topper, not a tag flat on its base."""
TAG_CELLS, TAG_BLACK_CELLS = 10, 8
"""A tag36h11 tag is 10 cells across, its black square 8 (a one-cell white border each side)."""


def tag_side_for_base(base_mm: float) -> Inches:
    """The largest tag (black square side, inches, to 0.01") whose white border fits a round base of base_mm
    with 8 % to spare: what `tablesight tags --base` prints."""
    white_side = 0.92 * (base_mm / MM_PER_INCH) / math.sqrt(2.0)
    return math.floor(white_side * TAG_BLACK_CELLS / TAG_CELLS * 100) / 100


@dataclass(frozen=True)
class TagMount:
    """One tag on a base and how it is mounted: all inches."""

    tag: int
    height_in: Inches
    """The tag's face above the underside of the base (a base top ~0.125"; a topper card ~1.85")."""
    offset_in: tuple[Inches, Inches]
    """The tag centre's offset from the base centre, in the tag's own frame (its +x, +y)."""
    tag_in: Inches
    """The printed tag's black square side."""
    pm_in: Inches | None = None
    """The ± left over after mount calibration, added in quadrature to every position measured from this tag;
    None: the mount was never measured."""
    lean_deg: float = MOUNT_LEAN_DEG
    """How far the mount may lean while it is not measured, degrees."""

    @property
    def measured(self) -> bool:
        return self.pm_in is not None

    @property
    def unmeasured_pm_in(self) -> Inches:
        """What an unmeasured mount may hide, inches: its tag's height above the base's top times tan(lean) (a tag
    flat on its base hides nothing); 0 once measured."""
        if self.measured:
            return 0.0
        return max(0.0, self.height_in - LEAN_PIVOT_IN) * math.tan(math.radians(self.lean_deg))

    def to_json(self) -> dict[str, Any]:
        """The roster's form of an extra tag (see the module docstring)."""
        return {"tag": self.tag, "base_height_in": self.height_in, "tag_offset_in": list(self.offset_in),
                "tag_in": self.tag_in, **({"mount_pm_in": self.pm_in} if self.pm_in is not None else {}),
                **({"mount_lean_deg": self.lean_deg} if self.lean_deg != MOUNT_LEAN_DEG else {})}


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
    mount_pm_in: Inches | None = None
    """The ± left over after calibrating the own tag's mount, inches (None: never measured)."""
    mount_lean_deg: float = MOUNT_LEAN_DEG
    """How far the own tag's mount may lean while it is not measured, degrees."""
    more_tags: tuple[TagMount, ...] = ()
    """Extra tags on the same base, beside the unit's own."""

    @property
    def mounts(self) -> tuple[TagMount, ...]:
        """Every tag on this base: first the unit's own (from its top-level fields), then `more_tags`."""
        own = TagMount(self.tag, self.base_height_in, self.tag_offset_in, self.printed_tag_in, self.mount_pm_in,
                       self.mount_lean_deg)
        return (own, *self.more_tags)

    @property
    def mount_unmeasured(self) -> bool:
        """True while a mount of this base that may hide more than UNMEASURED_NOTE_IN was never measured."""
        return any(m.unmeasured_pm_in > UNMEASURED_NOTE_IN for m in self.mounts)

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
            **({"mount_pm_in": self.mount_pm_in} if self.mount_pm_in is not None else {}),
            **({"mount_lean_deg": self.mount_lean_deg} if self.mount_lean_deg != MOUNT_LEAN_DEG else {}),
            **({"more_tags": [m.to_json() for m in self.more_tags]} if self.more_tags else {}),
            **dict(self.extra),
        }


@dataclass(frozen=True)
class Roster:
    """Every unit of a game, by tag id."""

    game: str
    units: Mapping[UnitId, RosterUnit]
    extra: Mapping[str, Any] = field(default_factory=dict)
    """The file's other top-level keys (a game's unit cards, an army limit), kept for the game to read."""

    @cached_property
    def _unit_by_tag(self) -> dict[int, UnitId]:
        return {m.tag: unit.tag for unit in self.units.values() for m in unit.mounts}

    def unit_of_tag(self, tag: int) -> UnitId | None:
        """The unit whose base carries tag id `tag` (its own tag or one of its `more_tags`); None if none does."""
        return self._unit_by_tag.get(tag)

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


_KNOWN = {"tag", "name", "profile", "owner", "base_mm", "base_height_in", "tag_offset_in", "tag_in", "mount_pm_in",
          "mount_lean_deg",
          "more_tags"}
_MOUNT_KEYS = {"tag", "base_height_in", "tag_offset_in", "tag_in", "mount_pm_in", "mount_lean_deg"}


def _number(entry: Mapping[str, Any], key: str, default: float, where: str, low: float, high: float) -> float:
    return field_number(entry, key, default, where, RosterError, low=low, high=high)


def _offset(entry: Mapping[str, Any], where: str) -> tuple[float, float]:
    offset = entry.get("tag_offset_in", [0.0, 0.0])
    if (
        not isinstance(offset, list | tuple)
        or len(offset) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in offset)
    ):
        raise RosterError(f"{where}: tag_offset_in must be two numbers [dx, dy] in inches; got {offset!r}.")
    return (float(offset[0]), float(offset[1]))


def _tag_id(tag: Any, where: str, where_tag: str) -> int:
    """A base's tag id (10 to 586); `where` names the entry, `where_tag` + the id names the tag."""
    if isinstance(tag, bool) or not isinstance(tag, int):
        raise RosterError(f"{where} has no whole-number tag id; add e.g. \"tag\": 12.")
    where = f"{where_tag} {tag}"
    if tag < FIRST_BASE_TAG:
        raise RosterError(f"{where}: ids 0-{FIRST_BASE_TAG - 1} are anchor tags; give bases ids from 10 up.")
    if tag > LAST_TAG:
        raise RosterError(f"{where}: tag36h11 has ids up to {LAST_TAG} only; give the id printed on the base.")
    return tag


def _more_tags(entry: Mapping[str, Any], where: str, own_height_in: float, own_tag_in: float,
               own_lean_deg: float = MOUNT_LEAN_DEG) -> tuple[TagMount, ...]:
    """A unit's `more_tags`: each an extra tag on its base, with the unit's mount keys; its height, printed side
    and lean default to the unit's own tag's, its offset to (0, 0); without a mount ± it is not measured."""
    raw = entry.get("more_tags", [])
    if not isinstance(raw, list):
        raise RosterError(f'{where}: more_tags must be a list of tags, e.g. [{{"tag": 112, "tag_offset_in": [0.66, 0]}}].')
    mounts: list[TagMount] = []
    for k, item in enumerate(raw):
        at = f"{where}, extra tag {k + 1}"
        if not isinstance(item, Mapping):
            raise RosterError(f'{at} must be an object such as {{"tag": 112, "tag_offset_in": [0.66, 0]}}.')
        tag = _tag_id(item.get("tag"), at, f"{where}, extra tag")
        at = f"{where}, extra tag {tag}"
        unknown = sorted(set(item) - _MOUNT_KEYS)
        if unknown:
            raise RosterError(f"{at} has {', '.join(map(repr, unknown))}, which an extra tag does not take; it takes "
                              f"{', '.join(sorted(_MOUNT_KEYS))}.")
        mounts.append(TagMount(
            tag=tag,
            height_in=_number(item, "base_height_in", own_height_in, at, 0.0, 12.0),
            offset_in=_offset(item, at),
            tag_in=_number(item, "tag_in", own_tag_in, at, 0.1, 12.0),
            pm_in=_number(item, "mount_pm_in", 0.0, at, 0.0, 12.0) if "mount_pm_in" in item else None,
            lean_deg=_number(item, "mount_lean_deg", own_lean_deg, at, 0.0, 45.0),
        ))
    return tuple(mounts)


def parse_roster(obj: Any, source: str = "the roster") -> Roster:
    """A Roster from its JSON form; raises RosterError naming the entry and field at fault."""
    if not isinstance(obj, Mapping):
        raise RosterError(f'{source} must be a JSON object with "game" and "units".')
    game = obj.get("game")
    if not isinstance(game, str) or not game:
        raise RosterError(f'{source} has no "game" name; add e.g. "game": "valknut".')
    if game.strip().lower() not in game_names():
        said = f"The{source[3:]}" if source.startswith("the ") else f"The roster {source}"
        raise RosterError(f"{said} is for the game {game[:60]!r}, which this Tablesight does not have; it has "
                          f"{listed(game_names())}: name one of those as the roster's game.")
    units_in = obj.get("units")
    if not isinstance(units_in, list) or not units_in:
        raise RosterError(f'{source} has no "units" list; add one entry per tagged base.')
    units: dict[UnitId, RosterUnit] = {}
    roster_lean = _number(obj, "mount_lean_deg", MOUNT_LEAN_DEG, source, 0.0, 45.0)
    problems: list[str] = []
    for i, entry in enumerate(units_in):
        try:
            unit = _unit(entry, f"{source}, unit {i + 1}", source, roster_lean, units)
        except RosterError as err:  # every unit is read: a file with three mistakes says all three at once
            problems.append(str(err))
            continue
        units[unit.tag] = unit
    if problems:
        raise RosterError(_all_of(problems, source))
    _check_tags_once(units, source)
    extra = {k: v for k, v in obj.items() if k not in ("game", "units")}
    return Roster(game=game.strip().lower(), units=units, extra=extra)


MOST_SAID = 5
"""How many of a roster's wrong units one message names."""


def _all_of(problems: list[str], source: str) -> str:
    """One problem as it is; several numbered, each its own sentence: "3 units of the roster are wrong. (1) Tag 12
    has no "owner"; ... (2) ..." (the first MOST_SAID, then how many more)."""
    if len(problems) == 1:
        return problems[0]
    said = [p.removeprefix(f"{source}, ") for p in problems[:MOST_SAID]]
    more = len(problems) - len(said)
    return (f"{len(problems)} units of {source} are wrong. " +
            " ".join(f"({k}) {p[:1].upper()}{p[1:]}" for k, p in enumerate(said, 1)) +
            (f" And {more} more." if more else ""))


def _unit(entry: Any, where: str, source: str, roster_lean: float, units: Mapping[UnitId, RosterUnit]) -> RosterUnit:
    """One entry of the roster's "units"; raises RosterError naming it and the field at fault."""
    if not isinstance(entry, Mapping):
        raise RosterError(f"{where} must be an object with tag, profile and owner.")
    tag = _tag_id(entry.get("tag"), where, f"{source}, tag")
    where = f"{source}, tag {tag}"
    if tag in units:
        raise RosterError(f"{where} is listed twice; every base needs its own tag id.")
    for key in ("profile", "owner"):
        if not isinstance(entry.get(key), str) or not entry.get(key):
            raise RosterError(f'{where} has no "{key}"; every unit needs its {key}\'s name.')
    offset = _offset(entry, where)
    name = entry.get("name", f"{entry['profile']} {tag}")
    if not isinstance(name, str):
        raise RosterError(f"{where}: name must be text; got {name!r}.")
    base_mm = _number(entry, "base_mm", 32.0, where, 10.0, 200.0)
    tag_in = _number(entry, "tag_in", 0.0, where, 0.1, 12.0) if "tag_in" in entry else None
    height = _number(entry, "base_height_in", 0.125, where, 0.0, 12.0)
    lean = _number(entry, "mount_lean_deg", roster_lean, where, 0.0, 45.0)
    return RosterUnit(
        tag=tag,
        name=name,
        profile=entry["profile"],
        owner=entry["owner"],
        base_mm=base_mm,
        base_height_in=height,
        tag_offset_in=offset,
        extra={k: v for k, v in entry.items() if k not in _KNOWN},
        tag_in=tag_in,
        mount_pm_in=_number(entry, "mount_pm_in", 0.0, where, 0.0, 12.0) if "mount_pm_in" in entry else None,
        mount_lean_deg=lean,
        more_tags=_more_tags(entry, where, height, tag_in if tag_in is not None else tag_side_for_base(base_mm),
                             lean),
    )


def _check_tags_once(units: Mapping[UnitId, RosterUnit], source: str) -> None:
    """Every tag id, a unit's own or an extra one, is on one base only."""
    on: dict[int, RosterUnit] = {}
    for unit in units.values():
        for mount in unit.mounts:
            other = on.get(mount.tag) or (units.get(mount.tag) if mount.tag != unit.tag else None)
            if other is not None:
                whose = "twice on its base" if other is unit else f"also on {other.name} (tag {other.tag})'s base"
                raise RosterError(f"{source}: tag {mount.tag}, an extra tag of {unit.name} (tag {unit.tag}), is "
                                  f"{whose}; every tag id goes on one base only, so give it an id no other tag uses.")
            on[mount.tag] = unit
