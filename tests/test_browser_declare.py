"""The live page's Declare panel in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
a declared action's button is clicked, its verdict shows in the panel and the event log, and the list moves on.
The screenshot goes to /tmp/tablesight-browser-declare.png."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from tests.webui_server import running_server, session_settings
from tests.webui_session import make_session

ARGS = list(CHROMIUM_ARGS)
SHOT = Path("/tmp/tablesight-browser-declare.png")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A recorded session played once (it stays on its last frame), ruled as Valknut."""
    root = tmp_path_factory.mktemp("browser-declare")
    make_session(root / "table1")
    settings = session_settings(root / "table1", root, tmp_path_factory.mktemp("setup"), game="valknut")
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


@pytest.fixture
def page(server: tuple[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        pg = browser.new_page(viewport={"width": 1500, "height": 950})
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        yield pg
        browser.close()
        assert not errors, errors


def test_clicking_a_declared_action_shows_its_verdict(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    page.goto(url + "/")
    page.wait_for_function("document.getElementById('declare-actions').dataset.count === '3'", timeout=20000)
    status = page.text_content("#declare-status")
    assert "Valknut: Skirmish Game" in status and "phase: stockpiles" in status and "to act" in status
    # the panel sits in the side panel, under the selection
    assert page.evaluate("document.getElementById('declare').parentElement.tagName") == "ASIDE"
    buttons = page.locator("#declare-actions button[data-kind='place_stockpile']")
    assert buttons.count() == 3
    label = buttons.first.text_content()
    assert "place a Runic Stockpile at (" in label
    # the recording has played to its end: the loop is paused on its last frame and rules a declaration at once
    deadline = time.monotonic() + 60
    while app.state.runtime.live.status().status != "ended":
        assert time.monotonic() < deadline, app.state.runtime.live.status()
        time.sleep(0.1)
    buttons.first.click()
    page.wait_for_function("document.getElementById('declare-result').dataset.outcome", timeout=30000)
    result = page.text_content("#declare-result")
    assert page.get_attribute("#declare-result", "data-outcome") == "legal", result
    assert label in result and "places a Runic Stockpile in section" in result
    assert page.locator("#declare-result p[data-rule='valknut.stockpiles.section']").count() == 1
    page.wait_for_function("document.getElementById('declare-actions').dataset.count === '2'", timeout=20000)
    # the game really moved on: the server's game has one Runic Stockpile
    assert len(app.state.runtime.live.pipeline.state.stockpiles) == 1
    page.wait_for_function(
        "[...document.querySelectorAll('#events li')].some((li) => li.textContent.includes('declared, legal'))",
        timeout=20000,
    )
    page.screenshot(path=str(SHOT))
