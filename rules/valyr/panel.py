"""Valyr's game panel: where the round stands, what is left to do, each unit's card, each army, the winner.

In the rule book's words: rounds with no limit; the priority token; a player's turn is one vertical card whose
unit takes as many actions as its Energy, then is exhausted (card horizontal); distress against health; the
last player standing wins. Valyr counts no points, so an army's line counts its units standing.
"""

from __future__ import annotations

from typing import Any  # the game module imports this one: its state types are not named here

from rules.engine import Json, Panel, Positions, SideScore, UnitLine, listed
from rules.valyr.cards import army_appraisal

VICTORY = ("The last player standing wins: a player is out once every one of their units is defeated (distress "
           "above health) or they concede.")
"""How Valyr is won, from the rule book's End of Game."""


def _n(v: float) -> str:
    return f"{v:g}"


def token_passes_to(state: Any) -> str | None:
    """Who holds the priority token next round: it passes to the right (the previous player in seating order),
    skipping players no longer standing; before the first round, whoever holds it already (None: not handed out)."""
    if state.round == 0 or state.priority not in state.players:
        return state.priority
    standing = state.standing()
    i, n = state.players.index(state.priority), len(state.players)
    right = [state.players[(i - k) % n] for k in range(1, n + 1)]
    return next((p for p in right if p in standing), state.priority)


def priority_tie(state: Any) -> list[str]:
    """The players tied for the lowest appraisal (more than one: the token is flipped or rolled for)."""
    totals = {p: army_appraisal([u.card for u in state.army(p)]) for p in state.players}
    low = min(totals.values(), default=0.0)
    return [p for p in state.players if abs(totals[p] - low) < 1e-9]


def actions_left(state: Any, unit: Any) -> int:
    """Actions `unit` may still take this turn: the rest of its Energy while it acts, all of it while its card may
    be picked, none otherwise."""
    energy = unit.card.combat.energy
    if state.over or state.to_play != unit.owner or not unit.vertical or unit.owner in state.conceded:
        return 0
    if state.active == unit.tag:
        return max(0, energy - state.actions_used)
    return energy if state.active is None else 0


def _left_words(state: Any, unit: Any) -> str:
    left = actions_left(state, unit)
    if left == 0:
        return ""
    c = unit.card.combat
    first = state.active != unit.tag or state.moves_made == 0
    move = f'move up to Sprint {_n(c.sprint)}"' if first else f'move up to Stamina {_n(c.stamina)}"'
    what = f"{move}, attack" + (", ability" if any(a.active for a in unit.card.abilities) else "")
    if state.active == unit.tag:
        return f"{left} of {c.energy} actions left: {what}"
    return f"{left} action{'s' if left != 1 else ''}: {what}"


def _unit_line(state: Any, unit: Any, positions: Positions) -> UnitLine:
    c = unit.card.combat
    card = "defeated" if unit.defeated else "card horizontal (exhausted)" if unit.exhausted else "card vertical"
    words = f"distress {unit.distress} of health {c.health}, armor {c.armor}, dodge {c.dodge}; {card}"
    if state.active == unit.tag:
        words += f"; acting, {state.actions_used} of {c.energy} actions used"
    if not unit.defeated and unit.tag not in positions:
        words += "; not seen on the table"
    if unit.owner in state.conceded:
        words += f"; {unit.owner} conceded"
    return UnitLine(unit.tag, unit.name, unit.owner, words, gone=unit.defeated, left=_left_words(state, unit))


def _side_score(state: Any, player: str) -> SideScore:
    army = state.army(player)
    standing = [u for u in army if not u.defeated]
    words = f"{len(standing)} of {len(army)} units standing, {sum(u.distress for u in standing)} distress on them"
    if player in state.conceded:
        words += "; conceded"
    elif not standing:
        words += "; defeated"
    if state.priority == player and not state.over:
        words += "; holds the priority token"
    return SideScore(player, words, None)


def _headline_and_to_do(state: Any) -> tuple[str, list[str]]:
    if state.over:
        why = (f"{state.winner} wins, the last player standing" if state.winner
               else "nobody is left standing (every player defeated or conceded)")
        return f"Game over after round {state.round} · {why}", []
    if state.round == 0:
        tied = priority_tie(state)
        head = "Before the first round"
        if state.priority is not None:
            return head, [f"Start the first round: armies are checked against the appraisal limit; "
                          f"{state.priority} holds the priority token and plays first"]
        if len(tied) > 1:
            how = (f"flip a coin (1 d6: 1-3 {tied[0]}, 4-6 {tied[1]})" if len(tied) == 2
                   else "roll off (1 d6 each, the highest wins)")
            return head, [f"Start the first round: {listed(tied)} tie for the lowest appraisal, so {how} for the "
                          "priority token"]
        return head, [f"Start the first round: armies are checked against the appraisal limit; {tied[0]} has the "
                      "lowest appraisal and takes the priority token"]
    token = f"priority token: {state.priority}"
    if state.to_play is None:
        nxt = token_passes_to(state)
        return (f"Round {state.round} is over · every card is exhausted · {token}",
                [f"Start round {state.round + 1}: every card turns vertical; the priority token passes right to "
                 f"{nxt}"])
    if state.active is not None and (u := state.unit(state.active)) is not None:
        c = u.card.combat
        head = f"Round {state.round} · {state.to_play}'s turn · {u.name} acting ({state.actions_used} of {c.energy} " \
               f"actions used) · {token}"
        return head, [f"{u.name}: {_left_words(state, u)}; or end its turn"]
    cards = [u.name for u in state.army(state.to_play) if u.vertical]
    head = f"Round {state.round} · {state.to_play}'s turn · {token}"
    todo = [f"{state.to_play}: pick a vertical card to act: {listed(cards)}"]
    others = [f"{p}: {listed([u.name for u in state.army(p) if u.vertical])}" for p in state.players
              if p != state.to_play and p not in state.conceded and any(u.vertical for u in state.army(p))]
    if others:
        todo.append("Cards still vertical this round: " + "; ".join(others))
    return head, todo


def _why_won(state: Any) -> str:
    """How the winner's opponents went out: "blue conceded", "blue is defeated", or both kinds named."""
    out = [p for p in state.players if p != state.winner]
    conceded = [p for p in out if p in state.conceded]
    beaten = [p for p in out if p not in state.conceded]
    said = []
    if beaten:
        said.append(f"{listed(beaten)} {'is' if len(beaten) == 1 else 'are'} defeated")
    if conceded:
        said.append(f"{listed(conceded)} conceded")
    return " and ".join(said)


def valyr_panel(state: Any, positions: Positions) -> Panel:
    """The panel for `state` (see the module docstring)."""
    head, todo = _headline_and_to_do(state)
    winner = f"{state.winner[:1].upper()}{state.winner[1:]} wins: {_why_won(state)}" if state.winner else None
    return Panel(head, tuple(todo), tuple(_unit_line(state, u, positions) for u in state.units),
                 tuple(_side_score(state, p) for p in state.players), VICTORY, winner, state.over)


def valyr_score(state: Any) -> dict[str, Json]:
    """Each army's units standing and the distress on them, who conceded, and the winner (None before the end)."""
    return {"standing": {p: sum(not u.defeated for u in state.army(p)) for p in state.players},
            "distress": {p: sum(u.distress for u in state.army(p) if not u.defeated) for p in state.players},
            "conceded": list(state.conceded), "winner": state.winner}
