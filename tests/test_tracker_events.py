"""Tracker: synthetic base-fix sequences with seeded noise; events and reported positions against ground truth."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from vision.positions import BaseFix
from vision.tracker import (
    DuplicateTag,
    Event,
    Move,
    Placed,
    Tracker,
    TrackState,
    TrackView,
    UnknownTag,
)

FPS = 30.0
NOISE_IN = 0.005  # one-sigma noise per axis of every fix (inches)

Truth = Callable[[float], "tuple[float, float] | None"]  # t seconds -> true (x, y) inches, None = not seen


def fix(tag: int, x: float, y: float, pm: float = 0.02) -> BaseFix:
    """A base fix as vision.positions.measure_bases makes it (tag face 0.125" up, yaw 0)."""
    return BaseFix(tag=tag, x=x, y=y, z=0.125, yaw_deg=0.0, pm=pm, tag_center_in=(x, y), margin=60.0)


@dataclass
class Run:
    events: list[Event]
    views: list[dict[int, TrackView]]


def simulate(truths: dict[int, Truth], seconds: float, *, seed: int, noise: float = NOISE_IN,
             known: Sequence[int] | None = None, extra: Callable[[int, np.random.Generator], list[BaseFix]] | None = None,
             tracker: Tracker | None = None) -> Run:
    rng = np.random.default_rng(seed)
    tr = tracker or Tracker(known)
    events: list[Event] = []
    views: list[dict[int, TrackView]] = []
    for i in range(int(round(seconds * FPS))):
        t = i / FPS
        fixes: list[BaseFix] = []
        for tag, truth in truths.items():
            p = truth(t)
            if p is not None:
                fixes.append(fix(tag, p[0] + rng.normal(0, noise), p[1] + rng.normal(0, noise)))
        if extra is not None:
            fixes += extra(i, rng)
        events += tr.update(i, t, fixes)
        views.append(tr.tracks)
    return Run(events, views)


def still(x: float, y: float) -> Truth:
    return lambda t: (x, y)


def moves(run: Run) -> list[Move]:
    return [e for e in run.events if isinstance(e, Move)]


def only_placements(run: Run, tags: Sequence[int]) -> None:
    assert all(isinstance(e, Placed) for e in run.events), [e.to_json() for e in run.events]
    assert sorted(e.tag for e in run.events) == sorted(tags)


# ---- still bases --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_still_bases_under_noise_never_move_and_report_within_a_hundredth(seed: int) -> None:
    truth = {10 + k: (2.0 + 2.5 * k, 3.0 + 1.5 * k) for k in range(12)}
    run = simulate({tag: still(*p) for tag, p in truth.items()}, 10.0, seed=seed)
    only_placements(run, list(truth))
    worst_err, worst_step = 0.0, 0.0
    for prev, cur in zip(run.views, run.views[1:]):
        for tag, v in cur.items():
            if not v.settled:
                continue
            assert v.state is TrackState.ON_TABLE
            worst_err = max(worst_err, math.hypot(v.x - truth[tag][0], v.y - truth[tag][1]))
            if tag in prev and prev[tag].settled:
                worst_step = max(worst_step, math.hypot(v.x - prev[tag].x, v.y - prev[tag].y))
    assert worst_err <= 0.01
    assert worst_step <= 0.01
    assert worst_step <= 0.003  # in fact far inside: the reported value is a running mean


def test_placed_reports_the_first_settled_position() -> None:
    run = simulate({12: still(7.0, 9.0)}, 1.0, seed=4)
    [placed] = run.events
    assert isinstance(placed, Placed) and placed.tag == 12
    assert math.hypot(placed.at_in[0] - 7.0, placed.at_in[1] - 9.0) < 0.01
    assert placed.frame * (1 / FPS) >= 0.3 - 1e-9  # a base must stay put SETTLE_S before it counts as placed


# ---- lifting and placing ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("seed", "start", "end"), [
    (5, (5.0, 5.0), (12.0, 9.0)),
    (6, (20.0, 3.0), (20.0, 3.5)),
    (7, (1.0, 1.0), (28.0, 20.0)),
    (8, (10.0, 10.0), (10.15, 10.0)),  # a small but real move, just over MOVE_MIN_IN
])
def test_lift_and_place_gives_one_move_with_its_length(seed: int, start: tuple[float, float],
                                                      end: tuple[float, float]) -> None:
    def truth(t: float) -> tuple[float, float] | None:
        if t < 1.0:
            return start
        if t < 2.2:
            return None  # in the hand
        return end

    run = simulate({15: truth, 16: still(15.0, 15.0)}, 4.0, seed=seed)
    [move] = moves(run)
    length = math.dist(start, end)
    assert move.tag == 15
    assert abs(move.length_in - length) <= 0.05
    assert abs(move.length_in - length) <= 0.01  # what the filter actually achieves at 0.005" noise
    assert math.dist(move.from_in, start) < 0.01 and math.dist(move.to_in, end) < 0.01
    assert move.lifted
    assert move.elapsed_s == pytest.approx(1.2, abs=2 / FPS)
    assert move.pm_in == pytest.approx(math.hypot(0.02, 0.02), abs=1e-4)  # events carry inches to 0.0001"
    assert len(move.path_in) == 2
    assert sum(isinstance(e, Placed) for e in run.events) == 2
    end_view = run.views[-1][15]
    assert end_view.state is TrackState.ON_TABLE and math.dist((end_view.x, end_view.y), end) < 0.01


