"""The dice networks (ONNX files) loaded once each and run by OpenCV's `cv2.dnn`, shared by the d6 and d20 readers.

A cv2.dnn.Net is not safe to run from two threads at once: callers hold `lock` from setInput to forward.
"""

from __future__ import annotations

import threading
from pathlib import Path

import cv2
import numpy as np

lock = threading.Lock()
loaded: dict[str, cv2.dnn.Net] = {}
"""Path -> network; cleared to load files anew (training swaps them)."""


def net(path: Path) -> cv2.dnn.Net:
    """The network in `path`, read the first time it is asked for."""
    with lock:
        found = loaded.get(str(path))
        if found is None:
            found = loaded[str(path)] = cv2.dnn.readNetFromONNX(str(path))
        return found


def to_blob(images: list[np.ndarray]) -> np.ndarray:
    """BGR uint8 pictures (one size) as the networks' N x 3 x H x W float input, 0..1 less 0.5."""
    return cv2.dnn.blobFromImages(images, scalefactor=1.0 / 255.0, mean=(127.5, 127.5, 127.5), swapRB=False)
