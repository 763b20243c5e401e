"""Valyr: hero skirmish with "True Movement" measured by tape (the rule book: seeds/000_b6a76c7c967c9fa2.txt).

The rules, in our words, with the clause names our verdicts carry:

- valyr.army.appraisal: each army's total appraisal must be at most the agreed amount.
- valyr.round.priority: the player whose army has the lowest appraisal starts with the priority token; a tie
  is settled by a coin flip (``PRIORITY_TIE``: the coin is a d6; three or more tied players roll off).
- valyr.round.start: at the start of each round every unit card is turned vertical. From the second round
  on, the priority token first passes to the right (the previous player in seating order).
- valyr.turn.*: starting with the token holder, a player picks one of their vertical cards; the unit takes as
  many actions as its Energy, then is exhausted (card horizontal) for the rest of the round, and the player
  to the left (the next in seating order) takes a turn. A player with no vertical card is passed over.
  When every card is exhausted the round ends ("start_round" begins the next).
- valyr.move.sprint / valyr.move.stamina: a unit's first move of a turn may go up to its Sprint, each later
  one up to its Stamina; a move may be split into straight parts. Vertical rules in rules/valyr/move.py:
  a climb of more than 1" costs double without a handhold or ladder; a unit that cannot stand flat where it
  ends falls, is exhausted and its turn ends (valyr.move.fall).
- valyr.attack.*: the target is an opposing unit between min and max range (base edge to base edge) and
  in line of sight; the range band's modifiers change strength and skill; a d20 per strength, each plus the
  defender's armor, on target when below the skill; dodge cancels on-target attacks; hits become distress;
  distress above health defeats (the unit leaves the table, its card flipped and exhausted).
- valyr.ability: an Active ability takes an action; its effect comes from a hook (rules/valyr/abilities.py).
- valyr.end: when all players but one are defeated (no unit left) or have conceded, the last one wins.

Options where the rule book is silent or loose (named, documented):
- ``RANGE_READING`` (rules/valyr/cards.py): "banded" — each [strength/skill] bracket belongs to the band
  between the distances either side of it.
- ``PARTIAL_SIGHT_COUNTS``: a target seen only in part (some sight lines blocked or obscured) is "within
  line of sight"; the rule book has no cover rule.
- ``END_TURN_EARLY``: a unit may end its turn before using all its energy (the rest is lost); a player may
  also exhaust a card without acting.
- ``BASES_MAY_NOT_OVERLAP``: a move may not end with its base overlapping another unit's base on the same
  level; "impassable" terrain may not be crossed; the table edge may not be crossed.
- A verdict inside the ± is "too close to call": nothing changes until the players measure by hand and
  declare the figure ("length_in" for a move, "range_in" for an attack).
- Distances between units are base edge to base edge; move lengths are what the base centre travels.

Dice (rules/dice.py): the faces the players rolled are the action's ``"rolls"``, in the order the rules take them;
with a generator ("roll for us") Tablesight rolls the ones not given; with none, a roll not given is answered as
waiting for it (nothing changes). The rolls, with their clause:
- valyr.attack.roll: the attacker rolls 1 d20 per strength, e.g. "roll 3 d20 for Archer 12's attack on Scout 20;
  each below 14 after Scout 20's +2 armor is on target; dodge 1 cancels 1". The defender rolls nothing.
- valyr.round.priority (``PRIORITY_TIE``, the rule book's coin flip; its dice set has no coin): two tied players
  roll 1 d6 for the coin, 1-3 the first of them in seating order, 4-6 the other (or flip a real coin and set
  the setup's "priority"); three or more each roll 1 d6 in seating order, each roll asked for in turn, the highest
  takes the token, and players tied on the highest roll again, asked for again the same way.
Where the rule book is silent about dice (``DICE_ON_THE_TABLE``): a cocked die, or one that rolls off the table
or tray, is rolled again before it is read; only the faces read count, so they are all Tablesight is given.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rules.dice import DiceCup
from rules.engine import (
    Action,
    ActionError,
    Game,
    Inches,
    Json,
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
    UnitId,
    Verdict,
    listed,
    register,
    takes_dice,
)
from rules.geometry import Measure, combined_pm, crosses_impassable, edge_distance, line_of_sight
from rules.roster import FIRST_BASE_TAG, MM_PER_INCH
from rules.terrain import TerrainPiece, parse_terrain, terrain_to_json
from rules.valyr import standard
from rules.valyr.abilities import HOOKS, AbilityUse
from rules.valyr.attack import attack_reads, band_choice, read_attack
from rules.valyr.cards import EXAMPLE_CARD_DATA, UnitCard, army_appraisal, parse_card
from rules.valyr.move import landing, move_cost, through_blocking
from rules.valyr.panel import token_passes_to, valyr_panel, valyr_score

DICE_ON_THE_TABLE = "re-roll cocked or lost dice"
"""A die that lands cocked or off the table is rolled again before it is read (the players give only faces read)."""
PRIORITY_TIE = "coin flip, roll-off"
"""How a tie for the priority token is settled: two players flip a coin, made with a d6 (1-3 the first of them in
seating order, 4-6 the other); three or more roll off (see `_roll_off`)."""
PARTIAL_SIGHT_COUNTS = True
END_TURN_EARLY = True
BASES_MAY_NOT_OVERLAP = True
OVERLAP_SLACK_IN = 0.05
"""Bases may touch; they overlap when their edges cross by more than this (inches)."""
LEVEL_IN = 1.0
"""Bases whose heights differ by at least this are on different levels and cannot overlap."""

EXAMPLE_CARDS: dict[str, UnitCard] = {
    c["Identity"]["Name"].lower(): parse_card(c, hooks=HOOKS) for c in EXAMPLE_CARD_DATA
}
"""Tablesight's own example cards by lower-case name (their Origin says they are ours)."""


@dataclass(frozen=True)
class ValyrUnit:
    """A unit in play: its card, owner, base, and its distress and card state."""

    tag: UnitId
    owner: str
    card: UnitCard
    base_mm: float = 32.0
    distress: int = 0
    exhausted: bool = False
    defeated: bool = False

    @property
    def radius(self) -> Inches:
        return self.base_mm / MM_PER_INCH / 2.0

    @property
    def name(self) -> str:
        return f"{self.card.name} {self.tag}"

    @property
    def vertical(self) -> bool:
        """The card stands vertical: the unit may still take its turn this round."""
        return not self.exhausted and not self.defeated


@dataclass(frozen=True)
class ValyrState:
    """The whole game between camera frames.

    players: seating order; "to the left" is the next player in it, "to the right" the previous one.
    round: 0 before the first round; to_play: whose turn it is (None when the round is over);
    active: the unit taking its turn (None before a card is picked); actions_used / moves_made: this turn's.
    board: (width, depth) in inches, or None for an unbounded table.
    """

    players: tuple[str, ...]
    units: tuple[ValyrUnit, ...]
    terrain: tuple[TerrainPiece, ...] = ()
    board: tuple[Inches, Inches] | None = None
    appraisal_limit: float | None = None
    round: int = 0
    priority: str | None = None
    to_play: str | None = None
    active: UnitId | None = None
    actions_used: int = 0
    moves_made: int = 0
    conceded: tuple[str, ...] = ()
    over: bool = False
    winner: str | None = None

    def unit(self, tag: UnitId) -> ValyrUnit | None:
        return next((u for u in self.units if u.tag == tag), None)

    def with_unit(self, unit: ValyrUnit) -> ValyrState:
        return replace(self, units=tuple(unit if u.tag == unit.tag else u for u in self.units))

    def army(self, player: str) -> tuple[ValyrUnit, ...]:
        return tuple(u for u in self.units if u.owner == player)

    def standing(self) -> tuple[str, ...]:
        """Players still in the game: not conceded, with at least one undefeated unit."""
        return tuple(
            p for p in self.players if p not in self.conceded and any(not u.defeated for u in self.army(p))
        )


# ------------------------------------------------------------------------------------------- reading input


def _number(obj: Mapping[str, Any], key: str, default: float | None, where: str, err: type[Exception],
            low: float = 0.0) -> float:
    value = obj.get(key, default)
    if value is None or isinstance(value, bool) or not isinstance(value, int | float) or not abs(value) <= 10_000:
        raise err(f'{where}: "{key}" must be a number; got {value!r}.')
    if value < low:
        raise err(f'{where}: "{key}" must be at least {low:g}; got {value!r}.')
    return float(value)


