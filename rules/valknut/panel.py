"""Valknut's game panel (`Game.panel`): the turn, what is left to do, each unit, the score and how to win.

Words are the rule book's (Runic Stockpile, Drop Zone, Step down a Path, Runestone, Armor, Marks); the turn
limit and the way to win are our options (the book's Turn Structure and Winning are empty).
"""

from __future__ import annotations

from rules.engine import Outcome, Panel, Positions, SideScore, UnitLine, listed
from rules.valknut.actions import deployer, stockpile_placer, zone_chooser
from rules.valknut.board import odd
from rules.valknut.state import ValknutState
from rules.valknut.table import Table
from rules.valknut.units import PATHS, PENALTIES, UnitState

PENALTY_WORDS = dict(zip(PENALTIES, ("-1 Accuracy", '-2" Speed', "-1 Damage", "-1 Armor"), strict=True))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def actions_left(table: Table, unit: UnitState) -> str:
    """What the unit may still do this turn ("2 actions: Move, Attack, ..."; at the beginning of a turn its Step
    and its redeployment); "" once it has activated."""
    state = table.state
    if state.phase == "turn_start":
        return ", ".join(w for w, due in (("a Step down a Path", not unit.stepped),
                                          ("redeploy in its Drop Zone", unit.ready)) if due)
    if state.phase != "activations" or not unit.alive or not unit.on_table or unit.activated:
        return ""
    n = table.stats(unit.tag).actions - len(unit.actions_taken)
    if n <= 0:
        return ""
    kinds = {"move": "Move", "disengage": "Disengage", "attack": "Attack", "pick_up_runestone": "Pick up Runestone"}
    near = table.engaged(unit.tag) if unit.tag in table.positions else None
    if near is not None and not near:
        del kinds["disengage"]  # only a unit within 1" of an enemy may Disengage
    elif near and any(sure is Outcome.LEGAL for _, _, sure in near):
        del kinds["move"]  # surely within 1" of an enemy: it cannot Move
    if unit.steps.raven >= 1:
        kinds["assign_spirits"] = "assign Spirits"
    if unit.steps.bear >= 2:
        kinds["bear_restore"] = "Bear restore"
    if state.options.distinct_actions:
        kinds = {k: w for k, w in kinds.items() if k not in unit.actions_taken}
    return f"{_plural(n, 'action')}: {', '.join(kinds.values())}"


def unit_words(table: Table, unit: UnitState) -> str:
    """One unit as the game keeps it: "HP 8 of 10, Armor 1, Bear 1, Marked x1, carries a Runestone"."""
    bits: list[str] = []
    if not unit.alive:
        bits.append("killed")
        if unit.ready:
            bits.append("made its return roll: to be placed in its Drop Zone")
        elif unit.redeploy_target <= 1:
            bits.append("returns next turn without a roll")
        else:
            bits.append(f"returns on {unit.redeploy_target}+ at the beginning of the next turn")
        if unit.penalty_due:
            bits.append("reinforcements depleted: choose a penalty before it returns")
    elif not unit.on_table:
        bits.append("not deployed yet")
    else:
        stats = table.stats(unit.tag)
        bits += [f"HP {unit.hp} of {stats.hp_max}", f"Armor {unit.armor}", f'Speed {stats.speed_in:g}"']
        if unit.marks:
            bits.append(f"Marked x{unit.marks}")
        if unit.halvings:
            bits.append("Speed halved" + (f" x{unit.halvings}" if unit.halvings > 1 else ""))
        if unit.carrying:
            bits.append("carries " + ("a Runestone" if len(unit.carrying) == 1 else f"{len(unit.carrying)} Runestones"))
        if unit.activated:
            bits.append("activated")
    steps = [f"{p.title()} {unit.steps.of(p)}" for p in PATHS if unit.steps.of(p)]
    if steps:
        bits.append("Paths: " + ", ".join(steps))
    if unit.penalties:
        bits.append("penalties " + ", ".join(PENALTY_WORDS[p] for p in unit.penalties))
    return ", ".join(bits)


def _names(state: ValknutState, units: list[UnitState]) -> str:
    return ", ".join(u.name for u in units)


def headline(state: ValknutState) -> str:
    """Where the game stands: "Turn 3 of 6 · activations · red to activate"."""
    turn = f"Turn {state.turn} of {state.options.turn_limit}"
    if state.phase == "stockpiles":
        return f"Setup · Runic Stockpiles · {stockpile_placer(state)} places"
    if state.phase == "roll_off":
        return "Setup · roll-off for the Drop Zones"
    if state.phase == "drop_zones":
        return f"Setup · Drop Zones · {zone_chooser(state)} chooses"
    if state.phase == "deploy":
        return f"Setup · deploying · {deployer(state)} places a unit"
    if state.phase == "turn_start":
        return f"{turn} · beginning of the turn"
    if state.phase == "activations":
        return f"{turn} · activations · {state.active_player} to activate"
    return f"Game over after turn {state.turn} · {ended(state)}"


