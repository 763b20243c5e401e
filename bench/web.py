"""The web UI under load: does the pipeline keep its frame rate with many browsers watching, and how long from
a frame arriving to its overlays drawn in a real browser (what `tablesight bench --web` reports).

The real server (`create_app`, uvicorn on 127.0.0.1 and a free port, in a thread of this process, as
`tablesight serve` runs it) plays a recorded session in a loop (scanned as a camera is, vision/windowed.py; it
plays on with nobody watching, where the sample would wait), free-running (`speed` times the recorded
pace, 16x by default: faster than any pipeline here, so frames come as fast as the pipeline takes them, as
with a camera). Each window counts the frames the live loop published over `seconds`:

- with nobody watching (a JPEG is then made only once a second),
- with 1 WebSocket watcher on /ws/live, then with `watchers` of them, reading every message as fast as they
  can, then with `watchers` slow ones that pause `slow_ms` after every message. The watchers are real
  WebSocket clients (the `websockets` library, permessage-deflate offered as browsers do) in a separate
  process, so that their own work does not share this process's interpreter lock with the server.

Latency: a headless Chromium opens the live page; the page notes, for every frame it draws, the frame's
`captured_at` (server wall clock when the frame was read, from the frame message) and the page's wall
clock right after the overlays were drawn (`window.tablesightDrawn`, see static/live.js). The page's clock
is compared with this process's clock (offset from the quickest of a few round trips) and the difference
is the end-to-end latency: pipeline, JPEG, WebSocket, picture decode and drawing. Measured with the page
alone, then with `watchers` fast watchers beside it. Free-running, a frame is taken as soon as the one before is
ruled, so these rows are the pipeline flat out. The last rows are what a camera user sees: a fresh server, once a
round, watches the same recording served as a 30 fps network camera, or at each rate of `camera_fps` in turn
(`camera_stream`: an MJPEG stream over HTTP,
each frame sent when it is due), records it as a camera is recorded, and the latency counts from when each frame
came from the camera; `camera_summary` gives their median and range. Times are wall clock; fps over each whole
window.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from calibration.errors import InputError

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync")
SPEED = 16.0
"""Replay speed during the benchmark: the largest the live loop allows, so the pipeline runs flat out."""
SETTLE_S = 1.5
"""Seconds after the watchers connect (or the page draws) before a window starts counting."""
START_TIMEOUT_S = 60.0
"""Longest wait for the server, the watchers or the page to be ready."""
MAX_WATCHERS = 64
CAMERA_FPS = 30.0
"""The frame rate of the recording served as a camera (`camera_stream`): a webcam's."""
MIN_CAMERA_FPS, MAX_CAMERA_FPS = 1.0, 120.0
"""The frame rates `run_web_bench` serves a camera at."""
DRAWN_JS = "window.tablesightDrawn ? window.tablesightDrawn.splice(0) : []"


class WebBenchError(InputError):
    """A web benchmark that cannot run here (no session, no Chromium, bad figures)."""


# ---------------------------------------------------------------------------------------------- server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(session: Path, work: Path) -> Iterator[tuple[str, Any]]:
    """The real web server playing `session` in a loop on 127.0.0.1:<free port>; yields (base URL, app)."""
    from session.settings import Settings
    from webui.server import create_app

    port = _free_port()
    settings = Settings(host="127.0.0.1", port=port, source_kind="sample", source=str(session), loop_sample=True,
                        sessions_dir=work / "sessions", setup_dir=work / "setup", sample_idles=False)
    with _served(create_app(settings), port) as url_app:
        yield url_app


