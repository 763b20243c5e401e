"""Vigtavl movement: where a unit may go, occupancy, freighters and the prevailing winds.

Rules (seed): knights move on land, ships on sea; mountains cannot be occupied. Each step is 1 movement.
Units may move through hexes of their own units and end only where the occupancy rule allows (at most 3;
encampment 1, fort and artillery 2, castle 3; prisoners free). In the build phase units may pass through but
not end in hexes occupied by another player; in the battle phase moving into such a hex starts a battle.
Loading a knight onto a freighter is 1 movement. Ships may ride the prevailing winds from a border sea hex to
any border sea hex on the next side of the map (clockwise or counter-clockwise): 1 movement to enter and 1 to
exit, never ending in the deep ocean.

Named options (the seed is silent or contradicts itself):
- "pass through full hexes": occupancy is checked where a move ends; a unit may pass through its own hexes at
  the limit (Surrender says "players can still move through hexes at max occupancy").
- "passengers": units aboard a freighter do not count toward occupancy (Setup loads 3 knights on a freighter
  that Placement puts on a hex of at most 3).
- "battle by movement": in the battle phase a hex holding another player's combat units stops the mover and
  starts a close combat; a hex holding only another player's development or artillery may be passed through
  but not entered to end there (take it with seize).
- "winds": each ride costs 2 movement (enter and exit) and may be repeated if movement allows; a corner
  border hex belongs to both sides it ends.
- "towing": a knight moving artillery moves with it from the same hex; the artillery's 2 counts where they end;
  a towing knight may not move into a battle.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from rules.hexgrid import Hex, neighbors, reachable
from rules.vigtavl.state import Piece, VigtavlState, geography
from rules.vigtavl.units import (
    FREIGHTER_CAPACITY,
    OCCUPANCY_LIMIT,
    OCCUPANCY_WEIGHT,
    STATS,
    is_knight,
    is_ship,
)
from rules.vigtavl.walls import blocks


def enemy_units_at(state: VigtavlState, h: Hex, player: str) -> tuple[Piece, ...]:
    """Another player's combat units standing on a hex (artillery is not a combat unit)."""
    return tuple(p for p in state.units_at(h) if p.owner != player and p.kind != "artillery")


def held_by_other(state: VigtavlState, h: Hex, player: str) -> bool:
    return bool(state.holders(h) - {player})


def may_end(state: VigtavlState, player: str, h: Hex, weight: int, terrain: str, leaving: Iterable[int] = ()) -> str | None:
    """Why a unit (occupancy `weight`) of `player` may not end a move on h, or None when it may."""
    g = geography(state.cells)
    kind = g.kind(h)
    if kind is None:
        return f"hex [{h.q}, {h.r}] is off the map"
    if kind == "mountain":
        return f"hex [{h.q}, {h.r}] is a mountain and cannot be occupied"
    if kind != terrain:
        return f"hex [{h.q}, {h.r}] is {kind}, not {terrain}"
    if held_by_other(state, h, player):
        return f"hex [{h.q}, {h.r}] is occupied by another player"
    gone = set(leaving)
    now = sum(OCCUPANCY_WEIGHT[p.kind] for p in state.units_at(h) if p.id not in gone)
    dev = state.development_at(h)
    now += OCCUPANCY_WEIGHT[dev.kind] if dev else 0
    if now + weight > OCCUPANCY_LIMIT:
        return f"hex [{h.q}, {h.r}] would hold {now + weight}, more than the occupancy limit of {OCCUPANCY_LIMIT}"
    return None


@dataclass(frozen=True)
class MoveOptions:
    """Where a unit can get to: cost by hex, the hex each was reached from (path back), and battle hexes."""

    cost: dict[Hex, int]
    came: dict[Hex, Hex]
    battles: frozenset[Hex]

    def path(self, goal: Hex) -> tuple[Hex, ...]:
        out = [goal]
        while out[-1] in self.came:
            out.append(self.came[out[-1]])
        return tuple(reversed(out))


def wind_links(state: VigtavlState, h: Hex) -> tuple[Hex, ...]:
    """Border sea hexes on the next side of the map the prevailing winds carry a ship to from h."""
    g = geography(state.cells)
    if g.kind(h) != "sea" or h not in g.sides:
        return ()
    step = 1 if state.winds == "counter-clockwise" else -1
    out: set[Hex] = set()
    for side in g.sides[h]:
        out |= set(g.border_sea((side + step) % 6))
    out.discard(h)
    return tuple(sorted(out))


