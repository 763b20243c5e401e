"""The dice API of the live table (webui/routes/dice.py, docs: the dice API) on the real server, recording: a Valknut
attack declared with no dice waits for them; typed faces rule it; faces that do not fit are 400 in one sentence;
a correction overrules it; cancel drops a roll; "roll for us" rolls and says so; the dice tray is kept; and the
recording, replayed (which never rolls), gives the same verdicts, rolls and state.

The video is the bundled sample's first 26 frames (every unit deployed by frame 20), served as a camera would be
(source "video", recorded into the sessions folder); the roster file carries the sample's setup keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import cv2
import pytest
from fastapi.testclient import TestClient

from session.paths import SAMPLE_SESSION_DIR
from session.replay import ReplayRun, load_setup, open_source
from session.settings import Settings
from session.store import SessionStore
from tests.webui_server import LocalClient
from vision.session_dir import open_session
from webui.server import create_app

FRAMES = 26
PATHS = {10: "bear", 11: "bear", 12: "bear", 13: "bear", 14: "bear",
         15: "raven", 16: "raven", 17: "raven", 18: "raven", 19: "raven"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The server at the end of the video (paused on its last frame), every unit's Path chosen: turn 1's
    activations, red to act."""
    root = tmp_path_factory.mktemp("dice")
    setup = json.loads((SAMPLE_SESSION_DIR / "setup.json").read_text())
    roster = {**setup["roster"], **{k: setup[k] for k in ("stockpiles", "first_player", "drop_zones")}}
    (root / "roster.json").write_text(json.dumps(roster))
    session = open_session(SAMPLE_SESSION_DIR)
    images = [cv2.imread(str(SAMPLE_SESSION_DIR / e.file)) for e in session.entries[:FRAMES]]
    assert all(image is not None for image in images)
    h, w = images[0].shape[:2]  # type: ignore[union-attr]
    writer = cv2.VideoWriter(str(root / "table.avi"), cv2.VideoWriter.fourcc(*"MJPG"), 10.0, (w, h))
    for image in images:
        writer.write(image)  # type: ignore[arg-type]
    writer.release()
    settings = Settings(source_kind="video", source=str(root / "table.avi"), sessions_dir=root / "sessions",
                        setup_dir=root / "setup", calibration_file=SAMPLE_SESSION_DIR / "calibration.json",
                        roster_file=root / "roster.json", terrain_file=SAMPLE_SESSION_DIR / "terrain.json",
                        game="valknut")
    with LocalClient(create_app(settings)) as c:
        loop = c.app.state.runtime.live  # type: ignore[attr-defined]
        _wait(lambda: loop.status().status == "ended", 60)
        for unit, path in PATHS.items():
            assert _declare(c, {"kind": "choose_path", "unit": unit, "params": {"path": path}})["outcome"] == "legal"
        yield c


def _wait(pred: Any, timeout: float) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _declare(c: TestClient, action: dict[str, Any]) -> dict[str, Any]:
    r = c.post("/api/live/declare", json={"action": action})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _attack(c: TestClient) -> dict[str, Any]:
    """The first attack the page offers now."""
    groups = {g["kind"]: g for g in c.get("/api/live/actions").json()["groups"]}
    return groups["attack"]["actions"][0]["action"]  # type: ignore[no-any-return]


def _hp(c: TestClient, tag: int) -> int:
    return int(c.app.state.runtime.live.pipeline.state.unit(tag).hp)  # type: ignore[attr-defined]


def _sentence(r: Any, status: int, words: str) -> str:
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    assert words in detail and detail.endswith(".") and "\n" not in detail, detail
    return str(detail)


class Attack:
    """The attack of the first tests, kept between them (they run in order on one game)."""

    action: dict[str, Any] = {}
    hp: int = 0
    to_hit: int = 0


def test_an_attack_declared_with_no_dice_waits_for_them(served: TestClient) -> None:
    action = _attack(served)
    target = action["params"]["target"]
    Attack.action, Attack.hp = action, _hp(served, target)
    out = _declare(served, action)
    assert out["outcome"] == "waiting" and [v["rule"] for v in out["verdicts"]] == ["dice.pending"]
    assert out["verdicts"][0]["message"].startswith("Waiting for the dice: roll 1 d6 for ")
    dice = served.get("/api/live/dice").json()
    assert dice["roll_for_us"] is False and dice["last"] is None and dice["read"] is None
    pending = dice["pending"]
    assert pending["action"] == action and pending["since_frame"] == FRAMES - 1
    assert pending["words"].lower().startswith("red 1 attacks ")
    request = pending["request"]
    assert (request["sides"], request["count"], request["clause"], request["given"]) == (6, 1, "valknut.attack.roll", [])
    Attack.to_hit = int(re.match(r"(\d)\+ hits", request["reads"]).group(1))  # type: ignore[union-attr]
    assert 2 <= Attack.to_hit <= 6
    assert _hp(served, target) == Attack.hp  # nothing ruled yet
    # the frame shown again carries the panel's object, so the page needs no polling
    latest = served.app.state.runtime.live.broadcast.latest_frame  # type: ignore[attr-defined]
    assert json.loads(latest.text)["dice"]["pending"]["id"] == pending["id"]


