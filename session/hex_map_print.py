"""A hex board printed at exact scale (1 inch on paper is 1 inch on the table) over several pages, with its anchors
where calibration expects them, so that the map lines up with the calibrated table without a tape measure.

The first page is the overview: the board's size, the play area to calibrate with, where the anchors go, an
assembly diagram and a legend. Then one page per tile (`session.map_tiles`): each cell outlined and filled by its
terrain, its elevation written as "level N", its [q, r] written small and a dot at its centre; walls drawn on
their edges; target marks in the strips where neighbouring pages overlap; and a 3" check ruler on every page.

The anchors are the default layout for the play area (DESIGN.md): the smallest whole-inch W x D that holds the
board as its layout lays it (the layout's origin is in table inches from the play-area corner near anchor 0), or
the size asked for. When all four lie within `ANCHOR_REACH_IN` of the board they are printed on the map itself,
tags and all; otherwise each gets a note of its distance from the nearest corner of the board's outline, marked
on the map.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fpdf import FPDF

from calibration.layout import default_layout
from rules.engine import find_game, game_names
from rules.hexgrid import Hex, HexBoard, Layout, parse_board, parse_layout
from session.map_tiles import PageTile, Rect, TilePlan, column_letters, plan_tiles
from session.printables import MARGIN_IN, PAPER_IN, PrintableError, draw_tag, white_side

HEADER_IN = 0.8
"""The band across the top of a map page for its label, what to do with it and the check ruler, inches."""
OVERLAP_IN = 0.5
"""How far neighbouring pages overlap, inches."""
BORDER_IN = 0.3
"""Paper printed around the board's outline, inches."""
ANCHOR_REACH_IN = 4.0
"""The anchors are printed on the map when every one's tag lies within this many inches of the board's outline."""
ANCHOR_ROOM_IN = 0.4
"""Paper kept around a printed anchor's white square for its centre ticks and its caption, inches."""
CHECK_RULER_IN = 3.0
"""Length of the check ruler on every page, inches."""
MAX_PAGES = 120
"""More pages than this is a board file's typo, not a map anyone prints."""
TERRAIN_RGB = {
    "land": (222, 236, 196),
    "sea": (196, 220, 244),
    "water": (160, 200, 236),
    "mountain": (206, 190, 168),
}
"""A cell's fill by terrain, light enough for its writing to read in black and white."""
OTHER_RGB = (235, 235, 235)
WALL_RGB = (70, 45, 25)
WALL_IN = 0.06
"""A wall's line width, inches."""


class MapError(PrintableError):
    """A map that cannot be printed as asked: not a hex board, or a board that does not fit the play area."""


@dataclass(frozen=True)
class MapBoard:
    """A hex board to print, how it lies on the table, and what to call it on the page."""

    board: HexBoard
    layout: Layout
    title: str


def _hex_game_title(name: str, source: str | None = None) -> str:
    """The title of game `name`; MapError (naming `source`, the file that named the game) when it plays on an
    open table."""
    game = find_game(name)
    if game.board != "hex":
        what = f"{source} is for {game.title}, which plays" if source else f"{game.title} plays"
        raise MapError(f"{what} on an open table in inches: it has no hex map to print; give a hex board file or a "
                       "hex game's name.")
    return game.title


def standard_map_board(name: str) -> MapBoard:
    """A board a game comes with, named as the setup page offers them: a hex game's name (its first standard
    board) or a standard board's own name (e.g. "magni_19"); MapError for an open-table game or an unknown name."""
    key = name.strip().lower()
    offered: list[str] = []
    for game_name in game_names():
        game = find_game(game_name)
        boards = game.standard_boards() if game.board == "hex" else ()
        if key == game.name:
            _hex_game_title(game.name)
            if not boards:
                raise MapError(f"{game.title} comes with no standard board; give a board file (docs/hex_boards.md).")
            return map_board(boards[0].board, f"{boards[0].title} ({game.title})", f"{game.title}'s standard board")
        for board in boards:
            if key == board.name.lower():
                return map_board(board.board, f"{board.title} ({game.title})", f"Standard board {board.name}")
        offered += dict.fromkeys((game.name, *(b.name for b in boards))) if boards else []
    raise MapError(f"{name[:60]!r} is neither a board file nor a standard board; give a board file "
                   f"(docs/hex_boards.md) or one of: {', '.join(dict.fromkeys(offered))}.")


