"""Replay a recorded session, a video file or a folder of frames through the pipeline and print its events.

SOURCE: a recorded session directory (it carries its calibration, roster, terrain, game setup and declared
actions), a video file or a folder of frames (sorted by name; these need --calibration). --json prints one
JSON object a line: moves {"type": "move", "frame", "tag", "from_in", "to_in", "length_in", "pm_in", ...},
{"type": "placed", ...}, verdicts {"type": "verdict", "frame", "rule", "outcome", "message", ...}, score
changes {"type": "score", ...}, and last {"type": "summary", "frames", "moves", "verdicts", "illegal",
"score", "seconds"}. --store FILE.sqlite also records the events and verdicts there as they happen.

SOURCE may also be a folder of sessions (a directory whose subdirectories are recorded sessions: a league's
week of games). Each session is replayed in a process of its own, as many at once as there are cores
(--jobs N), and reported in name order: on stdout every line carries "session": NAME (with --json, one JSON
object a line; the readable log is prefixed "NAME: "), or with --out DIR each session's lines go to
DIR/NAME.jsonl, exactly what `replay NAME --json` prints, and stdout gets one summary line per session with
its "session" and "file". A progress bar (frames of all sessions) is drawn on stderr when stderr is a
terminal. A session that cannot be replayed gets one sentence on stderr naming it (what it replayed before
a bad frame is kept: printed, or in DIR/NAME.jsonl.part); the others still finish, and the exit status is then
2 (1 if one failed on a fault of ours). docs/leagues.md says how to fan the same work out over many machines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from calibration.errors import InputError
from session.replay import ReplayRun, json_line, load_setup, open_source
from session.replay_many import ReplayOptions, SessionReplay, replay_folder, sessions_in, total_frames
from session.store import SessionStore


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", metavar="SOURCE", help="a recorded session directory, a video file or a folder of frames")
    p.add_argument("--calibration", type=Path, metavar="CAL.json", help="the table calibration (tablesight calibrate)")
    p.add_argument("--roster", type=Path, metavar="FILE", help="the roster: which tag is which unit")
    p.add_argument("--terrain", type=Path, metavar="FILE", help="the terrain pieces (docs/terrain.md)")
    p.add_argument("--game", metavar="NAME", help="the game to rule with (default: the session's or the roster's)")
    p.add_argument("--store", type=Path, metavar="FILE.sqlite", help="also record events and verdicts in this store")
    p.add_argument("--json", action="store_true", help="one JSON object a line")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="for a folder of sessions: write each session's JSON lines to DIR/NAME.jsonl")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="for a folder of sessions: replay N sessions at once (default: one a core)")


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
    sessions = sessions_in(args.source)
    if sessions:
        return run_folder(args, sessions)
    if args.out is not None or args.jobs is not None:
        raise InputError(f"--out and --jobs are for a folder of recorded sessions, and {args.source} is not one; "
                         "for one session send --json's output to a file.")
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


def run_folder(args: argparse.Namespace, sessions: list[Path]) -> int:
    """Replay every session of a folder, one process each, and report them in name order."""
    if args.store is not None:
        raise InputError(f"--store records one replay, and {args.source} is a folder of {len(sessions)} sessions; "
                         "give one session, or use --out DIR to keep each session's events.")
    if args.jobs is not None and not 1 <= args.jobs <= 256:
        raise InputError(f"--jobs {args.jobs} is not a number of sessions to replay at once; give 1 to 256.")
    out: Path | None = args.out
    if out is not None:
        if out.exists() and not out.is_dir():
            raise InputError(f"--out {out} is a file; give a folder for the sessions' JSON lines.")
        if not out.parent.is_dir():
            raise InputError(f"--out {out}: the folder {out.parent} does not exist; create it or pick another.")
        inside = next((s for s in sessions if out.resolve().is_relative_to(s.resolve())), None)
        if inside is not None:  # DIR/NAME.jsonl could overwrite its frames.jsonl or declarations.jsonl
            raise InputError(f"--out {out} is inside the recorded session {inside}, which is kept as it was recorded; "
                             "give a folder outside the sessions.")
        out.mkdir(exist_ok=True)
    for flag, path in (("--calibration", args.calibration), ("--roster", args.roster), ("--terrain", args.terrain)):
        if path is not None and not path.is_file():
            raise InputError(f"{flag} {path} does not exist; give the file every session is to be replayed with.")
    options = ReplayOptions(
        calibration=str(args.calibration) if args.calibration is not None else None,
        roster=str(args.roster) if args.roster is not None else None,
        terrain=str(args.terrain) if args.terrain is not None else None,
        game=args.game,
        out_dir=str(out.resolve()) if out is not None else None,
    )
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=total_frames(sessions), unit="frame", file=sys.stderr, leave=False,
                   desc=f"{len(sessions)} sessions")
    failed: list[SessionReplay] = []
    try:
        for result in replay_folder(sessions, options, args.jobs, on_frames=bar.update if bar is not None else None):
            _print_session(result, args.json)  # a failed session's events before its failure too
            if result.error is not None:
                failed.append(result)
                if bar is not None:
                    bar.clear()
                sys.stderr.write(_failure(result) + "\n")
    finally:
        if bar is not None:
            bar.close()
    if not failed:
        return 0
    return 1 if any(r.status == 1 for r in failed) else 2


def _failure(result: SessionReplay) -> str:
    """One sentence naming the session that failed."""
    error = result.error or "it failed"
    return error if error.startswith(f"Session {result.name}") else f"Session {result.name}: {error}"


def _print_session(result: SessionReplay, as_json: bool) -> None:
    name = result.name
    if result.error is not None and result.out_file is None and not result.events:
        return
    if result.out_file is not None:
        summary = {"session": name, "file": result.out_file, **(result.summary or {})}
        said = _readable(result.summary) if result.summary is not None else "replayed"
        print(json_line(summary) if as_json else f"{name}: {said} -> {result.out_file}", flush=True)
        return
    for event in result.events:
        print(json_line({"session": name, **event}) if as_json else f"{name}: {_readable(event)}")
    sys.stdout.flush()
