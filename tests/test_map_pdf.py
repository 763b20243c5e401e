"""`tablesight map` and /download/map.pdf: a hex board printed at exact scale over several pages.

The pages are rendered (pypdfium2, as tests/test_printables.py) and measured: the check ruler, the distance between
two cell centres, the overlap of neighbouring pages, every cell's label inside some page's map window, the
anchors' tags where the default layout puts them, and the note that places an anchor off the map.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pypdfium2 as pdfium
import pytest

from rules.hexgrid import DIRECTIONS, SQRT3, Hex, hexagon
from session.hex_map_print import (
    MapError,
    MapPlan,
    glue_words,
    plan_map,
    play_area_for,
    seam_targets,
    standard_map_board,
)
from session.map_tiles import PageTile, Rect, column_letters, plan_tiles
from session.printables import MARGIN_IN, PAPER_IN
from vision.tags import detect_tags
from webui.cli import main

ROOT = Path(__file__).resolve().parent.parent
DPI = 300
PT = 72.0


def _render(pdf: Path, pages: list[int] | None = None, dpi: int = DPI, grey: bool = True) -> dict[int, np.ndarray]:
    doc = pdfium.PdfDocument(str(pdf))
    out = {}
    for i in pages if pages is not None else range(len(doc)):
        img = doc[i].render(scale=dpi / PT, grayscale=grey, rev_byteorder=True).to_numpy()  # RGB
        out[i] = img[..., 0] if grey and img.ndim == 3 else img
    doc.close()
    return out


def _runs(line: np.ndarray) -> list[np.ndarray]:
    dark = np.flatnonzero(line)
    return [r for r in np.split(dark, np.flatnonzero(np.diff(dark) > 1) + 1) if len(r)]


def _ruler_in(page: np.ndarray, dpi: int = DPI) -> float:
    """The check ruler found on a rendered page: its baseline (the one dark run 3" +- 0.1 long), then its tenth
    ticks just below it; the distance from the first tick to the last, inches."""
    dark = page < 160
    for y in range(page.shape[0]):
        for run in _runs(dark[y]):
            if abs(len(run) / dpi - 3.0) < 0.1:
                below = dark[y + int(0.03 * dpi) + 2, run[0] - 5: run[-1] + 6]
                ticks = _runs(below)
                assert len(ticks) == 31, len(ticks)  # 0 to 3 inches in tenths
                centres = np.array([t.mean() for t in ticks])
                assert np.allclose(np.diff(centres) / dpi, 0.1, atol=0.004)
                return float(centres[-1] - centres[0]) / dpi
    raise AssertionError("no 3-inch ruler on the page")


def _page_index(plan: MapPlan, tile: PageTile) -> int:
    return 1 + plan.tiles.tiles.index(tile)  # page 0 is the overview


def _dot_at(page: np.ndarray, near_px: tuple[float, float], dpi: int) -> tuple[float, float]:
    """The centre of the cell-centre dot within 0.12" of `near_px`: thin lines and text are opened away first."""
    r = int(0.12 * dpi)
    x, y = int(round(near_px[0])), int(round(near_px[1]))
    win = (page[y - r: y + r + 1, x - r: x + r + 1] < 120).astype(np.uint8)
    k = int(0.03 * dpi) | 1
    blob = cv2.morphologyEx(win, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    ys, xs = np.nonzero(blob)
    assert len(xs) > 0.5 * math.pi * (0.025 * dpi) ** 2, "no centre dot there"
    return (x - r + xs.mean(), y - r + ys.mean())


@pytest.fixture(scope="module")
def vigtavl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, MapPlan]:
    out = tmp_path_factory.mktemp("map") / "vigtavl.pdf"
    assert main(["map", "vigtavl", "-o", str(out)]) == 0
    return out, plan_map(standard_map_board("vigtavl"), "letter")


@pytest.fixture(scope="module")
def vigtavl_pages(vigtavl: tuple[Path, MapPlan]) -> dict[int, np.ndarray]:
    return _render(vigtavl[0])


# --- the pages' arithmetic ---------------------------------------------------------------------------------


def test_column_letters_run_on_past_z() -> None:
    assert [column_letters(i) for i in (0, 1, 25, 26, 27, 51, 52)] == ["A", "B", "Z", "AA", "AB", "AZ", "BA"]


def test_tiles_cover_the_region_and_overlap_their_neighbours_by_the_overlap() -> None:
    region = Rect(-2.85, -2.85, 22.85, 20.85)
    plan = plan_tiles(region, PAPER_IN["letter"], 0.5, 0.8, 0.5)
    assert (plan.columns, plan.rows, plan.landscape) == (4, 3, False)
    assert plan.window == Rect(0.5, 1.3, 8.0, 10.5)  # 7.5" x 9.2" of a letter page
    assert [t.name for t in plan.tiles[:5]] == ["A1", "B1", "C1", "D1", "A2"]
    for t in plan.tiles:
        assert math.isclose(t.table.width, 7.5) and math.isclose(t.table.height, 9.2)
        if t.column:
            shared = t.table.overlap(plan.tile(t.column - 1, t.row).table)
            assert shared is not None and math.isclose(shared.width, 0.5) and math.isclose(shared.height, 9.2)
        if t.row:
            shared = t.table.overlap(plan.tile(t.column, t.row - 1).table)
            assert shared is not None and math.isclose(shared.height, 0.5)
    for x in np.linspace(region.x0, region.x1, 41):
        for y in np.linspace(region.y0, region.y1, 41):
            assert plan.tiles_holding(x, y), (x, y)
    a1 = plan.tile(0, 0)
    assert a1.table.x0 < region.x0 and a1.table.y0 < region.y0  # A1 holds the corner near anchor 0
    assert plan.to_paper(a1, a1.table.x0, a1.table.y1) == (0.5, 1.3)  # the window's top-left
    assert plan.to_paper(a1, a1.table.x1, a1.table.y0) == pytest.approx((8.0, 10.5))


def test_a_wide_region_is_printed_on_turned_pages_when_that_takes_fewer() -> None:
    plan = plan_tiles(Rect(0, 0, 9.5, 6.0), PAPER_IN["letter"], 0.5, 0.8, 0.5)
    assert (plan.columns, plan.rows, plan.landscape) == (1, 1, True)
    assert plan.paper_in == (11.0, 8.5)
    upright = plan_tiles(Rect(0, 0, 6.0, 9.0), PAPER_IN["letter"], 0.5, 0.8, 0.5)
    assert (len(upright.tiles), upright.landscape) == (1, False)


def test_neighbours_print_the_same_target_marks_and_say_how_they_are_glued() -> None:
    plan = plan_map(standard_map_board("vigtavl"), "letter").tiles
    a2, b2, b1 = plan.tile(0, 1), plan.tile(1, 1), plan.tile(1, 0)
    shared_ab = set(seam_targets(plan, a2)) & set(seam_targets(plan, b2))
    shared_b = set(seam_targets(plan, b1)) & set(seam_targets(plan, b2))
    assert len(shared_ab) == 3 and len(shared_b) == 3
    assert all(math.isclose(x, a2.table.x1 - 0.25) for x, _ in shared_ab)
    assert glue_words(plan, b2) == ("B2: cut off its left and bottom margins along the map's edge; glue it over A2's "
                                    "right edge and B1's top edge, the target marks on top of each other.")
    assert glue_words(plan, plan.tile(0, 0)).startswith("A1: lay this page first")
    assert "cut off its left margin along" in glue_words(plan, b1)


def test_the_play_area_is_the_smallest_that_holds_the_board_or_the_one_asked_for() -> None:
    mb = standard_map_board("vigtavl")  # radius 5, pointy, 1" cells at (10, 9): 0.47..19.53 x 0.5..17.5
    plan = plan_map(mb)
    o = plan.outline
    assert (o.x0, o.y0, o.x1, o.y1) == pytest.approx((10 - 5.5 * SQRT3, 0.5, 10 + 5.5 * SQRT3, 17.5))
    assert plan.play_area == (20.0, 18.0)
    assert [a.centre for a in plan.anchors] == [(-1.5, -1.5), (21.5, -1.5), (21.5, 19.5), (-1.5, 19.5)]
    assert all(a.on_map for a in plan.anchors)
    assert plan_map(mb, "a4", (30.0, 22.0)).play_area == (30.0, 22.0)
    assert not any(a.on_map for a in plan_map(mb, "letter", (30.0, 22.0)).anchors)  # 10" off: measured from corners
    with pytest.raises(MapError, match=r"more than a 12\" x 12\" board holds; give --board 20x18 or larger"):
        play_area_for(plan.outline, (12.0, 12.0))
    with pytest.raises(MapError, match=r"reaches 0.50\" below the play area's corner near anchor 0"):
        play_area_for(Rect(1.0, -0.5, 5.0, 5.0))


# --- the printed pages, measured ---------------------------------------------------------------------------


def test_every_page_has_a_check_ruler_three_inches_long(vigtavl_pages: dict[int, np.ndarray]) -> None:
    assert len(vigtavl_pages) == 13  # the overview and 4 x 3 tiles
    for i, page in vigtavl_pages.items():
        assert abs(_ruler_in(page) - 3.0) < 0.01, i


def test_cells_three_apart_are_printed_their_true_distance_apart(vigtavl: tuple[Path, MapPlan]) -> None:
    path, plan = vigtavl
    mb = plan.board
    # the first two cells three steps apart in a straight line (e.g. [0, 0] and [0, 3]) that one page holds
    a, b, tile = next(
        (pa, pb, t)
        for h in sorted(mb.board.cells) for d in range(6)
        if (other := h + DIRECTIONS[d] * 3) in mb.board
        for pa, pb in [(mb.layout.to_table(h), mb.layout.to_table(other))]
        for t in plan.tiles.tiles if t.table.grown(-0.3).contains(*pa) and t.table.grown(-0.3).contains(*pb)
    )
    dpi = 600
    page = _render(path, [_page_index(plan, tile)], dpi)[_page_index(plan, tile)]
    found = []
    for p in (a, b):
        ex, ey = plan.tiles.to_paper(tile, *p)
        found.append(_dot_at(page, (ex * dpi, ey * dpi), dpi))
    for p, (fx, fy) in zip((a, b), found):
        ex, ey = plan.tiles.to_paper(tile, *p)
        assert math.hypot(fx / dpi - ex, fy / dpi - ey) < 0.01  # each centre where the layout puts it on the page
    apart = math.hypot(found[1][0] - found[0][0], found[1][1] - found[0][1]) / dpi
    assert abs(apart - 3 * SQRT3 * mb.layout.size_in) < 0.01, apart  # 5.196": three cells edge to edge


def test_neighbouring_pages_overlap_by_half_an_inch(vigtavl: tuple[Path, MapPlan],
                                                    vigtavl_pages: dict[int, np.ndarray]) -> None:
    """B2's left strip is found in C2's page... the other way round: the strip of C2 just inside its left edge is
    slid along B2's right inch until the two pictures agree; where they agree gives the overlap."""
    _, plan = vigtavl
    tiles, win = plan.tiles, plan.tiles.window
    for left, right, across in ((tiles.tile(1, 1), tiles.tile(2, 1), True), (tiles.tile(1, 0), tiles.tile(1, 1), False)):
        lo, hi = vigtavl_pages[_page_index(plan, left)], vigtavl_pages[_page_index(plan, right)]
        inset = int(0.03 * DPI)  # clear of the window's outline
        y0, y1 = int(win.y0 * DPI) + inset, int(win.y1 * DPI) - inset
        x0, x1 = int(win.x0 * DPI) + inset, int(win.x1 * DPI) - inset
        if across:
            strip = hi[y0:y1, x0: x0 + int(0.4 * DPI)].astype(float)  # C2 just inside its left edge
            scores = {s: np.abs(lo[y0:y1, s: s + strip.shape[1]] - strip).mean()
                      for s in range(int((win.x1 - 1.0) * DPI), int(win.x1 * DPI) - strip.shape[1])}
            best = min(scores, key=lambda s: scores[s])
            overlap = win.x1 - (best - inset) / DPI
        else:  # B2 over B1's top edge: B2's bottom strip is found near the top of B1's window
            strip = hi[y1 - int(0.4 * DPI): y1, x0:x1].astype(float)
            scores = {s: np.abs(lo[s: s + strip.shape[0], x0:x1] - strip).mean()
                      for s in range(int(win.y0 * DPI), int((win.y0 + 1.0) * DPI))}
            best = min(scores, key=lambda s: scores[s])
            overlap = (best + strip.shape[0] + inset) / DPI - win.y0
        assert scores[best] < 2.0  # the same picture, not just the least unlike
        assert abs(overlap - 0.5) < 0.01, (left.name, right.name, overlap)


def _labels_in_windows(path: Path, plan: MapPlan) -> set[Hex]:
    """The cells whose "[q, r]" is printed inside some page's map window."""
    doc = pdfium.PdfDocument(str(path))
    win = plan.tiles.window
    seen: set[Hex] = set()
    for tile in plan.tiles.tiles:
        page = doc[_page_index(plan, tile)]
        height = page.get_size()[1]
        text = page.get_textpage()
        whole = text.get_text_range()
        for m in re.finditer(r"\[(-?\d+), (-?\d+)\]", whole):
            box = text.get_charbox(m.start())
            x, y = box[0] / PT, (height - box[3]) / PT  # paper inches from the top-left
            if win.x0 <= x and x + 0.3 <= win.x1 and win.y0 <= y <= win.y1:
                seen.add(Hex(int(m.group(1)), int(m.group(2))))
    doc.close()
    return seen


def test_every_cell_is_printed_on_some_page(vigtavl: tuple[Path, MapPlan], tmp_path: Path) -> None:
    path, plan = vigtavl
    assert _labels_in_windows(path, plan) == set(hexagon(5)) == set(plan.board.board.cells)
    out = tmp_path / "skirmish.pdf"
    assert main(["map", str(ROOT / "examples/rosters/hex_skirmish.json"), "--paper", "a4", "-o", str(out)]) == 0
    skirmish = plan_map(standard_map_board("hex_skirmish"), "a4")
    assert _labels_in_windows(out, skirmish) == set(hexagon(3))


def test_the_anchors_are_printed_where_calibration_expects_them(vigtavl: tuple[Path, MapPlan],
                                                                 vigtavl_pages: dict[int, np.ndarray]) -> None:
    _, plan = vigtavl
    found: dict[int, tuple[float, float]] = {}
    for tile in plan.tiles.tiles:
        page = vigtavl_pages[_page_index(plan, tile)]
        for tag in detect_tags(page, decimate=2):
            assert abs(tag.side_px / DPI - 2.0) < 0.01  # the 2" black square
            px, py = np.asarray(tag.corners_px, float).mean(axis=0) / DPI
            # back from the page to the table: the inverse of TilePlan.to_paper
            found.setdefault(tag.id, (tile.table.x0 + px - plan.tiles.window.x0,
                                      tile.table.y1 - (py - plan.tiles.window.y0)))
    assert sorted(found) == [0, 1, 2, 3]
    for anchor in plan.anchors:
        assert math.dist(found[anchor.id], anchor.centre) < 0.01, (anchor.id, found[anchor.id])


def test_an_anchor_off_the_map_is_placed_from_a_marked_corner(tmp_path: Path) -> None:
    out = tmp_path / "magni.pdf"
    assert main(["map", "magni", "--board", "24x24", "-o", str(out)]) == 0
    plan = plan_map(standard_map_board("magni"), "letter", (24.0, 24.0))
    doc = pdfium.PdfDocument(str(out))
    overview = doc[0].get_textpage().get_text_range()
    doc.close()
    notes = re.findall(r"Anchor (\d)'s centre goes ([\d.]+)\" (left|right) and ([\d.]+)\" (up|down) from the corner "
                       r"marked \"anchor \d\" on page ([A-Z]+\d+)", overview.replace("\r\n", " ").replace("\n", " "))
    assert len(notes) == 4
    for (ident, dx, lr, dy, ud, page_name), anchor in zip(notes, plan.anchors):
        assert int(ident) == anchor.id
        x = anchor.corner[0] + float(dx) * (1 if lr == "right" else -1)
        y = anchor.corner[1] + float(dy) * (1 if ud == "up" else -1)
        assert math.dist((x, y), anchor.centre) < 0.006  # the note, to 0.01", leads to the anchor's centre
        (tile,) = [t for t in plan.tiles.tiles if t.name == page_name]
        colour = _render(out, [_page_index(plan, tile)], DPI, grey=False)[_page_index(plan, tile)]
        red = (colour[..., 0] > 150) & (colour[..., 1] < 90) & (colour[..., 2] < 90)
        ex, ey = (v * DPI for v in plan.tiles.to_paper(tile, *anchor.corner))
        r = int(0.1 * DPI)
        ys, xs = np.nonzero(red[int(ey) - r: int(ey) + r, int(ex) - r: int(ex) + r])
        assert len(xs) > 20
        centre = (int(ex) - r + xs.mean(), int(ey) - r + ys.mean())
        assert math.dist(centre, (ex, ey)) / DPI < 0.01  # the ring is on that corner


# --- what a player gets wrong ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["map", "{notes}", "-o", "{out}"], "is not valid JSON"),
        (["map", "{terrain}", "-o", "{out}"], "is not a hex board: it has no \"layout\""),
        (["map", "{roster_valknut}", "-o", "{out}"], "plays on an open table in inches: it has no hex map"),
        (["map", "valyr", "-o", "{out}"], "Valyr plays on an open table in inches"),
        (["map", "chess", "-o", "{out}"], "'chess' is neither a board file nor a standard board"),
        (["map", "vigtavl", "--board", "12x12", "-o", "{out}"], "more than a 12\" x 12\" board holds; give --board 20x18"),
        (["map", "magni", "--board", "huge", "-o", "{out}"], "Board 'huge' is not width x depth"),
        (["map", "vigtavl", "-o", "{tmp}/no/such/map.pdf"], "folder {tmp}/no/such does not exist"),
        (["map", "vigtavl", "-o", "{tmp}"], "it is a folder; give a file name"),
        (["map", "{holed}", "-o", "{out}"], "has a hole"),
    ],
)
def test_bad_map_requests_say_one_sentence(argv: list[str], needle: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.json").write_text("hello\n")
    (tmp_path / "terrain.json").write_text('{"pieces": []}')
    (tmp_path / "holed.json").write_text('{"layout": {"size_in": 1}, "cells": [' + ", ".join(
        f'{{"hex": [{h.q}, {h.r}]}}' for h in hexagon(2) if h != Hex(0, 0)) + "]}")
    (tmp_path / "keep.pdf").write_bytes(b"%PDF-1.4 kept")
    names = {"notes": tmp_path / "notes.json", "terrain": tmp_path / "terrain.json", "holed": tmp_path / "holed.json",
             "roster_valknut": ROOT / "examples/rosters/valknut.json", "out": tmp_path / "keep.pdf", "tmp": tmp_path}
    assert main([a.format(**names) for a in argv]) == 2
    err = capsys.readouterr().err
    assert needle.format(**names) in err and err.count("\n") == 1, err
    assert (tmp_path / "keep.pdf").read_bytes() == b"%PDF-1.4 kept"  # a refused map overwrites nothing


# --- the server's download ---------------------------------------------------------------------------------


def _client(tmp_path: Path, **settings: Any) -> Any:
    from session.settings import Settings
    from tests.webui_server import LocalClient
    from webui.server import create_app

    return LocalClient(create_app(Settings(sessions_dir=tmp_path / "sessions", setup_dir=tmp_path / "setup",
                                           **settings)))


def test_the_server_prints_the_map_of_the_rosters_board(tmp_path: Path) -> None:
    with _client(tmp_path, game="vigtavl", roster_file=ROOT / "examples/rosters/vigtavl.json") as c:
        r = c.get("/download/map.pdf", params={"board": "20x18", "paper": "a4"})
        assert r.status_code == 200 and r.content[:4] == b"%PDF", r.text
        assert 'filename="map-20x18.pdf"' in r.headers["content-disposition"]
        (tmp_path / "map.pdf").write_bytes(r.content)
        plan = plan_map(standard_map_board("vigtavl"), "a4", (20.0, 18.0))  # the roster's board is the standard one
        assert _labels_in_windows(tmp_path / "map.pdf", plan) == set(hexagon(5))
        page = _render(tmp_path / "map.pdf", [1])[1]
        assert abs(_ruler_in(page) - 3.0) < 0.01
        r = c.get("/download/map.pdf", params={"board": "12x12"})
        assert r.status_code == 400
        assert r.json()["detail"].endswith("more than a 12\" x 12\" board holds; give the board size 20x18 or larger.")


def test_the_server_refuses_a_map_for_a_game_on_an_open_table(tmp_path: Path) -> None:
    with _client(tmp_path, game="valknut", roster_file=ROOT / "examples/rosters/valknut.json") as c:
        r = c.get("/download/map.pdf")
        assert r.status_code == 400
        assert r.json() == {"detail": "Valknut: Skirmish Game plays on an open table in inches: there is no hex map to "
                                      "print; choose a hex game to print its board."}


def test_margins_leave_room_for_the_map_on_both_papers() -> None:
    for paper in ("letter", "a4"):
        plan = plan_map(standard_map_board("magni"), paper)
        w, h = plan.tiles.paper_in
        assert plan.tiles.window.x0 == MARGIN_IN and math.isclose(plan.tiles.window.y1, h - MARGIN_IN)
        assert plan.tiles.window.width > 6.5 and w > plan.tiles.window.x1
