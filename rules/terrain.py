"""Terrain pieces on an open table: their footprints, what they do to sight and movement, and their JSON form.

A piece is a polygon in table inches (DESIGN.md's table frame) with a set of kinds and a height:

- "blocking": a solid piece (a wall, a boulder) that stops every sight line passing through it below its
  top (`height_in`); a move through it must climb over it (if `climbable`) or go round.
- "obscuring": sight lines through it below its top are hindered but not stopped: at best "partial".
- "impassable": no base may enter or cross it.
- "difficult", "water": kept for games that use them (Valknut does not).
- "elevated": its top (`height_in`, e.g. a 3" ruin floor) is a floor a unit may stand on; reaching it is
  climbing.

A piece with a `tag` is carried by that tag: its polygon is given relative to the tag's centre with the tag
at yaw 0 (tag +x along table +x), and `place_terrain` moves it to wherever the camera sees the tag.
The JSON form (docs/terrain.md):

    {"pieces": [{"name": "ruin", "kind": ["elevated", "obscuring"], "polygon": [[x, y], ...],
                 "height_in": 3, "climbable": true, "tag": 5}]}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import shapely
from shapely.geometry import Polygon
from shapely.validation import explain_validity

from rules.engine import Inches, Placement, RulesInputError
from rules.fields import field_number

KINDS = frozenset({"blocking", "obscuring", "impassable", "difficult", "water", "elevated"})
"""Every kind a terrain piece may have."""
MAX_IN = 10_000.0
"""Largest |coordinate| or height a terrain piece may have, inches (a bigger one is a typo)."""


class TerrainError(RulesInputError):
    """A terrain description that cannot be read; the message names the piece and the fix."""


@dataclass(frozen=True)
class TerrainPiece:
    """One piece of terrain.

    name: what players call it ("north ruin"); unique within a table.
    polygon: the footprint's corners, table inches (relative to the tag when `tag` is set), either winding.
    kinds: a subset of KINDS.
    height_in: the top of the piece above the table, inches (a 2" wall, a 3" ruin floor).
    climbable: whether a unit may climb onto or over it.
    tag: the AprilTag id that carries the piece, or None for a piece fixed to the table.
    """

    name: str
    polygon: tuple[tuple[Inches, Inches], ...]
    kinds: frozenset[str]
    height_in: Inches = 0.0
    climbable: bool = True
    tag: int | None = None

    @property
    def shape(self) -> Polygon:
        """The footprint as a shapely Polygon (table inches)."""
        return Polygon(self.polygon)

    def has(self, kind: str) -> bool:
        return kind in self.kinds

    def placed(self, x: Inches, y: Inches, yaw_deg: float) -> TerrainPiece:
        """The piece moved so that its tag-relative polygon sits at (x, y), turned yaw_deg counter-clockwise."""
        c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
        poly = tuple((x + c * px - s * py, y + s * px + c * py) for px, py in self.polygon)
        return TerrainPiece(self.name, poly, self.kinds, self.height_in, self.climbable, self.tag)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "kind": sorted(self.kinds),
            "polygon": [list(p) for p in self.polygon],
            "height_in": self.height_in,
            "climbable": self.climbable,
        }
        if self.tag is not None:
            out["tag"] = self.tag
        return out


def place_terrain(pieces: Iterable[TerrainPiece], positions: Mapping[int, Placement]) -> tuple[TerrainPiece, ...]:
    """Every piece in table inches: fixed pieces as they are; a tagged piece where its tag is seen.

    A tagged piece whose tag is not in `positions` is left out (the camera does not know where it is).
    """
    out: list[TerrainPiece] = []
    for piece in pieces:
        if piece.tag is None:
            out.append(piece)
        elif piece.tag in positions:
            p = positions[piece.tag]
            out.append(piece.placed(p.x, p.y, p.yaw_deg))
    return tuple(out)


def _number(entry: Mapping[str, Any], key: str, default: float, where: str) -> float:
    value = field_number(entry, key, default, where, TerrainError, kind="a number of inches")
    if value > MAX_IN:
        raise TerrainError(f"{where}: {key} must be a number of inches; got {value!r}.")
    if value < 0:
        raise TerrainError(f"{where}: {key} is {value}, below 0; give the height above the table in inches.")
    return float(value)


def parse_piece(entry: Any, index: int = 0) -> TerrainPiece:
    """One piece from its JSON form; raises TerrainError naming the piece."""
    if not isinstance(entry, Mapping):
        raise TerrainError(f"Terrain piece {index + 1} must be an object with name, kind and polygon.")
    name = entry.get("name", f"piece {index + 1}")
    if not isinstance(name, str) or not name:
        raise TerrainError(f"Terrain piece {index + 1}: name must be text; got {name!r}.")
    where = f'Terrain piece "{name}"'
    kind_in = entry.get("kind", entry.get("kinds", []))
    if isinstance(kind_in, str):
        kind_in = [kind_in]
    if not isinstance(kind_in, list | tuple) or not all(isinstance(k, str) for k in kind_in):
        raise TerrainError(f"{where}: kind must be a list of words from {sorted(KINDS)}; got {kind_in!r}.")
    unknown = sorted(set(kind_in) - KINDS)
    if unknown:
        raise TerrainError(f"{where} has unknown kind {unknown[0]!r}; use any of {', '.join(sorted(KINDS))}.")
    poly_in = entry.get("polygon")
    if (
        not isinstance(poly_in, list | tuple)
        or not all(
            isinstance(p, list | tuple)
            and len(p) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) and abs(v) <= MAX_IN for v in p)
            for p in poly_in
        )
    ):
        raise TerrainError(f"{where}: polygon must be a list of [x, y] corners in inches; got {poly_in!r}.")
    corners = [(float(p[0]), float(p[1])) for p in poly_in]
    if len(corners) > 1 and corners[0] == corners[-1]:
        corners = corners[:-1]
    if len(corners) < 3:
        raise TerrainError(f"{where}: polygon has {len(corners)} corners; a footprint needs at least 3.")
    shape = Polygon(corners)
    if shape.convex_hull.area <= 1e-9:
        raise TerrainError(f"{where}: polygon has no area (its corners lie on one line); give its outline.")
    if not shapely.is_valid(shape):
        reason = explain_validity(shape)
        raise TerrainError(
            f"{where}: polygon crosses itself ({reason}); list the corners in order around the outline."
        )
    climbable = entry.get("climbable", True)
    if not isinstance(climbable, bool):
        raise TerrainError(f"{where}: climbable must be true or false; got {climbable!r}.")
    tag = entry.get("tag")
    if tag is not None and (isinstance(tag, bool) or not isinstance(tag, int) or tag < 0):
        raise TerrainError(f"{where}: tag must be a tag id (a whole number); got {tag!r}.")
    return TerrainPiece(
        name=name,
        polygon=tuple(corners),
        kinds=frozenset(kind_in),
        height_in=_number(entry, "height_in", 0.0, where),
        climbable=climbable,
        tag=tag,
    )


def parse_terrain(obj: Any) -> tuple[TerrainPiece, ...]:
    """Every piece from the JSON form {"pieces": [...]} (a bare list is accepted too); raises TerrainError."""
    if obj is None:
        return ()
    pieces_in = obj.get("pieces") if isinstance(obj, Mapping) else obj
    if not isinstance(pieces_in, list):
        raise TerrainError('Terrain must be an object with a "pieces" list; got ' + repr(obj)[:80] + ".")
    pieces = tuple(parse_piece(entry, i) for i, entry in enumerate(pieces_in))
    seen: set[str] = set()
    for piece in pieces:
        if piece.name in seen:
            raise TerrainError(f'Terrain piece "{piece.name}" is listed twice; give every piece its own name.')
        seen.add(piece.name)
    return pieces


def terrain_to_json(pieces: Iterable[TerrainPiece]) -> dict[str, Any]:
    """The JSON form of `pieces` (parse_terrain reads it back)."""
    return {"pieces": [p.to_json() for p in pieces]}