def test_lifted_base_is_lifted_while_moving_out_of_view() -> None:
    def truth(t: float) -> tuple[float, float] | None:
        if t < 1.0:
            return (5.0, 5.0)
        if t < 1.2:
            return (5.0 + (t - 1.0) * 10, 5.0)  # picked up: seen moving for a moment
        return None

    run = simulate({10: truth}, 2.0, seed=9)
    assert run.views[-1][10].state is TrackState.LIFTED
    assert moves(run) == []


def test_base_lifted_and_put_back_where_it_was_is_no_move() -> None:
    def truth(t: float) -> tuple[float, float] | None:
        if t < 1.0:
            return (8.0, 8.0)
        if t < 2.0:
            return None
        return (8.06, 7.97)  # 0.067" off: put back in place

    run = simulate({11: truth}, 4.0, seed=10)
    only_placements(run, [11])
    v = run.views[-1][11]
    assert v.state is TrackState.ON_TABLE and math.dist((v.x, v.y), (8.06, 7.97)) < 0.01


def test_hand_hiding_five_tags_for_three_seconds_gives_no_move() -> None:
    places = {20 + k: (10.0 + k * 1.2, 6.0 + 0.3 * k) for k in range(5)}

    def hidden_between(p: tuple[float, float]) -> Truth:
        return lambda t: None if 1.0 <= t < 4.0 else p

    truths = {tag: hidden_between(p) for tag, p in places.items()} | {30: still(2.0, 2.0)}
    run = simulate(truths, 6.0, seed=11)
    only_placements(run, [*places, 30])
    mid = run.views[int(2.5 * FPS)]
    for tag, p in places.items():
        assert mid[tag].state is TrackState.OCCLUDED  # kept where it was, not invented elsewhere
        assert math.dist((mid[tag].x, mid[tag].y), p) < 0.01
        assert run.views[-1][tag].state is TrackState.ON_TABLE


def test_hand_passing_with_flicker_and_shifted_fixes_at_its_edge_gives_no_move() -> None:
    """While a hand passes, a tag flickers in and out and its fixes are off by up to 0.04" (partial shadow)."""
    def truth(t: float) -> tuple[float, float] | None:
        i = int(round(t * FPS))
        if 30 <= i < 90:
            return None if i % 3 else (6.0 + 0.04, 6.0 - 0.03)
        return (6.0, 6.0)

    run = simulate({10: truth}, 4.0, seed=12)
    only_placements(run, [10])


# ---- sliding ---------------------------------------------------------------------------------------------------

