"""Record the live table: every frame from a camera, a phone or a video goes into one session folder as it arrives.

One `LiveRecording` per server stands between the live loop and its feed and pipeline factory:

- `feed(open_feed)` wraps the feed. Each frame is handed to a writer thread (`vision.recorder.Recorder`: its JPEG
  file, fsynced) and given to the pipeline numbered as the recording numbers it (0, 1, 2 ... and t in
  seconds from the recording's first frame, rounded as frames.jsonl keeps it), so the live run and a replay
  of the folder see the same frame indices and times. A frame in which nothing moved since the last one stored
  (vision/recorder.py `same_picture`: within the camera's noise) is not stored again: its index line names that
  stored frame's file, and the pipeline is handed that frame's pixels, so the live table and a replay measure the
  same pixels (nothing moved, nothing is ruled). A still table costs an index line and a store row a frame. Only a frame that decoded is recorded (a phone's frame
  that does not is dropped by its feed, session/phone_feed.py), so the recording holds no frame a replay
  cannot read.
- `make_pipeline()` builds the pipeline from a snapshot of the table setup. The first one's setup is the
  recording's (calibration.json, roster.json, terrain.json, setup.json copied in when the first frame starts the
  folder; the manifest names the "game", "setup", "declarations" and "setup_edits"). Every later one (the
  calibration, roster, terrain or game changed, or the source was reopened) is a line of setup_edits.jsonl at
  the frame it rules from (session/setup_edits.py), and the recording goes on: one evening, one session.
- A change of frame size starts a new segment of the same recording (the Recorder's manifest lists them); the
  page is told what that means for measuring.
- The loop reports what each frame gave (`ruled`: events and verdicts into the folder's session.sqlite, on
  the writer thread) and each declared action (`declared`: a line of declarations.jsonl with the frame it
  was ruled at, written by the writer thread in turn with the frames handed to it before, and fsynced before the
  player's request returns). A declaration is ruled between two frames, at the last one processed, whose file was
  handed to the writer before it: so a crash never leaves a declaration line at a frame whose file was not written.
  An action ruled with dice is kept with all its faces ("rolls") and where the newest came from ("dice":
  {"source", "camera_faces"}), the camera's moves Tablesight rolled for too; the manifest's "rolls": "recorded"
  says so, and a replay of such a recording never rolls (session/replay.py).

The two records of a session agree because the index is the one truth and the store is written ahead of it: for
each frame, in this order and each durable before the next, (1) its JPEG file, (2) once the live table has ruled
it, its events and verdicts, then its row of the store's frames table, (3) its line of frames.jsonl. So every
frame the index lists has its file and every row the live table stored for it, and a crash leaves at most the
store a frame or two ahead of the index (the frames being ruled and read ahead), which `ruled_live` and every
reader leave out: the readers (`tablesight replay`, the replay page, the session list, the battle report) read
the index only, and they need not open the store to agree with it. The index is the truth rather than the store
because the readers already read it and it lives in vision/, which may not ask session/ about the store; and a
frame the live table never ruled (a fault of ours on it) is listed when the next frame is ruled, or on close.

A full disk pauses the recording, not the table: frames go on being numbered and ruled but are not written, the
page says so, and every PROBE_S seconds the next frame is tried again (when the disk reports room for it); the
first that is written resumes the recording in a new segment, and the lines the disk refused meanwhile (setup
edits, declarations) are written first. Durability: before the loop takes the next frame it waits until the
writer has finished everything handed to it before, so a crash or a pulled plug loses at most the frames not yet
ruled (the one being ruled and the one read ahead: their files, and rows the index does not list). A folder is named by the local start time and game, e.g.
`2026-11-22_0451_valknut` (`_2`, `_3` ... if taken).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rules.engine import Action
from session.drivable import Feed, PipelineLike
from session.pending_roll import DiceAnswer
from session.setup_edits import EDITS_NAME, SetupEdit, SetupFiles, in_words
from session.store import SessionStore, StoredEvent
from session.table_setup import TableSetup
from vision.errors import FrameError
from vision.recorder import Recorder, encode_frame, same_picture
from vision.session_dir import frame_file_name, fsync_dir, open_session, write_json_atomic
from vision.sources import Frame, check_complete

log = logging.getLogger("tablesight.recording")

RECORD_JPEG_QUALITY = 80
"""JPEG quality of recorded frames (the browser's stream has its own, lower, setting). Measured on a rendered 1080p
table (28 tags of 0.75", 28 px an inch, noise sigma 1.5 / 3): every tag found at q 95 to 50; mean corner error
0.043 px at q 90, 0.042 at q 80, 0.045-0.047 at q 75, 0.054-0.056 at q 60; a frame takes 205 / 274 kB at q 90 and
126 / 153 kB at q 80. So q 80 keeps the detector's accuracy at ~60 % of q 90's bytes."""
STORE_NAME = "session.sqlite"
DECLARATIONS_NAME = "declarations.jsonl"
SETUP_NAME = "setup.json"
ROLLS_RECORDED = "recorded"
"""The manifest's "rolls": every roll the rules took is in the declarations (replayed with no generator)."""
LINE_WAIT_S = 10.0
"""How long a declaration waits for the writer to make its line durable before the request returns anyway."""
PROBE_S = 2.0
"""While the disk has no room, how often the next frame is tried again, seconds."""
HEADROOM_BYTES = 256 * 1024
"""Room the disk must report beyond a frame's size before a paused recording tries to write again."""


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


def ruled_live(directory: Path) -> tuple[list[StoredEvent], list[StoredEvent]]:
    """The events and the verdicts the live table stored in recorded session `directory` (its session.sqlite) for
    the frames its index lists, in the order they were stored: a crash may leave the store ahead of the index (the
    module docstring), and those rows are of frames no reader sees. Raises SessionError, StoreError naming the
    file."""
    session = open_session(directory)
    last = session.entries[-1].index if session.entries else -1
    with SessionStore(Path(directory) / STORE_NAME) as store:
        return ([e for e in store.events() if e.frame <= last], [v for v in store.verdicts() if v.frame <= last])


class _Lines:
    """An append-only JSON-lines file that holds whole lines only: each line is written in one `write` and fsynced
    before `append` returns; a line the disk takes only in part is cut off again (OSError raised), so the next one
    never follows a torn line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = os.fstat(self._fd).st_size

    def append(self, obj: Mapping[str, Any]) -> None:
        line = (json.dumps(obj) + "\n").encode("utf-8")
        try:
            if os.write(self._fd, line) != len(line):
                raise OSError(errno.ENOSPC, f"{self.path.name} took only part of a line")
            os.fsync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                log.warning("cutting the torn line off %s failed", self.path, exc_info=True)
            raise
        self._size += len(line)

    def close(self) -> None:
        os.close(self._fd)


class _Take:
    """The recording in progress: its folder, Recorder, session store, declarations and setup edits files; the loop
    thread makes it and hands frame writes to the writer thread, which alone touches the Recorder and the store
    after. Paused (`waiting`) while the disk has no room."""

    def __init__(self, directory: Path, plan: SetupFiles, source: str) -> None:
        self.directory = directory
        self.name = directory.name
        extra: dict[str, Any] = {"declarations": DECLARATIONS_NAME, "store": STORE_NAME, "setup_edits": EDITS_NAME,
                                 "rolls": ROLLS_RECORDED}
        if plan.game is not None:
            extra["game"] = plan.game
        if plan.game_setup is not None:
            extra["setup"] = SETUP_NAME
        self.recorder = Recorder(directory, source=source, calibration=plan.calibration, roster=plan.roster,
                                 terrain=plan.terrain, jpeg_quality=RECORD_JPEG_QUALITY, extra=extra)
        opened: list[Any] = [self.recorder]
        try:  # a full disk part way: what was opened is closed again, so a retry every few seconds leaks nothing
            if plan.game_setup is not None:
                write_json_atomic(directory / SETUP_NAME, plan.game_setup)
            self.declarations = _Lines(directory / DECLARATIONS_NAME)
            opened.append(self.declarations)
            self.edits = _Lines(directory / EDITS_NAME)
            opened.append(self.edits)
            fsync_dir(directory)
            self.store = SessionStore(directory / STORE_NAME)
            opened.append(self.store)
            self.store.begin_session(source=source, game=plan.game or "", meta={"recording": self.name})
        except BaseException:
            for thing in reversed(opened):
                with contextlib.suppress(Exception):
                    thing.close()
            raise
        self.frames = 0
        """Frames numbered (the next frame's index); the ones written are in the Recorder's index."""
        self.t0: float | None = None
        self.last_t = 0.0
        self.size: tuple[int, int] | None = None
        """(w, h) px of the frames of the segment being recorded."""
        self.waiting = ""
        """Why frames are not written now (the disk is full), "" while recording."""
        self.retry_at = 0.0
        """When (monotonic s) a paused recording tries the next frame again."""
        self.lost_from = 0
        """The first frame not recorded since the recording paused."""
        self.unwritten: list[tuple[_Lines, dict[str, Any]]] = []
        """Lines the disk refused (setup edits, declarations), in order, written before the next frame."""
        self.kept: Frame | None = None
        """The newest frame handed to the writer with a file of its own, as the live table measured it."""
        self.kept_file = ""
        """Its file's name: a frame in which nothing moved is recorded as that file again while it is the newest."""
        self.repeated = 0
        """Frames recorded as the file before them (nothing moved)."""

    def close(self) -> None:
        """Close the recorder (manifest: closed, frame count), the store and the lines files."""
        try:
            self.recorder.close()
        finally:
            self.store.close()
            self.declarations.close()
            self.edits.close()


class LiveRecording:
    """Records the live loop into `sessions_dir` (see the module docstring).

    setup: the live table's setup (read under its lock at each new pipeline). make_pipeline: the pipeline for a
    setup (session.runtime.make_pipeline). `name` is the folder being recorded (None before the first frame or
    while paused), `note` a sentence for the status bar about the recording (a setup edit, a new segment, a pause
    or its end).
    """

    def __init__(self, sessions_dir: Path, setup: TableSetup,
                 make_pipeline: Callable[[TableSetup], PipelineLike]) -> None:
        self.sessions_dir = Path(sessions_dir)
        self._setup = setup
        self._make_pipeline = make_pipeline
        self._lock = threading.RLock()
        self._lines_lock = threading.Lock()
        """Held while a lines file is appended to (the writer thread's declarations, the loop's setup edits)."""
        self._plan: SetupFiles | None = None
        self._take: _Take | None = None
        self._closed_takes: list[str] = []
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._stopped = False
        self._start_again_at = 0.0
        """A folder that could not be made is tried again from then (monotonic s)."""
        self._reopened = False
        """The source was (re)opened since the last pipeline: the next one starts the game afresh."""
        self._restarted = False
        """The players started a new game since the last pipeline: the next one starts it afresh."""
        self.note = ""
        self.write_ms: list[float] = []
        """How long the writer took for each of the last frames (JPEG encode, fsyncs, index line, store row), ms."""

    # ---- what the live loop is given ----

    @property
    def name(self) -> str | None:
        take = self._take
        return take.name if take is not None and not take.waiting else None

    @property
    def repeated(self) -> int:
        """Frames of the current recording recorded as the stored frame before them (nothing moved)."""
        take = self._take
        return take.repeated if take is not None else 0

    @property
    def recorded(self) -> list[str]:
        """Every folder this server recorded, oldest first (the current one last)."""
        with self._lock:
            return self._closed_takes + ([self._take.name] if self._take is not None else [])

    def feed(self, open_feed: Callable[[], Feed]) -> Callable[[], Feed]:
        """`open_feed` whose frames are recorded as they are read (see `RecordedFeed`)."""
        return lambda: RecordedFeed(open_feed(), self)

    def source_opened(self) -> None:
        """The loop (re)opened its source: its next pipeline starts the game afresh (no carry)."""
        with self._lock:
            self._reopened = True

    def game_restarted(self) -> None:
        """The players started a new game: the next pipeline starts it afresh (no carry), as its replay does."""
        with self._lock:
            self._restarted = True

    def make_pipeline(self) -> PipelineLike:
        """A pipeline for the setup as it is now. Once a recording runs, this is a setup edit at the next frame
        (a line of setup_edits.jsonl and an event in the store) and the recording goes on."""
        setup = copy_setup(self._setup)
        plan = SetupFiles.of(setup)
        with self._lock:
            reopened, restarted = self._reopened, self._restarted
            self._reopened = self._restarted = False
            previous, self._plan = self._plan, plan
            take = self._take
            if take is not None and previous is not None:
                self._edited(take, SetupEdit.between(take.frames, previous, plan, reopened or restarted),
                             "reopened" if reopened else "restarted" if restarted else "")
        return self._make_pipeline(setup)

    def ruled(self, frame_index: int, events: Sequence[Mapping[str, Any]],
              verdicts: Sequence[Mapping[str, Any]]) -> None:
        """Store what frame `frame_index` gave (on the writer thread, in order), then list it and every frame
        written before it in the index (the module docstring: the store ahead of the index)."""
        take = self._take
        if take is None:
            return
        rows_events = [dict(e) for e in events]
        rows_verdicts = [{"type": "verdict", "frame": int(frame_index), **{k: x for k, x in v.items() if k != "frame"}}
                         for v in verdicts]

        def job() -> None:
            written = any(e.index == frame_index for e in take.recorder.unlisted)
            if take.waiting and not written:  # the frame was not recorded: its replay is what the session will say
                return
            for e in rows_events:
                e.setdefault("frame", int(frame_index))
                take.store.add_event(e)
            for v in rows_verdicts:
                take.store.add_verdict(int(frame_index), v)
            self._list_through(take, int(frame_index))

        def undo() -> int:
            """A frame whose rows the store did not take in full is never listed, nor any frame after it: their
            files go, and the recording pauses from the first of them."""
            return min((e.index for e in take.recorder.drop_unlisted()), default=int(frame_index) + 1)

        self._submit(take, job, int(frame_index) + 1, undo)

    def declared(self, frame_index: int, action: Action) -> None:
        """A player's declared action ruled at `frame_index`: one fsynced line of declarations.jsonl, written by the
        writer thread after everything handed to it before (the frame's file among them), and durable before this
        returns (kept in memory, and written first when the disk has room again, if it is full). A DiceAnswer's
        line says where its faces came from ("dice")."""
        line: dict[str, Any] = {"frame": int(frame_index), "action": action.to_json()}
        if isinstance(action, DiceAnswer):
            line["dice"] = action.note()
        done = threading.Event()
        with self._lock:
            take = self._take
            if take is None:
                return

            def job() -> None:
                try:
                    with self._lines_lock:
                        self._keep_line(take, take.declarations, line)
                finally:
                    done.set()

            self._submit(take, job, take.frames)
        if not done.wait(LINE_WAIT_S):
            log.warning("recording %s: the declaration at frame %d is not on disk after %g s", take.name,
                        frame_index, LINE_WAIT_S)

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
            if take is None and self._plan is not None and not self._stopped \
                    and time.monotonic() >= self._start_again_at:
                take = self._start(source)
            if take is None:
                return frame
            index = take.frames
            take.frames += 1
            if take.t0 is None:
                take.t0 = float(frame.t)
            t = max(round(float(frame.t) - take.t0, 6), take.last_t)
            take.last_t = t
            source_index = int(frame.index)
            last = take.kept
            if last is not None and not take.waiting and take.recorder.last_file == take.kept_file \
                    and take.recorder.can_repeat(index) and _nothing_moved(frame, last):
                # nothing moved: the index names the last stored frame's file again, and the live table measures
                # that frame's pixels, as a replay will
                def again() -> None:
                    take.recorder.repeat(t, source_index=source_index, index=index)

                self._submit(take, again, index)
                take.repeated += 1
                return last.renumbered(index, t, getattr(frame, "at", None))
            # the live run measures the very pixels the recording keeps (its JPEG's grey, decoded as a replay
            # decodes it: vision/sources.py Frame.of_jpeg), so that a replay of the folder gives the verdicts
            # given live; the page is shown the camera's own colour
            try:  # a camera's or phone's own JPEG is kept as it came (not compressed twice) when it is whole
                if frame.jpeg is not None and _whole(frame.jpeg):
                    encoded, kept = frame.jpeg, frame.renumbered(index, t)
                else:
                    encoded = encode_frame(frame.image, RECORD_JPEG_QUALITY, index)
                    kept = Frame.of_jpeg(index, t, encoded, f"frame {index} of {take.name}", frame.image,
                                         getattr(frame, "at", None))
            except Exception as err:  # noqa: BLE001 - a frame that cannot be kept is left out, not the game
                log.warning("frame %d cannot be recorded", index, exc_info=True)
                self.note = (f"Frame {index} cannot be kept as a JPEG ({_reason(err)}), so it is not in recording "
                             f"{take.name}; the frames after it are recorded.")
                return frame.renumbered(index, t)
            self._note_size(take, kept.size, index)
            if take.waiting and not self._may_try(take, len(encoded)):
                return kept
            with self._lines_lock:
                written = self._write_unwritten(take)
            if not written:
                return kept
            take.kept, take.kept_file = kept, frame_file_name(index)

            def job() -> None:
                started = time.perf_counter()
                try:  # its file only: it is listed once ruled and stored (`ruled`)
                    take.recorder.write_file(kept.gray, t, source_index=source_index, encoded=encoded, index=index)
                except FrameError as err:  # this frame only (the next one starts a new segment)
                    self.note = f"Frame {index} is not in recording {take.name}: {str(err).rstrip('.')}."
                    return
                if take.waiting:
                    self._resumed(take, index)
                self.write_ms.append((time.perf_counter() - started) * 1000.0)
                del self.write_ms[:-300]

            self._submit(take, job, index)
            return kept

    def drain(self) -> None:
        """Wait until the writer has finished everything handed to it."""
        if self._writer is not None:
            self._jobs.join()

    # ---- inside ----

    def _list_through(self, take: _Take, index: int) -> None:
        """On the writer thread: list every frame written up to frame `index` (its store row, then its index
        line), oldest first."""
        for entry in take.recorder.unlisted:
            if entry.index > index:
                break
            take.store.add_frame(entry.index, entry.t, entry.file)
            take.recorder.list_frame(entry)

    def _start(self, source: str) -> _Take | None:
        assert self._plan is not None
        folder: Path | None = None
        try:
            folder = claim_folder(self.sessions_dir, session_folder_name(self._plan.game, time.time()))
            take = _Take(folder, self._plan, source)
        except Exception as err:  # noqa: BLE001 - a recording that cannot start must not stop the live table
            log.warning("recording could not start (%s)", err, exc_info=not isinstance(err, OSError))
            if folder is not None:  # made just now, holding no frame: it is not left as an empty session
                shutil.rmtree(folder, ignore_errors=True)
            self._start_again_at = time.monotonic() + PROBE_S
            self.note = (f"Recording cannot start: a session folder cannot be made in {self.sessions_dir} "
                         f"({getattr(err, 'strerror', None) or err}); free some space or check that folder, and it "
                         f"starts by itself (tried every {PROBE_S:g} s).")
            return None
        self._take = take
        self.note = ""
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="tablesight-recorder", daemon=True)
            self._writer.start()
        return take

    def _edited(self, take: _Take, edit: SetupEdit, afresh_because: str = "") -> None:
        """A new pipeline from frame `edit.frame` on: its line, its event in the store, and a sentence
        (`afresh_because`: "reopened", the source, or "restarted", by the players)."""
        with self._lines_lock:
            self._keep_line(take, take.edits, edit.to_json())
        row = {"type": "setup_edit", "frame": edit.frame, "changed": list(edit.changed), "afresh": edit.afresh}

        def job() -> None:
            take.store.add_event(row)

        self._submit(take, job, edit.frame)
        if edit.afresh:
            why = "A new game was started" if afresh_because == "restarted" else "The source was reopened"
            self.note = (f"{why} at frame {edit.frame}; recording {take.name} goes on and the game "
                         "starts afresh there, as its replay does.")
        elif edit.changed:
            self.note = (f"{in_words(edit.changed)[:1].upper()}{in_words(edit.changed)[1:]} changed at frame "
                         f"{edit.frame}; recording {take.name} goes on with it, and its replay rules the frames "
                         "from there with it.")

    def _keep_line(self, take: _Take, lines: _Lines, obj: dict[str, Any]) -> None:
        """Append `obj` to `lines` now, or keep it for when the disk has room (the loop's thread, under the lock)."""
        if take.waiting or take.unwritten:
            take.unwritten.append((lines, obj))
            return
        try:
            lines.append(obj)
        except OSError as err:
            take.unwritten.append((lines, obj))
            self._pause(take, err, take.frames)

    def _write_unwritten(self, take: _Take) -> bool:
        """Write the lines the disk refused, in order; False (still paused) if it refuses again."""
        while take.unwritten:
            lines, obj = take.unwritten[0]
            try:
                lines.append(obj)
            except OSError as err:
                self._pause(take, err, take.frames - 1)
                return False
            take.unwritten.pop(0)
        return True

    def _may_try(self, take: _Take, size: int) -> bool:
        """Whether a paused recording tries this frame: PROBE_S since the last try, and the disk reports room."""
        now = time.monotonic()
        if now < take.retry_at:
            return False
        take.retry_at = now + PROBE_S
        try:
            free = shutil.disk_usage(take.directory).free
        except OSError:
            return False
        return free >= size + HEADROOM_BYTES

    def _note_size(self, take: _Take, size: tuple[int, int], index: int) -> None:
        """A frame of another size than the one before starts a new segment (the Recorder's); say what that
        means for measuring: a calibration belongs to the frame size it was made at."""
        before, take.size = take.size, size
        if before is None or before == size:
            return
        cal = self._plan.calibration if self._plan is not None else None
        made = cal.get("image_size") if cal is not None else None
        w, h = size
        said = (f"The frames are now {w}x{h} px (they were {before[0]}x{before[1]}) from frame {index}: recording "
                f"{take.name} goes on in a new segment")
        if not (isinstance(made, list) and len(made) == 2):
            self.note = said + "."
        elif tuple(made) == size:
            self.note = said + f"; the table was calibrated at {w}x{h}, so they are measured again."
        else:
            self.note = (said + f"; the table was calibrated at {made[0]}x{made[1]}, so these frames are recorded but "
                         f"not measured until the camera is back at {made[0]}x{made[1]} or the table is calibrated "
                         "again at this size.")

    def _pause(self, take: _Take, err: BaseException, index: int) -> None:
        """The disk refused a write: frames from `index` on are not recorded until it has room (tried every
        PROBE_S s); the table goes on."""
        take.retry_at = time.monotonic() + PROBE_S
        if take.waiting:
            return
        take.lost_from = index
        take.waiting = _reason(err)
        self.note = (f"Recording {take.name} is paused from frame {index}: {take.waiting}. The live table goes on, "
                     f"and the recording goes on by itself once there is room (checked every {PROBE_S:g} s).")

    def _resumed(self, take: _Take, index: int) -> None:
        """Frame `index` was written after a pause: the recording goes on (a new segment)."""
        lost = f"frame {take.lost_from}" if index - take.lost_from == 1 else f"frames {take.lost_from} to {index - 1}"
        take.waiting = ""
        self.note = (f"Recording {take.name} goes on from frame {index}: the disk has room again ({lost} "
                     f"{'was' if index - take.lost_from == 1 else 'were'} not recorded).")
        take.store.add_event({"type": "not_recorded", "frame": take.lost_from, "to": index - 1,
                              "message": f"The disk was full: {lost} {'was' if index - take.lost_from == 1 else 'were'} "
                                         "not recorded."})

    def _finish(self) -> None:
        take, self._take = self._take, None
        if take is None:
            return
        # a frame the live table took but never ruled (a fault of ours on it) is listed as it is: it was recorded
        self._submit(take, lambda: self._list_through(take, take.frames), take.frames,
                     lambda: min((e.index for e in take.recorder.drop_unlisted()), default=take.frames))
        self.drain()
        if take.unwritten and not self._write_unwritten(take):
            log.warning("recording %s closed with %d lines the disk refused", take.name, len(take.unwritten))
        try:
            take.close()
        except Exception:  # noqa: BLE001 - the frames already written stay; say nothing more than the log
            log.warning("closing recording %s failed", take.name, exc_info=True)
        self._closed_takes.append(take.name)

    def _submit(self, take: _Take, job: Callable[[], None], index: int,
                undo: Callable[[], int] | None = None) -> None:
        """Run `job` on the writer thread; a failure (the disk is full, a folder removed) pauses the recording
        from frame `index` on (or from the frame `undo()`, run on the writer thread, says)."""
        def guarded() -> None:
            try:
                job()
            except Exception as err:  # noqa: BLE001 - disk full, a removed folder: pause recording, keep playing
                log.warning("recording %s: a write failed", take.name, exc_info=not isinstance(err, OSError))
                self._pause(take, err, undo() if undo is not None else index)

        self._jobs.put(guarded)

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
        recording.source_opened()
        self._problem = ""
        source = getattr(inner, "source", None)
        self.description = str(getattr(source, "description", "") or getattr(inner, "description", "") or "live source")
        self.read_ahead = bool(getattr(inner, "read_ahead", True))
        """Whether the live loop may read the next frame before it has ruled this one (session/feed_ahead.py)."""

    def read(self) -> Frame | None:
        frame = self.inner.read()
        if frame is None:  # the video ended: everything recorded is on disk before the page says so
            self.recording.drain()
            return None
        problem = getattr(self.inner, "problem", "")  # a frame the source skipped (a phone's that did not decode)
        if isinstance(problem, str) and problem and problem != self._problem:
            self._problem = self.recording.note = problem
        return self.recording.take_frame(frame, self.description)

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.recording.drain()


def _nothing_moved(frame: Frame, last: Frame) -> bool:
    """Whether `frame` shows what `last` (the newest stored frame, as decoded) shows, within the camera's noise
    (vision/recorder.py `same_picture`); False for a frame whose grey cannot be had (it is then encoded and kept)."""
    try:
        return last.size == frame.size and same_picture(frame.gray, last.gray)
    except Exception:  # noqa: BLE001 - a frame that cannot be compared is kept as it is
        return False


def _whole(jpeg: bytes) -> bool:
    """Whether a replay reads `jpeg` as it is (not cut short): else the frame is recorded as its image encoded."""
    try:
        check_complete(jpeg, "a frame")
    except FrameError:
        return False
    return True


def _reason(err: BaseException) -> str:
    if isinstance(err, OSError):
        return f"the disk refused a write ({err.strerror or err}); free some space in the sessions folder"
    text = str(err).strip().rstrip(".")
    if "full" in text.lower():  # SQLite's "database or disk is full"
        return f"the disk refused a write ({text}); free some space in the sessions folder"
    return text or type(err).__name__
