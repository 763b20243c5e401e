"""Vigtavl v0.93 (Robert Carter Mills): medieval land and sea strategy on a hex map with walls on hex edges.

The game in one breath (seed "Vigtavl 0.93"): 2-4 players; a hexagonal map of land, sea and mountain (6, 7 or
8 hexes a side for 2, 3, 4 players); each player starts with 3 infantry, 2 archers, 1 cavalry, 3 caravels, 2
freighters and 1 galleon, the six knights loaded on the two freighters. Three phases of two rounds:
placement (ships put on sea hexes one at a time), build (build and manoeuvre, no attacks), battle (attacks
too). Each turn a player gets 6 gold (build) and 6 silver (activate a unit for its cost; 2 different actions:
move, attack), unspent gold and silver is lost. The rest is in the sibling modules:
vigtavl_units (stats table), vigtavl_moves (movement, occupancy, winds, freighters), vigtavl_combat (dice,
lines of fire, tactics), vigtavl_walls (walls, Great Wall, Citadel), vigtavl_victory (tokens).

The state is authoritative: positions returned are the centres of the pieces' hexes on the table (the board's
Layout); a scenario may give a piece by table position, snapped to its hex ("too close to call" when its base
stands astride a cell border).

Named options where the seed is silent or contradicts itself (ours, not the author's):
- "placement rounds": the placement phase is rounds 1-2: players place one ship each in turn (skipping a
  player with none left) until every ship is placed; then the build phase starts at round 3. Placement
  turns bring no gold or silver (nothing can be spent). The game ends after round 6.
- "income": "each player's turn" (Gold) and "each round" (Building Units) agree with one turn per round;
  6 gold and 6 silver are given at the start of each build- and battle-phase turn and lost at its end.
- "activation": the first action of a unit pays its activation; activating another unit finishes the one
  before (its unused action is forfeited). A knight that boarded a freighter this turn may later disembark
  with the movement it has left, as the same move (the seed's freighter exception); a freighter picking
  a knight up during its move activates that knight (its silver) and spends 1 of its movement.
- "move into battle": moving into another player's hex (battle phase) uses the move action, not the attack
  action; the defender is the named target or else the costliest unit there. If the mover wins but enemy
  units remain, or the hex cannot take it, it goes back to where it began.
- "defeat": the attacker who loses a battle is not captured (only Retreat applies); a defeated knight is
  captured to the victor's nearest developed hex (ties: the lowest hex), a defeated ship is sunk to the
  victor's graveyard with its passengers. A ranged hit defeats like a won battle; a miss does nothing.
- "capture needs a development": a player with no development may not attack a knight (it could not be
  captured) and his surrounding captures no knights.
- "defend": a weaker unit (lower cost) of the target's owner on a hex adjacent to both the attacker and
  the target may take the battle instead (params "defender"); freighters defend only themselves.
- "occupation": after a won close combat from an adjacent hex, params "occupy": true moves the victor onto
  the hex if no enemy units remain and occupancy allows; it is part of the attack, not a move.
- "seize, breach": both are hostile and allowed only in the battle phase; seizing needs no activation;
  breaching needs a knight or ship that is not laid down and has not breached this turn. A development is
  defended by the owner's units on it or on a hex adjacent to both it and the seizing unit; artillery is
  defended by an owner's knight on its hex. Walls on the seized hex's edges change owner unless the hex
  across that edge is occupied (units or a development) by the wall's owner.
- "freed prisoners": prisoners freed by a seizure stand on the hex (they do not count toward occupancy).
- "build": artillery is placed like a land unit and is not one of the 2 (3) combat units a turn; owning a
  castle on the map gives the third build. Developments: one per hex, on land. "Limit" per vigtavl_units.
- "surrender": after each action in the battle phase, a hex of another player's units surrenders when every
  adjacent land or sea hex on the map holds the acting player's units or the defender's own, at least one
  the acting player's, and none of the units there can reach, within its movement, a hex where it could
  end a move (entering no other player's hex). Knights are captured, ships sunk; it counts as a lost battle.
  "Unable to build" is not tested.
- "dice": every die is the players' input (the action's "rolls", rules/dice.py), taken in the order
  rules/vigtavl/combat.py gives (close combat: the attacker's dice, then the defender's, rolled by its owner; a tie
  asks both again); a roll not given waits for the players unless they chose "roll for us". Cocked dice and dice
  off the tray are the players' to roll again before they give the faces.
- "illegal takes no dice": faces given with an action ruled illegal are not counted (nor refused as leftovers);
  the illegal verdict says why the action fails.
- "winds": the seed's Prevailing Winds Token is flipped at setup, not rolled in play: the players give the side it
  showed as the setup's "winds" (`example()` flips it with its own generator).
- "camera": a knight aboard a freighter that the camera sees put down on land (or a mountain) is unloaded there; a
  knight put on a hex where its owner's freighter floats boards it (the first with room, by tag); a passenger seen
  at sea rides its freighter. Artillery is towed only when declared (the knight's move with "tow").
- "table fixes": every ruling that leaves the table showing something else, or adds or removes a piece, ends with
  what the players do, the hex named (rules/vigtavl/table_fix.py): "Put Cavalry 15 back on [-1, 0].", "The
  prisoner goes to [2, -2]: ...", "Take Caravel 16 off the table to red's ship graveyard.".
- "retaliation": the players who lost a battle or a development to the active player's unit retaliate
  when that unit finishes (both actions used, "finish", another unit activated, or the turn ended), in
  seat order: each gets 1 silver (lost afterwards) and may activate one unit; "end_retaliation" passes.
  Activating another unit while retaliation is owed is refused: "finish" first.
"""

from __future__ import annotations

import copy
import functools
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from rules.dice import ROLLS_KEY, DiceCup, RollPending
from rules.engine import (
    Action,
    ActionError,
    CellKind,
    Game,
    Json,
    Measured,
    OptionField,
    Outcome,
    Overlay,
    Panel,
    Positions,
    Result,
    RulesInputError,
    ScenarioError,
    Shape,
    StandardBoard,
    TurnStatus,
    UnitId,
    Verdict,
    counted,
    listed,
    register,
    takes_dice,
)
from rules.hexgrid import Cell, Edge, Hex, HexBoard, Layout, direction_between, distance, hex_words, neighbors
from rules.roster import parse_roster
from rules.vigtavl import standard
from rules.vigtavl import table_fix as fix
from rules.vigtavl.actions import candidates
from rules.vigtavl.board import map_check, positions_of, scenario_board
from rules.vigtavl.combat import breach_roll as roll_breach
from rules.vigtavl.combat import (
    close_combat,
    line_of_fire,
    overwhelms,
    ranged_hit,
    record_attack,
    side_toward,
    tactics,
)
from rules.vigtavl.judge import judge
from rules.vigtavl.moves import (
    boarding_cost,
    can_escape,
    destinations,
    enemy_units_at,
    held_by_other,
    may_end,
    movement,
    options,
    wind_links,
)
from rules.vigtavl.panel import panel as vigtavl_panel
from rules.vigtavl.state import (
    Development,
    Piece,
    TurnState,
    VigtavlState,
    Wall,
    dump,
    geography,
    load,
    parse_edge,
    piece_kind,
)
from rules.vigtavl.tryable import at_point, tryable
from rules.vigtavl.units import (
    ACTIONS_PER_ACTIVATION,
    BUILDS_PER_TURN,
    BUILDS_PER_TURN_WITH_CASTLE,
    COMBAT_UNITS,
    DEVELOPMENT_KINDS,
    FREIGHTER_CAPACITY,
    INCOME_GOLD,
    INCOME_SILVER,
    LAST_DEVELOPMENT_BONUS,
    LAST_ROUND,
    OCCUPANCY_LIMIT,
    OCCUPANCY_WEIGHT,
    RETALIATION_SILVER,
    ROUNDS_PER_PHASE,
    STARTING_UNITS,
    STATS,
    canonical,
    is_knight,
    is_ship,
)
from rules.vigtavl.victory import anytime_claims, end_awards, leaders, standings, winner_names
from rules.vigtavl.walls import blocks, may_wall

WINDS = ("clockwise", "counter-clockwise")
TURN_ACTIONS = ("build", "move_wall", "discharge", "end_turn")
RETALIATION_REFUSED = ("build", "move_wall", "discharge", "end_turn", "place")
PUT_BACK = ("move", "unload", "load", "place")
"""Actions the camera makes of a piece put down (camera_action): refused, the piece goes back where it stood."""


class Illegal(Exception):
    """Raised inside a handler: the declared action breaks a rule (becomes one ILLEGAL verdict)."""

    def __init__(self, rule: str, message: str, numbers: Mapping[str, Json] | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
        self.numbers = dict(numbers or {})


def _hx(h: Hex | None) -> list[int] | None:
    return None if h is None else [h.q, h.r]


def _called(p: Piece) -> str:
    """A piece as a sentence starts with it: "Caravel 102"."""
    return f"{p.kind[:1].upper()}{p.kind[1:]} {p.id}"


def _name(h: Hex) -> str:
    return f"[{h.q}, {h.r}]"


def _info(rule: str, message: str, unit: int | None = None, **numbers: Json) -> Verdict:
    return Verdict(f"vigtavl.{rule}", Outcome.INFO, message, unit, numbers)


def _ok(rule: str, message: str, unit: int | None = None, **numbers: Json) -> Verdict:
    return Verdict(f"vigtavl.{rule}", Outcome.LEGAL, message, unit, numbers)


def _fixed(v: Verdict, *fixes: str) -> Verdict:
    """`v` with the table fix said after its message (rules/vigtavl/table_fix.py)."""
    said = " ".join(f for f in fixes if f)
    return replace(v, message=f"{v.message} {said}") if said else v


Handler = Callable[[VigtavlState, Action, DiceCup], tuple[VigtavlState, list[Verdict]]]
"""A rule's handler: the state, the declared action and the dice cup (the players' faces) to the new state and
its verdicts; a broken rule raises Illegal."""


# ---------------------------------------------------------------------------------------------- reading params


def _param_hex(action: Action, key: str, state: VigtavlState) -> Hex:
    v = action.params.get(key)
    if isinstance(v, Mapping) and "at" in v:  # a table position, inches
        at = v["at"]
        if not (isinstance(at, list) and len(at) == 2 and all(isinstance(c, int | float) for c in at)):
            raise ActionError(f'The action\'s "{key}" position must be [x, y] in inches; got {at!r}.')
        return state.layout.from_table(float(at[0]), float(at[1]))[0]
    if not (isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(c, int) and not isinstance(c, bool) for c in v)):
        raise ActionError(f'The {action.kind} action needs "{key}": a hex [q, r]; got {v!r}.')
    return Hex(int(v[0]), int(v[1]))


