"""A side's colour, on the pages and in the battle report alike: the colour its name says ("red", "Blue", "Red
Raiders"), else the next colour of the palette that no side has taken, in the order the sides first appear. A side
called "blue" is drawn blue whether or not it is listed first."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Palette:
    """named: a colour word ("red") -> this palette's shade of it; spare: for sides whose names say no colour, in
    order (then again from the first, past the last)."""

    named: Mapping[str, str]
    spare: tuple[str, ...]


PAGE = Palette(
    named={"red": "#e4572e", "blue": "#2e86de", "yellow": "#f4c430", "green": "#17a589", "purple": "#9b59b6",
           "pink": "#ff8fab", "orange": "#f39c12", "white": "#ecf0f1", "black": "#7f8c8d", "grey": "#b2babb",
           "gray": "#b2babb", "brown": "#a0522d", "gold": "#d4ac0d", "silver": "#d5dbdb"},
    spare=("#e4572e", "#2e86de", "#f4c430", "#17a589", "#9b59b6", "#ff8fab"),
)
"""Bright shades, drawn over the camera picture and the dark board."""


def owner_colours(owners: Iterable[str], palette: Palette,
                  other_colour: Callable[[str], str | None] = lambda name: None) -> dict[str, str]:
    """owner -> colour. A name says a colour when exactly one of its words is a colour word of the palette
    ("Team Blue"), or when `other_colour` (the report: any colour matplotlib knows, "forestgreen") gives one for
    the whole name; a colour another side has already taken is not given twice."""
    sides = list(dict.fromkeys(owners))
    out: dict[str, str] = {}
    for side in sides:
        key = side.strip().lower()
        words = {w for w in re.findall(r"[a-z]+", key) if w in palette.named}
        colour = palette.named[words.pop()] if len(words) == 1 else other_colour(key)
        if colour is not None and colour not in out.values():
            out[side] = colour
    taken = set(out.values())
    free = [c for c in palette.spare if c not in taken]
    rest = [side for side in sides if side not in out]
    for i, side in enumerate(rest):
        out[side] = free[i] if i < len(free) else palette.spare[(i - len(free)) % len(palette.spare)]
    return {side: out[side] for side in sides}
