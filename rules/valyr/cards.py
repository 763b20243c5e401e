"""Valyr unit cards: Identity, Combat, Abilities and Components, read from data and checked.

A card is written the way the Valyr rules lay it out (keys are read case-insensitively, and the rule
book's own spelling "Abilites" is accepted beside "Abilities"):

    {"Identity": {"Name": "Ash Warden", "Dynasty": "...", "Type": "Hero", "Class": "...",
                  "Species": "...", "Distinctions": ["..."], "Size": "Medium"},
     "Combat": {"Attack": "3-12", "Defense": "1-1", "Range": "0-[+1/+1]-3-[0/0]-8",
                "Energy": 2, "Movement": "6-4", "Health": 6, "Appraisal": 30},
     "Abilities": {"Mend": {"Type": "Active", "Ability": "text", "Template": null,
                            "Hook": {"name": "mend", "amount": 2, "reach_in": 3}}},
     "Components": ["..."]}

Attack is Strength-Skill (d20s rolled; the number a die plus armor must come in *below*), Defense is
Armor-Dodge, Movement is Sprint-Stamina (inches); each may also be a two-number list or an object.

Range notation (the rule book writes it loosely as
"min-range-[strength modifier/skill modifier]-range[strength modifier/skill modifier]-max-range").
Our reading, the named option ``RANGE_READING = "banded"``: the numbers are distances in inches from
the minimum range to the maximum, and each bracket between two numbers holds the strength/skill
modifiers for the band between those two distances. "0-[+1/+2]-6-[0/-1]-12" means: 0" to 6" strength
+1, skill +2; over 6" to 12" strength 0, skill -1. A distance exactly on an inner boundary belongs to
the closer band. "2-12" (no brackets) is one band with no modifiers. A missing dash before a bracket
("6[0/0]") is tolerated, as in the rule book's own template.

The rule book gives no unit cards; `EXAMPLE_CARDS` are Tablesight's own examples for tests and the
demo, marked as such in their "Origin" field. Their numbers are ours, not the author's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rules.engine import Inches, Json, RosterError

RANGE_READING = "banded"
"""How the loose range notation is read: brackets give the modifiers of the band between the numbers either side."""
UNIT_TYPES = ("Hero", "Conscript")
ABILITY_TYPES = ("Passive", "Active")
OURS = "Tablesight example card (not from the Valyr rules)"


@dataclass(frozen=True)
class Identity:
    """Who the unit is: name, dynasty (faction), type (Hero or Conscript), class, species, distinctions, size."""

    name: str
    type: str
    dynasty: str = ""
    klass: str = ""
    species: str = ""
    distinctions: tuple[str, ...] = ()
    size: str = ""


@dataclass(frozen=True)
class RangeBand:
    """One band of a range table: distances over `start_in` up to `end_in` (edge to edge, inches) and its modifiers."""

    start_in: Inches
    end_in: Inches
    strength_mod: int
    skill_mod: int

    @property
    def label(self) -> str:
        return f"{self.strength_mod:+d}/{self.skill_mod:+d}"


@dataclass(frozen=True)
class RangeTable:
    """Min and max range (inches, edge to edge) and the bands between them, as written on the card."""

    notation: str
    bands: tuple[RangeBand, ...]

    @property
    def min_in(self) -> Inches:
        return self.bands[0].start_in

    @property
    def max_in(self) -> Inches:
        return self.bands[-1].end_in

    def band_at(self, distance_in: Inches) -> int:
        """Index of the band a distance falls in (a boundary belongs to the closer band); -1 when out of range."""
        if distance_in < self.min_in or distance_in > self.max_in:
            return -1
        for i, band in enumerate(self.bands):
            if distance_in <= band.end_in:
                return i
        return len(self.bands) - 1


@dataclass(frozen=True)
class Combat:
    """The card's combat stats. Distances in inches."""

    strength: int
    skill: int
    armor: int
    dodge: int
    range: RangeTable
    energy: int
    sprint: Inches
    stamina: Inches
    health: int
    appraisal: float


