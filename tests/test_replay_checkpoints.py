"""A replay sought to a frame carries on the game as it stood there (the timeline's checkpoints), not a game
started again: the bundled Valknut session, played straight through vs sought to late frames."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from webui.feeds import RecordingFeed
from webui.live import LiveLoop
from webui.paths import SAMPLE_SESSION_DIR
from webui.runtime import load_setup_files, make_pipeline, with_session_plan
from webui.timeline import CHECKPOINT_EVERY, Timeline

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
