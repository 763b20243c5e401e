"""A whole game of Valyr, from the first round to the last player standing, in real Chromium on rendered frames.

The test is the phone camera (tests/whole_game.py): an empty 30" x 22" table is calibrated from its frames, the
game is set up on /setup (the example armies, appraised 45 and 35 against the agreed 50; every tag on a topper
above its figure), the renderer stands the four figures on the table, and two rounds are played from the page:
- round 1 is started with the Declare button: blue, appraised lowest, holds the priority token;
- blue's Scout 20 sprints 6.4" to the Shieldbearer (the renderer carries it; the camera's move is ruled) and
  attacks it, its dice typed on the dice panel (15 and 4: with armor 3 one is on target, dodge 1 cancels it);
- red's Shieldbearer 10 strikes back twice in melee (4 d20 each, 4 on target less the Scout's dodge 2: 2 hits
  each, 4 distress against health 4); blue's Mender 21 tries to Mend the Scout, 10.75" away (refused: its reach
  is 3"), and ends its turn; red's Archer 11 shoots the Mender
  twice at 8.7" (2 hits each: 4 distress against health 5);
- round 2: the token passes right to red; the Archer's third volley defeats the Mender (6 distress), the Scout
  ends its turn, and the Shieldbearer's next blow defeats the Scout (6 distress): blue has nobody standing, red
  wins. Each defeated figure is taken off the table.
The page's game panel (headline, score rows, winner banner) is checked against the rules' own `Game.panel` and
those numbers, and the battle report's headline names the winner. The final page is saved to
/tmp/whole-game-valyr-end.png.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM
from tests.chromium import checked_page, chromium
from tests.webui_server import SAME_ORIGIN
from tests.whole_game import (
    WholeGame,
    answer_dice,
    choose_game,
    declare,
    figure_on_topper,
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

BOARD = (30.0, 22.0)
SHOT = Path("/tmp/whole-game-valyr-end.png")
REPORT = Path("/tmp/whole-game-valyr-report.html")
OWNER = {10: "red", 11: "red", 20: "blue", 21: "blue"}
BASE_MM = {10: 32.0, 11: 32.0, 20: 25.0, 21: 32.0}
START = {10: (12.0, 10.0), 11: (10.0, 20.0), 20: (20.0, 10.0), 21: (20.0, 20.0)}
"""Where each figure stands: the Shieldbearer and the Scout 8" apart on y = 10, the Archer and the Mender 10"
apart on y = 20 (8.74" edge to edge: the Archer's 6-12" band), clear of the example's ruin and wall."""
SCOUT_TO = (13.6, 10.0)
"""The Scout's sprint: 6.4" (Sprint 8"), ending 0.48" from the Shieldbearer's base: in melee."""


def figure(tag: int, xy: tuple[float, float]) -> BasePlacement:
    return figure_on_topper(tag, xy, OWNER[tag], height_in=1.2 + 0.05 * (tag % 3), base_mm=BASE_MM[tag])


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WholeGame]:
    with whole_game_server(tmp_path_factory.mktemp("valyr"), BOARD) as g:
        yield g


@pytest.fixture(scope="module")
def page(game: WholeGame) -> Iterator[Any]:
    with chromium() as browser, checked_page(browser, viewport={"width": 1280, "height": 720}) as pg:
        yield pg


