"""Vigtavl victory tokens (all nine kinds), random legal play, and every documented scenario."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rules.engine import Outcome, find_game
from tests.scenario_docs import examples, subset_mismatches
from tests.vigtavl_positions import act, board, judge, scenario, unit
from webui.commands.judge import scenario_dice

GAME = find_game("vigtavl")
DOC = Path(__file__).resolve().parent.parent / "docs" / "scenarios" / "vigtavl.md"


def claims(ans: dict, kind: str) -> list[int]:
    return [v["numbers"]["tokens"] for v in ans["verdicts"] if v["rule"] == f"vigtavl.victory.{kind}"]


def test_citadel_one_token_per_enclosed_hex() -> None:
    walls = [((0, 0, d), "red") for d in range(5)]
    ans = judge(scenario([unit(10, "infantry", "red", 0, 0)], walls=walls, state={"phase": "build"},
                         action=act("build", kind="wall", edge=[0, 0, 5])))
    assert claims(ans, "citadel") == [1] and claims(ans, "great_wall") == [1]  # six walls joined: a Great Wall too
    assert ans["after"]["tokens"]["red"] == 2


def test_citadel_needs_no_wall_beside_mountains() -> None:
    walls = [((0, 0, d), "red") for d in (1, 2, 3, 4)]  # (1, 0) east of (0, 0) is a mountain
    ans = judge(scenario([unit(10, "infantry", "red", 0, 0)], brd=board(**{"1_0": "mountain"}), walls=walls,
                         state={"phase": "build"}, action=act("build", kind="wall", edge=[0, 0, 5])))
    assert claims(ans, "citadel") == [1]


def test_citadel_counts_every_enclosed_hex_once_per_game() -> None:
    # enclose (0, 0) and (1, 0): the ring of 10 edges around the pair
    ring = [((0, 0, d), "red") for d in (1, 2, 3, 4, 5)] + [((1, 0, d), "red") for d in (0, 1, 2, 4)]
    scn = scenario([unit(10, "infantry", "red", 1, 0)], walls=ring, state={"phase": "build"},
                   action=act("build", kind="wall", edge=[1, 0, 5]))
    ans = judge(scn)
    assert claims(ans, "citadel") == [2]
    scn["state"]["claims"] = [{"player": "red", "kind": "citadel", "tokens": 1}]
    assert claims(judge(scn), "citadel") == []  # once per game per player


def test_complex_castle_fort_encampment_adjacent() -> None:
    devs = [((0, 0), "fort", "red"), ((1, 0), "encampment", "red")]
    ans = judge(scenario([unit(10, "infantry", "red", 0, 0)], devs=devs, state={"phase": "build"},
                         action=act("build", kind="castle", hex=[0, 1])))
    assert claims(ans, "complex") == [3]
    apart = judge(scenario([unit(10, "infantry", "red", -2, 0)], devs=devs, state={"phase": "build"},
                           action=act("build", kind="castle", hex=[-2, 1])))
    assert claims(apart, "complex") == []


def test_great_wall_length_five() -> None:
    walls = [((0, 0, d), "red") for d in range(4)]
    ans = judge(scenario([unit(10, "infantry", "red", 0, 0)], walls=walls, state={"phase": "build"},
                         action=act("build", kind="wall", edge=[0, 0, 4])))
    assert claims(ans, "great_wall") == [1] and claims(ans, "citadel") == []
    four = judge(scenario([unit(10, "infantry", "red", 0, 0)], walls=walls[:3], state={"phase": "build"},
                          action=act("build", kind="wall", edge=[2, -2, 4])))
    assert four["outcome"] == "illegal" or claims(four, "great_wall") == []


def test_end_awards_general_admiral_builder_with_ties() -> None:
    units = [unit(20, "infantry", "blue", 0, 0, captor="red"), unit(21, "caravel", "blue", sunk_by="red"),
             unit(11, "caravel", "red", sunk_by="blue")]
    devs = [((0, 0), "fort", "red"), ((1, 0), "encampment", "red"), ((-2, 0), "castle", "blue")]
    ans = judge(scenario(units, devs=devs, question={"kind": "victory_tokens", "final": True}))
    assert ans["numbers"]["end_counts"] == {"general": {"red": 1, "blue": 0}, "admiral": {"red": 1, "blue": 1},
                                            "builder": {"red": 2, "blue": 1}}
    assert ans["numbers"]["tokens"] == {"red": 9, "blue": 3}  # general 3 + admiral 3 (tie) + builder 3
    assert ans["leaders"] == ["red"]


def test_battle_conquer_rescue_tokens_add_up() -> None:
    st = {"claims": [{"player": "red", "kind": "battle", "tokens": 3}, {"player": "red", "kind": "conquer", "tokens": 2},
                     {"player": "blue", "kind": "rescue", "tokens": 1}]}
    ans = judge(scenario([], state=st, question={"kind": "victory_tokens"}))
    assert ans["numbers"]["tokens"] == {"red": 5, "blue": 1}


def test_random_legal_play_round_trips() -> None:
    rng = random.Random(11)
    state, pos = GAME.example(rng)
    for _ in range(40):
        assert GAME.load_state(json.loads(json.dumps(GAME.dump_state(state)))) == state
        acts = GAME.legal_actions(state, pos)
        assert acts
        res = GAME.apply(state, pos, rng.choice(acts), rng)
        assert all(v.outcome is not Outcome.ILLEGAL for v in res.verdicts)
        state, pos = res.state, res.positions


def test_overlays_show_reachable_cells_walls_and_attack_lines() -> None:
    from rules.vigtavl.judge import build_position

    state, _ = build_position(GAME, scenario([unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", 0, 0)],
                                             walls=[((0, 0, 1), "blue")]))
    shapes = GAME.overlays(state, {}, 10)
    styles = [o.style for o in shapes]
    assert styles.count("hex-reachable") == 8 and styles.count("wall") == 1 and styles.count("attack-line") == 1
    line = next(o for o in shapes if o.style == "attack-line")
    assert line.label == "range 2" and line.points[0] == state.layout.to_table(__import__("rules.hexgrid").hexgrid.Hex(-2, 0))


DOC_EXAMPLES = examples(DOC) if DOC.exists() else []


def test_doc_has_examples() -> None:
    assert len(DOC_EXAMPLES) >= 15


@pytest.mark.parametrize("title,scn,expected", DOC_EXAMPLES, ids=[e[0] for e in DOC_EXAMPLES])
def test_documented_scenario(title: str, scn: dict, expected: dict) -> None:
    answer = json.loads(json.dumps(GAME.judge(scn, scenario_dice(scn))))  # a seed rolls for us; none: the rolls given
    assert not subset_mismatches(expected, answer), subset_mismatches(expected, answer)
