"""Printable tag sheets and anchor mats as PDF, at exact scale, one sheet per way of mounting a tag.

Tags are drawn as vector cells from `vision.tag_family.tag_bitmap`, so a printed tag is the published
bitmap cell for cell. Every page carries a check ruler (inches with tenths, and millimetres): measure it
after printing; if 6" does not measure 6", turn off the printer's "fit to page" scaling.

A figure stands on every base, so a tag under its feet is never seen. A tag sheet is printed for one mount:

- `topper`: cards to fold and glue on a pin or wire above the figure's head (seen from everywhere);
- `rim`: cards cut to the base's edge, glued flat beside the figure's feet on a base wide enough;
- `flat`: bare tags, for tokens, objective markers and tiles that carry no figure.

Each sheet prints the roster values that go with it and a picture of the tag's own axes: +y toward the
tag's top edge as printed (away from its printed id), +x to its right, as `vision.synth.render` and
`vision.positions` read a tag seen from above, so `"tag_offset_in": [dx, dy]` is measured in that frame.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from fpdf import FPDF

from calibration.errors import InputError
from calibration.layout import AnchorLayout
from rules.roster import tag_side_for_base
from vision.tag_family import BLACK_CELLS, CELLS, TAG_COUNT, tag_bitmap

PAPER_IN = {"letter": (8.5, 11.0), "a4": (210 / 25.4, 297 / 25.4)}
MARGIN_IN = 0.5
RULER_IN = 6.0
"""Length of the inch ruler; the millimetre ruler is 150 mm."""
BASE_SIZES_MM = (25, 28, 32, 40, 50)
"""Round base sizes with a matching default tag size."""
MM_PER_INCH = 25.4

MOUNTS = ("flat", "topper", "rim")
"""How a tag is fixed to its base: see the module's docstring."""
FLAT_TAG_IN = 0.75
"""A flat tag's black square without --size or --base, inches."""
TOPPER_TAG_IN = 0.7
"""A topper's black square without --size, inches: 10 of 10 units found at 1080p, 1.85" up (issue 15)."""
BASE_HEIGHT_IN = 0.125
"""A usual base's top above the table, inches (the roster's default base_height_in)."""
PIN_IN = 1.725
"""A topper's tag face above the base's top, inches: clears a 1.35" figure; with a 0.125" base, 1.85" up."""
CLEARANCE_IN = 0.3
"""The radius around a base's centre that a figure's feet need, inches (a 28-32 mm scale infantry figure)."""
MIN_READABLE_TAG_IN = 0.45
"""The smallest black square a 1080p camera about 3 ft up reads everywhere on the board, inches
(0.51-0.57" tags were missed now and then at 720p; docs/bench.md)."""
CUT_MARGIN_IN = 0.03
"""White paper left outside a tag's white border by its cut line, so a slip of the knife spares the border."""
RIM_BEVEL_IN = 0.06
"""How far inside a round base's diameter its flat top ends (a usual 1.5 mm bevel), inches."""
GREY_CUT = 110
"""Grey of cut and fold lines (0 black, 255 white)."""
GREY_GUIDE = 175
"""Grey of the guides that are not cut (the base's outline, the feet, the line to the centre)."""


class PrintableError(InputError):
    """A tag sheet or mat that cannot be made as asked."""


def tag_size_for_base(base_mm: float) -> float:
    """The largest tag (black square side, inches, to 0.01") whose white border fits inside the base with 8 % spare."""
    return tag_side_for_base(base_mm)


def white_side(size_in: float) -> float:
    """The side of a tag's white square (its full 10 x 10 bitmap) for a black square of `size_in`, inches."""
    return size_in * CELLS / BLACK_CELLS


