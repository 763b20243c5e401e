"""The hex grid on the live page in real headless Chromium, over the bundled sample: with Vigtavl's example roster
the top-down board and the camera picture draw all 91 cells (sea, land, mountain), each unit's cell outlined, the
legend names this board's kinds only, the "Hex grid" switch takes the grid off the picture; the grid is fetched
once, not sent in every frame; an open table (Valknut) draws none and offers no switch."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM
from session.settings import Settings
from tests.chromium import CLIENT_AT_INCHES, checked_page, chromium
from tests.webui_server import SAME_ORIGIN, running_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

ROOT = Path(__file__).resolve().parent.parent
SEA, MOUNTAIN = (0x2F, 0x6D, 0xB3), (0x8D, 0x8D, 0x92)
"""The board view's fills (overlay.js GRID_TERRAIN)."""
CAMERA_ALPHA = 0.3
"""How much of a cell's colour is laid over the picture (overlay.js GRID_CAMERA_ALPHA)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    settings = Settings(source_kind="sample", loop_sample=True, sessions_dir=tmp_path_factory.mktemp("grid-sessions"),
                        setup_dir=tmp_path_factory.mktemp("grid-setup"))
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with checked_page(browser, viewport={"width": 1400, "height": 1000}) as pg:
        yield pg


def put_roster(url: str, name: str) -> None:
    """Load an example roster as the roster page does (a new game: the table's game becomes the roster's)."""
    body = json.loads((ROOT / "examples" / "rosters" / f"{name}.json").read_text(encoding="utf-8"))
    r = httpx.put(f"{url}/api/roster?restart=true", json=body, headers=SAME_ORIGIN, timeout=30)
    assert r.status_code == 200, r.text


DRAWN_NOW = """() => [window.tablesight.msg, document.getElementById('board').dataset.grid || '0 0 0',
  document.getElementById('camera').dataset.grid || '0 0 0']"""
"""The frame on the page and what the board and the camera canvases drew of the grid, read in one go."""


def _counts(text: str) -> list[int]:
    return [int(v) for v in str(text).split()]


def grid_counts(page: Any, canvas: str) -> list[int]:
    """[cells, edges, units] the canvas drew of the grid (data-grid-*)."""
    return _counts(page.evaluate(f"() => document.getElementById('{canvas}').dataset.grid || '0 0 0'"))


PIXEL_AT_INCHES = """async ([x, y]) => {
  const m = await import('/static/overlay.js');
  const c = document.getElementById('board');
  const view = m.boardView(c, window.tablesight.msg.board);
  const [lw, lh] = m.layoutSize(c);
  const [px, py] = view.toPx(x, y);
  return Array.from(c.getContext('2d').getImageData(Math.round(px * c.width / lw), Math.round(py * c.height / lh), 1, 1).data);
}"""


CAMERA_PIXEL = """([u, v]) => {
  const c = document.getElementById('camera');
  const w = Number(c.dataset.imageWidth), h = Number(c.dataset.imageHeight);
  return Array.from(c.getContext('2d').getImageData(Math.round(u * c.width / w), Math.round(v * c.height / h), 1, 1).data);
}"""

PLAIN_CAMERA_PIXEL = """async ([u, v]) => {
  const m = await import('/static/overlay.js');
  const msg = window.tablesight.msg;
  const c = document.createElement('canvas');
  c.width = msg.image_size[0]; c.height = msg.image_size[1];
  c.style.width = `${c.width}px`;
  document.body.append(c);
  m.drawCamera(c, null, msg, [], { shapes: [], grid: window.tablesight.grid });
  const got = Array.from(c.getContext('2d').getImageData(Math.round(u * c.width / msg.image_size[0]),
    Math.round(v * c.height / msg.image_size[1]), 1, 1).data);
  c.remove();
  return got;
}"""


def _centre(points: list[list[float]]) -> tuple[float, float]:
    return sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)


def _clear(cell: dict[str, Any], units: list[dict[str, Any]]) -> bool:
    """The cell's centre is more than 2.5" from every unit (no base, name or outline over it)."""
    x, y = _centre(cell["in"])
    return all((u["x"] - x) ** 2 + (u["y"] - y) ** 2 > 2.5**2 for u in units)


