"""Declaring the actions the camera cannot see (GET /api/live/actions, POST /api/live/declare), with FastAPI's
TestClient on the rendered recorded session of tests/webui_session.py played as a Valknut game.

The session's roster starts Valknut in its "stockpiles" phase; unit 12 is moved 6.71" at frame MOVE_AT. Also the
game panel (GET /api/live/panel), Undo of the last declaration and the actions at a clicked point (?at=x,y).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.webui_server import LocalClient, paused_at_start, session_settings
from tests.webui_session import END_12, MOVE_AT, START_12, make_session
from webui.server import create_app


@pytest.fixture(scope="module")
def sessions_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("declare-sessions")
    make_session(root / "table1")
    return root


@pytest.fixture
def client(sessions_root: Path, tmp_path: Path) -> Iterator[TestClient]:
    """The server paused on frame 0 of a fresh game (a seek makes a fresh pipeline), so nothing races the test."""
    settings = session_settings(sessions_root / "table1", sessions_root, tmp_path / "setup", game="valknut")
    app = create_app(settings)
    with LocalClient(app) as c:
        loop = app.state.runtime.live
        assert loop.wait_for_frame(20)
        paused_at_start(loop)
        yield c


def _actions(client: TestClient, **params: Any) -> dict[str, Any]:
    r = client.get("/api/live/actions", params=params)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _declare(client: TestClient, action: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/live/declare", json={"action": action})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_stockpiles_phase_lists_place_stockpile_with_labels(client: TestClient) -> None:
    a = _actions(client)
    assert a["game"] == "valknut"
    assert a["status"]["phase"] == "stockpiles" and a["status"]["turn"] == 0
    assert a["status"]["player"] in ("red", "blue")
    assert [(g["kind"], g["title"]) for g in a["groups"]] == [("place_stockpile", "Place a Runic Stockpile")]
    acts = a["groups"][0]["actions"]
    # one in each odd (or even) section, then the ones the rules would refuse (tried, they say why)
    assert len([x for x in acts if x["legal"]]) == 3 == a["legal"] and not a["capped"]
    assert [x["legal"] for x in acts] == sorted((x["legal"] for x in acts), reverse=True)  # the legal ones first
    player = a["status"]["player"].title()
    assert all(x["label"].startswith(f"{player}: place a Runic Stockpile at (") for x in acts), acts
    assert all(x["action"]["kind"] == "place_stockpile" and len(x["action"]["params"]["at"]) == 2 for x in acts)


def test_setup_declared_then_a_recorded_move_gets_a_real_verdict(client: TestClient) -> None:
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    phases = []
    for _ in range(40):
        a = _actions(client)
        phase = a["status"]["phase"]
        phases.append(phase)
        if phase == "activations":
            break
        assert "move" not in [g["kind"] for g in a["groups"]]
        action = _camera_deploy(loop) if phase == "deploy" else a["groups"][0]["actions"][0]["action"]
        if action["kind"] == "roll_off":
            action["params"] = {"rolls": [6, 2]}  # the players rolled: the first player wins the roll-off
        out = _declare(client, action)
        assert out["outcome"] == "legal", out
        assert all(v["event"] == "declared" and v["action"] == action for v in out["verdicts"])
    order = list(dict.fromkeys(phases))
    assert order == ["stockpiles", "roll_off", "drop_zones", "deploy", "turn_start", "activations"], order
    assert phases.count("stockpiles") == 6 and phases.count("deploy") == 10 and phases.count("turn_start") == 10
    a = _actions(client)
    assert a["status"]["turn"] == 1 and a["status"]["player"] == "red"
    kinds = {g["kind"] for g in a["groups"]}
    assert "end_activation" in kinds and "attack" in kinds and not kinds & {"move", "disengage"}
    assert {g["kind"]: g["title"] for g in a["groups"]}["end_activation"] == "End activation"  # no title: its name
    legal = {x["label"]: x["legal"] for g in a["groups"] for x in g["actions"]}
    assert legal["Red: end red 12's activation"] and legal["Red: red 13 attacks blue 22"]
    # the wall blocks 13's sight of 21 (see test_webui_api): offered to try, marked as one the rules refuse
    assert legal["Red: red 13 attacks blue 21"] is False
    # the declared verdicts are in the event log, every one of them (legal ones too)
    logged = [e for e in client.get("/api/live/events").json()["events"] if e.get("event") == "declared"]
    assert len(logged) >= 29 and any(e["rule"] == "valknut.drop_zones.roll" for e in logged)
    roll = next(e for e in logged if e["rule"] == "valknut.drop_zones.roll")
    assert {k: roll["numbers"][k] for k in ("red", "blue")} == {"red": 6, "blue": 2}
    # now play the recording: unit 12's recorded move is ruled by the activation rules, not the phase
    assert loop.status().frame_index < MOVE_AT
    loop.play()
    deadline = time.monotonic() + 30
    ruled: list[dict[str, Any]] = []
    while not ruled and time.monotonic() < deadline:
        ruled = [e for e in client.get("/api/live/events").json()["events"]
                 if e["type"] == "verdict" and e.get("unit") == 12 and e.get("event") == "move"]
        time.sleep(0.1)
    assert ruled, "unit 12's move was not ruled"
    assert all(e["rule"] != "valknut.turn.phase" for e in ruled), ruled
    speed = next(e for e in ruled if e["rule"] == "valknut.move.distance")
    assert speed["outcome"] == "illegal" and speed["numbers"]["allowance_in"] == 6.0  # 6.71" against Speed 6"
    assert abs(speed["numbers"]["length_in"] - math.dist(START_12, END_12)) < 0.05, speed


def test_without_setup_the_move_is_ruled_out_of_phase(client: TestClient) -> None:
    """The problem this solves: with nothing declared, the game sits in its stockpiles phase."""
    client.app.state.runtime.live.play()  # type: ignore[attr-defined]
    deadline = time.monotonic() + 30
    ruled: list[dict[str, Any]] = []
    while not ruled and time.monotonic() < deadline:
        ruled = [e for e in client.get("/api/live/events").json()["events"]
                 if e["type"] == "verdict" and e.get("event") == "move" and e["frame"] >= MOVE_AT]
        time.sleep(0.1)
    assert ruled and ruled[0]["rule"] == "valknut.turn.phase" and "stockpiles phase" in ruled[0]["message"], ruled


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"unit": 12}', 'names one action'),
        (b'{"action": {"unit": 12}}', '"kind"'),
        (b'{"action": {"kind": "fly", "unit": 12}}', 'no action "fly"'),
        (b'{"action": {"kind": "place_stockpile", "params": {"at": "middle"}}}', '"at"'),
        (b'{"action": {"kind": "place_stockpile", "params": [1]}}', '"params"'),
    ],
)
def test_malformed_declaration_is_400_in_one_sentence(client: TestClient, body: bytes, words: str) -> None:
    r = client.post("/api/live/declare", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert words in detail and detail.endswith(".") and "\n" not in detail and "Traceback" not in detail
    assert _actions(client)["legal"] == 3  # nothing was applied


def test_illegal_declaration_returns_an_illegal_verdict_and_changes_nothing(client: TestClient) -> None:
    before = _actions(client)
    offered = {tuple(x["action"]["params"]["at"]) for x in before["groups"][0]["actions"] if x["legal"]}
    # the centre of a section of the other parity: the placer may not use it
    wrong = next([x, y] for x in (5.5, 16.5, 27.5) for y in (5.0, 15.0) if all(math.dist((x, y), o) > 3 for o in offered))
    out = _declare(client, {"kind": "place_stockpile", "params": {"at": wrong}})
    assert out["outcome"] == "illegal"
    assert out["verdicts"][0]["rule"] == "valknut.stockpiles.section"
    assert "sections" in out["verdicts"][0]["message"]
    out = _declare(client, {"kind": "roll_off"})
    assert out["outcome"] == "illegal" and out["verdicts"][0]["rule"] == "valknut.turn.phase"
    after = _actions(client)
    assert after["status"] == before["status"] and after["groups"] == before["groups"]


def test_actions_filtered_to_a_unit_keep_only_its_own(client: TestClient) -> None:
    for action in _stockpiles_and_zones(client):
        _declare(client, action)
    a = _actions(client)
    # deploying is the camera's: no fixed points; only the figures the sample already has standing, each where it stands
    assert a["status"]["phase"] == "deploy"
    pipe = client.app.state.runtime.live.pipeline  # type: ignore[attr-defined]
    offered = [x for g in a["groups"] for x in g["actions"]]
    assert offered and all(x["label"].endswith(", where it stands") and x["action"]["kind"] == "deploy" for x in offered)
    for x in offered:
        p = pipe.positions[x["action"]["unit"]]
        assert x["action"]["params"]["to"][:2] == pytest.approx([p.x, p.y])
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    while _actions(client)["status"]["phase"] == "deploy":
        _declare(client, _camera_deploy(loop))
    a = _actions(client)
    assert a["status"]["phase"] == "turn_start" and a["legal"] == 40  # a Step down one of 4 Paths for 10 units
    mine = _actions(client, unit=a["groups"][0]["actions"][0]["action"]["unit"])
    assert mine["legal"] == 4 and {x["action"]["unit"] for g in mine["groups"] for x in g["actions"]} == {mine["unit"]}


def _camera_deploy(loop: Any) -> dict[str, Any]:
    """A deployment as the camera would make it (deploy is a camera kind: the page offers none): the next unit to
    place, at a spot in its Drop Zone."""
    pipe = loop.pipeline
    return next(x for x in pipe.game.legal_actions(pipe.state, dict(pipe.positions)) if x.kind == "deploy").to_json()


def _stockpiles_and_zones(client: TestClient) -> Iterator[dict[str, Any]]:
    while (a := _actions(client))["status"]["phase"] in ("stockpiles", "roll_off", "drop_zones"):
        yield a["groups"][0]["actions"][0]["action"]


def test_declaring_while_playing_is_ruled_at_once_at_the_last_frame_measured(client: TestClient) -> None:
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    loop.seek(0)
    loop.play()
    deadline = time.monotonic() + 30
    while loop.status().frame_index < 1:  # playing: past the frame it was sought to (a slow machine takes a while)
        assert time.monotonic() < deadline, loop.status()
        time.sleep(0.05)
    shown = loop.status().frame_index
    action = _actions(client)["groups"][0]["actions"][0]["action"]
    out = _declare(client, action)
    assert out["outcome"] == "legal" and out["verdicts"][0]["frame"] >= shown
    assert _actions(client)["legal"] == 2  # the placer has two sections left


def test_without_a_calibrated_table_there_is_nothing_to_declare(sessions_root: Path, tmp_path: Path) -> None:
    """A folder of bare frames (no calibration): the list says why, and a declaration is 400 in one sentence."""
    import shutil

    bare = sessions_root / "bare"
    if not bare.exists():
        bare.mkdir()
        for f in sorted((sessions_root / "table1").glob("frame_*.jpg"))[:3]:
            shutil.copy(f, bare / f.name)
    settings = session_settings(bare, sessions_root, tmp_path / "setup")
    app = create_app(settings)
    with LocalClient(app) as c:
        assert app.state.runtime.live.wait_for_frame(20)
        a = c.get("/api/live/actions").json()
        assert a["groups"] == [] and a["status"] is None
        assert a["message"] == "No game is being ruled: the table is not calibrated yet; calibrate it first."
        r = c.post("/api/live/declare", json={"action": {"kind": "roll_off"}})
        assert r.status_code == 400 and r.json()["detail"] == a["message"]


# ---------------------------------------------------------------- the game panel, Undo, actions at a point
def _panel(client: TestClient) -> dict[str, Any]:
    r = client.get("/api/live/panel")
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_the_panel_then_undo_of_the_last_declaration(client: TestClient) -> None:
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    first = _panel(client)
    assert first["game"] == "valknut" and first["colours"].keys() == {"red", "blue"}
    panel = first["panel"]
    assert panel["winner"] is None and not panel["over"]
    assert [s["side"] for s in panel["score"]] == ["red", "blue"]
    assert all(s["words"] == "0 of 3 Runestones delivered, 0 kills" and s["points"] == 0 for s in panel["score"])
    assert "3 Runestones" in panel["victory"]
    state = loop.pipeline.state
    spot = next(a for a in client.get("/api/live/actions").json()["groups"][0]["actions"] if a["legal"])["action"]
    out = _declare(client, spot)
    assert out["outcome"] == "legal" and loop.pipeline.state is not state
    assert _panel(client)["panel"] != panel  # one stockpile fewer to place
    undo = _declare(client, {"kind": "undo"})
    said = [v for v in undo["verdicts"] if v["rule"] == "tablesight.undo"]
    assert said[0]["outcome"] == "info" and said[0]["message"].startswith("Undone: ")
    assert loop.pipeline.state is state and _panel(client)["panel"] == panel
    # each declaration's verdicts carry its number; Undo's says which it took back: the page strikes those out
    numbers = {v["declaration"] for v in out["verdicts"]}
    assert len(numbers) == 1 and said[0]["undoes"] == list(numbers) and said[0]["declaration"] > numbers.pop()
    again = _declare(client, {"kind": "undo"})  # only the last one: it was undone already
    assert again["outcome"] == "illegal"
    assert again["verdicts"][0]["message"] == ("There is no declaration to undo: nothing was declared since the game "
                                               "started, or the last declaration was already undone.")


def test_undo_names_the_declaration_it_took_back_not_a_refused_one_after_it(client: TestClient) -> None:
    """A stockpile placed, the same one declared again (refused: its section is taken), then Undo: the page is told
    to strike out the first declaration's verdicts, not the refused one's, though both name the same rule, unit and
    frame."""
    spot = next(a for a in client.get("/api/live/actions").json()["groups"][0]["actions"] if a["legal"])["action"]
    placed = _declare(client, spot)
    again = _declare(client, spot)
    assert placed["outcome"] == "legal" and again["outcome"] == "illegal"
    first, second = ({v["declaration"] for v in r["verdicts"]} for r in (placed, again))
    assert len(first) == len(second) == 1 and first != second
    undo = _declare(client, {"kind": "undo"})
    said = next(v for v in undo["verdicts"] if v["rule"] == "tablesight.undo")
    assert said["undoes"] == list(first)


def test_actions_at_a_clicked_point(client: TestClient) -> None:
    r = client.get("/api/live/actions", params={"at": "5.0,5.5"})
    assert r.status_code == 200, r.text
    groups = r.json()["groups"]
    at = [a["action"] for g in groups for a in g["actions"]]
    assert at and all(a["kind"] in ("place_stockpile", "choose_drop_zone") for a in at)
    assert any(a["kind"] == "place_stockpile" and a["params"]["at"] == [5.0, 5.5] for a in at)
    bad = client.get("/api/live/actions", params={"at": "middle"})
    assert bad.status_code == 400
    assert bad.json()["detail"] == '"at" must be a table point in inches written x,y (e.g. 12.5,8); got \'middle\'.'


def test_pages_asking_at_one_state_get_one_answer_made_once(client: TestClient,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page asks for the actions when a frame changes the game: at one state of the game and one set of the
    units' places the answer is made once (the paused table: neither changes), a declaration (a new state) makes
    it again, and asking at a clicked point is another question, answered once too."""
    from webui.routes import live

    made: list[Any] = []
    real = live._actions
    def counted(*a: Any) -> dict[str, Any]:
        made.append(a[5])
        return real(*a)

    monkeypatch.setattr(live, "_actions", counted)
    first = _actions(client)
    assert _actions(client) == first and _actions(client) == first
    assert len(made) == 1
    spot = next(a for a in first["groups"][0]["actions"] if a["legal"])["action"]
    assert _declare(client, spot)["outcome"] == "legal"
    after = _actions(client)
    assert len(made) == 2 and after != first
    assert after["status"]["player"] != first["status"]["player"] or after["legal"] < first["legal"]
    _actions(client, at="5.0,5.5")
    _actions(client, at="5.0,5.5")
    assert len(made) == 3