def _param_unit(action: Action, key: str, state: VigtavlState) -> Piece:
    v = action.params.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ActionError(f'The {action.kind} action needs "{key}": a unit\'s tag id; got {v!r}.')
    p = state.piece(v)
    if p is None:
        raise ActionError(f"The {action.kind} action names unit {v}, which is not in this game.")
    return p


def _actor(state: VigtavlState, action: Action) -> Piece:
    if action.unit is None:
        raise ActionError(f'The {action.kind} action needs "unit": the tag id of the unit that acts.')
    p = state.piece(action.unit)
    if p is None:
        raise ActionError(f"The {action.kind} action names unit {action.unit}, which is not in this game.")
    if p.owner != state.player:
        raise Illegal("turn", f"{_called(p)} belongs to {p.owner}; it is {state.player}'s turn to act.", {})
    if not p.in_play:
        raise Illegal("unit.in_play", f"{_called(p)} is not on the map (a prisoner, sunk or not yet placed).")
    return p


def _need_phase(state: VigtavlState, phases: tuple[str, ...], what: str) -> None:
    if state.phase not in phases:
        raise Illegal(
            "phases",
            f"{what} is not allowed in the {state.phase} phase (round {state.round}); allowed in: {', '.join(phases)}.",
            {"round": state.round},
        )


# ---------------------------------------------------------------------------------------------- turn flow


def _begin_turn(state: VigtavlState) -> VigtavlState:
    """Income at the start of a build- or battle-phase turn: 6 gold and 6 silver."""
    if state.phase in ("build", "battle"):
        return state.with_purse(state.players[state.turn], gold=INCOME_GOLD, silver=INCOME_SILVER)
    return state


def _unplaced(state: VigtavlState, player: str) -> list[Piece]:
    return [p for p in state.pieces if p.owner == player and is_ship(p.kind) and p.hex is None and p.sunk_by is None]


def _after_placement(state: VigtavlState) -> VigtavlState:
    n = len(state.players)
    for k in range(1, n + 1):
        seat = (state.turn + k) % n
        if _unplaced(state, state.players[seat]):
            return replace(state, turn=seat)
    return _begin_turn(replace(state, round=ROUNDS_PER_PHASE + 1, turn=0))


def _end_turn(state: VigtavlState) -> VigtavlState:
    player = state.players[state.turn]
    state = state.with_purse(player, gold=0, silver=0)
    state = replace(state, now=TurnState())
    turn = state.turn + 1
    rnd = state.round
    if turn >= len(state.players):
        turn, rnd = 0, rnd + 1
    state = replace(state, turn=turn, round=rnd)
    if rnd > LAST_ROUND:
        return end_awards(state)
    return _begin_turn(state)


def _finish_active(state: VigtavlState) -> VigtavlState:
    """Lay the active unit on its side."""
    now = state.now
    if now.active is None:
        return state
    spent = now.spent if now.active in now.spent else now.spent + (now.active,)
    return state.with_now(active=None, spent=spent)


def _begin_retaliation(state: VigtavlState) -> VigtavlState:
    queue = tuple(dict.fromkeys(state.now.losers))
    if not queue:
        return state
    first, rest = queue[0], queue[1:]
    state = state.with_now(losers=(), retaliating=first, retaliation_queue=rest, retaliation_unit=None)
    return state.with_purse(first, silver=RETALIATION_SILVER)


def _end_retaliation(state: VigtavlState) -> VigtavlState:
    who = state.now.retaliating
    if who is None:
        return state
    state = _finish_active(state).with_purse(who, silver=0)
    queue = state.now.retaliation_queue
    if queue:
        state = state.with_now(retaliating=queue[0], retaliation_queue=queue[1:], retaliation_unit=None)
        return state.with_purse(queue[0], silver=RETALIATION_SILVER)
    return state.with_now(retaliating=None, retaliation_unit=None)


def _activate(state: VigtavlState, p: Piece, act: str) -> tuple[VigtavlState, list[Verdict]]:
    """Make p the active unit able to take action `act` (paying its activation), or raise Illegal."""
    now = state.now
    if act and act in now.used_by(p.id) and not (act == "move" and now.open_move(p.id) is not None):
        raise Illegal(
            "activation.unique",
            f"{_called(p)} has already taken its {act} action; each action must be unique (no two {act}s).",
            {"actions": list(now.used_by(p.id))},
        )
    if now.active == p.id or (act == "move" and now.open_move(p.id) is not None):
        return state, []
    if p.id in now.spent:
        raise Illegal("activation.spent", f"{_called(p)} has completed its actions this turn (laid on its side).")
    if now.retaliating is not None and now.retaliation_unit is not None and now.retaliation_unit != p.id:
        raise Illegal("retaliation.one_unit", f"{now.retaliating} may activate only 1 unit in retaliation.")
    if now.active is not None and now.losers and now.retaliating is None:
        raise Illegal(
            "retaliation.first",
            f"Unit {now.active} has left {', '.join(now.losers)} owed a retaliation; declare finish before activating unit {p.id}.",
        )
    if p.kind not in COMBAT_UNITS:
        raise Illegal("activation.kind", f"{_called(p)} is {p.kind}; only knights and ships are activated.")
    price = STATS[p.kind].cost
    silver = state.silver[state.seat(p.owner)]
    if silver < price:
        raise Illegal(
            "activation.silver",
            f"Activating {p.kind} {p.id} costs {price} silver (its building cost); {p.owner} has {silver}.",
            {"cost": price, "silver": silver},
        )
    state = _finish_active(state).with_purse(p.owner, silver=silver - price)
    state = state.with_now(active=p.id)
    if state.now.retaliating is not None:
        state = state.with_now(retaliation_unit=p.id)
    return state, [_ok("activation", f"{p.kind} {p.id} activated for {price} silver ({silver - price} left).", p.id,
                       cost=price, silver_left=silver - price)]


def _use(state: VigtavlState, unit: int, act: str) -> VigtavlState:
    used = state.now.used_by(unit)
    if act in used:
        return state
    rest = tuple((u, a) for u, a in state.now.used if u != unit)
    return state.with_now(used=rest + ((unit, used + (act,)),))


def _lost(state: VigtavlState, player: str) -> VigtavlState:
    """Note a player who lost a battle or a development to the active player (he may retaliate)."""
    if state.now.retaliating is not None or player == state.player or player in state.now.losers:
        return state
    return state.with_now(losers=state.now.losers + (player,))


# ---------------------------------------------------------------------------------------------- results


def _nearest_development(state: VigtavlState, player: str, h: Hex) -> Hex | None:
    devs = sorted((distance(d.hex, h), d.hex) for d in state.developments if d.owner == player)
    return devs[0][1] if devs else None


def _defeat(state: VigtavlState, loser: Piece, victor: str, at: Hex, how: str) -> tuple[VigtavlState, list[Verdict]]:
    """A defeated unit: a knight captured to the victor's nearest developed hex, a ship sunk with its cargo."""
    value = STATS[loser.kind].cost
    out: list[Verdict] = []
    if is_ship(loser.kind):
        cargo = state.passengers(loser.id)
        for c in cargo:
            state = state.with_piece(replace(c, hex=None, aboard=None, sunk_by=victor))
        state = state.with_piece(replace(loser, hex=None, aboard=None, sunk_by=victor))
        out.append(_fixed(_info("results.sea_victory", f"{loser.kind} {loser.id} is sunk and goes to {victor}'s ship "
                                "graveyard.", loser.id), fix.sunk(loser, cargo, victor)))
    else:
        prison = _nearest_development(state, victor, at)
        if prison is None:
            raise Illegal("results.capture", f"{victor} has no development to hold prisoners and may not capture.")
        state = state.with_piece(replace(loser, hex=prison, aboard=None, captor=victor))
        out.append(_fixed(_info("results.land_victory", f"{loser.kind} {loser.id} is captured and held at "
                                f"{_name(prison)}.", loser.id, prison=_hx(prison)), fix.prisoner_to(loser, prison, victor)))
    state = state.claim(victor, "battle", value, f"{how}: {loser.kind} {loser.id}")
    out.append(_info("victory.battle", f"{victor} collects {counted(value, 'battle token')} for {loser.kind} {loser.id}.",
                     loser.id, tokens=value))
    return _lost(state, loser.owner), out


def _pick_defender(state: VigtavlState, attacker: Piece, at: Hex, target: Piece, action: Action) -> Piece:
    """The target, or a weaker unit that defends it (adjacent to both attacker and target)."""
    if "defender" not in action.params:
        return target
    d = _param_unit(action, "defender", state)
    if d.id == target.id:
        return target
    dh = state.where(d)
    th = state.where(target)
    if d.owner != target.owner or not d.in_play or d.kind not in COMBAT_UNITS or d.aboard is not None:
        raise Illegal("defend", f"{_called(d)} cannot defend {target.kind} {target.id}: it must be a free unit of {target.owner}.")
    if d.kind == "freighter":
        raise Illegal("defend.freighter", "Freighters can not defend other ships or coastal buildings.")
    if STATS[d.kind].cost >= STATS[target.kind].cost:
        raise Illegal("defend", f"Only weaker units defend: {d.kind} costs {STATS[d.kind].cost}, "
                      f"{target.kind} {STATS[target.kind].cost}.")
    if dh is None or th is None or distance(dh, at) != 1 or distance(dh, th) != 1:
        raise Illegal("defend", f"{_called(d)} must stand on a hex adjacent to both the attacker and {target.kind} {target.id}.")
    return d


