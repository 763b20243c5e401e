"""The help page: from the printed tags to the first ruled move, in six short steps."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from webui.deps import page

router = APIRouter()


@router.get("/help")
def help_page(request: Request) -> Response:
    return page(request, "help.html", "help")
