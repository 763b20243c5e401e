"""Encoding the frames a live loop shows, on a thread of its own, so that watching never slows the pipeline.

The loop's thread builds each frame's message (a dict) and hands it here with the picture; this thread
turns it into the JSON text and, when someone watches, the JPEG, and publishes both on the `Broadcast`.
OpenCV's JPEG encoder releases Python's interpreter lock, so on a machine with two or more cores the
encoding of frame N runs beside the detection of frame N + 1 instead of after it.

Only the newest frame waits here: if the encoder is still busy when a newer frame comes (it never is at
camera rates: ~5 ms against ~30 ms), the older one is dropped, but its events and verdicts are carried
into the newer message, so the page's event log misses nothing.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import cv2
import numpy as np
import orjson

from session.broadcast import Broadcast

log = logging.getLogger("tablesight.live")

IDLE_JPEG_INTERVAL_S = 1.0
"""With nobody watching, a JPEG is still made this often so a newcomer sees a recent picture at once."""
STREAM_MAX_WIDTH = 1280
"""The picture sent to the pages is scaled down to this width: a 1080p or 4K frame costs the server and every
browser 2-8x less to encode, send and decode, and the page shows it at ~900 px anyway. Shapes stay in the
frame's own pixels."""
STREAM_MIN_WIDTH = 320
"""...and to the widest any page says it shows it at (`Broadcast.picture_widths`), but never below this."""
SENT_KEPT = 120
"""The entries (events and verdicts) of this many frame messages last published are kept (`sent_after`): a page that
skipped some (it was decoding a picture, or the server sent it only the newest) asks for theirs."""
AHEAD_KEPT = 3
"""Pictures made ahead that are kept for the frames they were made of (the one being ruled, the one read ahead)."""


class Pictured(Protocol):
    """A frame that can give its picture smaller than itself cheaply (session/pipeline.py `FrameResult`)."""

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) px."""

    def picture(self, width: int) -> np.ndarray:
        """The frame in BGR colour, at least `width` px wide (or whole)."""


@dataclass
class _Pending:
    message: dict[str, Any]
    image: np.ndarray | Pictured | None
    started: float
    """time.perf_counter() when the loop started on this frame (for the frame-to-published latency, ms)."""
    picture: bool = False
    """Make the JPEG even with nobody watching (a paused, stepped or sought frame: no newer one will come)."""
    complete: Callable[[dict[str, Any]], None] | None = None
    """What is left to fill in `message`, done on the publisher's thread."""
    carried: list[dict[str, Any]] = field(default_factory=list)


