"""Write a battle report of a recorded session: one self-contained HTML file (board and trails, every move and
verdict with its measured numbers and ±, dice with their faces, the score by turn, plots, key frames).

SESSION: a recorded session directory (what `tablesight serve` records, or a bundled sample in
sample_frames/). The session is replayed through the same pipeline as `tablesight replay`, so the report shows
exactly what was ruled. -o names the HTML file (default: SESSION-NAME-report.html here); --json prints the
report's data as JSON instead (or writes it to -o).
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
from session.report_html import write_report


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", metavar="SESSION", type=Path, help="a recorded session directory")
    p.add_argument("-o", "--output", type=Path, metavar="REPORT.html", help="where to write the report")
    p.add_argument("--json", action="store_true", help="the report's data as JSON instead of HTML")


PROGRESS_EVERY_S = 5.0
"""A long session's report says how far it is on the terminal this often (seconds)."""


def _progress() -> Callable[[int, int | None], None]:
    """Print "Replaying frame N of M (p %)" to stderr at most every PROGRESS_EVERY_S seconds."""
    told = [time.monotonic()]

    def progress(frames: int, total: int | None) -> None:
        now = time.monotonic()
        if now - told[0] >= PROGRESS_EVERY_S:
            told[0] = now
            of = f" of {total:,} ({100 * frames // total} %)" if total else ""
            sys.stderr.write(f"Replaying frame {frames:,}{of} for the battle report...\n")

    return progress


def run(args: argparse.Namespace) -> int:
    report = gather_report(args.session, progress=_progress())
    if args.json:
        text = json.dumps(report.to_json(), indent=1)
        if args.output is None:
            print(text)
        else:
            write_file(args.output, text + "\n", what="report")
            sys.stderr.write(f"Wrote {args.output}\n")
        return 0
    target = args.output or Path(f"{Path(args.session).resolve().name}-report.html")
    write_report(report, target)
    sys.stderr.write(f"Wrote the battle report {target} ({target.stat().st_size // 1024} kB); open it in any browser.\n")
    return 0
