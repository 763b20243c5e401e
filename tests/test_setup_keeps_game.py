"""Setup edits keep the game (session/carry.py), with FastAPI's TestClient on real servers: the rendered recorded
session of tests/webui_session.py played as Valknut, and the bundled sample with its own script.

A roster rename, a terrain edit, choosing the game already ruled and a new calibration carry the running game on
(its phase, its stockpiles); a roster that changes the units is refused with a sentence until the players agree
to start afresh; a player's declaration on the scripted sample is ruled but never changes the sample's game; the
sample's edited terrain is used again after a restart; a camera measured in the browser is used by the next table
calibration.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from session.live_loop import WARMUP_FRAMES
from session.settings import Settings
from tests.webui_server import LocalClient, paused_at_start, session_settings
from tests.webui_session import make_session
from webui.server import create_app


@pytest.fixture(scope="module")
def sessions_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("carry-sessions")
    make_session(root / "table1")
    return root


def _paused_at_0(app: Any) -> Any:
    loop = app.state.runtime.live
    assert loop.wait_for_frame(20)
    return paused_at_start(loop)


@pytest.fixture
def client(sessions_root: Path, tmp_path: Path) -> Iterator[TestClient]:
    settings = session_settings(sessions_root / "table1", sessions_root, tmp_path / "setup", game="valknut")
    with LocalClient(create_app(settings)) as c:
        _paused_at_0(c.app)
        yield c


def _new_pipeline(loop: Any, old: Any) -> Any:
    deadline = time.monotonic() + 20
    while loop.pipeline is old:
        assert time.monotonic() < deadline, "the pipeline was not rebuilt"
        time.sleep(0.05)
    time.sleep(0.2)
    return loop.pipeline


def _status(client: TestClient) -> dict[str, Any]:
    return client.get("/api/live/actions").json()  # type: ignore[no-any-return]


def _place_two_stockpiles(client: TestClient) -> None:
    for _ in range(2):
        action = _status(client)["groups"][0]["actions"][0]["action"]
        r = client.post("/api/live/declare", json={"action": action})
        assert r.status_code == 200 and r.json()["outcome"] == "legal", r.text


def test_a_roster_rename_keeps_the_game_and_its_names_change(client: TestClient) -> None:
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    _place_two_stockpiles(client)
    before = _status(client)
    state = loop.pipeline.state
    roster = client.get("/api/roster").json()["roster"]
    for u in roster["units"]:
        if u["tag"] == 12:
            u["name"] = "Sigrid"
    old = loop.pipeline
    r = client.put("/api/roster", json=roster)
    assert r.status_code == 200 and r.json()["game_goes_on"] is True, r.text  # a page may offer a new game instead
    pipe = _new_pipeline(loop, old)
    assert pipe.state is state  # the very game, not a fresh one
    after = _status(client)
    assert after["status"] == before["status"] and after["legal"] == before["legal"] == 1
    assert not [e for e in client.get("/api/live/events").json()["events"] if "afresh" in str(e.get("message"))]
    assert pipe.roster.units[12].name == "Sigrid"


def test_terrain_edit_same_game_and_new_calibration_keep_the_game(client: TestClient) -> None:
    app: Any = client.app
    loop = app.state.runtime.live
    _place_two_stockpiles(client)
    before = _status(client)["status"]
    terrain = client.get("/api/terrain").json()
    pieces = len(terrain["pieces"])
    terrain["pieces"].append({"name": "south hill", "kind": ["elevated"], "height_in": 2.0,
                              "polygon": [[1, 1], [4, 1], [4, 3], [1, 3]]})
    old = loop.pipeline
    assert client.put("/api/terrain", json=terrain).status_code == 200
    pipe = _new_pipeline(loop, old)
    assert len(pipe.state.terrain) == pieces + 1 and pipe.state.stockpiles == old.state.stockpiles
    assert _status(client)["status"] == before
    # the game already ruled, chosen again: nothing is rebuilt
    assert client.post("/api/live/game", json={"game": "valknut"}).status_code == 200
    time.sleep(0.5)
    assert loop.pipeline is pipe
    # a new table calibration (from the shown frame) carries the game on with the new calibration
    r = client.post("/api/calibration/table", data={"board": "30x22"})
    assert r.status_code == 200 and r.json()["ok"], r.text
    pipe2 = _new_pipeline(loop, pipe)
    assert pipe2.calibration is app.state.runtime.setup.calibration and pipe2.calibration is not pipe.calibration
    assert pipe2.state is pipe.state and _status(client)["status"] == before


def test_start_a_new_game_with_the_same_units_starts_one(client: TestClient) -> None:
    """A rematch: "start a new game" with the roster unchanged starts the game afresh (its stockpiles to place again),
    where a save without it would carry the game on."""
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    _place_two_stockpiles(client)
    assert _status(client)["legal"] == 1  # one stockpile left to place
    before = client.get("/api/live/events").json()
    assert any("Runic Stockpile" in str(e.get("message")) for e in before["events"]), before
    roster = client.get("/api/roster").json()["roster"]
    old = loop.pipeline
    r = client.put("/api/roster", params={"restart": "true"}, json=roster)
    assert r.status_code == 200 and r.json()["game_goes_on"] is False, r.text
    pipe = _new_pipeline(loop, old)
    assert pipe.state is not old.state and _status(client)["legal"] == 3  # the three stockpiles to place again
    # the new game's list: the last game's entries are gone, and the pages are told to start theirs afresh
    log = client.get("/api/live/events").json()
    assert log["run"] == before["run"] + 1
    said = [str(e.get("message")) for e in log["events"]]
    assert said[0] == "The game starts afresh: a new game was started." and not any("Runic Stockpile" in m for m in said)


def test_a_restart_that_is_no_yes_or_no_is_one_sentence_and_the_game_goes_on(client: TestClient) -> None:
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    _place_two_stockpiles(client)
    roster = client.get("/api/roster").json()["roster"]
    old = loop.pipeline
    r = client.put("/api/roster", params={"restart": "maybe"}, json=roster)
    assert r.status_code == 422 and r.json()["detail"] == (
        "restart: input should be a valid boolean, unable to interpret input; fix that field and send it again.")
    time.sleep(0.3)
    assert loop.pipeline is old and _status(client)["legal"] == 1  # nothing saved, the stockpiles still placed


def test_a_roster_that_changes_the_units_asks_first(client: TestClient) -> None:
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    _place_two_stockpiles(client)
    roster = client.get("/api/roster").json()["roster"]
    bigger = copy.deepcopy(roster)
    bigger["units"][0] = {**roster["units"][0], "tag": 40, "name": "Red 40"}
    old = loop.pipeline
    r = client.put("/api/roster", json=bigger)
    assert r.status_code == 409 and r.json()["restart"], r.text
    assert "starts a new game, because it adds tag 40 and removes tag 10, and the game in progress ends" in r.json()["detail"]
    assert "{" not in r.json()["detail"] and "--" not in r.json()["detail"]
    time.sleep(0.3)
    assert loop.pipeline is old and client.get("/api/roster").json()["roster"] == roster  # nothing changed
    r = client.put("/api/roster", params={"restart": "true"}, json=bigger)
    assert r.status_code == 200, r.text
    pipe = _new_pipeline(loop, old)
    assert pipe.state is not old.state and _status(client)["legal"] == 3  # stockpiles to place again
    events = client.get("/api/live/events").json()["events"]
    said = "The game starts afresh: the roster changed: it adds tag 40 and removes tag 10."
    assert any(e.get("message") == said for e in events)


def test_a_declaration_on_the_scripted_sample_is_not_kept(tmp_path: Path) -> None:
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings)) as c:
        loop = _paused_at_0(c.app)
        pipe = loop.pipeline
        assert pipe.declarations, "the bundled sample carries its own script"
        state = pipe.state
        # at frame 0 the sample deploys, which is the camera's to do: a deployment as the camera would make it
        action = pipe.game.legal_actions(pipe.state, dict(pipe.positions))[0].to_json()
        r = c.post("/api/live/declare", json={"action": action})
        assert r.status_code == 200, r.text
        verdicts = r.json()["verdicts"]
        assert any(v["rule"] == "tablesight.script" and "ruled but not kept" in v["message"] for v in verdicts)
        assert loop.pipeline is pipe and pipe.state is state  # the script's game goes on as recorded
        undo = c.post("/api/live/declare", json={"action": {"kind": "undo"}})  # nor does Undo take its script back
        assert undo.status_code == 200 and pipe.state is state
        assert any(v["rule"] == "tablesight.script" for v in undo.json()["verdicts"])


def test_a_new_game_on_the_looping_sample_is_kept_when_the_sample_ends(tmp_path: Path) -> None:
    """The players' own game on the bundled sample: the recording's script is dropped (their stockpiles are theirs
    to place) and at the sample's last frame it stops there instead of starting a new pass, which lost their game.
    Nobody watches here, so the sample is told not to idle (it would wait on a slow machine before its end)."""
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions",
                        sample_idles=False)
    with LocalClient(create_app(settings)) as c:
        loop = _paused_at_0(c.app)
        roster = c.get("/api/roster").json()["roster"]
        old = loop.pipeline
        r = c.put("/api/roster", params={"restart": "true"}, json=roster)
        assert r.status_code == 200, r.text
        pipe = _new_pipeline(loop, old)
        assert not pipe.plays_script and c.get("/api/live/dice").json()["script"] is False
        _place_two_stockpiles(c)
        state, run = pipe.state, loop.run
        loop.set_speed(16.0)
        loop.play()
        deadline = time.monotonic() + 60
        while loop.status().status != "ended":
            assert time.monotonic() < deadline, loop.status()
            assert loop.run == run, "the sample started a new pass over the players' game"
            time.sleep(0.05)
        status = loop.status()
        assert status.frame_index == status.frames - 1 and loop.run == run
        assert status.message == "The sample has ended on its last frame; your game is kept as it stands."
        assert loop.pipeline is pipe and pipe.state is not None
        assert pipe.state.phase == state.phase and _status(c)["legal"] == 1  # the third stockpile still to place


def test_another_game_saved_over_the_samples_recording_starts_without_asking(tmp_path: Path) -> None:
    """The game on show is the sample's recording, nobody's game in progress: "Save and start the game" starts the
    players' own at once (it asked first, with a second button to press)."""
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    hex_roster = json.loads((Path(__file__).resolve().parents[1] / "examples" / "rosters" / "hex_skirmish.json")
                            .read_text(encoding="utf-8"))
    with LocalClient(create_app(settings)) as c:
        loop = _paused_at_0(c.app)
        old = loop.pipeline
        assert old.plays_script
        r = c.put("/api/roster", json=hex_roster)
        # a new game: the page says the game is on the live table (it said "the game in progress goes on")
        assert r.status_code == 200 and r.json()["game_goes_on"] is False, r.text
        pipe = _new_pipeline(loop, old)
        assert pipe.game.name == "hex_skirmish" and not pipe.plays_script


