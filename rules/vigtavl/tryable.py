"""What the players may try now (`Game.tryable_actions`) and what could be declared at a table point they click
(`actions_at`), refused ones included: the page offers them, and the ruling says why one is refused.

Nothing here is ruled: `apply` rules each action. The lists are complete where they are small and bounded by the
rule each action answers to, never sampled:
- attacks: every unit of the acting player that may attack (a knight or a caravel or galleon; aboard a freighter,
  an archer) on every opponent's combat unit within its attack range (1 for close combat), whatever stands in the
  way; from an adjacent hex also the close combat that moves in if it wins, and, for a ranged unit, the shot at
  range 1; every knight's own artillery fired at every opponent's unit within the artillery's range;
- seizures of every opponent's development and artillery on or beside each unit's hex, breaches of every
  opponent's wall on an edge of it;
- loads of each knight onto each of its owner's freighters within its movement, unloads of each knight aboard
  onto each land hex beside its freighter;
- builds of every kind, paid for or not, on every hex its placement rule allows ("on or beside a hex occupied by
  one of your units or developed by you" for a development; on or beside a developed hex for a knight or
  artillery, aboard a freighter beside one; the sea beside a coastal development for a ship), walls on every
  free edge of the player's land hexes (held or developed); discharge of each knight with its recruit on the
  player's nearest developed hex;
- placement: one ship of each kind the player has still to place on every sea hex it may take.
Anywhere else (a build on any hex, a move, any ship placed anywhere) is `at_point`'s: the actions at the hex the
players click, for the selected unit or for none.
"""

from __future__ import annotations

import math

from rules.engine import Action
from rules.hexgrid import Edge, Hex, direction_between, distance, edges_of, neighbors
from rules.vigtavl.moves import may_end, movement
from rules.vigtavl.state import Piece, VigtavlState, geography
from rules.vigtavl.units import (
    COMBAT_UNITS,
    DEVELOPMENT_KINDS,
    KNIGHTS,
    OCCUPANCY_WEIGHT,
    SHIPS,
    STATS,
    is_knight,
    is_ship,
)
from rules.vigtavl.walls import may_wall

UNIT_KINDS = (*KNIGHTS, "artillery", *SHIPS)
"""Every unit a player may build, in the stats table's order of knights, artillery, ships."""


def _hx(h: Hex) -> list[int]:
    return [h.q, h.r]


def _edge(e: Edge) -> list[int]:
    return [e.hex.q, e.hex.r, e.dir]


def _opponents(state: VigtavlState, player: str) -> list[Piece]:
    """Every opponent's combat unit on the map that can be attacked (not aboard a freighter)."""
    return [t for t in state.pieces if t.owner != player and t.in_play and t.kind in COMBAT_UNITS and t.aboard is None]


def may_attack(p: Piece) -> bool:
    """Knights and caravels and galleons attack; aboard a freighter only archers do; freighters and artillery never."""
    if p.kind not in COMBAT_UNITS or p.kind == "freighter":
        return False
    return p.aboard is None or p.kind == "archer"


def attacks_on(state: VigtavlState, p: Piece, targets: list[Piece]) -> list[Action]:
    """p's attacks on each target: the attack as the rule resolves it, and from an adjacent hex also the close
    combat that moves in if it wins and a ranged unit's shot at range 1."""
    h = state.where(p)
    out: list[Action] = []
    for t in targets:
        th = state.where(t)
        if h is None or th is None:
            continue
        out.append(Action("attack", p.id, {"target": t.id}))
        if distance(h, th) == 1 and p.aboard is None:
            out.append(Action("attack", p.id, {"target": t.id, "occupy": True}))
            if STATS[p.kind].attack_range:
                out.append(Action("attack", p.id, {"target": t.id, "mode": "ranged"}))
    return out


def guns_of(state: VigtavlState, p: Piece) -> list[Piece]:
    """The artillery a knight on the map may fire: its owner's, on its hex."""
    h = state.where(p)
    if not is_knight(p.kind) or p.aboard is not None or h is None:
        return []
    return [g for g in state.units_at(h) if g.kind == "artillery" and g.owner == p.owner]


def shots(state: VigtavlState, p: Piece, targets: list[Piece]) -> list[Action]:
    """Knight p firing each of its owner's artillery on its hex at each target."""
    return [Action("fire_artillery", p.id, {"artillery": g.id, "target": t.id}) for g in guns_of(state, p)
            for t in targets]


def _in_reach(state: VigtavlState, p: Piece, targets: list[Piece], reach: int) -> list[Piece]:
    h = state.where(p)
    return [t for t in targets if h is not None and (th := state.where(t)) is not None and distance(h, th) <= reach]


