"""The phone as the camera, end to end in real headless Chromium with a fake camera fed from a rendered video.

Chromium's fake capture device plays a .y4m file (Debian's chromium takes .y4m at the frame rate its header
gives, and .mjpeg at a fixed 30 frames a second; the y4m keeps the sample's 10 frames a second). The video is
made here from the bundled sample session's frames; the server is started as `tablesight serve --phone` starts
it, on loopback HTTP (a secure page for getUserMedia). Shown: frames arrive, the table calibrates from them
(anchors found, outlined on the phone's preview), a move made in the video is reported by the live pipeline at
its true length, and the session is recorded like a webcam's; the frame rate and the capture-to-measured latency
the phone path sustains are printed. A second video of a chessboard held at different angles measures the
phone's lens from shots taken on the page.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from session.settings import Settings
from tests.webui_server import running_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_frames" / "valknut_skirmish"
SETTLE_FRAMES = 20
"""Frames the video goes on after the first true move's unit is put down (the tracker reports it once settled)."""
PHONE = {"width": 390, "height": 844}


def _read(path: Path) -> np.ndarray:
    image = cv2.imread(str(path))
    assert image is not None, path
    return image


def write_y4m(path: Path, images: list[np.ndarray], fps: int) -> Path:
    """A YUV4MPEG2 (4:2:0) video of BGR `images`, as Chromium's fake camera reads it."""
    h, w = images[0].shape[:2]
    with path.open("wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for image in images:
            f.write(b"FRAME\n")
            f.write(cv2.cvtColor(image, cv2.COLOR_BGR2YUV_I420).tobytes())
    return path


@contextmanager
def phone_browser(video: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    args = [*CHROMIUM_ARGS, "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
            f"--use-file-for-fake-video-capture={video}"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        try:
            yield b
        finally:
            b.close()


def _phone_page(browser: Any, url: str) -> tuple[Any, Any]:
    ctx = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True,
                              permissions=["camera"])
    pg = ctx.new_page()
    pg.goto(url + "/camera")
    return ctx, pg


def _window(pg: Any, seconds: float) -> dict[str, float]:
    """Frames sent and measured a second, and capture-to-measured latency (p50, p95 ms), over `seconds`."""
    before = pg.evaluate("({sent: tablesightPhone.sent, measured: tablesightPhone.measured,"
                         " n: tablesightPhone.latencies.length, h: tablesightPhone.held.length})")
    t0 = time.monotonic()
    pg.wait_for_timeout(seconds * 1000)
    after = pg.evaluate("({sent: tablesightPhone.sent, measured: tablesightPhone.measured,"
                        " lat: tablesightPhone.latencies, held: tablesightPhone.held})")
    dt = time.monotonic() - t0
    lat = sorted(after["lat"][before["n"]:])
    held = sorted(after["held"][before["h"]:])
    assert lat, "no frame was measured in the window"
    figures = {
        "sent_fps": (after["sent"] - before["sent"]) / dt,
        "measured_fps": (after["measured"] - before["measured"]) / dt,
        "latency_p50_ms": statistics.median(lat),
        "latency_p95_ms": lat[min(len(lat) - 1, int(0.95 * len(lat)))],
        "server_p50_ms": statistics.median(held) if held else float("nan"),
    }
    return {k: round(v, 1) for k, v in figures.items()}


def test_phone_frames_calibrate_the_table_and_a_move_is_measured(tmp_path: Path) -> None:
    truth = json.loads((SAMPLE / "truth.json").read_text())
    true_move = truth["moves"][0]  # the video: the sample from its first frame (anchors in view) to just after it
    files = sorted(SAMPLE.glob("frame_*.jpg"))[:int(true_move["placed_frame"]) + SETTLE_FRAMES]
    video = write_y4m(tmp_path / "table.y4m", [_read(f) for f in files], fps=int(truth["fps"]))
    setup, sessions = tmp_path / "setup", tmp_path / "sessions"
    setup.mkdir()
    shutil.copy(SAMPLE / "camera.json", setup / "camera.json")  # the phone's lens, as its shots would measure it
    settings = Settings(source_kind="phone", setup_dir=setup, sessions_dir=sessions,
                        roster_file=SAMPLE / "roster.json", terrain_file=SAMPLE / "terrain.json", game="valknut")

    with running_server(settings) as (url, app), phone_browser(video) as browser:
        runtime = app.state.runtime
        ctx, pg = _phone_page(browser, url)
        try:
            # frames arrive: the page starts streaming by itself once the camera is granted
            pg.wait_for_function("window.tablesightPhone && window.tablesightPhone.measured >= 5", timeout=30000)
            state = runtime.phone.state()
            assert state["received"] >= 5 and state["size"] == [1280, 720] and state["connected"]
            pg.wait_for_function("document.getElementById('outline').dataset.anchors === '4'", timeout=20000)
            pg.screenshot(path=str(tmp_path / "camera_uncalibrated.png"))

            # the table calibrates from the phone's picture (the button on the phone's own page)
            pg.click("#table-card summary")
            pg.click("#table-form button")
            pg.wait_for_function("document.getElementById('table-result').dataset.ok !== undefined", timeout=30000)
            assert pg.eval_on_selector("#table-result", "e => e.dataset.ok") == "yes", pg.text_content("#table-result")
            cal = runtime.setup.calibration
            assert cal is not None and tuple(cal.image_size) == (1280, 720) and cal.focal_source == "intrinsics"
            assert cal.residual_in < 0.02

            # a move made in the video is reported by the live pipeline, at its true length
            move = None
            deadline = time.monotonic() + 60
            while move is None and time.monotonic() < deadline:
                for e in list(runtime.live.events):
                    if e.get("type") == "move" and e.get("tag") == true_move["tag"] and \
                            math.dist(e["from_in"], true_move["from_in"]) < 0.1 and \
                            math.dist(e["to_in"], true_move["to_in"]) < 0.1:
                        move = e
                time.sleep(0.2)
            assert move is not None, [e for e in runtime.live.events if e.get("type") == "move"]
            assert abs(move["length_in"] - true_move["length_in"]) < 0.03, move
            pg.wait_for_function("document.getElementById('outline').dataset.anchors === '4'", timeout=20000)
            pg.screenshot(path=str(tmp_path / "camera_calibrated.png"))

            # the rate and latency the phone path sustains: the page's default (10 a second), then flat out
            at_10 = _window(pg, 8)
            pg.select_option("#rate", "30")
            at_30 = _window(pg, 8)
            status = runtime.live.status()
            figures = {"rate 10/s": at_10, "rate 30/s": at_30, "loop fps": round(status.fps, 1),
                       "load average": os.getloadavg()[0],
                       "skipped on the server": runtime.phone.state()["skipped"],
                       "busy on the phone": pg.evaluate("tablesightPhone.busy")}
            print("\nphone path:", json.dumps(figures))
            (tmp_path / "phone_figures.json").write_text(json.dumps(figures, indent=1))
            # every frame the server received was measured or, when a newer one arrived first, skipped: nothing
            # queues and nothing is lost unaccounted, whatever the load (the rates themselves depend on the
            # machine: measured and reported, not asserted; a loaded 2-core machine measured 8-28 a second)
            phone = runtime.phone.state()
            assert phone["bad"] == 0 and 0 <= phone["received"] - phone["skipped"] - phone["measured"] <= 2, phone
            assert at_10["measured_fps"] > 1 and at_30["measured_fps"] > 1, figures
            # flat out, the phone sends more than the pipeline takes: the server measures the newest and skips the
            # rest, so a frame is answered within a frame or two of its capture, not after a queue of seconds
            assert at_30["latency_p95_ms"] < 1000, figures

            # recorded like a webcam: the session folder holds the phone's frames
            name = status.recording
            assert name is not None
            manifest = json.loads((sessions / name / "manifest.json").read_text())
            assert manifest["source"] == "phone camera" and manifest["image_size"] == [1280, 720]
            assert len(list((sessions / name).glob("*.jpg"))) > 20

            # the live page shows the phone's frames and the QR code of the camera page
            live = ctx.new_page()
            live.set_viewport_size({"width": 1280, "height": 900})
            live.goto(url + "/")
            live.wait_for_function("Number(document.getElementById('camera').dataset.shapes) > 0", timeout=30000)
            assert live.eval_on_selector("#phone-card", "e => e.open") is False  # folded while the phone streams
            live.click("#phone-card summary")
            live.wait_for_function("(() => { const q = document.querySelector('#phone-card img.qr');"
                                   " return q.complete && q.naturalWidth > 100; })()", timeout=10000)
            assert live.text_content("#phone-address") == url + "/camera"
            shot = np.frombuffer(live.locator("#phone-card img.qr").screenshot(), np.uint8)
            qr = cv2.imdecode(shot, cv2.IMREAD_COLOR)
            assert qr is not None
            # what the phone's camera app reads off the live page. OpenCV's older detector misses a few crisp codes
            # (8 in 200 long https addresses here); its ArUco-based one read all 600 tried, so either will do
            decoded = [detector.detectAndDecode(qr)[0] for detector in (cv2.QRCodeDetectorAruco(), cv2.QRCodeDetector())]
            assert url + "/camera" in decoded, decoded
            live.screenshot(path=str(tmp_path / "live_with_phone.png"))

            # the page in the background stops the stream and the live page says why
            pg.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});
                                   document.dispatchEvent(new Event('visibilitychange')); }""")
            deadline = time.monotonic() + 15
            while "background" not in runtime.live.status().message and time.monotonic() < deadline:
                time.sleep(0.2)
            assert runtime.live.status().status == "lost" and "background" in runtime.live.status().message
            assert runtime.setup.calibration is cal  # the game and the table are kept meanwhile
            pg.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});
                                   document.dispatchEvent(new Event('visibilitychange')); }""")
            assert "was in the background" in str(pg.text_content("#away"))
            deadline = time.monotonic() + 15
            while runtime.live.status().status != "ok" and time.monotonic() < deadline:
                time.sleep(0.2)
            assert runtime.live.status().status == "ok"
        finally:
            ctx.close()


