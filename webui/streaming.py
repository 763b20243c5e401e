"""Sending a loop's broadcast to browsers: a WebSocket (JSON text, then the JPEG as binary) or MJPEG.

Each watcher sends the shared bytes the loop made once; a slow watcher skips frames (latest wins).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

from fastapi import WebSocket, WebSocketDisconnect
from fastapi.responses import StreamingResponse

from session.broadcast import View
from session.live_loop import LiveLoop

BOUNDARY = "tablesightframe"


async def websocket_feed(ws: WebSocket, loop: LiveLoop) -> None:
    """Accept `ws` and send every newest item: the JSON text first, then (for a frame) its JPEG bytes. The page
    may say how wide it shows the picture ({"type": "view", "width": px}): pictures are then sent no wider than
    the widest page shows them."""
    await ws.accept()
    view = View()

    async def pump() -> None:
        async for item in loop.broadcast.watch(view=view):
            await ws.send_text(item.text)
            if item.jpeg is not None:
                await ws.send_bytes(item.jpeg)

    task = asyncio.create_task(pump())
    try:
        while True:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                break
            view.width = _view_width(msg.get("text"), view.width)
    except WebSocketDisconnect:
        pass
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


def _view_width(text: str | None, before: int | None) -> int | None:
    """The picture width (px) a page's {"type": "view", "width": px} says; anything else leaves `before`."""
    try:
        said = json.loads(text) if text else None
    except ValueError:
        return before
    if isinstance(said, dict) and said.get("type") == "view":
        width = said.get("width")
        if isinstance(width, int | float) and not isinstance(width, bool) and 0 < width < 100_000:
            return int(width)
    return before


def mjpeg_response(loop: LiveLoop) -> StreamingResponse:
    """multipart/x-mixed-replace of the loop's frames, for an <img> tag or a video player."""

    async def parts() -> AsyncIterator[bytes]:
        async for item in loop.broadcast.watch(frames_only=True):
            assert item.jpeg is not None
            head = f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(item.jpeg)}\r\n\r\n"
            yield head.encode() + item.jpeg + b"\r\n"

    return StreamingResponse(
        parts(),
        media_type=f"multipart/x-mixed-replace; boundary={BOUNDARY}",
        headers={"Cache-Control": "no-store"},
    )