@dataclass(frozen=True)
class Ability:
    """A special action (Active: takes an action) or passive, with the named hook that gives it effect, if any.

    hook_params: the hook's parameters as sorted (name, value) pairs, so the card stays hashable.
    """

    name: str
    type: str
    text: str = ""
    template: str | None = None
    hook: str | None = None
    hook_params: tuple[tuple[str, Json], ...] = ()

    @property
    def params(self) -> dict[str, Json]:
        return dict(self.hook_params)

    @property
    def active(self) -> bool:
        return self.type == "Active"


@dataclass(frozen=True)
class UnitCard:
    """A whole unit card. `origin` says where the card came from (our examples say so)."""

    identity: Identity
    combat: Combat
    abilities: tuple[Ability, ...] = ()
    components: tuple[str, ...] = ()
    origin: str = ""

    @property
    def name(self) -> str:
        return self.identity.name

    def ability(self, name: str) -> Ability | None:
        key = name.strip().lower()
        return next((a for a in self.abilities if a.name.lower() == key or (a.hook or "") == key), None)

    def hooks(self) -> tuple[Ability, ...]:
        return tuple(a for a in self.abilities if a.hook)

    def to_json(self) -> dict[str, Json]:
        i, c = self.identity, self.combat
        abilities: dict[str, Json] = {}
        for a in self.abilities:
            entry: dict[str, Json] = {"Type": a.type, "Ability": a.text, "Template": a.template}
            if a.hook:
                entry["Hook"] = {"name": a.hook, **dict(a.hook_params)}
            abilities[a.name] = entry
        out: dict[str, Json] = {
            "Identity": {
                "Name": i.name, "Dynasty": i.dynasty, "Type": i.type, "Class": i.klass,
                "Species": i.species, "Distinctions": list(i.distinctions), "Size": i.size,
            },
            "Combat": {
                "Attack": f"{c.strength}-{c.skill}",
                "Defense": f"{c.armor}-{c.dodge}",
                "Range": c.range.notation,
                "Energy": c.energy,
                "Movement": f"{_num(c.sprint)}-{_num(c.stamina)}",
                "Health": c.health,
                "Appraisal": _num(c.appraisal),
            },
            "Abilities": abilities,
            "Components": list(self.components),
        }
        if self.origin:
            out["Origin"] = self.origin
        return out


def _num(v: float) -> int | float:
    return int(v) if float(v).is_integer() else v


def _section(obj: Mapping[str, Any], *names: str) -> Any:
    lowered = {str(k).lower(): v for k, v in obj.items()}
    for n in names:
        if n.lower() in lowered:
            return lowered[n.lower()]
    return None


_NUMBER = r"[+-]?\d+(?:\.\d+)?"
_PAIR = re.compile(rf"^\s*({_NUMBER})\s*[-/]\s*({_NUMBER})\s*$")


def _pair(value: Any, names: tuple[str, str], where: str, field: str, whole: bool) -> tuple[float, float]:
    """Two numbers written "a-b", [a, b] or {names[0]: a, names[1]: b}."""
    got: tuple[Any, Any] | None = None
    if isinstance(value, str):
        m = _PAIR.match(value)
        if m:
            got = (float(m.group(1)), float(m.group(2)))
    elif isinstance(value, list | tuple) and len(value) == 2:
        got = (value[0], value[1])
    elif isinstance(value, Mapping):
        a, b = _section(value, names[0]), _section(value, names[1])
        if a is not None and b is not None:
            got = (a, b)
    if got is None or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in got):
        raise RosterError(
            f'{where}: Combat "{field}" must be {names[0]}-{names[1]} like "3-12" (or [3, 12]); got {value!r}.'
        )
    a, b = float(got[0]), float(got[1])
    if whole and not (a.is_integer() and b.is_integer()):
        raise RosterError(f'{where}: Combat "{field}" must be whole numbers; got {value!r}.')
    if a < 0 or b < 0:
        raise RosterError(f'{where}: Combat "{field}" cannot be negative; got {value!r}.')
    return a, b


