"""Setup edits inside a recording: the calibration, roster, terrain or game changed at a frame and the game went on.

A recording keeps the setup it started with (calibration.json, roster.json, terrain.json, setup.json) and each new
pipeline the live table made after its first frame as one line of setup_edits.jsonl (docs/session_format.md):

    {"frame": 233, "changed": ["roster"], "roster": {...}}
    {"frame": 410, "changed": ["calibration"], "calibration": {...}}
    {"frame": 512, "changed": [], "afresh": true}

`frame` is the first frame ruled with the new setup; the line holds the new value of each part that changed.
Live, the table then carried the running game over to the new pipeline (session/carry.py), or, after the source
was reopened ("afresh"), started with a fresh one; `EditedPipeline` does the same at the same frame, so a replay
rules every frame with the setup it was ruled with live.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calibration.errors import InputError
from calibration.json_input import parse_json
from calibration.table import TableCalibration
from rules.engine import RulesInputError, find_game
from rules.roster import parse_roster
from rules.terrain import parse_terrain, terrain_to_json
from session.carry import carry_game
from session.drivable import DetectOnly, PipelineLike
from session.table_setup import TableSetup
from vision.session_dir import is_session_dir, read_manifest
from vision.sources import size_of

EDITS_NAME = "setup_edits.jsonl"
"""The file of a recording's setup edits (manifest key "setup_edits")."""
PARTS = ("calibration", "roster", "terrain", "game", "setup")
"""The parts of a setup an edit can change, as the file names them ("setup": the game's setup object)."""


class SetupEditError(InputError):
    """A line of setup_edits.jsonl that cannot be used: the sentence names the file and line."""


@dataclass(frozen=True)
class SetupFiles:
    """A table setup as the JSON a recording keeps: calibration, roster, terrain (None when not set), game name,
    the game's setup object (None: the game starts from the roster and terrain)."""

    calibration: Mapping[str, Any] | None
    roster: Mapping[str, Any] | None
    terrain: Mapping[str, Any] | None
    game: str | None
    game_setup: Mapping[str, Any] | None

    @classmethod
    def of(cls, setup: TableSetup) -> SetupFiles:
        cal = setup.calibration
        return cls(
            calibration=cal.to_json() if cal is not None else None,
            roster=setup.roster.to_json() if setup.roster is not None else None,
            terrain=terrain_to_json(setup.terrain) if setup.terrain else None,
            game=setup.game,
            game_setup=dict(setup.game_setup) if setup.game_setup is not None else None,
        )

    def part(self, name: str) -> Any:
        """The JSON of part `name` (one of PARTS)."""
        return self.game_setup if name == "setup" else getattr(self, name)

    def changes_from(self, other: SetupFiles) -> list[str]:
        """The parts that differ from `other`, as PARTS names them."""
        return [name for name in PARTS if self.part(name) != other.part(name)]


def in_words(parts: Sequence[str]) -> str:
    """"the roster and terrain": the changed parts as a player says them."""
    words = ["game setup" if p == "setup" else p for p in parts]
    return "the " + (" and ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " and " + words[-1])


@dataclass(frozen=True)
class SetupEdit:
    """The live table made a new pipeline from frame `frame` on: `changed` parts (PARTS) with their new JSON in
    `parts`; afresh: the game started afresh there (the source was reopened) instead of being carried over."""

    frame: int
    changed: tuple[str, ...]
    parts: Mapping[str, Any]
    afresh: bool = False
    line: int = field(default=0, compare=False)
    """Its line in setup_edits.jsonl (from 1; 0: not read from a file)."""

    @classmethod
    def between(cls, frame: int, before: SetupFiles, after: SetupFiles, afresh: bool) -> SetupEdit:
        changed = tuple(after.changes_from(before))
        return cls(frame, changed, {name: after.part(name) for name in changed}, afresh)

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"frame": self.frame, "changed": list(self.changed), **self.parts}
        if self.afresh:
            obj["afresh"] = True
        return obj

    def applied_to(self, setup: TableSetup, where: str) -> TableSetup:
        """`setup` with this edit's parts (a new TableSetup); SetupEditError naming `where` if a part is bad."""
        new = dataclasses.replace(setup, declarations=setup.declarations, lock=threading.Lock())
        try:
            for name, value in self.parts.items():
                if name == "calibration":
                    new.calibration = TableCalibration.from_json(value, where) if value is not None else None
                elif name == "roster":
                    new.roster = parse_roster(value, where) if value is not None else None
                elif name == "terrain":
                    new.terrain = parse_terrain(value) if value is not None else ()
                elif name == "game":
                    new.game = find_game(value).name if value is not None else None
                elif name == "setup":
                    new.game_setup = dict(value) if isinstance(value, dict) else None
        except (InputError, RulesInputError) as err:
            raise SetupEditError(f"{where} cannot be used ({str(err).rstrip('.')}); fix or delete that line.") from None
        return new


