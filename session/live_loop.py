"""The live loop: pull frames from a feed on its own thread, run the pipeline, publish the newest result.

One `LiveLoop` per thing being watched (the camera, or a recorded session on the replay page). Its thread
reads a frame, runs `Pipeline.process`, builds the frame's message and hands it to a `FramePublisher`,
whose own thread encodes the JSON and the JPEG once and publishes them on a `Broadcast`; browsers watch
the broadcast and skip frames they are too slow for, so no watcher slows the pipeline. A recording is paced at its recorded speed (times `speed`) and can be paused, stepped and
sought; a camera that stops delivering frames is reported ("lost") and reopened once a second.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast, runtime_checkable

import numpy as np

from calibration.errors import InputError
from calibration.table import TableCalibration
from rules.engine import Action, ActionError, Game, Placement, RulesInputError, UnitId
from rules.roster import Roster
from session.broadcast import Broadcast
from session.frame_message import (
    board_of,
    image_shapes,
    move_trail_overlays,
    owner_colours,
    round_overlay,
    tag_shapes,
    unit_list,
)
from session.frame_publisher import FramePublisher
from session.overrule import correction_of, overrule_key
from vision.tags import detect_tags, gray_frame

log = logging.getLogger("tablesight.live")

WARMUP_FRAMES = 12
"""Frames processed silently before a sought-to frame, so that tracks settle as they would in play."""
EVENT_LOG_SIZE = 5000
DECLARE_TIMEOUT_S = 10.0
"""How long a declaration waits for the loop to rule it before the request gives up."""


class NoGameToRule(InputError):
    """A declaration while no game is being ruled (no calibration, no game chosen, or a setup it cannot start from)."""


class LoopNotReady(InputError):
    """A declaration the frame loop did not rule in time (the camera is lost or the loop has stopped)."""


class Feed(Protocol):
    """Frames from a camera, a video or a recording. `read` returns None at the end of a recording."""

    def read(self) -> Any | None: ...

    def close(self) -> None: ...


@runtime_checkable
class SeekableFeed(Feed, Protocol):
    def seek(self, index: int) -> None: ...

    def __len__(self) -> int: ...


class JsonEvent(Protocol):
    """A typed event of a frame (vision.tracker's Move, Placed ..., session.pipeline's CameraMoved)."""

    def to_json(self) -> dict[str, Any]: ...


class FrameLike(Protocol):
    """What one frame gave (session.pipeline.FrameResult, or DetectedFrame before the table is calibrated):
    positions and overlays in table inches, `image` the BGR frame, `calibration` None when uncalibrated."""

    @property
    def frame_index(self) -> int: ...
    @property
    def t(self) -> float: ...
    @property
    def image(self) -> np.ndarray: ...
    @property
    def tags(self) -> tuple[Any, ...]: ...
    @property
    def fixes(self) -> tuple[Any, ...]: ...
    @property
    def events(self) -> tuple[JsonEvent, ...]: ...
    @property
    def verdicts(self) -> tuple[Any, ...]: ...
    @property
    def overlays(self) -> tuple[Any, ...]: ...
    @property
    def board(self) -> Mapping[str, float] | None: ...
    @property
    def calibration(self) -> Any: ...
    @property
    def timings_ms(self) -> Mapping[str, float]: ...


class PipelineLike(Protocol):
    """Everything the live loop drives: session.pipeline.Pipeline on a calibrated table, DetectOnly before."""

    @property
    def calibrated(self) -> bool:
        """Whether it measures a calibrated table (and so may rule a game)."""
    @property
    def game(self) -> Game | None: ...
    @property
    def state(self) -> Any: ...
    @property
    def positions(self) -> Mapping[UnitId, Placement]: ...
    @property
    def status(self) -> str: ...

    def process(self, frame: Any, declared: Sequence[Action] = ()) -> FrameLike: ...

    def declare(self, action: Action) -> list[dict[str, Any]]: ...

    def overlays_now(self) -> list[dict[str, Any]]: ...

    def overlays_for(self, selected: int) -> list[dict[str, Any]]: ...

    def checkpoint(self, frame: int) -> Any: ...

    def resume(self, cp: Any) -> None: ...

    def ask(self, unit: int, target: int) -> dict[str, Any]: ...


class LoopRecorder(Protocol):
    """What records a live loop (session/recording.py): told what each published frame gave and each declared
    action with the frame it was ruled at; `name` (the folder being recorded) and `note` go into the status."""

    @property
    def name(self) -> str | None: ...

    note: str

    def ruled(self, frame_index: int, events: Sequence[Mapping[str, Any]],
              verdicts: Sequence[Mapping[str, Any]]) -> None: ...

    def declared(self, frame_index: int, action: Action) -> None: ...


AtEnd = Literal["loop", "pause"]


@dataclass(frozen=True)
class DetectedFrame:
    """What `DetectOnly` gives: the frame and its tags, no table (there is no calibration yet)."""

    frame_index: int
    t: float
    image: np.ndarray
    tags: tuple[Any, ...]
    timings_ms: Mapping[str, float]
    fixes: tuple[Any, ...] = ()
    events: tuple[Any, ...] = ()
    verdicts: tuple[Any, ...] = ()
    overlays: tuple[Any, ...] = ()
    board: Mapping[str, float] | None = None
    calibration: Any = None


class DetectOnly:
    """The pipeline of an uncalibrated table: find the tags (so the calibration wizard can show the anchors).
    It rules nothing: no game, no positions, a declaration is refused in one sentence."""

    calibrated = False
    game: Game | None = None
    state: Any = None

    def __init__(self) -> None:
        self.positions: Mapping[UnitId, Placement] = {}

    @property
    def status(self) -> str:
        return "the table is not calibrated yet: tags only"

    def declare(self, action: Action) -> list[dict[str, Any]]:
        raise NoGameToRule("No game is being ruled: the table is not calibrated yet; calibrate it first.")

    def overlays_now(self) -> list[dict[str, Any]]:
        return []

    def overlays_for(self, selected: int) -> list[dict[str, Any]]:
        return []

    def checkpoint(self, frame: int) -> None:
        return None

    def resume(self, cp: Any) -> None:
        return None

    def ask(self, unit: int, target: int) -> dict[str, Any]:
        return {}

    def process(self, frame: Any, declared: Sequence[Action] = ()) -> DetectedFrame:
        t0 = time.perf_counter()
        tags = detect_tags(gray_frame(frame.image))
        ms = (time.perf_counter() - t0) * 1000.0
        return DetectedFrame(int(frame.index), float(frame.t), frame.image, tags, {"detect": ms})


@dataclass(frozen=True)
class LoopStatus:
    """What the page shows in its status bar. status: "starting", "ok", "lost", "ended", "paused", "error"."""

    status: str
    message: str
    fps: float
    latency_ms: float
    frame_index: int
    frames: int | None
    playing: bool
    speed: float
    watchers: int
    recording: str | None = None
    """The session folder this loop is being recorded into (None: not recording)."""
    recording_note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "fps": round(self.fps, 1),
            "latency_ms": round(self.latency_ms, 1),
            "frame_index": self.frame_index,
            "frames": self.frames,
            "playing": self.playing,
            "speed": self.speed,
            "watchers": self.watchers,
            "recording": self.recording,
            "recording_note": self.recording_note,
        }


class LiveLoop:
    """A frame loop on its own thread; see the module docstring.

    open_feed: makes (or re-makes, after a loss) the feed. make_pipeline: a fresh pipeline (after a seek
    backwards, a loop of the recording, or a change of game, roster or terrain). checkpoint_before(frame):
    a pipeline checkpoint from before that frame, or None (a recording's timeline keeps them).
    paced: play a recording at its recorded speed rather than as fast as frames come.
    at_end: what a recording does when it ends: start again ("loop") or stop on its last frame ("pause").
    """

    def __init__(
        self,
        open_feed: Callable[[], Feed],
        make_pipeline: Callable[[], PipelineLike],
        *,
        roster: Callable[[], Roster | None] = lambda: None,
        paced: bool = True,
        at_end: AtEnd = "loop",
        jpeg_quality: int = 80,
        name: str = "live",
        frames: int | None = None,
        checkpoint_before: Callable[[int], Any | None] = lambda frame: None,
    ) -> None:
        self.name = name
        self.broadcast = Broadcast()
        self._checkpoint_before = checkpoint_before
        self._open_feed = open_feed
        self._make_pipeline = make_pipeline
        self._roster = roster
        self._paced = paced
        self._at_end: AtEnd = at_end
        self._encoder = FramePublisher(self.broadcast, jpeg_quality, name, on_published=self._published)
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stop = False
        self._playing = True
        self._step = 0
        self._speed = 1.0
        self._seek_to: int | None = None
        self._rebuild = False
        self._selected: int | None = None
        self._status = "starting"
        self._message = "Opening the source."
        self._fps = 0.0
        self._latency_ms = 0.0
        self.frames_processed = 0
        self._last_fault = ""
        """Frames the pipeline has processed and handed on for showing (the frame rate benchmarks count these)."""
        self._frame_index = -1
        self._frames: int | None = frames
        self._last_pub = 0.0
        self._moves: dict[int, dict[str, Any]] = {}
        self.events: deque[dict[str, Any]] = deque(maxlen=EVENT_LOG_SIZE)
        self.latest_result: FrameLike | None = None
        self.latest_positions: dict[int, dict[str, Any]] = {}
        self._pipeline: PipelineLike | None = None
        self._declared: deque[tuple[Action, Future[list[dict[str, Any]]]]] = deque()
        self.store: Any = None
        """A SessionStore that is recording this loop, or None: declared actions and their verdicts go into it."""
        self.recorder: LoopRecorder | None = None
        """What records this loop (camera and video sources), or None."""

    # ---- control (any thread) ----

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"tablesight-{self.name}", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        self._encoder.close(timeout)

    def play(self) -> None:
        with self._cond:
            self._playing = True
            if self._status in ("ended", "paused"):
                self._status = "ok"
            self._cond.notify_all()

    def pause(self) -> None:
        with self._cond:
            self._playing = False
            self._cond.notify_all()

    def step(self) -> None:
        """Show the next frame while paused."""
        with self._cond:
            self._step += 1
            self._cond.notify_all()

    def set_speed(self, speed: float) -> None:
        if not (isinstance(speed, int | float) and 0.05 <= speed <= 16 and math.isfinite(speed)):
            raise InputError(f"Speed {speed!r} is not between 0.05 and 16; pick e.g. 0.5, 1 or 2.")
        with self._cond:
            self._speed = float(speed)
            self._cond.notify_all()

    def seek(self, frame_index: int) -> None:
        frames = self._frames
        if frames is None:
            raise InputError("This source is live and cannot be sought; only recordings can.")
        if not 0 <= frame_index < frames:
            raise InputError(f"Frame {frame_index} is outside this recording (0 to {frames - 1}).")
        with self._cond:
            self._seek_to = int(frame_index)
            self._cond.notify_all()

    def select(self, unit: int | None) -> None:
        with self._cond:
            self._selected = unit
            if not self._playing:
                self._step += 1  # redraw the paused frame with the new selection
            self._cond.notify_all()

    @property
    def selected(self) -> int | None:
        return self._selected

    def rebuild(self) -> None:
        """Make a fresh pipeline before the next frame (game, roster, terrain or calibration changed)."""
        with self._cond:
            self._rebuild = True
            if not self._playing:
                self._step += 1
            self._cond.notify_all()

    @property
    def pipeline(self) -> PipelineLike | None:
        return self._pipeline

    def declare(self, action: Action, timeout: float = DECLARE_TIMEOUT_S) -> list[dict[str, Any]]:
        """Rule an action the players declared (one the camera cannot see) and return its verdicts as JSON.

        The pipeline is not thread-safe, so the loop's own thread rules it: with the next frame while playing
        (`process(frame, declared=[action])`), at once on the shown frame while paused. A malformed action
        raises RulesInputError here, before it is queued (a dry run on the current state, which is immutable).
        """
        pipe = self._pipeline
        if pipe is None or not pipe.calibrated:
            raise NoGameToRule("No game is being ruled: the table is not calibrated yet; calibrate it first.")
        game, state = pipe.game, pipe.state
        if game is None or state is None:
            raise NoGameToRule(f"No game is being ruled ({pipe.status}); choose a game and a roster it can start "
                               "from.")
        try:  # the dry run: a malformed action is refused here and never reaches the loop's thread
            if action.kind == "overrule":
                overrule_key(action)
            elif action.kind == "correct":
                correction_of(action)
            else:
                game.apply(state, dict(pipe.positions), action, random.Random(0))
        except RulesInputError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
            raise ActionError(f"{game.name} cannot read the action {action.to_json()} ({type(err).__name__}: {err}); "
                              "check its kind and params against the legal actions.") from None
        done: Future[list[dict[str, Any]]] = Future()
        with self._cond:
            self._declared.append((action, done))
            self._cond.notify_all()
        try:
            return done.result(timeout)
        except FutureTimeout:
            with self._cond:
                if (action, done) in self._declared:
                    self._declared.remove((action, done))
            raise LoopNotReady(f"The frame loop did not rule the declaration within {timeout:g} s ({self._status}: "
                               f"{self._message or 'no detail'}); wait for the camera and declare it again.") from None

    def _published(self, latency_ms: float) -> None:
        """The encoder's word that a frame is out: its latency from the frame being read, ms."""
        self._latency_ms = latency_ms

    def status(self) -> LoopStatus:
        return LoopStatus(
            status=self._status,
            message=self._message,
            fps=self._fps,
            latency_ms=self._latency_ms,
            frame_index=self._frame_index,
            frames=self._frames,
            playing=self._playing,
            speed=self._speed,
            watchers=self.broadcast.watchers,
            recording=self.recorder.name if self.recorder is not None else None,
            recording_note=self.recorder.note if self.recorder is not None else "",
        )

    def wait_for_frame(self, timeout: float = 10.0) -> bool:
        """Block until a frame has been published (tests and start-up)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.broadcast.latest_frame is not None:
                return True
            time.sleep(0.02)
        return False

    # ---- the thread ----

    def _set_status(self, status: str, message: str) -> None:
        changed = (status, message) != (self._status, self._message)
        self._status, self._message = status, message
        if changed:
            if status in ("paused", "ended"):
                self._encoder.show_picture()  # the frame now shown for good gets its picture, watched or not
            self._encoder.flush()  # a frame still being encoded goes out first: a status never jumps ahead of it
            self.broadcast.publish("status", json.dumps({"type": "status", **self.status().to_json()}))

    def _wait(self, seconds: float) -> None:
        with self._cond:
            if not self._stop:
                self._cond.wait(seconds)

    def _run(self) -> None:
        feed: Feed | None = None
        anchor: tuple[float, float] | None = None  # (wall clock, frame t) for pacing
        try:
            while not self._stop:
                if feed is None:
                    try:
                        feed = self._open_feed()
                        self._frames = len(feed) if isinstance(feed, SeekableFeed) else None
                        self._pipeline = self._make_pipeline()
                        self._moves.clear()
                        anchor = None
                    except Exception as err:  # noqa: BLE001 - any failure to open is shown, then retried
                        self._set_status("lost", _sentence(err, "The source could not be opened"))
                        self._wait(1.0)
                        continue
                with self._cond:
                    seek, self._seek_to = self._seek_to, None
                    rebuild, self._rebuild = self._rebuild, False
                    proceed = self._playing or self._step > 0 or seek is not None
                    if self._step > 0 and not self._playing and seek is None:
                        self._step -= 1
                    pending = [] if proceed else list(self._declared)
                    if pending:
                        self._declared.clear()
                    if not proceed and not pending:
                        if self._status == "ok":
                            self._set_status("paused", "Paused.")
                        self._cond.wait(0.5)
                        continue
                if pending:
                    self._declare_paused(pending)
                    continue
                if rebuild:
                    self._pipeline = self._make_pipeline()
                    self._moves.clear()
                    if not self._playing and self._frame_index >= 0 and isinstance(feed, SeekableFeed):
                        seek = self._frame_index  # redraw the paused frame through the new pipeline
                if seek is not None and isinstance(feed, SeekableFeed):
                    self._seek(feed, seek)
                    anchor = None
                try:
                    frame = feed.read()
                    captured_at = time.time()  # wall clock when the frame arrived (end-to-end latency)
                except Exception as err:  # noqa: BLE001 - a camera that fails is reported and reopened
                    self._set_status("lost", _sentence(err, "The camera stopped delivering frames"))
                    _close(feed)
                    feed = None
                    self._wait(1.0)
                    continue
                if frame is None:
                    if self._at_end == "loop" and self._frames:
                        _close(feed)
                        feed = None
                        continue
                    with self._cond:
                        self._playing = False
                    self._set_status("ended", "The recording has ended.")
                    continue
                started = time.perf_counter()
                with self._cond:
                    decl = self._declared.popleft() if self._declared else None
                try:
                    assert self._pipeline is not None
                    result = self._pipeline.process(frame, declared=[decl[0]] if decl is not None else ())
                except InputError as err:
                    if decl is not None:
                        decl[1].set_exception(err)
                    self._set_status("error", str(err))
                    self._wait(0.5)
                    continue
                except Exception as err:  # noqa: BLE001 - a fault of ours on one frame must not end the watching
                    fault = f"{type(err).__name__}: {err}"
                    if fault != self._last_fault:  # logged once, not thirty times a second
                        log.exception("live loop %s: frame %d failed", self.name, self._frame_index + 1)
                        self._last_fault = fault
                    if decl is not None:
                        decl[1].set_exception(LoopNotReady(f"The declaration could not be ruled ({fault}); "
                                                           "see the server log, then declare it again."))
                    self._set_status("error", f"A frame could not be measured because of an internal fault ({fault}); "
                                     "the next frames are still tried. See the server log and report it.")
                    self._wait(0.1)
                    continue
                t = float(result.t)
                if self._paced and self._playing and anchor is not None:
                    due = anchor[0] + (t - anchor[1]) / self._speed
                    delay = due - time.monotonic()
                    if delay > 0:
                        self._wait(min(delay, 2.0))
                    elif delay < -0.5:  # far behind (slow machine): do not try to catch up
                        anchor = None
                if anchor is None or not self._playing:
                    anchor = (time.monotonic(), t)
                self._publish(result, started, captured_at)
                if decl is not None and self._pipeline.calibrated:
                    if self.recorder is not None:
                        self.recorder.declared(int(result.frame_index), decl[0])
                    decl[1].set_result([v for v in result.verdicts if v.get("event") == "declared"])
                elif decl is not None:
                    decl[1].set_exception(NoGameToRule("No game is being ruled now; choose a game first."))
                if self._status != "ok" or not self._playing:
                    if self._playing:
                        self._set_status("ok", "")
                    elif self._status not in ("paused",):
                        self._set_status("paused", "Paused.")
        except Exception:  # pragma: no cover - a fault of ours: keep the reason for the page and the log
            log.exception("live loop %s failed", self.name)
            self._set_status("error", "The frame loop stopped on an internal fault; see the server log.")
        finally:
            if feed is not None:
                _close(feed)

    def _declare_paused(self, pending: Sequence[tuple[Action, Future[list[dict[str, Any]]]]]) -> None:
        """Rule declarations while paused: at once, on the shown frame, then show that frame again with them."""
        pipe, base = self._pipeline, self.latest_result
        frame = self._frame_index
        ruled: list[tuple[Future[list[dict[str, Any]]], list[dict[str, Any]]]] = []
        for action, done in pending:
            if pipe is None or not pipe.calibrated or base is None:
                done.set_exception(NoGameToRule("No game is being ruled on the shown frame; choose a game first."))
                continue
            try:
                verdicts = [{**v, "frame": frame, "event": "declared", "action": action.to_json()}
                            for v in pipe.declare(action)]
            except InputError as err:
                done.set_exception(err)
                continue
            if self.recorder is not None:
                self.recorder.declared(frame, action)
            ruled.append((done, verdicts))
        if ruled and base is not None and pipe is not None:
            # the shown frame again (a frozen dataclass: FrameResult), with the declarations' verdicts
            again = dataclasses.replace(cast(Any, base), events=(), overlays=tuple(pipe.overlays_now()),
                                        verdicts=tuple(v for _, vs in ruled for v in vs))
            self._publish(again, time.perf_counter(), time.time())
            self._encoder.flush()
        for done, verdicts in ruled:
            done.set_result(verdicts)

    def _seek(self, feed: Any, target: int) -> None:
        """Go to frame `target`: from the newest checkpoint before it (the game as it stood), else by
        playing WARMUP_FRAMES silently before it through a fresh pipeline (positions right, game restarted)."""
        self._pipeline = self._make_pipeline()
        self._moves.clear()
        cp = self._checkpoint_before(target)
        if cp is not None:
            self._pipeline.resume(cp)
            start = int(cp.frame) + 1
        else:
            start = max(0, target - WARMUP_FRAMES)
        feed.seek(start)
        for _ in range(target - start):
            frame = feed.read()
            if frame is None:
                break
            try:
                result = self._pipeline.process(frame)
            except Exception as err:  # noqa: BLE001 - a frame on the way that fails is skipped, as a shown one is
                fault = f"{type(err).__name__}: {err}"
                if fault != self._last_fault:
                    log.warning("live loop %s: frame %s failed while seeking to %d", self.name,
                                getattr(frame, "index", "?"), target, exc_info=not isinstance(err, InputError))
                    self._last_fault = fault
                continue
            self._note_events(result)

    def _note_events(self, result: FrameLike) -> list[dict[str, Any]]:
        events = [e.to_json() for e in result.events]
        for e in events:
            e.setdefault("frame", int(result.frame_index))
            if e.get("type") == "move" and isinstance(e.get("tag"), int):
                self._moves[e["tag"]] = e
        return events

    def _publish(self, result: FrameLike, started: float, captured_at: float) -> None:
        events = self._note_events(result)
        verdicts = [dict(v) for v in result.verdicts]
        if self.recorder is not None:
            self.recorder.ruled(int(result.frame_index), events, verdicts)
        known = {(e.get("frame"), e.get("type"), e.get("tag"), e.get("rule")) for e in list(self.events)[-200:]}
        for e in events:
            if (e.get("frame"), e.get("type"), e.get("tag"), e.get("rule")) not in known:
                self.events.append(e)
        for v in verdicts:
            declared = v.get("event") == "declared"
            if declared or v.get("outcome") in ("illegal", "too close to call"):
                entry = {"type": "verdict", "frame": int(result.frame_index), **v}
                if declared or (entry["frame"], "verdict", None, v.get("rule")) not in known:
                    self.events.append(entry)
                if declared and self.store is not None:
                    self.store.add_verdict(entry["frame"], entry)
        roster = self._roster()
        message = build_frame_message(
            result,
            roster=roster,
            selected=self._selected,
            selected_overlays=self._selected_overlays(result),
            moves=list(self._moves.values()),
            events=events,
            verdicts=verdicts,
        )
        now = time.monotonic()
        if self._last_pub:
            dt = now - self._last_pub
            if dt > 0:
                self._fps = 1.0 / dt if self._fps == 0 else 0.85 * self._fps + 0.15 / dt
        self._last_pub = now
        self._frame_index = int(result.frame_index)
        self.latest_result = result
        self.latest_positions = {u["tag"]: u for u in message["units"]}
        message["pipeline_status"] = self._pipeline.status if self._pipeline is not None else ""
        message["captured_at"] = round(captured_at, 4)  # time.time() when the frame was read, seconds
        message["status"] = self.status().to_json()
        message["status"]["status"] = "ok" if self._playing else "paused"
        self.frames_processed += 1
        # a paused frame stays on show: it gets its picture even with nobody watching yet
        self._encoder.submit(message, result.image, started, picture=not self._playing)

    def _selected_overlays(self, result: FrameLike) -> list[dict[str, Any]]:
        """The selected unit's rings and bands, asked of the pipeline's game (empty with nothing selected)."""
        if self._selected is None or self._pipeline is None:
            return []
        try:
            return [o if isinstance(o, dict) else o.to_json() for o in self._pipeline.overlays_for(self._selected)]
        except InputError:
            return []


def build_frame_message(
    result: FrameLike,
    *,
    roster: Roster | None,
    selected: int | None = None,
    selected_overlays: Sequence[Mapping[str, Any]] = (),
    moves: Sequence[Mapping[str, Any]] = (),
    events: Sequence[Mapping[str, Any]] = (),
    verdicts: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The JSON the page draws one frame from (inch overlays for the board, pixel shapes for the image)."""
    colours = owner_colours(roster)
    units = unit_list(result.fixes, roster, colours)
    overlays = [round_overlay(o) for o in result.overlays]
    overlays += [round_overlay(o) for o in selected_overlays]
    overlays += selection_rings(selected, units, overlays)
    overlays += move_trail_overlays(m for m in moves if not _game_draws_trail(overlays, m.get("tag")))
    tags = result.tags
    cal = result.calibration
    anchors = _anchor_ids(cal)
    if cal is not None:
        shapes = image_shapes(cal.table_to_image, tags, units, overlays, verdicts, anchors)
    else:
        shapes = tag_shapes(tags, anchors)
    image = result.image
    h, w = (image.shape[:2] if isinstance(image, np.ndarray) else (0, 0))
    return {
        "type": "frame",
        "frame_index": int(result.frame_index),
        "t": round(float(result.t), 3),
        "image_size": [int(w), int(h)],
        "board": board_of(result),
        "calibrated": cal is not None,
        "residual_in": _float_or_none(cal.residual_in if cal is not None else None),
        "tags": [{"id": int(t.id), "anchor": int(t.id) in anchors} for t in tags],
        "units": units,
        "owners": colours,
        "selected": selected,
        "pipeline_status": "",
        "overlays": overlays,
        "image_shapes": shapes,
        "events": list(events),
        "verdicts": list(verdicts),
        "timings_ms": {k: round(float(v), 2) for k, v in result.timings_ms.items()},
    }


def selection_rings(
    selected: int | None, units: Sequence[Mapping[str, Any]], overlays: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The selected unit's 1" engagement ring (DESIGN.md: within 1" edge to edge), unless the game drew one."""
    if selected is None or any(o.get("unit") == selected and o.get("style") == "engagement" for o in overlays):
        return []
    for u in units:
        if u["tag"] == selected:
            r = float(u["radius_in"])
            return [{"shape": "ring", "points": [[u["x"], u["y"]]], "style": "engagement", "radius": r + 1.0,
                     "inner": r, "label": '1"', "unit": selected, "owner": u["owner"]}]
    return []


def _game_draws_trail(overlays: Sequence[Mapping[str, Any]], tag: Any) -> bool:
    return any(o.get("style") == "move-trail" and o.get("unit") == tag for o in overlays)


def _anchor_ids(cal: TableCalibration | None) -> set[int]:
    """The anchor tags' ids (the default layout's 0-3 before calibration)."""
    return {int(k) for k in cal.layout.anchors} if cal is not None else {0, 1, 2, 3}


def _float_or_none(v: Any) -> float | None:
    try:
        return None if v is None else round(float(v), 4)
    except (TypeError, ValueError):
        return None


def _sentence(err: BaseException, fallback: str) -> str:
    text = str(err).strip()
    return text if isinstance(err, InputError) and text else f"{fallback} ({type(err).__name__}: {text or 'no detail'})."


def _close(feed: Any) -> None:
    try:
        feed.close()
    except Exception:  # noqa: BLE001 - closing a broken camera must not stop the loop
        log.debug("closing the feed failed", exc_info=True)
