"""A colour JPEG decoded once for both its uses: the grey the tag scan reads, and the colour picture the page
shows (a camera's frames, and a recording's while a page plays it).

OpenCV decodes a JPEG to grey or to colour, so a camera frame used to be decoded twice: its full grey (3.3-4.3 ms
at 1080p on this 2-core VM) and a half-size colour picture for the page (as much again, both mostly Huffman
decoding). libjpeg-turbo's TurboJPEG API decodes it once to its Y, Cb and Cr planes (3.6-5.2 ms); the picture is
then made from the planes in 0.3-0.9 ms. The Y plane is OpenCV's grey decode, bit for bit: both are
libjpeg-turbo's integer inverse DCT of the same coefficients, and OpenCV's grey of a YCbCr JPEG is its Y
component as decoded.

The library is Debian's `libturbojpeg0`, reached through PyTurboJPEG; OpenCV carries a libjpeg-turbo of its own
(3.1 in OpenCV 5.0, where Debian 12 has 2.1), so "bit for bit" is what tests/test_jpeg_planes.py checks on real
and rendered frames for the versions installed, not a promise of the format. Where the library is missing, where
a JPEG is not sequential (a progressive JPEG cut between its scans is finished differently by the two versions)
or not YCbCr (grey, Adobe RGB, CMYK), or where libjpeg-turbo has any complaint about the bytes (even one it would
decode past), `decode` returns None and the caller decodes with OpenCV as before: the same grey, the same
sentence for a damaged frame. A source whose JPEGs keep failing so stops trying (`Tries`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from calibration.decode import jpeg_frame

SEQUENTIAL = (0xC0, 0xC1)
"""The JPEG frames (SOF markers) decoded once: baseline and extended sequential Huffman, as cameras send them."""
GIVE_UP_AFTER = 5
"""A source whose JPEGs fall back to OpenCV this many times in a row is decoded by OpenCV from then on (a webcam
that puts junk before every frame's end makes libjpeg warn at every frame: three decodes each, not two)."""
TJCS_YCBCR = 1
"""TurboJPEG's colourspace (tjDecompressHeader3) whose Y plane is OpenCV's grey decode and which has colour planes:
a grey JPEG has nothing to gain, an RGB or CMYK one no Y plane."""
TJFLAG_STOPONWARNING = 8192
"""TurboJPEG flag: a warning (a damaged JPEG libjpeg would decode past) is an error, so OpenCV handles it."""

_LIB: dict[str, Any] = {}
_LOCK = threading.Lock()


def _turbo() -> Any:
    """The TurboJPEG wrapper, loaded once; None when PyTurboJPEG or libturbojpeg.so is not installed.

    PyTurboJPEG turns libjpeg-turbo's warnings into a Python warning and returns the planes as far as they were
    decoded (with TJFLAG_STOPONWARNING: not at all). Here every complaint is an OSError instead, so a damaged
    JPEG goes to OpenCV as it always did (and no process-wide warnings filter is touched from a camera's thread).
    """
    with _LOCK:
        if "lib" not in _LIB:
            try:
                from turbojpeg import TurboJPEG

                if not hasattr(TurboJPEG, "_TurboJPEG__report_error"):  # a PyTurboJPEG without the hook below
                    raise AttributeError("PyTurboJPEG's error hook is gone")

                class Strict(TurboJPEG):  # type: ignore[misc]
                    def _TurboJPEG__report_error(self, handle: Any) -> None:  # PyTurboJPEG 1.x's private hook
                        raise OSError("libjpeg-turbo could not decode the JPEG cleanly")

                _LIB["lib"] = Strict()
            except (ImportError, OSError, RuntimeError, AttributeError):
                _LIB["lib"] = None
        return _LIB["lib"]


def available() -> bool:
    """Whether JPEGs are decoded once (libjpeg-turbo's TurboJPEG found), or twice by OpenCV."""
    return _turbo() is not None


def disable_for_tests(off: bool = True) -> None:
    """Act as if the library were missing (`off`), or look for it again."""
    with _LOCK:
        _LIB.clear()
        if off:
            _LIB["lib"] = None


def _padded(plane: np.ndarray, mw: int, mh: int) -> np.ndarray:
    """`plane` with its last column and row repeated up to a whole number of `mw` x `mh` blocks."""
    h, w = plane.shape
    if w % mw == 0 and h % mh == 0:
        return plane
    return cv2.copyMakeBorder(plane, 0, -h % mh, 0, -w % mw, cv2.BORDER_REPLICATE)


def _scaled(plane: np.ndarray, sx: float, sy: float) -> np.ndarray:
    """`plane` with `sx` x `sy` of its samples to each new one: averaged over whole blocks (its last ones
    padded, as libjpeg's own scaled decode does), or bilinear where a plane must grow (4:1:1 at half size)."""
    if (sx, sy) == (1, 1):
        return plane
    if sx >= 1 and sy >= 1 and float(sx).is_integer() and float(sy).is_integer():
        bx, by = int(sx), int(sy)
        plane = _padded(plane, bx, by)
        return cv2.resize(plane, (plane.shape[1] // bx, plane.shape[0] // by), interpolation=cv2.INTER_AREA)
    size = (max(1, round(plane.shape[1] / sx)), max(1, round(plane.shape[0] / sy)))
    return cv2.resize(plane, size, interpolation=cv2.INTER_LINEAR)


@dataclass(frozen=True, slots=True)
class Chroma:
    """A JPEG's colour planes as coded: Cb and Cr uint8, each covering the frame's `padded` (width, height) px of
    luminance (libjpeg-turbo pads the planes to whole sampling blocks: a 4:2:0 plane is half of it each way)."""

    cb: np.ndarray
    cr: np.ndarray
    padded: tuple[int, int]

    def picture(self, gray: np.ndarray, k: int) -> np.ndarray:
        """The frame in BGR at 1/`k` of each side (ceil, as libjpeg's scaled decode gives it), from its Y plane
        `gray` and these planes: each averaged over k x k pixels of the frame (k = 1: the chroma grown
        bilinearly), then JPEG's YCbCr to BGR. On average within a grey level of OpenCV's
        IMREAD_REDUCED_COLOR_k (0.06-0.60 measured; 0.15 for a 4:2:0 camera frame at half size), and of its whole
        colour decode (0.03 on camera frames)."""
        h, w = gray.shape
        tw, th = -(-w // k), -(-h // k)
        planes = [_scaled(gray, k, k)[:th, :tw]]
        for plane in (self.cr, self.cb):
            sx, sy = k * plane.shape[1] / self.padded[0], k * plane.shape[0] / self.padded[1]
            part = _scaled(plane, sx, sy)[:th, :tw]
            if part.shape != (th, tw):  # a bilinear plane a sample short
                part = cv2.copyMakeBorder(part, 0, th - part.shape[0], 0, tw - part.shape[1], cv2.BORDER_REPLICATE)
            planes.append(part)
        return cv2.cvtColor(cv2.merge(planes), cv2.COLOR_YCrCb2BGR)


class Tries:
    """Whether a source's next JPEG is worth the one decode: not after GIVE_UP_AFTER of its JPEGs in a row fell
    back to OpenCV (nor, then, for the rest of that source's life)."""

    __slots__ = ("failed",)

    def __init__(self) -> None:
        self.failed = 0

    @property
    def wanted(self) -> bool:
        return self.failed < GIVE_UP_AFTER

    def seen(self, decoded_once: bool) -> None:
        """A JPEG of the source was decoded once (`decoded_once`), or fell back to OpenCV."""
        self.failed = 0 if decoded_once else self.failed + 1


def decode(data: bytes) -> tuple[np.ndarray, Chroma] | None:
    """(grey, chroma) of a colour JPEG in one decode: the grey (H, W) uint8 exactly as OpenCV's IMREAD_GRAYSCALE
    gives it, and its colour planes. None when the library is missing, the JPEG is not sequential or not YCbCr,
    or libjpeg-turbo complains about it: the caller decodes with OpenCV then. The caller checks the pixel count
    first (calibration.decode.check_pixels)."""
    turbo = _turbo()
    frame = jpeg_frame(data)
    if turbo is None or frame is None or frame[0] not in SEQUENTIAL:
        return None
    try:
        width, height, _, colourspace = turbo.decode_header(data)
        if colourspace != TJCS_YCBCR or width <= 0 or height <= 0:
            return None
        planes = turbo.decode_to_yuv_planes(data, flags=TJFLAG_STOPONWARNING)
    except (OSError, ValueError, TypeError):
        return None
    if len(planes) != 3:
        return None
    y = planes[0]
    gray = y if y.shape == (height, width) else np.ascontiguousarray(y[:height, :width])
    return gray, Chroma(planes[1], planes[2], (int(y.shape[1]), int(y.shape[0])))
