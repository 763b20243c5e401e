"""The dice networks (ONNX files) loaded once each and run by onnxruntime on one thread, shared by the d6 and d20
readers.

onnxruntime runs these small networks ~1.6x quicker than OpenCV's `cv2.dnn` on one core (the table reader: 42
squares 21.3 ms against 33.0 ms; the same outputs within 2e-6), and the speed goal is one core's. Callers hold
`lock` from `setInput` to `forward` (a `Net` keeps its input between the two).
"""

from __future__ import annotations

import threading
from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort

lock = threading.Lock()


class Net:
    """One ONNX network with cv2.dnn.Net's two calls: `setInput(blob)`, then `forward()` -> its first output."""

    def __init__(self, path: Path) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._input = self._session.get_inputs()[0].name
        self._blob: np.ndarray | None = None

    def setInput(self, blob: np.ndarray) -> None:  # noqa: N802 - cv2.dnn.Net's name, which the readers call
        self._blob = np.ascontiguousarray(blob, np.float32)

    def forward(self) -> np.ndarray:
        if self._blob is None:
            raise ValueError("setInput comes before forward")
        return np.asarray(self._session.run(None, {self._input: self._blob})[0])


loaded: dict[str, Net] = {}
"""Path -> network; cleared to load files anew (training swaps them)."""


def net(path: Path) -> Net:
    """The network in `path`, read the first time it is asked for."""
    with lock:
        found = loaded.get(str(path))
        if found is None:
            found = loaded[str(path)] = Net(path)
        return found


def to_blob(images: list[np.ndarray]) -> np.ndarray:
    """BGR uint8 pictures (one size) as the networks' N x 3 x H x W float input, 0..1 less 0.5."""
    return cv2.dnn.blobFromImages(images, scalefactor=1.0 / 255.0, mean=(127.5, 127.5, 127.5), swapRB=False)
