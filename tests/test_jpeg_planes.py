"""A camera's JPEG decoded once (vision/jpeg_planes.py): the grey it gives is OpenCV's grey bit for bit, so the
tags, positions and verdicts cannot change; the page's picture made from its colour planes looks as OpenCV's own
small decode does; and anything the one decode cannot take is decoded by OpenCV as before. Real photos
(tests/data), the rendered sample sessions (figures on the bases) and re-encodings of a real photo in every
chroma sampling a camera may send."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from bench.web import mjpeg_stream
from vision import jpeg_planes
from vision.errors import FrameError
from vision.sources import REDUCED_COLOUR, Backoff, CameraSource, Frame

DATA = Path(__file__).parent / "data"
PHOTOS = sorted((DATA / "apriltag_test").glob("*.jpg")) + [DATA / "calibration" / "opencv_charuco_sample" / "choriginal.jpg"]
SAMPLES = [path for name in ("magni_placement", "stress", "valknut_skirmish")
           for path in sorted((Path(__file__).parents[1] / "sample_frames" / name).glob("*.jpg"))[::12]]
PHOTO = PHOTOS[0]
SAMPLINGS = {"4:4:4": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444, "4:2:2": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422,
             "4:2:0": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420, "4:4:0": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_440,
             "4:1:1": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_411}


def opencv_grey(data: bytes) -> np.ndarray:
    grey = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE | cv2.IMREAD_IGNORE_ORIENTATION)
    assert grey is not None
    return grey


def reencoded() -> Iterator[tuple[str, bytes]]:
    """A real photo (799 x 533) as cameras code it: each chroma sampling, restart markers, and sizes that are
    no whole number of sampling blocks."""
    photo = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    assert photo is not None
    for name, factor in SAMPLINGS.items():
        for w, h in ((799, 533), (798, 532), (641, 479)):
            params = [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_SAMPLING_FACTOR, factor]
            yield f"{name} {w}x{h}", cv2.imencode(".jpg", photo[:h, :w], params)[1].tobytes()
    yield "restart markers", cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 80,
                                                          cv2.IMWRITE_JPEG_RST_INTERVAL, 4])[1].tobytes()


ALL = [(p.name, p.read_bytes()) for p in PHOTOS + SAMPLES] + list(reencoded())


@pytest.fixture
def without_library() -> Iterator[None]:
    jpeg_planes.disable_for_tests()
    try:
        yield
    finally:
        jpeg_planes.disable_for_tests(False)


def test_the_one_decode_library_is_installed() -> None:
    """./go test installs Debian's libturbojpeg0 (and PyTurboJPEG comes with Tablesight): the tests below then
    check the one decode itself, not only its fallback."""
    assert jpeg_planes.available(), "libturbojpeg.so.0 not found: install Debian's libturbojpeg0 (./go test does)"


@pytest.mark.parametrize(("name", "data"), ALL, ids=[name for name, _ in ALL])
def test_the_one_decode_gives_opencvs_grey_bit_for_bit(name: str, data: bytes) -> None:
    got = jpeg_planes.decode(data)
    assert got is not None
    gray, chroma = got
    assert chroma is not None
    expected = opencv_grey(data)
    assert gray.shape == expected.shape and gray.dtype == np.uint8 and gray.flags.c_contiguous
    assert np.array_equal(gray, expected)
    frame = Frame.of_jpeg(3, 0.1, data, "frame 3 of camera 0", colour=True)
    assert frame.colour_planes is not None and np.array_equal(frame.colour_planes.cr, chroma.cr)
    assert np.array_equal(frame.gray, expected)


@pytest.mark.parametrize(("name", "data"), ALL, ids=[name for name, _ in ALL])
def test_the_pages_picture_from_the_planes_looks_as_opencvs_small_decode(name: str, data: bytes) -> None:
    """At a half, quarter and eighth of the frame, or whole (what `Frame.picture` picks for the page): the same size, and
    within a fraction of a grey level on average of libjpeg's own scaled decode (0.06-0.56 measured; the worst
    are samplings whose chroma libjpeg upsamples with its own filter)."""
    frame = Frame.of_jpeg(0, 0.0, data, "frame 0 of camera 0", colour=True)
    assert frame.colour_planes is not None
    w, h = frame.size
    for k, flag in (*REDUCED_COLOUR, (1, cv2.IMREAD_COLOR)):  # 1: nothing smaller is wide enough, the whole frame
        decoded = cv2.imdecode(np.frombuffer(data, np.uint8), flag | cv2.IMREAD_IGNORE_ORIENTATION)
        assert decoded is not None
        expected = decoded.astype(int)
        picture = frame.picture(-(-w // k) if k > 1 else w)
        assert picture.shape == expected.shape == (-(-h // k), -(-w // k), 3), (k, picture.shape, expected.shape)
        error = np.abs(picture - expected)
        assert error.mean() < 0.7 and np.percentile(error, 99) <= 8, (k, error.mean(), np.percentile(error, 99))


def test_a_grey_jpeg_is_decoded_by_opencv_and_has_no_planes() -> None:
    data = (DATA / "calibration" / "opencv_left_chessboard" / "left01.jpg").read_bytes()
    assert jpeg_planes.decode(data) is None
    frame = Frame.of_jpeg(0, 0.0, data, "frame 0 of camera 0", colour=True)
    assert frame.colour_planes is None and np.array_equal(frame.gray, opencv_grey(data))
    assert frame.picture(320).shape == (240, 320, 3)


def test_a_cmyk_jpeg_is_decoded_by_opencv() -> None:
    photo = Image.open(PHOTO).convert("CMYK")
    buf = io.BytesIO()
    photo.save(buf, format="JPEG", quality=90)
    data = buf.getvalue()
    assert jpeg_planes.decode(data) is None
    frame = Frame.of_jpeg(0, 0.0, data, "frame 0 of camera 0", colour=True)
    assert frame.colour_planes is None and np.array_equal(frame.gray, opencv_grey(data))


def test_a_damaged_jpeg_is_left_to_opencv_with_the_same_grey_or_the_same_sentence() -> None:
    """libjpeg decodes past a JPEG cut short (grey fill) and says so; the one decode stops at the warning and
    OpenCV decodes it as it always did. A JPEG with nothing but zeros inside is one sentence either way."""
    data = PHOTO.read_bytes()
    cut = data[: len(data) // 2] + b"\xff\xd9"
    assert jpeg_planes.decode(cut) is None
    assert np.array_equal(Frame.of_jpeg(0, 0.0, cut, "frame 0 of camera 0", colour=True).gray, opencv_grey(cut))
    zeros = data[:3] + bytes(len(data) - 5) + data[-2:]
    assert jpeg_planes.decode(zeros) is None
    sentences = []
    for colour in (True, False):
        with pytest.raises(FrameError) as err:
            Frame.of_jpeg(7, 0.0, zeros, "frame 7 of camera 0", colour=colour)
        sentences.append(str(err.value))
    assert sentences[0] == sentences[1] and sentences[0].startswith("Frame 7 of camera 0 is not a readable image;")


def test_a_progressive_jpeg_is_left_to_opencv_even_cut_between_its_scans() -> None:
    """OpenCV's own libjpeg-turbo and Debian's finish a progressive JPEG cut between its scans differently (no
    warning: each scan is whole), so only sequential JPEGs, as cameras send them, are decoded once."""
    photo = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    assert photo is not None
    data = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 85, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()
    scans = [i for i in range(2, len(data) - 1) if data[i] == 0xFF and data[i + 1] == 0xDA]
    assert len(scans) >= 5
    for cut in [data] + [data[:i] + b"\xff\xd9" for i in scans[1:]]:
        assert jpeg_planes.decode(cut) is None
        frame = Frame.of_jpeg(0, 0.0, cut, "frame 0 of camera 0", colour=True)
        assert frame.colour_planes is None and np.array_equal(frame.gray, opencv_grey(cut))


def test_a_source_whose_jpegs_keep_falling_back_stops_trying_the_one_decode(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A webcam that puts junk before every frame's end: libjpeg warns at every frame, so the one decode fails
    each time and OpenCV decodes the frame (three decodes). After GIVE_UP_AFTER such frames in a row the source
    no longer tries; its frames are read exactly as before."""
    from session.feeds import RecordingFeed

    data = PHOTO.read_bytes()
    junk = data[:-2] + b"\xff\x12\x34" + data[-2:]
    for i in range(12):
        (tmp_path / f"frame_{i:06d}.jpg").write_bytes(junk)
    tried: list[bool] = []
    real = jpeg_planes.decode

    def counted(raw: bytes) -> object:
        got = real(raw)
        tried.append(got is not None)
        return got

    monkeypatch.setattr(jpeg_planes, "decode", counted)
    feed = RecordingFeed.open(tmp_path, colour=True)
    frames = [feed.read() for _ in range(12)]
    assert tried == [False] * jpeg_planes.GIVE_UP_AFTER
    assert all(f is not None and f.colour_planes is None and np.array_equal(f.gray, opencv_grey(junk)) for f in frames)
    tries = jpeg_planes.Tries()
    for _ in range(jpeg_planes.GIVE_UP_AFTER - 1):
        tries.seen(False)
    tries.seen(True)  # one that decodes starts the count again
    assert tries.wanted and tries.failed == 0


