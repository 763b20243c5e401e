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
from pathlib import Path

from session.report import gather_report
from session.report_html import write_report


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", metavar="SESSION", type=Path, help="a recorded session directory")
    p.add_argument("-o", "--output", type=Path, metavar="REPORT.html", help="where to write the report")
    p.add_argument("--json", action="store_true", help="the report's data as JSON instead of HTML")


def run(args: argparse.Namespace) -> int:
    report = gather_report(args.session)
    if args.json:
        text = json.dumps(report.to_json(), indent=1)
        if args.output is None:
            print(text)
        else:
            args.output.write_text(text + "\n", encoding="utf-8")
            sys.stderr.write(f"Wrote {args.output}\n")
        return 0
    target = args.output or Path(f"{Path(args.session).resolve().name}-report.html")
    write_report(report, target)
    sys.stderr.write(f"Wrote the battle report {target} ({target.stat().st_size // 1024} kB); open it in any browser.\n")
    return 0
