"""Table calibration against ground truth: anchor corners projected with a known camera and pose.

Measured with these generators (seeded): with intrinsics, exact corners give the pose to < 1e-6" and
image_to_table to < 1e-5"; with 0.1 px corner noise image_to_table errs < 0.01" at 0, 0.125 and 3" up.
Without intrinsics (square pixels, centred principal point) the focal length comes back exact from exact
corners for tilts of 5-40 degrees, and within ~2 % (5 deg) to 0.1 % (40 deg) with 0.1 px noise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration import focal
from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from calibration.layout import Anchor, AnchorLayout, default_layout
from calibration.table import (
    INCONSISTENT_IN,
    TableCalibration,
    calibrate_table,
    collect_anchors,
    load_calibration,
    save_calibration,
)

SIZES = [(1280, 720), (1920, 1080), (2560, 1440), (3840, 2160)]


def make_camera(size: tuple[int, int], hfov_deg: float, dist: list[float] | None = None, pp_off=(0.0, 0.0)) -> CameraModel:
    w, h = size
    f = w / 2 / math.tan(math.radians(hfov_deg) / 2)
    K = np.array([[f, 0, (w - 1) / 2 + pp_off[0]], [0, f, (h - 1) / 2 + pp_off[1]], [0, 0, 1]])
    return CameraModel(size, K, np.zeros(5) if dist is None else np.array(dist, float), 0.1)


def make_pose(
    board: tuple[float, float], height_in: float, tilt_deg: float, yaw_deg: float, tilt_axis_deg: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """A camera `height_in` up, aimed at the board centre: image turned by yaw, then tilted about the image
    axis at `tilt_axis_deg` from the image x axis."""
    R0 = np.diag([1.0, -1.0, -1.0])  # straight down, image x along table +x, image y along table -y
    yaw = math.radians(yaw_deg)
    Rz = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]])
    axis = np.array([math.cos(math.radians(tilt_axis_deg)), math.sin(math.radians(tilt_axis_deg)), 0.0])
    Rt = cv2.Rodrigues(axis * math.radians(tilt_deg))[0]
    R = Rt @ Rz @ R0
    d = R.T @ np.array([0.0, 0.0, 1.0])
    C = np.array([board[0] / 2, board[1] / 2, 0.0]) - height_in / -d[2] * d
    return cv2.Rodrigues(R)[0].ravel(), -R @ C


def project_anchors(
    layout: AnchorLayout, cam: CameraModel, rvec: np.ndarray, tvec: np.ndarray, turns: dict[int, int],
    noise_px: float = 0.0, rng: np.random.Generator | None = None,
) -> dict[int, np.ndarray]:
    out = {}
    for i, a in layout.anchors.items():
        p = cv2.projectPoints(a.corners_in(turns[i]), rvec, tvec, cam.K, cam.dist)[0].reshape(4, 2)
        if noise_px:
            assert rng is not None
            p = p + rng.normal(0, noise_px, p.shape)
        out[i] = p
    return out


def in_frame(anchors: dict[int, np.ndarray], size: tuple[int, int]) -> bool:
    p = np.vstack(list(anchors.values()))
    return bool(p.min() >= 0 and p[:, 0].max() <= size[0] - 1 and p[:, 1].max() <= size[1] - 1)


def fitting_board(size: tuple[int, int], hfov: float, height: float) -> tuple[float, float]:
    """A board whose anchors stay in frame for a camera this high (the frame's short side is the limit)."""
    short = 2 * height * math.tan(math.radians(hfov) / 2) * size[1] / size[0]
    return (float(round(short * 0.8)), float(round(short * 0.5)))


def camera_centre(rvec: np.ndarray, tvec: np.ndarray) -> np.ndarray:
    return -cv2.Rodrigues(rvec)[0].T @ tvec


def mapping_error(cal: TableCalibration, cam: CameraModel, rvec, tvec, board, heights, rng) -> float:
    n = 40
    pts = np.column_stack([rng.uniform(0, board[0], n), rng.uniform(0, board[1], n), np.resize(heights, n)])
    px = cv2.projectPoints(pts, rvec, tvec, cam.K, cam.dist)[0].reshape(-1, 2)
    back = cal.image_to_table(px, pts[:, 2])
    return float(np.max(np.linalg.norm(back - pts[:, :2], axis=1)))


def _cases(seed: int, n: int):
    rng = np.random.default_rng(seed)
    made = 0
    while made < n:
        size = SIZES[made % len(SIZES)]
        hfov = rng.uniform(60, 78)
        height = rng.uniform(26, 48)
        tilt = rng.uniform(0, 40)
        yaw = rng.uniform(0, 360)
        board = fitting_board(size, hfov, height)
        rvec, tvec = make_pose(board, height, tilt, yaw, rng.uniform(0, 180))
        turns = {i: (i + made) % 4 for i in range(4)}
        yield rng, size, hfov, height, tilt, board, rvec, tvec, turns
        made += 1


def test_pose_and_mapping_with_intrinsics_and_distortion_exact_corners() -> None:
    checked = 0
    for rng, size, hfov, _h, _tilt, board, rvec, tvec, turns in _cases(1, 48):
        cam = make_camera(size, hfov, [rng.uniform(-0.3, 0.05), rng.uniform(-0.05, 0.1), 0.001, -0.001, 0.0],
                          (rng.uniform(-25, 25), rng.uniform(-15, 15)))
        layout = default_layout(*board)
        anchors = project_anchors(layout, cam, rvec, tvec, turns)
        if not in_frame(anchors, size):
            continue
        cal = calibrate_table(anchors, layout, size, cam)
        checked += 1
        assert cal.focal_source == "intrinsics" and dict(cal.anchor_turns) == turns
        assert cal.anchors_seen == (0, 1, 2, 3)
        assert np.linalg.norm(cal.camera_position_in - camera_centre(rvec, tvec)) < 1e-5
        assert cal.residual_px < 1e-4 and cal.residual_in < 1e-5
        assert mapping_error(cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], rng) < 1e-5
    assert checked >= 18


