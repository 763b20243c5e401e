"""The tag36h11 family's bitmaps, exactly as the AprilTag project publishes them.

A bitmap is 10 x 10 cells: a 1-cell white border, then the 8 x 8 black-bordered square whose side is what
"tag size" means everywhere in Tablesight. OpenCV's DICT_APRILTAG_36h11 holds the same 587 codes turned by
180 degrees; `tag_bitmap` turns them back (a test compares all 587 with the published PNGs).
"""

from __future__ import annotations

import functools

import cv2
import numpy as np

FAMILY = "tag36h11"
TAG_COUNT = 587
"""Ids 0..586."""
CELLS = 10
"""Cells a side of the full bitmap, white border included."""
BLACK_CELLS = 8
"""Cells a side of the black square (the tag size)."""


@functools.lru_cache(maxsize=1)
def _dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_APRILTAG_36h11)


@functools.lru_cache(maxsize=TAG_COUNT)
def tag_bitmap(tag_id: int) -> np.ndarray:
    """The 10 x 10 uint8 bitmap of `tag_id` (0 black, 255 white), upright as published; read-only."""
    if not 0 <= tag_id < TAG_COUNT:
        raise ValueError(f"Tag id {tag_id} is not in {FAMILY} (ids 0 to {TAG_COUNT - 1}).")
    inner = cv2.aruco.generateImageMarker(_dictionary(), tag_id, BLACK_CELLS, borderBits=1)
    bitmap = np.pad(np.rot90(inner, 2), 1, constant_values=255)
    bitmap.setflags(write=False)
    return bitmap
