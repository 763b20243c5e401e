"""Rise of the Magni's game panel against the state: the lead phase, the score after a placement, and the banner
when the map is full, in a game played with given dice."""

from __future__ import annotations

from rules.engine import Action, find_game
from rules.magni.game import EXAMPLE_TEAMS, MagniState
from rules.magni.scoring import BOARD_CELLS

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
