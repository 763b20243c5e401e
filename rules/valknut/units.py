"""Valknut units: the stat line, the four Paths and their Path Boons, Spirit Blessings, and the stats a unit
has right now.

The stat line is the rule book's own ("Unit Statistics": every unit starts with HP 10, Speed 6", Armor 0,
Evasion 1, Accuracy 1, Damage 2, Actions 2); it is the only profile, "soldier".

Paths (a Step is taken at the beginning of each turn; steps beyond the fourth still give the stat increase
and scale the fourth boon, as its wording says "for each additional step"):
- Bear: +1 Armor per step. 1: roll 1d6 per point of damage taken, each 6 ignores a point. 2: action
  "bear_restore". 3: 6" aura giving allies this unit's Bear passives; stats cannot be lowered by the enemy.
  4: damage blocked by Armor does not spill over to HP; regain 2 HP (+1 per further Bear step) each turn.
- Deer: +2" Speed, +1 Accuracy per step. 1: an enemy it damages is Marked (-1 Evasion per Mark, reset each
  turn). 2: carries two Runestones, no movement penalty. 3: an enemy it damages has its Speed halved until
  the next turn. 4: +1 action per activation (+1 per further Deer step).
- Raven: +1 Evasion, +1 Spirit per step; its steps decide which Spirit Blessings it can give (below).
- Wolf: +1 Damage per step. 1: a Move may go ceil(Speed/2)" further if it ends within 1" of an enemy.
  2: a missed attack still deals ceil(Damage/2). 3: an Attack action is two attacks; it attacks a unit
  disengaging from within 1". 4: once a turn (+1 per further Wolf step), 0 HP becomes 1 HP instead.

Our readings where the text is loose (documented in docs/scenarios/valknut.md):
- Deer 3's "it's speed" is the damaged enemy's (a boon hurts the enemy); each such hit halves again.
- Bear 3's aura passes on the Bear *passives* (boons 1, 3, 4), not the per-step Armor.
- A Spirit Blessing's size follows its giver's current Raven steps; a blessing lasts until its giver assigns
  its Spirits again or either unit is killed. "Reduce their Speed by 2"" is a hindrance, not a bonus, so
  Raven 4 does not enlarge it; Bear 3 protects against it when the giver is an enemy.
- Stats never go below 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from rules.engine import Inches, RosterError, UnitId

PATHS = ("bear", "deer", "raven", "wolf")
PENALTIES = ("accuracy", "speed", "damage", "armor")
"""The permanent penalties a unit redeployed after reinforcements are depleted chooses from."""

BLESSINGS = {
    # effect: (Raven steps the giver needs, size per Spirit, size with Raven 4+)
    "speed": (1, 2.0, 4.0),
    "evasion": (1, 1.0, 2.0),
    "armor": (2, 1.0, 2.0),
    "accuracy": (2, 1.0, 2.0),
    "damage": (3, 1.0, 2.0),
    "slow": (3, -2.0, -2.0),
}
"""Spirit Blessings by the Raven step that grants them (Path of the Raven, steps 1-4)."""


@dataclass(frozen=True)
class Profile:
    """A stat line. source says whose numbers these are."""

    name: str
    hp: int
    speed_in: Inches
    armor: int
    evasion: int
    accuracy: int
    damage: int
    actions: int
    source: str


PROFILES = {
    "soldier": Profile("soldier", 10, 6.0, 0, 1, 1, 2, 2, "Valknut rule book, Unit Statistics (every unit starts so)"),
}


def profile_named(name: str, where: str) -> Profile:
    """The profile called `name`; raises RosterError naming the choices."""
    key = name.strip().lower()
    if key in ("unit", "runic soldier", "runic_soldier"):
        key = "soldier"
    if key not in PROFILES:
        raise RosterError(f'{where}: Valknut has no profile "{name}"; every unit is a "soldier".')
    return PROFILES[key]


@dataclass(frozen=True)
class Steps:
    """Steps taken down each Path."""

    bear: int = 0
    deer: int = 0
    raven: int = 0
    wolf: int = 0

    def of(self, path: str) -> int:
        return int(getattr(self, path))

    def plus(self, path: str) -> Steps:
        return replace(self, **{path: self.of(path) + 1})


@dataclass(frozen=True)
class Blessing:
    """A Spirit from `source` (a unit with Raven steps) on `target`, giving `effect` (a key of BLESSINGS)."""

    source: UnitId
    target: UnitId
    effect: str


@dataclass(frozen=True)
class Stone:
    """A carried Runestone: the section of the stockpile it came from (0 when not known)."""

    origin: int = 0


@dataclass(frozen=True)
class UnitState:
    """One unit's state.

    hp, armor: current values (armor may exceed its defined value after Bear's restore).
    marks: Deer Marks on it this turn; halvings: Deer-3 speed halvings on it this turn.
    wolf_saves: Wolf-4 saves used this turn. penalties: permanent redeploy penalties.
    alive: False once killed until redeployed; on_table: deployed and alive.
    redeploy_target: the d6 score the next redeploy roll needs (4, 3, 2; 1 = guaranteed).
    ready: the redeploy roll succeeded and it waits to be placed. penalty_due: reinforcements were depleted
    when it died, so it must choose a penalty when it is redeployed.
    stepped: took this turn's Path step. activated: its activation this turn is over.
    actions_taken: the actions of its current activation.
    """

    tag: UnitId
    owner: str
    name: str
    profile: str
    radius_in: Inches
    steps: Steps = Steps()
    hp: int = 10
    armor: int = 0
    marks: int = 0
    halvings: int = 0
    wolf_saves: int = 0
    penalties: tuple[str, ...] = ()
    carrying: tuple[Stone, ...] = ()
    alive: bool = True
    on_table: bool = False
    redeploy_target: int = 4
    ready: bool = False
    penalty_due: bool = False
    stepped: bool = False
    activated: bool = False
    actions_taken: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stats:
    """What a unit has right now, after steps, penalties, Blessings, Marks and halvings."""

    hp_max: int
    speed_in: Inches
    armor: int
    evasion: int
    accuracy: int
    damage: int
    actions: int
    climb_factor: float
    capacity: int


def permanent(unit: UnitState) -> tuple[Inches, int, int, int, int]:
    """Speed, armor, evasion, accuracy, damage from the profile, Path steps and penalties (no temporaries)."""
    p = PROFILES[unit.profile]
    s = unit.steps
    pen = unit.penalties
    speed = p.speed_in + 2.0 * s.deer - 2.0 * pen.count("speed")
    armor = p.armor + s.bear - pen.count("armor")
    evasion = p.evasion + s.raven
    accuracy = p.accuracy + s.deer - pen.count("accuracy")
    damage = p.damage + s.wolf - pen.count("damage")
    return max(0.0, speed), max(0, armor), max(0, evasion), max(0, accuracy), max(0, damage)


def blessing_size(effect: str, giver_raven: int) -> float:
    need, size, big = BLESSINGS[effect]
    if giver_raven < need:
        return 0.0
    return big if giver_raven >= 4 else size


def stats_of(
    unit: UnitState,
    blessings: tuple[Blessing, ...],
    units: dict[UnitId, UnitState],
    protected: bool,
) -> Stats:
    """The unit's stats now. `protected`: Bear 3 (its own or an ally's aura) keeps the enemy from lowering them."""
    speed, armor, evasion, accuracy, damage = permanent(unit)
    temp = {"speed": 0.0, "evasion": 0.0, "armor": 0.0, "accuracy": 0.0, "damage": 0.0, "slow": 0.0}
    climb = 2.0
    for b in blessings:
        if b.target != unit.tag or b.source not in units:
            continue
        giver = units[b.source]
        if b.effect == "slow" and protected and giver.owner != unit.owner:
            continue
        temp[b.effect] += blessing_size(b.effect, giver.steps.raven)
        if giver.steps.raven >= 2:
            climb = 1.0
    if unit.carrying and unit.steps.deer < 2:
        speed = speed / 2.0  # carrying halves the permanent Speed; temporary bonuses are not halved
    speed = speed + temp["speed"] + temp["slow"]
    if not protected:
        speed = speed / (2 ** unit.halvings)
        evasion_now = evasion + temp["evasion"] - unit.marks
    else:
        evasion_now = evasion + temp["evasion"]
    p = PROFILES[unit.profile]
    extra_actions = max(0, unit.steps.deer - 3)
    return Stats(
        hp_max=p.hp,
        speed_in=max(0.0, speed),
        armor=max(0, armor + int(temp["armor"])),
        evasion=max(0, int(evasion_now)),
        accuracy=max(0, accuracy + int(temp["accuracy"])),
        damage=max(0, damage + int(temp["damage"])),
        actions=p.actions + extra_actions,
        climb_factor=climb,
        capacity=2 if unit.steps.deer >= 2 else 1,
    )


def to_hit(accuracy: int, evasion: int) -> int:
    """The To-Hit Number: Accuracy 2+ above Evasion 2+, 1 above 3+, equal 4+, 1 below 5+, 2+ below 6+."""
    diff = accuracy - evasion
    if diff >= 2:
        return 2
    if diff == 1:
        return 3
    if diff == 0:
        return 4
    if diff == -1:
        return 5
    return 6


def wolf_extra_in(speed_in: Inches) -> Inches:
    """Wolf 1: half the current Speed, rounded up to a whole inch."""
    return float(math.ceil(speed_in / 2.0 - 1e-9))


def wolf_saves_allowed(steps: Steps) -> int:
    """Wolf 4: once a turn, plus once for each Wolf step after the fourth."""
    return max(0, steps.wolf - 3)


def bear_regen(bear_level: int) -> int:
    """Bear 4: 2 HP at the beginning of each turn, +1 per Bear step after the fourth."""
    return 0 if bear_level < 4 else 2 + (bear_level - 4)
