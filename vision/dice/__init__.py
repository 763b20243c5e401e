"""Dice found and read in a picture: `read_dice(image, sides, region) -> list[Die]`.

d6: `vision/dice/d6.py` (learned finder and reader, run by onnxruntime: `vision/dice/nets.py`). d20: `vision/dice/d20.py`, loaded only
when asked for.
"""

from __future__ import annotations

import importlib

import cv2
import numpy as np

from vision.dice.d6 import FINDER_CELL_PX
from vision.dice.die import LOW_CONFIDENCE, Die
from vision.dice.region import counts, cut_box
from vision.errors import FrameError

__all__ = ["LOW_CONFIDENCE", "Die", "DiceError", "read_dice", "SIDES"]

SIDES = (6, 20)
"""The dice the camera reads."""


class DiceError(FrameError):
    """Dice cannot be read as asked: an unknown kind of die, a region that is no polygon, a reader not built."""


def read_dice(image_bgr: np.ndarray, sides: int = 6, region: np.ndarray | None = None) -> list[Die]:
    """The dice of `sides` faces in a BGR uint8 picture (grey is taken too), each with its face up, centre, box
    and confidence, in the full picture's pixels.

    `region`: a polygon (N x 2, pixels) of the tray; only dice in it are read: centred in it, or outside it by at
    most half their size (leaning on the tray's wall; `vision.dice.region`). None: the whole picture. Pure:
    nothing is written; the networks load once.
    A picture with a region is a table camera's (d6 looked for at full size only, as a table camera sees them);
    one without may be a phone's close photo (d6 of any size, `vision.dice.d6.read_large`).
    """
    if sides not in SIDES:
        raise DiceError(f"Dice of {sides} sides cannot be read; give 6 or 20.")
    image = _as_bgr(image_bgr)
    h, w = image.shape[:2]
    x0, y0, x1, y1 = 0, 0, w, h
    polygon = None
    if region is not None:
        polygon = _polygon(region)
        x0, y0, x1, y1 = cut_box(polygon, w, h, cell_px=FINDER_CELL_PX)
        if x1 - x0 < 2 or y1 - y0 < 2:
            return []
    part = image[y0:y1, x0:x1]
    found = _reader(sides, large_too=polygon is None)(part)
    dice = [_shifted(d, x0, y0) for d in found]
    if polygon is not None:
        dice = [d for d in dice if counts(polygon, d.centre_px, d.side_px)]
    return dice


def _reader(sides: int, large_too: bool):  # type: ignore[no-untyped-def]
    if sides == 6:
        from vision.dice.d6 import read_d6

        return lambda part: read_d6(part, large_too)
    try:
        module = importlib.import_module("vision.dice.d20")
    except ModuleNotFoundError as err:
        if err.name != "vision.dice.d20":
            raise
        raise DiceError("d20 reading is not available in this build; read d6 dice (--sides 6).") from None
    return lambda part: module.read_d20(part)


def _as_bgr(image: np.ndarray) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim not in (2, 3) or min(
            image.shape[:2]) < 1:
        raise DiceError("The dice picture is not an 8-bit image array; give a BGR uint8 frame (H x W x 3).")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    if image.shape[2] != 3:
        raise DiceError(f"The dice picture has {image.shape[2]} channels; give a BGR frame (3 channels).")
    return image


def _polygon(region: np.ndarray) -> np.ndarray:
    pts = np.asarray(region, dtype=np.float32)
    if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) < 3 or not np.isfinite(pts).all():
        raise DiceError("The dice tray region is not a polygon; give at least 3 (x, y) corners in pixels.")
    return pts.reshape(-1, 1, 2)


def _shifted(die: Die, dx: int, dy: int) -> Die:
    if not dx and not dy:
        return die
    x, y = die.centre_px
    b = die.box_px
    return Die(value=die.value, sides=die.sides, centre_px=(x + dx, y + dy),
               box_px=(b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy), confidence=die.confidence)
