"""A recorded session's timeline: every event and ruling, found by running the pipeline once over the whole
recording on a background thread, so that the replay page can mark them before they are played. On the way
it keeps a checkpoint of the pipeline every CHECKPOINT_EVERY frames, so a seek resumes the game where it
stood instead of starting it again. Checkpoints are kept pickled and compressed, within
CHECKPOINT_BUDGET_BYTES: a long recording keeps them less often instead of growing without bound."""

from __future__ import annotations

import logging
import pickle
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from calibration.errors import InputError
from session.drivable import PipelineLike
from session.feeds import RecordingFeed
from session.pipeline import Pipeline
from session.read_ahead import ReadAhead

log = logging.getLogger("tablesight.timeline")

CHECKPOINT_EVERY = 15
"""Frames between two pipeline checkpoints: a seek processes at most this many frames before showing."""
CHECKPOINT_BUDGET_BYTES = 64 * 1024 * 1024
"""The most a timeline's checkpoints may take (pickled and compressed, ~24 kB each with 10 units, 9 kB of it the tag detector's state; in memory
as objects ~150 kB: 2.2 GB for a 2-hour recording at 30 fps). Past it every other checkpoint is dropped and
they are taken half as often, so a seek in a very long recording may process a few times CHECKPOINT_EVERY."""
READ_AHEAD_WORKERS = 1
"""Threads reading and scanning the next frames ahead while the scan thread maps, tracks and rules
(session/read_ahead.py). One: the page plays the recording on the other core meanwhile."""


class Timeline:
    """Events and rulings of a recording (by frame), filled in by a scan thread; `snapshot()` is safe at any time."""

    def __init__(self, path: Path, make_pipeline: Callable[[], PipelineLike]) -> None:
        self.path = path
        self._make_pipeline = make_pipeline
        self._lock = threading.Lock()
        self._events: list[dict[str, Any]] = []
        self._times: list[float] = []
        self._scanned = 0
        self._scanned_to = -1
        """The index of the last frame scanned (-1: none yet): the events up to it are all known."""
        self._frames = 0
        self._error: str | None = None
        self._done = False
        self._stop = False
        self._checkpoints: list[tuple[int, bytes]] = []
        """(frame, Pipeline.checkpoint() after it, pickled and compressed) every `_every`-th frame, in order."""
        self._every = CHECKPOINT_EVERY
        self._checkpoint_bytes = 0
        self._thread = threading.Thread(target=self._scan, name=f"timeline {path.name}", daemon=True)

    def start(self) -> Timeline:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop = True
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _scan(self) -> None:
        try:
            feed = RecordingFeed.open(self.path)
            with self._lock:
                self._frames = len(feed)
                self._times = [round(t - feed.times[0], 3) for t in feed.times]
            pipeline = self._make_pipeline()
            last = -1
            frames = iter(feed.read, None)
            full = pipeline if isinstance(pipeline, Pipeline) else None
            ahead = ReadAhead(frames, full.prepare, workers=READ_AHEAD_WORKERS) if full is not None else None
            try:
                for frame, prepared in ahead if ahead is not None else ((f, None) for f in frames):
                    if self._stop:
                        break
                    last = int(frame.index)
                    result = pipeline.process(frame) if prepared is None or full is None else full.process(
                        frame, prepared=prepared)
                    if (int(frame.index) + 1) % self._every == 0 and (cp := pipeline.checkpoint(int(frame.index))):
                        self._keep(int(frame.index), cp)
                    found = _marks(result.events, result.verdicts, int(frame.index))
                    with self._lock:
                        self._events.extend(found)
                        self._scanned += 1
                        self._scanned_to = last
                else:
                    events, verdicts = pipeline.finish()  # the moves of the recording's last moments
                    with self._lock:
                        self._events.extend(_marks(events, verdicts, last))
            finally:
                if ahead is not None:
                    ahead.close()
        except InputError as err:
            self._error = str(err)
        except Exception as err:  # noqa: BLE001 - a fault of ours: the timeline says it is incomplete, and why
            log.exception("timeline scan of %s failed", self.path)
            self._error = (f"The timeline stopped at frame {self._scanned} on an internal fault "
                           f"({type(err).__name__}: {err}); the events after it are not marked. See the server log.")
        finally:
            self._done = True

    def _keep(self, frame: int, checkpoint: Any) -> None:
        """Store a checkpoint; past the budget, thin them to every other one (and take them half as often)."""
        try:
            blob = zlib.compress(pickle.dumps(checkpoint, pickle.HIGHEST_PROTOCOL), 1)
        except (pickle.PicklingError, TypeError, AttributeError):  # a fault of ours: seeks restart the game
            log.exception("timeline %s: the checkpoint after frame %d cannot be kept", self.path.name, frame)
            return
        with self._lock:
            self._checkpoints.append((frame, blob))
            self._checkpoint_bytes += len(blob)
            while self._checkpoint_bytes > CHECKPOINT_BUDGET_BYTES and self._checkpoints:
                self._every *= 2
                self._checkpoints = [(f, b) for f, b in self._checkpoints if (f + 1) % self._every == 0]
                self._checkpoint_bytes = sum(len(b) for _, b in self._checkpoints)

    def checkpoint_before(self, frame: int) -> Any | None:
        """The newest pipeline checkpoint taken after a frame before `frame` (None if the scan has not got
        there), a fresh copy: whoever resumes from it shares nothing with the timeline."""
        with self._lock:
            best = None
            for f, blob in self._checkpoints:
                if f >= frame:
                    break
                best = blob
        return None if best is None else pickle.loads(zlib.decompress(best))

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "frames": self._frames,
                "times": list(self._times),
                "scanned": self._scanned,
                "scanned_to": self._scanned_to,
                "complete": self._done and self._error is None,
                "error": self._error,
                "events": list(self._events),
            }


def _marks(events: Any, verdicts: Any, frame: int) -> list[dict[str, Any]]:
    """A frame's timeline entries: every event and every ruling, as the frame's message carries them (the replay page
    marks and lists them as it does a frame's: webui/static/table_view.js `listed`)."""
    found = [{"frame": frame, **e.to_json()} for e in events]
    found += [{"type": "verdict", "frame": frame, **dict(v)} for v in verdicts]
    return found