def _cards(cards_in: Any, err: type[Exception]) -> dict[str, UnitCard]:
    """Cards given with a roster or scenario, by lower-case name, over our example cards."""
    cards = dict(EXAMPLE_CARDS)
    if cards_in is None:
        return cards
    if not isinstance(cards_in, list):
        raise err('"cards" must be a list of unit cards (objects with Identity and Combat).')
    for i, c in enumerate(cards_in):
        card = parse_card(c, f'card {i + 1} of "cards"', hooks=HOOKS)
        cards[card.name.lower()] = card
    return cards


def _units(entries: Any, cards: Mapping[str, UnitCard], where: str, err: type[Exception],
           need_at: bool) -> tuple[tuple[ValyrUnit, ...], dict[UnitId, Placement]]:
    if not isinstance(entries, list) or not entries:
        raise err(f'{where} needs a "units" list with one entry per tagged base.')
    units: list[ValyrUnit] = []
    placements: dict[UnitId, Placement] = {}
    for i, e in enumerate(entries):
        here = f'{where}, "units"[{i}]'
        if not isinstance(e, Mapping):
            raise err(f"{here} must be an object with tag, owner and profile.")
        tag = e.get("tag")
        if isinstance(tag, bool) or not isinstance(tag, int) or tag < FIRST_BASE_TAG:
            raise err(f'{here}: "tag" must be a base tag id (a whole number from {FIRST_BASE_TAG} up); got {tag!r}.')
        here = f"{where}, unit tag {tag}"
        if any(u.tag == tag for u in units):
            raise err(f"{here} is listed twice; every base needs its own tag id.")
        owner = e.get("owner")
        if not isinstance(owner, str) or not owner:
            raise err(f'{here} has no "owner"; name the player it belongs to.')
        if isinstance(e.get("card"), Mapping):
            card = parse_card(e["card"], f"{here}'s card", hooks=HOOKS)
        else:
            profile = e.get("profile")
            if not isinstance(profile, str) or profile.lower() not in cards:
                known = ", ".join(sorted(c.name for c in cards.values()))
                raise RosterError(f'{here}: "profile" must name a unit card ({known}) or give a "card"; '
                                  f"got {profile!r}.")
            card = cards[profile.lower()]
        distress = e.get("distress", 0)
        if isinstance(distress, bool) or not isinstance(distress, int) or distress < 0:
            raise err(f'{here}: "distress" must be a whole number of at least 0; got {distress!r}.')
        flags = {}
        for key in ("exhausted", "defeated"):
            flags[key] = e.get(key, False)
            if not isinstance(flags[key], bool):
                raise err(f'{here}: "{key}" must be true or false; got {flags[key]!r}.')
        unit = ValyrUnit(tag, owner, card, _number(e, "base_mm", 32.0, here, err, 10.0), distress,
                         flags["exhausted"] or flags["defeated"], flags["defeated"])
        units.append(unit)
        at = e.get("at")
        if at is None:
            if need_at and not unit.defeated:
                raise err(f'{here} has no "at"; give its base centre as [x, y] in inches.')
            continue
        if (not isinstance(at, list) or len(at) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) and abs(v) <= 10_000 for v in at)):
            raise err(f'{here}: "at" must be [x, y] in inches; got {at!r}.')
        z = _number(e, "z", 0.0, here, err)
        pm = _number(e, "pm", 0.0, here, err)
        if not unit.defeated:
            placements[tag] = Placement(tag, float(at[0]), float(at[1]), z, pm)
    return tuple(sorted(units, key=lambda u: u.tag)), placements


def _board(obj: Any, err: type[Exception]) -> tuple[Inches, Inches] | None:
    if obj is None:
        return None
    if isinstance(obj, list | tuple) and len(obj) == 2:
        obj = {"width_in": obj[0], "depth_in": obj[1]}
    if not isinstance(obj, Mapping):
        raise err('"board" must be {"width_in": W, "depth_in": D} in inches.')
    return (_number(obj, "width_in", None, '"board"', err, 1.0), _number(obj, "depth_in", None, '"board"', err, 1.0))


def _players(obj: Any, units: Sequence[ValyrUnit], err: type[Exception]) -> tuple[str, ...]:
    owners = list(dict.fromkeys(u.owner for u in units))
    if obj is None:
        return tuple(owners)
    if not isinstance(obj, list) or not all(isinstance(p, str) for p in obj) or len(set(obj)) != len(obj):
        raise err('"players" must list each player once, in seating order (turns pass to the left, the next one).')
    missing = [o for o in owners if o not in obj]
    if missing:
        raise err(f'"players" leaves out {missing[0]!r}, who owns units; list every player in seating order.')
    return tuple(obj)


# --------------------------------------------------------------------------------------------------- game


def _pm_pair(pm: Inches) -> Inches:
    """The ± of a length measured between two placements of the same quality."""
    return combined_pm(pm, pm)


def _worst(outcomes: Sequence[Outcome]) -> Outcome:
    if Outcome.WAITING in outcomes:
        return Outcome.WAITING
    if Outcome.ILLEGAL in outcomes:
        return Outcome.ILLEGAL
    if Outcome.TOO_CLOSE_TO_CALL in outcomes:
        return Outcome.TOO_CLOSE_TO_CALL
    if Outcome.LEGAL in outcomes:
        return Outcome.LEGAL
    return Outcome.INFO


def _f(v: float) -> str:
    return f"{v:g}" if float(v).is_integer() else f"{v:.2f}"


def _roll_off(players: Sequence[str], rule: str, prize: str, cup: DiceCup) -> tuple[str, list[dict[str, int]]]:
    """A roll-off (PRIORITY_TIE): each player rolls 1 d6 in seating order, each roll asked for in turn; the
    highest wins; players tied on the highest roll again. The winner and every round's faces by player."""
    rounds: list[dict[str, int]] = []
    left = list(players)
    while len(left) > 1:
        what = (f"the roll-off for {prize} again ({listed(left)} tied on {max(rounds[-1].values())})" if rounds
                else f"the roll-off for {prize}")
        faces = {p: cup.one(6, rule, what, "the highest takes it; a tie for the highest rolls again", side=p)
                 for p in left}
        rounds.append(faces)
        left = [p for p in left if faces[p] == max(faces.values())]
    return left[0], rounds


@dataclass(frozen=True)
class _MovePlan:
    end: Placement
    fell: bool
    trail: tuple[tuple[Inches, Inches], ...]


