"""Rise of the Magni: heroes, teams, and the score of tiles on the 19-cell board.

The rule book (seed 001), in our words:

- A team is exactly 10 Hero Units, each rated 1 to 4; the team's ratings add up to no more than 23.
- A hero's three attack values sit on the six edges of its hexagon: LAV on the NW and SW edges, CAV on the
  N and S edges, RAV on the NE and SE edges. N and S edges mean flat-topped hexes, so the board is laid
  out "flat"; in our direction numbering (rules/hexgrid.py) that is
      direction 0 SE -> RAV, 1 NE -> RAV, 2 N -> CAV, 3 NW -> LAV, 4 SW -> LAV, 5 S -> CAV.
  Tiles are not turned: a hero's N edge is always the board's N edge.
- Skirmish: two adjacent tiles of opposing players. Each hero fights with the value on the edge it shares
  with the other (our reading of "the corresponding attack value": a hero whose enemy lies to its NE uses
  its RAV; the enemy, which has the hero to its SW, uses its LAV). The higher value wins one point; a draw
  scores nothing. The skirmish between the two Lead units (the centre cell and the cell directly above it,
  its N neighbour) scores nothing.
- Fortification: three allied tiles around one corner score one point for their player.
- The game ends when the map is full (19 tiles); the higher score wins. Equal scores: a draw (the seed is
  silent; we call it a draw).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rules.engine import RosterError, UnitId
from rules.hexgrid import Cell, Corner, Edge, Hex, HexBoard, direction_between, hexagon, neighbor

TEAM_SIZE = 10
MAX_TEAM_RATING = 23
RATINGS = range(1, 5)
BOARD_CELLS = hexagon(2)
"""The 19-cell board: the centre and two rings around it."""
CENTRE = Hex(0, 0)
ABOVE = neighbor(CENTRE, 2)
"""The cell directly above the centre (its N neighbour): where the losing Lead unit goes."""
LEAD_EDGE = Edge(CENTRE, 2)
EDGE_VALUE = ("rav", "rav", "cav", "lav", "lav", "cav")
"""Which attack value a hero fights with across its edge in direction 0..5 (flat layout: SE NE N NW SW S)."""
EDGE_NAMES = ("SE", "NE", "N", "NW", "SW", "S")


@dataclass(frozen=True)
class Hero:
    """One Hero Unit tile: the tag on it, its unique name, its player, its rating and attack values."""

    tag: UnitId
    name: str
    owner: str
    rating: int
    lav: int
    cav: int
    rav: int

    def value(self, d: int) -> int:
        """The attack value on the edge in direction d (0..5)."""
        return int(getattr(self, EDGE_VALUE[d % 6]))

    def to_json(self) -> dict[str, Any]:
        return {
            "tag": self.tag,
            "name": self.name,
            "owner": self.owner,
            "rating": self.rating,
            "lav": self.lav,
            "cav": self.cav,
            "rav": self.rav,
        }


def parse_hero(entry: Mapping[str, Any], where: str) -> Hero:
    """A Hero from {"tag", "name", "owner", "rating", "lav", "cav", "rav"}; raises RosterError naming the field."""
    tag = entry.get("tag")
    if isinstance(tag, bool) or not isinstance(tag, int):
        raise RosterError(f'{where} has no whole-number "tag".')
    where = f"{where} (tag {tag})"
    owner = entry.get("owner")
    if not isinstance(owner, str) or not owner:
        raise RosterError(f'{where} has no "owner"; name the player, e.g. "red".')
    name = entry.get("name", entry.get("profile", f"hero {tag}"))
    if not isinstance(name, str) or not name:
        raise RosterError(f'{where}: "name" must be the hero\'s unique name.')
    values: dict[str, int] = {}
    for key in ("rating", "lav", "cav", "rav"):
        v = entry.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise RosterError(f'{where} needs "{key}" as a whole number 0 or more; got {v!r}.')
        values[key] = v
    if values["rating"] not in RATINGS:
        raise RosterError(f"{where} is rated {values['rating']}; a hero's rating runs from 1 to 4.")
    return Hero(tag, name, owner, values["rating"], values["lav"], values["cav"], values["rav"])


@dataclass(frozen=True)
class TeamCheck:
    """Whether one player's team may play: its size, its Team Rating and what is wrong (empty when fine)."""

    owner: str
    size: int
    rating: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def check_team(owner: str, heroes: list[Hero]) -> TeamCheck:
    """Team Composition: exactly 10 heroes, unique names, a Team Rating of no more than 23."""
    mine = [h for h in heroes if h.owner == owner]
    rating = sum(h.rating for h in mine)
    problems: list[str] = []
    if len(mine) != TEAM_SIZE:
        problems.append(f"Team {owner} has {len(mine)} heroes; a team is exactly {TEAM_SIZE}.")
    if rating > MAX_TEAM_RATING:
        problems.append(f"Team {owner} is rated {rating}; a Team Rating may be no more than {MAX_TEAM_RATING}.")
    names = [h.name for h in mine]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        problems.append(f"Team {owner} names {', '.join(doubled)} more than once; every hero's name is unique.")
    return TeamCheck(owner, len(mine), rating, tuple(problems))


