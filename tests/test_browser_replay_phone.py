"""The Replay tab, the phone layout and the terrain editor in real headless Chromium, on a server started as
`tablesight serve` starts (the bundled sample, an empty sessions folder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from session.settings import Settings
from tests.webui_server import running_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root: Path = tmp_path_factory.mktemp("replay-phone")
    settings = Settings(source_kind="sample", setup_dir=root / "setup", sessions_dir=root / "sessions")
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(30)
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        yield b
        b.close()


def _page(browser: Any, width: int, height: int) -> Any:
    ctx = browser.new_context(viewport={"width": width, "height": height})
    return ctx, ctx.new_page()


def test_replay_lists_the_bundled_samples_and_seeks_show_the_frame(server: str, browser: Any) -> None:
    ctx, pg = _page(browser, 1400, 900)
    try:
        pg.goto(server + "/replay")
        rows = pg.eval_on_selector_all("#sessions tbody tr", "els => els.map((e) => e.textContent)")
        assert any("valknut_skirmish" in r and "bundled sample" in r for r in rows), rows
        pg.click("text=valknut_skirmish")  # the viewer opens: until it has, there is no #camera to read (null-safe)
        pg.wait_for_function("Number(document.getElementById('camera')?.dataset.shapes) > 0", timeout=30000)
        pg.wait_for_function("Number(document.getElementById('seek')?.max) > 100", timeout=20000)
        for frame in (100, 5, 100, 60):
            # the slider is moved, and the frame shown and the note read, in one go: a frame coming in between the
            # two reads would find it shown and the note gone
            shown, said = pg.evaluate(f"""() => {{ const s = document.getElementById('seek'); s.value = '{frame}';
                                     s.dispatchEvent(new Event('change'));
                                     return [document.getElementById('camera').dataset.frame,
                                             document.getElementById('seek-note').textContent]; }}""")
            if shown != str(frame):  # on its way: the page says so, the slider stays where it was put
                assert said == f"Going to frame {frame}…"
            pg.wait_for_function(f"document.getElementById('camera').dataset.frame === '{frame}'", timeout=90000)
            assert pg.text_content("#seek-note") == ""
            pg.wait_for_timeout(300)
            assert pg.evaluate("document.getElementById('camera').dataset.frame") == str(frame)
            assert pg.evaluate("document.getElementById('seek').value") == str(frame)
        legend = str(pg.text_content("#marks-legend"))
        assert "illegal" in legend and "move" in legend
        assert pg.is_visible("#gp-headline") and not pg.is_visible("#gp-undo")  # a recording plays as it was: no Undo
    finally:
        ctx.close()


def test_phone_layout_live_and_roster(server: str, browser: Any) -> None:
    ctx, pg = _page(browser, 390, 844)
    try:
        pg.goto(server + "/")
        pg.wait_for_function("Number(document.getElementById('camera').dataset.shapes) > 0", timeout=30000)
        assert pg.evaluate("document.documentElement.scrollWidth") <= 392  # nothing cut off sideways
        cam = pg.eval_on_selector("#camera", "e => e.getBoundingClientRect().width")
        assert cam >= 350
        sel = pg.eval_on_selector("#selection", "e => e.getBoundingClientRect().width")
        assert sel >= 350
        assert pg.is_visible("#gp-undo")  # the live table's game can take a declaration back
        # the sample rolls its dice as recorded: the toggle shows it, and cannot be changed, and says why
        pg.wait_for_function("document.getElementById('dice-roll-note').textContent !== ''", timeout=10000)
        assert pg.is_checked("#dice-roll-for-us") and pg.is_disabled("#dice-roll-for-us")
        assert str(pg.text_content("#dice-roll-note")).startswith("This recorded session rolls its dice as they were")
        pg.screenshot(path="/tmp/tablesight-browser-phone-live.png", full_page=True)
        pg.goto(server + "/roster")
        pg.wait_for_function("document.querySelectorAll('#roster-table tbody tr').length >= 10", timeout=10000)
        assert pg.evaluate("document.documentElement.scrollWidth") <= 392
        widths = pg.eval_on_selector_all("#roster-table tbody tr:first-child input",
                                         "els => els.map((e) => e.getBoundingClientRect().width)")
        assert len(widths) == 7 and min(widths) >= 120, widths  # every field wide enough to read its value
        pg.screenshot(path="/tmp/tablesight-browser-phone-roster.png", full_page=True)
    finally:
        ctx.close()


def test_terrain_editor_shows_its_tool(server: str, browser: Any) -> None:
    ctx, pg = _page(browser, 1300, 900)
    try:
        pg.goto(server + "/terrain")
        pg.wait_for_function("Number(document.getElementById('tboard').dataset.pieces) > 0", timeout=10000)
        assert pg.get_attribute("#tool-select", "aria-pressed") == "true"
        assert pg.get_attribute("#tool-draw", "aria-pressed") == "false"
        assert str(pg.text_content("#terrain-msg")).startswith("Selecting")
        pg.click("#tool-draw")
        assert pg.get_attribute("#tool-draw", "aria-pressed") == "true"
        assert str(pg.text_content("#terrain-msg")).startswith("Drawing")
        assert pg.evaluate("document.getElementById('tboard').style.cursor") == "crosshair"
    finally:
        ctx.close()


@pytest.mark.parametrize("path", ["/", "/setup", "/calibrate", "/terrain", "/roster", "/replay", "/help", "/camera"])
def test_no_page_is_wider_than_a_phone(server: str, browser: Any, path: str) -> None:
    """At 390 px nothing is cut off sideways (the Calibrate page's mounts table widened it to 404 px)."""
    ctx, pg = _page(browser, 390, 844)
    try:
        pg.goto(server + path)
        pg.wait_for_load_state("networkidle")
        wide = pg.evaluate("[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 392)"
                           ".map((e) => e.tagName + '#' + e.id)")
        assert pg.evaluate("document.documentElement.scrollWidth") <= 392, wide
    finally:
        ctx.close()


def test_the_units_are_cards_on_a_phone(server: str, browser: Any) -> None:
    """At 390 px the New game page's units table does not scroll sideways (it was 914 px wide in its box, Side and
    Base off screen): each unit is a card, each field under its column's name."""
    ctx, pg = _page(browser, 390, 844)
    try:
        pg.goto(server + "/setup")
        pg.wait_for_selector("#units tbody tr")
        box = pg.evaluate("(() => { const b = document.querySelector('#units').parentElement;"
                          " return [b.scrollWidth, b.clientWidth]; })()")
        assert box[0] <= box[1], box
        side = pg.locator("#units tbody tr").first.locator("select[data-key=owner]")
        right = pg.evaluate("(e) => e.getBoundingClientRect().right", side.element_handle())
        assert 0 < right <= 390, right
        label = pg.evaluate("(e) => getComputedStyle(e.parentElement, '::before').content", side.element_handle())
        assert label == '"Side"', label
        pg.locator("#units").scroll_into_view_if_needed()
        pg.screenshot(path="/tmp/tablesight-browser-setup-phone.png")
    finally:
        ctx.close()


def test_a_game_of_the_players_own_on_the_sample_is_kept_and_the_page_says_so(browser: Any, tmp_path: Path) -> None:
    """A new game set up while the sample plays: at the sample's last frame the page keeps showing that frame and says
    the game is kept (the banner was cleared by that frame, whose picture decoded after the status came)."""
    import httpx

    from tests.webui_server import SAME_ORIGIN

    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with running_server(settings) as (url, app):
        loop = app.state.runtime.live
        assert loop.wait_for_frame(30)
        roster = httpx.get(url + "/api/roster", timeout=30).json()["roster"]
        r = httpx.put(url + "/api/roster?restart=true", json=roster, headers=SAME_ORIGIN, timeout=30)
        assert r.status_code == 200, r.text
        loop.set_speed(8.0)
        ctx, pg = _page(browser, 1280, 800)
        try:
            pg.goto(url + "/")
            pg.wait_for_function("document.getElementById('banner').textContent === 'The sample has ended on its last "
                                 "frame; your game is kept as it stands.' && !document.getElementById('banner').hidden",
                                 timeout=60000)
            last = loop.status().frames - 1
            pg.wait_for_function(f"document.getElementById('camera').dataset.frame === '{last}'", timeout=20000)
            run = loop.run
            pg.wait_for_timeout(1500)  # nothing after it takes the sentence away, and no new pass starts
            assert pg.is_visible("#banner") and loop.run == run and loop.status().frame_index == last
        finally:
            ctx.close()