@register
class Valyr(Game):
    """Valyr on an open table in inches; see the module docstring for the rules and options."""

    name = "valyr"
    title = "Valyr"
    board = "inches"
    kind_titles = {"ability": "Use an ability", "start_round": "Start a new round", "end_turn": "End a turn",
                   "concede": "Concede"}

    # ----------------------------------------------------------------------------------------- setup

    # a new game's setup: rules/valyr/standard.py
    def option_fields(self) -> tuple[OptionField, ...]:
        return standard.OPTION_FIELDS

    def example_roster(self) -> dict[str, Json]:
        return copy.deepcopy(standard.EXAMPLE_ROSTER)

    def new_state(self, setup: Mapping[str, Json]) -> ValyrState:
        """A game before its first round from {"units": [roster entries], "cards": [...], "players": [...],
        "appraisal_limit": n, "terrain": {...}, "board": {...}, "priority": player (optional)}."""
        if not isinstance(setup, Mapping):
            raise RosterError('A Valyr setup must be an object with a "units" list.')
        cards = _cards(setup.get("cards"), RosterError)
        units, _ = _units(setup.get("units"), cards, "the Valyr roster", RosterError, need_at=False)
        limit = setup.get("appraisal_limit")
        if limit is not None:
            limit = _number(setup, "appraisal_limit", None, "the Valyr roster", RosterError)
        players = _players(setup.get("players"), units, RosterError)
        priority = setup.get("priority")
        if priority is not None and priority not in players:
            raise RosterError(f'"priority" names {priority!r}, who is not among the players {list(players)}.')
        return ValyrState(
            players=players, units=units, terrain=parse_terrain(setup.get("terrain")),
            board=_board(setup.get("board"), RosterError), appraisal_limit=limit, priority=priority,
        )

    def example(self, rng: random.Random) -> tuple[ValyrState, Positions]:
        """Two armies of our example cards on a 30" x 22" table with a ruin and a wall, first round begun."""
        state = self.new_state({
            "units": [
                {"tag": 10, "profile": "Shieldbearer", "owner": "red"},
                {"tag": 11, "profile": "Archer", "owner": "red"},
                {"tag": 20, "profile": "Scout", "owner": "blue", "base_mm": 25},
                {"tag": 21, "profile": "Mender", "owner": "blue"},
            ],
            "players": ["red", "blue"],
            "appraisal_limit": 50,
            "board": {"width_in": 30, "depth_in": 22},
            "terrain": {"pieces": [
                {"name": "ruin", "kind": ["elevated", "obscuring"], "polygon": [[13, 3], [17, 3], [17, 7], [13, 7]],
                 "height_in": 3, "climbable": True},
                {"name": "wall", "kind": ["blocking"], "polygon": [[15, 12], [15.5, 12], [15.5, 17], [15, 17]],
                 "height_in": 2, "climbable": True},
            ]},
        })
        positions = {
            10: Placement(10, 6.0, 8.0, 0.0, 0.02), 11: Placement(11, 6.0, 14.0, 0.0, 0.02),
            20: Placement(20, 20.0, 8.0, 0.0, 0.02), 21: Placement(21, 20.0, 14.0, 0.0, 0.02),
        }
        result = self.apply(state, positions, Action("start_round"), rng)
        return result.state, result.positions

    # ----------------------------------------------------------------------------------------- state io

    def dump_state(self, state: ValyrState) -> dict[str, Json]:
        return {
            "game": self.name,
            "players": list(state.players),
            "units": [
                {"tag": u.tag, "owner": u.owner, "card": u.card.to_json(), "base_mm": u.base_mm,
                 "distress": u.distress, "exhausted": u.exhausted, "defeated": u.defeated}
                for u in state.units
            ],
            "terrain": terrain_to_json(state.terrain),
            "board": None if state.board is None else {"width_in": state.board[0], "depth_in": state.board[1]},
            "appraisal_limit": state.appraisal_limit,
            "round": state.round,
            "priority": state.priority,
            "to_play": state.to_play,
            "active": state.active,
            "actions_used": state.actions_used,
            "moves_made": state.moves_made,
            "conceded": list(state.conceded),
            "over": state.over,
            "winner": state.winner,
        }

    def load_state(self, obj: Mapping[str, Json]) -> ValyrState:
        if not isinstance(obj, Mapping):
            raise ScenarioError("A Valyr state must be a JSON object (from dump_state).")
        units, _ = _units(obj.get("units"), EXAMPLE_CARDS, "the Valyr state", ScenarioError, need_at=False)
        return self._state_fields(obj, units, parse_terrain(obj.get("terrain")), _board(obj.get("board"), ScenarioError),
                                  default_round=0)

    def _state_fields(self, obj: Mapping[str, Any], units: tuple[ValyrUnit, ...], terrain: tuple[TerrainPiece, ...],
                      board: tuple[Inches, Inches] | None, default_round: int) -> ValyrState:
        err = ScenarioError
        players = _players(obj.get("players"), units, err)
        rnd = obj.get("round", default_round)
        if isinstance(rnd, bool) or not isinstance(rnd, int) or rnd < 0:
            raise err(f'"round" must be a whole number of at least 0; got {rnd!r}.')
        tags = {u.tag for u in units}
        for key in ("priority", "to_play", "winner"):
            v = obj.get(key)
            if v is not None and (not isinstance(v, str) or v not in players):
                raise err(f'"{key}" names {v!r}, who is not among the players {list(players)}.')
        active = obj.get("active")
        if active is not None and (not isinstance(active, int) or active not in tags):
            raise err(f'"active" names tag {active!r}, which is not among the units.')
        counts = {}
        for key in ("actions_used", "moves_made"):
            counts[key] = obj.get(key, 0)
            if isinstance(counts[key], bool) or not isinstance(counts[key], int) or counts[key] < 0:
                raise err(f'"{key}" must be a whole number of at least 0; got {counts[key]!r}.')
        conceded = obj.get("conceded", [])
        if not isinstance(conceded, list) or any(p not in players for p in conceded):
            raise err(f'"conceded" must list players from {list(players)}; got {conceded!r}.')
        limit = obj.get("appraisal_limit")
        if limit is not None:
            limit = _number(obj, "appraisal_limit", None, "the state", err)
        priority = obj.get("priority")
        if priority is None and rnd > 0:
            priority = players[0]
        to_play = obj.get("to_play", priority if rnd > 0 else None)
        if active is not None and "to_play" not in obj:
            to_play = next(u.owner for u in units if u.tag == active)
        over = obj.get("over", False)
        if not isinstance(over, bool):
            raise err(f'"over" must be true or false; got {over!r}.')
        state = ValyrState(
            players=players, units=units, terrain=terrain, board=board, appraisal_limit=limit, round=rnd,
            priority=priority, to_play=to_play, active=active, actions_used=counts["actions_used"],
            moves_made=counts["moves_made"], conceded=tuple(conceded), over=over, winner=obj.get("winner"),
        )
        if "to_play" not in obj and active is None and rnd > 0:
            state = replace(state, to_play=self._next_player(state, priority, include_self_first=True))
        return state

    # ----------------------------------------------------------------------------------------- apply

    @takes_dice
    def apply(self, state: ValyrState, positions: Positions, action: Action, cup: DiceCup) -> Result:
        """Rule on one action; every die comes from `cup` (the players' faces, or rolled for us)."""
        kind = action.kind
        if state.over:
            who = f"{state.winner} won" if state.winner else "nobody is left standing"
            return Result(state, positions, (Verdict("valyr.end", Outcome.ILLEGAL,
                                                     f"The game is over ({who}); no more actions.", action.unit),))
        if kind == "start_round":
            return self._start_round(state, positions, cup)
        if kind == "concede":
            return self._concede(state, positions, action)
        if kind == "end_turn":
            return self._end_turn(state, positions, action)
        if kind in ("move", "attack", "ability"):
            unit = self._actor(state, action)
            refusals = self._may_act(state, positions, unit)
            if refusals:
                return Result(state, positions, refusals)
            if kind == "move":
                return self._move(state, positions, unit, action.params)
            if kind == "attack":
                return self._attack(state, positions, unit, action.params, cup)
            return self._ability(state, positions, unit, action.params)
        raise ActionError(
            f"Valyr has no action {kind!r}; use move, attack, ability, end_turn, start_round or concede."
        )

    def _actor(self, state: ValyrState, action: Action) -> ValyrUnit:
        if action.unit is None:
            raise ActionError(f'A Valyr "{action.kind}" needs the acting "unit" (its tag id).')
        unit = state.unit(action.unit)
        if unit is None:
            raise ActionError(f"There is no Valyr unit with tag {action.unit}; the units are "
                              f"{', '.join(str(u.tag) for u in state.units)}.")
        return unit

    def _may_act(self, state: ValyrState, positions: Positions, unit: ValyrUnit) -> tuple[Verdict, ...]:
        """Turn clauses: the round is on, it is the owner's turn, the card is vertical, no other unit is mid-turn."""
        rule = "valyr.turn"
        out: list[Verdict] = []
        if state.round == 0:
            out.append(Verdict(f"{rule}.round", Outcome.ILLEGAL,
                               "The game has not begun; start the first round (start_round).", unit.tag))
        elif state.to_play is None:
            out.append(Verdict(f"{rule}.round", Outcome.ILLEGAL,
                               "Every card is exhausted: the round is over; start the next round.", unit.tag))
        if unit.defeated:
            out.append(Verdict(f"{rule}.defeated", Outcome.ILLEGAL,
                               f"{unit.name} has been defeated and is off the table.", unit.tag))
        elif unit.exhausted:
            out.append(Verdict(f"{rule}.exhausted", Outcome.ILLEGAL,
                               f"{unit.name} is exhausted (its card is horizontal) and cannot act until the next "
                               "round.", unit.tag, {"exhausted": True}))
        if state.to_play is not None and unit.owner != state.to_play:
            out.append(Verdict(f"{rule}.order", Outcome.ILLEGAL,
                               f"It is {state.to_play}'s turn; {unit.owner}'s {unit.name} cannot act now.", unit.tag))
        elif state.active is not None and state.active != unit.tag:
            other = state.unit(state.active)
            assert other is not None
            out.append(Verdict(f"{rule}.one_unit", Outcome.ILLEGAL,
                               f"{other.name} is taking its turn ({state.actions_used} of {other.card.combat.energy} "
                               f"actions used); it must finish before {unit.name} acts.", unit.tag))
        if not out and unit.tag not in positions:
            out.append(Verdict(f"{rule}.seen", Outcome.ILLEGAL,
                               f"{unit.name} is not on the table (its tag is not seen).", unit.tag))
        return tuple(out)

    # ---------------------------------------------------------------------------------- rounds and turns

    def _start_round(self, state: ValyrState, positions: Positions, cup: DiceCup) -> Result:
        if state.round > 0 and state.to_play is not None:
            waiting = [u.name for u in state.units if u.vertical and u.owner not in state.conceded]
            return Result(state, positions, (Verdict(
                "valyr.round.start", Outcome.ILLEGAL,
                f"Round {state.round} is not over: {', '.join(waiting)} still stand vertical.",
            ),))
        verdicts: list[Verdict] = []
        priority = state.priority
        if state.round == 0:
            army = self.army_verdicts(state)
            if any(v.outcome is Outcome.ILLEGAL for v in army):
                return Result(state, positions, army)
            verdicts += army
            if priority is None:
                verdicts.append(self._priority(state, cup))
                priority = verdicts[-1].numbers["priority"]
        else:
            priority = token_passes_to(state)
        units = tuple(replace(u, exhausted=u.defeated) for u in state.units)
        new = replace(state, units=units, round=state.round + 1, priority=priority, to_play=None, active=None,
                      actions_used=0, moves_made=0)
        new = replace(new, to_play=self._next_player(new, priority, include_self_first=True))
        verdicts.append(Verdict(
            "valyr.round.start", Outcome.LEGAL,
            f"Round {new.round} begins: every card is turned vertical; {priority} holds the priority token "
            f"and plays first.", None, {"round": new.round, "priority": priority},
        ))
        return Result(new, positions, tuple(verdicts))

    def army_verdicts(self, state: ValyrState) -> tuple[Verdict, ...]:
        """valyr.army.appraisal: each army's total against the agreed limit (info when no limit is set)."""
        out: list[Verdict] = []
        for p in state.players:
            total = army_appraisal([u.card for u in state.army(p)])
            limit = state.appraisal_limit
            if limit is None:
                out.append(Verdict("valyr.army.appraisal", Outcome.INFO,
                                   f"{p}'s army is appraised at {_f(total)} (no limit agreed).", None,
                                   {"player": p, "appraisal": total}))
                continue
            ok = total <= limit + 1e-9
            out.append(Verdict(
                "valyr.army.appraisal", Outcome.LEGAL if ok else Outcome.ILLEGAL,
                f"{p}'s army is appraised at {_f(total)}, {'within' if ok else 'over'} the agreed {_f(limit)}"
                f"{'' if ok else ': remove units to play'}.", None,
                {"player": p, "appraisal": total, "limit": limit},
            ))
        return tuple(out)

    def _priority(self, state: ValyrState, cup: DiceCup) -> Verdict:
        """valyr.round.priority: lowest appraisal starts; two tied players flip a coin (a d6, PRIORITY_TIE), more
        roll off."""
        totals = {p: army_appraisal([u.card for u in state.army(p)]) for p in state.players}
        low = min(totals.values())
        tied = [p for p in state.players if abs(totals[p] - low) < 1e-9]
        numbers: dict[str, Json] = {"appraisals": totals}
        rule = "valyr.round.priority"
        if len(tied) == 1:
            winner = tied[0]
            msg = f"{winner} has the lowest appraisal ({_f(low)}) and takes the priority token."
        elif len(tied) == 2:
            first, second = tied
            face = cup.one(6, rule, f"the coin flip between {first} and {second} for the priority token",
                           f"1-3 gives it to {first}, 4-6 to {second}")
            winner = first if face <= 3 else second
            numbers.update(tied=tied, coin=face)
            msg = (f"{first} and {second} tie at {_f(low)}; a coin flip gives {winner} the priority token "
                   f"(the d6 shows {face}: 1-3 {first}, 4-6 {second}).")
        else:
            winner, rounds = _roll_off(tied, rule, "the priority token", cup)
            numbers.update(tied=tied, roll_off=[dict(r) for r in rounds])
            said = "; ".join(("they roll off: " if i == 0 else f"{listed(list(r))} roll again: ")
                             + ", ".join(f"{p} {f}" for p, f in r.items()) for i, r in enumerate(rounds))
            msg = f"{listed(tied)} tie at {_f(low)}; {said}; {winner} rolls highest and takes the priority token."
        numbers["priority"] = winner
        return Verdict(rule, Outcome.INFO, msg, None, numbers)

    def _next_player(self, state: ValyrState, start: str | None, include_self_first: bool) -> str | None:
        """The next player to the left (seating order) who still has a vertical card; None ends the round."""
        if start is None or start not in state.players:
            return None
        n = len(state.players)
        i = state.players.index(start)
        order = range(0, n) if include_self_first else range(1, n + 1)
        for k in order:
            p = state.players[(i + k) % n]
            if p not in state.conceded and any(u.vertical for u in state.army(p)):
                return p
        return None

    def _finish_turn(self, state: ValyrState, unit: ValyrUnit, why: str) -> tuple[ValyrState, Verdict]:
        """The unit's card turns horizontal; play passes to the left; the round may end."""
        fresh = state.unit(unit.tag) or unit
        new = state.with_unit(replace(fresh, exhausted=True))
        new = replace(new, active=None, actions_used=0, moves_made=0)
        nxt = self._next_player(new, unit.owner, include_self_first=False)
        new = self._check_end(replace(new, to_play=nxt))
        if new.over:
            tail = f"The game ends: {new.winner} wins." if new.winner else "The game ends with nobody standing."
        elif nxt is None:
            tail = f"Every card is exhausted: round {new.round} is over."
        else:
            tail = f"{nxt} plays next."
        return new, Verdict("valyr.turn.exhausted", Outcome.INFO, f"{why} {unit.name} is exhausted. {tail}",
                            unit.tag, {"to_play": nxt})

    def _check_end(self, state: ValyrState) -> ValyrState:
        """valyr.end: the game ends when at most one player is still standing."""
        standing = state.standing()
        if len(standing) <= 1 and len(state.players) > 1:
            return replace(state, over=True, winner=standing[0] if standing else None, to_play=None, active=None)
        return state

    def _spend(self, state: ValyrState, unit: ValyrUnit, moved: bool, ends: bool, why: str = ""
               ) -> tuple[ValyrState, tuple[Verdict, ...]]:
        """One action spent; at the unit's energy (or when `ends`) its turn is over."""
        used = (state.actions_used if state.active == unit.tag else 0) + 1
        new = replace(state, active=unit.tag, actions_used=used,
                      moves_made=(state.moves_made if state.active == unit.tag else 0) + (1 if moved else 0))
        energy = unit.card.combat.energy
        if new.over:
            return new, ()
        if ends:
            done, v = self._finish_turn(new, unit, why)
            return done, (v,)
        if used >= energy:
            done, v = self._finish_turn(new, unit, f"{unit.name} has taken {used} of {energy} actions (energy {energy}).")
            return done, (v,)
        return new, ()

    def _end_turn(self, state: ValyrState, positions: Positions, action: Action) -> Result:
        tag = action.unit if action.unit is not None else state.active
        if tag is None:
            raise ActionError('"end_turn" needs the "unit" whose turn ends (its tag id).')
        unit = self._actor(state, Action("end_turn", tag))
        refusals = tuple(v for v in self._may_act(state, positions, unit) if v.rule != "valyr.turn.seen")
        if refusals:
            return Result(state, positions, refusals)
        used = state.actions_used if state.active == unit.tag else 0
        energy = unit.card.combat.energy
        new, v = self._finish_turn(state, unit, f"{unit.name} ends its turn with {energy - used} of {energy} actions "
                                   "unused.")
        ok = Verdict("valyr.turn.end", Outcome.LEGAL, v.message, unit.tag,
                     {"unused_actions": energy - used, "to_play": v.numbers["to_play"]})
        return Result(new, positions, (ok,))

    def _concede(self, state: ValyrState, positions: Positions, action: Action) -> Result:
        player = action.params.get("player", state.to_play)
        if player not in state.players:
            raise ActionError(f'"concede" needs a "player" among {list(state.players)}; got {player!r}.')
        if player in state.conceded:
            return Result(state, positions, (Verdict("valyr.end", Outcome.ILLEGAL, f"{player} has already conceded."),))
        new = replace(state, conceded=(*state.conceded, player))
        if new.active is not None and (u := new.unit(new.active)) is not None and u.owner == player:
            new = replace(new, active=None, actions_used=0, moves_made=0)
        if new.to_play == player:
            new = replace(new, to_play=self._next_player(new, player, include_self_first=False))
        new = self._check_end(new)
        tail = f" The game ends: {new.winner} wins." if new.over and new.winner else ""
        return Result(new, positions, (Verdict("valyr.end", Outcome.LEGAL, f"{player} concedes.{tail}", None,
                                               {"winner": new.winner, "over": new.over}),))

    # ------------------------------------------------------------------------------------------ move

    def _move_points(self, start: Placement, params: Mapping[str, Any]) -> list[tuple[float, float, float]]:
        def point(v: Any, what: str, z: float) -> tuple[float, float, float]:
            if (not isinstance(v, list | tuple) or len(v) not in (2, 3)
                    or not all(isinstance(c, int | float) and not isinstance(c, bool) and abs(c) <= 10_000 for c in v)):
                raise ActionError(f"A move's {what} must be [x, y] or [x, y, z] in inches; got {v!r}.")
            return (float(v[0]), float(v[1]), float(v[2]) if len(v) == 3 else z)

        points = [(start.x, start.y, start.z)]
        segs = params.get("segments")
        if segs is not None:
            if not isinstance(segs, list) or not segs:
                raise ActionError('A move\'s "segments" must be a list of [x, y, z] points the base passes through.')
            for i, s in enumerate(segs):
                points.append(point(s, f'"segments"[{i}]', points[-1][2]))
        to = params.get("to")
        if to is not None:
            end = point(to, '"to"', points[-1][2])
            if segs is None:
                points.append(end)
            elif math.hypot(end[0] - points[-1][0], end[1] - points[-1][1]) > 0.01:
                raise ActionError(f'A move\'s "to" {to!r} must be the last point of its "segments" '
                                  f"({list(points[-1])}).")
        if len(points) < 2:
            raise ActionError('A move needs "to": [x, y] (and optionally "segments") giving where the base goes.')
        return points

    def check_move(self, state: ValyrState, positions: Positions, unit: ValyrUnit,
                   params: Mapping[str, Any]) -> tuple[tuple[Verdict, ...], _MovePlan]:
        """The move clauses, without changing anything (see rules/valyr/move.py)."""
        start = positions[unit.tag]
        points = self._move_points(start, params)
        ladder = params.get("ladder", False)
        if not isinstance(ladder, bool):
            raise ActionError(f'A move\'s "ladder" must be true or false; got {ladder!r}.')
        length = params.get("length_in")
        if length is not None and (isinstance(length, bool) or not isinstance(length, int | float) or not 0 <= length <= 10_000):
            raise ActionError(f'A move\'s "length_in" must be a number of inches; got {length!r}.')
        pm = params.get("pm_in", _pm_pair(start.pm))
        if isinstance(pm, bool) or not isinstance(pm, int | float) or not 0 <= pm <= 10_000:
            raise ActionError(f'A move\'s "pm_in" must be a number of inches of at least 0; got {pm!r}.')
        climb_factor = 2.0
        for ab in unit.card.hooks():
            hook = HOOKS[ab.hook or ""]
            if hook.climb_factor is not None:
                climb_factor = min(climb_factor, hook.climb_factor(ab.params))
        cost = move_cost(points, pm=float(pm), ladder=ladder, climb_factor=climb_factor,
                         horizontal_in=None if length is None else float(length))
        first = (state.moves_made if state.active == unit.tag else 0) == 0
        c = unit.card.combat
        allowance, word = (c.sprint, "Sprint") if first else (c.stamina, "Stamina")
        outcome = cost.cost.at_most(allowance)
        climb = ""
        if cost.doubled_in > 0:
            climb = f' ({_f(cost.horizontal_in)}" across + {cost.vertical_in:.2f}" climbed, {cost.doubled_in:.2f}" ' \
                    "of it counted double without a ladder)"
        elif cost.vertical_in > 0:
            climb = f' ({cost.horizontal_in:.2f}" across + {cost.vertical_in:.2f}" climbed)'
        numbers: dict[str, Json] = {
            "length_in": round(cost.cost.value, 4), "pm_in": round(cost.cost.pm, 4), "allowance_in": allowance,
            "horizontal_in": round(cost.horizontal_in, 4), "vertical_in": round(cost.vertical_in, 4),
            "doubled_in": round(cost.doubled_in, 4), "parts": len(points) - 1,
        }
        verdicts = [Verdict(
            f"valyr.move.{word.lower()}", outcome,
            f'{unit.name} moved {cost.cost.text()}{climb}, its {word} is {_f(allowance)}": {outcome.value}.',
            unit.tag, numbers,
        )]
        radius = unit.radius
        flat = [(p[0], p[1]) for p in points]
        blocked = crosses_impassable(flat, state.terrain, radius)
        if blocked:
            verdicts.append(Verdict("valyr.move.impassable", Outcome.ILLEGAL,
                                    f"{unit.name}'s move crosses impassable {', '.join(blocked)}.", unit.tag))
        through = through_blocking(points, state.terrain)
        if through:
            verdicts.append(Verdict("valyr.move.vertical", Outcome.ILLEGAL,
                                    f"{unit.name}'s move runs through {', '.join(through)} below its top; a climb "
                                    "must reach the foot of the object and then go up it (give the climb as its "
                                    "own part).", unit.tag))
        ex, ey, ez = points[-1]
        if state.board is not None:
            w, d = state.board
            if ex - radius < -OVERLAP_SLACK_IN or ey - radius < -OVERLAP_SLACK_IN or \
                    ex + radius > w + OVERLAP_SLACK_IN or ey + radius > d + OVERLAP_SLACK_IN:
                verdicts.append(Verdict("valyr.move.table", Outcome.ILLEGAL,
                                        f"{unit.name} would leave the {_f(w)}\" x {_f(d)}\" table.", unit.tag))
        stands, land_z = landing(ex, ey, ez, state.terrain)
        end = start.moved_to(ex, ey, land_z)
        if BASES_MAY_NOT_OVERLAP:
            for other in state.units:
                p = positions.get(other.tag)
                if other.tag == unit.tag or other.defeated or p is None or abs(p.z - end.z) >= LEVEL_IN:
                    continue
                gap = math.hypot(p.x - end.x, p.y - end.y) - radius - other.radius
                if gap < -OVERLAP_SLACK_IN:
                    verdicts.append(Verdict("valyr.move.overlap", Outcome.ILLEGAL,
                                            f"{unit.name} would end on top of {other.name}'s base "
                                            f"(the bases overlap by {-gap:.2f}\").", unit.tag,
                                            {"overlap_in": round(-gap, 4)}))
        if not stands:
            verdicts.append(Verdict("valyr.move.fall", Outcome.INFO,
                                    f'{unit.name} cannot stand flat at {ez:.2f}" up and falls to {_f(land_z)}"; it is '
                                    "exhausted and its turn ends.", unit.tag,
                                    {"fell": True, "from_z_in": ez, "land_z_in": land_z}))
        return tuple(verdicts), _MovePlan(end, not stands, tuple(flat))

    def _move(self, state: ValyrState, positions: Positions, unit: ValyrUnit, params: Mapping[str, Any]) -> Result:
        verdicts, plan = self.check_move(state, positions, unit, params)
        trail = Overlay(Shape.POLYLINE, plan.trail, "move-trail", unit=unit.tag, owner=unit.owner)
        outcome = _worst([v.outcome for v in verdicts])
        if outcome is not Outcome.LEGAL:
            style = "illegal" if outcome is Outcome.ILLEGAL else "too-close"
            return Result(state, positions, verdicts, (replace(trail, style=style),))
        new_positions = {**positions, unit.tag: plan.end}
        new, more = self._spend(state, unit, moved=True, ends=plan.fell, why=f"{unit.name} fell.")
        return Result(new, new_positions, verdicts + more, (trail,))

    # ---------------------------------------------------------------------------------------- attack

    def check_attack(self, state: ValyrState, positions: Positions, unit: ValyrUnit,
                     params: Mapping[str, Any]) -> tuple[tuple[Verdict, ...], dict[str, Any]]:
        """The attack clauses (opponent, range, sight, band), without rolling."""
        tag = params.get("target")
        if isinstance(tag, bool) or not isinstance(tag, int):
            raise ActionError(f'An attack needs "target": the tag id of the unit attacked; got {tag!r}.')
        target = state.unit(tag)
        if target is None:
            raise ActionError(f"There is no Valyr unit with tag {tag} to attack.")
        plan: dict[str, Any] = {"target": target}
        if target.owner == unit.owner:
            return (Verdict("valyr.attack.opponent", Outcome.ILLEGAL,
                            f"{unit.name} must attack an opposing unit; {target.name} is {unit.owner}'s own.",
                            unit.tag),), plan
        if target.defeated or tag not in positions:
            return (Verdict("valyr.attack.opponent", Outcome.ILLEGAL,
                            f"{target.name} is not on the table and cannot be attacked.", unit.tag),), plan
        a, b = positions[unit.tag], positions[tag]
        rng_in = params.get("range_in")
        if rng_in is not None:
            if isinstance(rng_in, bool) or not isinstance(rng_in, int | float) or not 0 <= rng_in <= 10_000:
                raise ActionError(f'An attack\'s "range_in" must be a number of inches; got {rng_in!r}.')
            pm = params.get("pm_in", 0.0)
            if isinstance(pm, bool) or not isinstance(pm, int | float) or not 0 <= pm <= 10_000:
                raise ActionError(f'An attack\'s "pm_in" must be a number of inches of at least 0; got {pm!r}.')
            dist = Measure(float(rng_in), float(pm))
        else:
            dist = edge_distance(a, unit.radius, b, target.radius)
        table = unit.card.combat.range
        lo, hi = dist.at_least(table.min_in), dist.at_most(table.max_in)
        outcome = _worst([lo, hi])
        numbers: dict[str, Json] = {"distance_in": round(dist.value, 4), "pm_in": round(dist.pm, 4),
                                    "min_range_in": table.min_in, "max_range_in": table.max_in}
        if hi is Outcome.ILLEGAL:
            msg = f'{unit.name} is out of range: {dist.value:.2f}" > max range {_f(table.max_in)}".'
        elif lo is Outcome.ILLEGAL:
            msg = f'{target.name} is too close for {unit.name}: {dist.value:.2f}" < min range {_f(table.min_in)}".'
        elif outcome is Outcome.TOO_CLOSE_TO_CALL:
            edge = table.max_in if hi is Outcome.TOO_CLOSE_TO_CALL else table.min_in
            msg = (f'{target.name} is {dist.text()} from {unit.name}, range limit {_f(edge)}": too close to call; '
                   'measure by hand and declare "range_in".')
        else:
            msg = (f'{target.name} is {dist.value:.2f}" from {unit.name}, within its range '
                   f'{_f(table.min_in)}"-{_f(table.max_in)}".')
        verdicts = [Verdict("valyr.attack.range", outcome, msg, unit.tag, numbers)]
        sight = line_of_sight(a, unit.radius, b, target.radius, state.terrain)
        s_num: dict[str, Json] = {"sight": sight.verdict, "fraction_clear": round(sight.fraction_clear, 3),
                                  "blockers": list(sight.blockers)}
        if sight.verdict == "blocked" or (sight.verdict == "partial" and not PARTIAL_SIGHT_COUNTS):
            verdicts.append(Verdict("valyr.attack.sight", Outcome.ILLEGAL,
                                    f"{unit.name} cannot see {target.name}: {', '.join(sight.blockers)} "
                                    "blocks the line of sight.", unit.tag, s_num))
        elif sight.verdict == "partial":
            verdicts.append(Verdict("valyr.attack.sight", Outcome.LEGAL,
                                    f"{unit.name} sees part of {target.name} past {', '.join(sight.blockers)} "
                                    f"({sight.fraction_clear:.0%} of sight lines clear); that is line of sight.",
                                    unit.tag, s_num))
        else:
            verdicts.append(Verdict("valyr.attack.sight", Outcome.LEGAL,
                                    f"{unit.name} has a clear line of sight to {target.name}.", unit.tag, s_num))
        plan["distance"] = dist
        if outcome is not Outcome.ILLEGAL:
            choice = band_choice(table, dist)
            band = choice.band
            assert band is not None
            plan["band"] = band
            if choice.outcome is Outcome.TOO_CLOSE_TO_CALL:
                labels = " and ".join(table.bands[i].label for i in choice.candidates)
                verdicts.append(Verdict("valyr.attack.band", Outcome.TOO_CLOSE_TO_CALL,
                                        f"{dist.text()} lies on the boundary between range bands {labels}: too close "
                                        'to call; measure by hand and declare "range_in".', unit.tag,
                                        {"bands": [table.bands[i].label for i in choice.candidates]}))
            else:
                verdicts.append(Verdict("valyr.attack.band", Outcome.INFO,
                                        f'At {dist.value:.2f}" the {_f(band.start_in)}"-{_f(band.end_in)}" band applies: '
                                        f"strength {band.strength_mod:+d}, skill {band.skill_mod:+d}.", unit.tag,
                                        {"band": choice.index, "strength_mod": band.strength_mod,
                                         "skill_mod": band.skill_mod}))
        return tuple(verdicts), plan

    def _attack(self, state: ValyrState, positions: Positions, unit: ValyrUnit, params: Mapping[str, Any],
                cup: DiceCup) -> Result:
        verdicts, plan = self.check_attack(state, positions, unit, params)
        target: ValyrUnit = plan["target"]
        outcome = _worst([v.outcome for v in verdicts])
        line: tuple[Overlay, ...] = ()
        if target.tag in positions:
            a, b = positions[unit.tag], positions[target.tag]
            style = {Outcome.LEGAL: "attack-line", Outcome.ILLEGAL: "illegal"}.get(outcome, "too-close")
            line = (Overlay(Shape.SEGMENT, (a.xy, b.xy), style, unit=unit.tag, owner=unit.owner),)
        if outcome is not Outcome.LEGAL:
            return Result(state, positions, verdicts, line)
        band = plan["band"]
        c, t = unit.card.combat, target.card.combat
        strength, skill = c.strength + band.strength_mod, c.skill + band.skill_mod
        armor, dodge = t.armor, t.dodge
        for ab in unit.card.hooks():
            hook = HOOKS[ab.hook or ""]
            if hook.attack_mods is not None:
                ds, dk = hook.attack_mods(ab.params)
                strength, skill = strength + ds, skill + dk
        for ab in target.card.hooks():
            hook = HOOKS[ab.hook or ""]
            if hook.defense_mods is not None:
                da, dd = hook.defense_mods(ab.params)
                armor, dodge = armor + da, dodge + dd
        dice = cup.roll(20, max(0, strength), "valyr.attack.roll", f"{unit.name}'s attack on {target.name}",
                        attack_reads(skill, armor, dodge, target.name), unit.tag)
        roll = read_attack(dice, skill, armor, dodge)
        distress = target.distress + roll.hits
        defeated = distress > t.health
        verdicts += (Verdict(
            "valyr.attack.roll", Outcome.INFO,
            f"{unit.name} rolls {roll.strength} d20 {list(roll.rolls)}; with {target.name}'s armor {armor} that is "
            f"{list(roll.totals)}, {roll.on_target} below skill {skill} on target; dodge {dodge} leaves "
            f"{roll.hits} hit{'s' if roll.hits != 1 else ''}.", unit.tag,
            {"strength": roll.strength, "skill": skill, "armor": armor, "dodge": dodge, "rolls": list(roll.rolls),
             "totals": list(roll.totals), "on_target": roll.on_target, "hits": roll.hits},
        ), Verdict(
            "valyr.attack.distress", Outcome.INFO,
            f"{target.name} now has {distress} distress against health {t.health}"
            + (": it is defeated and leaves the table." if defeated else "."), target.tag,
            {"distress": distress, "health": t.health, "defeated": defeated},
        ))
        hit = replace(target, distress=distress, defeated=defeated, exhausted=target.exhausted or defeated)
        new = self._check_end(state.with_unit(hit))
        new_positions = dict(positions)
        if defeated:
            new_positions.pop(target.tag, None)
        if new.over:
            verdicts += (Verdict("valyr.end", Outcome.INFO, f"Every other player is defeated: {new.winner} wins.",
                                 None, {"winner": new.winner}),)
            return Result(new, new_positions, verdicts, line)
        new, more = self._spend(new, unit, moved=False, ends=False)
        return Result(new, new_positions, verdicts + more, line)

    # --------------------------------------------------------------------------------------- ability

    def check_ability(self, state: ValyrState, positions: Positions, unit: ValyrUnit,
                      params: Mapping[str, Any]) -> tuple[tuple[Verdict, ...], dict[str, Any]]:
        """valyr.ability: an Active ability takes an action; its hook (if any) says whether and how it works."""
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise ActionError('An "ability" action needs "name": the ability as the card names it.')
        ab = unit.card.ability(name)
        if ab is None:
            known = ", ".join(a.name for a in unit.card.abilities) or "none"
            raise ActionError(f"{unit.name} has no ability {name!r}; its abilities: {known}.")
        plan: dict[str, Any] = {"ability": ab}
        if not ab.active:
            return (Verdict("valyr.ability", Outcome.ILLEGAL,
                            f"{ab.name} is a Passive ability: it always applies and is not used as an action.",
                            unit.tag),), plan
        hook = HOOKS.get(ab.hook or "")
        if hook is None or hook.use is None:
            return (Verdict("valyr.ability", Outcome.LEGAL,
                            f"{unit.name} uses {ab.name} (one action); Tablesight has no hook for it, so resolve "
                            f"its effect by hand: {ab.text}", unit.tag),), plan
        tag = params.get("target", unit.tag)
        target = state.unit(tag) if isinstance(tag, int) and not isinstance(tag, bool) else None
        if target is None:
            raise ActionError(f'{ab.name} needs "target": the tag id of a unit; got {tag!r}.')
        if target.defeated or target.tag not in positions:
            return (Verdict("valyr.ability", Outcome.ILLEGAL, f"{target.name} is not on the table.", unit.tag),), plan
        dist = (Measure(0.0, 0.0) if target.tag == unit.tag else
                edge_distance(positions[unit.tag], unit.radius, positions[target.tag], target.radius))
        effect = hook.use(ab.params, AbilityUse(unit.name, target.name, target.owner == unit.owner, dist.value,
                                                dist.pm, target.distress))
        outcome = {True: Outcome.LEGAL, False: Outcome.ILLEGAL, None: Outcome.TOO_CLOSE_TO_CALL}[effect.allowed]
        plan.update(target=target, change=effect.distress_change)
        return (Verdict("valyr.ability", outcome, effect.message, unit.tag,
                        {"ability": ab.name, "distance_in": round(dist.value, 4),
                         "distress_change": effect.distress_change}),), plan

    def _ability(self, state: ValyrState, positions: Positions, unit: ValyrUnit, params: Mapping[str, Any]) -> Result:
        verdicts, plan = self.check_ability(state, positions, unit, params)
        if _worst([v.outcome for v in verdicts]) is not Outcome.LEGAL:
            return Result(state, positions, verdicts)
        new = state
        target: ValyrUnit | None = plan.get("target")
        if target is not None and plan.get("change"):
            new = new.with_unit(replace(target, distress=max(0, target.distress + plan["change"])))
        new, more = self._spend(new, unit, moved=False, ends=False)
        return Result(new, positions, verdicts + more)

    # ------------------------------------------------------------------------------------ legal actions

    def describe(self, action: Action, name_of: Callable[[UnitId], str]) -> str:
        """A round's and a turn's actions in the rule book's words, units by name."""
        p, u, kind = action.params, action.unit, action.kind
        target = p.get("target")
        if kind == "attack" and u is not None and isinstance(target, int) and set(p) == {"target"}:
            return f"{name_of(u)} attacks {name_of(target)}"
        if kind == "ability" and u is not None and isinstance(p.get("name"), str) and set(p) <= {"name", "target"}:
            on = "" if not isinstance(target, int) else " on itself" if target == u else f" on {name_of(target)}"
            return f"{name_of(u)} uses {p['name']}{on}"
        if kind == "end_turn" and not p:
            return f"end {name_of(u)}'s turn" if u is not None else "end the turn"
        to, length = p.get("to"), p.get("length_in", 0.0)
        if (kind == "move" and u is not None and set(p) <= {"to", "length_in"} and isinstance(to, list) and len(to) == 2
                and all(isinstance(v, int | float) and not isinstance(v, bool) for v in (*to, length))):
            return f"move {name_of(u)} to ({to[0]:.2f}, {to[1]:.2f})" + (f', {length:.2f}"' if "length_in" in p else "")
        if kind == "start_round" and set(p) <= {"round"}:  # "round": which one, as `as_ruled` says for a button
            n = p.get("round")
            return "start the first round" if n == 1 else f"start round {n}" if isinstance(n, int) else "start a new round"
        if kind == "concede" and set(p) <= {"player"}:
            return "concede the game"
        return super().describe(action, name_of)

    def as_ruled(self, state: ValyrState, action: Action) -> Action:
        """A round started is said by its number ("start the first round", "start round 3")."""
        if action.kind == "start_round" and not action.params and state is not None:
            return Action("start_round", None, {"round": state.round + 1})
        return action

    def legal_actions(self, state: ValyrState, positions: Positions) -> list[Action]:
        """start_round between rounds; otherwise, for the unit(s) that may act: moves in 8 directions at half
        and 90 % of the allowance, every attack and ability that is surely legal, end_turn, and concede."""
        if state.over:
            return []
        if state.to_play is None:
            return [Action("start_round")]
        out: list[Action] = []
        if state.active is not None:
            candidates = [state.unit(state.active)]
        else:
            candidates = [u for u in state.army(state.to_play) if u.vertical]
        for unit in candidates:
            if unit is None or self._may_act(state, positions, unit):
                continue
            out.append(Action("end_turn", unit.tag))
            start = positions[unit.tag]
            first = state.moves_made == 0 or state.active != unit.tag
            allowance = unit.card.combat.sprint if first else unit.card.combat.stamina
            for k in range(8):
                ang = math.radians(45 * k)
                for frac in (0.5, 0.9):
                    r = allowance * frac
                    params = {"to": [round(start.x + r * math.cos(ang), 3), round(start.y + r * math.sin(ang), 3)]}
                    verdicts, _ = self.check_move(state, positions, unit, params)
                    if all(v.outcome in (Outcome.LEGAL, Outcome.INFO) for v in verdicts):
                        out.append(Action("move", unit.tag, params))
            for other in state.units:
                if other.owner != unit.owner and not other.defeated and other.tag in positions:
                    verdicts, _ = self.check_attack(state, positions, unit, {"target": other.tag})
                    if all(v.outcome in (Outcome.LEGAL, Outcome.INFO) for v in verdicts):
                        out.append(Action("attack", unit.tag, {"target": other.tag}))
            for ab in unit.card.abilities:
                if not ab.active:
                    continue
                for other in state.units:
                    if other.owner != unit.owner or other.tag not in positions or other.defeated:
                        continue
                    params2 = {"name": ab.name, "target": other.tag}
                    verdicts, _ = self.check_ability(state, positions, unit, params2)
                    if all(v.outcome in (Outcome.LEGAL, Outcome.INFO) for v in verdicts):
                        out.append(Action("ability", unit.tag, params2))
        out.append(Action("concede", None, {"player": state.to_play}))
        return out

    def tryable_actions(self, state: ValyrState, positions: Positions) -> list[Action]:
        """The legal actions first, then what the acting units may try and the rules may refuse: an attack on every
        opposing unit on the table, each Active ability on every unit, ending a turn (`tryable` and `at_point` below)."""
        return tryable(state, positions, self.legal_actions(state, positions))

    def actions_at(self, state: ValyrState, positions: Positions, unit: UnitId | None,
                   at: tuple[Inches, Inches]) -> list[Action]:
        """For the selected unit: a move to the clicked point with its measured length, or an attack on the unit
        whose base is under it and each Active ability aimed at that unit, legal or not (`tryable` and `at_point` below)."""
        return at_point(state, positions, unit, at)

    # ------------------------------------------------------------------------------------------ overlays

    def overlays(self, state: ValyrState, positions: Positions, selected: UnitId | None = None) -> tuple[Overlay, ...]:
        """Distress labels for every unit; for the selected one: the Sprint and Stamina circles (how far its base
        edge can reach), the min/max range ring and each range band, and a sight line to each enemy."""
        out: list[Overlay] = []
        for u in state.units:
            p = positions.get(u.tag)
            if p is None or u.defeated:
                continue
            status = "exhausted" if u.exhausted else "ready"
            out.append(Overlay(Shape.LABEL, (p.xy,), "score", label=f"{u.name}: {u.distress}/{u.card.combat.health} "
                               f"distress, {status}", unit=u.tag, owner=u.owner))
        unit = state.unit(selected) if selected is not None else None
        if unit is None or unit.defeated or unit.tag not in positions:
            return tuple(out)
        p, r, c = positions[unit.tag], unit.radius, unit.card.combat
        first = state.active != unit.tag or state.moves_made == 0
        for word, reach, now in (("Sprint", c.sprint, first), ("Stamina", c.stamina, not first)):
            out.append(Overlay(Shape.CIRCLE, (p.xy,), "move-allowance", radius=r + reach,
                               label=f'{word} {_f(reach)}"' + (" (next move)" if now else ""), unit=unit.tag,
                               owner=unit.owner))
        table = c.range
        out.append(Overlay(Shape.RING, (p.xy,), "range-band", radius=r + table.max_in, inner=r + table.min_in,
                           label=f'range {_f(table.min_in)}"-{_f(table.max_in)}"', unit=unit.tag, owner=unit.owner))
        for band in table.bands:
            out.append(Overlay(Shape.RING, (p.xy,), "range-band", radius=r + band.end_in, inner=r + band.start_in,
                               label=band.label, unit=unit.tag, owner=unit.owner))
        for other in state.units:
            q = positions.get(other.tag)
            if other.owner == unit.owner or other.defeated or q is None:
                continue
            sight = line_of_sight(p, r, q, other.radius, state.terrain)
            d = edge_distance(p, r, q, other.radius)
            out.append(Overlay(Shape.SEGMENT, (p.xy, q.xy), f"los-{sight.verdict}", label=f'{d.value:.2f}"',
                               unit=unit.tag, owner=unit.owner))
        return tuple(out)

    def is_over(self, state: ValyrState) -> bool:
        return state.over

    def score(self, state: ValyrState) -> dict[str, Json]:
        """Units standing and distress on them per army, who conceded, and the winner (rules/valyr/panel.py)."""
        return valyr_score(state)

    def panel(self, state: ValyrState, positions: Positions) -> Panel:
        """The round, whose turn, what is left to do, each unit's card and each army (rules/valyr/panel.py)."""
        return valyr_panel(state, positions)

    def off_table(self, state: ValyrState) -> frozenset[UnitId]:
        """A defeated unit is removed from the table."""
        return frozenset(u.tag for u in state.units if u.defeated)

    # --------------------------------------------------------------------------------------------- judge

    def read_scenario(self, scenario: Mapping[str, Json]) -> tuple[ValyrState, dict[UnitId, Placement]]:
        """State and positions from a judge scenario (docs/scenarios/valyr.md); raises ScenarioError/RosterError."""
        if not isinstance(scenario, Mapping):
            raise ScenarioError("A Valyr scenario must be a JSON object.")
        cards = _cards(scenario.get("cards"), ScenarioError)
        units, positions = _units(scenario.get("units"), cards, "the scenario", ScenarioError, need_at=True)
        state_in = scenario.get("state", {})
        if not isinstance(state_in, Mapping):
            raise ScenarioError('The scenario\'s "state" must be an object (round, priority, to_play, active...).')
        state = self._state_fields(state_in, units, parse_terrain(scenario.get("terrain")),
                                   _board(scenario.get("board"), ScenarioError), default_round=1)
        return state, positions

    def judge(self, scenario: Mapping[str, Json], rng: random.Random | None) -> dict[str, Json]:
        """The action's answer with its rolls; "pending" when it waits for a roll, "winner" when it ends the game."""
        state, positions = self.read_scenario(scenario)
        question = scenario.get("question")
        if question is not None:
            return self._question(state, positions, question)
        act_in = scenario.get("action")
        if act_in is None:
            raise ScenarioError('A Valyr scenario needs an "action" (move, attack, ability, end_turn, start_round, '
                                'concede) or a "question" (army, range).')
        try:
            action = Action.from_json(act_in)
            result = self.apply(state, positions, action, rng)
        except ActionError as err:
            raise ScenarioError(f'The scenario\'s "action": {err}') from None
        extra: dict[str, Json] = {
            "state": self.dump_state(result.state),
            "positions": {str(t): [p.x, p.y, p.z] for t, p in sorted(result.positions.items())},
            "overlays": [o.to_json() for o in result.overlays],
            "rolls": [r.to_json() for r in result.rolls],
        }
        if result.pending is not None:
            extra["pending"] = result.pending.to_json()
        if result.state.over:
            extra["winner"] = result.state.winner
        return self._answer(action.kind, result.verdicts, extra)

    def _answer(self, kind: str, verdicts: Sequence[Verdict], extra: Mapping[str, Json]) -> dict[str, Json]:
        numbers: dict[str, Json] = {}
        for v in verdicts:
            numbers.update(v.numbers)
        return {
            "game": self.name, "action": kind, "outcome": _worst([v.outcome for v in verdicts]).value,
            "verdicts": [v.to_json() for v in verdicts], "numbers": numbers, **extra,
        }

    def _question(self, state: ValyrState, positions: Positions, question: Any) -> dict[str, Json]:
        if not isinstance(question, Mapping) or not isinstance(question.get("kind"), str):
            raise ScenarioError('A scenario "question" needs a "kind": "army" or "range".')
        kind = question["kind"]
        if kind == "army":
            verdicts = self.army_verdicts(state)
            return self._answer(kind, verdicts, {
                "appraisals": {p: army_appraisal([u.card for u in state.army(p)]) for p in state.players}})
        if kind == "range":
            unit, target = question.get("unit"), question.get("target")
            a = state.unit(unit) if isinstance(unit, int) else None
            if a is None or a.tag not in positions:
                raise ScenarioError(f'A "range" question needs "unit": the tag of a unit on the table; got {unit!r}.')
            try:
                verdicts, _ = self.check_attack(state, positions, a, {"target": target})
            except ActionError as err:
                raise ScenarioError(f'The scenario\'s "question": {err}') from None
            return self._answer(kind, verdicts, {"overlays": [o.to_json() for o in self.overlays(state, positions,
                                                                                                   a.tag)]})
        raise ScenarioError(f'A Valyr "question" kind must be "army" or "range"; got {kind!r}.')

