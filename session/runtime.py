"""What a running server holds: the table setup (calibration, roster, terrain, game), the live loop, replays.

The setup is read at start from the flags, the recorded session's attachments and the setup folder (in
that order of preference); the browser can change it, and every change is saved to the setup folder and
makes the loops build a fresh pipeline.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from calibration.errors import InputError
from calibration.table import load_calibration
from rules.engine import RulesInputError, find_game
from rules.roster import Roster, parse_roster
from rules.terrain import TerrainPiece, parse_terrain, terrain_to_json
from session.carry import restart_reason
from session.drivable import DetectOnly, Feed, PipelineLike
from session.feeds import NewestFrameFeed, RecordingFeed, StreamFeed
from session.live_loop import LiveLoop
from session.paths import SAMPLE_SESSION_DIR, SAMPLES_DIR, NoSuchSession, confined_session
from session.phone_feed import PhoneCamera
from session.pipeline import Pipeline
from session.recording import LiveRecording
from session.replay import game_to_rule, session_plan
from session.session_list import Kept
from session.settings import Settings
from session.setup_files import check_tags_apart, read_json_file
from session.table_setup import TableSetup
from session.timeline import Timeline
from vision.session_dir import is_session_dir, open_session, read_manifest
from vision.sources import CameraSource, VideoSource
from vision.windowed import FINE_EVERY

SAMPLE_IDLE_S = 5.0
"""The bundled sample waits once nobody has watched it for this long, seconds (it is shown, not recorded)."""

MAX_OPEN_REPLAYS = 2
"""Recorded sessions kept open at once on the replay page (the oldest is closed first)."""


class SetupError(InputError):
    """A setup file (calibration, roster, terrain) or a source that cannot be used."""


class GameWouldRestart(InputError):
    """A setup change that would start the running game afresh, sent without the players' consent."""


def with_session_plan(setup: TableSetup, session_dir: Path | None) -> TableSetup:
    """`setup` plus what a recorded session carries: its declarations, and its game setup when it was recorded for
    the same game (session_plan)."""
    if session_dir is None or not is_session_dir(session_dir) or setup.game is None:
        return setup

    game_setup, declarations = session_plan(open_session(session_dir), find_game(setup.game))
    setup.game_setup, setup.declarations = game_setup, declarations
    return setup


def load_setup_files(
    calibration: Path | None, roster: Path | None, terrain: Path | None, game: str | None,
    recorded: Mapping[str, Any] | None = None,
) -> TableSetup:
    """A TableSetup from files (any may be None); raises InputError/RulesInputError naming the bad file. `game`
    (a flag) first, then, for a recorded session, its manifest's (`recorded`: the manifest's extra keys), then the
    roster's, as `load_setup` chooses."""

    cal = load_calibration(calibration) if calibration is not None else None
    ros = parse_roster(read_json_file(roster, "roster"), str(roster)) if roster is not None else None
    ter = parse_terrain(read_json_file(terrain, "terrain")) if terrain is not None else ()
    check_tags_apart(ros, ter)
    chosen = game_to_rule(game, recorded or {}, ros.game if ros is not None else None)
    return TableSetup(calibration=cal, roster=ros, terrain=ter, game=chosen.name if chosen is not None else None)


def make_pipeline(setup: TableSetup, fine_every: int = FINE_EVERY) -> PipelineLike:
    """The full pipeline for a calibrated table; without a calibration, tags are only found (for the wizard).
    Cameras, videos and recordings are all scanned alike (vision/windowed.py), so a recording replays exactly as
    it was ruled live; fine_every 1 (a full scan a frame) for a folder of images, which says nothing of how far
    apart they were taken (as `tablesight replay` scans one)."""
    with setup.lock:
        cal, roster, terrain, game = setup.calibration, setup.roster, setup.terrain, setup.game
    if cal is None:
        return DetectOnly()

    with setup.lock:
        game_setup, declarations = setup.game_setup, setup.declarations
    return Pipeline(cal, roster, terrain, find_game(game) if game else None, game_setup,
                    declarations=declarations, fine_every=fine_every)


