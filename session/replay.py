"""Replay a recorded session, a video file or a folder of frames through the pipeline, as JSON events.

Shared by `tablesight replay` and the tests. `open_replay(...)` reads the source and its setup (calibration,
roster, terrain, game, the game's setup object and the players' declared actions: a recorded session carries
them as calibration.json, roster.json, terrain.json, setup.json and declarations.jsonl; flags override);
`ReplayRun.events()` yields, frame by frame, one JSON object per event:

- the tracker's events as they are ({"type": "move", "frame": n, "tag", "from_in", "to_in", "length_in",
  "pm_in", ...}, "placed", "unknown_tag", "duplicate_tag"),
- {"type": "verdict", "frame": n, "rule", "outcome", "message", "unit", "numbers", "event", ...} for every
  ruling of the game,
- {"type": "score", "frame": n, "score": {...}} when the game's score changes,
- {"type": "camera_moved", "frame": n, "anchor_shift_px": s, "residual_px": r} when the anchors are no longer
  where the calibration puts them (the camera was knocked) and the pose was solved again from them,
- {"type": "setup_edit", "frame": n, "changed": [...], "afresh": b} where a recorded session's setup was edited
  live (session/setup_edits.py): the frames from n on are ruled with the edited setup, the game carried over as
  it was live,
- {"type": "not_measured", "frame": n, "message": ...} at the first of a run of frames that are not measured (of
  another size than the calibration's, or before the table was calibrated), as they were not live,
- and last {"type": "summary", "frame": last, "frames": N, "moves": M, "verdicts": V, "illegal": I,
  "too_close": C, "not_measured": U, "score": ..., "seconds": s}. Nothing but "seconds" depends on the machine or
  the clock. N counts every frame of the source, measured or not.

`python -m session.replay --golden DIR...` writes each session's golden.jsonl (what `replay DIR --json` prints).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calibration.errors import InputError
from calibration.json_input import parse_json
from calibration.table import TableCalibration, load_calibration
from rules.engine import Action, Game, RulesInputError, UnknownGame, find_game, game_names
from rules.roster import Roster, parse_roster
from rules.terrain import TerrainPiece, parse_terrain
from session.drivable import DetectOnly, PipelineLike
from session.pending_roll import SOURCES, DiceAnswer
from session.pipeline import CameraMoved, Pipeline, Prepared, TableEvent
from session.read_ahead import ReadAhead, default_workers
from session.setup_edits import EDITS_NAME, EditedPipeline, SetupEdit, Stage, read_setup_edits, stages_of
from session.setup_files import check_tags_apart, read_json_file
from session.store import SessionStore
from session.table_setup import TableSetup
from vision.session_dir import RecordedSession, is_session_dir
from vision.sources import FolderSource, Frame, FrameSource, SessionSource, VideoSource, size_of
from vision.tracker import Move
from vision.windowed import FINE_EVERY


class ReplayInputError(InputError):
    """A replay input (source, setup file, declarations) that cannot be used; one sentence naming it."""


def replay_rolls(extra: Mapping[str, Any]) -> bool:
    """Whether a recorded session's replay rolls the dice its declarations do not give ("roll for us"), from its
    manifest's extra keys: never for a recording that records every roll ("rolls": "recorded"), so a roll it lacks
    is a waiting verdict in replay as it was live; always for one made before the players rolled their own dice,
    whose every roll Tablesight made from the pipeline's seeded generator (the replay makes the same ones)."""
    return extra.get("rolls") != "recorded"


def read_declarations(path: Path) -> dict[int, list[Action]]:
    """declarations.jsonl: {"frame": n, "action": {"kind", "unit", "params"}} a line -> actions by frame; a line
    with "dice": {"source", "camera_faces"} is an action ruled with dice (session/pending_roll.py DiceAnswer)."""
    out: dict[int, list[Action]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise ReplayInputError(f"The declarations file {path} cannot be read ({err}); check it.") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line, f"{path} line {n}", "fix it", ValueError)
            frame = obj["frame"]
            if isinstance(frame, bool) or not isinstance(frame, int) or frame < 0:
                raise ValueError
            action = Action.from_json(obj["action"])
            note = obj.get("dice")
            if note is not None:
                source, seen = note["source"], note.get("camera_faces")
                if source not in SOURCES or not (seen is None or isinstance(seen, list)):
                    raise ValueError
                action = DiceAnswer.of(action, [int(f) for f in action.params.get("rolls") or []], source, seen)
        except (ValueError, KeyError, TypeError, RulesInputError):
            raise ReplayInputError(f'{path} line {n} is not a declaration like {{"frame": 12, "action": {{"kind": '
                                   '"end_activation", "unit": 14}}; fix or delete that line.') from None
        out.setdefault(frame, []).append(action)
    return out


