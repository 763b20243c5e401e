"""Declarations never wait on a frame (issue 31 item 5): with the camera stalled (no new frame comes, as with the
phone as camera and its page closed) or the loop paused, a declaration is ruled at once against the last measured
positions, and says how old they are.

The real LiveLoop and Pipeline on the bundled sample's first frames (Valknut; every unit deployed by frame 20),
fed by a camera that then stops delivering: its next read blocks until the loop is stopped.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from calibration.table import load_calibration
from rules.engine import Action, find_game
from rules.roster import parse_roster
from rules.terrain import parse_terrain
from session.drivable import FeedWaiting
from session.live_loop import STALE_S, LiveLoop
from session.paths import SAMPLE_SESSION_DIR
from session.pipeline import Pipeline
from vision.sources import Frame, SessionSource

SHOWN = 22
"""Frames the camera delivers before it stalls (the sample deploys its last units at frame 20)."""


class StalledCamera:
    """A live feed (no seek, no length) that gives SHOWN frames of the sample, then none, as the phone's feed does
    once its camera page is closed: each read waits half a second and says why no frame came (FeedWaiting)."""

    def __init__(self) -> None:
        source = SessionSource(SAMPLE_SESSION_DIR)
        self._frames = iter(source)
        self._source = source
        self._given = 0
        self._closed = threading.Event()

    def read(self) -> Frame | None:
        if self._given >= SHOWN:
            self._closed.wait(0.5)
            raise FeedWaiting("The phone's camera page is closed; open it again to send frames.")
        self._given += 1
        return next(self._frames)

    def close(self) -> None:
        self._closed.set()
        self._source.close()


def _pipeline() -> Pipeline:
    setup = json.loads((SAMPLE_SESSION_DIR / "setup.json").read_text())
    return Pipeline(load_calibration(SAMPLE_SESSION_DIR / "calibration.json"), parse_roster(setup["roster"]),
                    parse_terrain(setup["terrain"]), find_game("valknut"), setup)


@pytest.fixture(scope="module")
def loop() -> Iterator[LiveLoop]:
    live = LiveLoop(StalledCamera, _pipeline, paced=False, name="stalled")
    live.start()
    deadline = time.monotonic() + 60
    while live.status().frame_index < SHOWN - 1:
        assert time.monotonic() < deadline, live.status()
        time.sleep(0.05)
    try:
        yield live
    finally:
        live.stop()


def _wait_for(pred: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _declare(loop: LiveLoop, unit: int, path: str) -> tuple[list[dict[str, Any]], float]:
    started = time.perf_counter()
    out = loop.declare(Action("choose_path", unit, {"path": path}))
    return out, time.perf_counter() - started


def test_a_stalled_camera_does_not_hold_a_declaration_back(loop: LiveLoop) -> None:
    _wait_for(lambda: loop.status().status == "lost")  # no frame comes
    assert loop.pipeline is not None and find_game("valknut").status(loop.pipeline.state).phase == "turn_start"
    out, took = _declare(loop, 10, "bear")
    assert took < 1.0, took  # it used to wait 10 s for a frame, then give up
    assert [(v["rule"], v["outcome"]) for v in out] == [("valknut.path.step", "legal")]
    assert out[0]["frame"] == SHOWN - 1 and out[0]["event"] == "declared"  # ruled at the last frame measured
    assert 0.0 <= out[0]["positions_age_s"] < 30
    assert loop.pipeline.state.unit(10).stepped  # the game took it
    # the page sees it at once: the event log and the frame shown again with it
    assert any(e.get("rule") == "valknut.path.step" and e.get("unit") == 10 for e in loop.events)


def test_positions_measured_long_ago_are_said_to_be_old(loop: LiveLoop) -> None:
    while loop.positions_age_s() <= STALE_S + 0.1:
        time.sleep(0.1)
    out, took = _declare(loop, 11, "bear")
    assert took < 1.0, took
    assert out[0]["outcome"] == "legal" and out[0]["positions_age_s"] > STALE_S
    old = [v for v in out if v["rule"] == "tablesight.positions_age"]
    age = round(out[0]["positions_age_s"])
    assert len(old) == 1 and old[0]["outcome"] == "info"
    assert old[0]["message"] == f"Ruled on positions measured {age} s ago: is the camera running?"
    # the age is for the player who declared: the log keeps the verdicts as a replay gives them
    assert not any(e.get("rule") == "tablesight.positions_age" for e in loop.events)


def test_a_paused_loop_rules_a_declaration_at_once(loop: LiveLoop) -> None:
    loop.pause()
    try:
        out, took = _declare(loop, 12, "bear")
        assert took < 1.0, took
        assert out[0]["rule"] == "valknut.path.step" and out[0]["outcome"] == "legal"
        assert out[0]["frame"] == SHOWN - 1
    finally:
        loop.play()


def test_a_malformed_declaration_is_still_refused_in_one_sentence(loop: LiveLoop) -> None:
    from rules.engine import RulesInputError

    with pytest.raises(RulesInputError) as err:
        loop.declare(Action("choose_path", 13, {"path": "eagle"}))
    assert str(err.value).endswith(".") and "\n" not in str(err.value)

