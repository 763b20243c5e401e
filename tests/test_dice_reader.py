"""`vision.dice.read_dice` on real dice-tray photos (tests/data/dice_tray_d6, labelled by the photographer).

The shipped model was trained on all 200 photos, so these are checks of its behaviour (faces, counts, regions,
pixels), not of its accuracy: the held-out figures are the training's k-fold ones (bench's Dice section).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.dice import PHOTOS, load_labels, match
from vision.dice import LOW_CONFIDENCE, DiceError, Die, read_dice
from vision.tags import load_image

ROOT = Path(__file__).resolve().parent.parent
PICKED = ("IMG_20191208_111642.jpg", "IMG_20191208_112404.jpg", "IMG_20191209_095447.jpg")
"""Photos of 22, 25 and 12 dice: white, black, coloured and translucent ones between them."""


@pytest.fixture(scope="module")
def labelled() -> dict[str, tuple[np.ndarray, np.ndarray, list[int]]]:
    """Name -> (BGR photo, labelled boxes, labelled faces) for the picked photos."""
    out = {}
    for path, boxes, faces in load_labels(PHOTOS):
        if path.name in PICKED:
            out[path.name] = (load_image(path), boxes, faces)
    assert sorted(out) == sorted(PICKED)
    return out


@pytest.mark.parametrize("name", PICKED)
def test_every_labelled_die_is_found_once_with_its_face(name: str, labelled: dict) -> None:
    image, boxes, faces = labelled[name]
    dice = read_dice(image)
    pairs, missed, false = match(dice, boxes, faces)
    # the shipped finder misses 1 of 112404's 25 (a 21 px translucent blue die showing one pip)
    assert missed <= (1 if name == "IMG_20191208_112404.jpg" else 0) and false == 0, (
        f"{name}: {missed} missed, {false} false of {len(faces)}")
    wrong = [(truth, read) for truth, read in pairs if truth != read]
    assert len(wrong) <= 1, f"{name}: faces (labelled, read) {wrong}"  # the reader is ~97 % right, not 100 %
    for die in dice:
        assert die.sides == 6 and 0.0 <= die.confidence <= 1.0
        x0, y0, x1, y1 = die.box_px
        assert x0 < die.centre_px[0] < x1 and y0 < die.centre_px[1] < y1
        assert 15 < x1 - x0 < 90 and 15 < y1 - y0 < 90  # the labelled dice are 21-69 px
    # each die's box is the labelled one's, give or take (the finder's sizes spread by about a fifth)
    errors = []
    for die in dice:
        b = min(boxes, key=lambda b: np.hypot((b[0] + b[2]) / 2 - die.centre_px[0], (b[1] + b[3]) / 2 - die.centre_px[1]))
        errors.append(np.abs(np.asarray(die.box_px) - b).max() / (b[2] - b[0]))
    assert np.median(errors) < 0.15 and max(errors) < 0.5, errors


def test_a_region_reads_only_the_dice_in_it_in_full_picture_pixels(labelled: dict) -> None:
    """Only dice centred in the region, or outside it by at most half their size (leaning on a tray's wall), are
    read; each where the whole picture, read as a table camera's (a region around all of it), has it."""
    image, boxes, faces = labelled[PICKED[0]]
    h, w = image.shape[:2]
    whole = read_dice(image, region=np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64))
    assert len(whole) == len(faces)
    left = np.array([[0, 0], [w / 2, 0], [w / 2, h], [0, h]], np.float64)
    inside = read_dice(image, region=left)
    expected = [d for d in whole if d.centre_px[0] <= w / 2 + 0.5 * d.side_px]
    assert 0 < len(inside) < len(whole)
    assert sorted(d.value for d in inside) == sorted(d.value for d in expected)
    for d in inside:
        twin = min(expected, key=lambda e: np.hypot(e.centre_px[0] - d.centre_px[0], e.centre_px[1] - d.centre_px[1]))
        assert np.hypot(twin.centre_px[0] - d.centre_px[0], twin.centre_px[1] - d.centre_px[1]) < 3.0
    # a triangle: only the dice whose centre is in it or within half their size of its long edge
    triangle = np.array([[0, 0], [w, 0], [0, h]], np.float64)
    in_triangle = read_dice(image, region=triangle)
    past = [(d.centre_px[0] / w + d.centre_px[1] / h - 1.0) / np.hypot(1 / w, 1 / h) for d in in_triangle]
    assert all(p <= 0.5 * d.side_px + 0.5 for p, d in zip(past, in_triangle))
    near = [d for d in whole if (d.centre_px[0] / w + d.centre_px[1] / h - 1.0) / np.hypot(1 / w, 1 / h)
            <= 0.5 * d.side_px]
    assert len(in_triangle) == len(near)


