"""Valknut's battlefield: the 22" x 30" area, its six 11" x 10" sections and which sections are adjacent.

Rule (Pregame Setup): mark out a 22" x 30" Battlefield; divide it into two 11" x 30" strips and each strip
into three 11" x 10" sections; label them 1 to 6.

The rule book's picture of the numbering (Setup.png) is not part of the text we serve, so the numbering is
ours and documented: the long side is cut into three 10" bands and the short side into two 11" strips;
sections 1, 2, 3 lie in the strip nearer the origin, counted along the long side from the origin, and 4, 5,
6 in the other strip, counted the same way. The odd sections (1, 3, 5) and the even ones (2, 4, 6) then
form a checkerboard, so each player's Runic Stockpiles are spread over the whole battlefield.

Two sections are *adjacent* when they share an edge. (Counting corners too would leave the second player no
legal Drop Zone when the first picks a middle section, so only edges count.)
"""

from __future__ import annotations

from dataclasses import dataclass

from shapely.geometry import Polygon, box

from rules.engine import Inches, RulesInputError

LONG_IN = 30.0
SHORT_IN = 22.0
BAND_IN = 10.0
STRIP_IN = 11.0


@dataclass(frozen=True)
class Section:
    """One of the six 11" x 10" sections: its number (1-6) and corners, table inches."""

    number: int
    x0: Inches
    y0: Inches
    x1: Inches
    y1: Inches

    @property
    def area(self) -> Polygon:
        return box(self.x0, self.y0, self.x1, self.y1)

    @property
    def corners(self) -> tuple[tuple[Inches, Inches], ...]:
        return ((self.x0, self.y0), (self.x1, self.y0), (self.x1, self.y1), (self.x0, self.y1))

    @property
    def centre(self) -> tuple[Inches, Inches]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    def holds(self, x: Inches, y: Inches) -> bool:
        """Whether the point lies in this section (edges included)."""
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1


@dataclass(frozen=True)
class Battlefield:
    """The 22" x 30" Battlefield laid on the table: width along table x, depth along table y (30 x 22 or 22 x 30)."""

    width_in: Inches = LONG_IN
    depth_in: Inches = SHORT_IN

    def __post_init__(self) -> None:
        if sorted((round(self.width_in, 6), round(self.depth_in, 6))) != [SHORT_IN, LONG_IN]:
            raise RulesInputError(
                f'The Valknut battlefield is 22" x 30"; got {self.width_in:g}" x {self.depth_in:g}". '
                'Give "board": {"width_in": 30, "depth_in": 22} (or 22 and 30).'
            )

    @property
    def long_along_x(self) -> bool:
        return self.width_in > self.depth_in

    @property
    def area(self) -> Polygon:
        return box(0.0, 0.0, self.width_in, self.depth_in)

    def sections(self) -> tuple[Section, ...]:
        """Sections 1-6 (see the module docstring for the numbering)."""
        out = []
        for strip in range(2):
            for band in range(3):
                n = strip * 3 + band + 1
                if self.long_along_x:
                    out.append(Section(n, band * BAND_IN, strip * STRIP_IN, (band + 1) * BAND_IN, (strip + 1) * STRIP_IN))
                else:
                    out.append(Section(n, strip * STRIP_IN, band * BAND_IN, (strip + 1) * STRIP_IN, (band + 1) * BAND_IN))
        return tuple(out)

    def section(self, number: int) -> Section:
        if not 1 <= number <= 6:
            raise RulesInputError(f"There is no section {number}; sections are numbered 1 to 6.")
        return self.sections()[number - 1]

    def section_at(self, x: Inches, y: Inches) -> int | None:
        """The section holding the point (the lower number on a shared edge), None off the battlefield."""
        for s in self.sections():
            if s.holds(x, y):
                return s.number
        return None


def adjacent(a: int, b: int) -> bool:
    """Whether sections a and b share an edge (same strip and neighbouring bands, or same band across strips)."""
    sa, ba = divmod(a - 1, 3)
    sb, bb = divmod(b - 1, 3)
    return (sa == sb and abs(ba - bb) == 1) or (ba == bb and sa != sb)


def second_drop_zone_allowed(first: int, second: int) -> bool:
    """Rule: the second Drop Zone may be neither the first player's section nor a section adjacent to it."""
    return second != first and not adjacent(first, second)


def odd(section: int) -> bool:
    return section % 2 == 1
