"""Bad input to the dice (webui/routes/dice.py, session/dice_watch.py) and the undo beside them: each is one sentence
(400, or 409 when there is nothing to answer), never a 500, and nothing changes the game.

One real server for the module: the bundled sample's first 26 frames served as a camera video (every unit deployed),
Valknut ruled with the players' own dice (roll for us off), every unit's Path chosen: red's turn-1 activations.
The camera's side is a DiceWatch fed read after read by a scripted reader (as tests/test_session_dice.py does).
"""

from __future__ import annotations

import json
import struct
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from session.dice_watch import MOST_CORNERS, NEEDED_FRAMES, DiceWatch, Tray, TrayError
from session.paths import SAMPLE_SESSION_DIR
from session.settings import Settings
from tests.webui_server import LocalClient
from vision.dice import LOW_CONFIDENCE
from vision.dice.die import Die
from vision.session_dir import open_session
from webui.routes.dice import MOST_DICE
from webui.server import create_app

FRAMES = 26
PATHS = {10: "bear", 11: "bear", 12: "bear", 13: "bear", 14: "bear",
         15: "raven", 16: "raven", 17: "raven", 18: "raven", 19: "raven"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("dice_bad")
    setup = json.loads((SAMPLE_SESSION_DIR / "setup.json").read_text())
    roster = {**setup["roster"], **{k: setup[k] for k in ("stockpiles", "first_player", "drop_zones")}}
    (root / "roster.json").write_text(json.dumps(roster))
    session = open_session(SAMPLE_SESSION_DIR)
    images = [cv2.imread(str(SAMPLE_SESSION_DIR / e.file)) for e in session.entries[:FRAMES]]
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
        deadline = time.monotonic() + 60
        while loop.status().status != "ended":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for unit, path in PATHS.items():
            assert _declare(c, {"kind": "choose_path", "unit": unit, "params": {"path": path}})["outcome"] == "legal"
        yield c


def _declare(c: TestClient, action: dict[str, Any]) -> dict[str, Any]:
    r = c.post("/api/live/declare", json={"action": action})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _sentence(r: Any, status: int, words: str) -> str:
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    assert words in detail and detail.endswith(".") and "\n" not in detail and len(detail) < 300, detail
    return str(detail)


def _attack(c: TestClient) -> dict[str, Any]:
    groups = {g["kind"]: g for g in c.get("/api/live/actions").json()["groups"]}
    return next(a["action"] for a in groups["attack"]["actions"] if a["legal"])  # type: ignore[no-any-return]


def _hp(c: TestClient, tag: int) -> int:
    return int(c.app.state.runtime.live.pipeline.state.unit(tag).hp)  # type: ignore[attr-defined]


def _pending(c: TestClient) -> Any:
    return c.get("/api/live/dice").json()["pending"]


# ------------------------------------------------------------------------------------------ nothing to answer


def test_nothing_to_correct_or_answer_is_409_and_cancel_is_a_no_op(served: TestClient) -> None:
    _sentence(served.post("/api/live/dice/correct", json={"faces": [3]}), 409,
              "Nothing to correct: no action has been ruled with dice yet.")
    _sentence(served.post("/api/live/dice/roll", json={"faces": [3]}), 409, "No roll is pending")
    before = served.get("/api/live/dice").json()["seq"]
    cancelled = served.post("/api/live/dice/cancel").json()
    assert cancelled.pop("seq") > before and cancelled == {"pending": None, "verdicts": []}  # a newer state, unchanged


def test_undo_of_an_undo_is_one_sentence(served: TestClient) -> None:
    first = _declare(served, {"kind": "undo"})
    assert first["outcome"] == "legal" and first["verdicts"][0]["message"].startswith("Undone: ")
    again = _declare(served, {"kind": "undo"})
    assert again["outcome"] == "illegal"
    assert again["verdicts"][0]["message"] == ("There is no declaration to undo: nothing was declared since the game "
                                               "started, or the last declaration was already undone.")
    _declare(served, {"kind": "choose_path", "unit": 19, "params": {"path": "raven"}})  # the undone path, again


# ------------------------------------------------------------------------------------------ faces that do not fit

BIG = list(range(1, 7)) * 5000


@pytest.mark.parametrize(("body", "status", "words"), [
    (b'{"faces": [4, 6', 400, "is not valid JSON"),
    (b'{"faces": [NaN]}', 400, "NaN, which is not a number"),
    (b'{"faces": [1e400]}', 400, "too large to be a number"),
    (b'{"faces": [-1]}', 400, "got -1."),
    (b'{"faces": [0]}', 400, "got 0."),
    (b'{"faces": [2.5]}', 400, "got 2.5."),
    (b'{"faces": [4.0]}', 400, "got 4.0."),
    (b'{"faces": [99999999999999999999999]}', 400, "'faces' must be"),
    (b'{"faces": []}', 400, "'faces' must be the faces, a list of whole numbers"),
    (json.dumps({"faces": BIG}).encode(), 400, f"The roll gives {len(BIG)} faces; at most {MOST_DICE} dice"),
    (json.dumps({"faces": ["x" * 500]}).encode(), 400, "'faces' must be"),
])
def test_faces_that_do_not_fit_are_one_short_sentence(served: TestClient, body: bytes, status: int,
                                                      words: str) -> None:
    r = served.post("/api/live/dice/roll", content=body, headers={"content-type": "application/json"})
    _sentence(r, status, words)
    r = served.post("/api/live/dice/correct", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and len(r.json()["detail"]) < 300


def test_a_pending_roll_outlives_bad_answers_and_a_correction_is_refused_meanwhile(served: TestClient) -> None:
    action = _attack(served)
    target = action["params"]["target"]
    hp = _hp(served, target)
    assert _declare(served, action)["outcome"] == "waiting"
    assert served.post("/api/live/dice/roll", json={"faces": [1]}).json()["pending"] is None  # a miss
    assert _hp(served, target) == hp
    assert _declare(served, {"kind": "end_activation", "unit": action["unit"]})["outcome"] == "legal"
    action = _attack(served)  # the other side's
    target = action["params"]["target"]
    hp = _hp(served, target)
    assert _declare(served, action)["outcome"] == "waiting"
    _sentence(served.post("/api/live/dice/roll", json={"faces": [7]}), 400, "A d6 shows 1 to 6")
    _sentence(served.post("/api/live/dice/roll", json={"faces": [1, 2]}), 400, "takes 1 d6; 2 were given.")
    _sentence(served.post("/api/live/dice/roll", json={"faces": BIG[:MOST_DICE]}), 400, f"{MOST_DICE} were given.")
    _sentence(served.post("/api/live/dice/correct", json={"faces": [3]}), 409, "A roll is pending")
    # a page still showing the first roll (answered meanwhile on another phone) does not answer this one with its 6
    pending = _pending(served)
    _sentence(served.post("/api/live/dice/roll", json={"faces": [6], "roll": pending["id"] - 1}), 409,
              "That roll was answered or cancelled meanwhile; the table now waits for this one: roll 1 d6 for ")
    assert _pending(served)["action"] == action and _hp(served, target) == hp
    assert served.post("/api/live/dice/cancel").json()["pending"] is None
    assert _pending(served) is None and _hp(served, target) == hp
    last = served.get("/api/live/dice").json()["last"]
    _sentence(served.post("/api/live/dice/correct", json={"faces": [6], "last": last["id"] + 1}), 409,
              "Another action was ruled with dice since (")
    _sentence(served.post("/api/live/dice/roll", json={"faces": [6], "roll": 1.5}), 400, "'roll' must be the id")


# ------------------------------------------------------------------------------------------ photos and trays


def _png(w: int, h: int) -> bytes:
    """An all-black greyscale PNG of w x h pixels: a few hundred kB that unpack to w * h * 3 bytes in colour."""
    row = b"\x00" + bytes(w)
    pack = zlib.compressobj(9)
    data = b"".join(pack.compress(row) for _ in range(h)) + pack.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", data) + chunk(b"IEND", b""))


def test_a_photo_that_unpacks_to_gigapixels_is_refused_from_its_header(served: TestClient) -> None:
    bomb = _png(20000, 20000)  # 389 kB; before: 56 s of one core and 7.5 GB of memory, then 200
    assert len(bomb) < 500_000
    started = time.monotonic()
    r = served.post("/api/live/dice/photo", content=bomb, headers={"content-type": "image/png"})
    _sentence(r, 400, "The dice photo is too big to unpack; send one of at most 40 megapixels")
    assert time.monotonic() - started < 2.0
    r = served.post("/api/live/dice/photo", content=_png(8000, 6000), headers={"content-type": "image/png"})
    _sentence(r, 400, "The dice photo is 8000x6000 pixels; send one of at most 40 megapixels")


@pytest.mark.parametrize("body", [b"", b"not a jpeg", b"\xff\xd8\xff\xe0" + bytes(100), _png(8, 8)[:40]])
def test_a_photo_that_is_not_an_image_is_one_sentence(served: TestClient, body: bytes) -> None:
    r = served.post("/api/live/dice/photo?sides=20", content=body, headers={"content-type": "image/jpeg"})
    _sentence(r, 400, "not an image Tablesight can read")


def test_a_small_real_photo_is_read(served: TestClient) -> None:
    ok, jpeg = cv2.imencode(".jpg", np.full((120, 160, 3), 200, np.uint8))
    assert ok
    r = served.post("/api/live/dice/photo", content=jpeg.tobytes(), headers={"content-type": "image/jpeg"})
    assert r.status_code in (200, 503), r.text  # 503: this Tablesight has no dice reader
    if r.status_code == 200:
        assert r.json()["image_size"] == [160, 120]


@pytest.mark.parametrize(("polygon", "words"), [
    ([[0, 0], [100, 100], [100, 0], [0, 100]], "crosses itself"),
    ([[10, 10], [10, 10], [10, 10]], "crosses itself"),
    ([[-1, 0], [100, 0], [0, 100]], "off the 1280x720 picture"),
    ([[0, 0], [1281, 0], [0, 100]], "off the 1280x720 picture"),
    ([[0, 0], [True, 0], [0, 100]], "Corner 2 of the dice tray is not a point"),
    ([[0, 0], [1, 2, 3], [0, 100]], "Corner 2 of the dice tray is not a point"),
    ([[0, 0], "ab", [0, 100]], "Corner 2 of the dice tray is not a point"),
    ([[0, 0], [5, 0]], "at least 3 corners"),
    ([[600 + k % 2, k] for k in range(MOST_CORNERS + 1)], f"at most {MOST_CORNERS} corners"),
])
def test_a_tray_that_cannot_be_used_is_one_sentence_and_the_tray_is_kept(served: TestClient, polygon: Any,
                                                                          words: str) -> None:
    kept = served.get("/api/live/dice").json()["tray"]
    _sentence(served.put("/api/live/dice/tray", json={"polygon_px": polygon}), 400, words)
    assert served.get("/api/live/dice").json()["tray"] == kept


def test_a_tray_with_nan_corners_is_one_sentence(served: TestClient) -> None:
    r = served.put("/api/live/dice/tray", content=b'{"polygon_px": [[0, 0], [NaN, 0], [0, 100]]}',
                   headers={"content-type": "application/json"})
    _sentence(r, 400, "NaN, which is not a number")


# ------------------------------------------------------------------------------------------ the camera's reads


def _die(value: int, x: float, y: float) -> Die:
    return Die(value, 6, (x, y), (x - 15, y - 15, x + 15, y + 15), 0.99)


class Reads:
    """A dice reader that reports `now` each time it is asked."""

    def __init__(self) -> None:
        self.now: Sequence[Die] = ()

    def __call__(self, image: np.ndarray, sides: int, region: Sequence[tuple[float, float]]) -> list[Die]:
        return list(self.now)


IMAGE = np.zeros((720, 1280, 3), np.uint8)


def _watch() -> tuple[DiceWatch, Reads]:
    reads = Reads()
    watch = DiceWatch(read=reads)
    watch.set_tray(Tray(((100.0, 400.0), (500.0, 400.0), (500.0, 700.0), (100.0, 700.0)), (1280, 720)))
    return watch, reads


def _frames(watch: DiceWatch, roll: int, n: int, start: int = 0) -> list[list[int] | None]:
    return [watch.look(IMAGE, start + k, roll=roll, sides=6, count=2) for k in range(n)]


def test_the_last_rolls_dice_left_in_the_tray_do_not_fill_the_next_roll() -> None:
    watch, reads = _watch()
    reads.now = [_die(3, 50, 50), _die(3, 150, 50)]  # a tie, say: the rules ask for the roll again (roll 2)
    assert _frames(watch, 1, NEEDED_FRAMES)[-1] == [3, 3]
    assert _frames(watch, 2, 3 * NEEDED_FRAMES, start=10) == [None] * (3 * NEEDED_FRAMES)  # before: [3, 3] again
    assert (watch.read_json() or {})["left_over"] is True
    reads.now = [_die(5, 80, 120), _die(2, 200, 60)]  # rolled again
    assert _frames(watch, 2, NEEDED_FRAMES, start=40)[-1] == [5, 2]
    # no roll pending for a while, the dice left lying: the next action's roll is not filled with them either
    watch.idle()
    assert _frames(watch, 3, 2 * NEEDED_FRAMES, start=60) == [None] * (2 * NEEDED_FRAMES)


def test_a_roll_whose_id_was_filled_before_a_new_game_is_read_afresh() -> None:
    watch, reads = _watch()
    reads.now = [_die(1, 50, 50), _die(6, 150, 50)]
    assert _frames(watch, 1, NEEDED_FRAMES)[-1] == [1, 6]
    watch.idle()  # the game starts afresh: its first roll has id 1 again
    reads.now = [_die(4, 60, 200), _die(2, 250, 90)]
    assert _frames(watch, 1, NEEDED_FRAMES, start=30)[-1] == [4, 2]  # before: never filled


def test_a_face_no_die_of_the_roll_shows_is_never_given_to_the_rules() -> None:
    watch, reads = _watch()
    reads.now = [_die(7, 50, 50), _die(4, 150, 50)]  # a reader's fault: before, the rules' RollError stopped the loop
    assert _frames(watch, 1, 2 * NEEDED_FRAMES) == [None] * (2 * NEEDED_FRAMES)
    assert watch.seen(1) == [7, 4]  # still shown on the page, to be tapped right


def test_a_tray_with_too_many_corners_is_refused_in_the_tray_itself() -> None:
    with pytest.raises(TrayError, match=f"at most {MOST_CORNERS} corners; {MOST_CORNERS + 1} were given"):
        Tray.of([[600 + k % 2, k] for k in range(MOST_CORNERS + 1)], (1280, 720))


# ------------------------------------------------------------------------------------------ found, not yet fixed
# (three bugs the review reported in session/pipeline.py, each shown by a test that failed before its fix)


def test_undo_while_a_roll_is_pending_takes_back_the_pending_action_only() -> None:
    from rules.engine import Action
    from tests.test_session_dice import ATTACK, _pipeline

    pipe = _pipeline()
    pipe.declare(Action("end_activation", 18))  # refused (blue's unit on red's activation): the last ruling
    assert pipe.declare(ATTACK)[0]["outcome"] == "waiting"
    out = pipe.declare(Action("undo"))
    assert pipe.pending is None
    # the attack that waited is what is undone, not the refused end of Blue's activation before it
    assert "activation" not in out[0]["message"] and "attack" in out[0]["message"].lower()


def test_a_camera_move_tablesight_rolled_for_can_be_corrected() -> None:
    from tests.test_session_dice import _battle

    pipe, _, _ = _battle(roll_for_us=True)
    assert pipe.correction_refused() == ""


def test_a_camera_move_answered_with_typed_dice_is_not_undone_by_undo() -> None:
    from rules.engine import Action
    from session.pending_roll import DiceAnswer
    from tests.test_session_dice import _battle

    pipe, _, _ = _battle(roll_for_us=False)
    assert pipe.pending is not None
    pipe.declare(DiceAnswer.of(pipe.pending.action, [4, 1, 1, 3], "typed"))
    assert pipe.declare(Action("undo"))[0]["outcome"] == "illegal"  # the figure itself is moved back


def test_a_phones_full_photo_over_a_megabyte_is_read_not_refused(served: TestClient) -> None:
    """A phone's dice camera posts its photo as a JPEG body: 1-5 MB at full quality, over the 1 MB allowed a JSON
    body. A labelled tray photo, enlarged to 1920 px with the sensor's grain (dice ~110 px, three times the 640 px
    photo's), is read: at least 20 of its 22 dice with the faces the photographer labelled (held out, such photos
    read 97.7 % right: MODEL_CARD.md), and no die read at 0.8 confidence or more is a wrong face or no die."""
    name = "IMG_20191208_111228.jpg"
    photo = cv2.imread(f"tests/data/dice_tray_d6/photos/{name}")
    labels = json.loads(Path("tests/data/dice_tray_d6/labels.json").read_text())[name]
    faces = [("one", "two", "three", "four", "five", "six").index(d["label"]) + 1 for d in labels]
    assert photo is not None
    big = cv2.resize(photo, (1920, 1920 * photo.shape[0] // photo.shape[1]), interpolation=cv2.INTER_CUBIC)
    grain = np.random.default_rng(3).normal(0, 4, big.shape)
    ok, jpeg = cv2.imencode(".jpg", np.clip(big + grain, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 97])
    assert ok and len(jpeg) > 1_100_000, len(jpeg)
    r = served.post("/api/live/dice/photo", content=jpeg.tobytes(), headers={"content-type": "image/jpeg"})
    assert r.status_code == 200, r.text
    assert r.json()["image_size"] == [big.shape[1], big.shape[0]]
    scale = big.shape[1] / photo.shape[1]
    boxes = [np.array(d["box"], float) * scale for d in labels]

    def on(die: dict[str, Any], box: np.ndarray, face: int) -> bool:
        x, y = die["centre_px"]
        return bool(box[0] <= x <= box[2] and box[1] <= y <= box[3]) and die["value"] == face

    dice = r.json()["dice"]
    read_right = sum(any(on(die, b, f) for die in dice) for b, f in zip(boxes, faces))
    sure_wrong = [die for die in dice if die["confidence"] >= LOW_CONFIDENCE
                  and not any(on(die, b, f) for b, f in zip(boxes, faces))]
    assert len(faces) == 22 and read_right >= 20 and not sure_wrong, (read_right, sure_wrong)


def test_a_dice_photo_over_the_upload_limit_is_one_sentence(served: TestClient) -> None:
    """Over the upload limit (12 MiB by default) the photo is refused before it is read, in one sentence, and the
    game goes on: the dice panel still answers."""
    r = served.post("/api/live/dice/photo", content=b"\xff\xd8" + bytes(13 * 1024 * 1024),
                    headers={"content-type": "image/jpeg"})
    _sentence(r, 413, "The upload is larger than the server accepts (12.6 MB); send a smaller one")
    assert served.get("/api/live/dice").status_code == 200
