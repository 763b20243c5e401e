"""A table with no frame coming (the bundled sample stopped under another game than its own, a camera-less table):
the camera sees no move, so a point clicked on the board offers the selected unit's move there; declared and legal,
the unit stands where the rules now have it (ruled, measured from and drawn there) until the camera sees it move;
Undo puts it back. A position correction after a hex game's declared move rules that move again to the hex under
the corrected point (it was sent as a point in inches, which a hex move refuses). Real server, real sample frames."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM
from session.settings import Settings
from tests.chromium import CLIENT_AT_INCHES, checked_page, chromium
from tests.webui_server import SAME_ORIGIN, LocalClient, running_server
from webui.server import create_app

ROOT = Path(__file__).resolve().parent.parent


def _roster(game: str) -> dict[str, Any]:
    """The game's example army with its blue unit tag 20 and red unit tag 11 swapped: the sample's camera sees tags
    10 and 11 standing at its frame 12, so each side has a unit on the table."""
    roster = json.loads((ROOT / "examples" / "rosters" / f"{game}.json").read_text())
    by = {u["tag"]: u for u in roster["units"]}
    by[11]["tag"], by[20]["tag"] = 20, 11
    for u in roster["units"]:
        if "name" in u:
            u["name"] = f"{u['profile']} {u['tag']}"
    return roster


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Any]:
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions",
                        sample_idles=False)
    with LocalClient(create_app(settings)) as c:
        assert c.app.state.runtime.live.wait_for_frame(20)  # type: ignore[attr-defined]
        yield c


def _hold(c: Any, roster: dict[str, Any]) -> Any:
    """Save `roster`: the sample stops, at frame 12 or later, its figures settled for the new game's camera."""
    loop = c.app.state.runtime.live
    r = c.put("/api/roster", json=roster)
    assert r.status_code == 200, r.text
    deadline = time.monotonic() + 20
    while not (loop.status().status == "paused" and loop.status().frame_index >= 12
               and loop.pipeline.game.name == roster["game"] and loop.pipeline.frame == loop.status().frame_index
               and {10, 11} <= set(loop.pipeline.positions)):
        assert time.monotonic() < deadline, (loop.status(), loop.pipeline.positions)
        time.sleep(0.05)
    return loop


def _drawn(loop: Any, tag: int) -> tuple[float, float]:
    unit = next(u for u in json.loads(loop.broadcast.latest_frame.text)["units"] if u["tag"] == tag)
    return unit["x"], unit["y"]


def _declare(c: Any, action: dict[str, Any]) -> list[dict[str, Any]]:
    r = c.post("/api/live/declare", json={"action": action})
    assert r.status_code == 200, r.text
    return r.json()["verdicts"]


def test_a_move_declared_on_a_still_table_moves_the_unit_until_undone(held: Any) -> None:
    loop = _hold(held, _roster("valyr"))
    pipe = loop.pipeline
    start = pipe.positions[11]
    # with a camera watching, a move is the camera's: the clicked point says so (checked on the rules' answer)
    assert [v["message"] for v in _declare(held, {"kind": "start_round"})][-1].startswith("Round 1 begins")
    to = (start.x + 3.0, start.y + 1.0)
    acts = held.get("/api/live/actions", params={"unit": 11, "at": f"{to[0]},{to[1]}"}).json()
    moves = [a for g in acts["groups"] if g["kind"] == "move" for a in g["actions"]]
    assert [a["label"] for a in moves] == [f'Blue: move Scout 11 to ({to[0]:.2f}, {to[1]:.2f}), {math.hypot(3, 1):.2f}"']
    said = _declare(held, moves[0]["action"])
    assert [v["outcome"] for v in said] == ["legal"] and said[0]["message"].startswith("Scout 11 moved 3.16\"")
    moved = pipe.positions[11]
    assert math.hypot(moved.x - to[0], moved.y - to[1]) < 0.01  # where the rules have it: measured from there
    assert math.dist(_drawn(loop, 11), to) < 0.01 and math.dist(_drawn(loop, 10), (pipe.positions[10].x,
                                                                                   pipe.positions[10].y)) < 0.01
    # the next move is measured from where it now stands: 2" on, not 5.1" from where the camera saw it
    again = (to[0] + 2.0, to[1])
    acts = held.get("/api/live/actions", params={"unit": 11, "at": f"{again[0]},{again[1]}"}).json()
    label = next(a["label"] for g in acts["groups"] if g["kind"] == "move" for a in g["actions"])
    assert label.endswith(', 2.00"'), label
    undone = _declare(held, {"kind": "undo"})
    assert undone[0]["message"].startswith("Undone: move Scout 11")
    back = pipe.positions[11]
    assert math.hypot(back.x - start.x, back.y - start.y) < 0.01 and math.dist(_drawn(loop, 11), (start.x, start.y)) < 0.01


