"""Every example in docs/scenarios/valknut.md, judged by the registered game with the dice as `tablesight judge`
takes them (a "seed" rolls the faces not given; without one the answer waits), gives its documented answer."""

from __future__ import annotations

from typing import Any

import pytest

from rules.engine import find_game
from tests.scenario_docs import DOCS, examples, subset_mismatches
from webui.commands.judge import scenario_dice

EXAMPLES = examples(DOCS / "valknut.md")


def test_valknut_documents_every_action_and_question() -> None:
    kinds = {s["action"]["kind"] for _, s, _ in EXAMPLES if "action" in s}
    questions = {s["question"]["kind"] for _, s, _ in EXAMPLES if "question" in s}
    assert kinds == {
        "move", "disengage", "attack", "pick_up_runestone", "end_activation", "choose_path", "assign_spirits",
        "bear_restore", "redeploy", "deploy", "choose_drop_zone", "place_stockpile", "roll_off", "choose_penalty",
        "drop_runestone",
    }
    assert questions == {"sight", "engagement", "to_hit", "stats", "section", "score", "legal_actions"}


@pytest.mark.parametrize("title,scenario,expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_valknut_documented_scenario(title: str, scenario: dict[str, Any], expected: dict[str, Any]) -> None:
    answer = find_game("valknut").judge(scenario, scenario_dice(scenario))
    problems = subset_mismatches(expected, answer)
    assert not problems, problems