def map_board(obj: Any, title: str, source: str) -> MapBoard:
    """A board from a board file's JSON, or from a roster or game setup that carries a "board" (a hex game's
    roster without one prints its game's standard board); MapError naming `source` when it holds no hex board."""
    if not isinstance(obj, Mapping):
        raise MapError(f"{source} is not a board file: it holds no JSON object; give a hex board file "
                       "(docs/hex_boards.md), a roster with a \"board\", or a hex game's name.")
    game = obj.get("game")
    if isinstance(game, str) and game:
        game_title = _hex_game_title(game, source)
        if "board" not in obj:
            return standard_map_board(game)
        board_obj = obj["board"]
        title = f"{title} ({game_title})"
        source = f"{source}'s board"
    else:
        board_obj = obj.get("board", obj)
    if not isinstance(board_obj, Mapping) or "layout" not in board_obj or not ("cells" in board_obj or "hexagon" in board_obj):
        raise MapError(f"{source} is not a hex board: it has no \"layout\" with \"cells\" or \"hexagon\"; give a hex "
                       "board file (docs/hex_boards.md), a roster with a \"board\", or a hex game's name.")
    layout = parse_layout(board_obj["layout"], f"{source}'s layout")
    return MapBoard(parse_board(board_obj, where=source), layout, title)


def table_map_board(game: str | None, roster: Mapping[str, Any] | None = None,
                    game_setup: Mapping[str, Any] | None = None) -> MapBoard:
    """The board of the game on the table: a recorded session's setup's "board", else the roster's (when it is for
    that game), else the game's standard board. MapError when no game is chosen or it plays on an open table."""
    if not game:
        raise MapError("No game is chosen, so there is no board to print; choose a hex game or load its roster first.")
    chosen = find_game(game)
    if chosen.board != "hex":
        raise MapError(f"{chosen.title} plays on an open table in inches: there is no hex map to print; choose a hex "
                       "game to print its board.")
    title = chosen.title
    for obj, what in ((game_setup, "The recorded game's setup"), (roster, "The roster")):
        if obj is not None and isinstance(obj.get("board"), Mapping) and obj.get("game", game) == game:
            return map_board(obj["board"], f"The board in play ({title})", f"{what}'s board")
    return standard_map_board(game)


# ---------------------------------------------------------------------------------------------- the plan


def board_outline(mb: MapBoard) -> Rect:
    """The smallest table rectangle holding every cell's six corners, inches."""
    xs = [p[0] for h in mb.board.cells for p in mb.layout.polygon(h)]
    ys = [p[1] for h in mb.board.cells for p in mb.layout.polygon(h)]
    return Rect(min(xs), min(ys), max(xs), max(ys))


def play_area_for(outline: Rect, asked: tuple[float, float] | None = None) -> tuple[float, float]:
    """The play area W x D (inches) whose anchors the map prints: `asked`, or the smallest whole-inch one holding
    `outline` (table inches from the corner near anchor 0). MapError when the board does not fit."""
    slack = 1e-6
    if outline.x0 < -slack or outline.y0 < -slack:
        side = "left of" if outline.x0 < -slack else "below"
        by = -min(outline.x0, outline.y0)
        raise MapError(f"The board reaches {by:.2f}\" {side} the play area's corner near anchor 0; move its layout's "
                       "origin so that every cell lies at 0\" or more from that corner.")
    smallest = (float(math.ceil(outline.x1 - slack)), float(math.ceil(outline.y1 - slack)))
    if asked is None:
        return smallest
    if outline.x1 > asked[0] + slack or outline.y1 > asked[1] + slack:
        raise MapError(f"The board reaches {outline.x1:.2f}\" x {outline.y1:.2f}\" from the play area's corner, more "
                       f"than a {asked[0]:g}\" x {asked[1]:g}\" board holds; give --board "
                       f"{max(smallest[0], asked[0]):g}x{max(smallest[1], asked[1]):g} or larger.")
    return asked


