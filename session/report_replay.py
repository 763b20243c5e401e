"""The battle report's replay: `tablesight replay`'s run of a recorded session, with the game's standing noted
before every frame, and a still table's frames passed over once the game has nothing left to see in them.

A recording stores a frame in which nothing moved only once: its index line names the file of the frame before
(session/recording.py). A game of 30 minutes at 10 frames a second is ~18,000 index lines, most of them such a
still table, and the pipeline spends ~12 ms of a core on each (measured: 36 s of CPU for 3,000 frames of a still
table) though it rules nothing in them. So within a run of index lines naming one file, once QUIET_FRAMES of
them have been processed with no base moving in the tracker (every base settled, hidden or lifted), the rest of
the run is not processed: the same pixels again cannot move a settled base. A frame that carries a declaration,
starts a setup edit or ends the recording is always processed. The frame after a skipped run comes more than
`vision.windowed.GAP_S` after the last one processed, so it gets a full scan (the same tags a sweep would have
found during the run, within ~0.03 px).

`status_before` notes the game's `TurnStatus` and each side's score whenever they change: before a frame, and
around each declaration ruled in it. A recording made while the table is still puts a run of declarations on one
frame (a declaration is ruled at the last frame processed, and declarations.jsonl keeps no time of its own), so the
game's standing is taken after each declaration, not once a frame: a note says from which of the frame's rulings on
it holds. `progress(frame number, frames in all)` is told the recording's own frame numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from rules.engine import Action, Panel, SideScore, TurnStatus
from session.pipeline import Prepared, TableEvent
from session.read_ahead import ReadAhead
from session.replay import ReplayRun
from vision.sources import Frame, SessionSource
from vision.tracker import DEPART_FRAMES, TrackState

QUIET_FRAMES = DEPART_FRAMES
"""Frames of a still run processed with no base moving before the rest of the run is passed over: a settled base
seen elsewhere in the same pixels is moving by then (`vision.tracker.DEPART_FRAMES` fixes in a row start a move)."""


class StatusNote(NamedTuple):
    """The game's status and each side's score (as its panel says it) from ruling `at` of frame `frame` on (0: from
    the frame's start)."""

    frame: int
    at: int
    status: TurnStatus | None
    score: tuple[SideScore, ...]


class ReportRun(ReplayRun):
    """A `ReplayRun` that notes the game's status and score as they change (before each frame and after each
    declaration) and passes over a still table's frames."""

    def __init__(self, *args: Any, skip_still: bool = True,
                 progress: Callable[[int, int | None], None] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skip_still = skip_still
        self.progress = progress
        self.status_before: list[StatusNote] = []
        """The game's status and score whenever either changed, in order (see the module docstring)."""
        self._standing: tuple[object, TurnStatus | None, tuple[SideScore, ...]] | None = None
        """The state last looked at, with its status and score (None: none yet)."""
        self._declared: list[tuple[int, TurnStatus | None, tuple[SideScore, ...]]] = []
        """The frame being ruled's declarations so far: (rulings each gave, the status and score after it)."""
        self._watched: object = None
        """The stage pipeline whose declarations are watched."""
        self.skipped = 0
        """Frames passed over (a still table once the game had nothing left to see)."""
        self._quiet_run: str | None = None
        """The file of the still run whose frames are passed over now (None: none)."""

    def _status(self) -> TurnStatus | None:
        game, state = self.pipeline.game, self.pipeline.state
        return game.status(state) if game is not None and state is not None else None

    def _standing_now(self) -> tuple[TurnStatus | None, tuple[SideScore, ...]]:
        """The game's status and score now (looked up again only when its state is a new one: states are values)."""
        state = self.pipeline.state
        if self._standing is None or self._standing[0] is not state:
            panel = self.panel()
            self._standing = (state, self._status(), panel.score if panel is not None else ())
        return self._standing[1], self._standing[2]

    def _note(self, frame: int, at: int, status: TurnStatus | None, score: tuple[SideScore, ...]) -> None:
        last = self.status_before[-1] if self.status_before else None
        if last is None or (last.status, last.score) != (status, score):
            self.status_before.append(StatusNote(frame, at, status, score))

    def _watch_declarations(self) -> None:
        """Have the stage pipeline being ruled tell each declaration's rulings and the standing after it."""
        inner = self.pipeline.inner
        declare = getattr(inner, "declare", None)
        if inner is self._watched or declare is None:
            return
        self._watched = inner

        def declared(action: Action, scripted: bool = False) -> list[dict[str, Any]]:
            if not self._declared:  # the standing the frame's camera events left, before its first declaration
                self._declared.append((0, *self._standing_now()))
            out: list[dict[str, Any]] = declare(action, scripted)
            self._declared.append((len(out), *self._standing_now()))
            return out

        setattr(inner, "declare", declared)  # noqa: B010 - this run's own pipeline, watched for the report

    def _ruled(self, events: Sequence[TableEvent], verdicts: Sequence[Mapping[str, Any]],
               last: int) -> Iterator[dict[str, Any]]:
        """The frame's events and verdicts, once the standing after each of its declarations (their rulings come
        last in the frame, in the order declared) and after the whole frame is noted."""
        if self._declared:
            at = len(verdicts) - sum(n for n, _s, _c in self._declared)
            for n, status, score in self._declared:
                at += n
                self._note(last, at, status, score)
            self._declared = []
        self._note(last, len(verdicts), *self._standing_now())
        yield from super()._ruled(events, verdicts, last)

    def panel(self) -> Panel | None:
        """The game's panel now (None without a game, or when the game cannot say: the report goes on)."""
        game, state = self.pipeline.game, self.pipeline.state
        if game is None or state is None:
            return None
        try:
            return game.panel(state, dict(self.pipeline.positions))
        except Exception:  # noqa: BLE001 - a game's panel failing must not cost the players their report
            return None

    def _settled(self) -> bool:
        """Whether no base is moving in the tracker (a stage that does not measure has none)."""
        tracker = getattr(self.pipeline.inner, "tracker", None)
        if tracker is None:
            return True
        return all(view.state is not TrackState.MOVING for view in tracker.tracks.values())

    def _wanted(self) -> Iterator[Frame]:
        """The source's frames but those of a still run passed over (see the module docstring)."""
        source = self.source
        assert isinstance(source, SessionSource)
        entries = source.session.entries
        last = entries[-1].index if entries else -1
        declared = {int(f) for f in self.setup.declarations}
        edits = {s.first for s in self.pipeline.stages}
        previous_file: str | None = None
        by_index = {e.index: e.file for e in entries}
        for frame in source:
            index = int(frame.index)
            file = by_index.get(index)
            same = file is not None and file == previous_file
            previous_file = file
            if (same and self.skip_still and self._quiet_run == file and index != last and index not in declared
                    and index not in edits):
                self.skipped += 1
                continue
            yield frame

    def _frames(self) -> Iterator[tuple[Frame, Prepared | None]]:
        """The frames to process, each with the status before it noted and the still runs watched."""
        if not isinstance(self.source, SessionSource):
            yield from super()._frames()
            return
        total = self.total_frames
        entries = self.source.session.entries
        files = {e.index: e.file for e in entries}
        run_file: str | None = None
        quiet = 0

        def frames() -> Iterator[tuple[Frame, Prepared | None]]:
            if self.workers == 0:
                for frame in self._wanted():
                    yield frame, None
                return
            with ReadAhead(self._wanted(), self.pipeline.prepare, workers=self.workers) as ahead:
                yield from ahead

        for frame, prepared in frames():
            index = int(frame.index)
            self.pipeline.advance_to(index)  # the frame's stage pipeline, whose declarations are watched
            self._watch_declarations()
            self._note(index, 0, *self._standing_now())
            if self.progress is not None:
                self.progress(index + 1, total)
            yield frame, prepared
            # the frame has been processed: is the still run it belongs to quiet now?
            file = files.get(index)
            if file != run_file:
                run_file, quiet = file, 0
            quiet = quiet + 1 if self._settled() else 0
            if quiet >= QUIET_FRAMES:
                self._quiet_run = file
            elif self._quiet_run == file:
                self._quiet_run = None


__all__ = ["QUIET_FRAMES", "ReportRun", "StatusNote"]
