"""Hex grids after Red Blob Games' "Hexagonal Grids" guide: axial hexes, lines, edges, corners, a table layout,
board files and movement search.

Coordinates are axial (q, r) with s = -q - r. Directions, numbered 0..5 counter-clockwise as seen from above
the table (the table frame has +y "north", DESIGN.md):

    index  axial     pointy layout   flat layout
    0      (+1,  0)  E   (0 deg)     SE (330 deg)
    1      (+1, -1)  NE  (60 deg)    NE (30 deg)
    2      ( 0, -1)  NW  (120 deg)   N  (90 deg)
    3      (-1,  0)  W   (180 deg)   NW (150 deg)
    4      (-1, +1)  SW  (240 deg)   SW (210 deg)
    5      ( 0, +1)  SE  (300 deg)   S  (270 deg)

(angles before the layout's own rotation). Corner c of a hex is the point shared by the hex and its
neighbours in directions c and c+1 (mod 6): at 60c+30 deg (pointy) or 60c deg (flat).

Red Blob draws on a y-down screen; the table frame is y-up, so `Layout` flips y: a board drawn in the guide
looks the same on the table seen from above, and the direction names keep their meaning.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rules.basics import Inches, RulesInputError
from rules.fields import number

SQRT3 = math.sqrt(3.0)


class BoardError(RulesInputError):
    """A hex board or layout that cannot be read; the message names the cell or field and the fix."""


@dataclass(frozen=True, order=True, slots=True)
class Hex:
    """One cell in axial coordinates; s = -q - r is derived."""

    q: int
    r: int

    @property
    def s(self) -> int:
        return -self.q - self.r

    def __add__(self, other: Hex) -> Hex:
        return Hex(self.q + other.q, self.r + other.r)

    def __sub__(self, other: Hex) -> Hex:
        return Hex(self.q - other.q, self.r - other.r)

    def __mul__(self, k: int) -> Hex:
        return Hex(self.q * k, self.r * k)

    def length(self) -> int:
        """Steps from the origin hex."""
        return (abs(self.q) + abs(self.r) + abs(self.s)) // 2

    def to_json(self) -> list[int]:
        return [self.q, self.r]

    def __repr__(self) -> str:
        return f"Hex({self.q}, {self.r})"


DIRECTIONS: tuple[Hex, ...] = (Hex(1, 0), Hex(1, -1), Hex(0, -1), Hex(-1, 0), Hex(-1, 1), Hex(0, 1))
"""The six neighbour offsets, index 0..5 (see the module docstring for their compass names)."""

POINTY_DIRECTION_NAMES = ("E", "NE", "NW", "W", "SW", "SE")
FLAT_DIRECTION_NAMES = ("SE", "NE", "N", "NW", "SW", "S")


def opposite(d: int) -> int:
    """The direction pointing back across the same edge."""
    return (d + 3) % 6


def neighbor(h: Hex, d: int) -> Hex:
    """The hex across edge direction d (0..5)."""
    return h + DIRECTIONS[d % 6]


def neighbors(h: Hex) -> tuple[Hex, ...]:
    """The six neighbours in direction order 0..5."""
    return tuple(h + step for step in DIRECTIONS)


def direction_between(a: Hex, b: Hex) -> int | None:
    """The direction d with neighbor(a, d) == b, or None when a and b are not adjacent."""
    diff = b - a
    for d, step in enumerate(DIRECTIONS):
        if diff == step:
            return d
    return None


def distance(a: Hex, b: Hex) -> int:
    """Steps between two hexes."""
    return (a - b).length()


def hexagon(radius: int, centre: Hex = Hex(0, 0)) -> tuple[Hex, ...]:
    """Every hex within `radius` steps of `centre` (a hexagon-shaped board: radius 2 gives 19 cells), sorted."""
    return tuple(
        sorted(
            centre + Hex(q, r)
            for q in range(-radius, radius + 1)
            for r in range(max(-radius, -q - radius), min(radius, -q + radius) + 1)
        )
    )


def ray(h: Hex, d: int, n: int) -> tuple[Hex, ...]:
    """The n hexes after h in a straight line through edge direction d (h itself not included)."""
    step = DIRECTIONS[d % 6]
    return tuple(h + step * k for k in range(1, n + 1))


@dataclass(frozen=True, slots=True)
class FractionalHex:
    """A point in axial coordinates that need not be a cell centre."""

    q: float
    r: float

    @property
    def s(self) -> float:
        return -self.q - self.r

    def round(self) -> Hex:
        """The hex containing this point (Red Blob's cube rounding)."""
        q, r, s = round(self.q), round(self.r), round(self.s)
        dq, dr, ds = abs(q - self.q), abs(r - self.r), abs(s - self.s)
        if dq > dr and dq > ds:
            q = -r - s
        elif dr > ds:
            r = -q - s
        return Hex(int(q), int(r))

    def lerp(self, other: FractionalHex, t: float) -> FractionalHex:
        return FractionalHex(self.q + (other.q - self.q) * t, self.r + (other.r - self.r) * t)


_NUDGE = (1e-6, 2e-6)  # q, r nudge (s gets -3e-6): a line along an edge falls to one side consistently


def hex_line(a: Hex, b: Hex, nudge_sign: int = 1) -> tuple[Hex, ...]:
    """The hexes a straight line from a's centre to b's centre passes through, a and b included.

    A line running exactly along cell edges is nudged by epsilon to one side; `nudge_sign=-1` gives the other
    side, so a caller can test both (e.g. line of sight that is blocked only if both sides are).
    """
    n = distance(a, b)
    if n == 0:
        return (a,)
    eq, er = _NUDGE[0] * nudge_sign, _NUDGE[1] * nudge_sign
    start = FractionalHex(a.q + eq, a.r + er)
    end = FractionalHex(b.q + eq, b.r + er)
    return tuple(start.lerp(end, i / n).round() for i in range(n + 1))


@dataclass(frozen=True, slots=True, init=False)
class Edge:
    """The edge between a hex and its neighbour in direction `dir`, stored canonically.

    Edge(h, d) == Edge(neighbor(h, d), opposite(d)): the stored form always has dir in 0..2. Walls sit on edges.
    """

    hex: Hex
    dir: int

    def __init__(self, hex: Hex, dir: int) -> None:
        d = dir % 6
        if d >= 3:
            hex, d = neighbor(hex, d), d - 3
        object.__setattr__(self, "hex", hex)
        object.__setattr__(self, "dir", d)

    @property
    def hexes(self) -> tuple[Hex, Hex]:
        """The two hexes that share this edge."""
        return (self.hex, neighbor(self.hex, self.dir))

    def to_json(self) -> dict[str, Any]:
        return {"hex": self.hex.to_json(), "dir": self.dir}


def hex_words(v: Any) -> str:
    """A hex as an action's words name it, "hex [q, r]", from a Hex or its JSON [q, r]; "" for anything else (a
    table position, a malformed value): the caller then says the action in the generic words."""
    if isinstance(v, Hex):
        return f"hex [{v.q}, {v.r}]"
    if isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return f"hex [{v[0]}, {v[1]}]"
    return ""


def edges_of(h: Hex) -> tuple[Edge, ...]:
    """The six edges of a hex, in direction order."""
    return tuple(Edge(h, d) for d in range(6))


@dataclass(frozen=True, slots=True, init=False)
class Corner:
    """The point where three hexes meet: hex h, its neighbour in direction c and its neighbour in direction c+1.

    Stored canonically (the smallest of the three hexes and the matching corner index), so the same point
    named from any of its three hexes compares equal. Fortifications sit on corners.
    """

    hex: Hex
    index: int

    def __init__(self, hex: Hex, index: int) -> None:
        c = index % 6
        trio = (hex, neighbor(hex, c), neighbor(hex, c + 1))
        low = min(trio)
        for k in range(6):
            if {low, neighbor(low, k), neighbor(low, k + 1)} == set(trio):
                object.__setattr__(self, "hex", low)
                object.__setattr__(self, "index", k)
                return
        raise AssertionError("unreachable: every corner belongs to its smallest hex")

    @property
    def hexes(self) -> tuple[Hex, Hex, Hex]:
        """The three hexes meeting at this corner, sorted."""
        return tuple(sorted((self.hex, neighbor(self.hex, self.index), neighbor(self.hex, self.index + 1))))  # type: ignore[return-value]

    def to_json(self) -> dict[str, Any]:
        return {"hexes": [h.to_json() for h in self.hexes]}


def corners_of(h: Hex) -> tuple[Corner, ...]:
    """The six corners of a hex, in corner order 0..5."""
    return tuple(Corner(h, c) for c in range(6))


# ---------------------------------------------------------------------------------------------- layout

ORIENTATIONS = ("pointy", "flat")
MAX_CELL_IN = 100.0
"""Largest cell radius a layout may give, inches (a bigger one is a typo)."""
MAX_HEXAGON_RADIUS = 100
"""Largest "hexagon" board radius, cells (30,301 cells)."""


@dataclass(frozen=True)
class Layout:
    """How a hex board lies on the table.

    size_in: centre-to-corner radius of one cell, inches (Red Blob's "size"; the cell is 2*size corner to
    corner and sqrt(3)*size edge to edge). orientation: "pointy" (a corner points north) or "flat" (an edge
    faces north). origin: table position of Hex(0, 0)'s centre, inches. rotation_deg: the whole board turned
    counter-clockwise about the origin.
    """

    size_in: Inches
    orientation: str = "pointy"
    origin: tuple[Inches, Inches] = (0.0, 0.0)
    rotation_deg: float = 0.0

    def __post_init__(self) -> None:
        if self.orientation not in ORIENTATIONS:
            raise BoardError(f'The layout orientation is {self.orientation!r}; use "pointy" or "flat".')
        if not (isinstance(self.size_in, int | float) and math.isfinite(self.size_in) and self.size_in > 0):
            raise BoardError(f"The layout size_in is {self.size_in!r}; give the cell radius in inches (> 0).")

    @property
    def inradius_in(self) -> Inches:
        """Centre to the middle of an edge, inches."""
        return self.size_in * SQRT3 / 2.0

    def _rot(self, x: float, y: float, sign: float) -> tuple[float, float]:
        a = math.radians(self.rotation_deg) * sign
        c, s = math.cos(a), math.sin(a)
        return (c * x - s * y, s * x + c * y)

    def _to_table(self, q: float, r: float) -> tuple[Inches, Inches]:
        if self.orientation == "pointy":
            x, y = SQRT3 * q + SQRT3 / 2.0 * r, -1.5 * r
        else:
            x, y = 1.5 * q, -(SQRT3 / 2.0 * q + SQRT3 * r)
        x, y = self._rot(x * self.size_in, y * self.size_in, 1.0)
        return (x + self.origin[0], y + self.origin[1])

    def to_table(self, h: Hex) -> tuple[Inches, Inches]:
        """Table position of a cell's centre, inches."""
        return self._to_table(h.q, h.r)

    def fractional(self, x: Inches, y: Inches) -> FractionalHex:
        """The axial coordinates of a table point."""
        px, py = self._rot(x - self.origin[0], y - self.origin[1], -1.0)
        px, py = px / self.size_in, -py / self.size_in
        if self.orientation == "pointy":
            return FractionalHex(SQRT3 / 3.0 * px - py / 3.0, 2.0 / 3.0 * py)
        return FractionalHex(2.0 / 3.0 * px, -px / 3.0 + SQRT3 / 3.0 * py)

    def from_table(self, x: Inches, y: Inches) -> tuple[Hex, Inches]:
        """The cell containing a table point and the point's distance from that cell's centre, inches."""
        h = self.fractional(x, y).round()
        cx, cy = self.to_table(h)
        return h, math.hypot(x - cx, y - cy)

    def edge_clearance(self, x: Inches, y: Inches) -> Inches:
        """Distance from a table point to the nearest border of the cell containing it, inches (0 on a border)."""
        h = self.fractional(x, y).round()
        cx, cy = self.to_table(h)
        reach = 0.0
        for d in range(3):
            a = math.radians(self.direction_angle_deg(d))
            reach = max(reach, abs((x - cx) * math.cos(a) + (y - cy) * math.sin(a)))
        return max(0.0, self.inradius_in - reach)

    def astride(self, x: Inches, y: Inches, base_radius: Inches) -> bool:
        """Whether a round base of `base_radius` inches centred at (x, y) reaches over its cell's border."""
        return self.edge_clearance(x, y) < base_radius

    def across(self, x: Inches, y: Inches) -> Hex:
        """The cell across the border nearest a table point: the other cell a base there may reach into."""
        h = self.fractional(x, y).round()
        cx, cy = self.to_table(h)

        def toward(d: int) -> float:
            a = math.radians(self.direction_angle_deg(d))
            return (x - cx) * math.cos(a) + (y - cy) * math.sin(a)

        return neighbor(h, max(range(6), key=toward))

    def direction_angle_deg(self, d: int) -> float:
        """Table angle (deg, counter-clockwise from +x) from a cell's centre toward neighbour direction d."""
        base = 0.0 if self.orientation == "pointy" else -30.0
        return (base + 60.0 * (d % 6) + self.rotation_deg) % 360.0

    def corner_offset(self, c: int) -> tuple[Inches, Inches]:
        """Offset of corner c (between directions c and c+1) from a cell's centre, inches."""
        a = math.radians(self.direction_angle_deg(c) + 30.0)
        return (self.size_in * math.cos(a), self.size_in * math.sin(a))

    def polygon(self, h: Hex) -> tuple[tuple[Inches, Inches], ...]:
        """The cell's six corners on the table, counter-clockwise from corner 0, inches."""
        cx, cy = self.to_table(h)
        return tuple((cx + dx, cy + dy) for dx, dy in (self.corner_offset(c) for c in range(6)))

    def corner_point(self, corner: Corner) -> tuple[Inches, Inches]:
        """Where a corner lies on the table, inches."""
        cx, cy = self.to_table(corner.hex)
        dx, dy = self.corner_offset(corner.index)
        return (cx + dx, cy + dy)

    def edge_segment(self, edge: Edge) -> tuple[tuple[Inches, Inches], tuple[Inches, Inches]]:
        """The two table points that end an edge (corners dir-1 and dir of edge.hex), inches."""
        cx, cy = self.to_table(edge.hex)
        a, b = self.corner_offset(edge.dir - 1), self.corner_offset(edge.dir)
        return ((cx + a[0], cy + a[1]), (cx + b[0], cy + b[1]))

    def to_json(self) -> dict[str, Any]:
        return {
            "size_in": self.size_in,
            "orientation": self.orientation,
            "origin": list(self.origin),
            "rotation_deg": self.rotation_deg,
        }


def straddle_words(cells: Container[Hex], layout: Layout, x: Inches, y: Inches, margin: Inches) -> str:
    """Where a base centred at table point (x, y) sits, in words, when it is not plainly in one cell of `cells`:
    "astride [1, 0] and [1, -1]" (nearer their border than `margin` inches), "astride [3, 0] and the board's
    edge", or "off the board"; "" for a base well inside one cell."""
    h = layout.fractional(x, y).round()
    near = layout.astride(x, y, margin)
    other = layout.across(x, y) if near else None
    if h in cells:
        if other is None:
            return ""
        return f"astride [{h.q}, {h.r}] and " + (f"[{other.q}, {other.r}]" if other in cells else "the board's edge")
    if other is not None and other in cells:
        return f"astride [{other.q}, {other.r}] and the board's edge"
    return "off the board"


def _number(value: Any, what: str) -> float:
    return number(value, what, BoardError)


def parse_layout(obj: Any, where: str = "the board layout") -> Layout:
    """A Layout from {"size_in": 1.5, "orientation": "flat", "origin": [x, y], "rotation_deg": 0}."""
    if not isinstance(obj, Mapping):
        raise BoardError(f'{where} must be an object like {{"size_in": 1.5, "orientation": "flat"}}.')
    if "size_in" not in obj:
        raise BoardError(f'{where} has no "size_in"; give the cell radius (centre to corner) in inches.')
    origin = obj.get("origin", [0.0, 0.0])
    if not isinstance(origin, list | tuple) or len(origin) != 2:
        raise BoardError(f'{where}: "origin" must be [x, y] in inches; got {origin!r}.')
    orientation = obj.get("orientation", "pointy")
    if orientation not in ORIENTATIONS:
        raise BoardError(f'{where}: orientation is {orientation!r}; use "pointy" or "flat".')
    size = _number(obj["size_in"], f'{where}: "size_in"')
    if not 0 < size <= MAX_CELL_IN:
        raise BoardError(f'{where}: "size_in" is {size:g}; the cell radius must be more than 0 inches (at most {MAX_CELL_IN:g}).')
    return Layout(
        size_in=size,
        orientation=orientation,
        origin=(_number(origin[0], f"{where}: origin x"), _number(origin[1], f"{where}: origin y")),
        rotation_deg=_number(obj.get("rotation_deg", 0.0), f'{where}: "rotation_deg"'),
    )


# ---------------------------------------------------------------------------------------------- boards

TERRAINS = frozenset({"land", "sea", "mountain", "water"})
"""Cell terrains a board file may name."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One board cell: its terrain and its elevation in levels (0 is the table)."""

    terrain: str = "land"
    elevation: int = 0


@dataclass(frozen=True)
class HexBoard:
    """The cells of a board (and any features on edges, e.g. walls), by hex. Read-only by convention."""

    cells: Mapping[Hex, Cell]
    edges: Mapping[Edge, str] = field(default_factory=dict)

    def __contains__(self, h: object) -> bool:
        return h in self.cells

    def __len__(self) -> int:
        return len(self.cells)

    def cell(self, h: Hex) -> Cell | None:
        return self.cells.get(h)

    def elevation(self, h: Hex) -> int:
        c = self.cells.get(h)
        return c.elevation if c else 0

    def terrain(self, h: Hex) -> str | None:
        c = self.cells.get(h)
        return c.terrain if c else None

    def hexes(self) -> tuple[Hex, ...]:
        return tuple(sorted(self.cells))

    def corners(self) -> tuple[Corner, ...]:
        """Every corner whose three hexes are all on the board (sorted)."""
        found = {c for h in self.cells for c in corners_of(h) if all(x in self.cells for x in c.hexes)}
        return tuple(sorted(found, key=lambda c: (c.hex, c.index)))

    def inner_edges(self) -> tuple[Edge, ...]:
        """Every edge between two cells of the board (sorted)."""
        found = {e for h in self.cells for e in edges_of(h) if all(x in self.cells for x in e.hexes)}
        return tuple(sorted(found, key=lambda e: (e.hex, e.dir)))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cells": [
                {"hex": h.to_json(), "terrain": c.terrain, "elevation": c.elevation}
                for h, c in sorted(self.cells.items())
            ]
        }
        if self.edges:
            out["edges"] = [{**e.to_json(), "kind": k} for e, k in sorted(self.edges.items(), key=lambda i: (i[0].hex, i[0].dir))]
        return out


