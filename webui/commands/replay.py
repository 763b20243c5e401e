"""Replay a recorded session, a video file or a folder of frames through the pipeline and print its events.

SOURCE: a recorded session directory (it carries its calibration, roster, terrain, game setup and declared
actions), a video file or a folder of frames (sorted by name; these need --calibration). --json prints one
JSON object a line: moves {"type": "move", "frame", "tag", "from_in", "to_in", "length_in", "pm_in", ...},
{"type": "placed", ...}, verdicts {"type": "verdict", "frame", "rule", "outcome", "message", ...}, score
changes {"type": "score", ...}, and last {"type": "summary", "frames", "moves", "verdicts", "illegal",
"score", "seconds"}. --store FILE.sqlite also records the events and verdicts there as they happen.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from session.replay import ReplayRun, json_line, load_setup, open_source
from session.store import SessionStore


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", metavar="SOURCE", help="a recorded session directory, a video file or a folder of frames")
    p.add_argument("--calibration", type=Path, metavar="CAL.json", help="the table calibration (tablesight calibrate)")
    p.add_argument("--roster", type=Path, metavar="FILE", help="the roster: which tag is which unit")
    p.add_argument("--terrain", type=Path, metavar="FILE", help="the terrain pieces (docs/terrain.md)")
    p.add_argument("--game", metavar="NAME", help="the game to rule with (default: the session's or the roster's)")
    p.add_argument("--store", type=Path, metavar="FILE.sqlite", help="also record events and verdicts in this store")
    p.add_argument("--json", action="store_true", help="one JSON object a line")


def _readable(e: dict[str, Any]) -> str:
    kind, frame = e["type"], e.get("frame")
    if kind == "move":
        return (f'frame {frame:5d}  move     tag {e["tag"]}: ({e["from_in"][0]:.2f}, {e["from_in"][1]:.2f}) -> '
                f'({e["to_in"][0]:.2f}, {e["to_in"][1]:.2f})  {e["length_in"]:.3f}" ± {e["pm_in"]:.3f}"'
                + ("  (lifted)" if e.get("lifted") else ""))
    if kind == "placed":
        return f'frame {frame:5d}  placed   tag {e["tag"]} at ({e["at_in"][0]:.2f}, {e["at_in"][1]:.2f})'
    if kind == "verdict":
        return f'frame {frame:5d}  {e.get("outcome", ""):8s} {e.get("message", "")}'
    if kind == "score":
        return f"frame {frame:5d}  score    {e['score']}"
    if kind == "summary":
        text = (f'{e["frames"]} frames, {e["moves"]} moves, {e["verdicts"]} verdicts ({e["illegal"]} illegal, '
                f'{e["too_close"]} too close to call) in {e["seconds"]:.1f} s')
        return text + (f"; score {e['score']}" if "score" in e else "")
    rest = {k: v for k, v in e.items() if k not in ("type", "frame")}
    return f"frame {frame:5d}  {kind}  {rest}"


def run(args: argparse.Namespace) -> int:
    source = open_source(args.source)
    store: SessionStore | None = None
    try:
        setup = load_setup(source, args.calibration, args.roster, args.terrain, args.game)
        if args.store is not None:
            store = SessionStore(args.store)
        replay = ReplayRun(source, setup, store)
        bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            bar = tqdm(total=replay.total_frames, unit="frame", file=sys.stderr, leave=False)
        seen = 0
        try:
            for event in replay.events():
                print(json_line(event) if args.json else _readable(event), flush=True)
                if bar is not None and replay.frames > seen:
                    bar.update(replay.frames - seen)
                    seen = replay.frames
        finally:
            if bar is not None:
                bar.close()
    finally:
        source.close()
        if store is not None:
            store.close()
    return 0
