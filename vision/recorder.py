"""Record frames into a session directory as they come, so that a crash or a pulled plug loses at most the frame
being written.

Each frame is encoded to JPEG, written to `frame_NNNNNN.jpg.tmp`, fsynced and renamed into place; only then is
its line appended to `frames.jsonl` and fsynced. `write` does both; a live recording calls `write_file` when the
frame arrives and `list_frame` once the frame is ruled and its rows are in the session store, so that the index,
which every reader trusts, lists only frames whose rows the store holds (session/recording.py). The manifest is rewritten atomically on the first frame, when a
segment starts (the frames change size, or their numbers jump past frames not recorded) and on close. A write the
disk refuses leaves nothing behind: no torn index line, no frame file unlisted. The format is described in
docs/session_format.md and read back by `vision.sources.SessionSource`.
"""

from __future__ import annotations

import contextlib
import errno
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
    Segment,
    SessionError,
    SessionManifest,
    frame_file_name,
    fsync_dir,
    write_bytes_atomic,
    write_json_atomic,
)
from vision.sources import Frame, check_complete
from vision.stillness import tile_grid

Attachment = Path | str | Mapping[str, Any] | list[Any]
"""A file to copy into the session (path) or a JSON value to write there."""


STILL_TILE_PX = 16
"""Side of the tiles two pictures are compared by, px."""
NOISE_GREY = 8
"""Each pixel's absolute grey difference is first lessened by this much (0 at most): sensor and JPEG noise."""
STILL_GREY = 3.0
"""Two pictures are the same when no tile's mean of what is left exceeds this, grey levels."""


