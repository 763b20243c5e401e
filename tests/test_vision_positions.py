"""vision.positions: base centres measured at the tag's own height, yaw, roster offsets and the ±."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, collect_anchors
from vision.positions import measure_bases, smallest_tag_px, tag_on_plane
from vision.synth.render import BasePlacement, Rendered, Scene, camera_framing_board, render_scene
from vision.tags import TagObservation, detect_tags, gray_frame

BOARD = (30.0, 22.0)
DIST = [-0.15, 0.03, 0.0, 0.0, 0.0]


def _measure(
    bases: tuple[BasePlacement, ...], seed: int = 0
) -> tuple[Rendered, TableCalibration, list[TagObservation]]:
    pose = camera_framing_board(BOARD, 34.0, 28.0, -8.0, (1920, 1080), DIST)
    r = render_scene(Scene.at(pose, BOARD, bases=bases, anchor_turns={1: 3, 3: 2}, noise_sigma=1.5), seed)
    tags = list(detect_tags(gray_frame(r.image)))
    layout = default_layout(*BOARD)
    cal = calibrate_table(
        collect_anchors(((t.id, t.corners_px) for t in tags), layout), layout, (1920, 1080), r.camera
    )
    return r, cal, tags


def _grid(z: float | None = None, offset: tuple[float, float] = (0.0, 0.0)) -> tuple[BasePlacement, ...]:
    rng = np.random.default_rng(11)
    return tuple(
        BasePlacement(
            10 + i,
            2.0 + 3.2 * (i % 9),
            2.0 + 4.4 * (i // 9),
            z_in=float(rng.uniform(0, 3)) if z is None else z,
            yaw_deg=float(rng.uniform(-180, 180)),
            tag_in=0.75,
            tag_offset_in=offset,
        )
        for i in range(45)
    )


def test_bases_are_measured_on_their_own_height() -> None:
    bases = _grid()
    r, cal, tags = _measure(bases)
    fixes = measure_bases(tags, cal, {b.tag: b.z_in for b in bases})
    assert {f.tag for f in fixes} == {b.tag for b in bases}
    errors = [math.hypot(f.x - b.x, f.y - b.y) for f, b in zip(sorted(fixes, key=lambda f: f.tag), bases)]
    assert max(errors) < 0.01
    for f, b in zip(sorted(fixes, key=lambda f: f.tag), bases):
        assert f.z == b.z_in
        assert abs((f.yaw_deg - b.yaw_deg + 180) % 360 - 180) < 0.5


def test_measuring_on_the_table_plane_would_bend_positions_by_parallax() -> None:
    """The same tags 3" up, measured as if they lay at 0.125": tenths of an inch off, growing outward."""
    bases = _grid(z=3.0)
    _, cal, tags = _measure(bases, 1)
    right = measure_bases(tags, cal, {b.tag: 3.0 for b in bases})
    wrong = measure_bases(tags, cal)  # default 0.125"
    truth = {b.tag: (b.x, b.y) for b in bases}
    err_right = max(math.hypot(f.x - truth[f.tag][0], f.y - truth[f.tag][1]) for f in right)
    err_wrong = max(math.hypot(f.x - truth[f.tag][0], f.y - truth[f.tag][1]) for f in wrong)
    assert err_right < 0.01
    assert err_wrong > 0.5


def test_roster_offset_turns_with_the_base() -> None:
    """A tag 0.3" off its base's centre (in the base's frame): the base centre comes back wherever it faces."""
    bases = _grid(z=0.125, offset=(0.3, -0.1))
    _, cal, tags = _measure(bases, 2)
    with_offset = measure_bases(tags, cal, offsets={b.tag: b.tag_offset_in for b in bases})
    without = measure_bases(tags, cal)
    truth = {b.tag: (b.x, b.y) for b in bases}
    for f in with_offset:
        assert math.hypot(f.x - truth[f.tag][0], f.y - truth[f.tag][1]) < 0.01
        assert math.hypot(f.tag_center_in[0] - f.x, f.tag_center_in[1] - f.y) == pytest.approx(
            math.hypot(0.3, 0.1), abs=0.01
        )
    for f in without:
        assert math.hypot(f.x - truth[f.tag][0], f.y - truth[f.tag][1]) == pytest.approx(
            math.hypot(0.3, 0.1), abs=0.01
        )


def test_anchors_are_not_bases() -> None:
    r, cal, tags = _measure(_grid(z=0.125))
    ids = {f.tag for f in measure_bases(tags, cal)}
    assert ids.isdisjoint(cal.layout.anchors)
    anchor = next(t for t in tags if t.id == 2)
    centre, yaw = tag_on_plane(anchor, cal, 0.0)
    assert np.allclose(centre, cal.layout.anchors[2].centre, atol=0.01)
    assert yaw == pytest.approx(0.0, abs=0.3)


def test_plus_minus_covers_the_error_and_grows_with_distance() -> None:
    bases = _grid()
    r, cal, tags = _measure(bases, 3)
    fixes = measure_bases(tags, cal, {b.tag: b.z_in for b in bases})
    truth = {b.tag: (b.x, b.y) for b in bases}
    pms = np.array([f.pm for f in fixes])
    errs = np.array([math.hypot(f.x - truth[f.tag][0], f.y - truth[f.tag][1]) for f in fixes])
    assert np.all(pms > 0) and np.all(pms < 0.02)
    assert np.mean(errs <= pms) >= 0.9
    near = min(fixes, key=lambda f: f.y)
    far = max(fixes, key=lambda f: f.y)
    assert far.pm > near.pm  # the far side (+y, away from a camera leaning toward -y) has fewer px per inch


def test_smallest_tag_px_matches_the_far_corner() -> None:
    """Conservative (the worst direction of the worst spot) but close to the smallest tag really seen."""
    spots = [(0.0, 0.0), (30.0, 0.0), (30.0, 22.0), (0.0, 22.0), (15.0, 11.0), (15.0, 22.0)]
    bases = tuple(BasePlacement(10 + i, x, y, z_in=0.0, tag_in=0.75) for i, (x, y) in enumerate(spots))
    r, cal, _ = _measure(bases, 4)
    smallest_true = min(t.side_px for t in r.tags.values() if not t.anchor)
    estimate = smallest_tag_px(cal, 0.75, 0.0)
    assert 0.8 * smallest_true < estimate <= smallest_true * 1.01