def topper_size_for_base(base_mm: float) -> float:
    """A topper's black square for a base: `TOPPER_TAG_IN`, or less when its card would be wider than the base
    (toppers of bases in contact would then overlap), to 0.01"."""
    card_fits = (base_mm / MM_PER_INCH - 2 * CUT_MARGIN_IN) * BLACK_CELLS / CELLS
    return min(TOPPER_TAG_IN, math.floor(card_fits * 100) / 100)


def parse_ids(text: str) -> list[int]:
    """Tag ids from "10-29", "12", or "10-14,20,22-23"; raises PrintableError naming the bad part."""
    ids: list[int] = []
    for part in (text or "").split(","):
        part = part.strip()
        lo, _, hi = part.partition("-")
        hi = hi or lo
        # ASCII digits only: int() also takes "1_0", "+10" and other scripts' digits ("١٠"), which would then be
        # echoed into a download's file name
        if not (lo.isascii() and lo.isdigit() and hi.isascii() and hi.isdigit()):
            raise PrintableError(f"--ids {text[:60]!r} is not a list of ids; write e.g. 10-29 or 10,12,14-16.")
        first, last = int(lo), int(hi)
        if first > last or first < 0 or last >= TAG_COUNT:
            raise PrintableError(f"--ids part {part[:40]!r} is not a range within 0-{TAG_COUNT - 1}.")
        ids.extend(range(first, last + 1))
    if not ids:
        raise PrintableError("--ids names no tags; write e.g. 10-29.")
    return ids


def _num(x: float) -> int | float:
    """A length as the sheet and the roster write it: to 0.001", a whole number without its ".0"."""
    r = round(float(x), 3)
    return int(r) if r == int(r) else r


@dataclass(frozen=True)
class RimFit:
    """Where a rim tag goes: its black square and its centre's distance from the base centre, inches."""

    tag_in: float
    offset_in: float


def rim_fit(base_mm: float, clearance_in: float, size_in: float | None = None) -> RimFit:
    """The rim tag for a round base of `base_mm` whose figure's feet need `clearance_in` around the centre.

    The tag's white square (plus the cut margin) lies between the feet's circle and the base's flat top,
    its top edge toward the rim, as far out as it fits. Without `size_in`: the largest such tag, to 0.01";
    refused when it is below `MIN_READABLE_TAG_IN`. With `size_in`: refused when that tag does not fit.
    """
    radius = base_mm / MM_PER_INCH / 2
    if not 0 <= clearance_in < radius:
        raise PrintableError(
            f"--clearance {clearance_in:g} is not a radius inside a {base_mm:g} mm base; give the inches around the "
            f"centre the figure's feet need, 0 to {radius:.2f}."
        )
    top = radius - RIM_BEVEL_IN - CUT_MARGIN_IN  # the white square's outer corners stay inside this circle
    inner = clearance_in + CUT_MARGIN_IN  # and its inner edge outside this one
    room = 5 * top**2 - inner**2
    # the largest white square w with its inner edge at `inner`: (inner + w)^2 + (w/2)^2 = top^2
    widest = (math.sqrt(room) - 2 * inner) / 2.5 if room > 0 and top > 0 else 0.0
    largest = math.floor(max(widest, 0.0) * BLACK_CELLS / CELLS * 100) / 100
    where = f'a {base_mm:g} mm base with {clearance_in:g}" kept clear for the feet'
    if size_in is None:
        if largest < MIN_READABLE_TAG_IN:
            room_words = f'room for a {largest:g}" tag at most' if largest >= 0.1 else "no room for a tag"
            raise PrintableError(
                f"No tag a camera can read fits between the feet and the rim of {where} ({room_words}; a 1080p camera "
                f'3 ft up needs {MIN_READABLE_TAG_IN:g}" or more): print toppers instead (--mount topper) or use a wider base.'
            )
        size_in = largest
    white = white_side(size_in)
    nearest = inner + white / 2
    farthest = math.sqrt(max(top**2 - white**2 / 4, 0.0)) - white / 2 if top > white / 2 else -math.inf
    if farthest < nearest:
        fix = f"make --size {largest:g} or less or --clearance smaller," if largest >= 0.2 else "use a wider base"
        raise PrintableError(
            f'A {size_in:g}" tag does not fit between the feet and the rim of {where}; {fix} or print toppers '
            "(--mount topper)."
        )
    offset = math.floor(farthest * 100) / 100  # as far out as it fits, to 0.01"
    if offset < nearest:  # no 0.01" step between the feet and the rim: to 0.001", inside the cut margin at worst
        offset = math.ceil(nearest * 1000) / 1000
    return RimFit(tag_in=size_in, offset_in=offset)


