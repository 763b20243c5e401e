"""Terrain drawn on the camera picture: a click's pixel becomes table inches through the table calibration.

Ground truth is the renderer's: tables drawn by vision/synth with terrain blocks at known corners, the camera's true
pose projecting each corner to the pixel a player would click; the calibration is made by the real calibrate_table
from the rendered anchors. The API (/api/terrain/on-table and /in-picture) is driven on a rendered recorded session.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from calibration.layout import default_layout
from calibration.table import calibrate_table, collect_anchors
from tests.webui_server import LocalClient, session_settings
from tests.webui_session import SIZE, WALL, _pose, make_session
from vision.synth.render import Block, Scene, camera_framing_board, render_scene
from vision.tags import detect_tags, gray_frame
from webui.server import create_app

BOARD = (30.0, 22.0)
BLOCKS = (
    Block(((4.0, 4.0), (9.0, 4.5), (8.5, 8.0), (4.5, 7.5)), 2.0),  # a leaning ruin, no side square to the table
    Block(((20.0, 14.0), (24.0, 14.0), (24.0, 17.0), (20.0, 17.0)), 3.0),
    Block(((13.0, 1.0), (17.0, 1.0), (17.0, 2.0), (13.0, 2.0)), 1.5),  # a wall near the camera's edge of the table
)
TOLERANCE_IN = 0.05


def true_pixels(pose: object, corners: np.ndarray) -> np.ndarray:
    """Where the camera truly sees table points (N, 3) inches, pixels: the renderer's own projection."""
    px, _ = cv2.projectPoints(corners, pose.rvec, pose.tvec, pose.camera.K, pose.camera.dist)  # type: ignore[attr-defined]
    return px.reshape(-1, 2)


@pytest.mark.parametrize(("lens", "tilt", "yaw", "known"), [
    ("straight", 12.0, 0.0, True),
    ("barrel", 12.0, 0.0, True),
    ("barrel", 25.0, 20.0, True),
    ("barrel", 25.0, 20.0, False),  # no lens file: focal length and distortion fitted to the anchors
])
def test_clicks_on_a_rendered_calibrated_frame_land_on_the_terrain_corners(
        lens: str, tilt: float, yaw: float, known: bool) -> None:
    dist = None if lens == "straight" else [-0.12, 0.03, 0.0, 0.0, 0.0]
    pose = camera_framing_board(BOARD, 36.0, tilt, yaw, (1280, 720), dist)
    image = render_scene(Scene.at(pose, BOARD, terrain=BLOCKS, noise_sigma=1.0, supersample=2),
                         np.random.default_rng(7)).image
    layout = default_layout(*BOARD)
    anchors = collect_anchors(((t.id, t.corners_px) for t in detect_tags(gray_frame(image))), layout)
    cal = calibrate_table(anchors, layout, (1280, 720), pose.camera if known else None)
    for block in BLOCKS:
        foot = np.array([[x, y, 0.0] for x, y in block.polygon])
        seen = true_pixels(pose, foot)
        got = cal.image_to_table(seen, 0.0)
        errors = np.linalg.norm(got - foot[:, :2], axis=1)
        assert np.all(errors <= TOLERANCE_IN), (block.polygon, got.round(3).tolist(), errors.round(4).tolist())
        # a click lands on a whole pixel: off by at most half a pixel each way, which the calibration says in inches
        clicked = np.round(seen)
        got = cal.image_to_table(clicked, 0.0)
        errors = np.linalg.norm(got - foot[:, :2], axis=1)
        half_pixel = np.linalg.norm(clicked - seen, axis=1) * cal.inches_per_px(seen, 0.0)
        assert np.all(errors <= TOLERANCE_IN + half_pixel), (errors.round(4).tolist(), half_pixel.round(4).tolist())


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_session(tmp_path_factory.mktemp("terrain-picture") / "table1", frames=2)


@pytest.fixture
def client(session: Path, tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(session_settings(session, session.parent, tmp_path / "setup"))
    with LocalClient(app) as c:
        assert app.state.runtime.live.wait_for_frame(20)
        yield c


def test_the_api_maps_clicks_on_the_camera_picture_to_table_inches_and_back(client: TestClient) -> None:
    foot = np.array([[x, y, 0.0] for x, y in WALL])
    clicked = np.round(true_pixels(_pose(), foot), 1)
    r = client.post("/api/terrain/on-table", json={"image_size": list(SIZE), "points_px": clicked.tolist()})
    assert r.status_code == 200, r.text
    got = np.array(r.json()["points_in"])
    assert np.all(np.linalg.norm(got - foot[:, :2], axis=1) <= TOLERANCE_IN), got.tolist()
    # the wall's foot and its 3" top, where the camera sees them (what the page draws over the picture)
    top = foot + [0.0, 0.0, 3.0]
    r = client.post("/api/terrain/in-picture", json={"points_in": np.vstack([foot, top]).tolist()})
    assert r.status_code == 200, r.text
    assert r.json()["image_size"] == list(SIZE)
    px = np.array(r.json()["points_px"])
    truth = true_pixels(_pose(), np.vstack([foot, top]))
    assert np.all(np.linalg.norm(px - truth, axis=1) <= 1.0), (px - truth).round(2).tolist()
    assert np.all(np.linalg.norm(px[4:] - px[:4], axis=1) > 10)  # the top is seen apart from the foot


def test_a_picture_of_another_size_or_a_bad_point_is_one_sentence(client: TestClient) -> None:
    r = client.post("/api/terrain/on-table", json={"image_size": [640, 480], "points_px": [[10, 10]]})
    assert r.status_code == 400
    detail = r.json()["detail"]
    assert "640x480" in detail and f"{SIZE[0]}x{SIZE[1]}" in detail and "calibrate again" in detail, detail
    r = client.post("/api/terrain/on-table", json={"image_size": list(SIZE), "points_px": [["left", 3]]})
    assert r.status_code == 422 and "{" not in r.json()["detail"], r.text
    r = client.post("/api/terrain/in-picture", json={"points_in": [[1, 2, 1e9]]})
    assert r.status_code == 422 and "{" not in r.json()["detail"], r.text


def test_without_a_calibration_the_picture_cannot_be_measured(session: Path, tmp_path: Path) -> None:
    frames = tmp_path / "frames"  # a folder of frames: no calibration comes with it
    frames.mkdir()
    for jpg in sorted(session.glob("frame_*.jpg")):
        shutil.copy(jpg, frames / jpg.name)
    app = create_app(session_settings(frames, tmp_path / "sessions", tmp_path / "setup"))
    with LocalClient(app) as c:
        assert c.get("/api/setup").json()["calibrated"] is False
        r = c.post("/api/terrain/on-table", json={"image_size": list(SIZE), "points_px": [[100, 100]]})
        assert r.status_code == 400 and r.json()["detail"].startswith("The table is not calibrated yet"), r.text
        assert "Calibrate page" in r.json()["detail"]
