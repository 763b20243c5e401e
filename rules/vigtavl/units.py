"""Vigtavl's stats table, transcribed exactly, and what each piece is (knight, ship, artillery, development).

STATS_TABLE holds the seed's "Stats" section cell for cell as text (blank cells are ""); `UNITS` and
`DEVELOPMENTS` read numbers out of it. Nothing here is invented: where the prose and the table name a piece
differently, both names are accepted (`PROFILE_ALIASES`) and the choice is documented.

Named options where the seed is silent or contradicts itself (never the author's words):

- "names": the table's row "Knight" is the prose's "Infantry" (and Setup's "soldiers"); "Galley" in the table
  is the prose's "Galleon". We call them "infantry" and "galleon"; "knight" as a *category* means every land
  unit (infantry, archer, cavalry), as the prose's "two categories of combat units, Knights and Ships".
- "limit": a Limit of "2/turn" caps how many of that kind a player builds in one turn; a bare number ("3",
  "1") caps how many of that kind a player may own at once (the prose says "build limit 1" for the galleon,
  and Setup already gives 2 freighters and 1 galleon); "∞" and blank mean no cap.
- "artillery movement": the table's Movement Range is blank; the prose says artillery is moved by a knight
  "up to the same movement range as the unit", so artillery moves with (and as far as) the knight moving it.
"""

from __future__ import annotations

from dataclasses import dataclass

STATS_HEADER: tuple[str, ...] = ("Unit", "Cost", "Limit", "Attack Range", "Movement Range")
STATS_TABLE: tuple[tuple[str, str, str, str, str], ...] = (
    ("Knight", "1", "2/turn", "", "3"),
    ("Archer", "2", "2/turn", "3", "2"),
    ("Cavalry", "3", "2/turn", "", "4"),
    ("Caravel", "1", "2/turn", "", "6"),
    ("Freighter", "2", "3", "NA", "5"),
    ("Galley", "3", "1", "3", "4"),
    ("Wall", "1", "∞", "", ""),
    ("Camp", "1", "", "", ""),
    ("Fort", "2", "", "", ""),
    ("Castle", "3", "", "", ""),
    ("Artillery", "2", "1", "3", ""),
)
"""The seed's stats table, row for row (the "-" separator rows left out)."""

TABLE_ROW_OF: dict[str, str] = {
    "infantry": "Knight",
    "archer": "Archer",
    "cavalry": "Cavalry",
    "caravel": "Caravel",
    "freighter": "Freighter",
    "galleon": "Galley",
    "wall": "Wall",
    "encampment": "Camp",
    "fort": "Fort",
    "castle": "Castle",
    "artillery": "Artillery",
}
"""Our name for each piece -> the row of STATS_TABLE it reads."""

PROFILE_ALIASES: dict[str, str] = {
    "infantry": "infantry",
    "knight": "infantry",
    "soldier": "infantry",
    "archer": "archer",
    "cavalry": "cavalry",
    "caravel": "caravel",
    "freighter": "freighter",
    "galleon": "galleon",
    "galley": "galleon",
    "artillery": "artillery",
    "encampment": "encampment",
    "camp": "encampment",
    "fort": "fort",
    "castle": "castle",
}
"""Every name a roster or scenario may use for a piece -> our name."""

KNIGHTS = ("infantry", "archer", "cavalry")
SHIPS = ("caravel", "freighter", "galleon")
COMBAT_UNITS = KNIGHTS + SHIPS
DEVELOPMENT_KINDS = ("encampment", "fort", "castle")
RANGED = ("archer", "galleon", "artillery")
"""The prose: "Archers, Artillery and Galleys are capable of ranged attacks" (the table gives each range 3)."""

OCCUPANCY_LIMIT = 3
"""Occupancy: "Each hex on the map may be occupied by only 3 or less units"."""
OCCUPANCY_WEIGHT: dict[str, int] = {
    **{k: 1 for k in COMBAT_UNITS},
    "encampment": 1,
    "fort": 2,
    "artillery": 2,
    "castle": 3,
}
"""Occupancy: "Encampments count as 1 unit ... Forts and artillery count 2 and castles count 3"; units 1 each.
Prisoners count 0 (and, by the setup's 3-knight freighters, so do units aboard a freighter)."""

