"""A whole game of Rise of the Magni, from nothing to the full map, in real Chromium on rendered camera frames.

The test is the phone camera (tests/whole_game.py): an empty 24" x 18" table is calibrated from its frames, the
game is set up on /setup (the 19-cell board centred on the play area, every tag flat on its 66 mm tile), the Lead
units are picked with the live page's Declare button, and then the renderer puts the 17 other tiles down one by one,
each on the cell the plan says, in turn (red is Player 1); the first is put down astride two cells first (refused
on the page's event list), then pushed into its cell. Each tile is ruled from the camera alone: the rules' state
must hold it on its planned cell before the next is drawn. At the end the game panel on the page (headline,
score rows, winner banner) is the rules' own panel of that state, whose score is the plan's (counted by
rules/magni/scoring.py from the planned cells, not from the camera): blue wins 13 to 12. The battle report of the
recording names the winner in its headline. The final page is saved to /tmp/whole-game-magni-end.png.
"""

from __future__ import annotations

import functools
import html
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM
from rules.hexgrid import Hex, parse_layout
from rules.magni.game import EXAMPLE_TEAMS
from rules.magni.scoring import ABOVE, CENTRE, Hero, score
from tests.chromium import checked_page, chromium
from tests.webui_server import SAME_ORIGIN
from tests.whole_game import (
    SIDE_COLOURS,
    PanelOnPage,
    WholeGame,
    choose_game,
    declare,
    panel_on_page,
    save_setup,
    sentence,
    wait_panel,
    whole_game_server,
)
from vision.synth.render import BasePlacement

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

BOARD = (24.0, 18.0)
SHOT = Path("/tmp/whole-game-magni-end.png")
REPORT = Path("/tmp/whole-game-magni-report.html")
LEADS = (10, 20)
"""Ember Warden (red, CAV 6) and Tide Caller (blue, CAV 5): red takes the centre and is Player 1."""
PLAN: tuple[tuple[int, tuple[int, int]], ...] = (
    (12, (-1, 2)), (26, (0, 2)), (19, (-2, 0)), (21, (0, -2)), (15, (1, -1)), (27, (1, 1)), (14, (-2, 2)),
    (29, (1, -2)), (16, (-1, 1)), (24, (2, 0)), (11, (2, -2)), (23, (1, 0)), (13, (-2, 1)), (28, (-1, -1)),
    (18, (-1, 0)), (22, (0, 1)), (17, (2, -1)),
)
"""The 17 tiles after the Lead units, in the order put down (red, blue, red ...) and the cell each goes on."""
HEROES = {t["tag"]: Hero(t["tag"], t["name"], t["owner"], t["rating"], t["lav"], t["cav"], t["rav"])
          for t in EXAMPLE_TEAMS}


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WholeGame]:
    with whole_game_server(tmp_path_factory.mktemp("magni"), BOARD) as g:
        yield g


@pytest.fixture(scope="module")
def page(game: WholeGame) -> Iterator[Any]:
    with chromium() as browser, checked_page(browser, viewport={"width": 1400, "height": 1000}) as pg:
        yield pg


def tile(tag: int, xy: tuple[float, float], rng: random.Random) -> BasePlacement:
    """Hero `tag`'s tile put down by hand near `xy`: up to 0.04" off and 3 degrees turned, its tag flat on it as
    the setup page's flat mount says (1.35" black square, 0.125" up)."""
    dx, dy = rng.uniform(-0.04, 0.04), rng.uniform(-0.04, 0.04)
    return BasePlacement(tag, xy[0] + dx, xy[1] + dy, z_in=0.125, yaw_deg=rng.uniform(-3, 3), tag_in=1.35,
                         base_mm=66.0, base_height_in=0.125, colour=SIDE_COLOURS[HEROES[tag].owner])


def placed_at_least(game: WholeGame, n: int) -> bool:
    return len(game.state().placed) >= n


def headline_is(headline: str, shown: PanelOnPage) -> bool:
    return shown.headline == headline