@dataclass(frozen=True)
class MountSheet:
    """One tag sheet as asked: the mount, the tag, and the base it goes on. Lengths in inches."""

    mount: str
    tag_in: float
    base_mm: float | None = None
    base_height_in: float = BASE_HEIGHT_IN
    """The base's top above the table (a flat or rim tag's face is there)."""
    pin_in: float = 0.0
    """A topper's tag face above the base's top; 0 for flat and rim tags."""
    clearance_in: float = 0.0
    """A rim tag: the radius around the centre kept clear for the feet."""
    offset_in: float = 0.0
    """A rim tag: its centre's distance from the base centre, along the tag's +y."""

    @property
    def face_height_in(self) -> float:
        """The tag face's height above the table: the roster's base_height_in."""
        return self.base_height_in + self.pin_in

    def roster_values(self) -> dict[str, object]:
        """The roster keys every unit printed on this sheet needs (with its tag, name, profile and owner)."""
        values: dict[str, object] = {}
        if self.base_mm is not None:
            values["base_mm"] = _num(self.base_mm)
        values["base_height_in"] = _num(self.face_height_in)
        values["tag_in"] = _num(self.tag_in)
        values["tag_offset_in"] = [0, _num(self.offset_in)]
        return values

    def roster_text(self) -> str:
        """`roster_values` as it is written in a roster file: "key": value, ..."""
        return json.dumps(self.roster_values())[1:-1]


def _check_length(value: float, flag: str, low: float, high: float, what: str) -> float:
    if not low <= value <= high:  # also refuses nan
        raise PrintableError(f"{flag} {value:g} is not {what}; give {low:g} to {high:g} inches.")
    return float(value)


