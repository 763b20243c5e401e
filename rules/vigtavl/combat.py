"""Vigtavl dice: close combat, ranged attacks on straight lines, breaching walls, and the tactics that add dice.

Rules (seed):
- Close combat: units attack opponents in the same or adjacent hexes; both roll dice equal to their unit's
  cost, compare only the highest die, the greater wins, ties are re-rolled.
- Ranged: archers, artillery and galleys fire along straight lines through the centre of a hex edge, up to
  range 3; mountains and walls block. The attacker rolls dice equal to the cost; a hit needs any die of
  1-3 at range 1, 1-2 at range 2, 1 at range 3.
- Breach: dice equal to the unit's cost; any 1-3 removes the wall.
- Flanking: +1 die from a flank, +2 from a rear flank, +3 from the rear; the front of a hex is the
  direction of the first attack on it (Feint). Attrition: +2 dice for the third attack on the same hex from
  the same direction (and the third breach attempt). Overwhelm: 6 or more attack dice and the enemy
  surrenders before the battle.

Dice (rules/dice.py): every die is the players' input, taken from the action's "rolls" in the order below; a roll
not given waits for the players ("roll for us" alone lets Tablesight roll it). Named options for dice where the seed
is silent:
- "who rolls first": in close combat the attacker's dice are taken first, then the defender's (rolled by the
  defender's owner); a tie asks both again, attacker then defender, with as many dice as before.
- "ties": only the highest dice are compared; a tie of highest dice re-rolls every die of both sides.
- "ranged and breach": only the attacker (the breaching player) rolls; the target does not roll back.
- "cocked dice": a die that lands cocked or off the tray is rolled again by the players before they give the
  faces; Tablesight takes only the faces 1-6 it is given, in the order given.

Named options (the seed is silent):
- "front": a hex's front is set by the first attack on it in the current turn and forgotten when the turn
  ends; an attack from within the same hex has no direction (no flank, no attrition).
- "attrition count": counted per attacking player, target hex and direction within the turn; the third and
  every later attack gets +2. Breach attempts likewise per player and wall within the turn.
- "tactics for ranged": flanking, attrition and overwhelm count a ranged attack's dice too (its direction
  is the line's), since the seed speaks of "attack dice" in general.
"""

from __future__ import annotations

from dataclasses import dataclass

from rules.dice import DiceCup
from rules.hexgrid import Edge, Hex, opposite, ray
from rules.vigtavl.state import Piece, VigtavlState, geography, title
from rules.vigtavl.units import (
    ATTRITION_ATTEMPT,
    ATTRITION_DICE,
    BREACH_HIT_FACE,
    FLANK_DICE,
    FLANK_NAMES,
    OVERWHELM_DICE,
    RANGED_HIT_FACES,
)
from rules.vigtavl.walls import blocks

MAX_REROLLS = 1000
"""Ties are re-rolled; a bound keeps a broken generator from looping for ever."""

CLOSE = "vigtavl.combat.close"
RANGED = "vigtavl.combat.ranged"
BREACH = "vigtavl.walls.breach"
"""The dice clauses: each roll names one of them."""


@dataclass(frozen=True)
class CloseCombat:
    """attacker_rolls / defender_rolls: every roll, ties included (the last pair decided it)."""

    attacker_wins: bool
    attacker_rolls: tuple[tuple[int, ...], ...]
    defender_rolls: tuple[tuple[int, ...], ...]

    @property
    def rerolls(self) -> int:
        return len(self.attacker_rolls) - 1


def close_combat(cup: DiceCup, attacker: Piece, defender: Piece, attack_dice: int, defend_dice: int) -> CloseCombat:
    """Close combat: both players roll d6 equal to their unit's cost (the attacker's tactics added), the attacker's
    dice first; highest die against highest die, the greater wins, ties re-rolled."""
    a_name, d_name = title(attacker), title(defender)
    a_all: list[tuple[int, ...]] = []
    d_all: list[tuple[int, ...]] = []
    for tie in range(MAX_REROLLS):
        again = f", re-roll {tie} after a tie" if tie else ""
        a = cup.roll(6, attack_dice, CLOSE, f"{a_name}'s attack on {d_name}{again}",
                     f"highest die against {defender.owner}'s highest wins, a tie is re-rolled", attacker.id)
        d = cup.roll(6, defend_dice, CLOSE, f"{d_name}'s defence against {a_name}{again}",
                     f"highest die against {attacker.owner}'s highest wins, a tie is re-rolled", defender.id,
                     side=defender.owner)
        a_all.append(a)
        d_all.append(d)
        if max(a) != max(d):
            return CloseCombat(max(a) > max(d), tuple(a_all), tuple(d_all))
    raise RuntimeError("close combat tied 1000 times; the dice generator is broken")


def hit_words(face: int, what: str = "hits") -> str:
    """How ranged and breach dice read: "any 1-3 hits", "any 1 or 2 hits", "a 1 hits"."""
    return {1: f"a 1 {what}", 2: f"any 1 or 2 {what}"}.get(face, f"any 1-{face} {what}")


