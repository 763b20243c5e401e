"""Every example scenario in docs/scenarios/ runs through `tablesight judge` and gives its documented answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.scenario_docs import all_examples, subset_mismatches
from webui.cli import main

EXAMPLES = all_examples()


def test_every_game_documents_scenarios() -> None:
    games = {scenario["game"] for _, scenario, _ in EXAMPLES}
    from rules.engine import game_names

    missing = set(game_names()) - games
    assert not missing, f"games without documented scenarios: {sorted(missing)}"


@pytest.mark.parametrize("title,scenario,expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_documented_scenario(
    title: str, scenario: dict[str, Any], expected: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    status = main(["judge", str(path), "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    answer = json.loads(out)
    assert not subset_mismatches(expected, answer), subset_mismatches(expected, answer)


def _judge(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "s.json"
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "webui.cli", "judge", str(path), "--json"], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "text,needle",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "one JSON object"),
        ('{"seed": 1}', 'names no "game"'),
        ('{"game": "chess"}', "There is no game called 'chess'"),
    ],
)
def test_bad_scenario_is_one_sentence_and_status_2(tmp_path: Path, text: str, needle: str) -> None:
    proc = _judge(tmp_path, text)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_missing_scenario_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["judge", str(tmp_path / "nope.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_every_documented_example_is_a_runnable_file() -> None:
    """examples/scenarios/<game>/*.json are the documents' examples, exactly (`python -m tests.scenario_docs`
    writes them); each is judged as the document says by `tablesight judge FILE`."""
    from tests.scenario_docs import EXAMPLES_DIR, example_files

    wanted = example_files()
    assert len(wanted) == len(EXAMPLES) > 100
    on_disk = set(EXAMPLES_DIR.rglob("*.json"))
    assert on_disk == set(wanted), "run python -m tests.scenario_docs to write the examples again"
    for path, scenario in wanted.items():
        assert json.loads(path.read_text(encoding="utf-8")) == scenario, path


@pytest.mark.parametrize("game", ["valknut", "vigtavl"])
def test_an_example_file_runs_from_the_command_line(game: str) -> None:
    from tests.scenario_docs import EXAMPLES_DIR

    first = sorted((EXAMPLES_DIR / game).glob("*.json"))[0]
    done = subprocess.run([sys.executable, "-m", "webui.cli", "judge", str(first), "--json"], capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["game"] == game


def test_judging_the_rules_document_points_at_its_examples(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["judge", "docs/scenarios/valknut.md"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "examples/scenarios/valknut/" in err and "is a rules document" in err
