"""A whole game of Vigtavl, from the placement of the ships to the awards after round 6, in real Chromium on
rendered camera frames.

The test is the phone camera (tests/whole_game.py): an empty 20" x 18" table is calibrated from its frames, the
game is set up on /setup (the two-player map of 1" hexes centred on the play area, the starting army of each
player, every tag on a topper above its piece), and the rule book's six rounds are played (Vigtavl has no shorter
game; the players simply end their turns early):
- rounds 1-2, placement: the renderer puts the twelve ships down one at a time on their sea hexes, red and blue
  in turn; the camera places each;
- round 3, build: each player's first infantry is put down on the land beside its freighter (the camera unloads
  it, 1 silver); red tries a castle on the infantry's hex (refused: occupancy 4 of 3), then builds an
  encampment and a fort beside it, blue an encampment (Build buttons, gold);
- round 4: red's Caravel 16 is carried one hex by the renderer (a move ruled from the camera) next to blue's
  Caravel 28;
- round 5, battle: Caravel 16 attacks Caravel 28 in close combat from the Declare list, the dice typed on the dice
  panel (5 against 2): Caravel 28 is sunk (red takes 1 Battle token) and taken off the table; red finishes the
  caravel, blue's retaliation is passed, and the turns are ended to the end of round 6;
- the end awards: Admiral (1 ship sunk) and Builder (2 developments to 1) go to red: red wins 7 victory tokens to 0.
The page's game panel (headline, score rows, winner banner) is checked against the rules' own `Game.panel`, and the
battle report's headline names the winner. The final page is saved to /tmp/whole-game-vigtavl-end.png.
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

BOARD = (20.0, 18.0)
SHOT = Path("/tmp/whole-game-vigtavl-end.png")
REPORT = Path("/tmp/whole-game-vigtavl-report.html")
PLACE: tuple[tuple[int, tuple[int, int]], ...] = (
    (19, (-3, 0)), (31, (3, 0)), (20, (-3, 2)), (32, (3, -2)), (16, (-1, 3)), (28, (1, 2)), (17, (-4, 1)),
    (29, (4, -1)), (18, (-5, 3)), (30, (2, -3)), (21, (-2, -1)), (33, (3, -1)),
)
"""The twelve ships in the order put down (red, blue, red ...), each on its sea hex: red's freighters 19 and 20 off
the west coast, blue's 31 and 32 off the east; red's Caravel 16 two hexes from blue's Caravel 28."""
OWNER = {t: "red" if t < 22 else "blue" for t in range(10, 34)}


def figure(tag: int, xy: tuple[float, float]) -> BasePlacement:
    """Piece `tag` on its 25 mm base at `xy`, its tag on a topper as the setup page's topper mount says."""
    return figure_on_topper(tag, xy, OWNER[tag], height_in=1.1 + 0.03 * (tag % 6))


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WholeGame]:
    with whole_game_server(tmp_path_factory.mktemp("vigtavl"), BOARD) as g:
        yield g


@pytest.fixture(scope="module")
def page(game: WholeGame) -> Iterator[Any]:
    with chromium() as browser, checked_page(browser, viewport={"width": 1280, "height": 720}) as pg:
        yield pg


