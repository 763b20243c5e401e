"""The d20 reader (vision/dice/d20.py) on rendered close views whose numeral fonts its training never saw, and
on real photos with no dice in them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.dice import match
from vision.dice import read_dice
from vision.dice.d20 import (
    FINDER_FILE,
    FOCAL,
    LOCATE_CELLS,
    LOCATE_SPAN,
    LOCATOR_FILE,
    READER_FILE,
    face_centre,
    located,
    read_d20,
    top_faces,
)
from vision.synth import dice as synth

HELD_OUT_FONTS = [i for i, f in enumerate(synth.NUMERAL_FONTS) if "Liberation" in f]
DATA = Path(__file__).parent / "data"
NO_DICE = sorted((DATA / "apriltag_test").glob("*.jpg"))
CALIBRATION = sorted((DATA / "calibration").rglob("*.jpg"))
D6_HELD_OUT = [DATA / "dice_tray_d6" / "photos" / n for k, n in enumerate(sorted(
    p.name for p in (DATA / "dice_tray_d6" / "photos").glob("*.jpg"))) if k % 5 == 0]
"""The d6 photos the d20 reader's training held out (train_d20.py: every fifth by name)."""


@pytest.fixture(scope="module")
def views() -> list[synth.TrayCase]:
    """10 close views (1280 x 960, dice 80-200 px), 5 d20 each, every look, no hand: 50 dice."""
    return [synth.random_phone_tray(7000 + k, sides=20, count=5, fonts=HELD_OUT_FONTS or None, hand=False)
            for k in range(10)]


def _score(cases: Sequence[tuple[np.ndarray, np.ndarray, list[synth.DieTruth]]]) -> tuple[int, int, int, int, int]:
    """(right, wrong, missed, false, labelled) over (image, region, truths); a die under half seen is not labelled."""
    right = wrong = missed = false = labelled = 0
    for image, region, truths in cases:
        seen = [t for t in truths if t.visible >= 0.5]
        dice = read_d20(image, region)
        assert all(d.sides == 20 and 1 <= d.value <= 20 and 0.0 <= d.confidence <= 1.0 for d in dice)
        pairs, m, f = match(dice, np.array([t.box_px for t in seen]).reshape(-1, 4), [t.value for t in seen])
        right += sum(a == b for a, b in pairs)
        wrong += sum(a != b for a, b in pairs)
        missed, false, labelled = missed + m, false + f, labelled + len(seen)
    return right, wrong, missed, false, labelled


def test_the_models_are_small_and_shipped() -> None:
    files = (FINDER_FILE, LOCATOR_FILE, READER_FILE)
    assert all(f.is_file() for f in files)
    assert sum(f.stat().st_size for f in files) <= 5 * 1024 * 1024


def _heat(dx: float, dy: float, sigma: float) -> np.ndarray:
    """Locator logits of a Gaussian heat map round (dx, dy) die sizes from the square's middle, `sigma` cells."""
    n = LOCATE_CELLS
    cx, cy = (dx / LOCATE_SPAN + 0.5) * n - 0.5, (dy / LOCATE_SPAN + 0.5) * n - 0.5
    ys, xs = np.mgrid[0:n, 0:n]
    return (-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma**2)).reshape(-1)


@pytest.mark.parametrize("dx, dy", [(0.0, 0.0), (0.04, -0.02), (0.0406, 0.0406), (0.3, 0.1), (-0.45, 0.4)])
def test_the_locators_heat_map_gives_the_top_faces_place(dx: float, dy: float) -> None:
    """A heat map shaped as the training target (0.8 cells) gives back its middle to 0.002 of the die's size, in a
    cell's middle or between cells (the square's middle is where four cells meet), and a sure answer's surety."""
    x, y, surety = located(_heat(dx, dy, 0.8))
    assert abs(x - dx) <= 0.002 and abs(y - dy) <= 0.002, (x, y)
    assert 0.8 <= surety <= 0.95


