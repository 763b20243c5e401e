"""The replay list's line for each session (`session_summaries`): its game, when it was recorded, its length, its
units and whether a battle report can be made, from the session's own files; a damaged file says less, never
hides the session or the others."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from rules.engine import find_game
from session import session_list
from session.paths import SAMPLES_DIR
from session.replay import load_setup, open_source
from session.session_list import length_text, session_summaries
from tests.test_session_inputs import _copy_sample
from tests.webui_server import LocalClient, session_settings
from vision.recorder import Recorder
from webui.server import create_app


def _manifest(d: Path, **changes: Any) -> None:
    m = json.loads((d / "manifest.json").read_text())
    m.update(changes)
    (d / "manifest.json").write_text(json.dumps(m))


def _json(path: Path, **changes: Any) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _listed(root: Path) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in session_summaries(root)}


@pytest.fixture
def berlin_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's local time is central European (UTC+1, UTC+2 in summer) for the test."""
    monkeypatch.setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_sessions_line_says_its_game_date_units_and_length(tmp_path: Path, berlin_clock: None) -> None:
    d = _copy_sample(tmp_path / "club" / "night1", frames=6)
    _manifest(d, created="2026-11-20T19:02:11+01:00")
    s = _listed(tmp_path / "club")["night1"]
    times = [json.loads(line)["t"] for line in (d / "frames.jsonl").read_text().splitlines()]
    assert s["game"] == "Valknut: Skirmish Game" and s["units"] == 10 and s["frames"] == 6
    assert s["created_text"] == "20 Nov 2026, 19:02"  # this server's clock, which it was recorded by
    assert s["length_text"] == f"{times[-1] - times[0]:.1f} s" and s["reportable"]


@pytest.mark.parametrize(("stamp", "said"), [
    ("2026-11-24T21:05:39+00:00", "24 Nov 2026, 22:05"),  # as vision/recorder.py writes it: UTC
    ("2026-07-01T23:30:00+00:00", "02 Jul 2026, 01:30"),  # summer time, the next day here
    ("2026-11-20T19:02:11-05:00", "21 Nov 2026, 01:02"),  # recorded on another clock, said on this one
    ("0001-01-01T00:00:00+05:00", None),  # no local time for it: nothing said rather than a wrong one
])
def test_the_recorded_time_is_said_on_the_servers_clock(tmp_path: Path, berlin_clock: None, stamp: str,
                                                        said: str | None) -> None:
    d = _copy_sample(tmp_path / "club" / "night1", frames=2)
    _manifest(d, created=stamp)
    s = _listed(tmp_path / "club")["night1"]
    assert s.get("created_text") == said and s["created"] == stamp


def test_a_real_recorders_stamp_is_said_in_local_time(tmp_path: Path, berlin_clock: None) -> None:
    d = tmp_path / "club" / "night2"
    began = datetime.now(UTC)
    with Recorder(d, source="test") as rec:
        rec.write(np.zeros((24, 32, 3), np.uint8), 0.0)
    created = json.loads((d / "manifest.json").read_text())["created"]
    when = datetime.fromisoformat(created)
    assert created.endswith("+00:00") and abs((when - began).total_seconds()) < 60
    here = time.strftime("%d %b %Y, %H:%M", time.localtime(when.timestamp()))  # this process's clock: UTC+1 or +2
    s = _listed(tmp_path / "club")["night2"]
    assert s["created_text"] == here != f"{when:%d %b %Y, %H:%M}" and "UTC" not in s["created_text"]