def test_mapping_with_intrinsics_and_corner_noise_within_0_03in() -> None:
    worst, checked = 0.0, 0
    for rng, size, hfov, _h, _tilt, board, rvec, tvec, turns in _cases(2, 48):
        cam = make_camera(size, hfov, [rng.uniform(-0.3, 0.05), 0.02, 0.0, 0.0, 0.0])
        layout = default_layout(*board)
        anchors = project_anchors(layout, cam, rvec, tvec, turns, 0.1, rng)
        if not in_frame(anchors, size):
            continue
        cal = calibrate_table(anchors, layout, size, cam)
        checked += 1
        assert dict(cal.anchor_turns) == turns
        assert 0.05 < cal.residual_px < 0.2
        worst = max(worst, mapping_error(cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], rng))
    assert checked >= 18
    assert worst < 0.03  # measured ~0.008"


def test_focal_length_and_pose_estimated_without_intrinsics() -> None:
    checked = 0
    for rng, size, hfov, _h, tilt, board, rvec, tvec, turns in _cases(3, 60):
        if tilt < 5:
            continue
        cam = make_camera(size, hfov)
        layout = default_layout(*board)
        anchors = project_anchors(layout, cam, rvec, tvec, turns)
        if not in_frame(anchors, size):
            continue
        cal = calibrate_table(anchors, layout, size, None)
        checked += 1
        assert cal.focal_source == "estimated" and dict(cal.anchor_turns) == turns
        assert cal.camera.K[0, 0] == pytest.approx(cam.K[0, 0], rel=2e-5)
        assert np.linalg.norm(cal.camera_position_in - camera_centre(rvec, tvec)) < 2e-3
        assert abs(cal.tilt_deg - tilt) < 1e-4
        assert mapping_error(cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], rng) < 0.005
        cal.check_frame(size)
    assert checked >= 20