def _whole(value: Any, where: str, field: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        raise RosterError(f'{where}: Combat "{field}" must be a whole number; got {value!r}.')
    if value < low:
        raise RosterError(f'{where}: Combat "{field}" must be at least {low}; got {value!r}.')
    return int(value)


_RANGE_TOKEN = re.compile(rf"\[\s*({_NUMBER})\s*/\s*({_NUMBER})\s*\]|({_NUMBER})")


def parse_range(value: Any, where: str = "the card") -> RangeTable:
    """A range table from the card's notation (see the module docstring) or {"min", "max", "bands"}."""
    if isinstance(value, Mapping):
        return _range_from_object(value, where)
    if not isinstance(value, str) or not value.strip():
        raise RosterError(f'{where}: Combat "Range" must be text like "0-[+1/+2]-6-[0/0]-12"; got {value!r}.')
    text = value.strip()
    tokens: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        if text[pos] in " -" and not _RANGE_TOKEN.match(text, pos):
            pos += 1
            continue
        m = _RANGE_TOKEN.match(text, pos)
        if not m:
            raise RosterError(
                f'{where}: cannot read Range "{value}" at "{text[pos:]}"; write it like "0-[+1/+2]-6-[0/0]-12".'
            )
        if m.group(3) is not None:
            # "6-12": the dash is a separator, not a sign, when it follows a number or a bracket
            number = m.group(3)
            if number.startswith("-") and tokens:
                number = number[1:]
            tokens.append(("n", float(number)))
        else:
            tokens.append(("b", (int(float(m.group(1))), int(float(m.group(2))))))
        pos = m.end()
    kinds = "".join(k for k, _ in tokens)
    if not re.fullmatch(r"n(b?n)+", kinds):
        raise RosterError(
            f'{where}: Range "{value}" must run from the minimum range to the maximum, with '
            f'[strength/skill] modifiers between distances, like "0-[+1/+2]-6-[0/0]-12".'
        )
    bands: list[RangeBand] = []
    start = tokens[0][1]
    mods = (0, 0)
    for kind, val in tokens[1:]:
        if kind == "b":
            mods = val
            continue
        bands.append(RangeBand(float(start), float(val), mods[0], mods[1]))
        start, mods = val, (0, 0)
    return _checked(RangeTable(text, tuple(bands)), value, where)


def _range_from_object(obj: Mapping[str, Any], where: str) -> RangeTable:
    lo, hi, bands_in = _section(obj, "min"), _section(obj, "max"), _section(obj, "bands") or []
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (lo, hi)):
        raise RosterError(f'{where}: a Range object needs numbers "min" and "max" (inches); got {dict(obj)!r}.')
    bands: list[RangeBand] = []
    start = float(lo)
    for b in bands_in:
        vals: tuple[Any, Any, Any] = (None, None, None)
        if isinstance(b, Mapping):
            vals = (b.get("to", hi), b.get("strength", 0), b.get("skill", 0))
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
            raise RosterError(f'{where}: each Range band needs "to" (inches), "strength" and "skill"; got {b!r}.')
        bands.append(RangeBand(start, float(vals[0]), int(vals[1]), int(vals[2])))
        start = float(vals[0])
    if not bands or bands[-1].end_in < float(hi):
        bands.append(RangeBand(start, float(hi), 0, 0))
    notation = f"{_num(bands[0].start_in)}" + "".join(
        f"-[{b.strength_mod:+d}/{b.skill_mod:+d}]-{_num(b.end_in)}" for b in bands
    )
    return _checked(RangeTable(notation, tuple(bands)), obj, where)


def _checked(table: RangeTable, value: Any, where: str) -> RangeTable:
    if table.min_in < 0:
        raise RosterError(f'{where}: Range "{value}" has a negative minimum range.')
    for band in table.bands:
        if band.end_in <= band.start_in:
            raise RosterError(
                f'{where}: Range "{value}" must list distances in increasing order '
                f'({_num(band.start_in)}" then {_num(band.end_in)}").'
            )
    return table


