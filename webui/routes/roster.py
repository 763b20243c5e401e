"""The roster editor: tag id -> unit and profile; the game checks the army (e.g. Valyr's appraisal, a Magni
team rating) when the game offers such a report."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from rules.engine import find_game
from rules.roster import Roster, parse_roster
from webui.deps import RuntimeDep, page
from webui.json_body import json_body

router = APIRouter()


def army_report(roster: Roster, raw: dict[str, Any]) -> dict[str, Any]:
    """The game's own check of the army: a game must start from the roster file (its `new_state` raises
    RulesInputError naming what it cannot use, e.g. a Valyr army over its appraisal limit), plus the
    game's `army_verdicts(state)` (Valyr's appraisal, a Magni team rating) when it offers them."""
    game = find_game(roster.game)
    state = game.new_state(raw)
    report: dict[str, Any] = {"game": game.name, "title": getattr(game, "title", game.name)}
    check = getattr(game, "army_verdicts", None)
    verdicts = [v.to_json() for v in check(state)] if callable(check) else []
    report["verdicts"] = verdicts
    report["legal"] = all(v["outcome"] != "illegal" for v in verdicts)
    return report


@router.get("/roster")
def roster_page(request: Request) -> Response:
    return page(request, "roster.html", "roster")


@router.get("/api/roster")
def get_roster(runtime: RuntimeDep) -> dict[str, Any]:
    with runtime.setup.lock:
        roster = runtime.setup.roster
    return {"roster": roster.to_json() if roster is not None else None}


@router.post("/api/roster/check")
async def check_roster(request: Request) -> dict[str, Any]:
    """Validate a roster without saving it: the units, then the game's army rules."""
    raw = await json_body(request, "The roster")
    roster = parse_roster(raw)
    return {"ok": True, "units": len(roster.units), "owners": roster.owners(), "army": army_report(roster, raw)}


@router.put("/api/roster")
async def put_roster(request: Request, runtime: RuntimeDep, restart: bool = False) -> dict[str, Any]:
    """Validate, save and use a roster (its "game" becomes the live game). A rename keeps the game going; a
    change of units that would start it afresh is refused (409) unless `restart`."""
    raw = await json_body(request, "The roster")
    roster = parse_roster(raw)
    report = army_report(roster, raw)
    goes_on = runtime.set_roster(raw, restart)
    # "game_goes_on": a game was in progress and carries on with this roster (a page may offer a new game instead)
    return {"saved": True, "units": len(roster.units), "owners": roster.owners(), "army": report,
            "game_goes_on": goes_on}
