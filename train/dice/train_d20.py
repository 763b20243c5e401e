"""Train the d20 numeral reader (vision/dice/d20.py -> vision/dice/models/d20_reader.onnx), on CPU.

    pip install -e '.[train]'
    OMP_NUM_THREADS=1 nice -n 10 python train/dice/train_d20.py data [--views 400] [--synthetic 40000]
    OMP_NUM_THREADS=1 nice -n 10 python train/dice/train_d20.py fit [--epochs 18]

Two kinds of examples, all in the reader's own input (`d20.turned` of a numeral square, 32 x 32, the ink
bright), never a photo:
- font patches (`synthetic_patch`): a numeral drawn from a TrueType or Hershey font (stroke thinner or
  thicker, slanted, stretched, 0.28-0.48 of the face's edge high), on a face triangle with its three
  neighbours' shades and numerals, blur, noise, glare;
- rendered patches (`view_samples`): close views by `vision.synth.dice` (640 x 480, dice 80-200 px as in a
  1280 px phone view) of 3 d20 in every look, each die found by the reader's `die_blobs` and cut by its
  `face_patch`.
Numerals within 9 degrees of upright are their value; turned 20-340 degrees, and felt, are class 0. Only
the DejaVu and Hershey fonts are used (`train_fonts`): the Liberation fonts are kept for the tests and the
bench, a font-held-out figure. One rendered view in ten is held out and scored at the end of `fit`.

Network: 3 x (3x3 conv, ReLU, 2x2 max-pool) with 16/32/48 channels, 128 ReLU, 21 classes; Adam with a one-
cycle rate, 18 epochs, batch 128, the rendered patches shown RENDERED_WEIGHT times an epoch, light contrast
and noise augmentation; exported to ONNX (opset 13) with its softmax, read by cv2.dnn. Seeds: SEED for numpy
and torch, one thread, CPU.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from vision.dice import d20  # noqa: E402
from vision.synth import dice as synth  # noqa: E402

SEED = 20261127
CLASSES = 21
RENDERED_WEIGHT = 3


def train_fonts() -> list[int]:
    """Indices in NUMERAL_FONTS of the fonts training may see (no Liberation font)."""
    return [i for i, f in enumerate(synth.NUMERAL_FONTS) if "Liberation" not in f]


def held_out_fonts() -> list[int]:
    """The fonts kept for tests and the bench: never seen in training."""
    return [i for i, f in enumerate(synth.NUMERAL_FONTS) if "Liberation" in f] or train_fonts()


def view_samples(seed: int, fonts: list[int]) -> tuple[list[np.ndarray], list[int]]:
    """Patches and labels from one rendered close view of 3 d20s."""
    rng = np.random.default_rng(seed)
    tray = synth.Tray((10.0, 10.0), (float(rng.uniform(2.6, 3.4)), float(rng.uniform(2.4, 2.8))), float(rng.uniform(-10, 10)),
                      synth.FELTS[int(rng.integers(len(synth.FELTS)))])
    dice = synth.roll_dice(tray, 20, 3, rng, fonts=fonts, touching=0.35, leaning=0.0)
    view = synth.phone_view(tray, dice, seed, float(rng.uniform(5.5, 10.0)), float(rng.uniform(0, 16)),
                            float(rng.uniform(-180, 180)), image_size=(640, 480), noise=float(rng.uniform(1, 3.5)),
                            jpeg=int(rng.integers(72, 95)), blur_px=float(rng.uniform(0.3, 1.0)), hfov_deg=33.4)
    view_image, ox, oy = d20.tray_crop(view.image, view.region_px)
    # the phone's 62 degree view at 1280 px equals 33.4 degrees at 640 px: dice keep their close-view size
    blobs = d20.die_blobs(view_image)
    patches: list[np.ndarray] = []
    labels: list[int] = []
    for t in view.dice:
        if t.visible < 0.97:
            continue
        tx, ty = t.centre_px[0] - ox, t.centre_px[1] - oy
        near = [b for b in blobs if math.hypot(b[0] - tx, b[1] - ty) < 0.25 * b[2] and 0.7 < b[2] / t_width(t) < 1.4]
        if not near:
            continue
        bw = near[0][2]
        fx, fy = t.face_px[0] - ox, t.face_px[1] - oy
        upright = 90.0 - t.up_deg
        for _ in range(3):  # about where the reader guesses the top face (see d20.LEAN)
            j = rng.normal(0, 0.07, 2) * bw
            patches.append(d20.face_patch(view_image, (fx + j[0], fy + j[1]), bw * rng.uniform(0.9, 1.1),
                                          upright + rng.uniform(-9, 9)))
            labels.append(t.value)
        for _ in range(3):
            j = rng.normal(0, 0.07, 2) * bw
            patches.append(d20.face_patch(view_image, (fx + j[0], fy + j[1]), bw, upright + rng.uniform(20, 340)))
            labels.append(0)
    h, w = view_image.shape[:2]
    for _ in range(2):  # felt, walls, the table
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        if all(math.hypot(x + ox - t.centre_px[0], y + oy - t.centre_px[1]) > 80 for t in view.dice):
            patches.append(d20.face_patch(view_image, (x, y), rng.uniform(80, 200), rng.uniform(0, 360)))
            labels.append(0)
    return patches, labels


def t_width(t: synth.DieTruth) -> float:
    """A rendered die's width as the reader measures it (equivalent diameter of its box), px."""
    b = t.box_px
    return 2.0 * math.sqrt((b[2] - b[0]) * (b[3] - b[1]) * 0.8 / math.pi)


