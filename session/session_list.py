"""The replay list: each recorded session (or folder of frames) in the sessions folder, as a player reads it (its
game, when it was recorded, its length, units, whether a battle report can be made), then the bundled samples.

A summary is kept until a file it was read from changes: the list is asked for at every visit, and a long
session's frame index takes a while to read (a two-hour one has 216,000 lines).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

from calibration.errors import InputError
from rules.engine import RulesInputError, find_game
from session.feeds import RecordingFeed
from session.paths import SAMPLES_DIR, SESSION_NAME_RE, confined_session
from session.replay import load_setup, recorded_game
from session.setup_files import read_json_file
from vision.session_dir import (
    INDEX_NAME,
    MANIFEST_NAME,
    RecordedSession,
    is_session_dir,
    open_session,
    read_manifest,
)
from vision.sources import SessionSource

Kept = dict[Path, tuple[tuple[Any, ...], dict[str, Any] | None]]
"""Summaries already made, by folder: what each was read from (`_read_from`), and the summary (None: no session)."""

SETUP_FILES = ("calibration.json", "roster.json", "terrain.json")
_KEEPING = threading.Lock()
"""Held while a `Kept` is read and changed."""


def listed_sessions(sessions_dir: Path, kept: Kept | None = None) -> list[dict[str, Any]]:
    """The sessions folder's sessions, newest first, then the bundled samples not shadowed by one of them
    (each marked "sample": True). `kept`: the summaries of earlier calls, reused where nothing changed."""
    own = session_summaries(sessions_dir, kept)
    names = {s["name"] for s in own}
    samples = [] if sessions_dir.resolve() == SAMPLES_DIR.resolve() else session_summaries(SAMPLES_DIR, kept)
    return own + [{**s, "sample": True} for s in sorted(samples, key=lambda s: s["name"])
                  if s["name"] not in names and "error" not in s]


def length_text(seconds: float) -> str:
    """A recording's length as a player reads it: "13.9 s" under a minute, then "4:05 min", then "1:02:03 h"
    ("–" for a length that is no number, as a damaged frame index can give)."""
    if not math.isfinite(seconds) or seconds < 0:
        return "–"
    if seconds < 59.95:  # not "60.0 s"
        return f"{seconds:.1f} s"
    whole = int(round(seconds))
    h, rest = divmod(whole, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d} h" if h else f"{rest // 60}:{rest % 60:02d} min"


def session_summaries(sessions_dir: Path, kept: Kept | None = None) -> list[dict[str, Any]]:
    """Every recorded session (or folder of frames) directly inside the sessions folder, newest first ("sorted_at":
    when recording began, else when the folder last changed, in seconds since the epoch). One that
    cannot be read is listed with "error", the sentence saying why (and never hides the others). `kept`: as
    `listed_sessions`; the summaries of folders no longer there are dropped from it."""
    if kept is None:
        return _summaries(sessions_dir, None)
    with _KEEPING:  # the server answers two visits at once on two threads
        return _summaries(sessions_dir, kept)


def _summaries(sessions_dir: Path, kept: Kept | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not sessions_dir.is_dir():
        return out
    seen: set[Path] = set()
    for p in sessions_dir.iterdir():
        if not SESSION_NAME_RE.fullmatch(p.name) or not p.is_dir():
            continue
        try:
            confined_session(sessions_dir, p.name)
        except InputError:
            continue  # a symlink leading outside is not offered
        seen.add(p)
        if kept is None:
            info = _summary(p)
        else:
            read_from = _read_from(p)
            if p not in kept or kept[p][0] != read_from:
                kept[p] = (read_from, _summary(p))
            info = kept[p][1]
        if info is not None:
            out.append(info)
    if kept is not None:
        for gone in [p for p in kept if p.parent == sessions_dir and p not in seen]:
            del kept[gone]
    out.sort(key=lambda i: -i["sorted_at"])
    return out


def _newest_first(info: dict[str, Any], session: RecordedSession) -> None:
    """A recorded session sorts by when its recording began (a session copied in from another laptop keeps its
    place), a folder of frames or a session with no readable start by when its folder last changed."""
    began = session.manifest.created_local
    if began is not None:
        with contextlib.suppress(ValueError, OverflowError, OSError):  # a year this clock cannot count from
            info["sorted_at"] = began.timestamp()


def _summary(p: Path) -> dict[str, Any] | None:
    """The list's line for folder `p`; None for a folder with neither a manifest nor frames (no session)."""
    info: dict[str, Any] = {"name": p.name, "recorded": is_session_dir(p), "frames": None, "duration_s": None}
    try:
        info["sorted_at"] = p.stat().st_mtime
        session = open_session(p) if info["recorded"] else None
        feed = RecordingFeed.of_session(session) if session is not None else RecordingFeed.open(p)
        info["frames"] = len(feed)
        info["duration_s"] = round(feed.duration_s, 2) if math.isfinite(feed.duration_s) else None  # JSON: no inf
        info["length_text"] = length_text(feed.duration_s)
        if session is not None:
            info.update(_about(session))
            _newest_first(info, session)
    except (InputError, OSError) as err:
        if not info["recorded"] and not isinstance(err, OSError) and "holds no" in str(err):
            return None
        info["error"] = str(err) if isinstance(err, InputError) else f"Session {p.name} cannot be read ({err})."
        info.setdefault("sorted_at", 0.0)
    return info


