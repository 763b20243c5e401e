"""Rise of the Magni: one test per rule clause on a few tiles of the 19-cell board."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rules.engine import Action, Outcome, Placement, RosterError, ScenarioError, find_game
from rules.hexgrid import Hex, neighbor
from rules.magni.game import EXAMPLE_TEAMS, Magni, MagniState, tiles_on_board
from rules.magni.scoring import ABOVE, CENTRE, Hero, check_team, parse_hero, score

ROOT = Path(__file__).resolve().parent.parent


def hero(tag: int, owner: str, lav: int = 1, cav: int = 1, rav: int = 1, rating: int = 2) -> Hero:
    return Hero(tag, f"h{tag}", owner, rating, lav, cav, rav)


def team(owner: str, first_tag: int, ratings: list[int]) -> list[dict[str, Any]]:
    return [
        {"tag": first_tag + i, "name": f"{owner}{i}", "owner": owner, "rating": r, "lav": 1, "cav": i, "rav": 1}
        for i, r in enumerate(ratings)
    ]


def game() -> Magni:
    g = find_game("magni")
    assert isinstance(g, Magni)
    return g


def test_team_is_exactly_10_heroes() -> None:
    heroes = [parse_hero(h, "t") for h in team("red", 10, [2] * 9)]
    check = check_team("red", heroes)
    assert not check.ok and "has 9 heroes; a team is exactly 10" in check.problems[0]
    assert check_team("red", [parse_hero(h, "t") for h in team("red", 10, [2] * 10)]).ok


def test_team_rating_at_most_23() -> None:
    ok = check_team("red", [parse_hero(h, "t") for h in team("red", 10, [4, 3, 3, 2, 2, 2, 2, 2, 2, 1])])
    assert ok.ok and ok.rating == 23
    over = check_team("red", [parse_hero(h, "t") for h in team("red", 10, [4, 3, 3, 2, 2, 2, 2, 2, 2, 2])])
    assert over.rating == 24
    assert over.problems == ("Team red is rated 24; a Team Rating may be no more than 23.",)


def test_team_rated_24_is_refused_at_setup() -> None:
    units = team("red", 10, [4, 3, 3, 2, 2, 2, 2, 2, 2, 2]) + team("blue", 30, [2] * 10)
    with pytest.raises(RosterError, match="Team red is rated 24"):
        game().new_state({"units": units})


def test_team_question_gives_a_clear_verdict_for_24() -> None:
    units = team("red", 10, [4, 3, 3, 2, 2, 2, 2, 2, 2, 2]) + team("blue", 30, [2] * 10)
    ans = game().judge({"game": "magni", "units": units, "question": {"kind": "team"}}, random.Random(1))
    assert ans["outcome"] == "illegal"
    assert ans["numbers"]["rating"] == {"red": 24, "blue": 20}
    assert "Team red is rated 24" in ans["verdicts"][0]["message"]
    assert ans["verdicts"][1]["outcome"] == "legal"


def test_hero_rating_runs_from_1_to_4() -> None:
    with pytest.raises(RosterError, match="rated 5; a hero's rating runs from 1 to 4"):
        parse_hero({"tag": 10, "owner": "red", "name": "x", "rating": 5, "lav": 1, "cav": 1, "rav": 1}, "hero")


def test_attack_values_lav_on_nw_sw_cav_on_n_s_rav_on_ne_se() -> None:
    h = Hero(10, "x", "red", 1, lav=7, cav=8, rav=9)
    # flat layout directions: 0 SE, 1 NE, 2 N, 3 NW, 4 SW, 5 S
    assert [h.value(d) for d in range(6)] == [9, 9, 8, 7, 7, 8]


def test_skirmish_higher_corresponding_value_wins_a_point() -> None:
    a = Hex(1, 0)
    b = neighbor(a, 1)  # b lies NE of a: a fights with its RAV, b with its LAV (its SW edge)
    tiles = {a: hero(10, "red", rav=5), b: hero(20, "blue", lav=3, rav=9)}
    sc = score(tiles, ("red", "blue"))
    assert sc.points == {"red": 1, "blue": 0}
    (s,) = sc.skirmishes
    assert (s.a_value, s.b_value, s.winner) == (5, 3, 10)


def test_skirmish_n_s_uses_both_cavs() -> None:
    a = Hex(1, 0)
    tiles = {a: hero(10, "red", cav=2), neighbor(a, 2): hero(20, "blue", cav=4)}
    assert score(tiles, ("red", "blue")).points == {"red": 0, "blue": 1}


def test_skirmish_draw_scores_nothing() -> None:
    a = Hex(1, 0)
    tiles = {a: hero(10, "red", lav=3), neighbor(a, 3): hero(20, "blue", rav=3)}
    sc = score(tiles, ("red", "blue"))
    assert sc.points == {"red": 0, "blue": 0} and sc.skirmishes[0].winner is None


def test_allies_do_not_skirmish() -> None:
    a = Hex(1, 0)
    assert score({a: hero(10, "red", rav=5), neighbor(a, 1): hero(11, "red")}, ("red", "blue")).skirmishes == ()


def test_lead_skirmish_scores_no_point() -> None:
    tiles = {CENTRE: hero(10, "red", cav=6), ABOVE: hero(20, "blue", cav=1)}
    sc = score(tiles, ("red", "blue"))
    assert sc.points == {"red": 0, "blue": 0} and sc.skirmishes[0].lead


def test_fortification_three_allies_around_a_corner() -> None:
    a = Hex(1, 0)
    tiles = {a: hero(10, "red"), neighbor(a, 0): hero(11, "red"), neighbor(a, 1): hero(12, "red")}
    sc = score(tiles, ("red", "blue"))
    assert sc.points == {"red": 1, "blue": 0} and len(sc.fortifications) == 1
    tiles[neighbor(a, 1)] = hero(20, "blue")
    assert score(tiles, ("red", "blue")).fortifications == ()


def _state(units: list[dict[str, Any]] | None = None) -> MagniState:
    return game().new_state({"units": units or [dict(h) for h in EXAMPLE_TEAMS]})


def test_lead_higher_cav_takes_centre_and_plays_first() -> None:
    g, st = game(), _state()
    res = g.apply(st, {}, Action("lead", None, {"red": 11, "blue": 20}), random.Random(1))  # CAV 1 vs 5
    assert res.state.placed == ((20, CENTRE), (11, ABOVE))
    assert res.state.first == "blue" and res.state.turn() == "blue"


def test_lead_loser_goes_directly_above() -> None:
    g, st = game(), _state()
    res = g.apply(st, {}, Action("lead", None, {"red": 10, "blue": 21}), random.Random(1))
    c, a = res.positions[10], res.positions[21]
    assert a.x == pytest.approx(c.x) and a.y - c.y == pytest.approx(st.layout.inradius_in * 2)


def test_lead_tie_is_rolled_off_with_d6() -> None:
    g, st = game(), _state()  # tags 12 (red) and 23 (blue) both have CAV 4 and 3: use 14 (CAV 2) v 22 (CAV 2)
    res = g.apply(st, {}, Action("lead", None, {"red": 14, "blue": 22}), random.Random(5))
    v = res.verdicts[0]
    last = v.numbers["tie_rolls"][-1]
    winner = "red" if last["red"] > last["blue"] else "blue"
    assert res.state.first == winner and last["red"] != last["blue"]


def test_lead_tie_reselect_option_places_nothing() -> None:
    g = game()
    st = g.new_state({"units": [dict(h) for h in EXAMPLE_TEAMS], "options": {"lead_tie": "reselect"}})
    res = g.apply(st, {}, Action("lead", None, {"red": 14, "blue": 22}), random.Random(5))
    assert res.state == st and res.verdicts[0].outcome is Outcome.INFO


def test_placement_alternates_player_1_first() -> None:
    g, st = game(), _state()
    res = g.apply(st, {}, Action("lead", None, {"red": 10, "blue": 21}), random.Random(1))
    st = res.state
    assert st.turn() == "red"
    wrong = g.apply(st, res.positions, Action("place", 22, {"hex": [1, 0]}), random.Random(1))
    assert wrong.verdicts[0].rule == "magni.place.turn" and wrong.verdicts[0].outcome is Outcome.ILLEGAL
    st = g.apply(st, res.positions, Action("place", 12, {"hex": [1, 0]}), random.Random(1)).state
    assert st.turn() == "blue"


def test_place_on_an_occupied_cell_is_illegal() -> None:
    g, st = game(), _state()
    st = g.apply(st, {}, Action("lead", None, {"red": 10, "blue": 21}), random.Random(1)).state
    res = g.apply(st, {}, Action("place", 12, {"hex": [0, 0]}), random.Random(1))
    assert res.verdicts[0].rule == "magni.place.cell" and "already holds a tile" in res.verdicts[0].message


def test_game_ends_when_19_are_placed_and_the_higher_score_wins() -> None:
    g, rng = game(), random.Random(4)
    st, pos = g.example(rng)
    last = None
    while not g.is_over(st):
        res = g.apply(st, pos, rng.choice(g.legal_actions(st, pos)), rng)
        st, pos, last = res.state, res.positions, res
    assert last is not None and len(st.placed) == 19 and g.legal_actions(st, pos) == []
    end = last.verdicts[-1]
    sc = score(st.tiles(), st.owners)
    assert end.rule == "magni.end" and end.numbers["score"] == dict(sc.points)
    top = max(sc.points.values())
    leaders = [o for o, p in sc.points.items() if p == top]
    assert end.numbers["winner"] == (leaders[0] if len(leaders) == 1 else "draw")
    owners = [h.owner for t, _ in st.placed if (h := st.hero(t)) is not None]
    assert owners.count(st.first or "") == 10  # Player 1 places all ten heroes


def test_score_updates_live_from_tiles_at_table_positions() -> None:
    st = _state()
    lay = st.layout
    a = Hex(1, 0)
    pos = {10: Placement(10, *lay.to_table(a))}
    assert tiles_on_board(st, pos)[0] == {a: st.hero(10)}
    x, y = lay.to_table(neighbor(a, 5))
    pos[24] = Placement(24, x + 0.2, y - 0.1)  # Brine Knight, slightly off centre: still in its cell
    tiles, problems = tiles_on_board(st, pos)
    assert not problems
    sc = score(tiles, st.owners)
    # 24 lies S of 10: 10 fights with CAV 6, 24 with its N edge, CAV 2 -> red scores
    assert sc.points == {"red": 1, "blue": 0}


def test_tile_astride_two_cells_is_reported() -> None:
    st = _state()
    lay = st.layout
    (x0, y0), (x1, y1) = lay.to_table(Hex(1, 0)), lay.to_table(Hex(2, 0))
    pos = {10: Placement(10, (x0 + x1) / 2, (y0 + y1) / 2)}
    tiles, problems = tiles_on_board(st, pos)
    assert tiles == {} and problems[0].rule == "magni.tile.astride" and "astride two cells" in problems[0].message


def test_two_tiles_on_one_cell_are_reported() -> None:
    st = _state()
    x, y = st.layout.to_table(Hex(1, 0))
    tiles, problems = tiles_on_board(st, {10: Placement(10, x, y), 20: Placement(20, x + 0.1, y)})
    assert tiles == {} and problems[0].rule == "magni.tile.stacked" and problems[0].numbers["tags"] == [10, 20]


def test_tiles_off_the_board_are_in_hand() -> None:
    st = _state()
    assert tiles_on_board(st, {10: Placement(10, 0.0, 0.0)}) == ({}, [])


def test_pointy_layout_is_refused() -> None:
    with pytest.raises(ScenarioError, match='use "flat"'):
        game().judge(
            {"game": "magni", "board": {"layout": {"size_in": 1, "orientation": "pointy"}},
             "units": team("red", 10, [2] * 10) + team("blue", 30, [2] * 10), "question": {"kind": "score"}},
            random.Random(1),
        )


def test_example_roster_file_matches_the_module_and_is_labelled_ours() -> None:
    roster = json.loads((ROOT / "examples/rosters/magni.json").read_text())
    assert "not the author" in roster["note"].lower()
    assert [{k: u[k] for k in ("tag", "name", "owner", "rating", "lav", "cav", "rav")} for u in roster["units"]] == [
        dict(h) for h in EXAMPLE_TEAMS
    ]
    state = game().new_state(roster)
    assert state.layout.orientation == "flat"
    board = json.loads((ROOT / "examples/boards/magni_19.json").read_text())
    from rules.hexgrid import parse_board, parse_layout

    assert len(parse_board(board)) == 19 and parse_layout(board["layout"]) == state.layout


def test_a_tile_put_down_astride_is_named_as_the_board_scan_names_it() -> None:
    """The camera's placement of Cinder Guard (tag 12) halfway between [-1, 2] and [-2, 2] is refused in the same
    words the board scan uses: the hero by name, then the two cells and how far off centre it lies."""
    g = game()
    st = g.apply(_state(), {}, Action("lead", None, {"red": 10, "blue": 20}), None).state
    (x0, y0), (x1, y1) = st.layout.to_table(Hex(-1, 2)), st.layout.to_table(Hex(-2, 2))
    x, y = (x0 + x1) / 2, (y0 + y1) / 2
    res = g.apply(st, {}, Action("place", 12, {"at": [x, y]}), None)
    assert not res.legal and res.state.placed == st.placed
    said = res.verdicts[0]
    assert said.rule == "magni.tile.astride" and said.unit == 12
    assert said.message.startswith(f"Cinder Guard (tag 12) at ({x:.2f}, {y:.2f}) lies astride two cells, [-2, 2] and "
                                   "[-1, 2] (")
    scanned = tiles_on_board(st, {12: Placement(12, x, y)})[1][0].message
    assert scanned.startswith("Cinder Guard (tag 12) lies astride two cells, [-2, 2] and [-1, 2] (")
    assert said.message.split("lies ", 1)[1] == scanned.split("lies ", 1)[1]  # the same words after the name
    off = g.apply(st, {}, Action("place", 12, {"at": [0.5, 0.5]}), None).verdicts[0]
    assert off.rule == "magni.place.cell" and off.message.startswith("Cinder Guard (tag 12) at (0.50, 0.50) is not on")


def test_a_placement_says_what_it_scored() -> None:
    """The placement's verdict names each skirmish the tile fights (with the values fought with) and each corner it
    fortifies; it said only "red +1, blue +0"."""
    from rules.magni.game import _what_scored

    a = Hex(1, 0)
    b, c = neighbor(a, 1), neighbor(a, 0)
    names = {10: "Ash", 11: "Birch", 12: "Cedar", 20: "Dune"}
    before = {a: hero(10, "red", rav=5), c: hero(11, "red")}
    after = {**before, b: hero(20, "blue", lav=3)}  # Dune NE of Ash: Ash's RAV 5 against Dune's LAV 3
    said = _what_scored(20, score(before, ("red", "blue")), score(after, ("red", "blue")), names)
    assert said == ": loses to Ash 3 to 5; a draw with Birch 1 to 1"  # Birch, NW of Dune too: 1 against 1
    tied = {**before, b: hero(20, "blue", lav=5)}
    assert _what_scored(20, score(before, ("red", "blue")), score(tied, ("red", "blue")), names) == \
        ": a draw with Ash 5 to 5; a draw with Birch 1 to 1"
    allied = {**before, b: hero(12, "red")}  # three red tiles around one corner
    assert _what_scored(12, score(before, ("red", "blue")), score(allied, ("red", "blue")), names) == \
        ": fortifies a corner for red"
    assert _what_scored(11, score({a: hero(10, "red")}, ("red", "blue")), score(before, ("red", "blue")), names) == ""