def ended(state: ValknutState) -> str:
    """Why the game is over, one clause."""
    tally = state.delivered if state.options.win == "runestones" else state.kills
    if state.winner in state.players and tally.of(str(state.winner)) >= state.options.target:
        return f"{state.winner} reached {state.options.target}"
    outcome = "a draw" if state.winner in (None, "draw") else f"{state.winner} wins"
    return f"the turn limit ({state.options.turn_limit}) is reached: {outcome}"


def to_do(table: Table) -> tuple[str, ...]:
    """What is left to do now, a line each."""
    state = table.state
    if state.phase == "stockpiles":
        who = stockpile_placer(state)
        want_odd = who == state.odd_player
        used = {s.section for s in state.stockpiles}
        free = [str(n) for n in range(1, 7) if odd(n) == want_odd and n not in used]
        return (f"{who} places a Runic Stockpile in an {'odd' if want_odd else 'even'} section: "
                f"section {listed(free)} left",)
    if state.phase == "roll_off":
        return ("Roll off: each player rolls 1d6; the higher roller chooses its Drop Zone first",)
    if state.phase == "drop_zones":
        who = zone_chooser(state)
        first = state.drop_zone(state.first_player or state.players[0])
        rest = "" if first is None else f" (neither section {first} nor one next to it)"
        return (f"{who} chooses a section as its Drop Zone{rest}",)
    if state.phase == "deploy":
        placer = deployer(state)
        waiting = [u for u in state.units if u.owner == placer and not u.on_table]
        return (f"{placer} puts a unit down wholly within its Drop Zone (section {state.drop_zone(str(placer))}); "
                f"the camera deploys it where it stands (one already standing there: declare it on the Declare list): "
                f"{_names(state, waiting)}",)
    if state.phase == "turn_start":
        lines: list[str] = []
        stepping = [u for u in state.units if not u.stepped]
        if stepping:
            lines.append(f"Units to take a Step down a Path: {_names(state, stepping)}")
        ready = [u for u in state.units if u.ready]
        if ready:
            lines.append(f"Units to put back wholly within their Drop Zone (the camera redeploys them where they "
                         f"stand): {_names(state, ready)}")
        return tuple(lines)
    if state.phase == "activations":
        if state.active_unit is not None:
            unit = state.unit(state.active_unit)
            return (f"{unit.name}: {actions_left(table, unit) or 'no action'} left; or end its activation",)
        out: list[str] = []
        for p in (state.active_player, *(q for q in state.players if q != state.active_player)):
            waiting = [u for u in state.units if u.owner == p and u.alive and u.on_table and not u.activated]
            if waiting:
                out.append(f"{_cap(str(p))} units to activate: {_names(state, waiting)}")
        return tuple(out)
    return ()


def victory(state: ValknutState) -> str:
    """How the game is won, one sentence (our option: the book's Winning is empty)."""
    o = state.options
    if o.win == "runestones":
        return (f"The first player to deliver {o.target} Runestones, each taken from a Runic Stockpile in another "
                f"section and carried wholly within its own Drop Zone, wins; after turn {o.turn_limit} the most "
                "Runestones, then the most kills, wins (our option: the rule book's Winning is empty).")
    return (f"The first player to kill {o.target} enemy units wins; after turn {o.turn_limit} the most kills wins "
            "(our option: the rule book's Winning is empty).")


def side_scores(state: ValknutState) -> tuple[SideScore, ...]:
    """Each player's Runestones delivered and kills; the points are the count the win option counts."""
    out = []
    for p in state.players:
        d, k = state.delivered.of(p), state.kills.of(p)
        if state.options.win == "runestones":
            out.append(SideScore(p, f"{d} of {state.options.target} Runestones delivered, {_plural(k, 'kill')}", d))
        else:
            out.append(SideScore(p, f"{k} of {state.options.target} kills, {d} Runestones delivered", k))
    return tuple(out)


def banner(state: ValknutState) -> str | None:
    """"Blue wins: 3 of 3 Runestones delivered" once someone has won; None before and for a draw."""
    if state.phase != "over" or state.winner not in state.players:
        return None
    w = str(state.winner)
    other = state.other(w)
    runes = state.options.win == "runestones"
    tally = state.delivered if runes else state.kills
    what = "Runestones delivered" if runes else "kills"
    if tally.of(w) >= state.options.target:
        return f"{_cap(w)} wins: {tally.of(w)} of {state.options.target} {what}"
    if runes and tally.of(w) == tally.of(other):
        return (f"{_cap(w)} wins at the turn limit: {tally.of(w)} Runestones each, "
                f"{state.kills.of(w)} kills to {state.kills.of(other)}")
    return f"{_cap(w)} wins at the turn limit: {tally.of(w)} {what} to {tally.of(other)}"


def panel(state: ValknutState, positions: Positions) -> Panel:
    """The game panel for `state` with the bases where `positions` put them."""
    table = Table.of(state, positions)
    units = tuple(UnitLine(u.tag, u.name, u.owner, unit_words(table, u), gone=not (u.alive and u.on_table),
                           left=actions_left(table, u)) for u in state.units)
    return Panel(headline=headline(state), to_do=to_do(table), units=units, score=side_scores(state),
                 victory=victory(state), winner=banner(state), over=state.phase == "over")