@dataclass(frozen=True)
class AnchorPlace:
    """Where one anchor goes: its centre (table inches), its black square's side, and whether it is printed on the
    map; an anchor off the map is placed from `corner`, the nearest corner of the board's outline (table inches)."""

    id: int
    centre: tuple[float, float]
    size_in: float
    on_map: bool
    corner: tuple[float, float]
    corner_cell: Hex

    @property
    def square(self) -> Rect:
        """The tag's white square on the table, inches."""
        half = white_side(self.size_in) / 2
        return Rect(self.centre[0] - half, self.centre[1] - half, self.centre[0] + half, self.centre[1] + half)

    def offset_words(self) -> tuple[str, str]:
        """How far the centre lies from the marked corner across and up the map, e.g. ('8.25" left', '9.60" down')."""
        dx, dy = self.centre[0] - self.corner[0], self.centre[1] - self.corner[1]
        return (f"{abs(dx):.2f}\" {'right' if dx >= 0 else 'left'}", f"{abs(dy):.2f}\" {'up' if dy >= 0 else 'down'}")

    def note(self) -> str:
        """Where an anchor off the map goes, in words: from its marked corner, square to the map's edges."""
        across, up = self.offset_words()
        return f"Anchor {self.id}'s centre goes {across} and {up} from the corner marked \"anchor {self.id}\""


@dataclass(frozen=True)
class MapPlan:
    """Everything a printed map shows, worked out before drawing: the board, the play area (W, D inches), the
    outline of the cells, the anchors and the pages."""

    board: MapBoard
    play_area: tuple[float, float]
    outline: Rect
    anchors: tuple[AnchorPlace, ...]
    tiles: TilePlan

    @property
    def pages(self) -> int:
        """Pages in the PDF: the overview and one per tile."""
        return 1 + len(self.tiles.tiles)


def _nearest_corner(mb: MapBoard, x: float, y: float) -> tuple[tuple[float, float], Hex]:
    best = min(((p, h) for h in mb.board.cells for p in mb.layout.polygon(h)),
               key=lambda ph: (math.hypot(ph[0][0] - x, ph[0][1] - y), ph[1]))
    return (round(best[0][0], 9), round(best[0][1], 9)), best[1]


def plan_map(mb: MapBoard, paper: str = "letter", play_area: tuple[float, float] | None = None) -> MapPlan:
    """The printed map of `mb` on `paper`, its anchors those of `play_area` (default: the smallest that holds it)."""
    if paper not in PAPER_IN:
        raise MapError(f"Paper {paper!r} is not known; use letter or a4.")
    outline = board_outline(mb)
    area = play_area_for(outline, play_area)
    layout = default_layout(*area)
    half = white_side(max(a.size_in for a in layout.anchors.values())) / 2
    # all four on the map or none: one anchor on it would add pages and still leave a tape measure to the others
    on_map = all(Rect(x - half, y - half, x + half, y + half).gap_to(outline) <= ANCHOR_REACH_IN
                 for x, y in (a.centre for a in layout.anchors.values()))
    anchors = [AnchorPlace(a.id, a.centre, a.size_in, on_map, *_nearest_corner(mb, *a.centre))
               for a in layout.anchors.values()]
    region = outline.grown(BORDER_IN)
    for place in anchors:
        if place.on_map:
            region = region.union(place.square.grown(ANCHOR_ROOM_IN))
    tiles = plan_tiles(region, PAPER_IN[paper], MARGIN_IN, HEADER_IN, OVERLAP_IN)
    if len(tiles.tiles) > MAX_PAGES:
        raise MapError(f"The board is {outline.width:.0f}\" x {outline.height:.0f}\" and would take "
                       f"{len(tiles.tiles)} pages; check its hex size and cells, or print at most "
                       f"{MAX_PAGES} pages.")
    return MapPlan(mb, area, outline, tuple(sorted(anchors, key=lambda a: a.id)), tiles)


