"""End to end in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright): the pages draw
the measurements of a rendered recorded session, selection and questions work, replay seeks, and the
calibration wizard reports its residual. Screenshots go to /tmp/tablesight-browser-*.png."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from tests.webui_server import SAME_ORIGIN, running_server, session_settings
from tests.webui_session import make_session

ARGS = list(CHROMIUM_ARGS)
SHOTS = Path("/tmp")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    root = tmp_path_factory.mktemp("browser-sessions")
    make_session(root / "table1")
    settings = session_settings(root / "table1", root, tmp_path_factory.mktemp("setup"))
    settings = settings.model_copy(update={"source_kind": "sample", "loop_sample": True})
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1500, "height": 950})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    pg.close()
    assert not errors, errors


def _wait_drawn(page: Any) -> None:
    page.wait_for_function("Number(document.getElementById('camera').dataset.shapes) > 0", timeout=20000)


def _unit_centre_css(page: Any, canvas: str, tag: int) -> tuple[float, float]:
    """Where unit `tag` is drawn on a canvas, in page CSS pixels."""
    return tuple(page.evaluate(
        """([canvas, tag]) => {
            const c = document.getElementById(canvas), r = c.getBoundingClientRect(), msg = window.tablesight.msg;
            const s = msg.image_shapes.find((s) => s.s === "base" && s.u === tag);
            const cx = s.p.reduce((a, p) => a + p[0], 0) / s.p.length, cy = s.p.reduce((a, p) => a + p[1], 0) / s.p.length;
            return [r.left + cx * r.width / msg.image_size[0], r.top + cy * r.height / msg.image_size[1]];
        }""",
        [canvas, tag],
    ))


def _target_21_range(page: Any) -> str:
    """Click unit 21 as the selected unit's target; the answer's text, checked to give 13's range to it."""
    x, y = _unit_centre_css(page, "camera", 21)
    page.mouse.click(x, y)
    page.wait_for_selector("#answer-table", timeout=10000)
    text = str(page.text_content("#answer-table"))
    expected = math.dist((6.0, 15.0), (22.0, 12.0)) - 32 / 25.4  # two 32 mm bases, edge to edge
    assert f"{expected:.1f}" in text or f"{expected:.2f}"[:-1] in text, text
    return text


