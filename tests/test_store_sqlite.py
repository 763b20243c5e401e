"""SessionStore on real SQLite files: WAL, reads beside a writing process, and rows surviving a SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from calibration.errors import InputError
from session.store import SessionStore, StoreError
from vision.tracker import Move, Placed

ROOT = Path(__file__).resolve().parent.parent


def a_move(frame: int) -> Move:
    return Move(frame=frame, t=frame / 30, tag=12, from_in=(1.0, 2.0), to_in=(4.0, 6.0), length_in=5.0,
                pm_in=0.03, path_in=((1.0, 2.0), (4.0, 6.0)), path_length_in=5.0, elapsed_s=1.5, lifted=True,
                left_frame=frame - 45, placed_frame=frame - 9)


def test_store_round_trips_frames_events_and_verdicts(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite") as store:
        sid = store.begin_session(source="camera 0", game="skirmish", meta={"board": [30, 22]})
        for i in range(5):
            store.add_frame(i, i / 30, f"frame_{i:06d}.jpg")
        store.add_event(Placed(frame=1, t=1 / 30, tag=12, at_in=(1.0, 2.0), pm_in=0.02, yaw_deg=90.0))
        move_id = store.add_event(a_move(60))
        store.add_event({"type": "camera_lost", "frame": 61, "message": "camera 0 stopped"})
        store.add_verdict(60, {"rule": "move", "ok": False, "text": "Unit 12 moved 5.00\" of its 4\""})
        assert [f.index for f in store.frames()] == [0, 1, 2, 3, 4]
        assert store.frames()[3].t == pytest.approx(0.1) and store.frames()[3].file == "frame_000003.jpg"
        events = store.events()
        assert [e.type for e in events] == ["placed", "move", "camera_lost"]
        assert events[1].id == move_id and events[1].data == a_move(60).to_json()
        assert [e.frame for e in store.events(since_frame=60)] == [60, 61]
        assert [e.type for e in store.events(after_id=move_id)] == ["camera_lost"]
        [verdict] = store.verdicts(since_frame=10)
        assert verdict.frame == 60 and verdict.data["ok"] is False
        [info] = store.sessions()
        assert info.id == sid and info.game == "skirmish" and info.meta == {"board": [30, 22]}
    raw = sqlite3.connect(tmp_path / "s.sqlite")
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_sessions_are_kept_apart(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite") as store:
        store.add_event({"type": "placed", "frame": 0, "tag": 10})  # the first write starts a session
        first = store.session
        second = store.begin_session(source="replay")
        store.add_event({"type": "placed", "frame": 0, "tag": 11})
        assert [e.data["tag"] for e in store.events()] == [11]
        assert [e.data["tag"] for e in store.events(session=first)] == [10]
        store.use_session(first or 0)
        assert [e.data["tag"] for e in store.events()] == [10]
        with pytest.raises(StoreError, match="has no session 99"):
            store.use_session(99)
    with SessionStore(tmp_path / "s.sqlite") as again:  # a new reader sees the newest session by default
        assert again.session == second and [e.data["tag"] for e in again.events()] == [11]


def test_second_connection_reads_rows_as_they_are_committed(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SessionStore(path) as writer, SessionStore(path) as reader:
        writer.begin_session(source="camera 0")
        for i in range(20):
            writer.add_frame(i, i / 30)
            writer.add_event({"type": "tick", "frame": i})
            assert len(reader.events()) == i + 1  # committed at once, visible to the other connection
            assert reader.frames()[-1].index == i


WRITER = r"""
import sys, time
sys.path.insert(0, sys.argv[2])
from session.store import SessionStore
pause = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
store = SessionStore(sys.argv[1])
store.begin_session(source="writer process")
n = int(sys.argv[3])
i = 0
while n < 0 or i < n:
    store.add_frame(i, i / 30.0, "frame_%06d.jpg" % i)
    store.add_event({"type": "tick", "frame": i, "payload": "x" * 200})
    if i % 7 == 0:
        store.add_verdict(i, {"ok": True, "frame": i})
    print(i, flush=True)
    i += 1
    time.sleep(pause)
store.close()
"""


def test_reader_process_follows_a_writer_process(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    SessionStore(path).close()  # create the schema first
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(ROOT), "150", "0.002"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen: list[int] = []
    seen_while_writing = 0
    last_id = -1
    deadline = time.monotonic() + 60
    with SessionStore(path) as reader:
        while time.monotonic() < deadline:
            running = writer.poll() is None
            for e in reader.events(after_id=last_id):
                seen.append(e.frame)
                last_id = e.id
                seen_while_writing += running
            if writer.poll() is not None and len(seen) >= 150:
                break
            time.sleep(0.005)
    writer.wait()
    assert writer.returncode == 0, writer.stderr.read().decode() if writer.stderr else ""
    assert seen == list(range(150))  # every row, in order, none twice
    assert seen_while_writing >= 50  # most of them read while the other process was still writing


def test_rows_committed_before_a_sigkill_are_all_there_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(ROOT), "-1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    last = -1
    try:
        for line in writer.stdout:
            last = int(line)
            if last >= 120:
                break
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    # commits the writer acknowledged while this test read slower than it wrote (a loaded machine): the last one
    # printed before the kill is the last acknowledged
    last = max([last, *(int(x) for x in writer.stdout.read().split() if x.isdigit())])
    assert last >= 120 and writer.returncode == -signal.SIGKILL
    assert (tmp_path / "s.sqlite-wal").exists()  # killed with its log not checkpointed
    with SessionStore(path) as store:
        frames = [e.frame for e in store.events()]
        assert frames[: last + 1] == list(range(last + 1))  # every acknowledged commit survived
        assert frames == list(range(len(frames)))
        assert len(frames) <= last + 2  # and at most the one in flight more
        assert [f.index for f in store.frames()][: last + 1] == list(range(last + 1))
        assert [v.frame for v in store.verdicts()] == [i for i in range(len(store.frames())) if i % 7 == 0][
            : len(store.verdicts())]
        store.add_event({"type": "resumed", "frame": last + 5})  # and it can be written again
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()


@pytest.mark.parametrize(("setup", "match"), [
    ("garbage", "is not a Tablesight session store"),
    ("no_folder", "folder .* does not exist"),
    ("a_directory", "is a directory; give a file name"),
    ("future_schema", "has schema version 7"),
])
def test_unusable_store_file_is_one_sentence(tmp_path: Path, setup: str, match: str) -> None:
    path = tmp_path / "s.sqlite"
    if setup == "garbage":
        path.write_bytes(b"this is a text file, not a database" * 100)
    elif setup == "no_folder":
        path = tmp_path / "missing" / "s.sqlite"
    elif setup == "a_directory":
        path.mkdir()
    else:
        raw = sqlite3.connect(path)
        raw.execute("PRAGMA user_version = 7")
        raw.close()
    with pytest.raises(StoreError, match=match) as err:
        SessionStore(path)
    assert isinstance(err.value, InputError) and "\n" not in str(err.value)


def test_closed_store_and_malformed_events_are_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s.sqlite")
    with pytest.raises(ValueError, match='needs "type" and "frame"'):
        store.add_event({"frame": 3})
    store.close()
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.add_frame(0, 0.0)