def _far_from_units(cells: list[dict[str, Any]], units: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """A cell of `kind` clear of every unit."""
    for c in cells:
        if c["terrain"] == kind and _clear(c, units):
            return c
    raise AssertionError(f"no {kind} cell clear of the units")


def _read_clear(page: Any, cells: list[dict[str, Any]], kind: str, read: Any) -> tuple[dict[str, Any], Any]:
    """`read(cell)` of a cell of `kind` clear of the units of the frames shown before and after it: the sample
    keeps playing and its units walk, so a cell that a unit came near meanwhile is read again, chosen afresh."""
    units_now = "() => window.tablesight.msg.units"
    for _ in range(20):
        cell = _far_from_units(cells, page.evaluate(units_now), kind)
        got = read(cell)
        if _clear(cell, page.evaluate(units_now)):
            return cell, got
    raise AssertionError(f"a unit kept coming near every {kind} cell read")


def test_vigtavl_grid_on_the_board_and_the_camera(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    put_roster(url, "vigtavl")
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "/api/live/board" in r.url else None)
    page.goto(url + "/")
    page.wait_for_function("() => document.getElementById('board').dataset.gridCells === '91' && "
                           "document.getElementById('camera').dataset.gridCells === '91'", timeout=30000)
    grid = httpx.get(f"{url}/api/live/board", timeout=30).json()
    assert len(grid["cells"]) == 91 and grid["kinds"] == ["land", "mountain", "sea"]
    # the sample stopped on its frame (it is a Valknut table): it is stepped on, a frame at a time, until 3 units
    # stand on the board; the frame and what the canvases drew of it are read in one go, again while a new frame
    # came in between its arrival and its drawing
    live = app.state.runtime.live
    page.wait_for_function("() => document.getElementById('banner').textContent.includes('shows a game of Valknut')",
                           timeout=10000)  # the page says why the sample stopped
    for _ in range(300):
        msg, board, camera = page.evaluate(DRAWN_NOW)
        units = msg["units"]
        on_board = sum(1 for u in units if any(
            (u["x"] - _centre(c["in"])[0]) ** 2 + (u["y"] - _centre(c["in"])[1]) ** 2 <= 1.0 for c in grid["cells"]))
        if on_board >= 3 and [_counts(board), _counts(camera)] == [[91, 0, on_board]] * 2:
            break
        if on_board < 3:
            live.step()
        page.wait_for_timeout(100)
    assert msg["grid_key"] == grid["key"] and "cells" not in msg  # the frame names the grid; it does not carry it
    assert on_board >= 3
    assert _counts(board) == [91, 0, on_board]
    assert _counts(camera) == [91, 0, on_board]

    # the board view: a sea cell blue, a mountain cell grey (read 0.45" north of the centre: the cell's name is
    # written below it)
    for kind, fill in (("sea", SEA), ("mountain", MOUNTAIN)):
        cell, rgba = _read_clear(page, grid["cells"], kind, lambda c: page.evaluate(
            PIXEL_AT_INCHES, [_centre(c["in"])[0], _centre(c["in"])[1] + 0.45]))
        assert all(abs(a - b) <= 2 for a, b in zip(rgba[:3], fill, strict=True)), (kind, cell["hex"], rgba)

    # the pointer over a cell of the board: its tooltip names the cell as the Declare buttons do
    page.locator("#board").scroll_into_view_if_needed()  # under the camera's picture below 1700 px
    def pointed(cell: dict[str, Any]) -> str | None:
        page.mouse.move(*page.evaluate(CLIENT_AT_INCHES, list(_centre(cell["in"]))))
        return page.get_attribute("#board", "title")  # type: ignore[no-any-return]

    mountain, title = _read_clear(page, grid["cells"], "mountain", pointed)
    q, r = mountain["hex"]
    assert title == f"hex [{q}, {r}]: mountain"

    # the legend names this board's kinds and no others; the switch is there
    shown = page.evaluate("() => [...document.querySelectorAll('#legend .grid-kind')].filter((e) => !e.hidden)"
                          ".map((e) => e.textContent)")
    assert shown == ["sea", "land", "mountain"]
    assert page.is_visible("#layers input[data-layer=grid]")

    # the camera picture: a sea cell's centre is the picture with 30 % of the sea's blue over it (the sample keeps
    # playing: a cell far from the units shows the same table, up to the sensor's noise)
    def with_and_without(cell: dict[str, Any]) -> tuple[Any, Any]:
        at = list(_centre(cell["px"]))
        with_grid = page.evaluate(CAMERA_PIXEL, at)
        page.click("#layers input[data-layer=grid]")
        page.wait_for_function("() => document.getElementById('camera').dataset.gridCells === '0'", timeout=10000)
        assert grid_counts(page, "board") == [0, 0, 0]  # the switch takes it off both views
        without = page.evaluate(CAMERA_PIXEL, at)
        page.click("#layers input[data-layer=grid]")
        page.wait_for_function("() => document.getElementById('camera').dataset.gridCells === '91'", timeout=10000)
        return with_grid, without

    sea, (with_grid, without) = _read_clear(page, grid["cells"], "sea", with_and_without)
    at = _centre(sea["px"])
    assert with_grid[2] - with_grid[0] > without[2] - without[0] + 15, (with_grid, without)  # bluer with the grid
    # the same drawing on a plain dark picture (#111): exactly 30 % of the sea's colour over it
    plain = page.evaluate(PLAIN_CAMERA_PIXEL, list(at))
    expected = [(1 - CAMERA_ALPHA) * 0x11 + CAMERA_ALPHA * f for f in SEA]
    assert all(abs(a - b) <= 2 for a, b in zip(plain[:3], expected, strict=True)), (plain, expected)
    assert len(fetched) == 1, fetched  # fetched once, however many frames came since


def test_hex_skirmish_grid_shows_water_and_heights(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    put_roster(url, "hex_skirmish")
    page.goto(url + "/")
    page.wait_for_function("() => document.getElementById('board').dataset.gridCells === '37'", timeout=30000)
    shown = page.evaluate("() => [...document.querySelectorAll('#legend .grid-kind')].filter((e) => !e.hidden)"
                          ".map((e) => e.dataset.grid)")
    assert shown == ["land", "water", "elevation"]
    # the hill of 4 levels at [3, -1] is land shaded darker by 4 levels (its level and name are written at its
    # centre: the colour is read beside them)
    grid = httpx.get(f"{url}/api/live/board", timeout=30).json()
    hill = next(c for c in grid["cells"] if c["hex"] == [3, -1])
    assert hill["elevation"] == 4
    x, y = _centre(hill["in"])
    rgba = page.evaluate(PIXEL_AT_INCHES, [x + 0.55, y])
    darker = [round(v * (1 - 0.14 * 4)) for v in (0x8A, 0x8A, 0x4E)]
    assert all(abs(a - b) <= 2 for a, b in zip(rgba[:3], darker, strict=True)), (rgba, darker)


def test_an_open_table_draws_no_grid(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    put_roster(url, "valknut")
    page.goto(url + "/")
    page.wait_for_function("() => Number(document.getElementById('camera').dataset.shapes) > 0", timeout=30000)
    assert httpx.get(f"{url}/api/live/board", timeout=30).json()["key"] is None
    # the page follows the open table's frames (one shown before the game changed may still say the hex grid),
    # then draws two more frames with no grid (the board redraws within 100 ms of the grid going)
    page.wait_for_function("() => window.tablesight.msg.grid_key === null && window.tablesight.gridKey === null",
                           timeout=20000)
    for _ in range(2):
        shown = page.evaluate("document.getElementById('camera').dataset.frame")
        page.wait_for_function(f"document.getElementById('camera').dataset.frame !== '{shown}'", timeout=20000)
    assert grid_counts(page, "camera") == [0, 0, 0] and grid_counts(page, "board") == [0, 0, 0]
    assert not page.is_visible("#layers input[data-layer=grid]")
    assert page.evaluate("() => [...document.querySelectorAll('#legend .grid-kind')].every((e) => e.hidden)")
