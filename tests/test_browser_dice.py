"""The players' own dice typed on the live page's dice panel, in real headless Chromium (Debian's /usr/bin/chromium
driven by Playwright), for an attack in each game with dice: the attack is declared from the page, the panel
shows the roll the table waits for, the faces are tapped (or typed on the keyboard), "Rule it", and the verdict
uses them: the hits and hit points are worked out here from the typed faces and the units' own numbers.

One server for the module, on the rendered session of tests/webui_session.py (ten bases, paused on its first
frame); each game is set up from its example roster (retagged onto the session's bases where the game needs it).
Screenshots of the panel on a 390x844 phone and on a desktop go to /tmp/dice_panel_*.png (copied to docs/img/).
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from tests.chromium import checked_page, chromium
from tests.webui_server import SAME_ORIGIN, paused_at_start, running_server, session_settings
from tests.webui_session import make_session, roster_json

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

ROOT = Path(__file__).resolve().parents[1]
SHOTS = Path("/tmp")
"""Screenshots: /tmp/dice_panel_*.png (docs/img/ keeps a copy of each for the README)."""
DESKTOP = {"width": 1500, "height": 950}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """The rendered session (3 frames: the bases stand where they start) paused on its first frame."""
    root = tmp_path_factory.mktemp("browser-dice")
    make_session(root / "table1", frames=3)
    settings = session_settings(root / "table1", root, tmp_path_factory.mktemp("setup"), game="valknut")
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        paused_at_start(app.state.runtime.live)
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def _get(url: str, path: str) -> Any:
    r = httpx.get(url + path, headers=SAME_ORIGIN, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def _post(url: str, path: str, body: Any, method: str = "POST") -> Any:
    r = httpx.request(method, url + path, json=body, headers=SAME_ORIGIN, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def new_game(url: str, app: Any, roster: dict[str, Any]) -> dict[str, Any]:
    """A new game of the roster's game (saved as the players' roster, with "roll for us" off), once the loop has
    rebuilt its pipeline for it and its first actions stand still (two reads half a second apart agree)."""
    roster = {**roster, "roll_for_us": False}
    old = app.state.runtime.live.pipeline  # the game before: the loop replaces it (the same game's too)
    _post(url, "/api/roster?restart=true", roster, "PUT")
    deadline = time.monotonic() + 30
    while True:  # the paused frame is sought again through a fresh pipeline: the one that has ruled it
        loop = app.state.runtime.live
        pipe = loop.pipeline
        if pipe is not old and getattr(getattr(pipe, "game", None), "name", None) == roster["game"] \
                and pipe.state is not None and getattr(pipe, "frame", -1) == loop.status().frame_index:
            break
        assert time.monotonic() < deadline
        time.sleep(0.1)
    before = None
    while (now := _get(url, "/api/live/actions")) != before:
        assert time.monotonic() < deadline
        before = now
        time.sleep(0.5)
    assert _get(url, "/api/live/dice")["roll_for_us"] is False
    return now  # type: ignore[no-any-return]


def play_until(url: str, done: Any, pick: Any = None, limit: int = 80) -> dict[str, Any]:
    """Declare the first action offered (or `pick(actions)`'s) until `done(actions)`; a roll it waits for is
    answered with the die's highest face for red (or nobody's side) and 1 for blue, so that red wins a roll-off."""
    for _ in range(limit):
        listed = _get(url, "/api/live/actions")
        if done(listed):
            return listed  # type: ignore[no-any-return]
        action = pick(listed) if pick else listed["groups"][0]["actions"][0]["action"]
        deadline = time.monotonic() + 20
        while (r := httpx.post(url + "/api/live/declare", json={"action": action}, headers=SAME_ORIGIN,
                               timeout=30)).status_code == 503:  # a new game's first frame is still to come
            assert time.monotonic() < deadline, r.text
            time.sleep(0.2)
        assert r.status_code == 200, r.text
        for _ in range(10):
            pending = _get(url, "/api/live/dice")["pending"]
            if pending is None:
                break
            req = pending["request"]
            face = req["sides"] if req["side"] in (None, "red") else 1
            _post(url, "/api/live/dice/roll", {"faces": [face] * req["count"], "source": "typed"})
    raise AssertionError(f"never reached: {listed['status']}")


def labels(listed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["label"]: a["action"] for g in listed["groups"] for a in g["actions"]}


def declare_on_page(page: Any, url: str, kind: str, label: str) -> None:
    """Open the live page and click the Declare panel's button `label` (unfolding its group if it is folded)."""
    page.goto(url + "/")
    page.wait_for_function("window.tablesight && window.tablesight.msg", timeout=30000)  # the camera's frame came
    page.wait_for_function(f"document.querySelector(\"#declare-actions [data-kind='{kind}']\")", timeout=30000)
    button = page.locator("#declare-actions button").filter(has_text=re.compile(f"^{re.escape(label)}$"))
    fold = page.locator(f"#declare-actions .declare-group[data-kind='{kind}'] details.declare-fold")
    if fold.count() and not button.is_visible():
        fold.locator("summary").click()
    button.click()
    page.wait_for_function("document.getElementById('dice').dataset.state === 'pending'", timeout=20000)
    page.wait_for_function("document.getElementById('declare-result').dataset.outcome", timeout=20000)
    assert page.get_attribute("#declare-result", "data-outcome") == "waiting"


def pending_sentence(page: Any) -> str:
    return str(page.text_content("#dice-sentence"))


def tap_faces(page: Any, faces: list[int]) -> None:
    """Tap each face on the panel's face buttons, then "Rule it"."""
    for f in faces:
        page.click(f"#dice-pad button[data-face='{f}']")
    page.wait_for_function(f"document.getElementById('dice-typed').dataset.faces === '{','.join(map(str, faces))}'")
    assert page.text_content("#dice-rule") == "Rule it"
    page.click("#dice-rule")


def verdict_text(page: Any) -> str:
    page.wait_for_function("document.getElementById('dice').dataset.state === 'ruled'", timeout=20000)
    return str(page.text_content("#dice-verdict"))


