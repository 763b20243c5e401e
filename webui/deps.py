"""Typed dependencies the routers share: the running `Runtime`, the settings and the page templates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from session.runtime import Runtime
from session.settings import Settings

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).resolve().parent / "templates"))


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


def page(request: Request, name: str, active: str, **context: Any) -> Response:
    """A page rendered from `templates/<name>` with the navigation bar's active entry."""
    return TEMPLATES.TemplateResponse(request=request, name=name, context={"active": active, **context})
