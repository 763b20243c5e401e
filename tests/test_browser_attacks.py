"""A page on another web site cannot watch or change the table (real Chromium at /usr/bin/chromium).

The attacker's page is served by a second local server on its own port (another origin) and tries what a
malicious site would: a form POST of a declaration, a multipart recalibration, a camera file replace, a
fetch that adds X-Tablesight (needs a CORS preflight), and a WebSocket to /ws/live. Each is refused and
nothing changes; the same declaration from Tablesight's own page is accepted (so the checks can fail).
A name that rebinds to 127.0.0.1 (DNS rebinding, `--host-resolver-rules`) is refused by its Host header.
"""

from __future__ import annotations

import base64
import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from tests.webui_server import free_port, paused_at_start, running_server, session_settings
from tests.webui_session import make_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]

ELSEWHERE = "another-site.test"
"""A web site on a name of its own (mapped to this machine inside the test browser)."""
REBOUND = "rebound.test"
"""A name Chromium resolves to 127.0.0.1, as an attacker's DNS would after rebinding."""


class _AttackerPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = b"<!doctype html><title>Totally innocent</title><iframe name=sink></iframe>"
        with contextlib.suppress(OSError):  # the browser may hang up first: no traceback in the test log
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("attack-sessions")
    make_session(root / "table1")
    setup = tmp_path_factory.mktemp("attack-setup")
    settings = session_settings(root / "table1", root, setup, game="valknut")
    with running_server(settings) as (url, app):
        loop = app.state.runtime.live
        assert loop.wait_for_frame(20)
        paused_at_start(loop)
        frames = sorted((root / "table1").glob("frame_*.jpg"))
        yield {"url": url, "app": app, "setup": setup, "frame": frames[0].read_bytes()}


