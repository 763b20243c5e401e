"""The grid routes (webui/routes/board.py): a replayed Magni session's board from the live loop and from the replay
page's loop, with the same key its frames carry; a session that does not exist is a 404 sentence."""

from __future__ import annotations

import shutil
from pathlib import Path

from session.settings import Settings
from tests.webui_server import LocalClient
from webui.server import create_app

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_frames" / "magni_placement"


def test_live_and_replay_board_routes(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(SAMPLE, sessions / "magni")
    settings = Settings(source_kind="replay", source=str(sessions / "magni"), sessions_dir=sessions,
                        setup_dir=tmp_path / "setup", loop_sample=False)
    app = create_app(settings)
    with LocalClient(app) as client:
        live = app.state.runtime.live
        assert live.wait_for_frame(30)
        grid = client.get("/api/live/board").json()
        assert len(grid["cells"]) == 19 and grid["kinds"] == ["land"] and grid["key"]
        assert all(len(c["px"]) == 6 * grid["edge_points"] for c in grid["cells"])
        with client.websocket_connect("/ws/live") as ws:
            for _ in range(20):
                msg = ws.receive_json()
                if msg.get("type") == "frame":
                    break
            assert msg["grid_key"] == grid["key"] and "cells" not in msg
        loop, _setup = app.state.runtime.replay("magni")
        assert loop.wait_for_frame(30)
        replayed = client.get("/api/replay/magni/board").json()  # the replay page's own loop: the same board and camera
        assert replayed["key"] == grid["key"] and replayed["cells"] == grid["cells"]
        missing = client.get("/api/replay/nothing-here/board")
        assert missing.status_code == 404 and missing.json()["detail"].endswith(".")