def seam_targets(plan: TilePlan, tile: PageTile) -> tuple[tuple[float, float], ...]:
    """The target marks on `tile` (table inches): three along the middle of each strip it shares with a neighbour;
    the neighbour prints the same ones, so that the two pages line up when their targets do."""
    t, half = tile.table, plan.overlap_in / 2
    marks: list[tuple[float, float]] = []
    along = (0.2, 0.5, 0.8)
    if tile.column > 0:
        marks += [(t.x0 + half, t.y0 + f * t.height) for f in along]
    if tile.column < plan.columns - 1:
        marks += [(t.x1 - half, t.y0 + f * t.height) for f in along]
    if tile.row > 0:
        marks += [(t.x0 + f * t.width, t.y0 + half) for f in along]
    if tile.row < plan.rows - 1:
        marks += [(t.x0 + f * t.width, t.y1 - half) for f in along]
    return tuple(marks)


def glue_words(plan: TilePlan, tile: PageTile) -> str:
    """What to do with a page, e.g. "B2: cut off its left and bottom margins along the map's edge; glue it over
    A2's right edge and B1's top edge, the target marks on top of each other"."""
    cut, over = [], []
    if tile.column > 0:
        cut.append("left")
        over.append(f"{plan.tile(tile.column - 1, tile.row).name}'s right edge")
    if tile.row > 0:
        cut.append("bottom")
        over.append(f"{plan.tile(tile.column, tile.row - 1).name}'s top edge")
    if not cut:
        return f"{tile.name}: lay this page first; the others are glued over its edges."
    margins = " and ".join(cut) + (" margins" if len(cut) > 1 else " margin")
    return (f"{tile.name}: cut off its {margins} along the map's edge; glue it over {' and '.join(over)}, "
            "the target marks on top of each other.")


# ---------------------------------------------------------------------------------------------- drawing


def _fill(cell_terrain: str, level: int) -> tuple[int, int, int]:
    r, g, b = TERRAIN_RGB.get(cell_terrain, OTHER_RGB)
    shade = 1.0 - 0.07 * min(level, 5)
    return (int(r * shade), int(g * shade), int(b * shade))


def _centred(pdf: FPDF, x: float, y: float, text: str) -> None:
    """`text` centred on x, its baseline at y (paper inches)."""
    pdf.text(x - pdf.get_string_width(text) / 2, y, text)


def _check_ruler(pdf: FPDF, x: float, y: float) -> None:
    """A 3" ruler in tenths from (x, y) rightwards, its ticks hanging below the line, with what to check."""
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.006)
    pdf.line(x, y, x + CHECK_RULER_IN, y)
    pdf.set_font("helvetica", "", 6)
    for i in range(int(CHECK_RULER_IN * 10) + 1):
        tick = 0.16 if i % 10 == 0 else (0.1 if i % 5 == 0 else 0.06)
        pdf.line(x + i / 10, y, x + i / 10, y + tick)
        if i % 10 == 0:
            _centred(pdf, x + i / 10, y + 0.25, f"{i // 10}\"")
    pdf.set_font("helvetica", "B", 7)
    pdf.text(x, y - 0.06, f"Measure this: it must be {CHECK_RULER_IN:g} inches.")
    pdf.set_font("helvetica", "", 6)
    pdf.text(x, y + 0.38, "If it is not, print again at 100 % (actual size, no fit to page).")


