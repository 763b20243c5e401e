"""The setup pages in real headless Chromium: errors are sentences where the input is (the printables form, the
roster check, a server that does not answer), cleared by the next success; the roster saves keep the game and
ask before starting a new one; the help page is linked from every page."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from tests.webui_server import running_server, session_settings
from tests.webui_session import make_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    root = tmp_path_factory.mktemp("setup-pages-sessions")
    make_session(root / "table1")
    settings = session_settings(root / "table1", root, tmp_path_factory.mktemp("setup"), game="valknut")
    settings = settings.model_copy(update={"source_kind": "sample", "loop_sample": True})
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1300, "height": 900}, accept_downloads=True)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    ctx.close()
    assert not errors, errors


def test_printables_errors_are_sentences_under_the_form(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/roster")
    form = page.locator("form.printable").first
    assert page.input_value("#tmount") == "topper"  # the mount a figure's base needs comes first
    assert page.is_visible("#tpin") and not page.is_visible("#tclear")
    page.select_option("#tmount", "rim")
    assert page.is_visible("#tclear") and not page.is_visible("#tpin") and page.is_disabled("#tpin")
    form.locator("button[type=submit]").click()  # a 32 mm base leaves no room beside the feet
    page.wait_for_function("document.querySelector('form.printable .form-error').textContent.includes('topper')",
                           timeout=10000)
    text = str(form.locator(".form-error").text_content())
    assert "wider base" in text and "--" not in text, text
    page.select_option("#tmount", "flat")
    page.fill("#tsize", "0.9")
    page.fill("#tbase", "20")
    form.locator("button[type=submit]").click()
    err = form.locator(".form-error")
    err.wait_for(timeout=10000)
    page.wait_for_function("document.querySelector('form.printable .form-error').textContent.length > 0", timeout=10000)
    text = str(err.text_content())
    assert "does not fit a 20 mm base" in text and "--" not in text and "{" not in text, text
    assert page.url.endswith("/roster")  # the page stayed
    page.fill("#tsize", "0.05")
    form.locator("button[type=submit]").click()
    page.wait_for_function("document.querySelector('form.printable .form-error').textContent.includes('0.05')",
                           timeout=10000)
    assert "tag size" in str(err.text_content())
    page.fill("#tsize", "0.6")
    page.fill("#tbase", "32")
    with page.expect_download(timeout=20000) as info:
        form.locator("button[type=submit]").click()
    assert info.value.suggested_filename.startswith("tags-") and str(err.text_content()) == ""
    page.select_option("#tmount", "topper")
    page.fill("#tsize", "")
    page.fill("#tpin", "1.6")
    with page.expect_download(timeout=20000) as info:
        form.locator("button[type=submit]").click()
    assert info.value.suggested_filename.endswith("-topper.pdf") and str(err.text_content()) == ""


def test_check_army_in_words_and_server_down_in_words(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/roster")
    page.wait_for_function("document.querySelectorAll('#roster-table tbody tr').length >= 10", timeout=10000)
    page.route("**/api/roster/check", lambda route: route.abort())
    page.click("#check")
    page.wait_for_function("document.getElementById('roster-msg').textContent.length > 0", timeout=10000)
    assert page.text_content("#roster-msg") == "The Tablesight server is not answering; is it still running?"
    page.unroute("**/api/roster/check")
    page.click("#check")
    page.wait_for_function("document.getElementById('roster-msg').textContent.startsWith('The roster reads well')",
                           timeout=10000)
    assert "{" not in str(page.text_content("#army"))
    assert page.get_attribute("#roster-msg", "class") == "ok"


def test_saving_a_rename_keeps_the_game_and_a_new_unit_asks_first(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    page.goto(url + "/roster")
    page.wait_for_function("document.querySelectorAll('#roster-table tbody tr').length >= 10", timeout=10000)
    state = app.state.runtime.live.pipeline.state
    first = page.locator("#roster-table tbody tr").first
    first.locator("input[data-key=name]").fill("Sigrid")
    first.locator("input[data-key=base_height_in]").fill("1.9")  # how the tag is mounted is not a rule: the
    first.locator("input[data-key=tag_in]").fill("0.7")  # game goes on
    page.click("#rsave")
    page.wait_for_function("document.getElementById('roster-msg').textContent.startsWith('Saved')", timeout=10000)
    assert "the game goes on" in str(page.text_content("#roster-msg"))
    deadline = time.monotonic() + 20  # the loop's thread rebuilds the pipeline with the saved roster
    while app.state.runtime.live.pipeline.roster.units[10].name != "Sigrid":
        assert time.monotonic() < deadline, "the live game never took the rename"
        time.sleep(0.05)
    assert app.state.runtime.live.pipeline.state is not None
    assert app.state.runtime.setup.roster.units[10].name == "Sigrid"
    assert app.state.runtime.setup.roster.units[10].base_height_in == 1.9
    assert app.state.runtime.setup.roster.units[10].tag_in == 0.7
    del state
    page.locator("#roster-table tbody tr").first.locator("input[data-key=tag]").fill("40")
    page.click("#rsave")
    page.wait_for_selector("#restart-save", timeout=10000)
    text = str(page.text_content("#roster-msg"))
    assert "starts a new game" in text and "adds tag 40" in text
    assert 40 not in app.state.runtime.setup.roster.units
    page.click("#restart-save")
    page.wait_for_function("document.getElementById('roster-msg').textContent.includes('a new game has started')",
                           timeout=10000)
    assert 40 in app.state.runtime.setup.roster.units


@pytest.mark.parametrize("path", ["/", "/calibrate", "/terrain", "/roster", "/replay", "/help"])
def test_help_is_linked_from_every_page(server: tuple[str, Any], page: Any, path: str) -> None:
    url, _app = server
    page.goto(url + path)
    page.click("nav a[href='/help']")
    page.wait_for_url(url + "/help")
    text = str(page.text_content("main"))
    for words in ("Print", "anchor", "topper", "never seen", "camera", "Calibrate", "Play"):
        assert words in text, words


def test_loading_a_roster_file_for_another_game(server: tuple[str, Any], page: Any, tmp_path: Any) -> None:
    """A Rise of the Magni roster file loaded in the browser: its units and its own keys (the board, the
    ratings) fill the page, the game checks it, and a file that is not a roster is one sentence."""
    import json
    from pathlib import Path

    url, _app = server
    example = Path(__file__).resolve().parent.parent / "examples" / "rosters" / "magni.json"
    obj = json.loads(example.read_text())
    page.goto(url + "/roster")
    page.wait_for_function("document.querySelectorAll('#roster-table tbody tr').length >= 10", timeout=10000)
    page.set_input_files("#rfile", str(example))
    page.wait_for_function("document.getElementById('roster-msg').textContent.startsWith('Loaded magni.json')",
                           timeout=10000)
    assert page.input_value("#rgame") == "magni"
    assert page.eval_on_selector_all("#roster-table tbody tr", "els => els.length") == len(obj["units"])
    bad = tmp_path / "notes.json"
    bad.write_text("{ not json")
    page.set_input_files("#rfile", str(bad))
    page.wait_for_function("document.getElementById('roster-msg').textContent.includes('not a roster file')",
                           timeout=10000)
    assert page.get_attribute("#roster-msg", "class") == "bad"


def test_the_roster_page_shows_the_game_the_table_rules(server: tuple[str, Any], page: Any) -> None:
    """The table ruled as another game than its roster names (chosen on the live page, or a session's recorded
    game): the roster page's Game is the ruled one, so a save does not switch the table's game unasked."""
    url, app = server
    runtime = app.state.runtime
    assert runtime.setup.roster.game == "valknut"
    runtime.set_game("vigtavl")
    try:
        page.goto(url + "/roster")
        page.wait_for_function("document.querySelectorAll('#roster-table tbody tr').length >= 10", timeout=10000)
        page.wait_for_function("document.getElementById('rgame').value === 'vigtavl'", timeout=10000)
    finally:
        runtime.set_game("valknut")
    page.goto(url + "/roster")
    page.wait_for_function("document.getElementById('rgame').value === 'valknut'", timeout=10000)
