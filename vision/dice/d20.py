"""Twenty-sided dice read in a close picture (a phone over the tray, dice ~1/16 to ~1/2 of the picture across).

Three small networks run by onnxruntime (`vision/dice/nets.py`; trained by `train/dice/train_d20.py` on rendered
d20 views, the reader also on real photos of d6 as "no d20"; described in `models/D20_CARD.md`):
1. The finder sees the picture shrunk so that its larger side is FINDER_SIDE pixels and draws a heat map of
   die centres every FINDER_STRIDE of its pixels, with each die's width and height (`find_d20`).
2. The locator says where each die's top face lies (`top_faces`): a close camera sees a die away from the middle
   of its view from the side, so its top face is not its box's middle. It starts from a guess (`face_centre`:
   outward from the optical centre) and sees an upright square LOCATE_SPAN x the die's size there; it draws a
   heat map over that square of where the top face's middle is (`located`), so that a die whose top face is
   unsure between two faces is put on one of them, not between them; how much of its heat lies at its peak is
   how sure it is.
3. The reader sees one die's top face at a time (`face_crop`): a square FACE_SPAN x the die's size, centred on
   it, turned TURNS times. It says for each turn "no upright numeral" (class 0) or which numeral 1..20 is
   upright in the middle; the surest upright numeral over the turns is the die's.
A candidate with no upright numeral at any turn is dropped; a die's confidence is the reader's probability of
its numeral at its best turn, times that numeral's share of the best readings over all turns (a 6 that also
reads as a 9 upside down is less sure), times the locator's surety over LOCATED_SURE where it is under that (a
die whose top face may be another is put to the players).
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
from vision.dice.region import counts, cut_box

MODELS = Path(__file__).with_name("models")
FINDER_FILE = MODELS / "d20_finder.onnx"
READER_FILE = MODELS / "d20_reader.onnx"
LOCATOR_FILE = MODELS / "d20_locator.onnx"

FINDER_SIDE = 320
"""The finder sees the picture scaled so that its larger side is this many pixels (dice ~20-150 px there)."""
FINDER_STRIDE = 4
"""One heat-map cell per this many of the finder's pixels."""
FINDER_MULTIPLE = 16
"""The finder's input is a multiple of this (its four halvings); the picture is padded to it."""
SIZE_UNIT = 16.0
"""The finder gives a die's width and height in units of this many of its pixels."""
FOUND = 0.3
"""Heat above which a peak is a die candidate."""
READ_PX = 48
"""The reader's input: READ_PX x READ_PX, BGR."""
FACE_SPAN = 0.7
"""The reader's square as a share of the die's size (the larger side of its box): the top face and a little."""
LOCATE_PX = 64
"""The locator's input: LOCATE_PX x LOCATE_PX, BGR."""
LOCATE_SPAN = 1.3
"""The locator's square as a share of the die's size: the die and a little around it."""
LOCATE_CELLS = 16
"""The locator's answer: LOCATE_CELLS x LOCATE_CELLS logits over its square (row by row, top row first), the
likelihood that the top face's middle lies in each cell (a cell is LOCATE_SPAN / LOCATE_CELLS = 0.08 of the die's
size)."""
LOCATE_REACH = 2
"""The top face's place is the heat-weighted mean of the cells at most this many cells from the peak's (5 x 5): the
training target's Gaussian (0.8 cells) lies nearly all within them, so the mean is not pulled to the peak cell's
middle (3 x 3 cells were off by up to 0.012 of the die's size between two cells)."""
LOCATED_SURE = 0.7
"""The locator's surety is the share of its heat within one cell of its peak; a die located less surely than this
has its confidence scaled by surety / LOCATED_SURE. Set on the locator's own held-out training views (a third of
them; not the bench's): a die read right is located at a median surety of 0.84, one read wrong at 0.64; at 0.7
the dice read wrong at 0.8 or more fell from 34 to 14 of 825 read, the dice put to the players rose from 202 to
248. (The surety of a sure answer is ~0.9 with the face in a cell's middle, ~0.82 where four cells meet.)"""
LEAN = 0.5
"""How far outward a die's top face lies: LEAN x the die's size x its distance from the optical centre / the
focal length (a d20 lying on a face has its top ~0.5 of its size above its middle)."""
FOCAL = 0.8
"""A phone's focal length over its picture's larger side (a 64 degree view) when none is given."""
TURNS = 18
"""The reader sees each die's square at this many turns (every 20 degrees); it takes a numeral within 15 degrees
of upright as upright, so every numeral is within 10 degrees of one turn. Measured on the d20 training's 600
held-out views (2,719 dice), the same models: 12 turns (every 30 degrees, a numeral up to 15 off at its nearest
turn) read 2,294 right, 184 wrong, 241 missed, 57 wrong at 0.8 or more; 18 turns 2,312, 180, 227, 50; 24 turns
2,312, 179, 228, 41, at 1.5 and 2 times the reader's work (60 of those views, one thread: 40, 56 and 72 ms median)."""
MIN_BELIEF = 0.35
"""A candidate whose likeliest upright numeral, at its best turn, is less likely than this is no die..."""
MIN_CONFIDENCE = 0.3
"""... nor one whose confidence (see the module docstring) is under this. Both set after training: on the
training run's own held-out views 0.35 alone read 685 of 892 dice right and 0 false, but three real photos with
no dice (tests/data/apriltag_test: AprilTags, a table) gave false dice at confidences 0.17-0.29; with 0.3 they
give none, and the held-out views 644 right, 88 wrong, 160 missed, 0 false."""


