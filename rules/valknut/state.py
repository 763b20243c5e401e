"""Valknut's game state (immutable) and the options we chose where the rule book is silent.

The rule book's "Turn Structure" and "Winning" sections are empty. These are OUR options, named and set in
the setup's "options" object; none of them is the author's:

- activation: "alternating" (default) — players alternate activating one unit at a time, the unit taking up
  to its Actions; "player_turns" — one player activates all its units, then the other.
- initiative: "alternate" (default) — the first player of the roll-off activates first in turn 1, then the
  players take turns going first; "roll_off" — both roll 1d6 at the start of every turn (re-roll ties).
- turn_limit: 6 — the game ends after this many turns.
- win: "runestones" (default) — a player scores a Runestone when a unit of theirs ends its activation
  wholly within its own Drop Zone carrying one taken from a Stockpile in another section; first to
  `target` (default 3) wins, else most at the turn limit, then most kills, else a draw. "kills" — a point
  per enemy unit killed; first to `target` wins, else most at the turn limit, else a draw.
- stones_per_stockpile: 2 — Runestones in each Runic Stockpile.
- reinforcements: 3 — deaths a player suffers before "reinforcements are depleted"; a unit killed after
  that chooses a permanent penalty when it is redeployed.
- pickup_reach_in: 1.0 — a Runestone can be picked up when it lies within this distance of the base edge.
- ranged_needs_sight: true — a ranged attack needs line of sight that is not "blocked" (the rules name no
  range limit, so there is none).
- distinct_actions: true — "Actions: how many *different* things a unit can do": a unit may not take the
  same action twice in one activation (Wolf 3's "attack twice" is read the same way).
- eye_height_in: 1.25 — the sight model's eye height above a base (rules/geometry.py).
- redeploy_in: "drop_zone" — a unit that returns is placed wholly within its owner's Drop Zone.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from rules.engine import Inches, Json, RulesInputError, ScenarioError, UnitId
from rules.terrain import TerrainPiece, parse_terrain, terrain_to_json
from rules.valknut.units import Blessing, Steps, Stone, UnitState  # noqa: F401  (resolved by get_type_hints)

PHASES = ("stockpiles", "roll_off", "drop_zones", "deploy", "turn_start", "activations", "over")


@dataclass(frozen=True)
class Options:
    """The setup choices the rule book leaves open (see the module docstring)."""

    activation: str = "alternating"
    initiative: str = "alternate"
    turn_limit: int = 6
    win: str = "runestones"
    target: int = 3
    stones_per_stockpile: int = 2
    reinforcements: int = 3
    pickup_reach_in: Inches = 1.0
    ranged_needs_sight: bool = True
    distinct_actions: bool = True
    eye_height_in: Inches = 1.25
    redeploy_in: str = "drop_zone"


CHOICES = {
    "activation": ("alternating", "player_turns"),
    "initiative": ("alternate", "roll_off"),
    "win": ("runestones", "kills"),
    "redeploy_in": ("drop_zone",),
}


def parse_options(obj: Any) -> Options:
    """Options from the setup's "options" object; raises RulesInputError naming the bad option."""
    if obj is None:
        return Options()
    if not isinstance(obj, Mapping):
        raise RulesInputError(f'Valknut "options" must be an object; got {obj!r}.')
    known = {f.name: f for f in fields(Options)}
    values: dict[str, Any] = {}
    for key, value in obj.items():
        if key not in known:
            raise RulesInputError(f'Valknut has no option "{key}"; the options are {", ".join(known)}.')
        default = getattr(Options(), key)
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        elif isinstance(default, float):
            ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
            value = float(value) if ok else value
        else:
            ok = isinstance(value, str) and value in CHOICES.get(key, ())
        if not ok:
            choices = CHOICES.get(key)
            hint = f"one of {', '.join(choices)}" if choices else f"a value like {default!r}"
            raise RulesInputError(f'Valknut option "{key}" is {value!r}; give {hint}.')
        values[key] = value
    return Options(**values)


@dataclass(frozen=True)
class Stockpile:
    """A Runic Stockpile (an objective marker): where it is, its section, who placed it, Runestones left."""

    x: Inches
    y: Inches
    section: int
    owner: str
    stones: int


@dataclass(frozen=True)
class GroundStone:
    """A Runestone lying on the battlefield (dropped by a unit that was killed)."""

    x: Inches
    y: Inches
    origin: int = 0


