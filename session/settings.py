"""The web server's settings: where it listens, who may connect, where sessions live, what it watches.

One pydantic model, filled by `tablesight serve` from its flags (or by a test). Loopback hosts need no
token; any other host needs one, and `with_defaults` makes one up when none is given.
"""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

SourceKind = Literal["sample", "camera", "video", "replay", "phone"]

MIB = 1024 * 1024


def is_loopback(host: str) -> bool:
    """Whether `host` only accepts connections from this machine (127.0.0.0/8, ::1, "localhost")."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Settings(BaseModel):
    """Everything the server needs to start.

    source_kind / source: what the live page watches: "camera" (an index such as "0", or a stream URL),
    "video" (a file), "replay" (a recorded session folder), "phone" (a phone's /camera page streams to the
    server: session/phone_feed.py) or "sample" (the bundled sample session; `source` may name another session
    folder to play instead).
    https: served over TLS with the certificate `serve --https` made (webui/https.py); camera_address: the
    /camera address a phone opens (with the token), shown as a QR code on the live page; cert_sha256: that
    certificate's SHA-256 fingerprint, shown beside it so a player can check the browser's warning.
    token: the access token; required when `host` is not loopback. Checked on every HTTP and WebSocket
    request as `?token=`, an `Authorization: Bearer` header or the cookie the pages set.
    sessions_dir: recorded sessions (one folder each); nothing outside it is served.
    setup_dir: where the calibration, terrain and roster edited in the browser are saved.
    record: record a camera or a video as it plays into a new folder of `sessions_dir` (frames, setup files,
    declarations, session.sqlite of events and verdicts); a replay or the sample is never recorded.
    allowed_hosts: names besides the loopback names and `host` that the Host header may give (a reverse proxy's
    or an mDNS name); any other name is refused, which defeats DNS rebinding.
    max_upload_bytes / max_json_bytes: size limits of an uploaded image and of a posted JSON body;
    max_uploads / max_camera_upload_bytes: at most this many photos, and bytes in all, for a camera calibration.
    sample_idles: the sample waits once nobody has watched it for a few seconds (session.runtime.SAMPLE_IDLE_S);
    False: it plays on (`tablesight bench --web` times it with nobody watching).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8000
    token: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    sessions_dir: Path = Path("sessions")
    setup_dir: Path = Path("setup")
    source_kind: SourceKind = "sample"
    source: str | None = None
    game: str | None = None
    calibration_file: Path | None = None
    roster_file: Path | None = None
    terrain_file: Path | None = None
    max_upload_bytes: Annotated[int, Field(gt=0)] = 12 * MIB
    max_json_bytes: Annotated[int, Field(gt=0)] = 1 * MIB
    max_uploads: Annotated[int, Field(gt=0)] = 40
    max_camera_upload_bytes: Annotated[int, Field(gt=0)] = 160 * MIB
    jpeg_quality: Annotated[int, Field(ge=10, le=100)] = 80
    loop_sample: bool = True
    sample_idles: bool = True
    record: bool = True
    https: bool = False
    camera_address: str | None = None
    cert_sha256: str | None = None

    @property
    def needs_token(self) -> bool:
        return self.token is not None or not is_loopback(self.host)

    def with_defaults(self) -> Settings:
        """These settings with a fresh random token when the host is not loopback and none was given."""
        if self.token is None and not is_loopback(self.host):
            return self.model_copy(update={"token": secrets.token_urlsafe(18)})
        return self
