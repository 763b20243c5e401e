"""Vigtavl walls: which edges may hold one, what they stop, and the Great Wall and Citadel tokens they earn.

Rules (seed, "Walls"): walls may be built on any edge of a player's occupied or built hexes; units may not
attack or move through opponent walls, but a player's own knights may move or attack through his own walls.

Named options (the seed is silent):
- "wall length": a Great Wall is a run of the player's walls joined end to end (edges sharing a corner);
  its length is the number of edges in that connected run (branches included).
- "citadel": a set of hexes is completely enclosed when no path of steps leaves it without crossing one of
  the player's walls or entering a mountain; stepping off the map counts as leaving (a border edge needs a
  wall too). Opponents' walls do not enclose for you. The tokens are the hexes enclosed when first claimed.
- "ships and walls": ships never pass or attack through a wall, their owner's included (only knights are named).
"""

from __future__ import annotations

from rules.hexgrid import Corner, Edge, Hex, direction_between, neighbor
from rules.vigtavl.state import VigtavlState, geography
from rules.vigtavl.units import is_knight


def edge_between(a: Hex, b: Hex) -> Edge | None:
    """The edge two adjacent hexes share, or None when they are not adjacent."""
    d = direction_between(a, b)
    return None if d is None else Edge(a, d)


def blocks(state: VigtavlState, a: Hex, b: Hex, player: str, kind: str) -> str | None:
    """Whose wall stops a unit of `kind` owned by `player` crossing from a to b (None when nothing does)."""
    e = edge_between(a, b)
    wall = state.wall_on(e) if e is not None else None
    if wall is None:
        return None
    if wall.owner == player and is_knight(kind):
        return None
    return wall.owner


def may_wall(state: VigtavlState, player: str, e: Edge) -> str | None:
    """Why `player` may not put a wall on edge e now (None when he may): one of its hexes must be occupied by
    his units or developed by him, and the edge must be free."""
    if state.wall_on(e) is not None:
        return f"edge [{e.hex.q}, {e.hex.r}, {e.dir}] already holds a wall"
    g = geography(state.cells)
    ok = False
    for h in e.hexes:
        if h not in g.terrain:
            continue
        dev = state.development_at(h)
        if (dev is not None and dev.owner == player) or any(p.owner == player for p in state.units_at(h)):
            ok = True
    if not ok:
        return "walls may be built only on an edge of a hex the player occupies or has built on"
    return None


def _ends(e: Edge) -> tuple[Corner, Corner]:
    return (Corner(e.hex, e.dir - 1), Corner(e.hex, e.dir))


def wall_runs(state: VigtavlState, player: str) -> list[frozenset[Edge]]:
    """The player's walls grouped into runs joined end to end."""
    mine = [w.edge for w in state.walls if w.owner == player]
    left = set(mine)
    runs: list[frozenset[Edge]] = []
    while left:
        seed = left.pop()
        run = {seed}
        todo = [seed]
        while todo:
            e = todo.pop()
            ends = set(_ends(e))
            for other in list(left):
                if ends & set(_ends(other)):
                    left.discard(other)
                    run.add(other)
                    todo.append(other)
        runs.append(frozenset(run))
    return runs


def longest_wall(state: VigtavlState, player: str) -> int:
    """Edges in the player's longest run of walls."""
    return max((len(r) for r in wall_runs(state, player)), default=0)


def enclosed_hexes(state: VigtavlState, player: str) -> frozenset[Hex]:
    """Non-mountain hexes the player's walls (with mountains) enclose completely."""
    g = geography(state.cells)
    walls = {w.edge for w in state.walls if w.owner == player}
    found: set[Hex] = set()
    seen: set[Hex] = set()
    for start in sorted(g.terrain):
        if start in seen or g.terrain[start] == "mountain":
            continue
        region = {start}
        todo = [start]
        leaks = False
        while todo:
            h = todo.pop()
            for d in range(6):
                n = neighbor(h, d)
                if Edge(h, d) in walls:
                    continue
                if n not in g.terrain:
                    leaks = True
                    continue
                if g.terrain[n] == "mountain" or n in region:
                    continue
                region.add(n)
                todo.append(n)
        seen |= region
        if not leaks:
            found |= region
    return frozenset(found)
