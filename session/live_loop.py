"""The live loop: pull frames from a feed on its own thread, run the pipeline, publish the newest result.

One `LiveLoop` per thing being watched (the camera, or a recorded session on the replay page). Its thread
reads a frame, runs `Pipeline.process`, builds the frame's message and hands it to a `FramePublisher`,
whose own thread encodes the JSON and the JPEG once and publishes them on a `Broadcast`; browsers watch
the broadcast and skip frames they are too slow for, so no watcher slows the pipeline. A recording is paced at its recorded speed (times `speed`) and can be paused, stepped and
sought; a camera that stops delivering frames is reported ("lost") and reopened once a second.

A declaration never waits for a frame: the loop's thread holds one lock around every ruling (a frame's `process`,
a seek, a new pipeline) and publishing, and a declaration takes that lock and is ruled at once, between two frames,
against the positions of the last frame processed (`declare`). The players' dice go the same way (`answer_roll`,
`cancel_roll`, `correct_roll`); while a roll is pending the dice are read in each frame, in the tray or on the
table away from the bases (session/dice_watch.py).
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
from dataclasses import dataclass
from typing import Any, cast

from calibration.errors import InputError
from rules.engine import Action, ActionError, RulesInputError
from rules.roster import Roster
from session.board_grid import GridKeys
from session.broadcast import Broadcast
from session.carry import carry_game, carry_refused
from session.dice_watch import DiceWatch, table_seen
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
from session.pending_roll import (
    CANCEL,
    CORRECT,
    DICE_KINDS,
    DiceAnswer,
    NoRollPending,
    NothingToCorrect,
    check_count,
)
from session.roll_call import unit_words

log = logging.getLogger("tablesight.live")

WARMUP_FRAMES = 12
"""Frames processed silently before a sought-to frame, so that tracks settle as they would in play."""
RECENT_RESULTS = 4
"""Frames shown that the loop keeps (a 4K frame is 25 MB): a table calibrated from the live feed uses the one
whose anchors agree best, so a hand passing over an anchor in the newest frame does not spoil it."""
EVENT_LOG_SIZE = 5000
STALE_S = 2.0
"""A declaration ruled on positions measured longer ago than this (seconds) says so, asking whether the camera runs."""



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
        self._afresh = False
        """The next rebuild starts the game afresh (the players started a new game), not carried over."""
        self._players_game = False
        """The players set up a game of their own (not the recording's): a looping sample stops on its last frame
        instead of starting its next pass, whose new pipeline would lose their game."""
        self._paused_why = ""
        """Why the loop was paused, for its status ("": "Paused.")."""
        self.focus = Focus()
        """Which unit each open page has selected (its own view: see session/focus.py)."""
        self._status = "starting"
        self._message = "Opening the source."
        self._fps = 0.0
        self._latency_ms = 0.0
        self.frames_processed = 0
        """Frames the pipeline has processed and handed on for showing (the frame rate benchmarks count these)."""
        self._last_fault = ""
        self._frame_index = -1
        self._frames: int | None = frames
        self._last_pub = 0.0
        self._moves: dict[int, dict[str, Any]] = {}
        self.events: deque[dict[str, Any]] = deque(maxlen=EVENT_LOG_SIZE)
        self.run = 0
        """The looping recording's pass, or the game (0 the first; a game started afresh is a new run): each frame
        message says it, and a page starts its list afresh when it changes."""
        self.game_step = 0
        """How many times the game's state has changed as frames were shown (a move, a turn, a new pass or game):
        each frame message says it, and a page asks for the game panel and the actions at once when it grows,
        not at its next poll (up to 1.5 s later: the panel said "Turn 2" over a new pass's first frames)."""
        self._game_shown: object = None
        self.latest_result: FrameLike | None = None
        self.recent_results: deque[FrameLike] = deque(maxlen=RECENT_RESULTS)
        """The last few frames shown (newest last): calibrating from the live feed takes the best of them."""
        self.idle = False
        """True while the loop waits for someone to watch (see `idle_unwatched_s`)."""
        self.latest_positions: dict[int, dict[str, Any]] = {}
        self._pipeline: PipelineLike | None = None
        self._lock = threading.RLock()
        """Held around everything that rules (a frame's `process`, a declaration, a seek, a new pipeline) and around
        publishing, so a declaration is ruled at once between two frames, never queued for the next one."""
        self._declarations = time.time_ns() // 1_000_000
        """The last declaration's number: each one's verdicts say it ("declaration"), so that a page tells two
        declarations of one action at one frame apart, and strikes out those an Undo took back. It starts at the wall
        clock's milliseconds, so a server started again (the page still open) numbers on above it."""
        self._made: deque[tuple[object, tuple[int, ...]]] = deque(maxlen=MADE_KEPT)
        """The pipeline's recent rulings and pending rolls (by identity) and the declarations that made each: a
        roll's first declaration, its answers and a correction of its faces all make one ruling."""
        self._late: list[tuple[int, list[Any], list[dict[str, Any]]]] = []
        """Declarations ruled at a frame processed but not yet published: (frame, events, verdicts), shown with it."""
        self._measured: tuple[int, float] = (-1, 0.0)
        """The last frame processed and when it was read (time.time()): how old the positions a declaration is ruled
        on are."""
        self._dice_seq = time.time_ns() // 1000
        """The last dice state's number (`dice_state`): each gets the next, so a page keeps the newest. It starts at
        the wall clock's microseconds, so a server started again (the page still open) numbers on above it."""
        self.dice = DiceWatch()
        """Reads the dice (the tray, else the table away from the bases) while a roll is pending
        (session/dice_watch.py)."""
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
            self._paused_why = ""
            if self._status in ("ended", "paused"):
                self._status = "ok"
            self._cond.notify_all()

    def pause(self, why: str = "") -> None:
        """Stop on the frame shown; `why`: the status's sentence while it stays paused (else "Paused.")."""
        with self._cond:
            self._playing = False
            self._paused_why = why
            self._cond.notify_all()

    def show_settled(self) -> None:
        """A recording stopped before WARMUP_FRAMES (its first moments, or not yet opened) is shown at that frame
        instead, its earlier frames ruled silently: a new game's pipeline then has its units settled where they
        stand (a tracker settles a base over several frames). Later frames are shown as they are."""
        with self._cond:
            self._settle()
            self._cond.notify_all()

    def _settle(self) -> None:
        """Under the condition: `show_settled`'s seek, if the frame shown is before WARMUP_FRAMES."""
        if self._frame_index < WARMUP_FRAMES:
            self._seek_to = WARMUP_FRAMES

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

    def rebuild(self, afresh: bool = False, players_game: bool = False, hold: str | None = None) -> None:
        """Make a fresh pipeline before the next frame (game, roster, terrain or calibration changed); `afresh`: the
        players started a new game, so the running one is not carried over even when nothing it rules changed;
        `players_game`: the game is the players' own from now on, not a looping sample's (kept at its end).
        hold: a sentence: stop on the frame shown (at WARMUP_FRAMES at the earliest, `show_settled`), saying it;
        "": play again; None: as it is. Set with the rebuild, so that the loop makes the new game's pipeline and
        seeks the frame it stops at in one turn (a declaration on a pipeline replaced a moment later is lost)."""
        with self._cond:
            self._rebuild = True
            self._afresh = self._afresh or afresh
            self._players_game = self._players_game or players_game
            if hold:
                self._playing, self._paused_why = False, hold
                self._settle()
            elif hold == "":
                self._playing, self._paused_why = True, ""
            if not self._playing:
                self._step += 1
            self._cond.notify_all()

    @property
    def pipeline(self) -> PipelineLike | None:
        return self._pipeline

    def declare(self, action: Action) -> list[dict[str, Any]]:
        """Rule an action the players declared (one the camera cannot see) at once and return its verdicts as JSON.

        It never waits for a frame: the loop's thread holds the same lock around each frame's ruling, so the
        action is ruled between two frames, against the positions measured at the last frame processed, and
        recorded at that frame (a replay rules it there). Each verdict returned says how old those positions are
        ("positions_age_s"); from a live source more than STALE_S old, an INFO verdict asks whether the camera runs
        (both for the player who declared: the recording keeps the verdicts as a replay gives them; the page's log
        also numbers each declaration, "declaration", and says which ones an Undo took back, "undoes").
        A malformed action raises RulesInputError here (a dry run on the current state, which is immutable).
        """
        with self._lock:
            pipe = self._pipeline
            if pipe is None or not pipe.calibrated:
                raise NoGameToRule("No game is being ruled: the table is not calibrated yet; calibrate it first.")
            game, state = pipe.game, pipe.state
            if game is None or state is None:
                raise NoGameToRule(f"No game is being ruled ({pipe.status}); choose a game and a roster it can start "
                                   "from.")
            self._check_readable(pipe, action)
            frame = int(getattr(pipe, "frame", self._frame_index))
            if frame < 0:
                raise LoopNotReady("No frame has been measured yet, so there are no positions to rule on; wait for "
                                   "the camera's first frame and declare it again.")
            age = self.positions_age_s()
            self._declarations += 1
            n = self._declarations
            before = _ruling_parts(pipe)
            ruled = [{**v, "frame": frame, "event": "declared", "action": action.to_json(), "declaration": n}
                     for v in pipe.declare(action)]
            self._number(n, action, before, _ruling_parts(pipe), ruled)
            self._ruled_between(frame, ruled)  # recorded and shown as a replay rules them: without the age
            out = [{**v, "positions_age_s": age} for v in ruled]
            if age > STALE_S and self._frames is None:
                out.append({"rule": "tablesight.positions_age", "outcome": "info", "unit": action.unit,
                            "numbers": {"positions_age_s": age}, "frame": frame, "event": "declared",
                            "action": action.to_json(), "positions_age_s": age,
                            "message": f"Ruled on positions measured {age:.0f} s ago: is the camera running?"})
            return out

    def _made_by(self, thing: object) -> tuple[int, ...]:
        """The declarations that made a ruling or a pending roll (none known: ())."""
        return next((made for obj, made in self._made if obj is thing), ()) if thing is not None else ()

    def _number(self, n: int, action: Action, before: tuple[object, object, object],
                after: tuple[object, object, object], ruled: list[dict[str, Any]]) -> None:
        """Under the lock, after declaration `n` was ruled: an Undo's verdicts say the declarations it took back
        ("undoes": the pending roll's, else the undone ruling's), a dice correction's those whose verdicts its
        faces replace; a pending roll or a ruling `n` made is remembered as made by `n` and by what it carries on
        (the roll answered, the ruling whose faces were corrected)."""
        (ruling, pending, dice), (ruling_now, pending_now, _) = before, after
        if action.kind == "undo":
            took = self._made_by(pending) if pending is not None else \
                self._made_by(ruling) if ruling_now is not ruling else ()
            for v in ruled:
                if v.get("rule") == "tablesight.undo" and took:
                    v["undoes"] = list(took)
            return
        corrected = self._made_by(dice) if action.kind == CORRECT and ruling_now is not ruling else ()
        for v in ruled:  # the verdicts the corrected faces replace
            if v.get("rule") == "dice.correct" and v.get("outcome") == "info" and corrected:
                v["undoes"] = list(corrected)
        carried = self._made_by(pending) + corrected
        if pending_now is not None and pending_now is not pending:
            self._made.append((pending_now, (*carried, n)))
        if ruling_now is not None and ruling_now is not ruling:
            self._made.append((ruling_now, (*carried, n)))

    def _check_readable(self, pipe: PipelineLike, action: Action) -> None:
        """Refuse a malformed action in one sentence before it is ruled (a dry run with dice of its own)."""
        game, state = pipe.game, pipe.state
        assert game is not None
        try:
            if action.kind == "overrule":
                overrule_key(action)
            elif action.kind == "correct":
                correction_of(action)
            elif action.kind not in DICE_KINDS and action.kind != "undo":
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

    def positions_age_s(self) -> float:
        """Seconds since the frame the positions were last measured from was read (0 before any)."""
        frame, at = self._measured
        return round(max(0.0, time.time() - at), 2) if frame >= 0 and at > 0 else 0.0

    def _ruled_between(self, frame: int, verdicts: list[dict[str, Any]]) -> None:
        """Under the lock, after a declaration was ruled at `frame`: its recording lines (in the writer's order, before
        the request returns), then its verdicts and rolls shown: with the frame if it is not out yet, else on the
        frame shown again."""
        pipe = self._pipeline
        self._record_ruled()
        take = getattr(pipe, "take_dice_events", None)
        events = list(take()) if take is not None else []
        n = next((v["declaration"] for v in verdicts if v.get("declaration")), None)
        if n is not None:  # its rolls are struck out with its verdicts when an Undo takes it back
            events = [_OfDeclaration(e, n) for e in events]
        base = self.latest_result
        if base is not None and pipe is not None and int(base.frame_index) == frame:
            again = _drawn_again(base, pipe, events=tuple(events), verdicts=tuple(verdicts))
            self._publish(again, time.perf_counter(), time.time())
            self._encoder.flush()
        else:
            self._late.append((frame, events, verdicts))

    def _record_ruled(self) -> None:
        """Under the lock: the actions the pipeline ruled since last asked go into the recording's declarations."""
        take = getattr(self._pipeline, "take_records", None)
        records = take() if take is not None else []
        if self.recorder is not None:
            for frame, action in records:
                self.recorder.declared(frame, action)

    # ---- the dice (docs: the dice API) ----

    def dice_state(self) -> dict[str, Any]:
        """The dice panel's object: roll for us (and "script": a recorded session playing its own declarations, whose
        dice are ruled as recorded), why the last roll's faces can no longer be corrected ("correct_refused", "" when
        they can), the pending roll, what the camera reads, the tray, the last roll, and "seq": taken under the
        ruling lock, a later state has a larger seq. A frame's message is sent after its state was taken, so it may
        reach the page after an answered roll's newer state: the page keeps the newest."""
        with self._lock:
            pipe = self._pipeline
            pending = getattr(pipe, "pending", None)
            last = getattr(pipe, "last_dice", None)
            words = getattr(pipe, "words", None) or (lambda a: a.kind.replace("_", " "))
            tray = self.dice.tray
            self._dice_seq += 1
            refused = getattr(pipe, "correction_refused", None)
            return {"roll_for_us": bool(getattr(pipe, "roll_for_us", False)),
                    "script": bool(getattr(pipe, "plays_script", False)),
                    "correct_refused": refused() if refused is not None and last is not None else "",
                    "pending": pending.to_json(words) if pending is not None else None,
                    "read": self.dice.read_json() if pending is not None else None,
                    "tray": tray.to_json() if tray is not None else None,
                    "last": last.to_json(words) if last is not None else None,
                    "seq": self._dice_seq}

    def answer_roll(self, faces: Sequence[int], source: str) -> dict[str, Any]:
        """The faces for the pending roll (from `source`: typed, camera, phone): its action ruled again at once with
        the faces given before and these. NoRollPending (409) with none pending; RollError (400) for a wrong count or
        a face out of range. Returns {"verdicts", "pending", "last"}."""
        with self._lock:
            pending = getattr(self._pipeline, "pending", None)
            if pending is None:
                raise NoRollPending("No roll is pending: declare an action that needs dice first.")
            check_count(pending.request, faces)
            seen = list(faces) if source == "camera" else self.dice.seen(pending.id)
            answer = DiceAnswer.of(pending.action, [*pending.request.given, *faces], source, seen)
            verdicts = self.declare(answer)
            state = self.dice_state()
            return {"verdicts": verdicts, **_answered(state)}

    def cancel_roll(self) -> dict[str, Any]:
        """Drop the pending roll (its action is not ruled); nothing happens when none is pending."""
        with self._lock:
            verdicts = self.declare(Action(CANCEL)) if getattr(self._pipeline, "pending", None) is not None else []
            state = self.dice_state()
            return {"pending": state["pending"], "verdicts": verdicts, "seq": state["seq"]}

    def correct_roll(self, faces: Sequence[int]) -> dict[str, Any]:
        """Overrule the faces of the last action ruled with dice: it is ruled again with `faces` from the state
        before it. NothingToCorrect (409) when there is none or the game moved on since."""
        with self._lock:
            refused = getattr(self._pipeline, "correction_refused", None)
            why = refused() if refused is not None else "Nothing to correct: no game is being ruled."
            if why:
                raise NothingToCorrect(why)
            verdicts = self.declare(Action(CORRECT, None, {"faces": [int(f) for f in faces]}))
            bad = next((v for v in verdicts if v.get("rule") == "dice.correct" and v.get("outcome") == "illegal"), None)
            if bad is not None:
                raise ActionError(str(bad["message"]))
            state = self.dice_state()
            return {"verdicts": verdicts, **_answered(state)}

    def set_roll_for_us(self, on: bool) -> bool:
        """From now on Tablesight rolls the dice the players do not give (the setup file is the caller's); returns
        whether it does now (a recorded session playing its own script keeps its recorded way)."""
        with self._lock:
            setter = getattr(self._pipeline, "set_roll_for_us", None)
            if setter is not None:
                setter(bool(on))
            return bool(getattr(self._pipeline, "roll_for_us", on))

    def _look_at_dice(self, result: FrameLike) -> None:
        """While a roll is pending, read the dice in the frame: in the tray when one is marked, else on the table
        away from the bases (session/dice_watch.py); a roll the camera read whole fills it (source "camera"), ruled
        at this frame."""
        pipe = self._pipeline
        pending = getattr(pipe, "pending", None)
        if pending is None:
            self.dice.idle()
            return
        try:
            table = None
            if self.dice.tray is None and self.dice.available:
                table = table_seen(result, getattr(pipe, "positions", None) or {}, getattr(pipe, "roster", None))
            faces = self.dice.look(result.image, int(result.frame_index), pending.id, pending.request.sides,
                                   pending.request.count, table)
        except Exception:  # noqa: BLE001 - the dice can always be typed
            log.warning("reading the dice failed", exc_info=True)
            return
        if faces is None:
            return
        try:
            self.answer_roll(faces, "camera")
        except (InputError, RulesInputError) as err:  # faces the rules refuse: the players type them instead
            log.info("the dice the camera read were not taken: %s", err)

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

    def _paused(self) -> str:
        return self._paused_why or "Paused."

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
                    afresh, self._afresh = self._afresh, False
                    proceed = self._playing or self._step > 0 or seek is not None
                    if self._step > 0 and not self._playing and (seek is None or rebuild):
                        self._step -= 1  # a rebuild's step is taken by its seek: no frame after it is read
                    if not proceed:
                        if self._status == "ok" or (self._status == "paused" and self._message != self._paused()):
                            self._set_status("paused", self._paused())
                        self._cond.wait(0.5)
                        continue
                if rebuild:  # then, in this same turn, the seek a hold asked for (no declaration lands in between)
                    if self.recorder is not None and self._playing and feed.pending:
                        self._rule_taken(feed)  # the frame read ahead went into the recording the old setup closes
                    carried = self._rebuild_pipeline(afresh)
                    if not self._playing and self._frame_index >= 0:
                        if carried and self._redraw_paused():
                            continue  # the game goes on: the shown frame is drawn again with the new setup
                        if isinstance(feed, SeekableFeed) and seek is None:
                            seek = self._frame_index  # redraw the paused frame through the new pipeline
                if seek is not None and isinstance(feed, SeekableFeed):
                    with self._lock:  # a declaration meanwhile waits for the sought frame's game
                        self._seek(feed, min(seek, len(feed) - 1))
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
                    if self._at_end == "loop" and self._frames and not self._players_game:
                        _close(feed)
                        feed = None
                        self.events.clear()  # each pass starts afresh: its game (a new pipeline), its events
                        self.run += 1
                        continue
                    with self._cond:
                        self._playing = False
                    if self.recorder is not None:
                        # the read-ahead met the end before the last frame was ruled: its index line is written
                        # after that, so everything recorded is on disk before the page says "ended"
                        self.recorder.drain()
                    self._set_status("ended", "The sample has ended on its last frame; your game is kept as it "
                                     "stands." if self._at_end == "loop" else "The recording has ended.")
                    continue
                started = time.perf_counter()
                try:
                    with self._lock:
                        assert self._pipeline is not None
                        result = self._pipeline.process(frame, prepared=feed.prepared)
                        self._measured = (int(result.frame_index), captured_at)
                        self._record_ruled()
                except InputError as err:
                    self._set_status("error", str(err))
                    self._wait(0.5)
                    continue
                except Exception as err:  # noqa: BLE001 - a fault of ours on one frame must not end the watching
                    fault = f"{type(err).__name__}: {err}"
                    if fault != self._last_fault:  # logged once, not thirty times a second
                        log.exception("live loop %s: frame %d failed", self.name, self._frame_index + 1)
                        self._last_fault = fault
                    self._set_status("error", f"A frame could not be measured because of an internal fault ({fault}); "
                                     "the next frames are still tried. See the server log and report it.")
                    self._wait(0.1)
                    continue
                self._look_at_dice(result)
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
                if self._status != "ok" or not self._playing:
                    if self._playing:
                        self._set_status("ok", "")
                    elif self._status not in ("paused",):
                        self._set_status("paused", self._paused())
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
            with self._lock:
                result = self._pipeline.process(frame, prepared=feed.prepared)
                self._measured = (int(result.frame_index), feed.read_at)
                self._record_ruled()
        except Exception as err:  # noqa: BLE001 - the next frames are read and reported as usual
            log.warning("live loop %s: the frame read ahead was not ruled (%s)", self.name, err)
            return
        self._publish(result, started, feed.read_at)

    def _rebuild_pipeline(self, afresh: bool = False) -> bool:
        """A fresh pipeline for the changed setup that carries on the running game (session/carry.py); when it
        cannot, or `afresh` (a new game was started), the game starts afresh and the event log says why. True when a
        game was carried."""
        with self._lock:
            old = self._pipeline
            if afresh and self.recorder is not None:
                self.recorder.game_restarted()  # its replay starts the game afresh at the same frame
            self._pipeline = self._make_pipeline()
            self.dice.idle()
            why = (carry_refused(old, self._pipeline) or "a new game was started") if afresh \
                else carry_game(old, self._pipeline)
            if why and why != "no game was running":
                self._moves.clear()
                self.events.clear()  # a new game's list: the last game's entries would name its units by the new roster
                self.run += 1
                self.events.append({"type": "info", "frame": max(0, self._frame_index),
                                    "message": f"The game starts afresh: {why}."})
        return not why

    def _redraw_paused(self) -> bool:
        """Show the paused frame again with the current pipeline's shapes (no frame is read or ruled)."""
        base, pipe = self.latest_result, self._pipeline
        if base is None or pipe is None:
            return False
        again = _drawn_again(base, pipe, events=(), verdicts=())
        self._publish(again, time.perf_counter(), time.time())
        self._encoder.flush()
        return True

    def _idle(self) -> bool:
        """Nobody has watched the sample for `idle_unwatched_s`: wait a moment instead of reading a frame (no
        CPU spent). Anything asked of the loop (a declaration, a seek, a step) is still served at once."""
        if self._idle_unwatched_s is None or self.broadcast.watchers > 0 or self.latest_result is None:
            self._watched_at = time.monotonic()
            return False
        with self._cond:
            if self._seek_to is not None or self._step > 0 or self._rebuild or self._stop:
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
        with self._lock:
            events, verdicts = pipe.finish()
            self._record_ruled()
        if events or verdicts:
            again = _drawn_again(base, pipe, events=events, verdicts=verdicts)
            self._publish(again, time.perf_counter(), time.time())

    def _seek(self, feed: Any, target: int) -> None:
        """Go to frame `target`: from the newest checkpoint before it (the game as it stood), else by
        playing WARMUP_FRAMES silently before it through a fresh pipeline (positions right, game restarted)."""
        self._pipeline = self._make_pipeline()
        self._moves.clear()
        self.dice.idle()  # the tray is read afresh for whatever roll the sought frame waits for
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

    def _moves_shown(self) -> list[dict[str, Any]]:
        """Each unit's last move, but a unit's the game has taken off the table (a destroyed figure): not drawn."""
        off = getattr(self._pipeline, "off_table", None)
        gone = frozenset(off()) if callable(off) else frozenset()
        return [m for tag, m in self._moves.items() if tag not in gone]

    def _publish(self, result: FrameLike, started: float, captured_at: float) -> None:
        with self._lock:
            self._publish_now(self._with_late(result), started, captured_at)

    def _with_late(self, result: FrameLike) -> FrameLike:
        """`result` with the declarations ruled at its frame before it was published (older ones are dropped: their
        frame was never shown)."""
        frame = int(result.frame_index)
        late = [x for x in self._late if x[0] == frame]
        self._late = [x for x in self._late if x[0] > frame]
        if not late:
            return result
        return cast(FrameLike, dataclasses.replace(
            cast(Any, result), events=(*result.events, *(e for x in late for e in x[1])),
            verdicts=(*result.verdicts, *(v for x in late for v in x[2]))))

    def _publish_now(self, result: FrameLike, started: float, captured_at: float) -> None:
        events = self._note_events(result)
        verdicts = [dict(v) for v in result.verdicts]
        if self.recorder is not None:
            self.recorder.ruled(int(result.frame_index), [recorded(e) for e in events], [recorded(v) for v in verdicts])
        known = {(e.get("frame"), e.get("type"), e.get("tag"), e.get("rule"), e.get("declaration"))
                 for e in list(self.events)[-200:]}
        for e in events:
            if (e.get("frame"), e.get("type"), e.get("tag"), e.get("rule"), e.get("declaration")) not in known:
                self.events.append(e)
        for v in verdicts:
            declared = v.get("event") == "declared"
            if declared or v.get("outcome") in ("illegal", "too close to call"):
                entry = {"type": "verdict", "frame": int(result.frame_index), **v}
                if declared or (entry["frame"], "verdict", None, v.get("rule"), None) not in known:
                    self.events.append(entry)
                if declared and self.store is not None:
                    self.store.add_verdict(entry["frame"], recorded(entry))
        roster = self._roster()
        message = build_frame_message(
            result,
            roster=roster,
            focus={u: self._selected_overlays(u) for u in self.focus.units()},
            moves=self._moves_shown(),
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
        message["run"] = self.run
        state = self._pipeline.state if self._pipeline is not None else None
        if state is not self._game_shown:  # the rules' states are immutable: a change is a new object
            self._game_shown, self.game_step = state, self.game_step + 1
        message["game_step"] = self.game_step
        message["grid_key"] = self._grid_keys(self._pipeline, result.calibration)
        message["captured_at"] = round(captured_at, 4)  # time.time() when the frame was read, seconds
        message["status"] = self.status().to_json()
        message["status"]["status"] = "ok" if self._playing else "paused"
        message["dice"] = self.dice_state()
        self.frames_processed += 1
        # a paused frame stays on show: it gets its picture even with nobody watching yet
        self._encoder.submit(message, result, started, picture=not self._playing,
                             complete=lambda m: add_image_shapes(m, result, self._shape_memo))

    @property
    def published(self) -> int:
        """Frame messages published so far: the `sent` number of the newest. Read before the events log, every entry
        the log lacks is in a message numbered after it."""
        return self._encoder.sent

    def sent_after(self, sent: int, before: int | None = None) -> list[dict[str, Any]]:
        """The events and verdicts of the frame messages published after message `sent` (`FramePublisher.sent_after`)."""
        return self._encoder.sent_after(sent, before)

    def _selected_overlays(self, unit: int) -> list[dict[str, Any]]:
        """A selected unit's rings and bands, asked of the pipeline's game."""
        if self._pipeline is None:
            return []
        try:
            return [o if isinstance(o, dict) else o.to_json() for o in self._pipeline.overlays_for(unit)]
        except InputError:
            return []


MADE_KEPT = 64
"""Rulings and pending rolls whose declarations LiveLoop remembers (Undo reaches back one ruling)."""


def _ruling_parts(pipe: Any) -> tuple[object, object, object]:
    """What Undo would take back, the pending roll and the last ruling with dice, as they stand now."""
    dice = getattr(pipe, "last_dice", None)
    return getattr(pipe, "undoable", None), getattr(pipe, "pending", None), getattr(dice, "ruling", None)


def _answered(state: dict[str, Any]) -> dict[str, Any]:
    """What a roll answered or corrected leaves on the dice panel (from `dice_state`)."""
    return {k: state[k] for k in ("pending", "last", "correct_refused", "seq")}


PAGE_ONLY = ("declaration", "undoes")
"""A declared verdict's keys for the page alone (its declaration's number, the one an Undo took back): a recording
keeps its verdicts as a replay rules them."""


@dataclass(frozen=True)
class _OfDeclaration:
    """A roll (or correction) the players' declaration number `declaration` made: its JSON says the number, for the
    page only (PAGE_ONLY)."""

    event: Any
    declaration: int

    def to_json(self) -> dict[str, Any]:
        return {**self.event.to_json(), "declaration": self.declaration}


def _drawn_again(base: Any, pipe: Any, **changes: Any) -> Any:
    """The frame shown, drawn again with the game as it now stands: the pipeline's overlays and, for a pipeline
    that keeps them, the units the players put elsewhere than the camera measured."""
    if hasattr(base, "corrected") and hasattr(pipe, "corrected"):
        changes["corrected"] = pipe.corrected()
    return dataclasses.replace(base, overlays=tuple(pipe.overlays_now()), **changes)


def recorded(verdict: dict[str, Any]) -> dict[str, Any]:
    """`verdict` as the recording keeps it (without PAGE_ONLY keys)."""
    return {k: x for k, x in verdict.items() if k not in PAGE_ONLY}


def _sentence(err: BaseException, fallback: str) -> str:
    text = str(err).strip()
    return text if isinstance(err, InputError) and text else f"{fallback} ({type(err).__name__}: {text or 'no detail'})."


def _close(feed: Any) -> None:
    try:
        feed.close()
    except Exception:  # noqa: BLE001 - closing a broken camera must not stop the loop
        log.debug("closing the feed failed", exc_info=True)
