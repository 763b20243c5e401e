"""Rendered close views of d20s for training the d20 finder and reader (train_d20.py), written once to a folder.

    OMP_NUM_THREADS=1 nice -n 10 python train/dice/render_d20.py [--out /tmp/d20_data] [--views 1600]

Writes DIR/views/<seed>.jpg (960 x 720, JPEG 97 over the view's own JPEG) and DIR/labels.json: for each view,
every die's box [x0, y0, x1, y1] (px), value, `visible` share, and the view's field of view. The views are made
to be unlike the bench's and the tests' (`random_phone_tray`): dice of any body colour (a share of them the
felt's own colour), opaque, translucent or marbled, speckled, with white, black, gold, red or any ink; numerals
in the training fonts only (never Liberation), each view's strokes thinner or thicker, slanted, narrower or
wider; felts of any colour; phones 5-12" up, tilted 0-24 degrees, 55-75 degree views, aimed off the tray so that
dice reach the picture's edge; a hand in one view in four; clutter (paper, cards, printed numbers, coins) on the
table around the tray; one view in twelve with no dice. Seeds from SEED_BASE on (the bench uses 1030-1045 and
the tests 7000-7009).
"""

from __future__ import annotations

import argparse
import colorsys
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from vision.synth import dice as synth  # noqa: E402
from vision.synth.render import CameraPose, camera_looking_at  # noqa: E402

SEED_BASE = 900_000
SIZE = (960, 720)


def train_fonts() -> list[int]:
    """Indices in NUMERAL_FONTS of the fonts training may see (no Liberation font: those are held out)."""
    return [i for i, f in enumerate(synth.NUMERAL_FONTS) if "Liberation" not in f]


def _bgr(h: float, s: float, v: float) -> tuple[float, float, float]:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, s, v)
    return (b * 255.0, g * 255.0, r * 255.0)


def random_look(rng: np.random.Generator, k: int) -> synth.Look:
    """A die's make: body of any colour, ink that shows on it, opaque (55 %), translucent (25 %) or marbled."""
    if rng.random() < 0.3:
        body = _bgr(rng.random(), rng.uniform(0, 0.15), rng.choice([rng.uniform(0.05, 0.2), rng.uniform(0.75, 0.95)]))
    else:
        body = _bgr(rng.random(), rng.uniform(0.35, 1.0), rng.uniform(0.25, 0.95))
    lum = 0.114 * body[0] + 0.587 * body[1] + 0.299 * body[2]
    r = rng.random()
    if r < 0.15:
        ink = synth.GOLD_INK
    elif r < 0.22:
        ink = _bgr(rng.random(), rng.uniform(0.5, 1.0), rng.uniform(0.5, 1.0))
    else:
        ink = synth.BLACK_INK if lum > 130 else synth.WHITE_INK
        if rng.random() < 0.25:
            ink = synth.WHITE_INK if ink == synth.BLACK_INK and lum < 160 else ink
    ink = tuple(float(np.clip(c * rng.uniform(0.85, 1.1), 0, 255)) for c in ink)  # type: ignore[assignment]
    if abs(0.114 * ink[0] + 0.587 * ink[1] + 0.299 * ink[2] - lum) < MIN_INK_CONTRAST:  # legible, as dice are made
        ink = synth.BLACK_INK if lum > 128 else synth.WHITE_INK
        _Style.guarded += 1
    u = rng.random()
    opacity = float(rng.uniform(0.4, 0.7)) if u < 0.25 else 1.0
    marble = _bgr(rng.random(), rng.uniform(0, 1), rng.uniform(0.1, 0.95)) if 0.25 <= u < 0.45 else None
    return synth.Look(f"random-{k}", body, ink, opacity, marble)  # type: ignore[arg-type]


class _Style:
    """The numeral style of the view being drawn: stroke change (px of the 96 px mask), slant, width."""

    stroke = 0
    slant = 0.0
    width = 1.0
    guarded = 0
    """How many looks had their ink changed for contrast (`random_look`)."""


MIN_INK_CONTRAST = 70.0
"""Ink at least this far (luma, 0-255) from the body's: a die nobody can read is no training example."""


_plain = synth.numeral_mask


