"""Answer one rules question from a scenario file, without a camera (see docs/scenarios/)."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from calibration.errors import InputError
from calibration.json_input import read_json_file
from rules.engine import ScenarioError, find_game


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", metavar="SCENARIO.json", help="a scenario: game, board, units, state and one action")
    p.add_argument("--json", action="store_true", help="print the answer as JSON (the default prints a summary)")


def load_scenario(path: Path) -> dict:
    """The scenario object from `path`; one plain sentence for a missing file or bad JSON."""
    if path.suffix.lower() == ".md":
        raise InputError(f"{path} is a rules document with worked examples, not a scenario; every example in it is "
                         f"a file under examples/scenarios/{path.stem}/, e.g. tablesight judge "
                         f"examples/scenarios/{path.stem}/01-*.json.")
    obj = read_json_file(path, "Scenario file", "give a scenario JSON file")
    if not isinstance(obj, dict):
        raise ScenarioError(f"Scenario file {path} must hold one JSON object with a \"game\".")
    if not isinstance(obj.get("game"), str):
        raise ScenarioError(f'Scenario file {path} names no "game"; add e.g. "game": "valknut".')
    return obj


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(Path(args.scenario))
    game = find_game(scenario["game"])
    answer = game.judge(scenario, scenario_dice(scenario))
    if args.json:
        print(json.dumps(answer, sort_keys=True, allow_nan=False))
    else:
        print(f"{answer.get('game')}: {answer.get('action')}: {answer.get('outcome')}")
        for v in answer.get("verdicts", []):
            print(f"  [{v['outcome']}] {v['message']}")
        if answer.get("winner"):
            print(f"  winner: {answer['winner']}")
    return 0


def scenario_dice(scenario: dict) -> random.Random | None:
    """The generator for the dice a scenario does not give: its "seed" rolls them (docs/scenarios/); with no seed
    the faces are the players' to give (an action's "rolls"), and a roll missing is answered as waiting for it."""
    seed = scenario.get("seed")
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScenarioError(f'"seed" must be a whole number; got {seed!r}.')
    return random.Random(seed)