# ---------------------------------------------------------------------------------------------------- Valknut

def test_valknut_attack_takes_the_typed_faces(server: tuple[str, Any], browser: Any) -> None:
    from rules.valknut.table import Table
    from rules.valknut.units import to_hit

    url, app = server
    new_game(url, app, roster_json("valknut"))
    # set up by the players (stockpiles, the roll-off [6, 2]: the first player, red, wins, deployment) ...
    listed = play_until(url, lambda a: a["status"]["phase"] == "activations",
                        pick=setting_up(app))
    label = "Red: red 13 attacks blue 22"
    assert label in labels(listed)
    pipe = app.state.runtime.live.pipeline
    table = Table.of(pipe.state, pipe.positions)
    att, dfn = table.stats(13), table.stats(22)
    need = to_hit(att.accuracy, dfn.evasion)
    hp, armor, bear = table.unit(22).hp, table.unit(22).armor, table.bear_level(22)
    with checked_page(browser, viewport=DESKTOP) as page:
        declare_on_page(page, url, "attack", label)
        said = pending_sentence(page)
        assert said.startswith("Roll 1 d6 for red 13's attack on blue 22; ") and f"{need}+ hits" in said, said
        assert page.text_content("#dice-for") == "Red rolls. For red 13. Rule: attack roll. Declared: red 13 attacks blue 22."
        page.reload()  # the panel's first state comes before the first frame: it still says who rolls
        page.wait_for_function("document.getElementById('dice-for').textContent === 'Red rolls. For red 13. Rule: "
                               "attack roll. Declared: red 13 attacks blue 22.'", timeout=20000)
        assert page.get_attribute("#dice-sentence", "data-side") == "red"  # its bar in red's colour
        assert page.locator("#dice-pad button").count() == 6
        box = page.locator("#dice-pad button").first.bounding_box()
        assert box["height"] >= 44, box  # a thumb's target
        # a face tapped by mistake is taken back by tapping its chip
        page.click("#dice-pad button[data-face='2']")
        page.click("#dice-typed button.dice-chip")
        assert page.get_attribute("#dice-typed", "data-faces") == ""
        first = page.get_attribute("#dice", "data-pending")
        hit_face = max(need, 5)
        tap_faces(page, [hit_face])
        damage = att.damage
        ignored = 0
        if bear >= 1:  # the defender's Path of the Bear: it rolls a die for each point of damage (its side's dice)
            page.wait_for_function(f"document.getElementById('dice').dataset.pending !== '{first}' "
                                   "&& document.getElementById('dice').dataset.state === 'pending'", timeout=20000)
            said = pending_sentence(page)
            assert said == f"Blue rolls {damage} d6 for blue 22's Path of the Bear against {damage} damage; each 6 ignores a point of damage.", said
            bear_faces = [6] + [1] * (damage - 1)
            page.keyboard.type("".join(map(str, bear_faces)))  # on a keyboard: digits, then Enter
            page.wait_for_function(f"document.getElementById('dice-typed').dataset.faces === '{','.join(map(str, bear_faces))}'")
            page.keyboard.press("Enter")
            ignored = bear_faces.count(6)
        text = verdict_text(page)
        dealt = damage - ignored
        to_hp = dealt - min(armor, dealt)
        assert f"needs {need}+, rolled {hit_face}: hit, {damage} damage" in text, text
        assert f"{hp - to_hp} HP left" in text, text
        assert page.locator("#dice-verdict .dice-roll").first.get_attribute("data-faces") == str(hit_face)
        assert app.state.runtime.live.pipeline.state.unit(22).hp == hp - to_hp
        shot(page, "desktop_verdict")
        if bear >= 1:
            # a correction after the verdict: the Bear's 6 was a 2, so nothing is ignored
            page.click("#dice-correct-open")
            page.locator("#dice-correct-typed .dice-roll").nth(1).locator("button").first.click()
            page.click("#dice-correct-pad button[data-face='2']")
            page.click("#dice-correct-send")
            page.wait_for_function("document.getElementById('dice-msg').textContent.startsWith('Corrected')", timeout=20000)
            # the verdicts the corrected faces replace are struck out of the list, and can no longer be overruled
            page.wait_for_selector("#events li.undone", timeout=20000)
            assert page.locator("#events li.undone button.overrule-open").count() == 0
            assert page.locator("#events li.undone[data-key*='|valknut.attack.sight|13|']").count() == 1
            assert page.locator("#events li:not(.undone)[data-key*='|valknut.attack.sight|13|']").count() == 1
            text = str(page.text_content("#dice-verdict"))
            to_hp = damage - min(armor, damage)
            assert f"{hp - to_hp} HP left" in text and "ignored" not in text, text
            assert app.state.runtime.live.pipeline.state.unit(22).hp == hp - to_hp
        # "Roll for us" from the panel: saved with the game
        assert not page.is_checked("#dice-roll-for-us")
        assert "Tablesight rolls only when this is ticked" in str(page.text_content("#dice-roll-note"))
        page.check("#dice-roll-for-us")
        page.wait_for_function("document.getElementById('dice-roll-note').textContent.includes('rolls every die')")
        assert _get(url, "/api/live/dice")["roll_for_us"] is True
        page.uncheck("#dice-roll-for-us")
        page.wait_for_function("document.getElementById('dice-roll-note').textContent.includes('only when')")
        assert _get(url, "/api/live/dice")["roll_for_us"] is False
        # the game moves on: the faces can no longer be corrected, and the panel says so instead of offering it
        _post(url, "/api/live/declare", {"action": {"kind": "end_activation", "unit": 13}})
        page.wait_for_selector("#dice-correct-refused", timeout=20000)
        assert page.locator("#dice-correct-open").count() == 0
        assert str(page.text_content("#dice-correct-refused")).startswith(
            "The game has moved on since red 13 attacks blue 22 was ruled at frame")