def test_a_jpeg_claiming_too_many_pixels_is_refused_in_the_same_sentence() -> None:
    """A camera JPEG whose frame header claims 20000 x 20000 px: refused in one sentence, decoded once or not."""
    data = bytearray(PHOTO.read_bytes())
    sof = next(i for i in range(2, len(data) - 1) if data[i] == 0xFF and data[i + 1] in (0xC0, 0xC1))
    data[sof + 5:sof + 9] = (20000).to_bytes(2, "big") * 2
    sentences = []
    for colour in (True, False):
        with pytest.raises(FrameError) as err:
            Frame.of_jpeg(2, 0.0, bytes(data), "frame 2 of camera 0", colour=colour)
        sentences.append(str(err.value))
    assert sentences[0] == sentences[1]
    assert sentences[0].startswith("Frame 2 of camera 0 is 20000x20000 pixels (400 MP), more than the 50 MP")


def test_without_the_library_a_camera_frame_is_decoded_twice_by_opencv(without_library: None) -> None:
    assert not jpeg_planes.available()
    data = PHOTO.read_bytes()
    frame = Frame.of_jpeg(0, 0.0, data, "frame 0 of camera 0", colour=True)
    assert frame.colour_planes is None and np.array_equal(frame.gray, opencv_grey(data))
    half = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_REDUCED_COLOR_2 | cv2.IMREAD_IGNORE_ORIENTATION)
    assert half is not None
    assert np.array_equal(frame.picture(400), half)


