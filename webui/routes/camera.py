"""The phone as the camera: the /camera page a phone opens, the WebSocket its frames come in on, and the QR code
of its address for the live page.

The WebSocket (/ws/camera) carries, from the phone, one binary message per frame (a JPEG; the n-th is the
phone's frame n, from 0, on that connection) and small JSON texts ({"type": "visibility", "hidden": true}); to
the phone, JSON texts: {"type": "measured", "seq": n, ...} when the live loop has measured frame n (the anchors
found in it, how long the server held it, the loop's status), {"type": "refused" | "replaced", "message": ...}.
The same Host, Origin and token checks guard it as every other request (webui/security.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response

from calibration.decode import ImageTooLarge, check_pixels, too_large_sentence
from calibration.errors import InputError
from calibration.json_input import parse_json
from session.phone_feed import Measured
from webui.deps import RuntimeDep, SettingsDep, page
from webui.https import qr_svg

router = APIRouter()

NOT_THE_SOURCE = ("This server's camera is the {kind}, not a phone; start it with tablesight serve --host 0.0.0.0 "
                  "--https (or --phone) to make this phone the camera.")
REPLACED = "Another phone (or this page in another tab) is now the camera; press Start here to take over again."


def camera_address(request: Request, settings: Any) -> str:
    """The /camera address a phone opens: the one `serve` worked out (LAN address, token), else this request's."""
    if settings.camera_address:
        return str(settings.camera_address)
    address = str(request.base_url).rstrip("/") + "/camera"
    return address + (f"?token={settings.token}" if settings.token else "")


@router.get("/camera")
def camera_page(request: Request, runtime: RuntimeDep, settings: SettingsDep) -> Response:
    streaming = runtime.phone is not None
    return page(request, "camera.html", "camera", streaming=streaming,
                refusal="" if streaming else NOT_THE_SOURCE.format(kind=source_words(settings.source_kind)))


@router.get("/api/camera/qr.svg")
def camera_qr(request: Request, settings: SettingsDep) -> Response:
    """The QR code of the phone's /camera address (with the token), for the live page."""
    return Response(qr_svg(camera_address(request, settings)), media_type="image/svg+xml",
                    headers={"Cache-Control": "no-store"})


@router.get("/api/camera")
def camera_state(request: Request, runtime: RuntimeDep, settings: SettingsDep) -> dict[str, Any]:
    """Whether the phone is the camera, its address, the certificate's fingerprint and the phone's counts."""
    return {
        "source": settings.source_kind,
        "phone": runtime.phone.state() if runtime.phone is not None else None,
        "address": camera_address(request, settings),
        "https": settings.https,
        "cert_sha256": settings.cert_sha256,
    }


def source_words(kind: str) -> str:
    """A source kind as a player says it ("webcam", "video file" ...)."""
    return {"sample": "bundled sample session", "camera": "webcam", "video": "video file",
            "replay": "recorded session"}.get(kind, kind)


def measured_message(m: Measured, status: dict[str, Any], phone: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "measured",
        "seq": m.seq,
        "held_ms": round(m.held_ms, 1),
        "image_size": list(m.image_size),
        "anchors": [a.to_json() for a in m.anchors],
        "anchor_ids": list(m.anchor_ids),
        "tags": m.tags,
        "calibrated": m.calibrated,
        "status": status.get("status"),
        "message": status.get("message", ""),
        "fps": status.get("fps"),
        "recording": status.get("recording"),
        "skipped": phone.get("skipped"),
        "received": phone.get("received"),
    }


MAX_TEXT_CHARS = 1000
"""The longest text message the camera page sends ({"type": "visibility", ...} is 40); a longer one is ignored."""


def frame_refusal(data: bytes, limit: int, seq: int) -> str | None:
    """Why frame `seq` the phone sent cannot be measured, as the sentence the phone shows; None when it can be
    decoded. Only the header is read (calibration/decode.py's limits, before any decoding), on arrival, so the
    phone is told at once instead of the loop dropping the frame unseen."""
    if len(data) > limit:
        return (f"A frame of {len(data) / 1e6:.1f} MB is over the {limit / 1e6:.1f} MB the server takes; "
                "choose a smaller size.")
    not_jpeg = (f"Frame {seq} from the phone ({len(data)} bytes) is not a JPEG image; reload the camera page "
                "(it sends JPEG frames) and press Start.")
    if data[:2] != b"\xff\xd8":
        return not_jpeg
    try:
        size = check_pixels(data)  # a JPEG's header walk: no decoding, no Pillow
    except ImageTooLarge as err:
        return too_large_sentence(f"Frame {seq} from the phone", "choose a smaller camera size (e.g. 1920x1080)",
                                  err.size)
    return not_jpeg if size is None or min(size) <= 0 else None


@router.websocket("/ws/camera")
async def camera_socket(ws: WebSocket) -> None:
    runtime = ws.app.state.runtime
    settings = ws.app.state.settings
    phone = runtime.phone
    await ws.accept()
    if phone is None:
        await ws.send_text(json.dumps({"type": "refused",
                                       "message": NOT_THE_SOURCE.format(kind=source_words(settings.source_kind))}))
        await ws.close(code=4403)
        return
    connection = phone.connect()
    aio = asyncio.get_running_loop()
    news = asyncio.Event()
    newest: list[Measured] = []

    def heard(m: Measured) -> None:  # on the live loop's thread: hand over the newest, never block
        if m.connection == connection:
            newest[:] = [m]
            with contextlib.suppress(RuntimeError):  # the server's event loop has closed
                aio.call_soon_threadsafe(news.set)

    async def tell() -> None:
        while True:
            await news.wait()
            news.clear()
            if not newest:
                continue
            m = newest.pop()
            message = measured_message(m, runtime.live.status().to_json(), phone.state())
            await ws.send_text(json.dumps(message))

    stop_listening = phone.listen(heard)
    teller = asyncio.create_task(tell())
    seq = 0
    limit = settings.max_upload_bytes
    try:
        while True:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                break
            data = msg.get("bytes")
            if data is not None:
                refusal = frame_refusal(data, limit, seq)
                if refusal is not None:
                    phone.refuse(connection, refusal)
                    await ws.send_text(json.dumps({"type": "refused", "message": refusal}))
                    seq += 1
                    continue
                if not phone.push(connection, seq, data):
                    await ws.send_text(json.dumps({"type": "replaced", "message": REPLACED}))
                    await ws.close(code=4409)
                    break
                seq += 1
                continue
            try:  # the one JSON reader: a 100,000-deep text is refused, not a RecursionError
                said = parse_json((msg.get("text") or "")[:MAX_TEXT_CHARS + 1], "A camera page's message")
            except InputError:
                continue
            if isinstance(said, dict) and said.get("type") == "visibility":
                phone.set_hidden(connection, bool(said.get("hidden")))
    except WebSocketDisconnect:
        pass
    finally:
        stop_listening()
        phone.disconnect(connection)
        teller.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await teller
