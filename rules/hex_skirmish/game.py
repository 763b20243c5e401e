"""Hex Skirmish (seed 002, untitled forum rules): army cards fighting on a hex board with elevation and water.

A round, in our words: 1. every player rolls a d20 for initiative, highest first, ties re-rolled (among the
tied players); 2. in that order each player chooses one army card (one figure here), 3. moves it, 4. attacks
with it; then the next player. Movement: rules/hex_skirmish/moves.py; cards, abilities and dice:
rules/hex_skirmish/cards.py.

Engagement: a figure next to an opposing figure is engaged; an engaged figure may attack only figures it is
engaged with; if it moves, it first rolls 1 attack die of disengagement damage (one wound per skull).

Where the seed is silent (its "Attack Rules" are empty) we use these named options:
- combat_dice "skull_shield_d6" (rules/hex_skirmish/cards.py): Attack dice of skulls against Defense dice
  of shields; Counterstrike hits back with excess shields, at any range.
- range: an attack reaches a figure within Range hexes (Range 1: adjacent).
- line_of_sight "terrain" (default) or "none": a hex on the line between the two figures blocks when its
  ground rises above the straight line from the attacker's eye (its hex elevation + Height) to the top of
  the target (its hex elevation + Height); figures never block; a line along cell edges is clear when either
  side is clear; neighbours always see each other.
- one army card is one figure; there are no order markers (the seed sets them aside) and no height bonus.
- victory "last standing": the seed does not say how the game is won; the last player with figures on the
  board wins (every opposing figure destroyed); the game has no round limit.

Dice are the players' input (rules/dice.py): every roll takes the faces given in the action's "rolls", in the
order the rules take them; a roll not given is rolled by Tablesight only when the players asked it to ("roll
for us"), else the answer waits for it and says which dice, how many and what for. The dice clauses:
- round.initiative: each player rolls 1 d20 (`side`: that player), in the order of the players' list
  (`owners`, else the order the roster first names them); tied players re-roll among themselves, the highest
  tie first, each re-roll asked for again in the same order.
- attack.roll, then attack.defense: the attacker rolls its Attack in combat dice, then the defender's player
  (`side`) rolls its Defense: two rolls, asked one after the other.
- engagement.disengage: an engaged figure that moves rolls 1 combat die before it leaves (skull: a wound).
- move.fall: each fall on the path in order: 1 or 3 combat dice (a wound per skull), or the d20 (19-20 unharmed).
Where the seed is silent about the dice themselves (our options): a die that lands cocked or off the tray is
rolled again by the players before they give its face (Tablesight takes only faces 1 to the die's sides);
the combat die's faces are ours (skull 1-3, shield 4-5, blank 6; see cards.py); the players roll their own
figure's dice (the mover for falls and disengagement).
The army cards in `EXAMPLE_CARDS` and examples/rosters/hex_skirmish.json are made up by Tablesight: not
the author's.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from rules.dice import DiceCup
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
    Placement,
    Positions,
    Result,
    RosterError,
    ScenarioError,
    Shape,
    SideScore,
    StandardBoard,
    UnitId,
    UnitLine,
    Verdict,
    counted,
    listed,
    register,
    takes_dice,
)
from rules.hex_skirmish import standard
from rules.hex_skirmish.cards import ArmyCard, attack_roll, parse_card, skulls
from rules.hex_skirmish.moves import (
    CLIMB_COSTS,
    Ground,
    MoveOptions,
    MovePlan,
    check_path,
    destinations,
    plan_to,
)
from rules.hexgrid import (
    BoardError,
    Hex,
    HexBoard,
    Layout,
    distance,
    hex_line,
    hex_words,
    neighbors,
    parse_board,
    parse_hex,
    parse_layout,
    straddle_words,
)

_ABILITY_WORDS = {"flying": "Flying/Leaping", "counterstrike": "Counterstrike", "water ignore": "Water Ignore"}
DEFAULT_LAYOUT = Layout(size_in=1.0, orientation="pointy", origin=(12.0, 12.0))
SIGHT_RULES = ("terrain", "none")

EXAMPLE_CARDS: tuple[dict[str, Any], ...] = (
    # Made up by Tablesight for the example: NOT the author's army cards.
    {"name": "Shield Knight", "life": 4, "move": 4, "range": 1, "attack": 3, "defense": 4, "height": 5,
     "abilities": ["Counterstrike"]},
    {"name": "Hawk Rider", "life": 3, "move": 6, "range": 1, "attack": 2, "defense": 2, "height": 6,
     "abilities": ["Flying/Leaping"]},
    {"name": "Marsh Archer", "life": 2, "move": 5, "range": 6, "attack": 2, "defense": 2, "height": 5,
     "abilities": ["Water Ignore"]},
    {"name": "Stone Giant", "life": 6, "move": 4, "range": 1, "attack": 4, "defense": 3, "height": 12,
     "abilities": []},
)
EXAMPLE_BOARD: dict[str, Any] = {
    "layout": DEFAULT_LAYOUT.to_json(),
    "hexagon": 3,
    "cells": [
        {"hex": [0, 0], "terrain": "water"},
        {"hex": [1, -1], "terrain": "water"},
        {"hex": [-1, 1], "terrain": "water"},
        {"hex": [2, 0], "elevation": 2},
        {"hex": [3, -1], "elevation": 4},
        {"hex": [-2, 0], "elevation": 1},
        {"hex": [-3, 1], "elevation": 3},
    ],
}
EXAMPLE_UNITS: tuple[dict[str, Any], ...] = (
    {"tag": 10, "owner": "red", "card": "Shield Knight", "hex": [-2, -1]},
    {"tag": 11, "owner": "red", "card": "Marsh Archer", "hex": [-3, 2]},
    {"tag": 20, "owner": "blue", "card": "Hawk Rider", "hex": [2, 1]},
    {"tag": 21, "owner": "blue", "card": "Stone Giant", "hex": [3, -2]},
)


@dataclass(frozen=True)
class Figure:
    """One figure: its tag, player, army card name and wounds so far."""

    tag: UnitId
    owner: str
    card: str
    wounds: int = 0
    destroyed: bool = False


@dataclass(frozen=True)
class SkirmishOptions:
    """Named options where the seed is silent (module docstrings)."""

    climb_cost: str = "levels"
    engagement_stops: bool = True
    line_of_sight: str = "terrain"
    combat_dice: str = "skull_shield_d6"
    snap_fraction: float = 0.5

    @property
    def moves(self) -> MoveOptions:
        return MoveOptions(self.climb_cost, self.engagement_stops)

    def to_json(self) -> dict[str, Json]:
        return {
            "climb_cost": self.climb_cost,
            "engagement_stops": self.engagement_stops,
            "line_of_sight": self.line_of_sight,
            "combat_dice": self.combat_dice,
            "snap_fraction": self.snap_fraction,
        }


@dataclass(frozen=True)
class SkirmishState:
    """The game: cards, figures, board and layout, and where the round stands.

    order: this round's initiative order (empty: initiative not yet rolled); turn: index into order;
    chosen: the figure the player is acting with; moved/attacked: what it has done this turn.
    """

    cards: tuple[ArmyCard, ...]
    figures: tuple[Figure, ...]
    owners: tuple[str, ...]
    board: HexBoard
    layout: Layout = DEFAULT_LAYOUT
    round: int = 1
    order: tuple[str, ...] = ()
    turn: int = 0
    chosen: UnitId | None = None
    moved: bool = False
    attacked: bool = False
    options: SkirmishOptions = SkirmishOptions()

    def card(self, name: str) -> ArmyCard:
        return next(c for c in self.cards if c.name == name)

    def figure(self, tag: UnitId | None) -> Figure | None:
        return next((f for f in self.figures if f.tag == tag), None)

    def living(self) -> list[Figure]:
        return [f for f in self.figures if not f.destroyed]

    @property
    def player(self) -> str | None:
        """Whose turn it is, or None before initiative."""
        return self.order[self.turn] if self.order and self.turn < len(self.order) else None

    @property
    def phase(self) -> str:
        if not self.order:
            return "initiative"
        return "choose" if self.chosen is None else "act"

    def with_figure(self, fig: Figure) -> SkirmishState:
        return replace(self, figures=tuple(fig if f.tag == fig.tag else f for f in self.figures))


def _table_position(at: Any) -> bool:
    """Whether `at` is [x, y]: two finite numbers (table inches)."""
    return (
        isinstance(at, list)
        and len(at) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in at)
    )


def _verdict(rule: str, outcome: Outcome, message: str, unit: UnitId | None = None, **numbers: Json) -> Verdict:
    return Verdict(f"hex_skirmish.{rule}", outcome, message, unit, numbers)


def cells_of(state: SkirmishState, positions: Positions) -> dict[UnitId, Hex]:
    """The cell each living figure on the table stands in (snapped with the layout)."""
    out: dict[UnitId, Hex] = {}
    for f in state.living():
        p = positions.get(f.tag)
        if p is not None:
            out[f.tag] = state.layout.from_table(p.x, p.y)[0]
    return out


def engaged_with(state: SkirmishState, cells: Mapping[UnitId, Hex], tag: UnitId) -> list[UnitId]:
    """The opposing figures next to this one (it is engaged with each)."""
    me = state.figure(tag)
    if me is None or tag not in cells:
        return []
    near = set(neighbors(cells[tag]))
    return sorted(
        f.tag for f in state.living() if f.owner != me.owner and f.tag in cells and cells[f.tag] in near
    )


def engaged_pairs(state: SkirmishState, cells: Mapping[UnitId, Hex]) -> list[tuple[UnitId, UnitId]]:
    """Every engaged pair (opposing figures in neighbouring cells) once, as (tag, other) in the order
    `engaged_with` over `cells` first meets it; found through the figures in each cell, not every pair."""
    owner = {f.tag: f.owner for f in state.living() if f.tag in cells}
    standing: dict[Hex, list[UnitId]] = {}
    for tag in owner:
        standing.setdefault(cells[tag], []).append(tag)
    pairs: list[tuple[UnitId, UnitId]] = []
    done: set[tuple[UnitId, UnitId]] = set()
    for tag in cells:
        if tag not in owner:
            continue
        near = sorted(o for h in neighbors(cells[tag]) for o in standing.get(h, ()) if owner[o] != owner[tag])
        for other in near:
            key = (min(tag, other), max(tag, other))
            if key not in done:
                done.add(key)
                pairs.append((tag, other))
    return pairs


def line_of_sight(
    board: HexBoard, a: Hex, eye_a: int, t: Hex, eye_t: int, rule: str = "terrain"
) -> tuple[bool, tuple[Hex, ...]]:
    """Whether a figure at `a` whose eye is at level eye_a sees the top (level eye_t) of one at `t`, and the
    hexes that block (option "terrain"; "none" always sees)."""
    if rule == "none" or distance(a, t) <= 1:
        return True, ()
    first: tuple[Hex, ...] = ()
    for sign in (1, -1):
        line = hex_line(a, t, sign)
        n = len(line) - 1
        blockers = tuple(
            c
            for i, c in enumerate(line[1:-1], start=1)
            if c not in board or board.elevation(c) > eye_a + (eye_t - eye_a) * i / n
        )
        if not blockers:
            return True, ()
        first = first or blockers
    return False, first


def _ground(state: SkirmishState, cells: Mapping[UnitId, Hex], mover: Figure) -> Ground:
    others = {h: state.figure(t).owner for t, h in cells.items() if t != mover.tag}  # type: ignore[union-attr]
    return Ground(state.board, others, mover.owner)


def _placement(layout: Layout, tag: UnitId, cell: Hex, old: Placement | None) -> Placement:
    x, y = layout.to_table(cell)
    return Placement(tag, x, y, 0.0, old.pm if old else 0.0, old.yaw_deg if old else 0.0)


def _taken(state: SkirmishState, fig: Figure) -> int:
    """The wounds a figure took that counted: at most its Life (the blow that destroys it may deal more)."""
    return min(fig.wounds, state.card(fig.card).life)


def _wound(state: SkirmishState, fig: Figure, wounds: int) -> tuple[SkirmishState, Figure]:
    life = state.card(fig.card).life
    new = replace(fig, wounds=fig.wounds + wounds, destroyed=fig.wounds + wounds >= life)
    return state.with_figure(new), new


INITIATIVE = "hex_skirmish.round.initiative"
ATTACK_DICE = "hex_skirmish.attack.roll"
DEFENSE_DICE = "hex_skirmish.attack.defense"
DISENGAGE_DICE = "hex_skirmish.engagement.disengage"
FALL_DICE = "hex_skirmish.move.fall"
"""The dice clauses, named as their verdicts are."""


def name_of(fig: Figure) -> str:
    """A figure in words: its army card and tag ("Shield Knight 10")."""
    return f"{fig.card} {fig.tag}"


def roll_initiative(
    owners: tuple[str, ...], cup: DiceCup, round_no: int = 1
) -> tuple[tuple[str, ...], list[dict[str, int]]]:
    """Every player rolls a d20 (in the order of `owners`); highest first; tied players re-roll among themselves,
    the highest tie first. Returns the order and every round of rolls."""
    history: list[dict[str, int]] = []

    def rank(group: list[str], tied_at: int | None) -> list[str]:
        if len(group) == 1:
            return group
        rolls: dict[str, int] = {}
        for o in group:
            what = f"the round {round_no} initiative"
            if tied_at is not None:
                what += f", re-rolled (tied with {listed([p for p in group if p != o])} at {tied_at})"
            rolls[o] = cup.one(20, INITIATIVE, what, "highest goes first; tied players re-roll", side=o)
        history.append(rolls)
        out: list[str] = []
        for value in sorted(set(rolls.values()), reverse=True):
            out += rank([o for o in group if rolls[o] == value], value)
        return out

    return tuple(rank(list(owners), None)), history


def _initiative_words(order: tuple[str, ...], rolls: list[dict[str, int]]) -> str:
    """"red 20, blue 1; red goes first, then blue" (a tie re-rolled: "red 12, blue 12, re-rolled red 3, blue 15; ...")."""
    said = "; re-rolled ".join(", ".join(f"{o} {r}" for o, r in each.items()) for each in rolls)
    return f"{said}; {order[0]} goes first" + (f", then {listed(list(order[1:]))}" if len(order) > 1 else "")


def winner_of(state: SkirmishState) -> str | None:
    """The player whose figures alone stand (victory "last standing"), or None."""
    sides = {f.owner for f in state.living()}
    return next(iter(sides)) if len(sides) == 1 else None


@register
class HexSkirmish(Game):
    """Hex Skirmish: see the module docstrings for the rules and the options chosen where the seed is silent."""

    name = "hex_skirmish"
    title = "Hex Skirmish"
    board = "hex"
    kind_titles = {"initiative": "Roll for Initiative", "choose": "Choose an army card", "end_turn": "End the turn"}

    # ------------------------------------------------------------------ setup

    # a new game's setup: rules/hex_skirmish/standard.py
    def option_fields(self) -> tuple[OptionField, ...]:
        return standard.OPTION_FIELDS

    def example_roster(self) -> dict[str, Json]:
        return copy.deepcopy(standard.EXAMPLE_ROSTER)

    def standard_boards(self) -> tuple[StandardBoard, ...]:
        return tuple(StandardBoard(n, t, copy.deepcopy(b)) for n, t, b in standard.BOARDS)

    def cell_kinds(self) -> tuple[CellKind, ...]:
        return standard.CELL_KINDS

    def new_state(self, setup: Mapping[str, Json]) -> SkirmishState:
        """From {"board": {...}, "cards": [...], "units": [{"tag", "owner", "card", "wounds"}], "options": {}}."""
        if not isinstance(setup, Mapping):
            raise RosterError('The Hex Skirmish setup must be an object with "board", "cards" and "units".')
        return _state_from(setup, "the setup", RosterError)

    def example(self, rng: random.Random) -> tuple[SkirmishState, Positions]:
        units = [dict(u) for u in EXAMPLE_UNITS]
        setup: dict[str, Any] = {"board": EXAMPLE_BOARD, "cards": list(EXAMPLE_CARDS), "units": units}
        state = self.new_state(setup)
        return state, _positions(units, state.layout)

    def camera_action(self, state: SkirmishState, unit: UnitId, seen: str, at: tuple[float, float],
                      came_from: tuple[float, float] | None = None, *, positions: Positions | None = None,
                      measured: Measured | None = None) -> Action | None:
        """A figure the camera saw moved to another cell is a move there (with every movement rule: Move points,
        water, climbing, falls, engagement); a figure first seen, or nudged within its cell, is no news, and so
        is a position that is not a number (NaN, infinite)."""
        if seen != "move" or came_from is None or state.figure(unit) is None:
            return None
        if not all(math.isfinite(v) for v in (*at, *came_from)):
            return None
        here = state.layout.from_table(float(came_from[0]), float(came_from[1]))[0]
        there = state.layout.from_table(float(at[0]), float(at[1]))[0]
        if here == there:
            return None
        return Action("move", unit, {"at": [float(at[0]), float(at[1])]})

    def dump_state(self, state: SkirmishState) -> dict[str, Json]:
        return {
            "cards": [c.to_json() for c in state.cards],
            "units": [
                {"tag": f.tag, "owner": f.owner, "card": f.card, "wounds": f.wounds, "destroyed": f.destroyed}
                for f in state.figures
            ],
            "owners": list(state.owners),
            "board": {**state.board.to_json(), "layout": state.layout.to_json()},
            "state": {
                "round": state.round,
                "order": list(state.order),
                "turn": state.turn,
                "chosen": state.chosen,
                "moved": state.moved,
                "attacked": state.attacked,
            },
            "options": state.options.to_json(),
        }

    def load_state(self, obj: Mapping[str, Json]) -> SkirmishState:
        if not isinstance(obj, Mapping):
            raise ScenarioError("A Hex Skirmish state must be an object.")
        return _state_from(obj, "the state", ScenarioError)

    def is_over(self, state: SkirmishState) -> bool:
        return len({f.owner for f in state.living()}) <= 1

    def off_table(self, state: SkirmishState) -> frozenset[UnitId]:
        """A destroyed figure is taken off the board."""
        return frozenset(f.tag for f in state.figures if f.destroyed)

    def score(self, state: SkirmishState) -> dict[str, Json]:
        """Figures standing and wounds taken per player, and the winner once one player's figures alone stand."""
        return {
            "standing": {o: sum(1 for f in state.living() if f.owner == o) for o in state.owners},
            "wounds": {o: sum(f.wounds for f in state.figures if f.owner == o) for o in state.owners},
            "winner": winner_of(state) if self.is_over(state) else None,
        }

    def panel(self, state: SkirmishState, positions: Positions) -> Panel:
        """The round, whose turn and its step (initiative, choose an army card, move and attack), every figure's
        Life left and cell, each player's figures standing, and the winner once only one player's figures stand."""
        over, winner = self.is_over(state), winner_of(state)
        cells = cells_of(state, positions)
        players = [o for o in state.owners if any(f.owner == o for f in state.living())]
        chosen = state.figure(state.chosen)
        to_do: list[str] = []
        if over:
            headline = f"Round {state.round} · game over: " + (
                f"{winner}'s figures alone stand" if winner else "no figure is left standing")
        elif state.phase == "initiative":
            headline = f"Round {state.round} · roll for initiative"
            to_do.append(f"Roll initiative: {listed(players)} each roll a d20; highest goes first, ties re-roll")
        else:
            headline = f"Round {state.round} · turn {state.turn + 1} of {len(state.order)}: {state.player}"
            if state.phase == "choose":
                headline += " chooses an army card"
                mine = [name_of(f) for f in state.living() if f.owner == state.player]
                to_do.append(f"{state.player}: choose an army card: " + ", ".join(mine))
            elif chosen is not None:
                headline += f" acts with {name_of(chosen)}"
                left = self._left(state, chosen)
                to_do.append(f"{name_of(chosen)} is destroyed" if chosen.destroyed else
                             f"{name_of(chosen)} may still {left.replace(', ', ' and ')}" if left
                             else f"{name_of(chosen)} has moved and attacked")
            to_do.append("Then end the turn")
            later = list(state.order[state.turn + 1:])
            if later:
                to_do.append(f"Still to play this round: {listed(later)}")
        units = tuple(self._unit_line(state, cells, f) for f in state.figures)
        score = tuple(
            SideScore(o, f"{sum(1 for f in state.living() if f.owner == o)} of "
                         f"{counted(sum(1 for f in state.figures if f.owner == o), 'figure')} standing, "
                         f"{counted(sum(_taken(state, f) for f in state.figures if f.owner == o), 'wound')} taken",
                      float(sum(1 for f in state.living() if f.owner == o)))
            for o in state.owners
        )
        return Panel(
            headline=headline,
            to_do=tuple(to_do),
            units=units,
            score=score,
            victory="Destroy every opposing figure: the last player with figures on the board wins (our option; "
                    "the rules do not say how the game is won).",
            winner=f"{winner.capitalize()} wins: the last figures standing" if over and winner else None,
            over=over,
        )

    def _left(self, state: SkirmishState, fig: Figure) -> str:
        """What the chosen figure may still do this turn: "move, attack", "attack", "move" or ""."""
        if state.chosen != fig.tag or fig.destroyed or self.is_over(state):
            return ""
        return ", ".join(w for w, done in (("move", state.moved), ("attack", state.attacked)) if not done)

    def _unit_line(self, state: SkirmishState, cells: Mapping[UnitId, Hex], fig: Figure) -> UnitLine:
        card = state.card(fig.card)
        if fig.destroyed:
            words = f"destroyed ({counted(_taken(state, fig), 'wound')} on Life {card.life})"
        else:
            words = f"Life {card.life - fig.wounds} of {card.life}"
            if fig.wounds:
                words += f" ({counted(fig.wounds, 'wound')})"
            words += f", Move {card.move}, Range {card.range}, Attack {card.attack}, Defense {card.defense}"
            words += f", Height {card.height}"
            if card.abilities:
                words += ", " + ", ".join(sorted(_ABILITY_WORDS[a] for a in card.abilities))
            here = cells.get(fig.tag)
            if here is None:
                words += "; not seen on the table"
            else:
                words += f"; at [{here.q}, {here.r}]"
                foes = [name_of(f) for t in engaged_with(state, cells, fig.tag) if (f := state.figure(t)) is not None]
                if foes:
                    words += f", engaged with {listed(foes)}"
            if state.chosen == fig.tag:
                words += "; chosen this turn"
        return UnitLine(fig.tag, name_of(fig), fig.owner, words, gone=fig.destroyed, left=self._left(state, fig))

    # ------------------------------------------------------------------ play

    def describe(self, action: Action, name_of: Callable[[UnitId], str]) -> str:
        """A round's steps in the seed's words ("Roll the d20 for Initiative", "Choose Army Card"), units by name."""
        p, u, kind = action.params, action.unit, action.kind
        target = p.get("target")
        if kind == "initiative" and not p:
            return "roll the d20 for Initiative"
        if kind == "choose" and u is not None and not p:
            return f"choose {name_of(u)}'s army card"
        if kind == "attack" and u is not None and isinstance(target, int) and set(p) == {"target"}:
            return f"{name_of(u)} attacks {name_of(target)}"
        if kind == "end_turn" and not p:
            return "end the turn"
        if kind == "move" and u is not None and set(p) == {"to"} and (to := hex_words(p["to"])):
            return f"move {name_of(u)} to {to}"
        return super().describe(action, name_of)

    def legal_actions(self, state: SkirmishState, positions: Positions) -> list[Action]:
        if self.is_over(state):
            return []
        if state.phase == "initiative":
            return [Action("initiative")]
        acts: list[Action] = []
        cells = cells_of(state, positions)
        if state.phase == "choose":
            acts = [Action("choose", f.tag) for f in state.living() if f.owner == state.player and f.tag in cells]
        else:
            fig = state.figure(state.chosen)
            if fig is not None and not fig.destroyed and fig.tag in cells:
                if not state.moved:
                    card = state.card(fig.card)
                    reach = destinations(card, cells[fig.tag], _ground(state, cells, fig), state.options.moves)
                    acts += [Action("move", fig.tag, {"to": h.to_json()}) for h in sorted(reach)]
                if not state.attacked:
                    acts += [Action("attack", fig.tag, {"target": t}) for t in self._targets(state, cells, fig)[0]]
        return [*acts, Action("end_turn")]

    def tryable_actions(self, state: SkirmishState, positions: Positions) -> list[Action]:
        """The legal actions first, then what the rules may refuse: every army card's choice, either player's, and
        the chosen figure's attack on every opposing figure on the table (`tryable` and `at_point` below)."""
        return tryable(state, cells_of(state, positions), self.legal_actions(state, positions))

    def actions_at(self, state: SkirmishState, positions: Positions, unit: UnitId | None,
                   at: tuple[float, float]) -> list[Action]:
        """At the hex under the clicked point: the selected figure's move there when no figure stands there, else its
        attack on each opposing figure there; with none selected, choosing the army card of each figure there
        (`tryable` and `at_point` below)."""
        return at_point(state, cells_of(state, positions), unit, at)

    @takes_dice
    def apply(self, state: SkirmishState, positions: Positions, action: Action, cup: DiceCup) -> Result:
        """Rule one action; every die comes from `cup` (the players' faces, or rolled for them when they asked)."""
        kind = action.kind
        if kind == "initiative":
            return self._initiative(state, positions, cup)
        if kind == "end_turn":
            return self._end_turn(state, positions)
        if state.phase == "initiative":
            v = _verdict("round.initiative", Outcome.ILLEGAL, "Roll initiative first (each player rolls a d20).")
            return Result(state, positions, (v,))
        if kind == "choose":
            return self._choose(state, positions, action)
        if kind == "move":
            return self._move(state, positions, action, cup)
        if kind == "attack":
            return self._attack(state, positions, action, cup)
        raise ActionError(
            f'Hex Skirmish has no action {kind!r}; use "initiative", "choose", "move", "attack" or "end_turn".'
        )

    def _initiative(self, state: SkirmishState, positions: Positions, cup: DiceCup) -> Result:
        if state.order:
            v = _verdict("round.initiative", Outcome.ILLEGAL, f"Initiative for round {state.round} is already rolled.")
            return Result(state, positions, (v,))
        players = tuple(o for o in state.owners if any(f.owner == o for f in state.living()))
        order, rolls = roll_initiative(players, cup, state.round)
        new = replace(state, order=order, turn=0, chosen=None, moved=False, attacked=False)
        v = _verdict(
            "round.initiative",
            Outcome.INFO,
            f"Round {state.round} initiative: {_initiative_words(order, rolls)}.",
            order=list(order),
            rolls=rolls,
        )
        return Result(new, positions, (v,), self.overlays(new, positions))

    def _end_turn(self, state: SkirmishState, positions: Positions) -> Result:
        if not state.order:
            v = _verdict("round.initiative", Outcome.ILLEGAL, "Roll initiative first (each player rolls a d20).")
            return Result(state, positions, (v,))
        nxt = state.turn + 1
        if nxt >= len(state.order):
            new = replace(state, round=state.round + 1, order=(), turn=0, chosen=None, moved=False, attacked=False)
            msg = f"Round {state.round} is over; roll initiative for round {state.round + 1}."
        else:
            new = replace(state, turn=nxt, chosen=None, moved=False, attacked=False)
            msg = f"{state.player} ends the turn; {new.player} chooses an army card."
        v = _verdict("round.turn", Outcome.INFO, msg, round=new.round)
        return Result(new, positions, (v,), self.overlays(new, positions))

    def _choose(self, state: SkirmishState, positions: Positions, action: Action) -> Result:
        fig = state.figure(action.unit)
        problem = None
        if fig is None or fig.destroyed:
            problem = f"Tag {action.unit} is not a figure in play."
        elif fig.owner != state.player:
            problem = f"It is {state.player}'s turn; {name_of(fig)} is {fig.owner}'s."
        elif state.chosen is not None:
            now = state.figure(state.chosen)
            problem = (f"{state.player} already acts with {name_of(now) if now else f'tag {state.chosen}'} this turn; "
                       "a player chooses one army card a turn.")
        elif fig.tag not in positions:
            problem = f"{name_of(fig)} is not seen on the table; put it back on its hex."
        if problem or fig is None:
            return Result(state, positions, (_verdict("round.choose", Outcome.ILLEGAL, problem or "", action.unit),))
        new = replace(state, chosen=fig.tag, moved=False, attacked=False)
        v = _verdict("round.choose", Outcome.LEGAL, f"{fig.owner} chooses {fig.card} (tag {fig.tag}).", fig.tag)
        return Result(new, positions, (v,), self.overlays(new, positions, fig.tag))

    def _acting(self, state: SkirmishState, positions: Positions, action: Action, what: str) -> str | None:
        fig = state.figure(action.unit)
        if fig is None or fig.destroyed:
            return f"Tag {action.unit} is not a figure in play."
        if state.chosen != fig.tag:
            if fig.owner != state.player:
                return f"It is {state.player}'s turn; {name_of(fig)} is {fig.owner}'s."
            chosen = state.figure(state.chosen)
            if chosen is not None:
                return f"{name_of(fig)} is not the army card {state.player} chose this turn ({name_of(chosen)} is)."
            return f"{name_of(fig)} is not the army card {state.player} chose this turn; choose it first."
        if fig.tag not in positions:
            return f"{name_of(fig)} is not seen on the table; put it back on its hex."
        if what == "move" and state.moved:
            return f"{name_of(fig)} has already moved this turn: a figure moves once, then attacks."
        if what == "attack" and state.attacked:
            return f"{name_of(fig)} has already attacked this turn: a figure attacks once a turn."
        return None

    def _move(self, state: SkirmishState, positions: Positions, action: Action, cup: DiceCup) -> Result:
        problem = self._acting(state, positions, action, "move")
        if problem:
            return Result(state, positions, (_verdict("move.turn", Outcome.ILLEGAL, problem, action.unit),))
        fig = state.figure(action.unit)
        assert fig is not None
        card = state.card(fig.card)
        cells = cells_of(state, positions)
        start = cells[fig.tag]
        ground = _ground(state, cells, fig)
        plan = self._plan(state, card, start, ground, action)
        numbers: dict[str, Json] = {
            "cost": plan.cost,
            "move": card.move,
            "path": [h.to_json() for h in plan.path],
            "falls": [{"drop": f.drop, "roll": f.roll, "to": f.to.to_json()} for f in plan.falls],
        }
        if not plan.legal:
            v = _verdict("move.path", Outcome.ILLEGAL, plan.problems[0], fig.tag, **numbers)
            return Result(state, positions, (v,), self.overlays(state, positions, fig.tag))
        verdicts = [
            _verdict(
                "move.path",
                Outcome.LEGAL,
                f"{card.name} moves {len(plan.path) - 1} hex{'' if len(plan.path) == 2 else 'es'} for {plan.cost} of "
                f"{card.move} movement points.",
                fig.tag,
                **numbers,
            )
        ]
        new = replace(state, moved=True)
        wounds_total = 0
        foes = engaged_with(state, cells, fig.tag)
        if foes:
            foe_names = listed([name_of(f) for t in foes if (f := state.figure(t)) is not None])
            faces = cup.roll(6, 1, DISENGAGE_DICE, f"{name_of(fig)}'s disengagement from {foe_names}",
                             "a skull (1-3) is a wound", fig.tag)
            wounds = skulls(faces)
            new, fig = _wound(new, fig, wounds)
            wounds_total += wounds
            verdicts.append(
                _verdict(
                    "engagement.disengage",
                    Outcome.INFO,
                    f"{card.name} leaves engagement with {foe_names}: 1 attack die ({faces[0]}), "
                    f"{counted(wounds, 'wound')}." + (" It is destroyed." if fig.destroyed else ""),
                    fig.tag,
                    dice=list(faces),
                    wounds=wounds,
                    destroyed=fig.destroyed,
                )
            )
        for fall in plan.falls:
            if fig.destroyed:
                break
            what = f"{name_of(fig)}'s fall of {fall.drop} levels"
            if fall.roll == "d20":
                die = cup.one(20, FALL_DICE, what, "19 or 20 is unharmed; anything else destroys it", fig.tag)
                survives = die >= 19
                if not survives:
                    lost = state.card(fig.card).life - fig.wounds
                    new, fig = _wound(new, fig, lost)
                    wounds_total += lost
                verdicts.append(
                    _verdict(
                        "move.fall",
                        Outcome.INFO,
                        f"{card.name} falls {fall.drop} levels: d20 rolls {die}; "
                        + ("19 or 20, unharmed." if survives else "destroyed."),
                        fig.tag,
                        drop=fall.drop,
                        d20=die,
                        destroyed=fig.destroyed,
                    )
                )
            else:
                faces = cup.roll(6, 1 if fall.roll == "1 die" else 3, FALL_DICE, what, "each skull (1-3) is a wound",
                                 fig.tag)
                wounds = skulls(faces)
                new, fig = _wound(new, fig, wounds)
                wounds_total += wounds
                verdicts.append(
                    _verdict(
                        "move.fall",
                        Outcome.INFO,
                        f"{card.name} falls {fall.drop} levels (Height {card.height}): {fall.roll} "
                        f"{list(faces)}, {counted(wounds, 'wound')}." + (" It is destroyed." if fig.destroyed else ""),
                        fig.tag,
                        drop=fall.drop,
                        dice=list(faces),
                        wounds=wounds,
                        destroyed=fig.destroyed,
                    )
                )
        moved = dict(positions)
        if fig.destroyed:
            moved.pop(fig.tag, None)
        else:
            moved[fig.tag] = _placement(state.layout, fig.tag, plan.path[-1], positions.get(fig.tag))
        verdicts[0] = replace(verdicts[0], numbers={**verdicts[0].numbers, "wounds": wounds_total,
                                                     "destroyed": fig.destroyed})
        return Result(new, moved, tuple(verdicts), self.overlays(new, moved, fig.tag))

    def _plan(self, state: SkirmishState, card: ArmyCard, start: Hex, ground: Ground, action: Action) -> MovePlan:
        p = action.params
        try:
            if "path" in p:
                steps = p["path"]
                if not isinstance(steps, list) or not steps:
                    raise ActionError('A move\'s "path" must be a list of hexes [[q, r], ...].')
                path = [parse_hex(s, f"step {i} of the move's path") for i, s in enumerate(steps)]
                if path[0] != start:
                    path.insert(0, start)
                goal = path[-1]
            elif "to" in p:
                goal = parse_hex(p["to"], 'the move\'s "to"')
                path = []
            elif "at" in p:
                at = p["at"]
                if not _table_position(at):
                    raise ActionError('A move\'s "at" must be a table position [x, y] in inches.')
                goal = state.layout.from_table(float(at[0]), float(at[1]))[0]
                path = []
            else:
                raise ActionError('A move needs "to": [q, r], "at": [x, y] (inches) or "path": [[q, r], ...].')
        except BoardError as err:
            raise ActionError(str(err)) from err
        if goal == start:
            return MovePlan((start,), 0, (), ("The figure is already in that hex; move elsewhere or end the turn.",))
        if path:
            return check_path(card, path, ground, state.options.moves)
        return plan_to(card, start, goal, ground, state.options.moves)

    def _targets(
        self, state: SkirmishState, cells: Mapping[UnitId, Hex], fig: Figure
    ) -> tuple[list[UnitId], dict[UnitId, tuple[str, str]]]:
        """Figures this one may attack now, and for each other enemy on the table the clause that refuses it and
        why, in one sentence."""
        card = state.card(fig.card)
        here = cells[fig.tag]
        engaged = engaged_with(state, cells, fig.tag)
        ok: list[UnitId] = []
        why: dict[UnitId, tuple[str, str]] = {}
        for f in state.living():
            if f.owner == fig.owner or f.tag not in cells:
                continue
            there = cells[f.tag]
            d = distance(here, there)
            if here not in state.board or there not in state.board:
                off = fig if here not in state.board else f
                why[f.tag] = ("attack.on_board",
                              f"{name_of(off)} stands off the board; only figures on the board fight: put it on its "
                              "hex first.")
            elif engaged and f.tag not in engaged:
                foes = listed([name_of(e) for t in engaged if (e := state.figure(t)) is not None])
                why[f.tag] = ("engagement.target",
                              f"{name_of(fig)} is engaged with {foes} and may attack only "
                              f"{'it' if len(engaged) == 1 else 'them'}, not {name_of(f)}.")
            elif d > card.range:
                why[f.tag] = ("attack.range",
                              f"{name_of(f)} is {d} hexes away; {name_of(fig)} has Range {card.range}.")
            else:
                seen, blockers = line_of_sight(
                    state.board,
                    here,
                    state.board.elevation(here) + card.height,
                    there,
                    state.board.elevation(there) + state.card(f.card).height,
                    state.options.line_of_sight,
                )
                if not seen:
                    why[f.tag] = ("attack.line_of_sight",
                                  "Higher ground at " + ", ".join(f"[{h.q}, {h.r}]" for h in blockers)
                                  + f" blocks {name_of(fig)}'s line of sight to {name_of(f)}.")
                else:
                    ok.append(f.tag)
        return ok, why

    def _attack(self, state: SkirmishState, positions: Positions, action: Action, cup: DiceCup) -> Result:
        problem = self._acting(state, positions, action, "attack")
        if problem:
            return Result(state, positions, (_verdict("attack.turn", Outcome.ILLEGAL, problem, action.unit),))
        target = action.params.get("target")
        if isinstance(target, bool) or not isinstance(target, int):
            raise ActionError('An attack needs "target": the tag of the figure attacked.')
        fig = state.figure(action.unit)
        assert fig is not None
        cells = cells_of(state, positions)
        tfig = state.figure(target)
        if tfig is None or tfig.destroyed or tfig.tag not in cells:
            v = _verdict("attack.target", Outcome.ILLEGAL, f"Tag {target} is not a figure on the table.", fig.tag)
            return Result(state, positions, (v,))
        if tfig.owner == fig.owner:
            v = _verdict("attack.target", Outcome.ILLEGAL, f"Tag {target} is on {fig.owner}'s own side.", fig.tag)
            return Result(state, positions, (v,))
        ok, why = self._targets(state, cells, fig)
        d = distance(cells[fig.tag], cells[target])
        if target not in ok:
            rule, reason = why[target]
            v = _verdict(rule, Outcome.ILLEGAL, reason, fig.tag, distance=d)
            return Result(state, positions, (v,), self.overlays(state, positions, fig.tag))
        card, tcard = state.card(fig.card), state.card(tfig.card)
        attack_faces = cup.roll(6, card.attack, ATTACK_DICE, f"{name_of(fig)}'s attack on {name_of(tfig)}",
                                "each 1-3 is a skull", fig.tag)
        hits = skulls(attack_faces)
        reads = f"each 4-5 is a shield against the {counted(hits, 'skull')}"
        if tcard.counterstrike:
            reads += "; each shield beyond them hits back (Counterstrike)"
        defense_faces = cup.roll(6, tcard.defense, DEFENSE_DICE, f"{name_of(tfig)}'s defense against {name_of(fig)}",
                                 reads, tfig.tag, side=tfig.owner)
        res = attack_roll(card, tcard, attack_faces, defense_faces)
        new, tfig = _wound(replace(state, attacked=True), tfig, res.wounds)
        msg = (  # each figure by its card and tag: two of one card may fight
            f"{name_of(fig)} attacks {name_of(tfig)} at {counted(d, 'hex', 'hexes')}: attack dice {list(attack_faces)}, "
            f"{counted(res.skulls, 'skull')}; defense dice {list(defense_faces)}, {counted(res.shields, 'shield')}; "
            f"{counted(res.wounds, 'wound')}." + (f" {name_of(tfig)} is destroyed." if tfig.destroyed else "")
        )
        if res.counter_wounds:
            new, fig = _wound(new, fig, res.counter_wounds)
            msg += f" Counterstrike: {counted(res.counter_wounds, 'hit')} back." + (
                f" {name_of(fig)} is destroyed." if fig.destroyed else ""
            )
        moved = {t: p for t, p in positions.items() if not (new.figure(t) and new.figure(t).destroyed)}  # type: ignore[union-attr]
        v = _verdict(
            "attack.roll",
            Outcome.LEGAL,
            msg,
            fig.tag,
            distance=d,
            target=target,
            hit=res.wounds > 0,
            destroyed=tfig.destroyed,
            attacker_destroyed=fig.destroyed,
            **res.to_json(),
        )
        return Result(new, moved, (v,), self.overlays(new, moved, fig.tag))

    # ------------------------------------------------------------------ overlays

    def hex_board(self, state: SkirmishState) -> tuple[HexBoard, Layout]:
        return state.board, state.layout

    def overlays(
        self, state: SkirmishState, positions: Positions, selected: UnitId | None = None
    ) -> tuple[Overlay, ...]:
        """Figures astride two hexes or off the board, engaged pairs, and for the selected figure its cell,
        reachable cells and attack lines (the board's terrain is drawn from `hex_board`); once the game is over,
        nothing of a turn (no figure acts any more)."""
        lay = state.layout
        out: list[Overlay] = []
        cells = cells_of(state, positions)
        margin = state.options.snap_fraction * lay.inradius_in
        for tag, p in positions.items():
            where = straddle_words(state.board, lay, p.x, p.y, margin) if tag in cells else ""
            if where:
                out.append(Overlay(Shape.CIRCLE, (p.xy,), "too-close", radius=lay.inradius_in * 0.6, unit=tag,
                                   label=where))
        for tag, other in engaged_pairs(state, cells):
            out.append(Overlay(Shape.SEGMENT, (lay.to_table(cells[tag]), lay.to_table(cells[other])),
                               "engagement", unit=tag))
        if self.is_over(state):
            return tuple(out)
        chosen = selected if selected is not None else state.chosen
        fig = state.figure(chosen)
        if fig is not None and not fig.destroyed and fig.tag in cells:
            here = cells[fig.tag]
            out.append(Overlay(Shape.POLYGON, lay.polygon(here), "hex-highlight", unit=fig.tag, owner=fig.owner))
            card = state.card(fig.card)
            if not (state.chosen == fig.tag and state.moved):
                for h, cost in sorted(destinations(card, here, _ground(state, cells, fig), state.options.moves).items()):
                    out.append(Overlay(Shape.POLYGON, lay.polygon(h), "hex-reachable", unit=fig.tag, label=str(cost)))
            ok, why = self._targets(state, cells, fig)
            for t in ok:
                out.append(Overlay(Shape.SEGMENT, (lay.to_table(here), lay.to_table(cells[t])), "attack-line",
                                   unit=fig.tag, owner=fig.owner))
            for t, (rule, reason) in why.items():
                if rule == "attack.line_of_sight":
                    out.append(Overlay(Shape.SEGMENT, (lay.to_table(here), lay.to_table(cells[t])), "los-blocked",
                                       unit=fig.tag, label=reason))
        return tuple(out)

    # ------------------------------------------------------------------ judge

    def judge(self, scenario: Mapping[str, Json], rng: random.Random | None) -> dict[str, Json]:
        """Answer one scenario (docs/scenarios/hex_skirmish.md): question "reachable"; actions "initiative",
        "choose", "move", "attack", "end_turn". The dice are the action's "rolls"; `rng` rolls the rest, and None
        answers "waiting" with the roll asked for ("pending"). An action that ends the game names the "winner"."""
        state = _state_from(scenario, "the scenario", ScenarioError)
        units = scenario.get("units")
        assert isinstance(units, list)
        positions = _positions(units, state.layout)
        question, action = scenario.get("question"), scenario.get("action")
        asked = question if isinstance(question, Mapping) else action
        if not isinstance(asked, Mapping) or not isinstance(asked.get("kind"), str):
            raise ScenarioError('The Hex Skirmish scenario needs "action": {"kind": "move", "unit": 10, "params": '
                                '{...}} or "question": {"kind": "reachable", "unit": 10}.')
        act = Action.from_json(asked)
        for tag, p in sorted(positions.items()):
            cell = state.layout.from_table(p.x, p.y)[0]
            if cell not in state.board:
                raise ScenarioError(f"unit {tag} stands on [{cell.q}, {cell.r}], which is not a cell of the board; "
                                    "put it on the board or leave out its \"hex\" and \"at\".")
        state = _default_turn(state, scenario.get("state"), act)
        margin = state.options.snap_fraction * state.layout.inradius_in
        astride = [
            _verdict("figure.astride", Outcome.ILLEGAL,
                     f"Tag {t} stands {straddle_words(state.board, state.layout, p.x, p.y, margin)} "
                     f"({state.layout.from_table(p.x, p.y)[1]:.2f}\" from the nearest centre); set it in one hex.", t)
            for t, p in sorted(positions.items())
            if t in (act.unit, act.params.get("target")) and state.layout.astride(p.x, p.y, margin)
        ]
        if astride:
            return {**_answer(act.kind, astride, False), "numbers": {}}
        if act.kind == "reachable":
            fig = state.figure(act.unit)
            cells = cells_of(state, positions)
            if fig is None or fig.tag not in cells:
                raise ScenarioError(f'The question\'s "unit" {act.unit!r} is not a figure on the board.')
            card = state.card(fig.card)
            reach = destinations(card, cells[fig.tag], _ground(state, cells, fig), state.options.moves)
            v = _verdict("move.reach", Outcome.INFO, f"{card.name} can reach {len(reach)} hexes.", fig.tag,
                         count=len(reach))
            answer = _answer(act.kind, [v], True)
            answer["numbers"] = {"count": len(reach)}
            answer["reachable"] = {f"{h.q},{h.r}": c for h, c in sorted(reach.items())}
            return answer
        res = self.apply(state, positions, act, rng)
        answer = _answer(act.kind, list(res.verdicts), act.kind in ("initiative", "end_turn"))
        if res.pending is not None:
            answer["pending"] = res.pending.to_json()
        answer["rolls"] = [r.to_json() for r in res.rolls]
        if not self.is_over(state) and self.is_over(res.state):
            answer["winner"] = winner_of(res.state)
        numbers: dict[str, Json] = {}
        for v in res.verdicts:
            numbers.update({k: val for k, val in v.numbers.items() if k not in numbers})
        answer["numbers"] = numbers
        answer["figures"] = {
            str(f.tag): {"wounds": f.wounds, "destroyed": f.destroyed} for f in res.state.figures
        }
        new_cells = cells_of(res.state, res.positions)
        answer["hexes"] = {str(t): h.to_json() for t, h in sorted(new_cells.items())}
        answer["state"] = self.dump_state(res.state)["state"]
        return answer