@contextmanager
def _served(app: Any, port: int) -> Iterator[tuple[str, Any]]:
    """`app` served by uvicorn on 127.0.0.1:`port` in a thread of this process, as `tablesight serve` runs it."""
    import uvicorn

    from webui.server import UVICORN_OPTIONS

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", **UVICORN_OPTIONS))
    thread = threading.Thread(target=server.run, name="tablesight-bench-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        if not server.started:
            raise RuntimeError("the benchmark's web server did not start")
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(15)


def _published(live: Any) -> int:
    """Frames the live loop's pipeline has processed and handed on for showing so far."""
    return int(live.frames_processed)


def _count_window(live: Any, seconds: float) -> tuple[int, float, int, float]:
    """(frames published, seconds elapsed, watchers the server saw mid-window, this process's CPU seconds).

    This process is the server: its CPU time is the pipeline's plus the sending's (all threads).
    """
    n0, t0, c0 = _published(live), time.perf_counter(), time.process_time()
    time.sleep(seconds / 2)
    seen = int(live.broadcast.watchers)
    time.sleep(seconds / 2)
    n1, t1, c1 = _published(live), time.perf_counter(), time.process_time()
    return n1 - n0, t1 - t0, seen, c1 - c0


def _children_cpu_s() -> float:
    """CPU seconds of the child processes that have ended so far (the watcher processes)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return float(ru.ru_utime + ru.ru_stime)


@contextmanager
def mjpeg_stream(parts: Sequence[bytes], fps: float = CAMERA_FPS) -> Iterator[str]:
    """A network camera on 127.0.0.1: an MJPEG stream over HTTP (as phone camera apps and IP cameras serve it, and
    as a 1080p webcam sends MJPEG) sending `parts` over and over, each when it is due by the wall clock, `fps` a
    second from the first connection (a client that reconnects gets the stream where it is); yields its URL."""
    sent = itertools.count()
    started: list[float] = []

    class Stream(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            if not started:
                started.append(time.monotonic())
            t0 = started[0]
            with suppress(OSError):  # a client that hangs up, as a camera's reader does when it closes
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.end_headers()
                while True:
                    k = next(sent)
                    wait = t0 + k / fps - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                    part = parts[k % len(parts)]
                    self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n" % len(part)
                                     + part + b"\r\n")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Stream)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, name="tablesight-bench-camera", daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/video.mjpg"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextmanager
def camera_stream(session: Path, fps: float = CAMERA_FPS) -> Iterator[str]:
    """`session`'s frames served as a network camera serves them (`mjpeg_stream`); yields the stream's URL for
    `serve --camera`."""
    from session.feeds import RecordingFeed

    with mjpeg_stream([path.read_bytes() for path in RecordingFeed.open(session).files], fps) as url:
        yield url


@contextmanager
def serving_camera(session: Path, work: Path, record: bool = True, fps: float = CAMERA_FPS,
                   ) -> Iterator[tuple[str, Any]]:
    """The real web server watching `session` as a network camera (`camera_stream`, `fps` frames a second), with
    the recording's calibration and roster, recording it as a camera is recorded unless `record` is False; yields
    (base URL, app)."""
    from session.settings import Settings
    from webui.server import create_app

    with camera_stream(session, fps) as stream:
        settings = Settings(host="127.0.0.1", port=_free_port(), source_kind="camera", source=stream,
                            calibration_file=session / "calibration.json", roster_file=session / "roster.json",
                            game=_session_game(session), sessions_dir=work / "sessions", setup_dir=work / "setup",
                            record=record)
        with _served(create_app(settings), settings.port) as url_app:
            yield url_app


def _session_game(session: Path) -> str | None:
    """The game a recorded session was played with (its manifest's "game"), or None."""
    with suppress(OSError, ValueError, AttributeError):
        game = json.loads((session / "manifest.json").read_text()).get("game")
        return str(game) if game else None
    return None


# ---------------------------------------------------------------------------------------------- watchers


async def _watch(urls: Sequence[str], slow_s: float, seconds: float, deflate: bool = True) -> list[dict[str, Any]]:
    """Connect one client per URL, say "ready", read every message for `seconds`, then close; counts each.

    deflate: offer permessage-deflate, as browsers do (Tablesight's server declines it: webui.server.UVICORN_OPTIONS).
    """
    from websockets.asyncio.client import ClientConnection, connect

    conns: list[ClientConnection] = []
    try:
        for url in urls:
            conns.append(await connect(url, proxy=None, max_size=64 * 1024 * 1024, open_timeout=20,
                                       close_timeout=2, compression="deflate" if deflate else None))
        print("ready", flush=True)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds

        async def read(ws: ClientConnection) -> dict[str, Any]:
            frames = jpegs = statuses = size = 0
            first = last = None
            while (left := deadline - loop.time()) > 0:
                try:
                    msg = await asyncio.wait_for(ws.recv(), left)
                except TimeoutError:
                    break
                now = loop.time()
                if isinstance(msg, bytes):
                    jpegs += 1
                    size += len(msg)
                elif msg.startswith('{"type":"frame"'):
                    frames += 1
                    size += len(msg)
                    first = now if first is None else first
                    last = now
                else:
                    statuses += 1
                if slow_s > 0:
                    await asyncio.sleep(slow_s)
            span = (last - first) if first is not None and last is not None else 0.0
            return {"frames": frames, "jpegs": jpegs, "statuses": statuses, "bytes": size,
                    "fps": (frames - 1) / span if frames > 1 and span > 0 else 0.0}

        return list(await asyncio.gather(*(read(ws) for ws in conns)))
    finally:
        for ws in conns:
            with suppress(TimeoutError, OSError, RuntimeError):
                await asyncio.wait_for(ws.close(), 3)


def watch_main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench.web URL --count N --slow-ms MS --seconds S`: the watcher process."""
    p = argparse.ArgumentParser(prog="python -m bench.web", description="WebSocket watchers for the bench")
    p.add_argument("url")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--slow-ms", type=float, default=0.0)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--no-deflate", action="store_true", help="do not offer permessage-deflate")
    a = p.parse_args(argv)
    counts = asyncio.run(_watch([a.url] * a.count, a.slow_ms / 1000.0, a.seconds, not a.no_deflate))
    print(json.dumps(counts), flush=True)
    return 0


class Watchers:
    """`count` WebSocket watchers of `ws_url` in a child process, reading for `seconds` once all are connected."""

    def __init__(self, ws_url: str, count: int, slow_ms: float, seconds: float, deflate: bool = True) -> None:
        self.seconds = seconds
        cmd = [sys.executable, "-m", "bench.web", ws_url, "--count", str(count), "--slow-ms", str(slow_ms),
               "--seconds", str(seconds)] + ([] if deflate else ["--no-deflate"])
        root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root,
                                     env=env)

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if line.strip() != "ready":
            self.kill()
            _out, err = self.proc.communicate(timeout=10)
            raise RuntimeError(f"the watcher process did not connect: {(err or line).strip()[-500:]}")

    def result(self) -> list[dict[str, Any]]:
        try:
            out, err = self.proc.communicate(timeout=self.seconds + 30)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError("the watcher process did not finish in time") from None
        if self.proc.returncode != 0 or not out.strip():
            raise RuntimeError(f"the watcher process failed: {err.strip()[-500:]}")
        counts: list[dict[str, Any]] = json.loads(out.strip().splitlines()[-1])
        return counts

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()

    def __enter__(self) -> Watchers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        self.proc.wait(10)


def _fps_window(live: Any, ws_url: str, count: int, slow_ms: float, seconds: float,
                deflate: bool = True) -> dict[str, Any]:
    """One window: `count` watchers (slow ones pause `slow_ms` per message) and the pipeline's frame rate."""
    name = "nobody watching" if count == 0 else f"{count} watcher{'s' if count > 1 else ''}"
    if slow_ms > 0:
        name += f", slow ({slow_ms:g} ms per message)"
    if count and not deflate:
        name += ", no deflate"
    row: dict[str, Any] = {"name": name, "watchers": count, "slow_ms": slow_ms, "deflate": deflate}
    before = _children_cpu_s()
    if count == 0:
        time.sleep(SETTLE_S)
        frames, span, seen, cpu = _count_window(live, seconds)
        per: list[dict[str, Any]] = []
    else:
        with Watchers(ws_url, count, slow_ms, SETTLE_S + seconds + 0.5, deflate) as w:
            w.wait_ready()
            time.sleep(SETTLE_S)
            frames, span, seen, cpu = _count_window(live, seconds)
            per = w.result()
    row.update(frames=frames, seconds=round(span, 3), fps=frames / span if span > 0 else 0.0,
               server_watchers=seen, server_cpu_ms_per_frame=1000.0 * cpu / frames if frames else None,
               server_cpu_share=cpu / span if span > 0 else None,
               watchers_cpu_s=round(_children_cpu_s() - before, 3), per_watcher=per)
    return row


# ---------------------------------------------------------------------------------------------- latency


def _clock_offset_s(page: Any, tries: int = 7) -> tuple[float, float]:
    """(page clock - this clock, round trip) in seconds, from the quickest of `tries` round trips."""
    best: tuple[float, float] | None = None
    for _ in range(tries):
        t0 = time.time()
        b = float(page.evaluate("(performance.timeOrigin + performance.now()) / 1000"))
        t1 = time.time()
        if best is None or t1 - t0 < best[1]:
            best = (b - (t0 + t1) / 2, t1 - t0)
    assert best is not None
    return best


def _latency_window(browser: Any, url: str, live: Any, ws_url: str, watchers: int, seconds: float,
                    name: str | None = None) -> dict[str, Any]:
    """Frame-to-drawn latency in a fresh Chromium page over `seconds`, with `watchers` fast watchers beside it."""
    from playwright.sync_api import Error as PlaywrightError

    page = browser.new_page(viewport={"width": 1500, "height": 950})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url + "/", timeout=START_TIMEOUT_S * 1000)
        try:
            page.wait_for_function("window.tablesightDrawn && window.tablesightDrawn.length > 0",
                                   timeout=START_TIMEOUT_S * 1000)
        except PlaywrightError:
            hooked = page.evaluate("Array.isArray(window.tablesightDrawn)")
            why = errors[0] if errors else ("no frame was drawn" if hooked else
                                            "the page has no window.tablesightDrawn (static/live.js)")
            raise RuntimeError(f"the live page drew nothing in {START_TIMEOUT_S:g} s: {why}") from None
        with Watchers(ws_url, watchers, 0.0, SETTLE_S + seconds + 0.5) if watchers else _nothing() as w:
            if w is not None:
                w.wait_ready()
            time.sleep(SETTLE_S)
            page.evaluate(DRAWN_JS)
            frames, span, seen, _cpu = _count_window(live, seconds)
            rows = page.evaluate(DRAWN_JS)
            offset, rtt = _clock_offset_s(page)
            per = w.result() if w is not None else []
    finally:
        page.close()
    if errors:
        raise RuntimeError(f"the live page failed: {errors[0]}")
    drawn = np.array([[r[1], r[2], r[3] if r[3] is not None else np.nan] for r in rows], dtype=np.float64)
    drawn = drawn.reshape(-1, 3)
    ms = (drawn[:, 1] - offset - drawn[:, 0]) * 1000.0
    pipe = drawn[:, 2][np.isfinite(drawn[:, 2])]
    return {
        "name": name or ("browser alone" if watchers == 0 else f"browser + {watchers} watchers"),
        "watchers": watchers,
        "frames_drawn": int(len(ms)),
        "drawn_fps": len(ms) / span if span > 0 else 0.0,
        "pipeline_fps": frames / span if span > 0 else 0.0,
        "server_watchers": seen,
        "p50_ms": float(np.percentile(ms, 50)) if len(ms) else None,
        "p95_ms": float(np.percentile(ms, 95)) if len(ms) else None,
        "max_ms": float(ms.max()) if len(ms) else None,
        "pipeline_p50_ms": float(np.percentile(pipe, 50)) if len(pipe) else None,
        "clock_offset_ms": offset * 1000.0,
        "clock_rtt_ms": rtt * 1000.0,
        "per_watcher": per,
    }


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


# ---------------------------------------------------------------------------------------------- entry points


def _check_session(session: Path | None) -> Path:
    from session.feeds import RecordingFeed
    from session.paths import SAMPLE_SESSION_DIR

    path = Path(session) if session is not None else SAMPLE_SESSION_DIR
    if not path.is_dir():
        raise WebBenchError(f"The session {path} for the web benchmark is not a folder; give a recorded session.")
    try:
        RecordingFeed.open(path).close()
    except InputError:
        raise WebBenchError(f"The session {path} holds no frames; give a recorded session with frames.") from None
    return path


def run_web_bench(
    seconds: float = 30.0,
    watchers: int = 10,
    *,
    session: Path | None = None,
    slow_ms: float = 50.0,
    latency_seconds: float | None = None,
    latency: bool = True,
    chromium: Path = CHROMIUM,
    rounds: int = 3,
    camera: bool = True,
    camera_fps: Sequence[float] = (CAMERA_FPS,),
) -> dict[str, Any]:
    """Measure the web UI (see the module docstring); figures in fps and milliseconds, as a JSON-ready dict.

    seconds: each fps window; watchers: how many WebSocket watchers in the loaded windows; session: the
    recording played (default: the bundled sample session); latency_seconds: each latency window (default
    `seconds`); latency=False skips the browser; camera: also measure the latency of `session` served as a
    network camera (`camera_stream`) to a server that records it, counted from when each frame came (it needs the
    session's calibration.json and roster.json); camera_fps: the camera's frame rates, each once a round (a lower
    rate than a webcam's 30 shows how the latency falls as the machine's cores are less busy); "cameras" holds one
    summary a rate, "camera" the first rate's (by default 30 fps, the target's). Takes about
    4 x rounds x seconds + (2 + rounds x rates) x latency_seconds + start-up.

    windows: `rounds` rounds of nobody, 1, `watchers` fast and `watchers` slow, one after the other, so that
    a change in the machine's other load hits every kind of window alike. Each row: pipeline fps, this
    (server) process's CPU ms per frame and share of one core, the watcher process's CPU seconds, and what
    each watcher got. ratios: the median over rounds of each round's ratio.
    """
    if not (0.5 <= seconds <= 600):
        raise WebBenchError(f"A window of {seconds} s is out of range; use 0.5 to 600 seconds.")
    if not (1 <= watchers <= MAX_WATCHERS):
        raise WebBenchError(f"{watchers} watchers is out of range; use 1 to {MAX_WATCHERS}.")
    if not (1 <= rounds <= 20):
        raise WebBenchError(f"{rounds} rounds is out of range; use 1 to 20.")
    if not (0 <= slow_ms <= 2000):
        raise WebBenchError(f"A slow watcher's pause of {slow_ms} ms is out of range; use 0 to 2000 ms.")
    lat_s = seconds if latency_seconds is None else float(latency_seconds)
    if latency and not (0.5 <= lat_s <= 600):
        raise WebBenchError(f"A latency window of {lat_s} s is out of range; use 0.5 to 600 seconds.")
    if not camera_fps or not all(MIN_CAMERA_FPS <= f <= MAX_CAMERA_FPS for f in camera_fps):
        rates = ", ".join(f"{f:g}" for f in camera_fps) or "none"
        raise WebBenchError(f"Camera rates of {rates} fps are out of range; give one or more, each "
                            f"{MIN_CAMERA_FPS:g} to {MAX_CAMERA_FPS:g} frames a second.")
    if latency and not chromium.exists():
        raise WebBenchError(f"Chromium is not at {chromium}; install Debian's chromium package or skip latency.")
    path = _check_session(session)
    camera = camera and (path / "calibration.json").is_file() and (path / "roster.json").is_file()
    out: dict[str, Any] = {"session": str(path), "seconds": seconds, "watchers": watchers, "slow_ms": slow_ms,
                           "speed": SPEED, "cpus": os.cpu_count(), "load_avg": list(os.getloadavg())}
    with tempfile.TemporaryDirectory(prefix="tablesight-bench-web-") as tmp, serving(path, Path(tmp)) as (url, app):
        live = app.state.runtime.live
        if not live.wait_for_frame(START_TIMEOUT_S):
            raise RuntimeError("the live loop published no frame")
        live.set_speed(SPEED)
        ws_url = url.replace("http://", "ws://") + "/ws/live"
        latest = live.broadcast.latest_frame
        out["image_size"] = json.loads(latest.text).get("image_size") if latest is not None else None
        windows = []
        for k in range(rounds):
            for n, s in ((0, 0.0), (1, 0.0), (watchers, 0.0), (watchers, slow_ms)):
                windows.append({"round": k + 1, **_fps_window(live, ws_url, n, s, seconds)})
        out["rounds"] = rounds
        out["windows"] = windows
        out["ratios"] = round_ratios(windows)
        out["within_10_percent"] = all(r is not None and r >= 0.9 for r in
                                       (out["ratios"]["fast_vs_none"], out["ratios"]["slow_vs_none"]))
        out["latency"] = []
        out["latency_error"] = None
        if latency:
            out["latency_error"] = _with_browser(chromium, lambda browser: out["latency"].extend(
                _latency_window(browser, url, live, ws_url, n, lat_s) for n in (0, watchers)))
    if latency and camera and out["latency_error"] is None:  # the server above has stopped: the camera's alone
        cameras: list[dict[str, Any]] = []
        out["latency_error"] = _with_browser(chromium, lambda browser: cameras.extend(
            {**_camera_window(browser, path, lat_s, fps), "round": k + 1, "camera_fps": fps}
            for k in range(rounds) for fps in camera_fps))
        out["latency"] += cameras
        out["cameras"] = [{"camera_fps": fps, **(camera_summary([x for x in cameras if x["camera_fps"] == fps]) or {})}
                          for fps in camera_fps]
        out["camera"] = camera_summary([x for x in cameras if x["camera_fps"] == camera_fps[0]])
    out["load_avg_after"] = list(os.getloadavg())
    return out


def camera_summary(cameras: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The camera rows over rounds (a fresh server each): median and range of p50 and p95 ms and of drawn fps.
    One 15 s window on a shared 2-core machine can be a half off the next; the median of several is the figure."""
    rows = [x for x in cameras if x["p95_ms"] is not None]
    if not rows:
        return None
    out: dict[str, Any] = {"rounds": len(rows)}
    for key in ("p50_ms", "p95_ms", "drawn_fps"):
        values = [float(x[key]) for x in rows]
        out[key] = {"median": float(np.median(values)), "min": min(values), "max": max(values)}
    return out


def _with_browser(chromium: Path, use: Callable[[Any], Any]) -> str | None:
    """Run `use(browser)` with a headless Chromium; None, or the first line of why the browser part failed (the
    fps figures stand even if it cannot run)."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(chromium), args=list(CHROMIUM_ARGS))
            try:
                use(browser)
            finally:
                browser.close()
    except (PlaywrightError, RuntimeError) as err:
        return str(err).strip().splitlines()[0]
    return None


def _camera_window(browser: Any, session: Path, seconds: float, fps: float = CAMERA_FPS) -> dict[str, Any]:
    """The latency window of a fresh server watching `session` as an `fps` camera (`serving_camera`, recorded as
    a camera is), counted from when the camera gave each frame."""
    with tempfile.TemporaryDirectory(prefix="tablesight-bench-camera-") as tmp, \
            serving_camera(session, Path(tmp), fps=fps) as (url, app):
        live = app.state.runtime.live
        if not live.wait_for_frame(START_TIMEOUT_S):
            raise RuntimeError("the live loop published no frame of the camera")
        ws_url = url.replace("http://", "ws://") + "/ws/live"
        return _latency_window(browser, url, live, ws_url, 0, seconds, name=f"camera at {fps:g} fps")


def round_ratios(windows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Median over rounds of (fast or slow watchers' fps) / (nobody's or one watcher's fps) in the same round."""
    by_round: dict[int, dict[str, float]] = {}
    for w in windows:
        kind = "none" if w["watchers"] == 0 else "one" if w["watchers"] == 1 else "slow" if w["slow_ms"] else "fast"
        by_round.setdefault(int(w["round"]), {})[kind] = float(w["fps"])
    out: dict[str, float | None] = {}
    for top in ("fast", "slow"):
        for base in ("none", "one"):
            ratios = [r[top] / r[base] for r in by_round.values() if r.get(base) and top in r]
            out[f"{top}_vs_{base}"] = float(np.median(ratios)) if ratios else None
    return out


def _f(v: Any, fmt: str = "{:.1f}") -> str:
    return "–" if v is None else fmt.format(v)


def format_web_bench(r: dict[str, Any]) -> str:
    """The figures of `run_web_bench` as a plain-text table."""
    size = r.get("image_size") or ["?", "?"]
    lines = [
        f"Web UI under load: session {Path(r['session']).name} ({size[0]}x{size[1]}), pipeline free-running "
        f"(speed {r['speed']:g}x), {r['seconds']:g} s windows, {r['cpus']} CPUs, "
        f"load average {r['load_avg'][0]:.2f} at start",
        "",
        f"{'round':>5} {'watchers':<42} {'pipeline fps':>12} {'vs none':>8} {'vs one':>7} "
        f"{'server CPU ms/frame':>19} {'watchers CPU s':>14} {'frames/watcher min-max':>23} {'watcher fps':>11}",
    ]
    base: dict[tuple[int, int], float] = {(int(w["round"]), int(w["watchers"])): float(w["fps"])
                                          for w in r["windows"] if w["watchers"] <= 1}
    for w in r["windows"]:
        per = w["per_watcher"]
        got = f"{min(p['frames'] for p in per)}-{max(p['frames'] for p in per)}" if per else "–"
        wfps = _f(float(np.mean([p["fps"] for p in per]))) if per else "–"
        b0, b1 = base.get((w["round"], 0)), base.get((w["round"], 1))
        lines.append(f"{w['round']:>5} {w['name']:<42} {w['fps']:>12.1f} {_f(w['fps'] / b0 if b0 else None, '{:.2f}'):>8} "
                     f"{_f(w['fps'] / b1 if b1 else None, '{:.2f}'):>7} "
                     f"{_f(w['server_cpu_ms_per_frame'], '{:.0f}'):>19} {w['watchers_cpu_s']:>14.1f} "
                     f"{got:>23} {wfps:>11}")
    ratios = r["ratios"]
    lines.append("")
    lines.append(
        f"With {r['watchers']} watchers the pipeline keeps {_f(_pct(ratios['fast_vs_none']), '{:.0f}')} % "
        f"(fast) and {_f(_pct(ratios['slow_vs_none']), '{:.0f}')} % (slow) of its frame rate with nobody "
        f"watching (median of {r['rounds']} round{'s' if r['rounds'] > 1 else ''}), "
        f"{_f(_pct(ratios['fast_vs_one']), '{:.0f}')} % and {_f(_pct(ratios['slow_vs_one']), '{:.0f}')} % of it "
        f"with one; target 90 %: {'met' if r['within_10_percent'] else 'NOT met'}."
    )
    if r.get("latency_error"):
        lines += ["", f"Latency could not be measured: {r['latency_error']}"]
    if r.get("latency"):
        lines += ["", "Frame read -> overlays drawn in headless Chromium (wall clock, page clock offset removed)",
                  f"{'':<26} {'frames drawn':>12} {'drawn fps':>9} {'pipeline fps':>12} {'p50 ms':>7} "
                  f"{'p95 ms':>7} {'max ms':>7} {'pipeline p50 ms':>15}"]
        for lat in r["latency"]:
            name = f"{lat['name']}, round {lat['round']}" if "round" in lat else lat["name"]
            lines.append(f"{name:<26} {lat['frames_drawn']:>12} {lat['drawn_fps']:>9.1f} "
                         f"{lat['pipeline_fps']:>12.1f} {_f(lat['p50_ms'], '{:.0f}'):>7} "
                         f"{_f(lat['p95_ms'], '{:.0f}'):>7} {_f(lat['max_ms'], '{:.0f}'):>7} "
                         f"{_f(lat['pipeline_p50_ms'], '{:.0f}'):>15}")
    cams = r.get("cameras") or ([{"camera_fps": CAMERA_FPS, **r["camera"]}] if r.get("camera") else [])
    for cam in (c for c in cams if c.get("rounds")):
        target = (f"; target p95 <= 50 ms: {'met' if cam['p95_ms']['median'] <= 50 else 'NOT met'}"
                  if cam["camera_fps"] == CAMERA_FPS else "")
        lines.append(f"Camera at {cam['camera_fps']:g} fps over {cam['rounds']} round{'s' if cam['rounds'] > 1 else ''} "
                     f"(median, min-max): "
                     f"p50 {cam['p50_ms']['median']:.0f} ms ({cam['p50_ms']['min']:.0f}-{cam['p50_ms']['max']:.0f}), "
                     f"p95 {cam['p95_ms']['median']:.0f} ms ({cam['p95_ms']['min']:.0f}-{cam['p95_ms']['max']:.0f}), "
                     f"{cam['drawn_fps']['median']:.1f} frames drawn a second{target}.")
    return "\n".join(lines)


def _pct(v: float | None) -> float | None:
    return None if v is None else 100.0 * v


if __name__ == "__main__":
    raise SystemExit(watch_main())
