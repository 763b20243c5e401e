"""Hex Skirmish (seed 002): moving a figure across hexes with elevation and water.

The Movement Rules, in our words:

1. A figure moves up to its Move value in hexes, in any direction.
2. Moving into water ends the move (unless the figure has Water Ignore).
3. It may climb only a step whose rise is less than its Height (Height 5 climbs 1-4 levels, not 5).
4. Stepping down a drop equal to or more than its Height costs fall damage: 1 attack die; a drop of 10 or
   more levels, 3 attack dice; a drop of 20 or more, a d20 roll where 19-20 is unharmed and anything else
   destroys the figure. (The 10 and 20 tiers apply to falls that already reach the figure's Height.)
5. Climbing costs one movement point per level: a step up 3 levels costs 3 points. Named option
   `climb_cost`: "levels" (default; the seed's literal reading, a step up k levels costs k, at least 1) or
   "step_plus_levels" (1 for the step plus 1 per level, as similar games count it).

Flying/Leaping figures ignore elevation and water, fly over figures and take no fall damage: every step
costs 1 and only the end hex must be empty. Others may not enter a hex holding a figure (the seed lets only
flyers pass over figures). Option `engagement_stops` (default True): a walker that steps next to an enemy
is engaged there and its move ends; flyers pass by without becoming engaged.
Where several cheapest paths exist, the one with the least fall damage is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rules.hex_skirmish.cards import ArmyCard
from rules.hexgrid import Hex, HexBoard, direction_between, neighbors, reachable, shortest_path

CLIMB_COSTS = ("levels", "step_plus_levels")
_SCALE = 100_000  # path cost = points * _SCALE + fall penalty: equal-cost paths prefer the softest landing
_FALL_PENALTY = {"1 die": 1, "3 dice": 3, "d20": 60}


@dataclass(frozen=True)
class MoveOptions:
    """Named options where the seed is silent (see the module docstring)."""

    climb_cost: str = "levels"
    engagement_stops: bool = True


@dataclass(frozen=True)
class Fall:
    """A step down whose drop reaches the figure's Height: the drop in levels and the damage roll it calls for."""

    frm: Hex
    to: Hex
    drop: int
    roll: str  # "1 die" | "3 dice" | "d20"


def fall_roll(drop: int, card: ArmyCard) -> str | None:
    """The fall damage a drop of `drop` levels calls for, or None (a drop below Height, or a flyer)."""
    if card.flying or drop < card.height:
        return None
    if drop >= 20:
        return "d20"
    if drop >= 10:
        return "3 dice"
    return "1 die"


@dataclass(frozen=True)
class Ground:
    """What a mover needs to know about the board: cells, where every other figure stands and whose it is."""

    board: HexBoard
    others: Mapping[Hex, str]  # hex -> owner of the figure there (the mover excluded)
    owner: str

    def enemy_adjacent(self, h: Hex) -> bool:
        return any(self.others.get(n, self.owner) != self.owner for n in neighbors(h))


def step_cost(card: ArmyCard, ground: Ground, options: MoveOptions) -> Callable[[Hex, Hex], int | None]:
    """Points one step costs the figure, or None when it may not take the step."""
    board = ground.board

    def cost(a: Hex, b: Hex) -> int | None:
        if b not in board:
            return None
        if card.flying:
            return 1
        if b in ground.others:
            return None
        rise = board.elevation(b) - board.elevation(a)
        if rise <= 0:
            return 1
        if rise >= card.height:
            return None
        return rise if options.climb_cost == "levels" else 1 + rise

    return cost


def stops_in(card: ArmyCard, ground: Ground, options: MoveOptions) -> Callable[[Hex], bool]:
    """Whether entering a hex ends the move: water (without Water Ignore) or, for walkers, engagement."""

    def stop(h: Hex) -> bool:
        if card.flying:
            return False
        if ground.board.terrain(h) == "water" and not card.water_ignore:
            return True
        return options.engagement_stops and ground.enemy_adjacent(h)

    return stop


def _weighted(card: ArmyCard, ground: Ground, options: MoveOptions) -> Callable[[Hex, Hex], int | None]:
    base = step_cost(card, ground, options)

    def cost(a: Hex, b: Hex) -> int | None:
        c = base(a, b)
        if c is None:
            return None
        kind = fall_roll(ground.board.elevation(a) - ground.board.elevation(b), card)
        return c * _SCALE + (_FALL_PENALTY[kind] if kind else 0)

    return cost