@pytest.mark.parametrize(("body", "words"), [
    ({"faces": [4, 5]}, "takes 1 d6; 2 were given."),
    ({"faces": [9]}, "A d6 shows 1 to 6"),
    ({"faces": "six"}, "'faces' must be the faces, a list of whole numbers"),
    ({"faces": [True]}, "'faces' must be"),
    ({"faces": []}, "'faces' must be"),
    ({"faces": [4], "source": "dream"}, "'source' must be"),
    ({"face": [4]}, "The roll needs 'faces'"),
    ({"faces": [4], "by": "me"}, "field 'by' it does not take"),
    ([4], "must be a JSON object"),
])
def test_faces_that_do_not_fit_are_400_in_one_sentence(served: TestClient, body: Any, words: str) -> None:
    _sentence(served.post("/api/live/dice/roll", json=body), 400, words)
    assert served.get("/api/live/dice").json()["pending"]["action"] == Attack.action  # still waiting


def test_typed_faces_rule_the_attack_with_them(served: TestClient) -> None:
    target = Attack.action["params"]["target"]
    r = served.post("/api/live/dice/roll", json={"faces": [6], "source": "typed"})
    assert r.status_code == 200, r.text
    out = r.json()
    roll = next(v for v in out["verdicts"] if v["rule"] == "valknut.attack.roll")
    assert roll["numbers"]["roll"] == 6 and roll["numbers"]["hit"] is True and "rolled 6: hit" in roll["message"]
    damage = next(v for v in out["verdicts"] if v["rule"] == "valknut.attack.damage")
    assert _hp(served, target) == damage["numbers"]["hp"] == Attack.hp - damage["numbers"]["hp_lost"] < Attack.hp
    assert out["pending"] is None
    last = out["last"]
    assert last["source"] == "typed" and last["frame"] == FRAMES - 1
    assert [(x["clause"], x["faces"], x["by"]) for x in last["rolls"]] == [("valknut.attack.roll", [6], "players")]
    _sentence(served.post("/api/live/dice/roll", json={"faces": [3]}), 409,
              "No roll is pending: declare an action that needs dice first.")


def test_a_correction_overrules_the_faces_and_the_game_is_as_if_they_were_rolled(served: TestClient) -> None:
    target = Attack.action["params"]["target"]
    miss = max(1, Attack.to_hit - 1)
    r = served.post("/api/live/dice/correct", json={"faces": [miss]})
    assert r.status_code == 200, r.text
    out = r.json()["verdicts"]
    assert out[0]["rule"] == "dice.correct" and out[0]["numbers"]["faces_before"] == [6]
    assert "Overruled" in out[0]["message"]
    roll = next(v for v in out if v["rule"] == "valknut.attack.roll")
    assert roll["numbers"]["roll"] == miss and roll["numbers"]["hit"] is False
    assert _hp(served, target) == Attack.hp  # the damage of the 6 is gone
    _sentence(served.post("/api/live/dice/correct", json={"faces": [1, 2, 3]}), 400, "given")
    # the game moves on: the attacker's activation ends, and the attack cannot be corrected any more
    assert _declare(served, {"kind": "end_activation", "unit": Attack.action["unit"]})["outcome"] == "legal"
    _sentence(served.post("/api/live/dice/correct", json={"faces": [6]}), 409, "The game has moved on since")


def test_cancel_drops_the_pending_roll(served: TestClient) -> None:
    action = _attack(served)
    hp = _hp(served, action["params"]["target"])
    assert _declare(served, action)["outcome"] == "waiting"
    r = served.post("/api/live/dice/cancel")
    assert r.status_code == 200 and r.json()["pending"] is None
    state = served.get("/api/live/dice").json()
    assert state["pending"] is None and _hp(served, action["params"]["target"]) == hp
    again = served.post("/api/live/dice/cancel").json()
    assert again.pop("seq") > state["seq"] and again == {"pending": None, "verdicts": []}


