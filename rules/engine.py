"""The shape every game shares: measured placements, actions, verdicts, overlays and the game registry.

A game is a `Game` subclass registered by name. Its state is an immutable value; `apply` maps
(state, measured positions, declared action, injected RNG) to a `Result` holding the new state, the
verdicts and the overlay shapes. Legality is *reported* as verdicts; only malformed input *raises*,
from the `RulesInputError` family, with a message that quotes the bad input.
"""

from __future__ import annotations

import enum
import functools
import importlib
import pkgutil
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import rules
from rules import fields
from rules.basics import (  # noqa: F401 - the rules' shared words, re-exported where games look for them
    ActionError,
    Inches,
    Json,
    RosterError,
    RulesInputError,
    ScenarioError,
    UnitId,
    UnknownGame,
)
from rules.dice import WAITING_RULE, DiceCup, Rolled, RollPending, RollRequest

if TYPE_CHECKING:
    from rules.hexgrid import HexBoard, Layout


@dataclass(frozen=True)
class Placement:
    """Where the camera (or a scenario) says a unit is.

    x, y: the base centre on the table, inches (table frame of DESIGN.md).
    z: height of the base's underside above the table top, inches (0 on the table, 3 on a ruin floor).
    pm: the ± of the position, inches (0 when given exactly, e.g. by a scenario).
    yaw_deg: facing, degrees counter-clockwise from +x.
    """

    unit: UnitId
    x: Inches
    y: Inches
    z: Inches = 0.0
    pm: Inches = 0.0
    yaw_deg: float = 0.0

    @property
    def xy(self) -> tuple[Inches, Inches]:
        return (self.x, self.y)

    def moved_to(self, x: Inches, y: Inches, z: Inches | None = None) -> Placement:
        return Placement(self.unit, x, y, self.z if z is None else z, self.pm, self.yaw_deg)


Positions = Mapping[UnitId, Placement]
"""The measured placement of every unit on the table, by unit id."""


class Outcome(enum.Enum):
    """How a verdict came out."""

    LEGAL = "legal"
    ILLEGAL = "illegal"
    TOO_CLOSE_TO_CALL = "too close to call"
    INFO = "info"
    WAITING = "waiting"
    """The rules wait for the players' dice (rules/dice.py); nothing was ruled yet."""


@dataclass(frozen=True)
class Verdict:
    """One ruling: which rule clause, how it came out, a sentence for the player, and the numbers behind it.

    rule: the clause's name, `game.clause` (e.g. "valknut.move.speed").
    numbers: the measured figures the ruling used (inches, dice, counts), by name.
    """

    rule: str
    outcome: Outcome
    message: str
    unit: UnitId | None = None
    numbers: Mapping[str, Json] = field(default_factory=dict)

    @property
    def legal(self) -> bool:
        return self.outcome is not Outcome.ILLEGAL

    def to_json(self) -> dict[str, Json]:
        return {
            "rule": self.rule,
            "outcome": self.outcome.value,
            "message": self.message,
            "unit": self.unit,
            "numbers": dict(self.numbers),
        }


class Shape(enum.Enum):
    """The geometric kind of an overlay; all coordinates are table inches."""

    CIRCLE = "circle"  # points[0] is the centre; radius
    RING = "ring"  # points[0] is the centre; radius (outer) and inner
    POLYGON = "polygon"  # points: the outline, not closed
    POLYLINE = "polyline"  # points: a path
    SEGMENT = "segment"  # points: two ends
    LABEL = "label"  # points[0]: where the text goes


@dataclass(frozen=True)
class Overlay:
    """A shape for the UI to draw, in table inches.

    style: what it means, which picks its colour: "engagement", "range-band", "los-clear", "los-partial",
    "los-blocked", "drop-zone", "section", "move-allowance", "move-trail", "illegal", "too-close",
    "hex-highlight", "hex-reachable", "attack-line", "wall", "score", "terrain-blocking".
    """

    shape: Shape
    points: tuple[tuple[Inches, Inches], ...]
    style: str
    radius: Inches = 0.0
    inner: Inches = 0.0
    label: str = ""
    unit: UnitId | None = None
    owner: str | None = None

    def to_json(self) -> dict[str, Json]:
        return {
            "shape": self.shape.value,
            "points": [list(p) for p in self.points],
            "style": self.style,
            "radius": self.radius,
            "inner": self.inner,
            "label": self.label,
            "unit": self.unit,
            "owner": self.owner,
        }


