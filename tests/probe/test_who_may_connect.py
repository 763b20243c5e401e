"""Who may talk to the server: no short or empty token, key files private and never written through a link,
the token cookie Secure over HTTPS (the trust issue's items 10 and 12)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from webui.cli import main
from webui.https import KEY_FILE, ensure_certificate
from webui.security import TOKEN_COOKIE, TokenGuard

GOOD = "a-token-of-twenty-chars"


@pytest.mark.parametrize(("token", "words"), [("", "is empty"), ("   ", "is empty"), ("a", "only 1 character long"),
                                               ("fifteen-chars-x", "only 15 characters")])
def test_a_short_or_empty_token_is_refused_in_one_sentence(token: str, words: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--host", "0.0.0.0", "--token", token, "--port", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert words in err and "at least 16 characters" in err and err.count("\n") == 0, err


def _guarded(token: str) -> Starlette:
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("in"))])
    return TokenGuard(app, token)  # type: ignore[return-value]


@pytest.mark.parametrize("empty", ["bearer", "cookie", "query"])
def test_an_empty_token_never_opens_the_door(empty: str) -> None:
    """Even a guard given an empty token (a library caller's mistake) lets no empty header or cookie in."""
    for token in ("", GOOD):
        client = TestClient(_guarded(token))
        if empty == "bearer":
            r = client.get("/", headers={"Authorization": "Bearer "})
        elif empty == "cookie":
            r = client.get("/", headers={"Cookie": f"{TOKEN_COOKIE}="})
        else:
            r = client.get("/?token=")
        assert r.status_code == 401, (token, empty)
    assert TestClient(_guarded(GOOD)).get(f"/?token={GOOD}").status_code == 200


def test_the_token_cookie_is_secure_over_https_only() -> None:
    over_https = TestClient(_guarded(GOOD), base_url="https://testserver").get(f"/?token={GOOD}")
    plain = TestClient(_guarded(GOOD), base_url="http://testserver").get(f"/?token={GOOD}")
    assert over_https.status_code == plain.status_code == 200
    assert "; Secure" in over_https.headers["set-cookie"] and "HttpOnly" in over_https.headers["set-cookie"]
    assert "Secure" not in plain.headers["set-cookie"]


def test_a_kept_key_left_world_readable_is_made_private(tmp_path: Path) -> None:
    first = ensure_certificate(tmp_path, ("localhost",), ("127.0.0.1",))
    assert first.made
    os.chmod(tmp_path / KEY_FILE, 0o644)
    again = ensure_certificate(tmp_path, ("localhost",), ("127.0.0.1",))
    assert not again.made  # the same certificate, kept
    assert stat.S_IMODE((tmp_path / KEY_FILE).stat().st_mode) == 0o600


def test_a_new_key_is_never_written_through_a_link(tmp_path: Path) -> None:
    folder, elsewhere = tmp_path / "https", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    target = elsewhere / "stolen.pem"
    target.write_text("nothing\n")
    os.symlink(target, folder / f"{KEY_FILE}.tmp")  # the old fixed temporary name, planted
    cert = ensure_certificate(folder, ("localhost",), ("127.0.0.1",))
    assert cert.made
    assert target.read_text() == "nothing\n"  # the link's target is untouched
    key = folder / KEY_FILE
    assert not key.is_symlink() and b"PRIVATE KEY" in key.read_bytes()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert not [p for p in folder.iterdir() if p.name.startswith(f".{KEY_FILE}")]  # no temporary left behind


def test_a_linked_key_file_is_not_trusted(tmp_path: Path) -> None:
    folder = tmp_path / "https"
    ensure_certificate(folder, ("localhost",), ("127.0.0.1",))
    key = folder / KEY_FILE
    moved = tmp_path / "moved.pem"
    key.rename(moved)
    os.symlink(moved, key)
    again = ensure_certificate(folder, ("localhost",), ("127.0.0.1",))
    assert again.made and not key.is_symlink()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
