"""Which roster edits carry the running game on (session/carry.py `restart_reason`), on the examples' rosters: a
rename, a measured mount and who rolls the dice keep the game; another owner, profile or base, tags added or
removed and another game start it afresh, each said in words with the games as their rule books spell them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from rules.roster import parse_roster
from session.carry import restart_reason

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rosters"


def _roster(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _why(old: dict[str, Any], new: dict[str, Any]) -> str:
    return restart_reason(parse_roster(old), parse_roster(new))


def test_names_mounts_and_who_rolls_keep_the_game() -> None:
    old = _roster("valknut")
    new = copy.deepcopy(old)
    new["units"][0]["name"] = "Astrid"
    new["units"][1]["tag_in"] = 0.8
    new["roll_for_us"] = True  # the players let Tablesight roll from now on: the game goes on
    assert _why(old, new) == ""
    assert _why(new, {**new, "roll_for_us": False}) == ""


def test_units_and_games_that_differ_start_afresh_and_say_why() -> None:
    old = _roster("valknut")
    owner = copy.deepcopy(old)
    owner["units"][0]["owner"] = "blue"
    assert _why(old, owner) == "it changes the profile, owner or base of Red 1"
    fewer = {**old, "units": old["units"][1:]}
    assert _why(old, fewer) == "it removes tag 10"
    assert _why(old, _roster("hex_skirmish")) == "it is for another game (Hex Skirmish, not Valknut: Skirmish Game)"


def test_a_changed_rule_option_is_named_with_its_values() -> None:
    """A rule option changed mid-game starts the game afresh, and the question names it (it said only "the game's own
    settings")."""
    old = _roster("valknut")
    new = copy.deepcopy(old)
    new.setdefault("options", {})["turn_limit"] = 8
    assert _why(old, new) == "it changes the game's own settings (Turn limit 6 to 8)"  # its default, 6, when not set