def test_a_page_that_skipped_frames_gets_their_entries_and_bad_numbers_are_one_sentence(client: TestClient) -> None:
    """/api/live/skipped: the events and verdicts of the frame messages after `after` and before `before`, each
    numbered as the page saw it (`sent`); the log says its pass (`run`)."""
    loop = client.app.state.runtime.live  # type: ignore[attr-defined]
    assert loop._encoder.flush(5)
    # the frames published up to the pause at frame 0, and that frame again; on a loaded machine fewer go out (the
    # newest replaces one not yet sent), so the paused frame is drawn again until three have
    for _ in range(10):
        if loop._encoder.sent >= 3:
            break
        loop.select(None, "skipped-test")
        time.sleep(0.2)
        assert loop._encoder.flush(5)
    newest = loop._encoder.sent
    assert newest >= 3, newest
    got = client.get("/api/live/skipped", params={"after": newest - 3}).json()["messages"]
    assert [m["sent"] for m in got] == [newest - 2, newest - 1, newest]
    assert all(m["run"] == loop.run and isinstance(m["events"], list) for m in got), got
    assert client.get("/api/live/skipped", params={"after": newest - 3, "before": newest}).json()["messages"] == got[:2]
    assert client.get("/api/live/skipped", params={"after": newest}).json()["messages"] == []
    assert client.get("/api/live/events").json()["run"] == loop.run
    for params, field in (({}, "after"), ({"after": "the third"}, "after"), ({"after": 1, "before": "soon"}, "before")):
        r = client.get("/api/live/skipped", params=params)
        assert r.status_code == 422 and r.json()["detail"].startswith(f"{field}: "), r.text
        assert r.json()["detail"].count(".") == 1 and r.json()["detail"].endswith("send it again."), r.text