def test_a_locator_unsure_between_two_faces_picks_one_and_says_so() -> None:
    """Two equal faces 0.3 of the die's size apart: the place is one of them, within 0.03 (the other's heat pulls it
    0.02), not the point between (an edge), and the surety about half a sure answer's; a flat map's surety is its
    (at most) 9 cells' share."""
    two = np.logaddexp(_heat(-0.15, 0.0, 0.8), _heat(0.15, 0.0, 0.8))
    x, y, surety = located(two)
    assert min(abs(x - 0.15), abs(x + 0.15)) <= 0.03 and abs(y) <= 0.002, (x, y)
    assert 0.35 <= surety <= 0.5
    assert located(np.zeros(LOCATE_CELLS**2))[2] <= 9 / LOCATE_CELLS**2


def test_the_locator_puts_the_top_face_nearer_than_the_cameras_geometry(views: list[synth.TrayCase]) -> None:
    """From each die's rendered box, the top face's middle (`face_px`) as the locator places it and as the
    geometric guess does, in units of the die's size (a close camera sees a die off its middle from the side)."""
    ours, guess = [], []
    for case in views:
        image = case.view.image
        h, w = image.shape[:2]
        centre, focal = ((w - 1) / 2.0, (h - 1) / 2.0), FOCAL * max(w, h)
        seen = [t for t in case.view.dice if t.visible >= 0.6]
        at = [((t.box_px[0] + t.box_px[2]) / 2, (t.box_px[1] + t.box_px[3]) / 2,
               max(t.box_px[2] - t.box_px[0], t.box_px[3] - t.box_px[1])) for t in seen]
        for t, (x, y, size), face in zip(seen, at, top_faces(image, at, centre, focal), strict=True):
            ours.append(np.hypot(face[0] - t.face_px[0], face[1] - t.face_px[1]) / size)
            g = face_centre((x, y), size, centre, focal)
            guess.append(np.hypot(g[0] - t.face_px[0], g[1] - t.face_px[1]) / size)
    assert len(ours) >= 45
    assert np.median(ours) <= LOCATOR_MEDIAN_CEILING and np.median(ours) < 0.6 * np.median(guess), (
        np.median(ours), np.median(guess))


LOCATOR_MEDIAN_CEILING = 0.04  # measured 0.016 of a die's size (the regression locator before: 0.025; the guess: 0.071)


def test_rendered_d20s_in_unseen_fonts_are_read(views: list[synth.TrayCase]) -> None:
    right, wrong, missed, false, labelled = _score([(c.view.image, c.view.region_px, c.view.dice) for c in views])
    assert labelled >= 45
    assert right >= MEASURED_RIGHT_FLOOR * labelled, (right, wrong, missed, false, labelled)
    assert false == 0, (right, wrong, missed, false, labelled)


MEASURED_RIGHT_FLOOR = 0.86  # measured 46 of 50 (0.92), 2 wrong, 2 missed, 0 false (D20_CARD.md; 47 with the finder
# before 2026-11-28 noon, with either locator; 43 before one, 25 at first)


def test_a_d20_under_a_phone_held_close_is_read() -> None:
    """One d20 on a small tray, a phone 2.8" over it (the die 28-33 % of the picture's width), 10 views, unseen
    fonts: its face is read. Measured 9 of 10 (19 of 20 over seeds 500-519; 10 of 19 with the phone 2" over it,
    the die 42-51 % of the width); the finder before 2026-11-28 read none of them."""
    right = n = 0
    for seed in range(500, 510):
        rng = np.random.default_rng(seed)
        tray = synth.Tray((10.0, 10.0), (2.4, 2.0), float(rng.uniform(-8, 8)), synth.FELTS[seed % len(synth.FELTS)])
        dice = synth.roll_dice(tray, 20, 1, seed, fonts=HELD_OUT_FONTS or None, leaning=0.0, touching=0.0)
        view = synth.phone_view(tray, dice, seed, height_in=2.8, tilt_deg=float(rng.uniform(0, 15)),
                                yaw_deg=float(rng.uniform(-180, 180)))
        (t,) = view.dice
        if t.visible < 0.95:
            continue
        pairs, _, _ = match(read_d20(view.image), np.array([t.box_px]), [t.value])
        n, right = n + 1, right + sum(a == b for a, b in pairs)
    assert n >= 9
    assert right >= 7, (right, n)


