"""Who may talk to the server and how much they may send: the Host and Origin checks, the access token and
the request-size limits.

All are plain ASGI middleware so that they guard WebSockets as well as HTTP. The token is accepted as
`?token=...`, an `Authorization: Bearer ...` header or the `tablesight_token` cookie (a page opened with
`?token=` sets the cookie, so its scripts, images and WebSockets carry it). A request without it gets 401
(a WebSocket is closed with code 1008 before it is accepted).

`SameOriginGuard` defeats other web sites: every request must name this server in its Host header (one of
`allowed_hosts`: a page on a DNS-rebinding name is refused, 400), an Origin header, when present, must be
the server's own (403; a WebSocket is closed with 1008), and a state change (POST, PUT, PATCH, DELETE) must
carry `X-Tablesight: 1`, a header a page on another origin cannot send without a CORS preflight this
server never grants (403).
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_COOKIE = "tablesight_token"
SAME_ORIGIN_HEADER = "x-tablesight"
"""The header every state change carries (value "1"): the pages' scripts add it; other sites cannot."""
STATE_CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


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
        ok = bool(given) and bool(self.token) and secrets.compare_digest(str(given).encode(), self.token.encode())
        if not ok:
            if scope["type"] == "websocket":
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 1008, "reason": "access token missing or wrong"})
                return
            detail = (
                "This Tablesight server needs its access token; open the address printed at start "
                "(it ends in ?token=...)."
                if not given
                else "The access token is wrong; open the address printed when the server started."
            )
            for m in _send_json(401, detail):
                await send(m)
            return
        if from_query and scope["type"] == "http":
            secure = "; Secure" if scope.get("scheme") == "https" else ""  # over HTTPS the cookie never goes in clear
            cookie = f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict{secure}".encode()

            async def send_with_cookie(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message = dict(message)
                    message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
                await send(message)

            await self.app(scope, receive, send_with_cookie)
            return
        await self.app(scope, receive, send)


class _TooLarge(HTTPException):
    """A body over its limit, raised from inside the app's receive: an HTTPException, so that a form parser
    which turns other errors into a 400 passes it on as the 413 it is."""

    def __init__(self, detail: str) -> None:
        super().__init__(413, detail)


FORM_OVERHEAD_BYTES = 16 * 1024
"""Room for a multipart form's boundaries and small fields beside its files."""


class BodyLimit:
    """Answer 413 to a request body over its route's limit: uploads to a path of `upload_limits` (a multipart
    form, or a picture posted as it is: content type image/...) get that many bytes, every other body (JSON, or a
    form posted elsewhere) `json_bytes`.

    A declared Content-Length over the limit is refused before anything is read; a body without one is
    counted as it arrives and refused when it passes the limit, so nothing over it is ever spooled to disk.
    """

    def __init__(self, app: ASGIApp, json_bytes: int, upload_limits: dict[str, int]) -> None:
        self.app = app
        self.json_bytes = json_bytes
        self.upload_limits = upload_limits

    def _limit(self, path: str, headers: dict[str, str]) -> tuple[int, str]:
        if headers.get("content-type", "").startswith(("multipart/", "image/")) and path in self.upload_limits:
            return self.upload_limits[path], "upload"
        return self.json_bytes, "request body"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        limit, what = self._limit(scope.get("path", ""), headers)
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
                    raise _TooLarge(message)
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


def _host_name(netloc: str) -> str:
    """The host of a Host header or an origin's netloc, lower case, without port or IPv6 brackets."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[1:netloc.find("]")] if "]" in netloc else netloc[1:]
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def allowed_hosts(host: str, extra: tuple[str, ...] = ()) -> tuple[frozenset[str], bool]:
    """The names a request may give in its Host header for a server started on `host`, and whether any IP
    address is allowed too (when bound to all interfaces: an address typed into the browser is no rebinding).

    Always the loopback names; the --host value; `extra` (--allow-host); bound to 0.0.0.0 or :: also this
    machine's host name, its fully qualified name and "<name>.local".
    """
    names = {*LOOPBACK_NAMES, _host_name(host), *(_host_name(e) for e in extra)}
    any_ip = host.strip("[]") in ("0.0.0.0", "::")
    if any_ip:
        hostname = socket.gethostname().lower()
        names |= {hostname, f"{hostname}.local", socket.getfqdn().lower()}
    return frozenset(n for n in names if n), any_ip


class SameOriginGuard:
    """Refuse requests another web site could have made: a foreign Host (400), a foreign Origin (403), a state
    change without `X-Tablesight: 1` (403); a WebSocket with a foreign Host or Origin is closed with 1008."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str], any_ip: bool = False) -> None:
        self.app = app
        self.hosts = hosts
        self.any_ip = any_ip

    def _known(self, name: str) -> bool:
        return name in self.hosts or (self.any_ip and _is_ip(name))

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, sentence) when the request must be refused, else None."""
        headers = _headers(scope)
        host = headers.get("host", "")
        if not self._known(_host_name(host)):
            return 400, (f"This Tablesight server does not answer to the name {host[:80]!r}; open it by the "
                         "address printed when it started (or start it with --allow-host for that name).")
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or parts.netloc.lower() != host.lower():
                return 403, (f"A page from {origin[:80]!r} may not use this Tablesight server; open Tablesight's "
                             "own pages instead.")
        if headers.get("sec-fetch-site") == "cross-site":
            # a browser says another site made this request (an <img> of the camera stream, a hidden frame):
            # nothing of the table is shown to another site, even where it could not read the pixels
            return 403, ("A page on another site may not show this Tablesight server's pictures or pages; open "
                         "Tablesight's own pages instead.")
        if scope["type"] == "http" and scope.get("method", "GET") in STATE_CHANGES \
                and headers.get(SAME_ORIGIN_HEADER) != "1":
            return 403, ("A change to the table must come from Tablesight's own pages; a script calling the API "
                         "sends the header X-Tablesight: 1.")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.refusal(scope)
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, detail = refused
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008, "reason": "Host or Origin is not this server"})
            return
        for m in _send_json(status, detail):
            await send(m)
