"""Calibrate the table: find the anchor tags in one photo and write where the camera is (a calibration file).

Without --intrinsics the focal length and the lens distortion are estimated from the anchors (best with the
camera tilted 10 degrees or more); --intrinsics (from tablesight calibrate-camera) gives the measured lens. A lens
measured at another size of the same aspect ratio is scaled to the photo, one of another aspect ratio is set
aside (calibration/lens_fit.py): either way one sentence says so, and the table is calibrated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from calibration.camera import load_camera
from calibration.errors import CalibrationError
from calibration.layout import default_layout, load_layout, parse_board
from calibration.lens_fit import fit_lens
from calibration.mount_advice import mount_advice
from calibration.table import calibrate_table, collect_anchors, save_calibration
from vision.tags import detect_tags, gray_frame, load_image

_SOURCE_WORDS = {
    "intrinsics": "from the camera file",
    "estimated": "estimated from the anchors",
    "assumed": "assumed",
}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("image", metavar="IMAGE", help="a photo of the table with every anchor tag in view")
    p.add_argument("--board", required=True, metavar="WxD", help="play area width x depth in inches, e.g. 30x22")
    p.add_argument("--layout", metavar="FILE", help="an anchor layout JSON file instead of the default corners")
    p.add_argument("--intrinsics", metavar="CAMERA.json", help="the camera file from tablesight calibrate-camera")
    p.add_argument("-o", "--output", required=True, metavar="CAL.json", help="the calibration file to write")


def run(args: argparse.Namespace) -> int:

    board = parse_board(args.board)
    layout = load_layout(args.layout, board) if args.layout else default_layout(*board)
    camera = load_camera(args.intrinsics) if args.intrinsics else None
    out = Path(args.output)
    if not out.parent.exists():
        raise CalibrationError(f"Cannot write {out}: folder {out.parent} does not exist.")
    image = load_image(args.image)
    gray = gray_frame(image)
    h, w = gray.shape
    fit = fit_lens(camera, (w, h)) if camera is not None else None
    if fit is not None:
        camera = fit.camera
        if fit.camera is None:
            sys.stderr.write(fit.sentence + "\n")  # set aside: calibrated as without --intrinsics
    tags = detect_tags(gray)
    anchors = collect_anchors(((t.id, t.corners_px) for t in tags), layout)
    cal = calibrate_table(anchors, layout, (w, h), camera)
    save_calibration(cal, out)

    f = cal.camera.focal_px
    source = _SOURCE_WORDS[cal.focal_source]
    if cal.focal_source == "estimated":
        source += f", ±{100 * cal.focal_rel_std:.1f} %"
    turns = ", ".join(f"{i} (turned {90 * cal.anchor_turns.get(i, 0)} deg)" for i in cal.anchors_seen)
    print(f"Calibrated {args.image} ({w}x{h}) for a {board[0]:g}x{board[1]:g} board -> {out}")
    if fit is not None and fit.scaled:
        print(f"  lens: {fit.sentence}")
    print(f"  anchors seen: {turns}")
    print(f"  reprojection error: {cal.residual_px:.3f} px RMS, {cal.residual_in:.4f}\" RMS on the table")
    print(f"  focal length: {f:.1f} px ({source})")
    k = ", ".join(f"{v:.4f}" for v in cal.camera.dist.ravel()[:5])
    lens = {"intrinsics": "from the camera file", "estimated": "estimated from the anchors", "none": "none fitted"}
    print(f"  lens distortion: {lens.get(cal.distortion_source, cal.distortion_source)} [{k}]")
    print(f"  camera: {cal.camera_height_in:.1f}\" above the table, tilted {cal.tilt_deg:.1f} deg from straight down")
    for sentence in mount_advice(cal).sentences():
        print(f"  mounts: {sentence}")
    if cal.warning:
        sys.stderr.write(cal.warning + "\n")
    return 0
