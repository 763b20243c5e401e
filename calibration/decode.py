"""Decoding image bytes with OpenCV without letting `cv2.error` escape: a file whose header claims more
pixels than OpenCV will decode (its CV_IO_MAX_IMAGE_PIXELS, 2^30) makes `cv2.imdecode` raise, not return None."""

from __future__ import annotations

import cv2
import numpy as np

MAX_DECODE_PIXELS = 1 << 30
"""OpenCV's default CV_IO_MAX_IMAGE_PIXELS."""


class ImageTooLarge(Exception):
    """The image's header claims more pixels than OpenCV will decode."""


def too_large_sentence(name: object, fix: str = "give a PNG or JPEG photo of the table (e.g. 1920x1080)") -> str:
    """The one sentence for an image too large to decode, naming it and the fix."""
    return f"{name} claims more than {MAX_DECODE_PIXELS:,} pixels, too large to decode; {fix}."


def imdecode(data: bytes | np.ndarray, flags: int) -> np.ndarray | None:
    """`cv2.imdecode` of `data`: None for no bytes or bytes that are not an image; ImageTooLarge for an image
    whose header claims more than MAX_DECODE_PIXELS pixels."""
    buf = data if isinstance(data, np.ndarray) else np.frombuffer(data, np.uint8)
    if not buf.size:
        return None
    try:
        return cv2.imdecode(buf, flags)
    except cv2.error as err:
        if "CV_IO_MAX_IMAGE_PIXELS" in str(err):
            raise ImageTooLarge(str(err)) from None
        return None