def test_another_game_on_the_sample_stops_it_on_its_frame_until_its_own_game_is_chosen(tmp_path: Path) -> None:
    """The sample shows a Valknut table: played on under Rise of the Magni, its figures moving were ruled as five
    illegal tile placements nobody made. It stops on the frame shown instead (frame WARMUP_FRAMES at the earliest,
    so that its figures stand settled for the new game's camera), and says why on the page; a server started again
    with that game saved shows frame WARMUP_FRAMES, stopped; Valknut chosen again plays it."""
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions",
                        sample_idles=False)
    magni = json.loads((Path(__file__).resolve().parents[1] / "examples" / "rosters" / "magni.json").read_text())
    said = ("The sample stopped on this frame: it shows a game of Valknut: Skirmish Game, whose figures would be taken "
            "for moves nobody made in Rise of the Magni. Declare your game's actions here, or play on your own table "
            "with a camera (tablesight serve --camera 0).")

    def stopped(loop: Any) -> int:
        deadline = time.monotonic() + 20
        while not (loop.status().status == "paused" and loop.status().message == said
                   and loop.status().frame_index >= WARMUP_FRAMES):  # not before its figures have settled
            assert time.monotonic() < deadline, loop.status()
            time.sleep(0.05)
        shown = loop.status().frame_index
        time.sleep(1.5)  # at the sample's pace, 15 frames (the frame shown is ruled again by the new game's pipeline)
        assert loop.status().frame_index == shown and loop.status().status == "paused"
        return shown

    with LocalClient(create_app(settings)) as c:
        loop = c.app.state.runtime.live  # type: ignore[attr-defined]
        assert loop.wait_for_frame(20)
        valknut = c.get("/api/roster").json()["roster"]
        r = c.put("/api/roster", json=magni)
        assert r.status_code == 200, r.text
        assert stopped(loop) < 54  # at once: the sample's first figure moves at frame 54
        assert not [e for e in c.get("/api/live/events").json()["events"] if e.get("type") == "move"]
        assert c.get("/api/live/status").json()["message"] == said
    with LocalClient(create_app(settings)) as c:  # the next evening: the saved game, the sample stopped at once
        loop = c.app.state.runtime.live  # type: ignore[attr-defined]
        assert loop.wait_for_frame(20) and WARMUP_FRAMES <= stopped(loop) <= WARMUP_FRAMES + 1
        assert c.app.state.runtime.setup.game == "magni"  # type: ignore[attr-defined]
        r = c.put("/api/roster", params={"restart": "true"}, json=valknut)  # the players' Magni game ends
        assert r.status_code == 200, r.text
        deadline = time.monotonic() + 20
        while not (loop.status().status == "ok" and loop.status().frame_index > 5):
            assert time.monotonic() < deadline, loop.status()
            time.sleep(0.05)


