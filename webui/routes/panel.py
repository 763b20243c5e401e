"""The game panel (`Game.panel`): where the game stands, what is left, each unit's state, the score and the winner,
for the live page and a replay. Fetched when the page sees a ruling or every few seconds, not with every frame."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from rules.engine import RulesInputError
from session.frame_message import side_colours
from webui.deps import RuntimeDep

router = APIRouter()


def panel_of(loop: Any, roster: Any) -> dict[str, Any]:
    """The panel of the game a frame loop rules, with the sides' page colours."""
    pipe = loop.pipeline
    game = pipe.game if pipe is not None else None
    state = pipe.state if pipe is not None else None
    if game is None or state is None:
        why = ("the table is not calibrated yet; calibrate it first" if pipe is None or not pipe.calibrated
               else f"{pipe.status}; choose a game and a roster it can start from")
        return {"game": None, "title": None, "panel": None, "message": f"No game is being ruled: {why}."}
    try:
        panel = game.panel(state, dict(pipe.positions)).to_json()
    except RulesInputError as err:
        return {"game": game.name, "title": game.title, "panel": None, "message": str(err)}
    return {"game": game.name, "title": game.title, "panel": panel, "message": "", "colours": side_colours(roster)}


@router.get("/api/live/panel")
def live_panel(runtime: RuntimeDep) -> dict[str, Any]:
    with runtime.setup.lock:
        roster = runtime.setup.roster
    return panel_of(runtime.live, roster)


@router.get("/api/replay/{name}/panel")
def replay_panel(name: str, runtime: RuntimeDep) -> dict[str, Any]:
    loop, setup = runtime.replay(name)
    return panel_of(loop, setup.roster)
