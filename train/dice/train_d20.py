"""Train the d20 finder, locator and reader (vision/dice/d20.py -> vision/dice/models/d20_*.onnx).

    pip install -e '.[train]'
    OMP_NUM_THREADS=1 nice -n 10 python train/dice/render_d20.py --out /tmp/d20_data --views 6000
    OMP_NUM_THREADS=1 nice -n 10 python train/dice/train_d20.py --data /tmp/d20_data [--stage all|finder|locator|reader]

Data: rendered close views only (`render_d20.py`: numerals in the DejaVu and Hershey fonts, never Liberation;
dice of any colour and make). One view in ten (its seed's last digit 0) is held out: nothing is trained on it,
and the whole reader (the ONNX files through cv2.dnn, as shipped) is scored on it at the end.
- The finder (CenterNet-style, as the d6 finder): the view at `d20.finder_scale` times 0.75-1.35 (FINDER_ZOOM) or,
  in LARGE_SHARE of the crops, enlarged so that one die is 56-150 of its pixels across (LARGE_PX: up to half the
  picture, a phone held close), a random FINDER_CROP square, quarter-turned and mirrored, colours jittered;
  target a heat map of die centres (a die more than half hidden is neither die nor background), each die's box
  width and height and its centre's offset.
- The locator: for every die at least 60 % visible, `d20.locate_crop` at the top face's guessed place
  (`d20.face_centre` from its labelled box, in one view in three as if the picture were cut to a tray's box:
  CUT_SHARE), the place moved by ~5 % of the die's size and the size by ~8 % (the finder's spread), turned by any
  angle and mirrored (the target turned and mirrored with it), colours jittered; target a heat map over the
  square's d20.LOCATE_CELLS x d20.LOCATE_CELLS cells, a Gaussian of LOCATOR_SIGMA cells round the labelled top
  face's middle (the renderer's `face_px`); cross-entropy (a map, not a point: a die whose top face is unsure
  between two learns both, and `d20.located` takes the likelier, never a point between them).
- The reader, on squares cut afresh every epoch from VIEWS_PER_EPOCH training views drawn at random:
  `d20.face_crop` of every die at least 60 % visible at its labelled top face moved by FACE_JITTER of its size
  (the locator's spread) and the size by ~8 %; UPRIGHT squares turned within UPRIGHT_DEG of the numeral's upright (class: the numeral) and
  TURNED squares turned TURNED_DEG or more from it (class 0, "no upright numeral"); class 0 also from the table,
  the felt, the walls, a hand, beside a die, between two touching dice, and the finder's own false candidates
  on the training views where the locator puts their face, at any turn; and class 0 from real photos of other
  dice (`--not-d20`: the d6 tray photos, `tests/data/dice_tray_d6`, enlarged NOT_D20_ZOOM times as a phone held
  close shows them; every fifth photo by name held out): each labelled d6 and each of the finder's candidates
  there, where the locator puts its face, at any turn (a d6 in a tray of d20s is no d20); colours jittered (hue turned, channels scaled, grey, blur, noise).
Seed SEED for numpy and torch; one thread; CPU.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.dice import match  # noqa: E402
from vision.dice import d20  # noqa: E402

SEED = 20261127
FINDER_CROP = 192
FINDER_STEPS = 3000
FINDER_ZOOM = (0.75, 1.35)
"""The finder sees a view at `d20.finder_scale` times a factor drawn from this range (dice ~1/16 to 1/5 of the
picture, as rendered)..."""
LARGE_SHARE = 0.3
LARGE_PX = (56.0, 150.0)
"""... or, in LARGE_SHARE of its crops, scaled so that one die (the crop's) is drawn from this range of the
finder's pixels across: ~1/6 to ~1/2 of the picture, as a phone held close over one or two dice sees them."""
FINDER_BATCH = 12
READER_EPOCHS = 24
VIEWS_PER_EPOCH = 2000
"""The reader's squares are cut afresh each epoch from this many training views, drawn at random."""
FACE_JITTER = 0.05
"""The reader's squares are centred this share of the die's size (one sigma) off its labelled top face."""
NOT_D20_ZOOM = (1.5, 3.5)
"""The photos of other dice are enlarged by a factor drawn from this range each epoch (their d6 ~20-70 px)."""
NOT_D20_SQUARES = 3
"""Squares (at random turns) of each d6 and finder candidate in a photo of other dice, each epoch."""
LOCATOR_EPOCHS = 16
LOCATOR_BATCH = 64
LOCATOR_WIDTHS = (16, 32, 48, 48, 64, 128)
"""The locator's five convolutions' channels and its hidden layer."""
LOCATOR_SIGMA = 0.8
"""The locator's target: a Gaussian round the labelled top face, of this standard deviation in cells."""
LOCATOR_STORE = 2.0, 96
"""Each die is kept as a square this many of its sizes across at this many pixels, cut again every epoch."""
READER_BATCH = 64
READER_WIDTHS = (16, 32, 48, 48, 64, 128)
"""The reader's five convolutions' channels and its hidden layer."""
UPRIGHT = 2
"""Squares of each die with its numeral within UPRIGHT_DEG of upright (its value)..."""
TURNED = 3
"""... and turned TURNED_DEG or more from upright (class 0): the reader must say which turn is upright."""
UPRIGHT_DEG = 15.0
TURNED_DEG = 25.0
HALF_TURN_ALIKE = (1, 8, 11)
"""Numerals that read the same turned half round: their TURNED squares are never near the half turn."""
SEEN = 0.6
"""A die at least this visible is read in training; the finder counts one at least half visible."""
CUT_SHARE = 0.35
"""The share of views whose locator crops take the optical centre and focal length of a random cut of the picture
(`vision.dice.read_dice` and the session read a tray's box, not knowing the whole picture's middle)."""


def image(path: Path) -> np.ndarray:
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise SystemExit(f"{path} is not an image; render the views again (render_d20.py).")
    return img


def held_out(name: str) -> bool:
    return int(Path(name).stem) % 10 == 0


def load(data: Path) -> list[tuple[str, dict]]:
    labels = json.loads((data / "labels.json").read_text())
    return [(n, labels[n]) for n in sorted(labels)]


def boxes_of(lab: dict, least: float) -> np.ndarray:
    return np.array([d["box"] for d in lab["dice"] if d["visible"] >= least], np.float64).reshape(-1, 4)


def colour_jitter(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Hue turned, saturation, brightness and contrast scaled, channels scaled, sometimes grey, blurred or noisy."""
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV).astype(np.float32)
    if rng.random() < 0.5:
        hsv[..., 0] = (hsv[..., 0] + rng.uniform(0, 180)) % 180
    hsv[..., 1] *= rng.uniform(0.6, 1.4)
    hsv[..., 2] *= rng.uniform(0.7, 1.25)
    out = cv2.cvtColor(np.clip(hsv, 0, 255).astype(np.uint8), cv2.COLOR_HSV2BGR).astype(np.float32)
    mean = out.mean()
    out = (out - mean) * rng.uniform(0.7, 1.3) + mean + rng.uniform(-25, 25)
    out *= rng.uniform(0.88, 1.12, size=3)
    if rng.random() < 0.1:
        out[:] = out.mean(axis=2, keepdims=True)
    if rng.random() < 0.25:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.4, 1.2))
    if rng.random() < 0.3:
        out += rng.normal(0, rng.uniform(1, 7), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


def cbr(i: int, o: int, s: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


# ---------------------------------------------------------------------------------------------- finder

class Finder(nn.Module):
    """Heat map of die centres (sigmoid), width and height (SIZE_UNIT), centre offset in the cell; stride 4."""

    def __init__(self) -> None:
        super().__init__()
        self.s2 = cbr(3, 16, 2)
        self.s4 = nn.Sequential(cbr(16, 24, 2), cbr(24, 24))
        self.s8 = nn.Sequential(cbr(24, 32, 2), cbr(32, 32))
        self.s16 = nn.Sequential(cbr(32, 48, 2), cbr(48, 48), cbr(48, 48))
        self.l16 = nn.Conv2d(48, 32, 1)
        self.m8 = cbr(32, 32)
        self.l8 = nn.Conv2d(32, 24, 1)
        self.m4 = cbr(24, 24)
        self.head = nn.Sequential(cbr(24, 24), nn.Conv2d(24, 5, 1))
        self.head[-1].bias.data[0] = -2.2  # type: ignore[index,union-attr]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a4 = self.s4(self.s2(x))
        a8 = self.s8(a4)
        a16 = self.s16(a8)
        b8 = self.m8(a8 + F.interpolate(self.l16(a16), scale_factor=2.0, mode="nearest"))
        b4 = self.m4(a4 + F.interpolate(self.l8(b8), scale_factor=2.0, mode="nearest"))
        y = self.head(b4)
        return torch.cat([torch.sigmoid(y[:, :1]), y[:, 1:]], dim=1)


STORE = 0.5
"""The finder's training views are kept in memory at this scale of the rendered 960 x 720."""


def finder_sample(view: tuple[np.ndarray, dict, float, Path], rng: np.random.Generator,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One FINDER_CROP crop of a view (its stored copy, label, larger side and file) at a random scale,
    quarter-turn and mirror: (BGR, heat, regression, ignore)."""
    img, lab, full_side, path = view
    seen = [d for d in lab["dice"] if d["visible"] >= 0.5]
    hidden = [d for d in lab["dice"] if d["visible"] < 0.5]
    large = int(rng.integers(len(seen))) if seen and rng.random() < LARGE_SHARE else None
    if large is None:
        f = d20.FINDER_SIDE / full_side * math.exp(rng.uniform(math.log(FINDER_ZOOM[0]), math.log(FINDER_ZOOM[1])))
    else:
        x0, y0, x1, y1 = seen[large]["box"]
        f = math.exp(rng.uniform(math.log(LARGE_PX[0]), math.log(LARGE_PX[1]))) / max(x1 - x0, y1 - y0, 1.0)
    g = f / STORE  # from the stored picture
    if g > 1.0:  # enlarged past the stored copy: from the rendered view itself, not blurred
        img, g = image(path), f
    h, w = img.shape[:2]
    sw, sh = max(8, round(w * g)), max(8, round(h * g))
    small = cv2.resize(img, (sw, sh), interpolation=cv2.INTER_AREA if g < 1 else cv2.INTER_LINEAR)
    c = FINDER_CROP
    pad = c // 2
    small = cv2.copyMakeBorder(small, pad, pad, pad, pad, cv2.BORDER_REFLECT_101)
    # boxes in continuous coordinates (a pixel i spans [i, i + 1)), scaled and padded
    b = (np.array([d["box"] for d in seen], np.float64).reshape(-1, 4) + 0.5) * f + pad
    hb = (np.array([d["box"] for d in hidden], np.float64).reshape(-1, 4) + 0.5) * f + pad
    if large is not None or (len(b) and rng.random() < 0.7):
        k = large if large is not None else rng.integers(len(b))
        cx, cy = (b[k, 0] + b[k, 2]) / 2, (b[k, 1] + b[k, 3]) / 2
        x0, y0 = int(cx - rng.uniform(0.1, 0.9) * c), int(cy - rng.uniform(0.1, 0.9) * c)
    else:
        x0, y0 = int(rng.uniform(0, small.shape[1] - c)), int(rng.uniform(0, small.shape[0] - c))
    x0 = int(np.clip(x0, 0, max(0, small.shape[1] - c)))
    y0 = int(np.clip(y0, 0, max(0, small.shape[0] - c)))
    crop = small[y0:y0 + c, x0:x0 + c]
    if crop.shape[0] < c or crop.shape[1] < c:
        crop = cv2.copyMakeBorder(crop, 0, c - crop.shape[0], 0, c - crop.shape[1], cv2.BORDER_REFLECT_101)
    shift = np.array([x0, y0, x0, y0])
    b, hb = b - shift, hb - shift
    cx, cy, bw, bh = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    hx, hy, hs = (hb[:, 0] + hb[:, 2]) / 2, (hb[:, 1] + hb[:, 3]) / 2, np.maximum(hb[:, 2] - hb[:, 0], hb[:, 3] - hb[:, 1])
    for _ in range(int(rng.integers(4))):  # quarter-turns (counter-clockwise): (x, y) -> (y, c - x)
        crop = np.rot90(crop)
        cx, cy, bw, bh = cy, c - cx, bh, bw
        hx, hy = hy, c - hx
    if rng.random() < 0.5:
        crop = crop[:, ::-1]
        cx, hx = c - cx, c - hx
    crop = colour_jitter(np.ascontiguousarray(crop), rng)
    n = c // d20.FINDER_STRIDE
    heat = np.zeros((n, n), np.float32)
    reg = np.zeros((5, n, n), np.float32)
    ignore = np.zeros((n, n), np.float32)
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32) + 0.5
    for x, y, s in zip(hx / d20.FINDER_STRIDE, hy / d20.FINDER_STRIDE, hs / d20.FINDER_STRIDE):
        ignore = np.maximum(ignore, ((xs - x) ** 2 + (ys - y) ** 2 < (0.5 * s) ** 2).astype(np.float32))
    for x, y, ww, hh in zip(cx / d20.FINDER_STRIDE, cy / d20.FINDER_STRIDE, bw, bh):
        if not (0 <= x < n and 0 <= y < n):
            continue
        sigma = max(0.6, 0.12 * max(ww, hh) / d20.FINDER_STRIDE)
        heat = np.maximum(heat, np.exp(-((xs - x) ** 2 + (ys - y) ** 2) / (2 * sigma * sigma)))
        i, j = int(y), int(x)
        heat[i, j] = 1.0
        reg[:, i, j] = (ww / d20.SIZE_UNIT, hh / d20.SIZE_UNIT, x - j - 0.5, y - i - 0.5, 1.0)
    ignore[heat > 0.05] = 0.0
    return crop, heat, reg, ignore


def finder_loss(out: torch.Tensor, heat: torch.Tensor, reg: torch.Tensor, ignore: torch.Tensor) -> torch.Tensor:
    """CenterNet's focal loss on the heat map (nothing where a hidden die is) plus L1 on size and offset."""
    p = out[:, 0].clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = (1 - pos) * (1 - ignore)
    pos_loss = (torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = (torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * neg).sum()
    n = pos.sum().clamp(min=1)
    mask = reg[:, 4:5]
    l1 = (torch.abs(out[:, 1:5] - reg[:, :4]) * mask).sum() / n
    return -(pos_loss + neg_loss) / n + l1


def train_finder(views: list, rng: np.random.Generator) -> Finder:
    net = Finder()
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=FINDER_STEPS, pct_start=0.15)
    net.train()
    t0 = time.time()
    for step in range(FINDER_STEPS):
        batch = [finder_sample(views[int(rng.integers(len(views)))], rng) for _ in range(FINDER_BATCH)]
        x = torch.from_numpy(d20.to_blob([b[0] for b in batch]))
        heat, reg, ign = (torch.from_numpy(np.stack([b[i] for b in batch])) for i in (1, 2, 3))
        loss = finder_loss(net(x), heat, reg, ign)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0 or step == FINDER_STEPS - 1:
            print(f"finder step {step} loss {loss.item():.3f} {time.time() - t0:.0f}s", flush=True)
    net.eval()
    return net


# ---------------------------------------------------------------------------------------------- reader

class Reader(nn.Module):
    """Class 0 "no upright numeral", classes 1..20 the numeral upright in the middle of `d20.face_crop`."""

    def __init__(self, widths: tuple[int, ...] = READER_WIDTHS) -> None:
        super().__init__()
        a, b, c, d, e, hidden = widths
        self.body = nn.Sequential(
            cbr(3, a), nn.MaxPool2d(2),
            cbr(a, b), nn.MaxPool2d(2),
            cbr(b, c), cbr(c, d), nn.MaxPool2d(2),
            cbr(d, e), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(e * (d20.READ_PX // 16) ** 2, hidden), nn.ReLU(inplace=True), nn.Dropout(0.2),
            nn.Linear(hidden, 21))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def _near(x: float, y: float, centres: np.ndarray, sizes: np.ndarray, share: float) -> bool:
    return bool(len(centres)) and bool(np.any(np.hypot(centres[:, 0] - x, centres[:, 1] - y) < share * sizes))


def reader_items(img: np.ndarray, lab: dict, rng: np.random.Generator, hard: list[tuple[float, float, float]],
                 ) -> tuple[list[np.ndarray], list[int]]:
    """The reader's squares of one view (see the module docstring) and their classes."""
    h, w = img.shape[:2]
    allb = np.array([d["box"] for d in lab["dice"]], np.float64).reshape(-1, 4)
    cen = np.stack([(allb[:, 0] + allb[:, 2]) / 2, (allb[:, 1] + allb[:, 3]) / 2], 1)
    size = np.maximum(allb[:, 2] - allb[:, 0], allb[:, 3] - allb[:, 1])
    crops: list[np.ndarray] = []
    classes: list[int] = []

    def add(x: float, y: float, s: float, cls: int, up_deg: float) -> None:
        crops.append(d20.face_crop(img, (x, y), s, up_deg))
        classes.append(cls)

    for d, (x, y), s in zip(lab["dice"], cen, size):
        if d["visible"] < SEEN or not (0 <= x < w and 0 <= y < h):
            continue
        fx, fy = d["face_px"]
        for k in range(UPRIGHT + TURNED):
            j = np.clip(rng.normal(0, FACE_JITTER, 2), -2.5 * FACE_JITTER, 2.5 * FACE_JITTER) * s
            sj = s * math.exp(np.clip(rng.normal(0, 0.08), -0.2, 0.2))
            off = rng.uniform(-UPRIGHT_DEG, UPRIGHT_DEG) if k < UPRIGHT else rng.uniform(TURNED_DEG, 360 - TURNED_DEG)
            if k >= UPRIGHT and d["value"] in HALF_TURN_ALIKE and abs(off - 180.0) < TURNED_DEG:
                off += 2 * TURNED_DEG if off >= 180.0 else -2 * TURNED_DEG  # 1, 8, 11 read alike upside down
            add(fx + j[0], fy + j[1], sj, d["value"] if k < UPRIGHT else 0, d["up_deg"] + off)
        if rng.random() < 0.5:  # beside it: a piece of a die is no die
            a, r = rng.uniform(0, 2 * math.pi), rng.uniform(0.6, 1.0) * s
            nx, ny = x + r * math.cos(a), y + r * math.sin(a)
            if not _near(nx, ny, cen, size, 0.5):
                add(nx, ny, s * rng.uniform(0.8, 1.2), 0, rng.uniform(0, 360))
    for i in range(len(cen)):  # between two touching dice
        for k in range(i + 1, len(cen)):
            if np.hypot(*(cen[i] - cen[k])) < 1.3 * max(size[i], size[k]) and rng.random() < 0.6:
                m = (cen[i] + cen[k]) / 2
                add(float(m[0]), float(m[1]), float(max(size[i], size[k])) * rng.uniform(0.9, 1.2), 0,
                    rng.uniform(0, 360))
    typical = float(np.median(size)) if len(size) else 0.1 * max(w, h)
    for _ in range(3):  # the felt, the walls, the table, a hand, clutter
        nx, ny = rng.uniform(0, w), rng.uniform(0, h)
        if not _near(nx, ny, cen, size, 0.7):
            add(nx, ny, typical * rng.uniform(0.6, 1.5), 0, rng.uniform(0, 360))
    for x, y, s in hard:
        for _ in range(2):
            add(x, y, s * rng.uniform(0.9, 1.1), 0, rng.uniform(0, 360))
    return crops, classes


def hard_candidates(img: np.ndarray, lab: dict) -> list[tuple[float, float, float]]:
    """The finder's candidates in a view that lie on no die (not even a hidden one), where the reader would look:
    the locator's top face (x, y) and the candidate's size."""
    boxes = np.array([d["box"] for d in lab["dice"]], np.float64).reshape(-1, 4)
    h, w = img.shape[:2]
    out = [(x, y, max(bw, bh)) for x, y, bw, bh, _ in d20.find_d20(img, d20.finder_scale(img.shape))
           if not any(b[0] - 0.5 <= x <= b[2] - 0.5 and b[1] - 0.5 <= y <= b[3] - 0.5 for b in boxes)]
    faces = d20.top_faces(img, out, ((w - 1) / 2.0, (h - 1) / 2.0), d20.FOCAL * max(w, h))
    return [(fx, fy, s) for (fx, fy, _), (_, _, s) in zip(faces, out)]


def hard_of(data: Path, names: list[tuple[str, dict]]) -> dict[str, list[tuple[float, float, float]]]:
    """Each training view's finder candidates on no die (`hard_candidates`), found once."""
    t0 = time.time()
    hard = {name: hard_candidates(image(data / "views" / name), lab) for name, lab in names}
    print(f"hard negatives: {sum(map(len, hard.values()))} in {len(hard)} views, {time.time() - t0:.0f}s", flush=True)
    return hard


def not_d20_photos(folder: Path | None) -> list[tuple[np.ndarray, list[list[float]]]]:
    """The training photos of other dice in `folder` (photos/*.jpg and labels.json, as tests/data/dice_tray_d6):
    each picture and its labelled dice's boxes; every fifth photo by name is held out (`held_out_not_d20`)."""
    if folder is None:
        return []
    labels = json.loads((folder / "labels.json").read_text())
    return [(image(folder / "photos" / n), [d["box"] for d in labels[n]])
            for k, n in enumerate(sorted(labels)) if k % 5]


def not_d20_score(folder: Path) -> dict:
    """`d20.read_d20` over the held-out photos of other dice (every fifth by name), as shot and enlarged 2.5
    times: every d20 read there is false."""
    labels = json.loads((folder / "labels.json").read_text())
    held = [n for k, n in enumerate(sorted(labels)) if k % 5 == 0]
    read = [d.confidence for n in held for z in (1.0, 2.5)
            for d in d20.read_d20(cv2.resize(image(folder / "photos" / n), None, fx=z, fy=z,
                                             interpolation=cv2.INTER_CUBIC))]
    return {"photos": len(held), "zooms": [1.0, 2.5], "other_dice": sum(len(labels[n]) for n in held),
            "read_as_d20": len(read), "at_0.8_or_more": sum(c >= 0.8 for c in read)}


def not_d20_items(img: np.ndarray, boxes: list[list[float]], rng: np.random.Generator,
                  ) -> tuple[list[np.ndarray], list[int]]:
    """Class-0 squares of a photo of other dice, enlarged by a factor drawn from NOT_D20_ZOOM: its labelled dice
    and the finder's candidates, where the locator puts their face, NOT_D20_SQUARES turns each."""
    z = float(rng.uniform(*NOT_D20_ZOOM))
    big = cv2.resize(img, None, fx=z, fy=z, interpolation=cv2.INTER_CUBIC)
    h, w = big.shape[:2]
    at = [((b[0] + b[2]) / 2 * z, (b[1] + b[3]) / 2 * z, max(b[2] - b[0], b[3] - b[1]) * z) for b in boxes]
    at += [(x, y, max(bw, bh)) for x, y, bw, bh, _ in d20.find_d20(big, d20.finder_scale(big.shape))]
    faces = d20.top_faces(big, at, ((w - 1) / 2.0, (h - 1) / 2.0), d20.FOCAL * max(w, h))
    crops = [d20.face_crop(big, face[:2], s * rng.uniform(0.9, 1.1), rng.uniform(0, 360))
             for face, (_, _, s) in zip(faces, at) for _ in range(NOT_D20_SQUARES)]
    return crops, [0] * len(crops)


def reader_data(data: Path, names: list[tuple[str, dict]], rng: np.random.Generator,
                hard: dict[str, list[tuple[float, float, float]]],
                others: Sequence[tuple[np.ndarray, list[list[float]]]] = ()) -> tuple[np.ndarray, np.ndarray]:
    """One epoch's squares and classes, cut afresh from VIEWS_PER_EPOCH views drawn from `names` and from every
    photo of other dice in `others`."""
    crops: list[np.ndarray] = []
    classes: list[int] = []
    for img, boxes in others:
        c, cls = not_d20_items(img, boxes, rng)
        crops += c
        classes += cls
    for k in rng.permutation(len(names))[:VIEWS_PER_EPOCH]:
        name, lab = names[int(k)]
        c, cls = reader_items(image(data / "views" / name), lab, rng, hard.get(name, []))
        crops += c
        classes += cls
    return np.stack(crops), np.array(classes, np.int64)


def train_reader(data: Path, names: list[tuple[str, dict]], hard: dict, rng: np.random.Generator, epochs: int,
                 widths: tuple[int, ...], others: Sequence[tuple[np.ndarray, list[list[float]]]] = ()) -> Reader:
    net = Reader(widths)
    crops, classes = reader_data(data, names, rng, hard, others)
    per_epoch = math.ceil(len(classes) / READER_BATCH)
    """Batches an epoch, the same every epoch (an epoch's squares vary in number; the schedule needs its steps)."""
    print(f"reader: {len(classes)} squares an epoch, {int((classes > 0).sum())} upright", flush=True)
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=epochs * per_epoch, pct_start=0.15)
    t0 = time.time()
    for epoch in range(epochs):
        if epoch:
            crops, classes = reader_data(data, names, rng, hard, others)
        net.train()
        order = np.resize(rng.permutation(len(classes)), per_epoch * READER_BATCH)  # wrapped round if short
        total, right, n = 0.0, 0, 0
        for k in range(0, len(order), READER_BATCH):
            idx = order[k:k + READER_BATCH]
            x = torch.from_numpy(d20.to_blob([colour_jitter(crops[i], rng) for i in idx]))
            y = torch.from_numpy(classes[idx])
            out = net(x)
            loss = F.cross_entropy(out, y, label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            right += int((out.argmax(1) == y).sum())
            n += len(idx)
        print(f"reader epoch {epoch} loss {total / n:.3f} train acc {right / n:.3f} {time.time() - t0:.0f}s",
              flush=True)
    net.eval()
    return net


# --------------------------------------------------------------------------------------------- locator

class Locator(nn.Module):
    """Where the top face's middle lies in the square (`d20.locate_crop`): d20.LOCATE_CELLS**2 logits, one a cell of
    the square (`d20.located` reads them)."""

    def __init__(self, widths: tuple[int, ...] = LOCATOR_WIDTHS) -> None:
        super().__init__()
        a, b, c, d, e, hidden = widths
        self.body = nn.Sequential(
            cbr(3, a), nn.MaxPool2d(2), cbr(a, b), nn.MaxPool2d(2), cbr(b, c), cbr(c, d), nn.MaxPool2d(2),
            cbr(d, e), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(e * (d20.LOCATE_PX // 16) ** 2, hidden), nn.ReLU(inplace=True),
            nn.Linear(hidden, d20.LOCATE_CELLS ** 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def locator_dice(data: Path, names: list[tuple[str, dict]], rng: np.random.Generator,
                 ) -> list[tuple[np.ndarray, tuple[float, float]]]:
    """Every die at least SEEN visible: a square LOCATOR_STORE around its top face's guessed place (see the module
    docstring) and the face's offset from that place, in units of the die's size."""
    across, px = LOCATOR_STORE
    out = []
    for name, lab in names:
        img = image(data / "views" / name)
        h, w = img.shape[:2]
        oc, f = ((w - 1) / 2.0, (h - 1) / 2.0), d20.FOCAL * max(w, h)
        if rng.random() < CUT_SHARE:  # read in a cut of the picture (a tray's box): its middle and size are taken
            cw, ch = w * rng.uniform(0.6, 1.0), h * rng.uniform(0.6, 1.0)
            x0, y0 = rng.uniform(0, w - cw), rng.uniform(0, h - ch)
            oc, f = (x0 + (cw - 1) / 2.0, y0 + (ch - 1) / 2.0), d20.FOCAL * max(cw, ch)
        for d in lab["dice"]:
            if d["visible"] < SEEN:
                continue
            x0, y0, x1, y1 = d["box"]
            s = max(x1 - x0, y1 - y0)
            gx, gy = d20.face_centre(((x0 + x1) / 2, (y0 + y1) / 2), s, oc, f)
            out.append((d20.square(img, (gx, gy), across * s, px),
                        ((d["face_px"][0] - gx) / s, (d["face_px"][1] - gy) / s)))
    return out


def locator_sample(kept: tuple[np.ndarray, tuple[float, float]], rng: np.random.Generator,
                   ) -> tuple[np.ndarray, tuple[float, float]]:
    """A `d20.locate_crop` square cut from a kept one, its middle moved and its size changed as the finder's are,
    turned by any angle and maybe mirrored; the target turned and mirrored with it, in units of the new size."""
    crop, (fx, fy) = kept
    across, px = LOCATOR_STORE
    j = np.clip(rng.normal(0, 0.05, 2), -0.15, 0.15)
    grow = math.exp(np.clip(rng.normal(0, 0.08), -0.2, 0.2))
    a = rng.uniform(0, 2 * math.pi)
    ca, sa = math.cos(a), math.sin(a)
    per = px / across  # kept pixels a die's size
    k = d20.LOCATE_SPAN * grow * per / d20.LOCATE_PX  # kept pixels an output pixel
    m, mo = (px - 1) / 2.0, (d20.LOCATE_PX - 1) / 2.0
    M = np.array([[k * ca, -k * sa, 0.0], [k * sa, k * ca, 0.0]])
    M[:, 2] = np.array([m + j[0] * per, m + j[1] * per]) - M[:, :2] @ np.array([mo, mo])
    out = cv2.warpAffine(crop, M, (d20.LOCATE_PX, d20.LOCATE_PX), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                         borderMode=cv2.BORDER_REPLICATE)
    dx, dy = fx - j[0], fy - j[1]
    tx, ty = (ca * dx + sa * dy) / grow, (-sa * dx + ca * dy) / grow
    if rng.random() < 0.5:
        out, tx = out[:, ::-1], -tx
    return np.ascontiguousarray(out), (tx, ty)


def locator_target(dx: float, dy: float) -> np.ndarray:
    """The locator's target for a top face (dx, dy) die sizes from the square's middle: a Gaussian of
    LOCATOR_SIGMA cells round it over the d20.LOCATE_CELLS**2 cells, summing to 1 (float32)."""
    n = d20.LOCATE_CELLS
    cx, cy = (dx / d20.LOCATE_SPAN + 0.5) * n - 0.5, (dy / d20.LOCATE_SPAN + 0.5) * n - 0.5
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    heat = np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * LOCATOR_SIGMA ** 2))
    return (heat / max(float(heat.sum()), 1e-9)).reshape(-1).astype(np.float32)


def train_locator(kept: list[tuple[np.ndarray, tuple[float, float]]], rng: np.random.Generator) -> Locator:
    net = Locator()
    steps = LOCATOR_EPOCHS * math.ceil(len(kept) / LOCATOR_BATCH)
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps, pct_start=0.15)
    t0 = time.time()
    for epoch in range(LOCATOR_EPOCHS):
        net.train()
        order = rng.permutation(len(kept))
        total = 0.0
        for k in range(0, len(order), LOCATOR_BATCH):
            batch = [locator_sample(kept[i], rng) for i in order[k:k + LOCATOR_BATCH]]
            x = torch.from_numpy(d20.to_blob([colour_jitter(b[0], rng) for b in batch]))
            y = torch.from_numpy(np.stack([locator_target(*b[1]) for b in batch]))
            loss = -(y * F.log_softmax(net(x), dim=1)).sum(dim=1).mean()  # cross-entropy with the soft target
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(batch)
        print(f"locator epoch {epoch} loss {total / len(kept):.4f} {time.time() - t0:.0f}s", flush=True)
    net.eval()
    return net


def locator_error(data: Path, names: list[tuple[str, dict]]) -> dict:
    """`d20.top_faces` (the ONNX locator through cv2.dnn) from the labelled boxes of held-out views: the distance
    from the labelled top face, in units of the die's size, at the 50th and 90th percentile; the guess's too."""
    ours, guess = [], []
    for name, lab in names:
        img = image(data / "views" / name)
        h, w = img.shape[:2]
        oc, f = ((w - 1) / 2.0, (h - 1) / 2.0), d20.FOCAL * max(w, h)
        dice = [d for d in lab["dice"] if d["visible"] >= SEEN]
        at = [((d["box"][0] + d["box"][2]) / 2, (d["box"][1] + d["box"][3]) / 2,
               max(d["box"][2] - d["box"][0], d["box"][3] - d["box"][1])) for d in dice]
        for d, (x, y, s), (fx, fy, _) in zip(dice, at, d20.top_faces(img, at, oc, f)):
            gx, gy = d20.face_centre((x, y), s, oc, f)
            ours.append(math.hypot(fx - d["face_px"][0], fy - d["face_px"][1]) / s)
            guess.append(math.hypot(gx - d["face_px"][0], gy - d["face_px"][1]) / s)
    return {"dice": len(ours), "locator_p50_p90": [round(float(v), 3) for v in np.percentile(ours, [50, 90])],
            "guess_p50_p90": [round(float(v), 3) for v in np.percentile(guess, [50, 90])]}


# ------------------------------------------------------------------------------------------ export, score

def export(net: nn.Module, path: Path, shape: tuple[int, ...], dynamic: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(net, (torch.zeros(shape),), str(path), input_names=["image"], output_names=["out"],
                      opset_version=13, dynamic_axes={"image": dynamic}, dynamo=False)


def score(data: Path, names: list[tuple[str, dict]]) -> dict:
    """`d20.read_d20` (the ONNX files now in place, through cv2.dnn) over held-out views: a die at least half
    visible is labelled; a die read on a hidden one is not false."""
    right = wrong = missed = false = labelled = low = 0
    for name, lab in names:
        img = image(data / "views" / name)
        dice = d20.read_d20(img)
        seen = [d for d in lab["dice"] if d["visible"] >= 0.5]
        hidden = [d["box"] for d in lab["dice"] if d["visible"] < 0.5]
        dice = [d for d in dice if not any(b[0] <= d.centre_px[0] <= b[2] and b[1] <= d.centre_px[1] <= b[3]
                                           for b in hidden)]
        pairs, m, f = match(dice, np.array([d["box"] for d in seen]).reshape(-1, 4), [d["value"] for d in seen])
        right += sum(a == b for a, b in pairs)
        wrong += sum(a != b for a, b in pairs)
        missed, false, labelled = missed + m, false + f, labelled + len(seen)
        low += sum(d.confidence < 0.8 for d in dice)
    return {"views": len(names), "dice": labelled, "right": right, "wrong": wrong, "missed": missed,
            "false": false, "low_confidence": low}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=Path("/tmp/d20_data"))
    p.add_argument("--out", type=Path, default=d20.MODELS, help="where the three ONNX files go")
    p.add_argument("--stage", choices=("all", "finder", "locator", "reader", "score"), default="all",
                   help="finder, locator, then reader (on the finder and locator in --out), or all three; "
                        "score: the held-out views only")
    p.add_argument("--reader-epochs", type=int, default=READER_EPOCHS)
    p.add_argument("--not-d20", type=Path, default=ROOT / "tests" / "data" / "dice_tray_d6",
                   help="real photos of other dice (photos/, labels.json), class 0 for the reader; 'none': none")
    p.add_argument("--reader-widths", default=",".join(map(str, READER_WIDTHS)),
                   help="the reader's five convolutions' channels and its hidden layer, comma-separated")
    args = p.parse_args()
    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    names = load(args.data)
    train = [(n, lab) for n, lab in names if not held_out(n)]
    test = [(n, lab) for n, lab in names if held_out(n)]
    print(f"{len(train)} training views, {len(test)} held out", flush=True)
    d20.FINDER_FILE = args.out / "d20_finder.onnx"
    d20.READER_FILE = args.out / "d20_reader.onnx"
    d20.LOCATOR_FILE = args.out / "d20_locator.onnx"
    t0 = time.time()
    if args.stage in ("all", "finder"):
        torch.manual_seed(SEED)
        rng = np.random.default_rng(SEED)
        views = []
        for name, lab in train:
            img = image(args.data / "views" / name)
            views.append((cv2.resize(img, None, fx=STORE, fy=STORE, interpolation=cv2.INTER_AREA), lab,
                          float(max(img.shape[:2])), args.data / "views" / name))
        finder = train_finder(views, rng)
        export(finder, d20.FINDER_FILE, (1, 3, 240, 320), {2: "h", 3: "w"})
        d20._nets.clear()
        del views
    if args.stage in ("all", "locator"):  # each stage seeded afresh: the same network whether trained alone or not
        torch.manual_seed(SEED + 2)
        rng = np.random.default_rng(SEED + 2)
        kept = locator_dice(args.data, train, rng)
        print(f"locator: {len(kept)} dice", flush=True)
        export(train_locator(kept, rng), d20.LOCATOR_FILE, (1, 3, d20.LOCATE_PX, d20.LOCATE_PX), {0: "n"})
        d20._nets.clear()
        del kept
        print(f"locator on held-out views: {json.dumps(locator_error(args.data, test))}", flush=True)
    if args.stage in ("all", "reader"):
        torch.manual_seed(SEED + 1)
        rng = np.random.default_rng(SEED + 1)
        hard = hard_of(args.data, train) if d20.FINDER_FILE.is_file() and d20.LOCATOR_FILE.is_file() else {}
        widths = tuple(int(v) for v in args.reader_widths.split(","))
        if len(widths) != 6:
            raise SystemExit(f"--reader-widths takes 6 numbers, not {args.reader_widths!r}; e.g. 16,32,48,48,64,128.")
        others = not_d20_photos(None if str(args.not_d20) == "none" else args.not_d20)
        print(f"photos of other dice: {len(others)}", flush=True)
        reader = train_reader(args.data, train, hard, rng, args.reader_epochs, widths, others)
        export(reader, d20.READER_FILE, (1, 3, d20.READ_PX, d20.READ_PX), {0: "n"})
        d20._nets.clear()
    print(f"trained in {(time.time() - t0) / 60:.1f} min", flush=True)
    if d20.READER_FILE.is_file() and d20.LOCATOR_FILE.is_file():  # the whole reader, once all three are there
        print(f"held-out views: {json.dumps(score(args.data, test))}", flush=True)
        if str(args.not_d20) != "none":
            print(f"held-out photos of other dice: {json.dumps(not_d20_score(args.not_d20))}", flush=True)


if __name__ == "__main__":
    main()