def _draw_cells(pdf: FPDF, mb: MapBoard, to_paper: Any, show: Rect | None, labels: bool, line_in: float) -> None:
    """Every cell (filled by terrain, outlined) and the walls; with `labels`, [q, r], terrain, level and centre dot.
    `show`: only cells reaching into this table rectangle."""
    lay = mb.layout
    pt = max(3.5, min(7.0, lay.size_in * 6.0))
    pdf.set_line_width(line_in)
    for h, cell in sorted(mb.board.cells.items()):
        corners = lay.polygon(h)
        if show is not None and Rect(min(p[0] for p in corners), min(p[1] for p in corners),
                                     max(p[0] for p in corners), max(p[1] for p in corners)).overlap(show) is None:
            continue
        pdf.set_fill_color(*_fill(cell.terrain, cell.elevation))
        pdf.set_draw_color(90, 90, 90)
        pdf.polygon([to_paper(*p) for p in corners], style="DF")
    pdf.set_draw_color(*WALL_RGB)
    pdf.set_line_width(WALL_IN if labels else WALL_IN / 2)
    for edge, kind in mb.board.edges.items():
        (ax, ay), (bx, by) = lay.edge_segment(edge)
        (pax, pay), (pbx, pby) = to_paper(ax, ay), to_paper(bx, by)
        pdf.line(pax, pay, pbx, pby)
        if labels and kind != "wall":
            pdf.set_font("helvetica", "", pt)
            _centred(pdf, (pax + pbx) / 2, (pay + pby) / 2 - 0.05, kind)
    if not labels:
        return
    step = lay.size_in * 0.42
    for h, cell in sorted(mb.board.cells.items()):
        cx, cy = lay.to_table(h)
        if show is not None and not show.grown(lay.size_in).contains(cx, cy):
            continue
        px, py = to_paper(cx, cy)
        pdf.set_fill_color(60, 60, 60)
        pdf.circle(px, py, 0.025, style="F")
        pdf.set_text_color(40, 40, 40)
        pdf.set_font("helvetica", "", pt)
        _centred(pdf, px, py - step, f"[{h.q}, {h.r}]")
        words = cell.terrain + (f", level {cell.elevation}" if cell.elevation else "")
        pdf.set_font("helvetica", "B" if cell.elevation else "", pt)
        _centred(pdf, px, py + step + pt / 144, words)
    pdf.set_text_color(0, 0, 0)


def _draw_target(pdf: FPDF, px: float, py: float) -> None:
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.007)
    pdf.circle(px, py, 0.09, style="D")
    pdf.line(px - 0.16, py, px + 0.16, py)
    pdf.line(px, py - 0.16, px, py + 0.16)


def _draw_anchor(pdf: FPDF, anchor: AnchorPlace, to_paper: Any) -> None:
    """An anchor printed on the map: its tag at exact size on white, ticks on its centre lines, its caption."""
    full = white_side(anchor.size_in)
    cx, cy = to_paper(*anchor.centre)
    pdf.set_fill_color(255, 255, 255)
    pdf.rect(cx - full / 2, cy - full / 2, full, full, style="F")
    draw_tag(pdf, anchor.id, cx - full / 2, cy - full / 2, anchor.size_in)
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.01)
    reach, tick = full / 2 + 0.04, 0.2
    for ux, uy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        pdf.line(cx + ux * reach, cy + uy * reach, cx + ux * (reach + tick), cy + uy * (reach + tick))
    pdf.set_font("helvetica", "B", 7)
    _centred(pdf, cx, cy + full / 2 + 0.34, f"Anchor {anchor.id}: its centre is where the ticks point")


def _draw_corner_mark(pdf: FPDF, anchor: AnchorPlace, to_paper: Any, outline: Rect) -> None:
    """The board corner an off-map anchor is measured from: a ring and its number, the words toward the board."""
    px, py = to_paper(*anchor.corner)
    pdf.set_draw_color(200, 0, 0)
    pdf.set_line_width(0.012)
    pdf.circle(px, py, 0.07, style="D")
    pdf.set_fill_color(200, 0, 0)
    pdf.circle(px, py, 0.018, style="F")
    pdf.set_text_color(200, 0, 0)
    pdf.set_font("helvetica", "B", 7)
    text = f"anchor {anchor.id}: its centre {', '.join(anchor.offset_words())}"
    inward_x = 1 if anchor.corner[0] < (outline.x0 + outline.x1) / 2 else -1
    inward_y = 0.2 if anchor.corner[1] < (outline.y0 + outline.y1) / 2 else -0.1  # paper y grows downward
    x = px + 0.12 if inward_x > 0 else px - 0.12 - pdf.get_string_width(text)
    pdf.set_fill_color(255, 255, 255)
    pdf.rect(x - 0.03, py - inward_y - 0.11, pdf.get_string_width(text) + 0.06, 0.15, style="F")
    pdf.text(x, py - inward_y, text)
    pdf.set_text_color(0, 0, 0)


def _play_area(pdf: FPDF, plan: MapPlan, to_paper: Any) -> None:
    w, d = plan.play_area
    corners = [to_paper(0, 0), to_paper(w, 0), to_paper(w, d), to_paper(0, d)]
    pdf.set_draw_color(150, 150, 150)
    pdf.set_line_width(0.008)
    pdf.set_dash_pattern(dash=0.08, gap=0.06)
    pdf.polygon(corners, style="D")
    pdf.set_dash_pattern()


