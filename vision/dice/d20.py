"""Twenty-sided dice read in a close picture (a phone over the tray, dice ~80-200 px across).

1. Find the dice: the picture's colours fall in COLOURS clusters; the commonest is the felt, and clusters
   within FELT_SHADES of it are the felt in other light; of the other colours, a piece larger than a die, or
   a quarter of one reaching the picture's edge, is a wall or the table. What is left, closed and filled, is
   dice; touching dice are split at the narrows (watershed from each blob's core), and a blob must be
   die-sized, convex (solidity 0.8) and not long (sides within 1.6).
2. Cut the top face: seen from a close camera a die away from the middle of the view shows its side, so its
   top face lies outward of its blob (`top_face_guess`); the square FACE_SPAN x the die's width there is then
   moved onto the nearest numeral's ink (`numeral_square`, at most RECENTRE of a width).
3. Make the numeral bright on dark whatever the die's colours: the square is projected on its main colour
   axis, centred on its median (the face) and turned so that the rarer, stronger side (the ink) is positive:
   white, black or gold numerals on any body, opaque or translucent, read alike.
4. Read it upright: the square is turned in `TURNS` steps; a small network (`models/d20_reader.onnx`, run by
   cv2.dnn, see `models/D20_CARD.md`) says for each turn "not an upright numeral" or which of 1..20 it is;
   the most certain upright reading wins. 6 and 9 are told apart by their bar or dot, and by the turn.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import cv2
import numpy as np

from vision.dice.die import Die

MODEL_FILE = Path(__file__).with_name("models") / "d20_reader.onnx"
PATCH_PX = 32
"""The network's input: PATCH_PX x PATCH_PX, one channel, the numeral bright (0..1)."""
SQUARE_PX = 68
"""The square cut once a die (PATCH_PX x sqrt(2) and a little): every turn is taken from it."""
FACE_SPAN = 0.62
"""The cut square's side as a share of the die's width (its blob's equivalent diameter)."""
TURNS = 24
"""Turns tried (every 15 degrees); the network takes a numeral within ~9 degrees of upright as upright."""
NOT_UPRIGHT = 0
"""The network's class 0; classes 1..20 are the numerals."""
MIN_DIE_PX = 40.0
MAX_DIE_PX = 360.0
"""A blob narrower or wider than these (equivalent diameter, px) is no d20 of a close view."""
COLOURS = 6
"""Colour clusters of the picture (k-means in CIE L*a*b*)."""
LEAN = 0.5
"""How far outward a die's top face lies (see `top_face_guess`); measured on rendered views: the guess falls
a median 0.08 of the die's width from the face's centre, 0.12 for 9 in 10."""
FOCAL = 0.8
"""A phone's focal length over its picture's larger side (a 64 degree view) when none is given."""
MIN_BELIEF = 0.3
"""A blob whose likeliest upright numeral is less likely than this is no die."""
MIN_CONFIDENCE = 0.2
"""... nor one whose confidence (its belief x its numeral's share of the beliefs over all turns) is under this."""
RECENTRE = 0.12
"""The numeral is looked for at most this share of the die's width from its blob's inner centre."""
REGION_MARGIN_PX = 8
"""Read around a region's bounding box this far (as vision.dice.read_dice does)."""
BLOB_PX = 400.0
"""Dice are looked for in the picture shrunk to at most this many pixels across."""
FELT_SHADES = 14.0
"""Colours this close (CIE L*a*b*) to the felt's are felt in another light."""
CORE = 0.55
"""A die's marker: the part of its blob deeper than this share of the blob's deepest point."""


def _lab(image_bgr: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image_bgr, cv2.COLOR_BGR2Lab).astype(np.float32) * np.float32(100.0 / 255.0) * [
        1.0, 2.55, 2.55]


def die_blobs(image_bgr: np.ndarray) -> list[tuple[float, float, float, tuple[float, float, float, float]]]:
    """Every die-like blob: (x, y) its inner centre (farthest from the background), its width (equivalent
    diameter, px) and its box (x0, y0, x1, y1), px."""
    h, w = image_bgr.shape[:2]
    scale = min(1.0, BLOB_PX / max(h, w))
    small = cv2.resize(image_bgr, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA) \
        if scale < 1 else image_bgr
    small = cv2.GaussianBlur(small, (0, 0), 1.0)
    fg = _foreground(small, scale)
    return _split(small, fg, scale)


