"""Tag tracks and move events: from per-frame base fixes (inches) to `Move`, `Placed`, `UnknownTag` and
`DuplicateTag` events.

A track per roster tag id is in one of four states:

- ON_TABLE: settled and seen where it settled; its reported position is the running mean of its recent
  fixes, so a still base reports the same position frame to frame (within thousandths of an inch).
- OCCLUDED: not seen since it was last on the table (a hand or a neighbouring figure over it, or lifted: not
  known until it reappears). It keeps its position. Seen again within `STILL_RADIUS_IN` it is simply ON_TABLE
  again: no move; seen elsewhere `DEPART_FRAMES` times in a row, it was lifted (a wild first fix at the edge of
  what hid it is not enough).
- MOVING: seen away from where it settled (slid, or carried in view), or newly seen and not yet settled.
- LIFTED: was MOVING and is now not seen (in a hand above the camera's view or off the table).

A base that was MOVING settles when `SETTLE_FRAMES` fixes spanning `SETTLE_S` seconds lie within
`SETTLE_RADIUS_IN` of their mean without drifting (`SETTLE_DRIFT_IN`). If that place is `MOVE_MIN_IN` or more
from where it was, one `Move` is emitted (from, to, straight-line length, ±, path, elapsed time); closer, the
base was put back and nothing is emitted. A tag's first settling emits `Placed`. Until a moving base is
`MOVE_MIN_IN` from where it settled, its settled position is still the one reported. A base crept away
without ever leaving `STILL_RADIUS_IN` of its running mean is reported in `MOVE_MIN_IN` steps.

A base already on the table when the stream starts (first seen in its first `START_FRAMES` frames) and seen
still for `START_STILL_FRAMES` fixes has a known starting point even if it never stays long enough to settle
(a recording started as a player reaches for a model): as soon as it goes unseen, or is seen beyond
`STILL_RADIUS_IN` of that place, it is `Placed` there and behaves as a settled base from then on, so hidden it
is OCCLUDED in place, and put down elsewhere it is a `Move` from there.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Protocol

import cv2
import numpy as np

STILL_RADIUS_IN = 0.05
"""A fix within this distance (inches) of a settled base's position is the same still base. The detector's
frame-to-frame noise is ~0.002-0.005" and a hand's shadow or partial occlusion shifts a fix by a hundredth or
two; a real move that matters to a game is a tenth or more."""

DEPART_FRAMES = 3
"""Consecutive fixes beyond STILL_RADIUS_IN before a settled base counts as moving: one or two wild fixes
(motion blur, a misdetection at a hand's edge) must never start a move."""

SETTLE_FRAMES = 5
"""Fixes in a row (seen frames) that must agree before a moving base counts as put down."""

SETTLE_S = 0.3
"""Seconds those agreeing fixes must span: a hand holding a base still in the air for a moment is not a
placement, so fast cameras need more than SETTLE_FRAMES frames."""

SETTLE_RADIUS_IN = 0.03
"""Fixes agree (the base is still) when all lie within this distance (inches) of their mean: several times
the detector's noise, and below a hand's tremor (~0.04") when it holds a base in the air."""

MOVE_MIN_IN = 0.1
"""A base that settles less than this (inches) from where it was has not moved: it was seen again after a
hand passed, or lifted and put back in place."""

SETTLE_DRIFT_IN = 0.015
"""The means of the older and newer halves of those fixes must lie this close (inches): a base pushed slowly
stays inside SETTLE_RADIUS_IN for a while but drifts; with 0.005" noise the halves differ by ~0.004"."""

SETTLED_WINDOW = 30
"""Fixes averaged for a settled base's reported position: enough to pull 0.005" noise down to ~0.001"."""

PATH_TOLERANCE_IN = 0.05
"""Douglas-Peucker tolerance (inches) when a slide's fixes are reduced to a polyline of corner points."""

LIFT_GAP_FRAMES = 3
"""A move during which the base went unseen for this many frames in a row is reported as lifted."""

END_SETTLE_FRAMES = 3
"""When the recording stops, a moving base whose last this many fixes (at least) agree counts as put down: a
move made in the last moments of a recording is reported, not lost with the recording's end."""

START_FRAMES = 3
"""A tag first seen within this many frames of the stream's start was on the table when it started."""

START_STILL_FRAMES = 2
"""Agreeing fixes (within SETTLE_RADIUS_IN of their mean) that give such a base its starting point."""

DUPLICATE_QUIET_FRAMES = 30
"""A DuplicateTag episode ends after this many frames without the duplicate; a new one is reported again."""


class TrackState(Enum):
    """Where a tracked base is: on the table, hidden in place, moving in view, or lifted out of view."""

    ON_TABLE = "on_table"
    OCCLUDED = "occluded"
    MOVING = "moving"
    LIFTED = "lifted"


class FixLike(Protocol):
    """A base fix as `vision.positions.BaseFix` gives it: tag id, base centre x, y and tag height z (inches),
    yaw (degrees), ± (inches, two-sigma) and the detector's decision margin."""

    @property
    def tag(self) -> int: ...
    @property
    def x(self) -> float: ...
    @property
    def y(self) -> float: ...
    @property
    def z(self) -> float: ...
    @property
    def yaw_deg(self) -> float: ...
    @property
    def pm(self) -> float: ...
    @property
    def margin(self) -> float: ...


Point = tuple[float, float]


def _r(v: float) -> float:
    return round(float(v), 4)


def _pt(p: Point) -> list[float]:
    return [_r(p[0]), _r(p[1])]


def _rounded(event: Any, points: tuple[str, ...] = (), numbers: tuple[str, ...] = (), paths: tuple[str, ...] = ()) -> None:
    """Round an event's inches to 0.0001" as it is made: the typed value and its JSON say the same numbers."""
    for name in points:
        object.__setattr__(event, name, (_r(getattr(event, name)[0]), _r(getattr(event, name)[1])))
    for name in numbers:
        object.__setattr__(event, name, _r(getattr(event, name)))
    for name in paths:
        object.__setattr__(event, name, tuple((_r(p[0]), _r(p[1])) for p in getattr(event, name)))


@dataclass(frozen=True)
class Move:
    """A base put down `length_in` ± `pm_in` inches from where it was; `path_in` is the polyline it took
    (from, corners of a slide, to), `elapsed_s` the seconds from leaving to being put down."""

    kind: ClassVar[str] = "move"

    frame: int
    t: float
    tag: int
    from_in: Point
    to_in: Point
    length_in: float
    pm_in: float
    path_in: tuple[Point, ...]
    path_length_in: float
    elapsed_s: float
    lifted: bool
    left_frame: int
    placed_frame: int

    def __post_init__(self) -> None:
        _rounded(self, ("from_in", "to_in"), ("length_in", "pm_in", "path_length_in"), ("path_in",))

    def to_json(self) -> dict[str, Any]:
        return {"type": "move", "frame": self.frame, "tag": self.tag, "from_in": _pt(self.from_in),
                "to_in": _pt(self.to_in), "length_in": _r(self.length_in), "pm_in": _r(self.pm_in),
                "path_in": [_pt(p) for p in self.path_in], "path_length_in": _r(self.path_length_in),
                "elapsed_s": round(self.elapsed_s, 3), "lifted": self.lifted, "t": round(self.t, 3),
                "left_frame": self.left_frame, "placed_frame": self.placed_frame}


@dataclass(frozen=True)
class Placed:
    """A tag settled on the table for the first time (deployed), at `at_in` ± `pm_in` inches."""

    kind: ClassVar[str] = "placed"

    frame: int
    t: float
    tag: int
    at_in: Point
    pm_in: float
    yaw_deg: float

    def __post_init__(self) -> None:
        _rounded(self, ("at_in",), ("pm_in",))

    def to_json(self) -> dict[str, Any]:
        return {"type": "placed", "frame": self.frame, "tag": self.tag, "at_in": _pt(self.at_in),
                "pm_in": _r(self.pm_in), "yaw_deg": round(self.yaw_deg, 2), "t": round(self.t, 3)}


@dataclass(frozen=True)
class UnknownTag:
    """A tag id the roster does not know was seen (reported once per id); it is not tracked."""

    kind: ClassVar[str] = "unknown_tag"

    frame: int
    t: float
    tag: int
    at_in: Point

    def to_json(self) -> dict[str, Any]:
        return {"type": "unknown_tag", "frame": self.frame, "tag": self.tag, "at_in": _pt(self.at_in),
                "t": round(self.t, 3)}


@dataclass(frozen=True)
class DuplicateTag:
    """Two or more bases showed the same tag id in one frame (reported once per episode), at `at_in`."""

    kind: ClassVar[str] = "duplicate_tag"

    frame: int
    t: float
    tag: int
    at_in: tuple[Point, ...]

    def to_json(self) -> dict[str, Any]:
        return {"type": "duplicate_tag", "frame": self.frame, "tag": self.tag,
                "at_in": [_pt(p) for p in self.at_in], "t": round(self.t, 3)}


Event = Move | Placed | UnknownTag | DuplicateTag


@dataclass(frozen=True)
class TrackView:
    """A track as the rest of the pipeline sees it: state, position (inches; the settled mean when settled),
    tag height z, yaw, ± (inches), whether it has ever settled, and the last frame it was seen in and that frame's
    own time (seconds, the frames' timestamps: a replay says what live said)."""

    tag: int
    state: TrackState
    x: float
    y: float
    z: float
    yaw_deg: float
    pm: float
    settled: bool
    last_seen_frame: int
    last_seen_t: float = 0.0


@dataclass(frozen=True)
class _Sample:
    frame: int
    t: float
    x: float
    y: float
    z: float
    yaw_deg: float
    pm: float


def _mean_xy(samples: Sequence[_Sample]) -> Point:
    """The mean position, inches (plain floats: a window holds a few samples, where numpy costs more than it does)."""
    n = len(samples)
    return (sum([s.x for s in samples]) / n, sum([s.y for s in samples]) / n)


def _mean_yaw(samples: Sequence[_Sample]) -> float:
    """The circular mean of the samples' yaw, degrees."""
    rad = [math.radians(s.yaw_deg) for s in samples]
    return math.degrees(math.atan2(sum(map(math.sin, rad)), sum(map(math.cos, rad))))


def _dist(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _polyline(points: Sequence[Point]) -> tuple[Point, ...]:
    """Reduce a noisy run of points to its corners (Douglas-Peucker, PATH_TOLERANCE_IN), ends kept."""
    if len(points) <= 2:
        return tuple(points)
    arr = np.asarray(points, dtype=np.float64)
    # approxPolyDP works in float32; shift to the first point so inches keep their precision
    rel = (arr - arr[0]).astype(np.float32).reshape(-1, 1, 2)
    kept = cv2.approxPolyDP(rel, PATH_TOLERANCE_IN, False).reshape(-1, 2).astype(np.float64) + arr[0]
    out = [(float(p[0]), float(p[1])) for p in kept]
    out[0], out[-1] = points[0], points[-1]
    return tuple(out)


class _Track:
    """Mutable per-tag state inside the Tracker (never leaves it; `TrackView` is the public value)."""

    def __init__(self, tag: int, from_start: bool = False) -> None:
        self.tag = tag
        self.early: list[_Sample] | None = [] if from_start else None
        """The agreeing fixes of a base seen from the stream's start, until it settles (None: not such a base)."""
        self.state = TrackState.MOVING
        self.settled = False
        self.window: deque[_Sample] = deque(maxlen=SETTLED_WINDOW)  # fixes of the settled base
        self.origin: _Sample | None = None  # where the last event (Placed / Move) put it
        self.origin_at: Point = (0.0, 0.0)
        self.origin_pm = 0.0
        self.pending: list[_Sample] = []  # displaced fixes, not yet DEPART_FRAMES of them
        self.pending_gap = 0  # the longest unseen run since the settled base was last seen in place
        self.run: deque[_Sample] = deque()  # the newest agreeing fixes while moving
        self.path: list[Point] = []  # fixes seen while moving, before the settling run
        self.left: _Sample | None = None  # last still fix at the place it left
        self.left_at: Point = (0.0, 0.0)
        self.left_pm = 0.0
        self.unseen_run = 0
        self.gap_before = 0  # frames unseen before the current fix
        self.longest_gap = 0
        self.last: _Sample | None = None

    # ---- values ---------------------------------------------------------------------------------
    def _still(self) -> bool:
        return self.settled and self.state in (TrackState.ON_TABLE, TrackState.OCCLUDED)

    def _near_left(self) -> bool:
        """Moving, but not yet demonstrably away from where it settled: keep reporting that place."""
        return (self.settled and self.state is TrackState.MOVING and self.last is not None
                and _dist((self.last.x, self.last.y), self.left_at) < MOVE_MIN_IN)

    def position(self) -> Point:
        if self._still():
            return _mean_xy(self.window)
        if self._near_left():
            return self.left_at
        assert self.last is not None
        return (self.last.x, self.last.y)

    def view(self) -> TrackView:
        assert self.last is not None
        x, y = self.position()
        still = self._still() or self._near_left()
        return TrackView(tag=self.tag, state=self.state, x=x, y=y, z=self.last.z,
                         yaw_deg=_mean_yaw(self.window) if still else self.last.yaw_deg,
                         pm=sum([s.pm for s in self.window]) / len(self.window) if still else self.last.pm,
                         settled=self.settled, last_seen_frame=self.last.frame, last_seen_t=self.last.t)

    # ---- transitions ----------------------------------------------------------------------------
    def unseen(self, frame: int, t: float) -> Event | None:
        placed = self._promote(frame, t) if self._has_start() else None
        self.unseen_run += 1
        self.longest_gap = max(self.longest_gap, self.unseen_run)
        self.pending.clear()  # displaced fixes must come in consecutive frames
        if self.state is TrackState.ON_TABLE:
            self.state = TrackState.OCCLUDED
        elif self.state is TrackState.MOVING:
            self.state = TrackState.LIFTED
        return placed

    def seen(self, s: _Sample) -> Event | None:
        self.last = s
        self.gap_before = self.unseen_run
        self.unseen_run = 0
        if self.early is not None and not self.settled:
            early = [*self.early, s]
            centre = _mean_xy(early)
            if all(_dist((e.x, e.y), centre) <= SETTLE_RADIUS_IN for e in early):
                self.early.append(s)
            elif self._has_start() and _dist((s.x, s.y), _mean_xy(self.early)) > STILL_RADIUS_IN:
                placed = self._promote(s.frame, s.t)  # it stood there: now it leaves
                self._seen_still(s)
                return placed
        if self._still():
            return self._seen_still(s)
        return self._seen_moving(s)

    def _has_start(self) -> bool:
        return self.early is not None and not self.settled and len(self.early) >= START_STILL_FRAMES

    def _promote(self, frame: int, t: float) -> Placed:
        """A base seen still from the stream's start (too briefly to settle) is leaving or unseen: it stood there,
        so it is placed there (reported now) and settled from now on."""
        assert self.early is not None
        run, self.early = self.early, None
        at = _mean_xy(run)
        pm = float(np.mean([r.pm for r in run]))
        self.window = deque(run, maxlen=SETTLED_WINDOW)
        self.state = TrackState.ON_TABLE
        self.settled = True
        self.run = deque()
        self.pending = []
        self._mark_origin(run[0], at, pm)
        return Placed(frame=frame, t=t, tag=self.tag, at_in=at, pm_in=pm, yaw_deg=_mean_yaw(run))

    def _seen_still(self, s: _Sample) -> Event | None:
        here = _mean_xy(self.window)
        if _dist((s.x, s.y), here) <= STILL_RADIUS_IN:
            self.state = TrackState.ON_TABLE
            self.pending.clear()
            self.pending_gap = 0
            self.window.append(s)
            return self._crept(s)
        # seen elsewhere: slid, or (after it was unseen) lifted; or one wild fix, as at the edge of a hand or a
        # figure that hid it, so it must be seen elsewhere DEPART_FRAMES times in a row
        self.pending_gap = max(self.pending_gap, self.gap_before)
        self.pending.append(s)
        if len(self.pending) >= DEPART_FRAMES:
            gap = self.pending_gap
            self._depart(self.pending, from_at=here)
            self.longest_gap = gap
        return None

    def _crept(self, s: _Sample) -> Event | None:
        """A base pushed so slowly that no fix ever left STILL_RADIUS_IN: report it once it has gone
        MOVE_MIN_IN from its last event's place."""
        assert self.origin is not None
        here = _mean_xy(self.window)
        length = _dist(self.origin_at, here)
        if length < MOVE_MIN_IN:
            return None
        pm_here = float(np.mean([w.pm for w in self.window]))
        move = Move(frame=s.frame, t=s.t, tag=self.tag, from_in=self.origin_at, to_in=here, length_in=length,
                    pm_in=math.hypot(self.origin_pm, pm_here), path_in=(self.origin_at, here),
                    path_length_in=length, elapsed_s=s.t - self.origin.t, lifted=False,
                    left_frame=self.origin.frame, placed_frame=s.frame)
        self._mark_origin(s, here, pm_here)
        return move

    def _mark_origin(self, s: _Sample, at: Point, pm: float) -> None:
        self.origin, self.origin_at, self.origin_pm = s, at, pm

    def _depart(self, fixes: Sequence[_Sample], from_at: Point) -> None:
        """Leave the settled place: remember where from, start collecting the path and a settling run."""
        self.left = self.window[-1]
        self.left_at = from_at
        self.left_pm = float(np.mean([w.pm for w in self.window]))
        self.path = [from_at]
        self.run = deque()
        self.longest_gap = 0
        self.state = TrackState.MOVING
        fixes = list(fixes)
        self.pending = []
        self.pending_gap = 0
        for f in fixes:
            self._add_run(f)

    def _add_run(self, s: _Sample) -> None:
        run = self.run
        run.append(s)
        while len(run) > 1:  # the oldest fixes that no longer agree were on the way
            centre = _mean_xy(run)
            if all(_dist((r.x, r.y), centre) <= SETTLE_RADIUS_IN for r in run):
                break
            dropped = run.popleft()
            self.path.append((dropped.x, dropped.y))
        while len(run) > SETTLE_FRAMES and run[-1].t - run[1].t >= SETTLE_S - 1e-9:  # keep the run minimal
            dropped = run.popleft()
            self.path.append((dropped.x, dropped.y))

    def _seen_moving(self, s: _Sample) -> Event | None:
        self.state = TrackState.MOVING
        self._add_run(s)
        run = list(self.run)
        if len(run) < SETTLE_FRAMES or run[-1].t - run[0].t < SETTLE_S - 1e-9:
            return None
        half = len(run) // 2
        if _dist(_mean_xy(run[:half]), _mean_xy(run[half:])) > SETTLE_DRIFT_IN:
            return None  # still creeping along: not put down yet
        return self._settle(s, run)

    def finish(self) -> Event | None:
        """The stream ends: a base still moving whose newest fixes agree (END_SETTLE_FRAMES or more, without
        drifting) was put down there; anything else (in a hand, still sliding) stays as it is."""
        if self.state is not TrackState.MOVING or self.last is None or self._near_left():
            return None
        run = list(self.run)
        if len(run) < END_SETTLE_FRAMES or run[-1] is not self.last:
            return None
        half = len(run) // 2
        if _dist(_mean_xy(run[:half]), _mean_xy(run[half:])) > SETTLE_DRIFT_IN:
            return None
        return self._settle(self.last, run)

    def _settle(self, s: _Sample, run: list[_Sample]) -> Event | None:
        to = _mean_xy(run)
        pm_to = float(np.mean([r.pm for r in run]))
        first = not self.settled
        self.early = None
        self.window = deque(run, maxlen=SETTLED_WINDOW)
        self.state = TrackState.ON_TABLE
        self.settled = True
        self.run = deque()
        if first:
            self._mark_origin(run[0], to, pm_to)
            return Placed(frame=s.frame, t=s.t, tag=self.tag, at_in=to, pm_in=pm_to, yaw_deg=_mean_yaw(run))
        assert self.left is not None and self.origin is not None
        start, start_pm, left = self.left_at, self.left_pm, self.left
        if _dist(start, to) < MOVE_MIN_IN:
            if _dist(self.origin_at, to) < MOVE_MIN_IN:
                return None  # put back where it was, or seen again after a hand passed
            start, start_pm, left = self.origin_at, self.origin_pm, self.origin  # nudges added up
        path = _polyline([start, *self._smoothed(self.path[1:]), to])
        path_length = sum(_dist(a, b) for a, b in zip(path[:-1], path[1:]))
        move = Move(frame=s.frame, t=s.t, tag=self.tag, from_in=start, to_in=to, length_in=_dist(start, to),
                    pm_in=math.hypot(start_pm, pm_to), path_in=path, path_length_in=path_length,
                    elapsed_s=run[0].t - left.t, lifted=self.longest_gap >= LIFT_GAP_FRAMES,
                    left_frame=left.frame, placed_frame=run[0].frame)
        self._mark_origin(run[0], to, pm_to)
        return move

    @staticmethod
    def _smoothed(points: Sequence[Point]) -> list[Point]:
        """Median of three along the path: one wild fix must not become a corner."""
        if len(points) < 3:
            return list(points)
        arr = np.asarray(points, dtype=np.float64)
        out: list[Point] = []
        for i in range(len(points)):
            m = np.median(arr[max(0, i - 1):i + 2], axis=0)
            out.append((float(m[0]), float(m[1])))
        return out


class Tracker:
    """Turns base fixes, frame by frame, into tracks and events. `update()` once per frame; `reset()` forgets.

    `known_tags`: the tag ids the roster knows (None = every tag id is a unit). Others raise one UnknownTag.
    """

    def __init__(self, known_tags: Collection[int] | None = None) -> None:
        self.known_tags: frozenset[int] | None = frozenset(known_tags) if known_tags is not None else None
        self.reset()

    def reset(self) -> None:
        """Forget every track and every reported unknown / duplicate tag."""
        self._tracks: dict[int, _Track] = {}
        self._unknown_reported: set[int] = set()
        self._duplicate_last_frame: dict[int, int] = {}
        self._last_frame: int | None = None
        self._frames = 0  # frames fed since the start (or reset)
        self._views: dict[int, TrackView] | None = None  # `tracks` until the next update, finish or reset

    @property
    def tracks(self) -> dict[int, TrackView]:
        """Every track by tag id (positions in inches). Worked out once between two updates (the pipeline and the
        game ask for it several times a frame)."""
        if self._views is None:
            self._views = {tag: tr.view() for tag, tr in sorted(self._tracks.items()) if tr.last is not None}
        return dict(self._views)

    def finish(self) -> list[Event]:
        """The stream has ended (a recording stopped): the moves and placements made in its last moments,
        too short for SETTLE_FRAMES and SETTLE_S, reported now (in tag order). A base in a hand stays lifted."""
        self._views = None
        events = [e for _, tr in sorted(self._tracks.items()) if (e := tr.finish()) is not None]
        return events

    def update(self, frame: int, t: float, fixes: Sequence[FixLike],
               known_tags: Collection[int] | None = None) -> list[Event]:
        """Feed one frame's base fixes (inches); returns the events this frame produced, in tag order.
        `known_tags` here replaces the roster's ids from now on (a roster edited mid-game)."""
        if self._last_frame is not None and frame <= self._last_frame:
            raise ValueError(f"Tracker frames must increase; got frame {frame} after {self._last_frame}.")
        self._last_frame = frame
        self._frames += 1
        self._views = None
        if known_tags is not None:
            self.known_tags = frozenset(known_tags)
        events: list[Event] = []
        by_tag: dict[int, list[FixLike]] = {}
        for f in fixes:
            by_tag.setdefault(int(f.tag), []).append(f)
        chosen: dict[int, FixLike] = {}
        for tag in sorted(by_tag):
            group = by_tag[tag]
            if self.known_tags is not None and tag not in self.known_tags:
                if tag not in self._unknown_reported:
                    self._unknown_reported.add(tag)
                    events.append(UnknownTag(frame=frame, t=t, tag=tag, at_in=(float(group[0].x),
                                                                                float(group[0].y))))
                continue
            if len(group) > 1:
                last = self._duplicate_last_frame.get(tag)
                if last is None or frame - last > DUPLICATE_QUIET_FRAMES:
                    events.append(DuplicateTag(frame=frame, t=t, tag=tag,
                                               at_in=tuple((float(g.x), float(g.y)) for g in group)))
                self._duplicate_last_frame[tag] = frame
                track = self._tracks.get(tag)
                if track is None or track.last is None:
                    continue  # which of them is the unit is not known yet
                here = track.position()
                chosen[tag] = min(group, key=lambda g: _dist((float(g.x), float(g.y)), here))
            else:
                chosen[tag] = group[0]
        for tag in sorted(set(chosen) | set(self._tracks)):
            track = self._tracks.get(tag)
            fix = chosen.get(tag)
            if fix is None:
                if track is not None and (placed := track.unseen(frame, float(t))) is not None:
                    events.append(placed)
                continue
            if track is None:
                track = self._tracks[tag] = _Track(tag, from_start=self._frames <= START_FRAMES)
            sample = _Sample(frame=frame, t=float(t), x=float(fix.x), y=float(fix.y), z=float(fix.z),
                             yaw_deg=float(fix.yaw_deg), pm=float(fix.pm))
            event = track.seen(sample)
            if event is not None:
                events.append(event)
        return events
