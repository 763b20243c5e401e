"""Camera advice for tag mounts (calibration/mount_advice.py): from the calibrated pose, where rim tags hide
behind their own figure, checked against the geometry of the sight line, for a camera overhead and a low one."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.layout import default_layout
from calibration.mount_advice import FIGURE_IN, RIM_OFFSET_IN, TAG_HEIGHT_IN, mount_advice
from calibration.table import TableCalibration
from vision.synth.render import camera_looking_at

BOARD = (30.0, 22.0)


def _calibration(height_in: float, tilt_deg: float) -> TableCalibration:
    pose = camera_looking_at(BOARD, height_in=height_in, tilt_deg=tilt_deg, yaw_deg=0.0, image_size=(1920, 1080),
                             hfov_deg=70.0)
    return TableCalibration(pose.camera, pose.rvec, pose.tvec, BOARD, default_layout(*BOARD), 0.2, 0.005, (0, 1, 2, 3),
                            "intrinsics")


def test_a_camera_high_overhead_sees_rim_tags_everywhere() -> None:
    cal = _calibration(40.0, 0.0)
    advice = mount_advice(cal)
    assert advice.camera_height_in == pytest.approx(40.0, abs=0.1)
    # the sight line from a far-side rim tag clears the figure within rim x height / (figure - tag height)
    assert advice.visible_within_in == pytest.approx(RIM_OFFSET_IN * (40.0 - TAG_HEIGHT_IN) / (FIGURE_IN - TAG_HEIGHT_IN),
                                                     abs=0.05)
    assert advice.hidden_fraction == 0.0
    assert "seen on every side of a base anywhere on this board" in advice.sentences()[1]


def test_a_low_tilted_camera_is_told_where_rim_tags_hide() -> None:
    cal = _calibration(20.0, 35.0)
    advice = mount_advice(cal)
    cam = cal.camera_position_in
    within = advice.visible_within_in
    # ground truth on a fine grid: a far-side rim tag is hidden where the sight line passes the figure's axis
    # below its top
    xs, ys = np.meshgrid(np.arange(0.05, BOARD[0], 0.1), np.arange(0.05, BOARD[1], 0.1))
    dist = np.hypot(xs - cam[0], ys - cam[1])
    line_at_axis = TAG_HEIGHT_IN + RIM_OFFSET_IN * (cam[2] - TAG_HEIGHT_IN) / np.maximum(dist, 1e-9)
    truth = float(np.mean(line_at_axis < FIGURE_IN))
    assert advice.hidden_fraction == pytest.approx(truth, abs=0.03)
    assert 0.2 < advice.hidden_fraction < 1.0
    text = advice.sentences()[1]
    assert f"{100 * advice.hidden_fraction:.0f} % of this board" in text and "use toppers" in text
    # raised to the height it names, no rim tag on this board hides any more
    corners = np.array([[0, 0], [BOARD[0], 0], [BOARD[0], BOARD[1]], [0, BOARD[1]]], dtype=float)
    farthest = max(math.dist(c, cam[:2]) for c in corners)
    assert RIM_OFFSET_IN * (advice.raise_to_in - TAG_HEIGHT_IN) / farthest >= FIGURE_IN - TAG_HEIGHT_IN - 1e-6
    assert within < farthest
