"""The session store: one SQLite file (WAL mode) holding sessions, their frame index, events and verdicts.

Every `add_*` commits at once (synchronous=FULL: a committed row survives a crash or a power cut), and
another connection or process can read while a writer writes (WAL readers never block the writer).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

from calibration.errors import InputError

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 5000
"""How long a connection waits for another's lock before giving up (ms)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    started REAL NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    game TEXT NOT NULL DEFAULT '',
    meta TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS frames (
    session INTEGER NOT NULL REFERENCES sessions(id),
    idx INTEGER NOT NULL,
    t REAL NOT NULL,
    file TEXT,
    PRIMARY KEY (session, idx)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(id),
    frame INTEGER NOT NULL,
    type TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_frame ON events (session, frame);
CREATE TABLE IF NOT EXISTS verdicts (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(id),
    frame INTEGER NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS verdicts_by_frame ON verdicts (session, frame);
"""


class StoreError(InputError):
    """The session store file cannot be used: the message names it and says what to do."""


class _JsonValue(Protocol):
    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class SessionInfo:
    """A row of `sessions`: id, start time (Unix seconds), source, game, and free-form metadata."""

    id: int
    started: float
    source: str
    game: str
    meta: Mapping[str, Any]


@dataclass(frozen=True)
class FrameRow:
    """A row of `frames`: frame index, time t (seconds), and the frame's file (None if not recorded)."""

    index: int
    t: float
    file: str | None


@dataclass(frozen=True)
class StoredEvent:
    """A row of `events` (or `verdicts`, with type 'verdict'): row id, frame, type, and the JSON object."""

    id: int
    frame: int
    type: str
    data: Mapping[str, Any]


def _as_object(value: _JsonValue | Mapping[str, Any], what: str) -> dict[str, Any]:
    obj = value.to_json() if hasattr(value, "to_json") else dict(value)  # type: ignore[arg-type]
    if not isinstance(obj, dict):
        raise TypeError(f"{what} must give a JSON object, got {type(obj).__name__}")
    return obj


SQLITE_MAGIC = b"SQLite format 3\x00"


def _refuse_a_foreign_file(path: Path) -> None:
    """StoreError if `path` exists with bytes that are not an SQLite database (never overwrite a user's file)."""
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except OSError as err:
        raise StoreError(f"Cannot open session store {path} ({err.strerror or err}); check the path.") from None
    if head and head != SQLITE_MAGIC:
        raise StoreError(f"{path} is not a Tablesight session store (it holds other data, which is left as it is); "
                         "choose another file name.")


class SessionStore:
    """Open (creating if needed) the store at `path`. Writes go to the current session, which is the one
    `begin_session()` started; if none was started, the first write starts one. Reads default to the current
    session, or the newest one in the file. Safe to share between threads; use as a context manager."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise StoreError(f"Cannot create session store {self.path}: folder {self.path.parent} does not "
                             "exist; create it or choose another path.")
        if self.path.is_dir():
            raise StoreError(f"Session store {self.path} is a directory; give a file name such as "
                             "session.sqlite.")
        _refuse_a_foreign_file(self.path)
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                       check_same_thread=False)
        except sqlite3.Error as err:
            raise StoreError(f"Cannot open session store {self.path} ({err}); check the path and its "
                             "permissions.") from None
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if db.execute("PRAGMA user_version").fetchone()[0] == 0 \
                    and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] \
                    and not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sessions'").fetchone():
                raise StoreError(f"{self.path} is another program's SQLite database, not a Tablesight session "
                                 "store; choose another file name.")
            mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"Session store {self.path} cannot use write-ahead logging (journal mode "
                                 f"{mode}); put it on a local disk.")
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA foreign_keys = ON")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise StoreError(f"Session store {self.path} has schema version {version}, this Tablesight "
                                 f"reads {SCHEMA_VERSION}; use a new store file.")
            if version == 0:  # a new file (IF NOT EXISTS: two processes may both get here)
                db.executescript("BEGIN IMMEDIATE;" + _SCHEMA
                                       + f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
        except sqlite3.DatabaseError as err:
            db.close()
            raise StoreError(f"{self.path} is not a Tablesight session store ({err}); choose another file "
                             "name.") from None
        except StoreError:
            db.close()
            raise
        self._db = db
        self._session: int | None = None

    # ---- plumbing ---------------------------------------------------------------------------------
    def _write(self, sql: str, params: tuple[Any, ...]) -> int:
        with self._lock:
            if self._db is None:
                raise StoreError(f"Session store {self.path} is closed; open it again to write.")
            cur = self._db.execute(sql, params)  # autocommit: one statement, one durable transaction
            return int(cur.lastrowid or 0)

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._db is None:
                raise StoreError(f"Session store {self.path} is closed; open it again to read.")
            return list(self._db.execute(sql, params).fetchall())

    # ---- sessions ---------------------------------------------------------------------------------
    def begin_session(self, *, source: str = "", game: str = "", meta: Mapping[str, Any] | None = None) -> int:
        """Start a new session and make it the current one; returns its id."""
        self._session = self._write("INSERT INTO sessions (started, source, game, meta) VALUES (?, ?, ?, ?)",
                                    (time.time(), source, game, json.dumps(dict(meta or {}))))
        return self._session

    def use_session(self, session: int) -> None:
        """Make an existing session the current one (to append after a restart, or to read it)."""
        if not self._read("SELECT 1 FROM sessions WHERE id = ?", (session,)):
            raise StoreError(f"Session store {self.path} has no session {session}; list them with sessions().")
        self._session = session

    def sessions(self) -> list[SessionInfo]:
        rows = self._read("SELECT id, started, source, game, meta FROM sessions ORDER BY id")
        return [SessionInfo(id=r[0], started=r[1], source=r[2], game=r[3], meta=json.loads(r[4])) for r in rows]

    @property
    def session(self) -> int | None:
        """The current session id, else the newest in the file, else None."""
        if self._session is not None:
            return self._session
        rows = self._read("SELECT max(id) FROM sessions")
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def _writing_session(self) -> int:
        if self._session is None:
            self.begin_session()
        assert self._session is not None
        return self._session

    def _reading_session(self, session: int | None) -> int | None:
        return session if session is not None else self.session

    # ---- writes -----------------------------------------------------------------------------------
    def add_frame(self, index: int, t: float, file: str | None = None) -> None:
        """Record that frame `index` was taken at `t` seconds (and where its image is, if recorded)."""
        self._write("INSERT OR REPLACE INTO frames (session, idx, t, file) VALUES (?, ?, ?, ?)",
                    (self._writing_session(), int(index), float(t), file))

    def add_event(self, event: _JsonValue | Mapping[str, Any]) -> int:
        """Store an event (a tracker event or any object with "type" and "frame"); returns its row id."""
        obj = _as_object(event, "An event")
        if "type" not in obj or "frame" not in obj:
            raise ValueError(f"An event needs \"type\" and \"frame\"; got keys {sorted(obj)}.")
        return self._write("INSERT INTO events (session, frame, type, json) VALUES (?, ?, ?, ?)",
                           (self._writing_session(), int(obj["frame"]), str(obj["type"]), json.dumps(obj)))

    def add_verdict(self, frame: int, verdict: _JsonValue | Mapping[str, Any]) -> int:
        """Store a rules verdict given at `frame`; returns its row id."""
        obj = _as_object(verdict, "A verdict")
        return self._write("INSERT INTO verdicts (session, frame, json) VALUES (?, ?, ?)",
                           (self._writing_session(), int(frame), json.dumps(obj)))

    # ---- reads ------------------------------------------------------------------------------------
    def frames(self, *, session: int | None = None) -> list[FrameRow]:
        sid = self._reading_session(session)
        rows = self._read("SELECT idx, t, file FROM frames WHERE session = ? ORDER BY idx", (sid,))
        return [FrameRow(index=r[0], t=r[1], file=r[2]) for r in rows]

    def events(self, *, since_frame: int | None = None, after_id: int | None = None,
               session: int | None = None) -> list[StoredEvent]:
        """Events in the order they were stored; `since_frame`: frame >= it; `after_id`: only rows newer
        than one already seen (for polling)."""
        sid = self._reading_session(session)
        rows = self._read("SELECT id, frame, type, json FROM events WHERE session = ? AND frame >= ? AND id > ? "
                          "ORDER BY id", (sid, since_frame if since_frame is not None else -(2**62),
                                          after_id if after_id is not None else -1))
        return [StoredEvent(id=r[0], frame=r[1], type=r[2], data=json.loads(r[3])) for r in rows]

    def rolls(self, *, session: int | None = None) -> list[StoredEvent]:
        """The dice rolls the rules took and their corrections, in order: events of type "roll" ({"frame", "clause",
        "what", "unit", "side", "sides", "faces", "by": "players"|"tablesight", "source": "typed"|"camera"|"phone"|
        "rolled"|"correction", "camera_faces"}) and "roll_correction" ({"frame", "action", "faces_before", "faces",
        "ruled_frame"}), as session/pending_roll.py writes them (the battle report reads these)."""
        sid = self._reading_session(session)
        rows = self._read("SELECT id, frame, type, json FROM events WHERE session = ? AND type IN ('roll', "
                          "'roll_correction') ORDER BY id", (sid,))
        return [StoredEvent(id=r[0], frame=r[1], type=r[2], data=json.loads(r[3])) for r in rows]

    def verdicts(self, *, since_frame: int | None = None, session: int | None = None) -> list[StoredEvent]:
        sid = self._reading_session(session)
        rows = self._read("SELECT id, frame, json FROM verdicts WHERE session = ? AND frame >= ? ORDER BY id",
                          (sid, since_frame if since_frame is not None else -(2**62)))
        return [StoredEvent(id=r[0], frame=r[1], type="verdict", data=json.loads(r[2])) for r in rows]

    # ---- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
