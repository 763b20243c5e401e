"""The terrain editor: its page, the current terrain as JSON, and saving an edited terrain."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from rules.terrain import KINDS
from webui.deps import RuntimeDep, page
from webui.json_body import json_body

router = APIRouter()


@router.get("/terrain")
def terrain_page(request: Request) -> Response:
    return page(request, "terrain.html", "terrain", kinds=sorted(KINDS))


@router.get("/api/terrain")
def get_terrain(runtime: RuntimeDep) -> dict[str, Any]:
    with runtime.setup.lock:
        return runtime.setup.terrain_json()


@router.put("/api/terrain")
async def put_terrain(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """Replace the table's terrain ({"pieces": [...]}, rules/terrain.py), save it, and use it from the next frame."""
    obj = await json_body(request, "The terrain")
    pieces = runtime.set_terrain(obj)
    return {"saved": True, "pieces": len(pieces)}