def same_picture(now: np.ndarray, kept: np.ndarray) -> bool:
    """Whether grey picture `now` shows what `kept` (the last frame a recording stored, as decoded) shows, within
    the camera's noise: in every STILL_TILE_PX tile (the right and bottom edges included), the mean over its
    pixels of max(|now - kept| - NOISE_GREY, 0) is below STILL_GREY.

    Measured on a rendered 1080p table (28 px an inch, 24 bases with 0.75" tags, blur 0.6 px, Gaussian noise, each
    picture JPEG q90; tests/probe/test_recording_small.py): two pictures of a still table give at most
    0.14 (noise sigma 1.5), 0.39 (sigma 3) and 1.07 (sigma 5) grey levels; a base slid by 0.5 px gives 8.0 to 15.8
    and by 1 px 18.2 to 36.4 (by direction, sigma 3). So STILL_GREY sits 3x above the worst noise and 6x below a
    1-pixel move; a tag turned by 1 degree (its corners moved ~0.2 px) gives 0.9 and counts as still, as does any
    change too small to move a measurement. ~1.3 ms a 1080p frame (absolute difference, subtraction, integral image).
    """
    if now.shape != kept.shape:
        return False
    diff = cv2.absdiff(now, kept)
    left = cv2.subtract(diff, np.full_like(diff, NOISE_GREY))
    h, w = left.shape[:2]
    t = STILL_TILE_PX
    parts = [left] + ([left[h - t:, :]] if h % t and h >= t else []) + ([left[:, w - t:]] if w % t and w >= t else [])
    if h < t or w < t:
        return float(np.mean(left)) < STILL_GREY
    return all(float(tile_grid(part, t).max()) < STILL_GREY for part in parts)


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
        self._index_bytes = 0
        """The index's length after its last whole line (a line the disk took only in part is cut back to it)."""
        try:
            self._index_bytes = os.fstat(self._index_fd).st_size
            if fsync:
                fsync_dir(self.directory)
            write_json_atomic(self.directory / MANIFEST_NAME, self._manifest.to_json(), fsync=fsync)
        except BaseException:  # a full disk: nothing is left open behind a recording that could not start
            os.close(self._index_fd)
            self._index_fd = None
            raise
        self._count = 0
        self._next = 0
        """The next frame's number, unless a caller numbers it (frames not recorded leave a jump)."""
        self._segments: list[Segment] = []
        self._segment_frames = 0
        """Frames written into the newest segment (listed or not)."""
        self._last_t = -math.inf
        self._unlisted: list[IndexEntry] = []
        """Frames whose file is written and durable but whose index line is not, oldest first."""
        self._last_listed = -1
        """The newest frame the index lists (-1: none)."""
        self._last_file: str | None = None
        """The file of the newest frame written (None: none, or it was dropped); `repeat` points at it."""
        self._listed_file: str | None = None
        """The file of the newest frame listed."""

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

    @property
    def segments(self) -> tuple[Segment, ...]:
        """The segments written so far (runs of frames of one size, numbered without a jump)."""
        return tuple(self._segments)

    def add(self, frame: Frame) -> IndexEntry:
        """Record a frame from a source; its index in the session is the next one, its source index is kept."""
        return self.write(frame.image, frame.t, source_index=frame.index)

    @property
    def unlisted(self) -> tuple[IndexEntry, ...]:
        """Frames written (`write_file`) but not yet listed in the index, oldest first."""
        return tuple(self._unlisted)

    def write(self, image: np.ndarray, t: float, *, source_index: int | None = None,
              encoded: bytes | None = None, index: int | None = None) -> IndexEntry:
        """Record one BGR uint8 image taken at `t` seconds: its file, then its index line (`write_file`, then
        `list_frame`, with every frame written before it); returns its index entry once both are durable. An
        OSError (the disk is full) leaves the session as it was before this frame."""
        entry = self.write_file(image, t, source_index=source_index, encoded=encoded, index=index)
        while self._unlisted:
            self.list_frame(self._unlisted[0])
        return entry

    def write_file(self, image: np.ndarray, t: float, *, source_index: int | None = None,
                   encoded: bytes | None = None, index: int | None = None) -> IndexEntry:
        """Write one BGR uint8 image taken at `t` seconds as its frame file, durable but not yet listed: a reader
        sees it only once `list_frame` has appended its line. Returns its index entry.
        encoded: the image already encoded (`encode_frame` at this recorder's quality, or a camera's own JPEG),
        written as it is once it is whole (a JPEG cut short, which a replay would refuse, raises FrameError).
        index: the frame's number (default: the next); a number past the next one (frames not recorded) or an image
        of another size than the frame before starts a new segment. An OSError (the disk is full) leaves no file
        of this frame behind."""
        if self._index_fd is None:
            raise SessionError(f"The recorder for {self.directory} is closed; open a new one to record.")
        if not (isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim in (2, 3)
                and image.size > 0):
            raise FrameError("A frame to record must be a non-empty 8-bit image array; got "
                             f"{getattr(image, 'dtype', type(image).__name__)} {getattr(image, 'shape', '')}.")
        if not math.isfinite(t) or t < self._last_t:
            raise FrameError(f"Frame time {t} s comes before the previous frame's {self._last_t} s; "
                             "frame times must not go backwards.")
        number = self._next if index is None else int(index)
        if number < self._next:
            raise FrameError(f"Frame {number} comes after frame {self._next - 1}; frame numbers must increase.")
        if encoded is None:
            encoded = encode_frame(image, self.jpeg_quality, number)
        else:
            check_complete(encoded, f"frame {number} to record")
        self._segment_for(number, (int(image.shape[1]), int(image.shape[0])))
        entry = IndexEntry(index=number, t=float(t), file=frame_file_name(number), source_index=source_index)
        write_bytes_atomic(self.directory / entry.file, encoded, fsync=self.fsync)  # refused: its temp file is gone
        self._last_file = entry.file
        return self._written(entry)

    @property
    def last_file(self) -> str | None:
        """The file of the newest frame written and not dropped (None: none yet)."""
        return self._last_file

    def can_repeat(self, index: int) -> bool:
        """Whether frame `index` may be recorded as the newest frame's file again (`repeat`): a file was written
        and `index` follows on without a jump (no new segment starts there)."""
        return self._last_file is not None and int(index) == self._next and self._segment_frames > 0

    def repeat(self, t: float, *, source_index: int | None = None, index: int | None = None) -> IndexEntry:
        """Record frame `index` (default: the next), taken at `t` s, as the picture of the newest frame written:
        its entry names that frame's file and nothing is written until `list_frame`. For a frame in which nothing
        moved (`same_picture`); FrameError when it cannot be (`can_repeat`)."""
        number = self._next if index is None else int(index)
        if self._index_fd is None:
            raise SessionError(f"The recorder for {self.directory} is closed; open a new one to record.")
        if not math.isfinite(t) or t < self._last_t:
            raise FrameError(f"Frame time {t} s comes before the previous frame's {self._last_t} s; "
                             "frame times must not go backwards.")
        if not self.can_repeat(number) or self._last_file is None:
            raise FrameError(f"Frame {number} cannot repeat a frame's picture: none was written just before it.")
        return self._written(IndexEntry(index=number, t=float(t), file=self._last_file, source_index=source_index))

    def _written(self, entry: IndexEntry) -> IndexEntry:
        self._unlisted.append(entry)
        self._segment_frames += 1
        self._next = entry.index + 1
        self._last_t = float(entry.t)
        return entry

    def list_frame(self, entry: IndexEntry) -> None:
        """Append the index line of `entry`, the oldest frame written and not yet listed, and fsync it. An OSError
        (the disk is full) cuts the torn line off and drops every unlisted frame (`drop_unlisted`), so the index
        never lists a frame after one it could not list."""
        if self._index_fd is None:
            raise SessionError(f"The recorder for {self.directory} is closed; open a new one to record.")
        if not self._unlisted or self._unlisted[0] != entry:
            raise SessionError(f"Frame {entry.index} is not the next frame to list in {self.directory / INDEX_NAME}; "
                               "list the frames in the order they were written.")
        line = (json.dumps(entry.to_json()) + "\n").encode("utf-8")
        try:
            written = os.write(self._index_fd, line)  # one write of a short line on an O_APPEND file
            if written != len(line):
                raise OSError(errno.ENOSPC, "the frame index took only part of a line")
            if self.fsync:
                os.fsync(self._index_fd)
        except OSError:
            with contextlib.suppress(OSError):  # no torn line for the next frame's line to follow
                os.ftruncate(self._index_fd, self._index_bytes)
            self.drop_unlisted()
            raise
        self._unlisted.pop(0)
        self._index_bytes += len(line)
        self._count += 1
        self._last_listed = entry.index
        self._listed_file = entry.file

    def drop_unlisted(self) -> tuple[IndexEntry, ...]:
        """Remove the files of the frames written but not listed (a frame the index does not list is room taken for
        nothing) and number on from the newest listed frame, so the next frame written starts a new segment.
        Returns the frames dropped."""
        dropped, self._unlisted = tuple(self._unlisted), []
        for entry in dropped:
            if entry.file == frame_file_name(entry.index):  # its own file, not a listed frame's it repeats
                _remove(self.directory / entry.file)
        if dropped:
            self._last_file = self._listed_file
            self._next = self._last_listed + 1
            first = self._segments[-1].first if self._segments else 0
            self._segment_frames = max(0, self._last_listed - first + 1)
        return dropped

    def _segment_for(self, number: int, size: tuple[int, int]) -> None:
        """Start a segment at frame `number` if it is the first frame, a frame of another size, or comes after a
        jump; the manifest says so before the frame is written (a segment the disk then refuses any frame of is
        replaced by the next one)."""
        segments = list(self._segments)
        if segments and segments[-1].image_size == size and number == self._next:
            return
        if segments and self._segment_frames == 0:
            segments.pop()  # started, but no frame of it was written
        segments.append(Segment(number, size))
        listed = tuple(segments) if len(segments) > 1 or segments[0].first != 0 else ()
        manifest = replace(self._manifest, image_size=segments[0].image_size, segments=listed)
        write_json_atomic(self.directory / MANIFEST_NAME, manifest.to_json(), fsync=self.fsync)
        self._manifest, self._segments, self._segment_frames = manifest, segments, 0

    def close(self) -> None:
        """Mark the session closed in its manifest (frame count, closed: true); the files of frames never listed
        are removed. Safe to call twice."""
        if self._index_fd is None:
            return
        self.drop_unlisted()
        os.close(self._index_fd)
        self._index_fd = None
        self._manifest = replace(self._manifest, frames=self._count, closed=True)
        write_json_atomic(self.directory / MANIFEST_NAME, self._manifest.to_json(), fsync=self.fsync)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