@pytest.mark.parametrize(("tilt", "tolerance"), [(10, 0.02), (20, 0.01), (30, 0.005), (40, 0.005)])
def test_focal_estimate_with_corner_noise_per_tilt(tilt: float, tolerance: float) -> None:
    rng = np.random.default_rng(int(tilt))
    size, hfov, height = (1920, 1080), 70.0, 40.0
    board = fitting_board(size, hfov, height)
    cam = make_camera(size, hfov)
    layout = default_layout(*board)
    errors, mapped = [], []
    for k in range(12):
        rvec, tvec = make_pose(board, height, tilt, 30.0 * k)
        anchors = project_anchors(layout, cam, rvec, tvec, {i: k % 4 for i in range(4)}, 0.1, rng)
        cal = calibrate_table(anchors, layout, size, None)
        assert cal.focal_source == "estimated"
        errors.append(cal.camera.K[0, 0] / cam.K[0, 0] - 1)
        mapped.append(mapping_error(cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], rng))
    assert float(np.sqrt(np.mean(np.square(errors)))) < tolerance
    assert max(mapped) < 0.03


@pytest.mark.parametrize("yaw", [0.0, 90.0, 45.0, 135.0])
@pytest.mark.parametrize("tilt_axis", [0.0, 90.0])
def test_tilt_about_one_image_axis_only(yaw: float, tilt_axis: float) -> None:
    """Yaw 0/90: the tilt axis is a table axis (the orthogonality constraint is void); 45/135: a diagonal
    (the equal-length constraint is void). The other constraint must carry the estimate."""
    size, hfov, height = (1920, 1080), 70.0, 36.0
    board = fitting_board(size, hfov, height)
    cam = make_camera(size, hfov)
    layout = default_layout(*board)
    rvec, tvec = make_pose(board, height, 25.0, yaw, tilt_axis)
    anchors = project_anchors(layout, cam, rvec, tvec, {0: 0, 1: 1, 2: 2, 3: 3})
    H = cv2.findHomography(np.vstack([layout.anchors[i].corners_in(i)[:, :2] for i in range(4)]),
                           np.vstack([anchors[i] for i in range(4)]))[0]
    assert focal.focal_from_homography(H, size) == pytest.approx(cam.K[0, 0], rel=1e-6)
    cal = calibrate_table(anchors, layout, size, None)
    assert cal.focal_source == "estimated"
    assert cal.camera.K[0, 0] == pytest.approx(cam.K[0, 0], rel=1e-6)
    noisy = project_anchors(layout, cam, rvec, tvec, {0: 0, 1: 1, 2: 2, 3: 3}, 0.1, np.random.default_rng(7))
    cal = calibrate_table(noisy, layout, size, None)
    assert cal.camera.K[0, 0] == pytest.approx(cam.K[0, 0], rel=0.02)


def test_straight_down_camera_assumes_the_focal_length_and_says_so() -> None:
    size, hfov, height = (1920, 1080), 75.0, 40.0
    board = fitting_board(size, hfov, height)
    cam = make_camera(size, hfov)
    layout = default_layout(*board)
    rvec, tvec = make_pose(board, height, 0.0, 33.0)
    anchors = project_anchors(layout, cam, rvec, tvec, {0: 3, 1: 0, 2: 1, 3: 2})
    cal = calibrate_table(anchors, layout, size, None)
    assert cal.focal_source == "assumed"
    assert cal.warning is not None and "calibrate-camera" in cal.warning and "\n" not in cal.warning
    f_assumed = focal.assumed_focal_px(size)
    assert cal.camera.K[0, 0] == pytest.approx(f_assumed)
    # The table plane is a pure homography: exact whatever f is.
    rng = np.random.default_rng(0)
    assert mapping_error(cal, cam, rvec, tvec, board, [0.0], rng) < 1e-6
    # Heights scale with the assumed f: the camera is put f_assumed / f_true times as high.
    assert cal.camera_height_in == pytest.approx(height * f_assumed / cam.K[0, 0], rel=1e-6)
    assert cal.tilt_deg < 1e-6


def test_nearly_straight_down_is_assumed_not_guessed() -> None:
    size, hfov, height = (1280, 720), 70.0, 40.0
    board = fitting_board(size, hfov, height)
    cam = make_camera(size, hfov)
    layout = default_layout(*board)
    rvec, tvec = make_pose(board, height, 1.5, 10.0)
    noisy = project_anchors(layout, cam, rvec, tvec, {i: 0 for i in range(4)}, 0.1, np.random.default_rng(3))
    cal = calibrate_table(noisy, layout, size, None)
    assert cal.focal_source == "assumed" and cal.focal_rel_std > focal.MAX_REL_STD


