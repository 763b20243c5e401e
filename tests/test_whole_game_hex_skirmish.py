"""A whole game of Hex Skirmish, from nothing to the last figure standing, in real Chromium on rendered frames.

The test is the phone camera (tests/whole_game.py): an empty 18" x 14" table is calibrated from its frames, the
game is set up on /setup (the example board of 1" hexes centred on the play area, every tag on a topper above its
figure), and the renderer stands the four figures on their hexes. Then four rounds are played from the page: the
initiative and every attack are declared with the Declare buttons and their dice tapped on the dice panel, each
army card is chosen and each turn ended with a button, and the Stone Giant's two moves are made on the table (the
renderer carries it to another hex; the camera's move is ruled). A destroyed figure is taken off the table.

The dice are the test's: their skulls (1-3) and shields (4-5) give each attack's wounds, so the ground truth is
known before the game: the Hawk Rider (Life 3) takes 2 + 2 wounds, the Stone Giant (Life 6) 3 + 3, the Shield
Knight 1 (2 skulls against 1 shield), and red wins in round 4 with both figures standing. The page's game panel
(headline, score rows, winner banner) is checked against the rules' own panel and those numbers, and the battle
report's headline names the winner. The final page is saved to /tmp/whole-game-hex_skirmish-end.png.
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
from rules.hexgrid import Hex, parse_layout
from tests.chromium import checked_page, chromium
from tests.webui_server import SAME_ORIGIN
from tests.whole_game import (
    WholeGame,
    answer_dice,
    choose_game,
    declare,
    figure_on_topper,
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

BOARD = (18.0, 14.0)
SHOT = Path("/tmp/whole-game-hex_skirmish-end.png")
REPORT = Path("/tmp/whole-game-hex_skirmish-report.html")
OWNER = {10: "red", 11: "red", 20: "blue", 21: "blue"}
NAME = {10: "Shield Knight 10", 11: "Marsh Archer 11", 20: "Hawk Rider 20", 21: "Stone Giant 21"}
START = {10: (-2, -1), 11: (-3, 2), 20: (2, 1), 21: (3, -2)}
"""Where each figure stands at the start (flat ground: the example board's hills and water are left aside)."""
TUNIC = {10: (45.0, 45.0, 170.0), 11: (40.0, 60.0, 150.0), 20: (170.0, 80.0, 40.0), 21: (150.0, 95.0, 55.0)}
HEIGHT = {10: 1.25, 11: 1.2, 20: 1.3, 21: 1.35}
"""Each figure's height, inches: below its topper's 1.85" card."""


def figure(tag: int, xy: tuple[float, float]) -> BasePlacement:
    """Figure `tag` on its 25 mm base at `xy`, its tag on a topper as the setup page's topper mount says."""
    return figure_on_topper(tag, xy, OWNER[tag], HEIGHT[tag], TUNIC[tag])


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WholeGame]:
    with whole_game_server(tmp_path_factory.mktemp("hex-skirmish"), BOARD) as g:
        yield g


@pytest.fixture(scope="module")
def page(game: WholeGame) -> Iterator[Any]:
    with chromium() as browser, checked_page(browser, viewport={"width": 1400, "height": 1000}) as pg:
        yield pg


