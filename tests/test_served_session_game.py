"""Which game `serve` rules a recorded session as (session/runtime.py), with FastAPI's TestClient on real session
copies: the game it was recorded as, as `tablesight replay`, the replay page and the battle report choose it,
unless the players saved a roster for it in the browser or pass --game; a roster that switches the game drops the
recording's plan; a recorded game this Tablesight does not have is one sentence saying where it came from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rules.engine import UnknownGame
from session.paths import SAMPLES_DIR
from session.replay import load_setup, open_source
from tests.test_session_inputs import _copy_sample
from tests.webui_server import LocalClient, session_settings
from webui.server import create_app

VALKNUT_ROSTER = SAMPLES_DIR / "valknut_skirmish" / "roster.json"


def _manifest(d: Path, **changes: object) -> None:
    (d / "manifest.json").write_text(json.dumps({**json.loads((d / "manifest.json").read_text()), **changes}))


def _replayed_as(d: Path, **kw: object) -> str | None:
    with open_source(d) as source:
        game = load_setup(source, **kw).game  # type: ignore[arg-type]
    return game.name if game is not None else None


def test_a_roster_saved_in_the_browser_for_another_source_does_not_choose_the_game(tmp_path: Path) -> None:
    """A Magni session without a roster of its own, on a server where a Valknut roster was saved for the camera:
    the live table rules Magni, as the replay page and `tablesight replay` do."""
    root = tmp_path / "sessions"
    d = _copy_sample(root / "no_roster", frames=3, sample=SAMPLES_DIR / "magni_placement")
    (d / "roster.json").unlink()
    setup = tmp_path / "setup"
    setup.mkdir()
    shutil.copy(VALKNUT_ROSTER, setup / "roster.json")
    (setup / "saved_for.json").write_text(json.dumps({"roster.json": "camera"}))
    app = create_app(session_settings(d, root, setup))
    with LocalClient(app) as c:
        assert app.state.runtime.setup.game == "magni"
        assert app.state.runtime.setup.roster is not None  # the saved roster is still used, as before
        assert c.get("/api/replay/no_roster").json()["game"] == "magni"
    assert _replayed_as(d) == "magni"


def test_a_roster_flag_keeps_the_recorded_game_as_tablesight_replay_does(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    d = _copy_sample(root / "night", frames=3)
    _manifest(d, game="")  # recorded with no game; its roster (and the flag's) say Valknut
    flag = tmp_path / "roster.json"
    shutil.copy(VALKNUT_ROSTER, flag)
    app = create_app(session_settings(d, root, tmp_path / "setup", roster_file=flag))
    with LocalClient(app):
        assert app.state.runtime.setup.game is None
    assert _replayed_as(d, roster=flag) is None
    app = create_app(session_settings(d, root, tmp_path / "setup", roster_file=flag, game="valknut"))
    with LocalClient(app):
        assert app.state.runtime.setup.game == "valknut"  # --game chooses


def test_a_roster_that_switches_the_game_drops_the_recordings_plan(tmp_path: Path) -> None:
    """Served as Magni (--game) though recorded as Valknut: saving the Valknut roster (a rename) switches the
    table to Valknut, and the declarations ruled with Magni go with it."""
    root = tmp_path / "sessions"
    d = _copy_sample(root / "night", frames=3)
    app = create_app(session_settings(d, root, tmp_path / "setup", game="magni"))
    with LocalClient(app) as c:
        runtime = app.state.runtime
        assert runtime.setup.game == "magni" and runtime.setup.declarations  # the recording's declarations
        roster = json.loads(VALKNUT_ROSTER.read_text())
        roster["units"][0]["name"] = "Renamed"
        saved = c.put("/api/roster", json=roster)
        assert saved.status_code == 200, saved.text
        assert runtime.setup.game == "valknut" and runtime.setup.declarations == {}


def test_a_recorded_game_this_tablesight_does_not_have_says_where_it_came_from(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    d = _copy_sample(root / "chess_night", frames=3)
    _manifest(d, game="chess")
    said = r"The session was recorded as the game 'chess' \(its manifest\), which this Tablesight does not have " \
           r"\(it has .*valknut.*\); rule it as one of those with --game NAME, or set the manifest's \"game\" to one\."
    with pytest.raises(UnknownGame, match=said), LocalClient(create_app(session_settings(d, root, tmp_path / "s"))):
        pass
    with pytest.raises(UnknownGame, match=said):
        _replayed_as(d)
    app = create_app(session_settings(d, root, tmp_path / "setup", game="valknut"))
    with LocalClient(app):
        assert app.state.runtime.setup.game == "valknut"


@pytest.mark.parametrize("command", ["serve", "replay"])
def test_the_commands_say_an_unknown_recorded_game_in_one_sentence_and_exit_2(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from webui.cli import main

    root = tmp_path / "sessions"
    d = _copy_sample(root / "chess_night", frames=3)
    _manifest(d, game="chess")
    before = sorted(p.name for p in d.iterdir())
    argv = ["serve", "--replay", str(d), "--sessions", str(root), "--setup-dir", str(tmp_path / "setup"),
            "--port", str(_free_port())] if command == "serve" else ["replay", str(d)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "recorded as the game 'chess' (its manifest)" in err and "--game NAME" in err
    assert sorted(p.name for p in d.iterdir()) == before  # nothing recorded is touched


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