# -------------------------------------------------------------------------------- what may be tried
# What the players may try now in Valyr (`Game.tryable_actions`) and what could be declared at a table point they
# click (`actions_at`), refused ones included: the page offers them, and the ruling says why one is refused.
#
# Nothing here is ruled: `Valyr.apply` rules each action. The lists are complete, never sampled, and bounded by the
# armies: for each undefeated unit on the table of the player whose turn it is (only the unit taking its turn, once
# one is), ending its turn, an attack on every opposing unit on the table (out of range, out of sight, too close,
# or an exhausted unit's: the ruling says which), and each Active ability on every unit on the table (an ability
# Tablesight has no hook for, once, with no target). Moves are the camera's, or `at_point`'s: a move to the clicked
# point with its measured length from the unit's base centre, an attack on the unit whose base is under the point,
# and each Active ability aimed at it.


UNDER_POINT_IN = 0.1
"""A click this far outside a base's edge (inches) still points at that unit."""


def _actors(state: ValyrState, positions: Positions) -> list[ValyrUnit]:
    """The units that may be asked to act: the unit taking its turn, else every undefeated unit on the table of
    the player whose turn it is (exhausted ones too: the ruling says they cannot)."""
    if state.over or state.to_play is None:
        return []
    if state.active is not None:
        u = state.unit(state.active)
        return [u] if u is not None and not u.defeated and u.tag in positions else []
    return [u for u in state.army(state.to_play) if not u.defeated and u.tag in positions]


