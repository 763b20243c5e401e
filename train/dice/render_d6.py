"""Rendered d6 trays for training the d6 finder and reader beside the real photos (train_d6.py --rendered DIR).

    python train/dice/render_d6.py [--out /tmp/d6_rendered] [--table 1200] [--phone 120]   # ~10 min

Writes DIR/photos/*.png and DIR/labels.json in the real data's own format (each die's box [x0, y0, x1, y1] in
pixels and its face as a word), so that train_d6.py reads both alike. Two kinds of picture:
- "table": the tray region of a rendered table frame (1920 x 1080 or 1280 x 720, camera 28-50" up and tilted
  0-28 degrees: dice ~15-45 px across), cut as `read_dice` cuts a table camera's tray (`region.cut_box`: 15 % of
  its larger side round its bounding box);
- "phone": a close phone view (`random_phone_tray`) scaled down so that its dice are ~25-75 px across.
Felts of any colour, 2-12 dice in every look (touching, leaning, glare, a hand in one picture in four).
Seeds from SEED_BASE on: far from the bench's rendered trays (seeds 30-53) and the tests' own.
A die more than 30 % hidden is left unlabelled (and the reader learns it is no die to read).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from vision.dice import region as tray_region  # noqa: E402
from vision.synth import dice as synth  # noqa: E402
from vision.synth.render import CameraPose, Scene, camera_framing_board  # noqa: E402

SEED_BASE = 700_000
FACES = ("one", "two", "three", "four", "five", "six")
MARGIN_PX = 8


def _felt(rng: np.random.Generator) -> tuple[float, float, float]:
    if rng.random() < 0.5:
        base = np.asarray(synth.FELTS[int(rng.integers(len(synth.FELTS)))], np.float64)
        return tuple(float(v) for v in np.clip(base * rng.uniform(0.7, 1.3, 3), 5, 250))  # type: ignore[return-value]
    return tuple(float(v) for v in rng.uniform(15, 200, 3))  # type: ignore[return-value]


def _labels(truths: list[synth.DieTruth], dx: float, dy: float, scale: float, w: int, h: int) -> list[dict]:
    out = []
    for t in truths:
        if t.visible < 0.7:
            continue
        x0, y0, x1, y1 = ((t.box_px[0] - dx) * scale, (t.box_px[1] - dy) * scale,
                          (t.box_px[2] - dx) * scale, (t.box_px[3] - dy) * scale)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if 0 <= cx < w and 0 <= cy < h:
            out.append({"box": [round(v, 2) for v in (x0, y0, x1, y1)], "label": FACES[t.value - 1]})
    return out


def table_tray(seed: int) -> tuple[np.ndarray, list[dict]]:
    """The tray region of one rendered table frame, and its dice."""
    rng = np.random.default_rng(seed)
    size = (1920, 1080) if rng.random() < 0.7 else (1280, 720)
    board = (float(rng.uniform(24, 44)), float(rng.uniform(20, 30)))
    pose = camera_framing_board(board, float(rng.uniform(28, 50)), float(rng.uniform(0, 28)),
                                float(rng.uniform(-12, 12)), size)
    scene = Scene.at(pose, board, noise_sigma=float(rng.uniform(0.5, 3.0)), jpeg_quality=int(rng.integers(70, 96)),
                     blur_px=float(rng.uniform(0.2, 1.0)))
    tsize = (float(rng.uniform(5.0, 9.0)), float(rng.uniform(3.5, 6.0)))
    tray = synth.Tray((float(rng.uniform(tsize[0] / 2 + 1, board[0] - tsize[0] / 2 - 1)),
                       float(rng.uniform(tsize[1] / 2 + 1, board[1] - tsize[1] / 2 - 1))),
                      tsize, float(rng.uniform(-30, 30)), _felt(rng))
    dice = synth.roll_dice(tray, 6, int(rng.integers(2, 13)), rng, touching=float(rng.uniform(0.1, 0.5)),
                           leaning=float(rng.uniform(0.05, 0.25)), glare=float(rng.uniform(0.1, 0.5)))
    rendered, truths = synth.render_table_with_tray(scene, tray, dice, seed, hand=bool(rng.random() < 0.25))
    poly = synth.tray_polygon_px(tray, CameraPose(scene.camera, scene.rvec, scene.tvec)).astype(np.float32)
    h, w = rendered.image.shape[:2]
    x0, y0, x1, y1 = tray_region.cut_box(poly, w, h)
    crop = rendered.image[y0:y1, x0:x1]
    return crop, _labels(truths, x0, y0, 1.0, crop.shape[1], crop.shape[0])


def phone_tray(seed: int) -> tuple[np.ndarray, list[dict]]:
    """A close phone view of d6, scaled so that its dice are ~25-75 px across, cut to the tray."""
    rng = np.random.default_rng(seed)
    case = synth.random_phone_tray(seed, sides=6, count=int(rng.integers(2, 10)))
    view = case.view
    sizes = [max(t.box_px[2] - t.box_px[0], t.box_px[3] - t.box_px[1]) for t in view.dice] or [100.0]
    scale = float(rng.uniform(25, 75)) / float(np.median(sizes))
    small = cv2.resize(view.image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    bx, by, bw, bh = cv2.boundingRect((view.region_px * scale).astype(np.float32).reshape(-1, 1, 2))
    h, w = small.shape[:2]
    x0, y0 = max(0, bx - 3 * MARGIN_PX), max(0, by - 3 * MARGIN_PX)
    x1, y1 = min(w, bx + bw + 3 * MARGIN_PX), min(h, by + bh + 3 * MARGIN_PX)
    crop = small[y0:y1, x0:x1]
    return crop, _labels(view.dice, x0 / scale, y0 / scale, scale, crop.shape[1], crop.shape[0])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("/tmp/d6_rendered"))
    p.add_argument("--table", type=int, default=1200, help="table-camera trays")
    p.add_argument("--phone", type=int, default=120, help="close phone views")
    p.add_argument("--start", type=int, default=0,
                   help="the first picture's number of each kind (to render in parts: merge the parts' labels.json)")
    args = p.parse_args()
    (args.out / "photos").mkdir(parents=True, exist_ok=True)
    labels: dict[str, list[dict]] = {}
    jobs = ([("table", args.start + k) for k in range(args.table)]
            + [("phone", args.start + k) for k in range(args.phone)])
    for n, (kind, k) in enumerate(jobs):
        seed = SEED_BASE + (0 if kind == "table" else 100_000) + k
        image, dice = (table_tray if kind == "table" else phone_tray)(seed)
        name = f"{kind}_{seed}.png"
        cv2.imwrite(str(args.out / "photos" / name), image)
        labels[name] = dice
        if n % 50 == 0:
            print(f"{n}/{len(jobs)} {name} {image.shape[1]}x{image.shape[0]} {len(dice)} dice", flush=True)
    (args.out / "labels.json").write_text(json.dumps(labels, indent=0) + "\n")
    print(f"{len(labels)} pictures, {sum(len(v) for v in labels.values())} dice -> {args.out}")


if __name__ == "__main__":
    main()
