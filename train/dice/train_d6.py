"""Train the d6 finder and reader (vision/dice/d6.py) on the real dice-tray photos, with 5-fold held-out figures.

    pip install -e '.[train]'
    python train/dice/render_d6.py --out /tmp/d6_rendered          # 1,320 rendered trays, ~10 min
    OMP_NUM_THREADS=1 nice -n 10 python train/dice/train_d6.py --rendered /tmp/d6_rendered [--folds 0,1,2,3,4,final]
    python train/dice/train_d6.py --summary

`--data` defaults to tests/data/dice_tray_d6 (200 photos, labels.json: each die's box and face word). Photos are
split into 5 folds by photo (seeded shuffle of the sorted names). For each fold k the three networks are trained
on the other 160 photos (the finder and the table reader, with --rendered, on the rendered trays too, which are
never scored) and the whole reader (the ONNX files through cv2.dnn, as shipped) is scored on the 40 held-out
photos, read as photos (fold<k>.json) and as a table camera's tray (fold<k>_table.json); "final" trains on all
200 and writes the shipped networks to --final-to (vision/dice/models/).
The fold models and figures go to --work (default /tmp/d6_train); `--summary` gathers them into
vision/dice/models/d6_heldout.json (what `tablesight bench` and the model card quote); `--rescore` scores the
fold models there again; `--train` names what to train (the rest is taken as it lies in the fold's folder). Nothing is tuned
on held-out figures (see the model card for what was seen when).

One thread (torch.set_num_threads(1)); seed SEED; CPU only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.dice import match  # noqa: E402
from vision.dice import d6  # noqa: E402

SEED = 20261127
FACES = ("one", "two", "three", "four", "five", "six")
FOLDS = 5
FINDER_CROP = 160
FINDER_STEPS = 1100
FINDER_BATCH = 12
PHOTOS_READER = ((32, 64, 128), 40)
"""The reader trained on the real photos alone (it reads photos): its channels and epochs."""
TABLE_READER = ((32, 64, 128), 45)
"""The reader trained on the real photos and the rendered table trays (it reads a table camera's tray): its channels
and epochs."""
READER_BATCH = 32
RENDERED_SHARE = 0.5
"""With --rendered: the share of the finder's crops cut from rendered trays."""
TABLE_RENDERED_SHARE = 2 / 3
"""With --rendered: the share of rendered dice in each of the table reader's epochs (drawn afresh each epoch): twice
as many rendered dice as real ones."""


# ------------------------------------------------------------------------------------------------ data

def load(data: Path, prefix: str = "") -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """(name, BGR photo, boxes N x 4 [x0, y0, x1, y1] corner coordinates, faces N) for every labelled photo;
    `prefix` before each name (rendered pictures are named "rendered/...")."""
    labels = json.loads((data / "labels.json").read_text())
    out = []
    for name in sorted(labels):
        img = cv2.imread(str(data / "photos" / name), cv2.IMREAD_COLOR)
        boxes = np.array([d["box"] for d in labels[name]], np.float64).reshape(-1, 4)
        faces = np.array([FACES.index(d["label"]) + 1 for d in labels[name]], np.int64)
        out.append((prefix + name, img, boxes, faces))
    return out


def is_rendered(photo: tuple) -> bool:
    return photo[0].startswith("rendered/")


def pick(photos: list, rng: np.random.Generator) -> tuple:
    """A training photo: a rendered one RENDERED_SHARE of the time when there are both kinds."""
    real = [p for p in photos if not is_rendered(p)]
    rendered = [p for p in photos if is_rendered(p)]
    pool = rendered if rendered and (not real or rng.random() < RENDERED_SHARE) else real
    return pool[int(rng.integers(len(pool)))]


def fold_of(names: list[str]) -> dict[str, int]:
    order = np.random.default_rng(SEED).permutation(len(names))
    return {names[i]: pos % FOLDS for pos, i in enumerate(order)}


def colour_jitter(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Hue turned, saturation, brightness and contrast scaled, sometimes grey, blurred or noisy."""
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV).astype(np.float32)
    hsv[..., 0] = (hsv[..., 0] + rng.uniform(0, 180)) % 180 if rng.random() < 0.5 else hsv[..., 0]
    hsv[..., 1] *= rng.uniform(0.6, 1.4)
    hsv[..., 2] *= rng.uniform(0.7, 1.25)
    out = cv2.cvtColor(np.clip(hsv, 0, 255).astype(np.uint8), cv2.COLOR_HSV2BGR).astype(np.float32)
    mean = out.mean()
    out = (out - mean) * rng.uniform(0.75, 1.3) + mean + rng.uniform(-20, 20)
    out *= rng.uniform(0.9, 1.1, size=3)
    if rng.random() < 0.1:
        out[:] = out.mean(axis=2, keepdims=True)
    if rng.random() < 0.2:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.4, 1.0))
    if rng.random() < 0.3:
        out += rng.normal(0, rng.uniform(1, 6), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------------------- finder

def cbr(i: int, o: int, s: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


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


def finder_sample(photo: tuple, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One FINDER_CROP crop of a photo at a random scale, quarter-turn and mirror: (BGR, heat, size+offset+mask)."""
    _, img, boxes, _ = photo
    f = d6.FINDER_SCALE * math.exp(rng.uniform(math.log(0.6), math.log(1.6)))
    h, w = img.shape[:2]
    sw, sh = max(8, round(w * f)), max(8, round(h * f))
    small = cv2.resize(img, (sw, sh), interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
    fx, fy = sw / w, sh / h
    b = boxes * np.array([fx, fy, fx, fy])
    c = FINDER_CROP
    pad = c
    small = cv2.copyMakeBorder(small, pad, pad, pad, pad, cv2.BORDER_REFLECT_101)
    b = b + pad
    if len(b) and rng.random() < 0.8:
        k = rng.integers(len(b))
        cx, cy = (b[k, 0] + b[k, 2]) / 2, (b[k, 1] + b[k, 3]) / 2
        x0, y0 = int(cx - rng.uniform(0.1, 0.9) * c), int(cy - rng.uniform(0.1, 0.9) * c)
    else:
        x0, y0 = int(rng.uniform(pad / 2, sw + pad * 1.5 - c)), int(rng.uniform(pad / 2, sh + pad * 1.5 - c))
    x0 = int(np.clip(x0, 0, small.shape[1] - c))
    y0 = int(np.clip(y0, 0, small.shape[0] - c))
    crop = small[y0:y0 + c, x0:x0 + c]
    b = b - np.array([x0, y0, x0, y0])
    cx, cy = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2
    bw, bh = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    for _ in range(int(rng.integers(4))):  # quarter-turns: (x, y) -> (y, c - x), sizes swap
        crop = np.rot90(crop)
        cx, cy = cy, c - cx
        bw, bh = bh, bw
    if rng.random() < 0.5:
        crop = crop[:, ::-1]
        cx = c - cx
    crop = colour_jitter(np.ascontiguousarray(crop), rng)
    g = c // d6.FINDER_STRIDE
    heat = np.zeros((g, g), np.float32)
    reg = np.zeros((5, g, g), np.float32)  # w, h, dx, dy, mask
    ys, xs = np.mgrid[0:g, 0:g].astype(np.float32) + 0.5
    for x, y, ww, hh in zip(cx / d6.FINDER_STRIDE, cy / d6.FINDER_STRIDE, bw, bh):
        if not (0 <= x < g and 0 <= y < g):
            continue
        sigma = max(0.6, 0.12 * max(ww, hh) / d6.FINDER_STRIDE)
        heat = np.maximum(heat, np.exp(-((xs - x) ** 2 + (ys - y) ** 2) / (2 * sigma * sigma)))
        i, j = int(y), int(x)
        heat[i, j] = 1.0
        reg[:, i, j] = (ww / d6.SIZE_UNIT, hh / d6.SIZE_UNIT, x - j - 0.5, y - i - 0.5, 1.0)
    return crop, heat, reg


def finder_loss(out: torch.Tensor, heat: torch.Tensor, reg: torch.Tensor) -> torch.Tensor:
    """CenterNet's focal loss on the heat map plus L1 on size and offset at the centres."""
    p = out[:, 0].clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = 1 - pos
    pos_loss = (torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = (torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * neg).sum()
    n = pos.sum().clamp(min=1)
    mask = reg[:, 4:5]
    l1 = (torch.abs(out[:, 1:5] - reg[:, :4]) * mask).sum() / n
    return -(pos_loss + neg_loss) / n + l1


def blob(images: list[np.ndarray]) -> torch.Tensor:
    return torch.from_numpy(d6.to_blob(images))


def train_finder(photos: list, rng: np.random.Generator, log: str) -> Finder:
    net = Finder()
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=FINDER_STEPS, pct_start=0.15)
    net.train()
    t0 = time.time()
    for step in range(FINDER_STEPS):
        batch = [finder_sample(pick(photos, rng), rng) for _ in range(FINDER_BATCH)]
        x = blob([b[0] for b in batch])
        heat = torch.from_numpy(np.stack([b[1] for b in batch]))
        reg = torch.from_numpy(np.stack([b[2] for b in batch]))
        loss = finder_loss(net(x), heat, reg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 200 == 0 or step == FINDER_STEPS - 1:
            print(f"{log} finder step {step} loss {loss.item():.3f} {time.time() - t0:.0f}s", flush=True)
    net.eval()
    return net


# ---------------------------------------------------------------------------------------------- reader

class Reader(nn.Module):
    """Class 0 "not a die", classes 1..6 the face up, from a CROP_PX square with the die's edges square to it."""

    def __init__(self, widths: tuple[int, int, int]) -> None:
        super().__init__()
        a, b, c = widths
        self.body = nn.Sequential(
            cbr(3, a), nn.MaxPool2d(2),
            cbr(a, b), cbr(b, b), nn.MaxPool2d(2),
            cbr(b, c), cbr(c, c), nn.MaxPool2d(2),
            nn.Flatten(), nn.Dropout(0.2), nn.Linear(c * (d6.CROP_PX // 8) ** 2, 7))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def near_any(x: float, y: float, centres: np.ndarray, sizes: np.ndarray, share: float) -> bool:
    return bool(len(centres)) and bool(np.any(np.hypot(centres[:, 0] - x, centres[:, 1] - y) < share * sizes))


def reader_items(photos: list, hard: list, rng: np.random.Generator) -> list[tuple[int, float, float, float, int]]:
    """One epoch's (photo index, x, y, side, class): every die, negatives beside and between dice and on the
    tray, and the finder's own false candidates (`hard`)."""
    items = []
    real_dice = sum(len(p[2]) for p in photos if not is_rendered(p))
    rendered_dice = sum(len(p[2]) for p in photos if is_rendered(p))
    keep_rendered = 1.0 if not real_dice else min(1.0, TABLE_RENDERED_SHARE / (1 - TABLE_RENDERED_SHARE) * real_dice
                                                  / max(rendered_dice, 1))
    for pi, (_, img, boxes, faces) in enumerate(photos):
        if is_rendered(photos[pi]) and rng.random() >= keep_rendered:
            continue
        h, w = img.shape[:2]
        cen = np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2], 1) - 0.5
        size = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
        for (x, y), s, face in zip(cen, size, faces):
            j = rng.uniform(-0.08, 0.08, 2) * s
            items.append((pi, x + j[0], y + j[1], s * rng.uniform(0.8, 1.25), int(face)))  # the finder's spread
            if rng.random() < 0.35:
                a = rng.uniform(0, 2 * math.pi)
                r = rng.uniform(0.55, 0.95) * s
                nx, ny = x + r * math.cos(a), y + r * math.sin(a)
                if not near_any(nx, ny, cen, size, 0.45):
                    items.append((pi, nx, ny, s * rng.uniform(0.8, 1.2), 0))
        mean_size = float(size.mean()) if len(size) else 40.0
        for _ in range(2):
            nx, ny = rng.uniform(0, w), rng.uniform(0, h)
            if not near_any(nx, ny, cen, size, 0.6):
                items.append((pi, nx, ny, mean_size * rng.uniform(0.6, 1.5), 0))
    for pi, x, y, s in hard:
        items.append((pi, x, y, s * rng.uniform(0.9, 1.1), 0))
    return items


def reader_crop(photos: list, item: tuple, rng: np.random.Generator) -> np.ndarray:
    pi, x, y, s, _ = item
    turn = 90.0 * int(rng.integers(4)) + rng.uniform(-8, 8)  # square to the cut, as the reader sees it, give or take
    crop = d6.die_crop(photos[pi][1], (x, y), d6.CROP_MARGIN * s, turn, bool(rng.random() < 0.5))
    return colour_jitter(crop, rng)


def train_reader(photos: list, hard: list, rng: np.random.Generator, log: str,
                 shape: tuple[tuple[int, int, int], int]) -> Reader:
    widths, epochs = shape
    net = Reader(widths)
    per_epoch = math.ceil(len(reader_items(photos, hard, rng)) / READER_BATCH)
    """Batches an epoch, the same every epoch (an epoch's items vary in number; the schedule needs its steps)."""
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=epochs * per_epoch,
                                                pct_start=0.15)
    t0 = time.time()
    for epoch in range(epochs):
        net.train()
        items = reader_items(photos, hard, rng)
        order = np.resize(rng.permutation(len(items)), per_epoch * READER_BATCH)  # wrapped round if short
        total, right, n = 0.0, 0, 0
        for k in range(0, len(order), READER_BATCH):
            chunk = [items[i] for i in order[k:k + READER_BATCH]]
            x = blob([reader_crop(photos, it, rng) for it in chunk])
            y = torch.tensor([it[4] for it in chunk])
            out = net(x)
            loss = F.cross_entropy(out, y, label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(chunk)
            right += int((out.argmax(1) == y).sum())
            n += len(chunk)
        print(f"{log} reader epoch {epoch} loss {total / n:.3f} train acc {right / n:.3f} "
              f"{time.time() - t0:.0f}s", flush=True)
    net.eval()
    return net


# ------------------------------------------------------------------------------------------ export, score

def export(net: nn.Module, path: Path, shape: tuple[int, ...]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(net, (torch.zeros(shape),), str(path), input_names=["image"], output_names=["out"],
                      opset_version=13, dynamic_axes={"image": {0: "n", 2: "h", 3: "w"}}, dynamo=False)


CLOSE_TIMES = 3.0
"""`--close`: the held-out photos are also scored enlarged this many times (dice ~120 px, as a phone held close
over the tray sees them in a 1920 px photo)."""


def score(photos: list, times: float = 1.0, table: bool = False) -> dict:
    """The shipped pipeline (d6.read_d6 on the ONNX files now in place) over `photos`, enlarged `times` times; read
    as photos (the photos reader), or with `table` as a table camera's tray is (full size only, the table reader)."""
    confusion = np.zeros((6, 6), int)
    missed = false = low = wrong_sure = 0
    for _, img, boxes, faces in photos:
        if times != 1.0:
            img = cv2.resize(img, None, fx=times, fy=times, interpolation=cv2.INTER_CUBIC)
            boxes = boxes * times  # corner coordinates
        dice = d6.read_d6(img, large_too=not table)
        pairs, m, f = match(dice, boxes, list(faces))
        missed += m
        false += f
        low += sum(1 for d in dice if d.confidence < 0.8)
        sure, _, _ = match([d for d in dice if d.confidence >= 0.8], boxes, list(faces))
        wrong_sure += sum(1 for truth, read in sure if truth != read)
        for truth, read in pairs:
            confusion[truth - 1, read - 1] += 1
    right = int(np.trace(confusion))
    n = int(sum(len(p[2]) for p in photos))
    return {"photos": len(photos), "dice": n, "right": right, "wrong": int(confusion.sum()) - right,
            "missed": missed, "false": false, "low_confidence": low, "wrong_confident": wrong_sure,
            "confusion": confusion.tolist()}


def hard_negatives(photos: list) -> list[tuple[int, float, float, float]]:
    """The finder's candidates on its own training photos that are no labelled die."""
    out = []
    for pi, (_, img, boxes, _) in enumerate(photos):
        for x, y, bw, bh, _ in d6.find_dice(img):
            inside = [(b[0] - 0.5 <= x <= b[2] - 0.5 and b[1] - 0.5 <= y <= b[3] - 0.5) for b in boxes]
            if not any(inside):
                out.append((pi, x, y, max(bw, bh)))
    return out


def use_models(models: Path) -> None:
    """d6.read_d6 runs the finder and readers in `models` from now on."""
    d6.FINDER_FILE = models / "d6_finder.onnx"
    d6.READER_FILE = models / "d6_reader.onnx"
    d6.TABLE_READER_FILE = models / "d6_reader_table.onnx"
    d6._nets.clear()


def run_fold(photos: list, fold: str, folds: dict[str, int], out_dir: Path, train_what: set[str],
             final_to: Path = d6.MODELS, rendered: list | None = None) -> None:
    """Train `train_what` (of "finder", "photos", "table") for one fold; what is not trained is taken as it lies
    in the fold's folder. The finder and the table reader learn from the rendered trays too, the photos reader
    from the real photos alone."""
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED + (99 if fold == "final" else int(fold)))
    real = [p for p in photos if fold == "final" or folds[p[0]] != int(fold)]
    train = real + list(rendered or [])
    test = [p for p in photos if fold != "final" and folds[p[0]] == int(fold)]
    t0 = time.time()
    models = final_to if fold == "final" else out_dir / f"fold{fold}"  # fold models stay out of the repo
    use_models(models)
    if "finder" in train_what:
        finder = train_finder(train, rng, f"[{fold}]")
        export(finder, d6.FINDER_FILE, (1, 3, 256, 256))
        d6._nets.clear()
    hard = hard_negatives(train)  # the real photos come first: their indices are the same in `real`
    print(f"[{fold}] {len(hard)} hard negatives from the finder", flush=True)
    if "photos" in train_what:
        reader = train_reader(real, [h for h in hard if h[0] < len(real)], rng, f"[{fold} photos]", PHOTOS_READER)
        export(reader, d6.READER_FILE, (1, 3, d6.CROP_PX, d6.CROP_PX))
    if "table" in train_what and rendered:
        reader = train_reader(train, hard, rng, f"[{fold} table]", TABLE_READER)
        export(reader, d6.TABLE_READER_FILE, (1, 3, d6.CROP_PX, d6.CROP_PX))
    d6._nets.clear()
    minutes = (time.time() - t0) / 60
    if fold == "final":
        print(f"[final] trained in {minutes:.1f} min; on its own training photos: {score(photos)}", flush=True)
        (out_dir / "final.json").write_text(json.dumps({"train_minutes": round(minutes, 1)}) + "\n")
        return
    result = {"fold": int(fold), "train_minutes": round(minutes, 1), **score(test)}
    print(f"[{fold}] held out: {result}", flush=True)
    (out_dir / f"fold{fold}.json").write_text(json.dumps(result) + "\n")
    score_table(test, fold, out_dir)


def score_table(test: list, fold: str | int, out_dir: Path) -> None:
    """The held-out photos read as a table camera's tray (the table reader): fold<k>_table.json."""
    result = {"fold": int(fold), **score(test, table=True)}
    print(f"[{fold}] held out, read as a table camera's tray: {result}", flush=True)
    (out_dir / f"fold{fold}_table.json").write_text(json.dumps(result) + "\n")


def rescore(photos: list, out_dir: Path) -> None:
    """Each fold's held-out figures again, from its models in `out_dir` (train_minutes kept)."""
    folds = fold_of([p[0] for p in photos])
    for k in range(FOLDS):
        use_models(out_dir / f"fold{k}")
        old = json.loads((out_dir / f"fold{k}.json").read_text())
        result = {"fold": k, "train_minutes": old["train_minutes"], **score([p for p in photos if folds[p[0]] == k])}
        print(f"[{k}] held out: {result}", flush=True)
        (out_dir / f"fold{k}.json").write_text(json.dumps(result) + "\n")
        score_table([p for p in photos if folds[p[0]] == k], k, out_dir)


def rescore_close(photos: list, out_dir: Path) -> None:
    """Each fold's held-out photos enlarged CLOSE_TIMES times, read by its models: fold<k>_close.json."""
    folds = fold_of([p[0] for p in photos])
    for k in range(FOLDS):
        use_models(out_dir / f"fold{k}")
        result = {"fold": k, "times": CLOSE_TIMES, **score([p for p in photos if folds[p[0]] == k], CLOSE_TIMES)}
        print(f"[{k}] held out, enlarged {CLOSE_TIMES:g} times: {result}", flush=True)
        (out_dir / f"fold{k}_close.json").write_text(json.dumps(result) + "\n")


SUMMED = ("photos", "dice", "right", "wrong", "missed", "false", "low_confidence", "wrong_confident")


def _total(folds: list[dict]) -> dict:
    total = {k: sum(f[k] for f in folds) for k in SUMMED}
    total["confusion"] = np.sum([f["confusion"] for f in folds], axis=0).tolist()
    return total


def summary(out_dir: Path, target: Path) -> None:
    folds = [json.loads((out_dir / f"fold{k}.json").read_text()) for k in range(FOLDS)]
    keys = SUMMED
    total = _total(folds)
    close_files = [out_dir / f"fold{k}_close.json" for k in range(FOLDS)]
    close = {}
    if all(f.is_file() for f in close_files):
        close = {"close": {"what": f"the same held-out photos enlarged {CLOSE_TIMES:g} times (dice ~120 px: a phone "
                                   "held close), each read by its fold's models", "times": CLOSE_TIMES,
                           "total": _total([json.loads(f.read_text()) for f in close_files])}}
    table_files = [out_dir / f"fold{k}_table.json" for k in range(FOLDS)]
    if all(f.is_file() for f in table_files):
        close["table"] = {"what": "the same held-out photos read as a table camera's tray is (full size only, the "
                                  "table reader), each by its fold's models",
                          "total": _total([json.loads(f.read_text()) for f in table_files])}
    target.write_text(json.dumps({
        "what": "d6 reader on held-out real photos: 5 folds by photo, each fold's models trained on the other 160",
        "data": "dice_tray_d6 (200 photos, 1,487 dice; BSD-3-Clause, Nell Byler)", "seed": SEED,
        "command": "python train/dice/render_d6.py --out /tmp/d6_rendered && OMP_NUM_THREADS=1 python "
                   "train/dice/train_d6.py --rendered /tmp/d6_rendered",
        "note": "wrong_confident: read wrong at confidence 0.8 or more (the rest of the wrong faces are put to the "
                "players); every fold's finder, photos reader and table reader trained from scratch on its 160 "
                "photos (and the finder and table reader on the rendered trays too, never scored); "
                "train_minutes: what the fold's last run trained (the shipped figures: the two readers; the finders "
                "~5 min more, see the model card), one thread, on a shared 2-core machine",
        "folds": [{k: f[k] for k in ("fold", "train_minutes", *keys)} for f in folds],
        "total": total, **close}, indent=1) + "\n")
    print(json.dumps(total))


def shape_text(shape: tuple[tuple[int, int, int], int]) -> str:
    return ",".join(map(str, shape[0])) + f":{shape[1]}"


def reader_shape(text: str) -> tuple[tuple[int, int, int], int]:
    """"16,32,64:30" -> ((16, 32, 64), 30)."""
    try:
        widths, epochs = text.split(":")
        a, b, c = (int(v) for v in widths.split(","))
        return (a, b, c), int(epochs)
    except ValueError:
        raise SystemExit(f"a reader's shape is three widths and epochs, as 16,32,64:30, not {text!r}.") from None


def main() -> None:
    global PHOTOS_READER, TABLE_READER
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "dice_tray_d6")
    p.add_argument("--folds", default="0,1,2,3,4,final")
    p.add_argument("--work", type=Path, default=Path("/tmp/d6_train"), help="where the fold models and figures go")
    p.add_argument("--final-to", type=Path, default=d6.MODELS, help="where the shipped pair goes (default: the package's)")
    p.add_argument("--train", default="finder,photos,table",
                   help="what to train (finder, photos, table); the rest is taken from the fold's folder")
    p.add_argument("--rendered", type=Path, default=None,
                   help="rendered trays (train/dice/render_d6.py) added to every fold's training, never scored")
    p.add_argument("--photos-reader", default=shape_text(PHOTOS_READER),
                   help="the photos reader's three convolution widths and epochs, as 32,64,128:40")
    p.add_argument("--table-reader", default=shape_text(TABLE_READER),
                   help="the table reader's three convolution widths and epochs, as 32,64,128:45")
    p.add_argument("--rescore", action="store_true", help="score the fold models in --work again (no training)")
    p.add_argument("--close", action="store_true",
                   help=f"score the fold models in --work on their held-out photos enlarged {CLOSE_TIMES:g} times")
    p.add_argument("--summary", action="store_true", help="only gather the fold figures into d6_heldout.json")
    args = p.parse_args()
    out_dir = args.work
    if args.summary:
        summary(out_dir, d6.MODELS / "d6_heldout.json")
        return
    if args.rescore:
        rescore(load(args.data), out_dir)
        return
    if args.close:
        rescore_close(load(args.data), out_dir)
        return
    PHOTOS_READER, TABLE_READER = reader_shape(args.photos_reader), reader_shape(args.table_reader)
    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    photos = load(args.data)
    rendered = load(args.rendered, "rendered/") if args.rendered else []
    folds = fold_of([p[0] for p in photos])
    for fold in args.folds.split(","):
        out_dir.mkdir(parents=True, exist_ok=True)
        run_fold(photos, fold, folds, out_dir, set(args.train.split(",")), args.final_to, rendered)


if __name__ == "__main__":
    main()
