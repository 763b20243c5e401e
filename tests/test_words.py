"""Words as a player meets them: a roster naming a game this Tablesight lacks is refused in one sentence naming that
game and the games it has, by every way a roster comes in (serve --roster and replay --roster with exit 2, PUT
/api/roster and the roster check with 400), nothing recorded or saved before it lost; the overlay's address with a
bad value answers one sentence (a page for a browser, not a JSON dump); the pages' count words agree."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rules.engine import RosterError, game_names
from rules.roster import parse_roster
from tests.webui_server import LocalClient, session_settings
from webui.cli import main
from webui.server import create_app

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_frames" / "magni_placement"
CHESS = {"game": "chess", "units": [{"tag": 12, "name": "Ulf", "profile": "warrior", "owner": "red"}]}
GAMES = "hex_skirmish, magni, valknut, valyr and vigtavl"


def _one_sentence_naming_chess(text: str) -> None:
    text = text.strip()
    assert "'chess'" in text and GAMES in text, text
    assert text[0].isupper() and text.endswith(".") and "\n" not in text and "Traceback" not in text, text


def test_parse_roster_refuses_a_game_this_tablesight_lacks() -> None:
    assert sorted(game_names()) == ["hex_skirmish", "magni", "valknut", "valyr", "vigtavl"]
    with pytest.raises(RosterError) as err:
        parse_roster(CHESS, "chess.json")
    assert str(err.value) == ("The roster chess.json is for the game 'chess', which this Tablesight does not have; it has "
                              f"{GAMES}: name one of those as the roster's game.")
    with pytest.raises(RosterError) as err:
        parse_roster(CHESS)  # the page's roster: its source is "the roster"
    assert str(err.value).startswith("The roster is for the game 'chess'")
    assert parse_roster({**CHESS, "game": " Valknut "}).game == "valknut"  # spelt as a player may


def _tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("words-sessions")
    shutil.copytree(SAMPLE, root / "magni")
    (root / "chess.json").write_text(json.dumps(CHESS), encoding="utf-8")
    return root / "magni"


@pytest.mark.parametrize("argv", [
    ["serve", "--replay", "{session}", "--roster", "{chess}", "--port", "18941"],
    ["serve", "--replay", "{session}", "--roster", "{chess}", "--game", "valknut", "--port", "18941"],
    ["replay", "{session}", "--roster", "{chess}", "--json"],
    ["replay", "{session}", "--roster", "{chess}", "--game", "valknut", "--json"],  # was played as Valknut
], ids=["serve", "serve --game", "replay", "replay --game"])
def test_the_command_line_refuses_a_chess_roster_with_exit_2(argv: list[str], session: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    before = _tree_digest(session)
    args = [a.replace("{session}", str(session)).replace("{chess}", str(session.parent / "chess.json")) for a in argv]
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    _one_sentence_naming_chess(err)
    assert str(session.parent / "chess.json") in err  # names the file to fix
    assert _tree_digest(session) == before  # the recording untouched


def test_a_real_process_prints_the_sentence_alone(session: Path) -> None:
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "webui.cli", "replay", str(session),
                           "--roster", str(session.parent / "chess.json"), "--json"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    _one_sentence_naming_chess(proc.stderr)


@pytest.fixture(scope="module")
def client(session: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalClient]:
    settings = session_settings(session, session.parent, tmp_path_factory.mktemp("setup"))
    app = create_app(settings)
    with LocalClient(app) as c:
        assert app.state.runtime.live.wait_for_frame(30)
        yield c


def test_the_api_refuses_a_chess_roster_with_400_and_keeps_the_one_in_use(client: LocalClient) -> None:
    before = client.get("/api/roster").json()
    assert before["roster"]["game"] == "magni"
    for method, path in (("PUT", "/api/roster"), ("PUT", "/api/roster?restart=true"), ("POST", "/api/roster/check")):
        r = client.request(method, path, json=CHESS)
        assert r.status_code == 400, (path, r.text)
        _one_sentence_naming_chess(r.json()["detail"])
    assert client.get("/api/roster").json() == before


@pytest.mark.parametrize(("query", "says"), [
    ("scale=abc", "The overlay's scale 'abc' is not a number from 0.5 to 4; put e.g. scale=1.6 in its address."),
    ("scale=9", "The overlay's scale '9' is not a number from 0.5 to 4; put e.g. scale=1.6 in its address."),
    ("scale=nan", "The overlay's scale 'nan' is not a number from 0.5 to 4; put e.g. scale=1.6 in its address."),
    ("seconds=-3", "The overlay's time a verdict card stays (seconds) '-3' is not a number from 1 to 120; put e.g. "
                   "seconds=10 in its address."),
    ("camera=maybe", "The overlay's camera 'maybe' is neither 1 nor 0; put camera=1 in its address for the camera "
                     "picture under the overlays, or leave camera out for a transparent page."),
])
def test_a_bad_overlay_address_is_one_sentence_and_a_page_for_a_browser(client: LocalClient, query: str,
                                                                        says: str) -> None:
    browser = client.get(f"/overlay?{query}", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert browser.status_code == 422
    assert browser.headers["content-type"].startswith("text/html")
    assert says.replace("'", "&#39;") in browser.text and '{"detail"' not in browser.text
    script = client.get(f"/overlay?{query}")
    assert script.status_code == 422 and script.json() == {"detail": says}
    stream = client.get(f"/api/live/overlay.mjpg?{query}") if not query.startswith("seconds") else None
    if stream is not None:
        assert stream.status_code == 422 and stream.json() == {"detail": says}


def test_a_good_overlay_address_still_opens(client: LocalClient) -> None:
    r = client.get("/overlay?scale=2&seconds=30&camera=1&layers=bases,labels",
                   headers={"Accept": "text/html"})
    assert r.status_code == 200 and "scale: 2.0" in r.text and "seconds: 30.0" in r.text and "camera: true" in r.text


JS_WORDS = """
import { counted, sentence } from "./webui/static/words.js";
console.log(JSON.stringify([counted(0, "unit"), counted(1, "unit"), counted(2, "unit"), counted(1, "event"),
  counted(3, "tag"), sentence("measuring only"), sentence(""), sentence("Red 4")]));
"""


def test_the_pages_count_words_agree() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    proc = subprocess.run([node, "--input-type=module", "-e", JS_WORDS], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, check=True)
    assert json.loads(proc.stdout) == ["0 units", "1 unit", "2 units", "1 event", "3 tags", "Measuring only", "",
                                       "Red 4"]
