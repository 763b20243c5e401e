"""Every roster unit accounted for (session/roll_call.py): the tracker's last-seen time by the frames' own clock, a
unit not seen for 5 s said in words with its seconds, units never put down listed quietly, units the game took off
the table left out, and two bases overlapping by more than the tolerance named with the overlap in inches."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from rules.engine import find_game
from rules.roster import Roster, parse_roster
from session.roll_call import OVERLAP_TOLERANCE_IN, UNSEEN_S, RollCall, TooClose, Unseen, call_roll
from vision.positions import BaseFix
from vision.tracker import Tracker, TrackState

FPS = 10.0
BASE_MM = 25.4  # a 1" base: radius 0.5"


def fix(tag: int, x: float, y: float) -> BaseFix:
    return BaseFix(tag=tag, x=x, y=y, z=0.125, yaw_deg=0.0, pm=0.02, tag_center_in=(x, y), margin=60.0)


def roster(*units: tuple[int, str, str]) -> Roster:
    return parse_roster({"game": "valknut", "units": [
        {"tag": t, "name": n, "profile": "soldier", "owner": o, "base_mm": BASE_MM} for t, n, o in units]})


ROSTER = roster((10, "Red 4", "red"), (11, "Blue 7", "blue"), (12, "Ulf", "red"))


def run(seen: dict[int, tuple[float, float]], frames: int, hide: dict[int, range] | None = None,
        start: float = 0.0) -> tuple[Tracker, float]:
    """Feed `frames` frames at FPS starting at `start` s; tag `k` unseen in the frames of hide[k]. Returns the
    tracker and the last frame's time."""
    tracker = Tracker(known_tags=ROSTER.units)
    t = start
    for i in range(frames):
        t = start + i / FPS
        tracker.update(i, t, [fix(k, *p) for k, p in seen.items() if i not in (hide or {}).get(k, range(0))])
    return tracker, t


def test_the_tracker_keeps_the_time_a_tag_was_last_seen_by_the_frames_own_clock() -> None:
    # frames stamped from 1000 s (a replay's recorded times), tag 10 hidden from frame 20 (t = 1002.0 s) on
    tracker, t = run({10: (5.0, 5.0), 11: (9.0, 5.0)}, 90, hide={10: range(20, 90)}, start=1000.0)
    views = tracker.tracks
    assert views[10].state is TrackState.OCCLUDED and views[10].last_seen_frame == 19
    assert views[10].last_seen_t == pytest.approx(1001.9)
    assert views[11].last_seen_t == pytest.approx(t) == pytest.approx(1008.9)
    call = call_roll(views, ROSTER, t)
    assert call.unseen == (Unseen(10, pytest.approx(7.0), False),)  # type: ignore[arg-type]
    assert call.not_yet == (12,)
    words = call.to_json(ROSTER)
    assert [u["text"] for u in words["unseen"]] == ["Red 4 not seen for 7 s: is its tag covered?"]
    assert words["unseen"][0]["seconds"] == 7
    assert words["not_yet_text"] == "Not seen on the table yet: Ulf (red)."


@pytest.mark.parametrize(("hidden_frames", "said"), [(49, False), (50, True), (51, True)])
def test_not_seen_is_said_from_five_seconds_on(hidden_frames: int, said: bool) -> None:
    """At 10 frames a second, the last frame is 4.9, 5.0 and 5.1 s after the last fix."""
    tracker, t = run({10: (5.0, 5.0), 11: (9.0, 5.0)}, 30 + hidden_frames, hide={10: range(30, 30 + hidden_frames)})
    call = call_roll(tracker.tracks, ROSTER, t)
    assert t - tracker.tracks[10].last_seen_t == pytest.approx(hidden_frames / FPS)
    assert [u.tag for u in call.unseen] == ([10] if said else [])
    assert UNSEEN_S == 5.0


def test_a_unit_the_game_took_off_the_table_is_not_missing() -> None:
    tracker, t = run({10: (5.0, 5.0), 11: (9.0, 5.0)}, 90, hide={10: range(20, 90)})
    assert call_roll(tracker.tracks, ROSTER, t, off_table={10}).unseen == ()
    assert call_roll(tracker.tracks, ROSTER, t, off_table={12}).not_yet == ()  # in reserve: not "not yet" either


def test_a_unit_picked_up_and_not_put_down_is_asked_after_as_in_a_hand() -> None:
    tracker = Tracker(known_tags=ROSTER.units)
    t = 0.0
    for i in range(120):  # still until 2 s, then carried in view for 0.5 s, then gone (a hand above the camera)
        t = i / FPS
        x = 5.0 if i < 20 else 5.0 + 0.3 * (i - 19)
        tracker.update(i, t, [fix(11, 9.0, 5.0)] + ([fix(10, x, 5.0)] if i < 25 else []))
    assert tracker.tracks[10].state is TrackState.LIFTED
    (u,) = call_roll(tracker.tracks, ROSTER, t).to_json(ROSTER)["unseen"]
    assert u["text"] == "Red 4 not seen for 9 s: is it still in a hand?"


