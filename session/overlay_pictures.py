"""The overlay picture of a frame drawn once and shared by every client that asks for it (`overlay.mjpg`).

Clients that ask for the same overlay (layers, camera or green, scale) of the same published frame get the
same JPEG bytes: the first one draws it on one worker thread while the others wait for it without holding a
thread, and a client that was too slow for a frame simply takes the newest one next (the broadcast's
latest-frame-wins). So fifty slow viewers cost one drawing a frame, as fifty `/overlay` pages do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field

MAX_KINDS = 16
"""Most kinds of overlay (distinct layers, camera, scale) kept at once; the oldest asked for goes first."""


@dataclass
class _Kind:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    seq: int = -1
    jpeg: bytes = b""


class OverlayPictures:
    """Frame seq -> JPEG per kind of overlay, newest frame only, for one event loop's clients."""

    def __init__(self) -> None:
        self._kinds: dict[Hashable, _Kind] = {}
        self.drawn = 0
        """Pictures drawn so far (a test and the bench read it)."""

    async def picture(self, kind: Hashable, seq: int, draw: Callable[[], bytes],
                      run: Callable[[Callable[[], bytes]], Awaitable[bytes]]) -> bytes:
        """The JPEG of `kind` (which names the broadcast too: seqs count per broadcast) for published frame `seq`:
        drawn by `await run(draw)` (e.g. on a worker thread) by the first client to ask, shared with the rest; a
        frame older than the one kept is not drawn again."""
        entry = self._kinds.pop(kind, None) or _Kind()
        self._kinds[kind] = entry  # most recently asked last
        while len(self._kinds) > MAX_KINDS:
            self._kinds.pop(next(iter(self._kinds)))
        async with entry.lock:
            if entry.seq >= seq:
                return entry.jpeg
            jpeg = await run(draw)
            entry.seq, entry.jpeg = seq, jpeg
            self.drawn += 1
            return jpeg
