"""Record the live table: every frame from a camera or a video goes into a new session folder as it arrives.

One `LiveRecording` per server stands between the live loop and its feed and pipeline factory:

- `feed(open_feed)` wraps the feed. Each frame is handed to a writer thread (`vision.recorder.Recorder`: JPEG,
  fsync, index line) and given to the pipeline numbered as the recording numbers it (0, 1, 2 ... and t in
  seconds from the recording's first frame, rounded as frames.jsonl keeps it), so the live run and a replay
  of the folder see the same frame indices and times.
- `make_pipeline()` builds the pipeline from a snapshot of the table setup. A new pipeline (the source was
  reopened, or the calibration, roster, terrain or game changed) closes the current recording; the next
  frame starts a new one with that setup (calibration.json, roster.json, terrain.json, setup.json copied
  in; the manifest names the "game", "setup" and "declarations").
- The loop reports what each frame gave (`ruled`: events and verdicts into the folder's session.sqlite, on
  the writer thread) and each declared action (`declared`: a line of declarations.jsonl with the frame it
  was ruled at, flushed and fsynced before the player's request returns).

Durability: before the loop takes the next frame it waits until the writer has finished everything handed
to it before, so a crash or a pulled plug loses at most the frame being written (its image and its rows).
A folder is named by the local start time and game, e.g. `2026-11-22_0451_valknut` (`_2`, `_3` ... if taken).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rules.engine import Action
from rules.terrain import terrain_to_json
from session.drivable import Feed, PipelineLike
from session.store import SessionStore
from session.table_setup import TableSetup
from vision.recorder import Recorder, encode_frame
from vision.session_dir import fsync_dir, write_json_atomic
from vision.sources import Frame

log = logging.getLogger("tablesight.recording")

RECORD_JPEG_QUALITY = 90
"""JPEG quality of recorded frames (the browser's stream has its own, lower, setting)."""
STORE_NAME = "session.sqlite"
DECLARATIONS_NAME = "declarations.jsonl"
SETUP_NAME = "setup.json"


@dataclass(frozen=True)
class SetupFiles:
    """A table setup as the JSON a recording keeps: calibration, roster, terrain (None when not set), game name,
    the game's setup object (None: the game starts from the roster and terrain)."""

    calibration: Mapping[str, Any] | None
    roster: Mapping[str, Any] | None
    terrain: Mapping[str, Any] | None
    game: str | None
    game_setup: Mapping[str, Any] | None

    @classmethod
    def of(cls, setup: TableSetup) -> SetupFiles:
        cal = setup.calibration
        return cls(
            calibration=cal.to_json() if cal is not None else None,
            roster=setup.roster.to_json() if setup.roster is not None else None,
            terrain=terrain_to_json(setup.terrain) if setup.terrain else None,
            game=setup.game,
            game_setup=dict(setup.game_setup) if setup.game_setup is not None else None,
        )

    def changes_from(self, other: SetupFiles) -> list[str]:
        """The parts that differ from `other`, in words ("calibration", "roster", "terrain", "game")."""
        parts = []
        for name in ("calibration", "roster", "terrain", "game"):
            if getattr(self, name) != getattr(other, name):
                parts.append(name)
        if self.game_setup != other.game_setup and "game" not in parts:
            parts.append("game setup")
        return parts


def copy_setup(setup: TableSetup) -> TableSetup:
    """A copy of `setup` taken under its lock (with a lock of its own), so a pipeline and its recording agree."""
    with setup.lock:
        return dataclasses.replace(setup, declarations=dict(setup.declarations), lock=threading.Lock())


def session_folder_name(game: str | None, when: float) -> str:
    """`2026-11-22_0451_valknut`: local start time (minute) and game ("live" without one)."""
    stamp = time.strftime("%Y-%m-%d_%H%M", time.localtime(when))
    word = "".join(c if c.isalnum() or c in "_-" else "-" for c in (game or "live"))[:40] or "live"
    return f"{stamp}_{word}"


def claim_folder(sessions_dir: Path, base: str) -> Path:
    """Create (exclusively) a new empty folder `base`, or `base_2`, `base_3` ... inside `sessions_dir`."""
    sessions_dir.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        path = sessions_dir / (base if n == 1 else f"{base}_{n}")
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        fsync_dir(sessions_dir)
        return path
    raise OSError(f"no free session folder name like {base} in {sessions_dir}")


class _Take:
    """One recording in progress: its folder, Recorder, session store and declarations file; the loop thread
    makes it and hands writes to the writer thread, which alone touches the Recorder and the store after."""

    def __init__(self, directory: Path, plan: SetupFiles, source: str) -> None:
        self.directory = directory
        self.name = directory.name
        extra: dict[str, Any] = {"declarations": DECLARATIONS_NAME, "store": STORE_NAME}
        if plan.game is not None:
            extra["game"] = plan.game
        if plan.game_setup is not None:
            extra["setup"] = SETUP_NAME
        self.recorder = Recorder(directory, source=source, calibration=plan.calibration, roster=plan.roster,
                                 terrain=plan.terrain, jpeg_quality=RECORD_JPEG_QUALITY, extra=extra)
        if plan.game_setup is not None:
            write_json_atomic(directory / SETUP_NAME, plan.game_setup)
        self._decl = open(directory / DECLARATIONS_NAME, "ab")  # noqa: SIM115 - kept open for the whole take
        os.fsync(self._decl.fileno())
        fsync_dir(directory)
        self.store = SessionStore(directory / STORE_NAME)
        self.store.begin_session(source=source, game=plan.game or "", meta={"recording": self.name})
        self.frames = 0
        """Frames handed to the writer (the next frame's index)."""
        self.t0: float | None = None
        self.last_t = 0.0
        self.failed = ""

    def declare(self, frame_index: int, action: Action) -> None:
        line = json.dumps({"frame": int(frame_index), "action": action.to_json()}) + "\n"
        self._decl.write(line.encode("utf-8"))
        self._decl.flush()
        os.fsync(self._decl.fileno())

    def close(self) -> None:
        """Close the recorder (manifest: closed, frame count), the store and the declarations file."""
        try:
            self.recorder.close()
        finally:
            self.store.close()
            self._decl.close()


class LiveRecording:
    """Records the live loop into `sessions_dir` (see the module docstring).

    setup: the live table's setup (read under its lock at each new pipeline). make_pipeline: the pipeline for a
    setup (session.runtime.make_pipeline). `name` is the folder being recorded (None before the first frame or
    after a failure), `note` a sentence for the status bar when a recording was closed or could not go on.
    """

    def __init__(self, sessions_dir: Path, setup: TableSetup,
                 make_pipeline: Callable[[TableSetup], PipelineLike]) -> None:
        self.sessions_dir = Path(sessions_dir)
        self._setup = setup
        self._make_pipeline = make_pipeline
        self._lock = threading.RLock()
        self._plan: SetupFiles | None = None
        self._take: _Take | None = None
        self._closed_takes: list[str] = []
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._stopped = False
        self._cannot_start = False
        self._closed_because: tuple[str, str] | None = None
        """(why, the closed folder) when a new pipeline closed a recording, until the next one starts."""
        self.note = ""
        self.write_ms: list[float] = []
        """How long the writer took for each of the last frames (JPEG encode, fsyncs, index line, store row), ms."""

    # ---- what the live loop is given ----

    @property
    def name(self) -> str | None:
        take = self._take
        return take.name if take is not None and not take.failed else None

    @property
    def recorded(self) -> list[str]:
        """Every folder this server recorded, oldest first (the current one last)."""
        with self._lock:
            return self._closed_takes + ([self._take.name] if self._take is not None else [])

    def feed(self, open_feed: Callable[[], Feed]) -> Callable[[], Feed]:
        """`open_feed` whose frames are recorded as they are read (see `RecordedFeed`)."""
        return lambda: RecordedFeed(open_feed(), self)

    def make_pipeline(self) -> PipelineLike:
        """A pipeline for the setup as it is now; the current recording is closed and the next frame starts one."""
        setup = copy_setup(self._setup)
        plan = SetupFiles.of(setup)
        with self._lock:
            old, previous = self._take, self._plan
            self._finish()
            self._plan = plan
            self._cannot_start = False
            if old is not None and previous is not None:
                parts = plan.changes_from(previous)
                why = f"The {' and '.join(parts)} changed" if parts else "The source was reopened"
                self._closed_because = (why, old.name)
                self.note = f"{why}: recording {old.name} was closed; the next frames start a new session."
        return self._make_pipeline(setup)

    def ruled(self, frame_index: int, events: Sequence[Mapping[str, Any]],
              verdicts: Sequence[Mapping[str, Any]]) -> None:
        """Store what frame `frame_index` gave (on the writer thread, in order)."""
        take = self._take
        if take is None or take.failed or not (events or verdicts):
            return
        rows_events = [dict(e) for e in events]
        rows_verdicts = [{"type": "verdict", "frame": int(frame_index), **{k: x for k, x in v.items() if k != "frame"}}
                         for v in verdicts]

        def job() -> None:
            for e in rows_events:
                e.setdefault("frame", int(frame_index))
                take.store.add_event(e)
            for v in rows_verdicts:
                take.store.add_verdict(int(frame_index), v)

        self._submit(take, job)

    def declared(self, frame_index: int, action: Action) -> None:
        """A player's declared action ruled at `frame_index`: one fsynced line of declarations.jsonl, now."""
        with self._lock:
            take = self._take
            if take is None or take.failed:
                return
            try:
                take.declare(frame_index, action)
            except OSError as err:
                self._fail(take, f"Recording {take.name} stopped: declarations.jsonl cannot be written "
                                 f"({err.strerror or err}); free some disk space.")

    def close(self) -> None:
        """Finish the current recording (wait for its writes, mark it closed) and stop the writer thread."""
        with self._lock:
            self._stopped = True
            self._finish()
            writer, self._writer = self._writer, None
        if writer is not None:
            self._jobs.put(None)
            writer.join(10)

    # ---- frames ----

    def take_frame(self, frame: Frame, source: str) -> Frame:
        """Record `frame` (after the writer has finished every earlier write) and return it numbered as the
        recording numbers it."""
        with self._lock:
            self.drain()
            take = self._take
            if take is None and self._plan is not None and not (self._stopped or self._cannot_start):
                take = self._start(source)
            if take is None:
                return frame
            index = take.frames
            take.frames += 1
            if take.t0 is None:
                take.t0 = float(frame.t)
            t = max(round(float(frame.t) - take.t0, 6), take.last_t)
            take.last_t = t
            if not take.failed:
                source_index = int(frame.index)
                # the live run measures the very pixels the recording keeps (its JPEG's grey, decoded as a replay
                # decodes it: vision/sources.py Frame.of_jpeg), so that a replay of the folder gives the verdicts
                # given live; the page is shown the camera's own colour
                try:  # a phone's own JPEG is kept as it came (not compressed twice)
                    if frame.jpeg is not None:
                        encoded, kept = frame.jpeg, frame.renumbered(index, t)
                    else:
                        encoded = encode_frame(frame.image, RECORD_JPEG_QUALITY, index)
                        kept = Frame.of_jpeg(index, t, encoded, f"frame {index} of {take.name}", frame.image,
                                             getattr(frame, "at", None))
                except Exception as err:  # noqa: BLE001 - a frame that cannot be kept stops the recording, not the game
                    self._fail(take, f"Recording {take.name} stopped: frame {index} cannot be kept as a JPEG "
                                     f"({_reason(err)}); the frames before it are kept.")
                    return frame.renumbered(index, t)

                def job() -> None:
                    started = time.perf_counter()
                    entry = take.recorder.write(kept.gray, t, source_index=source_index, encoded=encoded)
                    take.store.add_frame(entry.index, entry.t, entry.file)
                    self.write_ms.append((time.perf_counter() - started) * 1000.0)
                    del self.write_ms[:-300]

                self._submit(take, job)
                return kept
            return frame.renumbered(index, t)

    def drain(self) -> None:
        """Wait until the writer has finished everything handed to it."""
        if self._writer is not None:
            self._jobs.join()

    # ---- inside ----

    def _start(self, source: str) -> _Take | None:
        assert self._plan is not None
        try:
            folder = claim_folder(self.sessions_dir, session_folder_name(self._plan.game, time.time()))
            take = _Take(folder, self._plan, source)
        except Exception as err:  # noqa: BLE001 - a recording that cannot start must not stop the live table
            log.warning("recording could not start", exc_info=True)
            self._cannot_start = True
            self.note = (f"Recording stopped: a session folder cannot be made in {self.sessions_dir} "
                         f"({getattr(err, 'strerror', None) or err}); check that folder, then restart the server.")
            return None
        self._take = take
        if self._closed_because is not None:
            why, old = self._closed_because
            self.note = f"{why}: recording {old} was closed, now recording {take.name}."
            self._closed_because = None
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="tablesight-recorder", daemon=True)
            self._writer.start()
        return take

    def _finish(self) -> None:
        take, self._take = self._take, None
        if take is None:
            return
        self.drain()
        try:
            take.close()
        except Exception:  # noqa: BLE001 - the frames already written stay; say nothing more than the log
            log.warning("closing recording %s failed", take.name, exc_info=True)
        self._closed_takes.append(take.name)

    def _submit(self, take: _Take, job: Callable[[], None]) -> None:
        def guarded() -> None:
            if take.failed:
                return
            try:
                job()
            except Exception as err:  # noqa: BLE001 - disk full, a removed folder: stop recording, keep playing
                log.warning("recording %s failed", take.name, exc_info=True)
                self._fail(take, f"Recording {take.name} stopped: {_reason(err)}; the frames before it are kept.")

        self._jobs.put(guarded)

    def _fail(self, take: _Take, message: str) -> None:
        take.failed = message
        self.note = message

    def _write_loop(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                job()
            finally:
                self._jobs.task_done()


class RecordedFeed:
    """A camera or video feed whose frames are recorded by `recording` as they are read; frames come out
    numbered as the recording numbers them. No `seek`: a live source cannot be sought."""

    def __init__(self, inner: Feed, recording: LiveRecording) -> None:
        self.inner = inner
        self.recording = recording
        source = getattr(inner, "source", None)
        self.description = str(getattr(source, "description", "") or getattr(inner, "description", "") or "live source")
        self.read_ahead = bool(getattr(inner, "read_ahead", True))
        """Whether the live loop may read the next frame before it has ruled this one (session/feed_ahead.py)."""

    def read(self) -> Frame | None:
        frame = self.inner.read()
        if frame is None:  # the video ended: everything recorded is on disk before the page says so
            self.recording.drain()
            return None
        return self.recording.take_frame(frame, self.description)

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.recording.drain()


def _reason(err: BaseException) -> str:
    if isinstance(err, OSError):
        return f"the disk refused a write ({err.strerror or err}); free some space or check the sessions folder"
    text = str(err).strip().rstrip(".")
    return text or type(err).__name__