def _unit_actions(state: VigtavlState, p: Piece) -> list[Action]:
    """Everything one unit of the acting player may try (see the module docstring)."""
    h = state.where(p)
    if h is None:
        return []
    g = geography(state.cells)
    out: list[Action] = []
    if is_knight(p.kind) and p.aboard is not None:
        out += [Action("unload", p.id, {"to": _hx(n)}) for n in neighbors(h) if g.kind(n) == "land"]
    if is_knight(p.kind) and p.aboard is None:
        out += [Action("load", p.id, {"freighter": f.id}) for f in state.pieces
                if f.kind == "freighter" and f.owner == p.owner and f.in_play
                and (fh := state.where(f)) is not None and distance(fh, h) <= movement(p)]
    if state.phase == "battle":
        foes = _opponents(state, p.owner)
        if may_attack(p):
            out += attacks_on(state, p, _in_reach(state, p, foes, max(1, STATS[p.kind].attack_range)))
        out += shots(state, p, _in_reach(state, p, foes, STATS["artillery"].attack_range))
        for x in (h, *neighbors(h)):
            dev = state.development_at(x)
            if dev is not None and dev.owner != p.owner:
                out.append(Action("seize", p.id, {"hex": _hx(x)}))
            if any(a.kind == "artillery" and a.owner != p.owner for a in state.units_at(x)):
                out.append(Action("seize", p.id, {"hex": _hx(x), "target": "artillery"}))
        if p.aboard is None:
            out += [Action("breach", p.id, {"edge": _edge(e)}) for e in edges_of(h)
                    if (w := state.wall_on(e)) is not None and w.owner != p.owner]
    devs = sorted((distance(d.hex, h), d.hex) for d in state.developments if d.owner == p.owner)
    if is_knight(p.kind) and devs:
        out.append(Action("discharge", p.id, {"to": _hx(devs[0][1])}))
    return out


def _builds(state: VigtavlState, player: str) -> list[Action]:
    """Every build of every kind on every hex its placement rule allows (see the module docstring)."""
    g = geography(state.cells)
    mine = sorted(d.hex for d in state.developments if d.owner == player)
    held = sorted({h for p in state.pieces if p.owner == player and p.in_play and p.aboard is None
                   and (h := p.hex) is not None})
    out: list[Action] = []
    sites = sorted({n for h in held + mine for n in (h, *neighbors(h)) if g.kind(n) == "land"
                    and state.development_at(n) is None and not state.holders(n) - {player}})
    out += [Action("build", None, {"kind": kind, "hex": _hx(h)}) for kind in DEVELOPMENT_KINDS for h in sites]
    land = sorted({n for d in mine for n in (d, *neighbors(d)) if g.kind(n) == "land"})
    out += [Action("build", None, {"kind": kind, "hex": _hx(h)}) for kind in (*KNIGHTS, "artillery") for h in land]
    sea = sorted({n for d in mine if g.coastal(d) for n in neighbors(d) if g.kind(n) == "sea"})
    out += [Action("build", None, {"kind": kind, "hex": _hx(h)}) for kind in SHIPS for h in sea]
    ferries = [f for f in state.pieces if f.kind == "freighter" and f.owner == player and f.in_play
               and (fh := state.where(f)) is not None and any(distance(fh, d) == 1 for d in mine)]
    out += [Action("build", None, {"kind": kind, "aboard": f.id}) for kind in KNIGHTS for f in ferries]
    edges = sorted({e for h in held + mine if g.kind(h) == "land" for e in edges_of(h) if may_wall(state, player, e) is None},
                   key=lambda e: (e.hex, e.dir))
    out += [Action("build", None, {"kind": "wall", "edge": _edge(e)}) for e in edges]
    return out


def _placements(state: VigtavlState) -> list[Action]:
    """One unplaced ship of each kind of the player's on every sea hex it may be placed on."""
    player = state.player
    g = geography(state.cells)
    ships: dict[str, Piece] = {}
    for p in state.pieces:
        if p.owner == player and is_ship(p.kind) and p.hex is None and p.sunk_by is None:
            ships.setdefault(p.kind, p)
    seas = [h for h, t in sorted(g.terrain.items()) if t == "sea"]
    return [Action("place", s.id, {"hex": _hx(h)}) for s in ships.values() for h in seas
            if may_end(state, player, h, OCCUPANCY_WEIGHT[s.kind], "sea") is None]


def tryable(state: VigtavlState) -> list[Action]:
    """Every action the acting player may try now, refused ones included, each once (see the module docstring)."""
    if state.phase == "over":
        return []
    if state.phase == "placement":
        return _placements(state)
    now = state.now
    out = [Action("end_retaliation") if now.retaliating is not None else Action("end_turn")]
    if now.active is not None:
        out.append(Action("finish"))
    player = state.player
    for p in state.pieces:
        if p.owner == player and p.in_play and p.kind in COMBAT_UNITS:
            out += _unit_actions(state, p)
    if now.retaliating is None:
        out += _builds(state, player)
    return _once(out)


def nearest_edge(state: VigtavlState, x: float, y: float) -> Edge:
    """The edge of the clicked hex nearest the table point (x, y), inches."""
    h = state.layout.from_table(x, y)[0]
    d = direction_between(h, state.layout.across(x, y))
    assert d is not None  # `across` is always a neighbour
    return Edge(h, d)