# ---------------------------------------------------------------------------------------------- parsing


def _answer(kind: str, verdicts: list[Verdict], question: bool) -> dict[str, Json]:
    if any(v.outcome is Outcome.WAITING for v in verdicts):
        outcome = "waiting"
    elif any(v.outcome is Outcome.ILLEGAL for v in verdicts):
        outcome = "illegal"
    elif question or all(v.outcome is Outcome.INFO for v in verdicts):
        outcome = "info"
    else:
        outcome = "legal"
    return {"game": "hex_skirmish", "action": kind, "outcome": outcome, "verdicts": [v.to_json() for v in verdicts]}


def _options(obj: Any, err: type[Exception]) -> SkirmishOptions:
    if not isinstance(obj, Mapping):
        raise err('"options" must be an object.')
    climb = obj.get("climb_cost", "levels")
    if climb not in CLIMB_COSTS:
        raise err(f'climb_cost is {climb!r}; use "levels" or "step_plus_levels".')
    sight = obj.get("line_of_sight", "terrain")
    if sight not in SIGHT_RULES:
        raise err(f'line_of_sight is {sight!r}; use "terrain" or "none".')
    dice = obj.get("combat_dice", "skull_shield_d6")
    if dice != "skull_shield_d6":
        raise err(f'combat_dice is {dice!r}; the only dice these rules know are "skull_shield_d6".')
    stops = obj.get("engagement_stops", True)
    if not isinstance(stops, bool):
        raise err("engagement_stops must be true or false.")
    frac = obj.get("snap_fraction", 0.5)
    if isinstance(frac, bool) or not isinstance(frac, int | float) or not 0 <= frac < 1:
        raise err("snap_fraction must be a number from 0 up to (not including) 1.")
    return SkirmishOptions(climb, stops, sight, dice, float(frac))


