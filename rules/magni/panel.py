"""Rise of the Magni's game panel (`Game.panel`): the phase, whose turn to place, each hero tile (on which cell
or in hand), the score per player with its skirmishes and fortifications, and how the game is won."""

from __future__ import annotations

from typing import Any  # the game module imports this one: its state types are not named here

from rules.engine import Panel, SideScore, UnitLine
from rules.magni.scoring import ABOVE, BOARD_CELLS, CENTRE, Score, score

VICTORY = ("When all 19 cells hold a tile the map is full and the higher score wins: a point for each skirmish "
           "won across an edge (not the Lead units' own) and for each corner fortified by three allied tiles; "
           "equal scores are a draw (our reading: the seed is silent).")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _some(n: int, one: str, many: str) -> str:
    """"1 skirmish", "3 skirmishes"."""
    return f"{n} {one if n == 1 else many}"


def side_scores(state: Any, sc: Score) -> tuple[SideScore, ...]:
    """Each player's points, with the skirmishes won and the corners fortified behind them."""
    heroes = {h.tag: h for h in state.heroes}
    out = []
    for owner in state.owners:
        won = sum(1 for s in sc.skirmishes if s.winner is not None and not s.lead and heroes[s.winner].owner == owner)
        forts = sum(1 for f in sc.fortifications if f.owner == owner)
        p1 = " · Player 1" if state.first == owner else ""
        out.append(SideScore(owner, f"{_points(sc.points.get(owner, 0))}: {_some(won, 'skirmish', 'skirmishes')} won, "
                                    f"{_some(forts, 'fortification', 'fortifications')}{p1}", sc.points.get(owner, 0)))
    return tuple(out)


def panel(state: Any) -> Panel:
    """The game panel for `state` (the tiles its placements put down)."""
    sc = score(state.tiles(), state.owners)
    where = {tag: cell for tag, cell in state.placed}
    units = []
    for h in state.heroes:
        cell = where.get(h.tag)
        spot = ("in hand" if cell is None else "on the centre (Lead)" if cell == CENTRE
                else "directly above the centre (Lead)" if cell == ABOVE else f"on [{cell.q}, {cell.r}]")
        units.append(UnitLine(h.tag, h.name, h.owner, f"rated {h.rating}; LAV {h.lav}, CAV {h.cav}, RAV {h.rav}; {spot}",
                              gone=cell is None))
    phase, down = state.phase, len(state.placed)
    to_do: tuple[str, ...] = ()
    winner = None
    if phase == "lead":
        headline = "The fight for the centre · each player picks a Lead unit"
        tie = ("a tie rolls a d6 each" if state.lead_tie == "roll" else "a tie: both pick again")
        to_do = (f"{_cap(state.owners[0])} and {state.owners[1]} each pick a Lead unit: the higher CAV takes the "
                 f"centre ({tie})",)
    elif phase == "place":
        turn = str(state.turn())
        headline = f"Placing tiles · {down} of {len(BOARD_CELLS)} down · {turn} to place"
        to_do = (f"{_cap(turn)} places a tile on an empty cell ({len(state.in_hand(turn))} in hand, "
                 f"{len(BOARD_CELLS) - down} cells empty)",)
    else:
        win = sc.winner()
        a = state.owners[0]
        if win in state.owners:
            other = state.other(str(win))
            winner = f"{_cap(str(win))} wins: {_points(sc.points[str(win)])} to {sc.points[other]}"
            headline = f"The map is full · {win} wins"
        else:
            headline = f"The map is full · a draw at {_points(sc.points[a])} each"
    return Panel(headline=headline, to_do=to_do, units=tuple(units), score=side_scores(state, sc), victory=VICTORY,
                 winner=winner, over=phase == "over")
