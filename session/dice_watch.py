"""The table camera reads the players' dice while a roll is pending, and fills the roll once the dice lie still.

Where it reads: in the dice tray when one is marked (a marked tray wins: the players chose where they roll), else
anywhere on the table away from the bases. Nothing is spent on dice while no roll is pending.

- The tray: its bounding box and a margin round it (`vision.dice.region.cut_box`: a die leaning on the wall is seen
  whole) are cut out and read (`vision.dice.read_dice(image, sides=..., region=polygon)`).
- The table (`TableArea`, built each frame by `table_seen`): the board's rectangle as the camera sees it (projected
  by the calibration, the lens included; cut 8 px beyond it, and a die on its edge counts as a die leaning on a
  tray's wall does, `vision.dice.region.counts`), less a zone round every base and every tag: a base's disc on the table
  and the same disc lifted to its tag's height (what stands on it: the figure, the topper), hulled, grown by
  BASE_MARGIN_IN; a tag seen in this frame, with its white border, grown by the same margin. Those bases are the
  game's known positions and the bases measured in this frame (radius from the roster, else DEFAULT_BASE_MM). The
  bases and tags themselves are painted out (the table's colour) before the dice are read, so that a tag's squares
  or a figure's details never become dice, and a die whose centre lies in a zone is not read. The margin reaches
  more than half a die's diagonal beyond the paint, so the painting never touches a die that is read. Terrain is read like the table
  (a ruin's details are not kept out). Cost, measured on a 2-core machine under load (cv2 on 1 thread): a 1080p
  frame whose 30" x 22" board spans ~1100 x 740 px, 26 ms with no die and 34 ms with one (the finder over the board,
  then the reader on each die found), plus 3 ms for the area; the bundled 720p sample session 13 ms. A 6" x 4" tray
  region: a few ms.

Then, wherever the dice lie: a roll counts once the same dice (same count, same faces, each centre within a third of
a die's size of where it was) have been read for NEEDED_FRAMES frames in a row, their count is the roll's count and no
die is under LOW_CONFIDENCE; the faces are then given left to right across the picture. A die read with low
confidence is shown (`read.low`) for the players to confirm with one tap instead. The dice of the roll before, still
lying where they were read, never count for the next roll (a tie re-rolled, the next attack): the players roll
again, and the new dice count.

The tray is a polygon in the camera image (pixels, with the image size it was marked on), saved beside the
calibration in the setup folder (TRAY_FILE) so that it survives a restart.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import shapely

from calibration.errors import InputError
from rules.roster import MM_PER_INCH, Roster
from vision.dice.d6 import FINDER_CELL_PX
from vision.dice.die import LOW_CONFIDENCE, Die
from vision.dice.region import CUT_SHARE, cut_box

log = logging.getLogger("tablesight.dice")

NEEDED_FRAMES = 5
"""Frames in a row the same dice must be read before the roll counts (still dice, not a hand still rolling)."""
SAME_PLACE = 1.0 / 3.0
"""A die is in the same place when its centre moved less than this fraction of its size."""
MOST_CORNERS = 64
"""At most this many corners outline a tray (clicked round it on the picture)."""
TRAY_FILE = "dice_tray.json"
"""The tray's file in the setup folder: {"polygon_px": [[x, y] ...], "image_size": [w, h]}."""

BASE_MARGIN_IN = 0.6
"""On the table, a die is read only if its centre lies this far (inches) from every base's edge and every tag's white
border."""
PAINT_IN = 0.1
"""The bases and tags are painted out this far beyond their edges (inches: a drawn edge's blur), so that a die read
(BASE_MARGIN_IN - PAINT_IN = 0.5" from the paint, more than half a 16 mm die's diagonal, 0.45") is never touched."""
DEFAULT_BASE_MM = 32.0
"""A base's diameter when the roster does not give it (the roster's own default), mm."""
DEFAULT_TOP_IN = 2.0
"""How high what stands on a base (figure, topper) reaches when no tag height is known, inches."""
TAG_WITH_BORDER = 10.0 / 8.0
"""A tag36h11 tag with its white border is 10 cells across, its black square 8."""
CIRCLE_POINTS = 24
"""A base's disc is drawn as a polygon of this many corners."""

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


@dataclass(frozen=True)
class BaseOnTable:
    """A base the dice keep clear of, table inches: centre (x, y), radius, the height it stands on (floor_in) and
    the height of the top of what stands on it (top_in: its tag)."""

    x: float
    y: float
    radius_in: float
    floor_in: float
    top_in: float


