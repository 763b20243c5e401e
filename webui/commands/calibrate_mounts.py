"""Measure where each tag really sits on its base (its mount) from a recording of the bases turned on the spot.

Turn each base about its own centre (like a knob, flat on the table, a quarter turn or more) while the camera
records; SOURCE is that recording: a recorded session, a video file or a folder of frames (as `tablesight
replay` takes; the last two need --calibration). For every roster tag that turned, its centre's circle about
the base centre gives the tag's real offset (`tag_offset_in`, in the tag's own frame) and what remains
(`mount_pm_in`, the ± a position from that tag still carries); both are written to -o, the roster's other keys
as they were. Tags that did not turn keep their values. See vision/mount_fit.py for the rule.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from calibration.errors import InputError
from calibration.file_write import write_file
from calibration.json_input import read_json_file
from session.mount_calibration import Mount, offset_words, roster_mounts, samples_by_tag, with_mounts
from session.pipeline import SMALLEST_TAG_IN
from session.replay import load_setup, open_source
from vision.mount_fit import MIN_TURN_DEG, MountFit, MountFitError, fit_mount, turned_deg
from vision.positions import smallest_tag_px
from vision.sources import FolderSource, FrameSource, SessionSource, VideoSource, gray_of
from vision.tags import detect_tags

FAR_FROM_ROSTER_IN = 0.25
"""A fitted offset this far from the roster's is flagged: worth a second turn, about the base's own centre."""


class MountInputError(InputError):
    """A calibrate-mounts input that cannot be used; one sentence naming it."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", metavar="SOURCE",
                   help="a recording of the bases turned on the spot: a recorded session, a video file or a folder "
                   "of frames")
    p.add_argument("--calibration", type=Path, metavar="CAL.json", help="the table calibration (tablesight calibrate)")
    p.add_argument("--roster", type=Path, metavar="ROSTER.json", help="the roster whose tags to measure")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="NEW_ROSTER.json",
                   help="the roster to write, with the measured offsets")
    p.add_argument("--force", action="store_true", help="allow -o to overwrite the --roster file itself")


def _check_output(out: Path, roster: Path | None, force: bool, source: FrameSource | None = None,
                  calibration: Path | None = None) -> None:
    """MountInputError when -o cannot be written or would overwrite an input: the roster (unless --force), the
    calibration, the recording (a video file, a frame folder's files, anything in a recorded session)."""
    if out.is_dir():
        raise MountInputError(f"-o {out} is a folder; give the roster file to write, e.g. -o {out / 'roster.json'}.")
    if not out.parent.exists():
        raise MountInputError(f"Cannot write {out}: folder {out.parent} does not exist; create it or pick another -o.")
    target = out.resolve()
    if calibration is not None and target == calibration.resolve():
        raise MountInputError(f"-o {out} is the --calibration file; write the new roster to a file of its own, "
                              "e.g. -o roster_measured.json.")
    if isinstance(source, SessionSource) and target.is_relative_to(source.directory.resolve()):
        raise MountInputError(f"-o {out} is inside the recorded session {source.directory}, which is kept as it was "
                              "recorded; write the new roster outside it, e.g. -o roster_measured.json.")
    is_roster = roster is not None and target == roster.resolve()
    if isinstance(source, VideoSource) and target == source.path.resolve() or \
            isinstance(source, FolderSource) and target.is_relative_to(source.folder.resolve()) and not is_roster:
        raise MountInputError(f"-o {out} is {'the video' if isinstance(source, VideoSource) else 'inside the frame folder'}"
                              f" being measured; write the new roster outside it, e.g. -o roster_measured.json.")
    if is_roster and not force and out.exists():
        raise MountInputError(f"-o {out} is the roster being measured; write a new file, or add --force to "
                              "overwrite it.")


def _row(m: Mount, fit: MountFit | None, why: str) -> str:
    unit = (m.name + (" +" if m.extra_index is not None else ""))[:22]
    head = f"{unit:22s} {m.tag:4d}  {offset_words(m.offset_in):16s}"
    if fit is None:
        return f"{head}  left as is: {why}"
    note = ""
    if math.dist(fit.offset_in, m.offset_in) > FAR_FROM_ROSTER_IN:
        note = "  (far from the roster's: was the base turned about its own centre?)"
    return (f"{head}  {offset_words(fit.offset_in):16s}  {fit.turned_deg:5.0f} deg  {fit.residual_in:.4f}\"  "
            f"±{fit.pm_in:.3f}\"{note}")


def run(args: argparse.Namespace) -> int:
    out: Path = args.output
    source = open_source(args.source)
    try:
        session = source.session if isinstance(source, SessionSource) else None
        roster_path = args.roster or (session.roster_path if session is not None else None)
        if roster_path is None:
            raise MountInputError(f"{source.description} carries no roster; give --roster ROSTER.json, the roster "
                                  "whose tags were turned.")
        _check_output(out, roster_path, args.force, source, args.calibration)
        setup = load_setup(source, args.calibration, roster_path)
        raw = read_json_file(roster_path, "roster")
        assert setup.roster is not None  # load_setup read roster_path
        mounts = roster_mounts(setup.roster)
        cal = setup.calibration
        heights = {m.tag: m.height_in for m in mounts}
        min_px = float(smallest_tag_px(cal, SMALLEST_TAG_IN, 0.0))
        frames = ((int(f.index), detect_tags(gray_of(f), min_tag_px=min_px)) for f in source)
        samples = samples_by_tag(frames, cal, heights)
    finally:
        source.close()

    fits: dict[int, MountFit] = {}
    lines = [f"{'unit':22s} {'tag':>4s}  {'old offset':16s}  {'new offset':16s}  {'turned':>9s}  residual  ±"]
    for m in mounts:
        got = samples.get(m.tag, [])
        fit, why = None, ""
        if not got:
            why = "not seen"
        else:
            try:
                fit = fit_mount(got, m.tag, f"Tag {m.tag} ({m.name})")
            except MountFitError as err:
                turn = turned_deg([s.yaw_deg for s in got])
                why = f"not turned ({turn:.0f} deg)" if turn < MIN_TURN_DEG else str(err)
        if fit is not None:
            fits[m.tag] = fit
        lines.append(_row(m, fit, why))
    print("\n".join(lines))
    if not fits:
        raise MountInputError(f"No roster tag turned {MIN_TURN_DEG:.0f} deg or more on the spot in {args.source}; "
                              "record each base turned about its own centre by a quarter turn or more, its tag in "
                              "view.")
    write_file(out, json.dumps(with_mounts(raw, fits), indent=2) + "\n", what="roster")
    kept = len(mounts) - len(fits)
    print(f"Wrote {len(fits)} measured mount{'s' if len(fits) != 1 else ''} to {out}"
          + (f"; {kept} tag{'s' if kept != 1 else ''} left as {'they were' if kept != 1 else 'it was'}." if kept
             else "."))
    sys.stdout.flush()
    return 0
