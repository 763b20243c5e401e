"""The replay shows the recording's own truth (issue 31, item 6): its own terrain, board and roster, not the live
table's; a timeline holding every event and ruling of a straight play (the list a seek rebuilds); and a looping
sample whose every pass starts afresh, its game and its events alike."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rules.terrain import parse_terrain, terrain_to_json
from session.feeds import RecordingFeed
from session.live_loop import LiveLoop
from session.paths import SAMPLES_DIR
from session.runtime import load_setup_files, make_pipeline, with_session_plan
from session.settings import Settings
from session.timeline import Timeline
from tests.webui_server import LocalClient
from vision.session_dir import read_manifest
from webui.server import create_app

VALKNUT = SAMPLES_DIR / "valknut_skirmish"
MAGNI = SAMPLES_DIR / "magni_placement"
LIVE_TERRAIN = {"pieces": [{"name": "live-only pond", "kind": ["impassable"],
                            "polygon": [[1.0, 1.0], [3.0, 1.0], [3.0, 2.0], [1.0, 2.0]], "height_in": 0.0}]}


def _setup(session: Path) -> Any:
    """A recorded session's own setup, as the replay page loads it."""
    def att(name: str) -> Path | None:
        return session / name if (session / name).is_file() else None
    setup = load_setup_files(att("calibration.json"), att("roster.json"), att("terrain.json"), None,
                             read_manifest(session).extra)
    return with_session_plan(setup, session)


def _golden(session: Path) -> list[dict[str, Any]]:
    """What `tablesight replay SESSION --json` prints of it (the committed transcript), the summary left out."""
    lines = (session / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] != "summary"]


def _key(e: dict[str, Any]) -> tuple[Any, ...]:
    return e["frame"], e["type"], e.get("tag"), e.get("rule"), e.get("outcome"), e.get("message")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The server as `tablesight serve` starts it, watching the Magni sample live, with a terrain of the live table's
    own saved in the browser."""
    root = tmp_path_factory.mktemp("replay-truth")
    settings = Settings(source_kind="sample", source=str(MAGNI), setup_dir=root / "setup",
                        sessions_dir=root / "sessions")
    with LocalClient(create_app(settings)) as c:
        assert c.put("/api/terrain", json=LIVE_TERRAIN).status_code == 200
        yield c


def test_the_replay_draws_the_recordings_terrain_not_the_live_tables(client: TestClient) -> None:
    own = terrain_to_json(parse_terrain(json.loads((VALKNUT / "terrain.json").read_text(encoding="utf-8"))))
    live = client.get("/api/terrain").json()
    assert [p["name"] for p in live["pieces"]] == ["live-only pond"]
    replayed = client.get("/api/replay/valknut_skirmish/terrain").json()
    assert replayed == own
    assert [p["name"] for p in replayed["pieces"]] == ["west ruin", "north ruin", "stone wall", "field wall"]


def test_the_replay_names_the_recordings_units_on_its_own_board(client: TestClient) -> None:
    roster = json.loads((VALKNUT / "roster.json").read_text(encoding="utf-8"))
    cal = json.loads((VALKNUT / "calibration.json").read_text(encoding="utf-8"))
    live = client.get("/api/setup").json()
    assert live["game"] == "magni"
    own = client.get("/api/replay/valknut_skirmish/setup").json()
    assert own["game"] == "valknut"
    assert {u["tag"]: u["name"] for u in own["roster"]["units"]} == {u["tag"]: u["name"] for u in roster["units"]}
    assert len(own["roster"]["units"]) == 10
    assert [own["board"]["w"], own["board"]["d"]] == pytest.approx(cal["board_in"])
    assert own["board"] != live["board"] or own["roster"] != live["roster"]
    assert [p["name"] for p in own["terrain"]["pieces"]][:1] == ["west ruin"]


def test_an_unknown_session_has_no_terrain_to_give(client: TestClient) -> None:
    r = client.get("/api/replay/no_such_session/terrain")
    assert r.status_code == 404 and "no_such_session" in r.json()["detail"]


def test_the_timeline_holds_every_event_and_ruling_a_straight_replay_prints() -> None:
    """The list a seek rebuilds comes from the timeline: it has every event and every ruling of the transcript."""
    setup = _setup(MAGNI)
    started = time.monotonic()
    timeline = Timeline(MAGNI, lambda: make_pipeline(setup)).start()
    try:
        while not timeline.snapshot()["complete"] and time.monotonic() - started < 60:
            assert timeline.snapshot()["error"] is None
            time.sleep(0.1)
        snap = timeline.snapshot()
    finally:
        timeline.stop()
    assert snap["complete"] and snap["scanned"] == 48 and snap["scanned_to"] == 47
    golden = [e for e in _golden(MAGNI) if e["type"] != "score"]  # the command's own line when a score changes
    kinds = {e["type"] for e in golden}
    assert kinds == {"placed", "verdict"} and len(golden) == 38
    assert sorted(_key(e) for e in snap["events"] if e["type"] in kinds) == sorted(map(_key, golden))
    assert sum(e["outcome"] == "legal" for e in snap["events"] if e["type"] == "verdict") >= 17  # legal ones too


def test_each_pass_of_a_looping_recording_starts_afresh() -> None:
    """The sample loops: on its second pass the loop's event log holds that pass's events alone, exactly a first
    pass's up to the same frame, and its game stands as a fresh game's does at that frame."""
    setup = _setup(MAGNI)
    opened: list[RecordingFeed] = []

    def open_feed() -> RecordingFeed:
        """The sample; its second opening (the second pass) pauses the loop as frame 30 is read, on a machine of
        any speed (the loop reads a frame ahead, so it stops at frame 29 or 30)."""
        feed = RecordingFeed.open(MAGNI)
        opened.append(feed)
        if len(opened) == 2:
            read = feed.read

            def read_then_pause() -> Any:
                frame = read()
                if frame is not None and frame.index == 30:
                    loop.pause()
                return frame

            feed.read = read_then_pause  # type: ignore[method-assign]
        return feed

    loop = LiveLoop(open_feed, lambda: make_pipeline(setup), paced=False, at_end="loop", name="looping sample")
    loop.start()
    try:
        deadline = time.monotonic() + 90
        while not (len(opened) >= 2 and loop.status().status == "paused") and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        assert loop.run == 1, "the recording did not start a second pass"
        at = loop.status().frame_index
        assert 25 <= at < 47
        logged = list(loop.events)
        game_state = loop.pipeline.state if loop.pipeline is not None else None
    finally:
        loop.stop()
    straight = make_pipeline(setup)
    feed = RecordingFeed.open(MAGNI)
    first: list[dict[str, Any]] = []
    for _ in range(at + 1):
        frame = feed.read()
        assert frame is not None
        result = straight.process(frame)
        first += [{"frame": int(frame.index), **e.to_json()} for e in result.events]
    assert logged and all(e["frame"] <= at for e in logged), [e["frame"] for e in logged]
    assert [(e["frame"], e["type"], e.get("tag")) for e in logged if e["type"] != "verdict"] == \
        [(e["frame"], e["type"], e.get("tag")) for e in first]
    assert game_state is not None and game_state == straight.state