@dataclass(frozen=True)
class ReplaySetup:
    """What a replay runs with: the calibration, roster, terrain, game, its setup object, the declarations, and a
    recorded session's setup edits (`edits_file` names their file). calibrated: False when the session was
    recorded before the table was calibrated (its first calibration is an edit; `calibration` is that one)."""

    calibration: TableCalibration
    roster: Roster | None = None
    terrain: tuple[TerrainPiece, ...] = ()
    game: Game | None = None
    game_setup: Mapping[str, Any] | None = None
    declarations: Mapping[int, list[Action]] = field(default_factory=dict)
    edits: tuple[SetupEdit, ...] = ()
    edits_file: Path | None = None
    calibrated: bool = True
    roll_for_us: bool | None = None
    """Whether the replay rolls the dice the declarations lack (`replay_rolls`); None: as the game setup says."""

    def stages(self) -> tuple[Stage, ...]:
        """The setup each frame is ruled with (session/setup_edits.py): the first, then one per edit."""
        first = TableSetup(calibration=self.calibration if self.calibrated else None, roster=self.roster,
                           terrain=self.terrain, game=self.game.name if self.game is not None else None,
                           game_setup=dict(self.game_setup) if self.game_setup is not None else None,
                           declarations=dict(self.declarations))
        return stages_of(first, self.edits, self.edits_file or Path(EDITS_NAME))


def open_source(spec: str | Path) -> FrameSource:
    """A recorded session directory, a folder of frames or a video file (never a camera)."""
    path = Path(spec)
    if not path.exists():
        raise ReplayInputError(f"Replay source {path} does not exist; give a recorded session directory, a video "
                               "file or a folder of frames.")
    if is_session_dir(path):
        return SessionSource(path)
    if path.is_dir():
        return FolderSource(path)
    return VideoSource(path)


def recorded_game(extra: Mapping[str, Any], roster_game: str | None) -> str | None:
    """The game a recorded session is replayed as: the manifest's "game" when it names one as text ("" : it was
    recorded with no game), else its roster's. The replay list, the replay page, `tablesight replay` and the
    battle report all choose it so."""
    named = extra.get("game")
    if isinstance(named, str):
        return named or None
    return roster_game


def game_to_rule(flag: str | None, extra: Mapping[str, Any], roster_game: str | None) -> Game | None:
    """The game a session is ruled as: the flag's (--game), else the one it was recorded as (`recorded_game`).
    Raises UnknownGame; for a game named by a recorded session's manifest, saying so and how to choose another."""
    if flag:
        return find_game(flag)
    name = recorded_game(extra, roster_game)
    if not name:
        return None
    if not isinstance(extra.get("game"), str):
        return find_game(name)  # the roster's: its own sentence
    try:
        return find_game(name)
    except UnknownGame:
        raise UnknownGame(f"The session was recorded as the game {name[:60]!r} (its manifest), which this Tablesight "
                          f"does not have (it has {', '.join(game_names())}); rule it as one of those with --game "
                          'NAME, or set the manifest\'s "game" to one.') from None


def session_plan(session: RecordedSession | None, game: Game | None) -> tuple[dict[str, Any] | None,
                                                                           dict[int, list[Action]]]:
    """The game setup object and the declared actions by frame that a recorded session carries (manifest keys
    "game", "setup", "declarations"); the setup only when the session was recorded for that same game."""
    if session is None:
        return None, {}
    extra: Mapping[str, Any] = session.manifest.extra
    game_setup = None
    setup_name = extra.get("setup")
    if isinstance(setup_name, str) and game is not None and game.name == extra.get("game"):
        game_setup = read_json_file(session.directory / setup_name, "game setup")
        if not isinstance(game_setup, dict):
            raise ReplayInputError(f"The game setup file {session.directory / setup_name} must hold a JSON object.")
    decl_name = extra.get("declarations")
    declarations = read_declarations(session.directory / decl_name) if isinstance(decl_name, str) else {}
    return game_setup, declarations


