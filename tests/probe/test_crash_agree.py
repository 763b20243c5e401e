"""Nothing recorded is lost (the probe's issue, item 15): after a crash, a session's two records agree.

A real server (`tablesight serve --video`, the rendered sample game as a video, recorded as it plays) is killed with
SIGKILL at five moments of the game. Then, for each session: the frame index and the store's frames table agree on
every frame the index lists (the store may be a frame or two ahead, never behind), every listed frame is on disk and
replays, the replay page, the session list and the battle report read exactly those frames, and the replay rules
them as the live table stored them (moves, placements and verdicts, to the last digit, at the same frames).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from session.feeds import RecordingFeed
from session.recording import STORE_NAME, ruled_live
from session.report import gather_report
from session.session_list import session_summaries
from session.store import SessionStore
from tests.webui_server import free_port
from vision.session_dir import frame_file_name, open_session
from vision.sources import SessionSource
from webui.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_frames" / "valknut_skirmish"
KILL_AT = (4, 22, 45, 71, 98)
"""Frame files written when each server is killed (the sample game is 140 frames at 10 fps)."""


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample game's frames as an MJPEG video at 10 fps."""
    path = tmp_path_factory.mktemp("video") / "game.avi"
    files = sorted(SAMPLE.glob("frame_*.jpg"))
    first = cv2.imread(str(files[0]))
    assert first is not None
    mjpg = cv2.VideoWriter.fourcc(*"MJPG")
    writer = cv2.VideoWriter(str(path), mjpg, 10.0, (first.shape[1], first.shape[0]))
    for f in files:
        image = cv2.imread(str(f))
        assert image is not None
        writer.write(image)
    writer.release()
    return path


def _killed_recording(video: Path, sessions: Path, files: int, delay_s: float) -> Path:
    """Serve `video` (recording into `sessions`) and SIGKILL the server `delay_s` after its `files`-th frame file
    appears; returns the session folder."""
    setup = sessions.parent / "setup"
    args = [sys.executable, "-m", "webui.cli", "serve", "--video", str(video), "--port", str(free_port()),
            "--sessions", str(sessions), "--setup-dir", str(setup), "--calibration", str(SAMPLE / "calibration.json"),
            "--roster", str(SAMPLE / "roster.json"), "--terrain", str(SAMPLE / "terrain.json"), "--game", "valknut"]
    server = subprocess.Popen(args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 40
    try:
        while len(list(sessions.glob("*/frame_*.jpg"))) < files:
            assert server.poll() is None, server.stderr.read().decode()[-2000:] if server.stderr else ""
            assert time.monotonic() < deadline, "the server did not record frames in time"
            time.sleep(0.005)
        time.sleep(delay_s)
    finally:
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        if server.stderr is not None:
            server.stderr.close()
    assert server.returncode == -signal.SIGKILL
    (folder,) = [p for p in sessions.iterdir() if p.is_dir()]
    return folder


def _replay(directory: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["replay", str(directory), "--json"]) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _ruled(events: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """Moves, placements and verdicts as they are compared: frame, kind, tag or rule, numbers."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        if e["type"] in ("move", "placed"):
            out.append((e["frame"], e["type"], e["tag"], json.dumps(e.get("to_in") or e.get("at_in")),
                        e.get("length_in")))
        elif e["type"] == "verdict":
            out.append((e["frame"], "verdict", e["rule"], e["outcome"], e["message"]))
    return sorted(out)


def test_after_a_sigkill_the_index_and_the_store_agree_and_replay_rules_as_live(tmp_path: Path, video: Path) -> None:
    rng = np.random.default_rng(15)
    stored_rulings = 0
    last_folder: Path | None = None
    for n, files in enumerate(KILL_AT):
        sessions = tmp_path / f"run{n}" / "sessions"
        folder = _killed_recording(video, sessions, files, float(rng.uniform(0.0, 0.1)))
        session = open_session(folder)
        listed = [e.index for e in session.entries]
        assert not session.manifest.closed
        assert listed == list(range(len(listed))) and len(listed) >= files - 3, (files, listed[-1:])
        last = listed[-1]

        # the two records: every listed frame has its store row; the store is ahead by the frames not yet listed
        with SessionStore(folder / STORE_NAME) as store:
            rows = store.frames()
            beyond = [e for e in store.events() if e.frame > last] + [v for v in store.verdicts() if v.frame > last]
        assert [(r.index, r.t, r.file) for r in rows[:len(listed)]] == [(e.index, e.t, e.file) for e in session.entries]
        ahead = [r.index for r in rows[len(listed):]]
        assert ahead == list(range(last + 1, last + 1 + len(ahead))) and len(ahead) <= 2, ahead
        own = [e.index for e in session.entries if e.file == frame_file_name(e.index)]  # not a still frame's repeat
        on_disk = sorted(int(p.stem.split("_")[1]) for p in folder.glob("frame_*.jpg"))
        assert on_disk[:len(own)] == own and len(on_disk) - len(own) <= 2  # and at most the unlisted frames
        assert all(e.frame > last for e in beyond)

        # every reader reads exactly the listed frames
        assert [f.index for f in SessionSource(folder)] == listed  # strict: every listed frame decodes
        assert len(RecordingFeed.open(folder)) == len(listed)  # the replay page
        (line,) = session_summaries(sessions)
        assert line["frames"] == len(listed)  # the session list

        # the replay rules them as the live table stored them
        replayed = _replay(folder)
        assert replayed[-1]["type"] == "summary" and replayed[-1]["frames"] == len(listed)
        events, verdicts = ruled_live(folder)
        live = _ruled([e.data for e in events if e.type in ("move", "placed")] + [v.data for v in verdicts])
        again = _ruled(replayed)
        assert [r for r in again if r[0] < last] == [r for r in live if r[0] < last], files
        at_last = [r for r in again if r[0] == last]  # the replay also settles the last moments, as a video's end
        assert all(r in at_last for r in live if r[0] == last), files
        stored_rulings += len(live)
        last_folder = folder

    assert stored_rulings >= 10  # the comparisons above are of real moves and verdicts
    assert last_folder is not None
    assert gather_report(last_folder).frames == len(open_session(last_folder).entries)  # the battle report
