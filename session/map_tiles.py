"""Which part of the table each printed page of a map covers: a rectangle of table inches tiled over sheets of
paper at exact scale, neighbouring pages overlapping so that one is glued over the other.

Columns are lettered A, B, C ... along +x (toward anchor 1) and rows numbered 1, 2, 3 ... along +y (toward
anchor 3), so page A1 holds the corner nearest anchor 0, as square a1 does on a chess board. On paper +y points
up the page. A page's map window is the paper inside its margins less a header band across its top; the window
of page B2 starts `overlap_in` before the end of A2's (and of B1's), so B2 is cut along its left and bottom
edges and glued over A2's right edge and B1's top edge. Pure arithmetic: no paper, no drawing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle, x0 <= x1 and y0 <= y1 (inches; table frame or paper, as named)."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1

    def grown(self, by: float) -> Rect:
        """The rectangle with `by` inches added on every side."""
        return Rect(self.x0 - by, self.y0 - by, self.x1 + by, self.y1 + by)

    def union(self, other: Rect) -> Rect:
        return Rect(min(self.x0, other.x0), min(self.y0, other.y0), max(self.x1, other.x1), max(self.y1, other.y1))

    def gap_to(self, other: Rect) -> float:
        """The shortest distance between the two rectangles, inches (0 when they touch or overlap)."""
        dx = max(other.x0 - self.x1, self.x0 - other.x1, 0.0)
        dy = max(other.y0 - self.y1, self.y0 - other.y1, 0.0)
        return math.hypot(dx, dy)

    def overlap(self, other: Rect) -> Rect | None:
        """The rectangle both cover, or None when they share no area."""
        x0, y0 = max(self.x0, other.x0), max(self.y0, other.y0)
        x1, y1 = min(self.x1, other.x1), min(self.y1, other.y1)
        return Rect(x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def column_letters(column: int) -> str:
    """A, B, ..., Z, AA, AB, ... for columns 0, 1, ..."""
    name = ""
    n = column + 1
    while n:
        n, rest = divmod(n - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


@dataclass(frozen=True)
class PageTile:
    """One page of the map: its place in the grid and the table rectangle its window shows (inches)."""

    column: int
    """0 for column A, along +x."""
    row: int
    """0 for row 1, along +y."""
    table: Rect

    @property
    def name(self) -> str:
        """The page's grid label, e.g. "B2"."""
        return f"{column_letters(self.column)}{self.row + 1}"


@dataclass(frozen=True)
class TilePlan:
    """The pages of a map: paper (as the page is turned), the map window on it, and the tiles, row by row from row 1."""

    paper_in: tuple[float, float]
    """Width and height of a page as printed (landscape: the long side across), inches."""
    landscape: bool
    window: Rect
    """The map window on a page, paper inches from the page's top-left (y down the page)."""
    overlap_in: float
    columns: int
    rows: int
    tiles: tuple[PageTile, ...]

    def tile(self, column: int, row: int) -> PageTile:
        return self.tiles[row * self.columns + column]

    def to_paper(self, tile: PageTile, x: float, y: float) -> tuple[float, float]:
        """Where the table point (x, y) lies on `tile`'s page, paper inches from its top-left."""
        return (self.window.x0 + (x - tile.table.x0), self.window.y0 + (tile.table.y1 - y))

    def tiles_holding(self, x: float, y: float) -> tuple[PageTile, ...]:
        """The pages whose window shows the table point (x, y)."""
        return tuple(t for t in self.tiles if t.table.contains(x, y))


def _span(length: float, window: float, overlap: float) -> int:
    """How many windows of `window` inches, each overlapping the last by `overlap`, cover `length` inches."""
    if length <= window:
        return 1
    return math.ceil((length - overlap) / (window - overlap) - 1e-9)


def _plan(region: Rect, paper: tuple[float, float], landscape: bool, margin_in: float, header_in: float,
          overlap_in: float) -> TilePlan:
    w, h = (max(paper), min(paper)) if landscape else (min(paper), max(paper))
    window = Rect(margin_in, margin_in + header_in, w - margin_in, h - margin_in)
    columns = _span(region.width, window.width, overlap_in)
    rows = _span(region.height, window.height, overlap_in)
    step_x, step_y = window.width - overlap_in, window.height - overlap_in
    # the pages together cover a little more than the region: share the spare equally on both sides
    x0 = region.x0 - (columns * step_x + overlap_in - region.width) / 2
    y0 = region.y0 - (rows * step_y + overlap_in - region.height) / 2
    tiles = tuple(
        PageTile(c, r, Rect(x0 + c * step_x, y0 + r * step_y, x0 + c * step_x + window.width,
                            y0 + r * step_y + window.height))
        for r in range(rows)
        for c in range(columns)
    )
    return TilePlan((w, h), landscape, window, overlap_in, columns, rows, tiles)


def plan_tiles(region: Rect, paper_in: tuple[float, float], margin_in: float, header_in: float,
               overlap_in: float) -> TilePlan:
    """The fewest pages of `paper_in` (either way round; upright on a tie) whose map windows cover `region`
    (table inches), neighbours overlapping by `overlap_in` inches."""
    if overlap_in < 0 or min(paper_in) - 2 * margin_in - header_in <= 2 * overlap_in:
        raise ValueError("the paper leaves no room for a map window wider than two overlaps")
    upright = _plan(region, paper_in, False, margin_in, header_in, overlap_in)
    turned = _plan(region, paper_in, True, margin_in, header_in, overlap_in)
    return turned if len(turned.tiles) < len(upright.tiles) else upright
