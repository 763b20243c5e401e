"""CameraSource with a real cv2.VideoCapture: reconnect with bounded backoff, `CameraLost`, never a hang; an MJPEG
camera's own JPEG kept (a real MJPEG stream over HTTP on 127.0.0.1, as phone apps and IP cameras serve it).

The "camera" is a URL-style source OpenCV's FFmpeg backend opens: a real video file. Stopping it is done to
the file for real: truncated under the reader, or deleted (reads then fail at the end and reopening fails).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.web import mjpeg_stream
from vision.errors import FrameError
from vision.sources import UNREADABLE_JPEGS, Backoff, CameraLost, CameraSource, open_source

W, H = 160, 120
SHORT = Backoff(first_s=0.05, factor=2.0, total_s=0.4)


def write_video(path: Path, n: int) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (W, H))
    rng = np.random.default_rng(1)
    for i in range(n):
        img = np.full((H, W, 3), (3 * i) % 250, np.uint8)
        img[:60] = rng.integers(0, 255, (60, W, 3), dtype=np.uint8)  # big frames: the file has real length
        writer.write(img)
    writer.release()
    return path


def test_backoff_doubles_and_is_bounded() -> None:
    delays = list(Backoff().delays())
    assert delays[:5] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6])
    assert sum(delays) == pytest.approx(5.0)
    assert list(Backoff(first_s=0.5, total_s=0.0).delays()) == []
    with pytest.raises(ValueError):
        Backoff(first_s=0.0)


def test_camera_frames_have_increasing_index_and_clock_time(tmp_path: Path) -> None:
    video = write_video(tmp_path / "cam.avi", 10)
    with CameraSource(str(video), backoff=SHORT) as cam:
        assert cam.size == (W, H)
        it = iter(cam)
        frames = [next(it) for _ in range(8)]
    assert [f.index for f in frames] == list(range(8))
    ts = [f.t for f in frames]
    assert ts == sorted(ts) and ts[0] >= 0.0 and ts[-1] < 5.0


def test_camera_that_stops_then_comes_back_is_reconnected(tmp_path: Path) -> None:
    """At the end of the file reads fail; reopening succeeds, so the frames go on (reconnects counted)."""
    video = write_video(tmp_path / "cam.avi", 10)
    with CameraSource(str(video), backoff=SHORT) as cam:
        it = iter(cam)
        frames = [next(it) for _ in range(25)]
        assert cam.reconnects == 2
    assert [f.index for f in frames] == list(range(25))


def test_camera_whose_stream_is_cut_short_raises_camera_lost_within_the_backoff(tmp_path: Path) -> None:
    video = write_video(tmp_path / "cam.avi", 40)
    cam = CameraSource(str(video), backoff=SHORT)
    it = iter(cam)
    got = [next(it) for _ in range(3)]
    with open(video, "r+b") as fh:  # the stream dies under the reader
        fh.truncate(4096)
    started = time.monotonic()
    with pytest.raises(CameraLost) as err:
        for f in it:
            got.append(f)
            started = time.monotonic()
    waited = time.monotonic() - started
    cam.close()
    assert len(got) < 40
    assert waited < SHORT.total_s + 2.0  # bounded: the backoff plus the time to fail each reopen
    assert waited >= SHORT.total_s - 1e-3
    message = str(err.value)
    assert f"camera {video}" in message and "stopped delivering frames" in message
    assert "reconnect attempts over 0.4 s" in message
    assert isinstance(err.value, FrameError)


def test_camera_whose_source_disappears_raises_camera_lost(tmp_path: Path) -> None:
    video = write_video(tmp_path / "cam.avi", 6)
    cam = CameraSource(str(video), backoff=SHORT)
    it = iter(cam)
    next(it)
    os.unlink(video)  # reads go on to the end of what is open, then reopening fails
    started = time.monotonic()
    with pytest.raises(CameraLost, match="did not come back after 4 reconnect attempts"):
        for _ in it:
            pass
    assert time.monotonic() - started < SHORT.total_s + 2.0
    cam.close()


def test_camera_that_cannot_be_opened_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(FrameError, match=r"camera 9 cannot be opened; check that it is plugged in"):
        CameraSource(9, backoff=SHORT)
    with pytest.raises(FrameError, match="cannot be opened"):
        open_source("rtsp://127.0.0.1:9/no-camera-here")  # a URL: connection refused at once


PHOTO = Path(__file__).parent / "data" / "apriltag_test" / "34085369442_304b6bafd9_c.jpg"


def _served_jpegs(count: int) -> list[bytes]:
    """`count` different JPEGs of a real photo (crops), as a camera would send them."""
    photo = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    assert photo is not None
    out = []
    for k in range(count):
        ok, buf = cv2.imencode(".jpg", photo[10 * k: 10 * k + 240, 20 * k: 20 * k + 320], [cv2.IMWRITE_JPEG_QUALITY, 85])
        assert ok
        out.append(buf.tobytes())
    return out


def test_an_mjpeg_camera_gives_its_own_jpeg_and_the_grey_is_decoded_from_it() -> None:
    parts = _served_jpegs(3)
    with mjpeg_stream(parts) as url, CameraSource(url, backoff=SHORT) as cam:
        assert cam.keeps_jpeg and cam.size == (320, 240)
        it = iter(cam)
        frames = [next(it) for _ in range(6)]
    for f in frames:
        assert f.jpeg in parts  # the very bytes the camera sent: a recording keeps them, not a second compression
        assert f.size == (320, 240) and f.at is not None and abs(time.time() - f.at) < 10
        assert f.jpeg is not None
        gray = cv2.imdecode(np.frombuffer(f.jpeg, np.uint8), cv2.IMREAD_GRAYSCALE)
        assert gray is not None
        assert np.array_equal(f.gray, gray)
    colour = cv2.imdecode(np.frombuffer(frames[0].jpeg or b"", np.uint8), cv2.IMREAD_COLOR)
    assert colour is not None
    assert np.array_equal(frames[0].image, colour)


def test_a_damaged_jpeg_from_the_camera_is_skipped_in_one_sentence_and_the_next_frames_come() -> None:
    good = _served_jpegs(2)
    damaged = good[0][:3] + bytes(len(good[0]) - 5) + good[0][-2:]  # a JPEG's start and end, zeros inside
    bad: list[str] = []
    with mjpeg_stream([good[0], damaged, good[1]]) as url, \
            CameraSource(url, backoff=SHORT, skip_bad_frames=True, on_bad_frame=lambda b: bad.append(b.message)) as cam:
        it = iter(cam)
        frames = [next(it) for _ in range(4)]
    assert all(f.jpeg in good for f in frames)
    assert bad and bad[0].startswith(f"Frame 1 of camera {url} is not a readable image; if this keeps happening")


def test_a_camera_that_does_not_send_mjpeg_is_decoded_by_opencv(tmp_path: Path) -> None:
    video = tmp_path / "cam.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"mp4v"), 30.0, (W, H))
    for i in range(10):
        writer.write(np.full((H, W, 3), 20 * i, np.uint8))
    writer.release()
    with CameraSource(str(video), backoff=SHORT) as cam:
        assert not cam.keeps_jpeg
        frame = next(iter(cam))
    assert frame.jpeg is None and frame.image.shape == (H, W, 3) and frame.size == (W, H)


def test_a_camera_whose_own_jpegs_cannot_be_read_has_opencv_decode_them() -> None:
    """Five of the camera's own JPEGs in a row cannot be read: its frames are decoded by OpenCV from then on."""
    good = _served_jpegs(1)[0]
    damaged = good[:3] + bytes(len(good) - 5) + good[-2:]
    bad: list[str] = []
    with mjpeg_stream([damaged] * UNREADABLE_JPEGS + [good] * 1000) as url, \
            CameraSource(url, backoff=SHORT, skip_bad_frames=True, on_bad_frame=lambda b: bad.append(b.message)) as cam:
        assert cam.keeps_jpeg
        frame = next(iter(cam))
        assert not cam.keeps_jpeg
    assert frame.jpeg is None and frame.image.shape == (240, 320, 3)  # OpenCV's decode of the camera's frame
    assert len(bad) == UNREADABLE_JPEGS and all("is not a readable image; if this keeps happening" in m for m in bad)


def test_a_camera_closed_while_it_reconnects_is_left_closed(tmp_path: Path) -> None:
    """The server stops while the camera is being opened again (its thread in the reconnect): the capture just
    opened is released, no frame comes after the close, and the reader hears CameraLost in one sentence."""
    video = write_video(tmp_path / "cam.avi", 10)
    opened: list[cv2.VideoCapture] = []

    class ClosedMidReopen(CameraSource):
        def _capture(self) -> cv2.VideoCapture:
            cap = super()._capture()
            opened.append(cap)
            if len(opened) == 2:  # the reopen after the file's end: the server stops meanwhile
                self.close()
            return cap

    cam = ClosedMidReopen(str(video), backoff=SHORT)
    it = iter(cam)
    frames = [next(it) for _ in range(10)]
    with pytest.raises(CameraLost, match="closed while reconnecting"):
        next(it)
    assert [f.index for f in frames] == list(range(10))
    assert len(opened) == 2 and not opened[1].isOpened() and cam._cap is None
