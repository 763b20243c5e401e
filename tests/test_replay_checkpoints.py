"""A replay sought to a frame carries on the game as it stood there (the timeline's checkpoints), not a game
started again: the bundled Valknut session, played straight through vs sought to late frames."""

from __future__ import annotations

import gc
import shutil
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import session.timeline
from session.drivable import DetectOnly
from session.feeds import RecordingFeed
from session.live_loop import LiveLoop
from session.paths import SAMPLE_SESSION_DIR
from session.runtime import Runtime, load_setup_files, make_pipeline, with_session_plan
from session.settings import Settings
from session.timeline import CHECKPOINT_EVERY, Timeline

SESSION = Path(SAMPLE_SESSION_DIR)


@pytest.fixture(scope="module")
def setup() -> Any:
    s = load_setup_files(SESSION / "calibration.json", SESSION / "roster.json", SESSION / "terrain.json", None)
    return with_session_plan(s, SESSION)


@pytest.fixture(scope="module")
def timeline(setup: Any) -> Timeline:
    tl = Timeline(SESSION, lambda: make_pipeline(setup)).start()
    deadline = time.monotonic() + 120
    while not tl.snapshot()["complete"]:
        assert tl.snapshot()["error"] is None and time.monotonic() < deadline
        time.sleep(0.1)
    return tl


def _straight(setup: Any, last: int) -> dict[str, Any]:
    """The game's state after frames 0..last played in order."""
    pipe: Any = make_pipeline(setup)
    feed = RecordingFeed.open(SESSION)
    try:
        for _ in range(last + 1):
            pipe.process(feed.read())
    finally:
        feed.close()
    return dict(pipe.game.dump_state(pipe.state))


def _sought(setup: Any, target: int, timeline: Timeline | None) -> dict[str, Any]:
    """The game's state on frame `target` reached by a paused replay loop's seek."""
    loop = LiveLoop(lambda: RecordingFeed.open(SESSION), lambda: make_pipeline(setup), paced=True, at_end="pause",
                    frames=len(RecordingFeed.open(SESSION)),
                    checkpoint_before=timeline.checkpoint_before if timeline is not None else lambda f: None)
    loop.pause()
    loop.step()
    loop.start()
    try:
        assert loop.wait_for_frame(30)
        loop.seek(target)
        deadline = time.monotonic() + 60
        while loop.status().frame_index != target:
            assert time.monotonic() < deadline, loop.status()
            time.sleep(0.05)
        pipe: Any = loop.pipeline
        return dict(pipe.game.dump_state(pipe.state))
    finally:
        loop.stop()


def test_timeline_keeps_a_checkpoint_every_few_frames(timeline: Timeline) -> None:
    frames = timeline.snapshot()["frames"]
    assert timeline.checkpoint_before(CHECKPOINT_EVERY - 1) is None  # none before the first
    for target in (CHECKPOINT_EVERY, 77, frames - 1):
        cp = timeline.checkpoint_before(target)
        assert cp is not None and cp.frame < target <= cp.frame + CHECKPOINT_EVERY


@pytest.mark.parametrize("target", [100, 139])
def test_a_seek_carries_on_the_game_as_it_stood(setup: Any, timeline: Timeline, target: int) -> None:
    straight = _straight(setup, target)
    assert _sought(setup, target, timeline) == straight
    # without checkpoints the game starts again a few frames before the target: a different game
    assert _sought(setup, target, None) != straight


def test_a_replay_closed_while_it_seeks_stops_at_once(tmp_path: Path) -> None:
    """The runtime closes a replay (the oldest, when a third is opened; all, when the server stops) holding its
    replay lock; a seek under way on that replay's thread must not need that lock to find its checkpoint."""
    shutil.copytree(SESSION, tmp_path / "sessions" / "valknut")
    runtime = Runtime(Settings(sessions_dir=tmp_path / "sessions", setup_dir=tmp_path / "setup"))
    try:
        loop, _setup = runtime.replay("valknut")
        assert loop.wait_for_frame(30)
        with runtime._replay_lock:  # as Runtime.replay does while it closes the oldest replay
            loop.seek(100)
            time.sleep(0.5)  # the loop's thread is seeking now
            loop.stop(timeout=10)  # a loop that waited for the lock held here would still be alive after it
            thread = loop._thread
            assert thread is not None and not thread.is_alive(), "the seeking loop waits for the runtime's lock"
    finally:
        runtime.stop()


def test_checkpoints_stay_within_their_budget(setup: Any, timeline: Timeline, monkeypatch: pytest.MonkeyPatch) -> None:
    """A timeline holds its checkpoints for as long as the replay is open: ~150 kB each (10 units) every 15
    frames is 2.2 GB for a 2-hour recording at 30 fps. Past the budget they are thinned (kept half as often),
    and a seek still resumes the game as it stood. Here: the 140-frame sample under a 120 kB budget."""
    budget = 120_000
    monkeypatch.setattr(session.timeline, "CHECKPOINT_BUDGET_BYTES", budget, raising=False)
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        tl = Timeline(SESSION, lambda: make_pipeline(setup)).start()
        deadline = time.monotonic() + 180
        while not tl.snapshot()["complete"]:
            assert tl.snapshot()["error"] is None and time.monotonic() < deadline
            time.sleep(0.1)
        tl.stop()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < budget + 150_000, held  # the events, times and thread of the timeline take ~80 kB
    cp = tl.checkpoint_before(139)
    assert cp is not None and 139 - cp.frame <= 4 * CHECKPOINT_EVERY
    assert _sought(setup, 139, tl) == _straight(setup, 139)


class _FaultAfter(DetectOnly):
    """A pipeline with a fault of ours (not an input error) on frame `bad`; before it, tags only."""

    def __init__(self, bad: int) -> None:
        super().__init__()
        self.bad = bad

    def process(self, frame: Any, declared: Any = (), prepared: Any = None) -> Any:
        if frame.index == self.bad:
            raise KeyError("oops")
        return super().process(frame)


def test_a_fault_in_the_timeline_scan_says_it_is_incomplete() -> None:
    tl = Timeline(SESSION, lambda: _FaultAfter(5)).start()
    deadline = time.monotonic() + 30
    while not tl._done:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    snap = tl.snapshot()
    assert not snap["complete"] and snap["scanned"] == 5
    assert "frame 5" in snap["error"] and "KeyError" in snap["error"]