def _chessboard_views(size: tuple[int, int] = (1280, 720), f: float = 1000.0) -> list[np.ndarray]:
    """A printed 9x6 (inner corners) chessboard seen by a pinhole camera (fx = fy = f px) from 12 angles."""
    px, margin = 80, 80
    board = np.full((7 * px + 2 * margin, 10 * px + 2 * margin), 255, np.uint8)
    for r in range(7):
        for c in range(10):
            if (r + c) % 2 == 0:
                board[margin + r * px:margin + (r + 1) * px, margin + c * px:margin + (c + 1) * px] = 0
    k = np.array([[f, 0, size[0] / 2], [0, f, size[1] / 2], [0, 0, 1]])
    to_plane = np.array([[1 / px, 0, -margin / px - 5], [0, 1 / px, -margin / px - 3.5], [0, 0, 1]])  # centred
    views = []
    for i in range(12):
        rx, ry = math.radians(30 * math.sin(i * 1.1)), math.radians(30 * math.cos(i * 0.7))
        rz = math.radians(15 * math.sin(i * 2.3))
        rot, _ = cv2.Rodrigues(np.array([rx, ry, rz]))
        t = np.array([1.2 * math.sin(i), 0.8 * math.cos(i * 1.3), 17.0 + 3 * math.sin(i * 0.5)])
        h = k @ np.column_stack([rot[:, 0], rot[:, 1], t]) @ to_plane
        image = cv2.warpPerspective(board, h, size, flags=cv2.INTER_AREA, borderValue=(150,))
        views.append(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
    return views


def test_the_phones_lens_is_measured_from_chessboard_shots_taken_on_the_page(tmp_path: Path) -> None:
    video = write_y4m(tmp_path / "chessboard.y4m", _chessboard_views(), fps=1)
    setup = tmp_path / "setup"
    settings = Settings(source_kind="phone", setup_dir=setup, sessions_dir=tmp_path / "sessions", record=False)
    with running_server(settings) as (url, _app), phone_browser(video) as browser:
        ctx, pg = _phone_page(browser, url)
        try:
            pg.wait_for_function("window.tablesightPhone && window.tablesightPhone.measured >= 1", timeout=30000)
            pg.click("#lens-card summary")
            for _ in range(14):
                pg.click("#shot")
                pg.wait_for_timeout(950)
            assert pg.eval_on_selector("#shots", "e => e.dataset.count") == "14"
            pg.screenshot(path=str(tmp_path / "camera_lens.png"))
            pg.click("#measure-lens")
            pg.wait_for_function("document.getElementById('lens-result').className !== 'muted'", timeout=120000)
            assert pg.eval_on_selector("#lens-result", "e => e.className") == "ok", pg.text_content("#lens-result")
            fx = float(pg.eval_on_selector("#lens-result", "e => e.dataset.fx"))
        finally:
            ctx.close()
    camera = json.loads((setup / "camera.json").read_text())
    assert camera["image_size"] == [1280, 720]
    assert abs(fx - 1000.0) < 10, fx  # the true focal length the views were made with
    print(f"\nphone lens: fx {fx} px (true 1000), RMS {camera['rms_px']:.3f} px")