def test_a_whole_game_of_vigtavl_from_the_placement_to_the_awards(game: WholeGame, page: Any) -> None:
    started = time.monotonic()
    url = game.url
    # ---- the new game on /setup: the two-player map centred on the table, toppers on every base
    choose_game(page, url, "vigtavl")
    assert page.input_value("#board-choice") == "vigtavl_2p"
    # the page proposes 1.45" hexes, what four 25 mm bases on one hex need; this game never stacks two pieces on a
    # hex, so the board file's own 1" hexes are kept (the players' choice, said under the size) and fit the table
    assert page.input_value("#hex-size") == "1.45"
    page.fill("#hex-size", "1")
    page.dispatch_event("#hex-size", "change")
    page.wait_for_function("document.getElementById('fit-note').textContent.includes('do not fit a 1\" hex')")
    page.select_option("#mount", "topper")
    page.click("#apply-mount")
    page.wait_for_function("document.getElementById('mount-msg').textContent.includes('24 units')", timeout=10000)
    saved = save_setup(page, game.setup_dir)
    assert saved["game"] == "vigtavl"
    assert {(u["base_mm"], u["base_height_in"], u["tag_in"]) for u in saved["units"]} == {(25, 1.85, 0.7)}
    layout = parse_layout(saved["board"]["layout"])
    assert layout.origin == (10.0, 9.0), layout
    game.show_until([], lambda: game.ruling("vigtavl"))
    rules = game.pipeline.game

    where: dict[int, Hex] = {}

    def table() -> list[BasePlacement]:
        out = []
        for tag, h in sorted(where.items()):
            x, y = layout.to_table(h)
            out.append(figure(tag, (float(x), float(y))))
        return out

    def hex_of(tag: int) -> Hex | None:
        return game.state().piece(tag).hex

    page.goto(url + "/")
    first = wait_panel(page, lambda p: p.headline.startswith("Placement"))
    assert first.headline == "Placement phase · round 1 of 6 · red places a ship", first
    assert first.winner is None and set(first.score) == {"red", "blue"}, first

    # ---- rounds 1-2: each ship put down on its sea hex, the players in turn; the camera places it
    frames = []
    for tag, (q, r) in PLACE:
        assert game.state().player == OWNER[tag], (tag, game.state().player)
        where[tag] = Hex(q, r)
        frames.append(game.show_until(table(), lambda t=tag: hex_of(t) is not None))  # type: ignore[misc]
        assert hex_of(tag) == Hex(q, r), (tag, hex_of(tag))
    state = game.state()
    assert (state.phase, state.round, state.player) == ("build", 3, "red")

    def unload(tag: int, to: tuple[int, int]) -> None:
        """The players put a knight from its freighter down on the land `to`: the camera unloads it."""
        where[tag] = Hex(*to)
        game.show_until(table(), lambda: game.state().piece(tag).aboard is None)
        assert hex_of(tag) == Hex(*to)

    def build(what: str) -> None:
        outcome, text = declare(page, "build", what)
        assert outcome == "legal", text

    def end_turn(player: str) -> None:
        """`player` ends the turn: the button that says so (a list drawn before the last turn ended says the last
        player's name, and the action itself names nobody)."""
        outcome, text = declare(page, "end_turn", f"{player.title()}: end the turn")
        assert outcome == "legal" and f"{player} ends the turn" in text, text

    # ---- round 3 (build): an infantry ashore each, red builds twice, blue once
    unload(10, (-2, 0))
    # the players may try what the rules refuse and read why: a castle (3) beside the infantry (1) on one hex
    outcome, text = declare(page, "build", "build a castle on hex [-2, 0]")
    assert outcome == "illegal" and "No castle on [-2, 0]: occupancy would be 4, more than 3." in text, text
    assert game.state().gold[0] == 6 and not game.state().developments
    build("build an encampment on hex [-2, 0]")
    build("build a fort on hex [-2, 1]")
    mid_rules = rules.panel(game.state(), {})
    mid = wait_panel(page, lambda p: "2 developments" in p.score.get("red", ""))
    assert mid.score == {s.side: s.words for s in mid_rules.score}, (mid, mid_rules)
    assert mid.score["red"] == "0 victory tokens; gold 3, silver 5; 0 prisoners held, 0 ships sunk, 2 developments"
    end_turn("red")
    unload(22, (2, 0))
    build("build an encampment on hex [2, 0]")
    end_turn("blue")
    # ---- round 4 (build): Caravel 16 sails one hex, beside Caravel 28
    assert (game.state().round, game.state().player) == (4, "red")
    where[16] = Hex(0, 3)
    game.show_until(table(), lambda: hex_of(16) == Hex(0, 3))
    end_turn("red")
    end_turn("blue")
    # ---- round 5 (battle): Caravel 16 sinks Caravel 28 in close combat
    assert (game.state().phase, game.state().round, game.state().player) == ("battle", 5, "red")
    outcome, text = declare(page, "attack", "Caravel 16 attacks Caravel 28 in close combat")
    assert outcome == "waiting", text
    verdict = answer_dice(page, [[5], [2]])
    assert "Close combat: 1 die against 1; highest 5 v 2: the attacker wins." in verdict, verdict
    assert "Take Caravel 28 off the table to red's ship graveyard." in verdict, verdict
    assert game.state().piece(28).sunk_by == "red"
    del where[28]
    game.show_until(table(), lambda: True, least=3)
    outcome, text = declare(page, "finish", "finish the active unit's activation")
    assert outcome == "legal" and "blue may retaliate with 1 silver and one unit." in text, text
    outcome, text = declare(page, "end_retaliation", "end the retaliation")
    assert outcome == "legal", text
    for player in ("red", "blue", "red", "blue"):  # rounds 5 and 6 end
        end_turn(player)

    state = game.state()
    assert rules.is_over(state)
    final = rules.panel(state, {})
    assert final.over and final.winner == "Red wins: 7 victory tokens to 0.", final
    shown = wait_panel(page, lambda p: p.winner is not None)
    assert shown.winner == sentence(final.winner)
    assert shown.headline == sentence(final.headline) == "Game over after round 6"
    assert shown.score == {s.side: s.words for s in final.score}
    assert shown.score["red"] == ("7 victory tokens (battle 1, admiral 3, builder 3); gold 0, silver 0; "
                                  "0 prisoners held, 1 ship sunk, 2 developments"), shown.score
    assert shown.score["blue"].startswith("0 victory tokens;"), shown.score
    page.wait_for_function("document.querySelectorAll('#declare-actions button').length === 0", timeout=10000)
    page.screenshot(path=str(SHOT), full_page=True)

    # ---- the battle report of the recording names the winner
    name = game.app.state.runtime.recording.name
    report = httpx.get(f"{url}/api/replay/{name}/report.html", headers=SAME_ORIGIN, timeout=120)
    assert report.status_code == 200, report.text[:300]
    REPORT.write_text(report.text)
    headline = re.search(r'<p class="headline( won)?">([^<]*)</p>', report.text)
    assert headline is not None and headline.group(1), report.text[:2000]
    assert html.unescape(headline.group(2)) == "Red wins: 7 victory tokens to 0, round 6.", headline.group(2)
    print(f"\nwhole game of Vigtavl: {time.monotonic() - started:.1f} s, frames per ship {frames}, "
          f"{game.phone.seq} frames sent; panel: {panel_on_page(page)}")
