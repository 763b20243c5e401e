"""A roster's names are text, never markup, on the live page (real Chromium at /usr/bin/chromium): a unit named
like an HTML tag with a script in it is shown as those very characters in the selection, the range answer and
the Correct position form, and no element of it is made (its onerror never runs). The Overrule form, built of
elements, still overrules."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from tests.webui_server import SAME_ORIGIN, click_unit, running_server, session_settings
from tests.webui_session import make_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

PAYLOAD = '<img src=x onerror="window.__injected = 1">'
"""Unit 13's name: made into an element, its picture fails to load and its onerror sets the flag."""
BOLD = '<b id="injected-b">Bjorn</b> & <i>co'
"""Unit 21's name."""
INJECTED = "img[src='x'], #injected-b, #events i, #answer i, #selection i"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """The web tests' recorded session, its roster naming unit 13 PAYLOAD and unit 21 BOLD; paused on its first
    frame (the units stay where they are drawn)."""
    root = tmp_path_factory.mktemp("markup-sessions")
    d = make_session(root / "table1")
    roster = json.loads((d / "roster.json").read_text())
    names = {13: PAYLOAD, 21: BOLD}
    roster["units"] = [{**u, "name": names.get(u["tag"], u["name"])} for u in roster["units"]]
    (d / "roster.json").write_text(json.dumps(roster))
    settings = session_settings(d, root, tmp_path_factory.mktemp("markup-setup"), game="valknut")
    with running_server(settings) as (url, app):
        loop = app.state.runtime.live
        assert loop.wait_for_frame(20)
        loop.pause()
        assert {u.name for u in app.state.runtime.setup.roster.units.values()} >= {PAYLOAD, BOLD}
        yield url, app


@pytest.fixture
def page(server: tuple[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        pg = browser.new_page(viewport={"width": 1500, "height": 950})
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        yield pg
        browser.close()
        assert not errors, errors


def _nothing_injected(page: Any) -> None:
    page.wait_for_timeout(300)  # a failed picture's onerror runs a moment after the element is made
    assert page.evaluate(f"document.querySelectorAll({INJECTED!r}).length") == 0
    assert page.evaluate("window.__injected") is None


def test_a_units_name_made_of_markup_is_shown_as_text(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    page.goto(url + "/")
    page.wait_for_function("Number(document.getElementById('camera').dataset.shapes) > 0", timeout=20000)
    click_unit(page, 13)
    page.wait_for_function("window.tablesight.selected === 13", timeout=10000)
    # the page names the selected unit once the server has taken the selection (a moment after `selected` is set)
    page.wait_for_function("p => document.getElementById('selected-text').textContent.includes(p)", arg=PAYLOAD,
                           timeout=10000)
    assert PAYLOAD in page.text_content("#selected-text")
    click_unit(page, 21)  # 13's range to 21: the answer names both
    page.wait_for_selector("#answer-table", timeout=10000)
    assert BOLD in page.text_content("#answer")
    _nothing_injected(page)
    # Correct position: the form says the unit's name, then where the click on the board puts it
    page.click("#correct-position")
    box = page.locator("#board").bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    said = page.locator("#answer form.overrule p")
    said.wait_for(timeout=10000)
    _nothing_injected(page)
    text = said.text_content()
    assert text.startswith(f"{PAYLOAD} stands at (") and '" from where the camera has it.' in text, text
    page.fill("#answer form.overrule input[name=by]", "Astrid")
    page.fill("#answer form.overrule input[name=reason]", "the camera saw the wrong base")
    page.click("#answer form.overrule button[type=submit]")
    page.wait_for_function("!document.querySelector('#answer form.overrule')", timeout=20000)
    assert 13 in app.state.runtime.live.pipeline.overrules.corrections  # the correction was sent and stands
    _nothing_injected(page)


def test_the_overrule_form_still_overrules(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    page.goto(url + "/")
    page.wait_for_function("Number(document.getElementById('camera').dataset.shapes) > 0", timeout=20000)
    first = httpx.get(url + "/api/live/actions", headers=SAME_ORIGIN).json()["groups"][0]["actions"][0]["action"]
    declared = httpx.post(url + "/api/live/declare", json={"action": first}, headers=SAME_ORIGIN).json()
    assert declared["outcome"] == "legal"
    rule = declared["verdicts"][0]["rule"]
    opener = page.locator("#events li button.overrule-open").first
    opener.wait_for(timeout=20000)
    opener.click()
    form = page.locator("#events li form.overrule")
    assert form.locator("select[name=outcome] option").evaluate_all("(os) => os.map((o) => [o.value, o.text])") == [
        ["illegal", "illegal"], ["legal", "legal"]]  # the other outcome first
    assert form.locator("input[name=by]").evaluate("(i) => [i.required, i.maxLength, i.placeholder]") == [
        True, 60, "your name"]
    assert form.locator("input[name=reason]").evaluate("(i) => [i.required, i.maxLength]") == [True, 300]
    form.locator("input[name=by]").fill("Astrid")
    form.locator("input[name=reason]").fill("it stood a hair inside the section")
    form.locator("button[type=submit]").click()
    page.wait_for_function("!document.querySelector('#events li form.overrule')", timeout=20000)
    overruled = app.state.runtime.live.pipeline.overrules.overruled  # the server has the overrule on record
    assert [(key[1], v["outcome"], v["by"]) for key, v in overruled.items()] == [(rule, "illegal", "Astrid")]
