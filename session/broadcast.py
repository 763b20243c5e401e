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
    """What one watcher shows the picture at: `width` px across its screen (None: not said; it gets what
    session/frame_publisher.py `stream_size` sends a watcher that has not said)."""

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
    def picture_widths(self) -> tuple[int | None, bool]:
        """(the widest any watcher said it shows the picture at, px, or None: none said; whether a watcher has not
        said)."""
        with self._lock:
            widths = [w.view.width if w.view is not None else None for w in self._watchers]
        said = [w for w in widths if w is not None]
        return (max(said) if said else None), None in widths

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
        this watcher shows the picture (it may change while watching; see `picture_widths`).
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