def test_undo_strikes_the_attacks_verdicts_and_the_same_attack_again_is_listed_anew(
        server: tuple[str, Any], browser: Any) -> None:
    """An attack ruled, taken back with the game panel's Undo and declared again at the same frame: the dice panel
    lets the undone verdict go, the list strikes the first attack's verdicts out (no overrule on them: they stand no
    more) and lists the second's, which can be overruled (the list showed only the first, with its overrule live)."""
    url, app = server
    new_game(url, app, roster_json("valknut"))
    play_until(url, lambda a: a["status"]["phase"] == "activations",
               pick=setting_up(app))
    sight = "li[data-key*='|verdict|undefined|valknut.attack.sight|13|']"  # legal: it can be overruled
    with checked_page(browser, viewport=DESKTOP) as page:
        declare_on_page(page, url, "attack", "Red: red 13 attacks blue 22")
        tap_faces(page, [1])
        assert "rolled 1: miss" in verdict_text(page)
        assert page.text_content("#dice .dice-counts") == " no hit"  # was " none counts"
        page.wait_for_selector(f"#events {sight} button.overrule-open", timeout=20000)
        page.click("#gp-undo")
        page.wait_for_function("document.getElementById('dice').dataset.state === 'idle'", timeout=20000)
        page.wait_for_function("document.getElementById('gp-undo-msg').textContent === "
                               "'Undone: red 13 attacks blue 22. The game goes on from before it.'", timeout=20000)
        page.wait_for_selector("#events li.undone", timeout=20000)
        assert page.locator(f"#events {sight}:not(.undone)").count() == 0  # struck out
        struck = page.locator("#events li.undone").count()
        assert struck >= 3 and page.locator("#events li.undone button.overrule-open").count() == 0  # roll, sight, ...
        assert page.locator("#events li.undone[data-key*='|dice.pending|13|']").count() == 1  # its wait for the dice
        page.wait_for_selector("#events li.undone[data-key*='|roll|']", timeout=20000)  # and the die rolled for it
        assert _get(url, "/api/live/dice")["last"] is None
        # after a reload the Undo stays above what it took back (the feed and the log bring them in either order)
        def log_late(route: Any) -> None:  # the log after the first frame message (which holds the Undo's verdict)
            time.sleep(1.5)
            route.continue_()

        for late in (False, True):
            if late:
                page.route("**/api/live/events*", log_late)
            else:  # what this tab kept for the dice panel, spoilt: the page starts without it, no script error
                page.evaluate("sessionStorage.setItem('tablesight.dice.reads', '{\"not\": \"pairs\"}');"
                              "sessionStorage.setItem('tablesight.dice.typed', 'not json')")
            page.reload()
            page.wait_for_selector(f"#events {sight}.undone", timeout=20000)
            page.wait_for_selector("#events li[data-key*='|tablesight.undo|']", timeout=20000)
            keys = page.evaluate("[...document.querySelectorAll('#events li')].map((li) => li.dataset.key)")
            undo = next(i for i, k in enumerate(keys) if "|tablesight.undo|" in k)
            assert all(undo < i for i, k in enumerate(keys) if "|valknut.attack.sight|13|" in k or "|roll|" in k), keys
            assert page.locator("#events li.undone[data-key*='|roll|']").count() == 1
        declare_on_page(page, url, "attack", "Red: red 13 attacks blue 22")  # the page opened afresh: the log again
        page.wait_for_selector("#events li.undone", timeout=20000)  # the log's undo strikes the first out again
        tap_faces(page, [1])
        assert "rolled 1: miss" in verdict_text(page)
        page.wait_for_selector(f"#events {sight}:not(.undone) button.overrule-open", timeout=20000)
        assert page.locator(f"#events {sight}:not(.undone)").count() == 1
        assert page.locator("#events li.undone").count() == struck


def test_a_dice_state_older_than_the_answered_roll_never_brings_it_back(server: tuple[str, Any], browser: Any) -> None:
    """The panel's poll (or a frame's message) can be answered before a roll is ruled and reach the page after the
    ruling's reply. Here the poll's reply is held until the attack roll is ruled, then let through: the page keeps
    the newer state (its "seq" is larger), so the answered roll never shows again and faces typed meanwhile for the
    next roll stay typed (CI once lost them so: the Bear roll's faces typed on the keyboard never showed)."""
    url, app = server
    new_game(url, app, roster_json("valknut"))
    listed = play_until(url, lambda a: a["status"]["phase"] == "activations",
                        pick=setting_up(app))
    label = next(x for x in labels(listed) if re.fullmatch(r"Red: red \d+ attacks blue \d+", x))
    held: list[tuple[Any, Any]] = []  # the first poll's route and the server's reply to it

    def hold(route: Any) -> None:
        if route.request.method == "GET" and not held:
            held.append((route, route.fetch()))  # the server's state now: the attack roll pending
        else:
            route.continue_()

    with checked_page(browser, viewport=DESKTOP) as page:
        declare_on_page(page, url, "attack", label)
        first = page.get_attribute("#dice", "data-pending")
        page.route("**/api/live/dice", hold)
        deadline = time.monotonic() + 20
        while not held:  # the panel polls every 2 s while no frame comes (the loop is paused)
            assert time.monotonic() < deadline, "the dice panel never asked for the dice state"
            page.wait_for_timeout(100)
        assert json.loads(held[0][1].text())["pending"]["id"] == int(first)
        page.click("#dice-pad button[data-face='6']")
        page.click("#dice-rule")
        page.wait_for_function(f"document.getElementById('dice').dataset.pending !== '{first}'", timeout=20000)
        page.evaluate("""() => { window.shownPending = [];  // each pending id shown from now on
            new MutationObserver(() => window.shownPending.push(document.getElementById('dice').dataset.pending))
              .observe(document.getElementById('dice'), { attributes: true, attributeFilter: ['data-pending'] }); }""")
        after = _get(url, "/api/live/dice")["pending"]
        if after is not None:  # the Bear's roll: one face typed before the old state arrives
            page.keyboard.type("1")
            page.wait_for_function("document.getElementById('dice-typed').dataset.faces === '1'")
        for route, reply in held:
            route.fulfill(response=reply)
        page.wait_for_timeout(700)  # the old reply is read and dropped (or, before "seq", shown)
        assert first not in page.evaluate("window.shownPending"), page.evaluate("window.shownPending")
        assert page.get_attribute("#dice", "data-pending") == ("" if after is None else str(after["id"]))
        if after is not None:
            assert page.get_attribute("#dice-typed", "data-faces") == "1"
            page.click("#dice-cancel")
            page.wait_for_function("document.getElementById('dice').dataset.state !== 'pending'", timeout=20000)


