"""Line of sight base to base: clear / partial / blocked, the elevation model, and the vectorised all-pairs form."""

from __future__ import annotations

import random
import time

import pytest

from rules.engine import Placement
from rules.geometry import all_pairs_sight, line_of_sight
from rules.terrain import TerrainPiece


def piece(name: str, x0: float, y0: float, x1: float, y1: float, kinds: tuple[str, ...], h: float) -> TerrainPiece:
    return TerrainPiece(name, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)), frozenset(kinds), h)


WALL = piece("wall", 6.9, 0, 7.1, 10, ("blocking",), 2.0)
A, B = Placement(10, 2, 5), Placement(11, 12, 5)


def test_sight_clear_with_no_terrain() -> None:
    s = line_of_sight(A, 0.5, B, 0.5, [])
    assert (s.verdict, s.blockers, s.fraction_clear) == ("clear", (), 1.0)


def test_sight_blocked_names_the_blocking_piece() -> None:
    s = line_of_sight(A, 0.5, B, 0.5, [WALL])
    assert (s.verdict, s.blockers, s.fraction_clear) == ("blocked", ("wall",), 0.0)


def test_sight_viewer_on_ruin_sees_over_a_lower_wall() -> None:
    # eye 3 + 1.25 = 4.25" at x=2, target eye 1.25" at x=12: at the wall (x 6.9-7.1) the line is
    # 4.25 - 3 * 0.51 = 2.72" high, above the 2" wall
    up = Placement(10, 2, 5, z=3.0)
    assert line_of_sight(up, 0.5, B, 0.5, [WALL]).verdict == "clear"
    # a 3" wall is not seen over: 2.72 < 3
    tall = piece("tall wall", 6.9, 0, 7.1, 10, ("blocking",), 3.0)
    assert line_of_sight(up, 0.5, B, 0.5, [tall]).verdict == "blocked"


def test_sight_two_viewers_both_above_a_wall() -> None:
    low = piece("low wall", 6.9, 0, 7.1, 10, ("blocking",), 1.0)  # both eyes at 1.25" pass over 1"
    assert line_of_sight(A, 0.5, B, 0.5, [low]).verdict == "clear"


def test_sight_partial_when_some_lines_are_blocked() -> None:
    # lines cross the bases at y = 4.5, 4.75, 5, 5.25, 5.5; a wall up to y=4.9 blocks the first two
    half = piece("wall", 6.9, 0, 7.1, 4.9, ("blocking",), 2.0)
    s = line_of_sight(A, 0.5, B, 0.5, [half])
    assert (s.verdict, s.blockers, s.fraction_clear) == ("partial", ("wall",), pytest.approx(0.6))


def test_sight_obscuring_piece_gives_partial() -> None:
    hedge = piece("hedge", 6, 0, 8, 10, ("obscuring",), 2.0)
    s = line_of_sight(A, 0.5, B, 0.5, [hedge])
    assert (s.verdict, s.blockers, s.fraction_clear) == ("partial", ("hedge",), 0.0)


def test_sight_grazing_a_corner_does_not_block() -> None:
    # the topmost line runs along y = 5.5 and only touches the corner of a block whose top edge is y = 5.5
    corner = TerrainPiece("post", ((7, 5.5), (8, 6.5), (7, 7.5), (6, 6.5)), frozenset({"blocking"}), 2.0)
    assert line_of_sight(A, 0.5, B, 0.5, [corner]).verdict == "clear"


def test_sight_ignores_terrain_that_neither_blocks_nor_obscures() -> None:
    pond = piece("pond", 6, 0, 8, 10, ("water", "difficult"), 1.0)
    assert line_of_sight(A, 0.5, B, 0.5, [pond]).verdict == "clear"


def _random_table(seed: int, n_units: int, n_pieces: int) -> tuple[list[Placement], list[TerrainPiece]]:
    rng = random.Random(seed)
    pieces = []
    for k in range(n_pieces):
        x, y = rng.uniform(1, 26), rng.uniform(1, 18)
        w, h = rng.uniform(0.3, 4), rng.uniform(0.3, 4)
        kind = rng.choice(["blocking", "obscuring", "blocking"])
        if k % 5 == 4:  # an L-shaped (non-convex) piece
            poly = ((x, y), (x + w, y), (x + w, y + 0.5), (x + 0.5, y + 0.5), (x + 0.5, y + h), (x, y + h))
            pieces.append(TerrainPiece(f"piece {k}", poly, frozenset({kind}), rng.uniform(0.5, 4)))
        else:
            pieces.append(piece(f"piece {k}", x, y, x + w, y + h, (kind,), rng.uniform(0.5, 4)))
    units = [
        Placement(10 + i, rng.uniform(0, 30), rng.uniform(0, 22), rng.choice([0.0, 0.0, 3.0]), 0.02)
        for i in range(n_units)
    ]
    return units, pieces


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_all_pairs_sight_agrees_with_the_pairwise_function(seed: int) -> None:
    units, pieces = _random_table(seed, 25, 12)
    radii = {u.unit: 0.5 + 0.1 * (u.unit % 3) for u in units}
    fast = all_pairs_sight(units, radii, pieces)
    assert len(fast) == 25 * 24
    kinds = set()
    for a in units:
        for b in units:
            if a.unit < b.unit:
                slow = line_of_sight(a, radii[a.unit], b, radii[b.unit], pieces)
                assert fast[(a.unit, b.unit)] == slow, (a, b)
                assert fast[(b.unit, a.unit)] == slow
                kinds.add(slow.verdict)
    assert kinds == {"clear", "partial", "blocked"}


def test_all_pairs_sight_time_for_40_units_and_20_pieces() -> None:
    units, pieces = _random_table(7, 40, 20)
    radii = {u.unit: 0.63 for u in units}
    all_pairs_sight(units, radii, pieces)
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        result = all_pairs_sight(units, radii, pieces)
        times.append(time.perf_counter() - t0)
    print(f"all_pairs_sight, 40 units x 20 pieces (780 pairs, 3900 lines): best {min(times) * 1000:.1f} ms, "
          f"median {sorted(times)[5] * 1000:.1f} ms")
    assert len(result) == 40 * 39