def synthetic_patch(rng: np.random.Generator, fonts: list[int], upright: bool) -> tuple[np.ndarray, int]:
    """One numeral drawn straight from a font as the reader sees a top face (numeral bright on dark): the face's
    triangle, its neighbours' shades and numerals, stroke weight, slant, size, blur, noise, glare; turned
    within 9 degrees of upright or 20-340 degrees off. The class is the numeral's value or 0."""
    n = d20.SQUARE_PX
    c = (n - 1) / 2.0
    a_px = rng.uniform(0.55, 0.7) * n  # the face's edge in the square's pixels
    canvas = np.full((n, n), rng.uniform(0.0, 0.25), np.float32)
    # the three neighbouring faces: a shade each, and a piece of their numerals
    spin = rng.choice([90.0, -90.0]) + rng.normal(0, 3)
    corners = [np.array([c, c]) + a_px / math.sqrt(3) * np.array([math.cos(math.radians(spin + 120 * k)),
                                                                   -math.sin(math.radians(spin + 120 * k))])
               for k in range(3)]
    for k in range(3):
        p, q = corners[k], corners[(k + 1) % 3]
        mid = (p + q) / 2
        out = (mid - c) / np.linalg.norm(mid - c)
        far = [p + (p - c) * 3, q + (q - c) * 3]
        poly = np.array([p, q, far[1], far[0]], np.float32)
        cv2.fillPoly(canvas, [np.rint(poly * 16).astype(np.int32)], float(rng.uniform(0.0, 0.5)), cv2.LINE_AA, 4)
        if rng.random() < 0.8:
            other = numeral_canvas(rng, fonts, str(int(rng.integers(1, 21))), a_px, mid + out * a_px * 0.45,
                                   rng.uniform(0, 360))
            canvas = np.maximum(canvas, other * rng.uniform(0.5, 1.0))
    face = np.zeros((n, n), np.float32)
    cv2.fillPoly(face, [np.rint(np.array(corners) * 16).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    canvas = canvas * (1 - face) + face * rng.uniform(0.0, 0.2)
    value = int(rng.integers(1, 21))
    ink = numeral_canvas(rng, fonts, str(value), a_px, np.array([c, c]) + rng.normal(0, 0.04 * a_px, 2), 0.0)
    canvas = np.maximum(canvas, ink * rng.uniform(0.55, 1.0))
    if rng.random() < 0.25:  # glare
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        gx, gy, sg = rng.uniform(0, n), rng.uniform(0, n), rng.uniform(3, 12)
        canvas += rng.uniform(0.3, 1.0) * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * sg * sg))
    canvas = np.asarray(cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.3, 1.6)), np.float32)
    canvas += rng.normal(0, rng.uniform(0.01, 0.08), canvas.shape).astype(np.float32)
    k = n // 4
    dev = canvas - np.median(canvas[k:-k, k:-k])
    square = np.clip(dev / max(float(np.percentile(dev[k:-k, k:-k], 97)), 1e-3), 0, 1).astype(np.float32)
    turn = rng.uniform(-9, 9) if upright else rng.uniform(20, 340)
    return d20.turned(square, turn), value if upright else 0


def numeral_canvas(rng: np.random.Generator, fonts: list[int], text: str, a_px: float, at: np.ndarray,
                   angle: float) -> np.ndarray:
    """A numeral's ink on the SQUARE_PX canvas: cap height 0.28-0.48 of the face's edge, centred at `at`,
    turned `angle` degrees, slanted and stretched a little, its strokes thinner or thicker."""
    mask = synth.numeral_mask(text, fonts[int(rng.integers(len(fonts)))], "dot" if rng.random() < 0.4 else "bar")
    if rng.random() < 0.4:
        k = np.ones((3, 3), np.uint8)
        mask = cv2.dilate(mask, k) if rng.random() < 0.5 else cv2.erode(mask, k)
    cap = rng.uniform(0.28, 0.48) * a_px
    s = cap / (0.36 * mask.shape[0])
    sx = s * rng.uniform(0.85, 1.15)
    shear = rng.uniform(-0.15, 0.15)
    m = mask.shape[0] / 2.0
    A = np.array([[sx, shear * s], [0.0, s]])
    rot = cv2.getRotationMatrix2D((0.0, 0.0), angle, 1.0)[:, :2]
    A = rot @ A
    M = np.hstack([A, (at - A @ np.array([m, m]))[:, None]]).astype(np.float32)
    n = d20.SQUARE_PX
    return cv2.warpAffine(mask, M, (n, n), flags=cv2.INTER_LINEAR)