def test_principal_point_off_centre_costs_little_without_intrinsics() -> None:
    """A real lens's principal point is off centre by a few px; the estimate absorbs it."""
    size, hfov, height = (1920, 1080), 70.0, 40.0
    board = fitting_board(size, hfov, height)
    cam = make_camera(size, hfov, pp_off=(12.0, -8.0))
    layout = default_layout(*board)
    rvec, tvec = make_pose(board, height, 25.0, 20.0)
    cal = calibrate_table(project_anchors(layout, cam, rvec, tvec, {i: 0 for i in range(4)}), layout, size, None)
    assert cal.focal_source == "estimated"
    assert cal.camera.K[0, 0] == pytest.approx(cam.K[0, 0], rel=0.015)  # the tangential terms take up part of the offset
    assert mapping_error(cal, cam, rvec, tvec, board, [0.0, 0.125, 3.0], np.random.default_rng(1)) < 0.03


def test_a_tag_three_inches_up_maps_to_its_own_xy_not_the_table_intersection() -> None:
    size = (1920, 1080)
    board = (30.0, 22.0)
    cam = make_camera(size, 75.0, [-0.1, 0.02, 0, 0, 0])
    layout = default_layout(*board)
    rvec, tvec = make_pose(board, 40.0, 25.0, 0.0)
    cal = calibrate_table(project_anchors(layout, cam, rvec, tvec, {i: 0 for i in range(4)}), layout, size, cam)
    top = np.array([[2.0, 20.0, 3.0]])
    px = cal.table_to_image(top)
    np.testing.assert_allclose(cal.image_to_table(px, 3.0), [[2.0, 20.0]], atol=1e-6)
    on_table = cal.image_to_table(px, 0.0)[0]
    assert np.linalg.norm(on_table - [2.0, 20.0]) > 1.0  # parallax the height correction removes
    np.testing.assert_allclose(cal.table_to_image(np.array([[*on_table, 0.0]])), px, atol=1e-6)
    # vector heights
    pts = np.array([[5.0, 5.0, 0.0], [25.0, 3.0, 0.125], [15.0, 11.0, 3.0]])
    np.testing.assert_allclose(cal.image_to_table(cal.table_to_image(pts), pts[:, 2]), pts[:, :2], atol=1e-6)


def test_position_pm_is_two_sigma_and_grows_with_noise_and_distance() -> None:
    size = (1920, 1080)
    board = (30.0, 22.0)
    cam = make_camera(size, 75.0)
    layout = default_layout(*board)
    rvec, tvec = make_pose(board, 40.0, 30.0, 0.0)
    truth = {i: 0 for i in range(4)}
    rng = np.random.default_rng(4)
    cal = calibrate_table(project_anchors(layout, cam, rvec, tvec, truth, 0.1, rng), layout, size, cam)
    ends = np.array([[15.0, 0.0, 0.0], [15.0, 22.0, 0.0]])
    near, far = cal.table_to_image(ends[np.argsort(np.linalg.norm(ends - camera_centre(rvec, tvec), axis=1))])
    pm = cal.position_pm(np.array([near, far]), 0.0, 0.05)
    assert pm[1] > pm[0] > 0  # the far side of a tilted view spans more inches per pixel
    ipp = cal.inches_per_px(np.array([near]), 0.0)[0]
    sigma = math.sqrt(cal.residual_px**2 / 2 + 0.025**2)
    assert pm[0] == pytest.approx(2 * sigma * ipp)
    # Empirically: tag centres measured with 0.05 px corner noise on this calibration stay inside ± 95 % of the time.
    centres = np.array([[15.0, 11.0, 0.0]])
    px = cal.table_to_image(centres)[0]
    noisy = px + rng.normal(0, 0.05 / 2, (2000, 2))
    exact = cal.image_to_table(px[None], 0.0)[0]
    spread = np.linalg.norm(cal.image_to_table(noisy, 0.0) - exact, axis=1)
    assert np.mean(spread < cal.position_pm(px[None], 0.0, 0.05)[0]) > 0.95
    assert cal.position_pm(px[None], 0.0, 0.5)[0] > cal.position_pm(px[None], 0.0, 0.05)[0]