def _battle(
    state: VigtavlState,
    attacker: Piece,
    defender: Piece,
    at: Hex,
    direction: int | None,
    cup: DiceCup,
    dice_kind: str,
    distance_: int | None = None,
    gun: Piece | None = None,
) -> tuple[VigtavlState, list[Verdict], bool]:
    """Resolve one attack (close when distance_ is None, else ranged; `gun`: the artillery a knight fires), its dice
    taken from the cup; True when the defender is defeated."""
    target_hex = state.where(defender)
    assert target_hex is not None
    if is_knight(defender.kind) and _nearest_development(state, attacker.owner, target_hex) is None:
        raise Illegal("results.capture", f"{attacker.owner} has no developments on the map and may not capture "
                      f"{defender.kind} {defender.id} until he builds one.")
    tac = tactics(state, attacker.owner, target_hex, direction)
    base = STATS[dice_kind].cost
    dice = base + tac.extra
    nums: dict[str, Json] = {"attack_dice": dice, "cost_dice": base, "flank_dice": tac.flank_dice,
                             "attrition_dice": tac.attrition_dice, "flank": tac.name, "attempt": tac.attempt}
    state = record_attack(state, attacker.owner, target_hex, direction)
    out: list[Verdict] = []
    if tac.extra:
        out.append(_info("tactics", f"{tac.name} (+{tac.flank_dice}), attrition +{tac.attrition_dice}: "
                         f"{dice} attack dice.", attacker.id, **nums))
    if overwhelms(dice):
        out.append(_ok("tactics.overwhelm", f"{dice} attack dice (6 or more): {defender.kind} {defender.id} is "
                       "overwhelmed and surrenders before the battle.", attacker.id, **nums))
        state, more = _defeat(state, defender, attacker.owner, target_hex, "overwhelmed")
        return state, out + more, True
    if distance_ is None:
        res = close_combat(cup, attacker, defender, dice, STATS[defender.kind].cost)
        nums.update({"defend_dice": STATS[defender.kind].cost, "attacker_rolls": [list(r) for r in res.attacker_rolls],
                     "defender_rolls": [list(r) for r in res.defender_rolls], "rerolls": res.rerolls,
                     "attacker_high": max(res.attacker_rolls[-1]), "defender_high": max(res.defender_rolls[-1])})
        who = "attacker" if res.attacker_wins else "defender"
        out.append(_ok("combat.close", f"Close combat: {dice} {'die' if dice == 1 else 'dice'} against "
                       f"{STATS[defender.kind].cost}; highest "
                       f"{max(res.attacker_rolls[-1])} v {max(res.defender_rolls[-1])}"
                       f"{' after ' + counted(res.rerolls, 'tie') + ' re-rolled' if res.rerolls else ''}: the {who} wins.",
                       attacker.id, winner=who, **nums))
        won = res.attacker_wins
    else:
        hit, rolls, face = ranged_hit(cup, attacker, defender, dice, distance_, gun)
        nums.update({"range": distance_, "hit_on": face, "rolls": list(rolls), "hit": hit})
        out.append(_ok("combat.ranged", f"Ranged attack at range {distance_}: {dice} dice, a {face} or less hits; "
                       f"rolled {list(rolls)}: {'hit' if hit else 'miss'}.", attacker.id, **nums))
        won = hit
    if won:
        state, more = _defeat(state, defender, attacker.owner, target_hex, "battle")
        out += more
    return state, out, won


# ---------------------------------------------------------------------------------------------- handlers


def _place(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("placement",), "Placing ships")
    p = _param_unit(action, "unit", state) if action.unit is None else state.piece(action.unit)
    if p is None:
        raise ActionError(f"The place action names unit {action.unit}, which is not in this game.")
    if p.owner != state.player:
        raise Illegal("turn", f"{_called(p)} belongs to {p.owner}; it is {state.player}'s turn to place.")
    if not is_ship(p.kind) or p.hex is not None or p.sunk_by is not None:
        raise Illegal("placement", f"{_called(p)} is not an unplaced ship; only ships are placed (land units stay aboard).")
    h = _param_hex(action, "hex", state)
    why = may_end(state, p.owner, h, OCCUPANCY_WEIGHT[p.kind], "sea")
    if why:
        raise Illegal("placement", f"Ship {p.id} may not be placed: {why}.", {"hex": _hx(h), "occupancy": state.occupancy(h)})
    state = _after_placement(state.with_piece(replace(p, hex=h)))
    return state, [_ok("placement", f"{p.kind} {p.id} placed on sea hex {_name(h)}.", p.id, hex=_hx(h))]


def _activate_action(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("build", "battle"), "Activating units")
    p = _actor(state, action)
    if state.now.active == p.id:
        raise Illegal("activation", f"{_called(p)} is already active.")
    return _activate(state, p, "")


def _move(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("build", "battle"), "Moving")
    p = _actor(state, action)
    if p.kind == "artillery":
        raise Illegal("artillery.move", "Artillery is moved by a knight on its hex: declare the knight's tow "
                      "(tow artillery) before moving them.")
    start = state.where(p)
    assert start is not None
    to = _param_hex(action, "to", state)
    state, out = _activate(state, p, "move")
    used = state.now.open_move(p.id) or 0
    budget = movement(p) - used
    tow = None
    if "tow" in action.params:
        tow = _param_unit(action, "tow", state)
        if tow.kind != "artillery" or tow.owner != p.owner or state.where(tow) != start or not is_knight(p.kind) or p.aboard:
            raise Illegal("artillery.move", f"{_called(p)} can tow only its owner's artillery on its own hex.")
    if p.aboard is not None and not is_knight(p.kind):
        raise Illegal("move", f"{_called(p)} is aboard; only knights disembark.")
    if action.kind == "unload" and p.aboard is None:
        raise Illegal("freighter.unload", f"{p.kind} {p.id} is not aboard a freighter; only a knight aboard one is "
                      "unloaded (move it instead).")
    dests = destinations(state, p, budget, start, tow)
    opts = options(state, p, budget, start)
    if to not in dests:
        reason = "it is out of reach"
        terrain = "sea" if is_ship(p.kind) else "land"
        ground = geography(state.cells).kind(to)
        if to in opts.cost:
            reason = may_end(state, p.owner, to, OCCUPANCY_WEIGHT[p.kind], terrain, [p.id]) or "a towing knight may not start a battle"
        elif ground is None:
            reason = f"hex {_name(to)} is off the map"
        elif ground == "mountain":
            reason = "mountain hexes can not be occupied"
        elif ground != terrain:
            reason = f"hex {_name(to)} is {ground}, not {terrain}"
        raise Illegal("move.range", f"{p.kind} {p.id} (movement {movement(p)}, {budget} left) may not move to {_name(to)}: {reason}.",
                      {"movement": movement(p), "budget": budget, "cost": opts.cost.get(to)})
    cost = dests[to]
    path = opts.path(to)
    if is_ship(p.kind) and "path" in action.params:
        path = _ship_path(state, p, action, start, to, budget)
        cost = _path_cost(state, path)
    state = _use(state, p.id, "move")
    if state.now.open_move(p.id) is not None:  # a knight disembarking within the move it boarded with
        state = state.with_now(open_moves=tuple(x for x in state.now.open_moves if x[0] != p.id))
    moved = replace(p, hex=to, aboard=None)
    state = state.with_piece(moved)
    if tow is not None:
        state = state.with_piece(replace(tow, hex=to))
    moved_words = _ok("move", f"{p.kind} {p.id} moves {_name(start)} -> {_name(to)}: {cost} of {budget} movement.", p.id,
                      cost=cost, movement=movement(p), budget=budget, path=[_hx(h) for h in path])
    out.append(_fixed(moved_words, fix.goes_with(tow, to)) if tow is not None else moved_words)
    if p.kind == "freighter" and action.params.get("pick_up"):
        state, more = _pick_up(state, p, action, path)
        out += more
    if to in opts.battles:
        state, more = _battle_by_move(state, p, start, path, to, action, cup)
        out += more
    return state, out


