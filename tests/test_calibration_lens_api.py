"""The Calibrate page's lens over HTTP (FastAPI's TestClient, a rendered 960x720 session): which lens is in use, a
lens of 640x480 scaled for the camera, one of 16:9 set aside, an unreadable lens file calibrated around, and
DELETE /api/calibration/lens forgetting it (refused without X-Tablesight: 1). The answers are sentences in the
page's words: no flags, no field names."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from calibration.camera import CameraModel
from tests.webui_server import LocalClient, session_settings
from tests.webui_session import BOARD, make_session
from vision.synth.render import camera_looking_at
from webui.server import create_app


def _camera(size: tuple[int, int]) -> CameraModel:
    """The session's own camera (tests/webui_session.py) as measured at `size`."""
    return camera_looking_at(BOARD, height_in=34.0, tilt_deg=12.0, yaw_deg=0.0, image_size=size, hfov_deg=62.0).camera


@pytest.fixture(scope="module")
def sessions_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lens-sessions")
    make_session(root / "table1", frames=4)
    return root


@pytest.fixture
def client(sessions_root: Path, tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(session_settings(sessions_root / "table1", sessions_root, tmp_path / "setup"))
    with LocalClient(app) as c:
        assert app.state.runtime.live.wait_for_frame(20)
        yield c


def _lens_file(client: TestClient, size: tuple[int, int], rms: float = 0.15) -> Path:
    cam = _camera(size)
    runtime: Any = client.app.state.runtime  # type: ignore[attr-defined]
    runtime.save_lens(CameraModel(size, cam.K, cam.dist, rms))
    return Path(runtime.setup_dir) / "camera.json"


def _plain(text: str) -> str:
    """`text`, checked to read as a player's sentence: a capital first, no flag, field name, quoted key or JSON (an
    inch mark, 0.49", is a word)."""
    assert text[:1].isupper() and not re.search(r'--|_in\b|_px\b|"[A-Za-z_ ]+"|[{}\[\]]', text), text
    return text


def test_lens_of_640x480_is_scaled_for_the_960x720_camera(client: TestClient) -> None:
    _lens_file(client, (640, 480))
    state = client.get("/api/calibration/lens").json()
    assert state == {"in_use": True, "can_forget": True,
                     "message": "The lens measured at 640×480, 0.15 px RMS, is in use, scaled to this camera's 960×720."}
    a = client.post("/api/calibration/table", data={"board": "30x22"}).json()
    assert a["ok"] and a["focal_source"] == "intrinsics" and a["residual_in"] < 0.01, a
    assert _plain(a["lens"]) == "The lens was measured at 640×480; scaled to this camera's 960×720."
    cal = client.app.state.runtime.setup.calibration  # type: ignore[attr-defined]
    np.testing.assert_allclose(cal.camera.K, _camera((960, 720)).K, atol=1e-9)
    assert cal.camera.rms_px == pytest.approx(0.15 * 1.5)


def test_lens_of_another_aspect_is_set_aside(client: TestClient) -> None:
    _lens_file(client, (1280, 720))
    sentence = ("The lens file was measured at 1280×720 (16:9) but the camera gives 960×720 (4:3); calibrating "
                "without it: measure the lens at this size for better accuracy.")
    assert client.get("/api/calibration/lens").json() == {"in_use": False, "can_forget": True, "message": sentence}
    a = client.post("/api/calibration/table", data={"board": "30x22"}).json()
    assert a["ok"] and a["focal_source"] != "intrinsics" and a["lens"] == sentence, a
    assert a["residual_in"] < 0.02


def test_an_unreadable_lens_file_does_not_stop_the_calibration(client: TestClient) -> None:
    path = _lens_file(client, (960, 720))
    path.write_text('{"image_size": [960, 720], "K": "wide"}', encoding="utf-8")
    state = client.get("/api/calibration/lens").json()
    assert not state["in_use"] and state["can_forget"] and _plain(state["message"]).startswith(
        "The saved lens file cannot be read")
    a = client.post("/api/calibration/table", data={"board": "30x22"}).json()
    assert a["ok"] and a["focal_source"] != "intrinsics" and a["lens"] == state["message"], a
    forgot = client.delete("/api/calibration/lens").json()
    assert _plain(forgot["forgot"]).startswith("Forgot the saved lens file") and not path.exists()


def test_forget_this_lens(client: TestClient) -> None:
    runtime: Any = client.app.state.runtime  # type: ignore[attr-defined]
    # at first the lens is the one the session's calibration was made with
    assert client.get("/api/calibration/lens").json()["message"] == (
        "The lens the table was calibrated with (960×720, 0.00 px RMS) is in use.")
    path = _lens_file(client, (640, 480))
    saved_for = Path(runtime.setup_dir) / "saved_for.json"
    assert "camera.json" in json.loads(saved_for.read_text())
    bare = TestClient(client.app, base_url="http://127.0.0.1:8000")  # no X-Tablesight: another site's script
    assert bare.delete("/api/calibration/lens").status_code == 403  # (no `with`: its own lifespan, another runtime)
    assert path.exists()
    r = client.delete("/api/calibration/lens")
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["forgot"] == "Forgot the lens measured at 640×480: the next table calibration is made without it."
    assert not path.exists() and "camera.json" not in json.loads(saved_for.read_text())
    # the calibration's own lens is forgotten too: the next one is made without a lens
    assert a["in_use"] is False and a["can_forget"] is False and _plain(a["message"]).startswith("No lens is measured")
    t = client.post("/api/calibration/table", data={"board": "30x22"}).json()
    assert t["ok"] and t["focal_source"] != "intrinsics" and t["lens"] == "", t
    assert runtime.setup.calibration.focal_source != "intrinsics"
    again = client.delete("/api/calibration/lens").json()
    assert again["forgot"] == "There was no lens to forget; the table is calibrated without one."


def test_a_board_that_does_not_fit_is_said_in_page_words_with_the_lens_to_blame(client: TestClient) -> None:
    _lens_file(client, (640, 480))
    a = client.post("/api/calibration/table", data={"board": "40x30"}).json()
    assert not a["ok"], a
    assert "check the board size" in _plain(a["message"]) and "tablesight" not in a["message"], a["message"]
    assert a["lens"].endswith("If the board size is right, the lens may be wrong: forget it below and calibrate again.")


@pytest.mark.parametrize(("form", "words"), [
    ({"pattern": "ruler", "size": "9x6", "square_in": "1"}, "The target ruler is not known; choose a chessboard or"),
    ({"pattern": "chessboard", "size": "9by6", "square_in": "1"}, "The size 9by6 is not columns x rows;"),
    ({"pattern": "charuco", "size": "7x5", "square_in": "1"}, "A ChArUco board needs the side of its markers; fill in"),
    ({"pattern": "charuco", "size": "7x5", "square_in": "1", "marker_in": "0.7", "dictionary": "DICT_9"},
     "The dictionary DICT_9 is not one OpenCV knows;"),
])
def test_lens_form_mistakes_are_sentences(client: TestClient, form: dict[str, str], words: str) -> None:
    r = client.post("/api/calibration/camera", data=form, files=[("images", ("a.jpg", b"not yet read", "image/jpeg"))])
    assert r.status_code == 400 and _plain(r.json()["detail"]).startswith(words), r.text
