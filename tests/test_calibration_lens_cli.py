"""`tablesight calibrate --intrinsics` with a lens from another size: scaled for the same aspect ratio (exit 0, the
sentence, positions within 0.02"), set aside for another (exit 0, the sentence on stderr, calibrated as without a
lens); a malformed lens file is one sentence and exit 2, and no calibration is written."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel, save_camera
from calibration.table import load_calibration
from vision.synth.render import BasePlacement, Rendered, Scene, camera_looking_at, render_scene
from webui.cli import main

BOARD = (30.0, 22.0)
DIST = [-0.15, 0.03, 0.0, 0.0, 0.0]


def _frame(tmp_path: Path, size: tuple[int, int]) -> tuple[Path, Rendered]:
    pose = camera_looking_at(BOARD, 42.0, 22.0, 190.0, size, 72.0, DIST)
    rendered = render_scene(Scene.at(pose, BOARD, bases=(BasePlacement(tag=14, x=9.0, y=7.0, tag_in=1.0),)), 7)
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), rendered.image)
    return path, rendered


def _lens(tmp_path: Path, size: tuple[int, int]) -> Path:
    """The renderer's own lens as measured at `size` (0.2 px RMS)."""
    cam = camera_looking_at(BOARD, 42.0, 22.0, 190.0, size, 72.0, DIST).camera
    path = tmp_path / "lens.json"
    save_camera(CameraModel(size, cam.K, cam.dist, 0.2), path)
    return path


def test_lens_from_640x480_is_scaled_to_a_1280x960_photo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, truth = _frame(tmp_path, (1280, 960))
    out = tmp_path / "cal.json"
    code = main(["calibrate", str(frame), "--board", "30x22", "--intrinsics", str(_lens(tmp_path, (640, 480))),
                 "-o", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "  lens: The lens was measured at 640×480; scaled to this camera's 1280×960.\n" in captured.out
    assert "from the camera file" in captured.out and captured.err == ""
    cal = load_calibration(out)
    assert cal.focal_source == "intrinsics" and cal.image_size == (1280, 960)
    np.testing.assert_allclose(cal.camera.K, truth.camera.K, atol=1e-9)
    assert cal.camera.rms_px == pytest.approx(0.4) and cal.camera.extra["scaled_from"] == [640, 480]
    tag = truth.tags[14]
    got = cal.image_to_table(tag.center_px[None], tag.center_in[2])[0]
    assert np.linalg.norm(got - np.asarray(tag.center_in[:2])) < 0.02


def test_lens_of_another_aspect_is_set_aside_and_the_table_calibrated(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    frame, truth = _frame(tmp_path, (1280, 720))
    out = tmp_path / "cal.json"
    code = main(["calibrate", str(frame), "--board", "30x22", "--intrinsics", str(_lens(tmp_path, (640, 480))),
                 "-o", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == ("The lens file was measured at 640×480 (4:3) but the camera gives 1280×720 (16:9); "
                            "calibrating without it: measure the lens at this size for better accuracy.\n")
    assert "lens:" not in captured.out and "estimated from the anchors" in captured.out
    cal = load_calibration(out)
    assert cal.focal_source == "estimated" and cal.image_size == (1280, 720)
    assert cal.camera.K[0, 0] == pytest.approx(truth.camera.K[0, 0], rel=0.01)
    tag = truth.tags[14]
    got = cal.image_to_table(tag.center_px[None], tag.center_in[2])[0]
    assert np.linalg.norm(got - np.asarray(tag.center_in[:2])) < 0.03


@pytest.mark.parametrize(("text", "words"), [
    ("{\"image_size\": [640, 480], \"K\": \"wide\", \"dist\": [0, 0, 0, 0, 0], \"rms_px\": 0.2}",
     "is not a list of numbers"),
    ("{\"image_size\": [640, 480], \"K\": [[500, 0, 320], [0, 500, 240], [0, 0, 1]], \"rms_px\": 0.2}", "has no 'dist'"),
    ("{\"image_size\": [640, 480], ", "is not valid JSON"),
])
def test_malformed_lens_file_is_one_sentence_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        text: str, words: str) -> None:
    frame, _ = _frame(tmp_path, (1280, 960))
    lens = tmp_path / "lens.json"
    lens.write_text(text, encoding="utf-8")
    out = tmp_path / "cal.json"
    old = {"kept": True}
    out.write_text(json.dumps(old), encoding="utf-8")  # a calibration made before is not lost
    assert main(["calibrate", str(frame), "--board", "30x22", "--intrinsics", str(lens), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and err.startswith(f"Camera file {lens}") and words in err, err
    assert json.loads(out.read_text(encoding="utf-8")) == old