@pytest.fixture(scope="module")
def attacker() -> Iterator[str]:
    port = free_port()
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _AttackerPage)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/"
    httpd.shutdown()
    thread.join(5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1, MAP {ELSEWHERE} 127.0.0.1"]
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page()
    yield pg
    pg.close()


def _state(app: Any) -> tuple[Any, ...]:
    """What an attack would change: the game state, the calibration object, the events, the camera file."""
    runtime = app.state.runtime
    return (runtime.live.pipeline.state, runtime.setup.calibration, len(runtime.live.events),
            (runtime.setup_dir / "camera.json").exists())


def _responses(page: Any, url: str) -> list[tuple[str, str, int]]:
    seen: list[tuple[str, str, int]] = []
    page.on("response", lambda r: seen.append((r.request.method, r.url, r.status)) if r.url.startswith(url) else None)
    return seen


def _first_stockpile(page: Any, url: str) -> dict[str, Any]:
    actions = page.request.get(url + "/api/live/actions").json()
    return actions["groups"][0]["actions"][0]["action"]  # type: ignore[no-any-return]


def test_cross_origin_form_post_of_a_declaration_is_refused(table: dict[str, Any], attacker: str, page: Any) -> None:
    url, app = table["url"], table["app"]
    action = _first_stockpile(page, url)
    before = _state(app)
    page.goto(attacker)
    seen = _responses(page, url)
    with page.expect_response(lambda r: r.url == url + "/api/live/declare" and r.request.method == "POST",
                              timeout=20000):
        page.evaluate(
            """([url, action]) => {
                const f = document.createElement("form");
                f.method = "POST"; f.action = url + "/api/live/declare"; f.enctype = "text/plain"; f.target = "sink";
                const i = document.createElement("input");
                i.name = JSON.stringify({action, pad: ""}).slice(0, -3); i.value = '"}';  // the body is JSON
                f.appendChild(i); document.body.appendChild(f); f.submit();
            }""",
            [url, action],
        )
    assert ("POST", url + "/api/live/declare", 403) in seen, seen
    assert _state(app) == before


def test_cross_origin_fetch_cannot_add_the_same_origin_header(table: dict[str, Any], attacker: str, page: Any) -> None:
    url, app = table["url"], table["app"]
    action = _first_stockpile(page, url)
    before = _state(app)
    page.goto(attacker)
    seen = _responses(page, url)
    outcome = page.evaluate(
        """async ([url, action]) => {
            try {
                const r = await fetch(url + "/api/live/declare", {method: "POST", body: JSON.stringify({action}),
                    headers: {"Content-Type": "application/json", "X-Tablesight": "1"}});
                return "answered " + r.status;
            } catch (e) { return "blocked"; }
        }""",
        [url, action],
    )
    assert outcome == "blocked"
    assert not any(m == "POST" for m, _u, _s in seen), seen  # the preflight failed: the POST never went out
    assert _state(app) == before


def test_cross_origin_multipart_recalibration_and_camera_replace_are_refused(
    table: dict[str, Any], attacker: str, page: Any
) -> None:
    url, app = table["url"], table["app"]
    before = _state(app)
    page.goto(attacker)
    seen = _responses(page, url)
    photo = base64.b64encode(table["frame"]).decode()
    page.evaluate(
        """async ([url, photo]) => {
            const bytes = Uint8Array.from(atob(photo), (c) => c.charCodeAt(0));
            const table = new FormData();
            table.append("board", "30x22");
            table.append("image", new Blob([bytes], {type: "image/jpeg"}), "table.jpg");
            await fetch(url + "/api/calibration/table", {method: "POST", body: table, mode: "no-cors"});
            const cam = new FormData();
            for (let i = 0; i < 6; i++) cam.append("images", new Blob([bytes], {type: "image/jpeg"}), `c${i}.jpg`);
            cam.append("pattern", "chessboard"); cam.append("size", "9x6"); cam.append("square_in", "1");
            await fetch(url + "/api/calibration/camera", {method: "POST", body: cam, mode: "no-cors"});
        }""",
        [url, photo],
    )
    page.wait_for_timeout(500)
    assert ("POST", url + "/api/calibration/table", 403) in seen, seen
    assert ("POST", url + "/api/calibration/camera", 403) in seen, seen
    assert _state(app) == before
    assert not (Path(table["setup"]) / "camera.json").exists()


def test_cross_origin_websocket_gets_no_frame(table: dict[str, Any], attacker: str, page: Any) -> None:
    url = table["url"]
    page.goto(attacker)
    got = page.evaluate(
        """(ws) => new Promise((done) => {
            let frames = 0;
            const s = new WebSocket(ws);
            s.onmessage = () => { frames++; };
            s.onclose = (ev) => done({frames, closed: true});
            setTimeout(() => done({frames, closed: false}), 4000);
        })""",
        url.replace("http://", "ws://") + "/ws/live",
    )
    assert got == {"frames": 0, "closed": True}


def test_own_page_still_declares_and_watches(table: dict[str, Any], page: Any) -> None:
    """The control: the same declaration and WebSocket from Tablesight's own origin work."""
    url, app = table["url"], table["app"]
    action = _first_stockpile(page, url)
    page.goto(url + "/api/games")
    status = page.evaluate(
        """async ([url, action]) => (await fetch(url + "/api/live/declare", {method: "POST",
            body: JSON.stringify({action}), headers: {"Content-Type": "application/json", "X-Tablesight": "1"}})).status""",
        [url, action],
    )
    assert status == 200
    assert app.state.runtime.live.pipeline.state.stockpiles  # the declared stockpile is placed
    got = page.evaluate(
        """(ws) => new Promise((done) => {
            const s = new WebSocket(ws);
            s.onmessage = () => { s.close(); done("message"); };
            setTimeout(() => done("nothing"), 8000);
        })""",
        url.replace("http://", "ws://") + "/ws/live",
    )
    assert got == "message"


def test_another_site_cannot_show_the_camera(table: dict[str, Any], attacker: str, page: Any) -> None:
    """A page on another site (its own name) embeds the camera's frame and stream as images: refused (403), so
    nothing of the table shows there; Tablesight's own page shows the same frame."""
    url = table["url"]
    elsewhere = attacker.replace("127.0.0.1", ELSEWHERE)
    page.goto(elsewhere)
    widths = page.evaluate(
        """(url) => Promise.all(["/api/live/frame.jpg", "/api/live/stream.mjpg"].map((path) => new Promise((done) => {
            const img = new Image();
            img.onload = () => done(img.naturalWidth);
            img.onerror = () => done(0);
            img.src = url + path;
            setTimeout(() => done(img.naturalWidth), 3000);
        })))""",
        url,
    )
    assert widths == [0, 0]  # without the check the frame shows there (960 px wide)
    refused = httpx.get(url + "/api/live/frame.jpg", headers={"Sec-Fetch-Site": "cross-site"}, timeout=10)
    assert refused.status_code == 403 and "another site" in refused.json()["detail"]
    page.goto(url + "/")
    own = page.evaluate(
        """(url) => new Promise((done) => { const img = new Image(); img.onload = () => done(img.naturalWidth);
            img.onerror = () => done(0); img.src = url + "/api/live/frame.jpg"; })""",
        url,
    )
    assert own > 0


def test_a_rebound_name_is_refused(table: dict[str, Any], page: Any) -> None:
    port = table["url"].rsplit(":", 1)[1]
    res = page.goto(f"http://{REBOUND}:{port}/api/live/status")
    assert res is not None and res.status == 400
    assert "does not answer to the name" in (res.text() or "")
