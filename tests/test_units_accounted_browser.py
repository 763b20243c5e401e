"""The side panel accounts for every roster unit, in real headless Chromium on a rendered recording: a hand hovers
over Red 10 for 12 s (its tag covered), Blue 11 stands in view, Red 12 is never put down, and tag 14 stands on the
table in no roster. The live page and the replay page say "Red 10 not seen for N s: is its tag covered?" while the
hand is there (from 5 s on, by the frames' own clock) and drop it once the tag is seen again; Red 12 is listed
quietly as not on the table yet; the event log says tag 14 in words."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.web import CHROMIUM
from tests.chromium import checked_page, chromium
from tests.webui_server import running_server, session_settings

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

FPS = 2.0
STILL, COVERED, AFTER = 4, 24, 6
"""Frames: both units in view, then a hand over Red 10 (12 s at 2 frames a second), then the hand gone."""
SENTENCE = re.compile(r"^Red 10 not seen for (\d+) s: is its tag covered\?$")


def record_covered(directory: Path) -> Path:
    """Render and record the session (640 x 480, a 12" x 10" table, figures on 32 mm bases, tags on toppers)."""
    from vision.synth.render import camera_framing_board
    from vision.synth.samples import (
        BLUE,
        NO_GAME,
        RED,
        Pose,
        ScriptBuilder,
        SessionScript,
        miniature,
        mounts_roster,
        record_session,
    )

    board = (12.0, 10.0)
    looks = {10: miniature(RED), 11: miniature(BLUE), 12: miniature(RED)}
    b = ScriptBuilder({**looks, 14: miniature(BLUE)})
    b.at.update({10: Pose(3.0, 3.0), 11: Pose(9.0, 7.0), 14: Pose(9.0, 2.5)})  # 14: a tag in no roster
    b.hold(STILL)
    b.cover(3.0, 3.0, frames=COVERED, radius_in=1.0)
    b.hold(AFTER)
    script = SessionScript(name="covered", board=board, poses=(camera_framing_board(board, 20.0, 8.0, 0.0, (640, 480)),),
                           looks=b.looks, frames=tuple(b.frames), moves=(), quiet=tuple(b.quiet),
                           roster=mounts_roster("valknut", looks, {10: "red", 11: "blue", 12: "red"}), game=NO_GAME,
                           fps=FPS, seed=5)
    return record_session(script, directory, fsync=False)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    root = tmp_path_factory.mktemp("accounted-sessions")
    session = record_covered(root / "covered")
    settings = session_settings(session, root, tmp_path_factory.mktemp("setup"))
    with running_server(settings) as (url, app):
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with checked_page(browser, viewport={"width": 1300, "height": 900}) as pg:
        yield pg


def watch_panel(page: Any, seconds: float) -> list[tuple[int, list[str], str]]:
    """The side panel every 0.2 s for `seconds`: (frame shown, the warnings, the quiet line)."""
    out = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        out.append(page.evaluate("""() => [Number(window.tablesight.msg ? window.tablesight.msg.frame_index : -1),
            [...document.querySelectorAll('#unseen li')].map((li) => li.textContent),
            document.getElementById('not-yet').textContent]"""))
        if out[-1][0] >= STILL + COVERED + AFTER - 1:
            break
        time.sleep(0.2)
    return [(int(f), list(w), str(q)) for f, w, q in out]


def check_panel(seen: list[tuple[int, list[str], str]]) -> None:
    """While the hand is over Red 10 the sentence is there with its seconds; before 5 s and after it is gone."""
    said = [(f, w) for f, w, _ in seen if w]
    assert said, seen
    for frame, warnings in said:
        (text,) = warnings
        m = SENTENCE.match(text)
        assert m, text
        # Red 10 last seen at frame STILL - 1 (or a frame or two into the hand's arrival): N s by the frames' clock
        lost = (frame - (STILL - 1)) / FPS
        assert lost - 1.5 <= int(m.group(1)) <= lost, (frame, text)
        assert STILL - 1 + 5 * FPS <= frame < STILL + COVERED + 1
    assert any(f >= STILL + COVERED + 1 and not w for f, w, _ in seen), seen  # the tag seen again: no warning
    assert {q for f, _, q in seen if f >= 0} == {"Not seen on the table yet: Red 12."}


def test_the_live_page_says_which_unit_is_not_seen(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    app.state.runtime.live.wait_for_frame(20)
    page.goto(url + "/")
    page.wait_for_function("() => window.tablesight && window.tablesight.msg")
    seen = watch_panel(page, (STILL + COVERED + AFTER) / FPS + 10)
    assert seen[0][0] < STILL + COVERED - 2 * FPS, "the page opened too late: the hand was leaving"
    check_panel(seen)
    assert page.is_visible("#roll-call")
    # the event log and the camera's caption in words
    events = page.locator("#events li").all_text_contents()
    assert any(e.endswith("A tag 14 that is in no roster is on the table: add it to the roster, or take it away")
               for e in events), events
    assert not any("tag tag" in e or "unknown" in e for e in events), events
    caption = page.text_content("#status-line") or ""
    assert re.match(r"^\d+ units?, \d+ tags?\b", caption) and not re.search(r"\b1 (units|tags)\b", caption), caption
    assert page.text_content("#roster-info") == "Roster: 3 units for Valknut: Skirmish Game"


def test_the_event_log_says_each_kind_of_event_in_words(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/")
    page.wait_for_function("() => window.tablesight && window.tablesight.msg")
    said = page.evaluate("""async () => {
        const { describeEvent } = await import('/static/table_view.js');
        return [
            describeEvent({ type: "unknown_tag", frame: 3, tag: 14, at_in: [9, 2.5] }),
            describeEvent({ type: "duplicate_tag", frame: 3, tag: 11, at_in: [[9, 7], [2, 2]] }),
            describeEvent({ type: "duplicate_tag", frame: 3, tag: 15, at_in: [[9, 7], [2, 2]] }),
            describeEvent({ type: "camera_moved", frame: 3, anchor_shift_px: 12.34, residual_px: 0.4 }),
            describeEvent({ type: "verdict", outcome: "illegal", message: "Unit 11 is out of range." }),
            describeEvent({ type: "verdict", event: "declared", outcome: "legal", message: "Tag 10 may act." }),
            describeEvent({ type: "move", tag: 10, length_in: 3.2, pm_in: 0.02 }),
        ];
    }""")
    assert said == [
        "A tag 14 that is in no roster is on the table: add it to the roster, or take it away",
        "Two bases show tag 11 (Blue 11): give each base a tag of its own",
        "Two bases show tag 15: give each base a tag of its own",
        "The camera moved (the anchors shifted 12.3 px): its place was worked out again",
        "Illegal: Blue 11 is out of range.",
        "Declared, legal: Red 10 may act.",
        'Red 10 moved 3.20" ± 0.02"',
    ]


def test_the_replay_page_says_it_too(server: tuple[str, Any], page: Any) -> None:
    url, _app = server
    page.goto(url + "/replay/covered")
    page.wait_for_function("() => document.getElementById('play')")
    page.click("#play")
    seen = watch_panel(page, (STILL + COVERED + AFTER) / FPS + 10)
    check_panel(seen)
