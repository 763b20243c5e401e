"""Every example in docs/scenarios/valyr.md, judged by find_game("valyr").judge, gives its documented answer (the
scenario's "seed" rolls the dice not given, as `tablesight judge` does; without one a roll not given waits)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from rules.engine import find_game

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenarios" / "valyr.md"
_BLOCK = re.compile(r"```json (scenario|answer)[^\n]*\n(.*?)```", re.S)


def _examples() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    text = DOC.read_text(encoding="utf-8")
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    pending: tuple[str, dict[str, Any]] | None = None
    for m in _BLOCK.finditer(text):
        body = json.loads(m.group(2))
        if m.group(1) == "scenario":
            heads = re.findall(r"^#+ (.+)$", text[: m.start()], re.M)
            pending = (heads[-1] if heads else str(len(out)), body)
        elif pending is not None:
            out.append((pending[0], pending[1], body))
            pending = None
    return out


def _mismatches(expected: Any, actual: Any, where: str = "answer") -> list[str]:
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        return [m for k, v in expected.items()
                for m in ([f"{where}.{k}: missing"] if k not in actual else _mismatches(v, actual[k], f"{where}.{k}"))]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {expected!r}, got {actual!r}"]
        return [m for i, (e, a) in enumerate(zip(expected, actual)) for m in _mismatches(e, a, f"{where}[{i}]")]
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        ok = isinstance(actual, int | float) and not isinstance(actual, bool) and abs(actual - expected) <= 0.01
        return [] if ok else [f"{where}: expected {expected!r}, got {actual!r}"]
    return [] if expected == actual else [f"{where}: expected {expected!r}, got {actual!r}"]


EXAMPLES = _examples()


def test_every_action_and_question_kind_is_documented() -> None:
    kinds = {s["action"]["kind"] for _, s, _ in EXAMPLES if "action" in s}
    kinds |= {s["question"]["kind"] for _, s, _ in EXAMPLES if "question" in s}
    assert kinds >= {"move", "attack", "ability", "end_turn", "start_round", "concede", "army", "range"}


@pytest.mark.parametrize("title,scenario,expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_documented_valyr_scenario(title: str, scenario: dict[str, Any], expected: dict[str, Any]) -> None:
    rng = random.Random(scenario["seed"]) if "seed" in scenario else None  # as `tablesight judge` does
    answer = find_game("valyr").judge(scenario, rng)
    json.dumps(answer)
    assert not _mismatches(expected, answer), _mismatches(expected, answer)
