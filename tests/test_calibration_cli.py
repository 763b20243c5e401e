"""`tablesight calibrate` end to end: rendered frames (vision.synth.render) -> tag detection -> calibration file,
checked against the renderer's true camera and pose; every refusal is exit 2 and one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel, save_camera
from calibration.layout import default_layout
from calibration.table import load_calibration
from vision.synth.render import BasePlacement, Rendered, Scene, camera_looking_at, render_scene
from webui.cli import main

BOARD = (30.0, 22.0)
TURNS = {0: 1, 1: 2, 2: 3, 3: 0}


def _render(tmp_path: Path, size=(1280, 720), height=44.0, tilt=25.0, yaw=10.0, hfov=75.0, dist=None,
            bases=(), name="frame.png") -> tuple[Path, Rendered]:
    pose = camera_looking_at(BOARD, height, tilt, yaw, size, hfov, dist)
    rendered = render_scene(Scene.at(pose, BOARD, anchor_turns=TURNS, bases=tuple(bases)), 3)
    path = tmp_path / name
    cv2.imwrite(str(path), rendered.image)
    return path, rendered


def _centre(r: Rendered) -> np.ndarray:
    return -cv2.Rodrigues(np.asarray(r.rvec, float))[0].T @ np.asarray(r.tvec, float)


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def test_calibrate_rendered_frame_without_intrinsics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, truth = _render(tmp_path, bases=[BasePlacement(tag=12, x=4.0, y=18.0, z_in=3.0)])
    out = tmp_path / "cal.json"
    assert main(["calibrate", str(frame), "--board", "30x22", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "anchors seen: 0 (turned 90 deg), 1 (turned 180 deg), 2 (turned 270 deg), 3 (turned 0 deg)" in text
    assert "px RMS" in text and "\" RMS on the table" in text and "estimated from the anchors" in text
    assert "44.0\" above the table, tilted 25.0 deg" in text
    cal = load_calibration(out)
    assert cal.focal_source == "estimated" and cal.image_size == (1280, 720)
    assert cal.residual_px < 0.1 and cal.residual_in < 0.005
    assert cal.camera.K[0, 0] == pytest.approx(truth.camera.K[0, 0], rel=0.005)
    assert np.linalg.norm(cal.camera_position_in - _centre(truth)) < 0.3
    tag = truth.tags[12]
    got = cal.image_to_table(tag.center_px[None], 3.0)[0]
    assert np.linalg.norm(got - np.array(tag.center_in[:2])) < 0.03


def test_calibrate_with_intrinsics_removes_distortion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, truth = _render(tmp_path, size=(1920, 1080), tilt=35.0, yaw=200.0, dist=[-0.2, 0.05, 0, 0, 0],
                           bases=[BasePlacement(tag=15, x=26.0, y=3.0, z_in=0.125)])
    cam_file = tmp_path / "cam.json"
    save_camera(CameraModel(truth.camera.image_size, truth.camera.K, truth.camera.dist, 0.2), cam_file)
    out = tmp_path / "cal.json"
    assert main(["calibrate", str(frame), "--board", "30x22", "--intrinsics", str(cam_file), "-o", str(out)]) == 0
    assert "from the camera file" in capsys.readouterr().out
    cal = load_calibration(out)
    assert cal.focal_source == "intrinsics" and cal.residual_px < 0.1
    assert np.linalg.norm(cal.camera_position_in - _centre(truth)) < 0.1
    tag = truth.tags[15]
    assert np.linalg.norm(cal.image_to_table(tag.center_px[None], 0.125)[0] - tag.center_in[:2]) < 0.01


def test_straight_down_frame_warns_that_focal_was_assumed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, truth = _render(tmp_path, tilt=0.0, height=46.0, yaw=0.0)
    out = tmp_path / "cal.json"
    assert main(["calibrate", str(frame), "--board", "30x22", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "(assumed)" in captured.out and "run tablesight calibrate-camera" in captured.err
    cal = load_calibration(out)
    assert cal.focal_source == "assumed"
    np.testing.assert_allclose(cal.camera_position_in[:2], _centre(truth)[:2], atol=0.05)


def test_missing_anchor_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, truth = _render(tmp_path)
    image = cv2.imread(str(frame))
    assert image is not None
    corners = truth.tags[2].corners_px
    centre = corners.mean(axis=0)
    cv2.fillConvexPoly(image, np.round(centre + 1.6 * (corners - centre)).astype(np.int32), (80, 100, 90))
    cv2.imwrite(str(frame), image)
    out = tmp_path / "cal.json"
    assert main(["calibrate", str(frame), "--board", "30x22", "-o", str(out)]) == 2
    assert _error(capsys).startswith("Anchor 2 was not found in the image;")
    assert not out.exists()


def test_anchor_id_on_a_base_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, _ = _render(tmp_path, bases=[BasePlacement(tag=1, x=12.0, y=10.0, tag_in=1.5, base_mm=50.0)])
    assert main(["calibrate", str(frame), "--board", "30x22", "-o", str(tmp_path / "cal.json")]) == 2
    assert _error(capsys).startswith("Anchor 1 was seen twice in the image;")


def test_wrong_board_exits_2_inconsistent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, _ = _render(tmp_path)
    assert main(["calibrate", str(frame), "--board", "40x30", "-o", str(tmp_path / "cal.json")]) == 2
    err = _error(capsys)
    assert err.startswith("Anchor ") and "from where a 40x30 board puts it" in err and "check --board" in err


def test_camera_file_of_another_resolution_is_scaled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Same aspect ratio: the lens is scaled to the photo (more in tests/test_calibration_lens_cli.py)."""
    frame, truth = _render(tmp_path)
    cam_file = tmp_path / "cam.json"
    save_camera(CameraModel(truth.camera.image_size, truth.camera.K, np.zeros(5), 0.2).scaled_to((1920, 1080)), cam_file)
    assert main(["calibrate", str(frame), "--board", "30x22", "--intrinsics", str(cam_file), "-o", str(tmp_path / "c.json")]) == 0
    assert "The lens was measured at 1920×1080; scaled to this camera's 1280×720." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--board", "30by22"], "Board '30by22' is not width x depth"),
        (["--board", "30x22", "--intrinsics", "{missing}"], "does not exist"),
        (["--board", "30x22", "--layout", "{bad_layout}"], "is not valid JSON"),
    ],
)
def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    bad = tmp_path / "layout.json"
    bad.write_text("{")
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), np.zeros((72, 128, 3), np.uint8))
    args = [a.format(missing=tmp_path / "none.json", bad_layout=bad) for a in args]
    assert main(["calibrate", str(frame), *args, "-o", str(tmp_path / "cal.json")]) == 2
    assert message in _error(capsys)


def test_missing_image_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(tmp_path / "none.png"), "--board", "30x22", "-o", str(tmp_path / "c.json")]) == 2
    assert "none.png does not exist" in _error(capsys)


def test_layout_file_drives_the_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, _ = _render(tmp_path)
    layout = tmp_path / "layout.json"
    layout.write_text(json.dumps(default_layout(*BOARD).to_json()))
    out = tmp_path / "cal.json"
    assert main(["calibrate", str(frame), "--board", "30x22", "--layout", str(layout), "-o", str(out)]) == 0
    assert load_calibration(out).anchors_seen == (0, 1, 2, 3)
