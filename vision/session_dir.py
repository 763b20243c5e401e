"""The recorded-session directory: the files a `Recorder` writes and a `SessionSource` replays.

Layout (docs/session_format.md has the full description)::

    manifest.json        {"format": "tablesight-session", "version": 1, ...}; rewritten atomically
    frames.jsonl         one JSON object a line per frame: {"index": i, "t": s, "file": "frame_000000.jpg"}
    frame_000000.jpg     the frames, JPEG, BGR as OpenCV writes it
    calibration.json     copied in when given (optional)
    roster.json          copied in when given (optional)
    terrain.json         copied in when given (optional)

A frame file is complete before its line is appended to `frames.jsonl`, so every listed frame is readable and
a crash loses at most the frames not yet listed. A torn last line (no newline) is a lost frame and is ignored.
A frame in which nothing moved names the file of the frame stored before it (no file of its own).

A session is one or more segments: runs of frames of one size, numbered on without a break inside a run. A new
segment starts where the frames change size or where frames were not recorded (the disk was full); the manifest's
"segments" lists where each starts, and the frame numbers may jump only there.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from calibration.json_input import MAX_INT_DIGITS, parse_json
from vision.errors import FrameError

SESSION_FORMAT = "tablesight-session"
SESSION_VERSION = 1
MANIFEST_NAME = "manifest.json"
INDEX_NAME = "frames.jsonl"
ATTACHMENT_NAMES = ("calibration.json", "roster.json", "terrain.json")


class SessionError(FrameError):
    """A recorded-session directory that cannot be read or written: the message names it and the fix."""


def frame_file_name(index: int) -> str:
    """`frame_000042.jpg` for frame 42 (six digits, more when the index needs them)."""
    return f"frame_{index:06d}.jpg"


@dataclass(frozen=True)
class IndexEntry:
    """One line of `frames.jsonl`: frame `index`, capture time `t` (seconds from the session start), `file`."""

    index: int
    t: float
    file: str
    source_index: int | None = None

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"index": self.index, "t": round(self.t, 6), "file": self.file}
        if self.source_index is not None:
            obj["source_index"] = self.source_index
        return obj


def local_time(stamp: str) -> datetime | None:
    """An ISO 8601 time on this machine's clock (the recorder writes UTC with its offset; a stamp without one is
    taken as written); None when it is no such time."""
    try:
        when = datetime.fromisoformat(stamp)
        return when.astimezone() if when.utcoffset() is not None else when
    except (ValueError, OverflowError, OSError):
        return None


@dataclass(frozen=True)
class Segment:
    """A run of a session's frames of one size: from frame `first` on (to the next segment's first), each
    `image_size` (w, h) px."""

    first: int
    image_size: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"first": self.first, "image_size": list(self.image_size)}


@dataclass(frozen=True)
class SessionManifest:
    """What `manifest.json` says: who wrote the session, frame size (w, h) px of its first segment, its segments
    (listed when there are more than one), and whether it was closed."""

    created: str
    source: str = ""
    image_size: tuple[int, int] | None = None
    jpeg_quality: int = 90
    frames: int = 0
    closed: bool = False
    attachments: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    segments: tuple[Segment, ...] = ()
    """Every segment, oldest first, when the session has more than one or its first frame is not frame 0; () : one
    segment of `image_size` from frame 0."""

    @property
    def all_segments(self) -> tuple[Segment, ...]:
        """The segments, one at least once a frame is written (its size the manifest's `image_size`)."""
        if self.segments:
            return self.segments
        return (Segment(0, self.image_size),) if self.image_size is not None else ()

    def size_at(self, index: int) -> tuple[int, int] | None:
        """(w, h) px of frame `index`: its segment's size (None before any frame is written)."""
        size = self.image_size
        for seg in self.segments:
            if seg.first > index:
                break
            size = seg.image_size
        return size

    @property
    def created_local(self) -> datetime | None:
        """When recording began, on this machine's clock (`local_time` of "created")."""
        return local_time(self.created)

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = dict(self.extra)
        obj.update(
            {
                "format": SESSION_FORMAT,
                "version": SESSION_VERSION,
                "created": self.created,
                "source": self.source,
                "image_size": list(self.image_size) if self.image_size else None,
                "jpeg_quality": self.jpeg_quality,
                "frames": self.frames,
                "closed": self.closed,
                "index": INDEX_NAME,
                "attachments": list(self.attachments),
            }
        )
        if self.segments:
            obj["segments"] = [seg.to_json() for seg in self.segments]
        return obj

    @classmethod
    def from_json(cls, obj: Any, where: str) -> SessionManifest:
        if not isinstance(obj, dict) or obj.get("format") != SESSION_FORMAT:
            raise SessionError(f"{where} is not a Tablesight session manifest (no \"format\": \"{SESSION_FORMAT}\"); "
                               "point at a directory written by the recorder.")
        version = obj.get("version")
        if version != SESSION_VERSION:
            raise SessionError(f"{where} is session format version {version!r}, but this Tablesight reads version "
                               f"{SESSION_VERSION}; re-record it or upgrade Tablesight.")
        size = obj.get("image_size")
        image_size: tuple[int, int] | None = None
        if size is not None:
            if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size)):
                raise SessionError(f"{where} has image_size {size!r}; it must be [width, height] in pixels.")
            image_size = (size[0], size[1])
        known = {"format", "version", "created", "source", "image_size", "jpeg_quality", "frames", "closed",
                 "index", "attachments", "segments"}
        closed = obj.get("closed", False)
        if not isinstance(closed, bool):
            raise SessionError(f'{where} has "closed": {closed!r}; it must be true or false.')
        attachments = obj.get("attachments", [])
        if not isinstance(attachments, list) or not all(isinstance(a, str) and _inside(a) for a in attachments):
            raise SessionError(f'{where} has "attachments": {str(attachments)[:60]}; it must list file names '
                               "inside the session.")
        for key in TEXT_KEYS:  # a field of the wrong type would be read as missing, and the session replayed wrong
            if obj.get(key) is not None and not isinstance(obj[key], str):  # "" or null: recorded with no game
                raise SessionError(f'{where} has "{key}": {str(obj[key])[:40]}, which is not {TEXT_KEYS[key]}; '
                                   "restore the manifest from the recording.")
        fps = obj.get("fps")
        if fps is not None and (isinstance(fps, bool) or not isinstance(fps, int | float) or not 0 < fps <= 1000):
            raise SessionError(f'{where} has "fps": {str(fps)[:40]}, which is not a frame rate (a number from 0 to '
                               "1000); restore the manifest from the recording.")
        for key in SESSION_FILE_KEYS:  # files the session names must lie inside it
            if key in obj and not (isinstance(obj[key], str) and _inside(obj[key])):
                raise SessionError(f'{where} has "{key}": {str(obj[key])[:60]!r}, which is not a file inside the '
                                   "session; restore the manifest from the recording.")
        return cls(
            created=str(obj.get("created", "")),
            source=str(obj.get("source", "")),
            image_size=image_size,
            jpeg_quality=_whole(obj, "jpeg_quality", 90, 1, 100, where),
            frames=_whole(obj, "frames", 0, 0, MAX_FRAMES, where),
            closed=closed,
            attachments=tuple(attachments),
            extra={k: v for k, v in obj.items() if k not in known},
            segments=_segments(obj.get("segments", []), where),
        )


