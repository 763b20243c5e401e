"""Recording the live table (session/recording.py): a video served by the real server is recorded as it plays
into a session folder (frames, setup files, declarations, setup edits, session.sqlite), which `tablesight replay` plays
back to the same move events; a SIGKILL or a truncated video loses at most the frame being written.

The video is the rendered table of tests/webui_session.py (unit 12 moves 6.708" at frame MOVE_AT), written as
an MJPG AVI by OpenCV; real files, real SQLite, the real Runtime and server.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import httpx
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from session.runtime import Runtime
from session.settings import Settings
from session.store import SessionStore
from tests.webui_server import LocalClient, free_port
from tests.webui_session import END_12, FPS, MOVE_AT, START_12, make_session
from vision.session_dir import open_session, read_index, read_manifest
from webui.cli import main as cli_main
from webui.server import create_app

ROOT = Path(__file__).resolve().parent.parent
MOVE_LENGTH = math.dist(START_12, END_12)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The rendered session's setup files and three videos of it: whole, long (for the kill) and truncated."""
    root = tmp_path_factory.mktemp("recording")
    session = make_session(root / "rendered")
    frames = [cv2.imread(str(session / e.file)) for e in open_session(session).entries]
    out = {name: shutil.copy(session / name, root / name) for name in ("calibration.json", "roster.json",
                                                                      "terrain.json")}

    def video(name: str, images: list[Any]) -> Path:
        path = root / name
        h, w = images[0].shape[:2]
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), FPS, (w, h))
        for image in images:
            writer.write(image)
        writer.release()
        return path

    whole = video("table.avi", frames)
    long = video("long.avi", frames + frames[-1:] * 60)  # the moved unit then stands still: 8.4 s at 10 fps
    cut = root / "cut.avi"
    data = whole.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.6)])  # the camera's file ends mid-frame, past 60 % of it
    return {"whole": whole, "long": long, "cut": cut, **{k.split(".")[0]: Path(v) for k, v in out.items()}}


def _settings(table: dict[str, Path], tmp: Path, video: str, **kw: Any) -> Settings:
    return Settings(source_kind="video", source=str(table[video]), sessions_dir=tmp / "sessions",
                    setup_dir=tmp / "setup", calibration_file=table["calibration"], roster_file=table["roster"],
                    terrain_file=table["terrain"], game="valknut", **kw)


def _replay(directory: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["replay", str(directory), "--json"]) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _moves(events: list[Any]) -> list[tuple[int, int, float]]:
    return [(int(e["frame"]), int(e["tag"]), float(e["length_in"])) for e in events if e.get("type") == "move"]