BREAKS: list[tuple[str, Callable[[Path], object], dict[str, Any]]] = [
    ("no date", lambda d: _manifest(d, created="last tuesday"), {"created_text": None, "game": "Valknut: Skirmish Game"}),
    ("date only", lambda d: _manifest(d, created="2026-11-20"), {"created_text": "20 Nov 2026, 00:00"}),
    ("game from the roster", lambda d: _manifest(d, game=None), {"game": "Valknut: Skirmish Game", "reportable": True}),
    ("unknown game", lambda d: _manifest(d, game="chess"), {"game": "chess", "reportable": False}),
    ("no calibration", lambda d: (d / "calibration.json").unlink(), {"reportable": False, "units": 10}),
    ("roster a list", lambda d: (d / "roster.json").write_text("[1, 2]"), {"units": None, "reportable": False}),
    ("roster nested", lambda d: (d / "roster.json").write_text("[" * 5000 + "]" * 5000),
     {"units": None, "reportable": False}),
    ("roster not JSON", lambda d: (d / "roster.json").write_text("{units: "), {"units": None, "reportable": False}),
    ("roster without units", lambda d: _json(d / "roster.json", units=[{"tag": 10}]),
     {"units": 1, "game": "Valknut: Skirmish Game", "reportable": False}),
    ("calibration not JSON", lambda d: (d / "calibration.json").write_text("{"), {"reportable": False, "units": 10}),
    ("calibration of no table", lambda d: (d / "calibration.json").write_text('{"board_in": "big"}'),
     {"reportable": False, "units": 10}),
    ("terrain not JSON", lambda d: (d / "terrain.json").write_text("[1"), {"reportable": False, "units": 10}),
    ("declarations not JSON", lambda d: (d / "declarations.jsonl").write_text("{frame\n"), {"reportable": False}),
]


@pytest.mark.parametrize(("name", "damage", "said"), BREAKS, ids=[b[0] for b in BREAKS])
def test_a_damaged_file_says_less_and_hides_nothing(tmp_path: Path, name: str, damage: Callable[[Path], object],
                                                   said: dict[str, Any]) -> None:
    root = tmp_path / "sessions"
    _copy_sample(root / "good", frames=3)
    damage(_copy_sample(root / "bad", frames=3))
    listed = _listed(root)
    assert set(listed) == {"good", "bad"} and "error" not in listed["bad"] and listed["good"]["reportable"]
    for key, value in said.items():
        assert listed["bad"].get(key) == value, (key, listed["bad"])