def destinations(card: ArmyCard, start: Hex, ground: Ground, options: MoveOptions) -> dict[Hex, int]:
    """Every hex the figure may end its move on, with the points it costs (start excluded)."""
    found = reachable(
        start, card.move * _SCALE + _SCALE - 1, _weighted(card, ground, options), stops_in(card, ground, options)
    )
    return {h: c // _SCALE for h, c in found.items() if h != start and h not in ground.others}


@dataclass(frozen=True)
class MovePlan:
    """A move checked step by step: the path, the points it costs, the falls on it, and what is wrong (if any)."""

    path: tuple[Hex, ...]
    cost: int
    falls: tuple[Fall, ...]
    problems: tuple[str, ...]

    @property
    def legal(self) -> bool:
        return not self.problems


def falls_on(path: Sequence[Hex], card: ArmyCard, board: HexBoard) -> tuple[Fall, ...]:
    out: list[Fall] = []
    for a, b in zip(path, path[1:]):
        drop = board.elevation(a) - board.elevation(b)
        kind = fall_roll(drop, card)
        if kind:
            out.append(Fall(a, b, drop, kind))
    return tuple(out)


def plan_to(card: ArmyCard, start: Hex, goal: Hex, ground: Ground, options: MoveOptions) -> MovePlan:
    """The cheapest legal move to `goal` (softest landing among equals), or a plan naming why there is none."""
    if goal not in ground.board:
        return MovePlan((start, goal), 0, (), (f"[{goal.q}, {goal.r}] is not on the board.",))
    if goal in ground.others:
        return MovePlan((start, goal), 0, (), (f"[{goal.q}, {goal.r}] already holds a figure.",))
    found = shortest_path(
        start, goal, _weighted(card, ground, options), stops_in(card, ground, options), budget=10**9
    )
    if found is None:
        return MovePlan((start, goal), 0, (), (_no_way(card, start, goal, ground, options),))
    path, weighted = found
    cost = weighted // _SCALE
    problems: tuple[str, ...] = ()
    if cost > card.move:
        problems = (f"The move costs {cost} movement points; {card.name} has Move {card.move}.",)
    return MovePlan(path, cost, falls_on(path, card, ground.board), problems)


def _no_way(card: ArmyCard, start: Hex, goal: Hex, ground: Ground, options: MoveOptions) -> str:
    """Why no path reaches `goal`: the step into it from next door, or a climb too high from every side."""
    if direction_between(start, goal) is not None:
        step = check_path(card, (start, goal), ground, options)
        if step.problems:
            return step.problems[0]
    board = ground.board
    sides = [n for n in neighbors(goal) if n in board and n not in ground.others]
    rises = [board.elevation(goal) - board.elevation(n) for n in sides]
    if not card.flying and rises and min(rises) >= card.height:
        return (
            f"[{goal.q}, {goal.r}] stands at least {min(rises)} levels above every hex beside it; {card.name} "
            f"(Height {card.height}) climbs less than its Height."
        )
    return f"No way leads from [{start.q}, {start.r}] to [{goal.q}, {goal.r}]."


def check_path(card: ArmyCard, path: Sequence[Hex], ground: Ground, options: MoveOptions) -> MovePlan:
    """A declared path checked step by step against every movement rule."""
    cost_of = step_cost(card, ground, options)
    stop = stops_in(card, ground, options)
    problems: list[str] = []
    total = 0
    for i, (a, b) in enumerate(zip(path, path[1:])):
        where = f"step {i + 1} ([{a.q}, {a.r}] to [{b.q}, {b.r}])"
        if direction_between(a, b) is None:
            problems.append(f"{where} is not between neighbouring hexes.")
            break
        if i > 0 and stop(a):
            why = "water" if ground.board.terrain(a) == "water" else "engaged with an enemy"
            problems.append(f"The move must end at [{a.q}, {a.r}] ({why}); {where} goes on.")
            break
        c = cost_of(a, b)
        if c is None:
            if b not in ground.board:
                problems.append(f"{where} leaves the board.")
            elif b in ground.others and not card.flying:
                problems.append(f"{where} enters a hex holding a figure; only flyers pass over figures.")
            else:
                rise = ground.board.elevation(b) - ground.board.elevation(a)
                problems.append(
                    f"{where} climbs {rise} levels; {card.name} (Height {card.height}) climbs less than its Height."
                )
            break
        total += c
    end = path[-1]
    if not problems and len(path) > 1 and end in ground.others:
        problems.append(f"The move ends on [{end.q}, {end.r}], which already holds a figure.")
    if not problems and total > card.move:
        problems.append(f"The move costs {total} movement points; {card.name} has Move {card.move}.")
    return MovePlan(tuple(path), total, falls_on(path, card, ground.board), tuple(problems))