@dataclass(frozen=True)
class Action:
    """A declared action or a question: its kind (the game's own word), who acts, and its parameters.

    params hold JSON-like values in the game's documented form, e.g. {"to": [x, y]} for a move or
    {"target": 14} for an attack.
    """

    kind: str
    unit: UnitId | None = None
    params: Mapping[str, Json] = field(default_factory=dict)

    def to_json(self) -> dict[str, Json]:
        return {"kind": self.kind, "unit": self.unit, "params": dict(self.params)}

    @staticmethod
    def from_json(obj: Mapping[str, Json]) -> Action:
        if not isinstance(obj, Mapping) or not isinstance(obj.get("kind"), str):
            raise ActionError(f'An action needs a "kind" string; got {obj!r}.')
        unit = obj.get("unit")
        if unit is not None and not isinstance(unit, int):
            raise ActionError(f'An action\'s "unit" must be a tag id (a whole number); got {unit!r}.')
        params = obj.get("params", {})
        if not isinstance(params, Mapping):
            raise ActionError(f'An action\'s "params" must be an object; got {params!r}.')
        return Action(obj["kind"], unit, dict(params))


S = TypeVar("S")


@dataclass(frozen=True)
class Result:
    """What applying an action gives: the new state, the positions as the rules now see them, verdicts, overlays.

    positions: after a legal move the mover stands at its destination; after an illegal one, where it was.
    """

    state: Any
    positions: Positions
    verdicts: tuple[Verdict, ...] = ()
    overlays: tuple[Overlay, ...] = ()
    pending: RollRequest | None = None
    """The roll the rules wait for (state and positions unchanged), or None when the action was ruled."""
    rolls: tuple[Rolled, ...] = ()
    """Every roll the rules took for the action, in order, with who rolled it."""

    @property
    def legal(self) -> bool:
        return all(v.legal for v in self.verdicts)


