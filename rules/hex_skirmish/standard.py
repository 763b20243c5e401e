"""Hex Skirmish's example army and standard boards, as data: what a new game starts from on the setup page.

examples/rosters/hex_skirmish.json and examples/boards/ hold the same (tests/test_setup_hooks.py checks it).
"""

from __future__ import annotations

from typing import Any

from rules.engine import CellKind, OptionField

HEX_SKIRMISH_BOARD: dict[str, Any] = {'note': 'A small Hex Skirmish board: pointy hexes 1" centre to corner, radius 3 around (12", 12"); a lake '
         'of water in the middle, hills to the east and west (elevation in levels).',
 'layout': {'size_in': 1.0, 'orientation': 'pointy', 'origin': [12.0, 12.0], 'rotation_deg': 0.0},
 'hexagon': 3,
 'cells': [{'hex': [0, 0], 'terrain': 'water'},
           {'hex': [1, -1], 'terrain': 'water'},
           {'hex': [-1, 1], 'terrain': 'water'},
           {'hex': [2, 0], 'elevation': 2},
           {'hex': [3, -1], 'elevation': 4},
           {'hex': [-2, 0], 'elevation': 1},
           {'hex': [-3, 1], 'elevation': 3}]}


BOARDS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ('hex_skirmish', 'A lake between two hills (radius 3)', HEX_SKIRMISH_BOARD),
)

"""(file name, title for a player, board file) of each board the game comes with."""


EXAMPLE_ROSTER: dict[str, Any] = {'game': 'hex_skirmish',
 'note': "Example army cards made up by Tablesight for demonstration: not the author's (the rule document "
         'gives no cards).',
 'board': HEX_SKIRMISH_BOARD,
 'cards': [{'name': 'Shield Knight',
            'life': 4,
            'move': 4,
            'range': 1,
            'attack': 3,
            'defense': 4,
            'height': 5,
            'abilities': ['Counterstrike']},
           {'name': 'Hawk Rider',
            'life': 3,
            'move': 6,
            'range': 1,
            'attack': 2,
            'defense': 2,
            'height': 6,
            'abilities': ['Flying/Leaping']},
           {'name': 'Marsh Archer',
            'life': 2,
            'move': 5,
            'range': 6,
            'attack': 2,
            'defense': 2,
            'height': 5,
            'abilities': ['Water Ignore']},
           {'name': 'Stone Giant',
            'life': 6,
            'move': 4,
            'range': 1,
            'attack': 4,
            'defense': 3,
            'height': 12,
            'abilities': []}],
 'units': [{'tag': 10,
            'owner': 'red',
            'card': 'Shield Knight',
            'hex': [-2, -1],
            'profile': 'Shield Knight',
            'base_mm': 25,
            'base_height_in': 1.85,
            'tag_in': 0.7},
           {'tag': 11,
            'owner': 'red',
            'card': 'Marsh Archer',
            'hex': [-3, 2],
            'profile': 'Marsh Archer',
            'base_mm': 25,
            'base_height_in': 1.85,
            'tag_in': 0.7},
           {'tag': 20,
            'owner': 'blue',
            'card': 'Hawk Rider',
            'hex': [2, 1],
            'profile': 'Hawk Rider',
            'base_mm': 25,
            'base_height_in': 1.85,
            'tag_in': 0.7},
           {'tag': 21,
            'owner': 'blue',
            'card': 'Stone Giant',
            'hex': [3, -2],
            'profile': 'Stone Giant',
            'base_mm': 25,
            'base_height_in': 1.85,
            'tag_in': 0.7}]}

"""The example army as a roster file (rules/roster.py), tags 10 and up, toppers on every base."""

OPTION_FIELDS: tuple[OptionField, ...] = (
    OptionField(("options", "climb_cost"), "Climbing", "choice", "levels",
                "The Move points a figure spends to climb onto higher ground.",
                (("levels", "1 Move point per level climbed"), ("step_plus_levels", "1 for the step and 1 per level"))),
    OptionField(("options", "engagement_stops"), "Engagement stops a move", "bool", True,
                "A figure moving next to an opposing figure stops there."),
    OptionField(("options", "line_of_sight"), "Line of sight", "choice", "terrain",
                "Whether high ground between two figures blocks an attack.",
                (("terrain", "Higher ground on the line blocks it"), ("none", "Every figure sees every other"))),
)
"""The Hex Skirmish options where the seed is silent (rules/hex_skirmish/game.py)."""

CELL_KINDS: tuple[CellKind, ...] = (
    CellKind("land", "Ground"), CellKind("land", "Hill, 1 level", 1), CellKind("land", "Hill, 2 levels", 2),
    CellKind("land", "Hill, 3 levels", 3), CellKind("land", "Hill, 4 levels", 4), CellKind("water", "Water"),
)
"""The cells a Hex Skirmish board may have, in the order a click cycles them."""
