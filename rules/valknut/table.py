"""What Valknut's rules read off the table: live bases, radii, the 1" engagement zone, the Bear aura.

A `Table` bundles the state with the measured positions and the terrain as it now stands (tagged pieces
placed where their tags are seen), so each rule asks it questions in the game's words.

Distances between units ("within 1"", melee range, the Bear's 6" aura and restore) are measured as a tape
would between the two bases: from base edge to base edge across the table and, when the bases stand on
different floors, up or down between them too (`base_gap`). A unit on a ruin floor 3" up is not within 1"
of the enemy on the ground beneath it; two bases on the same level are simply edge to edge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rules.engine import Inches, Outcome, Placement, Positions, ScenarioError, UnitId
from rules.geometry import Measure, Sight, combined_pm, line_of_sight
from rules.terrain import TerrainPiece, place_terrain
from rules.valknut.board import Battlefield
from rules.valknut.state import ValknutState
from rules.valknut.units import Stats, UnitState, stats_of

ENGAGEMENT_IN = 1.0
"""Melee range and the zone in which a unit may not Move: within 1" base edge to base edge."""
BEAR_AURA_IN = 6.0
BEAR_RESTORE_IN = 6.0
LEVEL_IN = 1.0
"""Bases whose heights differ by at least this stand on different floors: one cannot overlap the other."""


def base_gap(a: Placement, ra: Inches, b: Placement, rb: Inches) -> Measure:
    """The shortest distance between two round bases (radii ra, rb), inches: the edge-to-edge gap across the
    table combined with the difference in their heights (0 when both stand on the same level)."""
    across = max(0.0, math.hypot(a.x - b.x, a.y - b.y) - ra - rb)
    return Measure(math.hypot(across, a.z - b.z), combined_pm(a.pm, b.pm))


@dataclass(frozen=True)
class Table:
    """The state, the measured placements of the living deployed units, and the terrain as it stands."""

    state: ValknutState
    positions: Positions
    terrain: tuple[TerrainPiece, ...]

    @staticmethod
    def of(state: ValknutState, positions: Positions) -> Table:
        live = {u.tag: positions[u.tag] for u in state.units if u.alive and u.on_table and u.tag in positions}
        return Table(state, live, place_terrain(state.terrain, positions))

    @property
    def battlefield(self) -> Battlefield:
        return Battlefield(*self.state.board)

    def unit(self, tag: UnitId) -> UnitState:
        return self.state.unit(tag)

    def at(self, tag: UnitId) -> Placement:
        if tag not in self.positions:
            raise ScenarioError(f'Unit {tag} is not on the battlefield; give its position, "at": [x, y] in inches.')
        return self.positions[tag]

    def radius(self, tag: UnitId) -> Inches:
        return self.unit(tag).radius_in

    def live(self) -> list[UnitState]:
        return [u for u in self.state.units if u.tag in self.positions]

    def enemies(self, tag: UnitId) -> list[UnitState]:
        owner = self.unit(tag).owner
        return [u for u in self.live() if u.owner != owner]

    def gap(self, a: UnitId, b: UnitId) -> Measure:
        """Base edge to base edge, inches, counting the height between bases on different floors (`base_gap`)."""
        return base_gap(self.at(a), self.radius(a), self.at(b), self.radius(b))

    def engaged(self, tag: UnitId, at: Placement | None = None) -> list[tuple[UnitId, Measure, Outcome]]:
        """Enemies within 1" of the unit (standing at `at` if given): (enemy, gap, LEGAL=surely / TOO_CLOSE=maybe)."""
        me = at if at is not None else self.at(tag)
        mine = self.unit(tag)
        out: list[tuple[UnitId, Measure, Outcome]] = []
        for other in self.live():
            if other.tag == tag or other.owner == mine.owner:
                continue
            m = base_gap(me, mine.radius_in, self.positions[other.tag], other.radius_in)
            verdict = m.at_most(ENGAGEMENT_IN)
            if verdict is not Outcome.ILLEGAL:
                out.append((other.tag, m, verdict))
        return sorted(out, key=lambda t: t[1].value)

    def sight(self, a: UnitId, b: UnitId) -> Sight:
        return line_of_sight(
            self.at(a), self.radius(a), self.at(b), self.radius(b), self.terrain, self.state.options.eye_height_in
        )

    def bear_level(self, tag: UnitId) -> int:
        """The Bear passives the unit has: its own Bear steps, or those of an ally with Bear 3+ whose 6" aura
        holds it (measured edge to edge, the measured value decides)."""
        me = self.unit(tag)
        level = me.steps.bear
        if tag not in self.positions:
            return level
        for ally in self.live():
            mate = ally.tag != tag and ally.owner == me.owner and ally.steps.bear >= 3
            if mate and self.gap(tag, ally.tag).value <= BEAR_AURA_IN + 1e-9:
                level = max(level, ally.steps.bear)
        return level

    def protected(self, tag: UnitId) -> bool:
        """Bear 3 (own or aura): the unit's stats cannot be forcibly lowered by the enemy."""
        return self.bear_level(tag) >= 3

    def stats(self, tag: UnitId) -> Stats:
        return stats_of(self.unit(tag), self.state.blessings, self.state.by_tag(), self.protected(tag))


def called(unit: UnitState) -> str:
    """A unit as a roll names it: its name, with its tag id when the name does not end with it ("Red 1 (tag 10)",
    "soldier 12")."""
    return unit.name if unit.name.split()[-1:] == [str(unit.tag)] else f"{unit.name} (tag {unit.tag})"
