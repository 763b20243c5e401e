"""Dice, always rolled from a generator the caller passes in (tests seed it; nothing here is global)."""

from __future__ import annotations

import random


def roll(rng: random.Random, sides: int, count: int = 1) -> tuple[int, ...]:
    """`count` rolls of a fair die with faces 1..sides."""
    if sides < 2 or count < 0:
        raise ValueError(f"Cannot roll {count} dice of {sides} sides.")
    return tuple(rng.randint(1, sides) for _ in range(count))


def d20(rng: random.Random) -> int:
    """One twenty-sided die."""
    return rng.randint(1, 20)


def d6(rng: random.Random) -> int:
    """One six-sided die."""
    return rng.randint(1, 6)
