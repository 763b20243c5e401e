"""The FastAPI application: `create_app(settings)` assembles the routers, the guards and the start-up.

Nothing is opened at import: the camera or recording, the setup files and the frame loop are opened in
the lifespan and closed when the server stops. Domain errors become HTTP errors here, once: a user's
mistake (InputError, RulesInputError) is 400 with one sentence (404 for a session that does not exist),
a body that does not match its model is 422 with one sentence naming the field.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from calibration.errors import InputError
from calibration.json_input import parse_json
from rules.engine import RulesInputError, UnknownGame
from session.heap import settle
from session.overlay_pictures import OverlayPictures
from session.paths import NoSuchSession
from session.report_jobs import REPORTS_FOLDER, ReportJobs, make_report_html
from session.runtime import GameWouldRestart, Runtime
from session.settings import Settings
from webui.routes import board as routes_board
from webui.routes import calibration as routes_calibration
from webui.routes import camera as routes_camera
from webui.routes import dice as routes_dice
from webui.routes import downloads as routes_downloads
from webui.routes import help as routes_help
from webui.routes import live as routes_live
from webui.routes import overlay as routes_overlay
from webui.routes import panel as routes_panel
from webui.routes import replay as routes_replay
from webui.routes import roster as routes_roster
from webui.routes import setup as routes_setup
from webui.routes import terrain as routes_terrain
from webui.security import FORM_OVERHEAD_BYTES, BodyLimit, SameOriginGuard, TokenGuard, allowed_hosts
from webui.words import FIELD_WORDS, field_limits, page_words

STATIC_DIR = Path(__file__).resolve().parent / "static"
UVICORN_OPTIONS: dict[str, Any] = {"ws_per_message_deflate": False, "log_level": "warning"}
"""How every Tablesight server runs (serve, tests, bench): no WebSocket compression, since JPEG frames do not
shrink and deflating them for every watcher cost ~3.7 ms of CPU per watcher per frame (measured)."""


def _one_sentence(err: RequestValidationError) -> str:
    first = err.errors()[0] if err.errors() else {}
    if first.get("type") == "json_invalid":
        at = next((p for p in first.get("loc", ()) if isinstance(p, int)), None)
        where = f" (at character {at})" if at is not None else ""
        return f"The request body is not valid JSON{where}; send one JSON object."
    if first.get("type") == "missing" and tuple(first.get("loc", ())) == ("body",):
        return "The request has no JSON body; send one JSON object with the fields asked for."
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query")]
    if len(loc) == 1 and loc[0] in FIELD_WORDS:
        words, value = FIELD_WORDS[loc[0]], first.get("input")
        return f"{words[:1].upper() + words[1:]} {value!s} is not {field_limits(first)}; correct it and try again."
    where = ".".join(loc) or "the request"
    msg = str(first.get("msg", "is not valid"))
    return f"{where}: {msg[0].lower() + msg[1:] if msg else 'is not valid'}; fix that field and send it again."


def create_app(settings: Settings) -> FastAPI:
    """The web UI for `settings` (see Settings); the frame loop starts when the app starts serving."""
    settings = settings.with_defaults()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = Runtime(settings)
        app.state.runtime = runtime
        settle()  # what the server made to start is kept out of the collector's full sweeps
        runtime.start()
        try:
            yield
        finally:
            runtime.stop()

    app = FastAPI(title="Tablesight", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.settings = settings
    app.state.overlay_pictures = OverlayPictures()  # overlay.mjpg's pictures, drawn once a frame for all
    app.state.report_jobs = ReportJobs(settings.sessions_dir / REPORTS_FOLDER, make_report_html)

    @app.exception_handler(NoSuchSession)
    async def _no_session(request: Request, err: NoSuchSession) -> JSONResponse:
        return JSONResponse({"detail": page_words(str(err))}, status_code=404)

    @app.exception_handler(UnknownGame)
    async def _unknown_game(request: Request, err: UnknownGame) -> JSONResponse:
        return JSONResponse({"detail": page_words(str(err))}, status_code=400)

    @app.exception_handler(GameWouldRestart)
    async def _would_restart(request: Request, err: GameWouldRestart) -> JSONResponse:
        return JSONResponse({"detail": page_words(str(err)), "restart": True}, status_code=409)

    @app.exception_handler(InputError)
    async def _input(request: Request, err: InputError) -> JSONResponse:
        return JSONResponse({"detail": page_words(str(err))}, status_code=400)

    @app.exception_handler(RulesInputError)
    async def _rules_input(request: Request, err: RulesInputError) -> JSONResponse:
        return JSONResponse({"detail": page_words(str(err))}, status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, err: StarletteHTTPException) -> Response:
        if err.status_code == 400 and err.detail == "There was an error parsing the body":
            # FastAPI's own parser gave up (nested too deep, a number too long ...): our reader says which
            try:
                parse_json(await request.body(), "The request body", "send one JSON object")
            except InputError as bad:
                return JSONResponse({"detail": str(bad)}, status_code=400)
            return JSONResponse({"detail": "The request body cannot be read; send one JSON object."}, status_code=400)
        return await http_exception_handler(request, err)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, err: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _one_sentence(err)}, status_code=422)

    for module in (
        routes_live,
        routes_calibration,
        routes_terrain,
        routes_roster,
        routes_setup,
        routes_replay,
        routes_downloads,
        routes_overlay,
        routes_help,
        routes_camera,
        routes_board,
        routes_panel,
        routes_dice,
    ):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.add_middleware(
        BodyLimit,
        json_bytes=settings.max_json_bytes,
        upload_limits={
            "/api/calibration/table": settings.max_upload_bytes + FORM_OVERHEAD_BYTES,
            "/api/live/dice/photo": settings.max_upload_bytes,  # a phone's full photo, posted as it is
            "/api/calibration/camera": min(settings.max_camera_upload_bytes,
                                           settings.max_upload_bytes * settings.max_uploads) + FORM_OVERHEAD_BYTES,
        },
    )
    app.add_middleware(TokenGuard, token=settings.token)
    hosts, any_ip = allowed_hosts(settings.host, settings.allowed_hosts)
    app.add_middleware(SameOriginGuard, hosts=hosts, any_ip=any_ip)
    return app