class Runtime:
    """The server's live loop, open replays and the live table's setup."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sessions_dir = settings.sessions_dir.resolve()
        self.setup_dir = settings.setup_dir
        self.live_source = self._live_source_path()
        self.setup = self._initial_setup()
        self.recording: LiveRecording | None = None
        """Records a camera, a phone or a video into the sessions folder as it plays (not with --no-record)."""
        self.phone: PhoneCamera | None = None
        """The phone streaming from its /camera page, when the phone is the live source (serve --phone)."""
        if settings.source_kind == "phone":
            self.phone = PhoneCamera(lambda: self.live.latest_result, settings.camera_address or "/camera")
        open_feed: Callable[[], Feed] = self._open_live_feed
        live_every = 1 if self.live_source is not None and not is_session_dir(self.live_source) and \
            self.live_source.is_dir() else FINE_EVERY  # --replay FOLDER of images
        new_pipeline: Callable[[], PipelineLike] = lambda: make_pipeline(self.setup, live_every)  # noqa: E731
        if settings.record and settings.source_kind in ("camera", "video", "phone"):
            self.recording = LiveRecording(self.sessions_dir, self.setup, make_pipeline)
            open_feed, new_pipeline = self.recording.feed(open_feed), self.recording.make_pipeline
        self.live = LiveLoop(
            open_feed,
            new_pipeline,
            roster=lambda: self.setup.roster,
            paced=settings.source_kind in ("sample", "replay", "video"),
            at_end="loop" if settings.source_kind == "sample" and settings.loop_sample else "pause",
            idle_unwatched_s=SAMPLE_IDLE_S if settings.source_kind == "sample" and settings.sample_idles else None,
            jpeg_quality=settings.jpeg_quality,
            name="live",
        )
        self.live.recorder = self.recording
        self._replays: OrderedDict[str, tuple[LiveLoop, TableSetup]] = OrderedDict()
        self._timelines: dict[str, Timeline] = {}
        self._replay_lock = threading.Lock()
        self.sessions_kept: Kept = {}
        """The replay list's summaries, each kept until a file it was read from changes (session/session_list.py)."""

    # ---- start and stop ----

    def start(self) -> None:
        self.live.start()

    def stop(self) -> None:
        self.live.stop()
        if self.recording is not None:
            self.recording.close()
        with self._replay_lock:
            for loop, _ in self._replays.values():
                loop.stop()
            self._replays.clear()
            for timeline in self._timelines.values():
                timeline.stop()
            self._timelines.clear()

    # ---- the live source ----

    def _live_source_path(self) -> Path | None:
        s = self.settings
        if s.source_kind == "sample":
            path = Path(s.source) if s.source else SAMPLE_SESSION_DIR
            if not path.is_dir():
                raise SetupError(f"The sample session {path} is missing; pass --camera, --video or --replay.")
            try:
                RecordingFeed.open(path).close()
            except InputError:
                raise SetupError(f"The sample session {path} holds no frames yet; pass --camera, --video or "
                                 "--replay.") from None
            return path
        if s.source_kind == "replay":
            if not s.source or not Path(s.source).is_dir():
                raise SetupError(f"--replay {s.source} is not a folder; give a recorded session's folder.")
            RecordingFeed.open(Path(s.source)).close()  # a folder without frames is one sentence now
            return Path(s.source)
        if s.source_kind == "video":
            if not s.source or not Path(s.source).is_file():
                raise SetupError(f"--video {s.source} is not a file; give a video file's path.")
            with VideoSource(Path(s.source)) as video:
                next(iter(video), None)  # not a video, or no readable frame: one sentence now, not an empty feed
            return Path(s.source)
        return None

    def _initial_setup(self) -> TableSetup:
        s = self.settings
        session = self.live_source if self.live_source is not None and self.live_source.is_dir() else None

        saved_for = self._saved_for()

        def pick(flag: Path | None, name: str) -> Path | None:
            """The flag's file, else one saved in the browser for this very source (e.g. the sample's terrain,
            edited), else the recorded session's own, else one saved in the browser for any source."""
            saved = self.setup_dir / name
            if flag is not None:
                return flag
            if session is not None and saved.is_file() and saved_for.get(name) == self._source_key():
                return saved
            if session is not None and (session / name).is_file():
                return session / name
            return saved if saved.is_file() else None

        roster_file = pick(s.roster_file, "roster.json")
        chosen_here = s.roster_file is None and roster_file == self.setup_dir / "roster.json" and \
            saved_for.get("roster.json") == self._source_key()
        setup = load_setup_files(
            pick(s.calibration_file, "calibration.json"),
            roster_file,
            pick(s.terrain_file, "terrain.json"),
            s.game,
            recorded=None if chosen_here else self._recorded(session),
        )
        if session is not None and roster_file is not None and (session / "roster.json").is_file() and \
                roster_file != session / "roster.json":
            own = parse_roster(read_json_file(session / "roster.json", "roster"))
            if restart_reason(own, setup.roster):
                return setup  # the session's script was for its own units, not for the roster saved since
        return with_session_plan(setup, session)

    @staticmethod
    def _recorded(session: Path | None) -> Mapping[str, Any] | None:
        """A recorded session's manifest keys, so it is ruled as the game it was recorded as, as `tablesight
        replay` and the replay page rule it (a flag's roster too; --game chooses another); not used when the
        players saved a roster for this source in the browser, which names the game they chose."""
        if session is None or not is_session_dir(session):
            return None
        try:
            return read_manifest(session).extra
        except InputError:
            return None  # the feed's own opening says what is wrong with the folder

    def _open_live_feed(self) -> Feed:
        s = self.settings
        if s.source_kind == "camera":
            device: int | str = int(s.source) if s.source and s.source.isdigit() else (s.source or "0")
            camera = CameraSource(device, skip_bad_frames=True)
            camera.pictured = lambda: self.live.broadcast.watchers > 0  # colour planes only for a watched camera
            return NewestFrameFeed(camera)  # never a stale queued frame
        if s.source_kind == "phone":
            assert self.phone is not None
            return self.phone  # the same phone after a reopen: its connection outlives the loop's feed
        assert self.live_source is not None
        if s.source_kind == "video":
            return StreamFeed(VideoSource(self.live_source, skip_bad_frames=True))
        return RecordingFeed.open(self.live_source, colour=True)  # pictured for the page: each JPEG decoded once

    # ---- changes from the browser ----

    SAVED_FOR = "saved_for.json"
    """In the setup folder: for which source each file was saved ({"terrain.json": source}), so that the
    sample's (or a replayed session's) edited terrain, roster or calibration is used again after a restart."""

    def _source_key(self) -> str:
        return str(self.live_source.resolve()) if self.live_source is not None else "camera"

    def _saved_for(self) -> dict[str, str]:
        try:
            obj = json.loads((self.setup_dir / self.SAVED_FOR).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in obj.items()} if isinstance(obj, dict) else {}

    def _write(self, name: str, obj: Any) -> None:
        self.setup_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.setup_dir / (name + ".tmp")
        tmp.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.setup_dir / name)

    def save_setup_file(self, name: str, obj: Any) -> None:
        self._write(name, obj)
        self._write(self.SAVED_FOR, {**self._saved_for(), name: self._source_key()})

    def set_terrain(self, obj: Any) -> tuple[TerrainPiece, ...]:
        pieces = parse_terrain(obj)
        check_tags_apart(self.setup.roster, pieces)
        with self.setup.lock:
            self.setup.terrain = pieces
        self.save_setup_file("terrain.json", terrain_to_json(pieces))
        self.live.rebuild()
        return pieces

    def game_running(self) -> bool:
        """Whether the live table is ruling a game now (a change that cannot carry it would start it afresh)."""
        return getattr(self.live.pipeline, "state", None) is not None

    def set_roster(self, obj: Any, restart: bool = False) -> Roster:
        """Save and use a roster. A rename (or any change the game does not rule on) keeps the running game; one
        that changes the units would start it afresh, so it is refused with a sentence unless `restart`."""
        roster = parse_roster(obj)
        game = find_game(roster.game)
        check_tags_apart(roster, self.setup.terrain)
        with self.setup.lock:
            why = restart_reason(self.setup.roster, roster) if self.setup.roster is not None else ""
            if not why and self.setup.game is not None and self.setup.game != game.name:  # ruled as recorded
                why = f"it is for another game ({game.name}, not {self.setup.game})"
        if why and not restart and self.game_running():
            raise GameWouldRestart(f"Saving this roster starts the game in progress afresh, because {why}; "
                                   "tick \"start a new game\" and save again, or keep the units as they are.")
        with self.setup.lock:
            self.setup.roster = roster
            self.setup.game = game.name
            if why:
                # the recording's plan was for its own units and game
                self.setup.game_setup, self.setup.declarations = None, {}
        self.save_setup_file("roster.json", obj)  # as written: a game's extra keys (cards, limits) are kept
        self.live.rebuild()
        return roster

    def set_game(self, name: str) -> str:
        """Rule game `name`; choosing the game already ruled changes nothing (the game goes on)."""
        game = find_game(name)
        with self.setup.lock:
            if self.setup.game == game.name:
                return game.name
            self.setup.game_setup, self.setup.declarations = None, {}  # the recording's plan was for its game
            self.setup.game = game.name
        self.live.rebuild()
        return game.name

    def set_calibration(self, cal: Any) -> None:
        with self.setup.lock:
            self.setup.calibration = cal
        self.save_setup_file("calibration.json", cal.to_json())
        self.live.rebuild()

    # ---- replays ----

    def session_path(self, name: str) -> Path:
        """Session `name`'s folder: in the sessions folder, else a bundled sample of that name."""
        try:
            return confined_session(self.sessions_dir, name)
        except NoSuchSession:
            if SAMPLES_DIR.is_dir():
                try:
                    return confined_session(SAMPLES_DIR, name)
                except NoSuchSession:
                    pass
            raise

    def replay(self, name: str) -> tuple[LiveLoop, TableSetup]:
        """The replay loop of session `name` (opened, paused on its first frame, if it was not open)."""
        path = self.session_path(name)
        with self._replay_lock:
            if name in self._replays:
                self._replays.move_to_end(name)
                return self._replays[name]
            feed = RecordingFeed.open(path)  # raises a clear error before a loop is made
            frames = len(feed)
            feed.close()
            setup = self._session_setup(path)
            # the loop's thread asks the timeline itself, never through this lock: the lock is held while an old
            # replay is stopped, which waits for that replay's thread (maybe mid-seek, asking for a checkpoint)
            every = FINE_EVERY if is_session_dir(path) else 1  # a folder of images: a full scan a frame
            timeline = Timeline(path, lambda: make_pipeline(setup, every))
            loop = LiveLoop(
                lambda: RecordingFeed.open(path, colour=True),
                lambda: make_pipeline(setup, every),
                roster=lambda: setup.roster,
                paced=True,
                at_end="pause",
                jpeg_quality=self.settings.jpeg_quality,
                name=f"replay {name}",
                frames=frames,
                checkpoint_before=timeline.checkpoint_before,
            )
            loop.pause()
            loop.step()
            loop.start()
            self._replays[name] = (loop, setup)
            self._timelines[name] = timeline.start()
            while len(self._replays) > MAX_OPEN_REPLAYS:
                old_name, (old, _s) = self._replays.popitem(last=False)
                old.stop()
                self._timelines.pop(old_name).stop()
            return loop, setup

    def timeline(self, name: str) -> Timeline:
        """The event timeline of an open replay (see `replay`)."""
        self.replay(name)
        with self._replay_lock:
            return self._timelines[name]

    def _session_setup(self, path: Path) -> TableSetup:
        def att(name: str) -> Path | None:
            p = path / name
            return p if p.is_file() else None

        try:
            recorded = read_manifest(path).extra if is_session_dir(path) else {}
            setup = load_setup_files(att("calibration.json"), att("roster.json"), att("terrain.json"), None, recorded)
            return with_session_plan(setup, path)
        except (InputError, RulesInputError) as err:
            raise SetupError(f"Session {path.name} has a setup file that cannot be used: {err}") from None