def _abilities_on(unit: ValyrUnit, targets: list[ValyrUnit]) -> list[Action]:
    """Each Active ability of `unit` on each target (one without a hook once, with no target)."""
    out: list[Action] = []
    for ab in unit.card.abilities:
        if not ab.active:
            continue
        hook = HOOKS.get(ab.hook or "")
        if hook is None or hook.use is None:
            out.append(Action("ability", unit.tag, {"name": ab.name}))
        else:
            out += [Action("ability", unit.tag, {"name": ab.name, "target": t.tag}) for t in targets]
    return out


def tryable(state: ValyrState, positions: Positions, legal: list[Action]) -> list[Action]:
    """The legal actions first, then every action the acting units may try (see the module docstring), each once."""
    on_table = [u for u in state.units if not u.defeated and u.tag in positions]
    more: list[Action] = []
    for u in _actors(state, positions):
        more.append(Action("end_turn", u.tag))
        more += [Action("attack", u.tag, {"target": t.tag}) for t in on_table if t.owner != u.owner]
        more += _abilities_on(u, on_table)
    return once(legal + more)


def unit_under(state: ValyrState, positions: Positions, x: float, y: float) -> ValyrUnit | None:
    """The undefeated unit whose base is under the table point (x, y), the nearest centre if bases touch."""
    best: tuple[float, ValyrUnit] | None = None
    for u in state.units:
        p = positions.get(u.tag)
        if u.defeated or p is None:
            continue
        d = math.hypot(p.x - x, p.y - y)
        if d <= u.radius + UNDER_POINT_IN and (best is None or d < best[0]):
            best = (d, u)
    return None if best is None else best[1]


def at_point(state: ValyrState, positions: Positions, unit: UnitId | None, at: tuple[float, float]) -> list[Action]:
    """For the selected `unit`: a move to the point with its measured length, or, when a base is under the point,
    an attack on that unit (an opposing one) and each Active ability aimed at it. Valyr has no action of no unit
    at a point (None: nothing)."""
    x, y = float(at[0]), float(at[1])
    if unit is None or state.over or not (math.isfinite(x) and math.isfinite(y)):
        return []
    u = state.unit(unit)
    start = positions.get(unit)
    if u is None or u.defeated or start is None:
        return []
    there = unit_under(state, positions, x, y)
    if there is None:
        length = math.hypot(x - start.x, y - start.y)
        return [Action("move", unit, {"to": [round(x, 3), round(y, 3)], "length_in": round(length, 3)})]
    out: list[Action] = []
    if there.owner != u.owner:
        out.append(Action("attack", unit, {"target": there.tag}))
    out += [a for a in _abilities_on(u, [there]) if "target" in a.params]
    return out


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
