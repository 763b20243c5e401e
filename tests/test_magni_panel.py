"""Rise of the Magni's game panel against the state: the lead phase, the score after a placement, and the banner
when the map is full, in a game played with given dice."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.web import CHROMIUM
from rules.engine import Action, find_game
from rules.magni.game import EXAMPLE_TEAMS, MagniState
from rules.magni.scoring import BOARD_CELLS
from rules.roster import parse_roster
from session.roll_call import call_roll
from tests.chromium import checked_page, chromium

APP_CSS = Path(__file__).resolve().parents[1] / "webui" / "static" / "app.css"

GAME = find_game("magni")


def test_a_game_played_to_a_full_map_shows_the_score_and_the_winner() -> None:
    st = GAME.new_state({"units": [dict(h) for h in EXAMPLE_TEAMS]})
    assert isinstance(st, MagniState)
    panel = GAME.panel(st, {})
    assert panel.headline == "The fight for the centre · each player picks a Lead unit"
    assert all(u.gone and u.words.endswith("in hand") for u in panel.units) and not panel.over
    res = GAME.apply(st, {}, Action("lead", None, {"red": 14, "blue": 22, "rolls": [6, 1]}), None)
    st = res.state
    panel = GAME.panel(st, res.positions)
    assert panel.headline == "Placing tiles · 2 of 19 down · red to place"
    assert panel.to_do == ("Red places a tile on an empty cell (9 in hand, 17 cells empty)",)
    lead = next(u for u in panel.units if u.unit == 14)
    assert lead.words == "rated 2; LAV 3, CAV 2, RAV 2; on the centre (Lead)" and not lead.gone
    assert [s.words for s in panel.score] == ["0 points: 0 skirmishes won, 0 fortifications · Player 1",
                                              "0 points: 0 skirmishes won, 0 fortifications"]
    while not GAME.is_over(st):
        turn = st.turn()
        assert turn is not None
        taken = {c for _, c in st.placed}
        cell = next(c for c in BOARD_CELLS if c not in taken)
        res = GAME.apply(st, {}, Action("place", st.in_hand(turn)[0].tag, {"hex": cell.to_json()}), None)
        assert res.legal, res.verdicts
        st = res.state
        panel = GAME.panel(st, {})
        assert {s.side: s.points for s in panel.score} == GAME.score(st)
    points = GAME.score(st)
    assert points is not None and panel.over and len(st.placed) == 19 and panel.to_do == ()
    win = max(points, key=lambda o: points[o])
    lose = min(points, key=lambda o: points[o])
    assert points[win] > points[lose], points  # this order of play is not a draw
    assert panel.winner == f"{win.title()} wins: {points[win]} points to {points[lose]}"
    assert panel.headline == f"The map is full · {win} wins"
    assert sum(u.gone for u in panel.units) == 1  # Player 2 keeps one hero in hand


def test_a_full_map_on_equal_scores_is_a_draw_without_a_winner() -> None:
    heroes = [{"tag": 10 + i, "name": f"r{i}", "owner": "red", "rating": 2, "lav": 1, "cav": 1, "rav": 1}
              for i in range(10)] + [{"tag": 30 + i, "name": f"b{i}", "owner": "blue", "rating": 2, "lav": 1,
                                      "cav": 1, "rav": 1} for i in range(10)]
    st = GAME.new_state({"units": heroes})
    res = GAME.apply(st, {}, Action("lead", None, {"red": 10, "blue": 30, "rolls": [2, 2, 1, 3]}), None)
    st = res.state
    while not GAME.is_over(st):
        turn = st.turn()
        assert turn is not None
        cell = next(c for c in BOARD_CELLS if c not in {c for _, c in st.placed})
        st = GAME.apply(st, {}, Action("place", st.in_hand(turn)[0].tag, {"hex": cell.to_json()}), None).state
    panel = GAME.panel(st, {})
    # every value is 1, so no skirmish is won; one corner each is fortified
    assert GAME.score(st) == {"red": 1, "blue": 1} and st.first == "blue"
    assert panel.over and panel.winner is None
    assert panel.headline == "The map is full · a draw at 1 point each"


def test_a_hero_left_in_hand_is_off_the_table_once_its_player_has_no_tile_to_place() -> None:
    """20 heroes, 19 cells: after the Lead units red (Player 1) places 9 tiles and blue 8, so once blue has placed
    its 8th, blue's last hero in hand stays there. From then on the roll call does not ask for it ("Not on the
    table yet"), while a hero still to be placed is asked for."""
    roster = parse_roster(GAME.example_roster(), "the example roster")
    st = GAME.new_state({"units": [dict(h) for h in EXAMPLE_TEAMS]})
    assert GAME.off_table(st) == frozenset() and 25 in call_roll({}, roster, 0.0, GAME.off_table(st)).not_yet
    st = GAME.apply(st, {}, Action("lead", None, {"red": 10, "blue": 20}), None).state
    assert st.first == "red"
    off_after: list[frozenset[int]] = []
    while not GAME.is_over(st):
        turn = st.turn()
        assert turn is not None
        cell = next(c for c in BOARD_CELLS if c not in {c for _, c in st.placed})
        hand = [h for h in st.in_hand(turn) if h.tag != 25]  # blue keeps its Shell Guard (tag 25) to the end
        st = GAME.apply(st, {}, Action("place", hand[0].tag, {"hex": cell.to_json()}), None).state
        off_after.append(GAME.off_table(st))
    assert len(off_after) == 17
    assert off_after[:15] == [frozenset()] * 15  # both still have a tile to place
    assert off_after[15:] == [frozenset({25}), frozenset({25})]  # blue's 8th placed, then the map full
    assert [h.tag for h in st.in_hand("blue")] == [25] and st.in_hand("red") == []
    call = call_roll({}, roster, 0.0, GAME.off_table(st))
    assert 25 not in call.not_yet


