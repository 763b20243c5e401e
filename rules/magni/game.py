"""Rise of the Magni (seed 001): two players place 10 hero tiles each on a 19-cell hex board.

The play, in our words (scoring and team rules: rules/magni/scoring.py):

1. Fighting for the centre: each player picks a Lead unit. The higher Centre Attack Value (CAV) takes the
   centre cell and its player becomes Player 1; the other Lead goes directly above (the centre's N neighbour).
   Equal CAVs: the seed is silent. Option `lead_tie`: "roll" (default; each player rolls a d6, re-rolling
   ties, and the higher roll takes the centre) or "reselect" (nothing is placed; both pick again).
   The tie's dice are the players' (rules/dice.py): the lead action's "rolls", the first player of the roster
   first, then the other, round after round until they differ; Tablesight rolls them only when asked to ("roll
   for us"), else the answer waits for the die it needs. A cocked die is the players' to roll again.
2. Players then take turns placing one tile each on an empty cell, Player 1 first (our reading of "plays
   first"; after the leads Player 1 places 9 more and Player 2 places 8, one of its heroes stays in hand).
3. When 19 tiles are down the map is full and the higher score wins (equal scores: a draw).

Tiles are seen by the camera at table positions and snapped to cells with the board's `Layout`. A tile whose
centre lies nearer a cell border than `snap_fraction` (default 0.5) of the cell's inradius is astride two
cells and is not counted; two tiles on one cell are reported and neither is counted. A tile off the board is
in its player's hand. The live score is a function of the tiles on the board, so it updates as tiles go down.

Hero ratings and attack values come from the players' roster; the seed gives none. The example teams below
(and examples/rosters/magni.json) are made up by Tablesight for demonstration: they are not the author's.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rules.dice import ROLLS_KEY, DiceCup, rolls_numbers
from rules.engine import (
    Action,
    ActionError,
    Game,
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
    StandardBoard,
    UnitField,
    UnitId,
    Verdict,
    listed,
    register,
    takes_dice,
)
from rules.hexgrid import (
    BoardError,
    Cell,
    Hex,
    HexBoard,
    Layout,
    hex_words,
    parse_board,
    parse_hex,
    parse_layout,
    straddle_words,
)
from rules.magni import standard
from rules.magni.panel import panel
from rules.magni.scoring import (
    ABOVE,
    BOARD_CELLS,
    CENTRE,
    EDGE_NAMES,
    Hero,
    Score,
    check_team,
    parse_hero,
    score,
)

DEFAULT_LAYOUT = Layout(size_in=1.5, orientation="flat", origin=(12.0, 12.0))
"""Where the 19-cell board lies unless told: 1.5" cells (3" corner to corner), flat, centred at (12", 12")."""
LEAD_TIES = ("roll", "reselect")
MAGNI_BOARD = HexBoard({h: Cell() for h in BOARD_CELLS})
"""The 19-cell board: every cell plain land."""

EXAMPLE_TEAMS: tuple[dict[str, Any], ...] = tuple(
    {"tag": tag, "name": name, "owner": owner, "rating": rating, "lav": lav, "cav": cav, "rav": rav}
    for tag, name, owner, rating, lav, cav, rav in (
        # Made up by Tablesight for the example: NOT the author's heroes or values.
        (10, "Ember Warden", "red", 4, 3, 6, 2),
        (11, "Ash Scout", "red", 1, 2, 1, 3),
        (12, "Cinder Guard", "red", 3, 4, 4, 1),
        (13, "Flare Archer", "red", 2, 1, 2, 5),
        (14, "Soot Runner", "red", 2, 3, 2, 2),
        (15, "Kiln Smith", "red", 3, 2, 5, 2),
        (16, "Spark", "red", 1, 1, 2, 1),
        (17, "Pyre Monk", "red", 2, 4, 1, 3),
        (18, "Coal Shield", "red", 3, 2, 3, 4),
        (19, "Torch Bearer", "red", 2, 3, 3, 1),
        (20, "Tide Caller", "blue", 4, 2, 5, 4),
        (21, "Reef Diver", "blue", 1, 1, 3, 1),
        (22, "Gull Rider", "blue", 2, 4, 2, 2),
        (23, "Kelp Witch", "blue", 3, 3, 3, 3),
        (24, "Brine Knight", "blue", 3, 5, 2, 1),
        (25, "Shell Guard", "blue", 2, 2, 4, 2),
        (26, "Spray", "blue", 1, 2, 1, 2),
        (27, "Current", "blue", 2, 1, 2, 4),
        (28, "Harbour Watch", "blue", 2, 3, 1, 3),
        (29, "Storm Herald", "blue", 3, 2, 3, 5),
    )
)


@dataclass(frozen=True)
class MagniState:
    """The game so far: both teams, where the board lies, the tiles placed (in order) and Player 1.

    placed: (tag, cell) in the order put down; the first two are the Lead units (centre, then above).
    first: the player who won the centre (Player 1), None before the lead fight.
    """

    heroes: tuple[Hero, ...]
    owners: tuple[str, str]
    layout: Layout = DEFAULT_LAYOUT
    placed: tuple[tuple[UnitId, Hex], ...] = ()
    first: str | None = None
    lead_tie: str = "roll"
    snap_fraction: float = 0.5

    def hero(self, tag: UnitId) -> Hero | None:
        return next((h for h in self.heroes if h.tag == tag), None)

    def other(self, owner: str) -> str:
        return self.owners[1] if owner == self.owners[0] else self.owners[0]

    @property
    def phase(self) -> str:
        """"lead" before the centre fight, "place" while cells are empty, "over" when the map is full."""
        if not self.placed:
            return "lead"
        return "over" if len(self.placed) >= len(BOARD_CELLS) else "place"

    def turn(self) -> str | None:
        """Whose turn it is to place a tile (Player 1 first after the leads), None outside the place phase."""
        if self.phase != "place" or self.first is None:
            return None
        return self.first if (len(self.placed) - 2) % 2 == 0 else self.other(self.first)

    def tiles(self) -> dict[Hex, Hero]:
        out: dict[Hex, Hero] = {}
        for tag, cell in self.placed:
            hero = self.hero(tag)
            if hero is not None:
                out[cell] = hero
        return out

    def in_hand(self, owner: str) -> list[Hero]:
        down = {t for t, _ in self.placed}
        return [h for h in self.heroes if h.owner == owner and h.tag not in down]

    def placements_left(self, owner: str) -> int:
        """Tiles `owner` has still to place: the empty cells, filled in turn from the player to place now (none
        once the map is full; before the lead fight, every cell is still to be fought for)."""
        if self.phase == "lead":
            return len(BOARD_CELLS)
        turn = self.turn()
        if turn is None:
            return 0
        empty = len(BOARD_CELLS) - len(self.placed)
        return (empty + 1) // 2 if owner == turn else empty // 2


def _verdict(rule: str, outcome: Outcome, message: str, unit: UnitId | None = None, **numbers: Json) -> Verdict:
    return Verdict(f"magni.{rule}", outcome, message, unit, numbers)


def tiles_on_board(state: MagniState, positions: Positions) -> tuple[dict[Hex, Hero], list[Verdict]]:
    """The tiles the camera sees on the board, snapped to cells; a tile astride two cells or sharing a cell
    with another is reported (illegal) and not counted. Tiles off the board are in hand."""
    margin = state.snap_fraction * state.layout.inradius_in
    seen: dict[Hex, list[Hero]] = {}
    verdicts: list[Verdict] = []
    for tag, p in sorted(positions.items()):
        hero = state.hero(tag)
        if hero is None:
            continue
        cell, off = state.layout.from_table(p.x, p.y)
        if cell not in BOARD_CELLS:
            continue
        if state.layout.astride(p.x, p.y, margin):
            verdicts.append(
                _verdict(
                    "tile.astride",
                    Outcome.ILLEGAL,
                    f"{hero.name} (tag {tag}) lies astride two cells, "
                    f"{straddle_words(BOARD_CELLS, state.layout, p.x, p.y, margin).removeprefix('astride ')} "
                    f"({off:.2f}\" from the centre of [{cell.q}, {cell.r}]); push it into one cell.",
                    tag,
                    offset_in=round(off, 3),
                )
            )
            continue
        seen.setdefault(cell, []).append(hero)
    tiles: dict[Hex, Hero] = {}
    for cell, found in sorted(seen.items()):
        if len(found) > 1:
            names = " and ".join(f"{h.name} (tag {h.tag})" for h in found)
            verdicts.append(
                _verdict(
                    "tile.stacked",
                    Outcome.ILLEGAL,
                    f"{names} are both on cell [{cell.q}, {cell.r}]; a cell holds one tile.",
                    found[0].tag,
                    tags=[h.tag for h in found],
                )
            )
        else:
            tiles[cell] = found[0]
    return tiles, verdicts


def score_json(sc: Score, heroes: Mapping[UnitId, Hero]) -> dict[str, Json]:
    return {
        "score": dict(sc.points),
        "winner": sc.winner(),
        "placed": sc.placed,
        "skirmishes": [s.to_json(heroes) for s in sc.skirmishes],
        "fortifications": [f.to_json() for f in sc.fortifications],
    }


def _placement(layout: Layout, tag: UnitId, cell: Hex) -> Placement:
    x, y = layout.to_table(cell)
    return Placement(tag, x, y)


@register
class Magni(Game):
    """Rise of the Magni on the 19-cell board; see the module docstring for the rules and options."""

    name = "magni"
    title = "Rise of the Magni"
    board = "hex"
    kind_titles = {"lead": "Lead Units: the fight for the center", "place": "Place a unit"}

    # ------------------------------------------------------------------ setup and state

    # a new game's setup: rules/magni/standard.py
    def option_fields(self) -> tuple[OptionField, ...]:
        return standard.OPTION_FIELDS

    def unit_fields(self) -> tuple[UnitField, ...]:
        return standard.UNIT_FIELDS

    def example_roster(self) -> dict[str, Json]:
        return copy.deepcopy(standard.EXAMPLE_ROSTER)

    def usual_mount(self) -> str:
        """A hero is a tile: no figure stands on it, so its tag lies flat on it."""
        return "flat"

    def standard_boards(self) -> tuple[StandardBoard, ...]:
        return tuple(StandardBoard(n, t, copy.deepcopy(b)) for n, t, b in standard.BOARDS)

    def new_state(self, setup: Mapping[str, Json]) -> MagniState:
        """From {"units": [hero...], "board": {"layout": {...}}, "options": {"lead_tie": "roll"}}; raises on a
        team that may not play (not 10 heroes, rated over 23, a name twice) or a malformed hero."""
        if not isinstance(setup, Mapping):
            raise RosterError('The Magni setup must be an object with "units".')
        units = setup.get("units")
        if not isinstance(units, list) or not units:
            raise RosterError('The Magni setup has no "units" list; list both teams\' heroes.')
        heroes = _parse_heroes(units, "the Magni roster")
        owners = _owners(heroes, "the Magni roster")
        for owner in owners:
            check = check_team(owner, list(heroes))
            if not check.ok:
                raise RosterError(check.problems[0])
        layout = _layout(setup.get("board"), "the Magni board")
        tie, frac = _options(setup.get("options", {}), "the Magni setup")
        return MagniState(heroes=heroes, owners=owners, layout=layout, lead_tie=tie, snap_fraction=frac)

    def dump_state(self, state: MagniState) -> dict[str, Json]:
        return {
            "heroes": [h.to_json() for h in state.heroes],
            "owners": list(state.owners),
            "layout": state.layout.to_json(),
            "placed": [[tag, cell.to_json()] for tag, cell in state.placed],
            "first": state.first,
            "options": {"lead_tie": state.lead_tie, "snap_fraction": state.snap_fraction},
        }

    def load_state(self, obj: Mapping[str, Json]) -> MagniState:
        if not isinstance(obj, Mapping):
            raise ScenarioError("A Magni state must be an object.")
        heroes = _parse_heroes(obj.get("heroes"), "the Magni state")
        owners_in = obj.get("owners")
        if not isinstance(owners_in, list) or len(owners_in) != 2 or not all(isinstance(o, str) for o in owners_in):
            raise ScenarioError('The Magni state needs "owners": the two players\' names.')
        placed_in = obj.get("placed", [])
        if not isinstance(placed_in, list):
            raise ScenarioError('The Magni state\'s "placed" must be a list of [tag, [q, r]].')
        placed: list[tuple[UnitId, Hex]] = []
        for i, item in enumerate(placed_in):
            if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], int):
                raise ScenarioError(f"The Magni state's placed entry {i + 1} must be [tag, [q, r]]; got {item!r}.")
            placed.append((item[0], _hex(item[1], f"the Magni state's placed entry {i + 1}")))
        first = obj.get("first")
        if first is not None and first not in owners_in:
            raise ScenarioError(f'The Magni state\'s "first" is {first!r}; it must be one of the owners.')
        tie, frac = _options(obj.get("options", {}), "the Magni state")
        return MagniState(
            heroes=heroes,
            owners=(owners_in[0], owners_in[1]),
            layout=_layout({"layout": obj.get("layout")} if obj.get("layout") else None, "the Magni state"),
            placed=tuple(placed),
            first=first,
            lead_tie=tie,
            snap_fraction=frac,
        )

    def is_over(self, state: MagniState) -> bool:
        return state.phase == "over"

    def off_table(self, state: MagniState) -> frozenset[UnitId]:
        """A hero whose player has no tile left to place stays in hand (20 heroes, 19 cells: one always does once
        the map is full), so the camera not seeing it is no news."""
        return frozenset(h.tag for o in state.owners if state.placements_left(o) == 0 for h in state.in_hand(o))

    def score(self, state: MagniState) -> dict[str, Json]:
        """Points per player from the tiles on the board now (skirmish and fortification)."""
        return dict(score(state.tiles(), state.owners).points)

    def panel(self, state: MagniState, positions: Positions) -> Panel:
        """The phase, whose turn to place, every hero tile, the score per player and the winner
        (rules/magni/panel.py)."""
        return panel(state)

    def stands_at(self, state: MagniState, unit: UnitId, x: float, y: float) -> bool:
        """True when the tile `unit` is already placed on the cell (x, y) snaps to."""
        cell, _ = state.layout.from_table(x, y)
        return dict(state.placed).get(unit) == cell

    def example(self, rng: random.Random) -> tuple[MagniState, Positions]:
        return self.new_state({"units": [dict(h) for h in EXAMPLE_TEAMS]}), {}

    # ------------------------------------------------------------------ play

    def describe(self, action: Action, name_of: Callable[[UnitId], str]) -> str:
        """The Lead Units' fight for the center and each placement, in the seed's words, units by name."""
        p, u = action.params, action.unit
        heroes = {k: t for k, t in p.items() if k != ROLLS_KEY}  # the dice of a tie are said apart
        if action.kind == "lead" and heroes and all(isinstance(t, int) and not isinstance(t, bool)
                                                    for t in heroes.values()):
            leads = [f"{name_of(t)} ({player})" for player, t in heroes.items()]
            return f"Lead Units {listed(leads)} fight for the center"
        where = "the center" if p.get("hex") == CENTRE.to_json() else hex_words(p.get("hex"))
        if action.kind == "place" and u is not None and set(p) == {"hex"} and where:
            return f"place {name_of(u)} on {where}"
        return super().describe(action, name_of)

    def legal_actions(self, state: MagniState, positions: Positions) -> list[Action]:
        if state.phase == "lead":
            a, b = state.owners
            return [
                Action("lead", None, {a: x.tag, b: y.tag}) for x in state.in_hand(a) for y in state.in_hand(b)
            ]
        owner = state.turn()
        if owner is None:
            return []
        taken = {cell for _, cell in state.placed}
        empty = [c for c in BOARD_CELLS if c not in taken]
        return [Action("place", h.tag, {"hex": c.to_json()}) for h in state.in_hand(owner) for c in empty]

    def tryable_actions(self, state: MagniState, positions: Positions) -> list[Action]:
        """The legal actions first, then the placements the rules refuse that a player may well try: out of turn,
        on a cell that holds a tile, a hero already down, before the fight for the centre (`tryable` and `at_point` below)."""
        return tryable(state, self.legal_actions(state, positions))

    def actions_at(self, state: MagniState, positions: Positions, unit: UnitId | None,
                   at: tuple[float, float]) -> list[Action]:
        """The placements on the clicked cell, legal or not: the selected hero, or with none each hero in hand, the
        player to place first (`tryable` and `at_point` below)."""
        return at_point(state, unit, at)

    @takes_dice
    def apply(self, state: MagniState, positions: Positions, action: Action, rng: DiceCup) -> Result:
        """Rule on a lead or a place; the Lead tie's dice come from `rng`, the action's DiceCup ("rolls")."""
        if action.kind == "lead":
            res = self._lead(state, positions, action, rng)
        elif action.kind == "place":
            res = self._place(state, positions, action)
        else:
            raise ActionError(f'Rise of the Magni has no action {action.kind!r}; use "lead" or "place".')
        if not res.legal:
            del rng.given[len(rng.given) - rng.left:]  # not done, so no die was rolled for it: nothing left over
        return res

    def _lead(self, state: MagniState, positions: Positions, action: Action, cup: DiceCup) -> Result:
        if state.phase != "lead":
            v = _verdict("lead.phase", Outcome.ILLEGAL, "The centre has already been fought for; place a tile instead.")
            return Result(state, positions, (v,))
        picks: dict[str, Hero] = {}
        bad: list[Verdict] = []
        for owner in state.owners:
            tag = action.params.get(owner)
            if isinstance(tag, bool) or not isinstance(tag, int):
                raise ActionError(f'The lead action needs "{owner}": the tag of {owner}\'s Lead unit.')
            hero = state.hero(tag)
            if hero is None or hero.owner != owner:
                bad.append(
                    _verdict("lead.hero", Outcome.ILLEGAL, f"Tag {tag} is not one of {owner}'s heroes.", tag)
                )
            else:
                picks[owner] = hero
        if bad:
            return Result(state, positions, tuple(bad))
        a, b = (picks[o] for o in state.owners)
        numbers: dict[str, Json] = {"cav": {a.owner: a.cav, b.owner: b.cav}}
        if a.cav == b.cav and state.lead_tie == "reselect":
            v = _verdict(
                "lead.tie",
                Outcome.INFO,
                f"{a.name} and {b.name} both have CAV {a.cav}: a tie; both players pick their Lead again.",
                **numbers,
            )
            return Result(state, positions, (v,))
        winner, loser = (a, b) if a.cav > b.cav else (b, a)
        how = f"CAV {winner.cav} beats {loser.cav}"
        if a.cav == b.cav:
            rolls: list[dict[str, int]] = []
            while True:
                again = f", again after a tie at {rolls[-1][a.owner]}" if rolls else ""
                what = f"the fight for the centre, {a.name} against {b.name} at CAV {a.cav}{again}"
                ra = cup.one(6, "magni.lead.tie", what, "the higher roll takes the centre", a.tag, side=a.owner)
                rb = cup.one(6, "magni.lead.tie", what, "the higher roll takes the centre", b.tag, side=b.owner)
                rolls.append({a.owner: ra, b.owner: rb})
                if ra != rb:
                    break
            winner, loser = (a, b) if ra > rb else (b, a)
            numbers["tie_rolls"] = rolls
            how = f"CAVs tie at {a.cav}; {winner.owner} wins the roll {max(ra, rb)} to {min(ra, rb)}"
        new = MagniState(
            heroes=state.heroes,
            owners=state.owners,
            layout=state.layout,
            placed=((winner.tag, CENTRE), (loser.tag, ABOVE)),
            first=winner.owner,
            lead_tie=state.lead_tie,
            snap_fraction=state.snap_fraction,
        )
        moved = dict(positions)
        moved[winner.tag] = _placement(state.layout, winner.tag, CENTRE)
        moved[loser.tag] = _placement(state.layout, loser.tag, ABOVE)
        v = _verdict(
            "lead.centre",
            Outcome.LEGAL,
            f"{winner.name} takes the centre ({how}); {winner.owner} is Player 1. {loser.name} goes directly above. "
            "The Lead units' skirmish scores no point.",
            winner.tag,
            centre=winner.tag,
            above=loser.tag,
            first=winner.owner,
            **numbers,
        )
        return Result(new, moved, (v,), self.overlays(new, moved))

    def _place(self, state: MagniState, positions: Positions, action: Action) -> Result:
        tag = action.unit
        if tag is None:
            raise ActionError('A place action needs "unit": the tag of the tile put down.')
        cell, where, off_verdicts = _target(state, action)
        problems = list(off_verdicts)
        hero = state.hero(tag)
        owner = state.turn()
        if state.phase != "place":
            problems.append(
                _verdict(
                    "place.phase",
                    Outcome.ILLEGAL,
                    ("The centre is fought for first: each player picks a Lead unit (a lead action) before any tile "
                     "is placed.") if state.phase == "lead" else "The map is full: the game is over.",
                    tag,
                )
            )
        elif hero is None:
            problems.append(_verdict("place.hero", Outcome.ILLEGAL,
                                     f"Tag {tag} is not one of the heroes on the roster; place a hero's tile.", tag))
        else:
            if hero.owner != owner:
                problems.append(
                    _verdict("place.turn", Outcome.ILLEGAL,
                             f"It is {owner}'s turn to place a tile; {hero.name} is {hero.owner}'s.",
                             tag, turn=owner)
                )
            if any(t == tag for t, _ in state.placed):
                problems.append(_verdict("place.hero", Outcome.ILLEGAL,
                                         f"{hero.name} is already on the board; place a hero still in hand.", tag))
        if cell is not None and not problems:
            if cell not in BOARD_CELLS:
                problems.append(
                    _verdict("place.cell", Outcome.ILLEGAL, f"Cell [{cell.q}, {cell.r}] is not on the 19-cell board.", tag)
                )
            elif any(c == cell for _, c in state.placed):
                problems.append(
                    _verdict("place.cell", Outcome.ILLEGAL,
                             f"Cell [{cell.q}, {cell.r}] already holds a tile ({state.tiles()[cell].name}); "
                             "a cell holds one tile.", tag)
                )
        if problems or cell is None or hero is None:
            return Result(state, positions, tuple(problems), self.overlays(state, positions))
        before = score(state.tiles(), state.owners)
        new = MagniState(
            heroes=state.heroes,
            owners=state.owners,
            layout=state.layout,
            placed=(*state.placed, (tag, cell)),
            first=state.first,
            lead_tie=state.lead_tie,
            snap_fraction=state.snap_fraction,
        )
        after = score(new.tiles(), new.owners)
        gained = {o: after.points.get(o, 0) - before.points.get(o, 0) for o in state.owners}
        moved = dict(positions)
        moved[tag] = where if where is not None else _placement(state.layout, tag, cell)
        verdicts = [
            _verdict(
                "place.tile",
                Outcome.LEGAL,
                f"{hero.name} goes on [{cell.q}, {cell.r}]: "
                + ", ".join(f"{o} +{g}" for o, g in gained.items())
                + f" (score {', '.join(f'{o} {p}' for o, p in after.points.items())})"
                + _what_scored(tag, before, after, {h.tag: h.name for h in state.heroes}) + ".",
                tag,
                points=gained,
                score=dict(after.points),
                placed=len(new.placed),
            )
        ]
        if new.phase == "over":
            win = after.winner()
            verdicts.append(
                _verdict(
                    "end",
                    Outcome.INFO,
                    "The map is full: " + ("a draw." if win == "draw" else f"{win} wins."),
                    winner=win,
                    score=dict(after.points),
                )
            )
        return Result(new, moved, tuple(verdicts), self.overlays(new, moved))

    # ------------------------------------------------------------------ overlays

    def hex_board(self, state: MagniState) -> tuple[HexBoard, Layout]:
        return MAGNI_BOARD, state.layout

    def overlays(self, state: MagniState, positions: Positions, selected: UnitId | None = None) -> tuple[Overlay, ...]:
        """Tiles by owner, skirmish edges (winner's colour), fortification corners, the score (the cells themselves
        are drawn from `hex_board`)."""
        lay = state.layout
        tiles, problems = tiles_on_board(state, positions) if positions else (state.tiles(), [])
        out: list[Overlay] = []
        for cell, tile in sorted(tiles.items()):
            out.append(Overlay(Shape.POLYGON, lay.polygon(cell), "hex-highlight", owner=tile.owner, unit=tile.tag,
                               label=tile.name))
        heroes = {h.tag: h for h in state.heroes}
        sc = score(tiles, state.owners)
        for s in sc.skirmishes:
            if s.winner is None or s.lead:
                continue
            a, b = lay.edge_segment(s.edge)
            out.append(Overlay(Shape.SEGMENT, (a, b), "score", owner=heroes[s.winner].owner, unit=s.winner))
        for f in sc.fortifications:
            out.append(Overlay(Shape.CIRCLE, (lay.corner_point(f.corner),), "score", radius=0.15, owner=f.owner))
        for v in problems:
            if v.unit is not None and v.unit in positions:
                p = positions[v.unit]
                out.append(Overlay(Shape.CIRCLE, (p.xy,), "illegal", radius=lay.size_in * 0.8, unit=v.unit, label=v.message))
        if selected is not None and state.phase == "place":
            hero = heroes.get(selected)
            if hero is not None and hero.owner == state.turn():
                for cell in BOARD_CELLS:
                    if cell not in tiles:
                        out.append(Overlay(Shape.POLYGON, lay.polygon(cell), "hex-reachable", unit=selected))
        top = lay.to_table(ABOVE + ABOVE + ABOVE)
        text = "  ".join(f"{o} {p}" for o, p in sc.points.items())
        win = sc.winner()
        if win:
            text += "  (draw)" if win == "draw" else f"  ({win} wins)"
        out.append(Overlay(Shape.LABEL, (top,), "score", label=text))
        return tuple(out)

    # ------------------------------------------------------------------ judge

    def judge(self, scenario: Mapping[str, Json], rng: random.Random | None) -> dict[str, Json]:
        """Answer one scenario (docs/scenarios/magni.md): questions "score" and "team", actions "lead", "place".
        A tied lead takes its dice from the action's "rolls"; `rng` rolls the rest, and without it the answer waits
        for them ("pending")."""
        units_in = scenario.get("units")
        if not isinstance(units_in, list) or not units_in:
            raise ScenarioError('The Magni scenario has no "units" list; list the heroes (tag, owner, name, '
                                'rating, lav, cav, rav, and "hex" or "at" for tiles on the board).')
        try:
            heroes = _parse_heroes(units_in, "the scenario's units")
        except RosterError as err:
            raise ScenarioError(str(err)) from err
        state_in = scenario.get("state", {})
        if not isinstance(state_in, Mapping):
            raise ScenarioError('The scenario\'s "state" must be an object.')
        owners_in = state_in.get("owners")
        owners = (
            (owners_in[0], owners_in[1])
            if isinstance(owners_in, list) and len(owners_in) == 2
            else _owners(heroes, "the scenario's units", scenario=True)
        )
        layout = _layout(scenario.get("board"), "the scenario's board")
        tie, frac = _options(scenario.get("options", state_in.get("options", {})), "the scenario")
        base = MagniState(heroes=heroes, owners=owners, layout=layout, lead_tie=tie, snap_fraction=frac)
        positions = _positions(units_in, layout)
        question, action = scenario.get("question"), scenario.get("action")
        asked = question if isinstance(question, Mapping) else action
        if not isinstance(asked, Mapping) or not isinstance(asked.get("kind"), str):
            raise ScenarioError('The Magni scenario needs "question": {"kind": "score"|"team"} or "action": '
                                '{"kind": "lead"|"place", ...}.')
        kind = asked["kind"]
        heroes_by_tag = {h.tag: h for h in heroes}
        if kind == "score":
            tiles, verdicts = tiles_on_board(base, positions)
            sc = score(tiles, owners)
            verdicts.append(
                _verdict(
                    "score",
                    Outcome.INFO,
                    "Score: " + ", ".join(f"{o} {p}" for o, p in sc.points.items()) + f" with {sc.placed} tiles down.",
                    **{o: p for o, p in sc.points.items()},
                )
            )
            answer = _answer(kind, verdicts, question=True)
            answer["numbers"] = {
                **sc.points,
                "placed": sc.placed,
                "skirmish_points": sum(1 for s in sc.skirmishes if s.winner is not None and not s.lead),
                "fortifications": len(sc.fortifications),
            }
            answer.update(score_json(sc, heroes_by_tag))
            answer["cells"] = {f"{c.q},{c.r}": h.tag for c, h in sorted(tiles.items())}
            return answer
        if kind == "team":
            checks = [check_team(o, list(heroes)) for o in owners]
            verdicts = [
                _verdict(
                    "team",
                    Outcome.LEGAL if c.ok else Outcome.ILLEGAL,
                    f"Team {c.owner}: {c.size} heroes rated {c.rating} in all; it may play."
                    if c.ok
                    else " ".join(c.problems),
                    size=c.size,
                    rating=c.rating,
                )
                for c in checks
            ]
            answer = _answer(kind, verdicts, question=False)
            answer["numbers"] = {"rating": {c.owner: c.rating for c in checks}, "size": {c.owner: c.size for c in checks}}
            return answer
        act = Action.from_json(asked)
        if kind == "lead":
            res = self.apply(_with_tiles_down(base, positions), {}, act, rng)
        elif kind == "place":
            res = self._judge_place(base, positions, act, state_in, owners)
        else:
            raise ScenarioError(f'The Magni scenario asks for {kind!r}; use "score", "team", "lead" or "place".')
        answer = _answer(kind, list(res.verdicts), question=False)
        answer["numbers"] = dict(res.verdicts[0].numbers) if res.verdicts else {}
        answer["state"] = self.dump_state(res.state)
        answer["rolls"] = rolls_numbers(res.rolls)
        if res.pending is not None:
            answer["pending"] = res.pending.to_json()
        if kind == "lead" and res.state.first and res.legal:
            answer["first"] = res.state.first
        if kind == "place":
            sc = score(res.state.tiles(), owners)
            answer.update(score_json(sc, heroes_by_tag))
        return answer

    def _judge_place(
        self, base: MagniState, positions: Positions, act: Action, state_in: Mapping[str, Json], owners: tuple[str, str]
    ) -> Result:
        """A place action against the tiles already on the board (units given with "hex" or "at")."""
        others = {t: p for t, p in positions.items() if t != act.unit}
        mine = positions.get(act.unit) if act.unit is not None else None
        if mine is not None:
            # the tile being placed, seen on a cell: there it is the placement; elsewhere it is already down
            seen, _ = tiles_on_board(base, {act.unit: mine})  # type: ignore[dict-item]
            target, _, _ = _target(base, act)
            if seen and target not in seen:
                others = dict(positions)
        tiles, problems = tiles_on_board(base, others)
        if problems:
            return Result(base, positions, tuple(problems))
        if CENTRE not in tiles or ABOVE not in tiles:
            raise ScenarioError(
                "A place scenario needs both Lead units on the board: one tile on the centre [0, 0] and one "
                "directly above it [0, -1]."
            )
        first = state_in.get("first", tiles[CENTRE].owner)
        if first not in owners:
            raise ScenarioError(f'The scenario\'s "first" is {first!r}; name one of the players {list(owners)}.')
        rest = sorted((h.tag, c) for c, h in tiles.items() if c not in (CENTRE, ABOVE))
        placed = ((tiles[CENTRE].tag, CENTRE), (tiles[ABOVE].tag, ABOVE), *((t, c) for t, c in rest))
        state = MagniState(
            heroes=base.heroes,
            owners=owners,
            layout=base.layout,
            placed=placed,
            first=first,
            lead_tie=base.lead_tie,
            snap_fraction=base.snap_fraction,
        )
        return self.apply(state, others, act, None)  # a placement rolls no die


# ---------------------------------------------------------------------------------------------- parsing


def _with_tiles_down(base: MagniState, positions: Positions) -> MagniState:
    """The scenario's state with the tiles on the board placed (the Lead units first): once any tile is down the
    centre has been fought for."""
    tiles, _ = tiles_on_board(base, positions)
    if not tiles:
        return base
    order = sorted(tiles, key=lambda c: (c != CENTRE, c != ABOVE, c))
    first = tiles[CENTRE].owner if CENTRE in tiles else None
    return MagniState(
        heroes=base.heroes,
        owners=base.owners,
        layout=base.layout,
        placed=tuple((tiles[c].tag, c) for c in order),
        first=first,
        lead_tie=base.lead_tie,
        snap_fraction=base.snap_fraction,
    )


def _answer(kind: str, verdicts: list[Verdict], question: bool) -> dict[str, Json]:
    if any(v.outcome is Outcome.WAITING for v in verdicts):
        outcome = "waiting"
    elif any(v.outcome is Outcome.ILLEGAL for v in verdicts):
        outcome = "illegal"
    elif any(v.outcome is Outcome.TOO_CLOSE_TO_CALL for v in verdicts):
        outcome = "too close to call"
    elif question or all(v.outcome is Outcome.INFO for v in verdicts):
        outcome = "info"
    else:
        outcome = "legal"
    return {"game": "magni", "action": kind, "outcome": outcome, "verdicts": [v.to_json() for v in verdicts]}


def _parse_heroes(units: Any, where: str) -> tuple[Hero, ...]:
    if not isinstance(units, list):
        raise RosterError(f"{where} must be a list of heroes.")
    heroes: list[Hero] = []
    seen: set[int] = set()
    for i, entry in enumerate(units):
        if not isinstance(entry, Mapping):
            raise RosterError(f"{where}, entry {i + 1} must be an object.")
        hero = parse_hero(entry, f"{where}, entry {i + 1}")
        if hero.tag in seen:
            raise RosterError(f"{where}: tag {hero.tag} is listed twice; every tile needs its own tag.")
        seen.add(hero.tag)
        heroes.append(hero)
    return tuple(sorted(heroes, key=lambda h: h.tag))


def _owners(heroes: tuple[Hero, ...], where: str, scenario: bool = False) -> tuple[str, str]:
    found: dict[str, None] = {}
    for h in heroes:
        found.setdefault(h.owner, None)
    names = list(found)
    if len(names) != 2:
        err = ScenarioError if scenario else RosterError
        raise err(f"{where} name {len(names)} players ({', '.join(names)}); Rise of the Magni is for two.")
    return (names[0], names[1])


def _layout(board: Any, where: str) -> Layout:
    """The Layout from a board object {"layout": {...}, ...}; the cells, if given, must be the 19-cell board."""
    if board is None:
        return DEFAULT_LAYOUT
    try:
        if not isinstance(board, Mapping):
            raise BoardError(f'{where} must be an object like {{"layout": {{"size_in": 1.5, "orientation": "flat"}}}}.')
        layout = parse_layout(board["layout"], f"{where}'s layout") if "layout" in board else DEFAULT_LAYOUT
        if "cells" in board or "hexagon" in board:
            cells = parse_board(board, where=where).cells
            if set(cells) != set(BOARD_CELLS):
                raise BoardError(f"{where} is not the 19-cell board; use \"hexagon\": 2.")
    except BoardError as err:
        raise ScenarioError(str(err)) from err
    if layout.orientation != "flat":
        raise ScenarioError(
            f"{where}'s layout is {layout.orientation!r}; Magni hexes have N and S edges, so use \"flat\"."
        )
    return layout


def _options(obj: Any, where: str) -> tuple[str, float]:
    if not isinstance(obj, Mapping):
        raise ScenarioError(f'{where}: "options" must be an object.')
    tie = obj.get("lead_tie", "roll")
    if tie not in LEAD_TIES:
        raise ScenarioError(f'{where}: lead_tie is {tie!r}; use "roll" or "reselect".')
    frac = obj.get("snap_fraction", 0.5)
    if isinstance(frac, bool) or not isinstance(frac, int | float) or not 0 <= frac < 1:
        raise ScenarioError(f"{where}: snap_fraction must be a number from 0 up to (not including) 1.")
    return tie, float(frac)


def _hex(value: Any, where: str) -> Hex:
    try:
        return parse_hex(value, where)
    except BoardError as err:
        raise ScenarioError(str(err)) from err


def _xy(value: Any, where: str) -> tuple[float, float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and abs(v) <= 10_000 for v in value)
    ):
        raise ScenarioError(f"{where} must be a table position [x, y] in inches; got {value!r}.")
    return (float(value[0]), float(value[1]))


def _positions(units: list[Any], layout: Layout) -> dict[UnitId, Placement]:
    """Where each tile lies: "hex": [q, r] is the cell's centre, "at": [x, y] a table position in inches."""
    out: dict[UnitId, Placement] = {}
    for entry in units:
        tag = entry["tag"]
        if "hex" in entry:
            cell = _hex(entry["hex"], f"unit {tag}'s \"hex\"")
            if cell not in BOARD_CELLS:
                raise ScenarioError(
                    f"unit {tag}'s \"hex\" [{cell.q}, {cell.r}] is not on the 19-cell board; give a cell within 2 "
                    "steps of the centre [0, 0], or leave \"hex\" out for a tile in hand."
                )
            x, y = layout.to_table(cell)
        elif "at" in entry:
            x, y = _xy(entry["at"], f"unit {tag}'s \"at\"")
        else:
            continue
        out[tag] = Placement(tag, x, y)
    return out


