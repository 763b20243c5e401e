"""One frame's path: detect tags -> map to table inches -> track -> rule -> overlays (DESIGN.md).

`Pipeline.process(frame)` returns a `FrameResult`: the tags, the base fixes, the tracker's events (as JSON),
the game's verdicts on them (as JSON), and overlay shapes in table inches. Every stage is timed.

Heights: a base's tag is measured on its own plane. The pipeline measures it at the base's height above
the table; where elevated terrain (a ruin floor) could hold it, the tag's measured size against its printed
size tells whether it stands on the table or on that floor (session/floors.py), so a unit 3" up lands where it
really stands, even right at a ruin's edge.

Several tags on one base (the roster's `more_tags`): each tag is measured on its own plane with its own offset
and printed size, then a unit's tags seen in one frame are fused into one fix named by the unit's id
(vision/fuse.py), so the tracker, the game and the page see one fix per unit whichever of its tags are seen.
"""

from __future__ import annotations

import contextlib
import copy
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import shapely

from calibration.pose_watch import ANCHOR_SHIFT_PX, PoseWatch
from calibration.table import TableCalibration
from rules.dice import ROLLS_KEY, Rolled
from rules.engine import Action, Game, Measured, Outcome, Placement, Result, RulesInputError, Shape, UnitId
from rules.roster import Roster
from rules.terrain import TerrainPiece, place_terrain, terrain_to_json
from session.floors import stand_on_floors
from session.overrule import KINDS as OVERRULE_KINDS
from session.overrule import LastRuling, Overrules
from session.pending_roll import (
    CANCEL,
    DICE_KINDS,
    DiceAnswer,
    DiceEvent,
    DiceRuling,
    PendingRoll,
    RollCorrected,
    RollTaken,
    faces_given,
    same_action,
)
from session.roll_call import RollCall, call_roll
from session.take_back import TakeBacks
from vision.fuse import BaseFuser, Mount
from vision.positions import BaseFix, measure_bases, smallest_tag_px
from vision.sources import ShowsFrame, gray_of, size_of
from vision.tags import TagDetector, TagObservation
from vision.tracker import DuplicateTag, Move, Placed, Tracker, TrackState, UnknownTag
from vision.windowed import FINE_EVERY, AheadScan, WindowedDetector

UNDO = "undo"
"""A declared action of Tablesight's own: take back the last declaration (the game panel's Undo)."""
DEFAULT_BASE_HEIGHT_IN = 0.125
"""Tag face above the table for a tag not in the roster, inches."""
SMALLEST_TAG_IN = 0.5
"""The smallest base tag we expect without a roster (a 25 mm base), inches; it sets the detector's decimation."""


def smallest_tag_in(roster: Roster | None, terrain: Sequence[TerrainPiece]) -> float:
    """The smallest tag the detector must find, inches (its black square's side): the smallest printed tag of the
    roster's mounts; `SMALLEST_TAG_IN` without a roster, or when a terrain piece carries a tag (its size is not
    given). Bigger tags allow a coarser decimation (vision.tags.decimation_for): 1" toppers at 1080p scan at 2."""
    if roster is None or not roster.units or any(p.tag is not None for p in terrain):
        return SMALLEST_TAG_IN
    return min(m.tag_in for u in roster.units.values() for m in u.mounts)


@dataclass(frozen=True)
class CameraMoved:
    """The anchors are no longer where the calibration puts them (the camera was knocked) and the pose was
    solved again from them: how far they had shifted and the new residual, pixels."""

    kind: ClassVar[str] = "camera_moved"
    frame: int
    anchor_shift_px: float
    residual_px: float

    def to_json(self) -> dict[str, Any]:
        return {"type": "camera_moved", "frame": self.frame, "anchor_shift_px": self.anchor_shift_px,
                "residual_px": self.residual_px}


TableEvent = Move | Placed | UnknownTag | DuplicateTag | CameraMoved | DiceEvent
"""What a frame may report besides rulings (the rolls the rules took are events too: session/pending_roll.py)."""


MOVE_KINDS = frozenset({"move", "disengage"})
"""The camera's kinds of action that move a unit already on the table: declared, they put it where they take it."""


@dataclass(frozen=True)
class FrameResult(ShowsFrame):
    """What one frame gave. Positions and overlays are table inches; `frame` is the frame ruled (its `image`, BGR)."""

    frame_index: int
    t: float
    frame: Any
    """The frame (vision/sources.py `Frame`, or anything with a BGR `.image`)."""
    tags: tuple[TagObservation, ...]
    fixes: tuple[BaseFix, ...]
    events: tuple[TableEvent, ...]
    """The tracker's events and a knocked camera's, typed; `.to_json()` at the edge that writes JSON."""
    verdicts: tuple[dict[str, Any], ...]
    overlays: tuple[dict[str, Any], ...]
    board: Mapping[str, float]
    calibration: TableCalibration
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    roll_call: RollCall = RollCall()
    """The roster's units not seen for a while, not on the table yet, or standing too close (session/roll_call.py)."""
    corrected: Mapping[UnitId, tuple[float, float]] = field(default_factory=dict)
    """Units the players put elsewhere than the camera measured (a correction, a move declared with the camera still):
    where they stand for the rules, inches; the page draws them there."""

    def project_to_image(self, points_in: np.ndarray) -> np.ndarray:
        """Table points (N, 3) inches -> image pixels (N, 2)."""
        return self.calibration.table_to_image(np.asarray(points_in, dtype=np.float64).reshape(-1, 3))


def default_setup(roster: Roster | None, terrain: Sequence[TerrainPiece]) -> dict[str, Any]:
    """The setup object a game starts from when the session gives none: the roster file's own keys (a game's
    cards, board, limits) with the roster also under "roster", and the table's terrain when there is one."""
    setup: dict[str, Any] = {}
    if roster is not None:
        setup.update(roster.to_json())
        setup["roster"] = roster.to_json()
    if terrain or "terrain" not in setup:
        setup["terrain"] = terrain_to_json(tuple(terrain))
    return setup


