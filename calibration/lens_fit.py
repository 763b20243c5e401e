"""Whether a measured lens fits the camera's frames, and the lens to calibrate with.

A lens (camera intrinsics) is measured at one resolution. At another resolution of the same aspect ratio the
camera resamples the same field of view, so the lens is scaled to the frame (`CameraModel.scaled_to`, as
OpenCV's calibration docs prescribe for a scaled image); the sizes may differ from an exact scale by the
rounding of each side to a whole pixel (ROUNDING_PX, e.g. 1280x720 -> 854x480). At another aspect ratio the
camera crops its sensor, and where the crop lies is unknown (OpenCV has no convention for it, nor for a
1920x1088 decoder frame against 1920x1080), so the lens is set aside and the table is calibrated without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calibration.camera import CameraModel

ROUNDING_PX = 1.0
"""How far each side of a scaled frame may be from the lens's size times one common scale, pixels."""
NAMED_ASPECTS = ((4, 3), (16, 9), (16, 10), (3, 2), (5, 4), (1, 1), (21, 9), (3, 4), (9, 16))
"""Aspect ratios named as players know them ("16:9"); others are written as a decimal ("1.76:1")."""
NAMED_WITHIN = 0.005
"""A size takes a ratio's name when its width / height is within this fraction of it."""


@dataclass(frozen=True, eq=False)
class LensFit:
    """A measured lens against a frame size (w, h) px: `camera` is the lens to calibrate with (the measured one,
    or it scaled to the frame), None when it is set aside; `sentence` tells the player what was done ("" when
    the lens was measured at this very size)."""

    measured: CameraModel
    frame_size: tuple[int, int]
    camera: CameraModel | None
    sentence: str

    @property
    def scaled(self) -> bool:
        """Whether the lens was scaled to the frame."""
        return self.camera is not None and self.camera.image_size != self.measured.image_size


def same_aspect(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether size `b` (w, h) px is size `a` scaled by one factor, each side rounded within ROUNDING_PX."""
    (w, h), (w2, h2) = a, b
    low = max((w2 - ROUNDING_PX) / w, (h2 - ROUNDING_PX) / h)
    high = min((w2 + ROUNDING_PX) / w, (h2 + ROUNDING_PX) / h)
    return low <= high


def aspect_words(size: tuple[int, int]) -> str:
    """A frame's aspect ratio as a player reads it: "4:3", "16:9", else "1.76:1"."""
    w, h = size
    ratio = w / h
    for a, b in NAMED_ASPECTS:
        if abs(ratio / (a / b) - 1) <= NAMED_WITHIN:
            return f"{a}:{b}"
    g = math.gcd(w, h)
    if w // g <= 21 and h // g <= 21:
        return f"{w // g}:{h // g}"
    return f"{ratio:.2f}:1"


def size_words(size: tuple[int, int]) -> str:
    """"1280×720"."""
    return f"{size[0]}×{size[1]}"


def fit_lens(lens: CameraModel, frame_size: tuple[int, int]) -> LensFit:
    """The lens to calibrate a frame of `frame_size` (w, h) px with: as measured, scaled, or set aside."""
    size = (int(frame_size[0]), int(frame_size[1]))
    measured = lens.image_size
    if size == measured:
        return LensFit(lens, size, lens, "")
    if same_aspect(measured, size):
        return LensFit(
            lens, size, lens.scaled_to(size),
            f"The lens was measured at {size_words(measured)}; scaled to this camera's {size_words(size)}.",
        )
    return LensFit(
        lens, size, None,
        f"The lens file was measured at {size_words(measured)} ({aspect_words(measured)}) but the camera gives "
        f"{size_words(size)} ({aspect_words(size)}); calibrating without it: measure the lens at this size for "
        "better accuracy.",
    )
