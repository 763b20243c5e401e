"""Bad input on the surfaces of issues 12-15: the phone's /ws/camera, the printables download, calibrate-mounts'
-o, replay --out over a folder of sessions, serve --allow-host and its HTTPS certificate. Each is refused in one
sentence (exit 2, HTTP 4xx or a "refused" message on the socket), and nothing recorded is changed."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from session.settings import Settings
from tests.webui_server import LocalClient
from webui.cli import main
from webui.https import CERT_FILE, KEY_FILE, ensure_certificate
from webui.server import create_app

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_frames" / "valknut_skirmish"


def _jpeg(value: int = 100, w: int = 64, h: int = 48) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((h, w, 3), value, np.uint8))
    assert ok
    return buf.tobytes()


def _huge_jpeg() -> bytes:
    """A real 64x48 JPEG whose frame header claims 20000x20000 (400 MP)."""
    j = _jpeg()
    sof = j.find(b"\xff\xc0")
    return j[: sof + 5] + struct.pack(">HH", 20000, 20000) + j[sof + 9:]


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _one_sentence(err: str, says: str) -> None:
    assert err.count("\n") == 1 and err.strip().endswith(".") and says in err and "Traceback" not in err, err


# ------------------------------------------------------------------------------------------ /ws/camera


@pytest.fixture()
def phone_client(tmp_path: Path) -> Iterator[LocalClient]:
    settings = Settings(source_kind="phone", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings)) as c:
        yield c


@pytest.mark.parametrize(("payload", "says"), [
    (b"hello", "Frame 0 from the phone (5 bytes) is not a JPEG image; reload the camera page"),
    (cv2.imencode(".png", np.zeros((48, 64, 3), np.uint8))[1].tobytes(), "is not a JPEG image"),
    (b"\xff\xd8\xff\xe0 no frame header", "is not a JPEG image"),
    (_huge_jpeg(), "Frame 0 from the phone is 20000x20000 pixels (400 MP), more than the 50 MP"),
], ids=["text bytes", "a PNG", "a JPEG start only", "20000x20000 JPEG header"])
def test_a_frame_that_is_no_usable_jpeg_is_refused_in_one_sentence_on_arrival(
        payload: bytes, says: str, phone_client: LocalClient) -> None:
    with phone_client.websocket_connect("/ws/camera") as ws:
        ws.send_bytes(payload)
        said = json.loads(ws.receive_text())
        assert said["type"] == "refused" and says in said["message"], said
        assert said["message"].replace("e.g. ", "").count(". ") == 0 and said["message"].endswith(".")
        state = phone_client.get("/api/camera").json()["phone"]
        assert state["received"] == 0 and state["bad"] == 1  # never handed to the loop, so never decoded
        deadline = time.monotonic() + 10  # the live page says why no frame comes, not "sends no frames"
        while says not in (phone_client.get("/api/live/status").json().get("message") or "") \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert says in phone_client.get("/api/live/status").json()["message"]


@pytest.mark.parametrize("text", ["[" * 100_000, "not json", '{"type": "visibility", "hidden": ' + "9" * 5000 + "}",
                                  "x" * 200_000], ids=["100,000 deep", "not JSON", "5000 digits", "200 kB"])
def test_a_text_message_that_is_no_json_is_ignored_and_the_stream_goes_on(text: str, phone_client: LocalClient) -> None:
    with phone_client.websocket_connect("/ws/camera") as ws:
        ws.send_text(text)  # was a RecursionError for the deep one: the connection died with a traceback
        ws.send_bytes(_jpeg())
        ws.send_bytes(_jpeg())
        assert json.loads(ws.receive_text())["type"] == "measured"


# ------------------------------------------------------------------------------------------- downloads


@pytest.mark.parametrize(("ids", "status", "says"), [
    ("%D9%A1%D9%A0", 400, "is not a list of ids"),  # Arabic-Indic "10": int() took it, the header then failed (500)
    ("%EF%BC%91%EF%BC%90", 400, "is not a list of ids"),  # full-width "10"
    ("1_0", 400, "is not a list of ids"),
    ("10%0d%0aX-Evil:%201", 400, "is not a list of ids"),
    ("10,12,14-16", 200, 'filename="tags-10-16-flat.pdf"'),
])
def test_the_tags_download_takes_ascii_ids_only(ids: str, status: int, says: str, tmp_path: Path) -> None:
    settings = Settings(source_kind="sample", setup_dir=tmp_path / "setup", sessions_dir=tmp_path / "sessions")
    with LocalClient(create_app(settings), raise_server_exceptions=False) as c:
        r = c.get(f"/download/tags.pdf?ids={ids}")
    assert r.status_code == status, r.text
    assert says in (r.headers["content-disposition"] if status == 200 else r.json()["detail"])


def test_tags_ids_in_another_script_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tags", "--ids", "\u0661\u0660", "-o", str(tmp_path / "t.pdf")]) == 2
    _one_sentence(capsys.readouterr().err, "is not a list of ids")
    assert not (tmp_path / "t.pdf").exists()


# ------------------------------------------------------------------------- calibrate-mounts -o onto an input


@pytest.fixture()
def recording(tmp_path: Path) -> dict[str, Path]:
    """A copy of the sample session, a frame folder of its first frames, and a calibration beside them."""
    session = tmp_path / "session"
    shutil.copytree(SAMPLE, session)
    frames = tmp_path / "frames"
    frames.mkdir()
    for f in sorted(SAMPLE.glob("frame_*.jpg"))[:3]:
        shutil.copy(f, frames / f.name)
    shutil.copy(SAMPLE / "calibration.json", tmp_path / "cal.json")
    shutil.copy(SAMPLE / "roster.json", tmp_path / "roster.json")
    return {"dir": tmp_path, "session": session, "frames": frames, "cal": tmp_path / "cal.json",
            "roster": tmp_path / "roster.json"}


@pytest.mark.parametrize(("argv", "says"), [
    (["{session}", "-o", "{session}/frame_000000.jpg"], "is inside the recorded session"),
    (["{session}", "-o", "{session}/roster.json", "--force"], "is inside the recorded session"),
    (["{session}", "-o", "{session}/new_roster.json"], "is inside the recorded session"),
    (["{session}", "--calibration", "{cal}", "-o", "{cal}"], "is the --calibration file"),
    (["{frames}", "--calibration", "{cal}", "--roster", "{roster}", "-o", "{frames}/frame_000000.jpg"],
     "is inside the frame folder being measured"),
    (["{frames}/frame_000001.jpg", "--calibration", "{cal}", "--roster", "{roster}", "-o",
      "{frames}/frame_000001.jpg"], "is the video being measured"),
], ids=["a frame of the session", "the session's roster, even with --force", "a new file in the session",
        "the calibration", "a frame of the folder", "the video itself"])
def test_calibrate_mounts_never_writes_over_what_it_reads(argv: list[str], says: str, recording: dict[str, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    names = {k: str(v) for k, v in recording.items()}
    before = {k: _digest(recording[k]) for k in ("dir", "session", "frames")}
    status = main(["calibrate-mounts", *(a.format(**names) for a in argv)])
    err = capsys.readouterr().err
    assert status == 2, err
    _one_sentence(err, says)
    assert {k: _digest(recording[k]) for k in ("dir", "session", "frames")} == before  # nothing written


# ---------------------------------------------------------------------------- replay FOLDER --out and frames


def test_replay_out_inside_a_session_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    league = tmp_path / "league"
    for name in ("frames", "week1"):  # a session named "frames" would write week1/frames.jsonl over its index
        shutil.copytree(SAMPLE, league / name)
    before = _digest(league / "week1")
    assert main(["replay", str(league), "--out", str(league / "week1"), "--json"]) == 2
    _one_sentence(capsys.readouterr().err, f"--out {league / 'week1'} is inside the recorded session")
    assert _digest(league / "week1") == before


def test_a_cut_short_frame_of_a_session_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = tmp_path / "s"
    shutil.copytree(SAMPLE, session)
    frame = session / "frame_000002.jpg"
    frame.write_bytes(frame.read_bytes()[:2000])
    index = (session / "frames.jsonl").read_text().splitlines()[:4]
    (session / "frames.jsonl").write_text("\n".join(index) + "\n")
    assert main(["replay", str(session), "--json"]) == 2
    err = capsys.readouterr().err
    _one_sentence(err, "is cut short (corrupt); delete it or replace it with the real frame (listed in recorded")
    assert ". (" not in err


# ------------------------------------------------------------------------------ serve --allow-host, HTTPS


@pytest.mark.parametrize("name", ["a b", "*.example", "-x.example", "a..b", "x" * 300])
def test_serve_allow_host_that_is_no_host_name_is_exit_2(name: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["serve", "--host", "0.0.0.0", "--https", f"--allow-host={name}", "--port", "18961",
                   "--setup-dir", str(tmp_path / "setup")])
    assert status == 2
    _one_sentence(capsys.readouterr().err, "is not a host name")
    assert not (tmp_path / "setup").exists()  # refused before a certificate was made


def test_allow_host_in_another_script_is_its_xn_form_in_the_certificate(tmp_path: Path) -> None:
    from cryptography import x509

    from webui.commands.serve import allow_host_name
    from webui.https import machine_names

    assert allow_host_name("Tablé.Example:443") == "xn--tabl-epa.example"
    cert = ensure_certificate(tmp_path, machine_names("0.0.0.0", (allow_host_name("tablé.example"),)), ("10.0.0.5",))
    san = x509.load_pem_x509_certificate(cert.cert_file.read_bytes()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert "xn--tabl-epa.example" in san.get_values_for_type(x509.DNSName)  # was a ValueError traceback, exit 1


def _other_certificate(folder: Path, with_names: bool) -> None:
    """A key and a certificate in `folder` that do not match (with_names) or that name no host (not with_names)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    ensure_certificate(folder, ("localhost",), ("10.0.0.5",))
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    (folder / KEY_FILE).write_bytes(pem)
    if not with_names:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "x")])
        now = dt.datetime.now(dt.UTC)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(1).not_valid_before(now).not_valid_after(now + dt.timedelta(days=300))
                .sign(key, hashes.SHA256()))
        (folder / CERT_FILE).write_bytes(cert.public_bytes(serialization.Encoding.PEM))


@pytest.mark.parametrize("with_names", [True, False], ids=["key of another certificate", "no host names"])
def test_a_certificate_that_cannot_serve_is_made_again(with_names: bool, tmp_path: Path) -> None:
    import ssl

    _other_certificate(tmp_path, with_names)
    cert = ensure_certificate(tmp_path, ("localhost",), ("10.0.0.5",))  # was a traceback at the server's start
    assert cert.made
    ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert.cert_file, cert.key_file)