class FramePublisher:
    """Turns frame messages into published JSON + JPEG on its own thread; see the module docstring.

    on_published(latency_ms): told, on this thread, how long a frame took from the loop starting on it
    to its bytes being published.
    """

    def __init__(self, broadcast: Broadcast, jpeg_quality: int = 80, name: str = "live",
                 on_published: Callable[[float], None] = lambda ms: None) -> None:
        self.broadcast = broadcast
        self._quality = int(jpeg_quality)
        self._on_published = on_published
        self._cond = threading.Condition()
        self._pending: _Pending | None = None
        self._busy = False
        self._stop = False
        self._last_jpeg = -math.inf
        self._bare: _Pending | None = None
        """The newest published frame if it went out without its picture (nobody was watching), else None."""
        self.sent = 0
        """Frame messages published; each message says its number (`sent`), so a page knows which it skipped."""
        self._sent_entries: deque[dict[str, Any]] = deque(maxlen=SENT_KEPT)
        self.dropped = 0
        """Frames replaced by a newer one before they were encoded (their events were carried over)."""
        self._ahead: list[tuple[Any, int | None, bytes]] = []
        """Pictures made ahead (`picture_ahead`), newest last: (the frame, the width the pages showed, JPEG)."""
        self._thread = threading.Thread(target=self._run, name=f"tablesight-{name}-encode", daemon=True)
        """Started by the first `submit`: a publisher made but never used (a loop never started) holds no thread."""

    def submit(self, message: dict[str, Any], image: np.ndarray | Pictured | None, started: float,
               picture: bool = False, complete: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Publish `message` (and `image` as JPEG when watched, or always with `picture`) soon; never waits.
        complete: what is left to fill in the message (on this publisher's thread, skipped if the frame is
        dropped for a newer one)."""
        with self._cond:
            old = self._pending
            item = _Pending(message, image, started, picture, complete)
            if old is not None:
                self.dropped += 1
                item.message = _carry_events(old.message, message)
            self._pending = item
            if self._thread.ident is None and not self._stop:  # the first frame starts the thread
                self._thread.start()
            self._cond.notify_all()

    def picture_ahead(self, frame: np.ndarray | Pictured) -> None:
        """Make `frame`'s picture now, on the caller's thread (the feed's worker, beside the loop's ruling),
        when pages are watching: publishing the frame then costs only its JSON. Its JPEG is used if the pages still
        show the same width when it is published (else, or if it is not made yet, the publisher makes it)."""
        if self.broadcast.watchers <= 0:
            return
        width = self._shown_px(frame)
        try:
            jpeg = stream_jpeg(frame, width, self._quality)
        except ValueError:  # cannot decode or encode it (InputError is one): the publisher tries again when the frame is published, and says so
            return
        with self._cond:
            self._ahead = [*self._ahead[-(AHEAD_KEPT - 1):], (frame, width, jpeg)]

    def _shown_px(self, image: np.ndarray | Pictured) -> int | None:
        """How wide the pages are sent `image`'s picture, px: the widest a watcher said it shows it at, and no
        narrower than what a watcher that has not said gets (`stream_size`); None when none said."""
        said, silent = self.broadcast.picture_widths
        if said is None or not silent:
            return said
        size = (int(image.shape[1]), int(image.shape[0])) if isinstance(image, np.ndarray) else image.size
        return max(said, stream_size(size, None)[0])

    def _made_ahead(self, image: Any) -> bytes | None:
        """The JPEG `picture_ahead` made of `image` (a frame, or a result holding it as `.frame`) at the width the
        pages show now, or None."""
        frame = getattr(image, "frame", image)
        width = self._shown_px(image)
        with self._cond:
            return next((jpeg for f, w, jpeg in self._ahead if f is frame and w == width), None)

    def show_picture(self) -> None:
        """The newest frame stays on show (paused, ended): publish it with its picture if it went out without one
        (again, without the events and verdicts it already carried)."""
        with self._cond:
            end = time.monotonic() + 5.0
            while self._busy and self._pending is None and time.monotonic() < end:
                self._cond.wait(0.1)  # a frame going out now is the newest: wait to know if it had its picture
            if self._pending is not None:
                self._pending.picture = True
                return
            bare, self._bare = self._bare, None
            if bare is None or self._stop:
                return
            again = {**bare.message, "events": [], "verdicts": []}
            self._pending = _Pending(again, bare.image, time.perf_counter(), picture=True)
            if self._thread.ident is None:
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything submitted so far is published (a paused frame redrawn, tests)."""
        end = time.monotonic() + timeout
        with self._cond:
            while self._pending is not None or self._busy:
                left = end - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._cond.wait(left)
        return True

    def sent_after(self, sent: int, before: int | None = None) -> list[dict[str, Any]]:
        """The events and verdicts of the frame messages numbered after `sent` (and before `before`), oldest first:
        [{"sent", "run", "frame", "events", "verdicts"}]; only the last SENT_KEPT messages' are kept."""
        with self._cond:
            kept = list(self._sent_entries)
        return [e for e in kept if e["sent"] > sent and (before is None or e["sent"] < before)]

    def close(self, timeout: float = 5.0) -> None:
        self.flush(timeout)
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stop:
                    self._cond.wait()
                if self._pending is None:
                    return
                item, self._pending = self._pending, None
                self._busy = True
            pictured = False
            try:
                pictured = self._publish(item)
            except Exception:  # a fault of ours on one frame: logged; the next frames are still shown
                log.exception("could not publish frame %s", item.message.get("frame_index"))
            finally:
                with self._cond:
                    self._bare = item if item.image is not None and not pictured else None
                    self._busy = False
                    self._cond.notify_all()

    def _publish(self, item: _Pending) -> bool:
        """Publish one frame; True if it went out with its picture."""
        jpeg: bytes | None = None
        if item.complete is not None:
            item.complete(item.message)
            item.complete = None
        now = time.monotonic()
        wanted = item.picture or self.broadcast.watchers > 0 or now - self._last_jpeg >= IDLE_JPEG_INTERVAL_S
        if item.image is not None and wanted:
            jpeg = self._made_ahead(item.image)
            if jpeg is None:
                try:
                    jpeg = stream_jpeg(item.image, self._shown_px(item.image), self._quality)
                except ValueError as err:  # cannot decode or encode it (InputError is one): the frame's measures go out all the same
                    log.warning("frame %s went out without its picture: %s", item.message.get("frame_index"), err)
            if jpeg is not None:
                self._last_jpeg = now
        with self._cond:
            self.sent += 1
            item.message["sent"] = self.sent
            self._sent_entries.append({"sent": self.sent, "run": item.message.get("run"),
                                       "frame": item.message.get("frame_index"),
                                       "events": list(item.message.get("events") or ()),
                                       "verdicts": list(item.message.get("verdicts") or ())})
        text = orjson.dumps(item.message, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode()
        self.broadcast.publish("frame", text, jpeg)
        self._on_published((time.perf_counter() - item.started) * 1000.0)
        return jpeg is not None


def stream_size(size: tuple[int, int], shown_px: int | None = None) -> tuple[int, int]:
    """(width, height) px of the picture the pages are sent of a frame of `size`: the width the widest page shows
    it at (`shown_px`), never below STREAM_MIN_WIDTH nor above STREAM_MAX_WIDTH or the frame's own. Every pixel
    more costs the browser its decode and its scaling down every frame (1080p shown 704 px across: 704, not the
    960 a halving would give; halving first is cheap here, see `_scaled`). When a watcher has not said how wide
    it shows it: the frame halved until it is no wider than STREAM_MAX_WIDTH, an eighth at most, then scaled to
    it (a JPEG frame decodes at a half or a quarter of its size for a third of a whole decode: 1080p and 4K go
    at 960 px, 720p whole)."""
    w, h = size
    if shown_px is None:
        k = 1
        while w / k > STREAM_MAX_WIDTH and k < 8:
            k *= 2
        if k == 1:
            return w, h
        most = min(STREAM_MAX_WIDTH, -(-w // k))
    else:
        most = max(STREAM_MIN_WIDTH, min(STREAM_MAX_WIDTH, int(shown_px)))
    if w <= most:
        return w, h
    return most, max(1, round(h * most / w))


def stream_picture(image: np.ndarray | Pictured, shown_px: int | None = None) -> np.ndarray:
    """The frame as the pages are sent it, `stream_size` (the page draws it over the frame's own size,
    `image_size`, where the pixel shapes are). A `Pictured` frame is asked for its picture at that width first
    (a JPEG decoded at a half or a quarter of its size costs a third of a whole decode)."""
    if isinstance(image, np.ndarray):
        h, w = image.shape[:2]
        width, height = stream_size((int(w), int(h)), shown_px)
    else:
        width, height = stream_size(image.size, shown_px)
        image = image.picture(width)
    return _scaled(image, width, height)


def stream_jpeg(image: np.ndarray | Pictured, shown_px: int | None, quality: int) -> bytes:
    """The JPEG the pages are sent of a frame (`stream_picture` at `quality`); a frame that came as a JPEG (a
    recording's, an MJPEG camera's) and is sent whole goes as that JPEG, not decoded and compressed again."""
    if not isinstance(image, np.ndarray):
        own = getattr(getattr(image, "frame", image), "jpeg", None)
        if isinstance(own, bytes) and stream_size(image.size, shown_px) == image.size \
                and b"Exif\x00" not in own[:65536]:  # a browser would turn it by its orientation tag
            return own
    return picture_jpeg(stream_picture(image, shown_px), quality)


def _scaled(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """`image` at `width` x `height` px (no larger than it): halved by area averaging while it is at least twice
    that (OpenCV's fast path: 0.5 ms from 1080p, where a third by area takes 2.7 ms), then bilinear for the rest."""
    while image.shape[1] >= 2 * width and image.shape[0] >= 2 * height and image.shape[1] % 2 == 0 \
            and image.shape[0] % 2 == 0:
        image = cv2.resize(image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_AREA)
    if (image.shape[1], image.shape[0]) == (width, height):
        return image
    return cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)


def picture_jpeg(image: np.ndarray, quality: int) -> bytes:
    """`image` as JPEG at `quality` (a stream picture, or the whole frame as a snapshot for the calibration wizard
    to mark anchors on); ValueError if it cannot be encoded."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("The frame could not be encoded as JPEG.")
    return buf.tobytes()


def _carry_events(older: dict[str, Any], newer: dict[str, Any]) -> dict[str, Any]:
    """`newer` with the events and verdicts of a dropped `older` message in front of its own (not across a new pass of
    a looping recording: that pass's list starts afresh)."""
    if older.get("run") != newer.get("run"):
        return newer
    out = dict(newer)
    frame = older.get("frame_index")
    out["events"] = list(older.get("events") or ()) + list(newer.get("events") or ())
    out["verdicts"] = [{"frame": frame, **v} for v in older.get("verdicts") or ()] + list(newer.get("verdicts") or ())
    return out