def bases_on_table(positions: Mapping[int, Any], fixes: Sequence[Any], roster: Roster | None) -> list[BaseOnTable]:
    """Every base the dice keep clear of: each unit where the game knows it (`positions`: rules.engine.Placement by
    unit), replaced by where it was measured in this frame when it was (`fixes`: vision.positions.BaseFix, a unit's
    tags fused under its id, any other tag under its own). Radius and height from the roster, else DEFAULT_BASE_MM
    and DEFAULT_TOP_IN."""
    default_r = DEFAULT_BASE_MM / MM_PER_INCH / 2.0
    out: dict[int, BaseOnTable] = {}
    for unit, p in positions.items():
        ru = roster.units.get(unit) if roster is not None else None
        r = ru.base_radius_in if ru is not None else default_r
        rise = max(m.height_in for m in ru.mounts) if ru is not None else DEFAULT_TOP_IN
        out[int(unit)] = BaseOnTable(float(p.x), float(p.y), r, float(p.z), float(p.z) + rise)
    for f in fixes:
        ru = roster.units.get(f.tag) if roster is not None else None
        if ru is not None:  # z: the unit's own tag's face
            floor = max(0.0, float(f.z) - ru.base_height_in)
            top = max(float(f.z), floor + max(m.height_in for m in ru.mounts))
            out[int(f.tag)] = BaseOnTable(float(f.x), float(f.y), ru.base_radius_in, floor, top)
        elif roster is None or roster.unit_of_tag(f.tag) is None:  # a tag the roster does not know: on a base
            out[int(f.tag)] = BaseOnTable(float(f.x), float(f.y), default_r, 0.0, max(float(f.z), DEFAULT_TOP_IN))
    return list(out.values())


@dataclass(frozen=True, eq=False)
class TableArea:
    """Where dice are read on the table in one frame, pixels: the board's outline, the bases and tags to paint out
    (`painted`, polygons) and the zones a die's centre must lie outside (`kept_out`: those grown by BASE_MARGIN_IN)."""

    outline_px: tuple[tuple[float, float], ...]
    painted: tuple[np.ndarray, ...]
    kept_out: shapely.Geometry

    def __post_init__(self) -> None:
        shapely.prepare(self.kept_out)

    def allows(self, centre_px: tuple[float, float]) -> bool:
        """Whether a die centred at `centre_px` lies clear of every base and tag."""
        return not bool(shapely.contains_xy(self.kept_out, float(centre_px[0]), float(centre_px[1])))

    def paint_out(self, crop: np.ndarray, x0: int, y0: int) -> np.ndarray:
        """A copy of `crop` (the frame from (x0, y0)) with the bases and tags filled with the table's colour (the
        crop's median, every 8th pixel)."""
        if not self.painted:
            return crop
        out = crop.copy()
        colour = np.median(crop[::8, ::8].reshape(-1, crop.shape[2] if crop.ndim == 3 else 1), axis=0)
        fill = tuple(float(c) for c in colour) if crop.ndim == 3 else float(colour[0])
        shift = np.array([x0, y0], np.float64)
        for p in self.painted:  # one by one: fillPoly would leave where two overlap unfilled (even-odd)
            cv2.fillConvexPoly(out, np.rint(p - shift).astype(np.int32), fill)
        return out


def _disc(b: BaseOnTable, r: float, z: float) -> np.ndarray:
    a = np.linspace(0.0, 2.0 * math.pi, CIRCLE_POINTS, endpoint=False)
    return np.column_stack([b.x + r * np.cos(a), b.y + r * np.sin(a), np.full(CIRCLE_POINTS, z)])


def _hull(px: np.ndarray) -> shapely.Geometry:
    return shapely.convex_hull(shapely.multipoints(px))