def test_a_game_already_over_is_not_asked_about_before_a_new_setup(tmp_path: Path) -> None:
    """The question "the game in progress ends there" is for a game still to be won; after a concession the new
    setup is saved at once and starts the next game."""
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions",
                        sample_idles=False)
    valyr = json.loads((Path(__file__).resolve().parents[1] / "examples" / "rosters" / "valyr.json").read_text())
    with LocalClient(create_app(settings)) as c:
        loop = c.app.state.runtime.live  # type: ignore[attr-defined]
        assert loop.wait_for_frame(20)
        assert c.put("/api/roster", json=valyr).status_code == 200
        deadline = time.monotonic() + 20  # the sample stops (another game than its own) on its settled frame
        while not (getattr(loop.pipeline.game, "name", None) == "valyr" and loop.pipeline.state is not None
                   and loop.status().status == "paused" and loop.status().frame_index >= WARMUP_FRAMES
                   and loop.pipeline.frame == loop.status().frame_index):
            assert time.monotonic() < deadline, "the Valyr game did not start"
            time.sleep(0.05)
        old = loop.pipeline
        bigger = copy.deepcopy(valyr)
        bigger["units"][0] = {**bigger["units"][0], "tag": 40, "name": "Shieldbearer 40"}
        assert c.post("/api/live/declare", json={"action": {"kind": "start_round"}}).status_code == 200
        r = c.put("/api/roster", json=bigger)
        assert r.status_code == 409 and "the game in progress ends there" in r.json()["detail"]  # a game to lose
        said = c.post("/api/live/declare", json={"action": {"kind": "concede", "params": {"player": "blue"}}}).json()
        assert old.game.is_over(old.state), said
        r = c.put("/api/roster", json=bigger)
        assert r.status_code == 200 and r.json()["game_goes_on"] is False, r.text
        assert _new_pipeline(loop, old).game.name == "valyr"