# --- bad inputs ---------------------------------------------------------------------------------------


def _good(size=(1920, 1080), board=(30.0, 22.0)):
    cam = make_camera(size, 75.0)
    layout = default_layout(*board)
    rvec, tvec = make_pose(board, 40.0, 25.0, 15.0)
    return cam, layout, project_anchors(layout, cam, rvec, tvec, {0: 1, 1: 1, 2: 3, 3: 0})


def test_missing_anchor_is_named() -> None:
    cam, layout, anchors = _good()
    del anchors[2]
    with pytest.raises(CalibrationError, match=r"^Anchor 2 was not found in the image; make sure all 4 anchor tags"):
        calibrate_table(anchors, layout, (1920, 1080), cam)


def test_one_anchor_only_names_the_three_missing() -> None:
    cam, layout, anchors = _good()
    only = {0: anchors[0]}
    with pytest.raises(CalibrationError, match=r"^Anchors 1, 2 and 3 were not found"):
        calibrate_table(only, layout, (1920, 1080), None)


def test_anchor_seen_twice_is_refused() -> None:
    _cam, layout, anchors = _good()
    tags = [(i, c) for i, c in anchors.items()] + [(3, anchors[3] + 200.0), (17, anchors[0] + 50.0)]
    with pytest.raises(CalibrationError, match=r"^Anchor 3 was seen twice in the image"):
        collect_anchors(tags, layout)
    assert sorted(collect_anchors(tags[:4] + tags[5:], layout)) == [0, 1, 2, 3]  # base tags are ignored


@pytest.mark.parametrize("with_camera", [True, False])
@pytest.mark.parametrize("wrong_board", [(44.0, 30.0), (30.0, 40.0), (22.0, 30.0)])
def test_wrong_board_is_inconsistent(with_camera: bool, wrong_board: tuple[float, float]) -> None:
    cam, _layout, anchors = _good()
    with pytest.raises(CalibrationError, match=r"^Anchor \d is \d+\.\d\d\" from where a .* board puts it.*check --board") as err:
        calibrate_table(anchors, default_layout(*wrong_board), (1920, 1080), cam if with_camera else None)
    assert float(str(err.value).split(" is ")[1].split('"')[0]) > INCONSISTENT_IN


def test_swapped_anchors_are_inconsistent() -> None:
    cam, layout, anchors = _good()
    swapped = {0: anchors[1], 1: anchors[0], 2: anchors[2], 3: anchors[3]}
    with pytest.raises(CalibrationError, match="do not fit the layout"):
        calibrate_table(swapped, layout, (1920, 1080), cam)


def test_camera_of_another_resolution_is_refused() -> None:
    cam, layout, anchors = _good()
    with pytest.raises(CalibrationError, match=r"^The image is 1280x720 pixels but the camera file was calibrated at 1920x1080"):
        calibrate_table(anchors, layout, (1280, 720), cam)


def test_calibration_used_at_another_resolution_is_refused() -> None:
    cam, layout, anchors = _good()
    cal = calibrate_table(anchors, layout, (1920, 1080), cam)
    cal.check_frame((1920, 1080))
    with pytest.raises(CalibrationError, match=r"^The frame is 1280x720 pixels but the calibration was made at 1920x1080"):
        cal.check_frame((1280, 720))


def test_malformed_anchor_corners_are_refused() -> None:
    cam, layout, anchors = _good()
    anchors[1] = anchors[1][:3]
    with pytest.raises(CalibrationError, match="Anchor 1's corners must be 4"):
        calibrate_table(anchors, layout, (1920, 1080), cam)


# --- files --------------------------------------------------------------------------------------------


def test_calibration_file_round_trips(tmp_path: Path) -> None:
    cam, layout, anchors = _good()
    for camera in (cam, None):
        cal = calibrate_table(anchors, layout, (1920, 1080), camera)
        path = tmp_path / "cal.json"
        save_calibration(cal, path)
        obj = json.loads(path.read_text())
        assert obj["format"] == "tablesight-calibration" and obj["version"] == 1
        assert obj["image_size"] == [1920, 1080] and obj["camera"]["image_size"] == [1920, 1080]
        assert obj["board_in"] == [30.0, 22.0] and len(obj["layout"]["anchors"]) == 4
        again = load_calibration(path)
        assert again.focal_source == cal.focal_source and again.anchors_seen == cal.anchors_seen
        assert dict(again.anchor_turns) == {0: 1, 1: 1, 2: 3, 3: 0}
        px = np.array([[600.0, 500.0], [1500.0, 300.0]])
        np.testing.assert_allclose(again.image_to_table(px, 0.125), cal.image_to_table(px, 0.125), atol=1e-9)
        assert again.residual_in == cal.residual_in


