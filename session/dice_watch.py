"""The table camera reads the dice tray while a roll is pending, and fills the roll once the dice lie still.

Only while a roll is pending and a tray is marked: each frame, the tray's bounding box is cut out and read
(`vision.dice.read_dice(image, sides=..., region=polygon)`); nothing is spent on dice otherwise. A roll counts
once the same dice (same count, same faces, each centre within a third of a die's size of where it was) have been
read for NEEDED_FRAMES frames in a row, their count is the roll's count and no die is under LOW_CONFIDENCE; the
faces are then given left to right across the picture. A die read with low confidence is shown (`read.low`) for
the players to confirm with one tap instead. The dice of the roll before, still lying where they were read, never
count for the next roll (a tie re-rolled, the next attack): the players roll again, and the new dice count.

The tray is a polygon in the camera image (pixels, with the image size it was marked on), saved beside the
calibration in the setup folder (TRAY_FILE) so that it survives a restart.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import shapely

from calibration.errors import InputError
from vision.dice.die import LOW_CONFIDENCE, Die

log = logging.getLogger("tablesight.dice")

NEEDED_FRAMES = 5
"""Frames in a row the same dice must be read before the roll counts (still dice, not a hand still rolling)."""
SAME_PLACE = 1.0 / 3.0
"""A die is in the same place when its centre moved less than this fraction of its size."""
MOST_CORNERS = 64
"""At most this many corners outline a tray (clicked round it on the picture)."""
TRAY_FILE = "dice_tray.json"
"""The tray's file in the setup folder: {"polygon_px": [[x, y] ...], "image_size": [w, h]}."""

ReadDice = Callable[..., Sequence[Die]]
"""`read_dice(image, sides=..., region=polygon)`: the dice in a BGR image, each a vision.dice.die.Die."""


class TrayError(InputError):
    """A tray outline that cannot be used; one sentence naming what is wrong."""


def library_reader() -> ReadDice | None:
    """vision.dice.read_dice, or None while this Tablesight has no dice reader."""
    try:
        module = importlib.import_module("vision.dice")
    except ImportError:
        return None
    read = getattr(module, "read_dice", None)
    return read if callable(read) else None


@dataclass(frozen=True)
class Tray:
    """The dice tray: its outline in the camera image (pixels) and the size of the image it was marked on."""

    polygon_px: tuple[tuple[float, float], ...]
    image_size: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"polygon_px": [[round(x, 1), round(y, 1)] for x, y in self.polygon_px],
                "image_size": list(self.image_size)}

    @staticmethod
    def of(points: Any, image_size: tuple[int, int]) -> Tray:
        """A tray from a page's points; TrayError for fewer than 3 points, a point off the image, a self-crossing
        outline."""
        if not isinstance(points, list | tuple) or len(points) < 3:
            raise TrayError("A dice tray needs at least 3 corners; click round the tray on the picture.")
        if len(points) > MOST_CORNERS:
            raise TrayError(f"A dice tray is outlined by at most {MOST_CORNERS} corners; {len(points)} were given: click "
                            "round the tray's corners only.")
        pts: list[tuple[float, float]] = []
        w, h = image_size
        for n, p in enumerate(points, start=1):
            if (not isinstance(p, list | tuple) or len(p) != 2
                    or any(isinstance(c, bool) or not isinstance(c, int | float) or not math.isfinite(c) for c in p)):
                raise TrayError(f"Corner {n} of the dice tray is not a point [x, y] in pixels; click the corners again.")
            x, y = float(p[0]), float(p[1])
            if not (0 <= x <= w and 0 <= y <= h):
                raise TrayError(f"Corner {n} of the dice tray, ({x:g}, {y:g}), is off the {w}x{h} picture; mark the "
                                "tray inside the camera's view.")
            pts.append((x, y))
        shape = shapely.Polygon(pts)
        if not shape.is_valid:
            raise TrayError("The dice tray's outline crosses itself; click its corners in order round the tray.")
        if shape.area < 1.0:
            raise TrayError("The dice tray's outline has no area; click its corners round the tray.")
        return Tray(tuple(pts), (int(w), int(h)))

    def for_image(self, size: tuple[int, int]) -> tuple[tuple[float, float], ...]:
        """The outline on an image of `size` (w, h) (scaled from the size it was marked on)."""
        sx, sy = size[0] / self.image_size[0], size[1] / self.image_size[1]
        return tuple((x * sx, y * sy) for x, y in self.polygon_px)


def read_tray_file(path: Path) -> Tray | None:
    """The tray saved in `path`, None when there is none; a file that cannot be read is logged and ignored."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        if obj is None:  # the tray was cleared
            return None
        size = obj["image_size"]
        return Tray.of(obj["polygon_px"], (int(size[0]), int(size[1])))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, InputError) as err:
        log.warning("the dice tray file %s cannot be used (%s); mark the tray again", path, err)
        return None


def _size(d: Die) -> float:
    x0, y0, x1, y1 = d.box_px
    return max(1.0, (abs(x1 - x0) + abs(y1 - y0)) / 2.0)


def same_dice(a: Sequence[Die], b: Sequence[Die]) -> bool:
    """Whether two reads show the same dice: same count, and each die of `a` matched to its own die of `b` with the
    same face whose centre is within SAME_PLACE of a die's size of it."""
    if len(a) != len(b):
        return False
    left = list(b)
    for d in sorted(a, key=lambda d: d.centre_px):
        best, best_at = None, math.inf
        for k, e in enumerate(left):
            if e.value != d.value:
                continue
            gap = math.dist(d.centre_px, e.centre_px)
            if gap < best_at:
                best, best_at = k, gap
        if best is None or best_at >= SAME_PLACE * min(_size(d), _size(left[best])):
            return False
        left.pop(best)
    return True