def _tile_page(pdf: FPDF, plan: MapPlan, tile: PageTile) -> None:
    tiles = plan.tiles
    w, h = tiles.paper_in
    win = tiles.window
    pdf.add_page(orientation="L" if tiles.landscape else "P")

    def to_paper(x: float, y: float) -> tuple[float, float]:
        return tiles.to_paper(tile, x, y)

    # the map's edge, crop marks at its corners in the margin, and what lies over which edge
    pdf.set_draw_color(120, 120, 120)
    pdf.set_line_width(0.004)
    pdf.rect(win.x0, win.y0, win.width, win.height, style="D")
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.008)
    gap, arm = 0.06, 0.3
    for cx, sx in ((win.x0, -1), (win.x1, 1)):
        for cy, sy in ((win.y0, -1), (win.y1, 1)):
            pdf.line(cx + sx * gap, cy, cx + sx * (gap + arm), cy)
            pdf.line(cx, cy + sy * gap, cx, cy + sy * (gap + arm))
    pdf.set_font("helvetica", "", 6)
    mid_y = (win.y0 + win.y1) / 2
    if tile.column > 0:
        with pdf.rotation(90, win.x0 - 0.12, mid_y):
            _centred(pdf, win.x0 - 0.12, mid_y, "cut off this margin along the map's edge")
    if tile.column < tiles.columns - 1:
        with pdf.rotation(90, win.x1 + 0.2, mid_y):
            _centred(pdf, win.x1 + 0.2, mid_y,
                     f"page {tiles.tile(tile.column + 1, tile.row).name} goes over this edge")
    if tile.row > 0:
        _centred(pdf, (win.x0 + win.x1) / 2, win.y1 + 0.16, "cut off this margin along the map's edge")
    # the header: the page's name, what to do with it, the ruler
    top = MARGIN_IN
    pdf.set_font("helvetica", "B", 22)
    pdf.text(MARGIN_IN, top + 0.3, tile.name)
    text_x = MARGIN_IN + 0.85
    text_w = w - MARGIN_IN - CHECK_RULER_IN - 0.3 - text_x
    pdf.set_font("helvetica", "B", 7)
    pdf.set_xy(text_x, top)
    pdf.multi_cell(text_w, 0.13, f"Page {tile.name} of {_grid_words(tiles)}: {plan.board.title}, "
                   "1 inch on this page is 1 inch on the table.", align="L")
    pdf.set_font("helvetica", "", 7)
    pdf.set_xy(text_x, pdf.get_y() + 0.02)
    pdf.multi_cell(text_w, 0.12, glue_words(tiles, tile), align="L")
    if tile.row < tiles.rows - 1:
        pdf.set_xy(text_x, pdf.get_y() + 0.02)
        pdf.multi_cell(text_w, 0.12, f"Page {tiles.tile(tile.column, tile.row + 1).name} goes over this page's "
                       "top edge, covering this band.", align="L")
    _check_ruler(pdf, w - MARGIN_IN - CHECK_RULER_IN - 0.05, top + 0.28)
    # the map last: fpdf2 loses track of the colours set inside a clipping context
    with pdf.rect_clip(win.x0, win.y0, win.width, win.height):
        _play_area(pdf, plan, to_paper)
        _draw_cells(pdf, plan.board, to_paper, tile.table, True, 0.012)
        for anchor in plan.anchors:
            if anchor.on_map and anchor.square.grown(ANCHOR_ROOM_IN).overlap(tile.table):
                _draw_anchor(pdf, anchor, to_paper)
            elif not anchor.on_map and tile.table.grown(0.5).contains(*anchor.corner):
                _draw_corner_mark(pdf, anchor, to_paper, plan.outline)
        for x, y in seam_targets(tiles, tile):
            _draw_target(pdf, *to_paper(x, y))


def _grid_words(tiles: TilePlan) -> str:
    last = f"{column_letters(tiles.columns - 1)}{tiles.rows}"
    return f"{len(tiles.tiles)} (A1 to {last}, {tiles.columns} across and {tiles.rows} up)"