def _about(session: RecordedSession) -> dict[str, Any]:
    """What the list of sessions says of a recorded one besides its frames: "game" (the rule book's title, from the
    manifest or else the roster, as a replay chooses it), "created" (ISO 8601, when recording began) and
    "created_text" (that time on this server's clock, as a player reads it), "units" (the roster's count), each
    only if readable, and "reportable" (a battle report can be made: the setup it replays with loads)."""
    manifest = session.manifest
    out: dict[str, Any] = {"reportable": False, "created": manifest.created}
    began = manifest.created_local  # the recorder's UTC stamp said in this server's local time
    if began is not None:
        out["created_text"] = f"{began:%d %b %Y, %H:%M}"
    roster: Any = None
    if session.roster_path is not None:
        with contextlib.suppress(InputError):  # the list says less; the replay page says why
            roster = read_json_file(session.roster_path, "roster")
    units = roster.get("units") if isinstance(roster, dict) else None
    if isinstance(units, list):
        out["units"] = len(units)
    roster_game = roster.get("game") if isinstance(roster, dict) else None
    game = recorded_game(manifest.extra, roster_game if isinstance(roster_game, str) else None)
    if game:
        try:
            out["game"] = find_game(game).title
        except RulesInputError:
            out["game"] = game
    out["reportable"] = _report_inputs_load(session)
    return out


def _report_inputs_load(session: RecordedSession) -> bool:
    """Whether a battle report of `session` can be made: its setup loads as the report loads it (`load_setup`:
    calibration, roster, terrain, game, game setup and declarations)."""
    try:
        load_setup(SessionSource(session.directory, session=session))
    except (InputError, RulesInputError, OSError):
        return False
    return True


def _read_from(folder: Path) -> tuple[Any, ...]:
    """What a folder's summary is read from, as the file system says it now: the folder itself (frames added or
    removed, a file replaced), its manifest, frame index, setup files, the files the manifest names and, when it
    names no frame size, the first frame (size, change times, inode), and this server's time zone (the recorded
    time is said on its clock)."""
    names = [MANIFEST_NAME, INDEX_NAME, *SETUP_FILES]
    with contextlib.suppress(InputError):
        manifest = read_manifest(folder)
        names += [v for k in ("setup", "declarations") if isinstance(v := manifest.extra.get(k), str)]
        if manifest.image_size is None:  # the frame size is read from the first frame (vision/sources.py)
            names += _first_frame(folder)
    return (time.tzname, time.timezone, time.altzone, _stamp(folder), *(_stamp(folder / n) for n in names))


def _first_frame(folder: Path) -> list[str]:
    """The file the index's first line names ([] when there is none to read)."""
    try:
        with open(folder / INDEX_NAME, "rb") as index:
            first = json.loads(index.readline())
        return [str(first["file"])]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):  # the list says why, not this
        return []


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # no such file; a name the file system refuses
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino
