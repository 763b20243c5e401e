"""Battle reports made in the background for the web page: one job a session, its progress to show, cancelled
when nobody waits for it any more, and kept once made.

A long session's report replays the frames in which something happened (session/report_replay.py passes over a
still table's), still longer than one HTTP request should hold a worker. So a page asks (`ReportJobs.ask`), which starts the job on a thread of
its own or finds it running or made; it asks again to read the progress and, once made, takes the file. A job
nobody has asked about for IDLE_S seconds (the page was closed, the download was cancelled) stops at its next
frame. A made report is kept in `folder` under its session's name and a stamp of the session's files, so the
next ask is answered at once until the session changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from calibration.errors import InputError
from calibration.file_write import FileWriteError, write_file
from rules.engine import RulesInputError
from session.report import gather_report
from session.report_html import render_report

REPORTS_FOLDER = ".reports"
"""Where in the sessions folder made reports are kept (a name no session can have)."""
IDLE_S = 90.0
"""A job nobody asked about for this long (seconds) is cancelled: longer than a browser's background tab waits
between two asks (Chromium throttles a hidden tab's timers to once a minute)."""
STAMPED = ("manifest.json", "frames.jsonl", "setup.json", "declarations.jsonl", "setup_edits.jsonl", "roster.json",
           "terrain.json", "calibration.json", "camera.json")
"""The session's files a report is made from, besides its frames (its store is written by whoever replays it)."""
KEPT_IN_MEMORY = 4
"""Made reports kept in memory besides the folder (the newest asked)."""


class ReportCancelled(Exception):
    """Nobody waits for the report any more: the job stops where it is."""


Progress = Callable[[int, int | None], None]
"""progress(frames replayed, frames in all or None)."""


@dataclass
class ReportJob:
    """One session's report: being made, made, failed or cancelled."""

    name: str
    stamp: str
    state: str = "making"
    """"making", "made", "failed" (a sentence in `error`) or "cancelled"."""
    frames: int = 0
    total: int | None = None
    error: str = ""
    status: int = 0
    """For a failed job: 2 a user's input (the session cannot be replayed), 1 a fault of ours."""
    html: bytes = b""
    asked: float = field(default_factory=time.monotonic)
    waiting: int = 0
    """Requests holding on for the file right now (each counts as asking)."""
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None

    def to_json(self) -> dict[str, object]:
        """What the page shows: its state, frames replayed of all, and the sentence of a failure."""
        percent = round(100.0 * self.frames / self.total) if self.total else None
        return {"state": self.state, "frames": self.frames, "total": self.total, "percent": percent,
                "error": self.error, "seconds": round((self.finished or time.monotonic()) - self.started, 1)}


class ReportJobs:
    """The report jobs of one server. `make(directory, progress) -> html` makes one (session/report_html.py)."""

    def __init__(self, folder: Path | None, make: Callable[[Path, Progress], str],
                 clock: Callable[[], float] = time.monotonic, idle_s: float = IDLE_S) -> None:
        self.folder = folder
        self.make = make
        self.clock = clock
        self.idle_s = idle_s
        self._lock = threading.Lock()
        self._jobs: dict[str, ReportJob] = {}

    def ask(self, name: str, directory: Path, waiting: bool = False) -> ReportJob:
        """Session `name`'s job (in `directory`): made or being made; started when there is none for its files as
        they are now (a cancelled or failed one is tried again). `waiting`: the caller holds on for the file
        (counted before the job starts; `wait(job, -1)` when it stops)."""
        stamp = session_stamp(directory)
        with self._lock:
            job = self._jobs.get(name)
            if job is not None and job.stamp == stamp and job.state in ("making", "made"):
                job.asked = self.clock()
                job.waiting += int(waiting)
                return job
            job = ReportJob(name, stamp, asked=self.clock(), waiting=int(waiting))
            kept = self._kept(name, stamp)
            if kept is not None:
                job.state, job.html, job.finished = "made", kept, job.started
            self._jobs[name] = job
            self._forget_old()
        if job.state == "making":
            threading.Thread(target=self._run, args=(job, directory), name=f"report {name}", daemon=True).start()
        return job

    def current(self, name: str) -> ReportJob | None:
        """Session `name`'s latest job, if any, without asking for it (asking keeps it going)."""
        with self._lock:
            return self._jobs.get(name)

    def wait(self, job: ReportJob, delta: int) -> None:
        """A request starts (+1) or stops (-1) holding on for `job`'s file."""
        with self._lock:
            job.waiting += delta
            job.asked = self.clock()

    def _run(self, job: ReportJob, directory: Path) -> None:
        def progress(frames: int, total: int | None) -> None:
            job.frames, job.total = frames, total
            with self._lock:
                idle = job.waiting == 0 and self.clock() - job.asked > self.idle_s
            if idle:
                raise ReportCancelled

        try:
            html = self.make(directory, progress).encode("utf-8")
        except ReportCancelled:
            job.state = "cancelled"
        except (InputError, RulesInputError) as err:
            job.state, job.error, job.status = "failed", str(err), 2
        except Exception as err:  # noqa: BLE001 - a fault of ours: the page says so in a sentence
            job.state, job.status = "failed", 1
            job.error = (f"The battle report of {job.name} could not be made ({type(err).__name__}: {err}); please "
                         "report it with the session.")
        else:
            job.html = html
            self._keep(job)
            job.state = "made"
        job.finished = time.monotonic()

    def _path(self, name: str, stamp: str) -> Path | None:
        return self.folder / f"{name}.{stamp}.html" if self.folder is not None else None

    def _kept(self, name: str, stamp: str) -> bytes | None:
        path = self._path(name, stamp)
        try:
            return path.read_bytes() if path is not None and path.is_file() else None
        except OSError:
            return None

    def _keep(self, job: ReportJob) -> None:
        """Keep the made report in the folder (best effort: a full disk keeps it in memory only)."""
        path = self._path(job.name, job.stamp)
        if path is None or self.folder is None:
            return
        with contextlib.suppress(OSError, FileWriteError):
            self.folder.mkdir(parents=True, exist_ok=True)
            write_file(path, job.html, what="battle report", fsync=False)
            for old in self.folder.iterdir():  # the same session's report of its files as they were
                if (old != path and old.name.startswith(f"{job.name}.") and old.name.endswith(".html")
                        and len(old.name) == len(path.name)):
                    old.unlink()

    def _forget_old(self) -> None:
        made = [j for j in self._jobs.values() if j.state != "making"]
        made.sort(key=lambda j: j.asked)
        for job in made[:max(0, len(made) - KEPT_IN_MEMORY)]:
            del self._jobs[job.name]


def session_stamp(directory: Path) -> str:
    """A stamp of the session's files a report is made from but its frames (STAMPED: the manifest, the frame
    index, the setup, declarations): it changes whenever a recording goes on or its setup is edited."""
    parts = []
    for name in STAMPED:
        with contextlib.suppress(OSError):
            st = (directory / name).stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def make_report_html(directory: Path, progress: Progress) -> str:
    """The battle report of the session in `directory` as HTML (session/report_html.py), with progress."""
    return render_report(gather_report(directory, progress=progress))
