"""A frame that comes as a JPEG (a recording's file, a camera frame as the recording keeps it, a phone's picture):
its grey is decoded at once and is the JPEG's own luminance, its colour only when asked for, and the page's
picture at a half, quarter or eighth of its size (vision/sources.py `Frame`). Real photos (tests/data)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from session.feeds import RecordingFeed
from session.frame_publisher import stream_jpeg, stream_picture, stream_size
from vision.errors import FrameError
from vision.sources import FolderSource, Frame, frame_of_file

PHOTO = Path(__file__).parent / "data" / "apriltag_test" / "34085369442_304b6bafd9_c.jpg"


def test_a_jpeg_frame_is_measured_on_its_own_luminance_and_shown_in_its_own_colour() -> None:
    data = PHOTO.read_bytes()
    frame = frame_of_file(PHOTO, 4, 0.5)
    assert (frame.index, frame.t, frame.jpeg) == (4, 0.5, data)
    expected_gray = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
    colour = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert expected_gray is not None and colour is not None
    assert np.array_equal(frame.gray, expected_gray)
    assert frame.size == (colour.shape[1], colour.shape[0])
    assert np.array_equal(frame.image, colour)
    # the luminance as coded, not rebuilt from the decoded colour: a grey level off on a few pixels at most
    rebuilt = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY).astype(int)
    assert np.abs(rebuilt - frame.gray).max() <= 4


def test_the_pages_picture_is_decoded_small_and_looks_like_the_whole_frame_scaled() -> None:
    frame = frame_of_file(PHOTO, 0, 0.0)
    w, h = frame.size
    half = frame.picture(w // 2 - 10)
    assert half.shape[:2] == ((h + 1) // 2, (w + 1) // 2)  # libjpeg's own half-size decode
    assert frame.picture(w // 8).shape[1] == (w + 7) // 8
    assert frame.picture(w).shape[:2] == (h, w)  # nothing smaller is wide enough: the whole frame
    shown = stream_picture(frame_of_file(PHOTO, 0, 0.0), 390)  # as the page is sent it
    assert shown.shape[:2] == stream_size(frame.size, 390)[::-1] == (h * 390 // w, 390)
    whole = cv2.resize(frame.image, (shown.shape[1], shown.shape[0]), interpolation=cv2.INTER_AREA)
    assert np.abs(shown.astype(int) - whole).mean() < 5.0  # grey levels, on a photo full of fine detail (3.7)


def test_a_png_frame_is_made_grey_from_its_colour(tmp_path: Path) -> None:
    colour = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    assert colour is not None
    path = tmp_path / "frame.png"
    cv2.imwrite(str(path), colour)
    frame = frame_of_file(path, 0, 0.0)
    assert frame.jpeg is None
    assert np.array_equal(frame.gray, cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY))
    assert frame.picture(10).shape == colour.shape


def test_a_corrupt_jpeg_frame_is_one_sentence_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "frame_000003.jpg"
    data = PHOTO.read_bytes()
    path.write_bytes(data[:4] + bytes(len(data) - 6) + data[-2:])  # the JPEG's markers, nothing inside
    with pytest.raises(FrameError, match="frame_000003.jpg is not a readable image; delete it or replace it"):
        frame_of_file(path, 3, 0.1)
    with pytest.raises(ValueError, match="its image, or its JPEG and grey"):
        Frame(0, 0.0)


def test_live_and_replay_read_the_same_grey_from_a_folder(tmp_path: Path) -> None:
    for k in range(3):
        (tmp_path / f"frame_{k:06d}.jpg").write_bytes(PHOTO.read_bytes())
    played = RecordingFeed.open(tmp_path)
    replayed = list(FolderSource(tmp_path))
    for k in range(3):
        live = played.read()
        assert live is not None and live.index == replayed[k].index == k
        assert np.array_equal(live.gray, replayed[k].gray)
    renumbered = replayed[1].renumbered(7, 2.5)
    assert (renumbered.index, renumbered.t) == (7, 2.5) and renumbered.gray is replayed[1].gray


def _plain_jpeg() -> bytes:
    """The photo as a JPEG without its EXIF segment (as a camera or a recording sends it)."""
    photo = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    assert photo is not None
    ok, buf = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok and b"Exif" not in buf.tobytes()
    return buf.tobytes()


def test_a_jpeg_frame_sent_whole_goes_to_the_page_as_it_came() -> None:
    data = _plain_jpeg()
    frame = Frame.of_jpeg(0, 0.0, data, "the photo")
    assert stream_jpeg(frame, None, 80) == data  # 799 px: no narrower than the page shows
    smaller = stream_jpeg(frame, 390, 80)
    shown = cv2.imdecode(np.frombuffer(smaller, np.uint8), cv2.IMREAD_COLOR)
    assert shown is not None and shown.shape == (260, 390, 3)
    colour = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert colour is not None
    assert stream_jpeg(colour, None, 80) != data  # a picture that came as pixels is compressed


def test_a_frame_given_its_jpeg_and_its_colour_is_measured_on_the_jpegs_grey() -> None:
    data = PHOTO.read_bytes()
    colour = cv2.imread(str(PHOTO), cv2.IMREAD_COLOR)
    frame = Frame(2, 0.1, colour, data)
    gray = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
    assert gray is not None
    assert np.array_equal(frame.gray, gray)
    assert frame.image is colour


def test_a_jpeg_with_an_orientation_tag_is_never_sent_as_it_came() -> None:
    """A browser turns a JPEG by its EXIF orientation; the shapes are drawn on the pixels as stored. The photo
    carries an EXIF segment."""
    data = PHOTO.read_bytes()
    assert b"Exif\x00" in data[:65536]
    frame = frame_of_file(PHOTO, 0, 0.0)
    sent = stream_jpeg(frame, None, 80)
    assert sent != data and b"Exif" not in sent
    decoded = cv2.imdecode(np.frombuffer(sent, np.uint8), cv2.IMREAD_COLOR)
    assert decoded is not None and decoded.shape == frame.image.shape
