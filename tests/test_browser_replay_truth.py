"""The replay page shows the recording's own truth, in real headless Chromium on a server started as `tablesight
serve` starts it (issue 31, item 6): the live table watches the Magni sample on a loop, with a terrain of its own,
while the Valknut sample is replayed. The replay draws Valknut's terrain and names Valknut's units; after a seek back
its events list is a straight play's up to the frame; each pass of the looping sample starts its list afresh."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.web import CHROMIUM
from session.paths import SAMPLES_DIR
from session.settings import Settings
from tests.chromium import checked_page, chromium
from tests.webui_server import SAME_ORIGIN, running_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

VALKNUT = SAMPLES_DIR / "valknut_skirmish"
MAGNI = SAMPLES_DIR / "magni_placement"
LIVE_TERRAIN = {"pieces": [{"name": "live-only pond", "kind": ["impassable"],
                            "polygon": [[1.0, 1.0], [3.0, 1.0], [3.0, 2.0], [1.0, 2.0]], "height_in": 0.0}]}
LIST = "[...document.querySelectorAll('#events li')].map((li) => [Number(li.dataset.frame), li.textContent])"


def _listed(session: Path) -> list[dict[str, Any]]:
    """The transcript's (`tablesight replay --json`) entries the events list shows: every event and every ruling,
    legal ones too; the command's own score lines left out."""
    lines = (session / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] not in ("summary", "score")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    root = tmp_path_factory.mktemp("replay-truth")
    settings = Settings(source_kind="sample", source=str(MAGNI), setup_dir=root / "setup",
                        sessions_dir=root / "sessions")
    with running_server(settings) as (url, app):
        runtime = app.state.runtime
        assert runtime.live.wait_for_frame(30)
        runtime.set_terrain(LIVE_TERRAIN)
        runtime.live.set_speed(2.0)  # a pass of the 48-frame sample in 2.4 s
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


SLOW_PAGE = """(() => {
  // a slow phone on a weak Wi-Fi: each picture takes 150 ms to decode (the page skips the frames that come
  // meanwhile), and the server sends it only the newest frame: every third one is held back 100 ms and dropped
  // when a newer one comes meanwhile (as it does while the sample plays at 20 frames a second)
  const seen = window.slowFeed = { frames: 0, dropped: 0, decoded: 0 };
  const decode = window.createImageBitmap.bind(window);
  window.createImageBitmap = (blob) => {
    seen.decoded += 1;
    return new Promise((done) => setTimeout(() => done(decode(blob)), 150));
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    set onmessage(handle) {
      let held = null;
      super.onmessage = (ev) => {
        if (typeof ev.data !== "string") {
          if (held && !held.timer) {
            held.parts.push(ev);
            held.timer = setTimeout(() => { const h = held; held = null; h.parts.forEach(handle); }, 100);
          } else handle(ev);
          return;
        }
        if (JSON.parse(ev.data).type !== "frame") { handle(ev); return; }
        if (held) { clearTimeout(held.timer); held = null; seen.dropped += 1; }
        seen.frames += 1;
        if (seen.frames % 3 === 0) held = { parts: [ev], timer: null };
        else handle(ev);
      };
    }
  };
})();"""
"""What the page's script sees of the feed on a slow phone (injected before the page's own scripts)."""


