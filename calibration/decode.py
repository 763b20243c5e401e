"""Decoding image bytes with OpenCV, safely: the pixel count is read from the file's header first (PNG IHDR,
JPEG SOF, other formats by Pillow's lazy open, which reads the header only) and an image over
MAX_DECODE_PIXELS is refused before a byte of it is decoded; `cv2.error` never escapes, and the C
libraries' own complaints (libpng, libjpeg) are kept off stderr so a command prints only our sentence.

Every image Tablesight reads from a user (a command's IMAGE, a frame file, an upload) goes through
`imdecode` here.
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import sys
import threading
import warnings
from collections.abc import Iterator

import cv2
import numpy as np

MAX_DECODE_PIXELS = 50_000_000
"""The most pixels Tablesight decodes (50 MP: a 8192x6144 photo; a 4K frame is 8.3 MP). A 20000x20000 PNG of
389 KB would otherwise take 1.2 GB as BGR and tens of seconds."""


class ImageTooLarge(Exception):
    """The image's header claims more pixels than MAX_DECODE_PIXELS; `size` is (width, height) when known."""

    def __init__(self, size: tuple[int, int] | None) -> None:
        super().__init__(f"image header claims {size}")
        self.size = size


def too_large_sentence(name: object, fix: str = "give a PNG or JPEG photo of the table (e.g. 1920x1080)",
                       size: tuple[int, int] | None = None) -> str:
    """The one sentence for an image too large to decode, naming it, its size when known, and the fix."""
    limit = f"the {MAX_DECODE_PIXELS / 1e6:.0f} MP Tablesight decodes"
    if size is None:
        return f"{name} claims more pixels than {limit}, too large to decode; {fix}."
    w, h = size
    return f"{name} is {w}x{h} pixels ({w * h / 1e6:,.0f} MP), more than {limit}, too large to decode; {fix}."


def _png_size(head: bytes) -> tuple[int, int] | None:
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return int(w), int(h)
    return None


_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def jpeg_frame(data: bytes) -> tuple[int, int, int] | None:
    """(SOF marker, width, height) of the first frame header (SOF segment) of a JPEG, walking its marker
    segments; None if none. The marker says how it is coded: 0xC0 baseline, 0xC1 extended sequential, 0xC2
    progressive, ..."""
    if data[:2] != b"\xff\xd8":
        return None
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # standalone markers
            i += 2
            continue
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in _SOF:
            if i + 9 > n:
                return None
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return int(marker), int(w), int(h)
        if marker == 0xDA or length < 2:  # scan data before any frame header
            return None
        i += 2 + length
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """The (width, height) of the first SOF segment of a JPEG; None if none."""
    frame = jpeg_frame(data)
    return None if frame is None else (frame[1], frame[2])


def _pillow_size(data: bytes) -> tuple[int, int] | None:
    """Other formats (BMP, TIFF, WebP, PNM ...): Pillow opens lazily, reading only the header."""
    from PIL import Image, UnidentifiedImageError

    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data)) as im:
                return int(im.size[0]), int(im.size[1])
        except (Image.DecompressionBombWarning, Image.DecompressionBombError):
            raise ImageTooLarge(None) from None
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError, struct.error, EOFError):
            return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """The (width, height) in pixels an image file's header claims, without decoding it; None when the bytes
    are no image format we know."""
    size = _png_size(data[:24])
    if size is None and data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    if size is None:
        size = _pillow_size(data)
    return size


def check_pixels(data: bytes) -> tuple[int, int] | None:
    """image_size(data), raising ImageTooLarge when it is over MAX_DECODE_PIXELS."""
    size = image_size(data)
    if size is not None and size[0] * size[1] > MAX_DECODE_PIXELS:
        raise ImageTooLarge(size)
    return size


_STDERR_LOCK = threading.Lock()
QUIET_NATIVE = {"on": False}
"""Set "on" by the command line: while OpenCV decodes, file descriptor 2 points at /dev/null so libpng's and
libjpeg's own messages never reach the terminal. The server leaves it off (its threads may log meanwhile)."""


@contextlib.contextmanager
def native_quiet() -> Iterator[None]:
    """Silence what C libraries print to fd 2 for the duration (when QUIET_NATIVE is on)."""
    if not QUIET_NATIVE["on"]:
        yield
        return
    with _STDERR_LOCK:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, 2)
            finally:
                os.close(null)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def imdecode(data: bytes | np.ndarray, flags: int) -> np.ndarray | None:
    """`cv2.imdecode` of `data`: None for no bytes or bytes that are not an image; ImageTooLarge for an image
    whose header claims more than MAX_DECODE_PIXELS pixels (checked before decoding)."""
    raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
    if not raw:
        return None
    size = check_pixels(raw)
    if size is None or min(size) <= 0:
        return None
    try:
        with native_quiet():
            return cv2.imdecode(np.frombuffer(raw, np.uint8), flags)
    except cv2.error as err:
        if "CV_IO_MAX_IMAGE_PIXELS" in str(err):
            raise ImageTooLarge(size) from None
        return None
