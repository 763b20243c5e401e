"""The `tablesight` command line: every documented command exists, and usage mistakes are exit 2 in one sentence."""

from __future__ import annotations

import subprocess
import sys

import pytest

from webui.cli import main
from webui.commands import COMMANDS


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "webui.cli", *args], capture_output=True, text=True, timeout=120)


def test_help_lists_every_command_of_the_design() -> None:
    proc = _run("--help")
    assert proc.returncode == 0, proc.stderr
    for name in ("serve", "calibrate", "calibrate-camera", "detect", "replay", "judge", "tags", "mat", "bench"):
        assert name in COMMANDS
        assert name in proc.stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_each_command_has_help(name: str) -> None:
    proc = _run(name, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "usage: tablesight" in proc.stdout


def test_unknown_command_is_exit_2_in_one_sentence() -> None:
    proc = _run("measure-everything")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_missing_required_option_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["tags", "--ids", "10"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "-o/--output" in err and err.count("\n") == 1


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out