def test_a_whole_game_of_valyr_from_the_first_round_to_the_last_player_standing(game: WholeGame, page: Any) -> None:
    started = time.monotonic()
    url = game.url
    # ---- the new game on /setup: the example armies, toppers on every base
    choose_game(page, url, "valyr")
    page.fill("#board-w", "30")
    page.fill("#board-d", "22")
    page.select_option("#mount", "topper")
    page.click("#apply-mount")
    page.wait_for_function("document.getElementById('mount-msg').textContent.includes('4 units')", timeout=10000)
    saved = save_setup(page, game.setup_dir)
    assert saved["game"] == "valyr" and saved["appraisal_limit"] == 50
    assert {u["tag"]: (u["base_mm"], u["base_height_in"], u["tag_in"]) for u in saved["units"]} == {
        10: (32, 1.85, 0.7), 11: (32, 1.85, 0.7), 20: (25, 1.85, 0.7), 21: (32, 1.85, 0.7)}

    where = dict(START)

    def table() -> list[BasePlacement]:
        return [figure(t, xy) for t, xy in sorted(where.items())]

    game.show_until(table(), lambda: game.ruling("valyr") and set(game.pipeline.positions) == set(START), least=7)
    rules = game.pipeline.game
    for tag, (x, y) in START.items():
        p = game.pipeline.positions[tag]
        assert abs(p.x - x) < 0.05 and abs(p.y - y) < 0.05, (tag, p, (x, y))

    page.goto(url + "/")
    first = wait_panel(page, lambda p: p.headline.startswith("Before the first round"))
    assert first.to_do == ("Start the first round: armies are checked against the appraisal limit; blue has the "
                           "lowest appraisal and takes the priority token",), first
    assert first.winner is None and set(first.score) == {"red", "blue"}, first

    def attack(tag: int, target: int, faces: list[int], *words: str) -> None:
        name, other = rules_name(tag), rules_name(target)
        outcome, text = declare(page, "attack", f"{name} attacks {other}")
        assert outcome == "waiting", text
        verdict = answer_dice(page, [faces])
        for w in words:
            assert w in verdict, (w, verdict)

    def rules_name(tag: int) -> str:
        return str(game.state().unit(tag).name)

    def end_turn(tag: int) -> None:
        outcome, text = declare(page, "end_turn", f"end {rules_name(tag)}'s turn")
        assert outcome == "legal", text

    def take_off(tag: int) -> None:
        """A defeated figure leaves the table."""
        del where[tag]
        game.show_until(table(), lambda: True, least=3)

    # ---- round 1: blue holds the priority token
    outcome, text = declare(page, "start_round", "Start the first round")
    assert outcome == "legal" and "Round 1 begins" in text and "blue holds the priority token" in text, text
    assert game.state().to_play == "blue"
    where[20] = SCOUT_TO
    game.show_until(table(), lambda: game.state().active == 20)
    assert game.state().moves_made == 1
    attack(20, 10, [15, 4], "Scout 20 rolls 2 d20 [15, 4]; with Shieldbearer 10's armor 3 that is [18, 7], 1 below "
                            "skill 12 on target; dodge 1 leaves 0 hits.")
    end_turn(20)
    assert game.state().to_play == "red"
    attack(10, 20, [2, 3, 4, 5], "4 below skill 13 on target; dodge 2 leaves 2 hits.",
           "Scout 20 now has 2 distress against health 4.")
    attack(10, 20, [2, 3, 4, 5], "Scout 20 now has 4 distress against health 4.")
    assert game.state().to_play == "blue"
    # the players may try what the rules refuse and read why: the Mender's Mend reaches 3", the Scout is 10.75" away
    outcome, text = declare(page, "ability", "Mender 21 uses Mend on Scout 20")
    assert outcome == "illegal" and "beyond Mend's reach of 3\"." in text, text
    assert game.state().active is None and game.state().unit(20).distress == 4
    end_turn(21)
    attack(11, 21, [3, 5], "with Mender 21's armor 1 that is [4, 6], 2 below skill 15 on target; dodge 0 leaves 2 hits.")
    attack(11, 21, [3, 5], "Mender 21 now has 4 distress against health 5.")
    state = game.state()
    assert state.to_play is None and state.round == 1
    rules_mid = rules.panel(state, dict(game.pipeline.positions))
    mid = wait_panel(page, lambda p: p.headline.startswith("Round 1 is over"))
    assert mid.headline == sentence(rules_mid.headline) == "Round 1 is over · every card is exhausted · priority token: blue"
    assert mid.score == {s.side: s.words for s in rules_mid.score}
    assert mid.score["blue"] == "2 of 2 units standing, 8 distress on them; holds the priority token", mid.score

    # ---- round 2: the token passes right to red; the Mender and then the Scout are defeated
    outcome, text = declare(page, "start_round", "Start round 2")
    assert outcome == "legal" and "Round 2 begins" in text and "red holds the priority token" in text, text
    attack(11, 21, [1, 2], "Mender 21 now has 6 distress against health 5: it is defeated and leaves the table.")
    take_off(21)
    end_turn(11)
    end_turn(20)
    attack(10, 20, [1, 1, 1, 1], "Scout 20 now has 6 distress against health 4: it is defeated and leaves the table.",
           "Every other player is defeated: red wins.")
    take_off(20)

    state = game.state()
    assert rules.is_over(state) and state.winner == "red" and state.round == 2
    assert {u.tag: (u.distress, u.defeated) for u in state.units} == {10: (0, False), 11: (0, False), 20: (6, True),
                                                                        21: (6, True)}
    final = rules.panel(state, dict(game.pipeline.positions))
    assert final.over and final.winner == "Red wins: blue is defeated", final
    shown = wait_panel(page, lambda p: p.winner is not None)
    assert shown.winner == sentence(final.winner)
    assert shown.headline == sentence(final.headline) == "Game over after round 2 · red wins, the last player standing"
    assert shown.score == {s.side: s.words for s in final.score}
    assert shown.score == {"red": "2 of 2 units standing, 0 distress on them",
                           "blue": "0 of 2 units standing, 0 distress on them; defeated"}, shown.score
    page.wait_for_function("document.querySelectorAll('#declare-actions button').length === 0", timeout=10000)
    page.screenshot(path=str(SHOT), full_page=True)

    # ---- the battle report of the recording names the winner
    name = game.app.state.runtime.recording.name
    report = httpx.get(f"{url}/api/replay/{name}/report.html", headers=SAME_ORIGIN, timeout=120)
    assert report.status_code == 200, report.text[:300]
    REPORT.write_text(report.text)
    headline = re.search(r'<p class="headline( won)?">([^<]*)</p>', report.text)
    assert headline is not None and headline.group(1), report.text[:2000]
    assert html.unescape(headline.group(2)) == "Red wins: blue is defeated, round 2.", \
        headline.group(2)
    print(f"\nwhole game of Valyr: {time.monotonic() - started:.1f} s, {game.phone.seq} frames sent; "
          f"panel: {panel_on_page(page)}")
