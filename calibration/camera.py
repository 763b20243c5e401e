"""A camera's intrinsics (pinhole K and OpenCV distortion) at the resolution they were measured at.

Camera file (JSON; extra keys are allowed and kept by nobody)::

    {"image_size": [w, h],            pixels
     "K": [[fx, 0, cx], [0, fy, cy], [0, 0, 1]],   pixels, OpenCV pixel centres (top-left pixel at 0, 0)
     "dist": [k1, k2, p1, p2, k3, ...],            OpenCV order, length 4, 5, 8, 12 or 14
     "rms_px": r}                      RMS reprojection error of the calibration, pixels

`tablesight calibrate-camera` also writes "format", "version", "square_in" (the target's square, inches),
"pattern" and the images used; a lens scaled to another frame size (`CameraModel.scaled_to`) keeps the size it
was measured at as "scaled_from": [w, h].
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from calibration.errors import CalibrationError
from calibration.file_write import write_file
from calibration.json_input import read_json_file

DIST_LENGTHS = (4, 5, 8, 12, 14)
CAMERA_FORMAT = "tablesight-camera"
CAMERA_VERSION = 1


@dataclass(frozen=True, eq=False)
class CameraModel:
    """Intrinsics: image_size (w, h) px, K 3x3 (px), dist (OpenCV order), rms_px of their calibration."""

    image_size: tuple[int, int]
    K: np.ndarray
    dist: np.ndarray
    rms_px: float
    extra: dict[str, Any] = field(default_factory=dict)
    """Informational keys written with the file (square_in, pattern, images); not used for maths."""

    def __post_init__(self) -> None:
        k = np.array(self.K, dtype=np.float64)
        d = np.array(self.dist, dtype=np.float64).ravel()
        if k.shape != (3, 3) or not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise CalibrationError(f"The camera matrix K must be 3x3 with positive focal lengths, got {k.tolist()}.")
        if d.size not in DIST_LENGTHS or not np.all(np.isfinite(d)):
            raise CalibrationError(f"The distortion has {d.size} coefficients; OpenCV uses 4, 5, 8, 12 or 14.")
        w, h = self.image_size
        k.setflags(write=False)
        d.setflags(write=False)
        object.__setattr__(self, "K", k)
        object.__setattr__(self, "dist", d)
        object.__setattr__(self, "image_size", (int(w), int(h)))
        object.__setattr__(self, "rms_px", float(self.rms_px))

    @property
    def focal_px(self) -> float:
        """Mean of fx and fy, pixels."""
        return float((self.K[0, 0] + self.K[1, 1]) / 2)

    def scaled_to(self, image_size: tuple[int, int]) -> CameraModel:
        """The same lens seen at `image_size` (w, h) px, the whole field of view resampled: fx, cx scale by
        sx = w'/w and fy, cy by sy = h'/h about OpenCV's pixel centres (cx' = (cx + 0.5) * sx - 0.5, the
        top-left pixel's centre at 0 in both sizes); dist is unchanged (it acts on normalised coordinates);
        rms_px scales by the mean of sx and sy; extra["scaled_from"] keeps the size the lens was measured at.
        Whether the sizes share an aspect ratio is `calibration.lens_fit`'s question, not this one's."""
        w, h = int(image_size[0]), int(image_size[1])
        if w <= 0 or h <= 0:
            raise CalibrationError(f"The frame size {w}x{h} is not a picture; check the camera.")
        sx, sy = w / self.image_size[0], h / self.image_size[1]
        k = self.K.copy()
        k[0, 0] *= sx
        k[0, 1] *= sx
        k[1, 1] *= sy
        k[0, 2] = (k[0, 2] + 0.5) * sx - 0.5
        k[1, 2] = (k[1, 2] + 0.5) * sy - 0.5
        extra = {**self.extra, "scaled_from": self.extra.get("scaled_from", list(self.image_size))}
        return CameraModel((w, h), k, self.dist.copy(), self.rms_px * (sx + sy) / 2, extra)

    def to_json(self) -> dict[str, Any]:
        """The camera as the JSON object of the module docstring."""
        out: dict[str, Any] = {"format": CAMERA_FORMAT, "version": CAMERA_VERSION}
        out.update(self.extra)
        out.update(
            {
                "image_size": [self.image_size[0], self.image_size[1]],
                "K": self.K.tolist(),
                "dist": self.dist.tolist(),
                "rms_px": self.rms_px,
            }
        )
        return out

    @classmethod
    def from_json(cls, obj: Any, source: str = "The camera") -> CameraModel:
        """Validate a camera JSON object; CalibrationError (one sentence naming `source`) if malformed."""
        if not isinstance(obj, dict):
            raise CalibrationError(f"{source} is not a JSON object with image_size, K, dist and rms_px.")
        missing = [k for k in ("image_size", "K", "dist", "rms_px") if k not in obj]
        if missing:
            raise CalibrationError(
                f"{source} has no {', '.join(repr(m) for m in missing)}; make it with tablesight calibrate-camera."
            )
        size = obj["image_size"]
        if (
            not isinstance(size, list)
            or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)
        ):
            raise CalibrationError(f"{source}'s \"image_size\" is {size!r}; it must be [width, height] in pixels.")
        try:
            k = np.array(obj["K"], dtype=np.float64)
            d = np.array(obj["dist"], dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise CalibrationError(f"{source}'s \"K\" or \"dist\" is not a list of numbers.") from None
        if k.shape != (3, 3) or not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise CalibrationError(f"{source}'s \"K\" must be a 3x3 matrix with positive focal lengths.")
        if k[2].tolist() != [0.0, 0.0, 1.0] or not (0 <= k[0, 2] <= size[0] and 0 <= k[1, 2] <= size[1]):
            raise CalibrationError(
                f"{source}'s \"K\" must end with the row [0, 0, 1] and put the principal point (cx, cy) inside "
                f"the {size[0]}x{size[1]} image; make it again with tablesight calibrate-camera."
            )
        if d.size not in DIST_LENGTHS or not np.all(np.isfinite(d)):
            raise CalibrationError(f"{source}'s \"dist\" has {d.size} numbers; OpenCV uses 4, 5, 8, 12 or 14.")
        rms = obj["rms_px"]
        if isinstance(rms, bool) or not isinstance(rms, int | float) or not math.isfinite(rms) or rms < 0:
            raise CalibrationError(f"{source}'s \"rms_px\" is {rms!r}; it must be a number of pixels >= 0.")
        extra = {k: v for k, v in obj.items() if k not in ("image_size", "K", "dist", "rms_px", "format", "version")}
        return cls((size[0], size[1]), k, d, float(rms), extra)


def save_camera(camera: CameraModel, path: str | Path) -> None:
    """Write `camera` as JSON to `path`."""
    write_json(camera.to_json(), Path(path))


def load_camera(path: str | Path) -> CameraModel:
    """Read a camera file; one-sentence CalibrationError for a missing, unreadable or malformed file."""
    p = Path(path)
    obj = read_json(p, "Camera file", "make one with tablesight calibrate-camera")
    return CameraModel.from_json(obj, source=f"Camera file {p}")


def read_json(path: Path, what: str, fix: str) -> Any:
    """Parse a JSON file; CalibrationError naming `what` and `path` if missing, unreadable or not JSON."""
    return read_json_file(path, what, fix, CalibrationError)


def write_json(obj: dict[str, Any], path: Path) -> None:
    """Write `obj` as indented JSON, whole or not at all; FileWriteError naming `path` if it cannot be written."""
    write_file(path, json.dumps(obj, indent=2) + "\n", what="calibration file")