@dataclass(frozen=True)
class Checkpoint:
    """Everything a pipeline carries from frame to frame, as it stood after `frame`: the game's state and dice,
    the units' positions, the tracks and the (possibly re-solved) camera pose. A replay sought to a later
    frame resumes from it instead of starting the game again (session/timeline.py keeps them)."""

    frame: int
    state: Any
    rng_state: Any
    positions: Mapping[UnitId, Placement]
    tracker: Tracker
    calibration: TableCalibration
    pose_watch: PoseWatch
    overrules: Overrules | None = None
    last: LastRuling | None = None
    fuser: BaseFuser | None = None
    detector: WindowedDetector | None = None
    """Where the tag detector stood (the tags it looks for next, its sweep); None: a full scan starts afresh."""
    pending: PendingRoll | None = None
    """The roll the table waited for after `frame` (session/pending_roll.py)."""
    last_dice: DiceRuling | None = None
    roll_ids: int = 0
    take_backs: TakeBacks | None = None
    """The units whose illegal move was taken back, held where they legally stand (session/take_back.py)."""


@dataclass(frozen=True)
class Prepared:
    """A frame's work that depends on nothing but the frame, done before its turn (`Pipeline.prepare`, on another
    core): its grey image, its tiles and its detector's backstop scans (made now, or later: `backstop`)."""

    index: int
    """The frame it was made from (`process` ignores it for any other)."""
    gray: np.ndarray
    ahead: AheadScan

    def backstop(self, detector: TagDetector | None = None) -> None:
        """Make the frame's backstop scans now, with `detector` (the next frame looks where they found tags)."""
        if self.ahead.sweep is not None:
            self.ahead.sweep.run(detector)


