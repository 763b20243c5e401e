"""Measure a camera's intrinsics (focal length, lens distortion) from photos of a chessboard or ChArUco board.

Pass 10-20 sharp photos at the resolution you will play at, the board filling different parts of the
frame at different tilts. --chessboard counts INNER corners (columns x rows); --charuco counts squares and
needs --marker and --dictionary (as OpenCV spells it, e.g. DICT_6X6_250). Sizes are in inches.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from calibration.camera import save_camera
from calibration.errors import CalibrationError
from calibration.intrinsics import calibrate_charuco, calibrate_chessboard, parse_pattern


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("images", nargs="+", metavar="IMAGE", help="photos of the calibration board")
    kind = p.add_mutually_exclusive_group(required=True)
    kind.add_argument("--chessboard", metavar="CxR", help="chessboard inner corners, columns x rows, e.g. 9x6")
    kind.add_argument("--charuco", metavar="CxR", help="ChArUco squares, columns x rows, e.g. 5x7")
    p.add_argument("--marker", type=float, metavar="IN", help="ChArUco marker side, inches")
    p.add_argument("--dictionary", metavar="NAME", help="ChArUco ArUco dictionary, e.g. DICT_6X6_250")
    p.add_argument("--square", type=float, required=True, metavar="IN", help="square side, inches")
    p.add_argument("-o", "--output", required=True, metavar="CAMERA.json", help="the camera file to write")


def run(args: argparse.Namespace) -> int:
    out = Path(args.output)
    if not out.parent.exists():
        raise CalibrationError(f"Cannot write {out}: folder {out.parent} does not exist.")
    if args.chessboard:
        if args.marker is not None or args.dictionary is not None:
            raise CalibrationError("--marker and --dictionary are for --charuco; a plain chessboard needs neither.")
        fit = calibrate_chessboard(args.images, parse_pattern(args.chessboard, "--chessboard"), args.square)
    else:
        if args.marker is None or args.dictionary is None:
            raise CalibrationError("--charuco needs --marker IN (the marker side) and --dictionary NAME (e.g. DICT_6X6_250).")
        squares = parse_pattern(args.charuco, "--charuco")
        fit = calibrate_charuco(args.images, squares, args.square, args.marker, args.dictionary)
    save_camera(fit.camera, out)
    cam = fit.camera
    w, h = cam.image_size
    used = len(fit.per_view_rms_px)
    print(f"Calibrated a {w}x{h} camera from {used} of {used + len(fit.skipped)} images -> {out}")
    print(f"  reprojection error: {cam.rms_px:.3f} px RMS")
    print(f"  focal length: fx {cam.K[0, 0]:.1f} px, fy {cam.K[1, 1]:.1f} px; principal point ({cam.K[0, 2]:.1f}, {cam.K[1, 2]:.1f}) px")
    print(f"  distortion (k1, k2, p1, p2, k3): {', '.join(f'{v:.4f}' for v in cam.dist)}")
    worst = max(fit.per_view_rms_px.items(), key=lambda kv: kv[1])
    print(f"  worst image: {worst[0]} ({worst[1]:.3f} px RMS)")
    if fit.skipped:
        sys.stderr.write(f"No board was found in {', '.join(fit.skipped)}; those images were left out.\n")
    return 0
