"""The replay list's line for each session (`session_summaries`): its game, when it was recorded, its length, its
units and whether a battle report can be made, from the session's own files; a damaged file says less, never
hides the session or the others."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from session.runtime import length_text, session_summaries
from tests.test_session_inputs import _copy_sample


def _manifest(d: Path, **changes: Any) -> None:
    m = json.loads((d / "manifest.json").read_text())
    m.update(changes)
    (d / "manifest.json").write_text(json.dumps(m))


def _listed(root: Path) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in session_summaries(root)}


def test_a_sessions_line_says_its_game_date_units_and_length(tmp_path: Path) -> None:
    d = _copy_sample(tmp_path / "club" / "night1", frames=6)
    _manifest(d, created="2026-11-20T19:02:11+01:00")
    s = _listed(tmp_path / "club")["night1"]
    times = [json.loads(line)["t"] for line in (d / "frames.jsonl").read_text().splitlines()]
    assert s["game"] == "Valknut: Skirmish Game" and s["units"] == 10 and s["frames"] == 6
    assert s["created_text"] == "20 Nov 2026, 19:02 (UTC+0100)"  # the clock it was recorded by, said
    assert s["length_text"] == f"{times[-1] - times[0]:.1f} s" and s["reportable"]


BREAKS: list[tuple[str, Callable[[Path], object], dict[str, Any]]] = [
    ("no date", lambda d: _manifest(d, created="last tuesday"), {"created_text": None, "game": "Valknut: Skirmish Game"}),
    ("date only", lambda d: _manifest(d, created="2026-11-20"), {"created_text": "20 Nov 2026, 00:00"}),
    ("game from the roster", lambda d: _manifest(d, game=None), {"game": "Valknut: Skirmish Game", "reportable": True}),
    ("unknown game", lambda d: _manifest(d, game="chess"), {"game": "chess", "reportable": False}),
    ("no calibration", lambda d: (d / "calibration.json").unlink(), {"reportable": False, "units": 10}),
    ("roster a list", lambda d: (d / "roster.json").write_text("[1, 2]"), {"units": None}),
    ("roster nested", lambda d: (d / "roster.json").write_text("[" * 5000 + "]" * 5000), {"units": None}),
    ("roster not JSON", lambda d: (d / "roster.json").write_text("{units: "), {"units": None}),
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


@pytest.mark.parametrize(("seconds", "said"), [(float("inf"), "–"), (float("nan"), "–"), (-1.0, "–")])
def test_a_length_that_is_no_number_is_a_dash(seconds: float, said: str) -> None:
    assert length_text(seconds) == said
