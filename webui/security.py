"""Who may talk to the server and how much they may send: the access token and the request-size limit.

Both are plain ASGI middleware so that they guard WebSockets as well as HTTP. The token is accepted as
`?token=...`, an `Authorization: Bearer ...` header or the `tablesight_token` cookie (a page opened with
`?token=` sets the cookie, so its scripts, images and WebSockets carry it). A request without it gets 401
(a WebSocket is closed with code 1008 before it is accepted).
"""

from __future__ import annotations

import json
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_COOKIE = "tablesight_token"


def _send_json(status: int, detail: str) -> list[Message]:
    body = json.dumps({"detail": detail}).encode()
    return [
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        },
        {"type": "http.response.body", "body": body},
    ]


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def presented_token(scope: Scope) -> tuple[str | None, bool]:
    """The token a request carries and whether it came in the query string (then the page sets the cookie)."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if query.get("token"):
        return query["token"][0], True
    headers = _headers(scope)
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip(), False
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001 - a garbled cookie header is simply no token
        return None, False
    morsel = cookie.get(TOKEN_COOKIE)
    return (morsel.value if morsel else None), False


class TokenGuard:
    """Refuse every HTTP and WebSocket request that does not carry `token` (no check when token is None)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given, from_query = presented_token(scope)
        ok = given is not None and secrets.compare_digest(given.encode(), self.token.encode())
        if not ok:
            if scope["type"] == "websocket":
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 1008, "reason": "access token missing or wrong"})
                return
            detail = (
                "This Tablesight server needs its access token; open the address printed at start "
                "(it ends in ?token=...)."
                if given is None
                else "The access token is wrong; open the address printed when the server started."
            )
            for m in _send_json(401, detail):
                await send(m)
            return
        if from_query and scope["type"] == "http":
            cookie = f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode()

            async def send_with_cookie(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message = dict(message)
                    message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
                await send(message)

            await self.app(scope, receive, send_with_cookie)
            return
        await self.app(scope, receive, send)


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Answer 413 to a request body over the limit: JSON bodies `json_bytes`, multipart uploads `upload_bytes`.

    A declared Content-Length over the limit is refused before anything is read; a body without one is
    counted as it arrives and refused when it passes the limit.
    """

    def __init__(self, app: ASGIApp, json_bytes: int, upload_bytes: int) -> None:
        self.app = app
        self.json_bytes = json_bytes
        self.upload_bytes = upload_bytes

    def _limit(self, headers: dict[str, str]) -> tuple[int, str]:
        if headers.get("content-type", "").startswith("multipart/"):
            return self.upload_bytes, "upload"
        return self.json_bytes, "request body"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        limit, what = self._limit(headers)
        message = f"The {what} is larger than the server accepts ({limit / 1e6:.1f} MB); send a smaller one."
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            for m in _send_json(413, message):
                await send(m)
            return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    raise _TooLarge()
            return msg

        async def tracking_send(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not started:
                for m in _send_json(413, message):
                    await send(m)
        except Exception as err:  # starlette may wrap our exception while parsing a form
            if _caused_by_too_large(err) and not started:
                for m in _send_json(413, message):
                    await send(m)
            else:
                raise


def _caused_by_too_large(err: BaseException | None) -> bool:
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, _TooLarge):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False
