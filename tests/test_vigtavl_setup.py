"""Vigtavl setup, phases, money, occupancy, movement, winds and building: one test per rule clause."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rules.engine import Action, ScenarioError, find_game
from rules.hexgrid import Hex, distance, hexagon
from rules.vigtavl.game import map_check, starting_pieces
from rules.vigtavl.judge import build_position
from rules.vigtavl.units import STATS, STATS_HEADER, STATS_TABLE
from tests.vigtavl_positions import act, board, judge, messages, rules_of, scenario, unit

ROOT = Path(__file__).resolve().parent.parent
GAME = find_game("vigtavl")


def _seed_stats_table() -> tuple[tuple[str, ...], ...]:
    """The stats table as the rule document's own HTML has it (a copy in tests/data/seeds)."""
    import html
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent / "data" / "seeds" / "003_e4fc4d58a3d7bf3b.txt").read_text()
    table = text[text.index('<div class="stats-table">'):]
    rows = re.findall(r'<div class="stats-row[^"]*">(.*?)</div>\s*(?=<div class="stats-row|</div>\s*</div>)', table, re.S)
    out = []
    for row in rows:
        cells = tuple(html.unescape(c).strip() for c in re.findall(r'<div class="stats-column">(.*?)</div>', row, re.S))
        if cells:
            out.append(cells)
    return tuple(out)


def test_stats_table_transcribed_exactly() -> None:
    seed = _seed_stats_table()
    assert seed[0] == STATS_HEADER
    assert tuple(row for row in seed[1:] if row[0] != "-") == STATS_TABLE  # "-" rows only separate groups
    got = {k: (s.cost, s.movement, s.attack_range, s.per_turn, s.owned) for k, s in STATS.items()}
    assert got["infantry"] == (1, 3, 0, 2, None)
    assert got["archer"] == (2, 2, 3, 2, None)
    assert got["cavalry"] == (3, 4, 0, 2, None)
    assert got["caravel"] == (1, 6, 0, 2, None)
    assert got["freighter"] == (2, 5, 0, None, 3)
    assert got["galleon"] == (3, 4, 3, None, 1)
    assert got["artillery"] == (2, 0, 3, None, 1)
    assert (STATS["encampment"].cost, STATS["fort"].cost, STATS["castle"].cost, STATS["wall"].cost) == (1, 2, 3, 1)


def test_map_size_by_player_count() -> None:
    state = GAME.new_state({"board": json.loads((ROOT / "examples/boards/vigtavl_2p.json").read_text()),
                            "players": ["red", "blue"]})
    v = map_check(state.cells, 2)
    assert v.outcome.value == "legal" and v.numbers["side"] == 6 and v.numbers["cells"] == 91
    assert map_check(state.cells, 3).numbers["recommended_side"] == 7
    assert map_check(state.cells, 4).numbers["recommended_side"] == 8
    assert map_check(state.cells, 4).outcome.value == "info"
    assert {v.numbers["land"], v.numbers["sea"], v.numbers["mountain"]} == {24, 64, 3}


def test_map_has_land_sea_mountain_only() -> None:
    with pytest.raises(ScenarioError, match="water"):
        judge(scenario([], brd=board(m0_0="water"), question={"kind": "occupancy", "hex": [0, 0]}))


def test_starting_units_and_loaded_freighters() -> None:
    pieces = starting_pieces(("red", "blue"))
    red = [p for p in pieces if p.owner == "red"]
    kinds = sorted(p.kind for p in red)
    assert kinds.count("infantry") == 3 and kinds.count("archer") == 2 and kinds.count("cavalry") == 1
    assert kinds.count("caravel") == 3 and kinds.count("freighter") == 2 and kinds.count("galleon") == 1
    freighters = [p.id for p in red if p.kind == "freighter"]
    loads = {f: [p.id for p in red if p.aboard == f] for f in freighters}
    assert [len(v) for v in loads.values()] == [3, 3]


def test_roster_file_loads_the_starting_units() -> None:
    roster = json.loads((ROOT / "examples/rosters/vigtavl.json").read_text())
    state = GAME.new_state({"board": roster["board"], "players": ["red", "blue"], "roster": roster})
    assert len(state.pieces) == 24 and len(state.passengers(19)) == 3 and len(state.passengers(20)) == 3


