"""The terrain JSON form: pieces, kinds, heights, tags, and clear errors naming the piece."""

from __future__ import annotations

import pytest

from rules.engine import Placement, RulesInputError
from rules.terrain import TerrainError, parse_terrain, place_terrain, terrain_to_json


def test_parse_terrain_reads_every_field() -> None:
    pieces = parse_terrain({"pieces": [
        {"name": "ruin", "kind": ["elevated", "obscuring"], "polygon": [[0, 0], [4, 0], [4, 3], [0, 3], [0, 0]],
         "height_in": 3, "climbable": True, "tag": 5},
        {"name": "wall", "kind": "blocking", "polygon": [[0, 0], [1, 0], [1, 1]], "height_in": 2},
    ]})
    ruin, wall = pieces
    assert ruin.kinds == frozenset({"elevated", "obscuring"})
    assert ruin.polygon == ((0, 0), (4, 0), (4, 3), (0, 3))  # the closing corner is dropped
    assert (ruin.height_in, ruin.climbable, ruin.tag) == (3.0, True, 5)
    assert wall.kinds == frozenset({"blocking"}) and wall.tag is None and wall.climbable
    assert parse_terrain(terrain_to_json(pieces)) == pieces


def test_terrain_error_is_a_rules_input_error() -> None:
    assert issubclass(TerrainError, RulesInputError)


@pytest.mark.parametrize(
    "entry,needle",
    [
        ({"name": "bowtie", "kind": ["blocking"], "polygon": [[0, 0], [2, 2], [2, 0], [0, 2]]},
         'Terrain piece "bowtie": polygon crosses itself'),
        ({"name": "line", "kind": ["blocking"], "polygon": [[0, 0], [1, 1], [2, 2]]},
         'Terrain piece "line": polygon has no area'),
        ({"name": "pond", "kind": ["swamp"], "polygon": [[0, 0], [1, 0], [1, 1]]},
         "Terrain piece \"pond\" has unknown kind 'swamp'"),
        ({"name": "stub", "kind": ["blocking"], "polygon": [[0, 0], [1, 0]]},
         'Terrain piece "stub": polygon has 2 corners'),
        ({"name": "tower", "kind": ["blocking"], "polygon": [[0, 0], [1, 0], [1, 1]], "height_in": -1},
         'Terrain piece "tower": height_in is -1'),
        ({"name": "odd", "kind": ["blocking"], "polygon": "square"}, 'Terrain piece "odd": polygon must be a list'),
    ],
)
def test_bad_piece_raises_terrain_error_naming_it(entry: dict[str, object], needle: str) -> None:
    with pytest.raises(TerrainError) as err:
        parse_terrain({"pieces": [entry]})
    assert needle in str(err.value)


def test_duplicate_names_are_refused() -> None:
    sq = [[0, 0], [1, 0], [1, 1]]
    with pytest.raises(TerrainError, match='"a" is listed twice'):
        parse_terrain({"pieces": [{"name": "a", "polygon": sq}, {"name": "a", "polygon": sq}]})


def test_tagged_piece_follows_its_tag() -> None:
    (crate,) = parse_terrain({"pieces": [{"name": "crate", "kind": ["blocking"], "tag": 5, "height_in": 1,
                                          "polygon": [[-1, -0.5], [1, -0.5], [1, 0.5], [-1, 0.5]]}]})
    placed = place_terrain([crate], {5: Placement(5, 10.0, 4.0, yaw_deg=90.0)})
    (moved,) = placed
    xs = sorted(round(x, 6) for x, _ in moved.polygon)
    ys = sorted(round(y, 6) for _, y in moved.polygon)
    assert xs == [9.5, 9.5, 10.5, 10.5] and ys == [3.0, 3.0, 5.0, 5.0]
    assert place_terrain([crate], {}) == ()  # its tag is not seen
