"""The Dice section of `tablesight bench`: how well and how fast the camera reads d6 dice.

Rows (`dice_rows`):
- real photos, held out: the figures the training script measured with 5 folds by photo (each fold's models
  trained on the other 160 of the 200 photos, scored on its 40), shipped beside the model as
  vision/dice/models/d6_heldout.json (bench never trains);
- real photos, held out, enlarged 3x: the same folds' models on their held-out photos enlarged (dice ~120 px, as
  a phone held close over the tray sees them), measured by the training script too;
- real photos, held out, as a tray: the same held-out photos read as a table camera's tray is (full size, the
  table reader), measured by the training script too;
- real photos, shipped model: the shipped model over all 200 photos, which it was trained on (a check that the
  shipped files are the ones described, NOT a held-out figure), with the time a photo;
- speed: `read_dice` of a 500 x 400 px tray region (what a 1080p table camera sees of a tray) holding the
  most dice of any photo, on one OpenCV thread.
A match: a die read whose centre lies inside a labelled box, one to one, nearest box centre first.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from bench.report import Timing
from vision.dice import LOW_CONFIDENCE, Die, read_dice
from vision.dice.d6 import MODELS
from vision.dice.region import counts
from vision.tags import load_image

HELDOUT_FILE = MODELS / "d6_heldout.json"
PHOTOS = Path(__file__).resolve().parents[1] / "tests" / "data" / "dice_tray_d6"
"""The 200 labelled photos (in a source checkout; an installed package has none and skips that row)."""
FACES = ("one", "two", "three", "four", "five", "six")
REGION_PX = (500, 400)
"""The timed tray region, width x height, pixels."""
SPEED_REPEATS = 30


@dataclass(frozen=True)
class DiceRow:
    """Dice read against the photographer's (or the renderer's) labels; counts, and per cent of `dice`."""

    label: str
    photos: int
    dice: int
    """Labelled dice."""
    right: int
    """Found and read with the labelled face."""
    wrong: int
    """Found, another face read."""
    missed: int
    """Labelled dice no die read matched."""
    false: int
    """Dice read where no die is labelled."""
    low_confidence: int
    """Dice read under LOW_CONFIDENCE (0.8): the panel asks the players to confirm them."""
    confusion: tuple[tuple[int, ...], ...]
    """6 x 6: rows the labelled face 1..6, columns the face read (matched dice only)."""
    held_out: bool
    """True: every photo scored by a model that never saw it."""
    wrong_confident: int = 0
    """Read wrong at LOW_CONFIDENCE or more: the wrong faces nobody is asked to confirm."""
    ms: Timing | None = None
    """read_dice time: a photo, or a REGION_PX region for the speed row."""
    note: str = ""


def match(dice: Sequence[Die], boxes: np.ndarray, faces: Sequence[int]) -> tuple[list[tuple[int, int]], int, int]:
    """(labelled face, face read) of each matched die, the labelled dice missed and the false dice: a die read
    matches a labelled box that holds its centre, one to one, nearest box centre first."""
    pairs = []
    for di, die in enumerate(dice):
        x, y = die.centre_px
        for li, b in enumerate(boxes):
            if b[0] - 0.5 <= x <= b[2] - 0.5 and b[1] - 0.5 <= y <= b[3] - 0.5:
                pairs.append((math.hypot(x - (b[0] + b[2] - 1) / 2, y - (b[1] + b[3] - 1) / 2), di, li))
    used_d: set[int] = set()
    used_l: set[int] = set()
    out = []
    for _, di, li in sorted(pairs):
        if di not in used_d and li not in used_l:
            used_d.add(di)
            used_l.add(li)
            out.append((int(faces[li]), dice[di].value))
    return out, len(boxes) - len(used_l), len(dice) - len(used_d)


def load_labels(root: Path = PHOTOS) -> list[tuple[Path, np.ndarray, list[int]]]:
    """(photo, boxes N x 4 [x0, y0, x1, y1], faces 1..6) of each labelled photo, sorted by name."""
    labels = json.loads((root / "labels.json").read_text())
    return [(root / "photos" / name,
             np.array([d["box"] for d in labels[name]], np.float64).reshape(-1, 4),
             [FACES.index(d["label"]) + 1 for d in labels[name]]) for name in sorted(labels)]


def heldout_row(path: Path = HELDOUT_FILE) -> DiceRow:
    """The k-fold figures the training script wrote."""
    t = json.loads(path.read_text())["total"]
    return DiceRow("real photos, held out (5 folds)", t["photos"], t["dice"], t["right"], t["wrong"], t["missed"],
                   t["false"], t["low_confidence"], tuple(tuple(r) for r in t["confusion"]), True,
                   wrong_confident=t["wrong_confident"], note="each photo read by models trained on the other 160 photos")


def heldout_close_row(path: Path = HELDOUT_FILE) -> DiceRow | None:
    """The same held-out photos enlarged (a phone held close), if the training script measured them."""
    close = json.loads(path.read_text()).get("close")
    return None if close is None else _section_row(
        close, f"real photos, held out, enlarged {close['times']:g}x",
        "dice ~120 px, as a phone held close sees them; read by each fold's models")


def heldout_table_row(path: Path = HELDOUT_FILE) -> DiceRow | None:
    """The same held-out photos read as a table camera's tray is (the table reader), if the script measured them."""
    table = json.loads(path.read_text()).get("table")
    return None if table is None else _section_row(
        table, "real photos, held out, as a tray", "read as a table camera's tray: the table reader, each fold's")