def test_prevailing_winds_carry_ship_to_next_side() -> None:
    # radius-2 sea map: side 0 runs from corner (2, 0) to corner (2, -2).
    scn = scenario([unit(10, "caravel", "red", 2, 0)], brd=board("sea"), state={"winds": "counter-clockwise"},
                   question={"kind": "winds", "hex": [2, 0]})
    ans = judge(scn)
    assert ans["numbers"]["sides"] == [0, 5]
    ccw = {tuple(c) for c in ans["cells"]}
    assert (0, -2) in ccw and (-2, 0) not in ccw  # side 1 ends at (0, -2)
    scn["state"]["winds"] = "clockwise"
    cw = {tuple(c) for c in judge(scn)["cells"]}
    assert (0, 2) in cw and (-2, 2) in cw and (0, -2) not in cw  # side 4 runs (-2, 2)..(0, 2)


def test_winds_ride_costs_two_movements_each() -> None:
    # radius-4 sea; corners: (4,0) (4,-4) (0,-4) (-4,0) (-4,4) (0,4). A galleon (4 movement) at corner (4,-4).
    def cost(to: list[int], winds: str = "counter-clockwise") -> int | None:
        ans = judge(scenario([unit(10, "galleon", "red", 4, -4)], brd=board("sea", 4),
                             state={"winds": winds, "phase": "build"}, action=act("move", 10, to=to)))
        return ans["numbers"]["cost"] if ans["outcome"] == "legal" else None

    assert cost([-2, -2]) == 2  # 1 to enter the winds, 1 to exit on the next side (6 steps by sea)
    assert cost([-4, 4]) == 4  # two rides (8 steps by sea)
    assert cost([0, 4]) == 4  # (-4, 0) is a corner on sides 2 and 3: the second ride reaches side 4
    assert cost([2, 2]) is None  # side 5 needs 6 movement (rides and steps); 6 steps by sea
    assert cost([0, 4], "clockwise") == 2  # the other way round the map
    assert cost([-2, -2], "clockwise") is None  # clockwise winds lead away from side 2; 6 steps by sea


def test_three_phases_of_two_rounds() -> None:
    rng = random.Random(5)
    state, pos = GAME.example(rng)
    assert state.phase == "placement" and state.round == 1
    placed = 0
    while state.phase == "placement":
        acts = [a for a in GAME.legal_actions(state, pos) if a.kind == "place"]
        res = GAME.apply(state, pos, acts[0], rng)
        state, pos = res.state, res.positions
        placed += 1
    assert placed == 12 and state.phase == "build" and state.round == 3
    phases = []
    while not GAME.is_over(state):
        phases.append((state.round, state.phase, state.player))
        res = GAME.apply(state, pos, Action("end_turn"), rng)
        state = res.state
    assert phases == [(3, "build", "red"), (3, "build", "blue"), (4, "build", "red"), (4, "build", "blue"),
                      (5, "battle", "red"), (5, "battle", "blue"), (6, "battle", "red"), (6, "battle", "blue")]
    assert state.phase == "over"


def test_placement_only_on_sea_not_occupied_by_other() -> None:
    brd = board("sea", m0_0="land")
    st = {"phase": "placement"}
    ok = judge(scenario([unit(10, "caravel", "red", unplaced=True)], brd=brd, state=st, action=act("place", 10, hex=[1, 0])))
    assert ok["outcome"] == "legal" and ok["after"]["units"]["10"]["hex"] == [1, 0]
    land = judge(scenario([unit(10, "caravel", "red", unplaced=True)], brd=brd, state=st, action=act("place", 10, hex=[0, 0])))
    assert land["outcome"] == "illegal" and "land" in messages(land)
    taken = judge(scenario([unit(10, "caravel", "red", unplaced=True), unit(20, "caravel", "blue", 1, 0)], brd=brd,
                           state=st, action=act("place", 10, hex=[1, 0])))
    assert taken["outcome"] == "illegal" and "another player" in messages(taken)


def test_gold_and_silver_each_turn_unspent_forfeited() -> None:
    rng = random.Random(1)
    state, _ = build_position(GAME, scenario([unit(10, "infantry", "red", 0, 0)], state={"phase": "build"}))
    assert state.gold == (6, 0) and state.silver == (6, 0)
    res = GAME.apply(state, {}, Action("end_turn"), rng)
    assert res.verdicts[0].numbers == {"forfeit_gold": 6, "forfeit_silver": 6}
    assert res.state.gold == (0, 6) and res.state.silver == (0, 6)  # red forfeits; blue receives 6 and 6


def test_occupancy_at_most_three() -> None:
    units = [unit(10, "infantry", "red", 0, 0), unit(11, "infantry", "red", 0, 0), unit(12, "infantry", "red", 0, 0),
             unit(13, "infantry", "red", 1, 0)]
    ans = judge(scenario(units, state={"phase": "build"}, action=act("move", 13, to=[0, 0])))
    assert ans["outcome"] == "illegal" and "occupancy limit of 3" in messages(ans)
    q = judge(scenario(units, question={"kind": "occupancy", "hex": [0, 0]}))
    assert q["numbers"]["occupancy"] == 3 and q["numbers"]["free"] == 0


