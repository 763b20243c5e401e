"""Lens distortion fitted from the anchors when no camera file is given (calibration.focal.estimate_lens).

Measured (H10): on anchor corners projected through webcam-like lenses (k1 0 to -0.2, 720p-4K, tilts
10-40 degrees, 0.1 px noise) k1 comes back within ~0.003 and table positions within ~0.01"; a pinhole fit
of the same corners errs 0.1-0.8" and leaves a 0.5-9 px residual.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from calibration import focal
from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, load_calibration, save_calibration
from tests.test_calibration_table import (
    camera_centre,
    fitting_board,
    make_camera,
    make_pose,
    mapping_error,
    project_anchors,
)

SIZES = [(1280, 720), (1920, 1080), (2560, 1440), (3840, 2160)]


def _scene(size, k1, tilt, height=38.0, hfov=70.0, dist_rest=(0.0, 0.0, 0.0), yaw=20.0):
    board = fitting_board(size, hfov, height)
    cam = make_camera(size, hfov, [k1, dist_rest[0], dist_rest[1], dist_rest[2], 0.0])
    rvec, tvec = make_pose(board, height, tilt, yaw, 30.0)
    return board, cam, rvec, tvec, default_layout(*board)


@pytest.mark.parametrize("k1", [-0.05, -0.11, -0.2])
@pytest.mark.parametrize("size", SIZES)
def test_radial_distortion_is_estimated_from_the_anchors(size: tuple[int, int], k1: float) -> None:
    rng = np.random.default_rng(int(-k1 * 100) + size[0])
    tilt = float(rng.uniform(10, 40))
    board, cam, rvec, tvec, layout = _scene(size, k1, tilt, height=float(rng.uniform(26, 48)))
    anchors = project_anchors(layout, cam, rvec, tvec, {i: i % 4 for i in range(4)}, 0.1, rng)
    cal = calibrate_table(anchors, layout, size, None)
    assert cal.focal_source == "estimated" and cal.distortion_source == "estimated"
    assert cal.camera.dist[0] == pytest.approx(k1, abs=0.01)
    assert cal.camera.K[0, 0] == pytest.approx(cam.K[0, 0], rel=0.01)
    assert cal.residual_px < 0.2
    assert mapping_error(cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], rng) < 0.03


def test_pinhole_alone_would_miss_by_a_tenth_of_an_inch() -> None:
    """The same corners with distortion fitting off (the pinhole model only) err several times the target."""
    size = (1920, 1080)
    board, cam, rvec, tvec, layout = _scene(size, -0.11, 25.0)
    anchors = project_anchors(layout, cam, rvec, tvec, {i: 0 for i in range(4)}, 0.1, np.random.default_rng(5))
    fitted = calibrate_table(anchors, layout, size, None)
    obj = np.vstack([layout.anchors[i].corners_in(0) for i in range(4)])
    img = np.vstack([anchors[i] for i in range(4)])
    pinhole = focal.fit_lens(obj, img, size, fitted.camera.focal_px, ())
    assert pinhole is not None and pinhole.rms_px > 1.0
    assert fitted.residual_px < 0.2
    as_cal = TableCalibration(
        CameraModel(size, pinhole.K, pinhole.dist, 0.0), pinhole.rvec, pinhole.tvec, board, layout,
        pinhole.rms_px, 0.0, (0, 1, 2, 3), "estimated",
    )
    rng = np.random.default_rng(6)
    assert as_cal.distortion_source == "none"
    assert mapping_error(as_cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], rng) > 0.1
    assert mapping_error(fitted, cam, rvec, tvec, board, [0.0, 0.125, 3.0], rng) < 0.02


def test_a_lens_without_distortion_keeps_dist_zero() -> None:
    for size in SIZES:
        rng = np.random.default_rng(size[1])
        board, cam, rvec, tvec, layout = _scene(size, 0.0, float(rng.uniform(10, 40)))
        anchors = project_anchors(layout, cam, rvec, tvec, {i: 1 for i in range(4)}, 0.1, rng)
        cal = calibrate_table(anchors, layout, size, None)
        assert cal.distortion_source == "none" and not np.any(cal.camera.dist)
        assert cal.focal_source == "estimated"
        assert mapping_error(cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], rng) < 0.03


def test_second_radial_and_tangential_terms_are_fitted_when_the_corners_demand_them() -> None:
    size = (2560, 1440)
    board, cam, rvec, tvec, layout = _scene(size, -0.2, 28.0, dist_rest=(0.06, 8e-4, -8e-4))
    anchors = project_anchors(layout, cam, rvec, tvec, {i: 2 for i in range(4)}, 0.05, np.random.default_rng(8))
    cal = calibrate_table(anchors, layout, size, None)
    assert cal.distortion_source == "estimated"
    assert np.count_nonzero(cal.camera.dist[:4]) >= 3  # k1 and more
    assert cal.residual_px < 0.1
    assert mapping_error(cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], np.random.default_rng(9)) < 0.03


def test_straight_down_distorted_camera_assumes_focal_but_fits_the_lens() -> None:
    """Looking straight down the anchors cannot tell f, but each anchor's radial squash still shows k1:
    f is assumed (with the warning), the distortion is fitted at that f and the table plane maps exactly."""
    size, hfov, height = (1920, 1080), 70.0, 40.0
    board = fitting_board(size, hfov, height)
    cam = make_camera(size, hfov, [-0.11, 0.0, 0.0, 0.0, 0.0])
    layout = default_layout(*board)
    rvec, tvec = make_pose(board, height, 0.0, 15.0)
    anchors = project_anchors(layout, cam, rvec, tvec, {i: 3 for i in range(4)}, 0.05, np.random.default_rng(4))
    cal = calibrate_table(anchors, layout, size, None)
    assert cal.focal_source == "assumed" and cal.warning is not None
    assert cal.distortion_source == "estimated"
    assert cal.camera.K[0, 0] == pytest.approx(focal.assumed_focal_px(size))
    # k1 in normalised units scales with f^2: the same pixel distortion at the assumed focal length.
    assert cal.camera.dist[0] * cam.K[0, 0] ** 2 / cal.camera.K[0, 0] ** 2 == pytest.approx(-0.11, abs=0.01)
    assert cal.residual_px < 0.1
    assert mapping_error(cal, cam, rvec, tvec, board, [0.0], np.random.default_rng(5)) < 0.01


@pytest.mark.parametrize("wrong_board", [(44.0, 30.0), (30.0, 40.0), (22.0, 30.0)])
def test_distortion_does_not_absorb_a_wrong_board(wrong_board: tuple[float, float]) -> None:
    size = (1920, 1080)
    board = (30.0, 22.0)
    cam = make_camera(size, 75.0, [-0.11, 0.0, 0.0, 0.0, 0.0])
    rvec, tvec = make_pose(board, 40.0, 25.0, 15.0)
    anchors = project_anchors(default_layout(*board), cam, rvec, tvec, {0: 1, 1: 1, 2: 3, 3: 0})
    assert calibrate_table(anchors, default_layout(*board), size, None).distortion_source == "estimated"
    with pytest.raises(CalibrationError, match="do not fit the layout"):
        calibrate_table(anchors, default_layout(*wrong_board), size, None)


def test_implausible_distortion_is_refused() -> None:
    assert focal.plausible_distortion(np.array([-0.2, 0.0, 0.0, 0.0, 0.0]), 1.0)
    assert not focal.plausible_distortion(np.array([-0.5, 0.0, 0.0, 0.0, 0.0]), 1.0)  # folds back at r = 0.82
    assert not focal.plausible_distortion(np.array([0.8, 0.0, 0.0, 0.0, 0.0]), 1.0)  # 80 % stretch


def test_distortion_source_round_trips_and_old_files_still_load(tmp_path: Path) -> None:
    size = (1920, 1080)
    board, cam, rvec, tvec, layout = _scene(size, -0.11, 25.0)
    anchors = project_anchors(layout, cam, rvec, tvec, {i: 0 for i in range(4)})
    cal = calibrate_table(anchors, layout, size, None)
    path = tmp_path / "cal.json"
    save_calibration(cal, path)
    obj = json.loads(path.read_text())
    assert obj["version"] == 1 and obj["distortion_source"] == "estimated"
    again = load_calibration(path)
    assert again.distortion_source == "estimated"
    np.testing.assert_allclose(again.camera.dist, cal.camera.dist)
    px = np.array([[300.0, 200.0], [1700.0, 900.0]])
    np.testing.assert_allclose(again.image_to_table(px, 1.0), cal.image_to_table(px, 1.0), atol=1e-9)
    # A file written before the field existed: worked out from the focal source and the camera's dist.
    del obj["distortion_source"]
    path.write_text(json.dumps(obj))
    assert load_calibration(path).distortion_source == "estimated"
    obj["camera"]["dist"] = [0.0] * 5
    path.write_text(json.dumps(obj))
    assert load_calibration(path).distortion_source == "none"
    obj["distortion_source"] = "guessed"
    path.write_text(json.dumps(obj))
    with pytest.raises(CalibrationError, match="distortion_source 'guessed' is unknown"):
        load_calibration(path)
    with_camera = calibrate_table(anchors, layout, size, cam)
    assert with_camera.distortion_source == "intrinsics"
    assert np.linalg.norm(with_camera.camera_position_in - camera_centre(rvec, tvec)) < 1e-5
    assert math.isfinite(with_camera.residual_px)