class DiceWatch:
    """Reads the tray for the pending roll, frame by frame (see the module docstring).

    read: the dice reader (None: vision.dice.read_dice, if this Tablesight has it; else "dice reading unavailable").
    tray_file: where the tray is saved (None: not saved; the tray is then kept for this run only)."""

    def __init__(self, read: ReadDice | None = None, needed_frames: int = NEEDED_FRAMES,
                 tray_file: Path | None = None) -> None:
        self._read = read if read is not None else library_reader()
        self.needed_frames = int(needed_frames)
        self.tray_file = tray_file
        self._tray: Tray | None = None
        self._tray_loaded = False
        self._roll: int | None = None
        """The pending roll (its id) the reads are for."""
        self._dice: tuple[Die, ...] = ()
        self._frame = -1
        self._still = 0
        self._filled: int | None = None
        """The roll the camera already filled (it is not filled twice)."""
        self._left: tuple[Die, ...] = ()
        """The dice last read for the roll before, as they lay: read again unmoved, they do not count."""
        self.problem = "" if self._read is not None else "dice reading unavailable"

    # ---- the tray ----

    @property
    def tray(self) -> Tray | None:
        if not self._tray_loaded:
            self._tray_loaded = True
            if self.tray_file is not None:
                self._tray = read_tray_file(self.tray_file)
        return self._tray

    def set_tray(self, tray: Tray | None) -> None:
        """Use `tray` (None: no tray); the caller saves it."""
        self._tray, self._tray_loaded = tray, True
        self._dice, self._still, self._left = (), 0, ()

    # ---- reading ----

    @property
    def available(self) -> bool:
        return self._read is not None

    def idle(self) -> None:
        """No roll is pending: forget what was read, but for the dice left lying (they are not the next roll's). The
        next roll may have the id of one filled before (a new game, a seek): it is read afresh."""
        self._left = self._dice or self._left
        self._roll, self._dice, self._still, self._frame, self._filled = None, (), 0, -1, None

    def look(self, image: np.ndarray, frame: int, roll: int, sides: int, count: int) -> list[int] | None:
        """Read the tray in `image` (frame `frame`) for pending roll `roll` (`count` dice of `sides`); the faces,
        left to right, once the roll counts (at most once a roll), else None."""
        tray = self.tray
        if self._read is None or tray is None or self._filled == roll:
            return None
        if roll != self._roll:
            self._left = self._dice or self._left
            self._roll, self._dice, self._still = roll, (), 0
        h, w = image.shape[:2]
        polygon = tray.for_image((w, h))
        xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
        x0, y0 = max(0, int(math.floor(min(xs)))), max(0, int(math.floor(min(ys))))
        x1, y1 = min(w, int(math.ceil(max(xs))) + 1), min(h, int(math.ceil(max(ys))) + 1)
        if x1 - x0 < 2 or y1 - y0 < 2:
            return None
        crop = image[y0:y1, x0:x1]
        region = [(x - x0, y - y0) for x, y in polygon]
        try:
            found = self._read(crop, sides=sides, region=region)
        except Exception as err:  # noqa: BLE001 - a reader's fault must not stop the table; the roll can be typed
            problem = f"the dice reader failed ({type(err).__name__}); type the faces"
            if problem != self.problem:  # logged once, not thirty times a second
                log.warning("the dice reader failed on frame %d (%s)", frame, err, exc_info=True)
            self.problem = problem
            return None
        dice = tuple(_shifted(d, x0, y0) for d in found)
        if self.left_over(dice):
            self._dice, self._frame, self._still = dice, int(frame), 0
            return None
        self._still = self._still + 1 if self._dice and same_dice(dice, self._dice) else 1
        self._dice, self._frame = dice, int(frame)
        if (self._still >= self.needed_frames and len(dice) == count and not self.low()
                and all(1 <= d.value <= sides for d in dice)):  # a reader's face off the die is never given
            self._filled, self._left = roll, dice
            return [d.value for d in sorted(dice, key=lambda d: d.centre_px[0])]
        return None

    def left_over(self, dice: Sequence[Die]) -> bool:
        """Whether `dice` are the roll before's, lying unmoved where they were read."""
        return bool(dice) and bool(self._left) and same_dice(dice, self._left)

    def low(self) -> list[int]:
        """Indices (in `read_json`'s order) of the dice read under LOW_CONFIDENCE."""
        return [k for k, d in enumerate(self._dice) if d.confidence < LOW_CONFIDENCE]

    def seen(self, roll: int) -> list[int] | None:
        """The faces the camera read last for roll `roll` (left to right), None when it read none."""
        if roll != self._roll or not self._dice:
            return None
        return [d.value for d in sorted(self._dice, key=lambda d: d.centre_px[0])]

    def read_json(self) -> dict[str, Any] | None:
        """What the camera reads now, for the dice panel; None before anything is read."""
        if self._frame < 0:
            return None
        return {"frame": self._frame, "dice": [d.to_json() for d in self._dice], "still_frames": self._still,
                "needed_frames": self.needed_frames, "low": self.low(), "left_over": self.left_over(self._dice)}


def _shifted(d: Die, dx: int, dy: int) -> Die:
    """A die read in a crop, placed in the whole image."""
    x0, y0, x1, y1 = d.box_px
    return Die(d.value, d.sides, (d.centre_px[0] + dx, d.centre_px[1] + dy), (x0 + dx, y0 + dy, x1 + dx, y1 + dy),
               d.confidence)
