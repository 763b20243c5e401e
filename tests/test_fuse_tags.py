"""Several tags on one base (roster `more_tags`): each tag seen gives the base centre, a unit's tags seen together
are fused into one fix (vision/fuse.py), and switching from one tag to another never moves a still base."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from vision.fuse import BIAS_FRAMES, BaseFuser, Mount
from vision.positions import BaseFix
from vision.tracker import DuplicateTag, Move, Placed, Tracker, TrackState, UnknownTag

FPS = 30.0
NOISE_IN = 0.004  # one-sigma noise per axis of a tag's fix, inches
TRUTH = (12.0, 8.0)
RADIUS = 25.0 / 25.4  # a 50 mm base
# unit 12: its own rim tag 12 and an extra rim tag 112 (both 0.125" up), a topper tag 212 1.85" up
MOUNTS = {
    12: Mount(unit=12, height_in=0.125, unit_height_in=0.125, pm_in=0.0, agree_in=RADIUS),
    112: Mount(unit=12, height_in=0.125, unit_height_in=0.125, pm_in=0.0, agree_in=RADIUS),
    212: Mount(unit=12, height_in=1.85, unit_height_in=0.125, pm_in=0.0, agree_in=RADIUS),
    13: Mount(unit=13, height_in=0.125, unit_height_in=0.125, agree_in=RADIUS),
}


def fix(tag: int, x: float, y: float, pm: float = 0.02, z: float = 0.125, yaw: float = 0.0) -> BaseFix:
    return BaseFix(tag=tag, x=x, y=y, z=z, yaw_deg=yaw, pm=pm, tag_center_in=(x, y), margin=60.0, side_in=0.5)


def test_a_unit_with_one_tag_and_tags_of_no_unit_pass_through_unchanged() -> None:
    fuser = BaseFuser(MOUNTS)
    fixes = (fix(13, 3.0, 4.0, 0.013), fix(99, 5.0, 5.0), fix(12, 7.1234567, 8.7654321, 0.0171))
    assert fuser.fuse(fixes) == fixes  # the very same numbers: a roster without more_tags measures as before
    assert fuser.bias == {}


def test_two_tags_seen_together_are_one_fix_the_inverse_variance_mean() -> None:
    fuser = BaseFuser(MOUNTS)
    a = fix(12, 12.01, 8.0, pm=0.02, yaw=30.0)
    b = fix(112, 11.98, 8.03, pm=0.04, yaw=31.0)
    (fused,) = fuser.fuse([b, a])
    wa, wb = 1 / 0.02**2, 1 / 0.04**2
    assert fused.tag == 12
    assert fused.x == pytest.approx((wa * 12.01 + wb * 11.98) / (wa + wb), abs=1e-12)
    assert fused.y == pytest.approx((wa * 8.0 + wb * 8.03) / (wa + wb), abs=1e-12)
    assert fused.pm == pytest.approx(1 / math.sqrt(wa + wb), abs=1e-12)  # 0.0179" from 0.02" and 0.04"
    assert fused.yaw_deg == 30.0  # the most precise tag's
    assert fused.z == 0.125


def test_mount_pm_is_added_in_quadrature_and_weighs_the_tags() -> None:
    mounts = {**MOUNTS, 112: Mount(unit=12, height_in=0.125, unit_height_in=0.125, pm_in=0.03, agree_in=RADIUS)}
    fuser = BaseFuser(mounts)
    (alone,) = fuser.fuse([fix(112, 12.0, 8.0, pm=0.04)])
    assert alone.pm == pytest.approx(0.05, abs=1e-12)  # hypot(0.04, 0.03)
    (both,) = BaseFuser(mounts).fuse([fix(12, 12.0, 8.0, pm=0.05), fix(112, 12.05, 8.0, pm=0.04)])
    assert both.x == pytest.approx(12.025, abs=1e-9)  # 0.05" and hypot(0.04, 0.03) = 0.05": equal weights
    assert both.pm == pytest.approx(0.05 / math.sqrt(2), abs=1e-12)


def test_a_topper_alone_gives_z_at_the_units_own_tag_height() -> None:
    """z stays "the floor under the base plus the own tag's height", whichever tag measured it: a topper 1.85" up
    on a 3" floor is z = 3.125, as the own tag there would be."""
    (on_floor,) = BaseFuser(MOUNTS).fuse([fix(212, 12.0, 8.0, z=3.0 + 1.85)])
    assert on_floor.tag == 12 and on_floor.z == pytest.approx(3.125, abs=1e-12)
    (both,) = BaseFuser(MOUNTS).fuse([fix(212, 12.0, 8.0, pm=0.01, z=1.85), fix(12, 12.0, 8.0, pm=0.02, z=0.125)])
    assert both.z == 0.125 and both.yaw_deg == 0.0


def test_two_bases_claiming_one_unit_are_a_duplicate_not_a_mean() -> None:
    """Tag 12 on two bases, or tag 112 seen a foot from tag 12: two bases claim unit 12; the tracker says so and
    keeps the unit where it was. An extra tag is never an unknown tag."""
    fuser = BaseFuser(MOUNTS)
    tracker = Tracker(known_tags=[12, 13])
    events = []
    for i in range(60):
        fixes = [fix(12, *TRUTH), fix(112, *TRUTH)]
        if i >= 20:
            fixes.append(fix(112 if i < 40 else 12, 20.0, 3.0))
        fused = fuser.fuse(fixes)
        assert len(fused) == (1 if i < 20 else 2)
        events += tracker.update(i, i / FPS, fused)
    assert [type(e) for e in events] == [Placed, DuplicateTag]
    dup = events[1]
    assert isinstance(dup, DuplicateTag) and dup.tag == 12 and dup.frame == 20
    assert sorted(round(p[0]) for p in dup.at_in) == [12, 20]
    view = tracker.tracks[12]
    assert math.dist((view.x, view.y), TRUTH) < 0.005
    assert not any(isinstance(e, UnknownTag | Move) for e in events)