class Game(ABC):
    """A game's static facts and its rules. Subclasses register themselves with `@register`.

    name: the registry key (lower case, e.g. "valknut"); title: as the rule book spells it;
    board: "inches" for an open table, "hex" for a hex board.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    board: ClassVar[str]
    camera_kinds: ClassVar[frozenset[str]] = frozenset({"move"})
    """Action kinds the camera makes by itself (a base moved): not offered to the players to declare."""
    kind_titles: ClassVar[Mapping[str, str]] = {}
    """A heading for each kind of action in the rule book's words (the Declare panel's groups); a kind left out is
    headed by its own name ("end_turn": "End turn")."""

    @abstractmethod
    def new_state(self, setup: Mapping[str, Json]) -> Any:
        """The state at the start of a game from a setup object (roster, board, options); raises RulesInputError."""

    @abstractmethod
    def apply(self, state: Any, positions: Positions, action: Action, rng: random.Random | None) -> Result:
        """Rule on one declared action against the measured positions; never mutates `state`.

        Dice are an input: the faces the players rolled come in the action's "rolls" (rules/dice.py). `rng` rolls
        the ones not given only when the players chose "roll for us"; None: a roll not given makes the Result wait
        for it (`Result.pending`, state unchanged). Games take dice through `rules.dice.takes_dice`."""

    @abstractmethod
    def legal_actions(self, state: Any, positions: Positions) -> list[Action]:
        """Every action that is legal now (continuous moves sampled to a finite, representative set)."""

    def tryable_actions(self, state: Any, positions: Positions) -> list[Action]:
        """Every action the players may try now, refused ones included (an attack on any enemy, not only a legal
        target), so that the page can offer them and `apply` says why one is refused. Default: `legal_actions`."""
        return self.legal_actions(state, positions)

    def actions_at(self, state: Any, positions: Positions, unit: UnitId | None,
                   at: tuple[Inches, Inches]) -> list[Action]:
        """The actions that could be declared at the table point `at` (inches) the players clicked, for `unit` (None:
        actions of no unit, such as a build): move or unload there, build there, a wall on the nearest edge...,
        legal or not (the ruling says why one is refused). Default: none."""
        return []

    @abstractmethod
    def overlays(self, state: Any, positions: Positions, selected: UnitId | None = None) -> tuple[Overlay, ...]:
        """The shapes that show the current state, and the selected unit's rings and bands."""

    @abstractmethod
    def dump_state(self, state: Any) -> dict[str, Json]:
        """The state as JSON; `load_state(dump_state(s)) == s`."""

    @abstractmethod
    def load_state(self, obj: Mapping[str, Json]) -> Any:
        """A state from `dump_state` output; raises RulesInputError on malformed input."""

    @abstractmethod
    def judge(self, scenario: Mapping[str, Json], rng: random.Random | None) -> dict[str, Json]:
        """Answer one scenario (see docs/scenarios/): {"game", "question", "verdicts", "numbers", ...}. The dice
        are the action's "rolls"; `rng` (the scenario's seed) rolls the ones not given, and None answers that the
        game waits for them ("pending": the roll asked for)."""

    @abstractmethod
    def example(self, rng: random.Random) -> tuple[Any, Positions]:
        """A small legal starting position (state and positions), for conformance tests and the UI."""

    def is_over(self, state: Any) -> bool:
        """Whether the game has ended."""
        return False

    def score(self, state: Any) -> dict[str, Json] | None:
        """The score now, for games that keep one (JSON); None for a game without a running score."""
        return None

    def off_table(self, state: Any) -> frozenset[UnitId]:
        """The units the rules have taken off the table (destroyed, sunk, in reserve, carried aboard another): the
        camera not seeing them is no news, and Tablesight does not ask the players where they are. Default: none."""
        return frozenset()

    def hex_board(self, state: Any) -> tuple[HexBoard, Layout] | None:
        """The hex board `state` plays on (its cells' terrain and elevation, features on edges such as walls) and
        how it lies on the table, for drawing; None on an open table (the default)."""
        return None

    def stands_at(self, state: Any, unit: UnitId, x: Inches, y: Inches) -> bool:
        """Whether the state already has `unit` where the table point (x, y) puts it, so that seeing it put
        down there is no news (a hex game's tile placed by a declared action, then seen by the camera)."""
        return False

    def camera_action(self, state: Any, unit: UnitId, seen: str, at: tuple[Inches, Inches],
                      came_from: tuple[Inches, Inches] | None = None, *, positions: Positions | None = None,
                      measured: Measured | None = None) -> Action | None:
        """What a unit the camera saw stands for: `seen` is "placed" (first seen, or put down where it was
        not) or "move" (from `came_from` to `at`), table inches; `positions` are the placements before it,
        `measured` the move's measured length, ± and the floor it now stands on. None: nothing to rule.

        Default, on a hex board (tiles placed once, as in Rise of the Magni): a "place" at the table point,
        unless the state already has the piece there. On an open table: a move is a "move" to `at` with its
        measured length; a base put down is no news. Games whose units do more override this."""
        if self.board == "hex":
            if self.stands_at(state, unit, at[0], at[1]):
                return None
            return Action("place", unit, {"at": [float(at[0]), float(at[1])]})
        if seen != "move":
            return None
        params: dict[str, Json] = {"to": [float(at[0]), float(at[1])]}
        if measured is not None:
            params.update(length_in=measured.length_in, pm_in=measured.pm_in)
            if measured.z is not None:
                params["z"] = measured.z  # the floor it now stands on
        return Action("move", unit, params)

    def assess(self, state: Any, positions: Positions, unit: UnitId, target: UnitId) -> Assessment | None:
        """What `unit` could do to `target` now beyond range and sight (which Tablesight measures for every
        game): the to-hit number and the figures behind it, or None for a game that has nothing to add."""
        return None

    def status(self, state: Any) -> TurnStatus:
        """The phase, round or turn and whose turn it is. Default: what the state's `phase`, `round`, `turn`
        and `active_player` / `to_play` / `player` fields say (None where it says nothing)."""
        phase = getattr(state, "phase", None)
        if not isinstance(phase, str):
            phase = "over" if getattr(state, "over", False) or self.is_over(state) else None
        numbers = {k: v for k in ("round", "turn")
                   if isinstance(v := getattr(state, k, None), int) and not isinstance(v, bool)}
        player = next((v for k in ("active_player", "to_play", "player") if isinstance(v := getattr(state, k, None), str)),
                      None)
        return TurnStatus(phase, numbers.get("round"), numbers.get("turn"), player)

    def panel(self, state: Any, positions: Positions) -> Panel:
        """What the game panel shows now, in the rule book's words: where the game stands, what is left to do,
        each unit's state, the score, the victory condition and the winner once it is met. Default: built from
        `status`, `score` and `is_over`; every game says more by overriding it."""
        st = self.status(state)
        bits = [b for b in (st.phase and st.phase.replace("_", " ").capitalize(),
                            st.round is not None and f"round {st.round}", st.turn is not None and f"turn {st.turn}",
                            st.player and f"{st.player} to act") if b]
        sc = self.score(state) or {}
        return Panel(headline=" · ".join(bits), over=self.is_over(state),
                     score=tuple(SideScore(str(k), str(v)) for k, v in sc.items() if k != "winner"),
                     winner=str(sc["winner"]) if sc.get("winner") else None)

    def as_ruled(self, state: Any, action: Action) -> Action:
        """`action` as the rules would take it in `state`, with what it leaves to the table said (Vigtavl's attack
        with no "mode": close combat from the same or an adjacent hex, else at range), so that `describe` says what
        will happen. Default: the action itself."""
        return action

    def describe(self, action: Action, name_of: Callable[[UnitId], str]) -> str:
        """An action in words for a button or a log line, units by name ("attack Blue 1 with Red 5").
        Default: the kind in words, the unit, then the parameters (a unit id parameter by name)."""
        words = action.kind.replace("_", " ")
        if action.unit is not None:
            words += f" {name_of(action.unit)}"
        rest = {k: v for k, v in action.params.items() if k not in ("player", "rolls")}  # the dice are said apart
        if rest:
            words += " (" + ", ".join(f"{k.replace('_', ' ')} {_said(k, v, name_of)}" for k, v in rest.items()) + ")"
        return words

    # -------------------------------------------------------------------------------- a new game's setup
    def option_fields(self) -> tuple[OptionField, ...]:
        """The rule options the players may set before a game, with their rule-book meaning (none by default)."""
        return ()

    def unit_name(self, state: Any, unit: UnitId) -> str | None:
        """A unit the game itself brought into play (Vigtavl's units built during the game), by name; None for any
        other (the roster names its own)."""
        return None

    def unit_fields(self) -> tuple[UnitField, ...]:
        """The values a unit of this game carries in the roster beyond tag, name, profile, side and base (a hero's
        rating and attack values), which the new-game page asks for each unit (none by default)."""
        return ()

    def usual_mount(self) -> str:
        """Where a unit's tag usually goes (session/printables.py's mounts): "topper", above a figure, by default;
        "flat" for a game played with tiles or tokens that carry no figure."""
        return "topper"

    def play_areas(self) -> tuple[tuple[Inches, Inches], ...]:
        """The play areas (width, depth, inches) an open table of this game may be; () for any size."""
        return ()

    def pieces_per_cell(self) -> int:
        """The most pieces one hex cell may hold at once (a hex game's cells are sized to fit them); 1 by default."""
        return 1

    def cell_kinds(self) -> tuple[CellKind, ...]:
        """The kinds of cell a board of this game may have, in the order a click cycles them; () when the game's
        board is fixed (its cells cannot be drawn)."""
        return ()

    def standard_boards(self) -> tuple[StandardBoard, ...]:
        """The boards this game comes with (board files, docs/hex_boards.md); () for an open table."""
        return ()

    def example_roster(self) -> dict[str, Json]:
        """The game's example army as a roster file (rules/roster.py): a new game starts from it."""
        return {}