def _segments(value: Any, where: str) -> tuple[Segment, ...]:
    """The manifest's "segments": [{"first": n, "image_size": [w, h]}, ...], firsts increasing."""
    bad = SessionError(f'{where} has a "segments" list that is not {{"first": frame, "image_size": [width, height]}} '
                       "objects in the order of their first frames; restore the manifest from the recording.")
    if not isinstance(value, list):
        raise bad
    out: list[Segment] = []
    for item in value:
        if not isinstance(item, dict):
            raise bad
        first, size = item.get("first"), item.get("image_size")
        if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first <= MAX_FRAMES * 10:
            raise bad
        if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                   and v > 0 for v in size)):
            raise bad
        if out and first <= out[-1].first:
            raise bad
        out.append(Segment(first, (size[0], size[1])))
    return tuple(out)


SESSION_FILE_KEYS = ("setup", "declarations", "store", "setup_edits")
"""Manifest keys that name a file of the session (a plain name inside its folder)."""
MAX_FRAMES = 10**9
TEXT_KEYS = {"game": "a game's name in words (e.g. \"valknut\")", "created": "a date and time in words",
             "source": "the camera's description in words", "sample": "a sample's name in words"}
"""Manifest keys whose value is text, and what that text is."""


def _inside(name: str) -> bool:
    """Whether `name` is a plain file name inside the session folder (no folder part, no "..", not hidden)."""
    return bool(name) and "/" not in name and "\\" not in name and not name.startswith(".") and "\x00" not in name \
        and len(name) <= 255