def test_a_frame_time_that_is_no_number_spoils_only_the_length(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _copy_sample(root / "good", frames=3)
    d = _copy_sample(root / "bad", frames=3)
    lines = (d / "frames.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["t"] = "inf"
    (d / "frames.jsonl").write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")
    listed = _listed(root)
    assert set(listed) == {"good", "bad"} and listed["good"]["length_text"].endswith(" s")
    assert listed["bad"]["length_text"] == "–" and listed["bad"]["duration_s"] is None
    assert listed["bad"]["game"] == "Valknut: Skirmish Game"
    json.dumps(list(listed.values()), allow_nan=False)  # what /api/sessions sends: JSON has no infinity


def test_list_page_replay_and_report_play_the_manifests_game_over_the_rosters(tmp_path: Path) -> None:
    """A session recorded as Rise of the Magni whose roster says Valknut: listed, shown, replayed and reported
    as Magni, the game it was played as."""
    root = tmp_path / "sessions"
    d = _copy_sample(root / "magni_night", frames=4, sample=SAMPLES_DIR / "magni_placement")
    roster = json.loads((d / "roster.json").read_text())
    (d / "roster.json").write_text(json.dumps({**roster, "game": "valknut"}))
    assert json.loads((d / "manifest.json").read_text())["game"] == "magni"
    magni = find_game("magni")
    assert _listed(root)["magni_night"]["game"] == magni.title == "Rise of the Magni"
    app = create_app(session_settings(d, root, tmp_path / "setup"))  # serve --replay d
    with LocalClient(app) as c:
        assert app.state.runtime.setup.game == "magni"  # the live table too
        assert c.get("/api/replay/magni_night").json()["game"] == "magni"
        page = c.get("/replay/magni_night").text
        assert '<span class="muted" id="replay-game">Rise of the Magni</span>' in page and "Valknut" not in page
    with open_source(d) as source:  # the battle report's path
        reported = load_setup(source).game
    assert reported is not None and reported.name == "magni"


def test_a_session_recorded_with_no_game_is_listed_and_replayed_with_none(tmp_path: Path) -> None:
    """The manifest's "game": "" (recorded with no game, as the stress sample) wins over the roster's game, as the
    battle report reads it."""
    root = tmp_path / "sessions"
    d = _copy_sample(root / "no_game", frames=3)
    _manifest(d, game="")
    assert json.loads((d / "roster.json").read_text())["game"] == "valknut"
    assert "game" not in _listed(root)["no_game"]
    app = create_app(session_settings(d, root, tmp_path / "setup"))
    with LocalClient(app) as c:
        assert app.state.runtime.setup.game is None
        assert c.get("/api/replay/no_game").json()["game"] is None
    with open_source(d) as source:
        assert load_setup(source).game is None


def test_a_roster_saved_since_for_the_replayed_session_names_its_own_game(tmp_path: Path) -> None:
    """serve --replay of a session recorded with no game, after the players saved a roster for it in the browser:
    the saved roster's game is ruled (their choice), not the recording's."""
    root = tmp_path / "sessions"
    d = _copy_sample(root / "no_game", frames=3)
    _manifest(d, game="")
    settings = session_settings(d, root, tmp_path / "setup")
    app = create_app(settings)
    with LocalClient(app) as c:
        assert app.state.runtime.setup.game is None
        roster = json.loads((d / "roster.json").read_text())
        assert c.put("/api/roster", json=roster).status_code == 200
    app = create_app(settings)
    with LocalClient(app):  # the next start
        assert app.state.runtime.setup.game == "valknut"


def test_a_sessions_line_is_kept_until_one_of_its_files_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               berlin_clock: None) -> None:
    """The list at every visit reads only the sessions whose files changed since the last one (a long session's
    index takes ~0.3 s to read). Each change touches one file, written in place: the roster, the frame index, the
    declarations the manifest names, the first frame when the manifest gives no frame size; a frame added to a
    folder of frames; a session deleted; the server's time zone. The line is then the one a fresh read gives."""
    root = tmp_path / "club"
    a, b = _copy_sample(root / "night1", frames=4), _copy_sample(root / "night2", frames=3)
    c = _copy_sample(root / "loose", frames=2)
    for name in ("manifest.json", "frames.jsonl", "roster.json", "calibration.json"):
        (c / name).unlink()  # a folder of frames
    read: list[str] = []
    summary = session_list._summary

    def counted(p: Path) -> dict[str, Any] | None:
        read.append(p.name)
        return summary(p)

    monkeypatch.setattr(session_list, "_summary", counted)
    kept: session_list.Kept = {}

    def lines() -> dict[str, dict[str, Any]]:
        got = {s["name"]: s for s in session_summaries(root, kept)}
        seen = list(read)
        read.clear()
        assert got == _listed(root)  # what a fresh read says
        read[:] = seen
        return got

    def rewrite(path: Path, data: bytes) -> None:
        with open(path, "r+b") as f:  # in place: the folder itself does not change
            f.truncate(0)
            f.write(data)

    def changed(name: str) -> dict[str, Any]:
        got = lines()
        assert read == [name]
        read.clear()
        return got[name]

    assert lines()["night1"]["frames"] == 4 and sorted(read) == ["loose", "night1", "night2"]
    read.clear()
    assert lines()["night2"]["units"] == 10 and read == []  # nothing changed: nothing read
    roster = json.loads((a / "roster.json").read_text())
    rewrite(a / "roster.json", json.dumps({**roster, "units": roster["units"][:9]}).encode())
    assert changed("night1")["units"] == 9
    index = (b / "frames.jsonl").read_bytes()
    rewrite(b / "frames.jsonl", index + json.dumps({"index": 3, "t": 0.3, "file": "frame_000002.jpg"}).encode()
            + b"\n")
    assert changed("night2")["frames"] == 4
    rewrite(b / "declarations.jsonl", b"not json\n")
    assert changed("night2")["reportable"] is False
    _manifest(a, image_size=None)
    assert changed("night1")["reportable"]
    rewrite(a / "frame_000000.jpg", _small_jpeg())
    assert changed("night1")["reportable"] is False  # the frame is no longer the calibration's size
    shutil.copy(c / "frame_000000.jpg", c / "frame_000009.jpg")
    assert changed("loose")["frames"] == 3
    shutil.rmtree(a)
    assert sorted(lines()) == ["loose", "night2"] and read == [] and sorted(kept) == [c, b]
    began = lines()["night2"]["created_text"]
    monkeypatch.setenv("TZ", "UTC0")
    time.tzset()
    got = lines()
    assert got["night2"]["created_text"] != began and sorted(read) == ["loose", "night2"]


def test_an_index_nested_deep_is_one_sessions_error_in_the_kept_list(tmp_path: Path) -> None:
    """No frame size in the manifest, so the list stamps the first frame the index names; an index whose first line
    nests 100,000 deep is that session's sentence, and the others are listed."""
    root = tmp_path / "club"
    _copy_sample(root / "good", frames=2)
    bad = _copy_sample(root / "bad", frames=2)
    _manifest(bad, image_size=None)
    (bad / "frames.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    listed = {s["name"]: s for s in session_summaries(root, {})}
    assert "error" not in listed["good"] and "frames.jsonl line 1 is not a frame entry" in listed["bad"]["error"]


def _small_jpeg() -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((120, 160, 3), 128, np.uint8))
    assert ok
    return bytes(buf)


def test_sessions_are_listed_by_when_they_were_recorded_not_when_copied_in(tmp_path: Path) -> None:
    """Newest recording first: a session copied in from another laptop today, recorded last week, goes below one
    recorded yesterday; a folder of frames (no recording time) by when it last changed; no start time that this
    clock can count from (year 1, east of UTC) sorts as its folder does."""
    root = tmp_path / "club"
    _manifest(_copy_sample(root / "yesterday", frames=2), created="2026-11-25T20:00:00+00:00")
    _copy_sample(root / "frames_only", frames=2)
    (root / "frames_only" / "manifest.json").unlink()
    os.utime(root / "frames_only", (datetime(2026, 11, 24, 12, tzinfo=UTC).timestamp(),) * 2)
    _manifest(_copy_sample(root / "last_week", frames=2), created="2026-11-19T20:00:00+00:00")
    _manifest(_copy_sample(root / "year_one", frames=2), created="0001-01-01T00:00:00+05:00")
    os.utime(root / "year_one", (datetime(2026, 11, 22, 12, tzinfo=UTC).timestamp(),) * 2)
    assert [s["name"] for s in session_summaries(root)] == ["yesterday", "frames_only", "year_one", "last_week"]


@pytest.mark.parametrize(("seconds", "said"), [(float("inf"), "–"), (float("nan"), "–"), (-1.0, "–")])
def test_a_length_that_is_no_number_is_a_dash(seconds: float, said: str) -> None:
    assert length_text(seconds) == said


def test_two_visits_at_once_share_the_kept_lines_safely(tmp_path: Path) -> None:
    """The server answers two list visits on two threads with the same kept lines while sessions come and go: no
    "dictionary changed size" or lost line (threads switched as often as Python can, for 3 s)."""
    import sys
    import threading

    root = tmp_path / "club"
    for i in range(300):
        (root / f"s{i}").mkdir(parents=True)  # no session in them: cheap lines, kept as none
    kept: session_list.Kept = {}
    errors: list[BaseException] = []
    stop = time.monotonic() + 3.0

    def visits(churn: bool) -> None:
        i = 0
        while time.monotonic() < stop and not errors:
            if churn:
                folder = root / f"new{i % 5}"
                folder.rmdir() if folder.exists() else folder.mkdir()
                i += 1
            try:
                session_summaries(root, kept)
            except Exception as err:  # any failure is the finding
                errors.append(err)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=visits, args=(churn,)) for churn in (False, True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, repr(errors[0])
    assert len(kept) == len(list(root.iterdir()))
