"""Reading a Valknut setup (roster, board, terrain, options) and a judge scenario into a state and positions.

Setup object (Game.new_state):
    {"roster": {"game": "valknut", "units": [...]},     # or "units": [...] directly; 2 players x 5 units
     "board": {"width_in": 30, "depth_in": 22},          # or 22 x 30
     "terrain": {"pieces": [...]}, "options": {...},
     "stockpiles": [{"at": [x, y]}, ...],                # optional: skip the placing phase
     "odd_player": "red", "first_player": "red",         # optional: who places in odd sections; who rolled higher
     "drop_zones": {"red": 1, "blue": 6}}                # optional: skip choosing (first_player needed)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rules.engine import Json, Placement, RosterError, ScenarioError, UnitId
from rules.roster import parse_roster
from rules.terrain import parse_terrain
from rules.valknut.board import Battlefield, odd, second_drop_zone_allowed
from rules.valknut.state import PHASES, GroundStone, Stockpile, Tally, ValknutState, parse_options
from rules.valknut.units import (
    BLESSINGS,
    PATHS,
    PENALTIES,
    Blessing,
    Steps,
    Stone,
    UnitState,
    permanent,
    profile_named,
)

UNITS_PER_PLAYER = 5
MAX_COUNT = 1000
"""Largest count (HP, steps, Runestones, turn) a scenario may give; a bigger one is a typo."""
MAX_TABLE_IN = 10_000.0
"""Largest |x| or |y| a scenario position may have, inches."""


def _board(obj: Any, where: str) -> tuple[float, float]:
    if obj is None:
        return (30.0, 22.0)
    if not isinstance(obj, Mapping):
        raise ScenarioError(f'{where}: "board" must be an object like {{"width_in": 30, "depth_in": 22}}.')
    w, d = obj.get("width_in", 30.0), obj.get("depth_in", 22.0)
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (w, d)):
        raise ScenarioError(f'{where}: "board" width_in and depth_in must be numbers of inches.')
    Battlefield(float(w), float(d))
    return (float(w), float(d))


def units_from_roster(obj: Any, strict: bool) -> tuple[tuple[str, str], tuple[UnitState, ...]]:
    """Units from a roster; strict: exactly two players with five units each (the rule book's game)."""
    roster = parse_roster(obj, "the Valknut roster")
    if roster.game != "valknut":
        raise RosterError(f'The roster is for "{roster.game}", not Valknut; set "game": "valknut".')
    owners = roster.owners()
    if len(owners) != 2 and (strict or len(owners) > 2):
        raise RosterError(f"Valknut is for two players; the roster has {len(owners)} ({', '.join(owners)}).")
    if strict:
        for p in owners:
            n = len(roster.of(p))
            if n != UNITS_PER_PLAYER:
                raise RosterError(f"{p[:1].upper()}{p[1:]} has {n} {'unit' if n == 1 else 'units'} in the roster; "
                                  "each Valknut player fields 5.")
    units = []
    for ru in roster.units.values():
        prof = profile_named(ru.profile, f"the Valknut roster, tag {ru.tag}")
        units.append(UnitState(ru.tag, ru.owner, ru.name, prof.name, ru.base_radius_in, hp=prof.hp, armor=prof.armor))
    players = (owners[0], owners[1] if len(owners) > 1 else "opponent")
    return players, tuple(sorted(units, key=lambda u: u.tag))


def _stockpiles(obj: Any, state: ValknutState, stones: int, where: str) -> tuple[Stockpile, ...]:
    if not isinstance(obj, list):
        raise ScenarioError(f'{where}: "stockpiles" must be a list of {{"at": [x, y]}} objects.')
    field = Battlefield(*state.board)
    out = []
    for i, s in enumerate(obj):
        at = s.get("at") if isinstance(s, Mapping) else s
        if not isinstance(at, list) or len(at) != 2 or not all(isinstance(v, int | float) for v in at):
            raise ScenarioError(f"{where}: stockpile {i + 1} needs \"at\": [x, y] in inches.")
        section = field.section_at(float(at[0]), float(at[1]))
        if section is None:
            raise ScenarioError(f"{where}: stockpile {i + 1} at {at} is off the battlefield.")
        owner = state.odd_player if odd(section) else state.other(state.odd_player)
        n = s.get("stones", stones) if isinstance(s, Mapping) else stones
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ScenarioError(f"{where}: stockpile {i + 1} \"stones\" must be a whole number, 0 or more.")
        out.append(Stockpile(float(at[0]), float(at[1]), section, str(s.get("owner", owner)) if isinstance(s, Mapping) else owner, n))
    return tuple(out)


def _drop_zones(obj: Any, state: ValknutState, where: str, strict: bool) -> tuple[tuple[str, int], ...]:
    if not isinstance(obj, Mapping) or not all(p in state.players for p in obj):
        raise ScenarioError(f'{where}: "drop_zones" must map each player ({", ".join(state.players)}) to a section 1-6.')
    zones = []
    for p, s in obj.items():
        if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= 6:
            raise ScenarioError(f'{where}: the drop zone of {p} must be a section 1-6; got {s!r}.')
        zones.append((str(p), s))
    if strict and len(zones) == 2:
        first = state.first_player or state.players[0]
        f, s2 = dict(zones)[first], dict(zones)[state.other(first)]
        if not second_drop_zone_allowed(f, s2):
            raise ScenarioError(f"{where}: drop zone {s2} is the same as or adjacent to {first}'s drop zone {f}.")
        zones.sort(key=lambda z: z[0] != first)
    return tuple(zones)


def new_state(setup: Mapping[str, Json]) -> ValknutState:
    """The state at the start of a game (see the module docstring)."""
    if not isinstance(setup, Mapping):
        raise ScenarioError("A Valknut setup must be a JSON object with a roster.")
    roster = setup.get("roster") or {"game": "valknut", "units": setup.get("units")}
    players, units = units_from_roster(roster, strict=True)
    options = parse_options(setup.get("options"))
    state = ValknutState(options=options, players=players, units=units, terrain=parse_terrain(setup.get("terrain")),
                         board=_board(setup.get("board"), "the setup"), odd_player=players[0])
    state = _common(state, setup, "the setup", strict=True)
    return state


def _player(value: Any, state: ValknutState, key: str, where: str) -> str:
    if value not in state.players:
        raise ScenarioError(f'{where}: "{key}" must be one of the players ({", ".join(state.players)}); got {value!r}.')
    return str(value)


def _common(state: ValknutState, obj: Mapping[str, Any], where: str, strict: bool) -> ValknutState:
    if "odd_player" in obj:
        state = replace(state, odd_player=_player(obj["odd_player"], state, "odd_player", where))
    if "first_player" in obj:
        state = replace(state, first_player=_player(obj["first_player"], state, "first_player", where))
    if "stockpiles" in obj:
        state = replace(state, stockpiles=_stockpiles(obj["stockpiles"], state, state.options.stones_per_stockpile, where))
        if strict and len(state.stockpiles) == 6:
            if sorted(s.section for s in state.stockpiles) != [1, 2, 3, 4, 5, 6]:
                raise ScenarioError(f"{where}: there must be one Runic Stockpile in each of the six sections.")
            state = replace(state, phase="roll_off" if state.first_player is None else "drop_zones")
    if "drop_zones" in obj:
        state = replace(state, drop_zones=_drop_zones(obj["drop_zones"], state, where, strict))
        if strict:
            if state.phase != "drop_zones" or len(state.drop_zones) != 2:
                raise ScenarioError(f"{where}: drop_zones need all six stockpiles and first_player given first.")
            state = replace(state, phase="deploy")
    return state


def _int_field(entry: Mapping[str, Any], key: str, default: int, where: str) -> int:
    v = entry.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or abs(v) > MAX_COUNT:
        raise ScenarioError(f'{where}: "{key}" must be a whole number (at most {MAX_COUNT}); got {v!r}.')
    return v


def _is_tag(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _inches(v: Any) -> bool:
    """A finite number of inches within any table (a huge or NaN position is a typo, not a place)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and abs(v) <= MAX_TABLE_IN


def _unit_state(base: UnitState, entry: Mapping[str, Any], where: str, phase: str) -> UnitState:
    paths = entry.get("paths", {})
    if not isinstance(paths, Mapping) or not all(k in PATHS and _is_tag(v) and 0 <= v <= MAX_COUNT for k, v in paths.items()):
        raise ScenarioError(f'{where}: "paths" must map {", ".join(PATHS)} to step counts; got {paths!r}.')
    steps = Steps(**{k: int(v) for k, v in paths.items()})
    pens = entry.get("penalties", [])
    if not isinstance(pens, list) or not all(p in PENALTIES for p in pens):
        raise ScenarioError(f'{where}: "penalties" must be a list of {", ".join(PENALTIES)}.')
    u = replace(base, steps=steps, penalties=tuple(pens))
    dead = entry.get("dead", False)
    carrying = _int_field(entry, "carrying", 0, where)
    taken = entry.get("actions_taken", [])
    if not isinstance(taken, list) or not all(isinstance(t, str) for t in taken):
        raise ScenarioError(f'{where}: "actions_taken" must be a list of action names.')
    u = replace(
        u,
        hp=_int_field(entry, "hp", 10, where),
        armor=_int_field(entry, "armor", permanent(u)[1], where),
        marks=_int_field(entry, "marks", 0, where),
        halvings=_int_field(entry, "halvings", 0, where),
        wolf_saves=_int_field(entry, "wolf_saves", 0, where),
        carrying=tuple(Stone(_int_field(entry, "stone_origin", 0, where)) for _ in range(carrying)),
        alive=not dead,
        on_table=not dead and "at" in entry,
        redeploy_target=_int_field(entry, "redeploy_target", 4, where),
        ready=bool(entry.get("ready", False)),
        penalty_due=bool(entry.get("penalty_due", False)),
        stepped=bool(entry.get("stepped", phase != "turn_start")),
        activated=bool(entry.get("activated", False)),
        actions_taken=tuple(taken),
    )
    return u


DEFAULT_PHASE = {
    "place_stockpile": "stockpiles", "roll_off": "roll_off", "choose_drop_zone": "drop_zones", "deploy": "deploy",
    "choose_path": "turn_start", "redeploy": "turn_start",
}


def _tally(obj: Any, state: ValknutState, key: str, where: str) -> Tally:
    if obj is None:
        return Tally()
    if not isinstance(obj, Mapping) or not all(isinstance(v, int) for v in obj.values()):
        raise ScenarioError(f'{where}: "{key}" must map players to whole numbers.')
    return Tally(tuple((_player(p, state, key, where), int(v)) for p, v in obj.items()))


def scenario_state(scenario: Mapping[str, Json]) -> tuple[ValknutState, dict[UnitId, Placement]]:
    """The state and positions a judge scenario describes (docs/scenarios/valknut.md)."""
    where = "The scenario"
    units_in = scenario.get("units")
    if not isinstance(units_in, list) or not units_in:
        raise ScenarioError(f'{where} needs "units": a list of {{"tag", "owner", "at"}} objects.')
    roster = {"game": "valknut", "units": [
        {k: v for k, v in u.items() if k in ("tag", "name", "profile", "owner", "base_mm")} | {"profile": u.get("profile", "soldier")}
        if isinstance(u, Mapping) else u for u in units_in]}
    try:
        players, units = units_from_roster(roster, strict=False)
    except RosterError as err:
        raise ScenarioError(f"{where}: {err}") from err
    st = scenario.get("state", {}) or {}
    if not isinstance(st, Mapping):
        raise ScenarioError(f'{where}: "state" must be an object.')
    options = parse_options(st.get("options", scenario.get("options")))
    action = scenario.get("action")
    kind = action.get("kind") if isinstance(action, Mapping) else None
    phase = st.get("phase", DEFAULT_PHASE.get(str(kind), "activations"))
    if phase not in PHASES:
        raise ScenarioError(f'{where}: state "phase" must be one of {", ".join(PHASES)}; got {phase!r}.')
    by_tag = {u.tag: u for u in units}
    positions: dict[UnitId, Placement] = {}
    full = []
    for entry in units_in:
        tag = entry["tag"]
        w = f"{where}, unit {tag}"
        u = _unit_state(by_tag[tag], entry, w, phase)
        full.append(u)
        if "at" in entry and u.alive:
            at = entry["at"]
            if not isinstance(at, list) or len(at) != 2 or not all(_inches(v) for v in at):
                raise ScenarioError(f'{w}: "at" must be [x, y] in inches; got {at!r}.')
            z, pm = entry.get("z", 0.0), entry.get("pm", entry.get("pm_in", 0.0))
            if not all(_inches(v) for v in (z, pm)):
                raise ScenarioError(f'{w}: "z" and "pm" must be numbers of inches.')
            positions[tag] = Placement(tag, float(at[0]), float(at[1]), float(z), float(pm), float(entry.get("yaw_deg", 0.0)))
    state = ValknutState(options=options, players=players, units=tuple(sorted(full, key=lambda u: u.tag)),
                         terrain=parse_terrain(scenario.get("terrain")), board=_board(scenario.get("board"), where),
                         phase=str(phase), turn=_int_field(st, "turn", 1 if phase in ("turn_start", "activations") else 0, where),
                         odd_player=players[0])
    state = _common(state, st, where, strict=False)
    active_unit = st.get("active_unit")
    if active_unit is not None and (not _is_tag(active_unit) or active_unit not in by_tag):
        raise ScenarioError(f'{where}: state "active_unit" {active_unit!r} is not one of the units.')
    default_active = by_tag[action["unit"]].owner if isinstance(action, Mapping) and _is_tag(action.get("unit")) and action["unit"] in by_tag else players[0]
    active = _player(st.get("active_player", default_active), state, "active_player", where)
    ground_in = st.get("ground", [])
    if not isinstance(ground_in, list):
        raise ScenarioError(f'{where}: state "ground" must be a list of {{"at": [x, y]}} Runestones.')
    if not all(isinstance(g, Mapping) and isinstance(g.get("at"), list) and len(g["at"]) == 2
               and all(_inches(v) for v in g["at"]) and _is_tag(g.get("origin", 0)) for g in ground_in):
        raise ScenarioError(f'{where}: state "ground" must be a list of {{"at": [x, y]}} Runestones (inches).')
    ground = tuple(GroundStone(float(g["at"][0]), float(g["at"][1]), int(g.get("origin", 0))) for g in ground_in)
    bl = st.get("blessings", [])
    if not isinstance(bl, list) or not all(
        isinstance(b, list) and len(b) == 3 and _is_tag(b[0]) and b[0] in by_tag and _is_tag(b[1]) and b[1] in by_tag
        and isinstance(b[2], str) and b[2] in BLESSINGS for b in bl
    ):
        raise ScenarioError(f'{where}: state "blessings" must be [[giver tag, target tag, effect], ...].')
    state = replace(
        state,
        active_player=active if phase == "activations" else None,
        active_unit=active_unit,
        turn_first=st.get("turn_first", state.first_player or players[0]),
        ground=ground,
        blessings=tuple(Blessing(int(b[0]), int(b[1]), str(b[2])) for b in bl),
        delivered=_tally(st.get("delivered"), state, "delivered", where),
        kills=_tally(st.get("kills"), state, "kills", where),
        deaths=_tally(st.get("deaths"), state, "deaths", where),
    )
    if phase == "deploy" and state.first_player is None:
        state = replace(state, first_player=default_active)
    return state, positions