def load_setup(source: FrameSource, calibration: Path | None = None, roster: Path | None = None,
               terrain: Path | None = None, game: str | None = None) -> ReplaySetup:
    """The replay's setup: flags first, then what a recorded session carries. Raises InputError /
    RulesInputError naming the bad file."""
    session = source.session if isinstance(source, SessionSource) else None
    extra: Mapping[str, Any] = session.manifest.extra if session is not None else {}
    edits_name = extra.get("setup_edits")
    edits_file = session.directory / edits_name if session is not None and isinstance(edits_name, str) else None
    edits = read_setup_edits(edits_file) if edits_file is not None else ()
    cal_path = calibration or (session.calibration_path if session is not None else None)
    later = next((e.parts["calibration"] for e in edits if e.parts.get("calibration") is not None), None)
    if cal_path is None and later is None:
        raise ReplayInputError(f"{source.description} has no calibration; give --calibration CAL.json (made with "
                               "tablesight calibrate).")
    cal = load_calibration(cal_path) if cal_path is not None else TableCalibration.from_json(
        later, f"The calibration of {source.description} (its setup edits)")
    sizes = {seg.image_size for seg in session.manifest.all_segments} if session is not None else set()
    if tuple(cal.image_size) not in sizes:  # a session of several sizes: calibrated at one of them
        cal.check_frame(source.size)
    roster_path = roster or (session.roster_path if session is not None else None)
    ros = parse_roster(read_json_file(roster_path, "roster"), str(roster_path)) if roster_path is not None else None
    terrain_path = terrain or (session.terrain_path if session is not None else None)
    ter = parse_terrain(read_json_file(terrain_path, "terrain")) if terrain_path is not None else ()
    check_tags_apart(ros, ter)
    chosen = game_to_rule(game, extra, ros.game if ros is not None else None)
    game_setup, declarations = session_plan(session, chosen)
    return ReplaySetup(cal, ros, ter, chosen, game_setup, declarations, edits, edits_file, cal_path is not None,
                       replay_rolls(extra) if session is not None else None)