def ranged_hit(cup: DiceCup, shooter: Piece, target: Piece, dice: int, distance: int,
               gun: Piece | None = None) -> tuple[bool, tuple[int, ...], int]:
    """(hit, rolls, the highest face that hits) for a ranged attack at `distance` hexes: the attacker rolls d6
    equal to the cost; any die of 1-3 hits at range 1, 1-2 at range 2, 1 at range 3. `gun`: the artillery a
    knight fires."""
    face = RANGED_HIT_FACES[distance]
    what = (f"{title(gun)}'s shot at {title(target)}, fired by {title(shooter)}" if gun is not None
            else f"{title(shooter)}'s shot at {title(target)}") + f" (range {distance})"
    rolls = cup.roll(6, dice, RANGED, what, hit_words(face), shooter.id)
    return any(r <= face for r in rolls), rolls, face


def breach_roll(cup: DiceCup, unit: Piece, wall_owner: str, edge: Edge, dice: int) -> tuple[bool, tuple[int, ...]]:
    """Breaching a wall: d6 equal to the unit's cost (+2 on the third attempt); any 1-3 removes the wall."""
    a, b = edge.hexes
    what = f"{title(unit)}'s breach of {wall_owner}'s wall between [{a.q}, {a.r}] and [{b.q}, {b.r}]"
    rolls = cup.roll(6, dice, BREACH, what, hit_words(BREACH_HIT_FACE, "breaches it"), unit.id)
    return any(r <= BREACH_HIT_FACE for r in rolls), rolls


@dataclass(frozen=True)
class Line:
    """A straight line of fire from one hex to another: its direction from the shooter, its length, and what
    stands in the way (mountain hexes, walls by owner)."""

    direction: int
    distance: int
    hexes: tuple[Hex, ...]
    blocked_by: tuple[str, ...]


def line_of_fire(state: VigtavlState, start: Hex, target: Hex, owner: str, kind: str, max_range: int) -> Line | None:
    """The straight line through hex edges from start to target, or None when target is not on one within range.

    `kind` is the piece firing through walls: a knight (or artillery fired by one) passes its owner's walls."""
    g = geography(state.cells)
    for d in range(6):
        cells = ray(start, d, max_range)
        if target not in cells:
            continue
        n = cells.index(target) + 1
        path = (start,) + cells[:n]
        blocked: list[str] = []
        for i in range(1, n + 1):
            h = path[i]
            if g.kind(h) is None:
                blocked.append(f"hex [{h.q}, {h.r}] off the map")
            elif g.kind(h) == "mountain" and h != target:
                blocked.append(f"mountain at [{h.q}, {h.r}]")
            wall = blocks(state, path[i - 1], h, owner, "archer" if kind == "artillery" else kind)
            if wall is not None:
                blocked.append(f"{wall}'s wall between [{path[i - 1].q}, {path[i - 1].r}] and [{h.q}, {h.r}]")
        return Line(d, n, path, tuple(blocked))
    return None


@dataclass(frozen=True)
class Tactics:
    """Extra attack dice: flank steps (0 front .. 3 rear) from the hex's front, attrition, the direction."""

    direction: int | None
    front: int | None
    flank_steps: int
    flank_dice: int
    attrition_dice: int
    attempt: int

    @property
    def name(self) -> str:
        return FLANK_NAMES[self.flank_steps]

    @property
    def extra(self) -> int:
        return self.flank_dice + self.attrition_dice


def tactics(state: VigtavlState, player: str, target: Hex, direction: int | None) -> Tactics:
    """Flanking and attrition for an attack on `target` arriving from `direction` (the side of the target
    hex the attack comes through, 0..5, or None from within the hex)."""
    if direction is None:
        return Tactics(None, None, 0, 0, 0, 1)
    front = state.now.front_of(target)
    steps = 0
    if front is not None:
        diff = (direction - front) % 6
        steps = min(diff, 6 - diff)
    attempt = state.now.attack_count(player, target, direction) + 1
    attr = ATTRITION_DICE if attempt >= ATTRITION_ATTEMPT else 0
    return Tactics(direction, front if front is not None else direction, steps, FLANK_DICE[steps], attr, attempt)


def record_attack(state: VigtavlState, player: str, target: Hex, direction: int | None) -> VigtavlState:
    """Remember the front (first attack) and count the attack for attrition."""
    if direction is None:
        return state
    now = state.now
    fronts = now.fronts if now.front_of(target) is not None else now.fronts + ((target, direction),)
    n = now.attack_count(player, target, direction)
    attacks = tuple(a for a in now.attacks if a[:3] != (player, target, direction)) + ((player, target, direction, n + 1),)
    return state.with_now(fronts=fronts, attacks=attacks)


def side_toward(target: Hex, line_direction: int) -> int:
    """The side of the target hex an attack along `line_direction` comes through."""
    return opposite(line_direction)


def overwhelms(dice: int) -> bool:
    return dice >= OVERWHELM_DICE