def test_a_recorded_frame_keeps_to_the_grey_alone() -> None:
    """A replay reads only the grey (no page picture at every frame): no colour planes are decoded for it."""
    frame = Frame.of_jpeg(0, 0.0, PHOTO.read_bytes(), PHOTO)
    assert frame.colour_planes is None
    assert frame.renumbered(5).colour_planes is None


def test_an_mjpeg_cameras_frames_are_decoded_once_and_keep_their_planes_when_renumbered() -> None:
    data = [PHOTOS[0].read_bytes(), PHOTOS[1].read_bytes()]
    with mjpeg_stream(data) as url, CameraSource(url, backoff=Backoff(first_s=0.05, factor=2.0, total_s=0.4)) as cam:
        assert cam.keeps_jpeg
        it = iter(cam)
        frames = [next(it) for _ in range(3)]
    for frame in frames:
        assert frame.jpeg is not None and frame.colour_planes is not None
        assert np.array_equal(frame.gray, opencv_grey(frame.jpeg))
        again = frame.renumbered(9)
        assert again.colour_planes is frame.colour_planes and again.index == 9


def test_a_recording_a_page_plays_is_decoded_once_and_measured_on_the_same_grey(tmp_path: Path) -> None:
    """serve plays a recording for a page (the sample, a replay): its frames keep their planes; `replay` and the
    timeline read the grey alone. The grey is the same either way, so are the verdicts."""
    from session.feeds import RecordingFeed

    folder = Path(__file__).parents[1] / "sample_frames" / "stress"
    watched, alone = RecordingFeed.open(folder, colour=True), RecordingFeed.open(folder)
    for _ in range(5):
        a, b = watched.read(), alone.read()
        assert a is not None and b is not None and a.index == b.index
        assert a.colour_planes is not None and b.colour_planes is None
        assert np.array_equal(a.gray, b.gray)
        colour = cv2.imdecode(np.frombuffer(b.jpeg or b"", np.uint8), cv2.IMREAD_COLOR)
        assert colour is not None
        assert np.abs(a.picture(a.size[0]) - colour.astype(int)).mean() < 0.1  # 0.02 measured on the sample's 720p frames


def test_a_camera_nobody_watches_decodes_the_grey_alone() -> None:
    """serve tells the camera whether a page watches (`CameraSource.pictured`): unwatched, its frames are decoded
    to grey only (the planes cost ~0.9 ms more a 1080p frame and nobody would see them); watched, once with colour."""
    watched = [False]
    with mjpeg_stream([PHOTOS[0].read_bytes()]) as url, \
            CameraSource(url, backoff=Backoff(first_s=0.05, factor=2.0, total_s=0.4)) as cam:
        cam.pictured = lambda: watched[0]
        it = iter(cam)
        alone = [next(it) for _ in range(3)]
        watched[0] = True
        seen = [next(it) for _ in range(3)]
    assert all(f.colour_planes is None for f in alone) and all(f.colour_planes is not None for f in seen)
    assert all(np.array_equal(f.gray, opencv_grey(f.jpeg or b"")) for f in alone + seen)


def test_serve_decodes_a_cameras_colour_only_while_a_page_watches(tmp_path: Path) -> None:
    """The real server watching a network camera (a sample session served as MJPEG): nobody watching, the frames
    it rules carry no colour planes; once a page's WebSocket watches, they do."""
    import time

    from websockets.sync.client import connect
    from websockets.typing import Origin

    from bench.web import serving_camera

    session = Path(__file__).parents[1] / "sample_frames" / "valknut_skirmish"
    with serving_camera(session, tmp_path, record=False) as (url, app):
        live = app.state.runtime.live
        assert live.wait_for_frame(60)
        time.sleep(0.5)
        assert live.broadcast.watchers == 0 and live.latest_result.frame.colour_planes is None
        with connect(url.replace("http", "ws") + "/ws/live", proxy=None, max_size=None, origin=Origin(url)) as ws:
            for _ in range(10):
                ws.recv(timeout=20)
            assert live.broadcast.watchers == 1 and live.latest_result.frame.colour_planes is not None