def _styled_mask(text: str, font: int, mark: str, size: int = 96) -> np.ndarray:
    m = _plain(text, font, mark, size).copy()
    for stroke in range(_Style.stroke, 0) if _Style.stroke < 0 else [_Style.stroke] if _Style.stroke else []:
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * abs(stroke) + 1,) * 2)
        thinner_or_thicker = cv2.dilate(m, k) if stroke > 0 else cv2.erode(m, k)
        if stroke > 0 or thinner_or_thicker.sum() >= 0.6 * m.sum():  # thin fonts are thinned less, never erased
            m = thinner_or_thicker
            break
    if _Style.slant or _Style.width != 1.0:
        c = (size - 1) / 2.0
        M = np.array([[_Style.width, -_Style.slant, c - _Style.width * c + _Style.slant * c], [0.0, 1.0, 0.0]])
        m = cv2.warpAffine(m, M, (size, size), flags=cv2.INTER_LINEAR)
    return m


synth.numeral_mask = _styled_mask  # type: ignore[assignment]  # the renderer draws numerals through this name


def _table(rng: np.random.Generator) -> np.ndarray:
    """The table around the tray: a colour, low-frequency shading, and clutter (paper, cards, coins, printed
    numbers) that is no die."""
    w, h = SIZE
    colour = np.asarray(_bgr(rng.random(), rng.uniform(0.1, 0.7), rng.uniform(0.2, 0.8)), np.float32)
    low = cv2.resize(rng.standard_normal((6, 8)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    img = np.clip(colour[None, None, :] * (1 + 0.1 * low[:, :, None]), 0, 255).astype(np.uint8)
    for _ in range(int(rng.integers(0, 7))):
        x, y = int(rng.uniform(0, w)), int(rng.uniform(0, h))
        c = tuple(float(v) for v in rng.uniform(0, 255, 3))
        kind = rng.random()
        if kind < 0.35:  # paper or a card, printed numbers on it
            bw, bh = int(rng.uniform(60, 300)), int(rng.uniform(60, 300))
            paper = (235.0, 235.0, 230.0) if rng.random() < 0.6 else c
            box = cv2.boxPoints(((x, y), (bw, bh), rng.uniform(0, 90))).astype(np.int32)
            cv2.fillConvexPoly(img, box, paper, cv2.LINE_AA)
            for _ in range(int(rng.integers(1, 6))):
                cv2.putText(img, str(int(rng.integers(1, 100))), (int(x + rng.uniform(-bw, bw) / 3),
                            int(y + rng.uniform(-bh, bh) / 3)), int(rng.integers(0, 8)), rng.uniform(0.6, 2.0),
                            (20.0, 20.0, 20.0), int(rng.integers(1, 4)), cv2.LINE_AA)
        elif kind < 0.6:  # a coin or a token
            r = int(rng.uniform(15, 60))
            cv2.circle(img, (x, y), r, c, -1, cv2.LINE_AA)
            cv2.circle(img, (x, y), int(r * 0.7), tuple(v * 0.8 for v in c), 2, cv2.LINE_AA)
        elif kind < 0.8:  # a pencil, a ruler
            a = rng.uniform(0, math.pi)
            L = rng.uniform(100, 400)
            cv2.line(img, (int(x - L * math.cos(a)), int(y - L * math.sin(a))),
                     (int(x + L * math.cos(a)), int(y + L * math.sin(a))), c, int(rng.integers(6, 30)), cv2.LINE_AA)
        else:  # a polygon of some colour (a miniature's base, a box)
            pts = np.array([[x + rng.uniform(-80, 80), y + rng.uniform(-80, 80)] for _ in range(int(rng.integers(3, 7)))])
            cv2.fillConvexPoly(img, cv2.convexHull(pts.astype(np.int32)), c, cv2.LINE_AA)
    return img.astype(np.float32)


def _speckle(image: np.ndarray, truths: list[synth.DieTruth], rng: np.random.Generator) -> None:
    """Speckled dice: fine dots of another colour over some dice's bodies (drawn after, over their boxes)."""
    for t in truths:
        if rng.random() > 0.12:
            continue
        x0, y0, x1, y1 = (int(v) for v in t.box_px)
        cx, cy, r = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) * 0.42
        c = tuple(float(v) for v in rng.uniform(0, 255, 3))
        for _ in range(int(rng.integers(20, 80))):
            a, d = rng.uniform(0, 2 * math.pi), r * math.sqrt(rng.random())
            cv2.circle(image, (int(cx + d * math.cos(a)), int(cy + d * math.sin(a))), int(rng.integers(1, 3)), c, -1,
                       cv2.LINE_AA)


def _choices(rng: np.random.Generator) -> tuple[int, list[synth.Look]]:
    """The view's numeral style (set in _Style), its dice count and their looks: the first draws of its seed."""
    _Style.stroke = int(rng.choice([-2, -1, 0, 0, 1, 2, 3]))
    _Style.slant = float(rng.uniform(-0.2, 0.25)) if rng.random() < 0.4 else 0.0
    _Style.width = float(rng.uniform(0.8, 1.2)) if rng.random() < 0.4 else 1.0
    _Style.guarded = 0
    count = 0 if rng.random() < 1 / 12 else int(rng.integers(2, 10))
    return count, [random_look(rng, k) for k in range(max(count, 1))]


def changed_by_guards(seed: int) -> bool:
    """Whether the legibility guards (MIN_INK_CONTRAST, thinning that never erases) may change this view."""
    _choices(np.random.default_rng(seed))
    return _Style.stroke < -1 or _Style.guarded > 0


def render_view(seed: int) -> tuple[np.ndarray, dict]:
    """One view and its labels."""
    rng = np.random.default_rng(seed)
    count, looks = _choices(rng)
    felt = tuple(float(v) for v in rng.uniform(10, 230, 3))
    if count and rng.random() < 0.35:  # a felt of a die's own colour
        felt = tuple(float(np.clip(v * rng.uniform(0.85, 1.15), 0, 255)) for v in looks[0].body)
    tray = synth.Tray((10.0, 10.0), (float(rng.uniform(5.0, 8.0)), float(rng.uniform(3.6, 5.5))),
                      float(rng.uniform(-90, 90)), felt,  # type: ignore[arg-type]
                      tuple(float(v) for v in rng.uniform(20, 200, 3)))  # type: ignore[arg-type]
    dice = synth.roll_dice(tray, 20, count, rng, fonts=train_fonts(), touching=0.35, leaning=0.15, glare=0.4,
                           edge_in=float(rng.uniform(0.42, 0.58))) if count else []
    dice = [replace(d, look=looks[i]) for i, d in enumerate(dice)]
    height, tilt = float(rng.uniform(5.0, 12.0)), float(rng.uniform(0, 24))
    hfov = float(rng.uniform(55, 75))
    aim = np.array([10.0, 10.0]) + rng.normal(0, 1.2, 2)  # off the tray's middle: dice reach the edges
    pose = camera_looking_at((2 * aim[0], 2 * aim[1]), height, tilt, float(rng.uniform(-180, 180)), SIZE, hfov)
    pose = CameraPose(pose.camera, pose.rvec, pose.tvec)
    img, truths = synth.draw_tray(_table(rng), pose, tray, dice, seed, hand=bool(rng.random() < 0.25))
    _speckle(img, truths, rng)
    out = synth._finish(img, rng, float(rng.uniform(0.2, 1.3)), float(rng.uniform(0.5, 4.5)), int(rng.integers(65, 96)))
    labels = {"hfov_deg": hfov, "dice": [{"box": [round(v, 2) for v in t.box_px], "value": t.value,
                                          "visible": round(t.visible, 3), "face_visible": round(t.face_visible, 3),
                                          "up_deg": round(t.up_deg, 1),
                                          "face_px": [round(v, 1) for v in t.face_px]} for t in truths]}
    return out, labels


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("/tmp/d20_data"))
    p.add_argument("--views", type=int, default=1600)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--redo-guarded", action="store_true",
                   help="render again the views the legibility guards change (they came after a first render)")
    args = p.parse_args()
    cv2.setNumThreads(1)
    (args.out / "views").mkdir(parents=True, exist_ok=True)
    path = args.out / "labels.json"
    labels = json.loads(path.read_text()) if path.is_file() else {}
    t0 = time.time()
    for k in range(args.start, args.start + args.views):
        seed = SEED_BASE + k
        name = f"{seed}.jpg"
        if name in labels and not (args.redo_guarded and changed_by_guards(seed)):
            continue
        img, lab = render_view(seed)
        cv2.imwrite(str(args.out / "views" / name), img, [cv2.IMWRITE_JPEG_QUALITY, 97])
        labels[name] = lab
        if k % 50 == 0:
            path.write_text(json.dumps(labels))
            print(f"{k} views {time.time() - t0:.0f}s", flush=True)
    path.write_text(json.dumps(labels))
    print(f"done: {len(labels)} views in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
