"""Recorder: the session directory it writes, its refusals, and what survives a SIGKILL mid-session."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import session_dir
from vision.errors import FrameError
from vision.recorder import Recorder
from vision.session_dir import SessionError, open_session, read_index
from vision.sources import Frame, SessionSource, read_frame_file

ROOT = Path(__file__).resolve().parent.parent
W, H = 160, 120


def frame_image(i: int) -> np.ndarray:
    img = np.full((H, W, 3), (7 * i) % 220 + 10, np.uint8)
    img[5:15, 5:15] = (0, 0, 255)
    return img


def level(img: np.ndarray) -> int:
    return int(round(float(np.median(img[40:, :, 1]))))


def test_recorder_writes_frames_index_manifest_and_attachments(tmp_path: Path) -> None:
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps({"format": "tablesight-calibration", "version": 1, "board_in": [30, 22]}))
    roster = {"units": [{"tag": 12, "name": "Ranger"}]}
    session = tmp_path / "session"
    with Recorder(session, source="camera 0", calibration=cal, roster=roster, extra={"game": "skirmish"}) as rec:
        for i in range(5):
            entry = rec.add(Frame(index=100 + i, t=0.5 + i / 30, image=frame_image(i)))
            assert entry.index == i and entry.file == f"frame_{i:06d}.jpg" and entry.source_index == 100 + i
        manifest_live = json.loads((session / "manifest.json").read_text())
        assert manifest_live["closed"] is False and manifest_live["image_size"] == [W, H]
        assert rec.frames_written == 5
    manifest = json.loads((session / "manifest.json").read_text())
    assert manifest["format"] == "tablesight-session" and manifest["version"] == 1
    assert manifest["closed"] is True and manifest["frames"] == 5 and manifest["source"] == "camera 0"
    assert manifest["game"] == "skirmish"
    assert set(manifest["attachments"]) == {"calibration.json", "roster.json"}
    assert (session / "calibration.json").read_text() == cal.read_text()
    assert json.loads((session / "roster.json").read_text()) == roster
    assert not (session / "terrain.json").exists()
    lines = (session / "frames.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 1, 2, 3, 4]
    rs = open_session(session)
    assert rs.calibration_path == session / "calibration.json" and rs.terrain_path is None
    assert [e.t for e in rs.entries] == pytest.approx([0.5 + i / 30 for i in range(5)])
    assert [level(read_frame_file(session / e.file)) for e in rs.entries] == [level(frame_image(i)) for i in range(5)]
    assert not list(session.glob("*.tmp"))


def test_recorder_refuses_a_directory_that_holds_something(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "frame_000000.jpg").write_bytes(b"x")
    with pytest.raises(SessionError, match="is not empty; record into a new or empty directory"):
        Recorder(tmp_path / "old")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(SessionError, match="is a file; record into a new directory"):
        Recorder(tmp_path / "afile")


@pytest.mark.parametrize(("kind", "match"), [
    ("missing", r"The file to record as terrain\.json, \S*nope\.json does not exist"),
    ("bad_json", r"The file to record as terrain\.json, \S*bad\.json is not valid JSON"),
])
def test_recorder_attachment_problems_are_one_sentence(tmp_path: Path, kind: str, match: str) -> None:
    path = tmp_path / ("nope.json" if kind == "missing" else "bad.json")
    if kind == "bad_json":
        path.write_text("{oops")
    with pytest.raises(SessionError, match=match):
        Recorder(tmp_path / "s", terrain=path)


def test_recorder_starts_a_segment_at_a_size_change_and_rejects_time_going_back_and_non_images(
        tmp_path: Path) -> None:
    with Recorder(tmp_path / "s") as rec:
        rec.write(frame_image(0), 1.0)
        with pytest.raises(FrameError, match="comes before the previous frame"):
            rec.write(frame_image(1), 0.5)
        with pytest.raises(FrameError, match="must be a non-empty 8-bit image"):
            rec.write(np.zeros((H, W, 3), np.float32), 2.0)
        rec.write(frame_image(1), 1.2)
        rec.write(np.zeros((240, 320, 3), np.uint8), 1.3)  # the camera changed size: a new segment, same session
    assert [e.index for e in read_index(tmp_path / "s")] == [0, 1, 2]  # nothing recorded before was lost
    segments = open_session(tmp_path / "s").manifest.segments
    assert [(g.first, g.image_size) for g in segments] == [(0, (W, H)), (2, (320, 240))]
    with pytest.raises(SessionError, match="is closed"):
        rec.write(frame_image(2), 2.0)


def test_torn_last_index_line_is_the_lost_frame_and_is_ignored(tmp_path: Path) -> None:
    with Recorder(tmp_path / "s") as rec:
        for i in range(3):
            rec.write(frame_image(i), i * 0.1)
    with open(tmp_path / "s" / "frames.jsonl", "ab") as fh:
        fh.write(b'{"index": 3, "t": 0.3, "fi')
    assert [f.index for f in SessionSource(tmp_path / "s")] == [0, 1, 2]


CHILD = r"""
import sys, time
import cv2
import numpy as np
sys.path.insert(0, sys.argv[2])
from vision.recorder import Recorder
W, H = 640, 480
rng = np.random.default_rng(0)
noise = rng.integers(0, 60, (H, W, 3), dtype=np.uint8)
rec = Recorder(sys.argv[1], source="kill test", roster={"units": []})
i = 0
t0 = time.monotonic()
while True:
    img = noise.copy()
    img[240:] = (7 * i) % 220 + 10
    rec.write(img, time.monotonic() - t0)
    i += 1
