"""Every scenario in docs/scenarios/magni.md gives its documented answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rules.engine import find_game
from tests.scenario_docs import DOCS, examples, subset_mismatches
from webui.commands.judge import scenario_dice

EXAMPLES = examples(DOCS / "magni.md")


def test_magni_doc_has_an_example_of_every_kind() -> None:
    kinds = {(s["question"] if "question" in s else s["action"])["kind"] for _, s, _ in EXAMPLES}
    assert kinds == {"score", "team", "lead", "place"}


@pytest.mark.parametrize("title,scenario,expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_magni_documented_scenario(title: str, scenario: dict[str, Any], expected: dict[str, Any]) -> None:
    answer = find_game(scenario["game"]).judge(scenario, scenario_dice(scenario))
    answer = json.loads(json.dumps(answer))
    assert not subset_mismatches(expected, answer), subset_mismatches(expected, answer)
