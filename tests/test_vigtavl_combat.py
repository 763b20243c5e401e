"""Vigtavl combat, walls, freighters, artillery, results, tactics and retaliation: one test per rule clause.

Dice come from random.Random(seed); expected rolls are replayed here from the same seed, independently."""

from __future__ import annotations

import random

from rules.engine import Action, find_game
from rules.vigtavl.judge import build_position
from tests.vigtavl_positions import act, board, judge, messages, rules_of, scenario, unit

GAME = find_game("vigtavl")
CAMP = [((2, -2), "encampment", "red")]  # red needs a development to hold prisoners


def replay(seed: int, *counts: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    return [tuple(rng.randint(1, 6) for _ in range(n)) for n in counts]


def verdict(ans: dict, rule: str) -> dict:
    return next(v for v in ans["verdicts"] if v["rule"] == rule)


def test_close_combat_dice_equal_cost_highest_wins() -> None:
    units = [unit(10, "cavalry", "red", -1, 0), unit(20, "archer", "blue", 0, 0)]
    for seed in range(6):
        ans = judge(scenario(units, devs=CAMP, action=act("attack", 10, target=20)), seed=seed)
        close = verdict(ans, "vigtavl.combat.close")["numbers"]
        a, d = replay(seed, 3, 2)
        if max(a) == max(d):
            continue
        assert close["attack_dice"] == 3 and close["defend_dice"] == 2
        assert close["attacker_rolls"][0] == list(a) and close["defender_rolls"][0] == list(d)
        assert close["winner"] == ("attacker" if max(a) > max(d) else "defender")


def test_close_combat_ties_rerolled() -> None:
    seed = next(s for s in range(200) if max(replay(s, 1, 1)[0]) == max(replay(s, 1, 1)[1]))
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge(scenario(units, devs=CAMP, action=act("attack", 10, target=20)), seed=seed)
    close = verdict(ans, "vigtavl.combat.close")["numbers"]
    assert close["rerolls"] >= 1
    rolls = replay(seed, *([1, 1] * (close["rerolls"] + 1)))
    assert close["attacker_rolls"] == [list(r) for r in rolls[0::2]]
    assert close["defender_rolls"] == [list(r) for r in rolls[1::2]]
    assert close["attacker_rolls"][0] == close["defender_rolls"][0]
    assert close["attacker_high"] != close["defender_high"]


def test_ranged_attack_accuracy_by_range() -> None:
    for target, rng_, face in (((-1, 0), 1, 3), ((0, 0), 2, 2), ((1, 0), 3, 1)):
        units = [unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", *target)]
        for seed in (1, 2, 3):
            ans = judge(scenario(units, devs=CAMP, action=act("attack", 10, target=20, mode="ranged")), seed=seed)
            n = verdict(ans, "vigtavl.combat.ranged")["numbers"]
            rolls = replay(seed, 2)[0]
            assert (n["range"], n["hit_on"], n["rolls"]) == (rng_, face, list(rolls))
            assert n["hit"] == any(r <= face for r in rolls)
            assert (ans["after"]["units"]["20"]["captor"] == "red") == n["hit"]


def test_ranged_attack_only_on_straight_lines() -> None:
    units = [unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", 0, -1)]
    ans = judge(scenario(units, devs=CAMP, action=act("attack", 10, target=20)))
    assert ans["outcome"] == "illegal" and verdict(ans, "vigtavl.combat.ranged.line")["numbers"] == {"distance": 2, "range": 3}


def test_ranged_attack_range_at_most_three() -> None:
    units = [unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", 2, 0)]
    ans = judge(scenario(units, devs=CAMP, action=act("attack", 10, target=20)))
    assert ans["outcome"] == "illegal" and ans["numbers"]["distance"] == 4


def test_ranged_attack_blocked_by_mountain() -> None:
    units = [unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge(scenario(units, brd=board(m1_0="mountain"), devs=CAMP, action=act("attack", 10, target=20)))
    assert ans["outcome"] == "illegal" and ans["numbers"]["blocked_by"] == ["mountain at [-1, 0]"]


def test_ranged_attack_blocked_by_wall() -> None:
    units = [unit(10, "archer", "red", -2, 0), unit(20, "infantry", "blue", 0, 0)]
    blue_wall = judge(scenario(units, walls=[((-1, 0, 0), "blue")], devs=CAMP, action=act("attack", 10, target=20)))
    assert blue_wall["outcome"] == "illegal" and "blue's wall" in blue_wall["numbers"]["blocked_by"][0]
    own_wall = judge(scenario(units, walls=[((-1, 0, 0), "red")], devs=CAMP, action=act("attack", 10, target=20)))
    assert own_wall["outcome"] == "legal"  # a player's own knights attack through his own walls


def test_galleon_fires_at_range_three_on_sea() -> None:
    units = [unit(10, "galleon", "red", -2, 0), unit(20, "caravel", "blue", 1, 0)]
    ans = judge(scenario(units, brd=board("sea"), action=act("attack", 10, target=20)), seed=4)
    n = verdict(ans, "vigtavl.combat.ranged")["numbers"]
    rolls = replay(4, 3)[0]
    assert n["attack_dice"] == 3 and n["range"] == 3 and n["rolls"] == list(rolls) and n["hit"] == (1 in rolls)


def test_opponent_wall_blocks_movement() -> None:
    brd = board("sea", m1_0="land", **{"0_0": "land"})
    units = [unit(10, "infantry", "red", -1, 0)]
    ans = judge(scenario(units, brd=brd, walls=[((-1, 0, 0), "blue")], state={"phase": "build"}, action=act("move", 10, to=[0, 0])))
    assert ans["outcome"] == "illegal"
    own = judge(scenario(units, brd=brd, walls=[((-1, 0, 0), "red")], state={"phase": "build"}, action=act("move", 10, to=[0, 0])))
    assert own["outcome"] == "legal"  # own knights move freely through their own walls


def test_close_combat_through_opponent_wall_refused() -> None:
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge(scenario(units, walls=[((0, 0, 3), "blue")], devs=CAMP, action=act("attack", 10, target=20)))
    assert ans["outcome"] == "illegal" and ans["verdicts"][0]["rule"] == "vigtavl.walls.attack"


def test_build_wall_on_edge_of_occupied_hex() -> None:
    ans = judge(scenario([unit(10, "infantry", "red", 0, 0)], state={"phase": "build"}, action=act("build", kind="wall", edge=[0, 0, 1])))
    assert ans["outcome"] == "legal" and ans["after"]["walls"] == [{"edge": [0, 0, 1], "owner": "red"}]
    far = judge(scenario([unit(10, "infantry", "red", 0, 0)], state={"phase": "build"}, action=act("build", kind="wall", edge=[2, -2, 4])))
    assert far["outcome"] == "illegal"


def test_move_wall_once_per_turn_at_no_cost() -> None:
    scn = scenario([unit(10, "infantry", "red", 0, 0)], walls=[((0, 0, 0), "red")], state={"phase": "build"},
                   action=act("move_wall", **{"from": [0, 0, 0], "to": [0, 0, 2]}))
    ans = judge(scn)
    assert ans["outcome"] == "legal" and ans["after"]["gold"]["red"] == 6
    scn["state"]["wall_moved"] = True
    assert judge(scn)["outcome"] == "illegal"


def test_breach_succeeds_on_one_to_three() -> None:
    units = [unit(10, "cavalry", "red", -1, 0)]
    for seed in range(5):
        ans = judge(scenario(units, walls=[((-1, 0, 0), "blue")], action=act("breach", 10, edge=[-1, 0, 0])), seed=seed)
        n = ans["numbers"]
        rolls = replay(seed, 3)[0]
        assert n["dice"] == 3 and n["rolls"] == list(rolls) and n["breached"] == any(r <= 3 for r in rolls)
        assert (ans["after"]["walls"] == []) == n["breached"]


def test_breach_attrition_on_third_attempt() -> None:
    st = {"breach_tries": [{"player": "red", "edge": [-1, 0, 0], "count": 2}]}
    ans = judge(scenario([unit(10, "infantry", "red", -1, 0)], walls=[((-1, 0, 0), "blue")], state=st,
                         action=act("breach", 10, edge=[-1, 0, 0])), seed=9)
    assert ans["numbers"]["attempt"] == 3 and ans["numbers"]["dice"] == 3  # cost 1 + 2 attrition dice
    assert ans["numbers"]["rolls"] == list(replay(9, 3)[0])


def test_breach_needs_a_unit_beside_the_wall_with_actions_left() -> None:
    walls = [((-1, 0, 0), "blue")]
    far = judge(scenario([unit(10, "infantry", "red", -2, 0)], walls=walls, action=act("breach", 10, edge=[-1, 0, 0])))
    assert far["outcome"] == "illegal" and "adjacent to the wall" in messages(far)
    spent = judge(scenario([unit(10, "infantry", "red", -1, 0)], walls=walls, state={"spent": [10]},
                           action=act("breach", 10, edge=[-1, 0, 0])))
    assert spent["outcome"] == "illegal" and "exhausted" in messages(spent)


def test_ships_breach_coastal_walls() -> None:
    brd = board("land", **{"1_0": "sea"})
    ans = judge(scenario([unit(10, "caravel", "red", 1, 0)], brd=brd, walls=[((0, 0, 0), "blue")],
                         action=act("breach", 10, edge=[0, 0, 0])), seed=2)
    assert ans["outcome"] == "legal" and ans["numbers"]["dice"] == 1


SEA_EAST = board("land", **{"1_0": "sea", "2_0": "sea", "2_m1": "sea", "2_m2": "sea", "1_1": "sea", "0_2": "sea", "1_m1": "sea"})


def test_loading_knights_costs_one_movement() -> None:
    units = [unit(10, "infantry", "red", -2, 0), unit(11, "freighter", "red", 1, 0)]
    ok = judge(scenario(units, brd=SEA_EAST, state={"phase": "build"}, action=act("load", 10, freighter=11)))
    assert ok["outcome"] == "legal" and ok["numbers"]["cost"] == 3  # 2 steps to (0, 0) and 1 to board
    assert ok["after"]["units"]["10"]["aboard"] == 11
    cav = [unit(10, "archer", "red", -2, 0), unit(11, "freighter", "red", 1, 0)]
    far = judge(scenario(cav, brd=SEA_EAST, state={"phase": "build"}, action=act("load", 10, freighter=11)))
    assert far["outcome"] == "illegal"  # an archer's 2 movement cannot walk 2 and board


def test_freighter_carries_at_most_three() -> None:
    units = [unit(11, "freighter", "red", 1, 0)] + [unit(20 + i, "infantry", "red", aboard=11) for i in range(3)]
    units.append(unit(10, "infantry", "red", 0, 0))
    ans = judge(scenario(units, brd=SEA_EAST, state={"phase": "build"}, action=act("load", 10, freighter=11)))
    assert ans["outcome"] == "illegal" and ans["numbers"] == {"aboard": 3}


def test_knights_embark_and_disembark_in_the_same_move() -> None:
    rng = random.Random(0)
    state, _ = build_position(GAME, scenario(
        [unit(10, "infantry", "red", 0, 0), unit(11, "freighter", "red", 1, 0)], brd=SEA_EAST, state={"phase": "build"}))
    r1 = GAME.apply(state, {}, Action("load", 10, {"freighter": 11}), rng)
    assert r1.legal and r1.state.now.open_move(10) == 1
    r2 = GAME.apply(r1.state, {}, Action("move", 11, {"to": [2, -2]}), rng)
    assert r2.legal and r2.state.where(r2.state.piece(10)) .__eq__(r2.state.piece(11).hex)  # type: ignore[union-attr]
    r3 = GAME.apply(r2.state, {}, Action("unload", 10, {"to": [1, -2]}), rng)
    assert r3.legal, [v.message for v in r3.verdicts]
    assert r3.verdicts[0].numbers["budget"] == 2  # 3 movement, 1 spent boarding
    assert r3.state.silver == (6 - 1 - 2, 0)  # infantry 1 silver, freighter 2 silver: one activation each


def test_archers_aboard_freighter_attack_ships() -> None:
    units = [unit(11, "freighter", "red", 2, 0), unit(12, "archer", "red", aboard=11), unit(13, "infantry", "red", aboard=11),
             unit(20, "caravel", "blue", 2, -2)]
    ans = judge(scenario(units, brd=SEA_EAST, action=act("attack", 12, target=20)), seed=1)
    assert ans["outcome"] == "legal" and verdict(ans, "vigtavl.combat.ranged")["numbers"]["range"] == 2
    foot = judge(scenario(units, brd=SEA_EAST, action=act("attack", 13, target=20)))
    assert foot["outcome"] == "illegal" and "Only archers aboard" in messages(foot)


def test_freighter_cannot_attack() -> None:
    units = [unit(11, "freighter", "red", 1, 0), unit(20, "caravel", "blue", 2, 0)]
    ans = judge(scenario(units, brd=SEA_EAST, action=act("attack", 11, target=20)))
    assert ans["outcome"] == "illegal" and "freighter can not attack" in messages(ans)


def test_artillery_fired_by_knight_uses_attack_action() -> None:
    units = [unit(10, "infantry", "red", -2, 0), unit(11, "artillery", "red", -2, 0), unit(20, "cavalry", "blue", 0, 0)]
    ans = judge(scenario(units, devs=CAMP, action=act("fire_artillery", 10, artillery=11, target=20)), seed=6)
    n = verdict(ans, "vigtavl.combat.ranged")["numbers"]
    rolls = replay(6, 2)[0]
    assert (n["attack_dice"], n["range"], n["hit_on"], n["rolls"]) == (2, 2, 2, list(rolls))
    again = judge(scenario(units, devs=CAMP, state={"active": 10, "used": {"10": ["attack"]}},
                           action=act("fire_artillery", 10, artillery=11, target=20)))
    assert again["outcome"] == "illegal" and again["verdicts"][0]["rule"] == "vigtavl.activation.unique"
    alone = judge(scenario([unit(10, "infantry", "red", -1, 0), *units[1:]], devs=CAMP,
                           action=act("fire_artillery", 10, artillery=11, target=20)))
    assert alone["outcome"] == "illegal" and "knight's hex" in messages(alone)


def test_artillery_moved_by_a_knight() -> None:
    units = [unit(10, "cavalry", "red", -2, 0), unit(11, "artillery", "red", -2, 0)]
    ans = judge(scenario(units, state={"phase": "build"}, action=act("move", 10, to=[2, 0], tow=11)))
    assert ans["outcome"] == "legal" and ans["after"]["units"]["11"]["hex"] == [2, 0]
    alone = judge(scenario(units, state={"phase": "build"}, action=act("move", 11, to=[0, 0])))
    assert alone["outcome"] == "illegal"


def test_artillery_seized_when_no_knight_defends() -> None:
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "artillery", "blue", 0, 0)]
    ans = judge(scenario(units, action=act("seize", 10, hex=[0, 0], target="artillery")))
    assert ans["outcome"] == "legal" and ans["after"]["units"]["20"]["owner"] == "red"
    guarded = judge(scenario(units + [unit(21, "infantry", "blue", 0, 0)], action=act("seize", 10, hex=[0, 0], target="artillery")))
    assert guarded["outcome"] == "illegal" and "defended by knight 21" in messages(guarded)


def _win_seed(units: list[dict], devs: list, action: dict, brd: dict | None = None) -> dict:
    for seed in range(60):
        ans = judge(scenario(units, devs=devs, brd=brd, action=action), seed=seed)
        if verdict(ans, "vigtavl.combat.close")["numbers"]["winner"] == "attacker":
            return ans
    raise AssertionError("no seed gave the attacker a win")


def test_land_victory_captures_to_nearest_development() -> None:
    units = [unit(10, "cavalry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    devs = [((2, -2), "encampment", "red"), ((-2, 0), "fort", "red")]
    ans = _win_seed(units, devs, act("attack", 10, target=20))
    assert ans["after"]["units"]["20"]["captor"] == "red" and ans["after"]["units"]["20"]["hex"] == [-2, 0]
    assert ans["after"]["tokens"]["red"] == 1  # Battle: the defeated unit's value


def test_no_capture_without_a_development() -> None:
    units = [unit(10, "cavalry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge(scenario(units, action=act("attack", 10, target=20)))
    assert ans["outcome"] == "illegal" and "no developments" in messages(ans)


def test_sea_victory_sinks_to_graveyard() -> None:
    units = [unit(10, "caravel", "red", -1, 0), unit(20, "freighter", "blue", 0, 0), unit(21, "infantry", "blue", aboard=20)]
    ans = _win_seed(units, [], act("attack", 10, target=20), brd=board("sea"))
    assert ans["after"]["units"]["20"]["sunk_by"] == "red" and ans["after"]["units"]["21"]["sunk_by"] == "red"
    assert ans["after"]["tokens"]["red"] == 2


def test_occupation_after_a_won_battle() -> None:
    units = [unit(10, "cavalry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = _win_seed(units, CAMP, act("attack", 10, target=20, occupy=True))
    assert ans["after"]["units"]["10"]["hex"] == [0, 0]


def test_defend_by_weaker_adjacent_unit() -> None:
    # blue's caravel... on land: blue infantry at (0, -1) is adjacent to attacker (-1, 0)? no: use (-1, 1)
    units = [unit(10, "cavalry", "red", -1, 0), unit(20, "cavalry", "blue", 0, 0), unit(21, "infantry", "blue", -1, 1)]
    ans = _win_seed(units, CAMP, act("attack", 10, target=20, defender=21))
    assert ans["after"]["units"]["21"]["captor"] == "red" and ans["after"]["units"]["20"]["captor"] is None
    far = judge(scenario([*units[:2], unit(21, "infantry", "blue", 1, 0)], devs=CAMP, action=act("attack", 10, target=20, defender=21)))
    assert far["outcome"] == "illegal" and "adjacent to both" in messages(far)


def test_seize_development_conquer_tokens() -> None:
    units = [unit(10, "infantry", "red", -1, 0)]
    devs = [((0, 0), "fort", "blue"), ((2, -2), "encampment", "blue")]
    ans = judge(scenario(units, devs=devs, action=act("seize", 10, hex=[0, 0], occupy=True)))
    assert ans["outcome"] == "legal" and ans["after"]["tokens"] == {"red": 2, "blue": 0}
    assert {"hex": [0, 0], "kind": "fort", "owner": "red"} in ans["after"]["developments"]
    assert ans["after"]["units"]["10"]["hex"] == [0, 0]


def test_seizing_last_development_gives_three_more() -> None:
    ans = judge(scenario([unit(10, "infantry", "red", -1, 0)], devs=[((0, 0), "castle", "blue")], action=act("seize", 10, hex=[0, 0])))
    assert ans["after"]["tokens"]["red"] == 3 + 3


def test_seize_defended_development_refused() -> None:
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "infantry", "blue", -1, 1)]  # adjacent to both
    ans = judge(scenario(units, devs=[((0, 0), "fort", "blue")], action=act("seize", 10, hex=[0, 0])))
    assert ans["outcome"] == "illegal" and ans["numbers"] == {"defenders": [20]}


def test_walls_change_owner_on_seize_unless_owner_beside() -> None:
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "infantry", "blue", 1, 0)]
    walls = [((0, 0, 0), "blue"), ((0, 0, 2), "blue")]  # east edge faces blue's unit at (1, 0); north-west edge does not
    ans = judge(scenario(units, devs=[((0, 0), "encampment", "blue")], walls=walls, action=act("seize", 10, hex=[0, 0])))
    assert ans["outcome"] == "legal"
    owners = {tuple(w["edge"]): w["owner"] for w in ans["after"]["walls"]}
    assert owners == {(0, 0, 0): "blue", (0, 0, 2): "red"}


def test_rescue_when_seizing_development_with_prisoners() -> None:
    units = [unit(10, "infantry", "red", -1, 0), unit(11, "cavalry", "red", 0, 0, captor="blue"),
             unit(30, "archer", "green", 0, 0, captor="blue")]
    scn = scenario(units, devs=[((0, 0), "fort", "blue"), ((2, -2), "fort", "blue")], action=act("seize", 10, hex=[0, 0]))
    scn["state"]["players"] = ["red", "blue", "green"]
    ans = judge(scn)
    assert ans["after"]["units"]["11"]["captor"] is None and ans["after"]["units"]["30"]["captor"] == "red"
    assert ans["after"]["tokens"]["red"] == 2 + 3  # conquer the fort (2) + rescue the cavalry (3)


def test_retaliation_one_silver_one_unit_no_build() -> None:
    rng = random.Random(0)
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "infantry", "blue", 1, 0), unit(21, "cavalry", "blue", 1, -1)]
    state, _ = build_position(GAME, scenario(units, devs=[((0, 0), "fort", "blue")]))
    r1 = GAME.apply(state, {}, Action("seize", 10, {"hex": [0, 0]}), rng)
    assert r1.legal and r1.state.now.retaliating == "blue" and r1.state.silver == (6, 1)
    build = GAME.apply(r1.state, {}, Action("build", None, {"kind": "wall", "edge": [1, 0, 0]}), rng)
    assert not build.legal and build.verdicts[0].rule == "vigtavl.retaliation.build"
    rich = GAME.apply(r1.state, {}, Action("move", 21, {"to": [2, -1]}), rng)
    assert not rich.legal and rich.verdicts[0].numbers == {"cost": 3, "silver": 1}
    resize = GAME.apply(r1.state, {}, Action("seize", 20, {"hex": [0, 0]}), rng)
    assert not resize.legal and resize.verdicts[0].rule == "vigtavl.retaliation.seize"
    move = GAME.apply(r1.state, {}, Action("move", 20, {"to": [2, 0]}), rng)
    assert move.legal and move.state.silver == (6, 0)
    done = GAME.apply(move.state, {}, Action("end_retaliation"), rng)
    assert done.state.now.retaliating is None and done.state.player == "red"


def test_flanking_dice_by_direction() -> None:
    # the front of (0, 0) faces direction 0 (east); attacks from the other sides add 1, 2 or 3 dice
    for side, at, extra, name in ((0, (1, 0), 0, "front"), (1, (1, -1), 1, "flank"), (2, (0, -1), 2, "rear flank"), (3, (-1, 0), 3, "rear")):
        units = [unit(10, "infantry", "red", *at), unit(20, "infantry", "blue", 0, 0)]
        ans = judge(scenario(units, devs=CAMP, state={"fronts": [{"hex": [0, 0], "dir": 0}]}, action=act("attack", 10, target=20)))
        n = verdict(ans, "vigtavl.combat.close")["numbers"]
        assert (n["flank"], n["flank_dice"], n["attack_dice"]) == (name, extra, 1 + extra), side


def test_feint_front_set_by_first_attack() -> None:
    rng = random.Random(3)
    units = [unit(10, "infantry", "red", 1, 0), unit(11, "infantry", "red", -1, 0), unit(20, "cavalry", "blue", 0, 0)]
    state, _ = build_position(GAME, scenario(units, devs=CAMP))
    first = GAME.apply(state, {}, Action("attack", 10, {"target": 20}), rng)
    assert first.state.now.front_of(__import__("rules.hexgrid", fromlist=["Hex"]).Hex(0, 0)) == 0
    assert next(v for v in first.verdicts if v.rule == "vigtavl.combat.close").numbers["flank"] == "front"
    second = GAME.apply(first.state, {}, Action("attack", 11, {"target": 20}), rng)
    n = next(v for v in second.verdicts if v.rule == "vigtavl.combat.close").numbers
    assert n["flank"] == "rear" and n["attack_dice"] == 4


def test_attrition_third_attack_same_direction() -> None:
    st = {"fronts": [{"hex": [0, 0], "dir": 3}], "attacks": [{"player": "red", "hex": [0, 0], "dir": 3, "count": 2}]}
    units = [unit(10, "infantry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge(scenario(units, devs=CAMP, state=st, action=act("attack", 10, target=20)))
    n = verdict(ans, "vigtavl.combat.close")["numbers"]
    assert (n["attempt"], n["attrition_dice"], n["attack_dice"]) == (3, 2, 3)


def test_overwhelm_at_six_dice() -> None:
    units = [unit(10, "cavalry", "red", -1, 0), unit(20, "infantry", "blue", 0, 0)]
    ans = judge(scenario(units, devs=CAMP, state={"fronts": [{"hex": [0, 0], "dir": 0}]}, action=act("attack", 10, target=20)))
    assert "vigtavl.tactics.overwhelm" in rules_of(ans) and "vigtavl.combat.close" not in rules_of(ans)
    assert ans["numbers"]["attack_dice"] == 6 and ans["after"]["units"]["20"]["captor"] == "red"
    five = judge(scenario([unit(10, "archer", "red", -1, 0), units[1]], devs=CAMP,
                          state={"fronts": [{"hex": [0, 0], "dir": 0}]}, action=act("attack", 10, target=20)))
    assert "vigtavl.tactics.overwhelm" not in rules_of(five) and five["numbers"]["attack_dice"] == 5


def test_surrender_when_surrounded() -> None:
    # blue infantry on (0, 0) of a 7-hex island; red holds five neighbours and moves into the sixth
    brd = board("sea", **{"0_0": "land", "1_0": "land", "1_m1": "land", "0_m1": "land", "m1_0": "land", "m1_1": "land", "0_1": "land"})
    units = [unit(20, "infantry", "blue", 0, 0)] + [unit(10 + i, "infantry", "red", *h) for i, h in
                                                    enumerate([(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1)])]
    units.append(unit(16, "infantry", "red", 0, 1))
    devs = [((1, 0), "encampment", "red")]
    ans = judge(scenario(units, brd=brd, devs=devs, action=act("build", kind="wall", edge=[0, 1, 0])))
    assert "vigtavl.tactics.surrender" in rules_of(ans) and ans["after"]["units"]["20"]["captor"] == "red"
    gap = judge(scenario(units[:-1], brd=brd, devs=devs, action=act("build", kind="wall", edge=[1, 0, 0])))
    assert "vigtavl.tactics.surrender" not in rules_of(gap)  # (0, 1) is open: an escape route


def test_own_full_hex_blocks_escape_only_without_room_beyond() -> None:
    # blue on (0,0); its own full hex (0,1) leads on to open land at (0,2) unless red holds that too
    cells = {"0_0": "land", "1_0": "land", "1_m1": "land", "0_m1": "land", "m1_0": "land", "m1_1": "land", "0_1": "land", "0_2": "land"}
    brd = board("sea", **cells)
    red = [unit(10 + i, "infantry", "red", *h) for i, h in enumerate([(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1)])]
    blue = [unit(20, "infantry", "blue", 0, 0)] + [unit(21 + i, "infantry", "blue", 0, 1) for i in range(3)]
    devs = [((1, 0), "encampment", "red")]
    open_ = judge(scenario(red + blue, brd=brd, devs=devs, action=act("build", kind="wall", edge=[1, 0, 0])))
    assert "vigtavl.tactics.surrender" not in rules_of(open_)
    closed = judge(scenario(red + blue + [unit(16, "cavalry", "red", 0, 2)], brd=brd, devs=devs,
                            action=act("build", kind="wall", edge=[1, 0, 0])))
    sur = [v for v in closed["verdicts"] if v["rule"] == "vigtavl.tactics.surrender"]
    assert sur and sur[0]["numbers"]["units"] == [20]
