"""Candidate Vigtavl actions for `legal_actions`: a finite, representative set (each is then checked by applying it).

Continuous choices are sampled evenly: at most a few destinations per unit, a few build sites per kind.
"""

from __future__ import annotations

from rules.engine import Action
from rules.hexgrid import Hex, edges_of, neighbors
from rules.vigtavl.moves import destinations, may_end, movement
from rules.vigtavl.state import Piece, VigtavlState, geography
from rules.vigtavl.units import (
    COMBAT_UNITS,
    DEVELOPMENT_KINDS,
    KNIGHTS,
    OCCUPANCY_WEIGHT,
    SHIPS,
    STATS,
    is_knight,
)

PER_UNIT = 3
PER_KIND = 2


def spread(items: list[Hex], n: int) -> list[Hex]:
    """Up to n items taken evenly from a sorted list."""
    items = sorted(items)
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def _hex(h: Hex) -> list[int]:
    return [h.q, h.r]


def _unit_actions(state: VigtavlState, p: Piece) -> list[Action]:
    out: list[Action] = []
    start = state.where(p)
    if start is None or p.kind not in COMBAT_UNITS:
        return out
    now = state.now
    used = now.used_by(p.id)
    open_move = now.open_move(p.id)
    if "move" not in used or open_move is not None:
        if not (p.aboard is not None and not is_knight(p.kind)):
            budget = movement(p) - (open_move or 0)
            for h in spread(list(destinations(state, p, budget, start)), PER_UNIT):
                out.append(Action("move", p.id, {"to": _hex(h)}))
        if is_knight(p.kind) and p.aboard is None and "move" not in used:
            for f in state.pieces:
                fh = state.where(f)
                if f.kind == "freighter" and f.owner == p.owner and f.in_play and fh is not None \
                        and (fh - start).length() <= movement(p):
                    out.append(Action("load", p.id, {"freighter": f.id}))
    if state.phase == "battle" and "attack" not in used:
        for t in state.pieces:
            th = state.where(t)
            if t.owner == p.owner or not t.in_play or th is None or t.kind not in COMBAT_UNITS or t.aboard is not None:
                continue
            if (th - start).length() <= max(1, STATS[p.kind].attack_range):
                out.append(Action("attack", p.id, {"target": t.id}))
                gun = next((g for g in state.units_at(start) if g.kind == "artillery" and g.owner == p.owner), None)
                if gun is not None and is_knight(p.kind):
                    out.append(Action("fire_artillery", p.id, {"artillery": gun.id, "target": t.id}))
    if state.phase == "battle":
        for h in [start, *neighbors(start)]:
            dev = state.development_at(h)
            if dev is not None and dev.owner != p.owner:
                out.append(Action("seize", p.id, {"hex": _hex(h)}))
            if any(g.kind == "artillery" and g.owner != p.owner for g in state.units_at(h)):
                out.append(Action("seize", p.id, {"hex": _hex(h), "target": "artillery"}))
        if p.aboard is None:
            for e in edges_of(start):
                w = state.wall_on(e)
                if w is not None and w.owner != p.owner:
                    out.append(Action("breach", p.id, {"edge": [e.hex.q, e.hex.r, e.dir]}))
    return out


def _builds(state: VigtavlState, player: str) -> list[Action]:
    out: list[Action] = []
    g = geography(state.cells)
    gold = state.gold[state.seat(player)]
    mine = [d.hex for d in state.developments if d.owner == player]
    occupied = sorted({h for p in state.pieces if p.owner == player and p.in_play and (h := state.where(p)) is not None})
    near = sorted({n for h in occupied + mine for n in (h, *neighbors(h)) if g.kind(n) == "land"})
    for kind in DEVELOPMENT_KINDS:
        if STATS[kind].cost <= gold:
            ok = [h for h in near if state.development_at(h) is None
                  and may_end(state, player, h, OCCUPANCY_WEIGHT[kind], "land") is None]
            out += [Action("build", None, {"kind": kind, "hex": _hex(h)}) for h in spread(ok, PER_KIND)]
    if gold >= 1:
        edges = sorted({e for h in occupied + mine for e in edges_of(h) if state.wall_on(e) is None},
                       key=lambda e: (e.hex, e.dir))
        out += [Action("build", None, {"kind": "wall", "edge": [e.hex.q, e.hex.r, e.dir]}) for e in edges[:: max(1, len(edges) // PER_KIND)][:PER_KIND]]
    if mine:
        land = sorted({n for d in mine for n in (d, *neighbors(d)) if g.kind(n) == "land"})
        sea = sorted({n for d in mine if g.coastal(d) for n in neighbors(d) if g.kind(n) == "sea"})
        for kind in (*KNIGHTS, "artillery"):
            if STATS[kind].cost <= gold:
                out += [Action("build", None, {"kind": kind, "hex": _hex(h)}) for h in spread(land, PER_KIND)]
        for kind in SHIPS:
            if STATS[kind].cost <= gold:
                out += [Action("build", None, {"kind": kind, "hex": _hex(h)}) for h in spread(sea, PER_KIND)]
        if not state.now.discharged:
            knights = [p for p in state.pieces if p.owner == player and p.in_play and is_knight(p.kind) and p.aboard is None]
            if knights:
                out += [Action("discharge", knights[0].id, {"to": _hex(h)}) for h in spread(land, 1)]
    return out


def candidates(state: VigtavlState) -> list[Action]:
    """Actions worth checking now (some may prove illegal; legal_actions keeps the legal ones)."""
    phase = state.phase
    if phase == "over":
        return []
    player = state.player
    if phase == "placement":
        g = geography(state.cells)
        ships = [p for p in state.pieces if p.owner == player and p.kind in SHIPS and p.hex is None and p.sunk_by is None]
        seas = [h for h, t in g.terrain.items() if t == "sea" and may_end(state, player, h, 1, "sea") is None]
        return [Action("place", s.id, {"hex": _hex(h)}) for s in ships[:2] for h in spread(seas, 4)]
    now = state.now
    out: list[Action] = []
    if now.retaliating is not None:
        out.append(Action("end_retaliation"))
        units = [state.piece(now.retaliation_unit)] if now.retaliation_unit is not None else [
            p for p in state.pieces if p.owner == player and p.in_play and p.id not in now.spent]
        for p in units:
            if p is not None:
                out += _unit_actions(state, p)
        return out
    out.append(Action("end_turn"))
    if now.active is not None:
        out.append(Action("finish"))
        active = state.piece(now.active)
        if active is not None:
            out += _unit_actions(state, active)
    if not (now.active is not None and now.losers):
        for p in state.pieces:
            if p.owner == player and p.in_play and p.id not in now.spent and p.id != now.active:
                out += _unit_actions(state, p)
    out += _builds(state, player)
    return out