def _camera_deploy(app: Any) -> dict[str, Any]:
    """A deployment as the camera would make it (Valknut's deploy is a camera kind, so the page offers none): the
    next unit to place, at a spot in its Drop Zone."""
    pipe = app.state.runtime.live.pipeline
    return next(a for a in pipe.game.legal_actions(pipe.state, dict(pipe.positions)) if a.kind == "deploy").to_json()


def setting_up(app: Any) -> Any:
    """Valknut set up as the players would: the first action offered, with the roll-off's faces; in deployment the
    camera's next deployment (the list offers only the sample's standing figures there, not all of them legal)."""
    return lambda a: (_camera_deploy(app) if a["status"]["phase"] == "deploy" or not a["groups"]
                      else _roll_off(a["groups"][0]["actions"][0]["action"]))


def _roll_off(action: dict[str, Any]) -> dict[str, Any]:
    if action["kind"] == "roll_off":
        return {**action, "params": {**action["params"], "rolls": [6, 2]}}
    return action


def shot(page: Any, name: str) -> None:
    page.locator("#dice").screenshot(path=str(SHOTS / f"dice_panel_{name}.png"))



# ---------------------------------------------------------------------------------------------------- Valyr

def retagged(game: str, tags: dict[int, int]) -> dict[str, Any]:
    """The game's example roster with some units moved onto other bases of the session (named for their tag)."""
    roster: dict[str, Any] = json.loads((ROOT / "examples" / "rosters" / f"{game}.json").read_text())
    for u in roster["units"]:
        if u["tag"] in tags:
            old = u["tag"]
            u["tag"] = tags[old]
            if "name" in u:
                u["name"] = str(u["name"]).replace(str(old), str(tags[old]))
    return roster


def test_valyr_attack_takes_the_typed_d20s_on_a_phone(server: tuple[str, Any], browser: Any) -> None:
    """Archer 14 (red, at (10, 19)) shoots Mender 24 (blue, at (21, 19)), 9.8" edge to edge: the 6"-12" band
    (strength 2, skill 14 + Keen Eye's 1); the Mender's armor 1 adds to each die, dodge 0."""
    url, app = server
    roster = retagged("valyr", {11: 14, 21: 24})
    cards = {c["Identity"]["Name"]: c for c in roster["cards"]}
    strength, skill = (int(x) for x in cards["Archer"]["Combat"]["Attack"].split("-"))
    skill += cards["Archer"]["Abilities"]["Keen Eye"]["Hook"]["skill"]
    armor, dodge = (int(x) for x in cards["Mender"]["Combat"]["Defense"].split("-"))
    health = cards["Mender"]["Combat"]["Health"]
    new_game(url, app, roster)
    label = "Red: Archer 14 attacks Mender 24"
    play_until(url, lambda a: label in labels(a))
    faces = [skill - armor - 1, skill - armor]  # the first is on target, the second just misses
    hits = sum(1 for f in faces if f + armor < skill) - dodge
    with checked_page(browser, **PHONE) as page:
        declare_on_page(page, url, "attack", label)
        said = pending_sentence(page)
        assert said == (f"Roll {strength} d20 for Archer 14's attack on Mender 24; each below {skill} after Mender "
                        f"24's +{armor} armor is on target."), said
        assert page.locator("#dice-pad button").count() == 20
        # the face buttons are a 5 x 4 grid a thumb can hit, on a sheet at the bottom of the phone's screen
        boxes = [page.locator(f"#dice-pad button[data-face='{f}']").bounding_box() for f in (1, 5, 6, 20)]
        assert all(b["height"] >= 44 and b["width"] >= 44 for b in boxes), boxes
        assert boxes[0]["y"] == boxes[1]["y"] < boxes[2]["y"] and boxes[2]["x"] == boxes[0]["x"]
        sheet = page.locator("#dice").bounding_box()
        assert sheet["y"] + sheet["height"] == pytest.approx(844, abs=1) and sheet["width"] == 390, sheet
        for f in faces:
            page.tap(f"#dice-pad button[data-face='{f}']")
        page.wait_for_function(f"document.getElementById('dice-typed').dataset.faces === '{','.join(map(str, faces))}'")
        # the count is right: no more faces can be typed
        assert page.locator("#dice-pad button[data-face='1']").is_disabled()
        page.screenshot(path=str(SHOTS / "dice_panel_phone.png"))
        page.tap("#dice-rule")
        text = verdict_text(page)
        assert text.startswith("Archer 14 attacks Mender 24 (dice typed in)"), text
        totals = [f + armor for f in faces]
        assert (f"Archer 14 rolls {strength} d20 [{faces[0]}, {faces[1]}]; with Mender 24's armor {armor} that is "
                f"[{totals[0]}, {totals[1]}], 1 below skill {skill} on target; dodge {dodge} leaves {hits} hit") in text, text
        assert f"Mender 24 now has {hits} distress against health {health}." in text, text
        # the die on target is marked: worked out from the roll's words and the typed faces
        chips = page.locator("#dice-verdict .dice-roll .dice-chip")
        assert [chips.nth(i).get_attribute("data-counts") for i in range(chips.count())] == ["on target", None]
        assert "1 on target" in str(page.text_content("#dice-verdict .dice-roll"))
        page.screenshot(path=str(SHOTS / "dice_panel_phone_verdict.png"))
        assert app.state.runtime.live.pipeline.state.unit(24).distress == hits
        # declared again, then cancelled: nothing is ruled. On a keyboard a "1" then a "4" is one die's 14.
        declare_on_page(page, url, "attack", label)
        page.keyboard.type("14")
        page.wait_for_function("document.getElementById('dice-typed').dataset.faces === '14'")
        page.keyboard.press("Backspace")
        page.wait_for_function("document.getElementById('dice-typed').dataset.faces === ''")
        page.keyboard.type("0")  # no face of a d20: said, nothing typed
        page.wait_for_function("document.getElementById('dice-msg').textContent === '0 is not a face of a d20: type 1 "
                               "to 20.'")
        assert page.get_attribute("#dice-typed", "data-faces") == ""
        page.tap("#dice-cancel")
        page.wait_for_function("document.getElementById('dice-msg').textContent.startsWith('The roll was cancelled')")
        assert _get(url, "/api/live/dice")["pending"] is None
        assert app.state.runtime.live.pipeline.state.unit(24).distress == hits


