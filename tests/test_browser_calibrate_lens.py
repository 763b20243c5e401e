"""The Calibrate page's lens in real headless Chromium: a lens measured at 640x480 is said to be scaled for the
960x720 camera, before and after the table is calibrated with it; one of another aspect ratio is said to be set
aside; "Forget this lens" removes it, and the next calibration is made without one. Nothing on the page is a flag,
a field name or JSON. Screenshots go to /tmp/tablesight-browser-calibrate-lens-*.png."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.web import CHROMIUM
from calibration.camera import CameraModel, save_camera
from tests.chromium import checked_page, chromium
from tests.webui_server import running_server, session_settings
from tests.webui_session import BOARD, make_session
from vision.synth.render import camera_looking_at

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

SCALED = "The lens was measured at 640×480; scaled to this camera's 960×720."
SHOTS = Path("/tmp")


def _lens(size: tuple[int, int]) -> CameraModel:
    """The session's camera (tests/webui_session.py) as measured at `size`, 0.15 px RMS."""
    cam = camera_looking_at(BOARD, height_in=34.0, tilt_deg=12.0, yaw_deg=0.0, image_size=size, hfov_deg=62.0).camera
    return CameraModel(size, cam.K, cam.dist, 0.15)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    root = tmp_path_factory.mktemp("lens-pages")
    make_session(root / "table1", frames=4)
    setup = tmp_path_factory.mktemp("lens-setup")
    save_camera(_lens((640, 480)), setup / "camera.json")
    settings = session_settings(root / "table1", root, setup, game="valknut")
    settings = settings.model_copy(update={"source_kind": "sample", "loop_sample": True, "sample_idles": False})
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with checked_page(browser, viewport={"width": 1300, "height": 1000}) as pg:
        yield pg


def _words_only(page: Any) -> None:
    text = str(page.evaluate("document.querySelector('main').innerText"))
    assert not re.search(r"--|\b[a-z]+_[a-z_]+\b|[{}]|\"[a-z]", text), text  # no flag, field name, JSON or key


def _calibrate(page: Any) -> None:
    page.evaluate("document.getElementById('cal-message').textContent = ''")
    page.click("#capture")
    page.wait_for_function("['ok', 'bad'].includes(document.getElementById('cal-message').className)", timeout=30000)


def test_scaled_lens_is_said_and_forgotten(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    runtime = app.state.runtime
    page.goto(url + "/calibrate")
    page.wait_for_function("document.getElementById('lens-state').dataset.inUse === 'true'", timeout=10000)
    assert page.text_content("#lens-state") == ("The lens measured at 640×480, 0.15 px RMS, is in use, scaled to this "
                                                "camera's 960×720.")
    assert page.is_enabled("#forget-lens")
    _calibrate(page)
    assert page.get_attribute("#cal-message", "class") == "ok", page.text_content("#cal-message")
    assert page.text_content("#lens-note") == SCALED
    assert runtime.setup.calibration.focal_source == "intrinsics"
    assert runtime.setup.calibration.camera.image_size == (960, 720)
    residual = float(str(page.text_content("#residual-in")).strip('"'))
    assert 0 <= residual < 0.01
    _words_only(page)
    page.screenshot(path=str(SHOTS / "tablesight-browser-calibrate-lens-scaled.png"), full_page=True)

    page.click("#forget-lens")
    page.wait_for_function("document.getElementById('lens-result').className === 'ok'", timeout=10000)
    assert page.text_content("#lens-result") == ("Forgot the lens measured at 640×480: the next table calibration is "
                                                 "made without it.")
    assert str(page.text_content("#lens-state")).startswith("No lens is measured, so the table is calibrated without")
    assert page.is_disabled("#forget-lens") and page.is_hidden("#forget-lens")
    assert not (runtime.setup_dir / "camera.json").exists()
    _calibrate(page)
    assert page.get_attribute("#cal-message", "class") == "ok", page.text_content("#cal-message")
    assert page.text_content("#lens-note") == ""
    assert runtime.setup.calibration.focal_source != "intrinsics"
    _words_only(page)
    page.screenshot(path=str(SHOTS / "tablesight-browser-calibrate-lens-forgotten.png"), full_page=True)


def test_lens_of_another_aspect_is_set_aside_on_the_page(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    runtime = app.state.runtime
    runtime.save_lens(_lens((1280, 720)))
    sentence = ("The lens file was measured at 1280×720 (16:9) but the camera gives 960×720 (4:3); calibrating "
                "without it: measure the lens at this size for better accuracy.")
    page.goto(url + "/calibrate")
    page.wait_for_function("document.getElementById('lens-state').dataset.inUse === 'false'", timeout=10000)
    assert page.text_content("#lens-state") == sentence and page.is_enabled("#forget-lens")
    _calibrate(page)
    assert page.get_attribute("#cal-message", "class") == "ok", page.text_content("#cal-message")
    assert page.text_content("#lens-note") == sentence
    assert runtime.setup.calibration.focal_source != "intrinsics"
    _words_only(page)
    page.screenshot(path=str(SHOTS / "tablesight-browser-calibrate-lens-set-aside.png"), full_page=True)
    page.click("#forget-lens")
    page.wait_for_function("document.getElementById('lens-result').className === 'ok'", timeout=10000)
    assert not (runtime.setup_dir / "camera.json").exists()


def test_lens_form_shows_charuco_fields_only_for_charuco_and_says_mistakes_in_words(server: tuple[str, Any],
                                                                                     page: Any) -> None:
    url, _app = server
    page.goto(url + "/calibrate")
    assert page.is_hidden("#marker") and page.is_hidden("#dictionary") and page.is_hidden("label[for=marker]")
    page.select_option("#pattern", "charuco")
    assert page.is_visible("#marker") and page.is_visible("#dictionary")
    page.fill("#size", "7 by 5")
    page.set_input_files("#images", [{"name": "a.jpg", "mimeType": "image/jpeg", "buffer": b"not a photo"}])
    page.click("#camera-form button[type=submit]")
    page.wait_for_function("document.getElementById('camera-result').className === 'bad'", timeout=10000)
    assert page.text_content("#camera-result") == ("The size 7 by 5 is not columns x rows; write two whole numbers "
                                                   "from 2 to 100, like 9x6.")
    page.fill("#size", "7x5")
    page.click("#camera-form button[type=submit]")
    page.wait_for_function("document.getElementById('camera-result').textContent.startsWith('A ChArUco')",
                           timeout=10000)
    assert page.text_content("#camera-result") == "A ChArUco board needs the side of its markers; fill in Marker, in inches."
    _words_only(page)
