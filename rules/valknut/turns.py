"""Valknut's flow between actions: the beginning of a turn, the end of an activation, the end of the game.

Beginning of each turn (rule book, with our Turn Structure option where it is silent):
- Armor is restored to its defined value; Deer Marks and halvings and Wolf-4 saves reset.
- Bear 4: regain 2 HP (+1 per further Bear step), up to 10.
- Each killed unit rolls 1d6 to come back: 4+ the first turn after it died, then 3+, 2+, then it returns
  without a roll. A unit that made its roll is placed (action "redeploy") before any activation. The turn
  begins inside the action that ends the last activation (or places the last unit), so these rolls are that
  action's faces (after its own), in tag order, each rolled by the unit's owner.
- Every unit takes a Step down a Path (action "choose_path").
- Who activates first: the `initiative` option.
"""

from __future__ import annotations

from dataclasses import replace

from rules.dice import DiceCup
from rules.engine import Outcome, Positions, Verdict, counted
from rules.geometry import wholly_within
from rules.valknut.board import Battlefield
from rules.valknut.state import GroundStone, ValknutState
from rules.valknut.table import Table, called
from rules.valknut.units import bear_regen


def roll_off(state: ValknutState, cup: DiceCup, rule: str, what: str, reads: str) -> tuple[str, Verdict]:
    """Each player rolls 1d6, the first player listed first (two rolls, asked one after the other); a tie rolls
    again (our option: the book is silent on ties). The higher roller is returned."""
    a, b = state.players
    rounds: list[tuple[int, int]] = []
    while True:
        again = f", again after a tie at {rounds[-1][0]}" if rounds else ""
        ra = cup.one(6, rule, f"{what}{again}", reads, side=a)
        rb = cup.one(6, rule, f"{what}{again}", reads, side=b)
        rounds.append((ra, rb))
        if ra != rb:
            break
    winner = a if ra > rb else b
    ties = "".join(f" (a tie at {x}, rolled again)" for x, _ in rounds[:-1])
    return winner, Verdict(
        rule, Outcome.INFO, f"Roll-off: {a} rolled {ra}, {b} rolled {rb}{ties}; {winner} rolled higher.",
        numbers={a: ra, b: rb, "rounds": [[x, y] for x, y in rounds], "higher": winner},
    )


def start_turn(state: ValknutState, positions: Positions, cup: DiceCup) -> tuple[ValknutState, list[Verdict]]:
    """The beginning of the next turn (see the module docstring); the game ends after the turn limit."""
    verdicts: list[Verdict] = []
    if state.turn >= state.options.turn_limit:
        return finish(state, verdicts)
    table = Table.of(state, positions)
    units = []
    for u in state.units:
        if u.alive and u.on_table:
            stats = table.stats(u.tag)
            regen = bear_regen(table.bear_level(u.tag))
            hp = min(stats.hp_max, u.hp + regen)
            if hp > u.hp:
                verdicts.append(Verdict("valknut.path.bear.4", Outcome.INFO,
                                        f"Unit {u.tag} regains {hp - u.hp} HP (Path of the Bear).", u.tag,
                                        {"hp": hp}))
            u = replace(u, hp=hp, armor=stats.armor)
        elif not u.alive and not u.ready:
            if u.redeploy_target <= 1:
                u = replace(u, ready=True)
                verdicts.append(Verdict("valknut.redeploy.roll", Outcome.INFO,
                                        f"Unit {u.tag} returns without a roll this turn.", u.tag))
            else:
                r = cup.one(6, "valknut.redeploy.roll", f"{called(u)}'s return to the battlefield",
                            f"{u.redeploy_target}+ returns it this turn", u.tag, side=u.owner)
                ok = r >= u.redeploy_target
                verdicts.append(Verdict(
                    "valknut.redeploy.roll", Outcome.INFO,
                    f"Unit {u.tag} rolled {r} against {u.redeploy_target}+ to return: "
                    + ("it returns this turn." if ok else f"it stays away (next turn {u.redeploy_target - 1}+)."),
                    u.tag, {"roll": r, "target": u.redeploy_target},
                ))
                u = replace(u, ready=True) if ok else replace(u, redeploy_target=u.redeploy_target - 1)
        u = replace(u, marks=0, halvings=0, wolf_saves=0, stepped=False, activated=False, actions_taken=())
        units.append(u)
    state = replace(state, units=tuple(units), turn=state.turn + 1, phase="turn_start",
                    active_player=None, active_unit=None)
    if state.turn == 1 or state.options.initiative == "alternate":
        first = state.first_player or state.players[0]
        if state.turn > 1 and state.turn_first is not None:
            first = state.other(state.turn_first)
    else:
        first, v = roll_off(state, cup, "valknut.turn.initiative", f"the initiative roll-off for turn {state.turn}",
                            "the higher roll activates first")
        verdicts.append(v)
    state = replace(state, turn_first=first)
    verdicts.append(Verdict("valknut.turn.start", Outcome.INFO,
                            f"Turn {state.turn} begins; {first} activates first.", numbers={"turn": state.turn}))
    return maybe_begin_activations(state), verdicts


