"""Frame feeds for the live loop: `read()` one `Frame` at a time; recordings can also `seek` and know their length.

A recorded session or a folder of frames is read frame by frame from its files, so the replay page can
jump anywhere. A camera or a video file is read through `vision.sources` as it comes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from pathlib import Path

from vision.session_dir import RecordedSession, SessionError, open_session
from vision.sources import FolderSource, Frame, FrameSource, read_frame_file


class RecordingFeed:
    """A recorded session (manifest + frames.jsonl) or a folder of frames, readable in order and seekable."""

    def __init__(self, files: tuple[Path, ...], times: tuple[float, ...], indices: tuple[int, ...], name: str) -> None:
        if not files:
            raise SessionError(f"{name} holds no frames; record a session first or choose another one.")
        self.files, self.times, self.indices, self.name = files, times, indices, name
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
    def open(cls, path: Path) -> RecordingFeed:
        """A session directory (with a manifest) or else a folder of frames."""
        if (path / "manifest.json").is_file():
            return cls.of_session(open_session(path))
        return cls.of_folder(path)

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
        return Frame(index=self.indices[i], t=self.times[i], image=read_frame_file(self.files[i]))

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
