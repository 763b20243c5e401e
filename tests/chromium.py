"""Debian's Chromium for the browser tests: one browser a module, and pages whose script errors fail the test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.web import CHROMIUM, CHROMIUM_ARGS


@contextmanager
def chromium() -> Iterator[Any]:
    """Headless Chromium (Playwright driving /usr/bin/chromium; nothing downloaded)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def checked_page(browser: Any, **context: Any) -> Iterator[Any]:
    """A page in a new browser context (`context`: Playwright's new_context options); a script error on it fails
    the test when the page closes."""
    ctx = browser.new_context(**context)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield page
    finally:
        ctx.close()
    assert not errors, errors


CLIENT_AT_INCHES = """async ([x, y]) => {
  const m = await import('/static/overlay.js');
  const c = document.getElementById('board'), r = c.getBoundingClientRect();
  const view = m.boardView(c, window.tablesight.msg.board);
  const [lw, lh] = m.layoutSize(c);
  const [px, py] = view.toPx(x, y);
  return [r.left + px * r.width / lw, r.top + py * r.height / lh];
}"""
"""A table point (inches) as the page's coordinates on the live page's top-down board (for `page.evaluate`)."""
