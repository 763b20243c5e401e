"""Every scenario in docs/scenarios/hex_skirmish.md gives its documented answer."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from rules.engine import find_game
from tests.scenario_docs import DOCS, examples, subset_mismatches

EXAMPLES = examples(DOCS / "hex_skirmish.md")


def test_hex_skirmish_doc_has_an_example_of_every_kind() -> None:
    kinds = {(s["question"] if "question" in s else s["action"])["kind"] for _, s, _ in EXAMPLES}
    assert kinds == {"reachable", "initiative", "choose", "move", "attack", "end_turn"}


@pytest.mark.parametrize("title,scenario,expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_hex_skirmish_documented_scenario(title: str, scenario: dict[str, Any], expected: dict[str, Any]) -> None:
    rng = random.Random(scenario["seed"]) if "seed" in scenario else None  # as `tablesight judge` does
    answer = find_game(scenario["game"]).judge(scenario, rng)
    answer = json.loads(json.dumps(answer))
    assert not subset_mismatches(expected, answer), subset_mismatches(expected, answer)