def test_live_page_draws_overlays_on_camera_and_board(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/")
    _wait_drawn(page)
    # read the message and both canvases in one tick: a newer frame may be drawn between two separate reads
    msg, shapes, board_shapes = page.evaluate(
        """() => [window.tablesight.msg, Number(document.getElementById('camera').dataset.shapes),
                  Number(document.getElementById('board').dataset.shapes)]"""
    )
    assert shapes == len(msg["image_shapes"]) >= 14 + 10 + 1  # 14 tags, 10 bases, the wall, the game's shapes
    assert board_shapes >= 10 + 1  # bases + the wall
    # the pixel at unit 21's base edge carries its owner's colour (blue #2e86de), drawn by the browser
    pixel = page.evaluate(
        """() => {
            const c = document.getElementById('camera'), msg = window.tablesight.msg;
            const s = msg.image_shapes.find((s) => s.s === 'base' && s.u === 21);
            const [x, y] = s.p[0], k = c.width / msg.image_size[0];  // the canvas holds the picture at its shown size
            return Array.from(c.getContext('2d').getImageData(Math.round(x * k), Math.round(y * k), 1, 1).data);
        }"""
    )
    r, g, b, _a = pixel
    assert b > r + 40 and b > g, pixel  # blue-dominated, unlike the green table under it
    page.wait_for_function("!['', '–'].includes(document.getElementById('fps').textContent)", timeout=15000)
    assert float(page.text_content("#fps") or "nan") > 0  # frames a second, once it has a rate to tell
    page.screenshot(path=str(SHOTS / "tablesight-browser-live.png"))


def test_the_board_is_drawn_again_only_when_what_it_shows_changed(server: tuple[str, Any], page: Any) -> None:
    """The top-down board shows positions, not the picture: while the table stands still it is not drawn again
    with every frame (the camera view is); when unit 12 is moved (at frame 8 of each pass of the recording) it
    is drawn again, with unit 12 where it now stands."""
    url, _app = server
    page.goto(url + "/")
    _wait_drawn(page)
    counts = "() => [window.tablesightDrawn.length, Number(document.getElementById('board').dataset.draws)]"
    frames0, draws0 = page.evaluate(counts)
    page.wait_for_timeout(5000)  # two passes of the 24-frame recording at 10 fps
    frames1, draws1 = page.evaluate(counts)
    frames, draws = frames1 - frames0, draws1 - draws0
    assert frames >= 20 and 2 <= draws <= frames // 2, (frames, draws)
    # after the move: unit 12's colour on the board where it stands now (14, 9), the table's where it stood (8, 6)
    # read when the board shows the frame of the message read with it, after the move (frames 12-22 of a pass;
    # the loop goes back to frame 0, unit 12 where it stood, every 2.4 s), again every 50 ms until it does
    page.evaluate("import('/static/overlay.js').then((m) => { window.overlayModule = m; })")
    page.wait_for_function("window.overlayModule", timeout=20000)
    colours = page.wait_for_function(
        """() => {
            const { boardView, layoutSize } = window.overlayModule;
            const c = document.getElementById('board'), msg = window.tablesight.msg;
            if (!msg || msg.frame_index < 12 || msg.frame_index > 22 || window.tablesight.boardFrame !== msg.frame_index)
              return null;
            const view = boardView(c, msg.board), k = c.width / layoutSize(c)[0];
            const at = (x, y) => { const [px, py] = view.toPx(x, y);
              return Array.from(c.getContext('2d').getImageData(Math.round(px * k), Math.round(py * k), 1, 1).data); };
            return [msg.units.find((u) => u.tag === 12), at(13.8, 8.8), at(7.8, 5.8)];  // off the facing line
        }""", polling=50, timeout=20000).json_value()
    unit, now, before = colours
    assert math.hypot(unit["x"] - 14.0, unit["y"] - 9.0) < 0.05, unit
    assert now[0] > now[1] + 40 and now[0] > now[2] + 40, now  # red: the unit's owner colour
    assert not (before[0] > before[1] + 40 and before[0] > before[2] + 40), before


def test_with_bases_moving_every_frame_the_board_is_drawn_ten_times_a_second_and_ends_where_they_stand(
        tmp_path: Path, page: Any) -> None:
    """The stress sample (eight bases, moving in many of its frames) played flat out: the camera view is drawn
    with every frame the page is sent (a page too slow for some is sent the newest, so how many depends on the
    machine: not asserted), the top-down board at most every 100 ms (each board costs the browser a draw of every
    base, overlay and name); after the last frame the board shows every unit where that frame has it."""
    from session.settings import Settings

    stress = Path(__file__).resolve().parents[1] / "sample_frames" / "stress"
    settings = Settings(source_kind="sample", source=str(stress), loop_sample=False, sessions_dir=tmp_path / "s",
                        setup_dir=tmp_path / "setup")
    with running_server(settings) as (url, app):
        app.state.runtime.live.set_speed(16.0)
        page.add_init_script("""document.addEventListener('DOMContentLoaded', () => { window.__boards = [];
            new MutationObserver(() => window.__boards.push(Number(document.getElementById('board').dataset.drawnAt)))
              .observe(document.getElementById('board'), { attributeFilter: ['data-draws'] }); });""")
        page.goto(url + "/")
        page.wait_for_function("document.getElementById('camera').dataset.frame === '69'", timeout=60000)
        page.wait_for_timeout(300)  # the board's last draw is due at most 100 ms after the last frame
        drawn, boards, found, board_frame = page.evaluate(
            """async () => {
                const { boardView, layoutSize } = await import('/static/overlay.js');
                const c = document.getElementById('board'), msg = window.tablesight.msg;
                const view = boardView(c, msg.board), k = c.width / layoutSize(c)[0], ctx = c.getContext('2d');
                const found = msg.units.map((u) => {  // half a radius behind the centre, off its facing line
                  const a = (u.yaw_deg || 0) * Math.PI / 180, r = u.radius_in / 2;
                  const [px, py] = view.toPx(u.x - Math.cos(a) * r, u.y - Math.sin(a) * r);
                  return [u.tag, u.colour, Array.from(ctx.getImageData(Math.round(px * k), Math.round(py * k), 1, 1).data)];
                });
                return [window.tablesightDrawn.map((r) => r[0]), window.__boards, found, window.tablesight.boardFrame];
            }"""
        )
    # frames drawn in the order played, the last one among them (a CI machine drew 19 of the 70, a quiet one 60+)
    assert len(drawn) >= 5 and drawn == sorted(set(drawn)) and drawn[-1] == 69, drawn
    gaps = [b - a for a, b in zip(boards, boards[1:])]
    assert len(boards) >= 3 and min(gaps) >= 90.0, boards  # ms between two draws of the board (a timer's slack aside)
    assert board_frame == 69  # the last frame's positions, drawn by the board's timer after the frames stopped
    assert len(found) >= 6
    for tag, colour, rgba in found:  # the unit's colour, 85 % over the table's green
        want = [0.85 * int(colour[i:i + 2], 16) + 0.15 * g for i, g in zip((1, 3, 5), (0x3D, 0x5A, 0x3F))]
        assert max(abs(a - b) for a, b in zip(rgba[:3], want)) < 24, (tag, colour, rgba, want)


def test_the_events_list_changes_a_few_times_a_second_as_plain_lines(server: tuple[str, Any], page: Any) -> None:
    """A frame's new events wait for the panel's next rewrite (250 ms): the list changes at most ~4 times a
    second, and its items are plain blocks, not numbered list items that every new event would renumber (with
    many bases the game has something to say most frames, and each change cost the page a layout)."""
    url, _app = server
    page.add_init_script("""document.addEventListener('DOMContentLoaded', () => { window.__changes = [];
        new MutationObserver(() => window.__changes.push(performance.now()))
          .observe(document.getElementById('events'), { childList: true }); });""")
    page.goto(url + "/")
    page.wait_for_selector("#events li.move", timeout=30000)  # unit 12's move, at frame 8 of each pass
    changes, now = page.evaluate("[window.__changes, performance.now()]")
    # the list as the page asked for it at load, then at most one change each 250 ms (a timer's slack aside)
    assert 1 <= len(changes) <= 2 + now / 250.0, (changes, now)
    paced = [b - a for a, b in zip(changes[1:], changes[2:])]
    assert min(paced, default=1000.0) >= 200.0, changes
    li = page.locator("#events li.move").first
    assert li.evaluate("(el) => getComputedStyle(el).display") == "block"
    assert (li.text_content() or "").startswith("#")  # each line says its frame itself


def test_a_new_pass_empties_the_events_list_at_the_lists_pace(server: tuple[str, Any], page: Any) -> None:
    """The page opened as a pass of the looping recording ends (its list asked for at load, then frame 22's entry,
    then the new pass emptying it): each change at most one each 250 ms, the emptying too (it used to come at once,
    40-190 ms after the entry before it)."""
    url, app = server
    page.add_init_script("""document.addEventListener('DOMContentLoaded', () => { window.__changes = [];
        new MutationObserver(() => window.__changes.push(performance.now()))
          .observe(document.getElementById('events'), { childList: true }); });""")
    live = app.state.runtime.live
    deadline = time.monotonic() + 20
    while live.status().frame_index != 19:  # of 24: the page has its list a moment before the pass ends
        assert time.monotonic() < deadline, live.status()
        time.sleep(0.005)
    run = live.run
    page.goto(url + "/")
    page.wait_for_function(f"window.tablesight.msg && window.tablesight.msg.run > {run} && "
                           "window.tablesight.msg.frame_index >= 12 && window.tablesight.listSettled()", timeout=30000)
    changes = page.evaluate("window.__changes")
    paced = [b - a for a, b in zip(changes, changes[1:])]
    assert len(changes) >= 2 and min(paced) >= 200.0, changes


def test_selecting_a_unit_shows_its_rings_and_a_target_gives_range(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/")
    _wait_drawn(page)
    x, y = _unit_centre_css(page, "camera", 13)
    page.mouse.click(x, y)
    page.wait_for_function("window.tablesight.msg && window.tablesight.msg.selected === 13", timeout=10000)
    page.wait_for_function(
        "((window.tablesight.msg.focus || {})['13'] || {image_shapes: []}).image_shapes.some((s) => s.u === 13)",
        timeout=10000,
    )
    assert "Selected" in page.text_content("#selected-text")
    text = _target_21_range(page)
    assert "blocked" in text or "partial" in text
    page.screenshot(path=str(SHOTS / "tablesight-browser-select.png"))


def test_replay_page_seeks(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/replay")
    page.click("text=table1")
    _wait_drawn(page)
    page.wait_for_function("document.getElementById('seek').max === '23'", timeout=10000)
    page.evaluate(
        "() => { const s = document.getElementById('seek'); s.value = '17'; s.dispatchEvent(new Event('change')); }"
    )
    page.wait_for_function("document.getElementById('camera').dataset.frame === '17'", timeout=15000)
    page.wait_for_function("Number(document.getElementById('marks').dataset.marks) > 0", timeout=30000)
    units = {u["tag"]: u for u in page.evaluate("window.tablesight.msg.units")}
    assert math.dist((units[12]["x"], units[12]["y"]), (14.0, 9.0)) < 0.05
    page.screenshot(path=str(SHOTS / "tablesight-browser-replay.png"))


def test_replay_page_saves_the_battle_report(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/replay/table1")
    with page.expect_download(timeout=60000) as info:
        page.click("#report")
    download = info.value
    assert download.suggested_filename == "table1-report.html"
    text = Path(download.path()).read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and "Battle report" in text
    assert text.count("<svg") >= 2 and "data:image/jpeg;base64," in text
    # the moved unit's measured distance is in the moves table, in inches with its ±
    assert re.search(r'\d\.\d\d&#34; ± 0\.0\d\d&#34;', text)


def test_the_panel_says_the_frame_of_a_seek_made_while_paused(server: tuple[str, Any], page: Any) -> None:
    """Seeks a moment apart while paused send a frame each and no more: the side panel, which changes its words a
    few times a second, still ends on the last one's number."""
    url, _app = server
    control = url + "/api/replay/table1/control"
    assert page.request.post(control, data={"action": "pause"}, headers=SAME_ORIGIN).ok
    page.goto(url + "/replay/table1")
    _wait_drawn(page)
    for frame in (3, 5, 7, 9):
        assert page.request.post(control, data={"action": "seek", "frame": frame}, headers=SAME_ORIGIN).ok
    page.wait_for_function("document.getElementById('camera').dataset.frame === '9'", timeout=15000)
    page.wait_for_function("document.getElementById('frame').textContent === '9'", timeout=2000)
    assert page.text_content("#fps") == "–"


def test_replay_page_answers_a_target_click_and_an_event_click_seeks(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    for body in ({"action": "pause"}, {"action": "seek", "frame": 0}):  # whatever other tests left it at
        assert page.request.post(url + "/api/replay/table1/control", data=body, headers=SAME_ORIGIN).ok
    page.goto(url + "/replay/table1")
    _wait_drawn(page)
    # sought while nobody watched: the paused frame still comes with its picture
    page.wait_for_function("document.getElementById('camera').dataset.frame === '0'", timeout=15000)
    page.wait_for_function("document.getElementById('frame').textContent === '0'", timeout=15000)
    assert page.text_content("#fps") == "–"  # paused: no frames a second to tell, not the last rate played
    x, y = _unit_centre_css(page, "camera", 13)
    page.mouse.click(x, y)
    page.wait_for_function("window.tablesight.msg && window.tablesight.msg.selected === 13", timeout=15000)
    _target_21_range(page)
    # play to the end, so unit 12's move is in the log; a click on it goes back to its frame
    page.wait_for_function("document.getElementById('play').textContent === 'Play'", timeout=10000)
    page.click("#play")
    page.wait_for_selector("#events li.move", timeout=30000)
    li = page.locator("#events li.move").first
    frame = int(li.get_attribute("data-frame"))
    page.wait_for_function(f"Number(document.getElementById('camera').dataset.frame) > {frame}", timeout=30000)
    page.click("#play")  # pause
    page.wait_for_function("document.getElementById('fps').textContent === '–'", timeout=5000)  # not the last rate
    li.click()
    page.wait_for_function(f"document.getElementById('camera').dataset.frame === '{frame}'", timeout=15000)


def test_calibration_wizard_reports_residual(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/calibrate")
    page.fill("#board", "30x22")
    page.click("#capture")
    page.wait_for_selector("#residual-in", timeout=20000)
    residual = float(page.text_content("#residual-in").strip('"'))
    assert 0 <= residual < 0.02
    # the line is built of elements (the server's numbers as text): the inches in bold, then pixels, height, tilt
    assert re.fullmatch(r'Residual \d\.\d{3}" \(\d+\.\d{2} px\), camera [\d.]+" up, tilt [\d.]+°',
                        page.text_content("#residual") or ""), page.text_content("#residual")
    assert page.evaluate("document.querySelector('#residual b').id") == "residual-in"
    assert page.get_attribute("#shot", "data-anchors") == "4"
    assert page.locator(".chip.missing").count() == 0
    page.screenshot(path=str(SHOTS / "tablesight-browser-calibrate.png"))


def test_terrain_editor_draws_and_saves_a_piece(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    page.goto(url + "/terrain")
    page.wait_for_function("document.getElementById('tboard').dataset.pieces === '1'", timeout=10000)
    page.click("#tool-draw")
    box = page.locator("#tboard").bounding_box()
    for fx, fy in ((0.2, 0.3), (0.3, 0.3), (0.3, 0.45)):
        page.mouse.click(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
    page.keyboard.press("Enter")
    assert page.get_attribute("#tboard", "data-pieces") == "2"
    page.click("#save")
    page.wait_for_function("document.getElementById('terrain-msg').textContent.startsWith('Saved 2')", timeout=10000)
    assert len(app.state.runtime.setup.terrain) == 2
    page.screenshot(path=str(SHOTS / "tablesight-browser-terrain.png"))