def finder_scale(image_shape: tuple[int, ...]) -> float:
    """The finder's scale for a picture of this shape: its larger side becomes FINDER_SIDE."""
    return FINDER_SIDE / float(max(image_shape[0], image_shape[1]))


def finder_input(image_bgr: np.ndarray, scale: float) -> np.ndarray:
    """The picture as the finder sees it: scaled by `scale`, then padded (edge pixels repeated, right and
    bottom) to a multiple of FINDER_MULTIPLE; BGR uint8."""
    h, w = image_bgr.shape[:2]
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    ph, pw = -size[1] % FINDER_MULTIPLE, -size[0] % FINDER_MULTIPLE
    if ph or pw:
        small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
    return small


def face_centre(centre: tuple[float, float], size_px: float, optical_centre: tuple[float, float],
                focal_px: float) -> tuple[float, float]:
    """Where a die's top face is: its box's middle moved outward from the optical centre by LEAN x its size x
    its distance / the focal length (a close camera sees a die away from the middle of its view from the side)."""
    k = LEAN * size_px / max(focal_px, 1.0)
    return centre[0] + (centre[0] - optical_centre[0]) * k, centre[1] + (centre[1] - optical_centre[1]) * k


def square(image_bgr: np.ndarray, centre: tuple[float, float], across_px: float, out_px: int,
           up_deg: float = 90.0) -> np.ndarray:
    """A BGR uint8 `out_px` square of the picture `across_px` pixels across, centred on `centre`, turned so that
    the picture's direction `up_deg` (counter-clockwise from +x, y down: 90 is up the picture) is up; the picture
    smoothed first where the square shrinks it, edge pixels repeated past its border."""
    a = math.radians(up_deg)
    ux, uy = math.cos(a), -math.sin(a)  # the square's up, in the picture
    k = across_px / out_px
    eu, ew = (-uy * k, ux * k), (-ux * k, -uy * k)  # the square's right and down, in picture pixels
    m = (out_px - 1) / 2.0
    h, w = image_bgr.shape[:2]
    half = int(math.ceil(across_px * 0.75)) + 3
    x0, y0 = int(centre[0]) - half, int(centre[1]) - half
    x1, y1 = int(centre[0]) + half + 1, int(centre[1]) + half + 1
    piece = image_bgr[max(0, y0):min(h, y1), max(0, x0):min(w, x1)]
    if piece.size == 0:
        return np.zeros((out_px, out_px, 3), np.uint8)
    piece = cv2.copyMakeBorder(piece, max(0, -y0), max(0, y1 - h), max(0, -x0), max(0, x1 - w), cv2.BORDER_REPLICATE)
    if k > 1.3:
        piece = cv2.GaussianBlur(piece, (0, 0), 0.45 * k)
    cx, cy = centre[0] - x0, centre[1] - y0
    M = np.array([[eu[0], ew[0], cx - (eu[0] + ew[0]) * m], [eu[1], ew[1], cy - (eu[1] + ew[1]) * m]])
    return cv2.warpAffine(piece, M, (out_px, out_px), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def face_crop(image_bgr: np.ndarray, face: tuple[float, float], size_px: float, up_deg: float) -> np.ndarray:
    """The reader's square (`square`): FACE_SPAN x `size_px` across, READ_PX wide, centred on `face`, `up_deg` up."""
    return square(image_bgr, face, FACE_SPAN * size_px, READ_PX, up_deg)


def locate_crop(image_bgr: np.ndarray, at: tuple[float, float], size_px: float) -> np.ndarray:
    """The locator's square (`square`): LOCATE_SPAN x `size_px` across, LOCATE_PX wide, upright, centred on `at`."""
    return square(image_bgr, at, LOCATE_SPAN * size_px, LOCATE_PX)


def located(logits: np.ndarray) -> tuple[float, float, float]:
    """The top face's middle from one locator answer (LOCATE_CELLS**2 logits): its offset from the square's middle,
    x and y in units of the die's size (the peak cell, refined by the heat-weighted mean of the cells within
    LOCATE_REACH of it), and the share of the heat in the 3 x 3 cells round the peak (its surety, 0..1)."""
    n = LOCATE_CELLS
    heat = np.exp(logits - logits.max()).reshape(n, n)
    heat /= heat.sum()
    r, c = (int(v) for v in np.unravel_index(int(np.argmax(heat)), heat.shape))
    surety = float(heat[max(0, r - 1):r + 2, max(0, c - 1):c + 2].sum())
    k = LOCATE_REACH
    r0, r1, c0, c1 = max(0, r - k), min(n, r + k + 1), max(0, c - k), min(n, c + k + 1)
    near = heat[r0:r1, c0:c1]
    ys, xs = np.mgrid[r0:r1, c0:c1]
    mass = float(near.sum())
    cx, cy = float((near * xs).sum()) / mass, float((near * ys).sum()) / mass
    return ((cx + 0.5) / n - 0.5) * LOCATE_SPAN, ((cy + 0.5) / n - 0.5) * LOCATE_SPAN, surety


def top_faces(image_bgr: np.ndarray, dice: list[tuple[float, float, float]], optical_centre: tuple[float, float],
              focal_px: float) -> list[tuple[float, float, float]]:
    """Where the top face of each die (x, y, size: its box's middle and larger side, px) lies, px, and how sure the
    locator is of it (`located`): the guess (`face_centre`) moved by the locator's offset."""
    guesses = [face_centre((x, y), s, optical_centre, focal_px) for x, y, s in dice]
    if not guesses:
        return []
    net = _net(LOCATOR_FILE)
    with _lock:
        net.setInput(to_blob([locate_crop(image_bgr, g, s) for g, (_, _, s) in zip(guesses, dice)]))
        answers = np.asarray(net.forward(), np.float64).reshape(len(dice), LOCATE_CELLS * LOCATE_CELLS)
    out = []
    for g, (_, _, s), answer in zip(guesses, dice, answers):
        dx, dy, surety = located(answer)
        out.append((g[0] + dx * s, g[1] + dy * s, surety))
    return out


def find_d20(image_bgr: np.ndarray, scale: float) -> list[tuple[float, float, float, float, float]]:
    """Die candidates: (x, y, width, height, heat), pixels of `image_bgr`, the finder seeing it at `scale`."""
    small = finder_input(image_bgr, scale)
    net = _net(FINDER_FILE)
    with _lock:
        net.setInput(to_blob([small]))
        out = net.forward()[0]
    heat, size, offset = out[0], out[1:3], out[3:5]
    top = cv2.dilate(np.ascontiguousarray(heat), np.ones((3, 3), np.uint8))
    h, w = image_bgr.shape[:2]
    found = []
    for r, c in np.argwhere((heat >= FOUND) & (heat >= top)):
        x = (c + 0.5 + float(offset[0, r, c])) * FINDER_STRIDE / scale - 0.5
        y = (r + 0.5 + float(offset[1, r, c])) * FINDER_STRIDE / scale - 0.5
        bw = max(float(size[0, r, c]), 0.1) * SIZE_UNIT / scale
        bh = max(float(size[1, r, c]), 0.1) * SIZE_UNIT / scale
        if -0.5 <= x <= w - 0.5 and -0.5 <= y <= h - 0.5:
            found.append((x, y, bw, bh, float(heat[r, c])))
    kept: list[tuple[float, float, float, float, float]] = []
    for cand in sorted(found, key=lambda f: -f[4]):  # one die, two peaks: the hotter stays
        if all(math.hypot(cand[0] - k[0], cand[1] - k[1]) > 0.5 * min(max(cand[2:4]), max(k[2:4])) for k in kept):
            kept.append(cand)
    return kept


def numeral_probabilities(crops: list[np.ndarray]) -> np.ndarray:
    """(N, 21) probabilities of "no upright numeral" and 1..20 for the reader's squares (`face_crop`)."""
    net = _net(READER_FILE)
    with _lock:
        net.setInput(to_blob(crops))
        logits = np.asarray(net.forward()).reshape(len(crops), -1).astype(np.float64)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def tray_crop(image_bgr: np.ndarray, region: np.ndarray | None) -> tuple[np.ndarray, int, int]:
    """The part of the picture dice are looked for in (`vision.dice.region.cut_box`; the whole picture without a
    region), and its top-left corner (x, y) in the picture."""
    if region is None:
        return image_bgr, 0, 0
    x0, y0, x1, y1 = cut_box(region, image_bgr.shape[1], image_bgr.shape[0])
    return image_bgr[y0:y1, x0:x1], x0, y0


def read_d20(image_bgr: np.ndarray, region: np.ndarray | None = None,
             optical_centre_px: tuple[float, float] | None = None, focal_px: float | None = None) -> list[Die]:
    """The d20s in a close BGR uint8 picture: each one's numeral up, centre, box (full-picture pixels) and
    confidence, in reading order. `region`: the tray's polygon (N x 2, px): only dice in it
    (`vision.dice.region.counts`). No die: [].
    `optical_centre_px`, `focal_px`: the camera's (default: the picture's middle, FOCAL x its larger side)."""
    full = image_bgr if image_bgr.ndim == 3 else cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    h_full, w_full = full.shape[:2]
    oc = optical_centre_px if optical_centre_px is not None else ((w_full - 1) / 2.0, (h_full - 1) / 2.0)
    f = focal_px if focal_px is not None else FOCAL * max(w_full, h_full)
    part, ox, oy = tray_crop(full, region)
    if part.shape[0] < 2 or part.shape[1] < 2:
        return []
    found = [(x + ox, y + oy, bw, bh, heat) for x, y, bw, bh, heat in find_d20(part, finder_scale(full.shape))]
    if region is not None:
        found = [c for c in found if counts(region, (c[0], c[1]), max(c[2], c[3]))]
    if not found:
        return []
    turns = np.arange(TURNS) * (360.0 / TURNS)
    faces = top_faces(full, [(x, y, max(bw, bh)) for x, y, bw, bh, _ in found], oc, f)
    crops = [face_crop(full, face[:2], max(bw, bh), float(t)) for (_, _, bw, bh, _), face in zip(found, faces)
             for t in turns]
    prob = numeral_probabilities(crops).reshape(len(found), TURNS, -1)
    dice = []
    for (x, y, bw, bh, _), p, (_, _, surety) in zip(found, prob, faces, strict=True):
        upright = p[:, 1:]
        t, v = np.unravel_index(int(np.argmax(upright)), upright.shape)
        best = float(upright[t, v])
        votes = upright.max(axis=0)  # another numeral upright at another turn (6 and 9) makes it less sure
        confidence = best * float(votes[v] / max(float(votes.sum()), 1e-9)) * min(1.0, surety / LOCATED_SURE)
        if best < MIN_BELIEF or confidence < MIN_CONFIDENCE:
            continue  # no upright numeral at any turn, a different one at each, or no top face: no die
        dice.append(Die(int(v) + 1, 20, (x, y), (x - bw / 2, y - bh / 2, x + bw / 2, y + bh / 2),
                        round(confidence, 3)))
    return sorted(dice, key=lambda d: (round(d.centre_px[1] / 40.0), d.centre_px[0]))