def plan_sheet(
    mount: str = "flat",
    size_in: float | None = None,
    base_mm: float | None = None,
    *,
    pin_in: float | None = None,
    clearance_in: float | None = None,
    base_height_in: float | None = None,
) -> MountSheet:
    """The sheet for `mount` with defaults filled in; PrintableError names the first input that cannot work.

    flat: `size_in`, else the largest tag that fits `base_mm` with its cut circle, else `FLAT_TAG_IN`.
    topper: `size_in`, else `topper_size_for_base(base_mm)`, else `TOPPER_TAG_IN`; `pin_in` (default `PIN_IN`)
    is the tag face's height above the base's top. rim: needs `base_mm`; `clearance_in` (default
    `CLEARANCE_IN`); `size_in`, else the largest readable tag that fits (see `rim_fit`).
    """
    if mount not in MOUNTS:
        raise PrintableError(f"--mount {mount!r} is not a mount; use topper, rim or flat.")
    if size_in is not None and not 0.2 <= size_in <= 8.0:
        raise PrintableError(f"--size {size_in:g} is not a printable tag size; give the black square's side, 0.2 to 8 inches.")
    if base_mm is not None and not 10 <= base_mm <= 200:
        raise PrintableError(f"--base {base_mm:g} is not a base diameter in mm; use e.g. 25, 32 or 50.")
    if pin_in is not None and mount != "topper":
        raise PrintableError(f"--pin is the height of a topper's pin, not of a {mount} tag; drop it or use --mount topper.")
    if clearance_in is not None and mount != "rim":
        raise PrintableError(f"--clearance sizes a rim tag beside the feet, not a {mount} tag; drop it or use --mount rim.")
    base_h = _check_length(BASE_HEIGHT_IN if base_height_in is None else base_height_in, "--base-height", 0.0, 2.0,
                           "a base's height above the table")
    if mount == "topper":
        pin = _check_length(PIN_IN if pin_in is None else pin_in, "--pin", 0.2, 8.0,
                            "the height of the tag face above the base's top")
        size = size_in if size_in is not None else (topper_size_for_base(base_mm) if base_mm else TOPPER_TAG_IN)
        return MountSheet("topper", size, base_mm, base_h, pin_in=pin)
    if mount == "rim":
        if base_mm is None:
            raise PrintableError("A rim tag is cut to its base: give the base's diameter in mm (--base), e.g. 60.")
        clearance = CLEARANCE_IN if clearance_in is None else clearance_in
        if not math.isfinite(clearance):
            raise PrintableError(f"--clearance {clearance:g} is not a radius; give the inches the figure's feet need, e.g. 0.3.")
        fit = rim_fit(base_mm, clearance, size_in)
        return MountSheet("rim", fit.tag_in, base_mm, base_h, clearance_in=clearance, offset_in=fit.offset_in)
    size = size_in if size_in is not None else (tag_size_for_base(base_mm) if base_mm else FLAT_TAG_IN)
    if base_mm is not None and white_side(size) * math.sqrt(2) > base_mm / MM_PER_INCH:
        raise PrintableError(
            f"A {size:g}\" tag does not fit a {base_mm:g} mm base; use --size {tag_size_for_base(base_mm):g} or less."
        )
    return MountSheet("flat", size, base_mm, base_h)


def draw_tag(pdf: FPDF, tag_id: int, x: float, y: float, size_in: float) -> None:
    """Draw the full 10 x 10 bitmap with its black square `size_in` a side; (x, y) is the bitmap's top-left."""
    cell = size_in / BLACK_CELLS
    bitmap = tag_bitmap(tag_id)
    pdf.set_fill_color(0, 0, 0)
    for row in range(CELLS):
        col = 0
        while col < CELLS:
            if bitmap[row, col] < 128:
                start = col
                while col < CELLS and bitmap[row, col] < 128:
                    col += 1
                pdf.rect(x + start * cell, y + row * cell, (col - start) * cell, cell, style="F")
            else:
                col += 1


def _draw_ruler(pdf: FPDF, x: float, y: float) -> None:
    """An inch ruler (tenths) and a millimetre ruler below it, both starting at x."""
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.005)
    pdf.line(x, y, x + RULER_IN, y)
    for i in range(int(RULER_IN * 10) + 1):
        tick = 0.2 if i % 10 == 0 else (0.12 if i % 5 == 0 else 0.07)
        pdf.line(x + i / 10, y, x + i / 10, y + tick)
        if i % 10 == 0:
            pdf.text(x + i / 10 - 0.03, y + 0.33, str(i // 10))
    pdf.text(x + RULER_IN + 0.1, y + 0.1, 'inches: 6" must measure 6"')
    ym = y + 0.6
    pdf.line(x, ym, x + 150 / 25.4, ym)
    for mm in range(151):
        tick = 0.2 if mm % 10 == 0 else (0.12 if mm % 5 == 0 else 0.06)
        pdf.line(x + mm / 25.4, ym, x + mm / 25.4, ym + tick)
        if mm % 50 == 0:
            pdf.text(x + mm / 25.4 - 0.04, ym + 0.33, str(mm))
    pdf.text(x + 150 / 25.4 + 0.1, ym + 0.1, "mm: 150 mm must measure 150 mm")


def _arrow(pdf: FPDF, x0: float, y0: float, x1: float, y1: float) -> None:
    """A black arrow from (x0, y0) to (x1, y1), its head at the end."""
    pdf.set_draw_color(0, 0, 0)
    pdf.set_fill_color(0, 0, 0)
    pdf.set_line_width(0.012)
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    head, half = 0.07, 0.035
    bx, by = x1 - ux * head, y1 - uy * head
    pdf.line(x0, y0, bx, by)
    pdf.polygon([(x1, y1), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half)], style="F")


def _draw_axes(pdf: FPDF, x: float, y: float) -> None:
    """The tag's own axes as a picture 1.3" wide, its top-left at (x, y): a tag (grey), its printed id below it,
    +x to the right and +y toward its top edge."""
    side = 0.42
    cx, cy = x + 0.6, y + 0.55
    pdf.set_font("helvetica", "B", 7)
    pdf.text(x, y + 0.08, "The tag's own axes")
    pdf.set_draw_color(GREY_CUT, GREY_CUT, GREY_CUT)
    pdf.set_fill_color(225, 225, 225)
    pdf.set_line_width(0.006)
    pdf.rect(cx - side / 2, cy - side / 2, side, side, style="DF")
    pdf.set_fill_color(0, 0, 0)
    pdf.rect(cx - side / 2, cy - side / 2, side, 0.035, style="F")  # the top edge, thick
    pdf.set_font("helvetica", "", 6)
    pdf.text(x, cy - side / 2 + 0.03, "top edge")
    pdf.text(cx - 0.1, cy + side / 2 + 0.12, "id 10")
    _arrow(pdf, cx, cy, cx + side / 2 + 0.28, cy)
    _arrow(pdf, cx, cy, cx, cy - side / 2 - 0.22)
    pdf.set_font("helvetica", "B", 8)
    pdf.text(cx + side / 2 + 0.31, cy + 0.04, "+x")
    pdf.text(cx + 0.05, cy - side / 2 - 0.16, "+y")
    pdf.set_font("helvetica", "", 6)
    pdf.set_xy(x, cy + side / 2 + 0.17)
    pdf.multi_cell(1.3, 0.1, "+y toward the tag's top edge (away from its printed id), +x to its right, as printed.",
                   align="L")


def _new_pdf(paper: str, title: str) -> tuple[FPDF, float, float]:
    if paper not in PAPER_IN:
        raise PrintableError(f"Paper {paper!r} is not known; use letter or a4.")
    w, h = PAPER_IN[paper]
    pdf = FPDF(unit="in", format=(w, h))
    pdf.set_auto_page_break(False)
    pdf.set_margins(MARGIN_IN, MARGIN_IN, MARGIN_IN)
    pdf.set_title(title)
    pdf.set_creator("Tablesight")
    pdf.set_font("helvetica", size=8)
    return pdf, w, h


@dataclass(frozen=True)
class SheetLayout:
    """Where tags go on a page: pitch and count per row/column, inches."""

    pitch_in: float
    columns: int
    rows: int


def _sizes(sheet: MountSheet) -> str:
    return f'{sheet.tag_in:g}" ({sheet.tag_in * MM_PER_INCH:.1f} mm) black square'


def _header(pdf: FPDF, sheet: MountSheet, w: float) -> float:
    """The sheet's title, what to do with it and its roster values; returns the y where the tags may start."""
    base = f", {sheet.base_mm:g} mm bases" if sheet.base_mm else ""
    title = {"flat": "flat tags", "topper": "topper cards", "rim": "rim tags"}[sheet.mount]
    pdf.set_font("helvetica", "B", 10)
    pdf.text(MARGIN_IN, MARGIN_IN + 0.1, f"Tablesight {title}: tag36h11, {_sizes(sheet)}{base}. Print at 100 %.")
    text_w = w - 2 * MARGIN_IN - 1.5
    if sheet.mount == "topper":
        body = (
            "Cut on the solid line, fold on the dashed line and glue the two halves back to back, the tag face up. "
            "Glue the card level on a pin or wire at the pin mark (+), the pin upright at the base's centre, "
            f'the tag face {sheet.pin_in:g}" above the base\'s top: above the figure\'s head, where the camera sees '
            "it from everywhere (10 of 10 units found at 1080p). Any turn of the card works."
        )
        why = f'base_height_in is the tag face above the table: a {sheet.base_height_in:g}" base + a {sheet.pin_in:g}" pin.'
    elif sheet.mount == "rim":
        body = (
            f'Cut on the solid line. Lay the card flat on the base\'s top beside the feet (they need {sheet.clearance_in:g}" '
            "around the centre), its curved edge along the base's edge and the dotted line pointing at the centre; "
            "glue it down, and write its id under the base. A figure or a neighbour can hide a rim tag from some camera angles (6-7 of 10 units found "
            "at 1080p): where that matters, use toppers."
        )
        why = (f'tag_offset_in: the tag centre is {sheet.offset_in:g}" from the base centre along its +y '
               "(the base centre lies toward the printed id).")
    else:
        body = (
            "For tokens, objective markers and tiles that carry no figure. A tag under a figure's feet is never "
            "seen (0 of 10 units found): for a base with a figure on it print topper cards instead, or rim tags "
            "on a base wide enough to leave room beside the feet."
        )
        why = "base_height_in is the tag face above the table: glued on top of a base, the base's height."
    pdf.set_font("helvetica", "", 8)
    pdf.set_xy(MARGIN_IN, MARGIN_IN + 0.2)
    pdf.multi_cell(text_w, 0.14, body, align="L")
    pdf.set_xy(MARGIN_IN, pdf.get_y() + 0.06)
    pdf.multi_cell(text_w, 0.14, "Roster values for each unit on this sheet (with its tag id, name, profile, owner):",
                   align="L")
    pdf.set_font("courier", "B", 8)
    pdf.set_xy(MARGIN_IN, pdf.get_y() + 0.02)
    pdf.multi_cell(text_w, 0.15, sheet.roster_text(), align="L")
    pdf.set_font("helvetica", "", 7)
    pdf.set_xy(MARGIN_IN, pdf.get_y() + 0.02)
    pdf.multi_cell(text_w, 0.12, why, align="L")
    _draw_axes(pdf, w - MARGIN_IN - 1.3, MARGIN_IN + 0.22)
    return max(pdf.get_y(), MARGIN_IN + 1.45) + 0.15


def _cut_pen(pdf: FPDF, grey: int = GREY_CUT, dashed: bool = False) -> None:
    pdf.set_draw_color(grey, grey, grey)
    pdf.set_line_width(0.006)
    if dashed:
        pdf.set_dash_pattern(dash=0.04, gap=0.03)
    else:
        pdf.set_dash_pattern()


def _flat_cell(pdf: FPDF, sheet: MountSheet, tag_id: int, cx: float, cy: float, cell: float) -> None:
    full = white_side(sheet.tag_in)
    draw_tag(pdf, tag_id, cx - full / 2, cy - full / 2, sheet.tag_in)
    if sheet.base_mm:
        _cut_pen(pdf, 150)
        pdf.set_line_width(0.004)
        pdf.circle(cx, cy, sheet.base_mm / MM_PER_INCH / 2, style="D")
    pdf.set_font("helvetica", "", 7)
    pdf.text(cx - 0.1, cy + cell / 2 + 0.13, f"id {tag_id}")


def _topper_cell(pdf: FPDF, sheet: MountSheet, tag_id: int, cx: float, top: float) -> None:
    """A topper card, `cx` its centre line, `top` its top edge: the tag panel, a fold, the back panel with the pin
    mark exactly under the tag's centre once folded."""
    full = white_side(sheet.tag_in)
    card = full + 2 * CUT_MARGIN_IN
    left, fold, bottom = cx - card / 2, top + card, top + 2 * card
    draw_tag(pdf, tag_id, cx - full / 2, top + CUT_MARGIN_IN, sheet.tag_in)
    _cut_pen(pdf)
    pdf.rect(left, top, card, 2 * card, style="D")
    _cut_pen(pdf, dashed=True)
    pdf.line(left, fold, left + card, fold)
    _cut_pen(pdf)
    pin_y = fold + card / 2
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.008)
    pdf.circle(cx, pin_y, 0.05, style="D")
    arm = min(0.12, card / 2 - 0.06)
    pdf.line(cx - arm, pin_y, cx + arm, pin_y)
    pdf.line(cx, pin_y - arm, cx, pin_y + arm)
    pdf.set_font("helvetica", "", 6)
    pdf.text(cx - 0.22, pin_y + arm + 0.1, "pin here, upright")
    pdf.set_font("helvetica", "B", 7)
    pdf.text(cx - 0.11, pin_y + arm + 0.22, f"id {tag_id}")
    pdf.set_font("helvetica", "", 7)
    pdf.text(cx - 0.1, bottom + 0.14, f"id {tag_id}")


def _rim_cell(pdf: FPDF, sheet: MountSheet, tag_id: int, bx: float, by: float) -> None:
    """A rim card on a picture of half its base, the base centre at (bx, by): the card's outer edge is the base's
    top edge, the tag's top edge toward it."""
    assert sheet.base_mm is not None
    radius = sheet.base_mm / MM_PER_INCH / 2
    top = radius - RIM_BEVEL_IN
    full = white_side(sheet.tag_in)
    half = full / 2 + CUT_MARGIN_IN
    inner = sheet.offset_in - full / 2 - CUT_MARGIN_IN
    rise = math.sqrt(top**2 - half**2)
    # guides, not cut: the base's outline, the feet's circle, the line to the centre, the centre
    _cut_pen(pdf, GREY_GUIDE)
    pdf.polyline([(bx + radius * math.cos(math.pi * k / 96), by - radius * math.sin(math.pi * k / 96))
                  for k in range(97)])  # the base's edge, its half on the tag's side
    _cut_pen(pdf, GREY_GUIDE, dashed=True)
    if sheet.clearance_in > 0.05:
        pdf.circle(bx, by, sheet.clearance_in, style="D")
    pdf.set_dash_pattern(dash=0.015, gap=0.03)
    pdf.line(bx, by - inner, bx, by)
    pdf.set_dash_pattern()
    pdf.set_fill_color(0, 0, 0)
    pdf.circle(bx, by, 0.02, style="F")
    # the card: its inner edge, two sides, the arc of the base's top edge
    a0 = math.atan2(rise, half)
    arc = [(bx + top * math.cos(t), by - top * math.sin(t))
           for t in (a0 + (math.pi - 2 * a0) * k / 48 for k in range(49))]
    _cut_pen(pdf)
    pdf.polyline([(bx - half, by - inner), (bx + half, by - inner), *arc, (bx - half, by - inner)])
    draw_tag(pdf, tag_id, bx - full / 2, by - sheet.offset_in - full / 2, sheet.tag_in)
    pdf.set_font("helvetica", "B", 7)
    pdf.text(bx - 0.11, by + 0.15, f"id {tag_id}")
    pdf.set_font("helvetica", "", 6)
    pdf.text(bx - 0.16, by + 0.26, "base centre")


