"""Frame sources behind one interface: a camera (index or network URL), a video file, a recorded session
directory, or a folder of frames sorted by name.

Every source iterates `Frame(index, t, image)` (t in seconds from the start, image BGR uint8), has `size`
(width, height) px, `close()`, and is a context manager. Bad input raises `FrameError` (an `InputError`) with
one sentence naming the file; with `skip_bad_frames=True` (the live path) a bad frame is reported as a
`BadFrame` in `source.bad_frames` (and to `on_bad_frame`) and the source goes on. A camera that stops
delivering is reopened with bounded backoff and then raises `CameraLost`: never a hang.
"""

from __future__ import annotations

import math
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import cv2
import numpy as np

from calibration.decode import MAX_DECODE_PIXELS, ImageTooLarge, check_pixels, imdecode, too_large_sentence
from vision import jpeg_planes
from vision.errors import FrameError
from vision.session_dir import RecordedSession, SessionError, is_session_dir, open_session

IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"})
"""File name endings a folder source reads as frames (case-insensitive); other files are ignored."""

DEFAULT_FOLDER_FPS = 30.0
"""Frames a second assumed for a folder of frames, which carries no timestamps: t = index / fps."""

UNREADABLE_JPEGS = 5
"""A camera whose own JPEGs cannot be read this many times in a row has them decoded by OpenCV from then on."""
NETWORK_TIMEOUT_MS = 5000
"""How long OpenCV's FFmpeg backend may wait to open or read a network camera (ms) before giving up."""


class CameraLost(FrameError):
    """A camera stopped delivering frames and did not come back within the reconnect backoff."""


JPEG_GRAY = cv2.IMREAD_GRAYSCALE | cv2.IMREAD_IGNORE_ORIENTATION
"""A JPEG frame's grey: its luminance as coded (3 ms at 1080p, where the colour decode takes 9 ms); the pixels as
stored, as the colour decode keeps them (IMREAD_UNCHANGED ignores a phone's orientation tag too)."""
REDUCED_COLOUR = ((8, cv2.IMREAD_REDUCED_COLOR_8), (4, cv2.IMREAD_REDUCED_COLOR_4), (2, cv2.IMREAD_REDUCED_COLOR_2))
"""libjpeg's own scaled decodes (1/8, 1/4, 1/2 of each side), each about as quick as the grey one."""