def _state_from(obj: Mapping[str, Any], where: str, err: type[Exception]) -> SkirmishState:
    board_in = obj.get("board")
    if not isinstance(board_in, Mapping):
        raise err(f'{where} has no "board"; give {{"layout": {{...}}, "hexagon": 3, "cells": [...]}}.')
    try:
        board = parse_board(board_in, where=f"{where}'s board")
        layout = parse_layout(board_in["layout"], f"{where}'s board layout") if "layout" in board_in else DEFAULT_LAYOUT
    except BoardError as e:
        raise err(str(e)) from e
    cards_in = obj.get("cards", [])
    if not isinstance(cards_in, list):
        raise err(f'{where}: "cards" must be a list of army cards.')
    cards: dict[str, ArmyCard] = {}
    try:
        for i, c in enumerate(cards_in):
            card = parse_card(c, f"{where}, card {i + 1}")
            if card.name in cards:
                raise RosterError(f"{where}: the army card {card.name!r} is listed twice.")
            cards[card.name] = card
    except RosterError as e:
        raise err(str(e)) from e
    units = obj.get("units")
    if not isinstance(units, list) or not units:
        raise err(f'{where} has no "units" list; give each figure a tag, owner, card and hex or at.')
    figures: list[Figure] = []
    for i, u in enumerate(units):
        uw = f"{where}, unit {i + 1}"
        if not isinstance(u, Mapping):
            raise err(f"{uw} must be an object.")
        tag, owner = u.get("tag"), u.get("owner")
        if isinstance(tag, bool) or not isinstance(tag, int):
            raise err(f'{uw} has no whole-number "tag".')
        if any(f.tag == tag for f in figures):
            raise err(f"{uw}: tag {tag} is listed twice.")
        if not isinstance(owner, str) or not owner:
            raise err(f'{uw} (tag {tag}) has no "owner".')
        cname = u.get("card", u.get("profile"))
        if isinstance(cname, Mapping):
            try:
                card = parse_card(cname, f"{uw}'s card")
            except RosterError as e:
                raise err(str(e)) from e
            cards.setdefault(card.name, card)
            cname = card.name
        if not isinstance(cname, str) or cname not in cards:
            known = ", ".join(sorted(cards)) or "none given"
            raise err(f'{uw} (tag {tag}) names the army card {cname!r}; use one of the "cards": {known}.')
        wounds = u.get("wounds", 0)
        if isinstance(wounds, bool) or not isinstance(wounds, int) or wounds < 0:
            raise err(f"{uw} (tag {tag}): wounds must be a whole number, 0 or more.")
        destroyed = bool(u.get("destroyed", False)) or wounds >= cards[cname].life
        figures.append(Figure(tag, owner, cname, wounds, destroyed))
    owners_in = obj.get("owners")
    if isinstance(owners_in, list) and all(isinstance(o, str) for o in owners_in) and owners_in:
        owners = tuple(owners_in)
    else:
        owners = tuple(dict.fromkeys(f.owner for f in figures))
    st = obj.get("state", {})
    if not isinstance(st, Mapping):
        raise err(f'{where}: "state" must be an object.')
    order = st.get("order", [])
    if not isinstance(order, list) or not all(o in owners for o in order):
        raise err(f'{where}: state "order" must list players among {list(owners)}.')
    rnd, turn = st.get("round", 1), st.get("turn", 0)
    if isinstance(rnd, bool) or not isinstance(rnd, int) or rnd < 1:
        raise err(f'{where}: state "round" must be a whole number from 1.')
    if isinstance(turn, bool) or not isinstance(turn, int) or not 0 <= turn <= max(0, len(order) - 1):
        raise err(f'{where}: state "turn" must index the order (0 to {max(0, len(order) - 1)}).')
    chosen = st.get("chosen")
    if chosen is not None and (isinstance(chosen, bool) or not isinstance(chosen, int)):
        raise err(f'{where}: state "chosen" must be a tag or null.')
    return SkirmishState(
        cards=tuple(cards.values()),
        figures=tuple(figures),
        owners=owners,
        board=board,
        layout=layout,
        round=rnd,
        order=tuple(order),
        turn=turn,
        chosen=chosen,
        moved=bool(st.get("moved", False)),
        attacked=bool(st.get("attacked", False)),
        options=_options(obj.get("options", {}), err),
    )


