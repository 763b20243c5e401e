"""A damaged session, a path that cannot name a file and a store file that is not ours: one sentence, exit 2,
nothing overwritten, and a bad session never hides the good ones from the replay list."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from session.paths import SAMPLE_SESSION_DIR
from tests.webui_server import LocalClient, session_settings
from webui.cli import main

LONG = "a" * 300


def _copy_sample(to: Path, frames: int = 6, sample: Path = SAMPLE_SESSION_DIR) -> Path:
    """The bundled sample session (or another `sample`) cut to its first `frames` frames (fast to replay)."""
    to.mkdir(parents=True)
    for f in sample.iterdir():
        if not f.name.startswith("frame_") or int(f.stem.split("_")[1]) < frames:
            shutil.copy(f, to / f.name)
    lines = (sample / "frames.jsonl").read_text().splitlines(True)[:frames]
    (to / "frames.jsonl").write_text("".join(lines))
    manifest = json.loads((to / "manifest.json").read_text())
    manifest["frames"] = frames
    (to / "manifest.json").write_text(json.dumps(manifest))
    return to


def _manifest(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(d: Path) -> None:
        obj = json.loads((d / "manifest.json").read_text())
        change(obj)
        (d / "manifest.json").write_text(json.dumps(obj))
    return apply


def _drop_index_line(n: int) -> Callable[[Path], None]:
    def apply(d: Path) -> None:
        lines = (d / "frames.jsonl").read_text().splitlines(True)
        del lines[n]
        (d / "frames.jsonl").write_text("".join(lines))
    return apply


DAMAGE: list[tuple[str, Callable[[Path], object], str]] = [
    ("gap in frames.jsonl", _drop_index_line(2), "line 3 is frame 3 where frame 2 belongs"),
    ("frames not a number", _manifest(lambda m: m.update(frames="many")), '"frames": many; it must be a whole number'),
    ("frames a float", _manifest(lambda m: m.update(frames=5.5)), '"frames": 5.5'),
    ("setup outside", _manifest(lambda m: m.update(setup="../../../etc/passwd")), '"setup"'),
    ("declarations outside", _manifest(lambda m: m.update(declarations="/etc/passwd")), '"declarations"'),
    ("closed not a bool", _manifest(lambda m: m.update(closed="yes")), '"closed"'),
    ("manifest 5000 digits", lambda d: (d / "manifest.json").write_text('{"frames": 1' + "0" * 5000 + "}"),
     "5001 digits"),
]


@pytest.mark.parametrize(("change", "says"), [r[1:] for r in DAMAGE], ids=[r[0] for r in DAMAGE])
def test_a_damaged_session_is_one_sentence(change: Callable[[Path], object], says: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    session = _copy_sample(tmp_path / "s")
    change(session)
    assert main(["replay", str(session), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err and "Traceback" not in err, err


def test_a_bad_session_never_hides_the_good_ones(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    good = _copy_sample(root / "good")
    for name, change, _says in DAMAGE:
        change(_copy_sample(root / name.replace(" ", "_").replace(".", "_")))
    with LocalClient(__import__("webui.server", fromlist=["create_app"]).create_app(
            session_settings(good, root, tmp_path / "setup"))) as c:
        listing = c.get("/api/sessions").json()
        assert [s["name"] for s in listing["sessions"] if not s.get("sample")] == ["good"]  # then the bundled samples
        bad = {s["name"]: s["error"] for s in listing["unreadable"]}
        assert len(bad) == len(DAMAGE)
        for name, _change, says in DAMAGE:
            assert says in bad[name.replace(" ", "_").replace(".", "_")]
        page = c.get("/replay")
        assert page.status_code == 200 and "/replay/good" in page.text and "frames_not_a_number" in page.text
        r = c.get("/api/replay/gap_in_frames_jsonl")
        assert r.status_code == 400 and "where frame 2 belongs" in r.json()["detail"]


@pytest.mark.parametrize("argv", [
    ["detect", "{L}.png"],
    ["replay", "{L}"],
    ["tags", "--ids", "10-12", "--size", "1", "-o", "{L}.pdf"],
    ["mat", "--board", "30x22", "-o", "{L}.pdf"],
    ["calibrate-camera", "{L}.png", "--chessboard", "9x6", "--square", "1", "-o", "k.json"],
    ["report", "{L}", "-o", "r.html"],
    ["judge", "{L}.json"],
    ["replay", str(SAMPLE_SESSION_DIR), "--json", "--store", "{L}.sqlite"],
])
def test_a_300_character_name_is_one_sentence(argv: list[str], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    args = [a.replace("{L}", str(tmp_path / LONG)) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "longer than the 255 a file name may have" in err, err


def test_replay_store_never_overwrites_a_file_that_is_not_ours(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    session = _copy_sample(tmp_path / "s")
    text = tmp_path / "notes.txt"
    text.write_bytes(b"x")
    assert main(["replay", str(session), "--json", "--store", str(text)]) == 2
    assert "is not a Tablesight session store" in capsys.readouterr().err
    assert text.read_bytes() == b"x"
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (x)")
    before = other.read_bytes()
    assert main(["replay", str(session), "--json", "--store", str(other)]) == 2
    assert "another program's SQLite database" in capsys.readouterr().err
    assert other.read_bytes() == before
    ours = tmp_path / "ours.sqlite"
    assert main(["replay", str(session), "--json", "--store", str(ours)]) == 0
    assert main(["replay", str(session), "--json", "--store", str(ours)]) == 0  # a store of ours is appended to
    capsys.readouterr()
    with sqlite3.connect(ours) as db:
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