def l_shaped_slide(t: float) -> tuple[float, float]:
    """Still at (5, 5) for 1 s, slid at 3"/s to (10, 5) then to (10, 8), still after."""
    s = max(0.0, t - 1.0) * 3.0
    if s < 5.0:
        return (5.0 + s, 5.0)
    return (10.0, 5.0 + min(s - 5.0, 3.0))


@pytest.mark.parametrize("seed", [13, 14])
def test_slide_gives_one_move_with_its_path(seed: int) -> None:
    run = simulate({10: l_shaped_slide}, 6.0, seed=seed)
    [move] = moves(run)
    assert not move.lifted
    assert abs(move.length_in - math.dist((5, 5), (10, 8))) <= 0.05
    assert len(move.path_in) == 3
    corner = move.path_in[1]
    assert math.dist(corner, (10.0, 5.0)) < 0.1
    assert move.path_length_in == pytest.approx(8.0, abs=0.1)
    assert move.elapsed_s == pytest.approx(8.0 / 3.0, abs=3 / FPS)
    assert run.views[int(2.0 * FPS)][10].state is TrackState.MOVING


def test_straight_slide_with_motion_blur_dropouts_gives_one_move() -> None:
    def truth(t: float) -> tuple[float, float] | None:
        i = int(round(t * FPS))
        if 30 <= i < 75 and i % 2:
            return None  # every other frame lost to motion blur
        s = min(max(0.0, t - 1.0) * 4.0, 6.0)
        return (4.0 + s, 4.0 + s * 0.5)

    run = simulate({10: truth}, 4.0, seed=15)
    [move] = moves(run)
    assert abs(move.length_in - math.hypot(6.0, 3.0)) <= 0.05
    assert len(move.path_in) == 2  # a straight slide reduces to its two ends


@pytest.mark.parametrize("speed", [0.5, 1.0])
def test_slow_deliberate_slide_gives_one_move(speed: float) -> None:
    def truth(t: float) -> tuple[float, float]:
        return (5.0 + speed * min(max(t - 1.0, 0.0), 1.5 / speed), 5.0)

    run = simulate({10: truth}, 2.0 + 1.5 / speed, seed=16)
    [move] = moves(run)
    assert abs(move.length_in - 1.5) <= 0.05


def test_creeping_base_is_reported_in_steps_and_ends_where_it_is() -> None:
    """Pushed at 0.05"/s (no fix ever leaves STILL_RADIUS_IN of the running mean) for 8 s: 0.4" in all.
    Each MOVE_MIN_IN of creep is one move, and the reported position follows the base."""
    def truth(t: float) -> tuple[float, float]:
        return (5.0 + 0.05 * min(max(t - 1.0, 0.0), 8.0), 5.0)

    run = simulate({10: truth}, 11.0, seed=16)
    ms = moves(run)
    assert 2 <= len(ms) <= 4
    assert all(m.length_in >= 0.1 for m in ms)
    assert ms[0].from_in[0] == pytest.approx(5.0, abs=0.01)
    assert sum(m.length_in for m in ms) == pytest.approx(0.4, abs=0.1)
    v = run.views[-1][10]
    assert abs(v.x - 5.4) < 0.01


# ---- noise, jitter and dropouts ---------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [17, 18, 19])
def test_jitter_outliers_and_one_frame_dropouts_never_produce_events(seed: int) -> None:
    rng = np.random.default_rng(seed + 100)
    drop = rng.random((600, 8)) < 0.1  # 10 % of fixes lost
    spike = rng.random((600, 8)) < 0.02  # 2 % of fixes wild by 0.2-0.5"

    def make(k: int) -> Truth:
        base = (3.0 + 3.0 * k, 10.0)

        def truth(t: float) -> tuple[float, float] | None:
            i = int(round(t * FPS))
            if drop[i, k] and not drop[i - 1, k]:  # single-frame dropouts
                return None
            if spike[i, k]:
                a = rng.uniform(0, 2 * math.pi)
                r = rng.uniform(0.2, 0.5)
                return (base[0] + r * math.cos(a), base[1] + r * math.sin(a))
            return base
        return truth

    run = simulate({40 + k: make(k) for k in range(8)}, 20.0, seed=seed)
    only_placements(run, [40 + k for k in range(8)])
    for k in range(8):
        v = run.views[-1][40 + k]
        assert math.dist((v.x, v.y), (3.0 + 3.0 * k, 10.0)) < 0.01


