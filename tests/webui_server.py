"""Running the real web server for tests: uvicorn on a free loopback port in a thread, on a rendered session."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import uvicorn
from fastapi.testclient import TestClient

from session.settings import Settings
from webui.server import UVICORN_OPTIONS, create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(settings: Settings) -> Iterator[tuple[str, Any]]:
    """Serve `settings` on 127.0.0.1:<free port>; yields (base URL, app)."""
    port = free_port()
    settings = settings.model_copy(update={"host": "127.0.0.1", "port": port})
    app = create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", **UVICORN_OPTIONS))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        raise RuntimeError("uvicorn did not start")
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(15)


def session_settings(session: Path, sessions_dir: Path, setup_dir: Path, **kw: Any) -> Settings:
    return Settings(source_kind="replay", source=str(session), sessions_dir=sessions_dir, setup_dir=setup_dir, **kw)


LOCAL_BASE = "http://127.0.0.1:8000"
SAME_ORIGIN = {"X-Tablesight": "1"}


def paused_at_start(loop: Any) -> Any:
    """Pause the live loop and show frame 0, once it does (the seek makes a new pipeline on the loop's thread);
    returns the loop."""
    loop.pause()
    loop.seek(0)
    deadline = time.monotonic() + 20
    while not (loop.status().frame_index == 0 and loop.status().status == "paused"):
        assert time.monotonic() < deadline, loop.status()
        time.sleep(0.05)
    return loop
"""The header a script sends with every change (the pages add it to every fetch)."""


class LocalClient(TestClient):
    """FastAPI's TestClient as a script on this machine talks to the server: Host 127.0.0.1 (not
    "testserver", which the server does not answer to) and X-Tablesight: 1 on every request."""

    def __init__(self, app: Any, **kw: Any) -> None:
        headers = {"X-Tablesight": "1", **kw.pop("headers", {})}
        super().__init__(app, base_url=kw.pop("base_url", LOCAL_BASE), headers=headers, **kw)

    def websocket_connect(self, url: str, *args: Any, **kw: Any) -> Any:
        return super().websocket_connect(urljoin(str(self.base_url).replace("http", "ws", 1), url), *args, **kw)


def click_unit(page: Any, tag: int) -> None:
    """Click unit `tag`'s base on the live page's camera view (the centre of its outline in the newest frame)."""
    x, y = page.evaluate(
        """(tag) => {
            const c = document.getElementById('camera'), r = c.getBoundingClientRect(), msg = window.tablesight.msg;
            const s = msg.image_shapes.find((s) => s.s === 'base' && s.u === tag);
            const cx = s.p.reduce((a, p) => a + p[0], 0) / s.p.length, cy = s.p.reduce((a, p) => a + p[1], 0) / s.p.length;
            return [r.left + cx * r.width / msg.image_size[0], r.top + cy * r.height / msg.image_size[1]];
        }""",
        tag,
    )
    page.mouse.click(x, y)
