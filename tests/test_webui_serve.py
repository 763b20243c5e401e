"""`tablesight serve`: bad sources are one sentence and exit 2; a non-loopback host prints its token."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.webui_server import free_port

ROOT = Path(__file__).resolve().parent.parent


def _serve(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "webui.cli", "serve", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_missing_replay_folder_is_exit_2_in_one_sentence(tmp_path: Path) -> None:
    p = _serve("--replay", str(tmp_path / "nope"))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2
    assert err.strip().count("\n") == 0 and "is not a folder" in err and "Traceback" not in err


def test_camera_and_video_together_is_a_usage_error() -> None:
    p = _serve("--camera", "0", "--video", "x.mp4")
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 2 and "not allowed with" in err


def test_non_loopback_host_prints_a_token_and_refuses_requests_without_it(tmp_path: Path) -> None:
    import httpx

    from tests.webui_session import make_session

    session = make_session(tmp_path / "s", frames=3)
    port = free_port()
    p = _serve("--replay", str(session), "--host", "0.0.0.0", "--port", str(port), "--setup-dir", str(tmp_path / "setup"))
    try:
        assert p.stdout is not None
        line = p.stdout.readline()
        assert "?token=" in line, line
        token = line.strip().split("?token=")[1].split()[0]
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/live/status", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert r.status_code == 401
        ok = httpx.get(f"http://127.0.0.1:{port}/api/live/status", params={"token": token}, timeout=5)
        assert ok.status_code == 200 and ok.json()["frames"] == 3
    finally:
        p.terminate()
        p.wait(15)