class ReplayRun:
    """One replay of `source` with `setup`; `events()` yields the JSON events (see the module docstring) and
    records them in `store` as they happen if one is given.

    workers: threads that read and scan the next frames ahead while this one maps, tracks and rules (session/
    read_ahead.py; the events are the same as without); None: one a core; 0: none, every frame in turn.

    Frames are scanned as the live server scanned them (vision/windowed.py: windows round the last frame's
    tags, a coarse scan and the sweep's cell for the frame's number), so a recording made live replays to the
    verdicts ruled live; a folder of images, which says nothing of how far apart they were taken, gets a full
    scan a frame."""

    def __init__(self, source: FrameSource, setup: ReplaySetup, store: SessionStore | None = None,
                 seed: int = 0, workers: int | None = None) -> None:
        self.source = source
        self.setup = setup
        self.store = store
        self.workers = default_workers() if workers is None else max(0, int(workers))
        fine_every = 1 if isinstance(source, FolderSource) else FINE_EVERY

        def make(s: TableSetup) -> PipelineLike:
            """A stage's pipeline, as the live table made it (none measures before the table is calibrated)."""
            if s.calibration is None:
                return DetectOnly()
            return Pipeline(s.calibration, s.roster, s.terrain, find_game(s.game) if s.game else None, s.game_setup,
                            seed, declarations=setup.declarations, fine_every=fine_every,
                            roll_for_us=setup.roll_for_us)

        self.pipeline = EditedPipeline(setup.stages(), make)
        self.frames = 0
        self.counts = {"moves": 0, "verdicts": 0, "illegal": 0, "too_close": 0, "camera_moved": 0, "not_measured": 0}

    @property
    def total_frames(self) -> int | None:
        src = self.source
        if isinstance(src, SessionSource):
            return len(src.session.entries)
        if isinstance(src, FolderSource):
            return len(src.files)
        if isinstance(src, VideoSource):
            return src.declared_frames
        return None

    def _emit(self, event: dict[str, Any]) -> dict[str, Any]:
        if self.store is not None:
            if event["type"] == "verdict":
                self.store.add_verdict(int(event["frame"]), event)
            else:
                self.store.add_event(event)
        return event

    def events(self) -> Iterator[dict[str, Any]]:
        started = time.perf_counter()
        pipe = self.pipeline
        game = self.setup.game
        score = _score(pipe)
        last = -1
        if self.store is not None:
            self.store.begin_session(source=self.source.description, game=game.name if game else "",
                                     meta={"replay": True})
        if game is not None and pipe.status:
            yield self._emit({"type": "status", "frame": 0, "message": pipe.status})
        stage, unmeasured = 0, ""
        for frame, prepared in self._frames():
            self.frames += 1
            last = int(frame.index)
            pipe.advance_to(last)
            while stage < pipe.stage_of(last):  # each edit from this frame on, as the live table made it
                stage += 1
                yield self._emit({"type": "setup_edit", "frame": last, "changed": list(self.setup.edits[stage - 1].changed),
                                  "afresh": pipe.stages[stage].afresh})
            if self.store is not None:
                self.store.add_frame(last, float(frame.t))
            why = _not_measured(pipe, frame)
            if why:
                self.counts["not_measured"] += 1
                if why != unmeasured:
                    yield self._emit({"type": "not_measured", "frame": last, "message": why})
                unmeasured = why
                continue
            unmeasured = ""
            result = pipe.process(frame, prepared=prepared)
            yield from self._ruled(result.events, result.verdicts, last)
            now = _score(pipe)  # the game of the frame's setup (an edit may have chosen another)
            if now != score:
                score = now
                yield self._emit({"type": "score", "frame": last, "score": now})
        if self.frames:  # the moves of the recording's last moments
            events, verdicts = pipe.finish()
            yield from self._ruled(events, verdicts, last)
            now = _score(pipe)  # the game of the frame's setup (an edit may have chosen another)
            if now != score:
                score = now
                yield self._emit({"type": "score", "frame": last, "score": now})
        counts = {k: n for k, n in self.counts.items() if n or k != "not_measured"}  # as before when all measured
        summary: dict[str, Any] = {"type": "summary", "frame": last, "frames": self.frames, **counts}
        if score is not None:
            summary["score"] = score
        summary["seconds"] = round(time.perf_counter() - started, 2)
        yield self._emit(summary)

    def _frames(self) -> Iterator[tuple[Frame, Prepared | None]]:
        """The source's frames, each with its own work done ahead (None: the pipeline does it itself)."""
        if self.workers == 0:
            for frame in self.source:
                yield frame, None
            return
        with ReadAhead(self.source, self.pipeline.prepare, workers=self.workers) as ahead:
            yield from ahead

    def _ruled(self, events: Sequence[TableEvent], verdicts: Sequence[Mapping[str, Any]],
               last: int) -> Iterator[dict[str, Any]]:
        """A frame's events, then its verdicts, as JSON lines (counted for the summary)."""
        for event in events:
            if isinstance(event, Move):
                self.counts["moves"] += 1
            elif isinstance(event, CameraMoved):
                self.counts["camera_moved"] += 1
            yield self._emit(event.to_json())
        for v in verdicts:
            self.counts["verdicts"] += 1
            self.counts["illegal"] += v.get("outcome") == "illegal"
            self.counts["too_close"] += v.get("outcome") == "too close to call"
            yield self._emit({"type": "verdict", "frame": last, **{k: x for k, x in v.items() if k != "frame"}})


def _score(pipe: EditedPipeline) -> Any:
    """The score of the game being ruled (None: no game)."""
    game, state = pipe.game, pipe.state
    return game.score(state) if game is not None and state is not None else None


def _not_measured(pipe: EditedPipeline, frame: Frame) -> str:
    """Why `frame` is not measured, as the live table said it ("" : it is): the table not calibrated yet, or a
    frame of another size than the calibration's (a calibration belongs to the frame size it was made at)."""
    if not pipe.calibrated:
        return "The table is not calibrated yet, so these frames are not measured."
    made = tuple(pipe.calibration.image_size)
    w, h = size_of(frame)
    if (w, h) != made:
        return (f"These frames are {w}x{h} px but the table was calibrated at {made[0]}x{made[1]}, so they are not "
                "measured (as they were not live).")
    return ""


def json_line(event: Mapping[str, Any]) -> str:
    return json.dumps(event)


def write_golden(directory: Path) -> Path:
    """Replay a session and write what `tablesight replay DIR --json` prints to DIR/golden.jsonl."""
    source = open_source(directory)
    with source:
        run = ReplayRun(source, load_setup(source))
        text = "".join(json_line(e) + "\n" for e in run.events())
    target = directory / "golden.jsonl"
    target.write_text(text, encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m session.replay", description="Write sample sessions' goldens.")
    parser.add_argument("--golden", nargs="+", type=Path, required=True, metavar="DIR")
    args = parser.parse_args(argv)
    for d in args.golden:
        print(write_golden(d))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
