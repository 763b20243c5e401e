"""Open the web UI: the live table, calibration, terrain, rosters and replay in a browser.

With no source it plays the bundled sample session. It listens on 127.0.0.1:8000; any other --host needs
an access token, which is made up and printed at start (or give one with --token).

--phone makes a phone the camera: its browser opens /camera and streams to the server. A phone's browser gives
its camera only to a secure page, so on a network --https serves TLS with a self-signed certificate made once
in the setup folder (webui/https.py) and prints the phone's address as a QR code with the certificate's
fingerprint; --https with no other source means the phone (that is what it is for). Loopback stays plain HTTP:
a browser on this machine trusts http://127.0.0.1.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import re
import socket
from pathlib import Path

from calibration.errors import InputError
from session.settings import Settings, SourceKind, is_loopback
from webui.https import (
    BROWSER_WARNING,
    ServerCertificate,
    ensure_certificate,
    machine_addresses,
    machine_names,
    phone_host,
    qr_terminal,
)


def configure(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--camera", metavar="N|URL", help="a camera index (0 = first webcam) or a stream URL")
    src.add_argument("--video", metavar="FILE", help="a video file")
    src.add_argument("--replay", metavar="DIR", help="a recorded session folder (or a folder of frames)")
    src.add_argument("--phone", action="store_true",
                     help="a phone is the camera: open /camera on it (with --host 0.0.0.0 --https on a network)")
    p.add_argument("--game", help="the game to judge (default: a recorded session's own, else the roster's)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--token", help="access token for a non-loopback --host (default: a random one)")
    p.add_argument("--https", action="store_true",
                   help="serve HTTPS with a self-signed certificate kept in the setup folder, so a phone's browser "
                        "lends /camera its camera (needs a --host beyond loopback; no source given means --phone)")
    p.add_argument("--allow-host", dest="allow_hosts", action="append", default=[], metavar="NAME",
                   help="another name the browser may use for this server (e.g. a reverse proxy's); repeatable")
    p.add_argument("--sessions", type=Path, default=Path("sessions"), help="recorded sessions folder")
    p.add_argument("--setup-dir", type=Path, default=Path("setup"), help="where edited setup files are saved")
    p.add_argument("--calibration", type=Path, help="calibration file (CAL.json)")
    p.add_argument("--roster", type=Path, help="roster file")
    p.add_argument("--terrain", type=Path, help="terrain file")
    p.add_argument("--no-record", dest="record", action="store_false",
                   help="do not record a --camera or --video session into the sessions folder")


_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def allow_host_name(name: str) -> str:
    """An --allow-host value as a browser sends it in the Host header (lower case; a name in another script as
    its xn-- form, which the certificate needs too); InputError (one sentence) when it is no host name."""
    bare = name.strip().lower()
    if bare.count(":") == 1 and bare.rpartition(":")[2].isdigit():  # a port, as in a Host header
        bare = bare.rpartition(":")[0]
    inner = bare[1:-1] if bare.startswith("[") and bare.endswith("]") else bare
    try:
        return str(ipaddress.ip_address(inner))
    except ValueError:
        pass
    try:
        ascii_name = bare.rstrip(".").encode("idna").decode("ascii")
    except UnicodeError:
        ascii_name = ""
    if not ascii_name or len(ascii_name) > 253 or not all(_LABEL.match(label) for label in ascii_name.split(".")):
        raise InputError(f"--allow-host {name[:60]!r} is not a host name; give the name a browser uses for this "
                         "server, e.g. tablesight.example.com (letters, digits, hyphens and dots).")
    return ascii_name


MIN_TOKEN_CHARS = 16
"""An access token shorter than this is guessed too easily: --token refuses it."""


def check_token(token: str | None) -> str | None:
    """A --token as given; InputError (one sentence) when it is empty or shorter than MIN_TOKEN_CHARS."""
    if token is not None and len(token.strip()) < MIN_TOKEN_CHARS:
        n = len(token.strip())
        said = "empty" if not n else f"only {n} character{'s' if n > 1 else ''} long"
        raise InputError(f"The access token given with --token is {said}; give one of at least {MIN_TOKEN_CHARS} "
                         "characters, or leave --token out and the server makes up a random one.")
    return token


def settings_from(args: argparse.Namespace) -> Settings:
    kind: SourceKind
    if args.camera is not None:
        kind, source = "camera", args.camera
    elif args.video is not None:
        kind, source = "video", args.video
    elif args.replay is not None:
        kind, source = "replay", args.replay
    elif args.phone or getattr(args, "https", False):
        kind, source = "phone", None
    else:
        kind, source = "sample", None
    return Settings(
        host=args.host,
        port=args.port,
        token=check_token(args.token),
        allowed_hosts=tuple(allow_host_name(h) for h in args.allow_hosts),
        sessions_dir=args.sessions,
        setup_dir=args.setup_dir,
        source_kind=kind,
        source=source,
        game=args.game,
        calibration_file=args.calibration,
        roster_file=args.roster,
        terrain_file=args.terrain,
        record=args.record,
        https=bool(getattr(args, "https", False)),
    ).with_defaults()


def check_can_listen(host: str, port: int) -> None:
    """Raise InputError (one sentence) if nothing could listen on host:port: an unknown address or a port in use."""

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        raise InputError(f"--host {host} is not an address of this machine; use 127.0.0.1 (or 0.0.0.0 for all).") from None
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise InputError(f"Port {port} on {host} is in use; stop what uses it or pick another --port.") from None
            raise InputError(
                f"Cannot listen on {host} port {port} ({err.strerror or err}); use 127.0.0.1 or an address of this machine."
            ) from None


def run(args: argparse.Namespace) -> int:
    # the server's libraries load only for `serve`, so that every other command starts quickly
    import uvicorn

    from session.runtime import Runtime
    from webui.server import UVICORN_OPTIONS, create_app

    if not 0 < args.port < 65536:
        raise InputError(f"--port {args.port} is not a port number; use 1 to 65535 (8000 is usual).")
    if args.https and is_loopback(args.host):
        raise InputError(f"--https on --host {args.host} serves only this machine, whose browser already trusts "
                         "plain http there; add --host 0.0.0.0 so a phone on your network can open it.")
    check_can_listen(args.host, args.port)
    settings = settings_from(args)
    cert = None
    if settings.https:
        cert = ensure_certificate(settings.setup_dir / "https", machine_names(settings.host, settings.allowed_hosts),
                                  machine_addresses())
    settings = settings.model_copy(update=phone_links(settings, cert.sha256 if cert is not None else None))
    Runtime(settings)  # reads the source and the setup files now, so a bad path is one sentence, not a traceback
    scheme = "https" if settings.https else "http"
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    url = f"{scheme}://{'127.0.0.1' if settings.host in ('0.0.0.0', '::') else host}:{settings.port}/"
    if settings.token:
        url += f"?token={settings.token}"
    note = "" if is_loopback(settings.host) else " (others on your network can open it with the token)"
    if settings.record and settings.source_kind in ("camera", "video", "phone"):
        note += f" (recording into {settings.sessions_dir.resolve()})"
    print(f"Tablesight is serving {settings.source_kind} at {url}{note}", flush=True)
    if settings.source_kind == "phone" or cert is not None:
        print(phone_instructions(settings, cert), flush=True)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, **UVICORN_OPTIONS,
                ssl_certfile=str(cert.cert_file) if cert is not None else None,
                ssl_keyfile=str(cert.key_file) if cert is not None else None)
    return 0


def phone_links(settings: Settings, cert_sha256: str | None) -> dict[str, str | None]:
    """The /camera address a phone opens (with the token) and the certificate's fingerprint, for Settings."""
    if settings.https:
        address = f"https://{phone_host(settings.host)}:{settings.port}/camera"
    elif is_loopback(settings.host):
        address = f"http://127.0.0.1:{settings.port}/camera"
    else:
        address = f"http://{phone_host(settings.host)}:{settings.port}/camera"
    if settings.token:
        address += f"?token={settings.token}"
    return {"camera_address": address, "cert_sha256": cert_sha256}


