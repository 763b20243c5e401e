"""Measure speed and accuracy on this machine and print them as a table.

Renders seeded 30" x 22" tables (a figure on every base, its tag on a topper or the rim; --bare: bare tags as
before figures) at 720p, 1080p and 4K (--quick: 720p and 1080p, 3 frames), then times
detection + mapping against a bare pupil-apriltags detector and scores recall and position error against
the renderer's truth; then times the live server's windowed detector over a short rendered sequence of
each resolution (a few bases sliding, one lifted and put down elsewhere: 3 frames per --frames, 2 at 4K,
20 to 90, 60 at 4K); also rules geometry, the tracker and JPEG costs; and, with a figure on every base, each
tag mount (flat under the figure, topper, leaning topper before and after mount calibration, rim, two rims) x
camera tilt 0/15/30 degrees at 1080p: units found, position error, frames to find a unit again after a hand
(--no-mounts leaves these out). --json prints the report as one JSON
object; --out FILE also writes that JSON to FILE. --web adds the web UI's figures: the pipeline's frame rate
with 0, 1 and N watching browsers' WebSockets, and the latency from a frame read to its overlays drawn in
headless Chromium, flat out and from a 30 fps network camera (several minutes); --web-army plays the replay row's
1080p table of 40 bases with figures there instead of the bundled sample. docs/bench.md explains every row.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench.replay import REPLAY_LABEL, record_replay_session
from bench.report import format_table
from bench.run import main_progress, run_bench
from bench.scenes import DEFAULT_FRAMES, LIVE_FRAMES_PER_FRAME, LIVE_MIN_FRAMES, QUICK_FRAMES
from bench.web import CAMERA_FPS, MAX_CAMERA_FPS, MIN_CAMERA_FPS
from calibration.errors import InputError
from calibration.file_write import write_file

MAX_FRAMES = 200
WEB_ARMY_FRAMES = 120
"""Frames of the 1080p, 40-base recording `--web-army` plays (4 s at 30 fps, looped)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help=f"720p and 1080p only, {QUICK_FRAMES} frames each")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument(
        "--frames",
        type=int,
        metavar="N",
        help=f"frames a resolution (default {DEFAULT_FRAMES}, {QUICK_FRAMES} with --quick); the live sequences "
        f"get {LIVE_FRAMES_PER_FRAME['720p']} per frame ({LIVE_FRAMES_PER_FRAME['4K']} at 4K), "
        f"{LIVE_MIN_FRAMES} at least",
    )
    p.add_argument("--out", metavar="FILE", help="also write the JSON report to FILE")
    p.add_argument("--no-mounts", action="store_true",
                   help="leave out the mount rows (a figure on every base, each tag mount x camera tilt; ~1.5 min "
                   "with --quick)")
    p.add_argument("--bare", action="store_true",
                   help="the older scenes for the detection, live and replay rows: bare tags lying on bases 0-3\" "
                   "up, no figures (default: a figure on every base, its tag on a topper or the rim)")
    p.add_argument("--web", action="store_true", help="also measure the web UI with --watchers browsers")
    p.add_argument("--watchers", type=int, default=10, metavar="N", help="WebSocket watchers for --web (default 10)")
    p.add_argument("--seconds", type=float, default=30.0, metavar="S", help="window length for --web (default 30)")
    p.add_argument("--rounds", type=int, default=3, metavar="R",
                   help="rounds of none/1/N/N-slow windows for --web, interleaved (default 3)")
    p.add_argument("--camera-fps", default="30", metavar="F[,F...]",
                   help="--web's camera rows: the rates the recording is served at as a camera, each once a round "
                   "(default 30; e.g. 30,20 shows how the latency falls when the cores are less busy)")
    p.add_argument("--web-army", action="store_true",
                   help=f"--web plays the replay row's table ({WEB_ARMY_FRAMES} frames of 1080p, 40 bases with "
                   "figures, rendered first: ~1 min) instead of the bundled sample")


def run(args: argparse.Namespace) -> int:
    frames = args.frames if args.frames is not None else (QUICK_FRAMES if args.quick else DEFAULT_FRAMES)
    if not 1 <= frames <= MAX_FRAMES:
        raise InputError(f"--frames {frames} is not a number of frames to time; give 1 to {MAX_FRAMES}.")
    out = Path(args.out) if args.out else None
    if out is not None:
        if out.is_dir():
            raise InputError(f"--out {out} is a folder; give a file name such as {out / 'bench.json'}.")
        if not out.parent.is_dir():
            raise InputError(
                f"--out {out}: the folder {out.parent} does not exist; create it or pick another."
            )
    if args.web_army and not args.web:
        raise InputError("--web-army chooses the table --web plays; add --web.")
    if args.web and not (1 <= args.watchers <= 50 and 2.0 <= args.seconds <= 300.0 and 1 <= args.rounds <= 20):
        raise InputError("--watchers must be 1 to 50, --seconds 2 to 300 and --rounds 1 to 20 for --web; "
                         "pick values in those ranges.")
    camera_fps = _rates(args.camera_fps)
    if camera_fps != (CAMERA_FPS,) and not args.web:
        raise InputError("--camera-fps chooses the rates of --web's camera rows; add --web.")
    report = run_bench(frames=frames, quick=args.quick, progress=main_progress, mounts=not args.no_mounts,
                       bare=args.bare).to_json()
    web_table = ""
    if args.web:
        from bench.web import format_web_bench, run_web_bench

        with tempfile.TemporaryDirectory(prefix="tablesight-bench-army-") as tmp:
            session = None
            if args.web_army:
                main_progress(f"web UI: rendering a {WEB_ARMY_FRAMES}-frame {REPLAY_LABEL} recording with 40 bases")
                session = record_replay_session(Path(tmp) / "army", WEB_ARMY_FRAMES, bare=args.bare)
            main_progress(f"web UI: {args.watchers} watchers, {args.seconds:g} s windows")
            web = run_web_bench(seconds=args.seconds, watchers=args.watchers, rounds=args.rounds, session=session,
                                camera_fps=camera_fps)
        report["web"] = web
        web_table = "\n" + format_web_bench(web)
    if out is not None:
        write_file(out, json.dumps(report, indent=2) + "\n", what="bench report")
    print(json.dumps(report) if args.json else format_table(report) + web_table)
    return 0


def _rates(text: str) -> tuple[float, ...]:
    """--camera-fps: frames a second, comma-separated, each 1 to 120."""
    try:
        rates = tuple(dict.fromkeys(float(part) for part in text.split(",")))  # each once, in the order given
    except ValueError:
        raise InputError(f"--camera-fps {text} is not a list of frame rates; give rates such as 30 or 30,20.") from None
    if not all(MIN_CAMERA_FPS <= f <= MAX_CAMERA_FPS for f in rates):
        raise InputError(f"--camera-fps {text} has a rate out of range; give each rate {MIN_CAMERA_FPS:g} to "
                         f"{MAX_CAMERA_FPS:g} frames a second.")
    return rates