# ---- unknown and duplicate tags --------------------------------------------------------------------------------

def test_unknown_tag_is_reported_once_and_not_tracked() -> None:
    run = simulate({10: still(4.0, 4.0), 99: still(6.0, 6.0)}, 3.0, seed=20, known=[10, 11])
    unknown = [e for e in run.events if isinstance(e, UnknownTag)]
    assert len(unknown) == 1 and unknown[0].tag == 99 and unknown[0].frame == 0
    assert math.dist(unknown[0].at_in, (6.0, 6.0)) < 0.03
    assert 99 not in run.views[-1]
    assert [e.tag for e in run.events if isinstance(e, Placed)] == [10]


def test_duplicate_tag_is_reported_once_per_episode_and_the_unit_keeps_its_place() -> None:
    def twin(i: int, rng: np.random.Generator) -> list[BaseFix]:
        in_episode = 30 <= i < 90 or 200 <= i < 210
        return [fix(10, 15.0 + rng.normal(0, NOISE_IN), 2.0)] if in_episode else []

    run = simulate({10: still(4.0, 4.0)}, 8.0, seed=21, extra=twin)
    dups = [e for e in run.events if isinstance(e, DuplicateTag)]
    assert [d.frame for d in dups] == [30, 200]
    assert sorted(round(p[0]) for p in dups[0].at_in) == [4, 15]
    assert moves(run) == []
    v = run.views[-1][10]
    assert math.dist((v.x, v.y), (4.0, 4.0)) < 0.01


# ---- the value types and the API -------------------------------------------------------------------------------

def test_move_to_json_has_the_design_fields() -> None:
    def truth(t: float) -> tuple[float, float] | None:
        return (2.0, 2.0) if t < 1.0 else None if t < 1.5 else (5.0, 6.0)

    run = simulate({12: truth}, 3.0, seed=22)
    [move] = moves(run)
    obj = move.to_json()
    assert obj["type"] == "move" and obj["frame"] == move.frame and obj["tag"] == 12
    for key in ("from_in", "to_in", "length_in", "pm_in", "path_in", "elapsed_s"):
        assert key in obj
    assert obj["length_in"] == pytest.approx(5.0, abs=0.01)
    assert obj["from_in"] == pytest.approx([2.0, 2.0], abs=0.01)
    assert obj["to_in"] == pytest.approx([5.0, 6.0], abs=0.01)
    assert obj["path_in"][0] == obj["from_in"] and obj["path_in"][-1] == obj["to_in"]
    placed = [e.to_json() for e in run.events if isinstance(e, Placed)]
    assert placed[0]["type"] == "placed" and placed[0]["at_in"] == pytest.approx([2.0, 2.0], abs=0.01)
    with pytest.raises(AttributeError):
        move.tag = 13  # type: ignore[misc]


def test_reset_forgets_tracks_and_reported_tags() -> None:
    tracker = Tracker(known_tags=[10])
    run = simulate({10: still(1.0, 1.0), 50: still(3.0, 3.0)}, 1.0, seed=23, tracker=tracker)
    assert {type(e) for e in run.events} == {Placed, UnknownTag}
    tracker.reset()
    assert tracker.tracks == {}
    again = simulate({10: still(1.0, 1.0), 50: still(3.0, 3.0)}, 1.0, seed=24, tracker=tracker)
    assert {type(e) for e in again.events} == {Placed, UnknownTag}


def test_frames_must_increase() -> None:
    tracker = Tracker()
    tracker.update(5, 0.2, [fix(10, 1.0, 1.0)])
    with pytest.raises(ValueError, match="frames must increase"):
        tracker.update(5, 0.2, [fix(10, 1.0, 1.0)])
