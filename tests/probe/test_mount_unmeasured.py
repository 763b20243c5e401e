"""The ± of a mount never measured says what it may hide (rules/roster.py, vision/fuse.py): a topper's pin leaning
2° puts its card 0.06" off the base centre, so until `calibrate-mounts` has measured it every position from it
carries that much more, and the page marks the unit "mount not measured" (the trust issue's item 16)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from bench.mounts import (
    LEAN_DEG,
    MOUNT_BOARD,
    MOUNT_CAMERA_HEIGHT_IN,
    MOUNT_KINDS,
    MOUNT_SIZE,
    MountFrame,
    _calibrated,
    _scene,
    layout,
    placements,
    roster_for,
)
from rules.roster import MOUNT_LEAN_DEG, parse_roster
from session.pipeline import Pipeline
from vision.synth.render import camera_framing_board, render_scene

TOPPER: dict[str, Any] = {"tag": 12, "name": "Ulf", "profile": "warrior", "owner": "red", "base_mm": 32,
                          "base_height_in": 1.85, "tag_in": 0.7}


@pytest.mark.parametrize(("unit", "top", "allowance"), [
    ({}, {}, 1.725 * math.tan(math.radians(2.0))),  # never measured: a 2° lean, 1.725" above the base's top
    ({"mount_pm_in": 0.004}, {}, 0.0),  # measured: its own ± only
    ({"mount_pm_in": 0.0}, {}, 0.0),  # measured exact
    ({}, {"mount_lean_deg": 0.0}, 0.0),  # the roster says its pins stand square
    ({"mount_lean_deg": 5.0}, {"mount_lean_deg": 0.0}, 1.725 * math.tan(math.radians(5.0))),  # the unit's own word
])
def test_what_an_unmeasured_mount_may_hide(unit: dict[str, Any], top: dict[str, Any], allowance: float) -> None:
    roster = parse_roster({"game": "valknut", **top, "units": [{**TOPPER, **unit}]})
    ulf = roster.units[12]
    assert ulf.mounts[0].unmeasured_pm_in == pytest.approx(allowance, abs=1e-9)
    assert ulf.mount_unmeasured is (allowance > 0.01)
    again = parse_roster(roster.to_json()).units[12]  # the roster keeps what it said, measured or not
    assert again.mount_pm_in == ulf.mount_pm_in and again.mount_lean_deg == ulf.mount_lean_deg


def test_a_flat_tag_is_not_marked_and_the_default_lean_is_two_degrees() -> None:
    flat = parse_roster({"game": "valknut", "units": [{**TOPPER, "base_height_in": 0.125, "tag_in": 0.75}]})
    assert MOUNT_LEAN_DEG == 2.0
    assert flat.units[12].mounts[0].unmeasured_pm_in == 0.0  # a tag flat on its base does not lean
    assert not flat.units[12].mount_unmeasured


def test_leaning_pins_fall_within_their_honest_pm_on_a_rendered_table() -> None:
    """Ten toppers whose pins lean 2° each its own way, a figure on every base, 1080p from 36" up: with the roster
    as a player writes it (no mount measured) every unit's measured centre lies within its ±; the ± no longer
    claims the detector's few thousandths."""
    pose = camera_framing_board(MOUNT_BOARD, MOUNT_CAMERA_HEIGHT_IN, 15.0, 0.0, MOUNT_SIZE)
    units = layout(0, 32.0)
    rendered = render_scene(_scene(pose, placements("lean", units)), np.random.default_rng([20261127, 16]))
    cal = _calibrated(rendered, "lean")
    kind = next(k for k in MOUNT_KINDS if k.table == "lean" and not k.fitted)
    result = Pipeline(cal, parse_roster(roster_for(kind, units))).process(MountFrame(0, 0.0, rendered.image))
    fixes = [f for f in result.fixes if f.tag in rendered.bases]
    assert len(fixes) >= 8
    lean_in = (1.85 - 0.125) * math.tan(math.radians(LEAN_DEG))
    errors = [math.hypot(f.x - rendered.bases[f.tag].center_in[0], f.y - rendered.bases[f.tag].center_in[1])
              for f in fixes]
    assert min(errors) > 0.8 * lean_in  # the lean is really there: 0.06" off
    assert all(e <= f.pm for e, f in zip(errors, fixes, strict=True)), [(round(e, 4), round(f.pm, 4))
                                                                      for e, f in zip(errors, fixes, strict=True)]
    assert all(f.pm < 0.08 for f in fixes)  # honest, not huge


def test_the_page_is_told_which_mounts_are_not_measured() -> None:
    from session.frame_message import unit_list
    from vision.positions import BaseFix

    roster = parse_roster({"game": "valknut", "units": [
        {**TOPPER, "tag": 12}, {**TOPPER, "tag": 13, "mount_pm_in": 0.004},
        {**TOPPER, "tag": 14, "base_height_in": 0.125, "tag_in": 0.75}]})
    fixes = [BaseFix(tag=t, x=5.0, y=5.0, z=1.85, yaw_deg=0.0, pm=0.004, tag_center_in=(5.0, 5.0), margin=80.0)
             for t in (12, 13, 14)]
    marks = {u["tag"]: u["mount_unmeasured"] for u in unit_list(fixes, roster, {})}
    assert marks == {12: True, 13: False, 14: False}
