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
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, cast

from calibration.errors import InputError
from rules.engine import Action, ActionError, RulesInputError
from rules.roster import Roster
from session.board_grid import GridKeys
from session.broadcast import Broadcast
from session.carry import carry_game
from session.drivable import (
    AtEnd,
    Feed,
    FeedWaiting,
    FrameLike,
    LoopNotReady,
    LoopRecorder,
    NoGameToRule,
    PipelineLike,
    SeekableFeed,
)
from session.feed_ahead import FeedAhead, feed_ahead
from session.focus import Focus
from session.frame_message import ShapeMemo, add_image_shapes, build_frame_message
from session.frame_publisher import FramePublisher
from session.overrule import correction_of, overrule_key
from session.roll_call import unit_words

log = logging.getLogger("tablesight.live")

WARMUP_FRAMES = 12
"""Frames processed silently before a sought-to frame, so that tracks settle as they would in play."""
RECENT_RESULTS = 4
"""Frames shown that the loop keeps (a 4K frame is 25 MB): a table calibrated from the live feed uses the one
whose anchors agree best, so a hand passing over an anchor in the newest frame does not spoil it."""
EVENT_LOG_SIZE = 5000
DECLARE_TIMEOUT_S = 10.0
"""How long a declaration waits for the loop to rule it before the request gives up."""



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
        idle_unwatched_s: float | None = None,
    ) -> None:
        self.name = name
        self._idle_unwatched_s = idle_unwatched_s
        """A recording that only shows itself (the sample) waits once nobody has watched it this long, seconds;
        None: never (a camera or a video is recorded whether or not anyone watches)."""
        self._watched_at = time.monotonic()
        self.broadcast = Broadcast()
        self._checkpoint_before = checkpoint_before
        self._open_feed = open_feed
        self._make_pipeline = make_pipeline
        self._roster = roster
        self._paced = paced
        self._at_end: AtEnd = at_end
        self._encoder = FramePublisher(self.broadcast, jpeg_quality, name, on_published=self._published)
        self._shape_memo = ShapeMemo()
        """The encoder thread's memo of the pixel shapes it made for the frames before (session/frame_message.py)."""
        self._grid_keys = GridKeys()
        """Names the hex grid each frame is drawn over (session/board_grid.py): a page fetches the grid when it changes."""
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stop = False
        self._playing = True
        self._step = 0
        self._speed = 1.0
        self._seek_to: int | None = None
        self._rebuild = False
        self.focus = Focus()
        """Which unit each open page has selected (its own view: see session/focus.py)."""
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
        self.recent_results: deque[FrameLike] = deque(maxlen=RECENT_RESULTS)
        """The last few frames shown (newest last): calibrating from the live feed takes the best of them."""
        self.idle = False
        """True while the loop waits for someone to watch (see `idle_unwatched_s`)."""
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

    def select(self, unit: int | None, page: str = "") -> None:
        """Page `page` selected `unit` (None: nothing); only that page draws the unit's rings."""
        self.focus.select(page, unit)
        with self._cond:
            if not self._playing:
                self._step += 1  # redraw the paused frame with the new selection
            self._cond.notify_all()

    def selected(self, page: str = "") -> int | None:
        return self.focus.of(page)

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
            log.info("%s cannot read the declared action %s", game.name, action.to_json(), exc_info=err)
            try:
                words = game.describe(action, lambda tag: unit_words(tag, self._roster()))
            except Exception:  # noqa: BLE001 - a game's words for an action it cannot read: its kind will do
                words = action.kind.replace("_", " ")
            raise ActionError(f"{game.title} cannot take the action “{words}” as it is given; pick one of the "
                              "actions the Declare panel offers.") from None
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
        feed: FeedAhead | None = None
        anchor: tuple[float, float] | None = None  # (wall clock, frame t) for pacing
        try:
            while not self._stop:
                if feed is None:
                    try:
                        # the page's picture of each frame is made on the worker while the frame is ruled
                        feed = feed_ahead(self._open_feed(), self._prepare, self._encoder.picture_ahead)
                        self._frames = len(feed) if isinstance(feed, SeekableFeed) else None
                        self._pipeline = self._make_pipeline()
                        self._moves.clear()
                        anchor = None
                    except Exception as err:  # noqa: BLE001 - any failure to open is shown, then retried
                        self._set_status("lost", _sentence(err, "The source could not be opened"))
                        self._wait(1.0)
                        continue
                if self._idle():
                    anchor = None  # the pace starts afresh when someone watches again
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
                    if self.recorder is not None and self._playing and feed.pending:
                        self._rule_taken(feed)  # the frame read ahead went into the recording the old setup closes
                    carried = self._rebuild_pipeline()
                    if not self._playing and self._frame_index >= 0:
                        if carried and self._redraw_paused():
                            continue  # the game goes on: the shown frame is drawn again with the new setup
                        if isinstance(feed, SeekableFeed):
                            seek = self._frame_index  # redraw the paused frame through the new pipeline
                if seek is not None and isinstance(feed, SeekableFeed):
                    self._seek(feed, seek)
                    anchor = None
                try:
                    frame = feed.read()
                    captured_at = feed.read_at  # wall clock when the frame arrived (end-to-end latency)
                except FeedWaiting as err:  # the feed waited and says why no frame came: ask again, game kept
                    self._set_status("lost", str(err))
                    continue
                except Exception as err:  # noqa: BLE001 - a camera that fails is reported and reopened
                    self._set_status("lost", _sentence(err, "The camera stopped delivering frames"))
                    _close(feed)
                    feed = None
                    self._wait(1.0)
                    continue
                if frame is None:
                    self._finish()  # the moves of the recording's last moments
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
                    result = self._pipeline.process(frame, declared=[decl[0]] if decl is not None else (),
                                                    prepared=feed.prepared)
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
                        # read ahead and ruled before its time, the frame is shown when it is due: its latency
                        # counts from then (else a recording played at its pace shows a frame's wait as latency)
                        started, captured_at = time.perf_counter(), time.time()
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
                try:
                    if self.recorder is not None and feed.pending:
                        self._rule_taken(feed)  # the frame read ahead is in the recording, whose replay rules it
                finally:
                    _close(feed)

    def _prepare(self, frame: Any, detector: Any) -> Any:
        """The part of `frame`'s work the pipeline can do ahead (on the feed's worker thread), or None; its
        backstop scans are left for the feed's backstop thread to make once the frame is handed over
        (session/feed_ahead.py)."""
        prepare = getattr(self._pipeline, "prepare", None)
        return prepare(frame, detector, backstop=False) if prepare is not None else None

    def _rule_taken(self, feed: FeedAhead) -> None:
        """Rule the frame being read ahead with the pipeline of the recording it went into, before a new setup's
        pipeline (and recording) starts or the loop stops: a replay of each recording then sees exactly the frames
        ruled with it."""
        try:
            frame = feed.read(ahead=False)
            if frame is None or self._pipeline is None:
                return
            started = time.perf_counter()
            result = self._pipeline.process(frame, prepared=feed.prepared)
        except Exception as err:  # noqa: BLE001 - the next frames are read and reported as usual
            log.warning("live loop %s: the frame read ahead was not ruled (%s)", self.name, err)
            return
        self._publish(result, started, feed.read_at)

    def _rebuild_pipeline(self) -> bool:
        """A fresh pipeline for the changed setup that carries on the running game (session/carry.py); when it
        cannot, the game starts afresh and the event log says why. True when a game was carried."""
        old = self._pipeline
        self._pipeline = self._make_pipeline()
        why = carry_game(old, self._pipeline)
        if why and why != "no game was running":
            self._moves.clear()
            self.events.append({"type": "info", "frame": max(0, self._frame_index),
                                "message": f"The game starts afresh: {why}."})
        return not why

    def _redraw_paused(self) -> bool:
        """Show the paused frame again with the current pipeline's shapes (no frame is read or ruled)."""
        base, pipe = self.latest_result, self._pipeline
        if base is None or pipe is None:
            return False
        again = dataclasses.replace(cast(Any, base), events=(), verdicts=(), overlays=tuple(pipe.overlays_now()))
        self._publish(again, time.perf_counter(), time.time())
        self._encoder.flush()
        return True

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

    def _idle(self) -> bool:
        """Nobody has watched the sample for `idle_unwatched_s`: wait a moment instead of reading a frame (no
        CPU spent). Anything asked of the loop (a declaration, a seek, a step) is still served at once."""
        if self._idle_unwatched_s is None or self.broadcast.watchers > 0 or self.latest_result is None:
            self._watched_at = time.monotonic()
            return False
        with self._cond:
            if self._declared or self._seek_to is not None or self._step > 0 or self._rebuild or self._stop:
                return False
            if time.monotonic() - self._watched_at < self._idle_unwatched_s:
                return False
            self.idle = True
            self._cond.wait(0.25)
        self.idle = False
        return True

    def _finish(self) -> None:
        """The recording has ended: rule and show what its last moments did (Pipeline.finish)."""
        pipe, base = self._pipeline, self.latest_result
        if pipe is None or base is None:
            return
        events, verdicts = pipe.finish()
        if events or verdicts:
            again = dataclasses.replace(cast(Any, base), events=events, verdicts=verdicts,
                                        overlays=tuple(pipe.overlays_now()))
            self._publish(again, time.perf_counter(), time.time())

    def _seek(self, feed: Any, target: int) -> None:
        """Go to frame `target`: from the newest checkpoint before it (the game as it stood), else by
        playing WARMUP_FRAMES silently before it through a fresh pipeline (positions right, game restarted)."""
        self._pipeline = self._make_pipeline()
        self._moves.clear()
        cp = self._checkpoint_before(target)
        if cp is not None:
            self._pipeline.resume(cp)
            start = int(cp.frame) + 1
            feed.seek(int(cp.frame))  # the frame the checkpoint was taken after: where the picture changes from
            shown = feed.read(ahead=False)
            prime = getattr(self._pipeline, "prime", None)
            if shown is not None and prime is not None:
                prime(shown, feed.prepared)
        else:
            start = max(0, target - WARMUP_FRAMES)
        feed.seek(start)
        for _ in range(target - start):
            frame = feed.read()
            if frame is None:
                break
            try:
                result = self._pipeline.process(frame, prepared=feed.prepared)
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
            focus={u: self._selected_overlays(u) for u in self.focus.units()},
            moves=list(self._moves.values()),
            events=events,
            verdicts=verdicts,
            shapes=False,  # projected to pixels on the encoder's thread, beside the next frame's detection
        )
        now = time.monotonic()
        if self._last_pub:
            dt = now - self._last_pub
            if dt > 0:
                self._fps = 1.0 / dt if self._fps == 0 else 0.85 * self._fps + 0.15 / dt
        self._last_pub = now
        self._frame_index = int(result.frame_index)
        self.latest_result = result
        self.recent_results.append(result)
        self.latest_positions = {u["tag"]: u for u in message["units"]}
        message["pipeline_status"] = self._pipeline.status if self._pipeline is not None else ""
        message["grid_key"] = self._grid_keys(self._pipeline, result.calibration)
        message["captured_at"] = round(captured_at, 4)  # time.time() when the frame was read, seconds
        message["status"] = self.status().to_json()
        message["status"]["status"] = "ok" if self._playing else "paused"
        self.frames_processed += 1
        # a paused frame stays on show: it gets its picture even with nobody watching yet
        self._encoder.submit(message, result, started, picture=not self._playing,
                             complete=lambda m: add_image_shapes(m, result, self._shape_memo))

    def _selected_overlays(self, unit: int) -> list[dict[str, Any]]:
        """A selected unit's rings and bands, asked of the pipeline's game."""
        if self._pipeline is None:
            return []
        try:
            return [o if isinstance(o, dict) else o.to_json() for o in self._pipeline.overlays_for(unit)]
        except InputError:
            return []


def _sentence(err: BaseException, fallback: str) -> str:
    text = str(err).strip()
    return text if isinstance(err, InputError) and text else f"{fallback} ({type(err).__name__}: {text or 'no detail'})."


def _close(feed: Any) -> None:
    try:
        feed.close()
    except Exception:  # noqa: BLE001 - closing a broken camera must not stop the loop
        log.debug("closing the feed failed", exc_info=True)
