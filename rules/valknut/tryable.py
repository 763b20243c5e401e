"""What could be declared at a table point the players click in Valknut (`Game.actions_at`), legal or not: the page
offers it, and the ruling says why one is refused. (What may be tried at any time, `tryable_actions`, is the
Valknut class's own.)

With no unit selected: in the stockpiles phase a Runic Stockpile at the point; in the drop-zones phase the
section under the point as the Drop Zone. With a unit: in deployment its deployment at the point, at turn start a
killed unit's redeployment there; in the activations, when a base is under the point an attack on it (an enemy),
a Path of the Bear restore and each Spirit Blessing for it (an ally or the unit itself); a pick-up of each Runic
Stockpile and Runestone on the ground under the point; else a Move (a Disengage when the unit is engaged) to the
point with its measured length from the unit's base centre. Deployments, moves and disengages are camera kinds:
the API gives them, the Declare panel leaves them to the camera.
"""

from __future__ import annotations

import math

from rules.engine import Action, UnitId
from rules.valknut.state import UnitState
from rules.valknut.table import Table
from rules.valknut.units import BLESSINGS

UNDER_POINT_IN = 0.1
"""A click this far outside a base's edge (inches) still points at that unit."""
MARKER_REACH_IN = 0.6
"""A click this near a Runic Stockpile's or a Runestone's centre (inches) points at it."""


def unit_under(table: Table, x: float, y: float) -> UnitState | None:
    """The living unit on the battlefield whose base is under (x, y), the nearest centre if bases touch."""
    best: tuple[float, UnitState] | None = None
    for u in table.live():
        p = table.positions[u.tag]
        d = math.hypot(p.x - x, p.y - y)
        if d <= u.radius_in + UNDER_POINT_IN and (best is None or d < best[0]):
            best = (d, u)
    return None if best is None else best[1]


def _setup_at(table: Table, x: float, y: float) -> list[Action]:
    """The actions of no unit at the point: a Runic Stockpile there, or the section there as a Drop Zone."""
    state = table.state
    if state.phase == "stockpiles":
        return [Action("place_stockpile", None, {"at": [round(x, 3), round(y, 3)]})]
    section = table.battlefield.section_at(x, y)
    if state.phase == "drop_zones" and section is not None:
        return [Action("choose_drop_zone", None, {"section": section})]
    return []


def _aimed_at(table: Table, me: UnitState, there: UnitState) -> list[Action]:
    """What `me` may aim at the unit under the point: an attack on an enemy; a Bear restore and each Blessing (all
    six with Raven steps, else one, refused) for an ally or itself."""
    if there.owner != me.owner:
        return [Action("attack", me.tag, {"target": there.tag})]
    effects = list(BLESSINGS) if me.steps.raven >= 1 else ["evasion"]
    return [Action("bear_restore", me.tag, {"targets": [there.tag]})] + [
        Action("assign_spirits", me.tag, {"blessings": [[there.tag, e]]}) for e in effects]


def _markers_at(table: Table, tag: UnitId, x: float, y: float) -> list[Action]:
    """A pick-up of each Runic Stockpile and Runestone on the ground under the point."""
    state = table.state
    out = [Action("pick_up_runestone", tag, {"stockpile": i}) for i, s in enumerate(state.stockpiles)
           if math.hypot(s.x - x, s.y - y) <= MARKER_REACH_IN]
    return out + [Action("pick_up_runestone", tag, {"stone": i}) for i, g in enumerate(state.ground)
                  if math.hypot(g.x - x, g.y - y) <= MARKER_REACH_IN]


def at_point(table: Table, unit: UnitId | None, at: tuple[float, float]) -> list[Action]:
    """The actions at table point `at` (inches) for `unit`, or for no unit (see the module docstring)."""
    x, y = float(at[0]), float(at[1])
    state = table.state
    if state.phase == "over" or not (math.isfinite(x) and math.isfinite(y)):
        return []
    if unit is None:
        return _setup_at(table, x, y)
    if not state.has_unit(unit):
        return []
    me = state.unit(unit)
    to = [round(x, 3), round(y, 3)]
    if state.phase == "deploy":
        return [Action("deploy", unit, {"to": to})] if me.alive else []
    if state.phase == "turn_start" and not me.alive:
        return [Action("redeploy", unit, {"to": to})]
    if state.phase != "activations" or unit not in table.positions:
        return []
    there = unit_under(table, x, y)
    out = _markers_at(table, unit, x, y)
    if there is not None:
        return _aimed_at(table, me, there) + out
    if out:
        return out
    start = table.at(unit)
    kind = "disengage" if table.engaged(unit) else "move"
    return [Action(kind, unit, {"to": to, "length_in": round(math.hypot(x - start.x, y - start.y), 3)})]
