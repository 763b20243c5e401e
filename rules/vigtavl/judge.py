"""Judge one Vigtavl scenario (docs/scenarios/vigtavl.md): build the position, then rule on an action or answer
a question (occupancy, victory tokens, reachable cells, line of fire, map size, winds, stats).

Pieces are given by hex ("hex": [q, r]) or by table position ("at": [x, y] inches, snapped to the board's
layout; a base whose edge crosses a cell border makes the answer "too close to call").
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rules.engine import Action, Game, Json, Outcome, RulesInputError, ScenarioError, Verdict
from rules.hexgrid import Hex, straddle_words
from rules.roster import MM_PER_INCH
from rules.vigtavl.board import map_check, positions_of, scenario_board
from rules.vigtavl.combat import line_of_fire
from rules.vigtavl.moves import destinations, movement, wind_links
from rules.vigtavl.state import (
    Claim,
    Development,
    Piece,
    TurnState,
    VigtavlState,
    Wall,
    geography,
    parse_edge,
    piece_kind,
)
from rules.vigtavl.units import (
    DEVELOPMENT_KINDS,
    LAST_ROUND,
    OCCUPANCY_LIMIT,
    PHASES,
    RANGED_HIT_FACES,
    ROUNDS_PER_PHASE,
    STATS,
    STATS_HEADER,
    canonical,
)
from rules.vigtavl.victory import anytime_claims, end_awards, end_counts, leaders, standings, winner_names


def _hex(v: Any, where: str) -> Hex:
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(c, int) and not isinstance(c, bool) for c in v)):
        raise ScenarioError(f"{where} must be a hex [q, r] of two whole numbers; got {v!r}.")
    return Hex(v[0], v[1])


def _list(scenario: Mapping[str, Any], key: str) -> list[Any]:
    value = scenario.get(key, [])
    if not isinstance(value, list):
        raise ScenarioError(f'"{key}" must be a list; got {value!r}.')
    return value


def _whole(q: Mapping[str, Any], key: str, default: int, kind: str) -> int:
    value = q.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f'The {kind} question\'s "{key}" must be a whole number; got {value!r}.')
    return value


def _name_map(obj: Any, players: tuple[str, ...], key: str, default: dict[str, int]) -> tuple[int, ...]:
    if obj is None:
        return tuple(default.get(p, 0) for p in players)
    if not isinstance(obj, Mapping) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in obj.values()):
        raise ScenarioError(f'state.{key} must map player names to whole numbers, e.g. {{"red": 6}}; got {obj!r}.')
    unknown = set(obj) - set(players)
    if unknown:
        raise ScenarioError(f"state.{key} names {sorted(unknown)}, who are not among the players {list(players)}.")
    return tuple(int(obj.get(p, 0)) for p in players)


def build_position(game: Game, scenario: Mapping[str, Json]) -> tuple[VigtavlState, list[Verdict]]:
    """The state a scenario describes, and any position verdicts (bases astride a cell border)."""
    st = scenario.get("state", {})
    if not isinstance(st, Mapping):
        raise ScenarioError('"state" must be an object (phase, player, gold, silver, ...).')
    board = scenario.get("board")
    if isinstance(board, Mapping) and "layout" not in board and "layout" in scenario:
        board = {**board, "layout": scenario["layout"]}
    cells, layout = scenario_board(board)
    g = geography(cells)
    units_in = scenario.get("units", [])
    if not isinstance(units_in, list):
        raise ScenarioError('"units" must be a list of {"tag", "profile", "owner", "hex" | "at"} objects.')
    players_in = st.get("players") or scenario.get("players")
    if players_in is None:
        names = [u.get("owner") for u in units_in if isinstance(u, Mapping)]
        names += [d.get("owner") for d in scenario.get("developments", []) if isinstance(d, Mapping)]
        players_in = list(dict.fromkeys(n for n in names if isinstance(n, str)))
        if len(players_in) < 2:
            players_in += [n for n in ("red", "blue") if n not in players_in][: 2 - len(players_in)]
    if not isinstance(players_in, list) or not all(isinstance(p, str) for p in players_in) or not players_in:
        raise ScenarioError('"state.players" must list the player names in seat order.')
    players = tuple(players_in)
    verdicts: list[Verdict] = []
    pieces: list[Piece] = []
    for i, u in enumerate(units_in):
        where = f"units[{i}]"
        if not isinstance(u, Mapping):
            raise ScenarioError(f'{where} must be an object like {{"tag": 10, "profile": "infantry", "owner": "red", "hex": [0, 0]}}.')
        tag = u.get("tag")
        if isinstance(tag, bool) or not isinstance(tag, int):
            raise ScenarioError(f'{where} has no whole-number "tag".')
        where = f"unit {tag}"
        kind = piece_kind(u.get("profile"), where)
        owner = u.get("owner")
        if owner not in players:
            raise ScenarioError(f'{where}: "owner" {owner!r} is not one of the players {list(players)}.')
        h: Hex | None = None
        if "hex" in u:
            h = _hex(u["hex"], f'{where}: "hex"')
        elif "at" in u:
            at = u["at"]
            if not (isinstance(at, list) and len(at) == 2
                    and all(isinstance(c, int | float) and not isinstance(c, bool) and abs(c) <= 10_000 for c in at)):
                raise ScenarioError(f'{where}: "at" must be [x, y] in inches; got {at!r}.')
            h, off = layout.from_table(float(at[0]), float(at[1]))
            base_mm = u.get("base_mm", 25.0)
            if isinstance(base_mm, bool) or not isinstance(base_mm, int | float) or not 0 < base_mm <= 1000:
                raise ScenarioError(f'{where}: "base_mm" must be the base diameter in mm, e.g. 25; got {base_mm!r}.')
            radius = float(base_mm) / MM_PER_INCH / 2.0
            if layout.astride(float(at[0]), float(at[1]), radius):
                verdicts.append(Verdict("vigtavl.position", Outcome.TOO_CLOSE_TO_CALL,
                                        f"Unit {tag}'s base stands "
                                        f"{straddle_words(g.terrain, layout, float(at[0]), float(at[1]), radius)} "
                                        f"({layout.edge_clearance(float(at[0]), float(at[1])):.2f}\" from the border, base radius "
                                        f"{radius:.2f}\"): move it fully inside one cell.", tag,
                                        {"offset_in": round(off, 3)}))
        aboard = u.get("aboard")
        captor = u.get("captor")
        sunk = u.get("sunk_by")
        if h is None and aboard is None and sunk is None and not u.get("unplaced", False):
            raise ScenarioError(f'{where} needs "hex": [q, r], "at": [x, y], "aboard": tag or "sunk_by": player.')
        if h is not None and g.kind(h) is None:
            raise ScenarioError(f"{where} stands on [{h.q}, {h.r}], which is not a cell of the board.")
        pieces.append(Piece(tag, kind, str(owner), h, aboard if isinstance(aboard, int) else None,
                            captor if isinstance(captor, str) else None, sunk if isinstance(sunk, str) else None))
    if len({p.id for p in pieces}) != len(pieces):
        raise ScenarioError("Two units share a tag; give every base its own tag id.")
    ids = {p.id for p in pieces}
    for p in pieces:
        if p.aboard is not None and p.aboard not in ids:
            raise ScenarioError(f'unit {p.id} is "aboard" {p.aboard}, which is not one of the units; add that ship.')
    devs = []
    for i, d in enumerate(_list(scenario, "developments")):
        if not isinstance(d, Mapping):
            raise ScenarioError(f"developments[{i}] must be an object with hex, kind and owner.")
        dkind = canonical(str(d.get("kind", "")))
        if dkind is None or dkind not in DEVELOPMENT_KINDS:
            raise ScenarioError(f'developments[{i}]: "kind" must be encampment, fort or castle; got {d.get("kind")!r}.')
        if d.get("owner") not in players:
            raise ScenarioError(f'developments[{i}]: "owner" {d.get("owner")!r} is not one of the players.')
        devs.append(Development(_hex(d.get("hex"), f'developments[{i}]: "hex"'), dkind, str(d["owner"])))
    walls = []
    for i, w in enumerate(_list(scenario, "walls")):
        if not isinstance(w, Mapping) or w.get("owner") not in players:
            raise ScenarioError(f'walls[{i}] must be {{"edge": [q, r, dir], "owner": player}}.')
        walls.append(Wall(parse_edge(w.get("edge", w), f"walls[{i}]"), str(w["owner"])))
    rnd = st.get("round")
    phase = st.get("phase", "battle")
    if rnd is None:
        if phase not in PHASES:
            raise ScenarioError(f'state.phase must be one of {", ".join(PHASES)}; got {phase!r}.')
        rnd = PHASES.index(phase) * ROUNDS_PER_PHASE + 1
    if isinstance(rnd, bool) or not isinstance(rnd, int) or not 1 <= rnd <= LAST_ROUND + 1:
        raise ScenarioError(f"state.round must be 1 to {LAST_ROUND}; got {rnd!r}.")
    player = str(st.get("player", players[0]))
    if player not in players:
        raise ScenarioError(f"state.player {player!r} is not one of the players {list(players)}.")
    turn = players.index(player)
    income = {player: 6} if rnd > ROUNDS_PER_PHASE else {}
    winds = st.get("winds", "clockwise")
    if winds not in ("clockwise", "counter-clockwise"):
        raise ScenarioError(f'state.winds must be "clockwise" or "counter-clockwise"; got {winds!r}.')
    now = _turn_state(st, players)
    claims = tuple(
        Claim(str(c["player"]), str(c["kind"]), int(c["tokens"]), str(c.get("note", "")))
        for c in st.get("claims", []) if isinstance(c, Mapping)
    )
    state = VigtavlState(
        cells=cells, layout=layout, players=players, winds=winds, round=rnd, turn=turn,
        gold=_name_map(st.get("gold"), players, "gold", income),
        silver=_name_map(st.get("silver"), players, "silver", income),
        pieces=tuple(sorted(pieces, key=lambda p: p.id)), developments=tuple(devs), walls=tuple(walls),
        claims=claims, now=now,
    )
    if now.retaliating is not None:
        state = replace(state, silver=_name_map(st.get("silver"), players, "silver", {now.retaliating: 1}))
    return state, verdicts


def _player_or_none(value: Any, players: tuple[str, ...], key: str) -> str | None:
    if value is not None and (not isinstance(value, str) or value not in players):
        raise ScenarioError(f'state.{key} {value!r} is not one of the players {list(players)}.')
    return value


def _tag_or_none(value: Any, key: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ScenarioError(f'state.{key} must be the tag id of a unit; got {value!r}.')
    return value


def _turn_state(st: Mapping[str, Any], players: tuple[str, ...]) -> TurnState:
    try:
        used_in = st.get("used", {})
        return TurnState(
            built=tuple(st.get("built", ())),
            wall_moved=bool(st.get("wall_moved", False)),
            discharged=bool(st.get("discharged", False)),
            active=_tag_or_none(st.get("active"), "active"),
            used=tuple((int(k), tuple(v)) for k, v in used_in.items()),
            spent=tuple(int(u) for u in st.get("spent", ())),
            open_moves=tuple((int(k), int(v)) for k, v in st.get("open_moves", {}).items()),
            fronts=tuple((_hex(f["hex"], "state.fronts hex"), int(f["dir"])) for f in st.get("fronts", ())),
            attacks=tuple((str(a["player"]), _hex(a["hex"], "state.attacks hex"), int(a["dir"]), int(a["count"]))
                          for a in st.get("attacks", ())),
            breach_tries=tuple((str(b["player"]), parse_edge(b["edge"], "state.breach_tries edge"), int(b["count"]))
                               for b in st.get("breach_tries", ())),
            seized=tuple(_hex(h, "state.seized") for h in st.get("seized", ())),
            losers=tuple(st.get("losers", ())),
            retaliating=_player_or_none(st.get("retaliating"), players, "retaliating"),
        )
    except ScenarioError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ScenarioError(f"A field of \"state\" cannot be read ({err!s}); see docs/scenarios/vigtavl.md.") from None


def _summary(state: VigtavlState) -> dict[str, Json]:
    units = {}
    for p in state.pieces:
        units[str(p.id)] = {
            "kind": p.kind, "owner": p.owner, "hex": None if p.hex is None else [p.hex.q, p.hex.r],
            "aboard": p.aboard, "captor": p.captor, "sunk_by": p.sunk_by,
        }
    return {
        "units": units,
        "tokens": standings(state),
        "gold": dict(zip(state.players, state.gold)),
        "silver": dict(zip(state.players, state.silver)),
        "walls": [{"edge": [w.edge.hex.q, w.edge.hex.r, w.edge.dir], "owner": w.owner} for w in state.walls],
        "developments": [{"hex": [d.hex.q, d.hex.r], "kind": d.kind, "owner": d.owner} for d in state.developments],
        "round": state.round,
        "phase": state.phase,
        "player": state.player,
        "retaliating": state.now.retaliating,
    }


def _question(game: Game, state: VigtavlState, q: Mapping[str, Any]) -> tuple[list[Verdict], dict[str, Json], dict[str, Json]]:
    kind = q.get("kind")
    g = geography(state.cells)
    if kind == "occupancy":
        h = _hex(q.get("hex"), 'question "hex"')
        occ = state.occupancy(h)
        nums: dict[str, Json] = {
            "occupancy": occ, "limit": OCCUPANCY_LIMIT, "free": max(0, OCCUPANCY_LIMIT - occ),
            "units": [p.id for p in state.units_at(h)], "prisoners": [p.id for p in state.prisoners_at(h)],
            "development": (d.kind if (d := state.development_at(h)) else None),
        }
        v = Verdict("vigtavl.occupancy", Outcome.INFO, f"Hex [{h.q}, {h.r}] holds {occ} of {OCCUPANCY_LIMIT} "
                    "(encampment 1, fort and artillery 2, castle 3, prisoners 0).", None, nums)
        return [v], nums, {}
    if kind == "victory_tokens":
        final = bool(q.get("final", False))
        s = state
        for who in state.players:  # Citadel, Complex, Great Wall: claimed as soon as the position earns them
            s = anytime_claims(s, who)
        s = end_awards(s) if final else s
        table = standings(s)
        nums = {"tokens": table, "end_counts": end_counts(state)}
        extra = {"claims": [{"player": c.player, "kind": c.kind, "tokens": c.tokens, "note": c.note} for c in s.claims],
                 "leaders": leaders(s)}
        v = Verdict("vigtavl.victory", Outcome.INFO, "Victory tokens: " + ", ".join(f"{p} {n}" for p, n in table.items())
                    + (" (after the end-of-game awards)." if final else "."), None, nums)
        return [v], nums, extra
    if kind == "reachable":
        p = state.piece(_whole(q, "unit", -1, kind))
        if p is None or state.where(p) is None:
            raise ScenarioError('The reachable question needs "unit": the tag of a unit on the map.')
        start = state.where(p)
        assert start is not None
        dests = destinations(state, p, movement(p), start)
        cells = [[h.q, h.r] for h in sorted(dests)]
        nums = {"movement": movement(p), "count": len(cells)}
        v = Verdict("vigtavl.move.range", Outcome.INFO, f"{p.kind} {p.id} (movement {movement(p)}) can end on {len(cells)} hexes.",
                    p.id, nums)
        return [v], nums, {"cells": cells}
    if kind == "line_of_fire":
        p = state.piece(_whole(q, "unit", -1, kind))
        if p is None or state.where(p) is None:
            raise ScenarioError('The line_of_fire question needs "unit": the tag of a unit on the map.')
        start = state.where(p)
        assert start is not None
        target = _hex(q.get("target"), 'question "target"')
        gun = q.get("gun", p.kind)
        reach = STATS[gun].attack_range if gun in STATS else 0
        line = line_of_fire(state, start, target, p.owner, gun, max(reach, 1))
        if line is None:
            nums = {"straight": False, "range": reach}
            return [Verdict("vigtavl.combat.ranged.line", Outcome.ILLEGAL, f"[{target.q}, {target.r}] is not on a straight "
                            f"line through hex edges within range {reach}.", p.id, nums)], nums, {}
        nums = {"straight": True, "range": line.distance, "hit_on": RANGED_HIT_FACES[line.distance],
                "blocked_by": list(line.blocked_by), "direction": line.direction}
        ok = not line.blocked_by and reach > 0
        msg = ("Clear line at range " + str(line.distance) + f": a {RANGED_HIT_FACES[line.distance]} or less hits."
               if ok else f"Blocked: {'; '.join(line.blocked_by) or 'no attack range'}.")
        return [Verdict("vigtavl.combat.ranged.line", Outcome.LEGAL if ok else Outcome.ILLEGAL, msg, p.id, nums)], nums, {}
    if kind == "map":
        v = map_check(state.cells, _whole(q, "players", len(state.players), kind))
        return [v], dict(v.numbers), {}
    if kind == "winds":
        h = _hex(q.get("hex"), 'question "hex"')
        links = wind_links(state, h)
        nums = {"count": len(links), "sides": sorted(g.sides.get(h, ()))}
        v = Verdict("vigtavl.winds", Outcome.INFO, f"From [{h.q}, {h.r}] the {state.winds} winds reach {len(links)} border sea "
                    "hexes on the next side (2 movement: 1 to enter, 1 to exit).", None, nums)
        return [v], nums, {"cells": [[x.q, x.r] for x in links]}
    if kind == "stats":
        name = canonical(str(q.get("profile", "")))
        if name is None:
            raise ScenarioError(f'The stats question needs "profile": a Vigtavl piece; got {q.get("profile")!r}.')
        row = STATS[name]
        nums = {"cost": row.cost, "per_turn": row.per_turn, "owned": row.owned, "attack_range": row.attack_range,
                "movement": row.movement}
        return [Verdict("vigtavl.stats", Outcome.INFO, f"{row.row}: " + ", ".join(STATS_HEADER[1:]) + " as the stats table.",
                        None, nums)], nums, {}
    raise ScenarioError(f"Unknown Vigtavl question {kind!r}; use occupancy, victory_tokens, reachable, line_of_fire, "
                        "map, winds or stats.")


def judge(game: Game, scenario: Mapping[str, Json], rng: random.Random | None) -> dict[str, Json]:
    """Answer one scenario: {"game", "action", "outcome", "verdicts", "numbers", "after", "rolls", ...}.

    The dice are the action's "rolls" (rules/dice.py); `rng` (the scenario's "seed") rolls the ones not given, and
    without it a missing roll is answered as waiting: outcome "waiting" and "pending", the roll asked for. An
    action that ends the game adds "winner" (None for a draw) and "over"."""
    state, verdicts = build_position(game, scenario)
    answer: dict[str, Json] = {"game": "vigtavl"}
    if "question" in scenario:
        q = scenario["question"]
        if not isinstance(q, Mapping) or not isinstance(q.get("kind"), str):
            raise ScenarioError('"question" must be an object with a "kind".')
        more, numbers, extra = _question(game, state, q)
        verdicts += more
        answer.update(extra)
        answer["action"] = q["kind"]
        default = Outcome.INFO
    elif "action" in scenario:
        try:
            action = Action.from_json(scenario["action"])
        except RulesInputError as err:
            raise ScenarioError(str(err)) from None
        res = game.apply(state, positions_of(state), action, rng)
        verdicts += list(res.verdicts)
        numbers = {}
        for v in res.verdicts:
            numbers.update(v.numbers)
        answer["action"] = action.kind
        answer["after"] = _summary(res.state)
        answer["overlays"] = [o.to_json() for o in res.overlays]
        answer["rolls"] = [r.to_json() for r in res.rolls]
        if res.pending is not None:
            answer["pending"] = res.pending.to_json()
        if game.is_over(res.state) and not game.is_over(state):
            answer["over"] = True
            answer["winner"] = winner_names(res.state)
        default = Outcome.LEGAL
    else:
        raise ScenarioError('A Vigtavl scenario needs an "action" or a "question".')
    outcomes = {v.outcome for v in verdicts}
    if Outcome.ILLEGAL in outcomes:
        outcome = Outcome.ILLEGAL
    elif Outcome.TOO_CLOSE_TO_CALL in outcomes:
        outcome = Outcome.TOO_CLOSE_TO_CALL
    elif Outcome.WAITING in outcomes:
        outcome = Outcome.WAITING
    else:
        outcome = default
    answer.update({"outcome": outcome.value, "verdicts": [v.to_json() for v in verdicts], "numbers": numbers})
    return answer