class Pipeline:
    """The live pipeline for one calibrated table. Not thread-safe: one loop drives it.

    game_setup: the game's setup object (docs/scenarios/<game>.md); default: roster + terrain. If the game
    cannot start from it, the pipeline still measures and tracks, and says why in `status`.
    declarations: actions players declared, by frame index (a recorded session's declarations.jsonl); each
    is ruled at its frame, after the frame's own events.
    roll_for_us: whether Tablesight rolls the dice the players did not give (the game setup's "roll_for_us",
    default false, when None); otherwise an action that needs dice waits for them (`pending`). A replay of a
    recording that records its rolls passes False: every roll it needs is in its declarations.
    """

    calibrated = True
    """It measures a calibrated table (session.live_loop.PipelineLike)."""

    def __init__(
        self,
        calibration: TableCalibration,
        roster: Roster | None = None,
        terrain: Sequence[TerrainPiece] = (),
        game: Game | None = None,
        game_setup: Mapping[str, Any] | None = None,
        seed: int = 0,
        declarations: Mapping[int, Sequence[Action]] | None = None,
        fine_every: int = FINE_EVERY,
        roll_for_us: bool | None = None,
    ) -> None:
        self.calibration = calibration
        self.roster = roster
        self.terrain = tuple(terrain)
        self.game = game
        self.rng = random.Random(seed)
        self.declarations = {int(k): tuple(v) for k, v in (declarations or {}).items()}
        self.tracker = Tracker(known_tags=self._known_tags())
        w, h = calibration.board_in
        self.board = {"w": float(w), "d": float(h)}
        self.min_tag_px = float(smallest_tag_px(calibration, smallest_tag_in(roster, terrain), 0.0))
        # live and replayed alike: windows round the tags, a coarse scan and the sweep (vision/windowed.py); 1: a full
        # scan every frame (a folder of still images, which says nothing of how far apart they were taken)
        self.detector = WindowedDetector(min_tag_px=self.min_tag_px, fine_every=fine_every)
        self.pose_watch = PoseWatch(calibration)
        self.state: Any = None
        self.game_status = "measuring only: no game chosen" if game is None else ""
        self.pose_problem = ""
        setup = dict(game_setup) if game_setup else default_setup(roster, terrain)
        self.roll_for_us = bool(setup.get("roll_for_us") is True) if roll_for_us is None else bool(roll_for_us)
        self.pending: PendingRoll | None = None
        """The roll the table waits for (at most one), or None."""
        self.last_dice: DiceRuling | None = None
        """The last action ruled with dice (what a correction corrects), or None."""
        self._roll_ids = 0
        self._dice_events: list[DiceEvent] = []
        """The rolls taken (and corrections) since the frame's events were handed out."""
        self._records: list[tuple[int, Action]] = []
        """Actions ruled since `take_records` that the recording keeps (by frame): the players' declarations as
        ruled (with Tablesight's faces when it rolled for them), and camera moves it rolled for."""
        if game is not None:
            try:
                self.state = game.new_state(setup)
            except RulesInputError as err:
                self.game_status = f"measuring only: {err}"
        self.positions: dict[UnitId, Placement] = {}
        self.overrules = Overrules()
        self.take_backs = TakeBacks()
        self._last: LastRuling | None = None
        self._undoable: LastRuling | None = None
        """The last ruling that changed the game (a refused one changes nothing): what Undo takes back."""
        self._frame = -1
        self._terrain_tags = {p.tag for p in self.terrain if p.tag is not None}
        self._mounts = {m.tag: m for u in roster.units.values() for m in u.mounts} if roster is not None else {}
        self._printed_in = {t: m.tag_in for t, m in self._mounts.items()}
        self.fuser = BaseFuser({
            m.tag: Mount(unit=u.tag, height_in=m.height_in, unit_height_in=u.base_height_in, pm_in=m.pm_in or 0.0,
                         unmeasured_in=m.unmeasured_pm_in, agree_in=u.base_radius_in)
            for u in (roster.units.values() if roster is not None else ()) for m in u.mounts
        })

    def checkpoint(self, frame: int) -> Checkpoint:
        """What this pipeline carries, after it processed `frame` (deep copies: it goes on changing)."""
        return Checkpoint(frame, self.state, self.rng.getstate(), dict(self.positions), copy.deepcopy(self.tracker),
                          self.calibration, copy.deepcopy(self.pose_watch), copy.deepcopy(self.overrules), self._last,
                          copy.deepcopy(self.fuser), self.detector.checkpoint(), self.pending, self.last_dice,
                          self._roll_ids, copy.deepcopy(self.take_backs))

    def resume(self, cp: Checkpoint) -> None:
        """Carry on from `cp` (taken from a pipeline of the same setup): the next frame to process is cp.frame + 1.
        The tag detector carries on where it stood (so a replay sought to a frame scans it as a straight run
        did) when the checkpoint keeps one made as this pipeline makes it; else it starts afresh (a full scan)."""
        self.state, self.positions = cp.state, dict(cp.positions)
        self.rng.setstate(cp.rng_state)
        self.tracker = copy.deepcopy(cp.tracker)
        self.calibration, self.pose_watch = cp.calibration, copy.deepcopy(cp.pose_watch)
        self.overrules = copy.deepcopy(cp.overrules) if cp.overrules is not None else Overrules()
        self.take_backs = copy.deepcopy(cp.take_backs) if cp.take_backs is not None else TakeBacks()
        self._last, self._frame = cp.last, cp.frame
        self._undoable = None  # Undo reaches back no further than the table's own last declaration
        self.pending, self.last_dice, self._roll_ids = cp.pending, cp.last_dice, cp.roll_ids
        if cp.fuser is not None and cp.fuser.mounts == self.fuser.mounts:  # the tags' learnt biases, same roster
            self.fuser = copy.deepcopy(cp.fuser)
        d = cp.detector
        if d is not None and (d.decimate, d.fine_every, d.min_tag_px) == (
                self.detector.decimate, self.detector.fine_every, self.detector.min_tag_px):
            self.detector = copy.deepcopy(d)
        else:
            self.detector.reset()

    @property
    def status(self) -> str:
        """What the table should be told: the game not ruled, or a camera whose pose cannot be solved again."""
        return "; ".join(m for m in (self.pose_problem, self.game_status) if m)

    def _known_tags(self) -> frozenset[int] | None:
        known: set[int] = set()
        if self.roster is not None:
            known |= set(self.roster.units)
        known |= {p.tag for p in self.terrain if p.tag is not None}
        return frozenset(known) if self.roster is not None else None

    # ------------------------------------------------------------------------------------------ heights
    def _base_height(self, tag: int) -> float:
        """The height of tag `tag`'s face above the underside of its base, inches (a unit's own or extra tag)."""
        mount = self._mounts.get(tag)
        return mount.height_in if mount is not None else DEFAULT_BASE_HEIGHT_IN

    def _offsets(self) -> dict[int, tuple[float, float]]:
        return {t: m.offset_in for t, m in self._mounts.items()}

    def _floor_at(self, pieces: Sequence[TerrainPiece], x: float, y: float) -> float:
        """The highest elevated floor under (x, y), inches (0 on the table)."""
        point = shapely.Point(x, y)
        floors = [p.height_in for p in pieces if "elevated" in p.kinds and p.shape.covers(point)]
        return max(floors, default=0.0)

    def measure(self, tags: Sequence[TagObservation]) -> tuple[BaseFix, ...]:
        """Base fixes, one per unit (its tags fused, named by the unit's id) and one per other tag."""
        return self.fuser.fuse(self.measure_tags(tags))

    def measure_tags(self, tags: Sequence[TagObservation]) -> tuple[BaseFix, ...]:
        """Fixes per tag on each tag's own plane: its height above the table or above the floor it stands on."""
        ids = [t.id for t in tags if t.id not in self.calibration.layout.anchors]
        heights = {i: self._base_height(i) for i in ids}
        for piece in self.terrain:  # a terrain piece's tag sits on its top
            if piece.tag is not None:
                heights[piece.tag] = piece.height_in
        fixes = measure_bases(tags, self.calibration, heights, self._offsets())
        if not any("elevated" in p.kinds for p in self.terrain):
            return tuple(fixes)
        carriers = {f.tag: Placement(f.tag, f.x, f.y, yaw_deg=f.yaw_deg) for f in fixes if f.tag in self._terrain_tags}
        floors = [p for p in place_terrain(self.terrain, carriers) if "elevated" in p.kinds and p.height_in > 0]
        if not floors:
            return tuple(fixes)
        return stand_on_floors(fixes, self.calibration.camera_position_in, floors, self._printed_in, self._terrain_tags)

    # ------------------------------------------------------------------------------------------ positions
    def _placements(self) -> dict[UnitId, Placement]:
        """Units on the table now, from the tracker (settled positions; a lifted base is not on the table), with
        the players' corrections in (session/overrule.py)."""
        return self.take_backs.placements(self.overrules.placements(self._camera_placements()))

    def _camera_placements(self) -> dict[UnitId, Placement]:
        """Units on the table now as the camera has them."""
        out: dict[UnitId, Placement] = {}
        for tag, view in self.tracker.tracks.items():
            if tag in self._terrain_tags or view.state is TrackState.LIFTED:
                continue
            if self.roster is not None and tag not in self.roster.units:
                continue
            z = max(0.0, view.z - self._base_height(tag))
            out[tag] = Placement(tag, view.x, view.y, z, view.pm, view.yaw_deg)
        return out

    # ------------------------------------------------------------------------------------------ rules
    def _action_for(self, event: Move | Placed, before: Mapping[UnitId, Placement]) -> Action | None:
        """The game action a tracker event stands for (None when the game has nothing to rule): the game says,
        through `Game.camera_action`, from what the camera saw and measured."""
        assert self.game is not None
        tag = event.tag
        if isinstance(event, Placed):
            return self.game.camera_action(self.state, tag, event.kind, event.at_in, None, positions=before)
        now = self._placements().get(tag)
        measured = Measured(event.length_in, event.pm_in, now.z if now is not None else None)
        return self.game.camera_action(self.state, tag, event.kind, event.to_in, event.from_in, positions=before,
                                       measured=measured)

    def declare(self, action: Action, scripted: bool = False) -> list[dict[str, Any]]:
        """Rule on an action a player declared (in the UI, or `scripted`: a recorded session's declarations); an
        overrule, a position correction (session/overrule.py), a cancelled roll or a dice correction
        (session/pending_roll.py) is Tablesight's own and never reaches the game. The same action declared again
        with more faces answers the pending roll, ruled on the positions as they stood when it was asked.
        While a recorded session plays its own script (the sample), a player's action is ruled but not kept, so
        that the script's later actions stay legal."""
        if self.declarations and not scripted and action.kind not in OVERRULE_KINDS:
            out = [] if action.kind in DICE_KINDS or action.kind == UNDO else self._apply(action, dict(self.positions),
                                                                                          dry=True)
            return [*out, {"rule": "tablesight.script", "outcome": Outcome.INFO.value, "unit": action.unit,
                           "numbers": {}, "message": "This recorded session plays its own script, so the action was "
                           "ruled but not kept: the recording goes on as it was played."}]
        if action.kind in OVERRULE_KINDS:
            if not scripted:
                self._records.append((self._frame, action))
            try:
                out = self._overrule(action) if action.kind == "overrule" else self._correct(action)
                self.overrules.remember(self._frame, out)
                return out
            except RulesInputError as err:
                return [{"rule": f"tablesight.{action.kind}", "outcome": Outcome.ILLEGAL.value, "message": str(err),
                         "unit": action.unit, "numbers": {}}]
        if action.kind in DICE_KINDS:
            if not scripted:
                self._records.append((self._frame, action))
            return self._cancel_roll() if action.kind == CANCEL else self._correct_dice(action)
        if action.kind == UNDO:
            if not scripted:
                self._records.append((self._frame, action))
            return self._undo()
        pending = self.pending
        answers = (pending is not None and same_action(pending.action, action)
                   and len(faces_given(action)) > len(pending.request.given))
        if pending is not None and not answers and not same_action(pending.action, action):
            # the game waits for a roll: nothing else changes it meanwhile (the faces would be ruled on another game)
            return [{"rule": "dice.pending", "outcome": Outcome.ILLEGAL.value, "unit": action.unit,
                     "numbers": {"roll": pending.request.to_json()},
                     "message": f"The table is waiting for the dice of {self.words(pending.action)} "
                                f"({pending.request.sentence()}): give them or cancel that roll, then "
                                f"{self.words(action)}."}]
        before = dict(pending.positions) if answers and pending is not None else dict(self.positions)
        out = self._apply(action, before, record=not scripted, camera=bool(answers and pending is not None
                                                                             and pending.camera))
        self.overrules.remember(self._frame, out)
        return out

    def _undo(self) -> list[dict[str, Any]]:
        """Take back the last declaration: the game goes on from the state before it (once: the one before that is
        not kept). A camera move is not undone here: the figure itself is moved back. While a roll is pending, Undo
        cancels that roll (its action was never ruled)."""
        if self.pending is not None:
            words = self.words(self.pending.action)
            self.pending = None
            return [{"rule": "tablesight.undo", "outcome": Outcome.INFO.value, "unit": None, "numbers": {},
                     "message": f"Undone: {words}, which was waiting for its dice; nothing was ruled."}]
        last = self._undoable
        if last is None or last.camera:
            why = ("the last ruling was a figure moved on the table: move it back instead" if last is not None else
                   "nothing was declared since the game started, or the last declaration was already undone")
            return [{"rule": "tablesight.undo", "outcome": Outcome.ILLEGAL.value, "unit": None, "numbers": {},
                     "message": f"There is no declaration to undo: {why}."}]
        self.state, self._last, self._undoable = last.state_before, None, None
        self.pending = None
        if self.game is not None and last.action.kind in self.game.camera_kinds & MOVE_KINDS:  # a declared move: back
            for unit, p in last.before.items():
                if unit in self.overrules.corrections:
                    self.overrules.corrections[unit] = (float(p.x), float(p.y))
            self.positions = self._placements()
        if self.last_dice is not None and self.last_dice.ruling is last:
            self.last_dice = None  # the dice panel no longer shows its verdict, nor offers to correct its faces
        self.overrules.forget(last.keys)  # its verdicts no longer stand: nothing of them to overrule
        words = self.words(last.action)
        return [{"rule": "tablesight.undo", "outcome": Outcome.INFO.value, "unit": last.action.unit,
                 "numbers": {"undone": last.action.to_json(),
                             "verdicts": [[f, rule, unit] for f, rule, unit in sorted(last.keys, key=str)]},
                 "message": f"Undone: {words}. The game goes on from before it."}]

    @property
    def frame(self) -> int:
        """The last frame processed (-1: none yet): a declaration now is ruled at it."""
        return self._frame

    @property
    def undoable(self) -> LastRuling | None:
        """The ruling Undo would take back now (None: nothing to undo)."""
        return self._undoable

    @property
    def plays_script(self) -> bool:
        """A recorded session playing its own declarations (the sample): its dice are ruled as they were recorded."""
        return bool(self.declarations)

    def set_roll_for_us(self, on: bool) -> None:
        """From now on Tablesight rolls the dice the players do not give (True), or the table waits for them. A
        recorded session playing its own script keeps ruling its dice as it was recorded."""
        if not self.plays_script:
            self.roll_for_us = bool(on)

    def words(self, action: Action) -> str:
        """The action in the game's words ("red 12 attacks blue 20"), its kind's words if the game has none; the
        dice it carries are said apart (a roll's words are the same before its faces are given and after)."""
        if self.game is not None:
            plain = Action(action.kind, action.unit, {k: v for k, v in action.params.items() if k != ROLLS_KEY})
            with contextlib.suppress(Exception):
                return self.game.describe(plain, self._name)
        return action.kind.replace("_", " ")

    def take_dice_events(self) -> list[DiceEvent]:
        """The rolls taken and corrections made since last asked (a frame's events carry them)."""
        out, self._dice_events = self._dice_events, []
        return out

    def take_records(self) -> list[tuple[int, Action]]:
        """What the recording keeps of the actions ruled since last asked, (frame, action) in order: the players'
        declarations as ruled (with Tablesight's faces when it rolled for them, so that a replay, which never
        rolls, rules them the same) and the camera's moves Tablesight rolled for."""
        out, self._records = self._records, []
        return out

    def correction_refused(self) -> str:
        """Why the last action ruled with dice cannot be corrected now ("" : it can)."""
        last = self.last_dice
        if last is None:
            return "Nothing to correct: no action has been ruled with dice yet."
        if self.pending is not None:
            return (f"A roll is pending ({self.pending.request.sentence()}); give it or cancel it before correcting "
                    "the last one.")
        if self._last is not last.ruling:
            return (f"The game has moved on since {self.words(last.action)} was ruled at frame {last.frame}: only the "
                    "last action ruled can be corrected; overrule the verdict instead.")
        return ""

    def _cancel_roll(self) -> list[dict[str, Any]]:
        """Drop the pending roll: its action is not ruled."""
        pending = self.pending
        if pending is None:
            return [{"rule": "dice.cancel", "outcome": Outcome.ILLEGAL.value, "unit": None, "numbers": {},
                     "message": "No roll is pending: there is nothing to cancel."}]
        self.pending = None
        return [{"rule": "dice.cancel", "outcome": Outcome.INFO.value, "unit": pending.action.unit,
                 "numbers": {"roll": pending.request.to_json()},
                 "message": f"The roll for {pending.request.what} was cancelled: {self.words(pending.action)} is not "
                            "ruled."}]

    def _correct_dice(self, action: Action) -> list[dict[str, Any]]:
        """The last action ruled with dice, ruled again with params["faces"] from the state before it (an overrule,
        recorded as one)."""
        why = self.correction_refused()
        faces = action.params.get("faces")
        if not why and (not isinstance(faces, list) or not faces
                        or any(isinstance(f, bool) or not isinstance(f, int) for f in faces)):
            why = f'A dice correction gives the faces as a list of whole numbers such as [4, 6]; got {faces!r}.'
        last = self.last_dice
        if why or last is None or self.game is None or not isinstance(faces, list):
            return [{"rule": "dice.correct", "outcome": Outcome.ILLEGAL.value, "unit": None, "numbers": {},
                     "message": why}]
        corrected = DiceAnswer.of(last.action, faces, "correction")
        try:  # faces the rules cannot take leave the game as it is
            self.game.apply(last.state_before, dict(last.positions), corrected, None)
        except RulesInputError as err:
            return [{"rule": "dice.correct", "outcome": Outcome.ILLEGAL.value, "unit": last.action.unit,
                     "numbers": {}, "message": str(err)}]
        self.state, self.last_dice = last.state_before, None
        self._dice_events.append(RollCorrected(self._frame, last.action, tuple(last.faces), tuple(faces), last.frame))
        said = [{"rule": "dice.correct", "outcome": Outcome.INFO.value, "unit": last.action.unit,
                 "numbers": {"faces_before": last.faces, "faces": list(faces), "ruled_frame": last.frame},
                 "message": f"Overruled: the dice for {self.words(last.action)} were {_faces(last.faces)}, corrected to "
                            f"{_faces(faces)}; it is ruled again with them."}]
        out = self._apply(corrected, dict(last.positions))
        self.overrules.remember(self._frame, out)
        return [*said, *out]

    def _name(self, unit: UnitId | None) -> str:
        ru = self.roster.units.get(unit) if self.roster is not None and unit is not None else None
        if ru is not None:
            return ru.name
        made = self.game.unit_name(self.state, unit) if self.game is not None and unit is not None else None
        return made or f"unit {unit}"

    def _overrule(self, action: Action) -> list[dict[str, Any]]:
        """An overrule, decided in session/overrule.py; the game goes on from the state it leaves."""
        ruled = self.overrules.overrule(action, self.state, self._last, self._name,
                                        self.roster.owners() if self.roster is not None else [])
        if ruled.state is not self.state:
            self._undoable = None  # the overrule took the action back already
        self.state, self._last = ruled.state, ruled.last
        for v in ruled.verdicts:  # a move the camera found illegal, overruled to legal, stands: no longer taken back
            if v.get("rule") == "tablesight.overrule" and v.get("numbers", {}).get("outcome") == "legal" \
                    and v.get("unit") is not None:
                self.take_backs.release(v["unit"])
        self.positions = self._placements()
        return ruled.verdicts

    def _put_where_declared(self, before: Mapping[UnitId, Placement], after: Mapping[UnitId, Placement]) -> None:
        """A move (one of MOVE_KINDS, the camera's to see) the players declared, legal: no camera saw it (a still
        sample, a camera off), so each unit it moved stands where the rules now have it, as a correction puts it,
        until the camera sees that unit move. A put-down declared (Valknut's deploy) leaves the camera's place."""
        seen = self._camera_placements()
        for unit, p in after.items():
            b = before.get(unit)
            if unit in seen and b is not None and (abs(p.x - b.x) > 1e-6 or abs(p.y - b.y) > 1e-6):
                self.overrules.corrections[unit] = (float(p.x), float(p.y))
        self.positions = self._placements()

    def _move_to(self, move: Action, last: LastRuling, at: Sequence[float]) -> Action:
        """`move` (the last move, sent to the corrected point in inches) as its game declares a move to that point
        (`Game.actions_at`): a hex game's move names the hex there, not the point."""
        if self.game is None or move.unit is None:
            return move
        try:
            there = self.game.actions_at(last.state_before, dict(last.before), move.unit, (float(at[0]), float(at[1])))
        except RulesInputError:
            return move
        same = next((a for a in there if a.kind == move.kind and a.unit == move.unit), None)
        if same is None:
            return move
        kept = {k: v for k, v in last.action.params.items() if k not in ("to", "length_in", *same.params)}
        return Action(move.kind, move.unit, {**kept, **same.params})

    def corrected(self) -> dict[UnitId, tuple[float, float]]:
        """Where the players put units the camera measured elsewhere (inches), for the page to draw them there."""
        if not self.overrules.corrections:  # each frame asks: nothing corrected is the usual answer, at no cost
            return {}
        seen = self._camera_placements()
        return {u: xy for u, xy in self.overrules.corrections.items() if u in seen}

    def _correct(self, action: Action) -> list[dict[str, Any]]:
        """A position correction, decided in session/overrule.py; its unit's last move ruled again from there."""
        fix = self.overrules.correct(action, self._camera_placements().get(action.unit) if action.unit is not None
                                     else None, (self.board.get("w", 0.0), self.board.get("d", 0.0)), self._last,
                                     self._name)
        reruled: list[dict[str, Any]] = []
        held = self.take_backs.holds.get(action.unit) if action.unit is not None else None
        if fix.rerule is not None and self._last is not None:
            rerule = self._move_to(fix.rerule, self._last, fix.numbers["at_in"])
            self.state = self._last.state_before
            if action.unit is not None:
                self.take_backs.release(action.unit)  # where the players say it stands is ruled again
            reruled = self._apply(rerule, dict(self._last.before))
            if held is not None and any(v.get("outcome") == Outcome.ILLEGAL.value for v in reruled):
                self.take_backs.holds[held.legal.unit] = held  # still too far: still held where it legally stood
        self.positions = self._placements()
        return [fix.record(bool(reruled)), *reruled]

    def _rule(self, event: TableEvent, before: dict[UnitId, Placement], dry: bool = False) -> list[dict[str, Any]]:
        if self.game is None or self.state is None or not isinstance(event, Move | Placed):
            return []  # a knocked camera, an unknown or doubled tag: no unit moved, nothing to rule
        tag = event.tag
        if isinstance(event, Move) and tag in self.take_backs.holds:  # its last move was taken back (illegal)
            if self.take_backs.is_back(event):
                if not dry:
                    self.take_backs.release(tag)
                return [{"rule": "tablesight.take_back", "outcome": Outcome.INFO.value, "unit": tag, "numbers": {},
                         "message": f"{self._name(tag)} is back where it legally stood."}]
            event = self.take_backs.measured_from(event)  # measured from where the rules keep it
        # a base put down the frame after it went unseen (LIFTED) is missing from `before`: it still started somewhere
        mover = before.get(tag) if isinstance(event, Move) else None
        if mover is None and isinstance(event, Move):
            mover = self._placements().get(tag)
        if mover is not None:
            x0, y0 = event.from_in  # type: ignore[union-attr]
            floor = self._floor_at(place_terrain(self.terrain, before), x0, y0)  # where it stood, not where it is
            before[tag] = mover.moved_to(x0, y0, floor)
        action = self._action_for(event, before)
        if action is None:
            return []
        start = before.get(tag)
        out = self._apply(action, before, dry, camera=True)
        if dry or not isinstance(event, Move):
            return out
        return self.take_backs.ruled(event, start, out, self._name)

    def _next_to_rule(self, pending: Sequence[TableEvent], before: Mapping[UnitId, Placement]) -> int:
        """Which of a frame's events to rule first. The camera reports in one frame what the players did within
        a moment (two tiles put down in turn, found together): the first event that is legal now is ruled
        first, so their order of play is kept; if none is, they go in the tracker's order (by tag)."""
        if len(pending) < 2 or self.game is None or self.state is None:
            return 0
        for k, event in enumerate(pending):
            if self._legal_now(event, before):
                return k
        return 0

    def _legal_now(self, event: TableEvent, before: Mapping[UnitId, Placement]) -> bool:
        """Whether ruling `event` now would draw no illegal verdict: a dry run on a copy of the dice that never
        touches the state (other threads read it: the page's action list, a declaration's own dry run)."""
        ruled = self._rule(event, dict(before), dry=True)
        return not any(v.get("outcome") == Outcome.ILLEGAL.value for v in ruled)

    def _apply(self, action: Action, before: dict[UnitId, Placement], dry: bool = False, camera: bool = False,
               record: bool = False) -> list[dict[str, Any]]:
        """Rule `action` and take the game's new state (dry: only the verdicts, with a copy of the dice). Dice the
        action does not carry are rolled only with "roll for us" on; otherwise the action waits for them (`pending`,
        the state unchanged). camera: a camera move's action; record: a player's declaration the recording keeps."""
        if self.game is None or self.state is None:
            return []
        tag = action.unit
        dice: random.Random | None = self.rng if self.roll_for_us else None
        if dry and dice is not None:
            dice = random.Random()
            dice.setstate(self.rng.getstate())
        try:
            result = self.game.apply(self.state, before, action, dice)
        except RulesInputError as err:
            if record:
                self._records.append((self._frame, action))
            return [{"rule": f"{self.game.name}.input", "outcome": Outcome.ILLEGAL.value, "message": str(err),
                     "unit": tag, "numbers": {}}]
        if dry:
            return [v.to_json() for v in result.verdicts]
        kept: Action = action
        if result.pending is not None:
            out = self._wait_for(action, result, before, camera)
        else:
            out, kept = self._take(action, result, before, camera)
        if record or (camera and kept is not action):
            self._records.append((self._frame, kept))
        return out

    def _wait_for(self, action: Action, result: Result, before: Mapping[UnitId, Placement],
                  camera: bool) -> list[dict[str, Any]]:
        """`action` needs a roll nobody gave: it becomes the pending roll, unless another one is pending."""
        assert result.pending is not None
        waiting = self.pending
        if waiting is not None and not same_action(waiting.action, action):
            return [{"rule": "dice.pending", "outcome": Outcome.ILLEGAL.value, "unit": action.unit,
                     "numbers": {"roll": waiting.request.to_json()},
                     "message": f"The table is waiting for the dice of {self.words(waiting.action)} "
                                f"({waiting.request.sentence()}): give them or cancel that roll, then "
                                f"{self.words(action)} again."}]
        self._roll_ids += 1
        # the same action asking for more dice (its next roll, a tie re-rolled) keeps where and when it was seen
        self.pending = PendingRoll(self._roll_ids, action, result.pending, dict(before),
                                   waiting.frame if waiting is not None else self._frame,
                                   waiting.camera if waiting is not None else camera)
        return [v.to_json() for v in result.verdicts]

    def _take(self, action: Action, result: Result, before: dict[UnitId, Placement], camera: bool = False) \
            -> tuple[list[dict[str, Any]], Action]:
        """The game's new state after `action`; with dice, the rolls taken (events) and the last dice ruling.
        Returns the verdicts and the action as the recording keeps it (with Tablesight's faces if it rolled)."""
        assert self.game is not None
        if self.pending is not None and same_action(self.pending.action, action):
            self.pending = None
        keys = frozenset((self._frame, v.rule, v.unit) for v in result.verdicts)
        state_before = self.state
        last = LastRuling(self.state, action, dict(before), keys, camera)
        self._last = last  # what a correction rules again (an illegal move too)
        if result.state is not self.state and result.state != self.state:
            self._undoable = last  # what Undo takes back: the last ruling that changed the game
        self.state = result.state
        if not camera and self.game is not None and action.kind in self.game.camera_kinds & MOVE_KINDS and result.legal:
            self._put_where_declared(before, result.positions)
        out = [v.to_json() for v in result.verdicts]
        if not result.rolls:
            return out, action
        source = action.source if isinstance(action, DiceAnswer) else "typed"
        camera_faces = action.camera_faces if isinstance(action, DiceAnswer) else None
        # faces Tablesight rolled live are given back by a replay (source "rolled"): still Tablesight's
        taken = tuple(Rolled(r.request, r.faces, "tablesight" if source == "rolled" else r.by) for r in result.rolls)
        rolled = any(r.by == "tablesight" for r in taken)
        faces = [f for r in taken for f in r.faces]
        for r in taken:
            self._dice_events.append(RollTaken(self._frame, r, "rolled" if r.by == "tablesight" else source, r.by,
                                               camera_faces))
        kept: Action = action
        if rolled:
            kept = DiceAnswer.of(action, faces, "rolled")
            said = "; ".join(f"{r.request.count} d{r.request.sides} for {r.request.what}: {_faces(r.faces)}"
                             for r in taken)
            out.append({"rule": "dice.rolled", "outcome": Outcome.INFO.value, "unit": action.unit,
                        "numbers": {"rolls": [r.to_json() for r in taken]},
                        "message": f"Tablesight rolled the dice (roll for us is on): {said}."})
        self._roll_ids += 1
        self.last_dice = DiceRuling(self._roll_ids, DiceAnswer.of(action, faces, "rolled" if rolled else source,
                                                                  camera_faces),
                                    taken, tuple(out), "rolled" if rolled else source, self._frame,
                                    state_before, dict(before), last)
        return out, kept

    # ------------------------------------------------------------------------------------------ frame
    def prime(self, frame: Any, prepared: Prepared | None = None) -> None:
        """Show the detector `frame` (the one a resumed checkpoint was taken after) as the last frame it saw;
        `prepared`: that frame's `prepare`, whose backstop scans it then takes rather than making its own."""
        ahead = prepared.ahead if prepared is not None and prepared.index == int(frame.index) else None
        self.detector.prime(gray_of(frame), int(frame.index), ahead.sweep if ahead is not None else None)

    def prepare(self, frame: Any, detector: TagDetector | None = None, backstop: bool = True) -> Prepared:
        """The part of `frame`'s work that depends on nothing but the frame (its grey image, the detector's
        `scan_ahead`, and unless `backstop` is False its backstop scans: `Prepared.backstop` then makes them), for
        `process(frame, prepared=...)`. Thread-safe: the read-ahead runs it on other cores, each with a
        `detector` of its own (session/read_ahead.py)."""
        self.calibration.check_frame(size_of(frame))
        gray = gray_of(frame)
        prepared = Prepared(int(frame.index), gray, self.detector.scan_ahead(gray, int(frame.index), detector))
        if backstop:
            prepared.backstop(detector)
        return prepared

    def process(self, frame: Any, declared: Sequence[Action] = (), prepared: Prepared | None = None) -> FrameResult:
        """Run one frame (a `Frame`, or anything with .index, .t and a BGR .image) through every stage; `declared` are the
        players' declared actions at this frame, ruled after the frame's own events. `prepared`: this frame's
        `prepare`, made beforehand (the same tags come out either way)."""
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        self._records.clear()  # the live loop takes them after each call; a replay keeps none
        size = size_of(frame)
        self.calibration.check_frame(size)
        if prepared is not None and prepared.index != int(frame.index):
            prepared = None  # made from another frame
        gray = gray_of(frame) if prepared is None else prepared.gray
        tags = self.detector.detect(gray, int(frame.index), float(frame.t),
                                    prepared.ahead if prepared is not None else None)
        knocked = self._check_pose(tags, size, int(frame.index))
        # the anchors say the camera moved but the pose cannot be solved yet (an anchor under a hand): this
        # frame's positions would be off by the knock, so it is not measured or tracked (no false moves)
        unsure = not knocked and (self.pose_watch.shift_px(tags) or 0.0) > ANCHOR_SHIFT_PX
        self.pose_problem = (
            "the camera or an anchor has moved and the pose cannot be solved again yet: uncover all four anchors, "
            "or put a moved anchor back (or calibrate again); nothing is measured meanwhile" if unsure else ""
        )
        t1 = time.perf_counter()
        fixes = () if unsure else self.measure(tags)
        t2 = time.perf_counter()
        self._frame = int(frame.index)
        before = self._placements()
        tracked = [] if unsure else self.tracker.update(int(frame.index), float(frame.t), fixes)
        events: list[TableEvent] = [*knocked, *tracked]
        for e in tracked:
            if isinstance(e, Move | Placed):
                self.overrules.moved(e.tag)  # the camera saw it move or put down: a correction no longer holds
        t3 = time.perf_counter()
        verdicts = self._rule_all(events, before, int(frame.index))
        self.positions = self._placements()
        for action, scripted in ((a, True) for a in self.declarations.get(int(frame.index), ())):
            for v in self.declare(action, scripted):
                verdicts.append({**v, "frame": int(frame.index), "event": "declared", "action": action.to_json()})
        for action in declared:
            for v in self.declare(action):
                verdicts.append({**v, "frame": int(frame.index), "event": "declared", "action": action.to_json()})
        self.overrules.remember(int(frame.index), verdicts)
        events += self.take_dice_events()
        overlays = self._overlays(self.positions)
        roll_call = call_roll(self.tracker.tracks, self.roster, float(frame.t), self.off_table())
        t4 = time.perf_counter()
        timings.update(detect=(t1 - t0) * 1e3, map=(t2 - t1) * 1e3, track=(t3 - t2) * 1e3, rules=(t4 - t3) * 1e3)
        return FrameResult(
            frame_index=int(frame.index),
            t=float(frame.t),
            frame=frame,
            tags=tuple(tags),
            fixes=fixes,
            events=tuple(events),
            verdicts=tuple(verdicts),
            overlays=tuple(overlays),
            board=self.board,
            calibration=self.calibration,
            timings_ms=timings,
            roll_call=roll_call,
            corrected=self.corrected(),
        )

    def _rule_all(self, events: Sequence[TableEvent], before: dict[UnitId, Placement], frame: int) -> list[dict[str, Any]]:
        """Rule a frame's events in the order the players made them (see `_next_to_rule`)."""
        verdicts: list[dict[str, Any]] = []
        pending = list(events)
        while pending:
            event = pending.pop(self._next_to_rule(pending, before))
            for v in self._rule(event, dict(before)):
                verdicts.append({**v, "frame": frame, "event": event.kind})
            before = self._placements()
        return verdicts

    def finish(self) -> tuple[tuple[TableEvent, ...], tuple[dict[str, Any], ...]]:
        """The recording has ended: the moves made in its last moments (vision.tracker.Tracker.finish), ruled
        at the last frame. Returns (events, verdicts)."""
        before = self._placements()
        events = tuple(self.tracker.finish())
        for e in events:
            if isinstance(e, Move | Placed):
                self.overrules.moved(e.tag)
        verdicts = self._rule_all(events, before, self._frame)
        self.positions = self._placements()
        self.overrules.remember(self._frame, verdicts)
        return (*events, *self.take_dice_events()), tuple(verdicts)

    def off_table(self) -> frozenset[UnitId]:
        """The units the game has taken off the table (destroyed, aboard a ship): not missing when unseen."""
        if self.game is None or self.state is None:
            return frozenset()
        return self.game.off_table(self.state)

    def _check_pose(self, tags: Sequence[TagObservation], size: tuple[int, int], frame: int) -> list[CameraMoved]:
        """Solve the pose again when the anchors say the camera moved; a "camera_moved" event if it did."""
        moved = self.pose_watch.check(tags, size)
        if moved is None:
            return []
        self.calibration, shift = moved
        if shift is None:  # a refinement in the frames after a knock, not news
            return []
        return [CameraMoved(frame, round(shift, 2), round(self.calibration.residual_px, 3))]

    def _overlays(self, positions: Mapping[UnitId, Placement], selected: int | None = None) -> list[dict[str, Any]]:
        shapes: list[dict[str, Any]] = []
        for piece in place_terrain(self.terrain, positions):
            style = "terrain-blocking" if "blocking" in piece.kinds else "terrain"
            shapes.append({"shape": Shape.POLYGON.value, "points": [list(p) for p in piece.polygon], "style": style,
                           "radius": 0.0, "inner": 0.0, "label": piece.name, "unit": None, "owner": None})
        if self.game is not None and self.state is not None:
            with contextlib.suppress(RulesInputError):
                shapes += [o.to_json() for o in self.game.overlays(self.state, positions, selected)]
        if self.take_backs.holds and self.roster is not None:
            radii = {t: u.base_radius_in for t, u in self.roster.units.items()}
            shapes += [o.to_json() for o in self.take_backs.overlays(radii, self._name)]
        return shapes

    def overlays_now(self) -> list[dict[str, Any]]:
        """The terrain and the game's shapes for the positions as they stand (after a declared action)."""
        return self._overlays(self.positions)

    def overlays_for(self, selected: int) -> list[dict[str, Any]]:
        """The game's shapes with `selected` chosen: its rings, bands and movement allowance."""
        if self.game is None or self.state is None:
            return []
        return [o.to_json() for o in self.game.overlays(self.state, self.positions, selected)]

    def ask(self, unit: int, target: int) -> dict[str, Any]:
        """What the game says of `unit` attacking `target` now (`Game.assess`: the to-hit number and the figures
        behind it, where the game has them), as JSON; {} when no game is ruled or it has nothing to add."""
        if self.game is None or self.state is None:
            return {}
        answer = self.game.assess(self.state, self.positions, unit, target)
        return answer.to_json() if answer is not None else {}


def _faces(faces: Sequence[int]) -> str:
    """Faces as the players say them: "4, 6 and 1"."""
    words = [str(f) for f in faces]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1] if words else "none"