def _default_turn(state: SkirmishState, given: Any, act: Action) -> SkirmishState:
    """A scenario without a round in progress: the acting figure's player goes first and has chosen it."""
    if isinstance(given, Mapping) and given.get("order"):
        return state
    if act.kind == "initiative":
        return state
    fig = state.figure(act.unit)
    first = fig.owner if fig else state.owners[0]
    order = (first, *(o for o in state.owners if o != first))
    chosen = fig.tag if fig and act.kind in ("move", "attack") else None
    return replace(state, order=order, turn=0, chosen=chosen)


def _positions(units: list[Any], layout: Layout) -> dict[UnitId, Placement]:
    """Where each figure stands: "hex": [q, r] (the cell's centre) or "at": [x, y] (table inches)."""
    out: dict[UnitId, Placement] = {}
    for u in units:
        tag = u["tag"]
        if u.get("destroyed"):
            continue
        if "hex" in u:
            try:
                h = parse_hex(u["hex"], f"unit {tag}'s \"hex\"")
            except BoardError as e:
                raise ScenarioError(str(e)) from e
            x, y = layout.to_table(h)
        elif "at" in u:
            at = u["at"]
            if not _table_position(at):
                raise ScenarioError(f'unit {tag}\'s "at" must be a table position [x, y] in inches; got {at!r}.')
            x, y = float(at[0]), float(at[1])
        else:
            continue
        out[tag] = Placement(tag, x, y)
    return out

