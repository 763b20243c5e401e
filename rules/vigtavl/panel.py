"""Vigtavl's game panel (`Game.panel`): where the game stands, what is left to do, each piece, the victory tokens.

In the rule book's words: the phase and its round of 6 ("3 phases that are 2 rounds each"), whose turn (or whose
Retaliation); what the acting player may still do (place ships; activate units with silver, each for 2 unique
actions, move and attack; spend gold; end the turn); each piece where it is (on a hex, aboard a freighter, a
prisoner on the captor's developed hex, sunk in a ship graveyard, not yet placed) with its actions left; each
player's victory tokens, gold and silver, and the end-of-game counts (prisoners, ships sunk, developments).
"""

from __future__ import annotations

from rules.engine import Panel, SideScore, UnitLine, listed
from rules.vigtavl.state import Piece, VigtavlState, title
from rules.vigtavl.units import COMBAT_UNITS, LAST_ROUND, STATS, is_ship
from rules.vigtavl.victory import end_counts, leaders, standings, winners

VICTORY = ("The player with the most victory tokens at the end of round 6 wins: Conquer, Battle and Rescue as "
           "they happen, Citadel, Complex and Great Wall once each, General, Admiral and Builder (3 each) at the end.")
"""Objective: "be the player with the most victory tokens at the end of the game"."""


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def _hex(p: Piece) -> str:
    return "" if p.hex is None else f"[{p.hex.q}, {p.hex.r}]"


def _where(state: VigtavlState, p: Piece) -> str:
    if p.sunk_by is not None:
        return f"sunk, in {p.sunk_by}'s ship graveyard"
    if p.captor is not None:
        return f"prisoner of {p.captor}, held at {_hex(p)}"
    if p.aboard is not None:
        carrier = state.piece(p.aboard)
        return f"aboard {title(carrier) if carrier is not None else f'freighter {p.aboard}'}"
    return f"on {_hex(p)}" if p.hex is not None else "not yet placed"


def actions_left(state: VigtavlState, p: Piece) -> tuple[str, ...]:
    """The unique actions (move, attack) `p` may still take this turn: a unit of the acting player, in play, not
    laid on its side, active or affordable with the silver left (a retaliating player: his one unit)."""
    now = state.now
    if state.phase not in ("build", "battle") or p.owner != state.player or not p.in_play or p.kind not in COMBAT_UNITS:
        return ()
    if p.id in now.spent or (now.retaliating is not None and now.retaliation_unit not in (None, p.id)):
        return ()
    if now.active != p.id and now.open_move(p.id) is None and STATS[p.kind].cost > state.silver[state.seat(p.owner)]:
        return ()
    kinds = ["move"]
    if state.phase == "battle" and p.kind != "freighter" and (p.aboard is None or p.kind == "archer"):
        kinds.append("attack")
    used = now.used_by(p.id)
    return tuple(k for k in kinds if k not in used or (k == "move" and now.open_move(p.id) is not None))


def unit_line(state: VigtavlState, p: Piece) -> UnitLine:
    """One piece: its kind, where it is, its cost and movement, what it carries and how far through its turn."""
    stats = STATS[p.kind]
    bits = [f"{p.kind} {_where(state, p)}", f"cost {stats.cost}, movement {stats.movement}"
            + (f", attack range {stats.attack_range}" if stats.attack_range else "")]
    if p.kind == "freighter" and (cargo := state.passengers(p.id)):
        bits.append("carries " + listed([title(c) for c in cargo]))
    now = state.now
    if p.id == now.active:
        used = now.used_by(p.id)
        bits.append("active" + (f", {listed(list(used))} taken" if used else ""))
    elif p.id in now.spent:
        bits.append("laid on its side")
    if p.id in now.breached:
        bits.append("breached this turn")
    gone = not p.in_play or p.aboard is not None
    return UnitLine(p.id, title(p), p.owner, "; ".join(bits), gone, ", ".join(actions_left(state, p)))