def _whole(obj: Mapping[str, Any], key: str, default: int, low: int, high: int, where: str) -> int:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SessionError(f'{where} has "{key}": {str(value)[:40]}; it must be a whole number from {low} to {high}; '
                           "restore the manifest from the recording.")
    return value


@dataclass(frozen=True)
class RecordedSession:
    """A session directory as read back: its manifest, the frames its index lists, and attached files."""

    directory: Path
    manifest: SessionManifest
    entries: tuple[IndexEntry, ...]

    def size_at(self, index: int) -> tuple[int, int] | None:
        """(w, h) px of frame `index` (its segment's size; None for a session that never wrote a frame)."""
        return self.manifest.size_at(index)

    def attachment(self, name: str) -> Path | None:
        """Path of `calibration.json`, `roster.json` or `terrain.json` if the session holds it, else None."""
        path = self.directory / name
        return path if path.is_file() else None

    @property
    def calibration_path(self) -> Path | None:
        return self.attachment("calibration.json")

    @property
    def roster_path(self) -> Path | None:
        return self.attachment("roster.json")

    @property
    def terrain_path(self) -> Path | None:
        return self.attachment("terrain.json")


def is_session_dir(path: Path | str) -> bool:
    """True if `path` is a directory holding a session manifest."""
    return (Path(path) / MANIFEST_NAME).is_file()


def write_json_atomic(path: Path, obj: Any, *, fsync: bool = True) -> None:
    """Write JSON to `path` through a temporary file and `os.replace`, so readers never see half a file."""
    write_bytes_atomic(path, (json.dumps(obj, indent=2) + "\n").encode("utf-8"), fsync=fsync)