def mount_sheet_pdf(ids: Sequence[int], sheet: MountSheet, paper: str = "letter") -> bytes:
    """A PDF of `sheet`'s tags, one per id, at exact scale, with what to do, the roster values, the tag's axes and
    a check ruler on every page."""
    pdf, w, h = _new_pdf(paper, f"Tablesight {sheet.mount} tags {ids[0]}-{ids[-1]}")
    full = white_side(sheet.tag_in)
    gap = 0.3
    if sheet.mount == "topper":
        card = full + 2 * CUT_MARGIN_IN
        cell_w, cell_h = card, 2 * card + 0.2
    elif sheet.mount == "rim":
        assert sheet.base_mm is not None
        cell_w, gap = sheet.base_mm / MM_PER_INCH, 0.1
        cell_h = cell_w / 2 + 0.3  # half the base, the id and "base centre" under its centre
    else:
        cell_w = cell_h = max(full, (sheet.base_mm or 0) / MM_PER_INCH)
        cell_h += 0.2
    bottom = h - MARGIN_IN - 1.2  # the rulers below
    columns = max(1, int((w - 2 * MARGIN_IN + gap) // (cell_w + gap)))
    pitch_x = (w - 2 * MARGIN_IN) / columns
    k = 0
    while k < len(ids):
        pdf.add_page()
        y = _header(pdf, sheet, w)
        rows = max(1, int((bottom - y + gap) // (cell_h + gap)))
        for r in range(rows):
            for c in range(columns):
                if k >= len(ids):
                    break
                cx = MARGIN_IN + (c + 0.5) * pitch_x
                top = y + r * (cell_h + gap)
                if sheet.mount == "topper":
                    _topper_cell(pdf, sheet, ids[k], cx, top)
                elif sheet.mount == "rim":
                    _rim_cell(pdf, sheet, ids[k], cx, top + cell_w / 2)
                else:
                    _flat_cell(pdf, sheet, ids[k], cx, top + (cell_h - 0.2) / 2, cell_h - 0.2)
                k += 1
        pdf.set_font("helvetica", "", 7)
        _draw_ruler(pdf, MARGIN_IN, h - MARGIN_IN - 1.0)
    return bytes(pdf.output())


def tag_sheet_pdf(ids: Sequence[int], size_in: float, base_mm: float | None = None, paper: str = "letter") -> bytes:
    """A PDF of flat tags `size_in` a side (black square), each with its id and, given `base_mm`, the base's cut
    circle: `mount_sheet_pdf` of `plan_sheet("flat", ...)`."""
    return mount_sheet_pdf(ids, plan_sheet("flat", size_in, base_mm), paper)


def anchor_mat_pdf(layout: AnchorLayout, paper: str = "letter") -> bytes:
    """One page per anchor: the tag at its layout size with where it goes on the board, and a check ruler."""
    pdf, w, h = _new_pdf(paper, "Tablesight anchor mat")
    board_w, board_d = layout.board
    for anchor_id in sorted(layout.anchors):
        anchor = layout.anchors[anchor_id]
        size = anchor.size_in
        full = size * CELLS / BLACK_CELLS
        if full > w - 2 * MARGIN_IN or full > h - 2 * MARGIN_IN - 2.2:
            raise PrintableError(f"Anchor {anchor_id} ({size:g}\") does not fit on {paper} paper; use a smaller anchor size.")
        pdf.add_page()
        pdf.set_font("helvetica", size=11)
        pdf.text(MARGIN_IN, MARGIN_IN, f'Anchor {anchor_id} for a {board_w:g}" x {board_d:g}" board')
        pdf.set_font("helvetica", size=9)
        cx, cy = anchor.centre
        pdf.text(MARGIN_IN, MARGIN_IN + 0.25, f'Centre at table ({cx:g}", {cy:g}"): origin is the play-area corner nearest anchor 0,')
        pdf.text(MARGIN_IN, MARGIN_IN + 0.42, "+x toward anchor 1, +y toward anchor 3. Any right-angle rotation of the tag works.")
        pdf.text(MARGIN_IN, MARGIN_IN + 0.59, f'Black square {size:g}" ({size * 25.4:.1f} mm) a side. Print at 100 %.')
        x0 = (w - full) / 2
        y0 = MARGIN_IN + 0.9
        draw_tag(pdf, anchor_id, x0, y0, size)
        pdf.set_font("helvetica", size=7)
        _draw_ruler(pdf, MARGIN_IN, h - MARGIN_IN - 1.0)
    return bytes(pdf.output())