def table_area(calibration: Any, image_size: tuple[int, int], tags: Sequence[Any], bases: Sequence[BaseOnTable],
               margin_in: float = BASE_MARGIN_IN) -> TableArea | None:
    """The table's area for dice in an image of `image_size` (w, h) seen by `calibration` (calibration.table
    TableCalibration): its board's rectangle less each base (see BaseOnTable) and each tag seen (vision.tags
    TagObservation), grown by `margin_in`. None when the board is not in view."""
    w, h = image_size
    bw, bd = (float(v) for v in calibration.board_in)
    t = np.linspace(0.0, 1.0, 9)[:-1]
    edge = np.concatenate([np.column_stack([t * bw, 0 * t]), np.column_stack([bw + 0 * t, t * bd]),
                           np.column_stack([bw - t * bw, bd + 0 * t]), np.column_stack([0 * t, bd - t * bd])])
    outline = shapely.Polygon(calibration.table_to_image(np.column_stack([edge, np.zeros(len(edge))])))
    outline = shapely.intersection(outline.buffer(0), shapely.box(0, 0, w - 1, h - 1))
    if not isinstance(outline, shapely.Polygon) or outline.is_empty or outline.area < 4.0:
        return None
    painted: list[np.ndarray] = []
    zones: list[shapely.Geometry] = []
    for b in bases:  # each: the disc on its floor and at its top, hulled; painted, and grown by the margin kept out
        for r, into in ((b.radius_in + PAINT_IN, painted), (b.radius_in + margin_in, zones)):
            px = calibration.table_to_image(np.concatenate([_disc(b, r, b.floor_in), _disc(b, r, b.top_in)]))
            hull = _hull(px) if np.all(np.isfinite(px)) else None
            if not isinstance(hull, shapely.Polygon):  # behind the camera, or no area
                continue
            if into is painted:
                painted.append(np.asarray(hull.exterior.coords, np.float64))
            else:
                zones.append(hull)
    for tag in tags:  # each tag seen, with its white border; grown as inches measure on the table below it
        c = np.asarray(tag.center_px, np.float64)
        quad = shapely.Polygon(c + (np.asarray(tag.corners_px, np.float64) - c) * TAG_WITH_BORDER)
        foot = calibration.image_to_table(c[None], 0.0)[0]
        step = calibration.table_to_image(np.array([[foot[0], foot[1], 0.0], [foot[0] + 1.0, foot[1], 0.0],
                                                    [foot[0], foot[1] + 1.0, 0.0]]))
        px_per_in = max(float(np.linalg.norm(step[1] - step[0])), float(np.linalg.norm(step[2] - step[0])))
        if not math.isfinite(px_per_in):  # a tag above the horizon: as large as the tag itself
            px_per_in = math.sqrt(quad.area)
        painted.append(np.asarray(quad.buffer(PAINT_IN * px_per_in, quad_segs=2).exterior.coords, np.float64))
        zones.append(quad.buffer(margin_in * px_per_in, quad_segs=4))
    kept_out = shapely.union_all(zones) if zones else shapely.Polygon()
    return TableArea(tuple((float(x), float(y)) for x, y in outline.exterior.coords[:-1]), tuple(painted), kept_out)


def table_seen(result: Any, positions: Mapping[int, Any], roster: Roster | None) -> TableArea | None:
    """The table's area for dice in one frame's result (session.pipeline.FrameResult: its image, calibration, tags
    and base fixes) with the game's known `positions`; None on an uncalibrated table."""
    calibration = getattr(result, "calibration", None)
    if calibration is None:
        return None
    h, w = result.image.shape[:2]
    return table_area(calibration, (w, h), tuple(result.tags), bases_on_table(positions, tuple(result.fixes), roster))


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
    """Reads the dice for the pending roll, frame by frame, in the tray or on the table (see the module docstring).

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
        self.where = "tray"
        """Where the dice were last read: "tray" or "table" (away from the bases)."""

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

    def look(self, image: np.ndarray, frame: int, roll: int, sides: int, count: int,
             table: TableArea | None = None) -> list[int] | None:
        """Read the dice in `image` (frame `frame`) for pending roll `roll` (`count` dice of `sides`): in the tray
        when one is marked, else on `table` (None: nowhere). The faces, left to right, once the roll counts (at most
        once a roll), else None."""
        tray = self.tray
        area = table if tray is None else None  # a marked tray wins
        if self._read is None or (tray is None and area is None) or self._filled == roll:
            return None
        if roll != self._roll:
            self._left = self._dice or self._left
            self._roll, self._dice, self._still = roll, (), 0
        h, w = image.shape[:2]
        polygon = area.outline_px if area is not None else tray.for_image((w, h)) if tray is not None else ()
        # a die leaning on the tray's wall is seen whole; the table's area is cut at the board's edge (and 8 px); the
        # cut starts on the finder's grid, so that the dice read here are the ones read_dice(frame, region) reads
        x0, y0, x1, y1 = cut_box(np.asarray(polygon, np.float64), w, h, 0.0 if area is not None else CUT_SHARE,
                                 FINDER_CELL_PX)
        if x1 - x0 < 2 or y1 - y0 < 2:
            return None
        crop = image[y0:y1, x0:x1]
        if area is not None:
            crop = area.paint_out(crop, x0, y0)
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
        if area is not None:
            dice = tuple(d for d in dice if area.allows(d.centre_px))
        self.where = "tray" if area is None else "table"
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
                "needed_frames": self.needed_frames, "low": self.low(), "left_over": self.left_over(self._dice),
                "where": self.where}


def _shifted(d: Die, dx: int, dy: int) -> Die:
    """A die read in a crop, placed in the whole image."""
    x0, y0, x1, y1 = d.box_px
    return Die(d.value, d.sides, (d.centre_px[0] + dx, d.centre_px[1] + dy), (x0 + dx, y0 + dy, x1 + dx, y1 + dy),
               d.confidence)
