"""The web server's HTTP and WebSocket API, with FastAPI's TestClient, on a rendered recorded session."""

from __future__ import annotations

import json
import math
import os
import socket
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from rules.engine import find_game
from session.frame_publisher import stream_picture, stream_size
from session.paths import SAMPLES_DIR
from session.session_list import length_text
from session.settings import Settings
from tests.webui_server import LocalClient, session_settings
from tests.webui_session import END_12, START_12, UNITS, make_session
from vision.sources import Frame
from webui.server import create_app


@pytest.fixture(scope="module")
def sessions_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sessions")
    make_session(root / "table1")
    (root.parent / "secret").mkdir(exist_ok=True)
    (root.parent / "secret" / "manifest.json").write_text("{}")
    os.symlink(root.parent / "secret", root / "escape")
    return root


@pytest.fixture
def client(sessions_root: Path, tmp_path: Path) -> Iterator[TestClient]:
    settings = session_settings(sessions_root / "table1", sessions_root, tmp_path / "setup")
    app = create_app(settings)
    with LocalClient(app) as c:
        assert app.state.runtime.live.wait_for_frame(20)
        yield c


def _pictured_frame(ws: object) -> tuple[dict[str, object], bytes]:
    """The next frame message with the JPEG that follows it. A frame published as the watcher joined (made while
    nobody watched) comes without one, and a status may come between: such a frame is passed over."""
    frame: dict[str, object] | None = None
    while True:
        message = ws.receive()  # type: ignore[attr-defined]
        assert message["type"] == "websocket.send", message  # not closed
        if message.get("bytes") is not None:
            if frame is not None:
                assert message["bytes"][:2] == b"\xff\xd8"
                return frame, message["bytes"]
            continue
        msg = json.loads(message["text"])
        frame = msg if msg["type"] == "frame" else None


def _frame_message(ws: object) -> dict[str, object]:
    return _pictured_frame(ws)[0]


