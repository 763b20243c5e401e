"""One producer thread, many asyncio watchers: each watcher always gets the newest item, never a queue.

The producer (the live loop's thread) calls `publish`; it never waits for a watcher. A slow watcher (a
phone on a weak Wi-Fi) simply skips the items it was too slow for: latest-frame-wins per client. The
bytes of an item are made once by the producer and shared by every watcher.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator
from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    """One message for every watcher: a JSON text and, for a frame, its JPEG bytes (encoded once).

    seq: increases by one per publish; kind: "frame" or "status".
    """

    seq: int
    kind: str
    text: str
    jpeg: bytes | None = None


@dataclass
class View:
    """What one watcher shows the picture at: `width` px across its screen (None: not said; the widest)."""

    width: int | None = None


class _Watcher:
    def __init__(self, loop: asyncio.AbstractEventLoop, view: View | None) -> None:
        self.loop = loop
        self.event = asyncio.Event()
        self.view = view

    def notify(self) -> bool:
        try:
            self.loop.call_soon_threadsafe(self.event.set)
        except RuntimeError:  # the watcher's event loop has closed
            return False
        return True


class Broadcast:
    """The newest `Published` item, handed to any number of asyncio watchers without slowing the producer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: Published | None = None
        self._latest_frame: Published | None = None
        self._watchers: set[_Watcher] = set()
        self._seq = 0

    @property
    def latest(self) -> Published | None:
        return self._latest

    @property
    def latest_frame(self) -> Published | None:
        """The newest item that carried an image (a status message does not replace it)."""
        return self._latest_frame

    @property
    def watchers(self) -> int:
        return len(self._watchers)

    @property
    def picture_width(self) -> int | None:
        """The widest any watcher shows the picture at, px (None: one has not said, or nobody watches)."""
        with self._lock:
            widths = [w.view.width if w.view is not None else None for w in self._watchers]
        if not widths or None in widths:
            return None
        return max(w for w in widths if w is not None)

    def publish(self, kind: str, text: str, jpeg: bytes | None = None) -> Published:
        with self._lock:
            self._seq += 1
            item = Published(self._seq, kind, text, jpeg)
            self._latest = item
            if jpeg is not None:
                self._latest_frame = item
            watchers = list(self._watchers)
        for w in watchers:
            if not w.notify():
                with self._lock:
                    self._watchers.discard(w)
        return item

    async def watch(self, frames_only: bool = False, view: View | None = None) -> AsyncGenerator[Published, None]:
        """Yield the newest item each time one is published: the newest frame first, then a newer status.

        A status message (camera lost, paused) never hides a frame published just before it. `view`: how wide
        this watcher shows the picture (it may change while watching; see `picture_width`).
        """
        watcher = _Watcher(asyncio.get_running_loop(), view)
        with self._lock:
            self._watchers.add(watcher)
        watcher.event.set()  # hand over what is there already
        last = 0
        last_frame = 0
        try:
            while True:
                await watcher.event.wait()
                watcher.event.clear()
                frame, latest = self._latest_frame, self._latest
                if frame is not None and frame.seq > last_frame:
                    last_frame = frame.seq
                    last = max(last, frame.seq)
                    yield frame
                if not frames_only and latest is not None and latest.seq > last:
                    last = latest.seq
                    yield latest
        finally:
            with contextlib.suppress(Exception), self._lock:
                self._watchers.discard(watcher)