# ---------------------------------------------------------------------------------------------------- hex skirmish

HEX_BOARD = {"layout": {"size_in": 1.25, "orientation": "pointy", "origin": [15.5, 19.0], "rotation_deg": 0.0},
             "hexagon": 4}
"""Land hexes 1.25" centre to corner around (15.5", 19"): bases 14 (10", 19") and 24 (21", 19") stand in hexes 3
left and 3 right of the centre on its row (2.165" apart), 6 hexes apart: the Marsh Archer's range."""


def prefer(text: str, phase: str) -> Any:
    """Pick the first action whose label holds `text` in `phase`, else the first offered."""
    def pick(listed: dict[str, Any]) -> dict[str, Any]:
        found = [a for label, a in labels(listed).items() if text in label and listed["status"]["phase"] == phase]
        return found[0] if found else listed["groups"][0]["actions"][0]["action"]
    return pick


def test_hex_skirmish_attack_takes_the_typed_skulls_and_shields(server: tuple[str, Any], browser: Any) -> None:
    """The Marsh Archer (2 attack dice) shoots the Stone Giant (3 defense dice, Life 6): each 1-3 is a skull, each
    4-5 a shield, each unblocked skull a wound (rules/hex_skirmish/cards.py). Initiative: red 20, blue 1."""
    from rules.hex_skirmish.cards import SHIELD_FACES, SKULL_FACES

    url, app = server
    roster = {**retagged("hex_skirmish", {11: 14, 21: 24}), "board": HEX_BOARD}
    cards = {c["name"]: c for c in roster["cards"]}
    archer, giant = cards["Marsh Archer"], cards["Stone Giant"]
    new_game(url, app, roster)
    label = "Red: Marsh Archer 14 attacks Stone Giant 24"
    play_until(url, lambda a: label in labels(a), pick=prefer("Marsh Archer 14's army card", "choose"))
    attack, defense = [3, 5][: archer["attack"]], [4, 6, 1][: giant["defense"]]
    skulls = sum(1 for f in attack if f in SKULL_FACES)
    shields = sum(1 for f in defense if f in SHIELD_FACES)
    wounds = max(0, skulls - shields)
    with checked_page(browser, viewport=DESKTOP) as page:
        declare_on_page(page, url, "attack", label)
        assert pending_sentence(page) == (f"Roll {archer['attack']} d6 for Marsh Archer 14's attack on Stone Giant 24; "
                                          "each 1-3 is a skull.")
        first = page.get_attribute("#dice", "data-pending")
        tap_faces(page, attack)
        page.wait_for_function(f"document.getElementById('dice').dataset.pending !== '{first}' "
                               "&& document.getElementById('dice').dataset.state === 'pending'", timeout=20000)
        assert pending_sentence(page) == (
            f"Blue rolls {giant['defense']} d6 for Stone Giant 24's defense against Marsh Archer 14; each 4-5 is a "
            f"shield against the {skulls} skull{'s' if skulls != 1 else ''}."), pending_sentence(page)
        assert "Already rolled for it: " + " ".join(map(str, attack)) in str(page.text_content("#dice-for"))
        shot(page, "desktop_pending")
        # a face tapped before "Rule it" outlives a reload of the page (it was lost)
        page.click(f"#dice-pad button[data-face='{defense[0]}']")
        page.wait_for_function(f"document.getElementById('dice-typed').dataset.faces === '{defense[0]}'")
        page.reload()
        page.wait_for_function(f"document.getElementById('dice-typed').dataset.faces === '{defense[0]}'", timeout=20000)
        for f in defense[1:]:
            page.click(f"#dice-pad button[data-face='{f}']")
        page.wait_for_function(f"document.getElementById('dice-typed').dataset.faces === '{','.join(map(str, defense))}'")
        page.click("#dice-rule")
        text = verdict_text(page)
        assert text.startswith("Marsh Archer 14 attacks Stone Giant 24 (dice typed in)"), text
        said = lambda n, w: f"{n} {w}" + ("" if n == 1 else "s")  # noqa: E731
        assert (f"Marsh Archer 14 attacks Stone Giant 24 at 6 hexes: attack dice {attack}, {said(skulls, 'skull')}; "
                f"defense dice {defense}, {said(shields, 'shield')}; {said(wounds, 'wound')}.") in text, text
        rolls = page.locator("#dice-verdict .dice-roll")
        assert [rolls.nth(i).get_attribute("data-faces") for i in range(rolls.count())] == [
            ",".join(map(str, attack)), ",".join(map(str, defense))]
        assert f"{skulls} skull" in str(rolls.nth(0).text_content()) and f"{shields} shield" in str(rolls.nth(1).text_content())
    figure = app.state.runtime.live.pipeline.state.figure(24)
    assert figure.wounds == wounds and not figure.destroyed


# ---------------------------------------------------------------------------------------------------- Vigtavl

VIGTAVL_BOARD = {"layout": {"size_in": 6.35, "orientation": "pointy", "origin": [10.0, 19.0], "rotation_deg": 0.0},
                 "hexagon": 3, "default": {"terrain": "land"},
                 "cells": [{"hex": [-2, 2], "terrain": "sea"}, {"hex": [1, 2], "terrain": "sea"}]}