def _saved(tmp_path: Path) -> dict:
    cam, layout, anchors = _good()
    path = tmp_path / "good.json"
    save_calibration(calibrate_table(anchors, layout, (1920, 1080), cam), path)
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o.update(version=2), "is version 2 but this Tablesight reads version 1"),
        (lambda o: o.pop("version"), "is version None"),
        (lambda o: o.update(format="other"), "is not a Tablesight calibration"),
        (lambda o: o.pop("pose"), "has no 'pose'"),
        (lambda o: o.pop("camera"), "has no 'camera'"),
        (lambda o: o["camera"].pop("K"), "camera has no 'K'"),
        (lambda o: o["pose"].update(rvec=[1, 2]), "rvec and tvec of three numbers"),
        (lambda o: o.update(image_size=[640, 480]), "image_size disagrees"),
        (lambda o: o.update(focal_source="guessed"), "focal_source 'guessed' is unknown"),
        (lambda o: o["layout"].update(anchors=[]), "layout needs an \"anchors\" list"),
        (lambda o: o.update(anchor_turns=[0, 1]), "malformed pose, board or residual"),
        (lambda o: o["pose"].update(tvec=[0, 0, 0]), "puts the camera on or below the table"),
        (lambda o: o["pose"].update(tvec=[0, 0, -30]), "puts the camera on or below the table"),
        (lambda o: o.update(board_in=[0, 0]), "positive board size"),
        (lambda o: o.update(residual_px=float("nan")), "residual_px is NaN, which is not a number"),
        (lambda o: o.update(residual_in=-1), "finite residuals"),
    ],
)
def test_malformed_calibration_file_is_refused(tmp_path: Path, change, message: str) -> None:
    obj = _saved(tmp_path)
    change(obj)
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(CalibrationError, match=message) as err:
        load_calibration(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_calibration_file_missing_or_not_json(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="does not exist; check the path or make one with tablesight calibrate"):
        load_calibration(tmp_path / "none.json")
    path = tmp_path / "cal.json"
    path.write_text("{\"format\": ")
    with pytest.raises(CalibrationError, match="is not valid JSON"):
        load_calibration(path)


@pytest.mark.parametrize("with_camera", [True, False])
def test_custom_layouts_of_three_and_five_anchors_some_raised(with_camera: bool) -> None:
    """Three anchors (no centre homography: one anchor's corners decide the turns), one 1.5" up on a block;
    five anchors with one mid-edge."""
    size, board = (1920, 1080), (24.0, 16.0)
    cam = make_camera(size, 75.0, [-0.05, 0.01, 0, 0, 0] if with_camera else None)
    rvec, tvec = make_pose(board, 44.0, 28.0, 160.0)
    three = AnchorLayout(board, {
        7: Anchor(7, (-1.5, -1.5), 2.0), 8: Anchor(8, (25.5, -1.5), 3.0, 1.5), 9: Anchor(9, (12.0, 17.5), 2.0)})
    five = AnchorLayout(board, {**default_layout(*board).anchors, 4: Anchor(4, (12.0, -1.5), 1.5)})
    for layout in (three, five):
        turns = {i: (i * 3) % 4 for i in layout.ids}
        anchors = project_anchors(layout, cam, rvec, tvec, turns)
        assert in_frame(anchors, size)
        cal = calibrate_table(anchors, layout, size, cam if with_camera else None)
        assert dict(cal.anchor_turns) == turns and cal.anchors_seen == layout.ids
        assert np.linalg.norm(cal.camera_position_in - camera_centre(rvec, tvec)) < 1e-3
        assert mapping_error(cal, cam, rvec, tvec, board, [0.0, 3.0], np.random.default_rng(2)) < 1e-3
