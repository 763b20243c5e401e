"""Nothing recorded is lost (the probe's issue, items 1, 2, 3 and 5), through the real server (uvicorn) with a phone
streaming the bundled sample's rendered frames on /ws/camera, as the probe found them:

1. a corrupt phone frame (a JPEG header and 20 kB of random bytes) is skipped with a sentence and never recorded,
   so the session replays with exactly the good frames;
2. the phone's frames change size mid-game: the recording goes on in a new segment, and replay plays every segment;
3. the sessions disk fills (a small tmpfs; a file-size ulimit in a subprocess where mounting is not allowed): the
   recording pauses with a sentence and resumes by itself once there is room, no index line without its frame;
5. roster, terrain and calibration saved mid-game: one session, each edit an event of it, no failed frame, and its
   replay rules every frame as the live table did, with the setup of that frame.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np
import pytest
from websockets.sync.client import ClientConnection, connect

from session.replay import ReplayRun, load_setup, open_source
from session.settings import Settings
from session.store import SessionStore
from tests.webui_server import SAME_ORIGIN, running_server
from vision.session_dir import open_session
from vision.sources import SessionSource
from webui.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_frames" / "valknut_skirmish"
FRAMES = sorted(SAMPLE.glob("frame_*.jpg"))


def _settings(tmp: Path, sessions: Path | None = None) -> Settings:
    return Settings(source_kind="phone", sessions_dir=sessions or tmp / "sessions", setup_dir=tmp / "setup",
                    calibration_file=SAMPLE / "calibration.json", roster_file=SAMPLE / "roster.json",
                    terrain_file=SAMPLE / "terrain.json", game="valknut")


FRAME_GAP_S = 0.1
"""At least this long between two frames sent, as the sample was filmed (10 frames a second). A phone frame's time is
when it came, and the tracker puts a base down after 5 still frames spanning 0.3 s: frames sent as fast as a quick
machine measures them would settle later than the sample's, and what a test expects would hang on its speed."""


class Phone:
    """The phone's side of /ws/camera: sends one frame at a time, FRAME_GAP_S or more apart, and waits until the live
    loop has taken it (so none is replaced unseen); `settled()` waits until the loop has measured every good frame
    taken."""

    def __init__(self, ws: ClientConnection, app: Any) -> None:
        self.runtime = app.state.runtime
        self.ws = ws
        self.statuses: list[dict[str, Any]] = []
        self.sent_at = -FRAME_GAP_S

    def send(self, jpeg: bytes) -> None:
        phone = self.runtime.phone
        before = phone.taken
        wait = self.sent_at + FRAME_GAP_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self.ws.send(jpeg)
        self.sent_at = time.monotonic()
        _wait(lambda: phone.taken > before, 20, "the live loop did not take the frame")
        self.statuses.append(self.runtime.live.status().to_json())

    def settled(self) -> None:
        phone = self.runtime.phone
        _wait(lambda: phone.measured == phone.taken - phone.bad, 20, "the live loop did not measure the last frame")
        self.runtime.recording.drain()


@contextlib.contextmanager
def _phone(settings: Settings) -> Iterator[tuple[Phone, Any, str]]:
    with running_server(settings) as (url, app), \
            connect(url.replace("http", "ws", 1) + "/ws/camera", max_size=None) as ws:
        yield Phone(ws, app), app, url


@contextlib.contextmanager
def _faults() -> Iterator[list[logging.LogRecord]]:
    """Every record Tablesight logs at ERROR or with a traceback while the block runs."""
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR or record.exc_info:
                seen.append(record)

    handler = Keep()
    logger = logging.getLogger("tablesight")
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)