"""Large land hexes (6.35" centre to corner) with two sea hexes where the camera sees bases 10 and 20: each side's
caravel, placed on the sea by the camera; the rest is built by the players."""

VIGTAVL_BUILDS: list[dict[str, Any]] = [
    {"kind": "build", "unit": None, "params": {"kind": "encampment", "hex": [-1, 2]}},  # beside red's caravel
    {"kind": "build", "unit": None, "params": {"kind": "infantry", "hex": [0, 1], "tag": 14}},
    {"kind": "end_turn", "unit": None, "params": {}},
    {"kind": "build", "unit": None, "params": {"kind": "encampment", "hex": [1, 1]}},  # beside blue's caravel
    {"kind": "build", "unit": None, "params": {"kind": "infantry", "hex": [1, 0], "tag": 24}},  # next to red's 14
]
"""The build phase: each side an encampment (a development: what holds prisoners) and an infantry beside it, the
two infantry in neighbouring hexes."""


def test_vigtavl_close_combat_takes_the_typed_faces_and_a_tie_is_rolled_again(
        server: tuple[str, Any], browser: Any) -> None:
    """Infantry 14 (red) attacks Infantry 24 (blue) in the next hex: each rolls dice equal to its cost; the highest
    dice are compared, a tie is rolled again by both (rules/vigtavl/combat.py); the loser is captured."""
    from rules.vigtavl.units import STATS

    url, app = server
    roster = json.loads((ROOT / "examples" / "rosters" / "vigtavl.json").read_text())
    roster["units"] = [{"tag": tag, "profile": "caravel", "owner": side, "base_mm": 25, "base_height_in": 1.85,
                        "tag_in": 0.7} for tag, side in ((10, "red"), (20, "blue"))]
    roster["board"] = VIGTAVL_BOARD
    new_game(url, app, roster)
    builds = list(VIGTAVL_BUILDS)

    def pick(listed: dict[str, Any]) -> dict[str, Any]:
        if listed["status"]["phase"] == "build" and builds:
            return builds.pop(0)
        return listed["groups"][0]["actions"][0]["action"]  # the camera's ships placed, then the turns ended

    label = "Infantry 14 attacks infantry 24 in close combat"  # units built in the game, named as the rules name them
    play_until(url, lambda a: a["status"]["phase"] == "battle" and label in labels(a), pick=pick)
    dice = STATS["infantry"].cost
    tie, attack, defence = [3] * dice, [5] + [1] * (dice - 1), [2] * dice
    with checked_page(browser, viewport=DESKTOP) as page:
        declare_on_page(page, url, "attack", label)
        reads = "highest die against {}'s highest wins, a tie is re-rolled."
        assert pending_sentence(page) == f"Roll {dice} d6 for Infantry 14's attack on Infantry 24; " + reads.format("blue")
        asked = [page.get_attribute("#dice", "data-pending")]

        def answer(faces: list[int]) -> None:
            tap_faces(page, faces)
            page.wait_for_function(
                f"(() => {{ const d = document.getElementById('dice'); return d.dataset.pending !== '{asked[-1]}' "
                "&& (d.dataset.state !== 'pending' || d.querySelector('#dice-typed').dataset.faces === ''); })()",
                timeout=20000)
            asked.append(page.get_attribute("#dice", "data-pending"))

        answer(tie)
        assert pending_sentence(page) == (f"Blue rolls {dice} d6 for Infantry 24's defence against Infantry 14; "
                                          + reads.format("red"))
        answer(tie)  # a tie: both roll again, the attacker first
        said = pending_sentence(page)
        assert said.startswith(f"Roll {dice} d6 for Infantry 14's attack on Infantry 24"), said
        assert f"Already rolled for it: {' '.join(map(str, tie + tie))}." in str(page.text_content("#dice-for"))
        answer(attack)
        assert pending_sentence(page).startswith(f"Blue rolls {dice} d6 for Infantry 24's defence")
        answer(defence)
        text = verdict_text(page)
        assert (f"Close combat: {dice} {'die' if dice == 1 else 'dice'} against {dice}; highest {max(attack)} v {max(defence)} after 1 tie "
                "re-rolled: the attacker wins.") in text, text
        assert "Infantry 24 is captured" in text, text
        rolls = page.locator("#dice-verdict .dice-roll")
        assert [rolls.nth(i).get_attribute("data-faces") for i in range(rolls.count())] == [
            ",".join(map(str, f)) for f in (tie, tie, attack, defence)]
    prisoner = app.state.runtime.live.pipeline.state.piece(24)
    assert prisoner.captor == "red"


# ---------------------------------------------------------------------------------------------------- the dice tray

def test_the_dice_tray_is_marked_on_the_calibrate_page(server: tuple[str, Any], browser: Any) -> None:
    """Four corners clicked on the camera's picture are saved as the tray (in the picture's pixels, beside the
    calibration), shown again after a reload, and forgotten."""
    url, app = server
    corners = [(600, 430), (900, 430), (900, 690), (600, 690)]
    with checked_page(browser, viewport=DESKTOP) as page:
        page.goto(url + "/calibrate")
        page.click("#tray-picture")
        page.wait_for_function("document.getElementById('tray-shot').width === 960", timeout=20000)
        assert page.is_disabled("#tray-save")
        page.locator("#tray-shot").scroll_into_view_if_needed()
        box = page.locator("#tray-shot").bounding_box()
        for x, y in corners:
            page.mouse.click(box["x"] + x * box["width"] / 960, box["y"] + y * box["height"] / 720)
        assert page.get_attribute("#tray-shot", "data-corners") == "4"
        page.click("#tray-undo")
        page.click("#tray-save")  # three corners are a tray too
        page.wait_for_function("document.getElementById('tray-msg').textContent.startsWith('Saved')", timeout=10000)
        tray = _get(url, "/api/live/dice")["tray"]
        assert tray["image_size"] == [960, 720]
        assert [[round(x), round(y)] for x, y in tray["polygon_px"]] == [list(c) for c in corners[:3]]
        assert app.state.runtime.live.dice.tray is not None
        page.reload()
        page.wait_for_function("document.getElementById('tray-shot').dataset.saved === '3'", timeout=20000)
        assert "A dice tray of 3 corners is saved" in str(page.text_content("#tray-msg"))
        page.click("#tray-clear")
        page.wait_for_function("document.getElementById('tray-shot').dataset.saved === '0'", timeout=10000)
        assert _get(url, "/api/live/dice")["tray"] is None