def options(state: VigtavlState, p: Piece, budget: int, start: Hex, escaping: bool = False) -> MoveOptions:
    """Every hex unit p could reach from `start` spending at most `budget` movement.

    escaping: the Surrender test (another player's hexes are closed, no battles)."""
    g = geography(state.cells)
    battle_phase = state.phase == "battle" and not escaping
    terrain = "sea" if is_ship(p.kind) else "land"
    mover_kind = p.kind

    def stop(h: Hex) -> bool:
        return battle_phase and bool(enemy_units_at(state, h, p.owner))

    def enterable(a: Hex, b: Hex) -> bool:
        kind = g.kind(b)
        if kind != terrain:
            return False
        if blocks(state, a, b, p.owner, mover_kind) is not None:
            return False
        return not (escaping and held_by_other(state, b, p.owner))

    if not is_ship(p.kind):
        start_is_sea = g.kind(start) == "sea"

        def step(a: Hex, b: Hex) -> int | None:
            if a == start and start_is_sea:  # disembarking: the first step goes ashore
                return 1 if g.kind(b) == "land" and blocks(state, a, b, p.owner, mover_kind) is None else None
            return 1 if enterable(a, b) else None

        costs = reachable(start, budget, step, stops=stop)
        came: dict[Hex, Hex] = {}
        for h, c in costs.items():
            if h == start:
                continue
            for n in neighbors(h):
                if costs.get(n) == c - 1 and step(n, h) is not None and (n == start or not stop(n)):
                    came[h] = n
                    break
        battles = frozenset(h for h in costs if h != start and stop(h))
        return MoveOptions(costs, came, battles)

    # ships: Dijkstra with the winds' extra links (each ride 2 movement)
    costs = {start: 0}
    came = {}
    frontier = [(0, start)]
    done: set[Hex] = set()
    while frontier:
        c, h = heapq.heappop(frontier)
        if h in done:
            continue
        done.add(h)
        if h != start and stop(h):
            continue
        links = [(n, 1) for n in neighbors(h) if enterable(h, n)]
        links += [(n, 2) for n in wind_links(state, h) if not (escaping and held_by_other(state, n, p.owner))]
        for n, k in links:
            total = c + k
            if total <= budget and total < costs.get(n, total + 1):
                costs[n] = total
                came[n] = h
                heapq.heappush(frontier, (total, n))
    return MoveOptions(costs, came, frozenset(h for h in costs if h != start and stop(h)))


def movement(p: Piece) -> int:
    return STATS[p.kind].movement


def destinations(state: VigtavlState, p: Piece, budget: int, start: Hex, tow: Piece | None = None) -> dict[Hex, int]:
    """Hexes where unit p may end a move (battles included), with their cost."""
    opts = options(state, p, budget, start)
    terrain = "sea" if is_ship(p.kind) else "land"
    weight = OCCUPANCY_WEIGHT[p.kind] + (OCCUPANCY_WEIGHT[tow.kind] if tow else 0)
    leaving = [p.id] + ([tow.id] if tow else [])
    out = {}
    for h, c in opts.cost.items():
        if h == start:
            continue
        if h in opts.battles:
            if tow is None:
                out[h] = c
            continue
        if may_end(state, p.owner, h, weight, terrain, leaving) is None:
            out[h] = c
    return out


def boarding_cost(state: VigtavlState, knight: Piece, freighter: Piece, budget: int, start: Hex) -> int | None:
    """Movement a knight spends to walk beside a freighter and board it (+1), or None when it cannot."""
    g = geography(state.cells)
    fh = state.where(freighter)
    if fh is None or freighter.kind != "freighter" or not freighter.in_play:
        return None
    if len(state.passengers(freighter.id)) >= FREIGHTER_CAPACITY:
        return None
    if g.kind(start) == "sea":
        return None
    opts = options(state, knight, budget - 1, start)
    best: int | None = None
    for h, c in opts.cost.items():
        if h in opts.battles or fh not in neighbors(h):
            continue
        if blocks(state, h, fh, knight.owner, knight.kind) is not None:
            continue
        if best is None or c + 1 < best:
            best = c + 1
    return best


def can_escape(state: VigtavlState, p: Piece, h: Hex) -> bool:
    """Surrender test: could unit p (on h) reach, within its movement, a hex where it may end a move?"""
    if not (is_knight(p.kind) or is_ship(p.kind)):
        return False
    opts = options(state, p, movement(p), h, escaping=True)
    terrain = "sea" if is_ship(p.kind) else "land"
    return any(
        x != h and may_end(state, p.owner, x, OCCUPANCY_WEIGHT[p.kind], terrain, [p.id]) is None for x in opts.cost
    )
