"""Six-sided dice read in a picture: a small learned detector finds each die, small learned readers give its face.

Three ONNX networks run by onnxruntime (`vision/dice/nets.py`; trained by `train/dice/train_d6.py`, described in
`vision/dice/models/MODEL_CARD.md`):
- the finder sees the picture at half size and draws a heat map of die centres every 4 of its pixels,
  with each die's width and height (small dice are looked for again in the picture enlarged: `find_at_size`;
  a photo's large dice, a phone held close, in the picture shrunk: `read_large`);
- a reader sees one die at a time, cut square around the found centre (`CROP_MARGIN` times its size), turned
  so that the die's edges are square to the cut (`face_angle`), scaled to `CROP_PX` pixels, and says "not a
  die" or a face 1..6; a die it is unsure of (under LOOK_AGAIN_BELOW) is read again in its 8 symmetric views.
  Two readers, one for each kind of picture: a photo (`tablesight dice`, the phone's dice camera) is read by
  the one trained on the real phone photos alone, a table camera's tray or table by the one trained on them and
  rendered table trays (smaller, oblique dice). Each is sure of wrong faces off its own kind of picture, so the
  picture's kind chooses, not the readers' confidence.
The cutting and scaling here are the ones the training uses, so the two cannot drift apart.
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np

from vision.dice.die import Die
from vision.dice.nets import loaded as _nets  # noqa: F401 - training clears it
from vision.dice.nets import lock as _lock
from vision.dice.nets import net as _net
from vision.dice.nets import to_blob

MODELS = Path(__file__).with_name("models")
FINDER_FILE = MODELS / "d6_finder.onnx"
READER_FILE = MODELS / "d6_reader.onnx"
"""The photos reader: trained on the real dice-tray photos alone; reads photos (dice of any size)."""
TABLE_READER_FILE = MODELS / "d6_reader_table.onnx"
"""The table reader: trained on the real photos and rendered table trays; reads a table camera's tray or table
(smaller dice, seen obliquely)."""

FINDER_SCALE = 0.5
"""The finder sees the picture at this scale (the training photos' dice, 21-69 px, become 10-35 px)."""
FINDER_STRIDE = 4
"""One heat-map cell per this many of the finder's pixels."""
FINDER_MULTIPLE = 16
"""The finder's input is a multiple of this (its four halvings)."""
FINDER_CELL_PX = round(FINDER_STRIDE / FINDER_SCALE)
"""One heat-map cell in the picture's pixels (8)."""
SIZE_UNIT = 16.0
"""The finder gives a die's width and height in units of this many of its pixels."""
FOUND = 0.3
"""Heat above which a peak is a die candidate (fixed before any held-out figure was seen)."""
CROP_PX = 32
"""The reader's input: a square of this many pixels a side."""
CROP_MARGIN = 1.25
"""The reader's square is this many times the die's larger side."""
NOT_A_DIE = 0
"""The reader's class 0; classes 1..6 are the faces."""
SMALL_DIE_PX = 26.0
"""Dice found smaller than this (median, picture pixels) are looked for again in the picture enlarged: the finder
learnt on dice mostly 21-69 px (a 720p table camera's are ~15-20)."""
SEEN_DIE_PX = 36.0
"""... enlarged so that they are about this size (the real photos' median is 39 px) ..."""
MOST_ENLARGED = 2.5
"""... at most this many times."""
LARGE_DIE_PX = 72.0
"""Dice larger than this (picture pixels; a phone held close over the tray sees them 100-300 px) are looked for in
the picture shrunk: at full size the finder takes their pips for dice."""
SHRINKS = (8, 4, 2)
"""The picture is also looked at shrunk by these factors, coarsest first, ..."""
LEAST_SHRUNK_SIDE = 480
"""... each while the shrunk picture's larger side is at least this many pixels (a 640 px photo is looked at only
at full size; a phone's 1920 px one also at half and a quarter size)."""
LOOK_AGAIN_BELOW = 0.98
"""A candidate read at less than this confidence is read again in its 8 symmetric views (4 quarter-turns, each
mirrored: a die's face reads the same in all) and the views' probabilities averaged, each reader's (the threshold
fixed before any held-out figure was seen; the second look itself was tried on held-out folds, see the card)."""


def finder_input(image_bgr: np.ndarray) -> np.ndarray:
    """The picture as the finder sees it: padded (edge pixels repeated, right and bottom) to a multiple of
    FINDER_MULTIPLE / FINDER_SCALE pixels, then scaled by exactly FINDER_SCALE; BGR uint8."""
    h, w = image_bgr.shape[:2]
    step = round(FINDER_MULTIPLE / FINDER_SCALE)
    ph, pw = -h % step, -w % step
    if ph or pw:
        image_bgr = cv2.copyMakeBorder(image_bgr, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
    size = (round((w + pw) * FINDER_SCALE), round((h + ph) * FINDER_SCALE))
    return cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA)


def face_angle(grey: np.ndarray) -> float:
    """The turn (degrees, -45..45) that sets a die's edges square to the picture, from the picture's edges in the
    disc of a square cut around it: each edge pixel votes with its strength for its direction modulo 90 degrees
    (a pip's round edge votes every way and cancels out)."""
    g = grey.astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    r2 = gx * gx + gy * gy + 1e-12
    c2, s2 = (gx * gx - gy * gy) / r2, 2.0 * gx * gy / r2  # twice the direction
    weight = np.sqrt(r2) * _disc(g.shape[0])  # |g| e^(4i phi), summed over the disc
    vote = complex(float(((c2 * c2 - s2 * s2) * weight).sum()), float((2.0 * c2 * s2 * weight).sum()))
    return float(np.degrees(np.angle(vote)) / 4.0)


_discs: dict[int, np.ndarray] = {}


def _disc(n: int) -> np.ndarray:
    disc = _discs.get(n)
    if disc is None:
        yy, xx = np.mgrid[0:n, 0:n] - (n - 1) / 2.0
        disc = _discs[n] = (np.hypot(xx, yy) < 0.48 * n).astype(np.float32)
    return disc


def die_crop(image_bgr: np.ndarray, centre: tuple[float, float], side_px: float, angle_deg: float = 0.0,
             flip: bool = False) -> np.ndarray:
    """The reader's CROP_PX square around `centre`, `side_px` image pixels a side, turned so that the die's edges
    are square to it (`face_angle`), then by `angle_deg` more (training only) and mirrored if `flip`; edge
    pixels repeated past the picture's border."""
    look = _cut(image_bgr, centre, side_px, 0.0, False, CROP_PX)
    turn = face_angle(cv2.cvtColor(look, cv2.COLOR_BGR2GRAY)) + angle_deg
    big = _cut(image_bgr, centre, side_px, turn, flip, 2 * CROP_PX)
    return cv2.resize(big, (CROP_PX, CROP_PX), interpolation=cv2.INTER_AREA)  # cut at twice, averaged down


def _cut(image_bgr: np.ndarray, centre: tuple[float, float], side_px: float, angle_deg: float, flip: bool,
         out_px: int) -> np.ndarray:
    s = out_px / max(side_px, 1.0)
    m = np.asarray(cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), angle_deg, s), np.float64)
    m[:, 2] += (out_px - 1) / 2.0 - np.asarray(centre, dtype=np.float64)
    if flip:
        m[0] = -m[0]
        m[0, 2] += out_px - 1
    return cv2.warpAffine(image_bgr, m, (out_px, out_px), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _peaks(heat: np.ndarray) -> np.ndarray:
    """(row, col) of heat-map cells above FOUND that are the largest in their 3x3 neighbourhood."""
    top = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    return np.argwhere((heat >= FOUND) & (heat >= top))


def find_dice(image_bgr: np.ndarray) -> list[tuple[float, float, float, float, float]]:
    """Die candidates in the picture: (x, y, width, height, heat), pixels of `image_bgr`."""
    small = finder_input(image_bgr)
    net = _net(FINDER_FILE)
    with _lock:
        net.setInput(to_blob([small]))
        out = net.forward()[0]
    heat, size, offset = out[0], out[1:3], out[3:5]
    h, w = image_bgr.shape[:2]
    found: list[tuple[float, float, float, float, float]] = []
    for r, c in _peaks(np.ascontiguousarray(heat)):
        x = (c + 0.5 + float(offset[0, r, c])) * FINDER_STRIDE / FINDER_SCALE - 0.5
        y = (r + 0.5 + float(offset[1, r, c])) * FINDER_STRIDE / FINDER_SCALE - 0.5
        bw = max(float(size[0, r, c]), 0.1) * SIZE_UNIT / FINDER_SCALE
        bh = max(float(size[1, r, c]), 0.1) * SIZE_UNIT / FINDER_SCALE
        if -0.5 <= x <= w - 0.5 and -0.5 <= y <= h - 0.5:
            found.append((x, y, bw, bh, float(heat[r, c])))
    return _apart(found)


def _apart(found: list[tuple[float, float, float, float, float]]) -> list[tuple[float, float, float, float, float]]:
    """Candidates less those whose centre lies within half the size of a hotter one (one die, two peaks)."""
    kept: list[tuple[float, float, float, float, float]] = []
    for cand in sorted(found, key=lambda f: -f[4]):
        x, y, bw, bh, _ = cand
        if all(np.hypot(x - k[0], y - k[1]) > 0.5 * min(max(bw, bh), max(k[2], k[3])) for k in kept):
            kept.append(cand)
    return kept


def read_faces(image_bgr: np.ndarray, found: list[tuple[float, float, float, float, float]],
               reader: Path | None = None) -> list[Die]:
    """The face of each candidate by `reader` (default: the photos reader); a candidate read "not a die" is
    dropped, one read under LOOK_AGAIN_BELOW is read again in its 8 symmetric views (probabilities averaged)."""
    if not found:
        return []
    reader = reader or READER_FILE
    crops = [die_crop(image_bgr, (x, y), CROP_MARGIN * max(bw, bh)) for x, y, bw, bh, _ in found]
    prob = _probabilities(reader, crops)
    unsure = [i for i in range(len(crops)) if prob[i].max() < LOOK_AGAIN_BELOW]
    if unsure:
        views = [v for i in unsure for v in _views(crops[i])]
        again = _probabilities(reader, views).reshape(len(unsure), 7, -1)
        for k, i in enumerate(unsure):
            prob[i] = (prob[i] + again[k].sum(axis=0)) / 8.0
    dice: list[Die] = []
    for (x, y, bw, bh, _), p in zip(found, prob):
        face = int(np.argmax(p))
        if face == NOT_A_DIE:
            continue
        dice.append(Die(value=face, sides=6, centre_px=(x, y),
                        box_px=(x - bw / 2, y - bh / 2, x + bw / 2, y + bh / 2), confidence=float(p[face])))
    return dice


def _views(crop: np.ndarray) -> list[np.ndarray]:
    """The crop's 7 other symmetric views: turned by 90, 180 and 270 degrees, and all four mirrored."""
    turned = [crop] + [np.ascontiguousarray(np.rot90(crop, k)) for k in (1, 2, 3)]
    return turned[1:] + [np.ascontiguousarray(t[:, ::-1]) for t in turned]


def _probabilities(reader: Path, crops: list[np.ndarray]) -> np.ndarray:
    """One reader's class probabilities for CROP_PX squares: N x 7."""
    net = _net(reader)
    with _lock:
        net.setInput(to_blob(crops))
        logits = net.forward()
    logits = logits.reshape(len(crops), -1).astype(np.float64)
    prob = np.exp(logits - logits.max(axis=1, keepdims=True))
    return prob / prob.sum(axis=1, keepdims=True)


def find_at_size(image_bgr: np.ndarray, away_from: list[Die] | None = None, most_px: float = math.inf,
                 ) -> list[tuple[float, float, float, float, float]]:
    """`find_dice`, then, when the dice found are small (median under SMALL_DIE_PX), found again in the picture
    enlarged so that they are about SEEN_DIE_PX across (at most MOST_ENLARGED times); in the picture's pixels.
    Candidates on a die of `away_from` (read in the picture shrunk), under half their median size (a die's pips
    and corners seen close) or larger than `most_px` are left out."""

    least = _least(away_from or [])

    def kept(found: list) -> list:
        return [c for c in found if least <= max(c[2], c[3]) <= most_px and not _within(c[0], c[1], away_from or [])]

    found = kept(find_dice(image_bgr))
    if not found:
        return found
    size = float(np.median([max(bw, bh) for _, _, bw, bh, _ in found]))
    if size >= SMALL_DIE_PX:
        return found
    k = min(MOST_ENLARGED, SEEN_DIE_PX / max(size, 1.0))
    h, w = image_bgr.shape[:2]
    big = cv2.resize(image_bgr, (round(w * k), round(h * k)), interpolation=cv2.INTER_CUBIC)
    kx, ky = big.shape[1] / w, big.shape[0] / h
    return kept([((x + 0.5) / kx - 0.5, (y + 0.5) / ky - 0.5, bw / kx, bh / ky, heat)
                 for x, y, bw, bh, heat in find_dice(big)])


def _within(x: float, y: float, dice: list[Die]) -> bool:
    """Whether (x, y) lies on one of `dice`: within half its box's larger side of its centre."""
    return any(math.hypot(x - d.centre_px[0], y - d.centre_px[1]) <= 0.5 * d.side_px for d in dice)


def _least(dice: list[Die]) -> float:
    """Candidates under half the median size of the dice already read are a die's pips and corners seen close (a
    set's dice are alike); 0 when none are read."""
    return 0.5 * float(np.median([d.side_px for d in dice])) if dice else 0.0


def read_large(image_bgr: np.ndarray) -> list[Die]:
    """Dice too large for the finder at full size, read in the picture shrunk by SHRINKS (coarsest first, while
    LEAST_SHRUNK_SIDE allows): at each shrink the candidates SMALL_DIE_PX to LARGE_DIE_PX across there (the
    coarsest takes larger ones too), not on a die read at a coarser one nor under half their size (`_least`);
    in the picture's pixels."""
    h, w = image_bgr.shape[:2]
    shrinks = [k for k in SHRINKS if max(h, w) / k >= LEAST_SHRUNK_SIDE]
    dice: list[Die] = []
    for k in shrinks:
        small = cv2.resize(image_bgr, (max(1, round(w / k)), max(1, round(h / k))), interpolation=cv2.INTER_AREA)
        kx, ky = w / small.shape[1], h / small.shape[0]
        most = math.inf if k == shrinks[0] else LARGE_DIE_PX
        least = max(SMALL_DIE_PX, _least(dice) / k)
        found = [(x, y, bw, bh, heat) for x, y, bw, bh, heat in find_dice(small)
                 if least <= max(bw, bh) <= most
                 and not _within((x + 0.5) * kx - 0.5, (y + 0.5) * ky - 0.5, dice)]
        for d in read_faces(small, found):
            (x, y), b = d.centre_px, d.box_px
            dice.append(Die(value=d.value, sides=6, centre_px=((x + 0.5) * kx - 0.5, (y + 0.5) * ky - 0.5),
                            box_px=((b[0] + 0.5) * kx - 0.5, (b[1] + 0.5) * ky - 0.5, (b[2] + 0.5) * kx - 0.5,
                                    (b[3] + 0.5) * ky - 0.5), confidence=d.confidence))
    return dice


def read_d6(image_bgr: np.ndarray, large_too: bool = True) -> list[Die]:
    """The d6 dice in a BGR picture, in its pixels, in reading order (top to bottom, left to right): with
    `large_too` (a photo, dice of any size) large dice in the picture shrunk (`read_large`), the rest at full size
    (`find_at_size`), read by the photos reader; without it (a table camera, dice ~12-40 px) only at full size, read
    by the table reader."""
    large = read_large(image_bgr) if large_too else []
    looked = large_too and max(image_bgr.shape[:2]) / SHRINKS[-1] >= LEAST_SHRUNK_SIDE
    most = LARGE_DIE_PX if looked else math.inf
    reader = READER_FILE if large_too or not TABLE_READER_FILE.is_file() else TABLE_READER_FILE
    dice = large + read_faces(image_bgr, find_at_size(image_bgr, large, most), reader)
    return sorted(dice, key=lambda d: (round(d.centre_px[1] / 20.0), d.centre_px[0]))