@dataclass(frozen=True)
class OptionField:
    """One rule option a setup may set: where it goes in the setup (`path`, e.g. ("options", "turn_limit")), its
    label and help in the rule book's words, its kind ("int", "bool", "choice", or "side": one of the roster's
    sides), its default and, for a choice, each value with its words."""

    path: tuple[str, ...]
    label: str
    kind: str
    default: Json
    help: str
    choices: tuple[tuple[str, str], ...] = ()
    low: int | None = None
    high: int | None = None

    def to_json(self) -> dict[str, Json]:
        return {"path": list(self.path), "label": self.label, "kind": self.kind, "default": self.default,
                "help": self.help, "choices": [list(c) for c in self.choices], "low": self.low, "high": self.high}


@dataclass(frozen=True)
class UnitField:
    """One value each unit carries in the roster (`key`), with its label and help in the rule book's words; a whole
    number from `low` to `high` (None: no bound). side_most: the most a side's units may have of it together (a
    Magni team's ratings: 23), None when the rules set no total."""

    key: str
    label: str
    help: str
    low: int | None = None
    high: int | None = None
    side_most: int | None = None

    def to_json(self) -> dict[str, Json]:
        return {"key": self.key, "label": self.label, "help": self.help, "low": self.low, "high": self.high,
                "side_most": self.side_most}


