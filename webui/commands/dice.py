"""Read the dice in photos: the face up of each die, its centre and box in pixels, and how sure the reading is.

Without --json, one line a photo: `tray.jpg: 6 6 4 1 (4 dice)`, faces in reading order (top to bottom, left to
right), or `(no dice)`. With --json, one JSON object a line a photo: {"image": PATH, "dice": [{"value",
"sides", "centre_px": [x, y], "box_px": [x0, y0, x1, y1], "confidence"}]}; pixels as OpenCV counts them
(the top-left pixel's centre is (0, 0)); confidence 0..1, a die under 0.8 is worth a second look.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vision.dice import SIDES, read_dice
from vision.tags import load_image


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("images", nargs="+", metavar="PHOTO", help="photos of dice (PNG or JPEG), a tray seen from above")
    p.add_argument("--sides", type=int, choices=SIDES, default=6, help="the dice's faces: 6 (default) or 20")
    p.add_argument("--json", action="store_true", help="one JSON object a line a photo")


def run(args: argparse.Namespace) -> int:
    for path in args.images:
        dice = read_dice(load_image(path), sides=args.sides)
        if args.json:
            print(json.dumps({"image": path, "dice": [d.to_json() for d in dice]}), flush=True)
        else:
            faces = " ".join(str(d.value) for d in dice)
            count = f"({len(dice)} {'die' if len(dice) == 1 else 'dice'})" if dice else "(no dice)"
            print(f"{Path(path).name}: {faces + ' ' if faces else ''}{count}", flush=True)
    return 0