def parse_card(obj: Any, where: str = "a unit card", hooks: Mapping[str, Any] | None = None) -> UnitCard:
    """A UnitCard from its JSON form; raises RosterError naming the card and the field at fault.

    hooks: the known ability hooks by name (to reject a card that names a hook nobody implemented).
    """
    if not isinstance(obj, Mapping):
        raise RosterError(f'{where} must be an object with "Identity" and "Combat"; got {obj!r}.')
    ident = _section(obj, "Identity")
    if not isinstance(ident, Mapping):
        raise RosterError(f'{where} has no "Identity" section; add {{"Name": ..., "Type": "Hero"}}.')
    name = _section(ident, "Name")
    if not isinstance(name, str) or not name.strip():
        raise RosterError(f'{where}: Identity needs a "Name".')
    where = f'unit card "{name}"'
    utype = _section(ident, "Type")
    if not isinstance(utype, str) or utype.strip().title() not in UNIT_TYPES:
        raise RosterError(f'{where}: Identity "Type" must be Hero or Conscript; got {utype!r}.')
    distinctions = _section(ident, "Distinctions") or []
    if isinstance(distinctions, str):
        distinctions = [distinctions]
    if not isinstance(distinctions, list) or not all(isinstance(d, str) for d in distinctions):
        raise RosterError(f'{where}: Identity "Distinctions" must be a list of words; got {distinctions!r}.')
    text_fields = {}
    for key in ("Dynasty", "Class", "Species", "Size"):
        v = _section(ident, key)
        if v is not None and not isinstance(v, str | int | float):
            raise RosterError(f'{where}: Identity "{key}" must be text; got {v!r}.')
        text_fields[key] = "" if v is None else str(v)
    identity = Identity(
        name=name.strip(), type=utype.strip().title(), dynasty=text_fields["Dynasty"], klass=text_fields["Class"],
        species=text_fields["Species"], distinctions=tuple(distinctions), size=text_fields["Size"],
    )
    combat_in = _section(obj, "Combat")
    if not isinstance(combat_in, Mapping):
        raise RosterError(f'{where} has no "Combat" section; add Attack, Defense, Range, Energy, Movement, Health, Appraisal.')
    for key in ("Attack", "Defense", "Range", "Energy", "Movement", "Health", "Appraisal"):
        if _section(combat_in, key) is None:
            raise RosterError(f'{where}: Combat is missing "{key}".')
    strength, skill = _pair(_section(combat_in, "Attack"), ("Strength", "Skill"), where, "Attack", True)
    armor, dodge = _pair(_section(combat_in, "Defense"), ("Armor", "Dodge"), where, "Defense", True)
    sprint, stamina = _pair(_section(combat_in, "Movement"), ("Sprint", "Stamina"), where, "Movement", False)
    appraisal = _section(combat_in, "Appraisal")
    if isinstance(appraisal, bool) or not isinstance(appraisal, int | float) or not 0 <= appraisal < float("inf"):
        raise RosterError(f'{where}: Combat "Appraisal" must be a number of at least 0; got {appraisal!r}.')
    combat = Combat(
        strength=int(strength), skill=int(skill), armor=int(armor), dodge=int(dodge),
        range=parse_range(_section(combat_in, "Range"), where),
        energy=_whole(_section(combat_in, "Energy"), where, "Energy", 1),
        sprint=sprint, stamina=stamina,
        health=_whole(_section(combat_in, "Health"), where, "Health", 0),
        appraisal=float(appraisal),
    )
    abilities = _abilities(_section(obj, "Abilities", "Abilites") or {}, where, hooks)
    components = _section(obj, "Components") or []
    if isinstance(components, str):
        components = [components]
    if not isinstance(components, list) or not all(isinstance(c, str) for c in components):
        raise RosterError(f'{where}: "Components" must be a list of the extra pieces the unit needs; got {components!r}.')
    origin = _section(obj, "Origin")
    return UnitCard(identity, combat, abilities, tuple(components), origin if isinstance(origin, str) else "")