@dataclass(frozen=True)
class CellKind:
    """A kind of hex cell a board may have: its terrain and elevation (levels) and its name for a player."""

    terrain: str
    label: str
    elevation: int = 0

    def to_json(self) -> dict[str, Json]:
        return {"terrain": self.terrain, "elevation": self.elevation, "label": self.label}


@dataclass(frozen=True)
class StandardBoard:
    """A board a game comes with: its file name (`name`), its title for a player, and the board file itself."""

    name: str
    title: str
    board: Mapping[str, Json]

    def to_json(self) -> dict[str, Json]:
        return {"name": self.name, "title": self.title, "board": dict(self.board)}


@dataclass(frozen=True)
class Measured:
    """A camera move's measured figures: path length and its ±, and the floor the base now stands on (inches)."""

    length_in: Inches
    pm_in: Inches
    z: Inches | None = None
    """None when the base is no longer on the table (lifted again at once)."""


@dataclass(frozen=True)
class Assessment:
    """A game's answer to "what can this unit do to that one" (see `Game.assess`)."""

    to_hit: int | None = None
    """The die roll needed to hit ("4" reads "4+"), None when no attack is possible now."""
    numbers: Mapping[str, Json] = field(default_factory=dict)
    verdicts: tuple[Verdict, ...] = ()
    overlays: tuple[Overlay, ...] = ()

    def to_json(self) -> dict[str, Json]:
        return {"to_hit": self.to_hit, **self.numbers, "verdicts": [v.to_json() for v in self.verdicts],
                "overlays": [o.to_json() for o in self.overlays]}


@dataclass(frozen=True)
class UnitLine:
    """One unit's state as its game keeps it, in words ("HP 8 of 10, armour 2, Marked, carries a Runestone").

    gone: off the table for now (destroyed, in reserve, aboard); left: what it may still do this turn
    ("move, attack"; "" when nothing or not its turn)."""

    unit: UnitId
    name: str
    side: str | None
    words: str
    gone: bool = False
    left: str = ""

    def to_json(self) -> dict[str, Json]:
        return {"unit": self.unit, "name": self.name, "side": self.side, "words": self.words, "gone": self.gone,
                "left": self.left}


@dataclass(frozen=True)
class SideScore:
    """One side's score or tokens in words ("2 of 3 Runestones delivered"; "gold 3, silver 1"), and its points
    when the game counts them (None otherwise)."""

    side: str
    words: str
    points: float | None = None

    def to_json(self) -> dict[str, Json]:
        return {"side": self.side, "words": self.words, "points": self.points}


@dataclass(frozen=True)
class Panel:
    """The game panel (`Game.panel`): everything a player glances at between moves, in the rule book's words.

    headline: phase, round or turn, and who acts ("Turn 3 of 5 · activations · red to activate");
    to_do: what is left to do now, a line each ("Units to activate: Red 2, Red 3");
    units: each unit's state; score: each side's; victory: how the game is won, one sentence;
    winner: the banner once the game is won ("Blue wins: 3 Runestones delivered"), None before;
    over: the game has ended (with or without a winner)."""

    headline: str
    to_do: tuple[str, ...] = ()
    units: tuple[UnitLine, ...] = ()
    score: tuple[SideScore, ...] = ()
    victory: str = ""
    winner: str | None = None
    over: bool = False

    def to_json(self) -> dict[str, Json]:
        return {"headline": self.headline, "to_do": list(self.to_do), "units": [u.to_json() for u in self.units],
                "score": [s.to_json() for s in self.score], "victory": self.victory, "winner": self.winner,
                "over": self.over}