def test_castle_counts_three() -> None:
    scn = scenario([unit(10, "infantry", "red", 1, 0)], devs=[((0, 0), "castle", "red")], state={"phase": "build"},
                   action=act("move", 10, to=[0, 0]))
    ans = judge(scn)
    assert ans["outcome"] == "illegal" and "would hold 4" in messages(ans)
    assert judge(scenario([], devs=[((0, 0), "castle", "red")], question={"kind": "occupancy", "hex": [0, 0]}))["numbers"]["occupancy"] == 3


def test_encampment_counts_one_fort_and_artillery_two() -> None:
    q = {"kind": "occupancy", "hex": [0, 0]}
    camp = judge(scenario([unit(10, "infantry", "red", 0, 0)], devs=[((0, 0), "encampment", "red")], question=q))
    assert camp["numbers"]["occupancy"] == 2
    fort = judge(scenario([unit(10, "infantry", "red", 0, 0)], devs=[((0, 0), "fort", "red")], question=q))
    assert fort["numbers"]["occupancy"] == 3
    gun = judge(scenario([unit(10, "infantry", "red", 0, 0), unit(11, "artillery", "red", 0, 0)], question=q))
    assert gun["numbers"]["occupancy"] == 3


def test_prisoners_do_not_count_toward_occupancy() -> None:
    units = [unit(10, "infantry", "red", 0, 0), unit(20, "cavalry", "blue", 0, 0, captor="red"),
             unit(21, "cavalry", "blue", 0, 0, captor="red")]
    ans = judge(scenario(units, devs=[((0, 0), "fort", "red")], question={"kind": "occupancy", "hex": [0, 0]}))
    assert ans["numbers"]["occupancy"] == 3 and ans["numbers"]["prisoners"] == [20, 21]


@pytest.mark.parametrize("profile,reach", [("infantry", 3), ("archer", 2), ("cavalry", 4)])
def test_movement_range_per_unit(profile: str, reach: int) -> None:
    # on the 19-hex open land board from (-2, 0) a unit may end on every hex within its movement
    cells = sum(1 for h in hexagon(2) if 0 < distance(h, Hex(-2, 0)) <= reach)
    assert cells == {2: 8, 3: 13, 4: 18}[reach]
    ans = judge(scenario([unit(10, profile, "red", -2, 0)], state={"phase": "build"}, question={"kind": "reachable", "unit": 10}))
    assert ans["numbers"]["movement"] == reach
    assert ans["numbers"]["count"] == cells


def test_mountain_cannot_be_occupied() -> None:
    ans = judge(scenario([unit(10, "infantry", "red", 1, 0)], brd=board(m0_0="mountain"), state={"phase": "build"},
                         action=act("move", 10, to=[0, 0])))
    assert ans["outcome"] == "illegal" and "mountain" in messages(ans)


def test_build_phase_pass_through_but_not_end_in_enemy_hex() -> None:
    # a corridor of land: (-2,0) (-1,0) (0,0) (1,0) (2,0); everything else sea
    brd = board("sea", m2_0="land", m1_0="land", **{"0_0": "land", "1_0": "land", "2_0": "land"})
    units = [unit(10, "infantry", "red", -2, 0), unit(20, "infantry", "blue", -1, 0)]
    through = judge(scenario(units, brd=brd, state={"phase": "build"}, action=act("move", 10, to=[0, 0])))
    assert through["outcome"] == "legal" and through["numbers"]["path"] == [[-2, 0], [-1, 0], [0, 0]]
    end = judge(scenario(units, brd=brd, state={"phase": "build"}, action=act("move", 10, to=[-1, 0])))
    assert end["outcome"] == "illegal" and "another player" in messages(end)