def _wait(pred: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_slow_disk_still_has_every_frame_listed_when_the_page_says_ended(
        table: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The read-ahead meets the video's end before the last frame is ruled, and that frame's index line is
    written after it is ruled: with each store row taking 50 ms (a slow card), "ended" still means on disk."""
    add_frame = SessionStore.add_frame

    def slow(self: SessionStore, *args: Any, **kw: Any) -> Any:
        time.sleep(0.05)
        return add_frame(self, *args, **kw)

    monkeypatch.setattr(SessionStore, "add_frame", slow)
    with LocalClient(create_app(_settings(table, tmp_path, "whole"))) as served:
        loop = served.app.state.runtime.live  # type: ignore[attr-defined]
        assert loop.wait_for_frame(20)
        name = served.get("/api/live/status").json()["recording"]
        _wait(lambda: loop.status().status == "ended", 60, "the video did not end")
        frames = loop.status().frame_index + 1
        assert frames == len(open_session(table["whole"].parent / "rendered").entries)  # the video's every frame
        assert len(read_index(tmp_path / "sessions" / name)) == frames


def test_served_video_is_recorded_and_replays_to_the_same_moves(table: dict[str, Path], tmp_path: Path) -> None:
    with LocalClient(create_app(_settings(table, tmp_path, "whole"))) as served:
        loop = served.app.state.runtime.live  # type: ignore[attr-defined]
        assert loop.wait_for_frame(20)
        status = served.get("/api/live/status").json()
        name = status["recording"]
        assert name and name.endswith("_valknut") and (tmp_path / "sessions" / name).is_dir(), status
        # a player declares a stockpile (the camera cannot see one): ruled with the next frame, recorded with it
        acts = served.get("/api/live/actions").json()
        action = acts["groups"][0]["actions"][0]["action"]
        out = served.post("/api/live/declare", json={"action": action})
        assert out.status_code == 200, out.text
        declared = [v for v in out.json()["verdicts"] if v["event"] == "declared"]
        assert declared and declared[0]["outcome"] == "legal"
        _wait(lambda: loop.status().status == "ended", 30, "the video did not end")
        live_moves = _moves(list(loop.events))
        assert len(live_moves) == 1 and live_moves[0][1] == 12 and MOVE_AT <= live_moves[0][0] < MOVE_AT + 8
        assert abs(live_moves[0][2] - MOVE_LENGTH) < 0.05
        folder = tmp_path / "sessions" / name
        frames = loop.status().frame_index + 1
        assert len(read_index(folder)) == frames  # everything is on disk once the page says "ended"
        assert name in [s["name"] for s in served.get("/api/sessions").json()["sessions"]]  # the replay page
    # the server has stopped: the recording is closed

    manifest = read_manifest(folder)
    assert manifest.closed and manifest.frames == frames
    assert manifest.extra["game"] == "valknut" and manifest.extra["declarations"] == "declarations.jsonl"
    assert set(manifest.attachments) == {"calibration.json", "roster.json", "terrain.json"}
    lines = [json.loads(x) for x in (folder / "declarations.jsonl").read_text().splitlines()]
    assert lines == [{"frame": declared[0]["frame"], "action": action}]

    replayed = _replay(folder)
    # the live server and `tablesight replay` scan the same windows and sweep cells of the same frames: the very
    # same moves (frame, tag, length to the last digit) and verdicts
    assert _moves(replayed) == live_moves
    summary = replayed[-1]
    assert summary["type"] == "summary" and summary["frames"] == frames
    again = [e for e in replayed if e["type"] == "verdict" and e.get("event") == "declared"]
    assert [(e["frame"], e["rule"], e["outcome"]) for e in again] == [
        (v["frame"], v["rule"], v["outcome"]) for v in declared]

    with SessionStore(folder / "session.sqlite") as store:
        assert _moves([e.data for e in store.events()]) == live_moves
        stored = [v.data for v in store.verdicts()]
        ruled = [v for v in replayed if v["type"] == "verdict"]
        assert ruled == stored
        assert [(v["frame"], v["rule"]) for v in stored if v.get("event") == "declared"] == [
            (v["frame"], v["rule"]) for v in declared]
        moved = [v for v in stored if v.get("event") == "move"]
        assert moved and all(v["frame"] == live_moves[0][0] for v in moved)
        assert [f.index for f in store.frames()] == list(range(frames))


@contextlib.contextmanager
def _running(settings: Settings) -> Iterator[Runtime]:
    """The server's runtime (live loop, recorder) started with `settings`, stopped on the way out."""
    runtime = Runtime(settings)
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()


def test_a_setup_change_is_an_edit_of_the_same_recording(table: dict[str, Path], tmp_path: Path) -> None:
    """The terrain saved mid-game is a setup edit of the recording, not a new one: one session, and its replay rules
    the frames after the edit with the new terrain, as live (tests/probe/test_recording_survives.py has the rest)."""
    with _running(_settings(table, tmp_path, "whole")) as runtime:
        loop = runtime.live
        _wait(lambda: loop.status().frame_index >= 3, 20, "no frames")
        first = loop.status().recording
        runtime.set_terrain({"pieces": []})  # the wall is taken off the table
        _wait(lambda: "terrain changed" in loop.status().recording_note, 10, "no word of the edit")
        note = loop.status().recording_note
        assert str(first) in note and "goes on" in note, note
        _wait(lambda: loop.status().status == "ended", 30, "the video did not end")
        assert loop.status().recording == first
    assert runtime.recording is not None and runtime.recording.recorded == [first]
    folder = tmp_path / "sessions" / str(first)
    assert len(read_index(folder)) == 24 and read_manifest(folder).closed
    assert json.loads((folder / "terrain.json").read_text())["pieces"]  # the terrain it started with
    edits = [json.loads(x) for x in (folder / "setup_edits.jsonl").read_text().splitlines()]
    assert [(e["changed"], e["terrain"]) for e in edits] == [(["terrain"], None)] and edits[0]["frame"] > 3
    replayed = _replay(folder)
    assert replayed[-1]["frames"] == 24
    with SessionStore(folder / "session.sqlite") as store:
        assert [f.index for f in store.frames()] == list(range(24))
        assert _moves(replayed) == _moves([e.data for e in store.events()])
        assert [v for v in replayed if v["type"] == "verdict"] == [v.data for v in store.verdicts()]


def test_a_new_game_started_mid_recording_starts_afresh_in_its_replay_too(table: dict[str, Path], tmp_path: Path) -> None:
    """A rematch saved mid-recording ("start a new game" with the same roster): a setup edit that changes nothing
    but starts the game afresh, so the stockpile declared before it is gone live and in the replay alike."""
    with LocalClient(create_app(_settings(table, tmp_path, "whole"))) as served:
        loop = served.app.state.runtime.live  # type: ignore[attr-defined]
        assert loop.wait_for_frame(20)
        name = served.get("/api/live/status").json()["recording"]
        action = served.get("/api/live/actions").json()["groups"][0]["actions"][0]["action"]
        assert action["kind"] == "place_stockpile"
        out = served.post("/api/live/declare", json={"action": action})
        assert out.status_code == 200 and out.json()["outcome"] == "legal", out.text
        assert len(loop.pipeline.state.stockpiles) == 1
        old = loop.pipeline
        roster = served.get("/api/roster").json()["roster"]
        assert served.put("/api/roster", params={"restart": "true"}, json=roster).status_code == 200
        _wait(lambda: loop.pipeline is not old, 10, "no new game")
        assert loop.pipeline.state.stockpiles == ()  # the three to place again
        _wait(lambda: "A new game was started" in loop.status().recording_note, 10, "no word of the new game")
        _wait(lambda: loop.status().status == "ended", 30, "the video did not end")
        assert loop.status().recording == name and loop.pipeline.state.stockpiles == ()
    folder = tmp_path / "sessions" / str(name)
    edits = [json.loads(x) for x in (folder / "setup_edits.jsonl").read_text().splitlines()]
    assert [(e["changed"], e.get("afresh")) for e in edits] == [([], True)]
    ruled_at = next(v["frame"] for v in out.json()["verdicts"] if v["event"] == "declared")
    assert ruled_at < edits[0]["frame"]  # the stockpile was ruled before the new game
    replayed = _replay(folder)
    with SessionStore(folder / "session.sqlite") as store:
        stored = [v.data for v in store.verdicts()]
    assert [v for v in replayed if v["type"] == "verdict"] == stored
    assert [v["rule"] for v in stored if v.get("event") == "declared" and v["outcome"] == "legal"]
    assert replayed[-1]["frames"] == len(read_index(folder))


def test_no_record_and_replays_record_nothing(table: dict[str, Path], tmp_path: Path) -> None:
    with _running(_settings(table, tmp_path, "whole", record=False)) as runtime:
        assert runtime.live.wait_for_frame(20)
        assert runtime.live.status().recording is None
    assert not (tmp_path / "sessions").exists()


def test_truncated_video_keeps_every_frame_it_gave(table: dict[str, Path], tmp_path: Path) -> None:
    with _running(_settings(table, tmp_path, "cut")) as runtime:
        loop = runtime.live
        _wait(lambda: loop.status().status == "ended", 30, "the cut video did not end")
        name, shown = loop.status().recording, loop.status().frame_index
        folder = tmp_path / "sessions" / str(name)
        assert 5 < shown + 1 < 24  # the cut lost the end of the video, not the start
        assert len(read_index(folder)) == shown + 1 and not read_manifest(folder).closed
        assert _replay(folder)[-1]["frames"] == shown + 1  # replays as it is, before the server stops
    assert read_manifest(folder).closed


def test_sigkill_mid_session_loses_at_most_the_frame_being_written(table: dict[str, Path], tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["serve", "--video", str(table["long"]), "--port", str(port), "--sessions", str(tmp_path / "sessions"),
            "--setup-dir", str(tmp_path / "setup"), "--calibration", str(table["calibration"]),
            "--roster", str(table["roster"]), "--terrain", str(table["terrain"]), "--game", "valknut"]
    p = subprocess.Popen([sys.executable, "-m", "webui.cli", *args], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        assert "recording into" in p.stdout.readline()
        status: dict[str, Any] = {}

        def far_enough() -> bool:
            nonlocal status
            try:
                status = httpx.get(f"http://127.0.0.1:{port}/api/live/status", timeout=2).json()
            except httpx.TransportError:
                return False
            return bool(status["frame_index"] >= MOVE_AT + 12 and status["recording"])

        _wait(far_enough, 60, "the server did not get far into the video")
        folder = tmp_path / "sessions" / status["recording"]
        with SessionStore(folder / "session.sqlite") as store:  # a second reader while the server writes
            committed = [(e.frame, e.type) for e in store.events()]
            committed_verdicts = len(store.verdicts())
        status = httpx.get(f"http://127.0.0.1:{port}/api/live/status", timeout=2).json()
        os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(10)
    shown = int(status["frame_index"])  # published, so read; every frame before it was durable first
    recorded = read_index(folder)
    assert [e.index for e in recorded] == list(range(len(recorded)))
    assert len(recorded) >= shown, (len(recorded), shown)  # lost: at most frame `shown`, being written
    assert not read_manifest(folder).closed
    replayed = _replay(folder)
    assert replayed[-1]["frames"] == len(recorded)
    assert _moves(replayed) and _moves(replayed)[0][1] == 12
    with SessionStore(folder / "session.sqlite") as store:
        after = [(e.frame, e.type) for e in store.events()]
        assert after[: len(committed)] == committed and ("move" in {t for _, t in after})
        assert len(store.verdicts()) >= committed_verdicts
        assert len(store.frames()) >= len(recorded) - 1


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not at /usr/bin/chromium")
def test_live_page_status_bar_names_the_recording(table: dict[str, Path], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    from tests.webui_server import running_server

    with running_server(_settings(table, tmp_path, "long")) as (url, app), sync_playwright() as p:
        assert app.state.runtime.live.wait_for_frame(20)
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url + "/")
            page.wait_for_function("(document.getElementById('recording') || {}).dataset?.recording", timeout=20000)
            text = page.inner_text("#recording")
            assert text == f"● recording {app.state.runtime.live.status().recording}" and not errors, (text, errors)
        finally:
            browser.close()


def test_camera_unplugged_keeps_its_recording_which_goes_on_when_it_is_back(
        table: dict[str, Path], tmp_path: Path) -> None:
    """A network camera (here the video file opened as a stream) that goes away: after the reconnect backoff
    (5 s) the page says "lost"; everything it gave is recorded; when it is back, the same recording goes on (the
    game afresh from there, as live)."""
    stream = shutil.copy(table["whole"], tmp_path / "cam.avi")
    settings = _settings(table, tmp_path, "whole").model_copy(update={"source_kind": "camera", "source": str(stream)})
    with _running(settings) as runtime:
        loop = runtime.live
        _wait(lambda: loop.status().frame_index >= 30, 30, "the camera gave no frames")
        first = loop.status().recording
        os.rename(stream, tmp_path / "unplugged.avi")
        _wait(lambda: loop.status().status == "lost", 30, "the camera was not reported lost")
        shown = loop.status().frame_index
        folder = tmp_path / "sessions" / str(first)
        assert len(read_index(folder)) == shown + 1  # every frame the camera gave is on disk
        os.rename(tmp_path / "unplugged.avi", stream)
        _wait(lambda: "reopened" in loop.status().recording_note, 30, "no word of the camera coming back")
        _wait(lambda: len(read_index(folder)) > shown + 1, 30, "no frames recorded after the camera came back")
        assert loop.status().recording == first
    total = len(read_index(folder))
    assert read_manifest(folder).closed and read_manifest(folder).frames == total
    edits = [json.loads(x) for x in (folder / "setup_edits.jsonl").read_text().splitlines()]
    assert [(e["frame"], e.get("afresh")) for e in edits] == [(shown + 1, True)]
    assert _replay(folder)[-1]["frames"] == total


def test_a_server_stopped_mid_game_has_ruled_every_frame_it_recorded(table: dict[str, Path], tmp_path: Path) -> None:
    """The server stops while the camera plays: the frame read ahead is already in the recording, so it is ruled
    before the loop ends; its replay rules the same frames as the live server did, to the same verdicts."""
    with _running(_settings(table, tmp_path, "long")) as runtime:
        loop = runtime.live
        _wait(lambda: loop.status().frame_index >= 12, 30, "no frames")
        name = loop.status().recording
    folder = tmp_path / "sessions" / str(name)
    assert read_manifest(folder).closed
    recorded = len(read_index(folder))
    assert loop.status().frame_index + 1 == recorded  # the last frame ruled is the last one recorded
    with SessionStore(folder / "session.sqlite") as store:
        assert [f.index for f in store.frames()] == list(range(recorded))
        stored = [v.data for v in store.verdicts()]
        live_moves = _moves([e.data for e in store.events()])
    replayed = _replay(folder)
    assert replayed[-1]["frames"] == recorded
    assert [v for v in replayed if v["type"] == "verdict"] == stored
    assert _moves(replayed) == live_moves