def _feed(phases: Sequence[tuple[float, Sequence[int]]], errors: dict[int, tuple[float, float]], pm: dict[int, float],
          seed: int) -> tuple[list[object], list[tuple[float, float, float, frozenset[int]]], BaseFuser]:
    """A still base at TRUTH; each phase (seconds, tags visible). Tag k's fixes are off by errors[k] (a mount
    never exactly where the roster says) plus noise. Returns the events and, per frame, the tracker's (x, y, ±)
    of unit 12 with the tags seen."""
    rng = np.random.default_rng(seed)
    fuser, tracker = BaseFuser(MOUNTS), Tracker(known_tags=[12])
    events: list[object] = []
    seen: list[tuple[float, float, float, frozenset[int]]] = []
    frame = 0
    for seconds, tags in phases:
        for _ in range(int(seconds * FPS)):
            fixes = [fix(k, TRUTH[0] + errors[k][0] + rng.normal(0, NOISE_IN),
                         TRUTH[1] + errors[k][1] + rng.normal(0, NOISE_IN), pm=pm[k]) for k in tags]
            events += tracker.update(frame, frame / FPS, fuser.fuse(fixes))
            v = tracker.tracks.get(12)
            if v is not None and v.settled:
                seen.append((v.x, v.y, v.pm, frozenset(tags)))
            frame += 1
    return events, seen, fuser


def _switch_steps(seen: list[tuple[float, float, float, frozenset[int]]]) -> list[tuple[float, float]]:
    """At each change of the tags seen: how far the reported position moved over the next second, and the ± then."""
    steps = []
    for k in range(1, len(seen)):
        if seen[k][3] != seen[k - 1][3]:
            after = seen[min(k + int(FPS), len(seen) - 1)]
            steps.append((math.dist(seen[k - 1][:2], after[:2]), after[2]))
    return steps


@pytest.mark.parametrize("seed", [1, 2])
def test_switching_tags_on_a_still_base_never_moves_it(seed: int) -> None:
    """Tag 12's mount is 0.04" off where the roster says, tag 112's 0.035" the other way: 0.075" apart, beyond
    the tracker's still radius (0.05"). Seen together first, then one hidden, the other, and back: one Placed,
    no move, and the reported position steps by less than a hundredth, far inside its ±."""
    errors = {12: (0.04, 0.0), 112: (-0.03, 0.018)}
    pm = {12: 0.02, 112: 0.03}
    phases = [(2.0, (12, 112)), (3.0, (112,)), (3.0, (12,)), (2.0, (12, 112)), (3.0, (112,))]
    events, seen, fuser = _feed(phases, errors, pm, seed)
    assert [type(e) for e in events] == [Placed]
    steps = _switch_steps(seen)
    assert len(steps) == 4
    print("switch steps (in, ±):", [(round(s, 4), round(p, 4)) for s, p in steps])
    assert all(step < pm_now for step, pm_now in steps)
    assert all(step < 0.01 for step, _ in steps)
    assert fuser.bias[12][2] == BIAS_FRAMES  # learnt over the frames both were seen
    assert math.dist(fuser.bias[12][:2], (0.04 - 0.0, 0.0)) < 0.05
    assert seen[-1][0] == pytest.approx(TRUTH[0] + (errors[12][0] / pm[12]**2 + errors[112][0] / pm[112]**2)
                                        / (1 / pm[12]**2 + 1 / pm[112]**2), abs=0.005)


def test_tags_never_seen_together_switch_within_their_pm_and_make_no_move() -> None:
    """Nothing to learn from: the switch steps by the two mounts' disagreement, which their mount ± covers."""
    errors = {12: (0.02, 0.0), 112: (-0.02, 0.0)}  # 0.04" apart; a calibrated mount says ±0.03" each
    mounts = {**MOUNTS, **{k: Mount(unit=12, height_in=0.125, unit_height_in=0.125, pm_in=0.03, agree_in=RADIUS)
                           for k in (12, 112)}}
    rng = np.random.default_rng(3)
    fuser, tracker = BaseFuser(mounts), Tracker(known_tags=[12])
    events, track = [], []
    for i in range(180):
        k = 12 if i < 90 else 112
        f = fix(k, TRUTH[0] + errors[k][0] + rng.normal(0, NOISE_IN), TRUTH[1] + rng.normal(0, NOISE_IN), pm=0.02)
        events += tracker.update(i, i / FPS, fuser.fuse([f]))
        track.append(tracker.tracks[12])
    assert [type(e) for e in events] == [Placed]
    before, after = track[89], track[-1]
    assert after.state is TrackState.ON_TABLE
    step = math.dist((before.x, before.y), (after.x, after.y))
    assert after.pm == pytest.approx(math.hypot(0.02, 0.03), abs=1e-9)
    print(f"never seen together: step {step:.4f} in, ± {math.hypot(before.pm, after.pm):.4f} in")
    assert step < math.hypot(before.pm, after.pm)  # the ± of the difference of the two positions