def make_data(views: int, synthetic: int, path: Path) -> None:
    """Rendered patches of `views` close views and `synthetic` font patches, into `path` (npz)."""
    t0 = time.time()
    fonts = train_fonts()
    xs, ys, vs = [], [], []
    for i in range(views):
        p, lab = view_samples(SEED + i, fonts)
        xs += p
        ys += lab
        vs += [i] * len(lab)
        if i % 50 == 0:
            print(f"view {i}: {len(ys)} patches, {time.time() - t0:.0f} s", flush=True)
    rng = np.random.default_rng(SEED)
    sx, sy = [], []
    for i in range(synthetic):
        patch, value = synthetic_patch(rng, fonts, upright=i % 2 == 0)
        sx.append(patch)
        sy.append(value)
    print(f"{synthetic} font patches, {time.time() - t0:.0f} s", flush=True)
    np.savez_compressed(path, x=np.stack(xs), y=np.asarray(ys, np.int64), view=np.asarray(vs, np.int64),
                        sx=np.stack(sx), sy=np.asarray(sy, np.int64))


def fit(path: Path, epochs: int, out: Path) -> None:
    """The network (torch, one thread) on the data in `path`; 1 rendered view in 10 held out and scored."""
    import torch
    from torch import nn

    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    data = np.load(path)
    held = data["view"] % 10 == 0
    # the rendered patches are fewer and nearer a camera's: each shown RENDERED_WEIGHT times an epoch
    x = np.concatenate([np.repeat(data["x"][~held], RENDERED_WEIGHT, 0), data["sx"]])
    y = np.concatenate([np.repeat(data["y"][~held], RENDERED_WEIGHT, 0), data["sy"]])
    xt = torch.from_numpy(x[:, None].astype(np.float32))
    yt = torch.from_numpy(y)
    net = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 48, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(48 * 16, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, CLASSES))
    opt = torch.optim.Adam(net.parameters(), 2e-3, weight_decay=1e-5)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=epochs * math.ceil(len(x) / 128))
    gen = torch.Generator().manual_seed(SEED)
    t0 = time.time()
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        total = 0.0
        for s in range(0, len(x), 128):
            idx = order[s : s + 128]
            xb = xt[idx]
            xb = (xb * (0.7 + 0.5 * torch.rand(len(idx), 1, 1, 1, generator=gen))
                  + 0.04 * torch.randn(xb.shape, generator=gen)).clamp(0, 1)
            loss = nn.functional.cross_entropy(net(xb), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch + 1}: loss {total / len(x):.4f} ({time.time() - t0:.0f} s)", flush=True)
    net.eval()
    with torch.no_grad():
        pred = net(torch.from_numpy(data["x"][held][:, None].astype(np.float32))).argmax(1).numpy()
    truth = data["y"][held]
    pos = truth > 0
    print(f"held-out rendered views: upright patches read right {np.mean(pred[pos] == truth[pos]):.4f} of "
          f"{pos.sum()}, turned ones called upright {np.mean(pred[~pos] > 0):.4f} of {(~pos).sum()}")
    out.parent.mkdir(parents=True, exist_ok=True)
    exported = nn.Sequential(net, nn.Softmax(dim=1))
    torch.onnx.export(exported, torch.zeros(1, 1, d20.PATCH_PX, d20.PATCH_PX), str(out), input_names=["input"],
                      output_names=["prob"], dynamic_axes={"input": {0: "N"}, "prob": {0: "N"}}, opset_version=13,
                      dynamo=False)
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["data", "fit"], help="data: render the patches (numpy, OpenCV, Pillow); "
                    "fit: train and export the network (torch, onnx)")
    ap.add_argument("--views", type=int, default=400)
    ap.add_argument("--synthetic", type=int, default=40000)
    ap.add_argument("--epochs", type=int, default=18)
    ap.add_argument("--data", type=Path, default=Path("/tmp/d20_train.npz"))
    ap.add_argument("--out", type=Path, default=d20.MODEL_FILE)
    args = ap.parse_args()
    if args.step == "data":
        make_data(args.views, args.synthetic, args.data)
    else:
        fit(args.data, args.epochs, args.out)


if __name__ == "__main__":
    main()