def side_score(state: VigtavlState, player: str) -> SideScore:
    """A player's victory tokens (by kind), gold and silver, and the end-of-game counts."""
    tokens = state.tokens(player)
    kinds: dict[str, int] = {}
    for c in state.claims:
        if c.player == player:
            kinds[c.kind] = kinds.get(c.kind, 0) + c.tokens
    counts = end_counts(state)
    seat = state.seat(player)
    words = (_count(tokens, "victory token") + (" (" + ", ".join(f"{k} {n}" for k, n in kinds.items()) + ")" if kinds else "")
             + f"; gold {state.gold[seat]}, silver {state.silver[seat]}; "
             + ", ".join((_count(counts["general"][player], "prisoner") + " held", _count(counts["admiral"][player], "ship")
                          + " sunk", _count(counts["builder"][player], "development"))))
    return SideScore(player, words, float(tokens))


def banner(state: VigtavlState) -> str | None:
    """"Red wins: 9 victory tokens to 3." once the game is over; None before, and in a draw."""
    won = winners(state)
    if not won:
        return None
    table = standings(state)
    best = table[won[0]]
    if len(won) > 1:
        return f"{listed(won).capitalize()} share the win: {best} victory tokens each."
    rest = sorted((n for p, n in table.items() if p not in won), reverse=True)
    return f"{won[0].capitalize()} wins: {best} victory tokens to {', '.join(str(n) for n in rest)}."


def _headline(state: VigtavlState) -> str:
    if state.phase == "over":
        table = standings(state)
        if winners(state):
            return f"Game over after round {LAST_ROUND}"
        return f"Game over after round {LAST_ROUND}: a draw, {table[leaders(state)[0]]} victory tokens each"
    bits = [f"{state.phase.capitalize()} phase", f"round {state.round} of {LAST_ROUND}",
            f"{state.players[state.turn]}'s turn"]
    if state.phase == "placement":
        bits[-1] = f"{state.players[state.turn]} places a ship"
    if state.now.retaliating is not None:
        bits.append(f"{state.now.retaliating} retaliates")
    return " · ".join(bits)


def _to_do(state: VigtavlState) -> tuple[str, ...]:
    player, now = state.player, state.now
    if state.phase == "over":
        return ()
    mine = [p for p in state.pieces if p.owner == player]
    if state.phase == "placement":
        ships = [title(p) for p in mine if is_ship(p.kind) and p.hex is None and p.sunk_by is None]
        return (f"Ships to place on a sea hex ({player}): {', '.join(ships)}",) if ships else ()
    out: list[str] = []
    silver, gold = state.silver[state.seat(player)], state.gold[state.seat(player)]
    active = state.piece(now.active) if now.active is not None else None
    if active is not None:
        left = actions_left(state, active)
        out.append(f"{title(active)}: {listed(list(left))} left" if left else f"{title(active)}: finish it")
    if now.losers:
        who = title(active) if active is not None else "the active unit"
        out.append(f"{listed(list(now.losers)).capitalize()} may retaliate once {who} has finished")
    if now.retaliating is None or now.retaliation_unit is None:
        can = [p for p in mine if p.id != now.active and now.open_move(p.id) is None and actions_left(state, p)]
        if can:
            out.append(f"Units to activate ({silver} silver): " + ", ".join(f"{title(p)} ({STATS[p.kind].cost})" for p in can))
    if now.retaliating is not None:
        out.append(f"{now.retaliating.capitalize()} retaliates with 1 unit and {silver} silver (no building), "
                   "or ends the retaliation")
        return tuple(out)
    if gold:
        out.append(f"Gold to spend: {gold} (units, developments, walls)")
    out.append("End the turn (unspent gold and silver are lost)")
    return tuple(out)


def panel(state: VigtavlState) -> Panel:
    """The game panel for `state` (see the module docstring)."""
    return Panel(
        headline=_headline(state),
        to_do=_to_do(state),
        units=tuple(unit_line(state, p) for p in state.pieces),
        score=tuple(side_score(state, p) for p in state.players),
        victory=VICTORY,
        winner=banner(state),
        over=state.phase == "over",
    )