def test_the_clicked_point_offers_no_move_while_frames_come(held: Any) -> None:
    """The sample playing its own game (Valknut): its figures' moves are the camera's to see."""
    loop = held.app.state.runtime.live
    assert loop.status().status == "ok"
    p = next(iter(loop.pipeline.positions.values()), None)
    if p is None:  # the first frames: nothing has settled yet
        deadline = time.monotonic() + 20
        while not loop.pipeline.positions:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        p = next(iter(loop.pipeline.positions.values()))
    acts = held.get("/api/live/actions", params={"unit": p.unit, "at": f"{p.x + 2},{p.y}"}).json()
    assert not any(g["kind"] in ("move", "disengage") for g in acts["groups"]), acts


def test_a_correction_after_a_declared_hex_move_rules_the_hex_under_it(held: Any) -> None:
    roster = _roster("hex_skirmish")
    loop = _hold(held, roster)
    pipe = loop.pipeline
    # blue 14, red 6 on the d20s (the request names red's roll first): blue acts first
    init = _declare(held, {"kind": "initiative", "params": {"rolls": [6, 14]}})
    assert any(v["message"] == "Round 1 initiative: red 6, blue 14; blue goes first, then red." for v in init), init
    assert [v["outcome"] for v in _declare(held, {"kind": "choose", "unit": 11})] == ["legal"]
    board = held.get("/api/live/board").json()
    cells = {tuple(c["hex"]): c for c in board["cells"]}
    here, first, second = cells[(0, 0)], cells[(1, 0)], cells[(1, -1)]  # [1, 0] and [1, -1] are [0, 0]'s neighbours
    # the sample's figure stands off this board: the players put it on hex [0, 0] first (nothing to rule again)
    put = _declare(held, {"kind": "correct", "unit": 11, "params": {"at_in": list(_centre(here)), "by": "blue", "reason": "the figure stands there"}})
    assert [v["rule"] for v in put] == ["tablesight.correct"]
    acts = held.get("/api/live/actions", params={"unit": 11, "at": "{},{}".format(*_centre(first))}).json()
    move = next(a["action"] for g in acts["groups"] if g["kind"] == "move" for a in g["actions"])
    assert move["params"]["to"] == first["hex"]
    said = _declare(held, move)
    assert said[0]["outcome"] == "legal" and said[0]["message"].startswith("Hawk Rider moves 1 hex for"), said
    assert math.dist((pipe.positions[11].x, pipe.positions[11].y), _centre(first)) < 0.05
    assert math.dist(_drawn(loop, 11), _centre(first)) < 0.05
    # the players say it stands on the next hex: the move is ruled again, to that hex
    fixed = _declare(held, {"kind": "correct", "unit": 11, "params": {"at_in": list(_centre(second)), "by": "blue", "reason": "the figure stands there"}})
    assert fixed[0]["rule"] == "tablesight.correct" and "must be a hex" not in json.dumps(fixed)
    assert fixed[1]["outcome"] == "legal" and fixed[1]["message"].startswith("Hawk Rider moves"), fixed
    assert math.dist(_drawn(loop, 11), _centre(second)) < 0.05