def test_a_photo_set_on_a_larger_frame_reads_the_same_dice_shifted(labelled: dict) -> None:
    image, _, _ = labelled[PICKED[1]]
    dx, dy = 96, 64  # multiples of the finder's coarsest step (16 of its pixels, 32 of the photo's): same pixels
    frame = np.full((image.shape[0] + 2 * dy, image.shape[1] + 2 * dx, 3), 200, np.uint8)
    frame[dy:dy + image.shape[0], dx:dx + image.shape[1]] = image
    alone = sorted(read_dice(image), key=lambda d: d.centre_px)
    framed = sorted(read_dice(frame), key=lambda d: d.centre_px)
    assert [d.value for d in framed] == [d.value for d in alone]
    for a, f in zip(alone, framed):
        assert abs(f.centre_px[0] - a.centre_px[0] - dx) < 0.5 and abs(f.centre_px[1] - a.centre_px[1] - dy) < 0.5


def test_no_dice_in_an_empty_tray_or_a_blank_frame(labelled: dict) -> None:
    image, boxes, _ = labelled[PICKED[2]]
    empty = image.copy()
    for x0, y0, x1, y1 in boxes.astype(int):  # each die painted over with the tray beside it
        pad = 6
        empty[max(0, y0 - pad):y1 + pad, max(0, x0 - pad):x1 + pad] = np.median(
            image[max(0, y0 - 3 * pad):max(1, y0 - pad), max(0, x0):x1 + 1].reshape(-1, 3), axis=0)
    assert read_dice(empty) == []
    assert read_dice(np.full((480, 640, 3), 128, np.uint8)) == []
    assert read_dice(np.zeros((3, 3, 3), np.uint8)) == []


def test_grey_and_four_channel_pictures_are_read_too(labelled: dict) -> None:
    image, _, faces = labelled[PICKED[0]]
    bgra = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    assert [d.value for d in read_dice(bgra)] == [d.value for d in read_dice(image)]
    grey = read_dice(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    assert len(grey) >= len(faces) - 2  # colour helps; grey still finds the dice


def test_low_confidence_is_the_panels_threshold() -> None:
    assert LOW_CONFIDENCE == 0.8
    die = Die(4, 6, (10.04, 20.0), (0.0, 0.0, 20.0, 40.0), 0.91234)
    assert die.to_json() == {"value": 4, "sides": 6, "centre_px": [10.0, 20.0], "box_px": [0.0, 0.0, 20.0, 40.0],
                             "confidence": 0.912}


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"sides": 8}, "Dice of 8 sides cannot be read; give 6 or 20."),
    ({"region": np.array([[0, 0], [10, 10]])}, "not a polygon"),
    ({"region": np.array([[0, 0], [10, np.nan], [0, 10]])}, "not a polygon"),
])
def test_bad_requests_say_what_to_give(kwargs: dict, words: str) -> None:
    with pytest.raises(DiceError, match=words.replace("(", r"\(").replace(")", r"\)")):
        read_dice(np.zeros((64, 64, 3), np.uint8), **kwargs)


def test_a_picture_that_is_no_image_array_is_refused() -> None:
    with pytest.raises(DiceError, match="not an 8-bit image"):
        read_dice(np.zeros((64, 64, 3), np.float32))
    with pytest.raises(DiceError, match="2 channels"):
        read_dice(np.zeros((64, 64, 2), np.uint8))


def test_d20s_go_to_their_reader_or_it_says_in_one_sentence_that_it_is_missing() -> None:
    blank = np.full((240, 320, 3), 128, np.uint8)
    if importlib.util.find_spec("vision.dice.d20") is None:
        with pytest.raises(DiceError, match="d20 reading is not available"):
            read_dice(blank, sides=20)
    else:
        assert read_dice(blank, sides=20) == []


def test_the_model_is_small_and_described() -> None:
    models = ROOT / "vision" / "dice" / "models"
    size = sum(p.stat().st_size for p in models.glob("d6_*.onnx"))
    assert 0 < size <= 5 * 1024 * 1024
    card = (models / "MODEL_CARD.md").read_text()
    for words in ("BSD 3-Clause", "train/dice/train_d6.py", "seed", "Held-out accuracy"):
        assert words in card


@pytest.mark.parametrize("times", [2.0, 3.0, 5.0])
def test_a_phone_held_close_reads_large_dice_as_the_photo_reads_them(times: float, labelled: dict) -> None:
    """The 12-dice photo (dice ~40 px) enlarged 2, 3 and 5 times (dice ~80, ~120, ~200 px: a phone's close 1920 px
    photo or larger): every die found once in its labelled box, scaled, and its face read (one may be misread);
    at full size the finder would take pips for dice."""
    image, boxes, faces = labelled[PICKED[2]]
    big = cv2.resize(image, None, fx=times, fy=times, interpolation=cv2.INTER_CUBIC)
    dice = read_dice(big)
    pairs, missed, false = match(dice, (boxes + 0.5) * times - 0.5, faces)
    assert (missed, false) == (0, 0)
    assert sum(truth == read for truth, read in pairs) >= len(faces) - 1