def _section_row(section: dict, label: str, note: str) -> DiceRow:
    t = section["total"]
    return DiceRow(label, t["photos"], t["dice"], t["right"], t["wrong"], t["missed"], t["false"],
                   t["low_confidence"], tuple(tuple(r) for r in t["confusion"]), True,
                   wrong_confident=t["wrong_confident"], note=note)


def score_photos(photos: list[tuple[Path, np.ndarray, list[int]]], label: str, held_out: bool,
                 note: str = "") -> DiceRow:
    """read_dice over labelled photos (one OpenCV thread), against their labels, timed a photo."""
    confusion = np.zeros((6, 6), int)
    missed = false = low = wrong_sure = 0
    seconds = []
    with one_opencv_thread():
        for path, boxes, faces in photos:
            image = load_image(path)
            t0 = time.perf_counter()
            dice = read_dice(image)
            seconds.append(time.perf_counter() - t0)
            pairs, m, f = match(dice, boxes, faces)
            missed, false, low = missed + m, false + f, low + sum(d.confidence < LOW_CONFIDENCE for d in dice)
            sure, _, _ = match([d for d in dice if d.confidence >= LOW_CONFIDENCE], boxes, faces)
            wrong_sure += sum(truth != read for truth, read in sure)
            for truth, read in pairs:
                confusion[truth - 1, read - 1] += 1
    right = int(np.trace(confusion))
    return DiceRow(label, len(photos), sum(len(p[2]) for p in photos), right, int(confusion.sum()) - right,
                   missed, false, low, tuple(tuple(int(v) for v in r) for r in confusion), held_out,
                   wrong_sure, Timing.of(seconds[1:] or seconds), note)


def speed_row(photos: list[tuple[Path, np.ndarray, list[int]]]) -> DiceRow:
    """read_dice of a REGION_PX tray region around the photo with the most dice, one OpenCV thread."""
    path, boxes, faces = max(photos, key=lambda p: len(p[2]))
    image = load_image(path)
    h, w = image.shape[:2]
    rw, rh = min(REGION_PX[0], w), min(REGION_PX[1], h)
    cx, cy = (boxes[:, 0].min() + boxes[:, 2].max()) / 2, (boxes[:, 1].min() + boxes[:, 3].max()) / 2
    x0 = int(np.clip(cx - rw / 2, 0, w - rw))
    y0 = int(np.clip(cy - rh / 2, 0, h - rh))
    region = np.array([[x0, y0], [x0 + rw - 1, y0], [x0 + rw - 1, y0 + rh - 1], [x0, y0 + rh - 1]], np.float32)
    inside = [(b, f) for b, f in zip(boxes, faces)  # the labelled dice read_dice counts in the region
              if counts(region, ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2), max(b[2] - b[0], b[3] - b[1]))]
    seconds = []
    with one_opencv_thread():
        dice = read_dice(image, region=region)  # warm-up (and the networks load)
        for _ in range(SPEED_REPEATS):
            t0 = time.perf_counter()
            read_dice(image, region=region)
            seconds.append(time.perf_counter() - t0)
    pairs, m, f = match(dice, np.array([b for b, _ in inside]).reshape(-1, 4), [f for _, f in inside])
    confusion = np.zeros((6, 6), int)
    for truth, read in pairs:
        confusion[truth - 1, read - 1] += 1
    right = int(np.trace(confusion))
    return DiceRow(f"speed: {rw}x{rh} px tray region", 1, len(inside), right, int(confusion.sum()) - right, m, f,
                   sum(d.confidence < LOW_CONFIDENCE for d in dice), tuple(tuple(int(v) for v in r) for r in confusion),
                   False, ms=Timing.of(seconds), note=f"{path.name}, 1 OpenCV thread")


class one_opencv_thread:  # noqa: N801 - used as a context manager, named as one
    """cv2.setNumThreads(1) for the block, the former count restored after."""

    def __enter__(self) -> None:
        self.before = cv2.getNumThreads()
        cv2.setNumThreads(1)

    def __exit__(self, *_exc: object) -> None:
        cv2.setNumThreads(self.before)


def dice_rows(say: Callable[[str], None] = lambda _m: None) -> list[DiceRow]:
    """The Dice section's rows: held-out real photos, the shipped model on its training photos, and speed."""
    rows = [heldout_row(), *(r for r in (heldout_close_row(), heldout_table_row()) if r is not None)]
    if (PHOTOS / "labels.json").is_file():
        photos = load_labels()
        say(f"reading the dice of {len(photos)} real photos")
        rows.append(score_photos(photos, "real photos, shipped model", held_out=False,
                                 note="TRAINING data: the shipped model was trained on these photos"))
        rows.append(speed_row(photos))
    return rows
