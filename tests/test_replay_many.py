"""`tablesight replay FOLDER` over a folder of recorded sessions: one process per session, the output in name
order and tagged with each session's name (or one JSON-lines file per session with --out), a bad session
reported in one sentence while the good ones finish; and `replay_one` fanned out by a plain process pool, as a
league would with Dask or Ray (docs/leagues.md)."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from session.replay import ReplayRun, json_line, load_setup, open_source
from session.replay_many import ReplayOptions, SessionReplay, replay_one, sessions_in
from vision.synth.samples import record_session, tiny
from webui.cli import main


def _alone(session: Path) -> list[str]:
    """What `tablesight replay SESSION --json` prints for one session, but the summary's "seconds"."""
    source = open_source(session)
    with source:
        return [_steady(json_line(e)) for e in ReplayRun(source, load_setup(source), workers=0).events()]


def _steady(line: str) -> str:
    event = json.loads(line)
    if event.get("type") == "summary":
        event.pop("seconds", None)
    return json.dumps(event)


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A week of games: two good sessions (12 and 9 frames), one whose calibration is broken, one with a frame
    cut short half-way, a folder that is not a session (left alone) and a stray file."""
    root = tmp_path_factory.mktemp("league")
    record_session(tiny(), root / "game_a", fsync=False)
    record_session(tiny(frames=9, seed=5), root / "game_b", fsync=False)
    shutil.copytree(root / "game_a", root / "game_c_broken")
    (root / "game_c_broken" / "calibration.json").write_text("{not json", encoding="utf-8")
    shutil.copytree(root / "game_a", root / "game_d_cut")
    frame = root / "game_d_cut" / "frame_000006.jpg"
    frame.write_bytes(frame.read_bytes()[:500])
    (root / "notes").mkdir()
    (root / "notes" / "readme.txt").write_text("not a session", encoding="utf-8")
    (root / "schedule.txt").write_text("week 12", encoding="utf-8")
    return root


def test_the_folder_lists_its_sessions(league: Path) -> None:
    assert [p.name for p in sessions_in(league)] == ["game_a", "game_b", "game_c_broken", "game_d_cut"]
    assert sessions_in(league / "game_a") == []  # a session is not a folder of sessions


def test_every_session_is_replayed_tagged_and_the_bad_one_named(
    league: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["replay", str(league), "--json", "--jobs", "2"])
    out, err = capsys.readouterr()
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in err  # one sentence a bad session
    assert lines[0].startswith("Session game_c_broken") and "calibration.json" in lines[0]
    assert lines[1].startswith("Session game_d_cut") and "frame_000006.jpg" in lines[1]
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["session"] for e in events if e["type"] == "summary"] == ["game_a", "game_b"]
    for name in ("game_a", "game_b"):  # in name order, each exactly what a replay of it alone prints
        mine = [_steady(json.dumps({k: v for k, v in e.items() if k != "session"}))
                for e in events if e["session"] == name]
        assert mine == _alone(league / name), name
    cut = [e for e in events if e["session"] == "game_d_cut"]  # what it replayed before its bad frame is kept
    assert cut and all(e["frame"] < 6 for e in cut) and all(e["type"] != "summary" for e in cut)
    names = [e["session"] for e in events]
    assert names == sorted(names)  # one session's lines together, never interleaved


def test_out_writes_one_file_per_session(league: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "results"
    status = main(["replay", str(league), "--json", "--out", str(out_dir)])
    out, err = capsys.readouterr()
    assert status == 2 and "game_c_broken" in err and "game_d_cut" in err
    # the cut session's lines before its bad frame are kept, under a name that is not a result's
    assert sorted(p.name for p in out_dir.iterdir()) == ["game_a.jsonl", "game_b.jsonl", "game_d_cut.jsonl.part"]
    assert "summary" not in (out_dir / "game_d_cut.jsonl.part").read_text(encoding="utf-8")
    for name in ("game_a", "game_b"):
        written = (out_dir / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        assert [_steady(line) for line in written] == _alone(league / name)
    summaries = [json.loads(line) for line in out.splitlines()]
    assert [s["session"] for s in summaries] == ["game_a", "game_b"]
    assert all(s["type"] == "summary" and Path(s["file"]).is_file() for s in summaries)
    assert summaries[0]["frames"] == 12 and summaries[1]["frames"] == 9


def test_all_good_sessions_exit_0_with_a_readable_log(league: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good"
    good.mkdir()
    for name in ("game_a", "game_b"):
        shutil.copytree(league / name, good / name)
    assert main(["replay", str(good)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert any(line.startswith("game_a: frame") and "move" in line for line in out.splitlines())
    assert out.splitlines()[-1].startswith("game_b: 9 frames")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--store", "x.sqlite"], "--store records one replay"),
        (["--jobs", "0"], "--jobs 0"),
        (["--roster", "/no/such/roster.json"], "--roster /no/such/roster.json does not exist"),
    ],
)
def test_bad_folder_flags_exit_2_with_one_sentence(league: Path, extra: list[str], words: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(league), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def test_out_is_only_for_a_folder_of_sessions(league: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(league / "game_a"), "--out", str(tmp_path / "x")]) == 2
    assert "folder of recorded sessions" in capsys.readouterr().err


def test_a_league_fans_replay_one_out_with_a_process_pool(league: Path, tmp_path: Path) -> None:
    """What docs/leagues.md does with Dask or Ray, with the local engine: the same function per session."""
    sessions = [str(p) for p in sessions_in(league)]
    options = ReplayOptions(out_dir=str(tmp_path), workers=1)
    with ProcessPoolExecutor(max_workers=2) as pool:
        results: list[SessionReplay] = list(pool.map(replay_one, sessions, [options] * len(sessions)))
    by_name: dict[str, Any] = {r.name: r for r in results}
    assert [r.status for r in results] == [0, 0, 2, 2]
    assert by_name["game_a"].summary["frames"] == 12 and by_name["game_a"].summary["moves"] == 1
    assert Path(by_name["game_b"].out_file).read_text(encoding="utf-8").count("\n") >= 1
    assert "calibration.json" in by_name["game_c_broken"].error