_LINES = """(id) => { const t = document.getElementById(id).firstChild; const lines = {}; let i = 0;
  for (const w of t.textContent.split(' ')) { const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + w.length);
    i += w.length + 1; const top = Math.round(r.getBoundingClientRect().top); (lines[top] = lines[top] || []).push(w); }
  return Object.keys(lines).map(Number).sort((a, b) => a - b).map((k) => lines[k].join(' ')); }"""


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_the_winner_banner_never_leaves_a_score_alone_on_its_last_line(tmp_path: Path) -> None:
    """The banner of the whole game's end, "Blue wins: 13 points to 12", in the live page's style at the game panel's
    widths (296 px at a 1400 px window): "12" never stands alone on a line; without the banner's rule it did."""
    banner = "Blue wins: 13 points to 12"
    page_file = tmp_path / "banner.html"
    page_file.write_text(f'<!doctype html><html><head><link rel="stylesheet" href="{APP_CSS.as_uri()}"></head><body>'
                         f'<div class="game-panel" id="panel"><div class="gp-winner" id="ours">{banner}</div>'
                         f'<div class="gp-winner" id="plain" style="text-wrap: wrap">{banner}</div></div></body></html>',
                         encoding="utf-8")
    with chromium() as browser, checked_page(browser) as page:
        page.goto(page_file.as_uri())
        seen = {}
        for width in range(150, 460, 10):
            page.evaluate(f"document.getElementById('panel').style.width = '{width}px'")
            seen[width] = (page.evaluate(_LINES, "ours"), page.evaluate(_LINES, "plain"))
    assert seen[290] == (["Blue wins: 13 points", "to 12"], ["Blue wins: 13 points to", "12"])
    assert all(" " in lines[-1] for lines, _plain in seen.values()), seen


def test_one_skirmish_and_one_fortification_are_said_in_the_singular() -> None:
    from rules.magni.panel import _some

    assert _some(1, "skirmish", "skirmishes") == "1 skirmish" and _some(0, "skirmish", "skirmishes") == "0 skirmishes"
