"""Dice read in rendered trays (vision/synth/dice.py), for the Dice section of `tablesight bench`.

`dice_render_rows(say)` -> two `bench.dice.DiceRow`s, matched as the real photos are (`bench.dice.match`):
- "rendered trays, d6 at 1080p": `D6_TRAYS` table frames (30" x 22" board, camera 36" up), a 7" x 4.5" tray of
  5-8 d6 in every look (touching, leaning, glare, a hand in one frame in four), `read_dice(frame, 6, region=the
  tray's floor in pixels)`; dice ~30-40 px across;
- "rendered close views, d20": `D20_VIEWS` phone views (1280 x 960, dice 80-200 px) of 3-7 d20, numerals in
  fonts the d20 reader's training never saw (Liberation), `read_dice(image, 20, region=tray floor)`.
A die more than half hidden (hand, frame edge), or whose face up is (a finger over it: nobody can read it from the
picture), is not counted as labelled, and a die read on it is not false (`readable`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from bench.dice import DiceRow, match, one_opencv_thread
from bench.report import Timing
from vision.dice import LOW_CONFIDENCE, read_dice
from vision.dice.d6 import FINDER_FILE, READER_FILE
from vision.dice.d20 import read_d20
from vision.synth import dice as synth
from vision.synth.render import CameraPose, Scene, camera_framing_board

D6_TRAYS = 64
"""Rendered 1080p trays of d6 (~400 dice: one die is 0.25 %; the first 24, 150 dice, were the row until 2026-11-29)."""
D20_VIEWS = 64
"""Rendered close views of d20 (~300 dice: one die is 0.34 %; the first 16, 80 dice, were the row until 2026-11-29)."""
SEED = 30


def _row(label: str, sides: int, cases: list[tuple[np.ndarray, np.ndarray, list[synth.DieTruth]]],
         note: str) -> DiceRow:
    confusion = np.zeros((sides, sides), int)
    missed = false = low = labelled = wrong_sure = 0
    seconds = []
    for image, region, truths in cases:
        t0 = time.perf_counter()
        # d20: the whole picture, so that the reader knows where its optical centre is
        dice = read_dice(image, 6, region=region) if sides == 6 else read_d20(image, region)
        seconds.append(time.perf_counter() - t0)
        seen = [t for t in truths if readable(t)]
        hidden = [t.box_px for t in truths if not readable(t)]
        dice = [d for d in dice if not any(_inside(d.centre_px, b) for b in hidden)
                or any(_inside(d.centre_px, t.box_px) for t in seen)]
        boxes = np.array([t.box_px for t in seen], np.float64).reshape(-1, 4)
        pairs, m, f = match(dice, boxes, [t.value for t in seen])
        for truth, read in pairs:
            confusion[truth - 1, read - 1] += 1
        sure, _, _ = match([d for d in dice if d.confidence >= LOW_CONFIDENCE], boxes, [t.value for t in seen])
        wrong_sure += sum(a != b for a, b in sure)
        labelled += len(seen)
        missed += m
        false += f
        low += sum(d.confidence < LOW_CONFIDENCE for d in dice)
    right = int(np.trace(confusion))
    return DiceRow(label, len(cases), labelled, right, int(confusion.sum()) - right, missed, false, low,
                   tuple(tuple(int(v) for v in r) for r in confusion), True, wrong_confident=wrong_sure,
                   ms=Timing.of(seconds), note=note)


def readable(t: synth.DieTruth) -> bool:
    """A rendered die a reader is scored on: at least half of it seen, and at least half of its face up."""
    return t.visible >= 0.5 and t.face_visible >= 0.5


def _inside(p: tuple[float, float], b: tuple[float, float, float, float]) -> bool:
    return b[0] <= p[0] <= b[2] and b[1] <= p[1] <= b[3]


def d6_cases(n: int = D6_TRAYS, seed: int = SEED) -> list[tuple[np.ndarray, np.ndarray, list[synth.DieTruth]]]:
    """(frame, tray polygon px, truths) of `n` rendered 1080p table frames with a tray of d6."""
    board = (30.0, 22.0)
    pose = camera_framing_board(board, 36.0, 15.0, 0.0, (1920, 1080))
    out = []
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        scene = Scene.at(pose, board, noise_sigma=1.5, jpeg_quality=int(rng.integers(80, 95)), blur_px=0.5)
        tray = synth.Tray((float(rng.uniform(8, 22)), float(rng.uniform(6, 16))), (7.0, 4.5),
                          float(rng.uniform(-20, 20)), synth.FELTS[k % len(synth.FELTS)])
        dice = synth.roll_dice(tray, 6, int(rng.integers(5, 9)), rng)
        rendered, truths = synth.render_table_with_tray(scene, tray, dice, seed + k, hand=k % 4 == 3)
        out.append((rendered.image, synth.tray_polygon_px(tray, CameraPose(scene.camera, scene.rvec, scene.tvec)),
                    truths))
    return out


def d20_cases(n: int = D20_VIEWS, seed: int = SEED) -> list[tuple[np.ndarray, np.ndarray, list[synth.DieTruth]]]:
    """(image, tray polygon px, truths) of `n` rendered close views of d20s in held-out fonts."""
    fonts = [i for i, f in enumerate(synth.NUMERAL_FONTS) if "Liberation" in f] or None
    out = []
    for k in range(n):
        case = synth.random_phone_tray(seed + 1000 + k, sides=20, fonts=fonts)
        out.append((case.view.image, case.view.region_px, case.view.dice))
    return out


def dice_render_rows(say: Callable[[str], None] = lambda _m: None) -> list[DiceRow]:
    """The rendered rows: d6 in a 1080p table frame's tray region, d20 in close views."""
    with one_opencv_thread():  # the speed goal is one core's: OpenCV's own threads would halve the figures on two cores
        return _render_rows(say)


def _render_rows(say: Callable[[str], None]) -> list[DiceRow]:
    rows = []
    if FINDER_FILE.is_file() and READER_FILE.is_file():
        say(f"reading d6 in {D6_TRAYS} rendered 1080p trays")
        rows.append(_row("rendered trays, d6 at 1080p", 6, d6_cases(), "tray region of a table frame"))
    say(f"reading d20 in {D20_VIEWS} rendered close views")
    rows.append(_row("rendered close views, d20", 20, d20_cases(), "numeral fonts unseen in training"))
    return rows