def maybe_begin_activations(state: ValknutState) -> ValknutState:
    """Once every unit has stepped and every returning unit is placed, activations begin."""
    if state.phase != "turn_start":
        return state
    if any(not u.stepped for u in state.units) or any(u.ready for u in state.units):
        return state
    state = replace(state, phase="activations", active_player=state.turn_first, active_unit=None)
    return next_activation(state, state.turn_first or state.players[0], prefer_same=True)


def can_activate(state: ValknutState, player: str) -> bool:
    return any(u.owner == player and u.alive and u.on_table and not u.activated for u in state.units)


def next_activation(state: ValknutState, player: str, prefer_same: bool) -> ValknutState:
    """Hand the next activation to `player` if it has units left (or its opponent otherwise)."""
    other = state.other(player)
    if can_activate(state, player) and prefer_same:
        return replace(state, active_player=player, active_unit=None)
    if can_activate(state, other):
        return replace(state, active_player=other, active_unit=None)
    if can_activate(state, player):
        return replace(state, active_player=player, active_unit=None)
    return replace(state, active_player=None, active_unit=None)


def deliveries(state: ValknutState, positions: Positions, tag: int) -> tuple[ValknutState, list[Verdict]]:
    """Our Winning option "runestones": a carrier wholly within its own Drop Zone scores the Runestones it
    took from another section."""
    if state.options.win != "runestones":
        return state, []
    unit = state.unit(tag)
    zone = state.drop_zone(unit.owner)
    if not unit.carrying or zone is None or tag not in positions or not unit.alive:
        return state, []
    section = Battlefield(*state.board).section(zone)
    margin = wholly_within(positions[tag], unit.radius_in, section.area)
    if margin.at_least(0.0) is not Outcome.LEGAL:
        return state, []
    scored = [s for s in unit.carrying if s.origin != zone]
    if not scored:
        return state, []
    kept = tuple(s for s in unit.carrying if s.origin == zone)
    state = state.with_unit(replace(unit, carrying=kept))
    state = replace(state, delivered=state.delivered.plus(unit.owner, len(scored)))
    total = state.delivered.of(unit.owner)
    v = Verdict("valknut.win.runestones", Outcome.INFO,
                f"Unit {tag} delivered {counted(len(scored), 'Runestone')} to {unit.owner}'s Drop Zone (section {zone}); "
                f"{unit.owner} has {total} of {state.options.target}.", tag, {"delivered": total})
    return state, [v]


def check_target(state: ValknutState) -> ValknutState:
    """The game ends as soon as a player reaches the option `target` (Runestones or kills)."""
    tally = state.delivered if state.options.win == "runestones" else state.kills
    for p in state.players:
        if tally.of(p) >= state.options.target:
            return replace(state, phase="over", winner=p, active_player=None, active_unit=None)
    return state


def finish(state: ValknutState, verdicts: list[Verdict]) -> tuple[ValknutState, list[Verdict]]:
    """The turn limit is reached: most Runestones (then kills), or most kills, wins; else a draw."""
    a, b = state.players
    if state.options.win == "runestones":
        key = {p: (state.delivered.of(p), state.kills.of(p)) for p in state.players}
    else:
        key = {p: (state.kills.of(p), 0) for p in state.players}
    winner = a if key[a] > key[b] else b if key[b] > key[a] else "draw"
    verdicts.append(Verdict("valknut.win.turn_limit", Outcome.INFO,
                            f"The turn limit ({state.options.turn_limit}) is reached: "
                            + ("a draw." if winner == "draw" else f"{winner} wins."),
                            numbers={p: list(key[p]) for p in state.players}))
    return replace(state, phase="over", winner=winner, active_player=None, active_unit=None), verdicts


def end_activation(state: ValknutState, positions: Positions, tag: int, cup: DiceCup) -> tuple[ValknutState, list[Verdict]]:
    """The unit's activation is over: deliveries are scored, then the next player activates (or the turn ends)."""
    state, verdicts = deliveries(state, positions, tag)
    unit = state.unit(tag)
    state = state.with_unit(replace(unit, activated=True, actions_taken=()))
    state = check_target(state)
    if state.phase == "over":
        return state, verdicts
    same = state.options.activation == "player_turns"
    state = next_activation(state, unit.owner, prefer_same=same)
    if state.active_player is None:
        state, more = start_turn(state, positions, cup)
        verdicts += more
    return state, verdicts


def drop_stones(state: ValknutState, tag: int, x: float, y: float) -> ValknutState:
    """A killed carrier drops its Runestones where it stood."""
    unit = state.unit(tag)
    stones = tuple(GroundStone(x, y, s.origin) for s in unit.carrying)
    return replace(state, ground=state.ground + stones)
