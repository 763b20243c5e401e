"""Battle reports made in the background (session/report_jobs.py): progress to show, stopped when nobody waits,
kept once made; through the server a client that hangs up stops its report, and the replay page shows the
progress and downloads the made report in real Chromium (the trust issue's item 8)."""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from session.report_jobs import IDLE_S, ReportJob, ReportJobs, make_report_html, session_stamp
from tests.webui_server import running_server, session_settings

SAMPLE = Path(__file__).resolve().parents[2] / "sample_frames" / "valknut_skirmish"


def _until(job: ReportJob, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while job.state == "making":
        assert time.monotonic() < deadline, job.to_json()
        time.sleep(0.05)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reports") / "evening"
    shutil.copytree(SAMPLE, path)
    return path


def test_a_report_is_made_with_progress_and_kept(session: Path, tmp_path: Path) -> None:
    seen: list[tuple[int, int | None]] = []

    def make(directory: Path, progress: Any) -> str:
        def told(frames: int, total: int | None) -> None:
            seen.append((frames, total))
            progress(frames, total)

        return make_report_html(directory, told)

    jobs = ReportJobs(tmp_path / "kept", make)
    job = jobs.ask("evening", session)
    _until(job)
    assert job.state == "made" and job.html.startswith(b"<!doctype html>")
    assert seen[-1] == (140, 140) and [f for f, _ in seen] == sorted(f for f, _ in seen)
    assert job.to_json()["percent"] == 100
    kept = list((tmp_path / "kept").iterdir())
    assert [p.name for p in kept] == [f"evening.{session_stamp(session)}.html"]
    # a new server (another ReportJobs on the same folder) answers at once from what was kept
    def never(directory: Path, progress: Any) -> str:
        raise AssertionError("a kept report was made again")

    again = ReportJobs(tmp_path / "kept", never)
    made = again.ask("evening", session)
    assert made.state == "made" and made.html == job.html
    # the session goes on (its index grows): the kept report no longer stands for it
    with (session / "frames.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("\n")
    remade = again.ask("evening", session)
    assert remade.stamp == session_stamp(session) != job.stamp
    _until(remade)
    assert remade.state == "failed" and "a kept report was made again" in remade.error  # it was made anew


def test_a_report_nobody_waits_for_stops(session: Path, tmp_path: Path) -> None:
    jobs = ReportJobs(tmp_path / "kept", make_report_html, idle_s=0.0)  # asked once, never again: idle at once
    job = jobs.ask("evening", session)
    _until(job)
    assert job.state == "cancelled" and job.frames < 140
    assert not (tmp_path / "kept").exists() or not list((tmp_path / "kept").iterdir())
    job2 = jobs.ask("evening", session, waiting=True)  # somebody holding on keeps a new one going to its end
    _until(job2)
    assert job2.state == "made"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, session: Path) -> Iterator[tuple[str, Any]]:
    root = session.parent
    settings = session_settings(session, root, tmp_path_factory.mktemp("setup"), game="valknut")
    with running_server(settings) as (url, app):
        yield url, app


def test_a_client_that_hangs_up_stops_its_report(server: tuple[str, Any]) -> None:
    url, app = server
    jobs: ReportJobs = app.state.report_jobs
    jobs.idle_s = 0.3  # the sample's report takes seconds: stopped long before its last frame
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(f"GET /api/replay/evening/report.html HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        deadline = time.monotonic() + 30
        while jobs.current("evening") is None or jobs.current("evening").frames == 0:  # type: ignore[union-attr]
            assert time.monotonic() < deadline
            time.sleep(0.05)
    job = jobs.current("evening")
    assert job is not None
    _until(job, 30)
    jobs.idle_s = IDLE_S
    assert job.state == "cancelled" and 0 < job.frames < 140, job.to_json()


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_the_replay_page_shows_the_progress_and_downloads_the_report(server: tuple[str, Any],
                                                                     tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    url, _app = server
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        page = browser.new_page(accept_downloads=True)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/replay/evening")
        with page.expect_download(timeout=120_000) as download:
            page.click("#report")
            page.locator(".report-progress", has_text="Making the battle report").or_(
                page.locator(".report-progress", has_text="ready")).wait_for(timeout=30_000)
        target = tmp_path / "report.html"
        download.value.save_as(target)
        name = download.value.suggested_filename
        browser.close()
    assert target.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert name == "evening-report.html"
    assert not errors, errors