class Frame:
    """One frame: `index` in its source, `t` seconds from the source's start, `image` BGR uint8 (H, W, 3).

    A frame made `of_jpeg` (a recording's file, a phone's picture, a camera frame as the recording keeps it)
    decodes only its grey at once, which is all the tag scan reads; its colour is decoded when first asked for,
    and `picture(width)` decodes it at a half, quarter or eighth of its size for the page (or makes it from the
    colour planes of the one decode, `of_jpeg(colour=True)`). Its `gray` is the JPEG's own luminance, in the live
    run and in every replay alike. Any other frame's `gray` is its image made grey (vision/tags.py `gray_frame`).
    """

    __slots__ = ("index", "t", "jpeg", "at", "_image", "_gray", "_chroma", "_where")

    def __init__(self, index: int, t: float, image: np.ndarray | None = None, jpeg: bytes | None = None, *,
                 gray: np.ndarray | None = None, where: str | Path = "", at: float | None = None,
                 chroma: jpeg_planes.Chroma | None = None) -> None:
        if image is None and (jpeg is None or gray is None):
            raise ValueError("A frame needs its image, or its JPEG and grey (Frame.of_jpeg).")
        self.index = index
        self.t = t
        self.jpeg = jpeg
        """The JPEG the frame came as, when it came as one: a recording keeps it as it is (not compressed twice)."""
        self.at = at
        """Wall clock (time.time(), s) when a camera delivered the frame; None for a recorded one."""
        self._image = image
        self._gray = gray
        self._chroma = chroma
        """The JPEG's colour planes from the one decode that gave `gray` (`of_jpeg(colour=True)`), else None."""
        self._where = where

    @classmethod
    def of_jpeg(cls, index: int, t: float, data: bytes, where: str | Path, image: np.ndarray | None = None,
                at: float | None = None, colour: bool = False) -> Frame:
        """A frame of JPEG bytes, its grey decoded now; FrameError naming `where` (a frame file's Path, or what
        the frame is: "frame 3 of camera 0") if they are not a readable image. image: the BGR picture the JPEG
        was made of (a camera's frame, recorded), shown as it is rather than decoded again; the grey, which is
        all that is measured, is the JPEG's in any case. colour: keep the colour planes of the same decode for
        `picture` (a live camera's frame, pictured for the page at every frame; vision/jpeg_planes.py): the same
        grey, and no second decode."""
        try:
            planes = jpeg_planes.decode(data) if colour and check_pixels(data) is not None else None
            gray, chroma = planes if planes is not None else (imdecode(data, JPEG_GRAY), None)
        except ImageTooLarge as err:
            raise FrameError(too_large_sentence(_frame_name(where), _frame_fix(where), err.size)) from None
        if gray is None or gray.ndim != 2 or gray.dtype != np.uint8:
            raise FrameError(f"{_frame_name(where)} is not a readable image; {_frame_fix(where)}.")
        return cls(index, t, image, jpeg=bytes(data), gray=gray, where=where, at=at, chroma=chroma)

    @property
    def image(self) -> np.ndarray:
        """The BGR uint8 (H, W, 3) frame (a JPEG frame's colour is decoded on first use)."""
        if self._image is None:
            assert self.jpeg is not None
            try:
                self._image = decode_frame_bytes(self.jpeg, self._where)
            except FrameError:  # the grey decoded, the colour did not (a JPEG damaged in its colour only)
                raise FrameError(f"{_frame_name(self._where)} is not a readable image in colour; "
                                 f"{_frame_fix(self._where)}.") from None
        return self._image

    @property
    def gray(self) -> np.ndarray:
        """The 2-D uint8 grey frame the tag scan reads (a frame with a JPEG: the JPEG's own luminance)."""
        if self._gray is None:
            if self.jpeg is not None:
                self._gray = Frame.of_jpeg(self.index, self.t, self.jpeg, self._where).gray
            else:
                from vision.tags import gray_frame  # vision.tags reads frames; it does not make them

                self._gray = gray_frame(self.image)
        return self._gray

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) px."""
        h, w = (self._gray if self._gray is not None else self.image).shape[:2]
        return int(w), int(h)

    @property
    def colour_planes(self) -> jpeg_planes.Chroma | None:
        """The JPEG's colour planes from the one decode that gave `gray` (`of_jpeg(colour=True)`), else None."""
        return self._chroma

    def picture(self, width: int) -> np.ndarray:
        """The frame in BGR colour, at least `width` px wide where that is smaller than the frame: a JPEG frame
        whose colour was not needed yet is decoded at the smallest of 1/8, 1/4, 1/2 that is wide enough (or made
        at that scale, or whole, from the colour planes of its one decode)."""
        if self._image is None and self.jpeg is not None:
            w = self.size[0]
            scale, flag = next(((k, f) for k, f in REDUCED_COLOUR if -(-w // k) >= width), (1, None))
            if self._chroma is not None and self._gray is not None:
                return self._chroma.picture(self._gray, scale)
            if flag is not None:
                small = imdecode(self.jpeg, flag | cv2.IMREAD_IGNORE_ORIENTATION)
                if small is not None and small.ndim == 3 and small.shape[2] == 3:
                    return small
        return self.image

    def renumbered(self, index: int, t: float | None = None, at: float | None = None) -> Frame:
        """This frame (sharing its decoded pixels) as number `index`, at `t` s and delivered `at` when given."""
        return Frame(index, self.t if t is None else t, self._image, self.jpeg, gray=self._gray, where=self._where,
                     at=self.at if at is None else at, chroma=self._chroma)

    def __repr__(self) -> str:
        return f"Frame(index={self.index}, t={self.t}, size={self.size}, jpeg={self.jpeg is not None})"


class ShowsFrame:
    """What a frame gave, holding the frame as `frame` (a `Frame`, or anything with a BGR `.image`): its image,
    size and picture without decoding more of it than is asked for."""

    frame: Any

    @property
    def image(self) -> np.ndarray:
        """The frame, BGR uint8 (a JPEG frame's colour is decoded now, if it was not yet)."""
        return np.asarray(self.frame.image)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the frame, px."""
        return size_of(self.frame)

    def picture(self, width: int) -> np.ndarray:
        """The frame in BGR colour, at least `width` px wide where it can be had smaller cheaply (`Frame.picture`)."""
        picture = getattr(self.frame, "picture", None)
        return np.asarray(picture(width) if picture is not None else self.frame.image)


def _frame_name(where: str | Path) -> str:
    """How a sentence names a frame: "Frame file <path>" for a file, else what it is, capitalised."""
    name = f"Frame file {where}" if isinstance(where, Path) else str(where)
    return name[:1].upper() + name[1:]


def _frame_fix(where: str | Path) -> str:
    """What to do about a frame that cannot be read: a file is replaced; a camera's frame is skipped."""
    if isinstance(where, Path):
        return "delete it or replace it with the real frame"
    return "if this keeps happening, check the camera's cable or network"


def gray_of(frame: Any) -> np.ndarray:
    """The grey image of any frame (its own `gray` when it has one, else its BGR `image` made grey)."""
    gray = getattr(frame, "gray", None)
    if gray is None:
        from vision.tags import gray_frame

        gray = gray_frame(frame.image)
    return np.asarray(gray)


def size_of(frame: Any) -> tuple[int, int]:
    """(width, height) px of any frame, without decoding a JPEG frame's colour."""
    size = getattr(frame, "size", None)
    if isinstance(size, tuple):
        return size
    h, w = frame.image.shape[:2]
    return int(w), int(h)


@dataclass(frozen=True)
class BadFrame:
    """A frame that could not be read and was skipped (live path): its index, the file or source, the reason."""

    index: int
    source: str
    message: str


@dataclass(frozen=True)
class Backoff:
    """Reconnect delays for a camera: first_s, then doubling, until total_s seconds have been spent waiting."""

    first_s: float = 0.1
    factor: float = 2.0
    total_s: float = 5.0

    def __post_init__(self) -> None:
        if not (self.first_s > 0 and self.factor >= 1 and self.total_s >= 0):
            raise ValueError(f"Backoff needs first_s > 0, factor >= 1, total_s >= 0; got {self}.")

    def delays(self) -> Iterator[float]:
        """0.1, 0.2, 0.4 ... seconds; the last one is cut so that the delays add up to total_s exactly."""
        spent, delay = 0.0, self.first_s
        while spent < self.total_s - 1e-9:
            step = min(delay, self.total_s - spent)
            yield step
            spent += step
            delay *= self.factor


def _as_bgr(image: np.ndarray, where: str) -> np.ndarray:
    """Return a BGR uint8 (H, W, 3) image; gray and BGRA are converted, anything else is a FrameError."""
    if image.dtype != np.uint8:
        raise FrameError(f"{where} has {image.dtype} pixels; frames must be 8-bit images.")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    raise FrameError(f"{where} has shape {image.shape}; frames must be gray or colour images.")


def _complete_image_bytes(data: bytes) -> bool:
    """False if a JPEG or PNG file is cut short (OpenCV would decode its first part and grey out the rest)."""
    if data[:3] == b"\xff\xd8\xff":
        return data.rstrip(b"\x00\r\n ")[-2:] == b"\xff\xd9"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return b"IEND" in data[-16:]
    return True


def read_frame_file(path: Path) -> np.ndarray:
    """Decode one frame file to BGR uint8; FrameError naming the file if it is missing, cut short or not an image."""
    return decode_frame_bytes(_frame_file_bytes(path), path)


def frame_of_file(path: Path, index: int, t: float, colour: bool = False) -> Frame:
    """Frame `index` at `t` s from one frame file (a JPEG's colour decoded only when asked for, or kept from the
    one decode with `colour`: `Frame.of_jpeg`); FrameError naming the file if it is missing, cut short or not an
    image."""
    data = _frame_file_bytes(path)
    if data[:3] == b"\xff\xd8\xff":
        return Frame.of_jpeg(index, t, data, path, colour=colour)
    return Frame(index, t, decode_frame_bytes(data, path))


def _frame_file_bytes(path: Path) -> bytes:
    """A frame file's bytes; FrameError naming it if it is missing, empty or cut short."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FrameError(f"Frame file {path} is missing; restore it or delete it from the frames.") from None
    except OSError as err:
        raise FrameError(f"Cannot read frame file {path} ({err.strerror}); check its permissions.") from None
    check_complete(data, path)
    return data


def check_complete(data: bytes, where: str | Path) -> None:
    """FrameError naming `where` (a frame file's Path, or what the frame is) if `data` is empty or a JPEG or PNG
    cut short: the bytes a replay refuses to read, so a recording must never keep them."""
    if not data:
        raise FrameError(f"{_frame_name(where)} is empty; {_frame_fix(where)}.")
    if not _complete_image_bytes(data):
        raise FrameError(f"{_frame_name(where)} is cut short (corrupt); {_frame_fix(where)}.")


def decode_frame_bytes(data: bytes, path: Path | str) -> np.ndarray:
    """Decode a frame file's bytes to BGR uint8, exactly as a replay reads them; FrameError naming `path`."""
    try:
        image = imdecode(data, cv2.IMREAD_UNCHANGED)
    except ImageTooLarge as err:
        raise FrameError(too_large_sentence(f"Frame file {path}", "delete it or replace it with the real frame",
                                            err.size)) from None
    if image is None:
        raise FrameError(f"Frame file {path} is not a readable image; delete it or replace it with the real frame.")
    return _as_bgr(image, f"Frame file {path}")


class FrameSource(ABC):
    """Iterate `Frame`s; `size` is (width, height) px; `close()`; use as a context manager.

    `skip_bad_frames`: False (default) raises FrameError at the first bad frame, after yielding every good frame
    before it; True records a `BadFrame` in `bad_frames`, calls `on_bad_frame`, and goes on.
    """

    def __init__(self, *, skip_bad_frames: bool = False,
                 on_bad_frame: Callable[[BadFrame], None] | None = None) -> None:
        self.skip_bad_frames = skip_bad_frames
        self.on_bad_frame = on_bad_frame
        self.bad_frames: list[BadFrame] = []
        self._closed = False

    @property
    @abstractmethod
    def size(self) -> tuple[int, int]:
        """(width, height) of the frames in px."""

    @property
    @abstractmethod
    def description(self) -> str:
        """What the source is, for messages and manifests: 'camera 0', 'video match.mp4', ..."""

    @abstractmethod
    def _frames(self) -> Iterator[Frame]:
        """The frames; bad ones raise FrameError through `_bad`."""

    def __iter__(self) -> Iterator[Frame]:
        if self._closed:
            raise FrameError(f"{self.description} is closed; open it again to read frames.")
        return self._frames()

    def _bad(self, index: int, where: str, err: FrameError) -> None:
        """Report a bad frame: raise in strict mode, record and notify in skip mode."""
        if not self.skip_bad_frames:
            raise err
        bad = BadFrame(index=index, source=where, message=str(err))
        self.bad_frames.append(bad)
        if self.on_bad_frame is not None:
            self.on_bad_frame(bad)

    def _check_size(self, size: tuple[int, int], where: str, expected: tuple[int, int] | None = None) -> None:
        """FrameError unless a frame of `size` (width, height) px is `expected` (default: the source's size)."""
        w, h = expected or self.size
        if size != (w, h):
            raise FrameError(f"{where} is {size[0]}x{size[1]} px but the source's frames are "
                             f"{w}x{h}; keep one resolution for a whole session.")

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _natural_key(name: str) -> tuple[Any, ...]:
    """Sort key: 'frame2' before 'frame10'; zero-padded names sort the same as plain sorting."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name))


class FolderSource(FrameSource):
    """A folder of image files, in name order (natural: 2 before 10); t = index / fps."""

    def __init__(self, folder: Path | str, *, fps: float = DEFAULT_FOLDER_FPS, skip_bad_frames: bool = False,
                 on_bad_frame: Callable[[BadFrame], None] | None = None) -> None:
        super().__init__(skip_bad_frames=skip_bad_frames, on_bad_frame=on_bad_frame)
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise FrameError(f"Frame folder {self.folder} does not exist or is not a folder; "
                             "give a folder of image files.")
        if not (fps > 0 and math.isfinite(fps)):
            raise FrameError(f"Frame rate {fps} for {self.folder} must be a positive number of frames a second.")
        self.fps = float(fps)
        self.files = tuple(sorted((p for p in self.folder.iterdir()
                                   if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES),
                                  key=lambda p: _natural_key(p.name)))
        if not self.files:
            raise FrameError(f"Frame folder {self.folder} holds no image files "
                             f"({', '.join(sorted(IMAGE_SUFFIXES))}); put the frames there.")
        self._size: tuple[int, int] | None = None

    @property
    def description(self) -> str:
        return f"frame folder {self.folder}"

    @property
    def size(self) -> tuple[int, int]:
        if self._size is None:
            for path in self.files:
                try:
                    self._size = frame_of_file(path, 0, 0.0).size
                except FrameError:
                    continue
                break
            else:
                raise FrameError(f"No file in frame folder {self.folder} is a readable image; "
                                 "check that it holds the frames.")
        return self._size

    def _frames(self) -> Iterator[Frame]:
        for index, path in enumerate(self.files):
            try:
                frame = frame_of_file(path, index, index / self.fps)
                self._check_size(frame.size, f"Frame file {path}")
            except FrameError as err:
                self._bad(index, str(path), err)
                continue
            yield frame


class SessionSource(FrameSource):
    """A recorded session directory (see vision/session_dir.py): the frames its index lists, at their times."""

    def __init__(self, directory: Path | str, *, skip_bad_frames: bool = False,
                 on_bad_frame: Callable[[BadFrame], None] | None = None, session: RecordedSession | None = None) -> None:
        """session: the directory's session as already read (its manifest and index are not read again)."""
        super().__init__(skip_bad_frames=skip_bad_frames, on_bad_frame=on_bad_frame)
        self.session: RecordedSession = session if session is not None else open_session(directory)
        if not self.session.entries:
            raise SessionError(f"Session {self.session.directory} lists no frames in its index; "
                               "it was stopped before the first frame was recorded.")
        self._size = self.session.manifest.image_size

    @property
    def directory(self) -> Path:
        return self.session.directory

    @property
    def description(self) -> str:
        return f"recorded session {self.session.directory}"

    @property
    def size(self) -> tuple[int, int]:
        if self._size is None:
            first = self.session.entries[0]
            self._size = frame_of_file(self.session.directory / first.file, first.index, first.t).size
        return self._size

    def _frames(self) -> Iterator[Frame]:
        last: Frame | None = None  # the frame of the entry before, when it read
        for n, entry in enumerate(self.session.entries):
            path = self.session.directory / entry.file
            if last is not None and entry.file == self.session.entries[n - 1].file:  # nothing moved: decoded once
                last = last.renumbered(entry.index, entry.t)
                yield last
                continue
            try:
                frame = frame_of_file(path, entry.index, entry.t)
                self._check_size(frame.size, f"Frame file {path}", self.session.size_at(entry.index))
            except FrameError as err:
                last = None
                self._bad(entry.index, str(path), FrameError(f"{str(err).rstrip('.')} (listed in {self.description})."))
                continue
            last = frame
            yield frame


class VideoSource(FrameSource):
    """A video file read with OpenCV; t = index / the file's frame rate. A file that ends before the frame
    count its header declares is reported as truncated after its readable frames have been yielded."""

    TRUNCATION_SLACK_FRAMES = 2
    """Frames a container's declared count may exceed what decodes before we call the file truncated
    (some containers round the count up by a frame)."""

    def __init__(self, path: Path | str, *, skip_bad_frames: bool = False,
                 on_bad_frame: Callable[[BadFrame], None] | None = None) -> None:
        super().__init__(skip_bad_frames=skip_bad_frames, on_bad_frame=on_bad_frame)
        self.path = Path(path)
        if not self.path.is_file():
            raise FrameError(f"Video file {self.path} does not exist; check the path.")
        self._cap = cv2.VideoCapture(str(self.path))
        if not self._cap.isOpened():
            self._cap.release()
            raise FrameError(f"Video file {self.path} cannot be opened as a video (corrupt, truncated or an "
                             "unknown format); re-copy it or convert it to MP4 or AVI.")
        fps = float(self._cap.get(cv2.CAP_PROP_FPS))
        self.fps = fps if math.isfinite(fps) and 0 < fps < 1000 else DEFAULT_FOLDER_FPS
        count = self._cap.get(cv2.CAP_PROP_FRAME_COUNT)
        self.declared_frames = int(count) if math.isfinite(count) and count > 0 else None
        self._size = (int(self._cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        if self._size[0] * self._size[1] > MAX_DECODE_PIXELS:
            self._cap.release()
            raise FrameError(too_large_sentence(f"Video file {self.path}", "convert it to 4K or less", self._size))

    @property
    def description(self) -> str:
        return f"video file {self.path}"

    @property
    def size(self) -> tuple[int, int]:
        return self._size

    def _frames(self) -> Iterator[Frame]:
        # One frame is held back: if the file turns out to be truncated, the frame at the cut is only partly
        # decoded and must not be used.
        held: np.ndarray | None = None
        index = 0
        while True:
            ok, image = self._cap.read()
            if not ok or image is None:
                break
            if held is not None:
                yield Frame(index=index - 1, t=(index - 1) / self.fps, image=held)
            held = _as_bgr(image, f"Frame {index} of {self.path}")
            index += 1
        truncated = self.declared_frames is not None and index + self.TRUNCATION_SLACK_FRAMES < self.declared_frames
        if held is not None and not truncated:
            yield Frame(index=index - 1, t=(index - 1) / self.fps, image=held)
        if index == 0:
            self._bad(0, str(self.path), FrameError(
                f"Video file {self.path} has no readable frames (corrupt or truncated); re-copy or re-record it."))
        elif truncated:
            self._bad(index - 1, str(self.path), FrameError(
                f"Video file {self.path} ends after {index - 1} of its {self.declared_frames} frames, so it is "
                "truncated; re-copy it (the frames before the cut were used)."))

    def close(self) -> None:
        self._cap.release()
        super().close()


class CameraSource(FrameSource):
    """A live camera: an index (0 = first webcam) or a URL such as a phone's MJPEG (http://...) or RTSP stream.

    t is seconds since the source was opened (monotonic clock). A failed read is retried by reopening the camera
    after each delay of `backoff`; when the backoff is spent without a frame, `CameraLost` is raised.

    A camera that sends MJPEG (a webcam at 1080p, a phone app, an IP camera's MJPEG stream) is asked for its own
    JPEG of each frame rather than OpenCV's colour decode of it (`keeps_jpeg`): the frame's grey is decoded
    alone (3 ms at 1080p, against 10 ms for the colour) and a recording keeps the camera's JPEG as it came,
    where it would otherwise compress the frame a second time (`Frame.of_jpeg`).
    """

    def __init__(self, device: int | str, *, backoff: Backoff | None = None,
                 request_size: tuple[int, int] | None = None, skip_bad_frames: bool = False,
                 on_bad_frame: Callable[[BadFrame], None] | None = None) -> None:
        super().__init__(skip_bad_frames=skip_bad_frames, on_bad_frame=on_bad_frame)
        self.device = device
        self.backoff = backoff if backoff is not None else Backoff()
        self.request_size = request_size
        self.reconnects = 0
        self.keeps_jpeg = False
        """The camera gives its own JPEG of each frame (it sends MJPEG and OpenCV passes it on undecoded)."""
        self._jpeg_refused = False
        """What OpenCV passed on undecoded was not a JPEG (or not one we can read): it decodes the camera's frames
        after a reopen."""
        self._unreadable = 0
        """The camera's own JPEGs in a row that could not be read."""
        self._one_decode = jpeg_planes.Tries()
        """Whether its JPEGs are still decoded once (vision/jpeg_planes.py), grey and picture together."""
        self.pictured: Callable[[], bool] = lambda: True
        """Whether its next frame will be pictured for a page (someone watches): only then is its JPEG decoded with
        its colour planes; a camera nobody watches decodes the grey alone (~0.9 ms less a 1080p frame)."""
        self._cap = self._open()
        if self._cap is None:
            raise FrameError(f"{self.description} cannot be opened; check that it is plugged in (or that the "
                             "URL is right and the phone app is streaming) and that no other program uses it.")
        self._size = (int(self._cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        self._t0 = time.monotonic()
        self._index = 0

    @property
    def description(self) -> str:
        return f"camera {self.device}"

    @property
    def size(self) -> tuple[int, int]:
        return self._size

    def _capture(self) -> Any:
        """The opened OpenCV capture (cv2.VideoCapture, or anything with its isOpened, get, set, read, release)."""
        if isinstance(self.device, int):
            return cv2.VideoCapture(self.device)
        return cv2.VideoCapture(self.device, cv2.CAP_FFMPEG,
                                [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, NETWORK_TIMEOUT_MS,
                                 cv2.CAP_PROP_READ_TIMEOUT_MSEC, NETWORK_TIMEOUT_MS])

    def _open(self) -> Any:
        cap = self._capture()
        if not cap.isOpened():
            cap.release()
            return None
        if self.request_size is not None:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.request_size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.request_size[1])
        self.keeps_jpeg = not self._jpeg_refused and _fourcc(cap) == "MJPG" and bool(
            cap.set(cv2.CAP_PROP_CONVERT_RGB, 0) if isinstance(self.device, int)  # V4L2: the driver's buffer
            else cap.set(cv2.CAP_PROP_FORMAT, -1))  # FFmpeg: the stream's packets, undecoded
        return cap

    def _reopen(self) -> None:
        """Release the capture and open the camera again, unless the source was closed meanwhile (from another
        thread, while it reconnected): a closed camera is never left open, for another program to find busy."""
        old, self._cap = self._cap, None
        if old is not None:
            old.release()
        if self._closed:
            return
        self._cap = self._open()
        if self._closed:  # closed while it opened: whichever of close() and this takes it releases it
            cap, self._cap = self._cap, None
            if cap is not None:
                cap.release()

    def _read(self) -> np.ndarray | None:
        if self._cap is None:
            return None
        ok, image = self._cap.read()
        if not ok or image is None:
            return None
        if self.keeps_jpeg and _is_packet(image):
            data = image.tobytes()
            if data[:3] != b"\xff\xd8\xff":  # not a JPEG after all: OpenCV decodes the camera's frames from now on
                self._jpeg_refused = True
                self._reopen()
                return self._read()
            if not _complete_image_bytes(data):  # cut short: the stream broke mid-frame, or its JPEGs end oddly
                self._unreadable += 1
                if self._unreadable >= UNREADABLE_JPEGS:  # OpenCV decodes the camera's frames from now on
                    self._jpeg_refused = True
                    self._reopen()
                    return self._read()
                return None
        return image

    def _reconnect(self) -> np.ndarray:
        """Reopen after each backoff delay until a frame comes; CameraLost when the backoff is spent."""
        waited, attempts = 0.0, 0
        for delay in self.backoff.delays():
            time.sleep(delay)
            if self._closed:
                raise CameraLost(f"{self.description} was closed while reconnecting.")
            waited += delay
            attempts += 1
            self._reopen()
            if self._closed:
                raise CameraLost(f"{self.description} was closed while reconnecting.")
            image = self._read()
            if image is not None:
                self.reconnects += 1
                return image
        raise CameraLost(f"{self.description} stopped delivering frames and did not come back after "
                         f"{attempts} reconnect attempts over {waited:.1f} s; check its cable, power or network "
                         "and start again.")

    def _frames(self) -> Iterator[Frame]:
        while not self._closed:
            image = self._read()
            if image is None:
                if self._closed:  # closed from another thread while reading
                    return
                image = self._reconnect()
            t = time.monotonic() - self._t0
            index = self._index
            self._index += 1
            where = f"frame {index} of {self.description}"
            own = self.keeps_jpeg and _is_packet(image)  # the camera's own JPEG
            try:
                if own:
                    colour = self._one_decode.wanted and self.pictured()
                    frame = Frame.of_jpeg(index, t, image.tobytes(), where, at=time.time(), colour=colour)
                    if colour:
                        self._one_decode.seen(frame.colour_planes is not None)
                else:
                    frame = Frame(index=index, t=t, image=_as_bgr(image, _frame_name(where)), at=time.time())
                self._check_size(frame.size, _frame_name(where))
            except FrameError as err:
                self._unreadable = self._unreadable + 1 if own else 0
                if self._unreadable >= UNREADABLE_JPEGS:  # its JPEGs are not ones we read: OpenCV decodes them
                    self._jpeg_refused = True
                    self._reopen()
                self._bad(index, self.description, err)
                continue
            self._unreadable = 0
            yield frame

    def close(self) -> None:
        super().close()  # closed first: a reconnect on another thread then releases what it opens
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()


def _is_packet(image: np.ndarray) -> bool:
    """Whether a capture's read gave the camera's own bytes (one row of uint8) rather than a decoded picture."""
    return image.ndim == 2 and image.shape[0] == 1 and image.dtype == np.uint8


def _fourcc(cap: Any) -> str:
    """The four letters of the codec an OpenCV capture says its camera sends ("MJPG", "YUYV", "H264"...)."""
    code = int(cap.get(cv2.CAP_PROP_FOURCC))
    return "".join(chr((code >> 8 * k) & 0xFF) for k in range(4))


def open_source(spec: int | str | Path, *, skip_bad_frames: bool = False, fps: float = DEFAULT_FOLDER_FPS,
                backoff: Backoff | None = None) -> FrameSource:
    """The right source for `spec`: an int or digits = camera index; 'scheme://...' = network camera;
    a directory with a manifest = recorded session; any other directory = folder of frames; a file = video."""
    if isinstance(spec, int) or (isinstance(spec, str) and spec.isdigit()):
        return CameraSource(int(spec), backoff=backoff, skip_bad_frames=skip_bad_frames)
    if isinstance(spec, str) and re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", spec):
        return CameraSource(spec, backoff=backoff, skip_bad_frames=skip_bad_frames)
    path = Path(spec)
    if is_session_dir(path):
        return SessionSource(path, skip_bad_frames=skip_bad_frames)
    if path.is_dir():
        return FolderSource(path, fps=fps, skip_bad_frames=skip_bad_frames)
    if path.is_file():
        return VideoSource(path, skip_bad_frames=skip_bad_frames)
    raise FrameError(f"{spec} is not a camera index, a camera URL, a video file or a folder of frames; "
                     "check the path.")
