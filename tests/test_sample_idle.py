"""Nobody watching, nothing spent: the bundled sample (shown, not recorded) stops reading frames once nobody has
watched it for a few seconds, and plays on as soon as a page opens its feed; a declaration is still served."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import session.runtime
from session.settings import Settings
from tests.webui_server import LocalClient
from webui.server import create_app


def _frames_while(loop: object, seconds: float) -> int:
    before = loop.frames_processed  # type: ignore[attr-defined]
    time.sleep(seconds)
    return int(loop.frames_processed) - int(before)  # type: ignore[attr-defined]


def test_the_sample_waits_while_nobody_watches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session.runtime, "SAMPLE_IDLE_S", 1.0)
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings)) as client:
        loop = client.app.state.runtime.live  # type: ignore[attr-defined]
        assert loop.wait_for_frame(20)
        deadline = time.monotonic() + 20
        while not loop.idle:  # 1 s after the first frame with no watcher
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert _frames_while(loop, 1.5) == 0  # the sample plays at 10 fps: 15 frames would have been read
        with client.websocket_connect("/ws/live") as ws:
            ws.receive_text()
            assert _frames_while(loop, 1.5) >= 3  # a watcher: it plays on (15 at its pace; a loaded machine is slower)
            assert not loop.idle
        deadline = time.monotonic() + 20
        while not loop.idle:  # the page closed: it waits again
            assert time.monotonic() < deadline
            time.sleep(0.05)
