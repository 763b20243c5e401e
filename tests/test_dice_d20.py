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
from vision.dice.d20 import FINDER_FILE, READER_FILE, read_d20
from vision.synth import dice as synth

HELD_OUT_FONTS = [i for i, f in enumerate(synth.NUMERAL_FONTS) if "Liberation" in f]
NO_DICE = sorted((Path(__file__).parent / "data" / "apriltag_test").glob("*.jpg"))


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
    assert FINDER_FILE.is_file() and READER_FILE.is_file()
    assert FINDER_FILE.stat().st_size + READER_FILE.stat().st_size <= 5 * 1024 * 1024


def test_rendered_d20s_in_unseen_fonts_are_read(views: list[synth.TrayCase]) -> None:
    right, wrong, missed, false, labelled = _score([(c.view.image, c.view.region_px, c.view.dice) for c in views])
    assert labelled >= 45
    assert right >= MEASURED_RIGHT_FLOOR * labelled, (right, wrong, missed, false, labelled)
    assert false == 0, (right, wrong, missed, false, labelled)


MEASURED_RIGHT_FLOOR = 0.78  # measured 43 of 50 (0.86), 0 wrong, 7 missed, 0 false (D20_CARD.md); was 25 of 50


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


@pytest.mark.parametrize("photo", NO_DICE[:3], ids=lambda p: p.name)
def test_a_photo_with_no_dice_gives_none(photo: Path) -> None:
    image = cv2.imread(str(photo))
    assert image is not None
    assert read_d20(image) == []