@dataclass(frozen=True)
class TurnStatus:
    """Where a game stands: its phase, round and turn numbers, and the player to act (None: not said)."""

    phase: str | None = None
    round: int | None = None
    turn: int | None = None
    player: str | None = None

    def to_json(self) -> dict[str, Json]:
        out: dict[str, Json] = {"phase": self.phase}
        if self.round is not None:
            out["round"] = self.round
        if self.turn is not None:
            out["turn"] = self.turn
        out["player"] = self.player
        return out


def counted(n: int, thing: str, things: str = "") -> str:
    """A number of things as a sentence says it: "1 token", "3 tokens", "0 tokens" ("2 hexes": things="hexes")."""
    return f"{n} {thing}" if n == 1 else f"{n} {things or thing + 's'}"


def listed(words: Sequence[str]) -> str:
    """Words as a sentence lists them: "A", "A and B", "A, B and C" ("" for none)."""
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _said(key: str, value: Json, name_of: Callable[[UnitId], str]) -> str:
    """A parameter's value in words: a unit id parameter ("target", "unit", "enemy") by name, numbers short."""
    if key in ("target", "unit", "enemy", "carrier") and isinstance(value, int) and not isinstance(value, bool):
        return name_of(value)
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, list):
        return "(" + ", ".join(_said("", v, name_of) for v in value) + ")"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_said(str(k), v, name_of)}" for k, v in value.items())
    return str(value)


_REGISTRY: dict[str, type[Game]] = {}
G = TypeVar("G", bound=type[Game])


def register(cls: G) -> G:
    """Class decorator: make a game findable by `cls.name`."""
    key = cls.name.lower()
    if key in _REGISTRY and _REGISTRY[key] is not cls:
        raise ValueError(f"Two games are registered as {key!r}.")
    _REGISTRY[key] = cls
    return cls


def _load_builtin_games() -> None:
    """Import every game folder's `game` module (rules/<game>/game.py); importing it registers the game.

    Games are found by their folders, so a new game is one new folder and nothing here changes."""


    for info in pkgutil.iter_modules(rules.__path__):
        if info.ispkg:
            importlib.import_module(f"rules.{info.name}.game")


def game_names() -> list[str]:
    """The registered games' names, sorted."""
    _load_builtin_games()
    return sorted(_REGISTRY)


def find_game(name: str) -> Game:
    """The game registered as `name` (case-insensitive); raises UnknownGame naming the choices."""
    _load_builtin_games()
    key = (name or "").strip().lower()
    if key not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownGame(f"There is no game called {name!r}; choose one of: {known}.")
    return _REGISTRY[key]()


def require(obj: Mapping[str, Json], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """obj[key] checked to be of `kind` (rules.fields.require); raises ScenarioError naming `where` and the key."""
    return fields.require(obj, key, kind, where, ScenarioError)


Checker = Callable[[Any, Positions, Action], tuple[Verdict, ...]]


def takes_dice(apply: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a `Game.apply(self, state, positions, action, rng)` whose body takes a `DiceCup` in place of the
    generator: the cup is made from the action's "rolls" and `rng` (None: nobody rolls for the players). A roll
    the action lacks gives a Result that keeps the state and positions, with one verdict saying what to roll and
    `pending` set; otherwise the Result lists the rolls taken."""
    @functools.wraps(apply)
    def wrapper(self: Any, state: Any, positions: Any, action: Any, rng: random.Random | None) -> Any:
        cup = DiceCup.for_action(action.params, rng)
        try:
            result = apply(self, state, positions, action, cup)
        except RollPending as waiting:
            req = waiting.request
            verdict = Verdict(WAITING_RULE, Outcome.WAITING, f"Waiting for the dice: {req.sentence()}.", req.unit,
                              {"roll": req.to_json()})
            return Result(state, positions, (verdict,), (), pending=req)
        if result.legal:  # an action ruled illegal (out of range) says so, not that its dice went unused
            cup.finish()
        return replace(result, rolls=(*result.rolls, *cup.taken))

    return wrapper