def _target(state: MagniState, action: Action) -> tuple[Hex | None, Placement | None, list[Verdict]]:
    """The cell a place action names: params "hex": [q, r], or "at": [x, y] snapped with the layout; a tile off
    the board or astride two cells is refused, named as the board scan names it ("Spark (tag 16) lies astride")."""
    tag = action.unit if action.unit is not None else 0
    hero = state.hero(tag)
    if "hex" in action.params:
        try:
            return parse_hex(action.params["hex"], 'the place action\'s "hex"'), None, []
        except BoardError as err:
            raise ActionError(str(err)) from err
    if "at" in action.params:
        try:
            x, y = _xy(action.params["at"], 'the place action\'s "at"')
        except ScenarioError as err:
            raise ActionError(str(err)) from err
        cell, off = state.layout.from_table(x, y)
        tile = f"{hero.name} (tag {tag}) at ({x:.2f}, {y:.2f})" if hero is not None else f"The tile at ({x:.2f}, {y:.2f})"
        if cell not in BOARD_CELLS:
            v = _verdict(
                "place.cell",
                Outcome.ILLEGAL,
                f"{tile} is not on the 19-cell board (it falls in cell [{cell.q}, {cell.r}]).",
                tag,
            )
            return None, None, [v]
        margin = state.snap_fraction * state.layout.inradius_in
        if state.layout.astride(x, y, margin):
            v = _verdict(
                "tile.astride",
                Outcome.ILLEGAL,
                f"{tile} lies astride two cells, "
                f"{straddle_words(BOARD_CELLS, state.layout, x, y, margin).removeprefix('astride ')} "
                f"({off:.2f}\" from the centre of [{cell.q}, {cell.r}]); push it into one cell.",
                tag,
                offset_in=round(off, 3),
            )
            return cell, None, [v]
        return cell, Placement(tag, x, y), []
    raise ActionError('A place action needs "hex": [q, r] or "at": [x, y] (table inches).')