@pytest.mark.parametrize("slow", [False, True], ids=["page", "slow-page"])
def test_each_pass_of_the_looping_sample_starts_its_events_afresh(server: tuple[str, Any], browser: Any,
                                                                   slow: bool) -> None:
    """The list holds each entry of this pass once, even on a page that skips frames (the skipped frames' entries
    are carried to the next one shown, or asked for)."""
    url, app = server
    with checked_page(browser, viewport={"width": 1400, "height": 900}) as pg:
        if slow:
            pg.add_init_script(SLOW_PAGE)
        pg.goto(url + "/")
        pg.wait_for_function("window.tablesight && window.tablesight.msg && window.tablesight.msg.run >= 0",
                             timeout=20000)
        first = pg.evaluate("window.tablesight.msg.run")
        # well into the next pass, past the frames where the last one's list had its declared lead and placements
        pg.wait_for_function(f"(() => {{ const m = window.tablesight.msg; return m.run > {first} && "
                             "m.frame_index >= 20 && m.frame_index <= 35; })()", timeout=20000)
        app.state.runtime.live.pause()
        pg.wait_for_function("window.tablesight.msg.status.status === 'paused'", timeout=10000)
        # the list's last batch (it is written a few times a second) and the skipped frames' entries
        pg.wait_for_function("window.tablesight.listSettled()", timeout=10000)
        at, run, shown = pg.evaluate(f"[window.tablesight.msg.frame_index, window.tablesight.msg.run, {LIST}]")
        log = pg.evaluate("fetch('/api/live/events').then((r) => r.json())")  # what a page opened now lists
        feed = pg.evaluate("window.slowFeed || null")
        app.state.runtime.live.play()
    if slow:  # both kinds of skipping happened
        assert feed["dropped"] > 0 and feed["decoded"] < feed["frames"] - feed["dropped"], feed
    assert shown and all(f <= at for f, _ in shown), (at, shown)
    assert log["run"] == run and all(e["frame"] <= at for e in log["events"]), log  # this pass's log, said so
    want = Counter(e["frame"] for e in _listed(MAGNI) if e["frame"] <= at)
    assert Counter(f for f, _ in shown) == want  # this pass's entries, each once, none of the last pass's
    assert any("Ember Warden" in text for _, text in shown)


def test_the_replay_shows_its_own_terrain_roster_and_the_events_up_to_a_frame_sought_back(
        server: tuple[str, Any], browser: Any) -> None:
    url, app = server
    app.state.runtime.live.pause()  # the live table rests: the replay has the machine
    base = url + "/api/replay/valknut_skirmish"
    own = json.loads((VALKNUT / "terrain.json").read_text(encoding="utf-8"))
    with checked_page(browser, viewport={"width": 1400, "height": 900}) as pg:
        pg.goto(url + "/replay/valknut_skirmish")
        pg.wait_for_function("window.tablesight && window.tablesight.terrain.length > 0", timeout=20000)
        assert pg.evaluate("window.tablesight.terrain.map((p) => p.name)") == [p["name"] for p in own["pieces"]]
        pg.wait_for_function("window.tablesight.namesKnown !== undefined", timeout=5000)
        pg.evaluate("window.tablesight.namesKnown")
        # no unit is on the table at frame 0: the names come from the recording's roster, not the live one's
        assert pg.evaluate("import('/static/table_view.js').then((m) => [m.nameOf(19), m.nameOf(10)])") == \
            ["Blue 5", "Red 1"]
        # a straight play from the first frame to the last, at 4x, while the timeline is still being scanned (the
        # frames it has not reached are listed from the feed until it has)
        assert pg.request.post(base + "/control", data={"action": "speed", "speed": 4}, headers=SAME_ORIGIN).ok
        assert pg.request.post(base + "/control", data={"action": "play"}, headers=SAME_ORIGIN).ok
        pg.wait_for_function("window.tablesight.msg && window.tablesight.msg.frame_index === 139", timeout=30000)
        pg.wait_for_function("/^\\d+ events?$/.test(document.getElementById('timeline-state').textContent)",
                             timeout=60000)
        pg.wait_for_timeout(400)
        straight = pg.evaluate(LIST)
        assert max(f for f, _ in straight) == 139 - 8  # the disengage at 131 is the last event
        # back to frame 73 (the illegal move of Blue 3), from the slider
        pg.evaluate("() => { const s = document.getElementById('seek'); s.value = '73'; "
                    "s.dispatchEvent(new Event('change')); }")
        pg.wait_for_function("window.tablesight.msg.frame_index === 73", timeout=30000)
        pg.wait_for_timeout(400)
        sought = pg.evaluate(LIST)
        assert pg.evaluate("window.tablesight.msg.frame_index") == 73
    assert sought == [x for x in straight if x[0] <= 73]
    assert Counter(f for f, _ in sought) == Counter(e["frame"] for e in _listed(VALKNUT) if e["frame"] <= 73)
    assert sought[0][1].startswith("#73 ") and "Blue 3" in sought[0][1] + sought[1][1]
    assert any("Red 1 takes step 1 down the Path of the Bear" in text for _, text in sought)
