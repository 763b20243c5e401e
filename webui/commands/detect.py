"""Find the tags in one photo and say where they stand on the table, in inches.

Base tags are measured on the plane of their face (--tag-height above the table, default 0.125"); anchors
on theirs. Without --calibration the tags are found and given in pixels only ("calibrated": false,
"table_in" null, yaw in the image, counter-clockwise as seen), at full resolution (decimation 1). --json prints one object: {"image", "calibrated", "image_size", "decimate", "tags": [{"id",
"anchor", "center_px", "corners_px", "table_in", "yaw_deg", "margin", "pm_in", "z_in", "hamming"}]}.
Pixels: the top-left pixel's centre is (0, 0); corners 0..3 are bottom-left, bottom-right, top-right,
top-left of the upright tag.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from calibration.errors import InputError
from calibration.layout import DEFAULT_ANCHOR_IDS
from calibration.table import load_calibration
from vision.positions import DEFAULT_TAG_HEIGHT_IN, measure_bases, smallest_tag_px, tag_on_plane
from vision.tags import CORNER_NOISE_PX, decimation_for, detect_tags, load_gray

SMALLEST_TAG_IN = 0.5
"""Smallest base tag we expect (a 25 mm base carries ~0.56"): sets the decimation."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("image", metavar="IMAGE", help="a photo or frame of the table (PNG or JPEG)")
    p.add_argument("--calibration", metavar="CAL.json",
                   help="from tablesight calibrate; without it tags are given in pixels only")
    p.add_argument(
        "--tag-height",
        type=float,
        default=DEFAULT_TAG_HEIGHT_IN,
        metavar="IN",
        help=f"height of the base tags' faces above the table, inches (default {DEFAULT_TAG_HEIGHT_IN})",
    )
    p.add_argument(
        "--min-tag",
        type=float,
        default=SMALLEST_TAG_IN,
        metavar="IN",
        help=f"the smallest tag's black square, inches (default {SMALLEST_TAG_IN}); picks the decimation",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _r(value: float, places: int) -> float:
    return round(float(value), places) + 0.0  # never -0.0


def run(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.tag_height) and -1.0 <= args.tag_height <= 24.0):
        raise InputError(f"--tag-height {args.tag_height:g} is not a height in inches; give e.g. 0.125.")
    if not (math.isfinite(args.min_tag) and 0.1 <= args.min_tag <= 12.0):
        raise InputError(f"--min-tag {args.min_tag:g} is not a tag size in inches; give e.g. 0.5.")
    if args.calibration is None:
        return _pixels_only(args)
    cal = load_calibration(args.calibration)
    gray = load_gray(args.image)
    h, w = gray.shape
    cal.check_frame((w, h))
    decimate = decimation_for(smallest_tag_px(cal, args.min_tag, args.tag_height))
    tags = detect_tags(gray, decimate=decimate)
    fixes = {f.tag: f for f in measure_bases(tags, cal, default_height_in=args.tag_height)}
    anchors = cal.layout.anchors
    out: list[dict[str, Any]] = []
    for tag in tags:
        entry: dict[str, Any] = {
            "id": tag.id,
            "anchor": tag.id in anchors,
            "center_px": [_r(v, 3) for v in tag.center_px],
            "corners_px": [[_r(x, 3), _r(y, 3)] for x, y in tag.corners_px],
        }
        if tag.id in anchors:
            z = anchors[tag.id].z_in
            centre, yaw = tag_on_plane(tag, cal, z)
            pm = float(cal.position_pm(tag.center_px.reshape(1, 2), z, CORNER_NOISE_PX)[0])
        elif tag.id in fixes:
            fix = fixes[tag.id]
            z, yaw, pm, centre = fix.z, fix.yaw_deg, fix.pm, np.asarray(fix.tag_center_in)
        else:
            continue  # its ray misses the plane: not on the table
        entry.update(
            {
                "table_in": [_r(centre[0], 4), _r(centre[1], 4)],
                "yaw_deg": _r(yaw, 2),
                "margin": _r(tag.margin, 2),
                "pm_in": _r(pm, 4),
                "z_in": z,
                "hamming": tag.hamming,
            }
        )
        out.append(entry)
    if args.json:
        print(
            json.dumps(
                {
                    "image": str(Path(args.image)),
                    "calibrated": True,
                    "image_size": [w, h],
                    "decimate": decimate,
                    "tags": out,
                }
            )
        )
    else:
        print(f"{args.image}: {len(out)} tag(s), {w}x{h}, decimation {decimate}")
        for e in out:
            kind = "anchor" if e["anchor"] else "base"
            x, y = e["table_in"]
            print(
                f'  {kind} {e["id"]:3d}  x {x:8.3f}"  y {y:8.3f}"  ±{e["pm_in"]:.3f}"  yaw {e["yaw_deg"]:7.2f} deg'
            )
    return 0


def _image_yaw_deg(corners_px: np.ndarray) -> float:
    """The tag's turn in the image, degrees counter-clockwise as seen (0: upright), from its bottom edge."""
    (x0, y0), (x1, y1) = corners_px[0], corners_px[1]
    return math.degrees(math.atan2(-(y1 - y0), x1 - x0))


def _pixels_only(args: argparse.Namespace) -> int:
    """`detect` without a calibration: every tag in pixels, no table position."""
    gray = load_gray(args.image)
    h, w = gray.shape
    tags = detect_tags(gray, decimate=1)
    anchors = set(DEFAULT_ANCHOR_IDS)
    out: list[dict[str, Any]] = [
        {
            "id": tag.id,
            "anchor": tag.id in anchors,
            "center_px": [_r(v, 3) for v in tag.center_px],
            "corners_px": [[_r(x, 3), _r(y, 3)] for x, y in tag.corners_px],
            "table_in": None,
            "yaw_deg": _r(_image_yaw_deg(tag.corners_px), 2),
            "margin": _r(tag.margin, 2),
            "pm_in": None,
            "z_in": None,
            "hamming": tag.hamming,
        }
        for tag in tags
    ]
    if args.json:
        print(json.dumps({"image": str(Path(args.image)), "calibrated": False, "image_size": [w, h], "decimate": 1,
                          "tags": out}))
    else:
        print(f"{args.image}: {len(out)} tag(s), {w}x{h}, not calibrated (pixels only; "
              "give --calibration for inches)")
        for e in out:
            x, y = e["center_px"]
            print(f'  {"anchor" if e["anchor"] else "tag":6} {e["id"]:3d}  at ({x:8.2f}, {y:8.2f}) px  '
                  f'yaw {e["yaw_deg"]:7.2f} deg (image)')
    return 0