def holes(cells: Iterable[Hex]) -> tuple[Hex, ...]:
    """Hexes missing from inside a board's outline: not on the board yet enclosed by it (sorted)."""
    board = set(cells)
    if not board:
        return ()
    qs, rs, ss = [h.q for h in board], [h.r for h in board], [h.s for h in board]
    lo_q, hi_q, lo_r, hi_r, lo_s, hi_s = min(qs) - 1, max(qs) + 1, min(rs) - 1, max(rs) + 1, min(ss) - 1, max(ss) + 1

    def inside(h: Hex) -> bool:
        return lo_q <= h.q <= hi_q and lo_r <= h.r <= hi_r and lo_s <= h.s <= hi_s

    region = [Hex(q, r) for q in range(lo_q, hi_q + 1) for r in range(lo_r, hi_r + 1) if inside(Hex(q, r))]
    outside = [h for h in region if h.q in (lo_q, hi_q) or h.r in (lo_r, hi_r) or h.s in (lo_s, hi_s)]
    seen = set(outside)
    todo = list(outside)
    while todo:
        h = todo.pop()
        for n in neighbors(h):
            if n not in seen and n not in board and inside(n):
                seen.add(n)
                todo.append(n)
    return tuple(sorted(h for h in region if h not in board and h not in seen))