# -------------------------------------------------------------------------------- what may be tried
# What the players may try now in Hex Skirmish (`Game.tryable_actions`) and what could be declared at a hex they
# click (`actions_at`), refused ones included: the page offers them, and the ruling says why one is refused.
#
# Nothing here is ruled: `HexSkirmish.apply` rules each action. The lists are complete and bounded by the figures:
# - before initiative, choosing any army card (refused: initiative first);
# - choosing an army card: every living figure's card, either player's (the other player's is refused: not their
#   turn; one off the table is refused: not seen);
# - once a card is chosen: an attack by its figure on every opposing figure on the table (out of Range, behind
#   higher ground, or not one it is engaged with: the ruling says which), and choosing any other card (refused: one
#   card a turn).
# Moves are the camera's, or `at_point`'s: the selected figure's move to the clicked hex, or its attack on each
# opposing figure there; with no figure selected, choosing the army card of each figure standing there.


def tryable(state: SkirmishState, cells: Mapping[UnitId, Hex], legal: list[Action]) -> list[Action]:
    """The legal actions first, then every choice and attack the players may try (see the module docstring)."""
    living = state.living()
    if not legal:  # the game is over
        return []
    more: list[Action] = []
    fig = state.figure(state.chosen)
    if state.phase == "act" and fig is not None and not fig.destroyed and fig.tag in cells:
        more += [Action("attack", fig.tag, {"target": f.tag}) for f in living
                 if f.owner != fig.owner and f.tag in cells]
    more += [Action("choose", f.tag) for f in living if f.tag != state.chosen]
    return once(legal + more)


def at_point(state: SkirmishState, cells: Mapping[UnitId, Hex], unit: UnitId | None,
             at: tuple[float, float]) -> list[Action]:
    """The actions at the hex under table point `at` (inches), legal or not: for the selected figure, its move to
    that hex when no figure stands there, else its attack on each opposing figure there; for none, choosing the
    army card of each figure there."""
    x, y = float(at[0]), float(at[1])
    if not (math.isfinite(x) and math.isfinite(y)):
        return []
    h = state.layout.from_table(x, y)[0]
    there = [f for f in state.living() if cells.get(f.tag) == h]
    if unit is None:
        return [Action("choose", f.tag) for f in there]
    fig = state.figure(unit)
    if fig is None or fig.destroyed or fig.tag not in cells:
        return []
    if not there:
        return [Action("move", fig.tag, {"to": h.to_json()})]
    return [Action("attack", fig.tag, {"target": f.tag}) for f in there if f.owner != fig.owner]


def once(actions: list[Action]) -> list[Action]:
    """Each action once, in the order first given."""
    seen: set[str] = set()
    out = []
    for a in actions:
        key = json.dumps(a.to_json(), sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out
