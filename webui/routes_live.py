"""The live table: its page, the frame stream (WebSocket or MJPEG), selection, questions, the game chooser."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict

from rules.engine import game_names
from webui.ask import ask_about
from webui.deps import RuntimeDep, page
from webui.streaming import mjpeg_response, websocket_feed

router = APIRouter()


class Selection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: int | None = None


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: int
    target: int


class GameChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    game: str


@router.get("/")
def live_page(request: Request, runtime: RuntimeDep) -> Response:
    return page(request, "live.html", "live", ws_path="/ws/live", source=runtime.settings.source_kind)


@router.websocket("/ws/live")
async def live_socket(ws: WebSocket) -> None:
    await websocket_feed(ws, ws.app.state.runtime.live)


@router.get("/api/live/stream.mjpg")
def live_mjpeg(runtime: RuntimeDep) -> Response:
    return mjpeg_response(runtime.live)


@router.get("/api/live/frame.jpg")
def live_frame(runtime: RuntimeDep) -> Response:
    item = runtime.live.broadcast.latest_frame
    if item is None or item.jpeg is None:
        return Response(b'{"detail": "No frame has arrived yet; wait a moment and try again."}', 503,
                        media_type="application/json")
    return Response(item.jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})


@router.get("/api/live/status")
def live_status(runtime: RuntimeDep) -> dict[str, Any]:
    return runtime.live.status().to_json()


@router.get("/api/live/events")
def live_events(runtime: RuntimeDep, since: int = -1) -> dict[str, Any]:
    events = [e for e in list(runtime.live.events) if int(e.get("frame", 0)) > since]
    return {"events": events[-500:]}


@router.post("/api/live/select")
def live_select(choice: Selection, runtime: RuntimeDep) -> dict[str, Any]:
    runtime.live.select(choice.unit)
    return {"selected": choice.unit}


@router.post("/api/live/ask")
def live_ask(q: Question, runtime: RuntimeDep) -> dict[str, Any]:
    return ask_about(runtime.live, runtime.setup, q.unit, q.target)


@router.get("/api/setup")
def setup_state(runtime: RuntimeDep) -> dict[str, Any]:
    s = runtime.setup
    with s.lock:
        cal = s.calibration
        return {
            "game": s.game,
            "games": game_names(),
            "calibrated": cal is not None,
            "board": {"w": cal.board_in[0], "d": cal.board_in[1]} if cal is not None else None,
            "residual_in": float(cal.residual_in) if cal is not None else None,
            "roster": s.roster.to_json() if s.roster is not None else None,
            "terrain": s.terrain_json(),
        }


@router.get("/api/games")
def games() -> dict[str, Any]:
    return {"games": game_names()}


@router.post("/api/live/game")
def choose_game(choice: GameChoice, runtime: RuntimeDep) -> dict[str, Any]:
    return {"game": runtime.set_game(choice.game)}
