"""Every file a user asks for is written whole or not at all (calibration/file_write.py): on a full or read-only
disk each command says in one sentence which file and why, exits 2, and leaves no partial or temporary file; a
setup saved into a read-only setup folder is refused with a sentence (400), and the server goes on."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from calibration.file_write import FileWriteError, write_file
from session.settings import Settings
from tests.small_disks import full_disk, read_only_folder
from tests.webui_server import LocalClient
from webui.server import create_app

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_frames" / "valknut_skirmish"
ROSTER = ROOT / "examples" / "rosters" / "valknut.json"


def _cli(args: list[str], preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "webui.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, preexec_fn=preexec)


def _one_sentence(done: subprocess.CompletedProcess[str], *words: str) -> None:
    err = done.stderr.strip()
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    with read_only_folder(tmp_path, {"roster.json": b'{"old": true}\n'}) as folder:
        if not str(folder).startswith(str(tmp_path)) or (folder / "probe").exists():
            pytest.fail("the read-only folder is not where it should be")
        try:
            write_file(folder / "roster.json", '{"new": true}\n', what="roster")
        except FileWriteError as err:
            words = str(err)
        else:  # only a user who may write anyway (root in a folder without write permission) gets here
            pytest.skip("this user may write into a folder without write permission")
        reason = ("the folder is read-only", "this user may not write there")  # a read-only disk, or the fallback
        assert words.startswith(f"The roster {folder / 'roster.json'} could not be written: ")
        assert any(r in words for r in reason), words
        assert (folder / "roster.json").read_bytes() == b'{"old": true}\n'
        assert sorted(p.name for p in folder.iterdir()) == ["roster.json"]


@pytest.mark.parametrize("json_report", [False, True])
def test_the_battle_report_on_a_full_disk_is_one_sentence(tmp_path: Path, json_report: bool) -> None:
    with full_disk(tmp_path) as (folder, preexec):
        target = folder / ("report.json" if json_report else "report.html")
        done = _cli(["report", str(SAMPLE), "-o", str(target), *(["--json"] if json_report else [])], preexec)
        reason = "the disk is full" if preexec is None else "larger than this system allows"
        _one_sentence(done, f"The {'report' if json_report else 'battle report'} {target} could not be written",
                      reason)
        assert list(folder.iterdir()) == []  # no half file, no temporary


@pytest.mark.parametrize(("command", "what"), [(["tags", "--ids", "10-29"], "tag sheet"),
                                               (["mat", "--board", "30x22"], "anchor mat")])
def test_printables_on_a_full_disk_are_one_sentence(tmp_path: Path, command: list[str], what: str) -> None:
    with full_disk(tmp_path) as (folder, preexec):
        target = folder / "sheet.pdf"
        _one_sentence(_cli([*command, "-o", str(target)], preexec), f"The {what} {target} could not be written")
        assert list(folder.iterdir()) == []


def test_replay_out_on_a_full_disk_names_the_folder_and_leaves_no_part_file(tmp_path: Path) -> None:
    league = tmp_path / "league"
    shutil.copytree(SAMPLE, league / "game_a")  # its events fill more than the disk's 4 kB
    with full_disk(tmp_path) as (folder, preexec):
        done = _cli(["replay", str(league), "--json", "--out", str(folder)], preexec)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and "internal fault" not in done.stderr, done.stderr
        assert f"The events of session game_a could not be written to {folder}" in done.stderr
        assert list(folder.iterdir()) == []


def test_a_roster_saved_into_a_read_only_setup_folder_is_a_sentence(tmp_path: Path) -> None:
    roster = json.loads(ROSTER.read_text(encoding="utf-8"))
    with read_only_folder(tmp_path) as setup:
        settings = Settings(source_kind="replay", source=str(SAMPLE), sessions_dir=tmp_path / "sessions",
                            setup_dir=setup, game="valknut", record=False)
        with LocalClient(create_app(settings)) as client:
            res = client.put("/api/roster", json=roster)
            if res.status_code == 200:
                pytest.skip("this user may write into a folder without write permission")
            assert res.status_code == 400, res.text
            detail = res.json()["detail"]
            reason = ("the folder is read-only", "this user may not write there")
            assert detail.startswith("The setup file") and any(f"could not be written: {r}" in detail
                                                               for r in reason), detail
            res = client.put("/api/terrain", json={"pieces": []})
            assert res.status_code == 400 and any(r in res.json()["detail"] for r in reason), res.text
            assert client.get("/api/live/status").status_code == 200  # the server goes on
