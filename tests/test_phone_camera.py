"""A phone as the camera, without a browser: `PhoneCamera` hands the loop the newest frame and says why none
comes; /ws/camera takes the phone's JPEG frames, answers each measured one with the anchors found, is refused
when the phone is not the source, and is guarded like every other WebSocket (Host, Origin, token)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from starlette.websockets import WebSocketDisconnect

from session.drivable import FeedWaiting
from session.phone_feed import Measured, PhoneCamera
from session.settings import Settings
from tests.webui_server import LocalClient
from webui.server import create_app

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_frames" / "valknut_skirmish"


def _jpeg(value: int, w: int = 32, h: int = 24) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((h, w, 3), value, np.uint8))
    assert ok
    return buf.tobytes()


def test_the_loop_gets_the_newest_frame_and_skipped_ones_are_never_decoded() -> None:
    cam = PhoneCamera()
    c = cam.connect()
    for i, v in enumerate((10, 60, 200)):
        assert cam.push(c, i, _jpeg(v))
    frame = cam.read()
    assert frame.index == 0 and frame.image.shape == (24, 32, 3)
    assert abs(int(frame.image.mean()) - 200) < 3  # the newest, not the first
    assert cam.state()["skipped"] == 2 and cam.state()["received"] == 3
    cam.push(c, 3, _jpeg(90))
    again = cam.read()
    assert again.index == 1 and again.t >= frame.t


def test_a_bad_frame_is_dropped_and_the_next_good_one_read() -> None:
    cam = PhoneCamera()
    c = cam.connect()
    cam.push(c, 0, b"\xff\xd8 not a jpeg")
    threading.Timer(0.1, lambda: cam.push(c, 1, _jpeg(120))).start()
    frame = cam.read(timeout=3)
    assert abs(int(frame.image.mean()) - 120) < 3
    assert cam.state()["bad"] == 1


@pytest.mark.parametrize(("steps", "words"), [
    ((), "No phone is streaming yet"),
    (("connect",), "connected but sends no frames"),
    (("connect", "hide"), "in the background"),
    (("connect", "leave"), "stopped streaming"),
])
def test_no_frame_says_why_in_one_sentence(steps: tuple[str, ...], words: str) -> None:
    cam = PhoneCamera(address="https://10.0.0.5:8000/camera?token=x")
    c = 0
    for s in steps:
        if s == "connect":
            c = cam.connect()
        elif s == "hide":
            cam.set_hidden(c, True)
        elif s == "leave":
            cam.disconnect(c)
    started = time.monotonic()
    with pytest.raises(FeedWaiting) as err:
        cam.read(timeout=0.2)
    assert 0.15 < time.monotonic() - started < 2
    assert words in str(err.value) and str(err.value).count(". ") == 0
    if not steps:
        assert "https://10.0.0.5:8000/camera" in str(err.value)


def test_a_second_phone_takes_over_and_the_first_is_refused() -> None:
    cam = PhoneCamera()
    first = cam.connect()
    second = cam.connect()
    assert not cam.push(first, 0, _jpeg(1))
    assert cam.push(second, 0, _jpeg(2))
    cam.disconnect(first)  # the old page closing does not end the new one's stream
    assert cam.state()["connected"]


def test_listeners_hear_each_measured_frame_with_its_number() -> None:
    cam = PhoneCamera()
    heard: list[Measured] = []
    stop = cam.listen(heard.append)
    c = cam.connect()
    cam.push(c, 7, _jpeg(50))
    cam.read()
    cam.push(c, 8, _jpeg(50))
    cam.read()  # asking for frame 8 says frame 7 was measured
    assert [m.seq for m in heard] == [7]
    assert heard[0].anchor_ids == (0, 1, 2, 3) and not heard[0].calibrated and heard[0].held_ms >= 0
    stop()
    cam.push(c, 9, _jpeg(50))
    cam.read()
    assert len(heard) == 1


# ------------------------------------------------------------------------------------------- the route


@pytest.fixture()
def phone_client(tmp_path: Path) -> Iterator[LocalClient]:
    settings = Settings(source_kind="phone", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings)) as c:
        yield c


def test_frames_sent_on_the_socket_are_measured_and_answered_with_the_anchors(phone_client: LocalClient) -> None:
    frames = sorted(SAMPLE.glob("frame_*.jpg"))[:6]
    waiting = phone_client.get("/api/live/status").json()
    assert waiting["status"] in ("starting", "lost")
    with phone_client.websocket_connect("/ws/camera") as ws:
        answers = []
        for i, f in enumerate(frames):
            ws.send_bytes(f.read_bytes())
            if i >= 1:
                answers.append(json.loads(ws.receive_text()))
            time.sleep(0.15)
        assert all(a["type"] == "measured" for a in answers)
        last = answers[-1]
        assert last["image_size"] == [1280, 720]
        assert sorted(a["id"] for a in last["anchors"]) == [0, 1, 2, 3]
        assert all(len(a["corners"]) == 4 for a in last["anchors"])
        assert last["seq"] >= answers[0]["seq"] and not last["calibrated"]
    state = phone_client.get("/api/camera").json()
    assert state["source"] == "phone" and state["phone"]["received"] == len(frames)
    assert state["address"].endswith("/camera")
    r = phone_client.post("/api/calibration/table", data={"board": "30x22"})  # from the phone's newest frame
    assert r.status_code == 200 and r.json()["ok"], r.json()
    assert r.json()["anchors_found"] == [0, 1, 2, 3]


def test_the_camera_page_and_its_qr_code(phone_client: LocalClient) -> None:
    page = phone_client.get("/camera")
    assert page.status_code == 200 and 'data-streaming="yes"' in page.text and "/static/camera.js" in page.text
    live = phone_client.get("/")
    assert 'id="phone-card"' in live.text and "/api/camera/qr.svg" in live.text
    qr = phone_client.get("/api/camera/qr.svg")
    assert qr.status_code == 200 and qr.headers["content-type"].startswith("image/svg+xml")
    assert b"<svg" in qr.content and b"<path" in qr.content


def test_the_socket_is_refused_when_the_phone_is_not_the_source(tmp_path: Path) -> None:
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings)) as c:
        assert 'data-streaming="no"' in c.get("/camera").text
        with c.websocket_connect("/ws/camera") as ws:
            said = json.loads(ws.receive_text())
            assert said["type"] == "refused" and "--phone" in said["message"]


def test_the_socket_is_guarded_like_every_other(tmp_path: Path) -> None:
    settings = Settings(source_kind="phone", host="0.0.0.0", token="sesame", setup_dir=tmp_path / "setup",
                        sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings)) as c:
        with pytest.raises(WebSocketDisconnect) as no_token, c.websocket_connect("/ws/camera") as ws:
            ws.receive_text()
        assert no_token.value.code == 1008
        other_site = {"origin": "https://evil.example"}
        with pytest.raises(WebSocketDisconnect) as foreign, \
                c.websocket_connect("/ws/camera?token=sesame", headers=other_site) as ws:
            ws.receive_text()
        assert foreign.value.code == 1008
        assert c.get("/camera").status_code == 401
        assert c.get("/camera?token=sesame").status_code == 200
        with c.websocket_connect("/ws/camera?token=sesame", headers={"origin": "http://127.0.0.1:8000"}) as ws:
            ws.send_bytes(_jpeg(100, 64, 48))
            ws.send_bytes(_jpeg(100, 64, 48))
            assert json.loads(ws.receive_text())["type"] == "measured"