def write_bytes_atomic(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Write bytes to `path` atomically: temp file, flush, fsync, `os.replace`, fsync of the directory. When the
    disk refuses (full), the temp file is removed, giving back its room, and `path` is as it was."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """fsync a directory so a rename inside it survives a power cut (no-op where the OS cannot)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_manifest(directory: Path | str) -> SessionManifest:
    """Read `manifest.json`; SessionError with one sentence if the directory is not a readable session."""
    d = Path(directory)
    if not d.exists():
        raise SessionError(f"Session directory {d} does not exist; give the directory a recording was made into.")
    if not d.is_dir():
        raise SessionError(f"{d} is a file, not a session directory; give the directory a recording was made into.")
    path = d / MANIFEST_NAME
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        raise SessionError(f"{d} holds no {MANIFEST_NAME}, so it is not a recorded session; "
                           "record one with the recorder or replay the folder of frames instead.") from None
    except OSError as err:
        raise SessionError(f"Cannot read {path} ({err.strerror}); check its permissions.") from None
    obj = parse_json(text, str(path), "restore it from the recording", SessionError)
    return SessionManifest.from_json(obj, str(path))


def read_index(directory: Path | str, starts: frozenset[int] = frozenset()) -> tuple[IndexEntry, ...]:
    """Read `frames.jsonl`. A torn last line (a crash while appending) is dropped; any other bad line raises.
    starts: the frames where a segment starts (the manifest's "segments"): the numbers may jump forward there."""
    d = Path(directory)
    path = d / INDEX_NAME
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SessionError(f"{d} holds no {INDEX_NAME} frame index; the recording is incomplete, "
                           "re-record it or replay its frames as a folder.") from None
    except OSError as err:
        raise SessionError(f"Cannot read {path} ({err.strerror}); check its permissions.") from None
    lines = raw.split(b"\n")
    complete = lines[:-1]  # after the last newline: nothing, or the torn line of the frame lost in a crash
    plain = _plain_objects(complete)
    entries: list[IndexEntry] = []
    for n, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            obj = plain[n] if plain is not None else parse_json(line, f"{path} line {n}", "fix it", ValueError)
            entry = IndexEntry(index=int(obj["index"]), t=float(obj["t"]), file=str(obj["file"]),
                               source_index=(int(obj["source_index"]) if "source_index" in obj else None))
        except (ValueError, KeyError, TypeError):
            raise SessionError(f"{path} line {n} is not a frame entry like "
                               '{"index": 0, "t": 0.0, "file": "frame_000000.jpg"}; '
                               "fix or delete that line.") from None
        if not _inside(entry.file):
            raise SessionError(f"{path} line {n} names {entry.file[:60]!r}, which is not a file inside the session; "
                               "fix or delete that line.")
        expected = entries[-1].index + 1 if entries else 0
        if entry.index != expected and not (entry.index > expected and entry.index in starts):
            raise SessionError(f"{path} line {n} is frame {entry.index} where frame {expected} belongs (a gap or a "
                               "line out of order); restore frames.jsonl from the recording or replay the frames "
                               "as a folder.")
        entries.append(entry)
    return tuple(entries)


def _plain_objects(lines: list[bytes]) -> dict[int, dict[str, Any]] | None:
    """Each non-blank line's JSON object by line number (from 1), read in one `json.loads` (a two-hour session's
    index has 216,000 lines; one at a time they take ~30 us each), when every line is one object of plain values
    that `parse_json` would accept alike; else None, and the lines are read one at a time for the sentence.
    No value can run from one line into the next: each line must begin with "{" and end with "}", the lines are
    joined by a newline (which no JSON text may hold), the text is strict UTF-8, and a value of an object that
    is itself an array or object (as two lines read as one would make) is not plain."""
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    if not all(line.lstrip()[:1] == b"{" and line.rstrip()[-1:] == b"}" for _, line in numbered):
        return None
    try:
        text = (b"[" + b",\n".join(line for _, line in numbered) + b"]").decode("utf-8")
        values = json.loads(text, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return None
    if len(values) != len(numbered) or not all(type(v) is dict and all(map(_plain, v.values())) for v in values):
        return None
    return {n: v for (n, _), v in zip(numbered, values, strict=True)}


def _refuse(text: str) -> float:
    raise ValueError(text)


def _plain(value: Any) -> bool:
    """A value `parse_json` reads the same: text, true/false/null, a finite number, a whole number of at most
    MAX_INT_DIGITS digits."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is int:
        return abs(value) < _INT_LIMIT
    return kind is str or kind is bool or value is None


_INT_LIMIT = 10 ** MAX_INT_DIGITS


def open_session(directory: Path | str) -> RecordedSession:
    """Read a session directory's manifest and frame index (not the frames)."""
    d = Path(directory)
    manifest = read_manifest(d)
    starts = frozenset(seg.first for seg in manifest.segments)
    return RecordedSession(directory=d, manifest=manifest, entries=read_index(d, starts))