def _centre(cell: dict[str, Any]) -> tuple[float, float]:
    """A grid cell's centre, inches: the mean of its six corners."""
    corners = cell["in"]
    return sum(p[0] for p in corners) / len(corners), sum(p[1] for p in corners) / len(corners)


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_a_player_moves_a_unit_on_the_page_of_a_still_table(tmp_path: Path) -> None:
    """Clicked on the board: the unit (its Declare list narrows to it at once, no frame coming), then a point (its
    move there is offered); declared, the board draws the unit there."""
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions",
                        sample_idles=False)
    with running_server(settings) as (url, app):
        loop = app.state.runtime.live
        assert loop.wait_for_frame(20)
        r = httpx.put(url + "/api/roster", json=_roster("valyr"), headers=SAME_ORIGIN, timeout=30)
        assert r.status_code == 200, r.text
        deadline = time.monotonic() + 20
        while not (loop.status().status == "paused" and loop.status().frame_index >= 12
                   and loop.pipeline.game.name == "valyr" and {10, 11} <= set(loop.pipeline.positions)):
            assert time.monotonic() < deadline, loop.status()
            time.sleep(0.05)
        start = loop.pipeline.positions[11]
        with chromium() as browser, checked_page(browser, viewport={"width": 1400, "height": 1000}) as page:
            page.goto(url + "/")
            page.wait_for_function("document.getElementById('banner').textContent.includes('shows a game of Valknut')",
                                   timeout=20000)
            page.click("#declare-actions button[data-kind='start_round']")
            page.wait_for_function("document.getElementById('declare-result').dataset.outcome === 'legal'", timeout=20000)
            page.wait_for_function("window.tablesight.msg && window.tablesight.msg.units.some((u) => u.tag === 11)")
            asked: list[str] = []
            page.on("request", lambda r: asked.append(r.url) if "/api/live/actions" in r.url else None)
            page.mouse.click(*page.evaluate(CLIENT_AT_INCHES, [start.x, start.y]))
            page.wait_for_function("document.getElementById('selected-text').textContent.startsWith('Selected Scout 11')")
            # the Declare list asks for the Scout's own actions at once: no frame comes to tell it
            deadline = time.monotonic() + 10
            while not any("/api/live/actions?unit=11" in u for u in asked):
                assert time.monotonic() < deadline, asked
                page.wait_for_timeout(50)
            to = (start.x + 3.0, start.y + 1.0)
            page.mouse.click(*page.evaluate(CLIENT_AT_INCHES, list(to)))
            move = "#declare-actions button[data-kind='move']"
            page.wait_for_selector(move, timeout=10000)
            assert str(page.text_content(move)).startswith("Blue: move Scout 11 to (")
            page.click(move)
            page.wait_for_function("document.getElementById('declare-result').textContent.includes('Scout 11 moved')",
                                   timeout=20000)
            assert page.get_attribute("#declare-result", "data-outcome") == "legal"
            assert "Scout 11 moved 3.16\"" in str(page.text_content("#declare-result"))
            page.wait_for_function(f"""() => {{ const u = window.tablesight.msg.units.find((v) => v.tag === 11);
                return Math.hypot(u.x - {to[0]}, u.y - {to[1]}) < 0.05; }}""", timeout=10000)
            # the clicked point's action was taken: the Declare list is the unit's own again, not "nothing there"
            page.wait_for_function("!document.querySelector('#declare-actions .declare-here')", timeout=10000)
            page.screenshot(path="/tmp/tablesight-declared-move.png")
            # Undo puts it back where the camera saw it; its message goes once the game moves on (it stayed for good)
            page.click("#gp-undo")
            page.wait_for_function("document.getElementById('gp-undo-msg').textContent.startsWith('Undone: move Scout 11')",
                                   timeout=10000)
            page.wait_for_function(f"""() => {{ const u = window.tablesight.msg.units.find((v) => v.tag === 11);
                return Math.hypot(u.x - {start.x}, u.y - {start.y}) < 0.05; }}""", timeout=10000)
            page.mouse.click(*page.evaluate(CLIENT_AT_INCHES, list(to)))
            page.wait_for_selector(move, timeout=10000)
            page.click(move)
            page.wait_for_function("document.getElementById('gp-undo-msg').textContent === ''", timeout=10000)
