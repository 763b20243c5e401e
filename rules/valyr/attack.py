"""Valyr attacks: which range band applies, and how the d20s are read.

Rule (in our words): the attacker takes its Attack (strength-skill), changes both by the modifiers of the
range band the attack is made at, and rolls one d20 per point of strength. Each die is increased by the
defender's armor; a die whose total is *below* the skill (strictly less) is an on-target attack. The
defender's dodge then cancels that many on-target attacks; what is left are hits, and the defender gains
that much distress. A defender whose distress exceeds (strictly) its health is defeated.
Strength below 0 after modifiers rolls no dice. The attacker rolls every die; the defender rolls none (armor and
dodge are numbers, not dice), so an attack is one roll of the attacker's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


def attack_reads(skill: int, armor: int, dodge: int, defender: str) -> str:
    """How an attack's d20s are read, in the rule book's words: "each below 14 after Scout 20's +2 armor is on
    target; dodge 1 cancels 1" ("each below 14 is on target" without armor)."""
    reads = f"each below {skill} after {defender}'s {armor:+d} armor is on target" if armor else \
        f"each below {skill} is on target"
    return reads + (f"; dodge {dodge} cancels {dodge}" if dodge > 0 else "")


def read_attack(dice: Sequence[int], skill: int, armor: int, dodge: int) -> AttackRoll:
    """The attack's d20s read: a die is on target when die + armor < skill; dodge cancels that many."""
    totals = tuple(d + armor for d in dice)
    on_target = sum(1 for t in totals if t < skill)
    hits = max(0, on_target - max(0, dodge))
    return AttackRoll(len(dice), skill, armor, dodge, tuple(dice), totals, on_target, hits)