def test_battle_phase_move_into_enemy_hex_starts_battle() -> None:
    units = [unit(10, "cavalry", "red", -2, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge(scenario(units, devs=[((2, -2), "encampment", "red")], action=act("move", 10, to=[0, 0])), seed=3)
    assert "vigtavl.combat.close" in rules_of(ans)
    close = next(v for v in ans["verdicts"] if v["rule"] == "vigtavl.combat.close")
    assert close["numbers"]["attack_dice"] == 3 and close["numbers"]["defend_dice"] == 1


def test_retreat_when_the_defender_wins() -> None:
    units = [unit(10, "infantry", "red", -2, 0), unit(20, "cavalry", "blue", 0, 0)]
    for seed in range(40):
        ans = judge(scenario(units, devs=[((2, -2), "encampment", "red")], action=act("move", 10, to=[0, 0])), seed=seed)
        close = next(v for v in ans["verdicts"] if v["rule"] == "vigtavl.combat.close")
        if close["numbers"]["winner"] == "defender":
            assert ans["after"]["units"]["10"]["hex"] == [-2, 0]  # back where its move began
            assert "vigtavl.results.retreat" in rules_of(ans)
            return
    raise AssertionError("no seed gave the defender a win")


def test_activation_costs_silver_equal_to_cost() -> None:
    ans = judge(scenario([unit(10, "cavalry", "red", 0, 0)], state={"phase": "build", "silver": {"red": 6}},
                         action=act("move", 10, to=[1, 0])))
    assert ans["after"]["silver"]["red"] == 3
    poor = judge(scenario([unit(10, "cavalry", "red", 0, 0)], state={"phase": "build", "silver": {"red": 2}},
                          action=act("move", 10, to=[1, 0])))
    assert poor["outcome"] == "illegal" and poor["numbers"] == {"cost": 3, "silver": 2}


def test_each_action_unique_no_two_moves() -> None:
    st = {"phase": "battle", "active": 10, "used": {"10": ["move"]}}
    ans = judge(scenario([unit(10, "infantry", "red", 0, 0)], state=st, action=act("move", 10, to=[1, 0])))
    assert ans["outcome"] == "illegal" and ans["verdicts"][0]["rule"] == "vigtavl.activation.unique"


def test_build_phase_allows_no_attack() -> None:
    units = [unit(10, "infantry", "red", 0, 0), unit(20, "infantry", "blue", 1, 0)]
    ans = judge(scenario(units, devs=[((-1, 0), "encampment", "red")], state={"phase": "build"},
                         action=act("attack", 10, target=20)))
    assert ans["outcome"] == "illegal" and ans["verdicts"][0]["rule"] == "vigtavl.phases"


def test_build_two_units_per_turn_three_with_castle() -> None:
    st = {"phase": "build", "built": ["infantry", "caravel"], "gold": {"red": 6}}
    two = judge(scenario([], devs=[((0, 0), "encampment", "red")], state=st, action=act("build", kind="infantry", hex=[1, 0])))
    assert two["outcome"] == "illegal" and two["numbers"] == {"built": 2, "limit": 2}
    three = judge(scenario([], devs=[((0, 0), "castle", "red")], state=st, action=act("build", kind="infantry", hex=[1, 0])))
    assert three["outcome"] == "legal" and three["after"]["gold"]["red"] == 5


def test_build_limit_per_kind() -> None:
    st = {"phase": "build"}
    brd = board("land", **{"2_0": "sea", "2_m1": "sea", "2_m2": "sea", "1_1": "sea", "0_2": "sea"})
    galleon = judge(scenario([unit(10, "galleon", "red", 2, -2)], brd=brd, devs=[((1, 0), "encampment", "red")], state=st,
                             action=act("build", kind="galleon", hex=[2, 0])))
    assert galleon["outcome"] == "illegal" and galleon["numbers"] == {"limit": 1}
    per_turn = judge(scenario([], devs=[((0, 0), "castle", "red")], state={**st, "built": ["archer", "archer"]},
                              action=act("build", kind="archer", hex=[1, 0])))
    assert per_turn["outcome"] == "illegal" and "2/turn" in messages(per_turn)


def test_ships_built_beside_coastal_development() -> None:
    brd = board("land", **{"2_0": "sea", "2_m1": "sea", "2_m2": "sea", "1_1": "sea", "0_2": "sea"})
    st = {"phase": "build"}
    coastal = judge(scenario([], brd=brd, devs=[((1, 0), "fort", "red")], state=st, action=act("build", kind="caravel", hex=[2, 0])))
    assert coastal["outcome"] == "legal" and coastal["after"]["gold"]["red"] == 5
    inland = judge(scenario([], brd=brd, devs=[((-1, 0), "fort", "red")], state=st, action=act("build", kind="caravel", hex=[2, 0])))
    assert inland["outcome"] == "illegal" and "coastal" in messages(inland)


def test_land_units_built_on_or_adjacent_developed_hex() -> None:
    st = {"phase": "build"}
    near = judge(scenario([], devs=[((0, 0), "encampment", "red")], state=st, action=act("build", kind="archer", hex=[1, 0])))
    assert near["outcome"] == "legal" and near["after"]["gold"]["red"] == 4
    far = judge(scenario([], devs=[((0, 0), "encampment", "red")], state=st, action=act("build", kind="archer", hex=[2, 0])))
    assert far["outcome"] == "illegal" and "developed hex" in messages(far)


def test_units_built_on_freighter_beside_development() -> None:
    brd = board("land", **{"2_0": "sea", "2_m1": "sea", "2_m2": "sea", "1_1": "sea", "0_2": "sea"})
    ans = judge(scenario([unit(10, "freighter", "red", 2, 0)], brd=brd, devs=[((1, 0), "encampment", "red")],
                         state={"phase": "build"}, action=act("build", kind="infantry", aboard=10)))
    assert ans["outcome"] == "legal"
    new = [u for k, u in ans["after"]["units"].items() if k != "10"][0]
    assert new["aboard"] == 10 and new["kind"] == "infantry"


def test_build_developments_near_own_units() -> None:
    st = {"phase": "build"}
    ok = judge(scenario([unit(10, "infantry", "red", 0, 0)], state=st, action=act("build", kind="fort", hex=[1, 0])))
    assert ok["outcome"] == "legal" and ok["numbers"]["occupancy"] == 2
    far = judge(scenario([unit(10, "infantry", "red", 0, 0)], state=st, action=act("build", kind="fort", hex=[2, 0])))
    assert far["outcome"] == "illegal"
    full = judge(scenario([unit(10, "infantry", "red", 0, 0), unit(11, "infantry", "red", 0, 0)], state=st,
                          action=act("build", kind="fort", hex=[0, 0])))
    assert full["outcome"] == "illegal" and "occupancy would be 4" in messages(full)


def test_gold_pays_for_builds() -> None:
    ans = judge(scenario([unit(10, "infantry", "red", 0, 0)], state={"phase": "build", "gold": {"red": 2}},
                         action=act("build", kind="castle", hex=[1, 0])))
    assert ans["outcome"] == "illegal" and ans["numbers"] == {"cost": 3, "gold": 2}


def test_discharge_and_recruit_once_per_turn() -> None:
    units = [unit(10, "cavalry", "red", -2, 0)]
    devs = [((1, 0), "encampment", "red")]
    ok = judge(scenario(units, devs=devs, state={"phase": "build"}, action=act("discharge", 10, to=[2, 0])))
    assert ok["outcome"] == "legal" and ok["after"]["units"]["10"]["hex"] == [2, 0]
    twice = judge(scenario(units, devs=devs, state={"phase": "build", "discharged": True}, action=act("discharge", 10, to=[2, 0])))
    assert twice["outcome"] == "illegal" and "once per turn" in messages(twice)


def test_position_astride_a_cell_border_is_too_close_to_call() -> None:
    brd = {**board(), "layout": {"size_in": 1.0, "orientation": "pointy", "origin": [10.0, 10.0]}}
    inside = judge(scenario([{"tag": 10, "profile": "infantry", "owner": "red", "at": [10.05, 10.0], "base_mm": 25}],
                            brd=brd, question={"kind": "occupancy", "hex": [0, 0]}))
    assert inside["outcome"] == "info" and inside["numbers"]["units"] == [10]
    edge = judge(scenario([{"tag": 10, "profile": "infantry", "owner": "red", "at": [10.85, 10.0], "base_mm": 25}],
                          brd=brd, question={"kind": "occupancy", "hex": [0, 0]}))
    assert edge["outcome"] == "too close to call"


def test_state_round_trips_json() -> None:
    state, _ = build_position(GAME, scenario([unit(10, "infantry", "red", 0, 0), unit(11, "freighter", "red", 2, 0)],
                                             walls=[((0, 0, 1), "red")], devs=[((1, 0), "fort", "blue")],
                                             state={"fronts": [{"hex": [0, 0], "dir": 3}], "used": {"10": ["move"]}}))
    assert GAME.load_state(json.loads(json.dumps(GAME.dump_state(state)))) == state
    assert state.wall_on(__import__("rules.hexgrid", fromlist=["Edge"]).Edge(Hex(1, -1), 4)) is not None


def test_bad_scenarios_name_the_field() -> None:
    with pytest.raises(ScenarioError, match="profile 'dragon'"):
        judge(scenario([unit(10, "dragon", "red", 0, 0)], question={"kind": "occupancy", "hex": [0, 0]}))
    with pytest.raises(ScenarioError, match="Unknown Vigtavl question"):
        judge(scenario([], question={"kind": "weather"}))
    with pytest.raises(ScenarioError, match="not a cell of the board"):
        judge(scenario([unit(10, "infantry", "red", 9, 9)], question={"kind": "occupancy", "hex": [0, 0]}))
