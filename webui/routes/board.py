"""The hex board under the table, for the pages to draw: fetched once for each change of game, board or
calibration (a frame's "grid_key" says when), not sent with every frame. See session/board_grid.py."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from session.board_grid import board_grid
from webui.deps import RuntimeDep

router = APIRouter()


def _grid_of(loop: Any) -> dict[str, Any]:
    """The grid of the game a frame loop rules, projected with the calibration of the frame it showed last."""
    pipe = loop.pipeline
    result = loop.latest_result
    return board_grid(pipe.game if pipe is not None else None, pipe.state if pipe is not None else None,
                      result.calibration if result is not None else None)


@router.get("/api/live/board")
def live_board(runtime: RuntimeDep) -> dict[str, Any]:
    return _grid_of(runtime.live)


@router.get("/api/replay/{name}/board")
def replay_board(name: str, runtime: RuntimeDep) -> dict[str, Any]:
    loop, _setup = runtime.replay(name)
    return _grid_of(loop)