def _abilities(obj: Any, where: str, hooks: Mapping[str, Any] | None) -> tuple[Ability, ...]:
    if not isinstance(obj, Mapping):
        raise RosterError(f'{where}: "Abilities" must be an object of named abilities; got {obj!r}.')
    out: list[Ability] = []
    for aname, entry in obj.items():
        here = f'{where}, ability "{aname}"'
        if not isinstance(entry, Mapping):
            raise RosterError(f"{here} must be an object with Type and Ability.")
        atype = _section(entry, "Type")
        if not isinstance(atype, str) or atype.strip().title() not in ABILITY_TYPES:
            raise RosterError(f'{here}: "Type" must be Passive or Active; got {atype!r}.')
        text = _section(entry, "Ability") or ""
        template = _section(entry, "Template")
        hook_in = _section(entry, "Hook")
        hook: str | None = None
        params: dict[str, Json] = {}
        if isinstance(hook_in, str):
            hook = hook_in
        elif isinstance(hook_in, Mapping) and isinstance(hook_in.get("name"), str):
            hook = hook_in["name"]
            params = {k: v for k, v in hook_in.items() if k != "name"}
        elif hook_in is not None:
            raise RosterError(f'{here}: "Hook" must be a hook name or {{"name": ..., params}}; got {hook_in!r}.')
        if hook is not None and hooks is not None:
            if hook not in hooks:
                raise RosterError(f'{here} names hook "{hook}", which Tablesight does not know; use one of: '
                                  f'{", ".join(sorted(hooks))}.')
            checker = getattr(hooks[hook], "check_params", None)
            if checker is not None:
                problem = checker(params)
                if problem:
                    raise RosterError(f"{here}: {problem}")
            kind = getattr(hooks[hook], "kind", None)
            if kind and kind.title() != atype.strip().title():
                raise RosterError(f'{here}: hook "{hook}" is {kind}, but the ability is {atype}.')
        out.append(Ability(
            name=str(aname), type=atype.strip().title(), text=str(text),
            template=None if template is None else str(template), hook=hook,
            hook_params=tuple(sorted(params.items())),
        ))
    return tuple(out)


def army_appraisal(cards: list[UnitCard] | tuple[UnitCard, ...]) -> float:
    """The total appraisal of an army."""
    return float(sum(c.combat.appraisal for c in cards))


def _example(name: str, klass: str, attack: str, defense: str, rng: str, energy: int, move: str, health: int,
             appraisal: int, abilities: dict[str, Any] | None = None, components: list[str] | None = None) -> dict[str, Any]:
    return {
        "Identity": {"Name": name, "Dynasty": "Example", "Type": "Hero" if appraisal >= 25 else "Conscript",
                     "Class": klass, "Species": "Human", "Distinctions": [], "Size": "Medium"},
        "Combat": {"Attack": attack, "Defense": defense, "Range": rng, "Energy": energy, "Movement": move,
                   "Health": health, "Appraisal": appraisal},
        "Abilities": abilities or {},
        "Components": components or [],
        "Origin": OURS,
    }


EXAMPLE_CARD_DATA: tuple[dict[str, Any], ...] = (
    _example("Shieldbearer", "Guardian", "3-12", "2-1", "0-[+1/+1]-1", 2, "5-3", 8, 25,
             {"Stalwart": {"Type": "Passive", "Ability": "Adds 1 to its armor when attacked.",
                           "Template": None, "Hook": {"name": "stalwart", "armor": 1}}}),
    _example("Archer", "Ranger", "2-14", "0-0", "2-[0/+2]-6-[0/0]-12-[-1/-2]-18", 2, "6-4", 5, 20,
             {"Keen Eye": {"Type": "Passive", "Ability": "Adds 1 to its skill on every attack.",
                           "Template": None, "Hook": {"name": "keen_eye", "skill": 1}}}),
    _example("Scout", "Skirmisher", "2-11", "0-2", "0-[0/+1]-2-[0/0]-6", 3, "8-4", 4, 15,
             {"Climber": {"Type": "Passive", "Ability": "Climbs as though a handhold were there.",
                          "Template": None, "Hook": "climber"}}),
    _example("Mender", "Healer", "1-10", "1-0", "0-[0/0]-4", 2, "5-3", 5, 20,
             {"Mend": {"Type": "Active", "Ability": "Removes 2 distress from a friendly unit within 3\".",
                       "Template": None, "Hook": {"name": "mend", "amount": 2, "reach_in": 3}}},
             ["Mend token"]),
)
"""Tablesight's own example cards (Origin says so); the numbers are ours, not the author's."""