def _inches(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".") + "\""


def _overview_page(pdf: FPDF, plan: MapPlan) -> None:
    """The first page: sizes, where the anchors go, the steps, the assembly diagram, a legend and the ruler."""
    pdf.add_page(orientation="P")
    w, h = pdf.w, pdf.h
    mb, tiles, out = plan.board, plan.tiles, plan.outline
    lay = mb.layout
    text_w = w - 2 * MARGIN_IN
    pdf.set_font("helvetica", "B", 14)
    pdf.text(MARGIN_IN, MARGIN_IN + 0.15, f"Tablesight map: {mb.title}")
    n = len(mb.board)
    shape = "pointy-topped" if lay.orientation == "pointy" else "flat-topped"
    wall_count = sum(1 for k in mb.board.edges.values() if k == "wall")
    walls = f", {wall_count} wall{'s' if wall_count != 1 else ''}" if wall_count else ""
    W, D = plan.play_area
    lines = [
        f"{n} cell{'s' if n != 1 else ''}{walls}: {shape} hexes {_inches(2 * lay.size_in)} corner to corner and "
        f"{_inches(2 * lay.inradius_in)} edge to edge. The cells measure {_inches(out.width)} x {_inches(out.height)} "
        "from edge to edge. Printed at exact scale: 1 inch on paper is 1 inch on the table.",
        f"The table: a {W:g}\" x {D:g}\" play area. When you calibrate, give the board size {W:g}x{D:g}; "
        "cell [0, 0]'s centre then lies "
        f"{_inches(lay.origin[0])} right of and {_inches(lay.origin[1])} up from the play area's corner near anchor 0.",
    ]
    if all(a.on_map for a in plan.anchors):
        lines.append("The four anchors are printed on the map, at its corners: you need no anchor mat. Keep them flat "
                     "and uncovered.")
    else:
        lines.append("The anchors lie too far from the board to print on the map: lay the anchor mat's tags (Roster & "
                     "prints) beside it, each centre measured square to the map's edges from a corner marked in red:")
        lines += [f"    {a.note()} on page {_page_of(tiles, a.corner)}." for a in plan.anchors]
    steps = [
        "1. Print every page at 100 % (actual size, no fit to page); each page's ruler must measure 3 inches.",
        "2. Lay page A1 at the near left. For every other page, cut off its left and bottom margins along the map's "
        "edge where the page says so, and glue it over its neighbours, the target marks on top of each other.",
        "3. Lay the map on the table, calibrate, then play: cells, walls and levels are where the rules expect them.",
    ]
    pdf.set_font("helvetica", "", 8.5)
    pdf.set_xy(MARGIN_IN, MARGIN_IN + 0.3)
    for line in lines:
        pdf.multi_cell(text_w, 0.15, line, align="L")
        pdf.set_xy(MARGIN_IN, pdf.get_y() + 0.05)
    pdf.set_font("helvetica", "B", 9)
    pdf.set_xy(MARGIN_IN, pdf.get_y() + 0.05)
    pdf.cell(text_w, 0.16, "How to put it together")
    pdf.set_font("helvetica", "", 8.5)
    pdf.set_xy(MARGIN_IN, pdf.get_y() + 0.2)
    for step in steps:
        pdf.multi_cell(text_w, 0.15, step, align="L")
        pdf.set_xy(MARGIN_IN, pdf.get_y() + 0.03)
    diagram_top = pdf.get_y() + 0.35
    # the legend and the ruler
    y = h - MARGIN_IN - 1.05
    x = MARGIN_IN
    pdf.set_font("helvetica", "", 7.5)
    present = sorted({c.terrain for c in mb.board.cells.values()})
    for terrain in present:
        pdf.set_fill_color(*_fill(terrain, 0))
        pdf.set_draw_color(90, 90, 90)
        pdf.set_line_width(0.008)
        pdf.rect(x, y - 0.12, 0.25, 0.16, style="DF")
        pdf.text(x + 0.3, y, terrain)
        x += 0.35 + pdf.get_string_width(terrain) + 0.15
    if mb.board.edges:
        pdf.set_draw_color(*WALL_RGB)
        pdf.set_line_width(WALL_IN)
        pdf.line(x, y - 0.04, x + 0.3, y - 0.04)
        pdf.text(x + 0.36, y, "wall")
        x += 0.75
    _draw_target(pdf, x + 0.1, y - 0.04)
    pdf.text(x + 0.3, y, "target mark: lay the two pages' marks on top of each other")
    pdf.set_xy(MARGIN_IN, y + 0.12)
    pdf.multi_cell(text_w, 0.13, "In each cell: its [q, r] above the centre dot, its terrain below, and its level "
                   "(elevation) when it is above the table.", align="L")
    _check_ruler(pdf, MARGIN_IN, h - MARGIN_IN - 0.4)
    # the assembly diagram, not to scale
    top = diagram_top
    bottom = h - MARGIN_IN - 1.35
    first, last = tiles.tiles[0].table, tiles.tiles[-1].table
    everything = Rect(first.x0, first.y0, last.x1, last.y1)
    scale = min(text_w / everything.width, (bottom - top) / everything.height)
    left = MARGIN_IN + (text_w - everything.width * scale) / 2
    pdf.set_font("helvetica", "B", 9)
    pdf.text(MARGIN_IN, top - 0.12, f"The {_grid_words(tiles).replace(' (', ' pages (', 1)} and the board, not to scale:")

    def to_paper(x: float, y: float) -> tuple[float, float]:
        return (left + (x - everything.x0) * scale, top + (everything.y1 - y) * scale)

    with pdf.rect_clip(left, top, everything.width * scale, everything.height * scale):
        _play_area(pdf, plan, to_paper)  # the diagram last: fpdf2 loses track of colours set inside a clip
    _draw_cells(pdf, mb, to_paper, None, False, 0.004)
    for a in plan.anchors:
        if a.on_map:
            sx, sy = to_paper(a.square.x0, a.square.y1)
            pdf.set_fill_color(0, 0, 0)
            pdf.rect(sx, sy, a.square.width * scale, a.square.height * scale, style="F")
        else:
            pdf.set_fill_color(200, 0, 0)
            pdf.circle(*to_paper(*a.corner), 0.04, style="F")
    pdf.set_line_width(0.01)
    for tile in tiles.tiles:
        x0, y0 = to_paper(tile.table.x0, tile.table.y1)
        pdf.set_draw_color(200, 0, 0)
        pdf.rect(x0, y0, tile.table.width * scale, tile.table.height * scale, style="D")
        pdf.set_text_color(200, 0, 0)
        pdf.set_font("helvetica", "B", max(8.0, min(20.0, scale * 40)))
        cx, cy = to_paper(tile.table.x0 + tile.table.width / 2, tile.table.y0 + tile.table.height / 2)
        _centred(pdf, cx, cy + 0.08, tile.name)
    pdf.set_text_color(0, 0, 0)


