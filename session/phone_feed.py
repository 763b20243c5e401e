"""A phone as the live camera: its /camera page streams JPEG frames, `PhoneCamera` hands the loop the newest.

The web route that receives the phone's WebSocket `push`es each frame's bytes as they arrive (on the server's
event loop: nothing is decoded there). The live loop `read`s the newest frame, decoded on the loop's own thread,
so a frame the loop was too slow for is replaced unseen and never decoded (newest frame wins, nothing queues).
A frame that does not decode as a replay decodes a recorded frame (a JPEG cut short, random bytes after its
header) is skipped, counted as bad and named in `problem`; the loop is given the next good one.
Frames are numbered 0, 1, 2 ... in the order the loop gets them; t is seconds since the first frame arrived.

While no frame comes, `read` waits WAIT_S and then raises `FeedWaiting` with the reason in a player's words (no
phone yet, its page in the background, the phone gone); the loop shows it and asks again, keeping its pipeline
and so the game, as a webcam's short hiccup would.

When the loop asks for the next frame it has measured the one before: every listener hears it as `Measured`
(the phone's own number for that frame, how long the server held and measured it, the anchors found in it) and
the route tells the phone, whose page draws the anchors' outlines and times the round trip.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from session.drivable import FeedWaiting
from vision.errors import FrameError
from vision.sources import Frame, check_complete

WAIT_S = 1.0
"""How long `read` waits for a frame before it says why none came (and is asked again)."""
DEFAULT_ANCHORS = (0, 1, 2, 3)
"""The default layout's anchor ids, looked for before the table is calibrated."""


@dataclass(frozen=True)
class AnchorOutline:
    """An anchor tag found in a phone's frame: its id and its four corners in that frame's pixels."""

    id: int
    corners_px: tuple[tuple[float, float], ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "corners": [[round(x, 1), round(y, 1)] for x, y in self.corners_px]}


@dataclass(frozen=True)
class Measured:
    """The loop has measured one of the phone's frames.

    connection: which phone connection sent it; seq: the phone's own number of the frame on that connection
    (its n-th frame sent, from 0); held_ms: from its arrival to the loop asking for the next frame (waiting,
    decoding, the pipeline); image_size: (w, h) px; anchors: the anchor tags found; anchor_ids: the ones the
    table's layout has; tags: every tag found; calibrated: whether the frame was measured on a calibrated table.
    """

    connection: int
    seq: int
    held_ms: float
    image_size: tuple[int, int]
    anchors: tuple[AnchorOutline, ...]
    anchor_ids: tuple[int, ...]
    tags: int
    calibrated: bool


@dataclass(frozen=True)
class _Arrived:
    connection: int
    seq: int
    jpeg: bytes
    at: float  # monotonic seconds


