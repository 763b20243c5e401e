"""Open the web UI: the live table, calibration, terrain, rosters and replay in a browser.

With no source it plays the bundled sample session. It listens on 127.0.0.1:8000; any other --host needs
an access token, which is made up and printed at start (or give one with --token).
"""

from __future__ import annotations

import argparse
import errno
import socket
from pathlib import Path

from calibration.errors import InputError
from session.settings import Settings, SourceKind, is_loopback


def configure(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--camera", metavar="N|URL", help="a camera index (0 = first webcam) or a stream URL")
    src.add_argument("--video", metavar="FILE", help="a video file")
    src.add_argument("--replay", metavar="DIR", help="a recorded session folder (or a folder of frames)")
    p.add_argument("--game", help="the game to judge (default: the roster's)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--token", help="access token for a non-loopback --host (default: a random one)")
    p.add_argument("--allow-host", dest="allow_hosts", action="append", default=[], metavar="NAME",
                   help="another name the browser may use for this server (e.g. a reverse proxy's); repeatable")
    p.add_argument("--sessions", type=Path, default=Path("sessions"), help="recorded sessions folder")
    p.add_argument("--setup-dir", type=Path, default=Path("setup"), help="where edited setup files are saved")
    p.add_argument("--calibration", type=Path, help="calibration file (CAL.json)")
    p.add_argument("--roster", type=Path, help="roster file")
    p.add_argument("--terrain", type=Path, help="terrain file")
    p.add_argument("--no-record", dest="record", action="store_false",
                   help="do not record a --camera or --video session into the sessions folder")


def settings_from(args: argparse.Namespace) -> Settings:
    kind: SourceKind
    if args.camera is not None:
        kind, source = "camera", args.camera
    elif args.video is not None:
        kind, source = "video", args.video
    elif args.replay is not None:
        kind, source = "replay", args.replay
    else:
        kind, source = "sample", None
    return Settings(
        host=args.host,
        port=args.port,
        token=args.token,
        allowed_hosts=tuple(args.allow_hosts),
        sessions_dir=args.sessions,
        setup_dir=args.setup_dir,
        source_kind=kind,
        source=source,
        game=args.game,
        calibration_file=args.calibration,
        roster_file=args.roster,
        terrain_file=args.terrain,
        record=args.record,
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
    check_can_listen(args.host, args.port)
    settings = settings_from(args)
    Runtime(settings)  # reads the source and the setup files now, so a bad path is one sentence, not a traceback
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    url = f"http://{'127.0.0.1' if settings.host in ('0.0.0.0', '::') else host}:{settings.port}/"
    if settings.token:
        url += f"?token={settings.token}"
    note = "" if is_loopback(settings.host) else " (others on your network can open it with the token)"
    if settings.record and settings.source_kind in ("camera", "video"):
        note += f" (recording into {settings.sessions_dir.resolve()})"
    print(f"Tablesight is serving {settings.source_kind} at {url}{note}", flush=True)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, **UVICORN_OPTIONS)
    return 0