def test_roll_for_us_on_the_scripted_sample_is_refused_in_one_sentence_and_nothing_is_saved(tmp_path: Path) -> None:
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings)) as c:
        _paused_at_0(c.app)
        dice = c.get("/api/live/dice").json()
        assert dice["script"] is True and dice["roll_for_us"] is True  # the sample was recorded with Tablesight rolling
        r = c.put("/api/live/dice/roll-for-us", json={"on": False})
        assert r.status_code == 409
        assert r.json()["detail"] == ("This recorded session rolls its dice as they were recorded; set up a game on "
                                      "the New game page to choose who rolls.")
        assert c.get("/api/live/dice").json()["roll_for_us"] is True
        assert not (tmp_path / "setup" / "roster.json").exists()  # the players' roster file is not written


def test_the_samples_edited_terrain_survives_a_restart(tmp_path: Path) -> None:
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings)) as c:
        assert c.app.state.runtime.live.wait_for_frame(20)  # type: ignore[attr-defined]
        terrain = c.get("/api/terrain").json()
        terrain["pieces"].append({"name": "south hill", "kind": ["elevated"], "height_in": 2.0,
                                  "polygon": [[1, 1], [4, 1], [4, 3], [1, 3]]})
        assert c.put("/api/terrain", json=terrain).status_code == 200
    with LocalClient(create_app(settings)) as c:
        names = [p["name"] for p in c.get("/api/terrain").json()["pieces"]]
        assert "south hill" in names and len(names) == len(terrain["pieces"])
    # another source does not take the sample's terrain
    saved_for = json.loads((tmp_path / "setup" / "saved_for.json").read_text())
    assert "sample" in saved_for["terrain-valknut.json"]  # the game's own terrain file, kept for this source


def test_a_camera_measured_in_the_browser_is_used_by_the_next_table_calibration(client: TestClient) -> None:
    app: Any = client.app
    runtime = app.state.runtime
    camera = runtime.setup.calibration.camera.to_json()
    camera["K"][0][0] *= 1.02
    camera["K"][1][1] *= 1.02
    runtime.save_setup_file("camera.json", camera)
    r = client.post("/api/calibration/table", data={"board": "30x22"})
    assert r.status_code == 200 and r.json()["ok"], r.text
    assert r.json()["focal_source"] == "intrinsics"
    assert abs(runtime.setup.calibration.camera.K[0][0] - camera["K"][0][0]) < 1e-6
