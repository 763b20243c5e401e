"""What the live loop drives, as protocols: a feed of frames (seekable for a recording), a pipeline (every
call the loop makes of it), what a frame gave; and DetectOnly, the pipeline of a table not calibrated yet."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from calibration.errors import InputError
from rules.engine import Action, Game, Placement, UnitId
from vision.sources import ShowsFrame, gray_of
from vision.tags import detect_tags

log = logging.getLogger("tablesight.live")


class NoGameToRule(InputError):
    """A declaration while no game is being ruled (no calibration, no game chosen, or a setup it cannot start from)."""


class LoopNotReady(InputError):
    """A declaration the frame loop did not rule in time (the camera is lost or the loop has stopped)."""


class FeedWaiting(InputError):
    """A live feed that has no frame for now and says why (a phone not streaming yet, its page in the background):
    the loop shows the sentence and asks again, keeping its pipeline and so the game. Anything else a feed raises
    is a lost source, which the loop closes and opens afresh."""


class Feed(Protocol):
    """Frames from a camera, a video or a recording. `read` returns None at the end of a recording."""

    def read(self) -> Any | None: ...

    def close(self) -> None: ...


@runtime_checkable
class SeekableFeed(Feed, Protocol):
    def seek(self, index: int) -> None: ...

    def __len__(self) -> int: ...


class JsonEvent(Protocol):
    """A typed event of a frame (vision.tracker's Move, Placed ..., session.pipeline's CameraMoved)."""

    def to_json(self) -> dict[str, Any]: ...


class FrameLike(Protocol):
    """What one frame gave (session.pipeline.FrameResult, or DetectedFrame before the table is calibrated):
    positions and overlays in table inches, `image` the BGR frame, `calibration` None when uncalibrated."""

    @property
    def frame_index(self) -> int: ...
    @property
    def t(self) -> float: ...
    @property
    def image(self) -> np.ndarray: ...
    @property
    def size(self) -> tuple[int, int]: ...
    def picture(self, width: int) -> np.ndarray: ...
    @property
    def tags(self) -> tuple[Any, ...]: ...
    @property
    def fixes(self) -> tuple[Any, ...]: ...
    @property
    def events(self) -> tuple[JsonEvent, ...]: ...
    @property
    def verdicts(self) -> tuple[Any, ...]: ...
    @property
    def overlays(self) -> tuple[Any, ...]: ...
    @property
    def board(self) -> Mapping[str, float] | None: ...
    @property
    def calibration(self) -> Any: ...
    @property
    def timings_ms(self) -> Mapping[str, float]: ...


class PipelineLike(Protocol):
    """Everything the live loop drives: session.pipeline.Pipeline on a calibrated table, DetectOnly before."""

    @property
    def calibrated(self) -> bool:
        """Whether it measures a calibrated table (and so may rule a game)."""
    @property
    def game(self) -> Game | None: ...
    @property
    def state(self) -> Any: ...
    @property
    def positions(self) -> Mapping[UnitId, Placement]: ...
    @property
    def status(self) -> str: ...

    def process(self, frame: Any, declared: Sequence[Action] = (), prepared: Any = None) -> FrameLike: ...

    def declare(self, action: Action) -> list[dict[str, Any]]: ...

    def overlays_now(self) -> list[dict[str, Any]]: ...

    def overlays_for(self, selected: int) -> list[dict[str, Any]]: ...

    def checkpoint(self, frame: int) -> Any: ...

    def resume(self, cp: Any) -> None: ...

    def ask(self, unit: int, target: int) -> dict[str, Any]: ...

    def finish(self) -> tuple[tuple[Any, ...], tuple[dict[str, Any], ...]]: ...


class LoopRecorder(Protocol):
    """What records a live loop (session/recording.py): told what each published frame gave, each declared action
    with the frame it was ruled at, and that the players started a new game; `name` (the folder being recorded) and
    `note` go into the status."""

    @property
    def name(self) -> str | None: ...

    note: str

    def ruled(self, frame_index: int, events: Sequence[Mapping[str, Any]],
              verdicts: Sequence[Mapping[str, Any]]) -> None: ...

    def declared(self, frame_index: int, action: Action) -> None: ...

    def game_restarted(self) -> None: ...

    def drain(self) -> None:
        """Wait until everything handed to it is on disk."""


AtEnd = Literal["loop", "pause"]


@dataclass(frozen=True)
class DetectedFrame(ShowsFrame):
    """What `DetectOnly` gives: the frame and its tags, no table (there is no calibration yet)."""

    frame_index: int
    t: float
    frame: Any
    tags: tuple[Any, ...]
    timings_ms: Mapping[str, float]
    fixes: tuple[Any, ...] = ()
    events: tuple[Any, ...] = ()
    verdicts: tuple[Any, ...] = ()
    overlays: tuple[Any, ...] = ()
    board: Mapping[str, float] | None = None
    calibration: Any = None


class DetectOnly:
    """The pipeline of an uncalibrated table: find the tags (so the calibration wizard can show the anchors).
    It rules nothing: no game, no positions, a declaration is refused in one sentence."""

    calibrated = False
    game: Game | None = None
    state: Any = None

    def __init__(self) -> None:
        self.positions: Mapping[UnitId, Placement] = {}

    @property
    def status(self) -> str:
        return "the table is not calibrated yet: tags only"

    def declare(self, action: Action) -> list[dict[str, Any]]:
        raise NoGameToRule("No game is being ruled: the table is not calibrated yet; calibrate it first.")

    def overlays_now(self) -> list[dict[str, Any]]:
        return []

    def overlays_for(self, selected: int) -> list[dict[str, Any]]:
        return []

    def checkpoint(self, frame: int) -> None:
        return None

    def resume(self, cp: Any) -> None:
        return None

    def ask(self, unit: int, target: int) -> dict[str, Any]:
        return {}

    def finish(self) -> tuple[tuple[Any, ...], tuple[dict[str, Any], ...]]:
        return (), ()

    def process(self, frame: Any, declared: Sequence[Action] = (), prepared: Any = None) -> DetectedFrame:
        """The frame's tags (a full scan: nothing is prepared ahead for a table not calibrated yet)."""
        t0 = time.perf_counter()
        tags = detect_tags(gray_of(frame))
        ms = (time.perf_counter() - t0) * 1000.0
        return DetectedFrame(int(frame.index), float(frame.t), frame, tags, {"detect": ms})


