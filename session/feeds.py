"""Frame feeds for the live loop: `read()` one `Frame` at a time; recordings can also `seek` and know their length.

A recorded session or a folder of frames is read frame by frame from its files, so the replay page can
jump anywhere. A video file is read through `vision.sources` frame by frame; a camera through
`NewestFrameFeed`, which keeps reading on its own thread so the loop always gets the newest frame.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from vision.jpeg_planes import Tries
from vision.session_dir import RecordedSession, SessionError, open_session
from vision.sources import FolderSource, Frame, FrameSource, frame_of_file


class RecordingFeed:
    """A recorded session (manifest + frames.jsonl) or a folder of frames, readable in order and seekable.

    colour: its JPEG frames keep the colour planes of the decode that gives their grey (`Frame.of_jpeg`): a feed
    a page watches, pictured at every frame, decodes each JPEG once. The grey, and so every verdict, is the same.
    """

    def __init__(self, files: tuple[Path, ...], times: tuple[float, ...], indices: tuple[int, ...], name: str,
                 colour: bool = False) -> None:
        if not files:
            raise SessionError(f"{name} holds no frames; record a session first or choose another one.")
        self.files, self.times, self.indices, self.name = files, times, indices, name
        self.colour = colour
        self._one_decode = Tries()
        self._pos = 0

    @classmethod
    def of_session(cls, session: RecordedSession) -> RecordingFeed:
        d = session.directory
        entries = session.entries
        return cls(
            tuple(d / e.file for e in entries),
            tuple(e.t for e in entries),
            tuple(e.index for e in entries),
            f"Session {d.name}",
        )

    @classmethod
    def of_folder(cls, folder: Path, fps: float = 30.0) -> RecordingFeed:
        src = FolderSource(folder, fps=fps)
        n = len(src.files)
        return cls(src.files, tuple(i / src.fps for i in range(n)), tuple(range(n)), f"Frame folder {folder.name}")

    @classmethod
    def open(cls, path: Path, colour: bool = False) -> RecordingFeed:
        """A session directory (with a manifest) or else a folder of frames; colour: for a page (see the class)."""
        feed = cls.of_session(open_session(path)) if (path / "manifest.json").is_file() else cls.of_folder(path)
        feed.colour = colour
        return feed

    def __len__(self) -> int:
        return len(self.files)

    @property
    def duration_s(self) -> float:
        return self.times[-1] - self.times[0] if self.times else 0.0

    def seek(self, frame_index: int) -> None:
        """Make the first frame whose index is `frame_index` or later the next one `read` returns."""
        self._pos = bisect.bisect_left(self.indices, int(frame_index))

    def read(self) -> Frame | None:
        if self._pos >= len(self.files):
            return None
        i = self._pos
        self._pos += 1
        colour = self.colour and self._one_decode.wanted
        frame = frame_of_file(self.files[i], self.indices[i], self.times[i], colour=colour)
        if colour and frame.jpeg is not None:
            self._one_decode.seen(frame.colour_planes is not None)
        return frame

    def close(self) -> None:
        self._pos = len(self.files)


class StreamFeed:
    """A camera or a video file: frames as they come; `read` returns None when a video ends."""

    def __init__(self, source: FrameSource) -> None:
        self.source = source
        self._frames: Iterator[Frame] = iter(source)

    def read(self) -> Frame | None:
        return next(self._frames, None)

    def close(self) -> None:
        self.source.close()


class NewestFrameFeed:
    """A camera read on a thread of its own: `read` returns the newest frame, never a stale queued one.

    A webcam delivers frames at its own rate and the driver queues a few; a pipeline slower than the camera
    (1080p on a laptop) would otherwise be handed ever older frames, up to the queue's length behind. Here
    the frames the loop was too slow for are skipped; those it gets are numbered 0, 1, 2, ... in the order
    it gets them (`t` stays the camera's time), so the tracker and a recording see a gapless sequence.
    A camera error is raised by the next `read`, as the camera's own read would have raised it.
    """

    def __init__(self, source: FrameSource) -> None:
        self.source = source
        self._cond = threading.Condition()
        self._newest: Frame | None = None
        self._error: BaseException | None = None
        self._ended = False
        self._closed = False
        self._given = 0
        self.skipped = 0
        """Frames the camera delivered that the loop was too slow to take."""
        self._thread = threading.Thread(target=self._grab, name=f"grab {source.description}", daemon=True)
        self._thread.start()

    def _grab(self) -> None:
        try:
            for frame in self.source:
                with self._cond:
                    if self._closed:
                        return
                    if self._newest is not None:
                        self.skipped += 1
                    self._newest = frame
                    self._cond.notify_all()
        except Exception as err:  # noqa: BLE001 - handed to the reader, who reports it
            with self._cond:
                self._error = err
                self._cond.notify_all()
        finally:
            with self._cond:
                self._ended = True
                self._cond.notify_all()

    def read(self, timeout: float = 30.0) -> Frame | None:
        """The newest frame not read yet, waiting for one; None when the source ended; raises its error."""
        end = time.monotonic() + timeout
        with self._cond:
            while self._newest is None and self._error is None and not self._ended:
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.source.description} gave no frame for {timeout:g} s.")
                self._cond.wait(left)
            if self._newest is None:
                if self._error is not None:
                    err, self._error = self._error, None
                    raise err
                return None
            frame, self._newest = self._newest, None
            index, self._given = self._given, self._given + 1
        return frame.renumbered(index)

    def close(self, timeout: float = 2.0) -> None:
        """Stop reading: the grabbing thread stops after the frame it is reading (the camera is not released
        under a read in progress unless it hangs for `timeout` s), then the camera is closed."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout)
        self.source.close()