def phone_instructions(settings: Settings, cert: ServerCertificate | None) -> str:
    """What the terminal says about the phone: its address, a QR code of it, the certificate and its warning."""
    address = settings.camera_address or "/camera"
    if settings.source_kind != "phone":
        from webui.routes.camera import source_words

        return (f"The phone camera page {address} is served, but the camera is the "
                f"{source_words(settings.source_kind)} you chose; start without it (or with --phone) to use a phone.")
    lines = [f"Phone camera: open {address} on the phone (same Wi-Fi), or scan:"]
    if cert is not None:
        lines.append(qr_terminal(address).rstrip("\n"))
        lines.append(f"Certificate {cert.cert_file} ({'made now' if cert.made else 'made before, reused'}), "
                     f"SHA-256 {cert.sha256}")
        lines.append(BROWSER_WARNING.format(short=cert.sha256[:14]))
    elif is_loopback(settings.host):
        lines[0] = (f"Phone camera: open {address} in a browser on this machine; for a phone on your network "
                    "start with --host 0.0.0.0 --https.")
    else:
        lines.append(qr_terminal(address).rstrip("\n"))
        lines.append("A phone's browser lends its camera only to a secure page: add --https (or serve this "
                     "through your own HTTPS proxy).")
    return "\n".join(lines)
