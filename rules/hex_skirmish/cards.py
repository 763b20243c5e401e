"""Hex Skirmish (seed 002): army cards, special abilities, the combat dice and the attack roll.

An army card carries Life, Move, Range, Attack, Defense and Height (in board elevation levels) and a list of
special abilities. The seed names three abilities and we implement exactly those:

- Flying/Leaping ("flying" or "leaping"): ignores elevation and water, flies over figures without becoming
  engaged, takes no fall damage.
- Counterstrike: when rolling defense, every shield beyond the attacker's skulls is a hit on the attacker.
- Water Ignore: moving into water does not end the move.

The seed's "Attack Rules" section is empty. Our named option `combat_dice = "skull_shield_d6"` (the only one,
as in similar hex skirmish games): every die is a six-sided combat die with three skull faces (1-3), two
shield faces (4-5) and a blank (6). An attack rolls Attack dice and counts skulls; the defender rolls Defense
dice and counts shields; each skull beyond the shields is one wound. A figure is destroyed when its wounds
reach its Life. "Roll 1 attack die" for fall or disengagement damage means one wound per skull rolled.
The faces are the players' (rules/dice.py): this module only reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rules.engine import RosterError

ABILITIES = {
    "flying": "flying",
    "leaping": "flying",
    "flying/leaping": "flying",
    "counterstrike": "counterstrike",
    "water ignore": "water ignore",
    "water_ignore": "water ignore",
}
"""Ability names a card may list (any case), mapped to the rule they switch on."""
SKULL_FACES = frozenset({1, 2, 3})
SHIELD_FACES = frozenset({4, 5})
STATS = ("life", "move", "range", "attack", "defense", "height")
MAX_STAT = 99
"""Largest value a card's stat may have (dice are rolled one by one; a bigger number is a typo)."""


@dataclass(frozen=True)
class ArmyCard:
    """One army card. Height is in board elevation levels; Range in hexes (1: adjacent only)."""

    name: str
    life: int
    move: int
    range: int
    attack: int
    defense: int
    height: int
    abilities: frozenset[str] = frozenset()
    description: str = ""

    @property
    def flying(self) -> bool:
        return "flying" in self.abilities

    @property
    def water_ignore(self) -> bool:
        return "water ignore" in self.abilities

    @property
    def counterstrike(self) -> bool:
        return "counterstrike" in self.abilities

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        out.update({k: getattr(self, k) for k in STATS})
        out["abilities"] = sorted(self.abilities)
        if self.description:
            out["description"] = self.description
        return out


def parse_card(obj: Any, where: str) -> ArmyCard:
    """An ArmyCard from {"name", "life", "move", "range", "attack", "defense", "height", "abilities"}."""
    if not isinstance(obj, Mapping):
        raise RosterError(f"{where} must be an object with name, life, move, range, attack, defense, height.")
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise RosterError(f'{where} has no "name".')
    where = f"{where} ({name})"
    values: dict[str, int] = {}
    for key in STATS:
        v = obj.get(key, obj.get(key.capitalize()))
        low = 1 if key in ("life", "height", "range") else 0
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= MAX_STAT:
            raise RosterError(f'{where} needs "{key}" as a whole number from {low} to {MAX_STAT}; got {v!r}.')
        values[key] = v
    listed = obj.get("abilities", [])
    if not isinstance(listed, list) or not all(isinstance(a, str) for a in listed):
        raise RosterError(f'{where}: "abilities" must be a list of names, e.g. ["Flying", "Counterstrike"].')
    abilities: set[str] = set()
    for a in listed:
        key = a.strip().lower()
        if key not in ABILITIES:
            raise RosterError(
                f"{where} lists the ability {a!r}, which these rules do not know; use Flying/Leaping, "
                "Counterstrike or Water Ignore."
            )
        abilities.add(ABILITIES[key])
    desc = obj.get("description", "")
    return ArmyCard(
        name=name,
        abilities=frozenset(abilities),
        description=desc if isinstance(desc, str) else "",
        **values,
    )


def skulls(faces: tuple[int, ...]) -> int:
    """How many of the faces are skulls (1-3)."""
    return sum(1 for f in faces if f in SKULL_FACES)


def shields(faces: tuple[int, ...]) -> int:
    """How many of the faces are shields (4-5)."""
    return sum(1 for f in faces if f in SHIELD_FACES)


@dataclass(frozen=True)
class AttackRoll:
    """One attack: the faces rolled, skulls against shields, wounds to the target and Counterstrike hits back."""

    attack_faces: tuple[int, ...]
    defense_faces: tuple[int, ...]
    skulls: int
    shields: int
    wounds: int
    counter_wounds: int

    def to_json(self) -> dict[str, Any]:
        return {
            "attack_dice": list(self.attack_faces),
            "defense_dice": list(self.defense_faces),
            "skulls": self.skulls,
            "shields": self.shields,
            "wounds": self.wounds,
            "counter_wounds": self.counter_wounds,
        }


def attack_roll(
    attacker: ArmyCard, defender: ArmyCard, attack_faces: tuple[int, ...], defense_faces: tuple[int, ...]
) -> AttackRoll:
    """The attack read from its faces: each skull beyond the shields is a wound; with Counterstrike each shield
    beyond the skulls is a hit on the attacker."""
    hits, blocks = skulls(attack_faces), shields(defense_faces)
    counter = max(0, blocks - hits) if defender.counterstrike else 0
    return AttackRoll(attack_faces, defense_faces, hits, blocks, max(0, hits - blocks), counter)