FREIGHTER_CAPACITY = 3
"""Freighter: "+3 transport ... can transport up to 3 land units of any type"."""
ACTIONS_PER_ACTIVATION = 2
"""Activating Units: "Each activated unit can execute 2 actions"; "Each action must be unique"."""


@dataclass(frozen=True)
class Stats:
    """One row of the stats table read as numbers.

    cost: gold to build, silver to activate, dice in combat. per_turn: build cap per turn (a "2/turn" Limit).
    owned: most a player may own at once (a bare-number Limit). attack_range: hexes (0 for none). movement: hexes.
    """

    name: str
    row: str
    cost: int
    per_turn: int | None
    owned: int | None
    attack_range: int
    movement: int


def _read(name: str) -> Stats:
    row = next(r for r in STATS_TABLE if r[0] == TABLE_ROW_OF[name])
    _, cost, limit, attack, movement = row
    per_turn = int(limit.split("/")[0]) if limit.endswith("/turn") else None
    owned = int(limit) if limit.isdigit() else None
    return Stats(
        name=name,
        row=row[0],
        cost=int(cost),
        per_turn=per_turn,
        owned=owned,
        attack_range=int(attack) if attack.isdigit() else 0,
        movement=int(movement) if movement.isdigit() else 0,
    )


STATS: dict[str, Stats] = {name: _read(name) for name in TABLE_ROW_OF}
"""Every piece's numbers, by our name."""

STARTING_UNITS: tuple[tuple[str, int], ...] = (
    ("infantry", 3),
    ("archer", 2),
    ("cavalry", 1),
    ("caravel", 3),
    ("freighter", 2),
    ("galleon", 1),
)
"""Setup: "3 soldiers, 2 archers, 1 cavalry / 3 caravels, 2 freighters, 1 galleon"."""

MAP_SIDE_BY_PLAYERS: dict[int, int] = {2: 6, 3: 7, 4: 8}
"""Setup, Size: "2 players - 6 hex edges, 3 players - 7, 4 players - 8" (hexes along each side of the map)."""

INCOME_GOLD = 6
INCOME_SILVER = 6
"""Gold / Silver: "At the beginning of each player's turn he receives 6 gold" (and 6 silver)."""

BUILDS_PER_TURN = 2
BUILDS_PER_TURN_WITH_CASTLE = 3
"""Building Units: "2 knights or 2 ships or 1 knight and 1 ship (unless he has built a castle ... 3)"."""

RANGED_HIT_FACES: dict[int, int] = {1: 3, 2: 2, 3: 1}
"""Ranged: a die of 1-3 hits at range 1, 1-2 at range 2, only 1 at range 3."""
BREACH_HIT_FACE = 3
"""Breaching: "If the result of any die is a 1, 2 or 3 the breach is successful"."""
FLANK_DICE: dict[int, int] = {0: 0, 1: 1, 2: 2, 3: 3}
"""Flanking by turns of 60 degrees away from the front: front 0, flank +1, rear flank +2, rear +3."""
FLANK_NAMES: dict[int, str] = {0: "front", 1: "flank", 2: "rear flank", 3: "rear"}
ATTRITION_ATTEMPT = 3
ATTRITION_DICE = 2
"""Attrition: "add 2 additional dice for attacking the same hex from the same direction 3 times"."""
OVERWHELM_DICE = 6
"""Overwhelm: "If tactical advantages increase the number of attack dice to 6 or more"."""
LAST_DEVELOPMENT_BONUS = 3
"""Seizing an opponent's last development: "the victor receives 3 victory tokens in addition"."""
RETALIATION_SILVER = 1
"""Retaliation: "the player who lost the battle receives 1 silver token"."""
ROUNDS_PER_PHASE = 2
PHASES = ("placement", "build", "battle")
"""Phases: "3 phases that are 2 rounds each"."""
LAST_ROUND = ROUNDS_PER_PHASE * len(PHASES)


def canonical(profile: str) -> str | None:
    """Our name for a roster/scenario profile, or None if it names no Vigtavl piece."""
    return PROFILE_ALIASES.get(profile.strip().lower())


def is_knight(kind: str) -> bool:
    return kind in KNIGHTS


def is_ship(kind: str) -> bool:
    return kind in SHIPS