@dataclass(frozen=True)
class Skirmish:
    """Two opposing tiles across one edge: the values each fought with and who won (None: a draw or the leads)."""

    edge: Edge
    a: UnitId
    b: UnitId
    a_value: int
    b_value: int
    winner: UnitId | None
    lead: bool

    def to_json(self, heroes: Mapping[UnitId, Hero]) -> dict[str, Any]:
        win = heroes[self.winner].owner if self.winner is not None else None
        return {
            "cells": [h.to_json() for h in self.edge.hexes],
            "units": [self.a, self.b],
            "values": [self.a_value, self.b_value],
            "winner": self.winner,
            "point_to": None if self.lead else win,
            "lead": self.lead,
        }


@dataclass(frozen=True)
class Fortification:
    """Three allied tiles around one corner: one point for their player."""

    corner: Corner
    owner: str
    units: tuple[UnitId, UnitId, UnitId]

    def to_json(self) -> dict[str, Any]:
        return {"cells": [h.to_json() for h in self.corner.hexes], "owner": self.owner, "units": list(self.units)}


def skirmishes(tiles: Mapping[Hex, Hero]) -> list[Skirmish]:
    """Every skirmish on the board: each edge between two opposing tiles, in board order."""
    found: list[Skirmish] = []
    seen: set[Edge] = set()
    for h in sorted(tiles):
        for d in range(6):
            other = neighbor(h, d)
            edge = Edge(h, d)
            if other not in tiles or edge in seen:
                continue
            seen.add(edge)
            a, b = tiles[h], tiles[other]
            if a.owner == b.owner:
                continue
            back = direction_between(other, h)
            assert back is not None
            av, bv = a.value(d), b.value(back)
            winner = a.tag if av > bv else b.tag if bv > av else None
            found.append(Skirmish(edge, a.tag, b.tag, av, bv, winner, edge == LEAD_EDGE))
    return found


def fortifications(tiles: Mapping[Hex, Hero]) -> list[Fortification]:
    """Every corner with three allied tiles around it."""
    found: dict[Corner, Fortification] = {}
    for h in sorted(tiles):
        for c in range(6):
            corner = Corner(h, c)
            if corner in found:
                continue
            trio = corner.hexes
            if all(x in tiles for x in trio) and len({tiles[x].owner for x in trio}) == 1:
                found[corner] = Fortification(
                    corner, tiles[h].owner, (tiles[trio[0]].tag, tiles[trio[1]].tag, tiles[trio[2]].tag)
                )
    return list(found.values())


@dataclass(frozen=True)
class Score:
    """Points per player, with the skirmishes and fortifications behind them."""

    points: Mapping[str, int]
    skirmishes: tuple[Skirmish, ...]
    fortifications: tuple[Fortification, ...]
    placed: int

    def winner(self) -> str | None:
        """The player with the higher score once the map is full; "draw" on equal scores; None before the end."""
        if self.placed < len(BOARD_CELLS):
            return None
        ranked = sorted(self.points.items(), key=lambda kv: -kv[1])
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            return "draw"
        return ranked[0][0] if ranked else None


def score(tiles: Mapping[Hex, Hero], owners: tuple[str, ...]) -> Score:
    """The score of the tiles on the board: skirmish points (the lead skirmish excluded) plus fortifications."""
    points = dict.fromkeys(owners, 0)
    fights = skirmishes(tiles)
    byt = {h.tag: h for h in tiles.values()}
    for s in fights:
        if s.winner is not None and not s.lead:
            owner = byt[s.winner].owner
            points[owner] = points.get(owner, 0) + 1
    forts = fortifications(tiles)
    for f in forts:
        points[f.owner] = points.get(f.owner, 0) + 1
    return Score(points, tuple(fights), tuple(forts), len(tiles))


def board_of_19() -> HexBoard:
    """The Magni board as a HexBoard (all land, level)."""

    return HexBoard({h: Cell() for h in BOARD_CELLS})