"""


@pytest.mark.parametrize("wait_frames", [8, 23, 41])
def test_sigkill_mid_session_loses_at_most_the_frame_being_written(tmp_path: Path, wait_frames: int) -> None:
    session = tmp_path / "s"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(session), str(ROOT)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    index = session / "frames.jsonl"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if index.exists() and index.read_bytes().count(b"\n") >= wait_frames:
                break
            assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
            time.sleep(0.01)
        else:
            pytest.fail("the recorder did not write frames in time")
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL

    rs = open_session(session)
    assert rs.manifest.closed is False and rs.manifest.image_size == (640, 480)
    n = len(rs.entries)
    assert n >= wait_frames
    assert [e.index for e in rs.entries] == list(range(n))  # no gaps
    frames = list(SessionSource(session))  # every indexed frame readable, strict mode
    assert len(frames) == n
    for i, f in enumerate(frames):
        assert level(f.image[240:]) == pytest.approx((7 * i) % 220 + 10, abs=2)
    on_disk = sorted(p.name for p in session.glob("frame_*.jpg"))
    assert len(on_disk) - n <= 1  # at most the frame being written is complete but not yet indexed
    assert len(list(session.glob("*.tmp"))) <= 1  # at most the frame being written is half-written
    assert json.loads((session / "roster.json").read_text()) == {"units": []}


def test_a_live_frame_that_cannot_be_kept_is_left_out_of_the_recording_not_the_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live frames are measured as the recording keeps them (its JPEG's grey, decoded). A frame that cannot be made into
    that JPEG is left out of the recording with one sentence, keeps the frames before it on disk, still goes on to
    the game, as the camera gave it, and the frames after it are recorded (from a new segment)."""
    import session.recording as recording
    from session.runtime import make_pipeline
    from session.table_setup import TableSetup
    rec = recording.LiveRecording(tmp_path / "sessions", TableSetup(), make_pipeline)
    rec.make_pipeline()
    rng = np.random.default_rng(3)
    image = rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)
    first = rec.take_frame(Frame(index=7, t=1.0, image=image), "test camera")
    assert first.index == 0 and first.t == 0.0
    jpeg = np.frombuffer(recording.encode_frame(image, recording.RECORD_JPEG_QUALITY), np.uint8)
    kept = cv2.imdecode(jpeg, cv2.IMREAD_GRAYSCALE)
    assert kept is not None
    assert np.array_equal(first.gray, kept)  # what is measured: the JPEG's grey, as a replay decodes it
    assert not np.array_equal(first.gray, cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))  # not the camera's
    assert np.array_equal(first.image, image)  # what is shown: the camera's own colour
    rec.ruled(first.index, [], [])  # a frame is listed in the index once the live table has ruled it
    rec.drain()
    replayed = SessionSource(tmp_path / "sessions" / str(rec.name))
    assert np.array_equal(next(iter(replayed)).gray, first.gray)  # the replay measures the same pixels
    name = rec.name

    def refuse(*_: object) -> bytes:
        raise FrameError("Frame 1 could not be encoded as JPEG.")

    monkeypatch.setattr(recording, "encode_frame", refuse)
    image = rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)  # something moved: the frame is encoded, not repeated
    second = rec.take_frame(Frame(index=8, t=1.1, image=image), "test camera")
    assert second.index == 1 and np.array_equal(second.image, image)  # the game goes on with the camera's frame
    assert rec.name == name and "Frame 1 " in rec.note and "not in recording" in rec.note
    assert rec.note.count(". ") == 0
    monkeypatch.undo()
    third = rec.take_frame(Frame(index=9, t=1.2, image=image), "test camera")
    assert third.index == 2
    rec.close()
    assert [e.index for e in read_index(tmp_path / "sessions" / str(name), frozenset({2}))] == [0, 2]
    assert [g.first for g in open_session(tmp_path / "sessions" / str(name)).manifest.segments] == [0, 2]


GOOD = ['{"index": 0, "t": 0.0, "file": "frame_000000.jpg"}', '{"index": 1, "t": 0.1, "file": "frame_000001.jpg"}']