def _wait(pred: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _replay(directory: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["replay", str(directory), "--json"]) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _replay_page(url: str, name: str) -> dict[str, Any]:
    """The replay page's state of session `name` once its timeline has scanned every frame (or stopped)."""
    deadline = time.monotonic() + 120
    while True:
        got: dict[str, Any] = httpx.get(f"{url}/api/replay/{name}", timeout=30).json()
        if got["timeline"]["complete"] or got["timeline"]["error"]:
            return got
        assert time.monotonic() < deadline, "the replay page's timeline did not finish"
        time.sleep(0.2)


def _only_session(sessions: Path) -> Path:
    folders = [p for p in sessions.iterdir() if p.is_dir()]
    assert len(folders) == 1, folders  # one evening, one session
    return folders[0]


def _resized(path: Path, size: tuple[int, int]) -> bytes:
    read = cv2.imread(str(path))
    assert read is not None
    image = cv2.resize(read, size, interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return buf.tobytes()


def _ruled(events: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """Moves, placements and verdicts as they are compared: frame, kind, tag or rule, numbers."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        if e["type"] in ("move", "placed"):
            out.append((e["frame"], e["type"], e["tag"], json.dumps(e.get("to_in") or e.get("at_in")),
                        e.get("length_in")))
        elif e["type"] == "verdict":
            out.append((e["frame"], "verdict", e["rule"], e["outcome"], e["message"]))
    return out


# ---------------------------------------------------------------------------------------------- 1. a bad frame


def test_a_corrupt_phone_frame_is_skipped_and_the_session_replays_with_exactly_the_good_frames(tmp_path: Path) -> None:
    good = [f.read_bytes() for f in FRAMES[:10]]
    corrupt = good[0][:700] + np.random.default_rng(7).bytes(20000)  # a JPEG header, then 20 kB of noise
    with _faults() as faults, _phone(_settings(tmp_path)) as (phone, app, url):
        for data in good[:5] + [corrupt] + good[5:]:
            phone.send(data)
        phone.settled()
        state = httpx.get(url + "/api/camera", headers=SAME_ORIGIN).json()["phone"]
        status = httpx.get(url + "/api/live/status").json()
    assert state["bad"] == 1 and state["taken"] == 11
    assert state["problem"].startswith("Frame 5 from the phone was skipped") and state["problem"].count(". ") == 0
    assert status["recording"] and "Frame 5 from the phone was skipped" in status["recording_note"]
    folder = _only_session(tmp_path / "sessions")
    entries = open_session(folder).entries
    assert [e.index for e in entries] == list(range(10))
    assert [(folder / e.file).read_bytes() for e in entries] == good  # each good frame as the phone sent it
    replayed = _replay(folder)
    assert replayed[-1]["type"] == "summary" and replayed[-1]["frames"] == 10
    with SessionStore(folder / "session.sqlite") as store:
        assert [f.index for f in store.frames()] == list(range(10))
    assert not faults, [r.getMessage() for r in faults]


# ---------------------------------------------------------------------------------------------- 2. a new size


def test_a_size_change_mid_game_is_a_new_segment_and_replay_plays_every_segment(tmp_path: Path) -> None:
    big = [f.read_bytes() for f in FRAMES[:5]]
    small = [_resized(f, (640, 360)) for f in FRAMES[5:10]]
    back = [f.read_bytes() for f in FRAMES[10:14]]
    notes: list[str] = []
    with _faults() as faults, _phone(_settings(tmp_path)) as (phone, app, url):
        for data in big + small + back:
            phone.send(data)
            notes.append(app.state.runtime.live.status().recording_note)
        phone.settled()
        status = httpx.get(url + "/api/live/status").json()
        listed = httpx.get(url + "/api/sessions").json()["sessions"]
        page = _replay_page(url, status["recording"])
    assert page["frames"] == 14 and page["timeline"]["error"] is None and page["timeline"]["scanned"] == 14
    folder = _only_session(tmp_path / "sessions")
    assert status["recording"] == folder.name  # 720p frames after the small ones: still recording, the same session
    said = next(n for n in notes if "640x360" in n)
    assert "new segment" in said and "calibrated at 1280x720" in said and "not measured" in said
    assert any("1280x720" in n and "measured again" in n for n in notes[10:])
    session = open_session(folder)
    assert [(g.first, g.image_size) for g in session.manifest.segments] == [
        (0, (1280, 720)), (5, (640, 360)), (10, (1280, 720))]
    assert [e.index for e in session.entries] == list(range(14))
    assert [s.size for s in SessionSource(folder)] == [(1280, 720)] * 5 + [(640, 360)] * 5 + [(1280, 720)] * 4
    replayed = _replay(folder)
    summary = replayed[-1]
    assert summary["frames"] == 14 and summary["not_measured"] == 5  # every frame counted, the small ones unmeasured
    unmeasured = [e for e in replayed if e["type"] == "not_measured"]
    assert [e["frame"] for e in unmeasured] == [5] and "640x360" in unmeasured[0]["message"]
    line = next(s for s in listed if s["name"] == folder.name)
    assert line["frames"] == 14  # the session list counts every segment
    report = tmp_path / "report.html"
    assert cli_main(["report", str(folder), "-o", str(report)]) == 0 and report.stat().st_size > 1000
    assert not faults, [r.getMessage() for r in faults]  # a sentence on the page, no traceback in the log


# ---------------------------------------------------------------------------------------------- 3. a full disk


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                              capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _fill(disk: Path) -> Path:
    """A file that takes every byte left on `disk`."""
    filler = disk / "filler.bin"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


def _check_every_listed_frame_is_there(folder: Path) -> list[int]:
    session = open_session(folder)
    for e in session.entries:
        assert (folder / e.file).is_file(), e
    frames = list(SessionSource(folder))  # every listed frame reads (none cut short)
    assert [f.index for f in frames] == [e.index for e in session.entries]
    assert not list(folder.glob("*.tmp"))
    return [e.index for e in session.entries]


def test_a_full_disk_pauses_the_recording_which_resumes_when_there_is_room(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "6m"):
        _full_disk_by_file_size_limit(tmp_path)  # no mounting here: the same by a file-size ulimit
        return
    try:
        frames = [f.read_bytes() for f in FRAMES[:40]]
        with _faults() as faults, _phone(_settings(tmp_path, disk / "sessions")) as (phone, app, url):
            runtime = app.state.runtime
            for data in frames[:5]:
                phone.send(data)
            phone.settled()
            filler = _fill(disk)
            for data in frames[5:10]:
                phone.send(data)
            phone.settled()
            paused = httpx.get(url + "/api/live/status").json()
            assert paused["recording"] is None and "is paused from frame" in paused["recording_note"], paused
            assert "goes on by itself" in paused["recording_note"] and paused["status"] == "ok"
            filler.unlink()
            freed = time.monotonic()
            sent = 10
            while "goes on from frame" not in runtime.live.status().recording_note:
                assert time.monotonic() - freed < 10, "the recording did not resume"
                phone.send(frames[sent])
                sent += 1
                phone.settled()
                time.sleep(0.2)
            resumed_after = time.monotonic() - freed
            for data in frames[sent:sent + 3]:
                phone.send(data)
            sent += 3
            phone.settled()
            resumed = httpx.get(url + "/api/live/status").json()
        folder = _only_session(disk / "sessions")
        indices = _check_every_listed_frame_is_there(folder)
        assert indices[:5] == [0, 1, 2, 3, 4] and len(indices) >= 8
        first_after = indices[5]
        assert 10 <= first_after < sent and indices[5:] == list(range(first_after, sent))
        assert resumed["recording"] == folder.name and f"goes on from frame {first_after}" in resumed["recording_note"]
        assert resumed_after < 2 * 2.0 + 1.5  # tried again every 2 s
        assert [g.first for g in open_session(folder).manifest.segments] == [0, first_after]
        replayed = _replay(folder)
        assert replayed[-1]["frames"] == len(indices)
        with SessionStore(folder / "session.sqlite") as store:
            gaps = [e.data for e in store.events() if e.type == "not_recorded"]
            assert [(g["frame"], g["to"]) for g in gaps] == [(5, first_after - 1)]
        assert not faults, [r.getMessage() for r in faults]
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=20)


LIMITED = textwrap.dedent('''
    import json, resource, sys
    from pathlib import Path
    from session.recording import LiveRecording
    from session.runtime import load_setup_files, make_pipeline
    from vision.sources import Frame

    sample, sessions = Path(sys.argv[1]), Path(sys.argv[2])
    setup = load_setup_files(sample / "calibration.json", sample / "roster.json", sample / "terrain.json", "valknut")
    rec = LiveRecording(sessions, setup, make_pipeline)
    rec.make_pipeline()
    files = sorted(sample.glob("frame_*.jpg"))
    said = []
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def take(i, t):
        data = files[i].read_bytes()
        rec.take_frame(Frame.of_jpeg(i, t, data, "a test frame"), "phone camera")
        rec.drain()
        said.append([rec.name, rec.note])

    for i in range(5):
        take(i, i * 0.1)
    resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, hard))  # no file may grow past 40 kB: a frame is 70 kB
    for i in range(5, 10):
        take(i, i * 0.1)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # room again
    import time
    time.sleep(2.1)
    for i in range(10, 14):
        take(i, i * 0.1)
    rec.close()
    print(json.dumps(said))
''')


def _full_disk_by_file_size_limit(tmp_path: Path) -> None:
    """The fallback where tmpfs cannot be mounted: the recording's process may not grow a file past 40 kB (a frame is
    70 kB), then may again; the same pause, the same resumption, nothing listed without its frame."""
    done = subprocess.run([sys.executable, "-c", LIMITED, str(SAMPLE), str(tmp_path / "sessions")], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout.splitlines()[-1])
    assert all(name is None for name, _ in said[5:10]) and "is paused from frame 5" in said[9][1]
    assert said[10][0] is not None and "goes on from frame 10" in said[10][1]
    folder = _only_session(tmp_path / "sessions")
    assert _check_every_listed_frame_is_there(folder) == [0, 1, 2, 3, 4, 10, 11, 12, 13]
    assert _replay(folder)[-1]["frames"] == 9


def test_a_full_disk_by_file_size_limit(tmp_path: Path) -> None:
    """The fallback of the tmpfs test, run everywhere: it needs no mounting."""
    _full_disk_by_file_size_limit(tmp_path)


# ---------------------------------------------------------------------------------------------- 5. setup edits


def test_setup_edits_mid_game_are_events_of_one_session_whose_replay_rules_as_live(tmp_path: Path) -> None:
    """The roster (unit 14's base height: where its tag is measured), the terrain (the west ruin taken away, which
    unit 13 climbs at frame 91) and the calibration (made again from the phone's frames) are saved mid-game."""
    frames = [f.read_bytes() for f in FRAMES[:96]]
    frames += frames[-1:] * 8  # the table stands still a moment: unit 13's move settles live, not only at the end
    roster = json.loads((SAMPLE / "roster.json").read_text())
    for unit in roster["units"]:
        if unit["tag"] == 14:
            unit["base_height_in"] = 1.25
    terrain = json.loads((SAMPLE / "terrain.json").read_text())
    terrain["pieces"] = [p for p in terrain["pieces"] if p["name"] != "west ruin"]
    edits_at: dict[str, int] = {}
    with _faults() as faults, _phone(_settings(tmp_path)) as (phone, app, url):
        runtime = app.state.runtime
        client = httpx.Client(base_url=url, headers=SAME_ORIGIN, timeout=30)
        for n, data in enumerate(frames):
            if n == 30:
                assert client.put("/api/roster", json=roster).status_code == 200
                edits_at["roster"] = n
            elif n == 40:
                r = client.post("/api/calibration/table", data={"board": "30x22"})
                assert r.status_code == 200 and r.json()["ok"], r.text
                edits_at["calibration"] = n
            elif n == 60:
                assert client.put("/api/terrain", json=terrain).status_code == 200
                edits_at["terrain"] = n
            phone.send(data)
            phone.settled()
            if n >= 96:
                time.sleep(0.06)
        client.close()
        statuses = phone.statuses
        live_events = list(runtime.live.events)
        page = _replay_page(url, runtime.live.status().recording)
    assert all(s["status"] != "error" for s in statuses), [s["message"] for s in statuses if s["status"] == "error"]
    assert not faults, [r.getMessage() for r in faults]  # no failed frame
    folder = _only_session(tmp_path / "sessions")
    assert len(open_session(folder).entries) == 104
    lines = [json.loads(x) for x in (folder / "setup_edits.jsonl").read_text().splitlines()]
    assert [(x["changed"], x["frame"]) for x in lines] == [
        (["roster"], edits_at["roster"] + 1), (["calibration"], edits_at["calibration"] + 1),
        (["terrain"], edits_at["terrain"] + 1)]  # the first frame ruled with each: the one after the save
    with SessionStore(folder / "session.sqlite") as store:
        stored = [e.data for e in store.events()]
        verdicts = [v.data for v in store.verdicts()]
    assert [(e["frame"], e["changed"]) for e in stored if e["type"] == "setup_edit"] == [
        (x["frame"], x["changed"]) for x in lines]

    replayed = _replay(folder)
    assert replayed[-1]["frames"] == 104
    live = sorted(_ruled([e for e in stored if e["type"] in ("move", "placed")] + verdicts))
    again = sorted(_ruled(replayed))
    assert again == live  # every placement, move and verdict, to the last digit, at the same frames
    marked = sorted(_ruled([e for e in page["timeline"]["events"] if e["type"] in ("move", "placed")]))
    assert page["timeline"]["complete"] and marked == sorted(_ruled([e for e in stored if e["type"] in ("move", "placed")]))
    assert any(e["type"] == "move" and e["frame"] >= 91 for e in live_events)

    # each edit rules the frames from its own on, and none before: the replay with the first k edits and the one with
    # k + 1 agree on every placement and move before edit k + 1 and differ after it (unit 14 measured at its new base
    # height: it seems to shift 0.14" at frame 37; the new calibration's numbers; unit 13 on the table where the ruin
    # stood, not 3" up on its floor)
    source = open_source(folder)
    with source:
        recorded = load_setup(source)
        runs = [[e for e in ReplayRun(source, dataclasses.replace(recorded, edits=recorded.edits[:k])).events()
                 if e["type"] in ("move", "placed")] for k in range(3)]
    runs.append([e for e in replayed if e["type"] in ("move", "placed")])  # all three edits
    for k, edit in enumerate(recorded.edits):
        before, after = runs[k], runs[k + 1]
        assert [e for e in before if e["frame"] < edit.frame] == [e for e in after if e["frame"] < edit.frame], k
        assert [e for e in before if e["frame"] >= edit.frame] != [e for e in after if e["frame"] >= edit.frame], k
    shifted = [e for e in runs[3] if e["type"] == "move" and e["tag"] == 14 and e["frame"] < 54]
    assert shifted and 0.1 < shifted[0]["length_in"] < 0.2  # 1.85" -> 1.25": the tag seen 0.6" lower
    on_ruin, off_ruin = ([e for e in run if e["type"] == "move" and e["tag"] == 13][-1] for run in (runs[2], runs[3]))
    assert on_ruin["frame"] == off_ruin["frame"] >= 91 and abs(on_ruin["length_in"] - off_ruin["length_in"]) > 0.1


def test_a_table_calibrated_mid_recording_is_measured_from_there_in_its_replay(tmp_path: Path) -> None:
    """The phone's usual evening: it streams before the table is calibrated, then the table is calibrated from its
    frames. One session, with no calibration.json: its replay measures the frames from the calibration's edit on,
    as live, and says the ones before were not measured."""
    settings = _settings(tmp_path).model_copy(update={"calibration_file": None})
    frames = [f.read_bytes() for f in FRAMES[:30]]
    frames += frames[-1:] * 8  # the table stands still a moment: what was put down settles live
    with _faults() as faults, _phone(settings) as (phone, app, url):
        for n, data in enumerate(frames):
            if n == 5:
                r = httpx.post(url + "/api/calibration/table", data={"board": "30x22"}, headers=SAME_ORIGIN, timeout=30)
                assert r.status_code == 200 and r.json()["ok"], r.text
            phone.send(data)
            phone.settled()
            if n >= 30:
                time.sleep(0.06)
    assert not faults, [r.getMessage() for r in faults]
    folder = _only_session(tmp_path / "sessions")
    assert not (folder / "calibration.json").exists()
    lines = [json.loads(x) for x in (folder / "setup_edits.jsonl").read_text().splitlines()]
    assert [(x["frame"], x["changed"]) for x in lines] == [(6, ["calibration"])]
    replayed = _replay(folder)
    assert replayed[-1]["frames"] == 38 and replayed[-1]["not_measured"] == 6
    assert [(e["frame"], e["message"]) for e in replayed if e["type"] == "not_measured"] == [
        (0, "The table is not calibrated yet, so these frames are not measured.")]
    with SessionStore(folder / "session.sqlite") as store:
        stored = [e.data for e in store.events() if e.type in ("move", "placed")] + [v.data for v in store.verdicts()]
    placed = [e for e in replayed if e["type"] == "placed"]
    assert placed and all(e["frame"] >= 6 for e in placed)
    assert sorted(_ruled(replayed)) == sorted(_ruled(stored))


# ---------------------------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(("manifest", "edits", "said"), [
    ({"setup_edits": "setup_edits.jsonl"}, '{"frame": 12, "changed": ["terrain"], "terrain": {"pieces": 5}}\n',
     "setup_edits.jsonl line 1 (the edit at frame 12) cannot be used (Terrain must be an object"),
    ({"setup_edits": "setup_edits.jsonl"}, '\n{"frame": "twelve", "changed": []}\n',
     'setup_edits.jsonl line 2 is not a setup edit like {"frame": 233'),
    ({"segments": [{"first": 0, "image_size": [1280, 720]}, {"first": 0, "image_size": [640, 360]}]}, "",
     'manifest.json has a "segments" list that is not {"first": frame, "image_size": [width, height]} objects'),
])
def test_a_bad_setup_edit_or_segment_list_is_one_sentence_and_touches_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], manifest: dict[str, Any], edits: str, said: str) -> None:
    session = tmp_path / "session"
    shutil.copytree(SAMPLE, session)
    obj = json.loads((session / "manifest.json").read_text())
    (session / "manifest.json").write_text(json.dumps({**obj, **manifest}))
    if edits:
        (session / "setup_edits.jsonl").write_text(edits)
    before = {p.name: p.read_bytes() for p in session.iterdir()}
    assert cli_main(["replay", str(session), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and err.count("\n") == 0 and "Traceback" not in err, err
    assert {p.name: p.read_bytes() for p in session.iterdir()} == before  # nothing recorded is touched
