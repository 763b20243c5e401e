"""The live page's Declare panel in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
a declared action's button is clicked, its verdict shows in the panel and the event log, and the list moves on.
The screenshot goes to /tmp/tablesight-browser-declare.png."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from session.paths import SAMPLES_DIR
from tests.test_session_inputs import _copy_sample
from tests.webui_server import SAME_ORIGIN, running_server, session_settings
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
    page.wait_for_function("document.getElementById('declare-actions').dataset.legal === '3'", timeout=20000)
    status = page.text_content("#declare-status")
    assert "Valknut: Skirmish Game" in status and "phase: stockpiles" in status and "to act" in status
    # the panel sits in the side panel, under the selection
    assert page.evaluate("document.getElementById('declare').parentElement.tagName") == "ASIDE"
    buttons = page.locator("#declare-actions button[data-kind='place_stockpile']:not(.refused)")
    assert buttons.count() == 3
    # the spots the rules would refuse are offered too, marked, so the players can try one and read why
    refused = page.locator("#declare-actions button[data-kind='place_stockpile'].refused")
    assert refused.count() == 3 and "would refuse" in (refused.first.get_attribute("title") or "")
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
    page.wait_for_function("document.getElementById('declare-actions').dataset.legal === '2'", timeout=20000)
    # the game really moved on: the server's game has one Runic Stockpile
    assert len(app.state.runtime.live.pipeline.state.stockpiles) == 1
    page.wait_for_function(
        "[...document.querySelectorAll('#events li')].some((li) => li.textContent.includes('Declared, legal'))",
        timeout=20000,
    )
    page.screenshot(path=str(SHOT))
    # on to the beginning of turn 1 (a Step down a Path for every unit; the deployments are the camera's, declared
    # here as it would): the long list is folded, and a unit's click narrows it
    pipe = app.state.runtime.live.pipeline
    for _ in range(30):
        listed = httpx.get(url + "/api/live/actions", headers=SAME_ORIGIN).json()
        if listed["status"]["phase"] == "turn_start":
            break
        taken = [x["action"] for g in listed["groups"] for x in g["actions"] if x["legal"]]  # a standing figure's
        first = taken[0] if taken else next(
            a for a in pipe.game.legal_actions(pipe.state, dict(pipe.positions)) if a.kind == "deploy").to_json()
        assert httpx.post(url + "/api/live/declare", json={"action": first}, headers=SAME_ORIGIN).status_code == 200
    (group,) = listed["groups"]
    assert group["kind"] == "choose_path" and len(group["actions"]) > 8 and all(a["action"]["unit"] for a in group["actions"])
    fold = page.locator("#declare-actions .declare-group[data-kind='choose_path'] details.declare-fold summary")
    fold.wait_for(timeout=20000)
    assert fold.text_content() == f"Show all {len(group['actions'])}, or click a unit on the table to see only its actions"


def test_a_declaration_ruled_during_a_reload_is_listed(server: tuple[str, Any], page: Any) -> None:
    """The events list was read before a declaration was ruled, and the page began to watch after the frame message
    that carried its verdicts (a reload at that moment): the page asks for the messages between the two, and lists
    the declaration all the same."""
    url, app = server
    live = app.state.runtime.live
    deadline = time.monotonic() + 60
    while live.status().status != "ended":
        assert time.monotonic() < deadline, live.status()
        time.sleep(0.1)
    stale = httpx.get(url + "/api/live/events", headers=SAME_ORIGIN).json()
    assert stale["sent"] == live.published
    listed = httpx.get(url + "/api/live/actions", headers=SAME_ORIGIN).json()
    action = listed["groups"][0]["actions"][0]["action"]
    answer = httpx.post(url + "/api/live/declare", json={"action": action}, headers=SAME_ORIGIN).json()
    number = next(v["declaration"] for v in answer["verdicts"] if v.get("event") == "declared")
    deadline = time.monotonic() + 20
    while not any(e.get("declaration") == number for e in list(live.events)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # a second declaration goes out in a message of its own: the newest message holds no entry of the first
    listed = httpx.get(url + "/api/live/actions", headers=SAME_ORIGIN).json()
    second = httpx.post(url + "/api/live/declare", json={"action": listed["groups"][0]["actions"][0]["action"]},
                        headers=SAME_ORIGIN).json()
    assert any(v.get("event") == "declared" for v in second["verdicts"]), second
    newest = max(v["declaration"] for v in second["verdicts"] if v.get("event") == "declared")
    while not any(e.get("declaration") == newest for e in list(live.events)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    page.route("**/api/live/events*", lambda route: route.fulfill(status=200, content_type="application/json",
                                                                 body=json.dumps(stale)))
    page.goto(url + "/")
    page.wait_for_function(f"document.querySelector('#events li[data-declaration=\"{number}\"]') !== null",
                           timeout=20000)


@pytest.fixture(scope="module")
def magni_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """The Magni sample's first frames, without its declarations: the game waits in its lead phase, whose 100
    actions (who leads the fight for the centre) name no unit."""
    root = tmp_path_factory.mktemp("browser-declare-magni")
    d = _copy_sample(root / "magni", frames=4, sample=SAMPLES_DIR / "magni_placement")
    manifest = json.loads((d / "manifest.json").read_text())
    del manifest["declarations"]
    (d / "manifest.json").write_text(json.dumps(manifest))
    with running_server(session_settings(d, root, tmp_path_factory.mktemp("setup"))) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


def test_a_folded_group_of_no_units_actions_offers_no_unit_click(magni_server: tuple[str, Any], page: Any) -> None:
    url, _app = magni_server
    listed = httpx.get(url + "/api/live/actions", headers=SAME_ORIGIN).json()
    (group,) = listed["groups"]
    assert group["kind"] == "lead" and len(group["actions"]) == 100 == listed["total"] == listed["legal"]
    assert all(a["action"]["unit"] is None for a in group["actions"])
    page.goto(url + "/")
    fold = page.locator("#declare-actions .declare-group[data-kind='lead'] details.declare-fold summary")
    fold.wait_for(timeout=20000)
    assert fold.text_content() == "Show all 100"
    assert page.text_content("#declare-msg") == ""  # all 100 listed: none left out
    assert page.text_content("#declare-actions h4") == "Lead Units: the fight for the center (100)"