def _foreground(small: np.ndarray, scale: float) -> np.ndarray:
    """1 where a die may be, 0 on the felt, walls and table (see die_blobs)."""
    lab = _lab(small)
    # colours in COLOURS clusters (see the module docstring, step 1)
    hs, ws = lab.shape[:2]
    f = min(1.0, 160.0 / max(hs, ws))
    thumb = cv2.resize(lab, (max(1, round(ws * f)), max(1, round(hs * f))), interpolation=cv2.INTER_AREA)
    pts = thumb.reshape(-1, 3).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(1)
    _, _, centres = cv2.kmeans(pts, COLOURS, np.zeros((len(pts), 1), np.int32), criteria, 2, cv2.KMEANS_PP_CENTERS)
    dist_c = np.linalg.norm(lab[:, :, None, :] - centres[None, None], axis=3)
    label = np.argmin(dist_c, axis=2).astype(np.uint8)
    fg: np.ndarray = np.zeros((hs, ws), np.uint8)
    # the felt: the commonest colour; its lighter and darker patches are felt too
    felt = centres[int(np.bincount(label.ravel(), minlength=COLOURS).argmax())]
    felt_like = np.linalg.norm(centres - felt, axis=1) < FELT_SHADES
    big = math.pi / 4 * (MAX_DIE_PX * scale) ** 2
    for c in range(COLOURS):
        mask_c = (label == c).astype(np.uint8)
        _, comp, stats, _ = cv2.connectedComponentsWithStats(mask_c, connectivity=4)
        x, y, bw, bh, area = stats.T
        edge = (x == 0) | (y == 0) | (x + bw >= ws) | (y + bh >= hs)
        keep = (area <= big) & ~(edge & (area > big / 4))
        keep[0] = False
        if felt_like[c]:
            continue
        fg |= keep[comp].astype(np.uint8)
    k = max(3, int(round(8 * scale)) | 1)
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, disk)
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, disk)
    # holes (a translucent die's felt-coloured middle) filled
    contours, _ = cv2.findContours(fg, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    fg = np.zeros_like(fg)
    cv2.drawContours(fg, contours, -1, 1, -1)
    return fg


def _split(small: np.ndarray, fg: np.ndarray, scale: float,
           ) -> list[tuple[float, float, float, tuple[float, float, float, float]]]:
    """The die-sized, die-shaped pieces of the foreground, touching ones split (see die_blobs)."""
    dist = cv2.distanceTransform(fg, cv2.DIST_L2, 5)
    # one marker per die: each blob's core (over CORE of its deepest point), split where the blob narrows
    lo, hi = MIN_DIE_PX * scale, MAX_DIE_PX * scale
    n_parts, parts = cv2.connectedComponents(fg)
    deepest = np.zeros(n_parts, np.float32)
    np.maximum.at(deepest, np.asarray(parts, np.intp).ravel(), np.asarray(dist, np.float32).ravel())
    cores = ((dist > CORE * deepest[parts]) & (fg > 0)).astype(np.uint8)
    n, markers = cv2.connectedComponents(cores)
    markers = markers.astype(np.int32) + 1
    markers[(fg == 1) & (cores == 0)] = 0
    cv2.watershed(small, markers)
    out = []
    for piece in range(2, n + 1):
        m = (markers == piece).astype(np.uint8)
        area = float(m.sum())
        if area == 0:
            continue
        width = 2.0 * math.sqrt(area / math.pi)
        if not lo <= width <= hi:
            continue
        cs, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        c = max(cs, key=cv2.contourArea)
        hull = cv2.convexHull(c)
        if cv2.contourArea(c) < 0.8 * cv2.contourArea(hull):
            continue  # no die: a hand, a wall's corner
        x, y, bw, bh = cv2.boundingRect(c)
        if max(bw, bh) > 1.6 * min(bw, bh):
            continue
        d = cv2.distanceTransform(m, cv2.DIST_L2, 5)
        _, _, _, (cx, cy) = cv2.minMaxLoc(d)
        out.append(((cx + 0.5) / scale - 0.5, (cy + 0.5) / scale - 0.5, width / scale,
                    (x / scale, y / scale, (x + bw) / scale, (y + bh) / scale)))
    return out


def die_square(image_bgr: np.ndarray, centre: tuple[float, float], width_px: float) -> np.ndarray:
    """The square around a die's top face, its numeral bright on dark (see the module docstring): float32,
    SQUARE_PX a side, FACE_SPAN x `width_px` x sqrt(2) image pixels across (room to turn it)."""
    side = FACE_SPAN * width_px * math.sqrt(2.0)
    s = SQUARE_PX / side
    M = np.array([[s, 0.0, (SQUARE_PX - 1) / 2.0 - s * centre[0]], [0.0, s, (SQUARE_PX - 1) / 2.0 - s * centre[1]]])
    cut = cv2.warpAffine(image_bgr, M, (SQUARE_PX, SQUARE_PX), flags=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    inner = cut[SQUARE_PX // 4 : -SQUARE_PX // 4, SQUARE_PX // 4 : -SQUARE_PX // 4].reshape(-1, 3)
    mid = inner.mean(axis=0)
    centred = inner - mid
    _, vecs = np.linalg.eigh(centred.T @ centred)
    axis = vecs[:, -1].astype(np.float32)
    grey = (cut - mid) @ axis
    dev = grey - np.median(grey[SQUARE_PX // 4 : -SQUARE_PX // 4, SQUARE_PX // 4 : -SQUARE_PX // 4])
    core = dev[SQUARE_PX // 4 : -SQUARE_PX // 4, SQUARE_PX // 4 : -SQUARE_PX // 4]
    if float(np.sum(core**3)) < 0:  # the ink: the heavier tail
        dev = -dev
    top = float(np.percentile(core, 97))
    return np.clip(dev / max(top, 1e-3), 0.0, 1.0).astype(np.float32)


def numeral_square(image_bgr: np.ndarray, centre: tuple[float, float], width_px: float,
                   ) -> tuple[np.ndarray, tuple[float, float]]:
    """`die_square` moved onto the numeral nearest the die's middle (the ink's centroid, weighted by its
    nearness to the middle, twice; at most RECENTRE of the die's width away): the square and its centre."""
    cx, cy = centre
    s = SQUARE_PX / (FACE_SPAN * width_px * math.sqrt(2.0))
    yy, xx = np.mgrid[0:SQUARE_PX, 0:SQUARE_PX].astype(np.float32) - (SQUARE_PX - 1) / 2.0
    near = np.exp(-(xx * xx + yy * yy) / (2.0 * (0.14 * SQUARE_PX) ** 2))
    square = die_square(image_bgr, (cx, cy), width_px)
    for _ in range(2):
        ink = (square > 0.45) * near
        total = float(ink.sum())
        if total < 1.0:
            break
        dx, dy = float((ink * xx).sum()) / total / s, float((ink * yy).sum()) / total / s
        cx = float(np.clip(cx + dx, centre[0] - RECENTRE * width_px, centre[0] + RECENTRE * width_px))
        cy = float(np.clip(cy + dy, centre[1] - RECENTRE * width_px, centre[1] + RECENTRE * width_px))
        square = die_square(image_bgr, (cx, cy), width_px)
    return square, (cx, cy)


def turned(square: np.ndarray, turn_deg: float) -> np.ndarray:
    """The network's PATCH_PX input: the middle of `die_square`'s square (FACE_SPAN x the die's width across),
    turned counter-clockwise by `turn_deg`."""
    c = (SQUARE_PX - 1) / 2.0
    s = PATCH_PX / (SQUARE_PX / math.sqrt(2.0))
    M = np.asarray(cv2.getRotationMatrix2D((c, c), turn_deg, s), np.float64)
    M[:, 2] += (PATCH_PX - 1) / 2.0 - c
    return cv2.warpAffine(square, M, (PATCH_PX, PATCH_PX), flags=cv2.INTER_AREA)


def face_patch(image_bgr: np.ndarray, centre: tuple[float, float], width_px: float, turn_deg: float) -> np.ndarray:
    """The network's input for one die and one turn (as training cuts it)."""
    return turned(numeral_square(image_bgr, centre, width_px)[0], turn_deg)


def tray_crop(image_bgr: np.ndarray, region: np.ndarray | None) -> tuple[np.ndarray, int, int]:
    """The part of the picture dice are looked for in: the region's bounding box and REGION_MARGIN_PX around
    it (the whole picture without a region), and its top-left corner (x, y) in the picture."""
    if region is None:
        return image_bgr, 0, 0
    x, y, w, h = cv2.boundingRect(np.asarray(region, np.float32).reshape(-1, 1, 2))
    ox, oy = max(0, x - REGION_MARGIN_PX), max(0, y - REGION_MARGIN_PX)
    return image_bgr[oy : y + h + REGION_MARGIN_PX, ox : x + w + REGION_MARGIN_PX], ox, oy


_NET: cv2.dnn.Net | None = None
_LOCK = threading.Lock()


def _net() -> cv2.dnn.Net:
    global _NET
    with _LOCK:
        if _NET is None:
            _NET = cv2.dnn.readNetFromONNX(str(MODEL_FILE))
        return _NET


def numeral_scores(patches: np.ndarray) -> np.ndarray:
    """(N, 21) probabilities of "not upright" and 1..20 for (N, PATCH_PX, PATCH_PX) patches."""
    net = _net()
    with _LOCK:
        net.setInput(np.ascontiguousarray(patches.reshape(-1, 1, PATCH_PX, PATCH_PX), np.float32))
        return np.asarray(net.forward()).reshape(len(patches), -1)


def top_face_guess(box: tuple[float, float, float, float], width_px: float, optical_centre: tuple[float, float],
                   focal_px: float) -> tuple[float, float]:
    """Where a die's top face is, from its blob: a close camera sees a die away from the middle of its view
    from the side, so the top face lies outward of the blob's middle by LEAN x the blob's distance from the
    optical centre x its width / the focal length (a d20 lying on a face: its top ~0.5 of its width above its
    middle)."""
    mx, my = (box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0
    k = LEAN * width_px / focal_px
    return mx + (mx - optical_centre[0]) * k, my + (my - optical_centre[1]) * k


def read_d20(image_bgr: np.ndarray, region: np.ndarray | None = None,
             optical_centre_px: tuple[float, float] | None = None, focal_px: float | None = None) -> list[Die]:
    """The d20s in a close BGR uint8 picture: each one's numeral up, centre, box (full-picture pixels) and
    confidence. `region`: the tray's polygon (N x 2, px): only dice centred in it. No die: [].
    `optical_centre_px`, `focal_px`: the camera's (default: the picture's middle, FOCAL x its larger side)."""
    full = image_bgr if image_bgr.ndim == 3 else cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    h_full, w_full = full.shape[:2]
    oc = optical_centre_px if optical_centre_px is not None else ((w_full - 1) / 2.0, (h_full - 1) / 2.0)
    f = focal_px if focal_px is not None else FOCAL * max(w_full, h_full)
    image, ox, oy = tray_crop(full, region)
    if image.size == 0:
        return []
    blobs = die_blobs(image)
    if not blobs:
        return []
    turns = np.arange(TURNS) * (360.0 / TURNS)
    squares = [numeral_square(image, top_face_guess(box, bw, (oc[0] - ox, oc[1] - oy), f), bw)[0]
               for _, _, bw, box in blobs]
    patches = np.stack([turned(sq, float(t)) for sq in squares for t in turns])
    scores = numeral_scores(patches).reshape(len(blobs), TURNS, -1)
    dice = []
    for (bx, by, _, box), sc in zip(blobs, scores, strict=True):
        upright = sc[:, 1:]
        t, v = np.unravel_index(int(np.argmax(upright)), upright.shape)
        best = float(upright[t, v])
        # the numeral's total belief over all turns: a die read the same at two turns is surer
        votes = upright.max(axis=0)
        conf = best * float(votes[v] / max(votes.sum(), 1e-6))
        if best < MIN_BELIEF or conf < MIN_CONFIDENCE:
            continue  # no numeral at any turn, or a different one at each: not a die
        if region is not None and cv2.pointPolygonTest(np.asarray(region, np.float32).reshape(-1, 1, 2),
                                                       (bx + ox, by + oy), False) < 0:
            continue
        dice.append(Die(int(v) + 1, 20, (bx + ox, by + oy), (box[0] + ox, box[1] + oy, box[2] + ox, box[3] + oy),
                        round(min(1.0, conf), 3)))
    return dice