class PhoneCamera:
    """The phone's frames for the live loop (a `Feed`); see the module docstring.

    outcome: what the loop made of the newest frame (`LiveLoop.latest_result`), asked when a frame has been
    measured, for the anchors found in it. address: where a phone opens the camera page, for the sentences.
    """

    description = "phone camera"

    def __init__(self, outcome: Callable[[], Any] = lambda: None, address: str = "/camera") -> None:
        self._outcome = outcome
        self.address = address
        self._cond = threading.Condition()
        self._newest: _Arrived | None = None
        self._measuring: _Arrived | None = None
        self._connection = 0
        self._connected = False
        self._ever_connected = False
        self._hidden = False
        self._refusal: str | None = None
        self._t0: float | None = None
        self._given = 0
        self._listeners: list[Callable[[Measured], None]] = []
        self.received = 0
        """Frames the phone sent that arrived."""
        self.skipped = 0
        """Frames replaced by a newer one before the loop took them (the loop was busy)."""
        self.bad = 0
        """Frames that were not readable JPEG images (dropped)."""
        self.measured = 0
        self.taken = 0
        """Frames the loop took to decode (the bad ones included)."""
        self.problem = ""
        """The sentence about the newest frame skipped because it did not decode ("" : none was)."""
        self.size: tuple[int, int] | None = None
        """(w, h) of the newest frame decoded."""

    # ---- the phone's side (the WebSocket route) ----

    def connect(self) -> int:
        """A phone's page connected: its connection number. It replaces any phone streaming before (a page
        reloaded, or a second phone): that one's `push` is refused from now on."""
        with self._cond:
            self._connection += 1
            self._connected, self._ever_connected, self._hidden = True, True, False
            self._cond.notify_all()
            return self._connection

    def is_current(self, connection: int) -> bool:
        return connection == self._connection

    def disconnect(self, connection: int) -> None:
        with self._cond:
            if connection == self._connection:
                self._connected = False
                self._cond.notify_all()

    def set_hidden(self, connection: int, hidden: bool) -> None:
        """The phone's page went to the background (hidden) or came back."""
        with self._cond:
            if connection == self._connection:
                self._hidden = bool(hidden)

    def push(self, connection: int, seq: int, jpeg: bytes) -> bool:
        """A frame arrived: it becomes the newest (one not taken yet is replaced). False when this connection
        has been replaced by another phone's (nothing is kept)."""
        with self._cond:
            if connection != self._connection:
                return False
            if self._newest is not None:
                self.skipped += 1
            self._newest = _Arrived(connection, int(seq), bytes(jpeg), time.monotonic())
            self._refusal = None
            self.received += 1
            self._cond.notify_all()
            return True

    def refuse(self, connection: int, why: str) -> None:
        """The route refused a frame of this connection before it came here (not a JPEG, too large): counted as
        bad, and `why` is what the live page says until a good frame arrives."""
        with self._cond:
            if connection == self._connection:
                self.bad += 1
                self._refusal = why

    def listen(self, listener: Callable[[Measured], None]) -> Callable[[], None]:
        """Call `listener` (on the loop's thread: it must not block) for every frame measured; returns the
        function that stops it."""
        with self._cond:
            self._listeners.append(listener)

        def stop() -> None:
            with self._cond:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    # ---- the loop's side (a Feed) ----

    read_ahead = False
    """The live loop reads each frame only once it has ruled the one before (session/feed_ahead.py): `read` tells
    the phone what was measured in the frame it gave last."""

    def read(self, timeout: float = WAIT_S) -> Frame:
        """The newest frame not read yet; FeedWaiting (a sentence) when none came within `timeout` seconds."""
        self._tell_measured()
        end = time.monotonic() + timeout
        while True:
            with self._cond:
                while self._newest is None:
                    left = end - time.monotonic()
                    if left <= 0:
                        raise FeedWaiting(self.why_waiting())
                    self._cond.wait(left)
                arrived, self._newest = self._newest, None
            frame = _decode(arrived.jpeg)
            with self._cond:
                self.taken += 1
            if frame is None:  # never measured, never recorded: a replay could not read it either
                with self._cond:
                    self.bad += 1
                    self.problem = (f"Frame {arrived.seq} from the phone was skipped (not measured or recorded): "
                                    "it is not a whole JPEG image; if this keeps happening, reload the camera page "
                                    "on the phone.")
                continue
            with self._cond:
                if self._t0 is None:
                    self._t0 = arrived.at
                index, self._given = self._given, self._given + 1
                self._measuring = arrived
                self.size = frame.size
            frame = frame.renumbered(index, round(arrived.at - self._t0, 6))
            frame.at = time.time() - (time.monotonic() - arrived.at)  # when it came, wall clock (the page's latency)
            return frame

    def close(self) -> None:
        """The loop let go of the feed (it stops, or reopens its source): nothing to release, the phone stays
        connected; the frame being measured is forgotten."""
        with self._cond:
            self._measuring = None

    def why_waiting(self) -> str:
        """Why no frame is coming, as the live page says it."""
        if not self._ever_connected:
            return (f"No phone is streaming yet: open {self.address} on the phone (scan the QR code on the live "
                    "page) and press Start.")
        if not self._connected:
            return (f"The phone stopped streaming (its camera page was closed or lost the network); open "
                    f"{self.address} on it again and press Start.")
        if self._refusal is not None:
            return self._refusal
        if self._hidden:
            return ("The phone's camera page is in the background or its screen is off, so it sends no frames; "
                    "bring the page back to the front on the phone.")
        return "The phone is connected but sends no frames; press Start on its camera page."

    def state(self) -> dict[str, Any]:
        """The phone's side at a glance (the live page and the tests)."""
        with self._cond:
            return {
                "connected": self._connected,
                "background": self._hidden,
                "received": self.received,
                "skipped": self.skipped,
                "bad": self.bad,
                "measured": self.measured,
                "taken": self.taken,
                "problem": self.problem,
                "size": list(self.size) if self.size is not None else None,
            }

    # ---- inside ----

    def _tell_measured(self) -> None:
        with self._cond:
            done, self._measuring = self._measuring, None
            if done is None:
                return
            self.measured += 1
            listeners = list(self._listeners)
        if not listeners:
            return
        measured = measured_of(done, self._outcome(), time.monotonic())
        for listener in listeners:
            listener(measured)


def _decode(jpeg: bytes) -> Frame | None:
    """The phone's picture as a frame (its grey decoded now, its colour when the page needs it); None if it is
    not a readable JPEG, read as a replay reads a recorded frame file (vision/sources.py: whole, then decoded)."""
    if jpeg[:3] != b"\xff\xd8\xff":
        return None
    try:
        check_complete(jpeg, "the phone's picture")  # libjpeg would decode the first part and grey out the rest
        return Frame.of_jpeg(0, 0.0, jpeg, "the phone's picture", colour=True)  # pictured for the page: decoded once
    except FrameError:
        return None


def anchor_ids_of(result: Any) -> tuple[int, ...]:
    """The anchor tags' ids of a frame's table (the default layout's before calibration)."""
    cal = getattr(result, "calibration", None)
    return tuple(sorted(int(k) for k in cal.layout.anchors)) if cal is not None else DEFAULT_ANCHORS


def measured_of(done: _Arrived, result: Any, now: float) -> Measured:
    """What to tell the phone about frame `done`, from `result` (the loop's newest; None before any)."""
    ids = anchor_ids_of(result)
    tags = tuple(getattr(result, "tags", ()) or ())
    size = tuple(result.size) if result is not None else (0, 0)
    anchors = tuple(
        AnchorOutline(int(t.id), tuple((float(x), float(y)) for x, y in np.asarray(t.corners_px).reshape(4, 2)))
        for t in tags if int(t.id) in ids
    )
    return Measured(
        connection=done.connection,
        seq=done.seq,
        held_ms=(now - done.at) * 1000.0,
        image_size=size,
        anchors=anchors,
        anchor_ids=ids,
        tags=len(tags),
        calibrated=getattr(result, "calibration", None) is not None,
    )