def test_dice_of_the_felts_colour_are_found_and_read() -> None:
    """Black dice on black felt and white dice on grey felt: what colour clustering used to miss."""
    cases = []
    for k, (felt, look) in enumerate((((32.0, 30.0, 30.0), "black"), ((200.0, 200.0, 198.0), "white"))):
        tray = synth.Tray((10.0, 10.0), (6.0, 4.0), 5.0, felt)
        dice = synth.roll_dice(tray, 20, 4, 8100 + k, looks=[look], fonts=HELD_OUT_FONTS or None, leaning=0.0)
        view = synth.phone_view(tray, dice, 8100 + k, height_in=8.0)
        cases.append((view.image, view.region_px, view.dice))
    right, wrong, missed, false, labelled = _score(cases)
    assert labelled == 8
    assert right >= 7 and missed == 0 and false == 0, (right, wrong, missed, false, labelled)


def test_read_dice_reads_d20s_through_this_reader(views: list[synth.TrayCase]) -> None:
    case = views[0]
    dice = read_dice(case.view.image, 20, region=case.view.region_px)
    assert dice and all(d.sides == 20 for d in dice)
    truths = [t for t in case.view.dice if t.visible >= 0.5]
    pairs, missed, false = match(dice, np.array([t.box_px for t in truths]).reshape(-1, 4), [t.value for t in truths])
    assert false == 0 and missed <= 1
    for d in dice:
        x0, y0, x1, y1 = d.box_px
        assert x0 < d.centre_px[0] < x1 and y0 < d.centre_px[1] < y1
        assert 60 <= max(x1 - x0, y1 - y0) <= 260


def test_an_empty_tray_has_no_dice() -> None:
    view = synth.phone_view(synth.Tray((10.0, 10.0), (6.0, 4.0)), [], 3)
    assert read_d20(view.image, view.region_px) == []
    assert read_d20(view.image) == []


def test_real_photos_without_a_d20_give_few_false_d20s_and_none_sure() -> None:
    """Every real photo here with no d20 in it: the AprilTag photos (one of them a field of tagged cubes), the
    calibration photos, and the phone photos of d6 that the reader's training held out (every fifth by name), as
    shot and enlarged 2.5 times (a phone held close). A d20 read there is false; one under 0.8 confidence is put
    to the players for a tap, so none may be surer than that."""
    photos = [(p, 1.0) for p in NO_DICE + CALIBRATION] + [(p, z) for p in D6_HELD_OUT for z in (1.0, 2.5)]
    false = []
    for path, zoom in photos:
        image = cv2.imread(str(path))
        assert image is not None, path
        image = cv2.resize(image, None, fx=zoom, fy=zoom, interpolation=cv2.INTER_CUBIC) if zoom != 1.0 else image
        false += [(path.name, zoom, d.value, d.confidence) for d in read_d20(image)]
    assert len(photos) == 97
    assert len(false) <= FALSE_D20_CEILING and all(c < 0.8 for *_, c in false), false


FALSE_D20_CEILING = 2
"""Measured 0 over the 97 pictures with the finder and reader of 2026-11-28 noon read at 18 turns (at 12 turns: 1,
0.405 on a chessboard, left07); the finder before: 2 (0.408 on the ChArUco photo, choriginal, and 0.309 on a chessboard, left06); the
regression locator before: 2 (0.39 and 0.53, on tagged cubes); the reader before any locator: 14 on the d6 photos
alone (at most 0.64)."""