def test_roll_for_us_is_saved_with_the_game_and_rolls(served: TestClient) -> None:
    _sentence(served.put("/api/live/dice/roll-for-us", json={"on": "yes"}), 400, "'on' must be true or false")
    r = served.put("/api/live/dice/roll-for-us", json={"on": True})
    assert r.status_code == 200 and r.json() == {"roll_for_us": True}
    setup_dir = served.app.state.runtime.setup_dir  # type: ignore[attr-defined]
    assert json.loads((setup_dir / "roster.json").read_text())["roll_for_us"] is True
    assert served.get("/api/live/dice").json()["roll_for_us"] is True
    out = _declare(served, _attack(served))
    assert out["outcome"] != "waiting" and served.get("/api/live/dice").json()["pending"] is None
    rolled = next(v for v in out["verdicts"] if v["rule"] == "dice.rolled")
    assert rolled["message"].startswith("Tablesight rolled the dice (roll for us is on): 1 d6 for ")
    assert served.get("/api/live/dice").json()["last"]["source"] == "rolled"
    assert served.put("/api/live/dice/roll-for-us", json={"on": False}).json() == {"roll_for_us": False}


def test_the_dice_tray_is_kept_beside_the_calibration(served: TestClient) -> None:
    setup_dir: Path = served.app.state.runtime.setup_dir  # type: ignore[attr-defined]
    polygon = [[900, 500], [1250, 500], [1250, 700], [900, 700]]
    r = served.put("/api/live/dice/tray", json={"polygon_px": polygon})
    assert r.status_code == 200, r.text
    assert r.json()["tray"] == {"polygon_px": polygon, "image_size": [1280, 720]}
    assert json.loads((setup_dir / "dice_tray.json").read_text())["polygon_px"] == polygon
    assert served.get("/api/live/dice").json()["tray"]["polygon_px"] == polygon
    _sentence(served.put("/api/live/dice/tray", json={"polygon_px": [[1, 1], [2, 2]]}), 400, "at least 3 corners")
    _sentence(served.put("/api/live/dice/tray", json={"polygon_px": [[0, 0], [2000, 0], [0, 10]]}), 400,
              "off the 1280x720 picture")
    _sentence(served.put("/api/live/dice/tray", json={"polygon_px": [[0, 0], [99, 99], [99, 0], [0, 99]]}), 400,
              "crosses itself")
    assert served.put("/api/live/dice/tray", json={"polygon_px": None}).json() == {"tray": None}
    assert served.get("/api/live/dice").json()["tray"] is None


def test_a_dice_photo_that_is_not_an_image_is_400(served: TestClient) -> None:
    r = served.post("/api/live/dice/photo?sides=6", content=b"not a jpeg", headers={"content-type": "image/jpeg"})
    _sentence(r, 400, "not an image")
    _sentence(served.post("/api/live/dice/photo?sides=8", content=b"x"), 400, "?sides=6 or ?sides=20")


def test_the_recording_replays_to_the_same_rolls_verdicts_and_state(served: TestClient) -> None:
    runtime = served.app.state.runtime  # type: ignore[attr-defined]
    folder = runtime.sessions_dir / str(runtime.live.status().recording)
    lines = [json.loads(x) for x in (folder / "declarations.jsonl").read_text().splitlines()]
    answers = [x for x in lines if "dice" in x]
    assert [x["dice"]["source"] for x in answers] == ["typed", "rolled"]
    assert answers[0]["action"]["params"]["rolls"] == [6]
    assert any(x["action"]["kind"] == "dice_correct" for x in lines) and any(
        x["action"]["kind"] == "dice_cancel" for x in lines)
    source = open_source(folder)
    with source:
        run = ReplayRun(source, load_setup(source), workers=0)
        replayed = list(run.events())
        state = run.pipeline.state
    live_state = runtime.live.pipeline.state
    game = runtime.live.pipeline.game
    assert game.dump_state(state) == game.dump_state(live_state)  # HP, activations, rolls: the same game
    with SessionStore(folder / "session.sqlite") as store:
        stored_rolls = [e.data for e in store.rolls()]
        stored = [v.data for v in store.verdicts() if v.data.get("event") == "declared"]
    again = [e for e in replayed if e["type"] in ("roll", "roll_correction")]
    assert again == stored_rolls
    sources = [e["source"] for e in again if e["type"] == "roll"]
    assert sources[:2] == ["typed", "correction"] and len(sources) > 2 and set(sources[2:]) == {"rolled"}
    assert [e["type"] for e in again].count("roll_correction") == 1
    declared = [e for e in replayed if e["type"] == "verdict" and e.get("event") == "declared"]

    def key(v: Mapping[str, Any]) -> tuple[Any, ...]:
        return v["frame"], v["rule"], v["outcome"], v["message"], json.dumps(v["numbers"], sort_keys=True)

    assert [key(v) for v in declared] == [key(v) for v in stored]