def test_a_whole_game_of_magni_from_setup_to_the_winner(game: WholeGame, page: Any) -> None:
    started = time.monotonic()
    url = game.url
    # ---- the new game on /setup: the standard board centred on the calibrated play area, tags flat on tiles
    choose_game(page, url, "magni")
    assert page.input_value("#board-choice") == "magni_19" and page.input_value("#hex-size") == "1.5"
    assert page.input_value("#mount") == "flat"
    page.click("#apply-mount")
    page.wait_for_function("document.getElementById('mount-msg').textContent.includes('20 units')", timeout=10000)
    saved = save_setup(page, game.setup_dir)
    assert saved["game"] == "magni"
    assert saved["board"]["layout"] == {"size_in": 1.5, "orientation": "flat", "origin": [12, 9], "rotation_deg": 0}
    assert {(u["base_mm"], u["base_height_in"], u["tag_in"]) for u in saved["units"]} == {(66, 0.125, 1.35)}
    layout = parse_layout(saved["board"]["layout"])

    def cell_xy(q: int, r: int) -> tuple[float, float]:
        x, y = layout.to_table(Hex(q, r))
        return float(x), float(y)

    # the loop rebuilds its pipeline for Magni on the next frames of the empty table
    game.show_until([], lambda: game.ruling("magni"))
    magni = game.pipeline.game
    assert game.state().phase == "lead"

    # ---- the fight for the centre, declared on the live page
    page.goto(url + "/")
    first = wait_panel(page, lambda p: p.headline.startswith("The fight for the centre"))
    assert first.headline == "The fight for the centre · each player picks a Lead unit", first
    assert first.winner is None and set(first.score) == {"red", "blue"}
    outcome, text = declare(page, "lead", "Ember Warden (red) and Tide Caller (blue)")
    assert outcome == "legal", text
    assert "Ember Warden takes the centre (CAV 6 beats 5); red is Player 1. Tide Caller goes directly above." in text
    state = game.state()
    assert state.first == "red" and state.placed == ((10, CENTRE), (20, ABOVE))

    # ---- the players put the Lead tiles where the rules sent them; the camera sees them there: no news
    rng = random.Random(31)
    on_table = [tile(10, cell_xy(0, 0), rng), tile(20, cell_xy(0, -1), rng)]
    game.show_until(on_table, lambda: True, least=7)
    assert game.state().placed == ((10, CENTRE), (20, ABOVE))

    # ---- the first tile is put down astride two cells: refused on the page, nothing placed
    tag, (q, r) = PLAN[0]
    (ax, ay), (bx, by) = cell_xy(q, r), cell_xy(q - 1, r)
    astride = tile(tag, ((ax + bx) / 2, (ay + by) / 2), rng)
    game.show_until([*on_table, astride], lambda: "lies astride two cells" in str(page.text_content("#events")),
                    least=6)
    assert game.state().placed == ((10, CENTRE), (20, ABOVE))

    # ---- the 17 tiles, one at a time in turn (the first pushed into its cell), each ruled from the camera alone
    per_tile: list[int] = []
    for n, (tag, (q, r)) in enumerate(PLAN, start=3):
        assert game.state().turn() == HEROES[tag].owner
        on_table.append(tile(tag, cell_xy(q, r), rng))
        per_tile.append(game.show_until(on_table, functools.partial(placed_at_least, game, n)))
        assert game.state().placed[-1] == (tag, Hex(q, r)), (n, game.state().placed[-1])
        if n == 11:  # half way: the page's panel says how far the game is and whose turn
            rules_panel = magni.panel(game.state(), {})
            mid = wait_panel(page, functools.partial(headline_is, rules_panel.headline))
            assert mid.headline == "Placing tiles · 11 of 19 down · blue to place"
            assert mid.score == {s.side: s.words for s in rules_panel.score}
    state = game.state()
    assert state.phase == "over" and len(state.placed) == 19

    # ---- the full map: the page's panel is the rules' own, whose score is the plan's
    planned = {CENTRE: HEROES[10], ABOVE: HEROES[20], **{Hex(q, r): HEROES[t] for t, (q, r) in PLAN}}
    truth = score(planned, ("red", "blue"))
    assert truth.points == {"red": 12, "blue": 13} and truth.winner() == "blue"
    assert dict(magni.score(state)) == truth.points
    final = magni.panel(state, {})
    assert final.winner == "Blue wins: 13 points to 12" and final.over
    shown = wait_panel(page, lambda p: p.winner is not None)
    assert shown.winner == sentence(final.winner)
    assert shown.headline == sentence(final.headline) == "The map is full · blue wins"
    assert shown.score == {s.side: s.words for s in final.score}
    assert shown.score["blue"].startswith("13 points") and shown.score["red"].startswith("12 points")
    assert "Player 1" in shown.score["red"]
    # the Declare card has nothing left to offer once its list refreshes (every 2 s)
    page.wait_for_function("document.getElementById('declare-msg').textContent === 'The game is over.'",
                           timeout=10000)
    assert page.locator("#declare-actions button").count() == 0
    page.screenshot(path=str(SHOT), full_page=True)

    # ---- the battle report of the recording names the winner
    name = game.app.state.runtime.recording.name
    assert name, "nothing was recorded"
    report = httpx.get(f"{url}/api/replay/{name}/report.html", headers=SAME_ORIGIN, timeout=120)
    assert report.status_code == 200, report.text[:300]
    REPORT.write_text(report.text)
    headline = re.search(r'<p class="headline( won)?">([^<]*)</p>', report.text)
    assert headline is not None and headline.group(1), report.text[:2000]
    assert html.unescape(headline.group(2)).startswith("Blue wins: 13 points to 12"), headline.group(2)
    print(f"\nwhole game of Magni: {time.monotonic() - started:.1f} s, frames per tile {per_tile}, "
          f"{game.phone.seq} frames sent; panel: {panel_on_page(page)}")
