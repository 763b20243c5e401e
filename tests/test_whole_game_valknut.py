"""A whole game of Valknut, from the Runic Stockpiles to the winner, in real Chromium on rendered camera frames.

The test is the phone camera (tests/whole_game.py): the empty 30" x 22" Battlefield is calibrated from its frames,
the game is set up on /setup (the example army of 5 + 5 on 32 mm bases, every tag on a topper; our options
shortened as the book's empty "Winning" leaves them to us: a 2-turn limit and 1 Runestone to win), and then it is
played from the page and the table:
- the six Runic Stockpiles, the roll-off (its dice typed on the dice panel) and the two Drop Zones are declared
  with the Declare buttons (the stockpiles at the section centres the list offers: the page cannot click a point
  yet);
- each of the ten figures is put down by the renderer in its Drop Zone, the players alternating: the camera
  deploys it there;
- each turn every unit takes its Step down a Path from the Declare list;
- turn 1: Red 1 is carried 4.9" by the renderer to the Runic Stockpile of section 2 (a Move ruled from the camera)
  and picks one up; Blue 1 shoots Red 2 (to-hit 5 against 4+, 3 damage; Red 2's Path of the Bear dice 6, 2, 3
  ignore one point, its Armor 1 takes one, so 9 HP are left); Red 2 tries to pick up a Runestone 2.57" away and
  is refused; every other unit ends its activation;
- turn 2: with the Deer's second step Red 1 carries the Runestone at full Speed back into section 1, red's Drop
  Zone, and ends its activation there: 1 of 1 Runestones delivered, red wins.
The page's game panel (headline, score rows, a unit's row, winner banner) is checked against the rules' own
`Game.panel` and those numbers, and the battle report's headline names the winner. The final page is saved to
/tmp/whole-game-valknut-end.png.
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
SHOT = Path("/tmp/whole-game-valknut-end.png")
REPORT = Path("/tmp/whole-game-valknut-report.html")
NAME = {10: "Red 1", 11: "Red 2", 12: "Red 3", 13: "Red 4", 14: "Red 5",
        15: "Blue 1", 16: "Blue 2", 17: "Blue 3", 18: "Blue 4", 19: "Blue 5"}
OWNER = {t: "red" if t < 15 else "blue" for t in NAME}
DEPLOY = {10: (8.9, 5.5), 15: (22.0, 13.0), 11: (3.0, 3.0), 16: (26.0, 13.5), 12: (3.0, 8.0), 17: (23.0, 18.0),
          13: (6.0, 2.0), 18: (27.0, 19.0), 14: (6.0, 9.0), 19: (25.0, 16.0)}
"""Where each figure is put down, in the order the players alternate (red rolled higher): red's wholly within
section 1 (x 0-10, y 0-11), blue's within section 6 (x 20-30, y 11-22); a 32 mm base has a 0.63" radius."""
PATHS_TURN_1 = {10: "Deer", 11: "Bear", 12: "Raven", 13: "Wolf", 14: "Bear",
                15: "Wolf", 16: "Deer", 17: "Raven", 18: "Bear", 19: "Wolf"}
PATHS_TURN_2 = {10: "Deer", 11: "Bear", 12: "Bear", 13: "Bear", 14: "Bear",
                15: "Wolf", 16: "Wolf", 17: "Wolf", 18: "Wolf", 19: "Wolf"}
AT_STOCKPILE = (13.8, 5.5)
"""Red 1 beside section 2's Runic Stockpile (at the section's centre, 15, 5.5): 1.2" centre to centre, so the
stockpile is 0.57" from its base edge, within the 1" reach."""


def figure(tag: int, xy: tuple[float, float]) -> BasePlacement:
    """Figure `tag` on its 32 mm base at `xy`, its tag on a topper as the setup page's topper mount says."""
    return figure_on_topper(tag, xy, OWNER[tag], height_in=1.2 + 0.02 * (tag % 5), base_mm=32.0)


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WholeGame]:
    with whole_game_server(tmp_path_factory.mktemp("valknut"), BOARD) as g:
        yield g


@pytest.fixture(scope="module")
def page(game: WholeGame) -> Iterator[Any]:
    with chromium() as browser, checked_page(browser, viewport={"width": 1280, "height": 720}) as pg:
        yield pg


