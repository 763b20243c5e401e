"""Dice: the faces the players rolled are an input to the rules, like a measured distance.

Every roll a rule makes goes through a `DiceCup` made for one declared action. The cup hands out the faces the
players gave (the action's `"rolls"`: a flat list of faces in the order the rules take them), checking each
roll with one sentence that names it. When the given faces run out, the cup rolls from the generator only if
the players chose "roll for us" (the session passes a `random.Random`); otherwise it raises `RollPending`, and
the game answers that it waits for that roll, saying which dice and for what. The action is then declared again
with the faces so far plus the new ones (a re-roll of a tie asks again the same way).

Nothing here is global: the generator is passed in, and without one nothing is rolled.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rules.basics import ActionError, Json, UnitId

ROLLS_KEY = "rolls"
"""The action parameter that carries the faces the players rolled."""

DIE_SIDES = (4, 6, 8, 10, 12, 20)
"""The dice a rule may ask for."""


def roll(rng: random.Random, sides: int, count: int = 1) -> tuple[int, ...]:
    """`count` rolls of a fair die with faces 1..sides, from `rng` (the caller's generator)."""
    if sides < 2 or count < 0:
        raise ValueError(f"Cannot roll {count} dice of {sides} sides.")
    return tuple(rng.randint(1, sides) for _ in range(count))


def d20(rng: random.Random) -> int:
    """One twenty-sided die."""
    return rng.randint(1, 20)


def d6(rng: random.Random) -> int:
    """One six-sided die."""
    return rng.randint(1, 6)


def dice_words(count: int, sides: int) -> str:
    """'3 d20', '1 d6'."""
    return f"{count} d{sides}"


@dataclass(frozen=True)
class RollRequest:
    """One roll a rule clause needs: `count` dice of `sides` faces.

    clause: the rule's name (`game.clause`, as in a Verdict); what: the roll's subject in the rule book's words,
    e.g. "Archer 12's attack on Scout 20"; reads: how the faces are read, e.g. "each below 11 after Scout's
    +2 armour hits" ("" when the verdict says it); unit: the unit the roll is for; side: who rolls (an owner);
    given: the faces the action already carried for earlier rolls (send them again, then this roll's).
    """

    sides: int
    count: int
    clause: str
    what: str
    reads: str = ""
    unit: UnitId | None = None
    side: str | None = None
    given: tuple[int, ...] = ()

    def sentence(self) -> str:
        """"roll 3 d20 for Archer 12's attack on Scout 20; each below 11 after Scout's +2 armour hits"."""
        who = f"{self.side} rolls" if self.side else "roll"
        return f"{who} {dice_words(self.count, self.sides)} for {self.what}" + (f"; {self.reads}" if self.reads else "")

    def to_json(self) -> dict[str, Json]:
        return {"sides": self.sides, "count": self.count, "clause": self.clause, "what": self.what,
                "reads": self.reads, "unit": self.unit, "side": self.side, "given": list(self.given),
                "sentence": self.sentence()}

    @staticmethod
    def from_json(obj: Mapping[str, Json]) -> RollRequest:
        return RollRequest(int(obj["sides"]), int(obj["count"]), str(obj["clause"]), str(obj["what"]),
                           str(obj.get("reads") or ""), obj.get("unit"), obj.get("side"),
                           tuple(int(f) for f in obj.get("given") or ()))


@dataclass(frozen=True)
class Rolled:
    """A roll the rules took: what it was for, its faces, and who rolled it ("players" or "tablesight")."""

    request: RollRequest
    faces: tuple[int, ...]
    by: str

    def to_json(self) -> dict[str, Json]:
        return {"sides": self.request.sides, "clause": self.request.clause, "what": self.request.what,
                "unit": self.request.unit, "side": self.request.side, "faces": list(self.faces), "by": self.by}


class RollPending(Exception):
    """A rule needs a roll the action did not carry, and nobody asked Tablesight to roll: the game waits."""

    def __init__(self, request: RollRequest) -> None:
        super().__init__(request.sentence())
        self.request = request


class RollError(ActionError):
    """Faces given that do not fit the roll: too few for one roll, out of a die's range, or more than the rules took."""


def faces_of(params: Mapping[str, Json]) -> list[int]:
    """The faces an action carries (`"rolls"`), checked to be whole numbers; [] when none are given."""
    value = params.get(ROLLS_KEY, [])
    if value is None:
        return []
    if not isinstance(value, list | tuple) or any(isinstance(f, bool) or not isinstance(f, int) for f in value):
        raise RollError(f'"rolls" must be a list of the faces rolled, whole numbers such as [4, 6]; got {value!r}.')
    return list(value)


@dataclass
class DiceCup:
    """The faces for one action: the players' first, in order; then the generator's if there is one ("roll for
    us"); else `RollPending`. `taken` lists every roll handed out, in order."""

    given: list[int]
    rng: random.Random | None = None
    taken: list[Rolled] = field(default_factory=list)
    _used: int = 0

    @staticmethod
    def for_action(params: Mapping[str, Json], rng: random.Random | None) -> DiceCup:
        return DiceCup(faces_of(params), rng)

    @property
    def left(self) -> int:
        """How many given faces no roll has taken yet."""
        return len(self.given) - self._used

    def roll(self, sides: int, count: int, clause: str, what: str, reads: str = "", unit: UnitId | None = None,
             side: str | None = None) -> tuple[int, ...]:
        """`count` faces of a d`sides` for the roll `what`: given ones if any are left (all `count` of them, each
        1..sides), else rolled for us, else RollPending."""
        request = RollRequest(sides, count, clause, what, reads, unit, side, tuple(self.given[:self._used]))
        if count <= 0:
            return ()
        if self.left > 0:
            if self.left < count:
                raise RollError(f"{_capital(what)} takes {dice_words(count, sides)}; {_were(self.left)} given.")
            faces = tuple(self.given[self._used:self._used + count])
            bad = [f for f in faces if not 1 <= f <= sides]
            if bad:
                raise RollError(f"A d{sides} shows 1 to {sides}; the roll for {what} was given {bad[0]}.")
            self._used += count
            self.taken.append(Rolled(request, faces, "players"))
            return faces
        if self.rng is None:
            raise RollPending(request)
        faces = roll(self.rng, sides, count)
        self.taken.append(Rolled(request, faces, "tablesight"))
        return faces

    def one(self, sides: int, clause: str, what: str, reads: str = "", unit: UnitId | None = None,
            side: str | None = None) -> int:
        """One die's face (see `roll`)."""
        return self.roll(sides, 1, clause, what, reads, unit, side)[0]

    def finish(self) -> None:
        """Refuse faces the rules did not take (a miscount is better said than silently dropped)."""
        if self.left > 0:
            took = sum(len(r.faces) for r in self.taken if r.by == "players")
            raise RollError(f"{_were(len(self.given))} given but the rules took {took}: "
                            f"give only the dice rolled for this action.")


def _were(n: int) -> str:
    return "1 was" if n == 1 else f"{n} were"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


WAITING_RULE = "dice.pending"
"""The rule name of the verdict that says a game waits for a roll."""


def rolls_numbers(taken: Sequence[Rolled]) -> list[dict[str, Json]]:
    """The rolls as a verdict's numbers list them."""
    return [r.to_json() for r in taken]
