"""The hex map from the Roster & prints page in real Chromium: an open-table game gets one sentence under the
form, a hex game's board downloads as a PDF of its pages."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pypdfium2
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from tests.webui_server import SAME_ORIGIN, running_server, session_settings
from tests.webui_session import make_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]
VIGTAVL = Path(__file__).resolve().parents[1] / "examples" / "rosters" / "vigtavl.json"


def test_the_map_form_says_why_or_downloads_the_map(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    make_session(tmp_path / "table1")
    settings = session_settings(tmp_path / "table1", tmp_path, tmp_path / "setup", game="valknut")
    settings = settings.model_copy(update={"source_kind": "sample", "loop_sample": True})
    with running_server(settings) as (url, app), sync_playwright() as p:
        assert app.state.runtime.live.wait_for_frame(20)
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        page = browser.new_context(accept_downloads=True).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/roster")
        form = page.locator("form.printable", has_text="hex map")
        form.locator("button[type=submit]").click()
        error = form.locator(".form-error")
        error.filter(has_text="hex").wait_for(timeout=15_000)
        words = error.inner_text()
        assert words[0].isupper() and words.endswith(".") and "{" not in words, words
        res = httpx.put(url + "/api/roster?restart=true", json=json.loads(VIGTAVL.read_text(encoding="utf-8")),
                        headers=SAME_ORIGIN, timeout=30)
        assert res.status_code == 200, res.text
        page.reload()
        form = page.locator("form.printable", has_text="hex map")
        with page.expect_download(timeout=60_000) as download:
            form.locator("button[type=submit]").click()
        target = tmp_path / "map.pdf"
        download.value.save_as(target)
        name = download.value.suggested_filename
        browser.close()
    assert name.endswith(".pdf")
    assert len(pypdfium2.PdfDocument(target)) >= 3  # the overview and the pages to glue
    assert not errors, errors
