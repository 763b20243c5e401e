"""`tablesight bench`'s mount rows (bench/mounts.py) in their quickest form (`--quick`: one table of 10 units a
mount and tilt): with a figure on every base, each tag mount's units found and base-centre error against the
render's truth, and the frames to find a unit again after a hand, as the live pipeline does it. Never a timing.
Run with -s for the table."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest

from bench.mounts import MOUNT_AGAIN_MAX, MOUNT_KINDS, MOUNT_TILTS, MOUNT_UNITS, mount_rows, mount_settings
from bench.report import MountRow, _rounded, format_table


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, float], MountRow]:
    got = mount_rows(quick=True)
    return {(r.mount, r.tilt_deg): r for r in got}


def _report(rows: dict[tuple[str, float], MountRow]) -> dict[str, Any]:
    """The smallest report `format_table` prints, with the mount rows in it."""
    machine = {"cores": 2, "usable_cores": 2, "machine": "Linux", "python": "3.11", "opencv": "5", "opencv_threads": 2,
               "numpy": "2", "pupil_apriltags": "1", "shapely": "2", "detector_threads": 1, "openblas_coretype": None,
               "load_average": [0.0, 0.0, 0.0]}
    settings = {"board_in": [30, 22], "bases": 40, "tag_in": [0.5, 1.0], "tag_height_in": [0, 3], "terrain_blocks": 3,
                "camera_height_in": 36, "camera_tilt_deg": 20, "frames": 1, "seed": 1, **mount_settings(True)}
    return {"machine": machine, "settings": settings, "vision": [], "rules": [], "tracker": [], "frame_costs": [],
            "seconds": 1.0, "mounts": [_rounded(asdict(r)) for r in rows.values()]}


@pytest.mark.slow
def test_every_mount_is_measured_at_every_tilt(rows: dict[tuple[str, float], MountRow]) -> None:
    assert set(rows) == {(k.key, t) for k in MOUNT_KINDS for t in MOUNT_TILTS}
    table = format_table(_report(rows))
    print("\n" + table[table.index("Mounts with") :].split("\n\n")[0])
    for r in rows.values():
        assert r.units == MOUNT_UNITS and 0 <= r.found <= r.units and r.image_size == (1920, 1080)
        assert r.moves == 0, r  # nothing moved: no phantom move, whatever the mount
        if r.found:
            assert r.error_p50_in <= r.error_p95_in <= r.error_max_in


@pytest.mark.slow
def test_a_tag_under_the_figure_is_not_seen(rows: dict[tuple[str, float], MountRow]) -> None:
    for tilt in MOUNT_TILTS:
        assert rows[("flat", tilt)].found < MOUNT_UNITS / 2, tilt


@pytest.mark.slow
def test_toppers_find_every_unit_and_measure_it_well(rows: dict[tuple[str, float], MountRow]) -> None:
    """Issue 15's targets: every topper found, p95 <= 0.02"; a 2 degree lean after mount calibration <= 0.03"."""
    for tilt in MOUNT_TILTS:
        top, lean, fitted = rows[("topper", tilt)], rows[("lean", tilt)], rows[("lean fitted", tilt)]
        for r in (top, lean, fitted):
            assert r.found == MOUNT_UNITS, r
        assert top.error_p95_in <= 0.02 and top.error_max_in <= 0.03
        # the lean puts the card (1.85 - 0.125) * tan(2 deg) = 0.060" off the base centre, where the roster says 0
        assert 0.05 <= lean.error_p50_in <= 0.07
        assert fitted.fitted == MOUNT_UNITS and fitted.fit_error_max_in is not None
        assert fitted.fit_error_max_in <= 0.01
        assert fitted.error_p95_in <= 0.03 and fitted.error_p95_in < lean.error_p95_in / 3


@pytest.mark.slow
def test_rim_tags_are_found_where_seen_and_two_rims_more_often(rows: dict[tuple[str, float], MountRow]) -> None:
    for tilt in MOUNT_TILTS:
        rim, two = rows[("rim", tilt)], rows[("two rims", tilt)]
        assert 1 <= rim.found <= MOUNT_UNITS and rim.found <= two.found
        assert two.found >= 0.8 * MOUNT_UNITS  # a figure hides at most one side of its base
        for r in (rim, two):
            assert r.error_max_in <= 0.03, r


@pytest.mark.slow
def test_a_unit_under_a_hand_is_found_again_at_once(rows: dict[tuple[str, float], MountRow]) -> None:
    """The hand hid the unit's every tag (and no anchor); the live detector has it back within a sweep, and at
    once for the mounts it sees (its window round the tag is kept while the tag is missing)."""
    for (mount, tilt), r in rows.items():
        if mount == "flat" and r.hand_tables == 0:
            continue  # no unit of that table was seen: no hand to pass over one
        assert r.hand_tables == 1 and r.hand_hidden and r.hand_anchors_clear, r
        assert r.found_again_worst is not None and 1 <= r.found_again_worst <= MOUNT_AGAIN_MAX, r
        if mount != "flat":
            assert r.found_again_worst == 1, (mount, tilt)


@pytest.mark.slow
def test_the_table_prints_the_mount_rows(rows: dict[tuple[str, float], MountRow]) -> None:
    report = _report(rows)
    table = format_table(report)
    section = table[table.index("Mounts with a 1.35\" figure") :]
    for r in report["mounts"]:
        line = next(x for x in section.splitlines() if x.startswith(r["label"]) and f"{r['tilt_deg']:>4.0f} " in x)
        assert f"{r['found']}/{r['units']}" in line
        if r["error_p95_in"] is not None:
            assert f"{r['error_p95_in']:.4f}" in line
    older = {k: v for k, v in report.items() if k != "mounts"}
    assert "Mounts with" not in format_table(older)  # a report written before the mount rows still prints
