"""Replay: the recorded sessions in the sessions folder, a player page per session with a timeline of its
events, and play / pause / step / speed / seek. A session is played through the same pipeline as the camera."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from calibration.errors import InputError
from rules.engine import RulesInputError, find_game
from rules.terrain import terrain_to_json
from session.ask import ask_about
from session.report_jobs import ReportJobs
from session.session_list import listed_sessions
from webui.deps import RuntimeDep, page
from webui.routes.live import Question, Selection
from webui.streaming import mjpeg_response, websocket_feed

router = APIRouter()


class Control(BaseModel):
    """A player command: play, pause, step (one frame), seek (to `frame`) or speed (to `speed`)."""

    model_config = ConfigDict(extra="forbid")
    action: Literal["play", "pause", "step", "seek", "speed"]
    frame: int | None = Field(None, ge=0)
    speed: float | None = Field(None, ge=0.05, le=16)


@router.get("/replay")
def replay_list_page(request: Request, runtime: RuntimeDep) -> Response:
    every = listed_sessions(runtime.sessions_dir, runtime.sessions_kept)
    return page(request, "replay_list.html", "replay", sessions=[s for s in every if "error" not in s],
                unreadable=[s for s in every if "error" in s])


@router.get("/replay/{name}")
def replay_page(name: str, request: Request, runtime: RuntimeDep) -> Response:
    loop, setup = runtime.replay(name)
    try:
        game = find_game(setup.game).title if setup.game else ""
    except RulesInputError:
        game = setup.game or ""
    return page(request, "replay.html", "replay", session=name, game=game, ws_path=f"/ws/replay/{name}")


@router.get("/api/sessions")
def sessions(runtime: RuntimeDep) -> dict[str, Any]:
    """The playable sessions, and those that cannot be played ("unreadable": name and the sentence why)."""
    every = listed_sessions(runtime.sessions_dir, runtime.sessions_kept)
    return {"sessions": [{k: v for k, v in s.items() if k != "sorted_at"} for s in every if "error" not in s],
            "unreadable": [{"name": s["name"], "error": s["error"]} for s in every if "error" in s]}


@router.get("/api/replay/{name}")
def replay_info(name: str, runtime: RuntimeDep) -> dict[str, Any]:
    loop, setup = runtime.replay(name)
    return {"name": name, "game": setup.game, **loop.status().to_json(), "timeline": runtime.timeline(name).snapshot()}


@router.get("/api/replay/{name}/terrain")
def replay_terrain(name: str, runtime: RuntimeDep) -> dict[str, Any]:
    """The terrain session `name` is replayed on: its own (the recording's terrain file, or an edit of it recorded
    before the frame shown), never the live table's."""
    loop, setup = runtime.replay(name)
    pipe = loop.pipeline
    ruled = getattr(getattr(pipe, "inner", pipe), "terrain", None)  # an edited session's stage (session/setup_edits)
    if isinstance(ruled, tuple):
        return terrain_to_json(ruled)
    with setup.lock:
        return setup.terrain_json()


@router.get("/api/replay/{name}/setup")
def replay_setup(name: str, runtime: RuntimeDep) -> dict[str, Any]:
    """Session `name`'s own setup as `/api/setup` says the live table's: its game, board (inches) and roster (the
    units' names), and terrain."""
    _loop, setup = runtime.replay(name)
    with setup.lock:
        cal = setup.calibration
        return {
            "game": setup.game,
            "calibrated": cal is not None,
            "board": {"w": cal.board_in[0], "d": cal.board_in[1]} if cal is not None else None,
            "roster": setup.roster.to_json() if setup.roster is not None else None,
            "terrain": setup.terrain_json(),
        }


WAIT_STEP_S = 0.25
"""How often a request holding on for a report looks whether it is made, or its client gone (seconds)."""


@router.get("/api/replay/{name}/report/progress")
def replay_report_progress(name: str, request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """Start session `name`'s battle report if it is not made or being made, and say how far it is: the page asks
    every second while it shows the progress; a report nobody asks about for a while stops (session/report_jobs.py)."""
    jobs: ReportJobs = request.app.state.report_jobs
    return jobs.ask(name, runtime.session_path(name)).to_json()


@router.get("/api/replay/{name}/report.html")
async def replay_report(name: str, request: Request, runtime: RuntimeDep) -> Response:
    """The session's battle report (what `tablesight report` writes), as a file to save: made in the background
    (or kept from before) while this request holds on; a client that hangs up stops it unless others wait."""
    jobs: ReportJobs = request.app.state.report_jobs
    job = jobs.ask(name, runtime.session_path(name), waiting=True)
    try:
        while job.state == "making":
            if await request.is_disconnected():
                return Response(status_code=499)
            await asyncio.sleep(WAIT_STEP_S)
            jobs.wait(job, 0)  # still asking
    finally:
        jobs.wait(job, -1)
    if job.state == "failed":
        if job.status == 2:
            raise InputError(job.error)
        return JSONResponse({"detail": job.error}, status_code=500)  # said once, by the job, not as a traceback
    if job.state != "made":
        raise InputError(f"The battle report of {name} was stopped; ask for it again.")
    return Response(job.html, media_type="text/html; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}-report.html"'})


@router.post("/api/replay/{name}/control")
def replay_control(name: str, cmd: Control, runtime: RuntimeDep) -> dict[str, Any]:
    loop, _setup = runtime.replay(name)
    if cmd.action == "play":
        loop.play()
    elif cmd.action == "pause":
        loop.pause()
    elif cmd.action == "step":
        loop.step()
    elif cmd.action == "seek":
        if cmd.frame is None:
            raise InputError('A seek needs "frame": the frame number to go to.')
        loop.seek(cmd.frame)
    else:
        if cmd.speed is None:
            raise InputError('A speed change needs "speed", e.g. 0.5, 1 or 2.')
        loop.set_speed(cmd.speed)
    return loop.status().to_json()


@router.post("/api/replay/{name}/select")
def replay_select(name: str, choice: Selection, runtime: RuntimeDep) -> dict[str, Any]:
    loop, _setup = runtime.replay(name)
    loop.select(choice.unit, choice.page)
    return {"selected": choice.unit}


@router.post("/api/replay/{name}/ask")
def replay_ask(name: str, q: Question, runtime: RuntimeDep) -> dict[str, Any]:
    """Range, line of sight and the game's rulings between two units on the replay's shown frame."""
    loop, setup = runtime.replay(name)
    return ask_about(loop, setup, q.unit, q.target)


@router.get("/api/replay/{name}/stream.mjpg")
def replay_mjpeg(name: str, runtime: RuntimeDep) -> Response:
    loop, _setup = runtime.replay(name)
    return mjpeg_response(loop)


@router.websocket("/ws/replay/{name}")
async def replay_socket(ws: WebSocket, name: str) -> None:
    try:
        loop, _setup = ws.app.state.runtime.replay(name)
    except InputError as err:
        await ws.close(code=4404, reason=str(err)[:120])
        return
    await websocket_feed(ws, loop)
