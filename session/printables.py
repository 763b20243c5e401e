"""Printable tag sheets and anchor mats as PDF, at exact scale.

Tags are drawn as vector cells from `vision.tag_family.tag_bitmap`, so a printed tag is the published
bitmap cell for cell. Every page carries a check ruler (inches with tenths, and millimetres): measure it
after printing; if 6" does not measure 6", turn off the printer's "fit to page" scaling.
"""

from __future__ import annotations

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


class PrintableError(InputError):
    """A tag sheet or mat that cannot be made as asked."""


def tag_size_for_base(base_mm: float) -> float:
    """The largest tag (black square side, inches, to 0.01") whose white border fits inside the base with 8 % spare."""
    return tag_side_for_base(base_mm)


def parse_ids(text: str) -> list[int]:
    """Tag ids from "10-29", "12", or "10-14,20,22-23"; raises PrintableError naming the bad part."""
    ids: list[int] = []
    for part in (text or "").split(","):
        part = part.strip()
        lo, _, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise PrintableError(f"--ids {text!r} is not a list of ids; write e.g. 10-29 or 10,12,14-16.") from None
        if first > last or first < 0 or last >= TAG_COUNT:
            raise PrintableError(f"--ids part {part!r} is not a range within 0-{TAG_COUNT - 1}.")
        ids.extend(range(first, last + 1))
    if not ids:
        raise PrintableError("--ids names no tags; write e.g. 10-29.")
    return ids


def _draw_tag(pdf: FPDF, tag_id: int, x: float, y: float, size_in: float) -> None:
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


def _new_pdf(paper: str, title: str) -> tuple[FPDF, float, float]:
    if paper not in PAPER_IN:
        raise PrintableError(f"Paper {paper!r} is not known; use letter or a4.")
    w, h = PAPER_IN[paper]
    pdf = FPDF(unit="in", format=(w, h))
    pdf.set_auto_page_break(False)
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


def tag_sheet_pdf(ids: Sequence[int], size_in: float, base_mm: float | None = None, paper: str = "letter") -> bytes:
    """A PDF of base tags `size_in` a side (black square), each with its id and, given `base_mm`, the base's cut circle."""
    if not 0.2 <= size_in <= 8.0:
        raise PrintableError(f"--size {size_in} is not a printable tag size; give the black square's side, 0.2 to 8 inches.")
    if base_mm is not None and size_in * CELLS / BLACK_CELLS * math.sqrt(2) > base_mm / 25.4:
        raise PrintableError(
            f"A {size_in:g}\" tag does not fit a {base_mm:g} mm base; use --size {tag_size_for_base(base_mm):g} or less."
        )
    pdf, w, h = _new_pdf(paper, f"Tablesight tags {ids[0]}-{ids[-1]}")
    footprint = max(size_in * CELLS / BLACK_CELLS, (base_mm or 0) / 25.4)
    pitch = footprint + 0.35
    columns = max(1, int((w - 2 * MARGIN_IN) // pitch))
    rows = max(1, int((h - 2 * MARGIN_IN - 1.6) // pitch))
    per_page = columns * rows
    for start in range(0, len(ids), per_page):
        pdf.add_page()
        pdf.set_font("helvetica", size=9)
        size_text = f'{size_in:g}" ({size_in * 25.4:.1f} mm) black square'
        base_text = f", {base_mm:g} mm bases" if base_mm else ""
        pdf.text(MARGIN_IN, MARGIN_IN - 0.15, f"Tablesight tag36h11 base tags, {size_text}{base_text}. Print at 100 %.")
        pdf.set_font("helvetica", size=7)
        for k, tag_id in enumerate(ids[start : start + per_page]):
            cx = MARGIN_IN + (k % columns) * pitch + pitch / 2
            cy = MARGIN_IN + (k // columns) * pitch + pitch / 2
            full = size_in * CELLS / BLACK_CELLS
            _draw_tag(pdf, tag_id, cx - full / 2, cy - full / 2, size_in)
            if base_mm:
                pdf.set_draw_color(150, 150, 150)
                pdf.set_line_width(0.004)
                pdf.circle(cx, cy, base_mm / 25.4 / 2, style="D")
            pdf.text(cx - 0.1, cy + footprint / 2 + 0.13, f"id {tag_id}")
        _draw_ruler(pdf, MARGIN_IN, h - MARGIN_IN - 1.0)
    return bytes(pdf.output())


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
        _draw_tag(pdf, anchor_id, x0, y0, size)
        pdf.set_font("helvetica", size=7)
        _draw_ruler(pdf, MARGIN_IN, h - MARGIN_IN - 1.0)
    return bytes(pdf.output())
