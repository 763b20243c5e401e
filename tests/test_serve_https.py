"""`tablesight serve --host 0.0.0.0 --https`: TLS with a self-signed certificate made once in the setup folder
(covering this machine's names and addresses) and reused; the phone's address with its token as a QR code that
decodes, the fingerprint the browser will show; the phone's WebSocket over TLS guarded as every other; bad input
is one sentence and exit 2."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import httpx
import numpy as np
import pytest
from cryptography import x509

from tests.webui_server import free_port
from webui.https import CERT_FILE, KEY_FILE, machine_addresses

ROOT = Path(__file__).resolve().parent.parent


def _serve(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "webui.cli", "serve", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@contextmanager
def https_server(tmp: Path) -> Iterator[tuple[int, list[str]]]:
    """`serve --host 0.0.0.0 --https` (no source: the phone) on a free port; yields (port, the lines printed
    before it answered)."""
    port = free_port()
    p = _serve("--host", "0.0.0.0", "--https", "--port", str(port), "--setup-dir", str(tmp / "setup"),
               "--sessions", str(tmp / "sessions"))
    try:
        assert p.stdout is not None
        lines: list[str] = []
        while not any(line.startswith("The phone's browser warns") for line in lines):
            line = p.stdout.readline()
            assert line, f"serve ended early: {p.stderr.read() if p.stderr else ''}"
            lines.append(line.rstrip("\n"))
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the server did not start listening"
            time.sleep(0.2)
        yield port, lines
    finally:
        p.terminate()
        p.wait(15)


def _trusting(cert: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))


def _decode_terminal_qr(lines: list[str]) -> str:
    """The text of a QR code drawn with half blocks (█ light-light, ▀ light over dark, ▄ dark over light)."""
    rows: list[list[int]] = []
    for line in lines:
        top, bottom = [], []
        for ch in line:
            t, b = {"█": (255, 255), "▀": (255, 0), "▄": (0, 255), " ": (0, 0)}[ch]
            top.append(t)
            bottom.append(b)
        rows += [top, bottom]
    width = max(len(r) for r in rows)
    image: np.ndarray = np.array([r + [255] * (width - len(r)) for r in rows], np.uint8)
    # OpenCV's QR reader misses about 1 code in 150 at one scale (the test's reader, not the code printed): a phone's
    # camera app sees it at many scales, so this tries a few and both of OpenCV's readers
    for scale in (8, 6, 10, 5):
        big = cv2.copyMakeBorder(cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST),
                                 40, 40, 40, 40, cv2.BORDER_CONSTANT, value=255)
        for reader in (cv2.QRCodeDetector(), cv2.QRCodeDetectorAruco()):
            text, _points, _ = reader.detectAndDecode(big)
            if text:
                return str(text)
    return ""


def test_https_serves_tls_with_a_certificate_for_this_machine_and_reuses_it(tmp_path: Path) -> None:
    cert_file = tmp_path / "setup" / "https" / CERT_FILE
    with https_server(tmp_path) as (port, lines):
        first = lines[0]
        assert first.startswith("Tablesight is serving phone at https://127.0.0.1:") and "?token=" in first
        token = first.split("?token=")[1].split()[0]
        address_line = next(line for line in lines if line.startswith("Phone camera: open "))
        address = address_line.split("open ", 1)[1].split(" on the phone")[0]
        assert address.startswith("https://") and address.endswith(f":{port}/camera?token={token}")
        qr_lines = lines[lines.index(address_line) + 1:]
        qr_lines = qr_lines[:next(i for i, line in enumerate(qr_lines) if line.startswith("Certificate "))]
        assert _decode_terminal_qr(qr_lines) == address  # what the phone's camera app reads
        cert_line = next(line for line in lines if line.startswith("Certificate "))
        assert "made now" in cert_line
        fingerprint = cert_line.split("SHA-256 ")[1].strip()
        assert any(line.startswith("The phone's browser warns once") and fingerprint[:14] in line for line in lines)

        # the certificate: the machine's names and addresses, the key readable by its owner only
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = set(san.get_values_for_type(x509.DNSName))
        ips = {str(a) for a in san.get_values_for_type(x509.IPAddress)}
        assert {"localhost", socket.gethostname().lower(), f"{socket.gethostname().lower()}.local"} <= names
        assert set(machine_addresses()) <= ips and "127.0.0.1" in ips
        assert address.split("//")[1].split(":")[0] in ips  # the address in the QR code is covered
        assert (cert_file.parent / KEY_FILE).stat().st_mode & 0o077 == 0
        served = ssl.get_server_certificate(("127.0.0.1", port))
        der = ssl.PEM_cert_to_DER_cert(served)
        assert ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest()) == fingerprint

        # TLS verified against the generated certificate, by address and by name; the token still guards it
        trust = _trusting(cert_file)
        for host in ("127.0.0.1", "localhost"):
            r = httpx.get(f"https://{host}:{port}/camera", params={"token": token}, verify=trust, timeout=10)
            assert r.status_code == 200 and 'data-streaming="yes"' in r.text
        assert httpx.get(f"https://127.0.0.1:{port}/camera", verify=trust, timeout=10).status_code == 401
        with pytest.raises(httpx.ConnectError):  # an untrusted certificate is refused, as a browser warns
            httpx.get(f"https://127.0.0.1:{port}/camera", timeout=10)
        live = httpx.get(f"https://127.0.0.1:{port}/", params={"token": token}, verify=trust, timeout=10)
        assert fingerprint in live.text and "/api/camera/qr.svg" in live.text

        # the phone's WebSocket over TLS: frames in, measured answers out; another site's page is refused
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect
        from websockets.typing import Origin

        jpeg = (ROOT / "sample_frames" / "valknut_skirmish" / "frame_000000.jpg").read_bytes()
        uri = f"wss://127.0.0.1:{port}/ws/camera?token={token}"
        with connect(uri, ssl=trust, origin=Origin(f"https://127.0.0.1:{port}")) as ws:
            ws.send(jpeg)
            ws.send(jpeg)
            said = json.loads(ws.recv(timeout=20))
            assert said["type"] == "measured" and len(said["anchors"]) == 4
        with pytest.raises((InvalidStatus, ConnectionError, OSError)), \
                connect(uri, ssl=trust, origin=Origin("https://evil.example")) as ws:
            ws.recv(timeout=10)

    # started again: the same certificate, no new warning on the phone
    with https_server(tmp_path) as (_port, lines):
        again = next(line for line in lines if line.startswith("Certificate "))
        assert "reused" in again and again.split("SHA-256 ")[1].strip() == fingerprint


@pytest.mark.parametrize(("args", "words"), [
    (("--https",), "--host 0.0.0.0"),
    (("--https", "--host", "127.0.0.1", "--phone"), "--host 0.0.0.0"),
])
def test_https_on_loopback_is_one_sentence(args: tuple[str, ...], words: str) -> None:
    p = _serve(*args, "--port", str(free_port()))
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 2 and words in err
    assert err.strip().count("\n") == 0 and "Traceback" not in err


def test_a_certificate_folder_that_cannot_be_written_is_one_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    p = _serve("--host", "0.0.0.0", "--https", "--port", str(free_port()), "--setup-dir", str(blocker / "setup"))
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 2, err
    assert "certificate cannot be kept" in err and "--setup-dir" in err
    assert err.strip().count("\n") == 0 and "Traceback" not in err