def at_point(state: VigtavlState, unit: int | None, at: tuple[float, float]) -> list[Action]:
    """The actions that could be declared at table point `at` (inches), legal or not.

    With a unit selected: move (or unload) it to the clicked hex, towing its owner's artillery if it may; load it on
    its owner's freighter there; attack each opponent's unit there (and fire its owner's artillery at it); seize the
    opponent's development or artillery there; breach the opponent's wall on the clicked hex's nearest edge, or
    build a wall on that edge; discharge it and recruit on the hex. A selected artillery piece: each knight on its
    hex tows it there or fires it at what stands there. With no unit: in the placement phase each of the player's
    ships still to place, put there; later every development and unit the hex may take (a development or a knight
    or artillery on land, a ship or a knight aboard the player's freighter at sea, a development on a mountain,
    refused), a wall on the nearest edge, or one of the player's walls moved there."""
    x, y = float(at[0]), float(at[1])
    if state.phase == "over" or not (math.isfinite(x) and math.isfinite(y)):
        return []
    h = state.layout.from_table(x, y)[0]
    e = nearest_edge(state, x, y)
    g = geography(state.cells)
    ground = g.kind(h)
    wall = state.wall_on(e)
    on_map = any(g.kind(c) is not None for c in e.hexes)
    out: list[Action] = []
    if unit is None:
        if state.phase == "placement":
            return [Action("place", p.id, {"hex": _hx(h)}) for p in state.pieces if p.owner == state.player
                    and is_ship(p.kind) and p.hex is None and p.sunk_by is None]
        if ground in ("land", "mountain"):
            out += [Action("build", None, {"kind": k, "hex": _hx(h)}) for k in DEVELOPMENT_KINDS]
        if ground == "land":
            out += [Action("build", None, {"kind": k, "hex": _hx(h)}) for k in (*KNIGHTS, "artillery")]
        if ground == "sea":
            out += [Action("build", None, {"kind": k, "hex": _hx(h)}) for k in SHIPS]
            out += [Action("build", None, {"kind": k, "aboard": f.id}) for f in state.units_at(h)
                    if f.kind == "freighter" and f.owner == state.player for k in KNIGHTS]
        if wall is None and on_map:
            out.append(Action("build", None, {"kind": "wall", "edge": _edge(e)}))
            out += [Action("move_wall", None, {"from": _edge(w.edge), "to": _edge(e)}) for w in state.walls
                    if w.owner == state.player]
        return _once(out)
    p = state.piece(unit)
    if p is None:
        return []
    if state.phase == "placement":
        return [Action("place", p.id, {"hex": _hx(h)})] if is_ship(p.kind) and p.hex is None else []
    ph = state.where(p)
    if not p.in_play or ph is None:
        return []
    foes = [t for t in state.units_at(h) if t.owner != p.owner and t.kind in COMBAT_UNITS]
    if p.kind == "artillery":
        for k in state.units_at(ph):
            if is_knight(k.kind) and k.owner == p.owner:
                if h != ph:
                    out.append(Action("tow", k.id, {"to": _hx(h), "artillery": p.id}))
                out += [Action("fire_artillery", k.id, {"artillery": p.id, "target": t.id}) for t in foes]
        return _once(out)
    if p.kind not in COMBAT_UNITS:
        return []
    if p.aboard is not None:
        if h != ph:
            out.append(Action("unload" if is_knight(p.kind) else "move", p.id, {"to": _hx(h)}))
    elif h != ph:
        out.append(Action("move", p.id, {"to": _hx(h)}))
        if is_knight(p.kind):
            out += [Action("tow", p.id, {"to": _hx(h), "artillery": a.id}) for a in state.units_at(ph)
                    if a.kind == "artillery" and a.owner == p.owner]
            out += [Action("load", p.id, {"freighter": f.id}) for f in state.units_at(h)
                    if f.kind == "freighter" and f.owner == p.owner]
    out += attacks_on(state, p, foes) + shots(state, p, foes)
    dev = state.development_at(h)
    if dev is not None and dev.owner != p.owner:
        out.append(Action("seize", p.id, {"hex": _hx(h)}))
    if any(a.kind == "artillery" and a.owner != p.owner for a in state.units_at(h)):
        out.append(Action("seize", p.id, {"hex": _hx(h), "target": "artillery"}))
    if wall is not None and wall.owner != p.owner:
        out.append(Action("breach", p.id, {"edge": _edge(e)}))
    elif wall is None and on_map:
        out.append(Action("build", None, {"kind": "wall", "edge": _edge(e)}))
    if is_knight(p.kind) and ground == "land":
        out.append(Action("discharge", p.id, {"to": _hx(h)}))
    return _once(out)


def _once(actions: list[Action]) -> list[Action]:
    """Each action once, in the order first given."""
    seen: set[str] = set()
    out = []
    for a in actions:
        key = repr(a.to_json())
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out