def parse_hex(value: Any, where: str) -> Hex:
    """A Hex from [q, r]; raises BoardError naming `where`."""
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise BoardError(f"{where} must be a hex [q, r] of two whole numbers; got {value!r}.")
    return Hex(int(value[0]), int(value[1]))


def _parse_cell(entry: Any, where: str, terrains: frozenset[str], default: Cell) -> Cell:
    terrain = entry.get("terrain", default.terrain)
    if not isinstance(terrain, str) or terrain not in terrains:
        raise BoardError(f"{where} has unknown terrain {terrain!r}; use one of {', '.join(sorted(terrains))}.")
    elevation = entry.get("elevation", default.elevation)
    if isinstance(elevation, bool) or not isinstance(elevation, int) or elevation < 0:
        raise BoardError(f"{where}: elevation must be a whole number of levels, 0 or more; got {elevation!r}.")
    return Cell(terrain, elevation)


def parse_board(obj: Any, terrains: Iterable[str] = TERRAINS, where: str = "the board") -> HexBoard:
    """A HexBoard from its JSON form (docs/hex_boards.md); raises BoardError naming the cell at fault.

    {"hexagon": 2, "default": {"terrain": "land", "elevation": 0},
     "cells": [{"hex": [q, r], "terrain": "water", "elevation": 0}, ...],
     "edges": [{"hex": [q, r], "dir": 0, "kind": "wall"}]}

    "hexagon": N fills every hex within N of (0, 0) with the default cell and "cells" then restyles some of
    them; without it, "cells" lists the whole board. A board with a hole (a missing cell enclosed by other
    cells), a cell listed twice, or an unknown terrain is refused.
    """
    allowed = frozenset(terrains)
    if not isinstance(obj, Mapping):
        raise BoardError(f'{where} must be a JSON object with "cells" (or "hexagon").')
    default_in = obj.get("default", {})
    if not isinstance(default_in, Mapping):
        raise BoardError(f'{where}: "default" must be an object like {{"terrain": "land", "elevation": 0}}.')
    default = _parse_cell(default_in, f"{where}'s default cell", allowed, Cell())
    cells: dict[Hex, Cell] = {}
    radius = obj.get("hexagon")
    if radius is not None:
        if isinstance(radius, bool) or not isinstance(radius, int) or not 0 <= radius <= MAX_HEXAGON_RADIUS:
            raise BoardError(f'{where}: "hexagon" must be a radius of 0 to {MAX_HEXAGON_RADIUS} cells; got {radius!r}.')
        cells = {h: default for h in hexagon(radius)}
    listed = obj.get("cells", [])
    if not isinstance(listed, list):
        raise BoardError(f'{where}: "cells" must be a list of {{"hex": [q, r], "terrain": ...}} objects.')
    if radius is None and not listed:
        raise BoardError(f'{where} has no cells; add a "cells" list or "hexagon": radius.')
    seen: set[Hex] = set()
    for i, entry in enumerate(listed):
        if not isinstance(entry, Mapping):
            raise BoardError(f'{where}, cell {i + 1} must be an object like {{"hex": [0, 0], "terrain": "land"}}.')
        h = parse_hex(entry.get("hex"), f"{where}, cell {i + 1}")
        name = f"{where}, cell [{h.q}, {h.r}]"
        if h in seen:
            raise BoardError(f"{name} is listed twice; list every cell once.")
        if radius is not None and h not in cells:
            raise BoardError(f"{name} lies outside the hexagon of radius {radius}; enlarge it or drop the cell.")
        seen.add(h)
        cells[h] = _parse_cell(entry, name, allowed, default)
    gaps = holes(cells)
    if gaps:
        listed_gaps = ", ".join(f"[{h.q}, {h.r}]" for h in gaps[:5])
        raise BoardError(f"{where} has a hole: cell {listed_gaps} is missing inside the board's outline; add it.")
    edges: dict[Edge, str] = {}
    edges_in = obj.get("edges", [])
    if not isinstance(edges_in, list):
        raise BoardError(f'{where}: "edges" must be a list of {{"hex": [q, r], "dir": 0..5, "kind": "wall"}}.')
    for i, entry in enumerate(edges_in):
        ewhere = f"{where}, edge {i + 1}"
        if not isinstance(entry, Mapping):
            raise BoardError(f'{ewhere} must be an object like {{"hex": [0, 0], "dir": 0, "kind": "wall"}}.')
        h = parse_hex(entry.get("hex"), ewhere)
        d = entry.get("dir")
        if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= 5:
            raise BoardError(f"{ewhere}: dir must be a direction 0..5; got {d!r}.")
        kind = entry.get("kind", "wall")
        if not isinstance(kind, str) or not kind:
            raise BoardError(f'{ewhere}: kind must be a name like "wall"; got {kind!r}.')
        edge = Edge(h, d)
        if not all(x in cells for x in edge.hexes):
            raise BoardError(f"{ewhere} is not between two cells of the board; put it on an inner edge.")
        if edge in edges:
            raise BoardError(f"{ewhere} is listed twice (the same edge seen from both sides); list it once.")
        edges[edge] = kind
    return HexBoard(cells=cells, edges=edges)


