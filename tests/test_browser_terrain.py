"""The terrain page in real headless Chromium: a piece drawn by clicking its four corners on the camera picture, its
height typed and saved, lands on the renderer's true corners in inches; a terrain file loads, and a bad one is one
sentence under the button; an uncalibrated table says so and links to the Calibrate page.

The rendered session (tests/webui_session.py) shows a 3" wall whose foot stands at WALL; its corners are clicked
where the renderer's own camera pose sees them.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from bench.web import CHROMIUM
from tests.chromium import checked_page, chromium
from tests.webui_server import running_server, session_settings
from tests.webui_session import WALL, _pose, make_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_session(tmp_path_factory.mktemp("browser-terrain") / "table1", frames=3)


@pytest.fixture(scope="module")
def server(session: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    settings = session_settings(session, session.parent, tmp_path_factory.mktemp("setup"), game="valknut")
    with running_server(settings.model_copy(update={"source_kind": "sample", "loop_sample": True})) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with checked_page(browser, viewport={"width": 1400, "height": 1000}) as pg:
        yield pg


def click_picture(page: Any, px: tuple[float, float]) -> None:
    """Click the camera picture where its pixel `px` (OpenCV's: a pixel's centre at a whole number) is shown."""
    x, y = page.evaluate(
        """([px, py]) => {
            const c = document.getElementById('tcamera'), r = c.getBoundingClientRect();
            return [r.left + (px + 0.5) * r.width / c.width, r.top + (py + 0.5) * r.height / c.height];
        }""",
        list(px),
    )
    page.mouse.click(x, y)


def test_a_piece_drawn_on_the_camera_picture_is_saved_at_its_true_corners(server: tuple[str, Any], page: Any) -> None:
    url, app = server
    runtime = app.state.runtime
    runtime.set_terrain({"pieces": []})  # the page starts with none: the piece drawn is the only one
    page.goto(url + "/terrain")
    page.wait_for_selector("#tcamera[data-picture]", timeout=15000)
    assert page.get_attribute("#tcamera", "data-picture") == "960x720"
    assert "terrain of Valknut" in str(page.text_content("#terrain-game"))

    pose = _pose()
    foot = np.array([[x, y, 0.0] for x, y in WALL])
    seen, _ = cv2.projectPoints(foot, pose.rvec, pose.tvec, pose.camera.K, pose.camera.dist)
    page.click("#tool-draw")
    for px in seen.reshape(-1, 2):
        click_picture(page, (float(px[0]), float(px[1])))
    page.keyboard.press("Enter")
    page.wait_for_function("window.tablesightTerrain.pieces.length === 1", timeout=10000)
    page.fill("#pheight", "3")
    page.fill("#pname", "old wall")
    page.click("#save")
    page.wait_for_function("document.getElementById('terrain-msg').textContent.startsWith('Saved')", timeout=10000)
    assert page.text_content("#terrain-msg") == "Saved 1 piece; the game goes on with it."
    page.wait_for_function("document.getElementById('tcamera').dataset.pieces === '1'", timeout=10000)  # drawn over it

    with runtime.setup.lock:
        (piece,) = runtime.setup.terrain
    assert piece.name == "old wall" and piece.height_in == 3.0 and piece.kinds == frozenset({"blocking"})
    errors = [math.dist(got, want) for got, want in zip(piece.polygon, WALL, strict=True)]
    assert max(errors) <= 0.05, (piece.polygon, errors)
    saved = json.loads((runtime.setup_dir / "terrain-valknut.json").read_text(encoding="utf-8"))
    assert [p["name"] for p in saved["pieces"]] == ["old wall"]


def test_a_terrain_file_loads_and_a_bad_one_is_a_sentence_under_the_button(server: tuple[str, Any], page: Any,
                                                                           tmp_path: Path) -> None:
    url, app = server
    runtime = app.state.runtime
    good = tmp_path / "hills.json"
    good.write_text(json.dumps({"pieces": [
        {"name": "hill", "kind": ["elevated"], "polygon": [[2, 2], [6, 2], [6, 5], [2, 5]], "height_in": 1},
        {"name": "wood", "kind": ["obscuring"], "polygon": [[20, 3], [25, 3], [25, 7]], "height_in": 4},
    ]}), encoding="utf-8")
    bad = tmp_path / "bowtie.json"
    bad.write_text(json.dumps({"pieces": [{"name": "bowtie", "polygon": [[0, 0], [4, 4], [4, 0], [0, 4]]}]}),
                   encoding="utf-8")
    page.goto(url + "/terrain")
    page.wait_for_selector("#tcamera[data-picture]", timeout=15000)
    page.set_input_files("#tfile", str(good))
    page.wait_for_function("document.getElementById('terrain-msg').textContent.startsWith('Loaded')", timeout=10000)
    assert page.text_content("#terrain-msg") == "Loaded hills.json and saved 2 pieces; the game goes on with them."
    assert page.evaluate("window.tablesightTerrain.pieces.map((p) => p.name)") == ["hill", "wood"]
    with runtime.setup.lock:
        assert [p.name for p in runtime.setup.terrain] == ["hill", "wood"]

    page.set_input_files("#tfile", str(bad))
    page.wait_for_function("document.getElementById('tfile-msg').textContent.length > 0", timeout=10000)
    said = str(page.text_content("#tfile-msg"))
    assert said.startswith("The file bowtie.json cannot be loaded") and "crosses itself" in said, said
    assert page.is_visible("#tfile-msg")
    with runtime.setup.lock:
        assert [p.name for p in runtime.setup.terrain] == ["hill", "wood"]  # nothing saved
    assert page.evaluate("window.tablesightTerrain.pieces.length") == 2


def test_an_uncalibrated_table_says_so_and_links_to_calibrate(session: Path, browser: Any, tmp_path: Path) -> None:
    frames = tmp_path / "frames"  # a folder of frames: no calibration comes with it
    frames.mkdir()
    for jpg in sorted(session.glob("frame_*.jpg")):
        shutil.copy(jpg, frames / jpg.name)
    with running_server(session_settings(frames, tmp_path / "sessions", tmp_path / "setup")) as (url, _app):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            pg = ctx.new_page()
            pg.goto(url + "/terrain")
            pg.wait_for_selector("#no-picture:not([hidden])", timeout=15000)
            said = str(pg.text_content("#no-picture"))
            assert said.startswith("The table is not calibrated yet"), said
            assert pg.get_attribute("#no-picture a", "href") == "/calibrate"
            assert not pg.is_visible("#camera-view") and not pg.is_visible("#new-picture")
            assert pg.is_visible("#tboard")  # the top-down board is still there to draw on
        finally:
            ctx.close()
