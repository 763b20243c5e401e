"""Valknut's actions, each ruled in two layers: `check` (is it legal here, with the measured numbers) and
`resolve` (what it does, with the faces the players rolled, from a `rules.dice.DiceCup`). Verdict messages say
the rule in our words with the numbers.

Setup actions: "place_stockpile", "roll_off", "choose_drop_zone", "deploy" (a unit already placed may be placed
again until deployment ends). Turn start: "choose_path", "redeploy". Activations: "move", "attack", "disengage",
"pick_up_runestone", "drop_runestone", "assign_spirits", "bear_restore", "end_activation". Any time a killed unit
owes one: "choose_penalty".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from shapely.geometry import Point

from rules.dice import DiceCup
from rules.engine import (
    Action,
    ActionError,
    Inches,
    Outcome,
    Placement,
    Positions,
    ScenarioError,
    Verdict,
    counted,
    listed,
)
from rules.geometry import (
    Measure,
    centre_distance,
    combined_pm,
    crosses_impassable,
    trace_move,
    wholly_within,
)
from rules.valknut.board import odd, second_drop_zone_allowed
from rules.valknut.state import GroundStone, Stockpile, ValknutState
from rules.valknut.table import BEAR_RESTORE_IN, ENGAGEMENT_IN, LEVEL_IN, Table, called
from rules.valknut.turns import (
    check_target,
    drop_stones,
    end_activation,
    maybe_begin_activations,
    roll_off,
    start_turn,
)
from rules.valknut.units import (
    BLESSINGS,
    PATHS,
    PENALTIES,
    Blessing,
    Stone,
    blessing_size,
    permanent,
    to_hit,
    wolf_extra_in,
    wolf_saves_allowed,
)

DISENGAGE_IN = 3.0
ACTIVATION_KINDS = (
    "move", "attack", "disengage", "pick_up_runestone", "drop_runestone", "assign_spirits", "bear_restore",
    "end_activation",
)
KINDS = ("place_stockpile", "roll_off", "choose_drop_zone", "deploy", "choose_path", "redeploy",
         "choose_penalty") + ACTIVATION_KINDS


@dataclass(frozen=True)
class Ruling:
    """What applying an action gave."""

    state: ValknutState
    positions: Positions
    verdicts: tuple[Verdict, ...]


def _v(rule: str, outcome: Outcome, message: str, unit: int | None = None, **numbers: Any) -> Verdict:
    return Verdict(rule, outcome, message, unit, numbers)


def _bad(verdicts: Sequence[Verdict]) -> bool:
    return any(v.outcome is Outcome.ILLEGAL for v in verdicts)


# ------------------------------------------------------------------------------------------ parameters


def _point(params: Mapping[str, Any], key: str, kind: str) -> tuple[float, ...]:
    value = params.get(key)
    if (
        not isinstance(value, list | tuple)
        or len(value) not in (2, 3)
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and abs(v) <= 10_000
                   for v in value)
    ):
        raise ActionError(f'A "{kind}" action needs "{key}": [x, y] in table inches; got {value!r}.')
    return tuple(float(v) for v in value)


def _number(params: Mapping[str, Any], key: str, kind: str) -> float | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ActionError(f'A "{kind}" action\'s "{key}" must be a number of inches, 0 or more; got {value!r}.')
    return float(value)


def _int(params: Mapping[str, Any], key: str, kind: str, required: bool = True) -> int | None:
    value = params.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ActionError(f'A "{kind}" action needs "{key}" as a whole number; got {value!r}.')
    return value


def _unit(state: ValknutState, action: Action) -> int:
    if action.unit is None:
        raise ActionError(f'A "{action.kind}" action needs "unit": the tag id of the unit that acts.')
    if not state.has_unit(action.unit):
        raise ActionError(f"There is no unit with tag {action.unit} in this Valknut game; check the roster.")
    return action.unit


# ------------------------------------------------------------------------------------------------ setup


def _phase(state: ValknutState, kind: str, *phases: str) -> list[Verdict]:
    if state.phase in phases:
        return []
    what, when, now = kind.replace("_", " "), " or ".join(phases).replace("_", " "), state.phase.replace("_", " ")
    return [_v("valknut.turn.phase", Outcome.ILLEGAL,
               f"{'An' if what[:1] in 'aeiou' else 'A'} {what} belongs to the {when} phase; the game is in its {now} "
               "phase.")]


def stockpile_placer(state: ValknutState) -> str:
    """The odd-sections player places all three markers first, then the even-sections player (our order)."""
    odd_count = sum(1 for s in state.stockpiles if s.owner == state.odd_player)
    return state.odd_player if odd_count < 3 else state.other(state.odd_player)


def check_place_stockpile(table: Table, action: Action) -> list[Verdict]:
    state = table.state
    out = _phase(state, "place_stockpile", "stockpiles")
    if out:
        return out
    x, y = _point(action.params, "at", "place_stockpile")[:2]
    player = stockpile_placer(state)
    if action.params.get("player", player) != player:
        return [_v("valknut.stockpiles.order", Outcome.ILLEGAL, f"It is {player}'s turn to place a Runic Stockpile.")]
    section = table.battlefield.section_at(x, y)
    want_odd = player == state.odd_player
    if section is None:
        return [_v("valknut.stockpiles.section", Outcome.ILLEGAL,
                   f"({x:.2f}, {y:.2f}) is off the battlefield; a Runic Stockpile goes in a section.")]
    sec = table.battlefield.section(section)
    if odd(section) != want_odd or not sec.holds(x, y):
        return [_v("valknut.stockpiles.section", Outcome.ILLEGAL,
                   f"{player} places Runic Stockpiles in the {'odd' if want_odd else 'even'} sections; "
                   f"({x:.2f}, {y:.2f}) is in section {section}.", section=section)]
    if any(s.section == section for s in state.stockpiles):
        return [_v("valknut.stockpiles.one_each", Outcome.ILLEGAL,
                   f"Section {section} already has its Runic Stockpile; there is one in each section.", section=section)]
    return [_v("valknut.stockpiles.section", Outcome.LEGAL,
               f"{player} places a Runic Stockpile in section {section}.", section=section)]


def resolve_place_stockpile(table: Table, action: Action, cup: DiceCup) -> Ruling:
    state = table.state
    x, y = _point(action.params, "at", "place_stockpile")[:2]
    player = stockpile_placer(state)
    section = table.battlefield.section_at(x, y) or 0
    state = replace(state, stockpiles=state.stockpiles + (
        Stockpile(x, y, section, player, state.options.stones_per_stockpile),))
    if len(state.stockpiles) == 6:
        state = replace(state, phase="roll_off" if state.first_player is None else "drop_zones")
    return Ruling(state, table.positions, ())


def check_roll_off(table: Table, action: Action) -> list[Verdict]:
    return _phase(table.state, "roll_off", "roll_off")


def resolve_roll_off(table: Table, action: Action, cup: DiceCup) -> Ruling:
    first, v = roll_off(table.state, cup, "valknut.drop_zones.roll", "the roll-off for the Drop Zones",
                        "the higher roll chooses its Drop Zone first")
    return Ruling(replace(table.state, first_player=first, phase="drop_zones"), table.positions, (v,))


def zone_chooser(state: ValknutState) -> str:
    first = state.first_player or state.players[0]
    return first if state.drop_zone(first) is None else state.other(first)


def check_choose_drop_zone(table: Table, action: Action) -> list[Verdict]:
    state = table.state
    out = _phase(state, "choose_drop_zone", "drop_zones")
    if out:
        return out
    section = _int(action.params, "section", "choose_drop_zone")
    assert section is not None
    if not 1 <= section <= 6:
        raise ActionError(f'"section" must be 1 to 6; got {section}.')
    player = zone_chooser(state)
    if action.params.get("player", player) != player:
        return [_v("valknut.drop_zones.order", Outcome.ILLEGAL,
                   f"{player} chooses a Drop Zone now (the higher roller chooses first).")]
    first = state.first_player or state.players[0]
    if player == first:
        return [_v("valknut.drop_zones.first", Outcome.LEGAL,
                   f"{player} rolled higher and takes section {section} as its Drop Zone.", section=section)]
    taken = state.drop_zone(first)
    assert taken is not None
    if not second_drop_zone_allowed(taken, section):
        why = "is the same section" if section == taken else "is adjacent to it"
        return [_v("valknut.drop_zones.second", Outcome.ILLEGAL,
                   f"{player}'s Drop Zone may be neither {first}'s section {taken} nor adjacent to it; "
                   f"section {section} {why}.", section=section, first=taken)]
    return [_v("valknut.drop_zones.second", Outcome.LEGAL,
               f"{player} takes section {section} as its Drop Zone: neither {first}'s section {taken} nor adjacent "
               "to it.", section=section,
               first=taken)]


def resolve_choose_drop_zone(table: Table, action: Action, cup: DiceCup) -> Ruling:
    state = table.state
    section = int(action.params["section"])
    state = replace(state, drop_zones=state.drop_zones + ((zone_chooser(state), section),))
    if len(state.drop_zones) == 2:
        state = replace(state, phase="deploy")
    return Ruling(state, table.positions, ())


def deployer(state: ValknutState) -> str | None:
    """The higher roller places first, then the players alternate until each has placed all 5 units."""
    first = state.first_player or state.players[0]
    second = state.other(first)
    left = {p: sum(1 for u in state.units if u.owner == p and not u.on_table) for p in state.players}
    placed = {p: sum(1 for u in state.units if u.owner == p and u.on_table) for p in state.players}
    if left[first] and (placed[first] <= placed[second] or not left[second]):
        return first
    if left[second]:
        return second
    return None


def _placement_checks(table: Table, tag: int, at: Placement, rule: str, zone: int) -> list[Verdict]:
    """A base set down wholly within the Drop Zone, clear of other bases and impassable terrain. Set down outside,
    the verdict says where to put it: the span its centre may take, inches."""
    unit = table.unit(tag)
    section = table.battlefield.section(zone)
    margin = wholly_within(at, unit.radius_in, section.area)
    outcome = margin.at_least(0.0)
    words = {Outcome.LEGAL: "wholly within", Outcome.ILLEGAL: "not wholly within",
             Outcome.TOO_CLOSE_TO_CALL: "too close to call for wholly within"}[outcome]
    where = "inside" if margin.value >= 0 else "outside"
    message = (f'Unit {tag} at ({at.x:.2f}, {at.y:.2f}) is {words} its Drop Zone (section {zone}): its base edge is '
               f'{Measure(abs(margin.value), margin.pm).text()} {where} the section edge.')
    if outcome is Outcome.ILLEGAL:
        r = unit.radius_in
        x0, x1, y0, y1 = (f"{round(v, 2):g}" for v in (section.x0 + r, section.x1 - r, section.y0 + r, section.y1 - r))
        message = message[:-1] + (f"; put {unit.name} wholly inside {unit.owner}'s Drop Zone: its centre at x "
                                  f"{x0} to {x1}, y {y0} to {y1}.")
    out = [_v(rule, outcome, message, tag, margin_in=round(margin.value, 4), pm_in=round(margin.pm, 4), section=zone)]
    out += _overlap(table, tag, at)
    blocked = crosses_impassable([at.xy], table.terrain, unit.radius_in)
    if blocked:
        out.append(_v("valknut.terrain.impassable", Outcome.ILLEGAL,
                      f"Unit {tag} cannot stand on {blocked[0]}: it is impassable.", tag))
    return out


def _overlap(table: Table, tag: int, at: Placement) -> list[Verdict]:
    """A base may not be set down on top of another base on the same level (a floor above may hold one)."""
    r = table.radius(tag)
    for other in table.live():
        if other.tag == tag or abs(table.at(other.tag).z - at.z) >= LEVEL_IN:
            continue
        d = centre_distance(at, table.at(other.tag))
        if d.value < r + other.radius_in - 0.05:
            return [_v("valknut.bases.overlap", Outcome.ILLEGAL,
                       f"Unit {tag}'s base would overlap unit {other.tag}'s ({d.value:.2f}\" between centres).", tag)]
    return []


def _at(table: Table, action: Action, tag: int, key: str = "to") -> Placement:
    pt = _point(action.params, key, action.kind)
    pm = _number(action.params, "pm_in", action.kind)
    z = pt[2] if len(pt) > 2 else 0.0
    return Placement(tag, pt[0], pt[1], z, 0.0 if pm is None else pm)


def _zone_of(state: ValknutState, player: str) -> int:
    zone = state.drop_zone(player)
    if zone is None:
        raise ScenarioError(f'{player} has no drop zone yet; give state "drop_zones", e.g. {{"{player}": 1}}.')
    return zone


def check_deploy(table: Table, action: Action) -> list[Verdict]:
    """Deploy: wholly within its Drop Zone, the players alternating, the higher roller first. A unit already placed
    may be placed again until deployment ends (our reading: the book is silent; putting a figure down is its
    placement, and setting it straight is not another one), ruled against its Drop Zone again."""
    state = table.state
    out = _phase(state, "deploy", "deploy")
    if out:
        return out
    tag = _unit(state, action)
    unit = state.unit(tag)
    zone = _zone_of(state, unit.owner)
    if unit.on_table:
        again = _v("valknut.deploy.again", Outcome.INFO,
                   f"Unit {tag} is placed again within deployment: it is ruled where it now stands, and it is not "
                   "another placement.", tag)
        return [again, *_placement_checks(table, tag, _at(table, action, tag), "valknut.deploy.wholly_within", zone)]
    who = deployer(state)
    if unit.owner != who:
        return [_v("valknut.deploy.alternate", Outcome.ILLEGAL,
                   f"It is {who}'s turn to place a unit; the players alternate, the higher roller first. Take "
                   f"{unit.name} off the table until {who} has placed.", tag)]
    return _placement_checks(table, tag, _at(table, action, tag), "valknut.deploy.wholly_within", zone)


def resolve_deploy(table: Table, action: Action, cup: DiceCup) -> Ruling:
    state = table.state
    tag = _unit(state, action)
    at = _at(table, action, tag)
    unit = state.unit(tag)
    positions = dict(table.positions)
    positions[tag] = at
    if unit.on_table:  # placed again: where it stands changes, nothing else
        return Ruling(state, positions, ())
    state = state.with_unit(replace(unit, on_table=True, armor=permanent(unit)[1]))
    verdicts: list[Verdict] = []
    if deployer(state) is None:
        state, verdicts = start_turn(replace(state, phase="turn_start"), positions, cup)
    return Ruling(state, positions, tuple(verdicts))


# ------------------------------------------------------------------------------------------- turn start


def check_choose_path(table: Table, action: Action) -> list[Verdict]:
    state = table.state
    out = _phase(state, "choose_path", "turn_start")
    if out:
        return out
    tag = _unit(state, action)
    path = action.params.get("path")
    if path not in PATHS:
        raise ActionError(f'"choose_path" needs "path": one of {", ".join(PATHS)}; got {path!r}.')
    unit = state.unit(tag)
    if unit.stepped:
        return [_v("valknut.path.one_step", Outcome.ILLEGAL,
                   f"Unit {tag} has already taken its Step down a Path this turn.", tag)]
    n = unit.steps.of(path) + 1
    return [_v("valknut.path.step", Outcome.LEGAL,
               f"Unit {tag} takes step {n} down the Path of the {path.title()}.", tag, path=path, step=n)]


def resolve_choose_path(table: Table, action: Action, cup: DiceCup) -> Ruling:
    state = table.state
    tag = _unit(state, action)
    path = str(action.params["path"])
    unit = state.unit(tag)
    armor = unit.armor + (1 if path == "bear" and unit.alive else 0)
    state = state.with_unit(replace(unit, steps=unit.steps.plus(path), stepped=True, armor=armor))
    return Ruling(maybe_begin_activations(state), table.positions, ())


def check_redeploy(table: Table, action: Action) -> list[Verdict]:
    """A killed unit that made its return roll is placed wholly within its owner's Drop Zone at the beginning of
    the turn, with its penalty once reinforcements are depleted (chosen before, or given as "penalty")."""
    state = table.state
    tag = _unit(state, action)
    unit = state.unit(tag)
    if unit.alive:
        return [_v("valknut.redeploy.roll", Outcome.ILLEGAL,
                   f"Unit {tag} cannot be redeployed: it is on the battlefield.", tag)]
    if not unit.ready:
        when = ("returns at the beginning of the next turn without a roll" if unit.redeploy_target <= 1
                else f"returns on a {unit.redeploy_target}+ at the beginning of the next turn")
        return [_v("valknut.redeploy.roll", Outcome.ILLEGAL,
                   f"Unit {tag} cannot be redeployed: it was killed and {when}. Take {unit.name} off the table "
                   "until then.", tag, target=unit.redeploy_target)]
    out = _phase(state, "redeploy", "turn_start")
    if out:
        return out
    penalty = action.params.get("penalty")
    if unit.penalty_due:
        if penalty not in PENALTIES:
            return [_v("valknut.redeploy.penalty", Outcome.ILLEGAL,
                       f"Reinforcements are depleted: unit {tag} must choose a penalty ({', '.join(PENALTIES)}) "
                       f"before it returns; choose it, then put {unit.name} down again.", tag)]
        out.append(_v("valknut.redeploy.penalty", Outcome.LEGAL,
                      f"Unit {tag} returns with a permanent -1 {penalty}" if penalty != "speed"
                      else f'Unit {tag} returns with a permanent -2" Speed', tag, penalty=penalty))
    zone = _zone_of(state, unit.owner)
    return out + _placement_checks(table, tag, _at(table, action, tag), "valknut.redeploy.wholly_within", zone)


def resolve_redeploy(table: Table, action: Action, cup: DiceCup) -> Ruling:
    state = table.state
    tag = _unit(state, action)
    unit = state.unit(tag)
    penalties = unit.penalties + ((str(action.params["penalty"]),) if unit.penalty_due else ())
    unit = replace(unit, alive=True, on_table=True, ready=False, penalty_due=False, penalties=penalties,
                   redeploy_target=4, hp=10)
    unit = replace(unit, armor=permanent(unit)[1])
    positions = dict(table.positions)
    positions[tag] = _at(table, action, tag)
    return Ruling(maybe_begin_activations(state.with_unit(unit)), positions, ())


def check_choose_penalty(table: Table, action: Action) -> list[Verdict]:
    """Life After Death, step 2: a unit killed once reinforcements are depleted chooses one permanent penalty
    (-1 Accuracy, -2" Speed, -1 Damage, -1 Armor), any time before it returns."""
    state = table.state
    tag = _unit(state, action)
    penalty = action.params.get("penalty")
    if penalty not in PENALTIES:
        raise ActionError(f'"choose_penalty" needs "penalty": one of {", ".join(PENALTIES)}; got {penalty!r}.')
    unit = state.unit(tag)
    if unit.alive or not unit.penalty_due:
        why = "is on the battlefield" if unit.alive else "was killed before reinforcements were depleted"
        return [_v("valknut.redeploy.penalty", Outcome.ILLEGAL, f"Unit {tag} owes no penalty: it {why}.", tag)]
    said = '-2" Speed' if penalty == "speed" else f"-1 {str(penalty).title()}"
    return [_v("valknut.redeploy.penalty", Outcome.LEGAL,
               f"Unit {tag} will return with a permanent {said} (reinforcements are depleted).", tag, penalty=penalty)]


def resolve_choose_penalty(table: Table, action: Action, cup: DiceCup) -> Ruling:
    state = table.state
    unit = state.unit(_unit(state, action))
    unit = replace(unit, penalties=unit.penalties + (str(action.params["penalty"]),), penalty_due=False)
    return Ruling(state.with_unit(unit), table.positions, ())


# ------------------------------------------------------------------------------------------ activations


def check_activation(table: Table, action: Action, costs: bool = True) -> list[Verdict]:
    """Whose activation it is, and whether the unit has an action left for this kind (`costs`: it spends one)."""
    state = table.state
    out = _phase(state, action.kind, "activations")
    if out:
        return out
    tag = _unit(state, action)
    unit = state.unit(tag)
    if not unit.alive or tag not in table.positions:
        return [_v("valknut.turn.activation", Outcome.ILLEGAL,
                   f"Unit {tag} is not on the battlefield" + (" (killed)." if not unit.alive else "; the camera cannot see it."), tag)]
    if unit.owner != state.active_player:
        return [_v("valknut.turn.activation", Outcome.ILLEGAL,
                   f"It is {state.active_player}'s activation; unit {tag} belongs to {unit.owner}.", tag)]
    if state.active_unit is not None and state.active_unit != tag:
        return [_v("valknut.turn.activation", Outcome.ILLEGAL,
                   f"Unit {state.active_unit} is still activating; end its activation first.", tag)]
    if unit.activated:
        return [_v("valknut.turn.activation", Outcome.ILLEGAL, f"Unit {tag} has already activated this turn.", tag)]
    if action.kind == "end_activation" or not costs:
        return []
    allowed = table.stats(tag).actions
    if len(unit.actions_taken) >= allowed:
        return [_v("valknut.actions.count", Outcome.ILLEGAL,
                   f"Unit {tag} has taken its {allowed} actions this activation.", tag, actions=allowed)]
    if state.options.distinct_actions and action.kind in unit.actions_taken:
        return [_v("valknut.actions.different", Outcome.ILLEGAL,
                   f"Unit {tag} has already taken {action.kind} this activation; its actions must be different things.",
                   tag)]
    return []


def _engagement_verdict(table: Table, tag: int, kind: str) -> Verdict:
    """Move: not allowed within 1" of an enemy. Disengage: only allowed within 1" of an enemy."""
    near = table.engaged(tag)
    surely = [e for e in near if e[2] is Outcome.LEGAL]
    closest = near[0] if near else None
    rule = f"valknut.{kind}.engagement"
    if kind == "move":
        if surely:
            e, m, _ = surely[0]
            return _v(rule, Outcome.ILLEGAL,
                      f'Unit {tag} is within 1" of an enemy (unit {e}, {m.text()}) and cannot Move; Disengage instead.',
                      tag, enemy=e, gap_in=round(m.value, 4), pm_in=round(m.pm, 4))
        if closest:
            e, m, _ = closest
            return _v(rule, Outcome.TOO_CLOSE_TO_CALL,
                      f'Unit {tag} is {m.text()} from enemy unit {e}: too close to call whether it is within 1".',
                      tag, enemy=e, gap_in=round(m.value, 4), pm_in=round(m.pm, 4))
        return _v(rule, Outcome.LEGAL, f'Unit {tag} has no enemy within 1" and may Move.', tag)
    if surely:
        e, m, _ = surely[0]
        return _v(rule, Outcome.LEGAL, f'Unit {tag} is within 1" of enemy unit {e} ({m.text()}) and may Disengage.',
                  tag, enemy=e, gap_in=round(m.value, 4), pm_in=round(m.pm, 4))
    if closest:
        e, m, _ = closest
        return _v(rule, Outcome.TOO_CLOSE_TO_CALL,
                  f'Unit {tag} is {m.text()} from enemy unit {e}: too close to call whether it may Disengage.',
                  tag, enemy=e, gap_in=round(m.value, 4), pm_in=round(m.pm, 4))
    return _v(rule, Outcome.ILLEGAL, f'Unit {tag} has no enemy within 1"; Disengage is only for units within 1" of an enemy.', tag)


def _route(table: Table, action: Action, tag: int) -> tuple[list[tuple[float, float, float]], Placement]:
    """The 3D route of a move: from the unit's placement through "path" (optional) to "to"."""
    start = table.at(tag)
    to = _point(action.params, "to", action.kind)
    z_param = _number(action.params, "z", action.kind)
    raw = action.params.get("path") or []
    if not isinstance(raw, list):
        raise ActionError(f'A "{action.kind}" action\'s "path" must be a list of [x, y, z] points; got {raw!r}.')
    way = [_point({"p": p}, "p", action.kind) for p in raw]
    pts = [(start.x, start.y, start.z)]
    for p in way:
        q = (p[0], p[1], p[2] if len(p) > 2 else pts[-1][2])
        if math.hypot(q[0] - pts[-1][0], q[1] - pts[-1][1]) > 0.01 or abs(q[2] - pts[-1][2]) > 0.01:
            pts.append(q)
    if len(to) > 2:
        z_end = to[2]
    elif z_param is not None:
        z_end = z_param
    elif way and len(way[-1]) > 2 and math.hypot(way[-1][0] - to[0], way[-1][1] - to[1]) < 0.01:
        z_end = way[-1][2]
    else:
        # stays on the floor the route last stood on (where it started, or the floor its "path" climbed to)
        # if that floor reaches the destination, else the table
        level = pts[-1][2]
        z_end = 0.0

        for t in table.terrain:
            if (t.has("elevated") or t.has("blocking")) and abs(t.height_in - level) <= 0.2 and t.shape.covers(Point(to[0], to[1])):
                z_end = level
    if math.hypot(to[0] - pts[-1][0], to[1] - pts[-1][1]) > 0.01 or abs(z_end - pts[-1][2]) > 0.01:
        pts.append((to[0], to[1], z_end))
    pm = _number(action.params, "pm_in", action.kind)
    end = Placement(tag, to[0], to[1], z_end, start.pm, start.yaw_deg)
    if pm is not None:
        end = replace(end, pm=pm)
    return pts, end


def _floors_at(x: float, y: float, table: Table) -> list[float]:
    """The heights a base centred at (x, y) can stand at: the table and every floor or wall top over it."""

    here = Point(x, y)
    return [0.0] + [t.height_in for t in table.terrain
                    if (t.has("elevated") or t.has("blocking")) and t.shape.covers(here)]


def _climbing_route(pts: list[tuple[float, float, float]], table: Table) -> list[tuple[float, float, float]]:
    """The route as the cost is traced: a waypoint that hangs on a face (no floor at its height under the base
    centre, e.g. [7.4, 5, 1] at the foot of a step whose edge is at x = 8) stands on the floor below it, so
    the climb is counted once, where the route reaches the floor it climbs to, not as a drop and a second
    climb. The vertical inches are the same; only the start and end of the route keep their heights."""
    out = [pts[0]]
    for x, y, z in pts[1:-1]:
        floors = _floors_at(x, y, table)
        if not any(abs(f - z) <= 0.2 for f in floors):
            z = max([f for f in floors if f <= z], default=0.0)
        out.append((x, y, z))
    return out + pts[-1:]


def _move_verdicts(table: Table, action: Action, tag: int, kind: str, allowance: Inches) -> list[Verdict]:
    pts, end = _route(table, action, tag)
    stats = table.stats(tag)
    trace = trace_move(_climbing_route(pts, table), table.terrain)
    given = _number(action.params, "length_in", kind)
    # a tracker's measured length may follow a curved route: it counts when longer than the straight line
    horizontal = max(given, trace.horizontal_in) if given is not None and not action.params.get("path") else trace.horizontal_in
    pm = _number(action.params, "pm_in", kind)
    pm = combined_pm(table.at(tag).pm, end.pm) if pm is None else pm
    cost = Measure(horizontal + stats.climb_factor * trace.vertical_in, pm)
    out: list[Verdict] = []
    extra = 0.0
    word = "Speed" if kind == "move" else "Disengage limit"
    wolf = kind == "move" and table.unit(tag).steps.wolf >= 1 and allowance > 0
    if wolf and any(o is not Outcome.ILLEGAL for _, _, o in table.engaged(tag, end)):
        extra = wolf_extra_in(allowance)
        word = f'Speed {round(allowance, 2):g}" + {extra:g}" (Path of the Wolf, ending within 1" of an enemy) ='
    limit = allowance + extra
    outcome = cost.at_most(limit)
    climb = ""
    if trace.vertical_in > 0:
        climb = f' ({trace.horizontal_in if given is None else horizontal:.2f}" across + {trace.vertical_in:.2f}" climbed x{stats.climb_factor:g})'
    verb = "moved" if kind == "move" else "disengaged"
    out.append(_v(f"valknut.{kind}.distance", outcome,
                  f'Unit {tag} {verb} {cost.text()}{climb}, its {word} {round(limit, 2):g}": {outcome.value}.', tag,
                  length_in=round(cost.value, 4), pm_in=round(cost.pm, 4), horizontal_in=round(horizontal, 4),
                  vertical_in=round(trace.vertical_in, 4), allowance_in=limit))
    for name in trace.unclimbable:
        out.append(_v("valknut.move.climb", Outcome.ILLEGAL,
                      f"Unit {tag}'s route climbs {name}, which cannot be climbed; go round it.", tag, piece=name))
    for name in crosses_impassable([p[:2] for p in pts], table.terrain, table.radius(tag)):
        out.append(_v("valknut.terrain.impassable", Outcome.ILLEGAL,
                      f"Unit {tag}'s route crosses {name}, which is impassable.", tag, piece=name))
    margin = wholly_within(end, table.radius(tag), table.battlefield.area)
    if margin.at_least(0.0) is Outcome.ILLEGAL:
        out.append(_v("valknut.battlefield.edge", Outcome.ILLEGAL,
                      f"Unit {tag} would stand {-margin.value:.2f}\" off the battlefield.", tag))
    out += _overlap(table, tag, end)
    return out


def check_move(table: Table, action: Action) -> list[Verdict]:
    out = check_activation(table, action)
    if out:
        return out
    tag = _unit(table.state, action)
    out = [_engagement_verdict(table, tag, "move")]
    return out + _move_verdicts(table, action, tag, "move", table.stats(tag).speed_in)


def check_disengage(table: Table, action: Action) -> list[Verdict]:
    out = check_activation(table, action)
    if out:
        return out
    tag = _unit(table.state, action)
    out = [_engagement_verdict(table, tag, "disengage")]
    return out + _move_verdicts(table, action, tag, "disengage", DISENGAGE_IN)


def _spend(state: ValknutState, tag: int, kind: str) -> ValknutState:
    unit = state.unit(tag)
    return replace(state.with_unit(replace(unit, actions_taken=unit.actions_taken + (kind,))), active_unit=tag)


def _after_action(table: Table, state: ValknutState, positions: Positions, tag: int, cup: DiceCup,
                  verdicts: list[Verdict]) -> Ruling:
    """Spend the action; when the unit has used all its actions (or was killed) its activation ends."""
    state = check_target(state)
    if state.phase == "over":
        return Ruling(state, positions, tuple(verdicts))
    unit = state.unit(tag)
    if not unit.alive:
        state, more = end_activation(replace(state, active_unit=None), positions, tag, cup)
        return Ruling(state, positions, tuple(verdicts + more))
    if len(unit.actions_taken) >= Table.of(state, positions).stats(tag).actions:
        state, more = end_activation(state, positions, tag, cup)
        verdicts += more
    return Ruling(state, positions, tuple(verdicts))


def resolve_move(table: Table, action: Action, cup: DiceCup) -> Ruling:
    tag = _unit(table.state, action)
    _, end = _route(table, action, tag)
    positions = dict(table.positions)
    positions[tag] = end
    state = _spend(table.state, tag, action.kind)
    return _after_action(table, state, positions, tag, cup, [])


def resolve_disengage(table: Table, action: Action, cup: DiceCup) -> Ruling:
    """Disengage; an enemy with Wolf 3 within 1" of the disengaging unit attacks it first."""
    tag = _unit(table.state, action)
    state = _spend(table.state, tag, action.kind)
    verdicts: list[Verdict] = []
    positions: Positions = table.positions
    for enemy, _, outcome in table.engaged(tag):
        if outcome is Outcome.LEGAL and state.unit(enemy).steps.wolf >= 3 and state.unit(tag).alive:
            state, positions, vs = attack_once(Table(state, positions, table.terrain), enemy, tag, cup,
                                               "valknut.path.wolf.3", side=state.unit(enemy).owner,
                                               which=" as it disengages (Path of the Wolf)")
            verdicts += vs
    if state.unit(tag).alive:
        _, end = _route(table, action, tag)
        positions = dict(positions)
        positions[tag] = end
    return _after_action(table, state, positions, tag, cup, verdicts)


def _attack_mode(table: Table, action: Action, tag: int, target: int) -> str:
    mode = action.params.get("mode")
    if mode is None:
        return "melee" if table.gap(tag, target).value <= ENGAGEMENT_IN + 1e-9 else "ranged"
    if mode not in ("melee", "ranged"):
        raise ActionError(f'An attack\'s "mode" must be "melee" or "ranged"; got {mode!r}.')
    return str(mode)


def check_attack(table: Table, action: Action) -> list[Verdict]:
    out = check_activation(table, action)
    if out:
        return out
    tag = _unit(table.state, action)
    target = _int(action.params, "target", "attack")
    assert target is not None
    if not table.state.has_unit(target):
        raise ActionError(f"There is no unit with tag {target} to attack; check the roster.")
    if table.state.unit(target).owner == table.unit(tag).owner:
        return [_v("valknut.attack.enemy", Outcome.ILLEGAL, f"Unit {target} is an ally of unit {tag}.", tag)]
    if target not in table.positions:
        return [_v("valknut.attack.enemy", Outcome.ILLEGAL, f"Unit {target} is not on the battlefield.", tag)]
    mode = _attack_mode(table, action, tag, target)
    gap = table.gap(tag, target)
    if mode == "melee":
        outcome = gap.at_most(ENGAGEMENT_IN)
        far = f' (out of range: {gap.value:.2f}" > 1")' if outcome is Outcome.ILLEGAL else ""
        return [_v("valknut.attack.melee_range", outcome,
                   f'Unit {tag} is {gap.text()} from unit {target}; melee attacks need 1" or less: {outcome.value}'
                   f"{far}.", tag, gap_in=round(gap.value, 4), pm_in=round(gap.pm, 4), mode="melee")]
    near = table.engaged(tag)
    surely = [e for e in near if e[2] is Outcome.LEGAL]
    if surely or near:
        e, m, o = (surely or near)[0]
        outcome = Outcome.ILLEGAL if surely else Outcome.TOO_CLOSE_TO_CALL
        out.append(_v("valknut.attack.ranged_engaged", outcome,
                      f'Unit {tag} has enemy unit {e} {m.text()} away; ranged attacks need no enemy within 1": '
                      f"{outcome.value}.", tag, enemy=e, gap_in=round(m.value, 4), pm_in=round(m.pm, 4), mode="ranged"))
    else:
        out.append(_v("valknut.attack.ranged_engaged", Outcome.LEGAL,
                      f'Unit {tag} has no enemy within 1" and may make a ranged attack ({gap.text()} to unit {target}).',
                      tag, gap_in=round(gap.value, 4), pm_in=round(gap.pm, 4), mode="ranged"))
    if table.state.options.ranged_needs_sight:
        sight = table.sight(tag, target)
        outcome = Outcome.ILLEGAL if sight.verdict == "blocked" else Outcome.LEGAL
        by = f" by {', '.join(sight.blockers)}" if sight.blockers else ""
        out.append(_v("valknut.attack.sight", outcome,
                      f"Line of sight from unit {tag} to unit {target} is {sight.verdict}{by}"
                      + (": no ranged attack." if sight.verdict == "blocked" else "."),
                      tag, sight=sight.verdict, fraction_clear=round(sight.fraction_clear, 3)))
    return out


def deal_damage(table: Table, attacker: int, defender: int, amount: int, cup: DiceCup) -> tuple[ValknutState, Positions, list[Verdict]]:
    """Deal Damage: Armor first, the rest to HP; with the Bear, Deer and Wolf boons that touch it."""
    state, positions = table.state, dict(table.positions)
    d = state.unit(defender)
    a = state.unit(attacker)
    bear = table.bear_level(defender)
    protected = bear >= 3
    ignored, bear_rolls = 0, []
    if bear >= 1 and amount > 0:
        bear_rolls = list(cup.roll(6, amount, "valknut.path.bear.1",
                                   f"{called(d)}'s Path of the Bear against {amount} damage",
                                   "each 6 ignores a point of damage", defender, side=d.owner))
        ignored = bear_rolls.count(6)
    dealt = amount - ignored
    absorbed = min(d.armor, dealt)
    to_hp = dealt - absorbed
    if bear >= 4 and absorbed > 0:
        to_hp = 0
    hp = d.hp - to_hp
    numbers: dict[str, Any] = {"damage": amount, "ignored": ignored, "armor_absorbed": absorbed, "hp_lost": to_hp}
    if bear_rolls:
        numbers["bear_rolls"] = bear_rolls
    notes = []
    d = replace(d, armor=d.armor - absorbed, hp=hp)
    if dealt > 0 and not protected:
        if a.steps.deer >= 1:
            d = replace(d, marks=d.marks + 1)
            notes.append("Marked")
        if a.steps.deer >= 3:
            d = replace(d, halvings=d.halvings + 1)
            notes.append("Speed halved")
    killed = False
    if d.hp <= 0 and d.wolf_saves < wolf_saves_allowed(d.steps):
        d = replace(d, hp=1, wolf_saves=d.wolf_saves + 1)
        notes.append("Path of the Wolf keeps it at 1 HP")
    elif d.hp <= 0:
        killed = True
    msg = (f"Unit {defender} takes {dealt} damage" + (f" ({ignored} ignored on 6s)" if ignored else "")
           + f": {absorbed} to Armor, {to_hp} to HP, {max(d.hp, 0)} HP left")
    if killed:
        at = positions[defender]
        state = drop_stones(state, defender, at.x, at.y)
        penalty_due = state.deaths.of(d.owner) + 1 > state.options.reinforcements
        d = replace(d, alive=False, on_table=False, hp=10, armor=0, marks=0, halvings=0, carrying=(), ready=False,
                    redeploy_target=4, penalty_due=penalty_due, actions_taken=())
        state = replace(state, blessings=tuple(b for b in state.blessings if defender not in (b.source, b.target)),
                        deaths=state.deaths.plus(d.owner), kills=state.kills.plus(a.owner))
        positions.pop(defender, None)
        msg += "; it is killed and removed from the battlefield"
    numbers["hp"] = max(d.hp, 0) if not killed else 0
    numbers["killed"] = killed
    state = state.with_unit(d)
    if notes:
        msg += " (" + ", ".join(notes) + ")"
    return state, positions, [_v("valknut.attack.damage", Outcome.INFO, msg + ".", defender, **numbers)]


def attack_once(table: Table, attacker: int, defender: int, cup: DiceCup, rule: str, side: str | None = None,
                which: str = "") -> tuple[ValknutState, Positions, list[Verdict]]:
    """One attack: the To-Hit Number from Accuracy against Evasion, 1d6, then damage (Wolf 2 on a miss).
    side: who rolls when it is not the acting unit's owner (Wolf 3's strike at a unit disengaging)."""
    att, dfn = table.stats(attacker), table.stats(defender)
    need = to_hit(att.accuracy, dfn.evasion)
    wolf = math.ceil(att.damage / 2) if table.unit(attacker).steps.wolf >= 2 else 0
    reads = (f"{need}+ hits (Accuracy {att.accuracy} against Evasion {dfn.evasion})"
             + (f"; a miss still deals {wolf} (Path of the Wolf)" if wolf else ""))
    roll = cup.one(6, rule, f"{called(table.unit(attacker))}'s attack on {called(table.unit(defender))}{which}", reads,
                   attacker, side)
    hit = roll >= need
    amount = att.damage if hit else wolf
    v = _v(rule, Outcome.INFO,
           f"Unit {attacker} (Accuracy {att.accuracy}) attacks unit {defender} (Evasion {dfn.evasion}): needs "
           f"{need}+, rolled {roll}: {'hit' if hit else 'miss'}"
           + (f", {amount} damage" if amount else "") + ("" if hit or not amount else " (Path of the Wolf)") + ".",
           attacker, to_hit=need, roll=roll, hit=hit, accuracy=att.accuracy, evasion=dfn.evasion)
    if amount <= 0:
        return table.state, table.positions, [v]
    state, positions, more = deal_damage(table, attacker, defender, amount, cup)
    return state, positions, [v, *more]


def resolve_attack(table: Table, action: Action, cup: DiceCup) -> Ruling:
    tag = _unit(table.state, action)
    target = int(action.params["target"])
    state = _spend(table.state, tag, action.kind)
    positions: Positions = table.positions
    verdicts: list[Verdict] = []
    attacks = 2 if state.unit(tag).steps.wolf >= 3 else 1
    for n in range(attacks):
        if not state.unit(target).alive:
            break
        which = f" ({'first' if n == 0 else 'second'} of two, Path of the Wolf)" if attacks > 1 else ""
        state, positions, vs = attack_once(Table(state, positions, table.terrain), tag, target, cup,
                                           "valknut.attack.roll", which=which)
        verdicts += vs
    return _after_action(table, state, positions, tag, cup, verdicts)


def _reachable_stones(table: Table, tag: int) -> list[tuple[str, int, Measure]]:
    at = table.at(tag)
    r = table.radius(tag)
    out = []
    for i, s in enumerate(table.state.stockpiles):
        if s.stones > 0:
            out.append(("stockpile", i, Measure(max(0.0, math.hypot(s.x - at.x, s.y - at.y) - r), at.pm)))
    for i, g in enumerate(table.state.ground):
        out.append(("stone", i, Measure(max(0.0, math.hypot(g.x - at.x, g.y - at.y) - r), at.pm)))
    return sorted(out, key=lambda t: t[2].value)


def _pick_choice(table: Table, action: Action, tag: int) -> tuple[str, int, Measure] | None:
    options = _reachable_stones(table, tag)
    for key in ("stockpile", "stone"):
        if key in action.params:
            i = _int(action.params, key, "pick_up_runestone")
            found = [o for o in options if o[0] == key and o[1] == i]
            if not found:
                what = "Runic Stockpile" if key == "stockpile" else "Runestone on the ground"
                count = len(table.state.stockpiles if key == "stockpile" else table.state.ground)
                raise ActionError(f'There is no {what} number {i}; "{key}" counts from 0 and there are {count}.')
            return found[0]
    return options[0] if options else None


def check_pick_up_runestone(table: Table, action: Action) -> list[Verdict]:
    out = check_activation(table, action)
    if out:
        return out
    tag = _unit(table.state, action)
    stats = table.stats(tag)
    unit = table.unit(tag)
    if len(unit.carrying) >= stats.capacity:
        return [_v("valknut.runestone.one_at_a_time", Outcome.ILLEGAL,
                   f"Unit {tag} already carries {counted(len(unit.carrying), 'Runestone')}; it can carry {stats.capacity}.", tag)]
    asked = action.params.get("stockpile")
    piles = table.state.stockpiles
    if isinstance(asked, int) and not isinstance(asked, bool) and 0 <= asked < len(piles) and piles[asked].stones <= 0:
        return [_v("valknut.runestone.reach", Outcome.ILLEGAL,
                   f"Runic Stockpile {asked} is empty: it has no Runestone left to pick up.", tag, stones=0)]
    choice = _pick_choice(table, action, tag)
    if choice is None:
        return [_v("valknut.runestone.reach", Outcome.ILLEGAL, "There is no Runestone left to pick up.", tag)]
    key, i, m = choice
    reach = table.state.options.pickup_reach_in
    outcome = m.at_most(reach)
    what = f"Runic Stockpile {i}" if key == "stockpile" else f"the Runestone on the ground ({i})"
    return [_v("valknut.runestone.reach", outcome,
               f'{what} is {m.text()} from unit {tag}\'s base; it can pick up within {reach:g}": {outcome.value}.',
               tag, distance_in=round(m.value, 4), pm_in=round(m.pm, 4))]


def resolve_pick_up_runestone(table: Table, action: Action, cup: DiceCup) -> Ruling:
    tag = _unit(table.state, action)
    choice = _pick_choice(table, action, tag)
    assert choice is not None
    key, i, _ = choice
    state = table.state
    if key == "stockpile":
        s = state.stockpiles[i]
        stone = Stone(s.section)
        state = replace(state, stockpiles=tuple(replace(p, stones=p.stones - 1) if j == i else p
                                                for j, p in enumerate(state.stockpiles)))
    else:
        stone = Stone(state.ground[i].origin)
        state = replace(state, ground=tuple(g for j, g in enumerate(state.ground) if j != i))
    unit = state.unit(tag)
    state = state.with_unit(replace(unit, carrying=unit.carrying + (stone,)))
    v = _v("valknut.runestone.carry", Outcome.INFO,
           f"Unit {tag} picks up a Runestone" + ("; its movement is halved while it carries it." if unit.steps.deer < 2 else "."),
           tag, carrying=len(unit.carrying) + 1)
    return _after_action(table, _spend(state, tag, action.kind), table.positions, tag, cup, [v])


def check_drop_runestone(table: Table, action: Action) -> list[Verdict]:
    """Drop a Runestone (our option: the book lists no such action, and a stone a unit carries must be able to
    change hands): in its activation, at no action's cost, a unit sets a Runestone it carries down where it stands."""
    out = check_activation(table, action, costs=False)
    if out:
        return out
    tag = _unit(table.state, action)
    unit = table.unit(tag)
    if not unit.carrying:
        return [_v("valknut.runestone.drop", Outcome.ILLEGAL, f"Unit {tag} carries no Runestone to drop.", tag)]
    at = table.at(tag)
    return [_v("valknut.runestone.drop", Outcome.LEGAL,
               f"Unit {tag} drops a Runestone at ({at.x:.2f}, {at.y:.2f}); it costs no action.", tag,
               carrying=len(unit.carrying) - 1)]


def resolve_drop_runestone(table: Table, action: Action, cup: DiceCup) -> Ruling:
    tag = _unit(table.state, action)
    state = table.state
    unit = state.unit(tag)
    at = table.at(tag)
    stone = unit.carrying[-1]
    state = state.with_unit(replace(unit, carrying=unit.carrying[:-1]))
    state = replace(state, ground=state.ground + (GroundStone(at.x, at.y, stone.origin),), active_unit=tag)
    return Ruling(state, table.positions, ())


def _blessings_param(action: Action) -> list[tuple[int, str]]:
    raw = action.params.get("blessings")
    if not isinstance(raw, list) or not all(
        isinstance(b, list | tuple) and len(b) == 2 and isinstance(b[0], int) and isinstance(b[1], str) and b[1] in BLESSINGS
        for b in raw
    ):
        raise ActionError(
            '"assign_spirits" needs "blessings": [[unit tag, effect], ...] with effects from '
            + ", ".join(BLESSINGS) + f"; got {raw!r}."
        )
    return [(int(b[0]), str(b[1])) for b in raw]


def check_assign_spirits(table: Table, action: Action) -> list[Verdict]:
    out = check_activation(table, action)
    if out:
        return out
    tag = _unit(table.state, action)
    raven = table.unit(tag).steps.raven
    wanted = _blessings_param(action)
    if raven < 1:
        return [_v("valknut.spirits.pool", Outcome.ILLEGAL, f"Unit {tag} has no Spirits: it has no Raven steps.", tag)]
    if len(wanted) > raven:
        return [_v("valknut.spirits.pool", Outcome.ILLEGAL,
                   f"Unit {tag} has {counted(raven, 'Spirit')} and cannot assign {len(wanted)}.", tag, pool=raven)]
    for target, effect in wanted:
        need = BLESSINGS[effect][0]
        if raven < need:
            return [_v("valknut.spirits.effect", Outcome.ILLEGAL,
                       f'The "{effect}" Blessing needs Raven step {need}; unit {tag} has {raven}.', tag)]
        if target not in table.positions:
            return [_v("valknut.spirits.target", Outcome.ILLEGAL,
                       f"Unit {target} is not on the battlefield and cannot be Blessed.", tag)]
    return [_v("valknut.spirits.pool", Outcome.LEGAL, f"Unit {tag} assigns {len(wanted)} of its {counted(raven, 'Spirit')}.",
               tag, pool=raven)]


def resolve_assign_spirits(table: Table, action: Action, cup: DiceCup) -> Ruling:
    """The giver's earlier Blessings are withdrawn and the new ones placed; Armor Blessings add to Armor now."""
    tag = _unit(table.state, action)
    state = table.state
    raven = state.unit(tag).steps.raven
    for b in state.blessings:
        if b.source == tag and b.effect == "armor":
            t = state.unit(b.target)
            state = state.with_unit(replace(t, armor=max(0, t.armor - int(blessing_size("armor", raven)))))
    new = tuple(Blessing(tag, t, e) for t, e in _blessings_param(action))
    state = replace(state, blessings=tuple(b for b in state.blessings if b.source != tag) + new)
    for b in new:
        if b.effect == "armor":
            t = state.unit(b.target)
            state = state.with_unit(replace(t, armor=t.armor + int(blessing_size("armor", raven))))
    v = _v("valknut.spirits.blessing", Outcome.INFO,
           "Blessed: " + ", ".join(f"unit {b.target} {b.effect}" for b in new) + ".", tag)
    return _after_action(table, _spend(state, tag, action.kind), table.positions, tag, cup, [v])


def check_bear_restore(table: Table, action: Action) -> list[Verdict]:
    out = check_activation(table, action)
    if out:
        return out
    tag = _unit(table.state, action)
    if table.unit(tag).steps.bear < 2:
        return [_v("valknut.path.bear.2", Outcome.ILLEGAL, f"Unit {tag} needs Bear step 2 to restore HP.", tag)]
    targets = action.params.get("targets", [tag])
    if not isinstance(targets, list) or not targets or not all(isinstance(t, int) for t in targets):
        raise ActionError(f'"bear_restore" needs "targets": a list of unit tags; got {targets!r}.')
    for t in targets:
        if t == tag:
            continue
        if t not in table.positions or table.state.unit(t).owner != table.unit(tag).owner:
            return [_v("valknut.path.bear.2", Outcome.ILLEGAL, f"Unit {t} is not an ally on the battlefield.", tag)]
        gap = table.gap(tag, t)
        o = gap.at_most(BEAR_RESTORE_IN)
        if o is not Outcome.LEGAL:
            out.append(_v("valknut.path.bear.2", o, f'Ally {t} is {gap.text()} away; restoring reaches 6": {o.value}.',
                          tag, gap_in=round(gap.value, 4)))
    to = listed(["itself" if t == tag else f"unit {t}" for t in targets])
    return out or [_v("valknut.path.bear.2", Outcome.LEGAL, f"Unit {tag} restores HP to {to}.", tag)]


def resolve_bear_restore(table: Table, action: Action, cup: DiceCup) -> Ruling:
    """Roll 2d6; heal the targets in the order given up to 10 HP; any excess becomes Armor on the first
    target (extra Armor that is not restored at the start of a turn)."""
    tag = _unit(table.state, action)
    targets = list(action.params.get("targets", [tag]))
    state = table.state
    names = [called(state.unit(t)) for t in targets]
    rolls = list(cup.roll(6, 2, "valknut.path.bear.2", f"{called(state.unit(tag))}'s Path of the Bear restore",
                          f"the total restores HP to {', then '.join(names)}; any excess becomes Armor on {names[0]}",
                          tag))
    points = sum(rolls)
    healed = {}
    for t in targets:
        u = state.unit(t)
        gain = min(points, 10 - u.hp)
        if gain > 0:
            state = state.with_unit(replace(u, hp=u.hp + gain))
            healed[t] = gain
            points -= gain
    if points > 0:
        first = state.unit(targets[0])
        state = state.with_unit(replace(first, armor=first.armor + points))
    v = _v("valknut.path.bear.2", Outcome.INFO,
           f"Unit {tag} rolled {rolls[0]} + {rolls[1]} = {sum(rolls)}: restored "
           + (", ".join(f"{g} HP to unit {t}" for t, g in healed.items()) or "no HP")
           + (f", {points} extra Armor to unit {targets[0]}" if points > 0 else "") + ".",
           tag, rolls=rolls, extra_armor=points)
    return _after_action(table, _spend(state, tag, action.kind), table.positions, tag, cup, [v])


def check_end_activation(table: Table, action: Action) -> list[Verdict]:
    if action.unit is None:
        if table.state.phase != "activations" or table.state.active_unit is None:
            raise ActionError('"end_activation" needs "unit" when no unit is in the middle of its activation.')
        return []
    return check_activation(table, action)


def resolve_end_activation(table: Table, action: Action, cup: DiceCup) -> Ruling:
    tag = action.unit if action.unit is not None else table.state.active_unit
    assert tag is not None
    state, verdicts = end_activation(table.state, table.positions, tag, cup)
    return Ruling(state, table.positions, tuple(verdicts))


CHECKS = {
    "place_stockpile": (check_place_stockpile, resolve_place_stockpile),
    "roll_off": (check_roll_off, resolve_roll_off),
    "choose_drop_zone": (check_choose_drop_zone, resolve_choose_drop_zone),
    "deploy": (check_deploy, resolve_deploy),
    "choose_path": (check_choose_path, resolve_choose_path),
    "redeploy": (check_redeploy, resolve_redeploy),
    "choose_penalty": (check_choose_penalty, resolve_choose_penalty),
    "move": (check_move, resolve_move),
    "attack": (check_attack, resolve_attack),
    "disengage": (check_disengage, resolve_disengage),
    "pick_up_runestone": (check_pick_up_runestone, resolve_pick_up_runestone),
    "drop_runestone": (check_drop_runestone, resolve_drop_runestone),
    "assign_spirits": (check_assign_spirits, resolve_assign_spirits),
    "bear_restore": (check_bear_restore, resolve_bear_restore),
    "end_activation": (check_end_activation, resolve_end_activation),
}


def check(table: Table, action: Action) -> list[Verdict]:
    """The verdicts on an action, without doing it; raises ActionError for an unknown kind or bad params."""
    if action.kind not in CHECKS:
        raise ActionError(f'Valknut has no action "{action.kind}"; the actions are {", ".join(KINDS)}.')
    if table.state.phase == "over":
        return [_v("valknut.win.over", Outcome.ILLEGAL, f"The game is over ({table.state.winner} won).")]
    return CHECKS[action.kind][0](table, action)


def rule(table: Table, action: Action, cup: DiceCup) -> Ruling:
    """Check the action; if nothing in it is illegal, do it (too close to call is given the benefit of the doubt)."""
    verdicts = check(table, action)
    if _bad(verdicts):
        return Ruling(table.state, table.positions, tuple(verdicts))
    done = CHECKS[action.kind][1](table, action, cup)
    return Ruling(done.state, done.positions, tuple(verdicts) + done.verdicts)
