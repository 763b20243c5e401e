"""Uploads cannot stall or swamp the server: a decompression bomb is refused from its header, a body over its
route's limit is refused as it streams, and while six photos are calibrated the live status keeps answering."""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import httpx
import pytest

from tests.webui_server import SAME_ORIGIN, running_server, session_settings
from tests.webui_session import make_session

CHESS = sorted((Path(__file__).parent / "data" / "calibration" / "opencv_left_chessboard").glob("left*.jpg"))


def png_bomb(width: int, height: int, rows: int = 64) -> bytes:
    """A real PNG whose header says width x height (grey, 8 bit) with its first `rows` rows compressed: a few
    hundred bytes claiming gigabytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    body = zlib.compress(b"\0" * ((width + 1) * rows), 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    root = tmp_path_factory.mktemp("upload-sessions")
    make_session(root / "table1")
    settings = session_settings(root / "table1", root, tmp_path_factory.mktemp("setup"),
                                max_upload_bytes=4 * 1024 * 1024)
    with running_server(settings) as (url, app):
        assert app.state.runtime.live.wait_for_frame(20)
        yield url, app


def test_a_decompression_bomb_is_refused_from_its_header(server: tuple[str, Any]) -> None:
    url, _app = server
    bomb = png_bomb(20000, 20000)
    assert len(bomb) < 2000
    t0 = time.perf_counter()
    r = httpx.post(url + "/api/calibration/table", data={"board": "30x22"}, headers=SAME_ORIGIN, timeout=30,
                   files={"image": ("bomb.png", bomb, "image/png")})
    took = time.perf_counter() - t0
    assert r.status_code == 400
    assert r.json()["detail"] == ("bomb.png is 20000x20000 pixels (400 MP), more than the 50 MP Tablesight decodes, "
                                  "too large to decode; upload a JPEG or PNG photo of the table (e.g. 1920x1080).")
    print(f"\n20000x20000 PNG ({len(bomb)} bytes) refused in {took * 1000:.0f} ms")


def test_a_body_over_the_route_limit_is_refused_while_it_streams(server: tuple[str, Any]) -> None:
    """No Content-Length (chunked): the body is counted as it arrives and 413 comes back once it passes the
    route's limit (4 MiB here), while the sender still has most of its 500 MB to go."""
    url, _app = server
    host, port = url.removeprefix("http://").split(":")
    sent, answer = 0, b""
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"POST /api/calibration/table HTTP/1.1\r\nHost: {host}:{port}\r\nX-Tablesight: 1\r\n"
                     "Content-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        head = b'--b\r\nContent-Disposition: form-data; name="image"; filename="big.jpg"\r\n\r\n'
        sock.sendall(b"%x\r\n%s\r\n" % (len(head), head))
        block = b"\0" * (256 * 1024)
        while sent < 500 * 1024 * 1024:
            if select.select([sock], [], [], 0)[0]:
                answer = sock.recv(65536)
                break
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(block), block))
            except OSError:
                break
            sent += len(block)
        while b"}" not in answer:  # the JSON body may come in a later packet than the head
            more = sock.recv(65536)
            if not more:
                break
            answer += more
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"larger than the server accepts" in answer
    assert sent < 16 * 1024 * 1024, sent
    print(f"\n413 after {sent / 1e6:.1f} MB of a 500 MB upload")


@pytest.mark.slow
def test_live_status_keeps_answering_while_six_photos_are_calibrated(server: tuple[str, Any]) -> None:
    url, _app = server
    photos = []
    for p in CHESS[:6]:  # 640x480 photos scaled to 2560x1920: what a phone sends, a second or more of corner search
        small = cv2.imread(str(p))
        assert small is not None, p
        img = cv2.resize(small, None, fx=4, fy=4, interpolation=cv2.INTER_CUBIC)
        photos.append(("images", (p.name, cv2.imencode(".jpg", img)[1].tobytes(), "image/jpeg")))
    done: dict[str, Any] = {}

    def upload() -> None:
        t0 = time.perf_counter()
        done["response"] = httpx.post(url + "/api/calibration/camera", headers=SAME_ORIGIN, timeout=120, files=photos,
                                      data={"pattern": "chessboard", "size": "9x6", "square_in": "1"})
        done["seconds"] = time.perf_counter() - t0

    latencies = []
    with httpx.Client(timeout=30) as client:
        worker = threading.Thread(target=upload)
        worker.start()
        while worker.is_alive():
            t0 = time.perf_counter()
            assert client.get(url + "/api/live/status").status_code == 200
            latencies.append(time.perf_counter() - t0)
            time.sleep(0.05)
        worker.join()
    r = done["response"]
    assert r.status_code == 200, r.text
    assert len(r.json()["used"]) == 6
    worst = max(latencies)
    print(f"\ncamera calibration of 6 photos took {done['seconds']:.2f} s; /api/live/status answered "
          f"{len(latencies)} times, worst {worst * 1000:.0f} ms")
    assert len(latencies) >= 3  # the upload was long enough to ask during it
    # on the event loop, one answer would wait for (nearly) the whole calibration
    assert worst < min(0.5, done["seconds"] / 2)
