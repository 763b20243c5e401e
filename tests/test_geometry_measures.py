"""Measures with their ±, base distances, the engagement zone and "wholly within", against hand-computed values."""

from __future__ import annotations

import math

import pytest
from shapely.geometry import box

from rules.engine import Outcome, Placement
from rules.geometry import (
    Measure,
    centre_distance,
    combined_pm,
    edge_distance,
    engagement_zone,
    wholly_within,
)


@pytest.mark.parametrize(
    "value,pm,limit,expected",
    [
        (5.9, 0.05, 6.0, Outcome.LEGAL),
        (6.0, 0.0, 6.0, Outcome.LEGAL),
        (6.3, 0.02, 6.0, Outcome.ILLEGAL),
        (6.03, 0.05, 6.0, Outcome.TOO_CLOSE_TO_CALL),
        (5.97, 0.05, 6.0, Outcome.TOO_CLOSE_TO_CALL),
    ],
)
def test_measure_at_most_says_too_close_to_call_inside_the_pm(value: float, pm: float, limit: float, expected: Outcome) -> None:
    assert Measure(value, pm).at_most(limit) is expected


@pytest.mark.parametrize(
    "value,pm,expected",
    [(0.5, 0.1, Outcome.LEGAL), (-0.2, 0.1, Outcome.ILLEGAL), (0.05, 0.1, Outcome.TOO_CLOSE_TO_CALL), (0.0, 0.0, Outcome.LEGAL)],
)
def test_measure_at_least(value: float, pm: float, expected: Outcome) -> None:
    assert Measure(value, pm).at_least(0.0) is expected


def test_measure_text_and_sum() -> None:
    assert Measure(6.3, 0.02).text() == '6.30" ± 0.02"'
    total = Measure(3.0, 0.03) + Measure(4.0, 0.04)
    assert total.value == 7.0 and total.pm == pytest.approx(0.05)


def test_edge_distance_is_centre_distance_minus_radii() -> None:
    a, b = Placement(10, 0.0, 0.0, pm=0.03), Placement(11, 3.0, 4.0, pm=0.04)
    assert centre_distance(a, b).value == pytest.approx(5.0)
    m = edge_distance(a, 0.63, b, 0.5)
    assert m.value == pytest.approx(5.0 - 1.13)
    assert m.pm == pytest.approx(0.05)
    assert combined_pm(0.03, 0.04) == pytest.approx(0.05)


def test_edge_distance_never_below_zero() -> None:
    assert edge_distance(Placement(10, 0, 0), 1.0, Placement(11, 1.5, 0), 1.0).value == 0.0


def test_edge_distance_ignores_height() -> None:
    assert edge_distance(Placement(10, 0, 0, z=3), 0.5, Placement(11, 2, 0), 0.5).value == pytest.approx(1.0)


def test_engagement_zone_lists_enemies_within_1_inch_edge_to_edge() -> None:
    positions = {
        10: Placement(10, 5, 5),
        11: Placement(11, 6.5, 5),  # gap 0.5: an enemy within 1"
        12: Placement(12, 5, 7.2),  # gap 1.2: too far
        13: Placement(13, 5, 3.9),  # gap 0.1 but an ally
        14: Placement(14, 5, 7.0, pm=0.05),  # gap exactly 1.0 ± 0.05: too close to call
    }
    radii = dict.fromkeys(positions, 0.5)
    owners = {10: "red", 11: "blue", 12: "blue", 13: "red", 14: "blue"}
    found = engagement_zone(10, positions, radii, owners)
    assert [(u, round(m.value, 3), o) for u, m, o in found] == [
        (11, 0.5, Outcome.LEGAL),
        (14, 1.0, Outcome.TOO_CLOSE_TO_CALL),
    ]


def test_wholly_within_measures_the_base_edge_to_the_area_edge() -> None:
    area = box(0, 0, 10, 11)
    assert wholly_within(Placement(10, 9.0, 5.0), 0.5, area).value == pytest.approx(0.5)
    assert wholly_within(Placement(10, 9.7, 5.0), 0.5, area).value == pytest.approx(-0.2)
    outside = wholly_within(Placement(10, 12.0, 5.0), 0.5, area)
    assert outside.value == pytest.approx(-2.5)
    assert outside.at_least(0) is Outcome.ILLEGAL
    assert math.isclose(wholly_within(Placement(10, 5, 5, pm=0.1), 0.5, area).pm, 0.1)