def test_pages_render(client: TestClient) -> None:
    for path in ("/", "/calibrate", "/terrain", "/roster", "/replay", "/replay/table1"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert "Tablesight" in r.text


def test_websocket_sends_frame_json_then_jpeg_with_units_at_true_positions(client: TestClient) -> None:
    with client.websocket_connect("/ws/live") as ws:
        msg = _frame_message(ws)
    units = {u["tag"]: u for u in msg["units"]}  # type: ignore[attr-defined]
    assert set(units) == set(UNITS)
    x, y = (units[12]["x"], units[12]["y"])
    truth = START_12 if msg["frame_index"] < 8 else END_12  # type: ignore[operator]
    assert math.dist((x, y), truth) < 0.05
    kinds = [s["k"] for s in msg["image_shapes"]]  # type: ignore[attr-defined]
    assert kinds.count("tag") == 4 + len(UNITS)
    shapes: list[dict[str, object]] = msg["image_shapes"]  # type: ignore[assignment]
    assert sum(1 for s in shapes if s["s"] == "base") == len(UNITS)
    assert msg["board"] == {"w": 30.0, "d": 22.0}


def test_two_watchers_share_frames(client: TestClient) -> None:
    with client.websocket_connect("/ws/live") as a, client.websocket_connect("/ws/live") as b:
        ma, mb = _frame_message(a), _frame_message(b)
        assert ma["type"] == mb["type"] == "frame"
        assert client.get("/api/live/status").json()["watchers"] == 2


def test_mjpeg_stream_sends_jpeg_parts(client: TestClient) -> None:
    with client.stream("GET", "/api/live/stream.mjpg") as r:
        assert r.headers["content-type"].startswith("multipart/x-mixed-replace")
        chunk = next(r.iter_bytes())
        assert b"Content-Type: image/jpeg" in chunk


def test_ask_gives_range_and_line_of_sight_through_the_wall(client: TestClient) -> None:
    time.sleep(0.2)
    r = client.post("/api/live/ask", json={"unit": 13, "target": 21})
    assert r.status_code == 200, r.text
    a = r.json()
    radius = 32 / 25.4 / 2
    expected = math.dist((6.0, 15.0), (22.0, 12.0)) - 2 * radius
    assert abs(a["range_in"] - expected) < 0.05
    assert a["los"] in ("blocked", "partial") and a["blockers"] == ["wall"]
    r = client.post("/api/live/ask", json={"unit": 22, "target": 21})
    assert r.json()["los"] == "clear"


def test_ask_about_a_unit_not_on_the_table_is_400(client: TestClient) -> None:
    r = client.post("/api/live/ask", json={"unit": 12, "target": 99})
    assert r.status_code == 400
    assert "99" in r.json()["detail"]


def test_select_and_status(client: TestClient) -> None:
    assert client.post("/api/live/select", json={"unit": 12}).json() == {"selected": 12}
    st = client.get("/api/live/status").json()
    assert st["frames"] == 24 and st["status"] in ("ok", "paused", "ended")


def test_unknown_game_is_400_naming_the_choices(client: TestClient) -> None:
    r = client.post("/api/live/game", json={"game": "chess"})
    assert r.status_code == 400
    assert "chess" in r.json()["detail"] and "choose one of" in r.json()["detail"]


def test_terrain_round_trip_and_bad_terrain(client: TestClient, tmp_path: Path) -> None:
    piece = {"name": "ruin", "kind": ["obscuring"], "polygon": [[1, 1], [4, 1], [4, 3]], "height_in": 2}
    r = client.put("/api/terrain", json={"pieces": [piece]})
    assert r.status_code == 200 and r.json()["pieces"] == 1
    assert client.get("/api/terrain").json()["pieces"][0]["name"] == "ruin"
    assert json.loads((tmp_path / "setup" / "terrain-valknut.json").read_text())["pieces"][0]["name"] == "ruin"
    bad = client.put("/api/terrain", content=b"{not json", headers={"content-type": "application/json"})
    assert bad.status_code == 400 and "not valid JSON" in bad.json()["detail"]
    crossing = {"name": "x", "kind": ["blocking"], "polygon": [[0, 0], [4, 4], [4, 0], [0, 3]], "height_in": 1}
    r = client.put("/api/terrain", json={"pieces": [crossing]})
    assert r.status_code == 400 and "crosses itself" in r.json()["detail"]


def test_roster_errors_are_one_sentence(client: TestClient) -> None:
    r = client.put("/api/roster", json={"game": "valyr", "units": [{"tag": 3, "profile": "x", "owner": "red"}]})
    assert r.status_code == 400 and "anchor" in r.json()["detail"]
    r = client.post("/api/roster/check", content=b"[1,", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["detail"].endswith(".")
    r = client.put("/api/roster", json={"game": "chess", "units": [{"tag": 12, "profile": "x", "owner": "red"}]})
    assert r.status_code == 400 and "chess" in r.json()["detail"]


def test_bad_body_is_422_in_one_sentence(client: TestClient) -> None:
    r = client.post("/api/live/select", json={"unit": "twelve"})
    assert r.status_code == 422
    assert r.json()["detail"].startswith("unit:")


@pytest.mark.parametrize(
    "path",
    [
        "/api/replay/..",
        "/api/replay/..%2F..%2Fetc",
        "/api/replay/%2E%2E",
        "/api/replay/escape",
        "/api/replay/%2Fetc%2Fpasswd",
        "/replay/..%252F..%252Fetc",
        "/api/replay/.hidden",
    ],
)
def test_no_path_outside_the_sessions_folder(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code in (400, 404), (path, r.status_code)
    assert "secret" not in r.text and "manifest" not in r.text


def test_symlink_leading_out_is_not_listed(client: TestClient) -> None:
    listed = client.get("/api/sessions").json()["sessions"]
    assert [s["name"] for s in listed if not s.get("sample")] == ["table1"]
    # the bundled samples are offered beside the folder's own sessions, and open by their names
    samples = [s["name"] for s in listed if s.get("sample")]
    assert "valknut_skirmish" in samples and "magni_placement" in samples


def test_the_list_of_sessions_says_each_ones_game_date_units_and_length(client: TestClient) -> None:
    listed = {s["name"]: s for s in client.get("/api/sessions").json()["sessions"]}
    own, sample = listed["table1"], listed["valknut_skirmish"]
    manifest = json.loads((SAMPLES_DIR / "valknut_skirmish" / "manifest.json").read_text())
    began = datetime.fromisoformat(manifest["created"])
    assert sample["game"] == find_game(manifest["game"]).title == "Valknut: Skirmish Game"
    assert began.utcoffset() is not None and sample["units"] == 10
    assert sample["created_text"] == f"{began.astimezone():%d %b %Y, %H:%M}"  # the recorder's UTC, on this clock
    assert sample["length_text"] == f"{sample['duration_s']:.1f} s"
    assert own["units"] == len(UNITS) and own["game"] == "Valknut: Skirmish Game"  # its roster's, as the replay's
    page = client.get("/replay").text
    assert "Valknut: Skirmish Game" in page and 'href="/api/replay/table1/report.html" data-report="/api/replay/table1/report/progress"' in page
    replay = client.get("/replay/valknut_skirmish").text  # the replay page names the game it was played as
    assert '<span class="muted" id="replay-game">Valknut: Skirmish Game</span>' in replay


@pytest.mark.parametrize(("seconds", "said"), [(0.04, "0.0 s"), (13.94, "13.9 s"), (59.96, "1:00 min"),
                                               (245.2, "4:05 min"), (3723.0, "1:02:03 h")])
def test_a_recordings_length_reads_as_a_player_says_it(seconds: float, said: str) -> None:
    assert length_text(seconds) == said


def test_replay_seek_and_timeline(client: TestClient) -> None:
    info = client.get("/api/replay/table1").json()
    assert info["frames"] == 24
    r = client.post("/api/replay/table1/control", json={"action": "seek", "frame": 15})
    assert r.status_code == 200
    with client.websocket_connect("/ws/replay/table1") as ws:
        for _ in range(20):
            msg = _frame_message(ws)
            if msg["frame_index"] == 15:
                break
        assert msg["frame_index"] == 15
        units = {u["tag"]: u for u in msg["units"]}  # type: ignore[attr-defined]
        assert math.dist((units[12]["x"], units[12]["y"]), END_12) < 0.05
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        tl = client.get("/api/replay/table1").json()["timeline"]
        if tl["complete"]:
            break
        time.sleep(0.3)
    assert tl["complete"] and tl["scanned"] == 24
    moves = [e for e in tl["events"] if e["type"] == "move" and e["tag"] == 12]
    assert moves and abs(moves[0]["length_in"] - math.dist(START_12, END_12)) < 0.1


def test_replay_ask_measures_on_the_shown_frame(client: TestClient) -> None:
    assert client.post("/api/replay/table1/control", json={"action": "seek", "frame": 3}).status_code == 200
    deadline = time.monotonic() + 20
    while client.get("/api/replay/table1").json().get("frame_index", -1) != 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    r = client.post("/api/replay/table1/ask", json={"unit": 13, "target": 21})
    assert r.status_code == 200, r.text
    a = r.json()
    expected = math.dist((6.0, 15.0), (22.0, 12.0)) - 32 / 25.4  # two 32 mm bases, edge to edge
    assert abs(a["range_in"] - expected) < 0.05
    assert a["los"] in ("blocked", "partial") and a["blockers"] == ["wall"]
    assert client.post("/api/replay/table1/ask", json={"unit": 13, "target": 99}).status_code == 400
    assert client.post("/api/replay/escape/ask", json={"unit": 13, "target": 21}).status_code in (400, 404)


def test_replay_bad_controls(client: TestClient) -> None:
    assert client.post("/api/replay/table1/control", json={"action": "seek", "frame": 999}).status_code == 400
    assert client.post("/api/replay/table1/control", json={"action": "dance"}).status_code == 422
    assert client.post("/api/replay/table1/control", json={"action": "speed", "speed": 100}).status_code == 422


def test_calibration_from_live_frame_reports_residual(client: TestClient) -> None:
    r = client.post("/api/calibration/table", data={"board": "30x22"})
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["ok"] and a["anchors_found"] == [0, 1, 2, 3] and a["anchors_missing"] == []
    assert a["residual_in"] < 0.02


def test_calibration_from_the_live_feed_takes_its_best_recent_frame(client: TestClient) -> None:
    """A hand over an anchor in the newest frame: the table is calibrated from an earlier frame of the last few,
    whose four anchors agree, and says which."""
    import dataclasses

    live = client.app.state.runtime.live  # type: ignore[attr-defined]
    assert live.wait_for_frame(20)
    live.pause()  # no newer frame pushes the covered one out
    try:
        time.sleep(0.3)
        good = live.latest_result
        assert good is not None
        covered = good.image.copy()
        covered[:, :200] = 128  # a hand over anchors 0 and 3
        live.recent_results.append(dataclasses.replace(good, frame=Frame(good.frame_index + 1000, good.t, covered),
                                                        frame_index=good.frame_index + 1000))
        a = client.post("/api/calibration/table", data={"board": "30x22"}).json()
    finally:
        live.play()
    assert a["ok"] and a["anchors_found"] == [0, 1, 2, 3] and a["residual_in"] < 0.02, a
    assert a["source"] != f"live frame {good.frame_index + 1000}" and a["frames_tried"] >= 2


def test_calibration_upload_missing_anchors_and_not_an_image(client: TestClient, sessions_root: Path) -> None:
    import cv2

    img = cv2.imread(str(sessions_root / "table1" / "frame_000000.jpg"))
    assert img is not None
    img[:, :200] = 128  # hide anchors 0 and 3
    ok, buf = cv2.imencode(".jpg", img)
    r = client.post("/api/calibration/table", data={"board": "30x22"}, files={"image": ("t.jpg", buf.tobytes(), "image/jpeg")})
    a = r.json()
    assert r.status_code == 200 and not a["ok"] and a["anchors_missing"] == [0, 3]
    assert "Anchors 0 and 3 were not found" in a["message"]
    r = client.post("/api/calibration/table", data={"board": "30x22"}, files={"image": ("t.jpg", b"hello", "image/jpeg")})
    assert r.status_code == 400 and "not a readable image" in r.json()["detail"]
    r = client.post("/api/calibration/table", data={"board": "thirty"})
    assert r.status_code == 400


def test_oversize_upload_is_413(sessions_root: Path, tmp_path: Path) -> None:
    settings = session_settings(sessions_root / "table1", sessions_root, tmp_path, max_upload_bytes=1000, max_uploads=2)
    with LocalClient(create_app(settings)) as c:
        r = c.post("/api/calibration/table", data={"board": "30x22"}, files={"image": ("big.jpg", b"x" * 5000, "image/jpeg")})
        assert r.status_code == 413 and "larger than" in r.json()["detail"]
        r = c.post("/api/calibration/table", data={"board": "30x22"}, files={"image": ("mid.jpg", b"x" * 1500, "image/jpeg")})
        assert r.status_code == 413 and "mid.jpg" in r.json()["detail"]
        r = c.put("/api/terrain", content=b" " * (2 * 1024 * 1024), headers={"content-type": "application/json"})
        assert r.status_code == 413


def test_token_required_off_loopback(sessions_root: Path, tmp_path: Path) -> None:
    settings = session_settings(sessions_root / "table1", sessions_root, tmp_path, host="0.0.0.0")
    app = create_app(settings)
    token = app.state.settings.token
    assert token and len(token) >= 20
    with LocalClient(app) as c:
        assert c.get("/api/live/status").status_code == 401
        assert c.get("/api/live/status", params={"token": "wrong"}).status_code == 401
        assert c.get("/static/app.css").status_code == 401
        assert c.get("/api/live/status", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        r = c.get("/", params={"token": token})
        assert r.status_code == 200 and "tablesight_token" in r.headers["set-cookie"]
        assert c.get("/api/live/status").status_code == 200  # the cookie now carries it
        from starlette.websockets import WebSocketDisconnect

        c.cookies.clear()
        with pytest.raises(WebSocketDisconnect), c.websocket_connect("/ws/live") as ws:
            ws.receive_text()
        with c.websocket_connect(f"/ws/live?token={token}") as ws:
            assert json.loads(ws.receive_text())["type"] in ("frame", "status")


def test_loopback_needs_no_token() -> None:
    assert not Settings(host="127.0.0.1").with_defaults().needs_token
    assert Settings(host="192.168.1.5").with_defaults().token is not None


def test_downloads(client: TestClient) -> None:
    r = client.get("/download/mat.pdf", params={"board": "30x22"})
    assert r.status_code == 200 and r.content[:4] == b"%PDF"
    r = client.get("/download/tags.pdf", params={"ids": "10-13", "size": 0.6})
    assert r.status_code == 200 and r.content[:4] == b"%PDF"
    assert client.get("/download/tags.pdf", params={"ids": "zz"}).status_code == 400
    r = client.get("/download/terrain.json")
    assert r.status_code == 200 and r.json()["pieces"][0]["name"] == "wall"


def test_valyr_army_appraisal_is_reported_by_the_game(client: TestClient) -> None:
    raw = json.loads((Path(__file__).resolve().parent.parent / "examples" / "rosters" / "valyr.json").read_text())
    r = client.post("/api/roster/check", json=raw)
    assert r.status_code == 200, r.text
    army = r.json()["army"]
    assert army["game"] == "valyr"
    rules = {v["rule"] for v in army["verdicts"]}
    assert "valyr.army.appraisal" in rules
    raw["appraisal_limit"] = 1
    r = client.post("/api/roster/check", json=raw)
    assert r.status_code == 200 and r.json()["army"]["legal"] is False


def test_upload_claiming_too_many_pixels_is_400(client: TestClient) -> None:
    from tests.test_bad_inputs_cli import _png_header_only

    huge = _png_header_only(100_000, 100_000)
    r = client.post("/api/calibration/table", data={"board": "30x22"}, files={"image": ("huge.png", huge, "image/png")})
    assert r.status_code == 400 and "huge.png" in r.json()["detail"] and "too large" in r.json()["detail"], r.text


@pytest.mark.parametrize(
    ("tag_in", "says"),
    [
        ('"0.65"', "tag_in must be a number; got '0.65'"),
        ("-1", "tag_in is -1, outside 0.1 to 12"),
        ("0", "tag_in is 0, outside 0.1 to 12"),
        ("NaN", "units[0].tag_in is NaN, which is not a number"),  # refused by the JSON reader, naming the field
        ("Infinity", "units[0].tag_in is Infinity"),
        ("1e400", "units[0].tag_in is 1e400, too large"),
        ("1e30", "tag_in is 1e+30"),
        ("true", "tag_in must be a number; got True"),
        ("[0.65]", "tag_in must be a number"),
    ],
)
def test_roster_bad_tag_in_is_400_and_the_saved_roster_is_kept(client: TestClient, tag_in: str, says: str) -> None:
    before = client.get("/api/roster").json()
    unit = '{"tag": 12, "profile": "warrior", "owner": "red", "tag_in": ' + tag_in + "}"
    body = ('{"game": "valknut", "units": [' + unit + "]}").encode()  # NaN and 1e400 as a careless tool writes them
    for method, path in (("POST", "/api/roster/check"), ("PUT", "/api/roster")):
        r = client.request(method, path, content=body, headers={"content-type": "application/json"})
        detail = r.json()["detail"]
        named = "tag 12" in detail or "units[0]" in detail
        assert r.status_code == 400 and named and says in detail and detail.endswith("."), (method, r.text)
    assert client.get("/api/roster").json() == before


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"", 422, "no JSON body"),
        (b"{}", 422, "unit: field required"),
        (b'{"unit": 13}', 422, "target: field required"),
        (b'{"unit": "x", "target": 21}', 422, "unit:"),
        (b'{"unit": 13.5, "target": 21}', 422, "unit:"),
        (b'{"unit": true, "target": 21}', 422, "unit: a tag id is a whole number, not true or false"),
        (b'{"unit": 13, "target": false}', 422, "target: a tag id is a whole number, not true or false"),
        (b'{"unit": NaN, "target": 21}', 422, "unit:"),
        (b'{"unit": 13, "target": 21', 422, "not valid JSON"),
        (b"[13, 21]", 422, "the request:"),
        (b'{"unit": 13, "target": 21, "range": 4}', 422, "range:"),
        (b'{"unit": 13, "target": 13}', 400, "asked about itself"),
        (b'{"unit": 13, "target": 99}', 400, "Unit 99 is not on the table"),
        (b'{"unit": -1, "target": 21}', 400, "Unit -1 is not on the table"),
    ],
)
def test_replay_ask_bad_questions_are_one_sentence(client: TestClient, body: bytes, status: int, says: str) -> None:
    deadline = time.monotonic() + 20
    while client.post("/api/replay/table1/ask", json={"unit": 13, "target": 21}).status_code != 200:
        assert time.monotonic() < deadline, "the replay never showed its first frame"
        time.sleep(0.1)
    r = client.post("/api/replay/table1/ask", content=body, headers={"content-type": "application/json"})
    detail = r.json()["detail"]
    assert r.status_code == status and says in detail and detail.endswith("."), r.text
    assert detail.count(".") >= 1 and "Traceback" not in detail and "jSON" not in detail


@pytest.mark.parametrize(
    ("name", "status"),
    [("nope", 404), ("escape", 400), ("%2E%2E", 400), (".hidden", 400), ("table1%00", 400), ("%20", 400),
     ("..%2F..%2Fetc", 404), ("x" * 300, 400)],
)
def test_replay_ask_of_no_such_session(client: TestClient, name: str, status: int) -> None:
    r = client.post(f"/api/replay/{name}/ask", json={"unit": 13, "target": 21})
    assert r.status_code == status, (name, r.text)
    assert "secret" not in r.text and "manifest" not in r.text


def test_foreign_host_and_origin_are_refused(client: TestClient) -> None:
    """DNS rebinding (a foreign Host) and another site's Origin get nothing, GET or WebSocket alike."""
    from starlette.websockets import WebSocketDisconnect

    r = client.get("/api/live/status", headers={"Host": "evil.example:8000"})
    assert r.status_code == 400 and "does not answer to the name 'evil.example:8000'" in r.json()["detail"]
    assert client.get("/api/live/frame.jpg", headers={"Host": "evil.example"}).status_code == 400
    assert client.get("/api/live/status", headers={"Host": "localhost:8000"}).status_code == 200
    with pytest.raises(WebSocketDisconnect) as closed, \
            client.websocket_connect("/ws/live", headers={"Host": "evil.example"}) as ws:
        ws.receive_text()
    assert closed.value.code == 1008
    with pytest.raises(WebSocketDisconnect), \
            client.websocket_connect("/ws/live", headers={"Origin": "http://evil.example"}) as ws:
        ws.receive_text()
    with client.websocket_connect("/ws/live", headers={"Origin": "http://127.0.0.1:8000"}) as ws:
        assert json.loads(ws.receive_text())["type"] in ("frame", "status")
    r = client.post("/api/live/select", json={"unit": 12}, headers={"Origin": "http://127.0.0.1:9999"})
    assert r.status_code == 403 and "may not use this Tablesight server" in r.json()["detail"]
    r = client.post("/api/live/select", json={"unit": 12}, headers={"Origin": "null"})
    assert r.status_code == 403


def test_a_change_without_the_same_origin_header_is_refused(client: TestClient) -> None:
    for method, path in (("POST", "/api/live/select"), ("PUT", "/api/terrain"), ("PUT", "/api/roster"),
                         ("POST", "/api/live/declare"), ("POST", "/api/replay/table1/control")):
        r = client.request(method, path, json={}, headers={"X-Tablesight": "0"})
        assert r.status_code == 403 and "X-Tablesight: 1" in r.json()["detail"], path
    assert client.post("/api/live/select", json={"unit": None}).status_code == 200


def test_token_mode_checks_origin_too(sessions_root: Path, tmp_path: Path) -> None:
    settings = session_settings(sessions_root / "table1", sessions_root, tmp_path, host="0.0.0.0")
    app = create_app(settings)
    auth = {"Authorization": f"Bearer {app.state.settings.token}"}
    with LocalClient(app) as c:
        assert c.post("/api/live/select", json={"unit": None}, headers=auth).status_code == 200
        r = c.post("/api/live/select", json={"unit": None}, headers={**auth, "Origin": "http://evil.example"})
        assert r.status_code == 403
        assert c.get("/api/live/status", headers={**auth, "Host": "192.168.1.7:8000"}).status_code == 200
        assert c.get("/api/live/status", headers={**auth, "Host": "evil.example"}).status_code == 400


def test_allowed_hosts() -> None:
    from webui.security import allowed_hosts

    names, any_ip = allowed_hosts("127.0.0.1", ("table.local",))
    assert {"localhost", "127.0.0.1", "::1", "table.local"} <= names and not any_ip
    names, any_ip = allowed_hosts("0.0.0.0")
    assert any_ip and socket.gethostname().lower() in names


@pytest.mark.parametrize("body", [
    "[" * 100_000 + "]" * 100_000,
    '{"game": "valknut", "units": [{"tag": 1' + "0" * 5000 + "}]}",
    '{"pieces": [{"height_in": NaN}], "action": {"kind": "roll_off", "unit": 1e999}}',
    '{"a": "\\ud800"}\xff',
])
def test_json_bodies_that_are_not_usable_are_400_in_one_sentence(client: TestClient, body: str) -> None:
    for method, path in (("POST", "/api/live/declare"), ("PUT", "/api/roster"), ("POST", "/api/roster/check"),
                         ("PUT", "/api/terrain"), ("POST", "/api/live/select"), ("POST", "/api/live/ask"),
                         ("POST", "/api/replay/table1/control"), ("POST", "/api/replay/table1/select")):
        r = client.request(method, path, content=body.encode("utf-8", "surrogatepass"),
                           headers={"Content-Type": "application/json"})
        assert 400 <= r.status_code < 500, (path, r.status_code, r.text[:200])
        detail = r.json()["detail"]
        assert isinstance(detail, str) and detail.count(".") >= 1 and "\n" not in detail, (path, detail)


def _picture_width(ws: object, expected: int, frames: int = 150) -> int:
    """The width (px) the pictures settle at: `expected` once 3 come in a row that wide (frames sent before a
    page's word may still be on their way), else the last one's."""
    run, width = 0, -1
    for _ in range(frames):
        _msg, jpeg = _pictured_frame(ws)
        picture = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_UNCHANGED)
        assert picture is not None
        width = int(picture.shape[1])
        run = run + 1 if width == expected else 0
        if run == 3:
            break
    return width