def test_a_whole_game_of_hex_skirmish_from_setup_to_the_last_figure(game: WholeGame, page: Any) -> None:
    started = time.monotonic()
    url = game.url
    # ---- the new game on /setup: the example board, toppers on every base
    choose_game(page, url, "hex_skirmish")
    assert page.input_value("#hex-size") == "1"
    page.select_option("#mount", "topper")
    page.click("#apply-mount")
    page.wait_for_function("document.getElementById('mount-msg').textContent.includes('4 units')", timeout=10000)
    saved = save_setup(page, game.setup_dir)
    assert saved["game"] == "hex_skirmish"
    assert {(u["base_mm"], u["base_height_in"], u["tag_in"]) for u in saved["units"]} == {(25, 1.85, 0.7)}
    layout = parse_layout(saved["board"]["layout"])
    assert layout.origin == (9.0, 7.0), layout  # centred on the 18" x 14" play area

    where = dict(START)

    def table() -> list[BasePlacement]:
        out = []
        for tag, (q, r) in sorted(where.items()):
            x, y = layout.to_table(Hex(q, r))
            out.append(figure(tag, (float(x), float(y))))
        return out

    def cells() -> dict[int, Hex]:
        """Each figure's cell as the rules' pipeline measured it."""
        return {t: layout.from_table(p.x, p.y)[0] for t, p in game.pipeline.positions.items()}

    # ---- the figures stand on their hexes: first seen, no news
    game.show_until(table(), lambda: game.ruling("hex_skirmish") and cells() == {t: Hex(*h) for t, h in START.items()},
                    least=7)
    rules = game.pipeline.game
    page.goto(url + "/")
    page.wait_for_function("window.tablesight && window.tablesight.msg", timeout=30000)
    first = wait_panel(page, lambda p: "initiative" in p.headline.lower())
    assert first.winner is None and set(first.score) == {"red", "blue"}, first

    def initiative(round_: int) -> None:
        outcome, _ = declare(page, "initiative", "nitiative")
        assert outcome == "waiting"
        verdict = answer_dice(page, [[20], [1]])
        assert f"Round {round_} initiative: red 20, blue 1; red goes first, then blue." in verdict, verdict
        assert game.state().order == ("red", "blue") and game.state().round == round_

    def choose(tag: int) -> None:
        outcome, text = declare(page, "choose", NAME[tag])
        assert outcome == "legal", text
        assert game.state().chosen == tag

    def attack(tag: int, target: int, attack_faces: list[int], defence_faces: list[int], words: str) -> None:
        outcome, text = declare(page, "attack", f"{NAME[tag]} attacks {NAME[target]}")
        assert outcome == "waiting", text
        verdict = answer_dice(page, [attack_faces, defence_faces])
        assert words in verdict, verdict

    def end_turn() -> None:
        outcome, text = declare(page, "end_turn", "end the turn")
        assert outcome in ("info", "legal"), (outcome, text)

    def carry(tag: int, to: tuple[int, int]) -> None:
        """The players carry figure `tag` to hex `to`; the camera's move is ruled."""
        where[tag] = to
        game.show_until(table(), lambda: game.state().moved and cells().get(tag) == Hex(*to), least=8)

    def take_off(tag: int) -> None:
        """A destroyed figure is taken off the table."""
        del where[tag]
        game.show_until(table(), lambda: True, least=3)

    # ---- round 1: the Archer shoots the Hawk Rider (2 skulls, no shield: 2 wounds); the Giant walks 2 hexes
    initiative(1)
    choose(11)
    attack(11, 20, [1, 1], [6, 6], "Marsh Archer 11 attacks Hawk Rider 20 at 5 hexes: attack dice [1, 1], 2 "
                                   "skulls; defense dice [6, 6], 0 shields; 2 wounds.")
    end_turn()
    choose(21)
    carry(21, (1, -2))
    end_turn()
    # ---- round 2: the Hawk Rider falls to 2 more wounds; the Giant closes on the Knight and misses
    initiative(2)
    choose(11)
    attack(11, 20, [1, 1], [6, 6], "Hawk Rider 20 is destroyed.")
    end_turn()
    take_off(20)
    mid = rules.panel(game.state(), dict(game.pipeline.positions))
    shown_mid = wait_panel(page, lambda p: p.score.get("blue", "").startswith("1 of 2 figures standing"))
    assert shown_mid.score == {s.side: s.words for s in mid.score}, (shown_mid, mid)
    # 3 of the Hawk Rider's 4 wounds count: at most its Life 3 (rules/hex_skirmish/game.py `_taken`)
    assert shown_mid.score["blue"] == "1 of 2 figures standing, 3 wounds taken" and shown_mid.winner is None
    assert shown_mid.units_title == "Units: 3 in play, 1 out of play"  # the game's count: the Hawk Rider is destroyed
    choose(21)
    carry(21, (-1, -1))
    attack(21, 10, [6, 6, 6, 6], [6, 6, 6, 6], "attack dice [6, 6, 6, 6], 0 skulls; defense dice [6, 6, 6, 6], 0 shields; 0 wounds.")
    end_turn()
    # ---- round 3: Knight and Giant trade blows (3 wounds on the Giant, 1 on the Knight)
    initiative(3)
    choose(10)
    attack(10, 21, [1, 1, 1], [6, 6, 6], "attack dice [1, 1, 1], 3 skulls; defense dice [6, 6, 6], 0 shields; 3 wounds.")
    end_turn()
    choose(21)
    attack(21, 10, [1, 1, 6, 6], [4, 6, 6, 6], "attack dice [1, 1, 6, 6], 2 skulls; defense dice [4, 6, 6, 6], 1 shield; 1 wound.")
    end_turn()
    # ---- round 4: the Knight's 3 more wounds destroy the Giant: red's figures alone stand
    initiative(4)
    choose(10)
    attack(10, 21, [1, 2, 3], [6, 6, 6], "Stone Giant 21 is destroyed.")
    take_off(21)

    state = game.state()
    assert rules.is_over(state)
    wounds = {f.tag: (f.wounds, f.destroyed) for f in state.figures}
    assert wounds == {10: (1, False), 11: (0, False), 20: (4, True), 21: (6, True)}, wounds
    final = rules.panel(state, dict(game.pipeline.positions))
    assert final.over and final.winner == "Red wins: the last figures standing", final
    shown = wait_panel(page, lambda p: p.winner is not None)
    assert shown.winner == sentence(final.winner)
    assert shown.headline == sentence(final.headline)
    assert shown.score == {s.side: s.words for s in final.score}
    assert shown.score["red"].startswith("2 of 2 figures standing") and shown.score["blue"].startswith("0 of 2"), \
        shown.score
    # the Declare card offers nothing once its list refreshes (every 2 s); it does not say the game is over: its
    # status line reads "phase: act · round 4 · red to act" (the route asks the state's phase, not `is_over`)
    page.wait_for_function("document.querySelectorAll('#declare-actions button').length === 0", timeout=10000)
    page.screenshot(path=str(SHOT), full_page=True)

    # ---- the battle report of the recording names the winner
    name = game.app.state.runtime.recording.name
    report = httpx.get(f"{url}/api/replay/{name}/report.html", headers=SAME_ORIGIN, timeout=120)
    assert report.status_code == 200, report.text[:300]
    REPORT.write_text(report.text)
    headline = re.search(r'<p class="headline( won)?">([^<]*)</p>', report.text)
    assert headline is not None and headline.group(1), report.text[:2000]
    assert html.unescape(headline.group(2)).startswith("Red wins: the last figures standing"), headline.group(2)
    print(f"\nwhole game of Hex Skirmish: {time.monotonic() - started:.1f} s, {game.phone.seq} frames sent")