# -------------------------------------------------------------------------------- what may be tried
# What the players may try now in Rise of the Magni (`Game.tryable_actions`) and what could be declared at a cell
# they click (`actions_at`), refused ones included: the page offers them, and the ruling says why one is refused.
#
# Nothing here is ruled: `Magni.apply` rules each action. The lists are bounded by the 19 cells and 20 heroes:
# - the fight for the centre: every pair of Lead units (all legal; a hero placed now is `at_point`'s, refused);
# - placing: every hero in the hand of the player to place on every empty cell (all legal), then one placement per
#   refusal a player may well try: each hero in the other player's hand on the first empty cell (not their turn),
#   a hero in hand on each cell that holds a tile, each hero already on the board on the first empty cell.
# Any other cell is `at_point`'s: with no hero selected, each hero in either hand placed on the clicked cell (the
# player to place first), with one, that hero placed there.


def tryable(state: MagniState, legal: list[Action]) -> list[Action]:
    """The legal actions first, then the refused placements a player may well try (see the module docstring)."""
    if state.phase == "over":
        return []
    if state.phase == "lead":
        return legal
    more: list[Action] = []
    owner = state.turn()
    assert owner is not None  # the place phase always has a player to place
    taken = {cell for _, cell in state.placed}
    empty = [c for c in BOARD_CELLS if c not in taken]
    hand = state.in_hand(owner)
    if empty:
        more += [Action("place", h.tag, {"hex": empty[0].to_json()}) for h in state.in_hand(state.other(owner))]
    if hand:
        more += [Action("place", hand[0].tag, {"hex": c.to_json()}) for _, c in state.placed]
    if empty:
        more += [Action("place", t, {"hex": empty[0].to_json()}) for t, _ in state.placed
                 if (h := state.hero(t)) is not None and h.owner == owner]
    return once(legal + more)


