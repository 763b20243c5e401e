"""Loading a terrain file on the terrain page (POST /api/terrain/file): a good file becomes the terrain of the game on
the table and is saved; a bad one is one sentence naming the file, and nothing is saved or changed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.webui_server import LocalClient, session_settings
from tests.webui_session import make_session, roster_json
from webui.server import create_app

CASTLE: dict[str, list[dict[str, Any]]] = {"pieces": [
    {"name": "keep", "kind": ["blocking"], "polygon": [[10, 10], [14, 10], [14, 14], [10, 14]], "height_in": 4},
    {"name": "moat", "kind": ["water"], "polygon": [[8, 8], [16, 8], [16, 9], [8, 9]]},
    {"name": "tower", "kind": ["elevated", "obscuring"], "polygon": [[20, 2], [22, 2], [22, 4]], "height_in": 3},
]}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_session(tmp_path_factory.mktemp("terrain-file") / "table1", frames=2)


@pytest.fixture
def client(session: Path, tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(session_settings(session, session.parent, tmp_path / "setup"))
    with LocalClient(app) as c:
        yield c


def upload(client: TestClient, name: str, data: bytes) -> tuple[int, dict[str, object]]:
    r = client.post("/api/terrain/file", files={"file": (name, data, "application/json")})
    return r.status_code, r.json()


def test_a_good_file_is_the_games_terrain_and_is_saved(client: TestClient, tmp_path: Path) -> None:
    status, body = upload(client, "castle.json", json.dumps(CASTLE).encode())
    assert status == 200 and body["pieces"] == 3, body
    got = client.get("/api/terrain").json()["pieces"]
    assert [p["name"] for p in got] == ["keep", "moat", "tower"]
    assert got[0]["polygon"] == [[10, 10], [14, 10], [14, 14], [10, 14]] and got[0]["height_in"] == 4
    saved = json.loads((tmp_path / "setup" / "terrain-valknut.json").read_text(encoding="utf-8"))
    assert [p["name"] for p in saved["pieces"]] == ["keep", "moat", "tower"]


@pytest.mark.parametrize(("name", "data", "said"), [
    ("notes.txt", b"keep at 10, 10", "The terrain file notes.txt is not valid JSON"),
    ("roster.json", json.dumps(roster_json()).encode(), "The file roster.json is not a terrain file"),
    ("bowtie.json", json.dumps({"pieces": [{"name": "bowtie", "kind": ["blocking"],
                                            "polygon": [[0, 0], [4, 4], [4, 0], [0, 4]]}]}).encode(),
     'The file bowtie.json cannot be loaded: terrain piece "bowtie": outline crosses itself; list the corners in order'),
    ("swamp.json", json.dumps({"pieces": [{"name": "pond", "kind": ["swamp"], "polygon": [[0, 0], [1, 0], [1, 1]]}]}
                              ).encode(), "The file swamp.json cannot be loaded: terrain piece \"pond\" has unknown kind"),
    ("twice.json", json.dumps({"pieces": [CASTLE["pieces"][0], CASTLE["pieces"][0]]}).encode(),
     'The file twice.json cannot be loaded: terrain piece "keep" is listed twice'),
    ("tagged.json", json.dumps({"pieces": [{**CASTLE["pieces"][0], "tag": 12}]}).encode(),
     "The file tagged.json cannot be loaded: tag 12 is both unit"),
])
def test_a_bad_file_is_one_sentence_and_nothing_is_saved(client: TestClient, tmp_path: Path, name: str, data: bytes,
                                                         said: str) -> None:
    assert upload(client, "castle.json", json.dumps(CASTLE).encode())[0] == 200
    saved = tmp_path / "setup" / "terrain-valknut.json"
    before_file, before = saved.read_bytes(), client.get("/api/terrain").json()
    status, body = upload(client, name, data)
    assert status == 400, body
    detail = str(body["detail"])
    assert detail.startswith(said), detail
    assert detail.count(". ") == 0 and detail.endswith("."), detail  # one sentence
    assert "polygon" not in detail and "Self-intersection" not in detail and "{" not in detail, detail
    assert client.get("/api/terrain").json() == before and saved.read_bytes() == before_file  # nothing changed