def read_setup_edits(path: Path) -> tuple[SetupEdit, ...]:
    """setup_edits.jsonl as edits, frames in order; SetupEditError naming the line that is not one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError) as err:
        raise SetupEditError(f"The setup edits file {path} cannot be read ({err}); check it.") from None
    edits: list[SetupEdit] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line, f"{path} line {n}", "fix it", ValueError)
            frame, changed = obj["frame"], obj.get("changed", [])
            if isinstance(frame, bool) or not isinstance(frame, int) or frame < 0 or \
                    (edits and frame < edits[-1].frame):
                raise ValueError
            if not isinstance(changed, list) or not all(c in PARTS and c in obj for c in changed):
                raise ValueError
            edits.append(SetupEdit(frame, tuple(changed), {c: obj[c] for c in changed}, obj.get("afresh") is True, n))
        except (ValueError, KeyError, TypeError):
            raise SetupEditError(f'{path} line {n} is not a setup edit like {{"frame": 233, "changed": ["roster"], '
                                 '"roster": {...}}; fix or delete that line.') from None
    return tuple(edits)


@dataclass(frozen=True)
class Stage:
    """The setup the frames from `first` on were ruled with (to the next stage), and whether the game started
    afresh there."""

    first: int
    setup: TableSetup
    afresh: bool = False


def stages_of(first: TableSetup, edits: Sequence[SetupEdit], where: Path) -> tuple[Stage, ...]:
    """The setup at each edit, from the setup a recording started with (`first`)."""
    stages = [Stage(-1, first)]
    for n, edit in enumerate(edits, start=1):
        named = f"{where} line {edit.line or n} (the edit at frame {edit.frame})"
        stages.append(Stage(edit.frame, edit.applied_to(stages[-1].setup, named), edit.afresh))
    return tuple(stages)


class EditedPipeline:
    """The pipeline of a recording whose setup was edited: before each frame at or past a stage's first frame it
    makes that stage's pipeline (`make`) and carries the game over to it (session/carry.py), or starts afresh,
    as the live table did at that frame. Every other call goes to the pipeline of the stage being ruled."""

    def __init__(self, stages: Sequence[Stage], make: Callable[[TableSetup], PipelineLike]) -> None:
        self._stages = tuple(stages)
        self._make = make
        self._at = 0
        self.inner: PipelineLike = make(self._stages[0].setup)
        self._preparers: dict[int, PipelineLike] = {}
        self._lock = threading.Lock()
        self._unmeasured = DetectOnly()

    @property
    def stages(self) -> tuple[Stage, ...]:
        return self._stages

    def stage_of(self, frame: int) -> int:
        """Which stage rules frame `frame`."""
        at = 0
        for n, stage in enumerate(self._stages):
            if stage.first <= frame:
                at = n
        return at

    def advance_to(self, frame: int) -> None:
        """Make the pipeline of every stage that starts at or before `frame`, in order, as the live table did."""
        while self._at + 1 < len(self._stages) and self._stages[self._at + 1].first <= frame:
            self._at += 1
            stage = self._stages[self._at]
            new = self._make(stage.setup)
            if not stage.afresh:
                carry_game(self.inner, new)
            self.inner = new

    def process(self, frame: Any, declared: Sequence[Any] = (), prepared: Any = None) -> Any:
        """The frame ruled by its stage's pipeline; a frame of another size than that stage's calibration is only
        looked at for tags (`DetectOnly`), not measured or tracked, as the live table did not measure it."""
        self.advance_to(int(frame.index))
        cal = getattr(self.inner, "calibration", None) if self.inner.calibrated else None
        if cal is not None and tuple(cal.image_size) != size_of(frame):
            return self._unmeasured.process(frame)
        return self.inner.process(frame, declared, prepared)

    def prepare(self, frame: Any, detector: Any = None, backstop: bool = True) -> Any:
        """`prepare` of the pipeline of the frame's stage (a pipeline of its own, made once: thread-safe as
        `Pipeline.prepare` is); None for a frame that stage does not measure (of another size than its
        calibration's)."""
        at = self.stage_of(int(frame.index))
        with self._lock:
            pipe = self._preparers.get(at)
            if pipe is None:
                pipe = self._preparers[at] = self._make(self._stages[at].setup)
        cal = getattr(pipe, "calibration", None)
        prepare = getattr(pipe, "prepare", None)
        if prepare is None or (cal is not None and tuple(cal.image_size) != size_of(frame)):
            return None
        return prepare(frame, detector, backstop=backstop)

    def resume(self, cp: Any) -> None:
        """Carry on from `cp` (taken after frame cp.frame) with the pipeline of that frame's stage."""
        self._at = self.stage_of(int(cp.frame))
        self.inner = self._make(self._stages[self._at].setup)
        self.inner.resume(cp)

    def checkpoint(self, frame: int) -> Any:
        return self.inner.checkpoint(frame)

    @property
    def calibrated(self) -> bool:
        return self.inner.calibrated

    @property
    def game(self) -> Any:
        return self.inner.game

    @property
    def state(self) -> Any:
        return self.inner.state

    @property
    def positions(self) -> Any:
        return self.inner.positions

    @property
    def status(self) -> str:
        return self.inner.status

    def declare(self, action: Any) -> list[dict[str, Any]]:
        return self.inner.declare(action)

    def overlays_now(self) -> list[dict[str, Any]]:
        return self.inner.overlays_now()

    def overlays_for(self, selected: int) -> list[dict[str, Any]]:
        return self.inner.overlays_for(selected)

    def ask(self, unit: int, target: int) -> dict[str, Any]:
        return self.inner.ask(unit, target)

    def finish(self) -> tuple[tuple[Any, ...], tuple[dict[str, Any], ...]]:
        return self.inner.finish()

    def __getattr__(self, name: str) -> Any:  # calibration, roster, terrain, prime ... of the stage being ruled
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


def edited_pipeline(session_dir: Path | None, first: TableSetup,
                    make: Callable[[TableSetup], PipelineLike]) -> PipelineLike | EditedPipeline:
    """The pipeline a recorded session is replayed with: `make(first)`, or an EditedPipeline when the session's
    setup was edited while it was recorded (its setup_edits.jsonl) or its frames are not all of one size (those of
    another size than the calibration's are not measured, as live)."""
    if session_dir is None or not is_session_dir(session_dir):
        return make(first)
    manifest = read_manifest(session_dir)
    name = manifest.extra.get("setup_edits")
    path = Path(session_dir) / (name if isinstance(name, str) else EDITS_NAME)
    edits = read_setup_edits(path) if isinstance(name, str) else ()
    if edits or len({seg.image_size for seg in manifest.all_segments}) > 1:
        return EditedPipeline(stages_of(first, edits, path), make)
    return make(first)
