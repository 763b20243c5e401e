"""Write a battle report of a recorded session: one self-contained HTML file (the winner, the game turn by turn,
board and trails, every move and verdict with its measured numbers and ±, attacks and each side's dice, the score
as the game counts it, plots, key frames).

SESSION: a recorded session directory (what `tablesight serve` records, or a bundled sample in
sample_frames/). The session is replayed through the same pipeline as `tablesight replay`, so the report shows
exactly what was ruled (a still table's frames are passed over once nothing is left to see in them:
session/report_replay.py). -o names the HTML file (default: SESSION-NAME-report.html here); --json prints the
report's data as JSON instead (or writes it to -o). A long session says how far it is on a terminal every few
seconds ("report: frame 1,200 of 36,000 (3 %)"); when stderr is not a terminal (a script, a log) it carries only a
bad input's one sentence.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from calibration.file_write import write_file
from session.report import gather_report
from session.report_html import check_target, write_report


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", metavar="SESSION", type=Path, help="a recorded session directory")
    p.add_argument("-o", "--output", type=Path, metavar="REPORT.html", help="where to write the report")
    p.add_argument("--json", action="store_true", help="the report's data as JSON instead of HTML")


PROGRESS_EVERY_S = 3.0
"""A long session's report says how far it is on the terminal this often (seconds)."""


def progress_line(frame: int, total: int | None) -> str:
    """"report: frame 1,200 of 36,000 (3 %)"."""
    of = f" of {total:,} ({100 * frame // total} %)" if total else ""
    return f"report: frame {frame:,}{of}"


def _progress(every_s: float = PROGRESS_EVERY_S) -> Callable[[int, int | None], None]:
    """Print `progress_line` to stderr at most every `every_s` seconds."""
    told = [time.monotonic()]

    def progress(frame: int, total: int | None) -> None:
        now = time.monotonic()
        if now - told[0] >= every_s:
            told[0] = now
            sys.stderr.write(progress_line(frame, total) + "\n")
            sys.stderr.flush()

    return progress


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    target = args.output if args.json else args.output or Path(f"{Path(args.session).resolve().name}-report.html")
    if target is not None:
        check_target(target)  # a bad -o is said at once, not after the replay
    report = gather_report(args.session, progress=_progress() if sys.stderr.isatty() else None)
    if args.json:
        text = json.dumps(report.to_json(), indent=1)
        if args.output is None:
            print(text)
        else:
            write_file(args.output, text + "\n", what="report")
            sys.stderr.write(f"Wrote {args.output}\n")
        return 0
    assert target is not None
    write_report(report, target)
    sys.stderr.write(f"Wrote the battle report {target} ({target.stat().st_size // 1024} kB, "
                     f"{time.monotonic() - started:.1f} s); open it in any browser.\n")
    return 0
