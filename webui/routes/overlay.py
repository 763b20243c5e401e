"""The streaming overlay: `/overlay`, a page for OBS's browser source (transparent, measurements and verdict
cards only; `?camera=1` puts them on the camera picture), and `/api/live/overlay.mjpg`, the same drawn by the
server into an MJPEG stream for tools that take a video. Both take `layers=bases,rings,...` (see
`session.overlay_image.LAYERS`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from session.overlay_image import LAYERS, overlay_jpeg, parse_layers
from webui.deps import RuntimeDep, page
from webui.streaming import BOUNDARY

router = APIRouter()


def _layers(text: str | None) -> tuple[str, ...]:
    try:
        return parse_layers(text)
    except ValueError as err:
        raise HTTPException(422, str(err)) from None


@router.get("/overlay")
def overlay_page(request: Request, camera: bool = False, layers: str | None = None,
                 scale: float = Query(1.6, ge=0.5, le=4.0),
                 seconds: float = Query(10.0, ge=1.0, le=120.0)) -> Response:
    """The overlay page; scale 1.6 reads across a room at 1080p; verdict cards fade after `seconds`."""
    return page(request, "overlay.html", "overlay", camera=camera, layers=list(_layers(layers)), scale=scale,
                seconds=seconds, all_layers=LAYERS)


@router.get("/api/live/overlay.mjpg")
def overlay_mjpeg(runtime: RuntimeDep, camera: bool = True, layers: str | None = None,
                  scale: float = Query(1.6, ge=0.5, le=4.0)) -> Response:
    """multipart/x-mixed-replace of the live frames with the overlays drawn in (camera=0: on pure green)."""
    chosen = _layers(layers)
    loop = runtime.live

    async def parts() -> AsyncIterator[bytes]:
        async for item in loop.broadcast.watch(frames_only=True):
            msg = json.loads(item.text)
            jpeg = await run_in_threadpool(overlay_jpeg, item.jpeg, msg.get("image_shapes") or [],
                                           msg.get("image_size") or (), chosen, camera, scale)
            head = f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
            yield head.encode() + jpeg + b"\r\n"

    return StreamingResponse(parts(), media_type=f"multipart/x-mixed-replace; boundary={BOUNDARY}",
                             headers={"Cache-Control": "no-store"})