def _page_of(tiles: TilePlan, point: tuple[float, float]) -> str:
    holding = tiles.tiles_holding(*point)
    return holding[0].name if holding else "the nearest page"


def hex_map_pdf(plan: MapPlan) -> bytes:
    """The PDF of `plan`: the overview page, then one page per tile, row 1 first, A to Z along each row."""
    w, h = min(plan.tiles.paper_in), max(plan.tiles.paper_in)
    pdf = FPDF(unit="in", format=(w, h))
    pdf.set_auto_page_break(False)
    pdf.set_margins(MARGIN_IN, MARGIN_IN, MARGIN_IN)
    pdf.set_title(f"Tablesight map: {plan.board.title}")
    pdf.set_creator("Tablesight")
    _overview_page(pdf, plan)
    for tile in plan.tiles.tiles:
        _tile_page(pdf, plan, tile)
    return bytes(pdf.output())


def anchors_words(anchors: Sequence[AnchorPlace]) -> str:
    """"anchors 0-3 printed on the map" or which are and which are not, for the command's last line."""
    on = [str(a.id) for a in anchors if a.on_map]
    if len(on) == len(anchors):
        return "all four anchors printed on the map"
    if not on:
        return "the anchors off the map (see the first page for where they go)"
    return f"anchor{'s' if len(on) > 1 else ''} {', '.join(on)} printed on the map, the rest placed from its first page"