# ---------------------------------------------------------------------------------------------------- a new game

def test_roll_for_us_is_chosen_on_the_new_game_page(server: tuple[str, Any], browser: Any) -> None:
    """The new-game page's "Roll for us" is off at first; ticked, it is saved with the setup, and the live table
    rolls for the players from then on."""
    url, app = server
    with checked_page(browser, viewport=DESKTOP) as page:
        page.goto(url + "/setup")
        page.check("input[name=game][value=valknut]")
        page.wait_for_function("document.querySelector('.game-choice.on input').value === 'valknut'")
        assert not page.is_checked("#roll-for-us")
        page.check("#roll-for-us")
        page.click("#save")
        page.wait_for_function("/Saved|new game/.test(document.getElementById('save-msg').textContent)", timeout=20000)
        if page.locator("#restart-save").count():
            page.click("#restart-save")
            page.wait_for_function("document.getElementById('save-msg').textContent.startsWith('Saved')", timeout=20000)
    saved = json.loads((app.state.runtime.setup_dir / "roster.json").read_text())
    assert saved["game"] == "valknut" and saved["roll_for_us"] is True
    deadline = time.monotonic() + 20
    while not _get(url, "/api/live/dice")["roll_for_us"]:
        assert time.monotonic() < deadline, "the live table does not roll for the players"
        time.sleep(0.2)


# ---------------------------------------------------------------------------------------------------- the phone

TRAY_PHOTOS = ROOT / "tests" / "data" / "dice_tray_d6"
"""Real phone photos of a dice tray, each die's face labelled by the photographer (see its SOURCE.txt)."""
PHONE_PHOTO = "IMG_20191209_100541.jpg"
"""Two dice, top-down, 640 x 640."""
FACE_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _d6_reader_missing() -> bool:
    from vision.dice import d6

    return not all(Path(f).exists() for f in (d6.FINDER_FILE, d6.READER_FILE))


@pytest.mark.skipif(not (TRAY_PHOTOS / "photos" / PHONE_PHOTO).exists(), reason="the dice tray photos are not here")
def test_the_phone_as_a_dice_camera_answers_the_roll(server: tuple[str, Any], browser: Any, tmp_path: Path) -> None:
    """/camera?dice=1 on a phone whose (fake) camera films a real photo of a tray of two d6: the page says the roll
    that waits (the Marsh Archer's 2 d6), reads the dice by itself every second, draws them, and "Use these faces"
    answers the roll with them: the table moves on to the Stone Giant's defence."""
    import cv2

    from tests.test_browser_phone_camera import write_y4m

    if _d6_reader_missing():
        pytest.skip("the d6 reader's models are not built yet (vision/dice/models)")
    url, app = server
    labelled = json.loads((TRAY_PHOTOS / "labels.json").read_text())[PHONE_PHOTO]
    faces = sorted(FACE_WORDS[d["label"]] for d in labelled)
    photo = cv2.imread(str(TRAY_PHOTOS / "photos" / PHONE_PHOTO))
    assert photo is not None
    video = write_y4m(tmp_path / "tray.y4m", [photo] * 10, fps=10)
    new_game(url, app, {**retagged("hex_skirmish", {11: 14, 21: 24}), "board": HEX_BOARD})
    label = "Red: Marsh Archer 14 attacks Stone Giant 24"
    listed = play_until(url, lambda a: label in labels(a), pick=prefer("Marsh Archer 14's army card", "choose"))
    _post(url, "/api/live/declare", {"action": labels(listed)[label]})
    asked = _get(url, "/api/live/dice")["pending"]
    assert asked["request"]["count"] == len(faces) == 2 and asked["request"]["sides"] == 6
    # a second Chromium of the module's Playwright, its fake camera filming the photo
    phone = browser.browser_type.launch(executable_path=str(CHROMIUM), args=[
        *CHROMIUM_ARGS, "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
        f"--use-file-for-fake-video-capture={video}"])
    with contextlib.closing(phone), checked_page(phone, permissions=["camera"], **PHONE) as page:
        page.goto(url + "/camera?dice=1")
        page.wait_for_function("document.getElementById('dice-cam-roll').dataset.pending !== ''", timeout=20000)
        assert page.text_content("#dice-cam-roll") == ("Roll 2 d6 for Marsh Archer 14's attack on Stone Giant 24; "
                                                       "each 1-3 is a skull.")
        assert not page.is_visible("#start") and not page.is_visible("#lens-card")  # not the table's camera
        page.wait_for_function("document.getElementById('dice-cam-faces').dataset.faces.split(',').length === 2",
                               timeout=30000)
        read = [int(f) for f in str(page.get_attribute("#dice-cam-faces", "data-faces")).split(",")]
        assert sorted(read) == faces
        assert page.get_attribute("#outline", "data-dice") == "2"
        page.screenshot(path=str(SHOTS / "dice_camera_phone.png"))
        page.tap("#dice-cam-use")
        page.wait_for_function("document.getElementById('dice-cam-msg').textContent.startsWith('Taken')", timeout=20000)
    pending = _get(url, "/api/live/dice")["pending"]
    assert pending["request"]["clause"] == "hex_skirmish.attack.defense" and pending["request"]["given"] == read
    assert _post(url, "/api/live/dice/cancel", {})["pending"] is None


# ---------------------------------------------------------------------------------------------------- the table camera

TRAY_PX = [[560, 420], [900, 420], [900, 690], [560, 690]]
"""The dice tray marked on the session's 960x720 picture (its bounding box starts at (560, 420))."""


