"""Vigtavl: scenarios from a clause-by-clause audit against the v0.93 rule text.

Each test is one judge scenario on a tiny board: movement per unit type over land, sea and mountain,
weighted occupancy, ranged lines through hex edges (and lines along edges and corners, which are not
straight lines of fire), walls beside and behind the line, flanking by direction, and the victory tokens a
position already holds.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.vigtavl_positions import act, board, judge, messages, scenario, unit

CAMP = [((2, -2), "encampment", "red")]


def shoot(archer: tuple[int, int], target: tuple[int, int], **kw: Any) -> dict[str, Any]:
    units = [unit(10, "archer", "red", *archer), unit(20, "infantry", "blue", *target)]
    return judge(scenario(units, devs=kw.pop("devs", CAMP), action=act("attack", 10, target=20), seed=1, **kw))


@pytest.mark.parametrize("target", [(1, 1), (2, -1), (-1, -1)])
def test_lines_along_hex_edges_and_corners_are_not_lines_of_fire(target: tuple[int, int]) -> None:
    ans = shoot((0, 0), target)
    assert ans["outcome"] == "illegal" and ans["verdicts"][-1]["rule"] == "vigtavl.combat.ranged.line"


def test_range_three_hits_on_a_one_and_range_four_is_out() -> None:
    ans = shoot((-1, 1), (1, -1))  # north-east, 2 hexes
    assert ans["outcome"] == "legal" and ans["numbers"]["range"] == 2 and ans["numbers"]["hit_on"] == 2
    assert shoot((-2, 0), (1, 0))["numbers"]["hit_on"] == 1
    assert shoot((-2, 2), (2, -2))["outcome"] == "illegal"


def test_walls_beside_or_behind_the_line_do_not_block() -> None:
    beside = shoot((-1, 0), (1, 0), walls=[((0, 0, 1), "blue"), ((0, 0, 5), "blue")])
    behind = shoot((-1, 0), (1, 0), walls=[((1, 0, 0), "blue")])
    crossed = shoot((-1, 0), (1, 0), walls=[((0, 0, 0), "blue")])
    assert beside["outcome"] == "legal" and behind["outcome"] == "legal"
    assert crossed["outcome"] == "illegal" and "wall between [0, 0] and [1, 0]" in messages(crossed)


def test_mountains_beside_or_beyond_the_line_do_not_block() -> None:
    brd = board(**{"0_m1": "mountain", "m1_1": "mountain", "2_0": "mountain"})
    assert shoot((-1, 0), (1, 0), brd=brd)["outcome"] == "legal"
    on_line = shoot((-1, 0), (1, 0), brd=board(**{"0_0": "mountain"}))
    assert on_line["outcome"] == "illegal" and "mountain at [0, 0]" in messages(on_line)


@pytest.mark.parametrize(("attacker", "flank", "dice"), [((1, 0), "front", 0), ((1, -1), "flank", 1),
                                                         ((0, -1), "rear flank", 2), ((-1, 0), "rear", 3),
                                                         ((0, 1), "flank", 1)])
def test_flanking_counts_turns_away_from_the_front(attacker: tuple[int, int], flank: str, dice: int) -> None:
    units = [unit(10, "infantry", "red", *attacker), unit(20, "cavalry", "blue", 0, 0)]
    ans = judge(scenario(units, devs=CAMP, state={"fronts": [{"hex": [0, 0], "dir": 0}]},
                         action=act("attack", 10, target=20), seed=4))
    assert ans["numbers"]["flank"] == flank and ans["numbers"]["flank_dice"] == dice


@pytest.mark.parametrize(("profile", "steps", "ok"), [("infantry", 3, True), ("infantry", 4, False), ("archer", 2, True),
                                                      ("archer", 3, False), ("cavalry", 4, True),
                                                      ("cavalry", 5, False)])
def test_movement_per_knight(profile: str, steps: int, ok: bool) -> None:
    ans = judge(scenario([unit(10, profile, "red", -3, 0)], brd=board("land", 3), state={"phase": "build"},
                         action=act("move", 10, to=[-3 + steps, 0])))
    assert (ans["outcome"] == "legal") is ok


@pytest.mark.parametrize(("to", "why"), [((0, 0), "sea, not land"), ((3, 0), "off the map"),
                                          ((1, 0), "mountain")])
def test_a_refused_move_names_the_terrain(to: tuple[int, int], why: str) -> None:
    brd = board(**{"0_0": "sea", "1_0": "mountain"})
    ans = judge(scenario([unit(10, "infantry", "red", -1, 0)], brd=brd, state={"phase": "build"},
                         action=act("move", 10, to=list(to))))
    assert ans["outcome"] == "illegal" and why in messages(ans)


def test_weighted_occupancy_fort_artillery_prisoners() -> None:
    fort = [((0, 0), "fort", "red")]
    one = judge(scenario([unit(10, "infantry", "red", 1, 0)], devs=fort, state={"phase": "build"},
                         action=act("move", 10, to=[0, 0])))
    two = judge(scenario([unit(10, "infantry", "red", 1, 0), unit(11, "infantry", "red", 0, 0)], devs=fort,
                         state={"phase": "build"}, action=act("move", 10, to=[0, 0])))
    gun = judge(scenario([unit(10, "infantry", "red", 1, 0), unit(11, "artillery", "red", 0, 0),
                          unit(12, "infantry", "red", 0, 0)], state={"phase": "build"}, action=act("move", 10, to=[0, 0])))
    held = judge(scenario([unit(10, "infantry", "red", 1, 0), unit(11, "infantry", "red", 0, 0),
                           unit(12, "infantry", "red", 0, 0), unit(20, "infantry", "blue", 0, 0, captor="red")],
                          state={"phase": "build"}, action=act("move", 10, to=[0, 0])))
    assert [a["outcome"] for a in (one, two, gun, held)] == ["legal", "illegal", "illegal", "legal"]


def test_victory_tokens_question_counts_what_the_walls_and_buildings_already_earn() -> None:
    ring = [((0, 0, d), "red") for d in range(6)]
    devs = [((0, 0), "castle", "red"), ((1, 0), "fort", "red"), ((2, 0), "encampment", "red")]
    ans = judge(scenario([unit(10, "infantry", "red", 1, 0)], walls=ring, devs=devs,
                         question={"kind": "victory_tokens"}))
    kinds = sorted(c["kind"] for c in ans["claims"] if c["player"] == "red")
    assert kinds == ["citadel", "complex", "great wall"]
    assert ans["numbers"]["tokens"] == {"red": 1 + 3 + 1, "blue": 0}
    four = judge(scenario([unit(10, "infantry", "red", 0, 0)], walls=ring[:4], question={"kind": "victory_tokens"}))
    assert four["numbers"]["tokens"] == {"red": 0, "blue": 0}
    claimed = scenario([unit(10, "infantry", "red", 0, 0)], walls=ring[:5], question={"kind": "victory_tokens"},
                       state={"claims": [{"player": "red", "kind": "great wall", "tokens": 1}]})
    assert judge(claimed)["numbers"]["tokens"] == {"red": 1, "blue": 0}  # once per game