def at_point(state: MagniState, unit: UnitId | None, at: tuple[float, float]) -> list[Action]:
    """The placements on the cell under table point `at` (inches), legal or not: with no hero selected, each hero
    in hand there (the player to place first, then the other; none before the fight for the centre); with one, that
    hero there."""
    x, y = float(at[0]), float(at[1])
    if state.phase == "over" or not (math.isfinite(x) and math.isfinite(y)):
        return []
    cell = state.layout.from_table(x, y)[0].to_json()
    if unit is not None:
        return [Action("place", unit, {"hex": cell})] if state.hero(unit) is not None else []
    owner = state.turn()
    if owner is None:
        return []
    return [Action("place", h.tag, {"hex": cell}) for o in (owner, state.other(owner)) for h in state.in_hand(o)]


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


def _what_scored(tag: UnitId, before: Score, after: Score, names: Mapping[UnitId, str]) -> str:
    """What placing `tag` scored, in words: each skirmish it fights across an edge (with the values fought with),
    and each corner it fortifies; "" when it touches no opposing tile and closes no corner."""
    fought = {s.edge for s in before.skirmishes}
    parts = []
    for s in after.skirmishes:
        if s.edge in fought or tag not in (s.a, s.b):
            continue
        other, mine, theirs = (s.b, s.a_value, s.b_value) if s.a == tag else (s.a, s.b_value, s.a_value)
        result = ("against" if s.lead else "a draw with" if s.winner is None else
                  "beats" if s.winner == tag else "loses to")
        lead = " (the Lead units' skirmish scores nothing)" if s.lead else ""
        parts.append(f"{result} {names.get(other, other)} {mine} to {theirs}{lead}")
    corners = {f.corner for f in before.fortifications}
    for f in after.fortifications:
        if f.corner not in corners and tag in f.units:
            parts.append(f"fortifies a corner for {f.owner}")
    return ": " + "; ".join(parts) if parts else ""


__all__ = ["EDGE_NAMES", "Magni", "MagniState", "tiles_on_board"]
