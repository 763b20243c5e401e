"""The streaming overlay: `/overlay` (OBS browser source: truly transparent except where the measurements are,
or on the camera picture with ?camera=1; verdict cards in words) and `/api/live/overlay.mjpg` (drawn by the
server), on the bundled sample session, in real Chromium."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from session.overlay_image import DEFAULT_LAYERS, draw_shapes, overlay_jpeg, parse_layers
from tests.webui_server import running_server, session_settings

SAMPLE = Path(__file__).resolve().parents[1] / "sample_frames" / "valknut_skirmish"


def test_layers_are_named_in_one_sentence() -> None:
    assert parse_layers(None) == DEFAULT_LAYERS
    assert parse_layers("bases, rings,bases") == ("bases", "rings")
    with pytest.raises(ValueError, match="no overlay layer called 'rangez'; choose among bases"):
        parse_layers("bases,rangez")


def _square(x0: float, y0: float, side: float) -> list[list[float]]:
    return [[x0, y0], [x0 + side, y0], [x0 + side, y0 + side], [x0, y0 + side]]


def test_draw_shapes_draws_only_the_chosen_layers() -> None:
    shapes: list[dict[str, Any]] = [
        {"k": "poly", "c": True, "s": "base", "u": 10, "col": "#ff0000", "l": "Bjorn", "p": _square(100, 100, 100),
         "a": [150, 150]},
        {"k": "ring", "s": "range-band", "u": 10, "l": "", "p": _square(400, 100, 200), "q": [], "a": [400, 100]},
    ]
    gray = np.full((720, 1280, 3), 128, np.uint8)
    image = gray.copy()
    assert draw_shapes(image, shapes, ("bases",)) == 1
    b, g, r = (int(v) for v in image[100, 150])  # on the base's top edge: its owner's red
    assert r > 200 and g < 80 and b < 80
    assert np.array_equal(image[300:, 400:], gray[300:, 400:])  # the ring's layer is off: untouched
    assert not np.array_equal(image[130:160, 120:180], gray[130:160, 120:180])  # the name is written
    bare = gray.copy()
    draw_shapes(bare, shapes, ("bases",)[:1] + ("rings",))
    assert int(np.abs(bare[100, 500].astype(int) - 128).sum()) > 60  # ring drawn where it runs


def test_stream_frame_without_camera_is_a_chroma_key() -> None:
    shapes = [{"k": "poly", "c": True, "s": "base", "u": 10, "col": "#2471a3", "l": "", "p": _square(10, 10, 50)}]
    jpeg = overlay_jpeg(None, shapes, (320, 240), ("bases",), camera=False)
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and image.shape == (240, 320, 3)
    green = (image[:, :, 1] > 200) & (image[:, :, 0] < 60) & (image[:, :, 2] < 60)
    assert green.mean() > 0.9 and not green[10, 35]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = session_settings(SAMPLE, tmp_path_factory.mktemp("sessions"), tmp_path_factory.mktemp("setup"))
    settings = settings.model_copy(update={"source_kind": "sample", "loop_sample": True})
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url


def _parts(url: str, limit: int = 200) -> Iterator[np.ndarray]:
    """The stream's JPEG frames, decoded, up to `limit` of them."""
    with httpx.stream("GET", url, timeout=20) as res:
        assert res.status_code == 200 and res.headers["content-type"].startswith("multipart/x-mixed-replace")
        data = b""
        for chunk in res.iter_bytes():
            data += chunk
            while (start := data.find(b"\xff\xd8")) >= 0 and (end := data.find(b"\xff\xd9", start + 2)) > 0:
                part = cv2.imdecode(np.frombuffer(data[start:end + 2], np.uint8), cv2.IMREAD_COLOR)
                assert part is not None
                yield part
                data = data[end + 2:]
                limit -= 1
                if limit <= 0:
                    return


def test_overlay_routes_refuse_an_unknown_layer(server: str) -> None:
    for path in ("/overlay?layers=bases,bogus", "/api/live/overlay.mjpg?layers=bogus"):
        res = httpx.get(server + path, timeout=10)
        assert res.status_code == 422
        assert "no overlay layer called 'bogus'" in res.json()["detail"]


def test_overlay_mjpeg_draws_the_units(server: str) -> None:
    drawn = []
    for keyed in _parts(server + "/api/live/overlay.mjpg?camera=0&layers=bases"):
        assert keyed.shape == (720, 1280, 3)
        green = (keyed[:, :, 1] > 200) & (keyed[:, :, 0] < 60) & (keyed[:, :, 2] < 60)
        assert green.mean() > 0.9  # the key colour everywhere but on the bases
        drawn.append(1 - green.mean())
        if drawn[-1] > 0.001:
            break
    assert drawn[-1] > 0.001, "no base was drawn in 200 frames of the sample"
    on_camera = next(_parts(server + "/api/live/overlay.mjpg"))
    assert on_camera.shape == (720, 1280, 3)
    assert ((on_camera[:, :, 1] > 200) & (on_camera[:, :, 0] < 60)).mean() < 0.01




@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        yield b
        b.close()


def _shot(page: Any) -> np.ndarray:
    png = page.screenshot(omit_background=True)
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    assert image is not None
    return image


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_overlay_page_is_transparent_except_the_measurements(server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/overlay?layers=bases,labels")
    page.wait_for_function("Number(document.getElementById('camera').dataset.shapes) > 0", timeout=20000)
    image = _shot(page)
    assert image.shape == (1080, 1920, 4)
    alpha = image[:, :, 3]
    assert (alpha == 0).mean() > 0.8  # the camera picture is not there: OBS shows the scene below
    # every base the server measured is drawn where its pixel shape says: the frame message and the canvas
    # are read in one tick of the page, since the sample plays on while a screenshot is taken
    msg, url = page.evaluate(
        "() => [window.tablesight.msg, document.getElementById('camera').toDataURL('image/png')]")
    drawn = cv2.imdecode(np.frombuffer(base64.b64decode(url.split(",", 1)[1]), np.uint8), cv2.IMREAD_UNCHANGED)
    assert drawn is not None
    alpha = drawn[:, :, 3]
    k = drawn.shape[1] / msg["image_size"][0]
    bases = [s for s in msg["image_shapes"] if s["s"] == "base"]
    assert len(bases) == len(msg["units"]) > 0
    for s in bases:
        pts = np.asarray(s["p"]) * k
        x, y = (int(v) for v in pts[0])  # a point on the base's outline
        assert alpha[max(0, y - 3):y + 4, max(0, x - 3):x + 4].max() > 200, s["l"]
    page.screenshot(path="/tmp/tablesight-overlay.png", omit_background=True)
    page.close()
    assert not errors, errors


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_overlay_page_on_the_camera_shows_verdicts_in_words(server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(server + "/overlay?camera=1&seconds=60")
    page.wait_for_function("Number(document.getElementById('camera').dataset.shapes) > 0", timeout=20000)
    shot = _shot(page)  # a PNG without an alpha channel: nothing is transparent
    assert shot.shape[2] == 3 or shot[:, :, 3].min() == 255  # the camera picture fills the page
    # the sample loops every 14 s and rules two illegal moves; their cards name the units
    page.wait_for_function("window.tablesight.cards > 0", timeout=40000)
    texts = page.eval_on_selector_all(".card", "els => els.map(e => e.textContent)")
    assert texts and not any("Unit 1" in t or "unit 1" in t for t in texts), texts
    page.close()
