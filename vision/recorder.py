"""Record frames into a session directory as they come, so that a crash or a pulled plug loses at most the frame
being written.

Each frame is encoded to JPEG, written to `frame_NNNNNN.jpg.tmp`, fsynced and renamed into place; only then is
its line appended to `frames.jsonl` and fsynced. The manifest is rewritten atomically on the first frame and on
close. The format is described in docs/session_format.md and read back by `vision.sources.SessionSource`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import cv2
import numpy as np

from calibration.json_input import read_json_file
from vision.errors import FrameError
from vision.session_dir import (
    INDEX_NAME,
    MANIFEST_NAME,
    IndexEntry,
    SessionError,
    SessionManifest,
    frame_file_name,
    fsync_dir,
    write_bytes_atomic,
    write_json_atomic,
)
from vision.sources import Frame

Attachment = Path | str | Mapping[str, Any] | list[Any]
"""A file to copy into the session (path) or a JSON value to write there."""


def encode_frame(image: np.ndarray, quality: int, index: int = 0) -> bytes:
    """A frame as the JPEG file a recording keeps (at `quality`)."""
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise FrameError(f"Frame {index} could not be encoded as JPEG.")
    return encoded.tobytes()


class Recorder:
    """Writes a recorded session directory frame by frame. Use as a context manager, or call `close()`.

    `directory` must not exist yet or be empty. `calibration`, `roster`, `terrain`: a JSON file to copy in
    or a JSON value to write, as calibration.json, roster.json, terrain.json. `fsync=False` is for tests of
    speed only: without it a power cut may lose more than one frame.
    """

    def __init__(self, directory: Path | str, *, source: str = "", calibration: Attachment | None = None,
                 roster: Attachment | None = None, terrain: Attachment | None = None, jpeg_quality: int = 90,
                 fsync: bool = True, extra: Mapping[str, Any] | None = None) -> None:
        self.directory = Path(directory)
        if not 1 <= jpeg_quality <= 100:
            raise FrameError(f"JPEG quality {jpeg_quality} is out of range; use 1 to 100 (90 is a good choice).")
        if self.directory.exists():
            if not self.directory.is_dir():
                raise SessionError(f"{self.directory} is a file; record into a new directory.")
            if any(self.directory.iterdir()):
                raise SessionError(f"{self.directory} is not empty; record into a new or empty directory so "
                                   "no earlier recording is overwritten.")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise SessionError(f"Cannot create session directory {self.directory} ({err.strerror}); "
                               "choose a directory you can write to.") from None
        self.jpeg_quality = jpeg_quality
        self.fsync = fsync
        attachments: list[str] = []
        for name, value in (("calibration.json", calibration), ("roster.json", roster),
                            ("terrain.json", terrain)):
            if value is not None:
                self._attach(name, value)
                attachments.append(name)
        self._manifest = SessionManifest(
            created=datetime.now(UTC).isoformat(timespec="seconds"), source=source,
            jpeg_quality=jpeg_quality, attachments=tuple(attachments), extra=dict(extra or {}))
        self._index_fd: int | None = os.open(self.directory / INDEX_NAME,
                                             os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if fsync:
            fsync_dir(self.directory)
        write_json_atomic(self.directory / MANIFEST_NAME, self._manifest.to_json(), fsync=fsync)
        self._count = 0
        self._last_t = -math.inf

    def _attach(self, name: str, value: Attachment) -> None:
        target = self.directory / name
        if isinstance(value, (str, Path)):
            src = Path(value)
            read_json_file(src, f"The file to record as {name},", "fix the file", SessionError)
            write_bytes_atomic(target, src.read_bytes(), fsync=self.fsync)
        else:
            write_json_atomic(target, value, fsync=self.fsync)

    @property
    def frames_written(self) -> int:
        return self._count

    @property
    def image_size(self) -> tuple[int, int] | None:
        return self._manifest.image_size

    def add(self, frame: Frame) -> IndexEntry:
        """Record a frame from a source; its index in the session is the next one, its source index is kept."""
        return self.write(frame.image, frame.t, source_index=frame.index)

    def write(self, image: np.ndarray, t: float, *, source_index: int | None = None,
              encoded: bytes | None = None) -> IndexEntry:
        """Record one BGR uint8 image taken at `t` seconds; returns its index entry once it is durable.
        encoded: the image already encoded (`encode_frame` at this recorder's quality), written as it is."""
        if self._index_fd is None:
            raise SessionError(f"The recorder for {self.directory} is closed; open a new one to record.")
        if not (isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim in (2, 3)
                and image.size > 0):
            raise FrameError("A frame to record must be a non-empty 8-bit image array; got "
                             f"{getattr(image, 'dtype', type(image).__name__)} {getattr(image, 'shape', '')}.")
        if not math.isfinite(t) or t < self._last_t:
            raise FrameError(f"Frame time {t} s comes before the previous frame's {self._last_t} s; "
                             "frame times must not go backwards.")
        size = (int(image.shape[1]), int(image.shape[0]))
        if self._manifest.image_size is None:
            self._manifest = replace(self._manifest, image_size=size)
            write_json_atomic(self.directory / MANIFEST_NAME, self._manifest.to_json(), fsync=self.fsync)
        elif size != self._manifest.image_size:
            w, h = self._manifest.image_size
            raise FrameError(f"Frame {self._count} is {size[0]}x{size[1]} px but this session records {w}x{h}; "
                             "keep one resolution for a whole session.")
        if encoded is None:
            encoded = encode_frame(image, self.jpeg_quality, self._count)
        entry = IndexEntry(index=self._count, t=float(t), file=frame_file_name(self._count),
                           source_index=source_index)
        write_bytes_atomic(self.directory / entry.file, encoded, fsync=self.fsync)
        line = (json.dumps(entry.to_json()) + "\n").encode("utf-8")
        os.write(self._index_fd, line)  # one write of a short line on an O_APPEND file
        if self.fsync:
            os.fsync(self._index_fd)
        self._count += 1
        self._last_t = float(t)
        return entry

    def close(self) -> None:
        """Mark the session closed in its manifest (frame count, closed: true). Safe to call twice."""
        if self._index_fd is None:
            return
        os.close(self._index_fd)
        self._index_fd = None
        self._manifest = replace(self._manifest, frames=self._count, closed=True)
        write_json_atomic(self.directory / MANIFEST_NAME, self._manifest.to_json(), fsync=self.fsync)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