@dataclass(frozen=True)
class Tally:
    """A count per player, as (player, count) pairs in player order."""

    pairs: tuple[tuple[str, int], ...] = ()

    def of(self, player: str) -> int:
        return dict(self.pairs).get(player, 0)

    def plus(self, player: str, n: int = 1) -> Tally:
        d = dict(self.pairs)
        d[player] = d.get(player, 0) + n
        return Tally(tuple(d.items()))


@dataclass(frozen=True)
class ValknutState:
    """Everything about a Valknut game except where the bases stand (that comes from the camera).

    players: the two owners, in roster order. odd_player: who places Stockpiles in the odd sections.
    first_player: who rolled higher at setup. drop_zones: (player, section) pairs.
    turn_first: who activates first this turn. active_player / active_unit: whose activation it is and the
    unit in the middle of one (None before it acts). board: (width, depth) inches.
    """

    options: Options
    players: tuple[str, str]
    units: tuple[UnitState, ...]
    terrain: tuple[TerrainPiece, ...] = ()
    board: tuple[Inches, Inches] = (30.0, 22.0)
    phase: str = "stockpiles"
    turn: int = 0
    odd_player: str = ""
    first_player: str | None = None
    drop_zones: tuple[tuple[str, int], ...] = ()
    stockpiles: tuple[Stockpile, ...] = ()
    ground: tuple[GroundStone, ...] = ()
    blessings: tuple[Blessing, ...] = ()
    turn_first: str | None = None
    active_player: str | None = None
    active_unit: UnitId | None = None
    delivered: Tally = Tally()
    kills: Tally = Tally()
    deaths: Tally = Tally()
    winner: str | None = None

    def unit(self, tag: UnitId) -> UnitState:
        for u in self.units:
            if u.tag == tag:
                return u
        raise KeyError(tag)

    def has_unit(self, tag: UnitId) -> bool:
        return any(u.tag == tag for u in self.units)

    def by_tag(self) -> dict[UnitId, UnitState]:
        return {u.tag: u for u in self.units}

    def with_unit(self, unit: UnitState) -> ValknutState:
        return replace(self, units=tuple(unit if u.tag == unit.tag else u for u in self.units))

    def drop_zone(self, player: str) -> int | None:
        return dict(self.drop_zones).get(player)

    def other(self, player: str) -> str:
        return self.players[1] if player == self.players[0] else self.players[0]


# ------------------------------------------------------------------------------------------------ JSON


def to_json(value: Any) -> Json:
    """A state value as JSON (dataclasses as objects, tuples as lists, terrain in its own JSON form)."""
    if isinstance(value, TerrainPiece):
        return value.to_json()
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    return value


def _load(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is TerrainPiece:
        return parse_terrain({"pieces": [value]})[0]
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _load(inner[0], value, where)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ScenarioError(f"{where} must be a list; got {value!r}.")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_load(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(args) != len(value):
            raise ScenarioError(f"{where} must have {len(args)} items; got {value!r}.")
        return tuple(_load(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if isinstance(tp, type) and is_dataclass(tp):
        if not isinstance(value, Mapping):
            raise ScenarioError(f"{where} must be an object; got {value!r}.")
        hints = typing.get_type_hints(tp)
        kwargs = {}
        for f in fields(tp):
            if f.name in value:
                kwargs[f.name] = _load(hints[f.name], value[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ScenarioError(f'{where} is missing "{f.name}".')
        return tp(**kwargs)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ScenarioError(f"{where} must be a number; got {value!r}.")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ScenarioError(f"{where} must be a whole number; got {value!r}.")
        return value
    if tp in (str, bool):
        if not isinstance(value, tp):
            raise ScenarioError(f"{where} must be {tp.__name__}; got {value!r}.")
        return value
    raise ScenarioError(f"{where}: cannot read {value!r}.")


def dump_state(state: ValknutState) -> dict[str, Json]:
    out = to_json(state)
    out["terrain"] = terrain_to_json(state.terrain)["pieces"]
    return dict(out)


def load_state(obj: Mapping[str, Json]) -> ValknutState:
    """A state from `dump_state` output; raises ScenarioError naming the bad field."""
    state = _load(ValknutState, obj, "Valknut state")
    assert isinstance(state, ValknutState)
    if state.phase not in PHASES:
        raise ScenarioError(f'Valknut state: phase "{state.phase}" is not one of {", ".join(PHASES)}.')
    return state
