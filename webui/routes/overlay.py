"""The streaming overlay: `/overlay`, a page for OBS's browser source (transparent, measurements and verdict
cards only; `?camera=1` puts them on the camera picture), and `/api/live/overlay.mjpg`, the same drawn by the
server into an MJPEG stream for tools that take a video. Both take `layers=bases,rings,...` (see
`session.overlay_image.LAYERS`)."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from session.broadcast import Published
from session.overlay_image import LAYERS, overlay_jpeg, parse_layers
from session.overlay_pictures import OverlayPictures
from webui.deps import RuntimeDep, page
from webui.streaming import BOUNDARY

router = APIRouter()

SCALE = (1.6, 0.5, 4.0)
"""The overlay's scale: default, least and most (1.6 reads across a room at 1080p)."""
SECONDS = (10.0, 1.0, 120.0)
"""How long a verdict card stays, seconds: default, least and most."""
YES, NO = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


class BadAddress(ValueError):
    """A value in the overlay's address that it cannot take; the message is one sentence with the fix."""


def _number(text: str | None, name: str, what: str, limits: tuple[float, float, float]) -> float:
    """The address's `name`=text as a number within `limits` (default, least, most)."""
    default, lo, hi = limits
    if text is None or text.strip() == "":
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not lo <= value <= hi:
        raise BadAddress(f"The overlay's {what} {text[:40]!r} is not a number from {lo:g} to {hi:g}; put e.g. "
                         f"{name}={default:g} in its address.")
    return value


def _camera(text: str | None) -> bool:
    """camera=1 puts the overlay on the camera picture; camera=0 (or none) leaves it transparent."""
    word = (text or "").strip().lower()
    if word in YES or word in NO:
        return word in YES
    raise BadAddress(f"The overlay's camera {(text or '')[:40]!r} is neither 1 nor 0; put camera=1 in its address for the "
                     "camera picture under the overlays, or leave camera out for a transparent page.")


def _layers(text: str | None) -> tuple[str, ...]:
    try:
        return parse_layers(text)
    except ValueError as err:
        raise BadAddress(str(err)) from None


def _refused(request: Request, err: BadAddress) -> Response:
    """The sentence as a page when a browser asks (OBS, a player typing the address), else as JSON."""
    if "text/html" in request.headers.get("accept", ""):
        response = page(request, "overlay_error.html", "overlay", sentence=str(err), all_layers=LAYERS)
        response.status_code = 422
        return response
    return JSONResponse({"detail": str(err)}, status_code=422)


@router.get("/overlay")
def overlay_page(request: Request, camera: str | None = None, layers: str | None = None, scale: str | None = None,
                 seconds: str | None = None) -> Response:
    """The overlay page; `scale` (0.5-4, default 1.6) sizes its text and lines, verdict cards fade after `seconds`
    (1-120, default 10)."""
    try:
        chosen = _layers(layers)
        on_camera = _camera(camera)
        size = _number(scale, "scale", "scale", SCALE)
        fade = _number(seconds, "seconds", "time a verdict card stays (seconds)", SECONDS)
    except BadAddress as err:
        return _refused(request, err)
    return page(request, "overlay.html", "overlay", camera=on_camera, layers=list(chosen), scale=size,
                seconds=fade, all_layers=LAYERS)


@router.get("/api/live/overlay.mjpg")
async def overlay_mjpeg(request: Request, runtime: RuntimeDep, camera: str | None = "1", layers: str | None = None,
                  scale: str | None = None) -> Response:
    """multipart/x-mixed-replace of the live frames with the overlays drawn in (camera=0: on pure green)."""
    try:
        chosen = _layers(layers)
        on_camera = _camera(camera)
        size = _number(scale, "scale", "scale", SCALE)
    except BadAddress as err:
        return _refused(request, err)
    loop = runtime.live

    pictures: OverlayPictures = request.app.state.overlay_pictures
    kind = (loop.broadcast, tuple(sorted(chosen)), on_camera, size)

    async def parts() -> AsyncIterator[bytes]:
        async for item in loop.broadcast.watch(frames_only=True):
            def draw(item: Published = item) -> bytes:
                msg = json.loads(item.text)
                return overlay_jpeg(item.jpeg, msg.get("image_shapes") or [], msg.get("image_size") or (), chosen,
                                    on_camera, size)

            # drawn once a frame for every client asking the same: a slow client only skips to the newest
            jpeg = await pictures.picture(kind, item.seq, draw, run_in_threadpool)
            head = f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
            yield head.encode() + jpeg + b"\r\n"

    return StreamingResponse(parts(), media_type=f"multipart/x-mixed-replace; boundary={BOUNDARY}",
                             headers={"Cache-Control": "no-store"})