class TrayReads:
    """The table camera's dice reader as the live loop calls it (session/dice_watch.py: a crop round the tray's box,
    the dice in the crop's pixels): always the same two d6, a sure 2 on the left and a 5 read with confidence 0.5
    on the right, at (60, 120) and (240, 160) from the tray's top-left corner. The reader itself is vision.dice's
    (tests/test_dice_reader.py); here the page's part is shown."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, image: Any, sides: int, region: Any) -> list[Any]:
        from vision.dice.die import Die

        self.calls += 1
        x, y = region[0]  # the tray's top-left corner, in the crop's pixels
        return [Die(2, 6, (x + 60.0, y + 120.0), (x + 42.0, y + 102.0, x + 78.0, y + 138.0), 0.97),
                Die(5, 6, (x + 240.0, y + 160.0), (x + 222.0, y + 142.0, x + 258.0, y + 178.0), 0.5)]


def _attack_with_a_tray_marked(url: str, app: Any) -> str:
    """A hex skirmish game played on until Marsh Archer 14 may attack Stone Giant 24, the dice tray marked
    (TRAY_PX): the attack's declaration label."""
    new_game(url, app, {**retagged("hex_skirmish", {11: 14, 21: 24}), "board": HEX_BOARD})
    label = "Red: Marsh Archer 14 attacks Stone Giant 24"
    play_until(url, lambda a: label in labels(a), pick=prefer("Marsh Archer 14's army card", "choose"))
    _post(url, "/api/live/dice/tray", {"polygon_px": TRAY_PX}, "PUT")
    return label


def test_the_faces_the_table_camera_reads_are_drawn_on_the_tray_and_one_tap_sets_an_unsure_die(
        server: tuple[str, Any], browser: Any) -> None:
    """The live loop looks at the tray on each frame it plays while a roll waits: the recording is played on from
    its first frame (so this test comes last: the others rule on the paused first frame)."""
    from session.dice_watch import DiceWatch

    url, app = server
    live = app.state.runtime.live
    reader = TrayReads()
    live.dice = DiceWatch(read=reader, tray_file=live.dice.tray_file)
    label = _attack_with_a_tray_marked(url, app)
    with checked_page(browser, viewport=DESKTOP) as page:
        declare_on_page(page, url, "attack", label)
        live.play()  # frames 1 and 2: each one read in the tray
        page.wait_for_function("document.getElementById('dice-tray-picture').dataset.dice === '2' && "
                               "document.getElementById('dice-tray-picture').dataset.picture === 'yes'", timeout=20000)
        assert reader.calls > 0
        assert page.get_attribute("#dice-tray-picture", "data-low") == "1"  # the 5 is unsure: highlighted
        note = str(page.text_content("#dice-read-note"))
        assert note.startswith("The camera reads 2 dice: 2 5, still for ") and "One die is unsure: tap it" in note, note
        # the unsure die is tapped on the picture, and its true face chosen
        canvas = page.locator("#dice-tray-picture")
        canvas.scroll_into_view_if_needed()
        box = canvas.bounding_box()
        width = page.evaluate("document.getElementById('dice-tray-picture').width")
        x0, y0 = TRAY_PX[0][0] - 8, TRAY_PX[0][1] - 8  # the picture is the tray's box with 8 px round it
        k = width / (TRAY_PX[1][0] - TRAY_PX[0][0] + 16) * box["width"] / width  # screen px per image px
        page.mouse.click(box["x"] + (560 + 240 - x0) * k, box["y"] + (420 + 160 - y0) * k)
        page.wait_for_function("!document.getElementById('dice-face-pick').hidden")
        shot(page, "camera")
        page.click("#dice-face-pick button[data-face='3']")
        page.wait_for_function("document.getElementById('dice-use-camera').dataset.faces === '2,3'")
        assert page.get_attribute("#dice-tray-picture", "data-low") == ""
        page.click("#dice-use-camera")
        page.wait_for_function("document.getElementById('dice-sentence').textContent.startsWith('Blue rolls')",
                               timeout=20000)
    pending = _get(url, "/api/live/dice")["pending"]
    assert pending["request"]["clause"] == "hex_skirmish.attack.defense" and pending["request"]["given"] == [2, 3]
    assert _post(url, "/api/live/dice/cancel", {})["pending"] is None


class WallReads:
    """A table camera's reader that reads one sure 4 leaning on the tray's right wall: its 36 px box's centre 10 px
    past the wall (vision.dice.region.counts keeps such a die: out by less than half its size)."""

    def __call__(self, image: Any, sides: int, region: Any) -> list[Any]:
        from vision.dice.die import Die

        right, top = max(p[0] for p in region), min(p[1] for p in region)  # the tray's, in the crop's pixels
        x, y = right + 10.0, top + 100.0
        return [Die(4, 6, (x, y), (x - 18.0, y - 18.0, x + 18.0, y + 18.0), 0.97)]


def test_a_die_read_across_the_tray_wall_is_drawn_whole_on_the_tray_picture(
        server: tuple[str, Any], browser: Any) -> None:
    """The tray's picture spans the tray and every die read, so a die leaning on the wall is shown whole: the tray
    (340 x 270 px) and 8 px round it is 356 x 286 px, drawn 640 px wide and 514 high; with the die past its right
    wall (to x = 900 + 10 + 18) it is 384 x 286 px, drawn 640 x 477. Runs after the test above (it plays on)."""
    from session.dice_watch import DiceWatch

    url, app = server
    live = app.state.runtime.live
    paused_at_start(live)
    live.dice = DiceWatch(read=WallReads(), tray_file=live.dice.tray_file)
    label = _attack_with_a_tray_marked(url, app)
    with checked_page(browser, viewport=DESKTOP) as page:
        declare_on_page(page, url, "attack", label)
        live.play()
        page.wait_for_function("document.getElementById('dice-tray-picture').dataset.dice === '1' && "
                               "document.getElementById('dice-tray-picture').dataset.picture === 'yes'", timeout=20000)
        size = page.evaluate("[document.getElementById('dice-tray-picture').width, "
                             "document.getElementById('dice-tray-picture').height]")
        assert size == [640, 477], size
        shot(page, "camera_wall")
    assert _post(url, "/api/live/dice/cancel", {})["pending"] is None