def _tow(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    """A knight's move towing its owner's artillery from its hex (params "to", "artillery"): the move with "tow",
    declared by the players (the camera sees two pieces moved, not which one towed the other)."""
    if "artillery" not in action.params:
        raise ActionError('The tow action needs "artillery": the tag id of the artillery the knight tows.')
    rest = {k: v for k, v in action.params.items() if k != "artillery"}
    return _move(state, Action("move", action.unit, {**rest, "tow": action.params["artillery"]}), cup)


def _ship_path(state: VigtavlState, p: Piece, action: Action, start: Hex, to: Hex, budget: int) -> tuple[Hex, ...]:
    raw = action.params.get("path")
    if not isinstance(raw, list) or not raw:
        raise ActionError('A freighter\'s "path" must be a list of hexes [[q, r], ...] from its start to "to".')
    hexes = []
    for i, v in enumerate(raw):
        if not (isinstance(v, list) and len(v) == 2 and all(isinstance(c, int) for c in v)):
            raise ActionError(f'Step {i + 1} of "path" must be a hex [q, r]; got {v!r}.')
        hexes.append(Hex(v[0], v[1]))
    if hexes[0] != start:
        hexes.insert(0, start)
    if hexes[-1] != to:
        raise Illegal("move.path", f'The path must end at "to" {_name(to)}.')
    cost = _path_cost(state, tuple(hexes), p)
    if cost > budget:
        raise Illegal("move.range", f"The path costs {cost} movement; {p.kind} {p.id} has {budget}.", {"cost": cost, "budget": budget})
    return tuple(hexes)


def _path_cost(state: VigtavlState, path: tuple[Hex, ...], p: Piece | None = None) -> int:

    total = 0
    for a, b in zip(path, path[1:]):
        if distance(a, b) == 1:
            if p is not None and (geography(state.cells).kind(b) != "sea" or blocks(state, a, b, p.owner, p.kind)):
                raise Illegal("move.path", f"The path may not step from {_name(a)} to {_name(b)}.")
            total += 1
        elif b in wind_links(state, a):
            total += 2
        else:
            raise Illegal("move.path", f"The path jumps from {_name(a)} to {_name(b)}; steps must be adjacent or a wind ride.")
    return total


def _pick_up(state: VigtavlState, f: Piece, action: Action, path: tuple[Hex, ...]) -> tuple[VigtavlState, list[Verdict]]:
    ids = action.params.get("pick_up")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise ActionError('"pick_up" must be a list of knights\' tag ids.')
    out = []
    active = state.now.active
    for i in ids:
        k = state.piece(i)
        if k is None or k.owner != f.owner or not is_knight(k.kind) or not k.in_play or k.aboard is not None:
            raise Illegal("freighter.pick_up", f"Unit {i} is not a free knight of {f.owner} on land.")
        kh = state.where(k)
        if kh is None or not any(distance(kh, h) == 1 and blocks(state, kh, h, k.owner, k.kind) is None for h in path):
            raise Illegal("freighter.pick_up", f"Knight {i} is not beside the freighter's path.")
        if len(state.passengers(f.id)) >= FREIGHTER_CAPACITY:
            raise Illegal("freighter.capacity", f"Freighter {f.id} already carries {FREIGHTER_CAPACITY} land units.")
        if "move" in state.now.used_by(k.id) or k.id in state.now.spent:
            raise Illegal("freighter.pick_up", f"Knight {i} has already moved this turn.")
        price = STATS[k.kind].cost
        silver = state.silver[state.seat(k.owner)]
        if silver < price:
            raise Illegal("activation.silver", f"Picking up {k.kind} {i} activates it for {price} silver; {k.owner} has {silver}.")
        state = state.with_purse(k.owner, silver=silver - price)
        state = state.with_piece(replace(k, hex=None, aboard=f.id))
        state = _use(state, k.id, "move").with_now(open_moves=state.now.open_moves + ((k.id, 1),))
        out.append(_fixed(_ok("freighter.pick_up", f"Freighter {f.id} picks up {k.kind} {i} (1 of its movement, {price} "
                              "silver).", i), fix.boards(k, f, state.where(f))))
    return state.with_now(active=active), out


def _battle_by_move(
    state: VigtavlState, p: Piece, start: Hex, path: tuple[Hex, ...], to: Hex, action: Action, cup: DiceCup
) -> tuple[VigtavlState, list[Verdict]]:
    enemies = enemy_units_at(state, to, p.owner)
    if "target" in action.params:
        target = _param_unit(action, "target", state)
        if target not in enemies:
            raise Illegal("combat.close", f"{_called(target)} is not an enemy unit on {_name(to)}.")
    else:
        target = sorted(enemies, key=lambda e: (-STATS[e.kind].cost, e.id))[0]
    came_from = path[-2] if len(path) >= 2 else start
    direction = direction_between(to, came_from)
    mover = state.piece(p.id)
    assert mover is not None
    defender = _pick_defender(state, mover, came_from, target, action)
    state, out, won = _battle(state, mover, defender, came_from, direction, cup, p.kind)
    mover = state.piece(p.id)
    assert mover is not None
    back = replace(mover, hex=start if p.aboard is None else None, aboard=p.aboard)
    if not won:
        state = state.with_piece(back)
        out.append(_fixed(_info("results.retreat", f"The defender wins: {p.kind} {p.id} retreats to {_name(start)}, "
                                "where its move began.", p.id, back_to=_hx(start)),
                          fix.put_back(state, back)))
        return state, out
    stays = not enemy_units_at(state, to, p.owner) and not held_by_other(state, to, p.owner) and state.occupancy(to) <= OCCUPANCY_LIMIT
    if stays:
        out.append(_info("results.occupation", f"{p.kind} {p.id} occupies {_name(to)}.", p.id))
        return state, out
    state = state.with_piece(back)
    out.append(_fixed(_info("results.occupation", f"{_name(to)} is still held by another player: {p.kind} {p.id} returns "
                            f"to {_name(start)}.", p.id, back_to=_hx(start)), fix.put_back(state, back)))
    return state, out


def _load(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("build", "battle"), "Loading")
    k = _actor(state, action)
    f = _param_unit(action, "freighter", state)
    if not is_knight(k.kind) or k.aboard is not None:
        raise Illegal("freighter.load", f"Only a knight on land boards a freighter; unit {k.id} is {k.kind}.")
    if f.owner != k.owner or f.kind != "freighter" or not f.in_play:
        raise Illegal("freighter.load", f"{_called(f)} is not a freighter of {k.owner} on the map.")
    if len(state.passengers(f.id)) >= FREIGHTER_CAPACITY:
        raise Illegal("freighter.capacity", f"Freighter {f.id} already carries {FREIGHTER_CAPACITY} land units.",
                      {"aboard": FREIGHTER_CAPACITY})
    start = state.where(k)
    assert start is not None
    state, out = _activate(state, k, "move")
    cost = boarding_cost(state, k, f, movement(k), start)
    if cost is None:
        raise Illegal("freighter.load", f"{k.kind} {k.id} (movement {movement(k)}) cannot reach freighter {f.id} and board "
                      "it (boarding is 1 movement).", {"movement": movement(k)})
    state = _use(state, k.id, "move")
    state = state.with_piece(replace(k, hex=None, aboard=f.id))
    state = state.with_now(open_moves=state.now.open_moves + ((k.id, cost),))
    out.append(_fixed(_ok("freighter.load", f"{k.kind} {k.id} boards freighter {f.id}: {cost} of {movement(k)} movement "
                          "(boarding counts 1).", k.id, cost=cost, movement=movement(k)),
                      fix.boards(k, f, state.where(f))))
    return state, out


def _close_by_default(attacker: Piece, from_hex: Hex, to_hex: Hex) -> bool:
    """An attack that names no "mode" is a close combat when the target stands on the same or an adjacent hex and
    the attacker is not aboard a freighter; else it is fired at range."""
    return distance(from_hex, to_hex) <= 1 and attacker.aboard is None


def _attack(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("battle",), "Attacking")
    a = _actor(state, action)
    target = _param_unit(action, "target", state)
    if a.kind in ("freighter", "artillery"):
        raise Illegal("combat.attacker", f"A {a.kind} can not attack" + (" (fire it with a knight)." if a.kind == "artillery" else "."))
    if target.owner == a.owner or not target.in_play or target.kind not in COMBAT_UNITS or target.aboard is not None:
        raise Illegal("combat.target", f"{_called(target)} is not an opponent's combat unit on the map.")
    ah, th = state.where(a), state.where(target)
    assert ah is not None and th is not None
    mode = action.params.get("mode")
    if mode not in (None, "close", "ranged"):
        raise ActionError(f'Attack "mode" must be "close" or "ranged"; got {mode!r}.')
    if a.aboard is not None and a.kind != "archer":
        raise Illegal("freighter.archers", "Only archers aboard a freighter can attack (coastal hexes or enemy ships).")
    if mode is None:
        mode = "close" if _close_by_default(a, ah, th) else "ranged"
    state, out = _activate(state, a, "attack")
    if mode == "close":
        if a.aboard is not None:
            raise Illegal("freighter.archers", "Archers aboard a freighter attack at range only.")
        if distance(ah, th) > 1:
            raise Illegal("combat.close", f"Close combat needs the same or an adjacent hex; unit {target.id} is "
                          f"{distance(ah, th)} hexes away.", {"distance": distance(ah, th)})
        if ah != th:
            wall = blocks(state, ah, th, a.owner, a.kind)
            if wall is not None:
                raise Illegal("walls.attack", f"{wall}'s wall stands between {_name(ah)} and {_name(th)}; units may not "
                              "attack through opponent walls.")
        defender = _pick_defender(state, a, ah, target, action)
        direction = direction_between(state.where(defender) or th, ah)
        state = _use(state, a.id, "attack")
        state, more, won = _battle(state, a, defender, ah, direction, cup, a.kind)
        out += more
        if won and action.params.get("occupy") and ah != th:
            state, more = _occupy(state, a.id, th)
            out += more
        return state, out
    return _ranged(state, a, None, ah, target, action, cup, a.kind, out)


def _ranged(
    state: VigtavlState, shooter: Piece, artillery: Piece | None, from_hex: Hex, target: Piece, action: Action,
    cup: DiceCup, gun: str, out: list[Verdict],
) -> tuple[VigtavlState, list[Verdict]]:
    """A ranged attack by `shooter` (a knight firing `artillery`, else the shooter's own bow or cannon)."""
    rng_max = STATS[gun].attack_range
    if rng_max <= 0:
        raise Illegal("combat.ranged", f"A {gun} has no attack range; only archers, artillery and galleys fire at range.")
    th = state.where(target)
    assert th is not None
    line = line_of_fire(state, from_hex, th, shooter.owner, "artillery" if gun == "artillery" else shooter.kind, rng_max)
    if line is None:
        raise Illegal("combat.ranged.line", f"{_name(th)} is not on a straight line through hex edges within range "
                      f"{rng_max} of {_name(from_hex)}.", {"distance": distance(from_hex, th), "range": rng_max})
    if line.blocked_by:
        raise Illegal("combat.ranged.blocked", f"The line of fire is blocked: {'; '.join(line.blocked_by)}.",
                      {"range": line.distance, "blocked_by": list(line.blocked_by)})
    defender = _pick_defender(state, shooter, from_hex, target, action)
    state = _use(state, shooter.id, "attack")
    state, more, _ = _battle(state, shooter, defender, from_hex, side_toward(th, line.direction), cup, gun,
                             line.distance, artillery)
    out += more
    return state, out


def _fire_artillery(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("battle",), "Firing artillery")
    k = _actor(state, action)
    gun = _param_unit(action, "artillery", state)
    target = _param_unit(action, "target", state)
    kh = state.where(k)
    if not is_knight(k.kind) or k.aboard is not None:
        raise Illegal("artillery.fire", f"Artillery must be fired by a knight on its hex; unit {k.id} is {k.kind}.")
    if gun.kind != "artillery" or gun.owner != k.owner or state.where(gun) != kh:
        raise Illegal("artillery.fire", f"{_called(gun)} is not {k.owner}'s artillery on the knight's hex {_name(kh) if kh else ''}.")
    if target.owner == k.owner or not target.in_play or target.kind not in COMBAT_UNITS or target.aboard is not None:
        raise Illegal("combat.target", f"{_called(target)} is not an opponent's combat unit on the map.")
    assert kh is not None
    state, out = _activate(state, k, "attack")
    return _ranged(state, k, gun, kh, target, action, cup, "artillery", out)


def _occupy(state: VigtavlState, unit: int, h: Hex) -> tuple[VigtavlState, list[Verdict]]:
    p = state.piece(unit)
    assert p is not None
    terrain = "sea" if is_ship(p.kind) else "land"
    why = may_end(state, p.owner, h, OCCUPANCY_WEIGHT[p.kind], terrain, [p.id])
    if enemy_units_at(state, h, p.owner):
        why = "enemy units remain there"
    if why:
        return state, [_info("results.occupation", f"{p.kind} {p.id} stays: {why}.", p.id)]
    return state.with_piece(replace(p, hex=h)), [_fixed(_info("results.occupation", f"{p.kind} {p.id} occupies {_name(h)}.",
                                                              p.id), fix.moves_onto(p, h))]


def _seize(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("battle",), "Seizing")
    p = _actor(state, action)
    now = state.now
    if now.retaliating is not None and now.retaliation_unit not in (None, p.id):
        raise Illegal("retaliation.one_unit", f"{now.retaliating} acts with unit {now.retaliation_unit} only.")
    ph = state.where(p)
    h = _param_hex(action, "hex", state)
    assert ph is not None
    if distance(ph, h) > 1:
        raise Illegal("seize.reach", f"{_name(h)} is {distance(ph, h)} hexes from unit {p.id}; seize on or adjacent to its hex.")
    if ph != h and blocks(state, ph, h, p.owner, p.kind) is not None:
        raise Illegal("walls.attack", f"An opponent's wall stands between {_name(ph)} and {_name(h)}.")
    dev = state.development_at(h)
    guns = [g for g in state.units_at(h) if g.kind == "artillery" and g.owner != p.owner]
    what = action.params.get("target", "development" if dev is not None and dev.owner != p.owner else "artillery")
    if what == "artillery" or isinstance(what, int):
        gun = next((g for g in guns if not isinstance(what, int) or g.id == what), None)
        if gun is None:
            raise Illegal("seize", f"There is no opponent artillery to seize on {_name(h)}.")
        guards = [k for k in state.units_at(h) if k.owner == gun.owner and is_knight(k.kind)]
        if guards:
            raise Illegal("seize.defended", f"Artillery {gun.id} is defended by knight {guards[0].id}; defeat it first.")
        state = state.with_piece(replace(gun, owner=p.owner))
        state = _lost(state, gun.owner)
        out = [_ok("artillery.seize", f"{p.owner} seizes artillery {gun.id} on {_name(h)}.", p.id)]
    else:
        if dev is None or dev.owner == p.owner:
            raise Illegal("seize", f"There is no opponent development to seize on {_name(h)}.")
        if now.retaliating is not None and h in now.seized:
            raise Illegal("retaliation.seize", "The retaliating player may not seize a development seized by the "
                          "active player this turn.")
        guards = [u for u in state.units_at(h) if u.owner != p.owner and u.kind in COMBAT_UNITS]
        guards += [u for x in neighbors(h) if distance(x, ph) == 1 and x != h
                   for u in state.units_at(x) if u.owner == dev.owner and u.kind in COMBAT_UNITS and u.kind != "freighter"]
        if guards:
            raise Illegal("seize.defended", f"The {dev.kind} on {_name(h)} is defended by unit {guards[0].id}; "
                          "the attacking player must first defeat all defenders.", {"defenders": [g.id for g in guards]})
        state, out = _take_development(state, dev, p.owner)
    if action.params.get("occupy") and ph != h:
        state, more = _occupy(state, p.id, h)
        out += more
    return state, out


def _take_development(state: VigtavlState, dev: Development, taker: str) -> tuple[VigtavlState, list[Verdict]]:
    victim = dev.owner
    value = STATS[dev.kind].cost
    devs = tuple(d if d.hex != dev.hex else Development(dev.hex, dev.kind, taker) for d in state.developments)
    state = replace(state, developments=devs)
    out = [_fixed(_ok("seize", f"{taker} seizes {victim}'s {dev.kind} on {_name(dev.hex)}.", None, value=value),
                  fix.development_changes(dev.kind, dev.hex, victim, taker))]
    state = state.claim(taker, "conquer", value, f"{dev.kind} at {_name(dev.hex)}")
    out.append(_info("victory.conquer", f"{taker} collects {counted(value, 'conquer token')}.", None, tokens=value))
    if not any(d.owner == victim for d in state.developments):
        state = state.claim(taker, "last development", LAST_DEVELOPMENT_BONUS, f"{victim}'s last development")
        out.append(_info("victory.last_development", f"It was {victim}'s last development: {taker} collects "
                         f"{LAST_DEVELOPMENT_BONUS} more tokens.", None, tokens=LAST_DEVELOPMENT_BONUS))
    for pr in state.prisoners_at(dev.hex):
        if pr.owner == taker:
            state = state.with_piece(replace(pr, captor=None))
            v = STATS[pr.kind].cost
            state = state.claim(taker, "rescue", v, f"{pr.kind} {pr.id}")
            out.append(_info("results.rescue", f"{pr.kind} {pr.id} is freed: {taker} collects {counted(v, 'rescue token')}.", pr.id, tokens=v))
        elif pr.captor == victim:
            state = state.with_piece(replace(pr, captor=taker))
            out.append(_info("results.rescue", f"{pr.kind} {pr.id} becomes {taker}'s prisoner.", pr.id))
    walls = []
    for w in state.walls:
        if w.owner == victim and dev.hex in w.edge.hexes:
            other = next(x for x in w.edge.hexes if x != dev.hex)
            keeps = any(u.owner == victim for u in state.units_at(other)) or (
                (d := state.development_at(other)) is not None and d.owner == victim
            )
            if not keeps:
                w = Wall(w.edge, taker)
                out.append(_fixed(_info("walls.seize", f"The wall {_edge(w.edge)} passes to {taker}.", None),
                                  fix.wall_changes(w.edge, taker)))
        walls.append(w)
    state = replace(state, walls=tuple(walls))
    state = state.with_now(seized=state.now.seized + (dev.hex,))
    return _lost(state, victim), out


def _between(v: Any) -> str:
    """An edge given as an action's JSON in words, "between hex [q, r] and hex [q, r]"; "" if it is no edge."""
    try:
        a, b = parse_edge(v, "an edge").hexes
    except ScenarioError:
        return ""
    return f"between {hex_words(a)} and {hex_words(b)}"


def _edge(e: Edge) -> str:
    """An edge in words, by the two hexes it lies between: "between [2, 0] and [3, 0]"."""
    a, b = e.hexes
    return f"between {_name(a)} and {_name(b)}"


def _breach(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("battle",), "Breaching")
    p = _actor(state, action)
    e = parse_edge(action.params.get("edge"), 'The breach action\'s "edge"')
    wall = state.wall_on(e)
    if wall is None or wall.owner == p.owner:
        raise Illegal("walls.breach", f"There is no opponent wall {_edge(e)}.")
    ph = state.where(p)
    if p.kind not in COMBAT_UNITS or p.aboard is not None:
        raise Illegal("walls.breach", f"{_called(p)} cannot breach; knights and ships can.")
    if ph not in e.hexes:
        raise Illegal("walls.breach", f"{_called(p)} must occupy a hex adjacent to the wall (one of {_name(e.hexes[0])}, "
                      f"{_name(e.hexes[1])}).")
    if p.id in state.now.spent or p.id in state.now.breached:
        raise Illegal("walls.breach", f"{_called(p)} has exhausted its actions (or breached) this turn.")
    if (now_r := state.now.retaliating) and state.now.retaliation_unit not in (None, p.id):
        raise Illegal("retaliation.one_unit", f"{now_r} acts with unit {state.now.retaliation_unit} only.")
    attempt = state.now.breach_count(p.owner, e) + 1
    dice = STATS[p.kind].cost + (2 if attempt >= 3 else 0)
    ok, rolls = roll_breach(cup, p, wall.owner, e, dice)
    tries = tuple(t for t in state.now.breach_tries if t[:2] != (p.owner, e)) + ((p.owner, e, attempt),)
    state = state.with_now(breach_tries=tries, breached=state.now.breached + (p.id,))
    nums = {"dice": dice, "attempt": attempt, "rolls": list(rolls), "breached": ok}
    if ok:
        state = replace(state, walls=tuple(w for w in state.walls if w.edge != e))
    said = _ok("walls.breach", f"Breach attempt {attempt}: {dice} dice, rolled {list(rolls)}: "
               f"{'the wall is removed' if ok else 'the wall holds'}.", p.id, **nums)
    return state, [_fixed(said, fix.wall_off(e)) if ok else said]


def _build(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("build", "battle"), "Building")
    player = state.player
    raw = action.params.get("kind")
    kind = "wall" if raw == "wall" else (canonical(raw) if isinstance(raw, str) else None)
    if kind is None:
        raise ActionError(f'The build action needs "kind": a unit, encampment, fort, castle or wall; got {raw!r}.')
    gold = state.gold[state.seat(player)]
    price = STATS[kind].cost
    if gold < price:
        raise Illegal("gold", f"A {kind} costs {price} gold; {player} has {gold}.", {"cost": price, "gold": gold})
    if kind == "wall":
        e = parse_edge(action.params.get("edge"), 'The build action\'s "edge"')
        why = may_wall(state, player, e)
        if why:
            raise Illegal("walls.build", f"No wall {_edge(e)}: {why}.")
        state = replace(state, walls=state.walls + (Wall(e, player),)).with_purse(player, gold=gold - price)
        return state, [_fixed(_ok("walls.build", f"{player} builds a wall {_edge(e)} for 1 gold.", None,
                                  gold_left=gold - price), fix.wall_on(e, player))]
    if kind in DEVELOPMENT_KINDS:
        h = _param_hex(action, "hex", state)
        why = _may_develop(state, player, h, kind)
        if why:
            raise Illegal("build.development", f"No {kind} on {_name(h)}: {why}.", {"occupancy": state.occupancy(h)})
        state = replace(state, developments=state.developments + (Development(h, kind, player),))
        state = state.with_purse(player, gold=gold - price)
        return state, [_fixed(_ok("build.development", f"{player} builds {'an' if kind[:1] in 'aeiou' else 'a'} {kind} on {_name(h)} for {price} gold.", None,
                                  gold_left=gold - price, occupancy=state.occupancy(h)), fix.development_on(kind, h, player))]
    return _build_unit(state, action, kind, player, gold, price)


def _castle(state: VigtavlState, player: str) -> bool:
    return any(d.owner == player and d.kind == "castle" for d in state.developments)


def _may_develop(state: VigtavlState, player: str, h: Hex, kind: str) -> str | None:
    g = geography(state.cells)
    if g.kind(h) != "land":
        return "developments are built on land (not sea or mountain)"
    if state.development_at(h) is not None:
        return "the hex already has a development"
    if held_by_other(state, h, player):
        return "the hex is occupied by another player"
    near = [h, *neighbors(h)]
    if not any(any(p.owner == player for p in state.units_at(x)) or
               ((d := state.development_at(x)) is not None and d.owner == player) for x in near):
        return "build only on or beside a hex occupied by one of your units or developed by you"
    if state.occupancy(h) + OCCUPANCY_WEIGHT[kind] > OCCUPANCY_LIMIT:
        return f"occupancy would be {state.occupancy(h) + OCCUPANCY_WEIGHT[kind]}, more than {OCCUPANCY_LIMIT}"
    return None


def _owned(state: VigtavlState, player: str, kind: str) -> int:
    return sum(1 for p in state.pieces if p.owner == player and p.kind == kind and p.in_play)


def _unit_spot(state: VigtavlState, player: str, kind: str, h: Hex | None, aboard: Piece | None) -> str | None:
    """Why a new (or recruited) unit may not be put on h / aboard, or None."""
    g = geography(state.cells)
    mine = [d.hex for d in state.developments if d.owner == player]
    if aboard is not None:
        fh = state.where(aboard)
        if aboard.kind != "freighter" or aboard.owner != player or fh is None or not aboard.in_play:
            return f"unit {aboard.id} is not {player}'s freighter on the map"
        if not is_knight(kind):
            return "only land units are built on a freighter"
        if not any(distance(fh, d) == 1 for d in mine):
            return "the freighter must be adjacent to a developed hex"
        if len(state.passengers(aboard.id)) >= FREIGHTER_CAPACITY:
            return f"the freighter already carries {FREIGHTER_CAPACITY} land units"
        return None
    if h is None:
        return "no hex given"
    if is_ship(kind):
        if not any(distance(h, d) == 1 and g.coastal(d) for d in mine):
            return "ships are placed on a sea hex adjacent to your coastal encampment, fort or castle"
        return may_end(state, player, h, OCCUPANCY_WEIGHT[kind], "sea")
    if not any(distance(h, d) <= 1 for d in mine):
        return "land units are placed on or adjacent to your developed hex"
    return may_end(state, player, h, OCCUPANCY_WEIGHT[kind], "land")


def _build_unit(state: VigtavlState, action: Action, kind: str, player: str, gold: int, price: int) -> tuple[VigtavlState, list[Verdict]]:
    stats = STATS[kind]
    built = state.now.built
    if kind != "artillery":
        cap = BUILDS_PER_TURN_WITH_CASTLE if _castle(state, player) else BUILDS_PER_TURN
        count = sum(1 for b in built if b != "artillery")
        if count >= cap:
            raise Illegal("build.per_turn", f"{player} has built {count} units this turn; the limit is {cap}"
                          f"{' (with a castle)' if cap == 3 else ' (3 with a castle)'}.", {"built": count, "limit": cap})
    if stats.per_turn is not None and built.count(kind) >= stats.per_turn:
        raise Illegal("build.limit", f"Limit {stats.per_turn}/turn for {kind} reached.", {"limit": stats.per_turn})
    if stats.owned is not None and _owned(state, player, kind) >= stats.owned:
        raise Illegal("build.limit", f"{player} already has {_owned(state, player, kind)} {kind}; the build limit is "
                      f"{stats.owned}.", {"limit": stats.owned})
    aboard = _param_unit(action, "aboard", state) if "aboard" in action.params else None
    h = None if aboard is not None else _param_hex(action, "hex", state)
    why = _unit_spot(state, player, kind, h, aboard)
    if why:
        raise Illegal("build.place", f"The new {kind} may not go there: {why}.")
    unit = action.params.get("tag")
    if unit is None:
        unit = max([p.id for p in state.pieces] + [99]) + 1
    if isinstance(unit, bool) or not isinstance(unit, int) or unit < 10:
        raise ActionError(f'"tag" must be the new unit\'s tag id (10 or more); got {unit!r}.')
    if state.piece(unit) is not None:
        raise ActionError(f"Tag {unit} is already on a piece; give the new {kind} its own tag.")
    new = Piece(unit, kind, player, h, aboard.id if aboard else None)
    state = state.with_piece(new).with_purse(player, gold=gold - price).with_now(built=built + (kind,))
    where = f"aboard freighter {aboard.id}" if aboard else f"on {_name(h)}" if h else ""
    return state, [_fixed(_ok("build.unit", f"{player} builds {kind} {unit} {where} for {price} gold.", unit,
                              gold_left=gold - price, built=len(built) + 1), fix.new_unit(new, aboard))]


def _move_wall(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("build", "battle"), "Moving a wall")
    player = state.player
    if state.now.wall_moved:
        raise Illegal("walls.move", "A wall may be deconstructed and rebuilt only once per turn.")
    a = parse_edge(action.params.get("from"), 'The move_wall action\'s "from"')
    b = parse_edge(action.params.get("to"), 'The move_wall action\'s "to"')
    w = state.wall_on(a)
    if w is None or w.owner != player:
        raise Illegal("walls.move", f"There is no wall of {player}'s {_edge(a)}.")
    without = replace(state, walls=tuple(x for x in state.walls if x.edge != a))
    why = may_wall(without, player, b)
    if why:
        raise Illegal("walls.move", f"The wall cannot be rebuilt on {_edge(b)}: {why}.")
    state = replace(without, walls=without.walls + (Wall(b, player),)).with_now(wall_moved=True)
    return state, [_fixed(_ok("walls.move", f"{player} moves a wall from {_edge(a)} to {_edge(b)} at no cost."),
                          fix.wall_moved(a, b))]


def _discharge(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    _need_phase(state, ("build", "battle"), "Discharge and recruit")
    p = _actor(state, action)
    if state.now.discharged:
        raise Illegal("discharge", "Discharge and recruit is allowed once per turn.")
    if not is_knight(p.kind):
        raise Illegal("discharge", f"Only land units are discharged; unit {p.id} is a {p.kind}.")
    if p.id == state.now.active:
        raise Illegal("discharge", f"{_called(p)} is active; finish it first.")
    aboard = _param_unit(action, "aboard", state) if "aboard" in action.params else None
    h = None if aboard is not None else _param_hex(action, "to", state)
    was = fix.standing(state, p)
    gone = replace(state, pieces=tuple(x for x in state.pieces if x.id != p.id))
    why = _unit_spot(gone, p.owner, p.kind, h, aboard)
    if why:
        raise Illegal("discharge", f"The recruit may not go there: {why}.")
    now = state.now
    state = state.with_piece(Piece(p.id, p.kind, p.owner, h, aboard.id if aboard else None))
    state = state.with_now(
        discharged=True,
        spent=tuple(u for u in now.spent if u != p.id),
        used=tuple(x for x in now.used if x[0] != p.id),
        open_moves=tuple(x for x in now.open_moves if x[0] != p.id),
    )
    recruit = state.piece(p.id)
    assert recruit is not None
    return state, [_fixed(_ok("discharge", f"{p.kind} {p.id} is discharged and a new {p.kind} recruited at "
                              f"{_name(h) if h else f'freighter {aboard.id if aboard else 0}'}.", p.id),
                          fix.recruited(was, recruit, aboard))]


def _finish(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    if state.now.active is None:
        raise Illegal("activation", "No unit is active.")
    unit = state.now.active
    return _finish_active(state), [_ok("activation", f"Unit {unit} has completed its actions (laid on its side).", unit)]


def _end_turn_action(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    if state.phase in ("placement", "over"):
        raise Illegal("phases", f"There are no turns to end in the {state.phase} phase.")
    state = _finish_active(state)
    if state.now.losers:
        return state, [_info("retaliation", f"{listed(list(state.now.losers))} "
                                       f"{'retaliates' if len(state.now.losers) == 1 else 'retaliate'} before the turn ends.")]
    player = state.player
    gold, silver = state.gold[state.turn], state.silver[state.turn]
    state = _end_turn(state)
    return state, [_ok("end_turn", f"{player} ends the turn; unspent {gold} gold and {silver} silver are forfeited.",
                       None, forfeit_gold=gold, forfeit_silver=silver)]


def _end_retaliation_action(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    who = state.now.retaliating
    if who is None:
        raise Illegal("retaliation", "Nobody is retaliating now.")
    return _end_retaliation(state), [_ok("retaliation", f"{who}'s retaliation ends.")]


HANDLERS: dict[str, Handler] = {
    "place": _place,
    "activate": _activate_action,
    "move": _move,
    "unload": _move,
    "tow": _tow,
    "load": _load,
    "attack": _attack,
    "fire_artillery": _fire_artillery,
    "seize": _seize,
    "breach": _breach,
    "build": _build,
    "move_wall": _move_wall,
    "discharge": _discharge,
    "finish": _finish,
    "end_turn": _end_turn_action,
    "end_retaliation": _end_retaliation_action,
}


def _handle(state: VigtavlState, action: Action, cup: DiceCup) -> tuple[VigtavlState, list[Verdict]]:
    """The action's handler run on `state` after the checks every action shares (the game not over, nothing
    refused during a retaliation); raises Illegal, or ActionError for an action Vigtavl does not have."""
    handler = HANDLERS.get(action.kind)
    if handler is None:
        raise ActionError(f"Vigtavl has no action {action.kind!r}; use one of {', '.join(HANDLERS)}.")
    if state.phase == "over":
        raise Illegal("phases", "The game is over (after round 6).")
    if state.now.retaliating is not None and action.kind in RETALIATION_REFUSED:
        raise Illegal("retaliation.build", f"{state.now.retaliating} is retaliating: no {action.kind} during retaliation.")
    return handler(state, action, cup)


def refused(state: VigtavlState, action: Action) -> bool | None:
    """Whether the rules refuse `action` now (ruled with no dice: one it needs only waits, which is no refusal);
    None when the rules cannot read it (a RulesInputError). Cheaper than `apply`: no overlays, nothing settled."""
    try:
        _handle(state, action, DiceCup.for_action(action.params, None))
    except Illegal:
        return True
    except RollPending:
        return False
    except RulesInputError:
        return None
    return False


# ---------------------------------------------------------------------------------------------- after an action


def _surrenders(state: VigtavlState) -> tuple[VigtavlState, list[Verdict]]:
    """Tactics, Surrender: units cut off from every escape surrender to the acting player."""
    if state.phase != "battle":
        return state, []
    g = geography(state.cells)
    acting = state.player
    out: list[Verdict] = []
    hexes = sorted({state.where(p) for p in state.pieces if p.in_play and p.aboard is None and p.owner != acting
                    and p.kind in COMBAT_UNITS} - {None})  # type: ignore[type-var]
    for h in hexes:
        assert h is not None
        defenders = [p for p in state.units_at(h) if p.owner != acting and p.kind in COMBAT_UNITS]
        owner = defenders[0].owner
        around = [n for n in neighbors(h) if g.kind(n) in ("land", "sea")]
        mine = [n for n in around if any(u.owner == acting and u.kind in COMBAT_UNITS for u in state.units_at(n))]
        if not mine or not all(n in mine or any(u.owner == owner for u in state.units_at(n)) for n in around):
            continue
        if any(can_escape(state, p, h) for p in defenders):
            continue
        if any(is_knight(p.kind) for p in defenders) and _nearest_development(state, acting, h) is None:
            continue
        out.append(_info("tactics.surrender", f"{owner}'s units on {_name(h)} are surrounded with no escape and surrender.",
                         None, hex=_hx(h), units=[p.id for p in defenders]))
        for p in sorted(defenders, key=lambda x: x.id):
            cur = state.piece(p.id)
            if cur is not None and cur.in_play:
                state, more = _defeat(state, cur, acting, h, "surrender")
                out += more
    return state, out


def _settle(state: VigtavlState) -> tuple[VigtavlState, list[Verdict]]:
    out: list[Verdict] = []
    now = state.now
    if now.active is not None and len(now.used_by(now.active)) >= ACTIONS_PER_ACTIVATION:
        state = _finish_active(state)
    state, more = _surrenders(state)
    out += more
    before = len(state.claims)
    for p in state.players:
        state = anytime_claims(state, p)
    for c in state.claims[before:]:
        out.append(_info(f"victory.{c.kind.replace(' ', '_')}", f"{c.player} claims {c.kind}: {counted(c.tokens, 'token')} ({c.note}).",
                         None, tokens=c.tokens))
    now = state.now
    if now.retaliating is not None:
        ru = now.retaliation_unit
        if ru is not None and (ru in now.spent or len(now.used_by(ru)) >= ACTIONS_PER_ACTIVATION):
            state = _end_retaliation(state)
            out.append(_info("retaliation", "The retaliating unit has completed its actions; the retaliation ends."))
    elif now.active is None and now.losers:
        state = _begin_retaliation(state)
        out.append(_info("retaliation", f"{state.now.retaliating} may retaliate with 1 silver and one unit."))
    return state, out


# ---------------------------------------------------------------------------------------------- the game


def _players_from(setup: Mapping[str, Any]) -> tuple[str, ...]:
    players = setup.get("players")
    if players is None:
        units = setup.get("units") or (setup.get("roster") or {}).get("units") or []
        players = list(dict.fromkeys(u.get("owner") for u in units if isinstance(u, Mapping)))
    if not isinstance(players, list | tuple) or not players or not all(isinstance(p, str) and p for p in players):
        raise ScenarioError('The Vigtavl setup needs "players": a list of 2 to 4 player names.')
    if len(set(players)) != len(players):
        raise ScenarioError(f'"players" lists a name twice: {list(players)!r}.')
    return tuple(players)


def starting_pieces(players: tuple[str, ...], first_tag: int = 10) -> tuple[Piece, ...]:
    """Setup: each player's 3 infantry, 2 archers, 1 cavalry and 6 ships; the knights loaded 3 to a freighter."""
    out: list[Piece] = []
    tag = first_tag
    for player in players:
        ships: list[Piece] = []
        knights: list[Piece] = []
        for kind, n in STARTING_UNITS:
            for _ in range(n):
                (ships if is_ship(kind) else knights).append(Piece(tag, kind, player))
                tag += 1
        freighters = [s for s in ships if s.kind == "freighter"]
        for i, k in enumerate(knights):
            knights[i] = replace(k, aboard=freighters[i // FREIGHTER_CAPACITY].id)
        out += ships + knights
    return tuple(sorted(out, key=lambda p: p.id))


@register
class Vigtavl(Game):
    """Vigtavl v0.93 on a hex map; see the module docstring for the rules and the named options."""

    name = "vigtavl"
    title = "Vigtavl"
    board = "hex"
    kind_titles = {"fire_artillery": "Fire artillery", "breach": "Breach a wall", "move_wall": "Move a wall",
                   "discharge": "Discharge and recruit", "load": "Load a freighter", "unload": "Unload a freighter",
                   "tow": "Tow artillery",
                   "place": "Place a ship", "seize": "Seize", "build": "Build", "attack": "Attack",
                   "finish": "Finish the unit's activation", "end_retaliation": "End the retaliation",
                   "end_turn": "End the turn"}

    # ------------------------------------------------------------------ setup
    # a new game's setup: rules/vigtavl/standard.py
    def option_fields(self) -> tuple[OptionField, ...]:
        return standard.OPTION_FIELDS

    def example_roster(self) -> dict[str, Json]:
        return copy.deepcopy(standard.EXAMPLE_ROSTER)

    def standard_boards(self) -> tuple[StandardBoard, ...]:
        return tuple(StandardBoard(n, t, copy.deepcopy(b)) for n, t, b in standard.BOARDS)

    def cell_kinds(self) -> tuple[CellKind, ...]:
        return standard.CELL_KINDS

    def pieces_per_cell(self) -> int:
        """Occupancy: at most 3 units on a hex, and a development beside them."""
        return 4

    def new_state(self, setup: Mapping[str, Json]) -> VigtavlState:
        """setup: {"board": {...hex board, "layout": {...}}, "players": [...], "winds": "clockwise"|..., "roster": {...}}.

        Without a roster every player gets the starting units (tags from 10 up), knights loaded on freighters."""
        cells, layout = scenario_board(setup.get("board"))
        players = _players_from(setup)
        if not 2 <= len(players) <= 4:
            raise ScenarioError(f"Vigtavl is for 2 to 4 players; the setup names {len(players)}.")
        winds = setup.get("winds", "clockwise")
        if winds not in WINDS:
            raise ScenarioError(f'"winds" must be "clockwise" or "counter-clockwise"; got {winds!r}.')
        pieces = starting_pieces(players)
        roster = setup.get("roster")
        if roster is not None:
            pieces = _roster_pieces(roster, players)
        n = len(players)
        return VigtavlState(cells, layout, players, str(winds), 1, 0, (0,) * n, (0,) * n, pieces)

    def example(self, rng: random.Random) -> tuple[VigtavlState, Positions]:
        """A small 2-player start: a radius-3 map (an island with a mountain in a sea ring), winds flipped."""
        cells = [{"hex": [q, r], "terrain": "land"} for q, r in ((0, 0), (1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1),
                                                                 (2, -1), (-2, 1), (1, -2), (-1, 2))]
        cells.append({"hex": [1, -1], "terrain": "mountain"})
        board = {"hexagon": 3, "default": {"terrain": "sea"}, "cells": cells,
                 "layout": {"size_in": 1.5, "orientation": "pointy", "origin": [12.0, 12.0]}}
        state = self.new_state({"board": board, "players": ["red", "blue"], "winds": rng.choice(WINDS)})
        return state, positions_of(state)

    # ------------------------------------------------------------------ rules
    @takes_dice
    def apply(self, state: VigtavlState, positions: Positions, action: Action, cup: DiceCup) -> Result:
        """Rule on one action; its dice come from `cup` (the players' "rolls", else "roll for us", else the Result
        waits: rules/dice.py), in the order rules/vigtavl/combat.py's docstring gives."""
        try:
            new, verdicts = _handle(state, action, cup)
        except Illegal as bad:
            del cup.given[len(cup.given) - cup.left:]  # an action ruled illegal takes no more dice: faces given are moot
            verdict = Verdict(f"vigtavl.{bad.rule}", Outcome.ILLEGAL, bad.message, action.unit, bad.numbers)
            piece = state.piece(action.unit) if isinstance(action.unit, int) and action.kind in PUT_BACK else None
            if piece is not None:  # the camera may have seen it put there: it goes back where the rules keep it
                verdict = _fixed(verdict, fix.put_back(state, piece))
            return Result(state, positions_of(state), (verdict,), self.overlays(state, positions, action.unit))
        new, more = _settle(new)
        verdicts += more
        return Result(new, positions_of(new), tuple(verdicts), self.overlays(new, positions_of(new), action.unit))

    def camera_action(self, state: VigtavlState, unit: UnitId, seen: str, at: tuple[float, float],
                      came_from: tuple[float, float] | None = None, *, positions: Positions | None = None,
                      measured: Measured | None = None) -> Action | None:
        """A piece the camera saw put down or moved: in the placement phase an unplaced ship put on the sea is
        placed there; later a piece now on another hex than the state has it moved there (with the move rules:
        its type's reach, terrain, occupancy). A knight aboard a freighter put down on land (or a mountain) is
        unloaded there; a knight put on a hex where a freighter of its owner's floats boards it (the first with
        room, by tag). A piece already where the state has it, a passenger seen at sea (it rides its freighter),
        a piece not in play, and a position that is not a number (NaN, infinite) are no news."""
        p = state.piece(int(unit))
        if p is None or p.sunk_by is not None or p.captor is not None:
            return None
        if not (math.isfinite(at[0]) and math.isfinite(at[1])):
            return None
        cell = state.layout.from_table(float(at[0]), float(at[1]))[0]
        if state.phase == "placement":
            if is_ship(p.kind) and p.hex is None:
                return Action("place", p.id, {"hex": [cell.q, cell.r]})
            return None
        ground = geography(state.cells).kind(cell)
        if p.aboard is not None:
            if not is_knight(p.kind) or ground in (None, "sea"):
                return None
            return Action("unload", p.id, {"to": [cell.q, cell.r]})
        if p.hex is None or p.hex == cell:
            return None
        if is_knight(p.kind) and ground == "sea":
            ships = [f for f in state.units_at(cell) if f.kind == "freighter" and f.owner == p.owner]
            if ships:
                room = [f for f in ships if len(state.passengers(f.id)) < FREIGHTER_CAPACITY]
                return Action("load", p.id, {"freighter": (room or ships)[0].id})
        return Action("move", p.id, {"to": [cell.q, cell.r]})

    def as_ruled(self, state: VigtavlState, action: Action) -> Action:
        """An attack with no "mode" as the attack rule resolves it where the units stand: close combat from the same
        or an adjacent hex, else at range; "occupy" kept only where the victor would move in (close combat from
        another hex)."""
        p, u, target = action.params, action.unit, action.params.get("target")
        if action.kind != "attack" or not isinstance(u, int) or not isinstance(target, int) \
                or p.get("mode") not in (None, "close") or not isinstance(state, VigtavlState):
            return action
        a, t = state.piece(u), state.piece(target)
        ah, th = (state.where(a), state.where(t)) if a is not None and t is not None else (None, None)
        if a is None or ah is None or th is None:
            return action
        mode = p.get("mode") or ("close" if _close_by_default(a, ah, th) else "ranged")
        params = {**p, "mode": mode}
        if mode != "close" or ah == th:
            params.pop("occupy", None)  # at range, or on its hex already: there is nowhere to move in to
        return Action(action.kind, u, params)

    def describe(self, action: Action, name_of: Callable[[UnitId], str]) -> str:
        """Vigtavl's actions in the rule book's words, units by name and hexes as [q, r]; a wall by the two hexes
        it stands between. An attack moves in after a win only in close combat (an attack with no "mode" is said
        as the rule resolves it once `as_ruled` has said its mode). The dice given ("rolls") are not part of it."""
        if ROLLS_KEY in action.params:
            return self.describe(Action(action.kind, action.unit,
                                        {k: v for k, v in action.params.items() if k != ROLLS_KEY}), name_of)
        p, u, kind = action.params, action.unit, action.kind
        who = name_of(u) if u is not None else ""
        target, gun, freighter, keys = p.get("target"), p.get("artillery"), p.get("freighter"), set(p)
        if kind == "attack" and u is not None and isinstance(target, int) and keys <= {"target", "mode", "occupy"}:
            how = {"close": " in close combat", "ranged": " at range"}.get(str(p.get("mode")), "")
            then = " and moves in if it wins" if p.get("occupy") and p.get("mode") == "close" else ""
            return f"{who} attacks {name_of(target)}{how}{then}"
        if kind == "fire_artillery" and u is not None and isinstance(target, int) and isinstance(gun, int) \
                and keys == {"artillery", "target"}:
            return f"{who} fires {name_of(gun)} at {name_of(target)}"
        at = hex_words(p.get("hex"))
        if kind == "seize" and u is not None and at and keys <= {"hex", "target", "occupy"}:
            # no target: whatever stands there undefended ("seize a developed hex"); "artillery" or a gun's id: a gun
            what = at if target is None else f"the development on {at}" if target == "development" \
                else f"the artillery on {at}"
            then = " and moves onto it" if p.get("occupy") else ""
            return f"{who} seizes {what}{then}"
        if kind == "breach" and u is not None and keys == {"edge"} and (wall := _between(p["edge"])):
            return f"{who} tries to breach the wall {wall}"  # "Players may attempt to breach": the dice decide
        if kind == "build" and isinstance(p.get("kind"), str) and p["kind"].strip() and \
                keys in ({"kind", "hex"}, {"kind", "edge"}):
            thing = str(p["kind"])
            if thing == "wall" and "edge" in p and (wall := _between(p["edge"])):
                return f"build a wall {wall}"
            if thing != "wall" and at:
                return f"build {'an' if thing[:1] in 'aeiou' else 'a'} {thing} on {at}"
        if kind == "build" and isinstance(p.get("kind"), str) and p["kind"].strip() and keys == {"kind", "aboard"} \
                and isinstance(p["aboard"], int):
            thing = str(p["kind"])
            return f"build {'an' if thing[:1] in 'aeiou' else 'a'} {thing} aboard {name_of(p['aboard'])}"
        if kind == "move_wall" and keys == {"from", "to"} and (old := _between(p["from"])) and (new := _between(p["to"])):
            return f"move the wall {old} to {new}"
        if kind == "discharge" and u is not None and keys == {"to"} and (to := hex_words(p["to"])):
            return f"discharge {who} and recruit a new one on {to}"
        if kind == "load" and u is not None and isinstance(freighter, int) and keys == {"freighter"}:
            return f"load {who} onto {name_of(freighter)}"
        if kind == "tow" and u is not None and (to := hex_words(p.get("to"))) and keys == {"to", "artillery"}:
            return f"move {who} to {to}, towing {name_of(p['artillery'])}"
        if kind in ("move", "unload") and u is not None and (to := hex_words(p.get("to"))) and keys <= {"to", "tow"}:
            tow = p.get("tow")
            towing = f", towing {name_of(tow)}" if isinstance(tow, int) and not isinstance(tow, bool) else ""
            return f"{'unload' if kind == 'unload' else 'move'} {who} {'onto' if kind == 'unload' else 'to'} {to}{towing}"
        if kind == "place" and u is not None and keys == {"hex"} and at:
            return f"place {who} on {at}"
        if kind == "activate" and u is not None and not keys:
            return f"activate {who}"
        if kind == "finish" and not keys:
            return "finish the active unit's activation"  # whichever unit is active, whatever unit is named
        if kind in ("end_turn", "end_retaliation") and not keys:
            return "end the turn" if kind == "end_turn" else "end the retaliation"
        return super().describe(action, name_of)

    def legal_actions(self, state: VigtavlState, positions: Positions) -> list[Action]:

        return [act for act in candidates(state) if refused(state, act) is False]

    def tryable_actions(self, state: VigtavlState, positions: Positions) -> list[Action]:
        """Every action the acting player may try now, refused ones included (rules/vigtavl/tryable.py: attacks on
        every opponent's unit in range whatever blocks the line, builds of every kind paid for or not on every hex
        their rule allows, walls, loads and unloads, seizures, breaches, discharges), the legal ones first; moves
        are the camera's, and any other hex is `actions_at`'s."""
        return self._legal_first(state, positions, tryable(state))

    def actions_at(self, state: VigtavlState, positions: Positions, unit: UnitId | None,
                   at: tuple[float, float]) -> list[Action]:
        """The actions that could be declared at the table point the players clicked (inches, on the state's
        layout), legal or not, the legal ones first: for the selected `unit` a move or unload there, a load onto
        its freighter there, attacks and artillery fire at what stands there, seizures, a breach of or a wall on the
        clicked hex's nearest edge, discharge and recruit; for no unit every build the hex may take, a wall on its
        nearest edge, and in the placement phase each ship still to place (rules/vigtavl/tryable.py)."""
        return self._legal_first(state, positions, at_point(state, unit, at))

    def _legal_first(self, state: VigtavlState, positions: Positions, actions: list[Action]) -> list[Action]:
        """The actions the rules take, the legal ones first, each group in its order; one the rules cannot read at all
        (a RulesInputError) is left out."""
        ruled = [(act, refused(state, act)) for act in actions]
        return [a for a, no in ruled if no is False] + [a for a, no in ruled if no is True]

    def is_over(self, state: VigtavlState) -> bool:
        """After round 6 (3 phases of 2 rounds)."""
        return state.phase == "over"

    def score(self, state: VigtavlState) -> dict[str, Json]:
        """Each player's victory tokens; once the game is over, also its winner (None in a draw)."""
        out: dict[str, Json] = {"tokens": dict(standings(state))}
        if state.phase == "over":
            out["winner"] = winner_names(state)
        return out

    def status(self, state: VigtavlState) -> TurnStatus:
        """The phase, the round (1-6) and who acts (the retaliating player during a retaliation); Vigtavl counts
        rounds, one turn a player each, so there is no turn number (the state's `turn` is a seat)."""
        return TurnStatus(state.phase, state.round if state.phase != "over" else None, None,
                          None if state.phase == "over" else state.player)

    def panel(self, state: VigtavlState, positions: Positions) -> Panel:
        """Phase, round of 6 and whose turn; what is left to do; every piece; the victory tokens (rules/vigtavl/panel.py)."""
        return vigtavl_panel(state)

    def unit_name(self, state: VigtavlState, unit: UnitId) -> str | None:
        """A unit built during the game by its kind and tag ("caravel 102"), as the rulings name it."""
        piece = state.piece(unit) if state is not None else None
        return f"{piece.kind} {piece.id}" if piece is not None else None

    def off_table(self, state: VigtavlState) -> frozenset[UnitId]:
        """A sunk ship (and what it carried) is off the map; a land unit aboard a freighter rides on it, unseen."""
        return frozenset(p.id for p in state.pieces if p.sunk_by is not None or p.aboard is not None)

    def dump_state(self, state: VigtavlState) -> dict[str, Json]:
        return dump(state)

    def load_state(self, obj: Mapping[str, Json]) -> VigtavlState:
        return load(obj)

    # ------------------------------------------------------------------ overlays
    def hex_board(self, state: VigtavlState) -> tuple[HexBoard, Layout]:
        """The map's land, sea and mountain cells, with the walls built so far on their edges."""
        return _hex_board(state.cells, state.walls), state.layout

    def overlays(self, state: VigtavlState, positions: Positions, selected: UnitId | None = None) -> tuple[Overlay, ...]:
        lay = state.layout
        out: list[Overlay] = []
        for d in state.developments:
            out.append(Overlay(Shape.POLYGON, lay.polygon(d.hex), "hex-highlight", label=d.kind, owner=d.owner))
        for w in state.walls:
            out.append(Overlay(Shape.SEGMENT, lay.edge_segment(w.edge), "wall", owner=w.owner))
        p = state.piece(selected) if selected is not None else None
        if p is not None and p.in_play and p.kind in COMBAT_UNITS and state.phase in ("build", "battle"):
            start = state.where(p)
            assert start is not None
            for h in sorted(destinations(state, p, movement(p), start)):
                out.append(Overlay(Shape.POLYGON, lay.polygon(h), "hex-reachable", unit=p.id, owner=p.owner))
            reach = STATS[p.kind].attack_range
            for t in state.pieces:
                th = state.where(t)
                if t.owner == p.owner or not t.in_play or th is None or t.kind not in COMBAT_UNITS or t.aboard is not None:
                    continue
                line = line_of_fire(state, start, th, p.owner, p.kind, max(reach, 1)) if reach else None
                if distance(start, th) <= 1 or (line is not None and not line.blocked_by):
                    out.append(Overlay(Shape.SEGMENT, (lay.to_table(start), lay.to_table(th)), "attack-line",
                                       label=f"range {distance(start, th)}", unit=p.id, owner=p.owner))
        return tuple(out)

    # ------------------------------------------------------------------ judge
    def judge(self, scenario: Mapping[str, Json], rng: random.Random | None) -> dict[str, Json]:
        return judge(self, scenario, rng)


@functools.lru_cache(maxsize=8)
def _hex_board(cells: tuple[tuple[Hex, str], ...], walls: tuple[Wall, ...]) -> HexBoard:
    """The map as a HexBoard (made once for each map and set of walls: a state changes far more often)."""
    return HexBoard({h: Cell(terrain) for h, terrain in cells}, {w.edge: "wall" for w in walls})


def _roster_pieces(roster: Any, players: tuple[str, ...]) -> tuple[Piece, ...]:
    """Pieces from a roster (rules/roster.py form); a unit with "aboard": tag starts on that freighter."""

    r = parse_roster(roster, "the Vigtavl roster")
    out = []
    for u in r.units.values():
        kind = piece_kind(u.profile, f"the roster, tag {u.tag}")
        if u.owner not in players:
            raise ScenarioError(f"The roster's tag {u.tag} belongs to {u.owner!r}, who is not among the players {list(players)}.")
        aboard = u.extra.get("aboard")
        out.append(Piece(u.tag, kind, u.owner, None, aboard if isinstance(aboard, int) else None))
    return tuple(sorted(out, key=lambda p: p.id))


__all__ = ["Vigtavl", "VigtavlState", "leaders", "map_check", "positions_of", "standings", "starting_pieces"]