def test_two_still_bases_overlapping_are_named_with_the_overlap_in_inches() -> None:
    tracker, t = run({10: (5.0, 5.0), 11: (5.6, 5.0), 12: (20.0, 5.0)}, 30)  # 1" bases 0.6" apart: 0.4" overlap
    call = call_roll(tracker.tracks, ROSTER, t)
    (pair,) = call.too_close
    assert (pair.a, pair.b) == (10, 11) and pair.overlap_in == pytest.approx(0.4, abs=0.01)
    assert call.to_json(ROSTER)["too_close"][0]["text"] == (
        'Red 4 and Blue 7 stand too close: their bases overlap by 0.4"; part them so both tags can be read.')


@pytest.mark.parametrize(("apart", "reported"), [(1.0, False), (1.0 - OVERLAP_TOLERANCE_IN + 0.02, False),
                                                 (1.0 - OVERLAP_TOLERANCE_IN - 0.02, True), (0.3, True)])
def test_bases_in_contact_are_not_too_close(apart: float, reported: bool) -> None:
    tracker, t = run({10: (5.0, 5.0), 11: (5.0 + apart, 5.0)}, 30)
    assert bool(call_roll(tracker.tracks, ROSTER, t).too_close) is reported


def test_an_overlap_within_the_measured_plus_minus_is_not_said() -> None:
    """Two bases measured ± 0.15" each (combined ± 0.21"): 0.18" of overlap may be contact; 0.3" is not."""
    for apart, reported in ((0.82, False), (0.7, True)):
        tracker = Tracker(known_tags=ROSTER.units)
        for i in range(30):
            tracker.update(i, i / FPS, [dataclasses.replace(fix(10, 5.0, 5.0), pm=0.15),
                                        dataclasses.replace(fix(11, 5.0 + apart, 5.0), pm=0.15)])
        assert bool(call_roll(tracker.tracks, ROSTER, 29 / FPS).too_close) is reported, apart


def test_a_tag_lost_beside_a_unit_standing_where_it_was_is_too_close_not_just_unseen() -> None:
    """Red 4 stands at (5, 5); Blue 7 is put down 0.6" away and Red 4's tag is not seen from then on: once Red 4
    has been lost for 5 s the pair is named (and Red 4 is not also said to be merely unseen)."""
    tracker = Tracker(known_tags=ROSTER.units)
    said: list[tuple[float, RollCall]] = []
    for i in range(110):
        t = i / FPS
        fixes = [fix(12, 20.0, 5.0)]
        if i < 30:
            fixes += [fix(10, 5.0, 5.0), fix(11, 15.0, 5.0)]
        else:
            fixes += [fix(11, 5.6, 5.0)]
        tracker.update(i, t, fixes)
        said.append((t, call_roll(tracker.tracks, ROSTER, t)))
    first = next(t for t, c in said if c.too_close)
    assert first == pytest.approx(2.9 + UNSEEN_S)  # Red 4 last seen at 2.9 s
    t, call = said[-1]
    assert call.too_close == (TooClose(10, 11, pytest.approx(0.4, abs=0.01)),)  # type: ignore[arg-type]
    assert call.unseen == ()


def test_a_base_carried_over_another_is_not_too_close() -> None:
    tracker = Tracker(known_tags=ROSTER.units)
    t = 0.0
    for i in range(40):  # Blue 7 slides across Red 4's place and on
        t = i / FPS
        tracker.update(i, t, [fix(10, 5.0, 5.0), fix(11, 3.0 + 0.2 * max(0, i - 10), 5.0)])
        if tracker.tracks[11].state is TrackState.MOVING:
            assert call_roll(tracker.tracks, ROSTER, t).too_close == ()


def test_without_a_roster_nobody_is_called() -> None:
    tracker, t = run({10: (5.0, 5.0)}, 90, hide={10: range(10, 90)})
    assert call_roll(tracker.tracks, None, t) == RollCall()
    assert RollCall().to_json(None) == {"unseen": [], "too_close": [], "not_yet": [], "not_yet_text": ""}


def _with(state: Any, field: str, tag: int, **changes: Any) -> Any:
    """`state` with the unit `tag` of its tuple `field` changed."""
    key = "id" if field == "pieces" else "tag"
    items = tuple(dataclasses.replace(u, **changes) if getattr(u, key) == tag else u for u in getattr(state, field))
    return dataclasses.replace(state, **{field: items})


@pytest.mark.parametrize(("game", "field", "changes"), [
    ("valknut", "units", {"alive": False}),
    ("hex_skirmish", "figures", {"destroyed": True}),
    ("valyr", "units", {"defeated": True}),
    ("vigtavl", "pieces", {"sunk_by": "blue"}),
])
def test_each_game_says_which_units_it_took_off_the_table(game: str, field: str, changes: dict[str, Any]) -> None:
    rules = find_game(game)
    state, _positions = rules.example(random.Random(0))
    before = rules.off_table(state)  # Vigtavl's land units start aboard their freighters, off the map
    assert before == ({p.id for p in state.pieces if p.aboard is not None} if game == "vigtavl" else frozenset())
    tag = next(t for u in getattr(state, field) if (t := getattr(u, "id" if field == "pieces" else "tag")) not in before)
    assert rules.off_table(_with(state, field, tag, **changes)) == before | {tag}


def test_magni_tiles_are_never_off_the_table() -> None:
    rules = find_game("magni")
    state, _positions = rules.example(random.Random(0))
    assert rules.off_table(state) == frozenset()