def test_pictures_are_sent_no_wider_than_the_widest_page_shows_them(client: TestClient) -> None:
    with client.websocket_connect("/ws/live") as a:
        full = int(_frame_message(a)["image_size"][0])  # type: ignore[index]
        height = int(_frame_message(a)["image_size"][1])  # type: ignore[index]
        widest = stream_size((full, height), None)[0]
        small = stream_picture(np.zeros((height, full, 3), np.uint8), 384).shape[1]
        assert 384 <= small <= 1.5 * 384 and small < widest
        assert _picture_width(a, widest) == widest  # nothing said: the widest
        a.send_text(json.dumps({"type": "view", "width": 384}))
        assert _picture_width(a, small) == small
        a.send_text("not json, and then a view without a width")
        a.send_text(json.dumps({"type": "view"}))
        assert _picture_width(a, small) == small  # what makes no sense changes nothing
        with client.websocket_connect("/ws/live") as b:  # a second page that has not said: the widest again
            assert _picture_width(b, widest) == widest
            b.send_text(json.dumps({"type": "view", "width": 100}))  # narrower than any picture is sent
            assert _picture_width(b, small) == small
        assert _picture_width(a, small) == small


def test_the_stream_picture_is_as_wide_as_the_widest_page_shows_it() -> None:
    def width(w: int, h: int, shown: int | None) -> int:
        picture = stream_picture(np.zeros((h, w, 3), np.uint8), shown)
        assert abs(picture.shape[0] - h * picture.shape[1] / w) <= 0.5  # the frame's shape, whole
        return int(picture.shape[1])

    # nobody said: halved until no wider than 1280 px (a JPEG frame decodes at those scales for a third the cost)
    assert width(1920, 1080, None) == 960 and width(3840, 2160, None) == 960 and width(1280, 720, None) == 1280
    assert width(2560, 1440, None) == 1280 and width(1600, 900, None) == 800 and width(15360, 8640, None) == 1280
    assert width(1920, 1080, 896) == 896 and width(3840, 2160, 704) == 704 and width(1917, 1080, 640) == 640
    assert width(1920, 1080, 1200) == 1200 and width(640, 480, 896) == 640 and width(1920, 1080, 10) == 320
    # a picture halved by area averaging, then scaled the rest of the way, looks like one scaled by area at once
    y, x = np.mgrid[0:1080, 0:1920]
    frame = np.dstack([(x // 7) % 256, (y // 5) % 256, ((x + y) // 9) % 256]).astype(np.uint8)
    area = cv2.resize(frame, (704, 396), interpolation=cv2.INTER_AREA).astype(int)
    assert np.abs(stream_picture(frame, 704).astype(int) - area).mean() < 2.0  # grey levels
