"""Vigtavl victory tokens: the nine ways to claim them, and who is ahead.

Anytime, as often as it happens (claimed where it happens, in rules/vigtavl/game.py): Conquer (a seized
development's value), Battle (a defeated combat unit's value), Rescue (a freed prisoner's value); and the
3 extra tokens for seizing an opponent's last development.
Anytime, once per game per player (checked here after every action): Citadel (1 token per hex completely
enclosed by walls; mountain edges need none), Complex (3 tokens for a castle, a fort and an encampment on
adjacent hexes), Great Wall (1 token for a wall of length 5 or more).
Once at the end, ties all scoring: General (3, most prisoners), Admiral (3, most sunken ships), Builder (3,
most developments).

Named options (the seed is silent):
- "complex": the castle, fort and encampment must be the player's own and their three hexes connected by
  adjacency (a chain or a triangle).
- "admiral": "most sunken ships" counts the ships a player has sunk (those in his ship graveyard).
- "general": counts the prisoners a player holds when the game ends.
- "end awards need one": a player with none of the counted thing (0 prisoners, say) does not take the award.
- "winner": the most tokens at the end of round 6 wins; equal most is a shared win, and every player equal is a
  draw (nobody wins).
"""

from __future__ import annotations

from rules.engine import listed
from rules.hexgrid import distance
from rules.vigtavl.state import VigtavlState
from rules.vigtavl.units import is_ship
from rules.vigtavl.walls import enclosed_hexes, longest_wall

CITADEL = "citadel"
COMPLEX = "complex"
GREAT_WALL = "great wall"
COMPLEX_TOKENS = 3
GREAT_WALL_LENGTH = 5
GREAT_WALL_TOKENS = 1
END_AWARD_TOKENS = 3
TOKEN_KINDS = (
    "conquer", "battle", "rescue", "last development", CITADEL, COMPLEX, GREAT_WALL, "general", "admiral", "builder",
)


def has_complex(state: VigtavlState, player: str) -> bool:
    """A castle, a fort and an encampment of the player's on connected adjacent hexes."""
    devs = [d for d in state.developments if d.owner == player]
    castles = [d.hex for d in devs if d.kind == "castle"]
    forts = [d.hex for d in devs if d.kind == "fort"]
    camps = [d.hex for d in devs if d.kind == "encampment"]
    for c in castles:
        for f in forts:
            for e in camps:
                links = sum(1 for a, b in ((c, f), (c, e), (f, e)) if distance(a, b) == 1)
                if links >= 2:  # three hexes are connected when two of their three pairs touch
                    return True
    return False


def anytime_claims(state: VigtavlState, player: str) -> VigtavlState:
    """Award the once-per-game tokens a player has just earned (each at most once)."""
    if not state.claimed(player, CITADEL):
        inside = enclosed_hexes(state, player)
        if inside:
            state = state.claim(player, CITADEL, len(inside), f"{len(inside)} hexes enclosed by walls")
    if not state.claimed(player, COMPLEX) and has_complex(state, player):
        state = state.claim(player, COMPLEX, COMPLEX_TOKENS, "castle, fort and encampment on adjacent hexes")
    if not state.claimed(player, GREAT_WALL):
        n = longest_wall(state, player)
        if n >= GREAT_WALL_LENGTH:
            state = state.claim(player, GREAT_WALL, GREAT_WALL_TOKENS, f"a wall {n} edges long")
    return state


def end_counts(state: VigtavlState) -> dict[str, dict[str, int]]:
    """Per award, each player's count: prisoners held, ships sunk, developments."""
    return {
        "general": {p: sum(1 for x in state.pieces if x.captor == p) for p in state.players},
        "admiral": {p: sum(1 for x in state.pieces if x.sunk_by == p and is_ship(x.kind)) for p in state.players},
        "builder": {p: sum(1 for d in state.developments if d.owner == p) for p in state.players},
    }


def end_awards(state: VigtavlState) -> VigtavlState:
    """General, Admiral and Builder: 3 tokens each to the player (or tied players) with the most."""
    for award, counts in end_counts(state).items():
        best = max(counts.values(), default=0)
        if best <= 0:
            continue
        for p in state.players:
            if counts[p] == best:
                state = state.claim(p, award, END_AWARD_TOKENS, f"most ({best})")
    return state


def standings(state: VigtavlState) -> dict[str, int]:
    return {p: state.tokens(p) for p in state.players}


def leaders(state: VigtavlState) -> list[str]:
    table = standings(state)
    best = max(table.values(), default=0)
    return [p for p in state.players if table[p] == best]


def winners(state: VigtavlState) -> list[str]:
    """Who has won: the players with the most tokens once the game is over; [] before the end and in a draw
    (every player equal)."""
    if state.phase != "over":
        return []
    best = leaders(state)
    return [] if len(best) == len(state.players) else best


def winner_names(state: VigtavlState) -> str | None:
    """The winner as the judge says it: "red", "red and blue" (a shared win), None (no winner yet, or a draw)."""
    return listed(winners(state)) or None