# ---------------------------------------------------------------------------------------------- movement

StepCost = Callable[[Hex, Hex], "int | None"]
"""Cost of one step between adjacent hexes, or None when the step is not allowed."""


def reachable(
    start: Hex, budget: int, step_cost: StepCost, stops: Callable[[Hex], bool] | None = None
) -> dict[Hex, int]:
    """Every hex reachable from `start` for at most `budget` points, with its cheapest cost (Dijkstra).

    step_cost(from, to) gives the points one step costs or None for a step not allowed. stops(h) True means a
    mover entering h must end its move there (water, say): h is reachable but nothing beyond it through h.
    """
    return _search(start, budget, step_cost, stops)[0]


def shortest_path(
    start: Hex, goal: Hex, step_cost: StepCost, stops: Callable[[Hex], bool] | None = None, budget: int = 10_000
) -> tuple[tuple[Hex, ...], int] | None:
    """The cheapest path start..goal (both included) and its cost, or None when the goal cannot be reached."""
    costs, came = _search(start, budget, step_cost, stops, goal)
    if goal not in costs:
        return None
    path = [goal]
    while path[-1] != start:
        path.append(came[path[-1]])
    return tuple(reversed(path)), costs[goal]


def _search(
    start: Hex,
    budget: int,
    step_cost: StepCost,
    stops: Callable[[Hex], bool] | None,
    goal: Hex | None = None,
) -> tuple[dict[Hex, int], dict[Hex, Hex]]:
    costs: dict[Hex, int] = {start: 0}
    came: dict[Hex, Hex] = {}
    frontier: list[tuple[int, Hex]] = [(0, start)]
    done: set[Hex] = set()
    while frontier:
        cost, h = heapq.heappop(frontier)
        if h in done:
            continue
        done.add(h)
        if h == goal:
            break
        if h != start and stops is not None and stops(h):
            continue
        for n in neighbors(h):
            step = step_cost(h, n)
            if step is None:
                continue
            total = cost + step
            if total <= budget and total < costs.get(n, total + 1):
                costs[n] = total
                came[n] = h
                heapq.heappush(frontier, (total, n))
    return costs, came
