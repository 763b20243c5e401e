"""Valyr attacks: which range band applies, and the d20 roll.

Rule (in our words): the attacker takes its Attack (strength-skill), changes both by the modifiers of the
range band the attack is made at, and rolls one d20 per point of strength. Each die is increased by the
defender's armor; a die whose total is *below* the skill (strictly less) is an on-target attack. The
defender's dodge then cancels that many on-target attacks; what is left are hits, and the defender gains
that much distress. A defender whose distress exceeds (strictly) its health is defeated.
Strength below 0 after modifiers rolls no dice.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rules.dice import roll
from rules.engine import Outcome
from rules.geometry import Measure
from rules.valyr.cards import RangeBand, RangeTable


@dataclass(frozen=True)
class BandChoice:
    """The band an attack is made at. outcome: LEGAL when one band's modifiers apply for the whole ±,
    TOO_CLOSE_TO_CALL when the ± straddles a boundary between bands with different modifiers."""

    band: RangeBand | None
    index: int
    outcome: Outcome
    candidates: tuple[int, ...]


def band_choice(table: RangeTable, distance: Measure) -> BandChoice:
    """Which band of `table` applies at `distance` (edge to edge, with its ±)."""
    lo = max(table.min_in, distance.value - distance.pm)
    hi = min(table.max_in, distance.value + distance.pm)
    centre = min(max(distance.value, table.min_in), table.max_in)
    index = table.band_at(centre)
    candidates = tuple(sorted({table.band_at(lo), index, table.band_at(hi)} - {-1}))
    mods = {(table.bands[i].strength_mod, table.bands[i].skill_mod) for i in candidates}
    outcome = Outcome.LEGAL if len(mods) <= 1 else Outcome.TOO_CLOSE_TO_CALL
    return BandChoice(table.bands[index] if index >= 0 else None, index, outcome, candidates)


@dataclass(frozen=True)
class AttackRoll:
    """One attack's dice: each d20, each total (die + armor), how many came in under the skill, and the hits."""

    strength: int
    skill: int
    armor: int
    dodge: int
    rolls: tuple[int, ...]
    totals: tuple[int, ...]
    on_target: int
    hits: int


def roll_attack(rng: random.Random, strength: int, skill: int, armor: int, dodge: int) -> AttackRoll:
    """Roll `strength` d20s from `rng`; a die hits on target when die + armor < skill; dodge cancels hits."""
    dice = roll(rng, 20, max(0, strength))
    totals = tuple(d + armor for d in dice)
    on_target = sum(1 for t in totals if t < skill)
    hits = max(0, on_target - max(0, dodge))
    return AttackRoll(max(0, strength), skill, armor, dodge, dice, totals, on_target, hits)
