"""Vigtavl's game state as immutable values, and its JSON form (dump/load round-trip exactly).

A piece is named by the tag id on its base. Where a piece is: `hex` on the map; `aboard` a freighter (its
hex is then the freighter's); a prisoner (`captor` set, `hex` the captor's developed hex holding it); sunk
(`sunk_by` set, in that player's ship graveyard); or not yet placed (placement phase: `hex` None).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rules.engine import ScenarioError
from rules.hexgrid import Edge, Hex, HexBoard, Layout, hexagon, neighbors, parse_hex, parse_layout
from rules.vigtavl.units import (
    LAST_ROUND,
    MAP_SIDE_BY_PLAYERS,
    OCCUPANCY_WEIGHT,
    PHASES,
    ROUNDS_PER_PHASE,
    STATS,
    canonical,
)

TERRAINS = ("land", "sea", "mountain")


@dataclass(frozen=True)
class Piece:
    """A unit or artillery: id (tag), kind (our name, see vigtavl_units), owner (player name) and where it is."""

    id: int
    kind: str
    owner: str
    hex: Hex | None = None
    aboard: int | None = None
    captor: str | None = None
    sunk_by: str | None = None

    @property
    def in_play(self) -> bool:
        """On the map (or aboard) and free: not a prisoner, not sunk, placed."""
        return self.captor is None and self.sunk_by is None and (self.hex is not None or self.aboard is not None)


def title(p: Piece) -> str:
    """A piece as a player names it: its kind and tag, "Infantry 10", "Galleon 15"."""
    return f"{p.kind.capitalize()} {p.id}"


@dataclass(frozen=True)
class Development:
    """An encampment, fort or castle on a land hex."""

    hex: Hex
    kind: str
    owner: str


@dataclass(frozen=True)
class Wall:
    """A wall on a hex edge, owned by the player who built (or last seized) it."""

    edge: Edge
    owner: str


@dataclass(frozen=True)
class Claim:
    """Victory tokens a player collected: kind (conquer, battle, rescue, last development, citadel, complex,
    great wall, general, admiral, builder), how many, and what for."""

    player: str
    kind: str
    tokens: int
    note: str = ""


@dataclass(frozen=True)
class TurnState:
    """What the current turn has used up; reset when a turn ends.

    active: the unit whose actions are being executed. used: actions each activated unit has taken.
    spent: units laid on their side. open_moves: knights that boarded a freighter this turn and may still
    disembark, with the movement they have used. fronts: the front of each attacked hex (direction 0..5).
    attacks / breach_tries: counts for attrition. losers: players who lost a battle or a development during
    the current activation (they retaliate when it ends). retaliating: the player now retaliating, if any.
    """

    built: tuple[str, ...] = ()
    wall_moved: bool = False
    discharged: bool = False
    active: int | None = None
    used: tuple[tuple[int, tuple[str, ...]], ...] = ()
    spent: tuple[int, ...] = ()
    open_moves: tuple[tuple[int, int], ...] = ()
    breached: tuple[int, ...] = ()
    fronts: tuple[tuple[Hex, int], ...] = ()
    attacks: tuple[tuple[str, Hex, int, int], ...] = ()
    breach_tries: tuple[tuple[str, Edge, int], ...] = ()
    seized: tuple[Hex, ...] = ()
    losers: tuple[str, ...] = ()
    retaliating: str | None = None
    retaliation_queue: tuple[str, ...] = ()
    retaliation_unit: int | None = None

    def used_by(self, unit: int) -> tuple[str, ...]:
        return next((acts for u, acts in self.used if u == unit), ())

    def front_of(self, h: Hex) -> int | None:
        return next((d for x, d in self.fronts if x == h), None)

    def attack_count(self, player: str, h: Hex, d: int) -> int:
        return next((n for p, x, dd, n in self.attacks if (p, x, dd) == (player, h, d)), 0)

    def breach_count(self, player: str, e: Edge) -> int:
        return next((n for p, x, n in self.breach_tries if (p, x) == (player, e)), 0)

    def open_move(self, unit: int) -> int | None:
        return next((n for u, n in self.open_moves if u == unit), None)


@dataclass(frozen=True)
class VigtavlState:
    """The whole game. cells: (hex, terrain) sorted; players in seat order; round 1..6 (7 = over); turn: the
    seat whose turn it is; gold/silver by seat; winds "clockwise" or "counter-clockwise"."""

    cells: tuple[tuple[Hex, str], ...]
    layout: Layout
    players: tuple[str, ...]
    winds: str
    round: int = 1
    turn: int = 0
    gold: tuple[int, ...] = ()
    silver: tuple[int, ...] = ()
    pieces: tuple[Piece, ...] = ()
    developments: tuple[Development, ...] = ()
    walls: tuple[Wall, ...] = ()
    claims: tuple[Claim, ...] = ()
    now: TurnState = field(default_factory=TurnState)

    # ------------------------------------------------------------------ reading
    @property
    def phase(self) -> str:
        """"placement", "build", "battle" or "over"."""
        if self.round > LAST_ROUND:
            return "over"
        return PHASES[(self.round - 1) // ROUNDS_PER_PHASE]

    @property
    def player(self) -> str:
        """Who acts now: the retaliating player during a retaliation, else the player whose turn it is."""
        return self.now.retaliating or self.players[self.turn]

    def seat(self, player: str) -> int:
        return self.players.index(player)

    def piece(self, unit: int) -> Piece | None:
        return next((p for p in self.pieces if p.id == unit), None)

    def where(self, p: Piece) -> Hex | None:
        """The hex a piece stands on (a passenger: its freighter's hex)."""
        if p.aboard is not None:
            carrier = self.piece(p.aboard)
            return carrier.hex if carrier is not None else None
        return p.hex

    def passengers(self, freighter: int) -> tuple[Piece, ...]:
        return tuple(p for p in self.pieces if p.aboard == freighter and p.in_play)

    def development_at(self, h: Hex) -> Development | None:
        return next((d for d in self.developments if d.hex == h), None)

    def wall_on(self, e: Edge) -> Wall | None:
        return next((w for w in self.walls if w.edge == e), None)

    def units_at(self, h: Hex) -> tuple[Piece, ...]:
        """Free pieces standing on a hex (not passengers, not prisoners)."""
        return tuple(p for p in self.pieces if p.hex == h and p.aboard is None and p.in_play)

    def prisoners_at(self, h: Hex) -> tuple[Piece, ...]:
        return tuple(p for p in self.pieces if p.hex == h and p.captor is not None)

    def occupancy(self, h: Hex) -> int:
        """Occupancy of a hex: units 1, artillery 2, encampment 1, fort 2, castle 3; prisoners and passengers 0."""
        total = sum(OCCUPANCY_WEIGHT[p.kind] for p in self.units_at(h))
        dev = self.development_at(h)
        return total + (OCCUPANCY_WEIGHT[dev.kind] if dev else 0)

    def holders(self, h: Hex) -> frozenset[str]:
        """Players occupying a hex with units, artillery or a development."""
        found = {p.owner for p in self.units_at(h)}
        dev = self.development_at(h)
        if dev:
            found.add(dev.owner)
        return frozenset(found)

    def tokens(self, player: str) -> int:
        return sum(c.tokens for c in self.claims if c.player == player)

    def claimed(self, player: str, kind: str) -> bool:
        return any(c.player == player and c.kind == kind for c in self.claims)

    # ------------------------------------------------------------------ writing
    def with_piece(self, p: Piece) -> VigtavlState:
        return replace(self, pieces=tuple(sorted([x for x in self.pieces if x.id != p.id] + [p], key=lambda x: x.id)))

    def with_purse(self, player: str, gold: int | None = None, silver: int | None = None) -> VigtavlState:
        i = self.seat(player)
        g, s = list(self.gold), list(self.silver)
        if gold is not None:
            g[i] = gold
        if silver is not None:
            s[i] = silver
        return replace(self, gold=tuple(g), silver=tuple(s))

    def with_now(self, **changes: Any) -> VigtavlState:
        return replace(self, now=replace(self.now, **changes))

    def claim(self, player: str, kind: str, tokens: int, note: str = "") -> VigtavlState:
        return replace(self, claims=self.claims + (Claim(player, kind, tokens, note),))


@functools.lru_cache(maxsize=64)
def geography(cells: tuple[tuple[Hex, str], ...]) -> Geography:
    """Derived facts about a map (cached: the map never changes during a game)."""
    return Geography(cells)


class Geography:
    """The map's terrain, its border and its six sides (for the prevailing winds).

    The centre is the map cell nearest the cells' mean; a border cell is one with a neighbour off the map;
    its side k (0..5) is the sector between the directions k and k+1 seen from the centre, so on a hexagonal
    map side k runs from corner centre + R*DIRECTIONS[k] to the next corner (corner cells belong to two sides).
    """

    def __init__(self, cells: tuple[tuple[Hex, str], ...]) -> None:

        self.terrain: dict[Hex, str] = dict(cells)
        qs = sum(h.q for h in self.terrain) / len(self.terrain)
        rs = sum(h.r for h in self.terrain) / len(self.terrain)
        self.centre = min(self.terrain, key=lambda h: ((h.q - qs) ** 2 + (h.r - rs) ** 2 + (h.q - qs) * (h.r - rs), h))
        self.border = frozenset(h for h in self.terrain if any(n not in self.terrain for n in neighbors(h)))
        sides: dict[Hex, frozenset[int]] = {}
        for h in self.border:
            d = h - self.centre
            x, y = math.sqrt(3) * d.q + math.sqrt(3) / 2 * d.r, -1.5 * d.r
            ang = math.degrees(math.atan2(y, x)) % 360.0
            k = int(ang // 60.0) % 6
            found = {k}
            if abs(ang - 60.0 * round(ang / 60.0)) < 1e-6:
                found = {int(round(ang / 60.0)) % 6, (int(round(ang / 60.0)) - 1) % 6}
            sides[h] = frozenset(found)
        self.sides = sides

    def kind(self, h: Hex) -> str | None:
        return self.terrain.get(h)

    def border_sea(self, side: int) -> tuple[Hex, ...]:
        """The border sea cells on one side of the map."""
        return tuple(sorted(h for h, s in self.sides.items() if side in s and self.terrain[h] == "sea"))

    def coastal(self, h: Hex) -> bool:
        """A land cell with a sea neighbour."""
        return self.terrain.get(h) == "land" and any(self.terrain.get(n) == "sea" for n in neighbors(h))


def standard_map_side(players: int) -> int:
    """Setup, Size: hexes along each side of the map for 2, 3 or 4 players (6, 7, 8)."""

    if players not in MAP_SIDE_BY_PLAYERS:
        raise ScenarioError(f"Vigtavl is for 2 to 4 players; got {players}.")
    return MAP_SIDE_BY_PLAYERS[players]


def hexagon_side(cells: tuple[tuple[Hex, str], ...]) -> int | None:
    """The number of hexes along each side if the map is a regular hexagon, else None."""
    g = geography(cells)
    radius = max((g.centre - h).length() for h in g.terrain)
    return radius + 1 if set(hexagon(radius, g.centre)) == set(g.terrain) else None


# ---------------------------------------------------------------------------------------------- JSON


def _hex(v: Any, where: str) -> Hex:
    try:
        return parse_hex(v, where)
    except ScenarioError:
        raise
    except Exception as err:  # BoardError is a RulesInputError; keep its sentence, name it a scenario error
        raise ScenarioError(str(err)) from None


def _edge_json(e: Edge) -> list[int]:
    return [e.hex.q, e.hex.r, e.dir]


def parse_edge(v: Any, where: str) -> Edge:
    """An Edge from [q, r, dir] or {"hex": [q, r], "dir": d}."""
    if isinstance(v, Mapping):
        d = v.get("dir")
        h = _hex(v.get("hex"), where)
    elif isinstance(v, list | tuple) and len(v) == 3:
        h = _hex(list(v[:2]), where)
        d = v[2]
    else:
        raise ScenarioError(f'{where} must be an edge [q, r, dir] or {{"hex": [q, r], "dir": 0..5}}; got {v!r}.')
    if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= 5:
        raise ScenarioError(f"{where}: dir must be a direction 0..5; got {d!r}.")
    return Edge(h, d)


def dump(state: VigtavlState) -> dict[str, Any]:
    """The state as JSON (hexes as [q, r], edges as [q, r, dir])."""
    n = state.now

    def hx(h: Hex | None) -> list[int] | None:
        return None if h is None else [h.q, h.r]

    return {
        "cells": [[h.q, h.r, t] for h, t in state.cells],
        "layout": state.layout.to_json(),
        "players": list(state.players),
        "winds": state.winds,
        "round": state.round,
        "turn": state.turn,
        "gold": list(state.gold),
        "silver": list(state.silver),
        "pieces": [
            {"id": p.id, "kind": p.kind, "owner": p.owner, "hex": hx(p.hex), "aboard": p.aboard,
             "captor": p.captor, "sunk_by": p.sunk_by}
            for p in state.pieces
        ],
        "developments": [{"hex": hx(d.hex), "kind": d.kind, "owner": d.owner} for d in state.developments],
        "walls": [{"edge": _edge_json(w.edge), "owner": w.owner} for w in state.walls],
        "claims": [[c.player, c.kind, c.tokens, c.note] for c in state.claims],
        "now": {
            "built": list(n.built),
            "wall_moved": n.wall_moved,
            "discharged": n.discharged,
            "active": n.active,
            "used": [[u, list(a)] for u, a in n.used],
            "spent": list(n.spent),
            "open_moves": [list(x) for x in n.open_moves],
            "breached": list(n.breached),
            "fronts": [[h.q, h.r, d] for h, d in n.fronts],
            "attacks": [[p, h.q, h.r, d, c] for p, h, d, c in n.attacks],
            "breach_tries": [[p, _edge_json(e), c] for p, e, c in n.breach_tries],
            "seized": [hx(h) for h in n.seized],
            "losers": list(n.losers),
            "retaliating": n.retaliating,
            "retaliation_queue": list(n.retaliation_queue),
            "retaliation_unit": n.retaliation_unit,
        },
    }


def load(obj: Mapping[str, Any]) -> VigtavlState:
    """A state from `dump` output; raises ScenarioError naming the field that cannot be read."""
    try:
        n = obj.get("now", {})
        hx = lambda v: None if v is None else Hex(int(v[0]), int(v[1]))  # noqa: E731
        now = TurnState(
            built=tuple(n.get("built", ())),
            wall_moved=bool(n.get("wall_moved", False)),
            discharged=bool(n.get("discharged", False)),
            active=n.get("active"),
            used=tuple((int(u), tuple(a)) for u, a in n.get("used", ())),
            spent=tuple(int(u) for u in n.get("spent", ())),
            open_moves=tuple((int(u), int(m)) for u, m in n.get("open_moves", ())),
            breached=tuple(int(u) for u in n.get("breached", ())),
            fronts=tuple((Hex(int(q), int(r)), int(d)) for q, r, d in n.get("fronts", ())),
            attacks=tuple((str(p), Hex(int(q), int(r)), int(d), int(c)) for p, q, r, d, c in n.get("attacks", ())),
            breach_tries=tuple((str(p), Edge(Hex(e[0], e[1]), e[2]), int(c)) for p, e, c in n.get("breach_tries", ())),
            seized=tuple(Hex(int(v[0]), int(v[1])) for v in n.get("seized", ())),
            losers=tuple(n.get("losers", ())),
            retaliating=n.get("retaliating"),
            retaliation_queue=tuple(n.get("retaliation_queue", ())),
            retaliation_unit=n.get("retaliation_unit"),
        )
        return VigtavlState(
            cells=tuple((Hex(int(q), int(r)), str(t)) for q, r, t in obj["cells"]),
            layout=parse_layout(obj["layout"]),
            players=tuple(obj["players"]),
            winds=str(obj["winds"]),
            round=int(obj["round"]),
            turn=int(obj["turn"]),
            gold=tuple(int(g) for g in obj["gold"]),
            silver=tuple(int(s) for s in obj["silver"]),
            pieces=tuple(
                Piece(int(p["id"]), str(p["kind"]), str(p["owner"]), hx(p["hex"]), p.get("aboard"),
                      p.get("captor"), p.get("sunk_by"))
                for p in obj["pieces"]
            ),
            developments=tuple(Development(Hex(int(d["hex"][0]), int(d["hex"][1])), str(d["kind"]), str(d["owner"]))
                               for d in obj["developments"]),
            walls=tuple(Wall(Edge(Hex(w["edge"][0], w["edge"][1]), w["edge"][2]), str(w["owner"])) for w in obj["walls"]),
            claims=tuple(Claim(str(p), str(k), int(t), str(note)) for p, k, t, note in obj["claims"]),
            now=now,
        )
    except ScenarioError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise ScenarioError(f"The Vigtavl state cannot be read ({err!s}); pass what dump_state produced.") from None


def board_cells(board: HexBoard) -> tuple[tuple[Hex, str], ...]:
    """(hex, terrain) pairs, sorted, from a parsed board; raises ScenarioError for a terrain Vigtavl lacks."""
    out = []
    for h, c in sorted(board.cells.items()):
        if c.terrain not in TERRAINS:
            raise ScenarioError(f"Board cell [{h.q}, {h.r}] is {c.terrain!r}; Vigtavl maps have land, sea and mountain.")
        out.append((h, c.terrain))
    return tuple(out)


def piece_kind(profile: Any, where: str) -> str:
    """Our name for a profile; ScenarioError naming the accepted names otherwise."""
    kind = canonical(profile) if isinstance(profile, str) else None
    if kind is None or kind in ("encampment", "fort", "castle"):
        names = "infantry, archer, cavalry, caravel, freighter, galleon, artillery"
        raise ScenarioError(f"{where}: profile {profile!r} is not a Vigtavl unit; use one of {names}.")
    return kind


def cost(kind: str) -> int:
    return STATS[kind].cost
