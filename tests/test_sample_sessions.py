"""Sample sessions are made from scripts: a tiny one is rendered and recorded here (12 frames, 640x480) and
checked against its script; a recorder killed mid-session loses at most the frame being written, and
replaying what it left gives every event the full session gives for those frames."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from calibration.table import load_calibration
from session.replay import ReplayRun, load_setup, open_source
from vision.session_dir import open_session
from vision.synth.samples import SCRIPTS, record_session, render_frame, tiny

ROOT = Path(__file__).resolve().parent.parent


def _events(directory: Path) -> list[dict[str, Any]]:
    source = open_source(directory)
    with source:
        return list(ReplayRun(source, load_setup(source)).events())


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_session(tiny(), tmp_path_factory.mktemp("full") / "tiny", fsync=False)


def test_recorded_session_holds_frames_setup_and_truth(full: Path) -> None:
    script = tiny()
    session = open_session(full)
    assert len(session.entries) == len(script.frames) == 12
    assert session.manifest.closed and session.manifest.image_size == (640, 480)
    truth = json.loads((full / "truth.json").read_text(encoding="utf-8"))
    assert [m["tag"] for m in truth["moves"]] == [10] and truth["moves"][0]["length_in"] == 3.0
    for record, frame in zip(truth["frames"], script.frames, strict=True):
        for tag, pose in frame.bases:
            assert record["tags"][str(tag)]["base_in"] == [pose.x, pose.y]
        hidden = {10, 11} - {t for t, _ in frame.bases}
        assert not hidden & {int(t) for t in record["tags"]}
    assert [e.t for e in session.entries] == [i / 10.0 for i in range(12)]


def test_calibration_is_solved_from_the_first_frame_with_the_true_intrinsics(full: Path) -> None:
    cal = load_calibration(full / "calibration.json")
    camera = json.loads((full / "camera.json").read_text(encoding="utf-8"))
    assert np.allclose(cal.camera.K, camera["K"]) and cal.focal_source == "intrinsics"
    true = tiny().poses[0]
    points = np.array([[0.0, 0.0, 0.0], [12.0, 10.0, 0.0], [6.0, 5.0, 0.125]])
    import cv2

    want, _ = cv2.projectPoints(points, true.rvec, true.tvec, true.camera.K, true.camera.dist)
    assert np.max(np.abs(cal.table_to_image(points) - want.reshape(-1, 2))) < 0.5


def test_rendering_is_deterministic() -> None:
    script = SCRIPTS["tiny"]()
    a, ra = render_frame(script, 6)
    b, rb = render_frame(script, 6)
    assert np.array_equal(a, b) and ra == rb


def test_bundled_scripts_are_what_the_brief_asks() -> None:
    valknut = SCRIPTS["valknut_skirmish"]()
    assert 130 <= len(valknut.frames) <= 170 and len(valknut.looks) == 10
    assert any(m.to_z_in == 3.125 for m in valknut.moves)
    cover = [q for q in valknut.quiet if "hand" in q.what][0]
    assert 10 <= cover.last - cover.first + 1 <= 20  # 1-2 s at 10 fps
    assert {a["kind"] for _, a in valknut.declarations} >= {"choose_path", "end_activation", "attack"}
    stress = SCRIPTS["stress"]()
    assert len(stress.poses) == 2 and any(f.blur_px > 0 for f in stress.frames)
    assert len({f.light for f in stress.frames}) > 5


def test_killed_recorder_loses_at_most_one_frame_and_no_event(full: Path, tmp_path: Path) -> None:
    target = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "vision.synth.samples", "--only", "tiny", "--out", str(target),
                             "--progress"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    announced = 0
    for line in proc.stdout:
        if line.startswith("frame "):
            announced = int(line.split()[1]) + 1
            if announced >= 6:
                break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    target = target / "tiny"
    session = open_session(target)
    assert not session.manifest.closed  # killed mid-session, not after it
    listed = len(session.entries)
    complete = len(list(target.glob("frame_*.jpg")))
    assert announced <= listed <= 12 and complete - listed <= 1
    got = [e for e in _events(target) if e["type"] != "summary"]
    reference = [e for e in _events(full) if e["type"] != "summary" and e["frame"] < listed]
    assert got == reference
    assert any(e["type"] == "placed" for e in got)