@pytest.mark.parametrize(("second", "said"), [
    ('{"index": 1, "t": 1, "file": "frame_000001.jpg", "note": null, "ok": true}', None),  # an int time, extras
    ('{"index": "1", "t": "0.1", "file": "frame_000001.jpg"}', None),  # numbers as text are read as before
    ('{"index": 1.0, "t": 0.1, "file": "frame_000001.jpg", "source_index": 7}', None),
    ('{"index": 1, "t": NaN, "file": "frame_000001.jpg"}', "line 2 is not a frame entry"),
    ('{"index": 1, "t": 1e999, "file": "frame_000001.jpg"}', "line 2 is not a frame entry"),
    ('{"index": 1, "t": 0.1, "file": "frame_000001.jpg", "x": ' + "9" * 101 + '}', "line 2 is not a frame entry"),
    ('{"index": 1, "t": 0.1, "file": "frame_000001.jpg", "x": ' + "[" * 70 + "]" * 70 + '}',
     "line 2 is not a frame entry"),
    ('{"index": 1, "t": 0.1, "file": "a.jpg"}, {"index": 2, "t": 0.2, "file": "b.jpg"}', "line 2 is not a frame"),
    ('[{"index": 1, "t": 0.1, "file": "frame_000001.jpg"}]', "line 2 is not a frame entry"),
    ('{"index": 1, "t": 0.1, "file": "frame_000001.jpg"}]', "line 2 is not a frame entry"),
    ('{"index": 2, "t": 0.1, "file": "frame_000001.jpg"}', "line 2 is frame 2 where frame 1 belongs"),
    ('{"index": 1, "t": 0.1, "file": "../frame.jpg"}', "line 2 names '../frame.jpg'"),
    ('\ufeff{"index": 1, "t": 0.1, "file": "frame_000001.jpg"}', "line 2 is not a frame entry"),
    ('{"index": 1, "t": 0.1, "file": "caf\udce9.jpg"}', "line 2 is not a frame entry"),  # not UTF-8
    ('{"index": 1, "t": 0.1, "file": "a\udced\udca0\udc80.jpg"}', "line 2 is not a frame entry"),  # a surrogate
    ('{"index": 1, "t": 0.1\n"file": "frame_000001.jpg"}', "line 2 is not a frame entry"),  # one entry, two lines
    ('{"index": 1, "t": 0.1\n"file": "frame_000001.jpg"}, {"index": 2, "t": 0.2, "file": "frame_000002.jpg"}',
     "line 2 is not a frame entry"),  # as many values as lines, but not one a line
    ('{"index": 1, "t": 0.1, "file": "frame_0\n00001.jpg"}', "line 2 is not a frame entry"),  # a name, two lines
    ('{"index": 1, "t": 0.1, "file": "frame_000001.jpg", "k": [{"a": 1}\n{"b": 2}]}', "line 2 is not a frame"),
])
def test_every_index_line_is_read_as_alone_whether_the_index_is_read_in_one_go_or_not(
        tmp_path: Path, second: str, said: str | None) -> None:
    """The index is read in one go when every line is a plain object (a long session opens ~5x sooner), else
    a line at a time: the entries, or the sentence naming the first bad line, are the same either way, and a
    good index after the odd line is still read (the line after it is frame 2)."""
    third = '{"index": 2, "t": 0.2, "file": "frame_000002.jpg"}'
    (tmp_path / "frames.jsonl").write_bytes(
        "\n".join([GOOD[0], second, third, ""]).encode("utf-8", "surrogateescape"))
    if said is None:
        entries = read_index(tmp_path)
        assert [(e.index, e.t, e.file) for e in entries] == [
            (0, 0.0, "frame_000000.jpg"), (1, float(json.loads(second)["t"]), "frame_000001.jpg"),
            (2, 0.2, "frame_000002.jpg")]
        assert [e.source_index for e in entries] == [None, json.loads(second).get("source_index"), None]
        assert all(type(e.index) is int and type(e.t) is float for e in entries)
    else:
        with pytest.raises(SessionError, match=said.replace("[", r"\[").replace(".", r"\.")):
            read_index(tmp_path)


def test_a_long_index_is_read_whole(tmp_path: Path) -> None:
    """216,000 lines (two hours at 30 fps), the last torn: every listed frame, in order, with its time."""
    lines = [json.dumps({"index": i, "t": i / 30, "file": f"frame_{i:06d}.jpg"}) for i in range(216_000)]
    (tmp_path / "frames.jsonl").write_text("\n".join(lines) + '\n{"index": 216000, "t"', encoding="utf-8")
    entries = read_index(tmp_path)
    assert len(entries) == 216_000 and entries[-1].file == "frame_215999.jpg" and entries[-1].t == 215_999 / 30
    read_whole = session_dir._plain_objects([line.encode() for line in lines])
    assert read_whole is not None and read_whole[216_000] == json.loads(lines[-1])  # in one go, not line by line