def test_a_whole_game_of_valknut_from_the_stockpiles_to_a_runestone_delivered(game: WholeGame, page: Any) -> None:
    started = time.monotonic()
    url = game.url
    # ---- the new game on /setup: the example army, toppers on every base, a 2-turn game to 1 Runestone
    choose_game(page, url, "valknut")
    assert page.input_value("#board-area") == "30x22"
    page.fill("#opt-options-turn_limit", "2")
    page.fill("#opt-options-target", "1")
    page.select_option("#mount", "topper")
    page.click("#apply-mount")
    page.wait_for_function("document.getElementById('mount-msg').textContent.includes('10 units')", timeout=10000)
    saved = save_setup(page, game.setup_dir)
    assert saved["game"] == "valknut" and saved["options"]["turn_limit"] == 2 and saved["options"]["target"] == 1
    assert {(u["base_mm"], u["base_height_in"], u["tag_in"]) for u in saved["units"]} == {(32, 1.85, 0.7)}
    game.show_until([], lambda: game.ruling("valknut") and game.state().options.target == 1)
    rules = game.pipeline.game

    page.goto(url + "/")
    first = wait_panel(page, lambda p: p.headline.startswith("Setup"))
    assert first.headline == "Setup · Runic Stockpiles · red places", first
    assert first.winner is None and first.score == {"red": "0 of 1 Runestones delivered, 0 kills",
                                                    "blue": "0 of 1 Runestones delivered, 0 kills"}, first

    # ---- setup: the Runic Stockpiles (red in the odd sections, blue in the even), the roll-off, the Drop Zones
    for at in ("(5.0, 5.5)", "(25.0, 5.5)", "(15.0, 16.5)", "(15.0, 5.5)", "(5.0, 16.5)", "(25.0, 16.5)"):
        outcome, text = declare(page, "place_stockpile", f"place a Runic Stockpile at {at}")
        assert outcome == "legal", text
    assert [(s.x, s.y, s.section, s.owner) for s in game.state().stockpiles] == [
        (5.0, 5.5, 1, "red"), (25.0, 5.5, 3, "red"), (15.0, 16.5, 5, "red"),
        (15.0, 5.5, 2, "blue"), (5.0, 16.5, 4, "blue"), (25.0, 16.5, 6, "blue")]
    outcome, text = declare(page, "roll_off", "oll off")
    assert outcome == "waiting", text
    verdict = answer_dice(page, [[6], [2]])
    assert "Roll-off: red rolled 6, blue rolled 2; red rolled higher." in verdict, verdict
    outcome, text = declare(page, "choose_drop_zone", "choose section 1 as Drop Zone")
    assert outcome == "legal", text
    outcome, text = declare(page, "choose_drop_zone", "choose section 6 as Drop Zone")
    assert outcome == "legal" and "blue takes section 6 as its Drop Zone: neither red's section 1 nor adjacent to it." in text, text
    assert game.state().drop_zones == (("red", 1), ("blue", 6)) and game.state().phase == "deploy"

    # ---- deployment: each figure put down in its Drop Zone, the players alternating; the camera deploys it
    where: dict[int, tuple[float, float]] = {}

    def table() -> list[BasePlacement]:
        return [figure(t, xy) for t, xy in sorted(where.items())]

    def seen_at(tag: int) -> tuple[float, float]:
        p = game.pipeline.positions[tag]
        return float(p.x), float(p.y)

    deploy_frames = []
    for tag, xy in DEPLOY.items():
        assert rules.status(game.state()).player == OWNER[tag]
        where[tag] = xy
        deploy_frames.append(game.show_until(table(), lambda t=tag: game.state().unit(t).on_table))  # type: ignore[misc]
        x, y = seen_at(tag)
        assert abs(x - xy[0]) < 0.05 and abs(y - xy[1]) < 0.05, (tag, (x, y), xy)
    state = game.state()
    assert state.phase == "turn_start" and state.turn == 1

    def steps(paths: dict[int, str]) -> None:
        for tag, path in paths.items():
            outcome, text = declare(page, "choose_path", f"choose the Path of the {path} for {NAME[tag]}")
            assert outcome == "legal", text
        assert game.state().phase == "activations", game.state().phase

    def end(tag: int) -> None:
        outcome, text = declare(page, "end_activation", f"end {NAME[tag]}'s activation")
        assert outcome == "legal", text

    def carry(tag: int, to: tuple[float, float]) -> None:
        """The players carry figure `tag` to `to`; the camera's Move is ruled."""
        where[tag] = to
        game.show_until(table(), lambda: "move" in game.state().unit(tag).actions_taken
                        or game.state().unit(tag).activated)

    # ---- turn 1: every unit's Step; Red 1 fetches a Runestone from section 2; Blue 1 shoots Red 2
    steps(PATHS_TURN_1)
    assert game.state().active_player == "red"
    carry(10, AT_STOCKPILE)
    assert game.state().unit(10).actions_taken == ("move",)
    outcome, text = declare(page, "pick_up_runestone", "Red 1 picks up a Runestone from the Runic Stockpile in Section 2")
    assert outcome == "legal" and "Red 1 picks up a Runestone; its movement is halved while it carries it." in text, text
    assert 'Runic Stockpile 3 is 0.57" ± ' in text, text  # 1.2" centre to centre less the 0.63" radius
    red1 = game.state().unit(10)
    assert len(red1.carrying) == 1 and red1.carrying[0].origin == 2 and red1.activated  # two actions: done
    assert game.state().stockpiles[3].stones == 1

    outcome, text = declare(page, "attack", "Blue 1 attacks Red 2")
    assert outcome == "waiting", text
    verdict = answer_dice(page, [[5], [6, 2, 3]])
    assert "needs 4+, rolled 5: hit, 3 damage." in verdict, verdict
    assert "takes 2 damage (1 ignored on 6s): 1 to Armor, 1 to HP, 9 HP left" in verdict, verdict
    red2 = game.state().unit(11)
    assert (red2.hp, red2.armor) == (9, 0)
    rules_mid = rules.panel(game.state(), dict(game.pipeline.positions))
    mid = wait_panel(page, lambda p: p.units.get(11, "").startswith("HP 9 of 10"))
    red2_words = next(u.words for u in rules_mid.units if u.unit == 11)
    assert mid.units[11].startswith(red2_words), (mid.units[11], red2_words)
    assert "carries a Runestone" in mid.units[10] and "Paths: Deer 1" in mid.units[10], mid.units[10]
    end(15)
    # the players may try what the rules refuse and read why: Red 2 is 2.57" from section 1's Runic Stockpile
    outcome, text = declare(page, "pick_up_runestone", "Red 2 picks up a Runestone from the Runic Stockpile in Section 1")
    assert outcome == "illegal" and 'from Red 2\'s base; it can pick up within 1": illegal.' in text, text
    assert not game.state().unit(11).carrying and game.state().active_unit is None
    for red, blue in ((11, 16), (12, 17), (13, 18), (14, 19)):
        end(red)
        end(blue)

    # ---- turn 2: blue goes first; Red 1, Deer 2 (no penalty for carrying), walks home and delivers
    state = game.state()
    assert state.phase == "turn_start" and state.turn == 2
    steps(PATHS_TURN_2)
    assert game.state().active_player == "blue"
    end(15)
    carry(10, DEPLOY[10])
    assert game.state().phase == "activations" and game.state().active_unit == 10
    outcome, text = declare(page, "end_activation", "end Red 1's activation")
    assert outcome == "legal", text
    assert "Red 1 delivered 1 Runestone to red's Drop Zone (section 1); red has 1 of 1." in text, text

    state = game.state()
    assert rules.is_over(state) and state.winner == "red" and state.turn == 2
    assert dict(state.delivered.pairs) == {"red": 1} and state.kills.of("red") == 0 == state.kills.of("blue")
    final = rules.panel(state, dict(game.pipeline.positions))
    assert final.over and final.winner == "Red wins: 1 of 1 Runestones delivered", final
    assert final.headline == "Game over after turn 2 · red reached 1", final
    shown = wait_panel(page, lambda p: p.winner is not None)
    assert shown.winner == sentence(final.winner)
    assert shown.headline == sentence(final.headline)
    assert shown.score == {s.side: s.words for s in final.score}
    assert shown.score == {"red": "1 of 1 Runestones delivered, 0 kills", "blue": "0 of 1 Runestones delivered, 0 kills"}
    page.wait_for_function("document.querySelectorAll('#declare-actions button').length === 0", timeout=10000)
    page.screenshot(path=str(SHOT), full_page=True)

    # ---- the battle report of the recording names the winner
    name = game.app.state.runtime.recording.name
    report = httpx.get(f"{url}/api/replay/{name}/report.html", headers=SAME_ORIGIN, timeout=120)
    assert report.status_code == 200, report.text[:300]
    REPORT.write_text(report.text)
    headline = re.search(r'<p class="headline( won)?">([^<]*)</p>', report.text)
    assert headline is not None and headline.group(1), report.text[:2000]
    assert html.unescape(headline.group(2)) == "Red wins: 1 of 1 Runestones delivered, turn 2.", headline.group(2)
    print(f"\nwhole game of Valknut: {time.monotonic() - started:.1f} s, frames per deployment {deploy_frames}, "
          f"{game.phone.seq} frames sent; panel: {panel_on_page(page)}")
