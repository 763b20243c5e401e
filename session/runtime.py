"""What a running server holds: the table setup (calibration, roster, terrain, game), the live loop, replays.

The setup is read at start from the flags, the recorded session's attachments and the setup folder (in
that order of preference); the browser can change it, and every change is saved to the setup folder and
makes the loops build a fresh pipeline.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from calibration.camera import CameraModel, load_camera
from calibration.errors import CalibrationError, InputError
from calibration.file_write import FileWriteError, why_not_written, write_file
from calibration.table import load_calibration
from rules.engine import RulesInputError, find_game
from rules.roster import parse_roster
from rules.terrain import TerrainPiece, parse_terrain, terrain_to_json
from session.carry import game_title, restart_reason
from session.dice_watch import TRAY_FILE
from session.drivable import DetectOnly, Feed, PipelineLike
from session.feeds import NewestFrameFeed, RecordingFeed, StreamFeed
from session.live_loop import LiveLoop
from session.paths import SAMPLE_SESSION_DIR, SAMPLES_DIR, NoSuchSession, confined_session
from session.phone_feed import PhoneCamera
from session.pipeline import Pipeline
from session.recording import LiveRecording
from session.replay import game_to_rule, recorded_game, replay_rolls, session_plan
from session.session_list import Kept
from session.settings import Settings
from session.setup_edits import edited_pipeline
from session.setup_files import TERRAIN_BEFORE_GAMES, check_tags_apart, read_json_file, terrain_file
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


class LensInUse(NamedTuple):
    """The lens (camera intrinsics) the next table calibration starts from."""

    camera: CameraModel | None
    """None: no lens (or the saved one cannot be read); the table is calibrated without one."""
    from_file: bool
    """Whether it is the setup folder's lens file (measured on the Calibrate page), else the current
    calibration's own lens (e.g. a calibration made with `tablesight calibrate --intrinsics`)."""
    unreadable: str = ""
    """Why the setup folder's lens file cannot be used (one sentence), or ""."""


class GameWouldRestart(InputError):
    """A setup change that would start the running game afresh, sent without the players' consent."""


def with_session_plan(setup: TableSetup, session_dir: Path | None) -> TableSetup:
    """`setup` plus what a recorded session carries: its declarations, and its game setup when it was recorded for
    the same game (session_plan)."""
    if session_dir is None or not is_session_dir(session_dir) or setup.game is None:
        return setup

    session = open_session(session_dir)
    game_setup, declarations = session_plan(session, find_game(setup.game))
    setup.game_setup, setup.declarations = game_setup, declarations
    setup.roll_for_us = replay_rolls(session.manifest.extra)
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
        game_setup, declarations, roll_for_us = setup.game_setup, setup.declarations, setup.roll_for_us
    return Pipeline(cal, roster, terrain, find_game(game) if game else None, game_setup,
                    declarations=declarations, fine_every=fine_every, roll_for_us=roll_for_us)


class Runtime:
    """The server's live loop, open replays and the live table's setup."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sessions_dir = settings.sessions_dir.resolve()
        self.setup_dir = settings.setup_dir
        self.live_source = self._live_source_path()
        self._terrains_left: dict[str | None, tuple[TerrainPiece, ...]] = {}
        """The terrain each game had when another was chosen in this run, by game (each game keeps its own)."""
        self._session_terrain_game: str | None = None
        """The game a recorded source's own terrain belongs to (the one it was recorded as, else the first ruled)."""
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
        new_pipeline: Callable[[], PipelineLike] = lambda: edited_pipeline(  # noqa: E731 - a recording's edits
            self.live_source, self.setup, lambda s: make_pipeline(s, live_every))  # (session/setup_edits.py), if any
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
        self._held = False
        """The recording played as the live table is stopped because another game than its own is ruled."""
        held = self._hold_for(self.setup.game) if self.setup.game is not None else None
        if held:  # a game other than the recording's, saved: stopped from the first, its figures settled
            self.live.pause(held)
            self.live.show_settled()
        self.live.dice.tray_file = self.setup_dir / TRAY_FILE  # the dice tray, marked once, kept beside the calibration
        self._replays: OrderedDict[str, tuple[LiveLoop, TableSetup]] = OrderedDict()
        self._timelines: dict[str, Timeline] = {}
        self._replay_lock = threading.Lock()
        self.sessions_kept: Kept = {}
        """The replay list's summaries, each kept until a file it was read from changes (session/session_list.py)."""
        self._lens_forgotten = False
        """The players forgot the lens: the current calibration's own lens is not used for the next one."""

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
            """The flag's file, else one saved in the browser for this very source (e.g. the sample's roster,
            edited), else the recorded session's own, else one saved in the browser for any source (the terrain is
            the game's own: `_terrain_path`)."""
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
            None,
            s.game,
            recorded=None if chosen_here else self._recorded(session),
        )
        self._session_terrain_game = self._recorded_game(session) or setup.game
        setup.terrain = self._read_terrain(setup.game, session, s.terrain_file)
        check_tags_apart(setup.roster, setup.terrain)
        if session is not None and roster_file is not None and (session / "roster.json").is_file() and \
                roster_file != session / "roster.json":
            own = parse_roster(read_json_file(session / "roster.json", "roster"))
            if restart_reason(own, setup.roster):
                return setup  # the session's script was for its own units, not for the roster saved since
        return with_session_plan(setup, session)

    def _recorded_game(self, session: Path | None) -> str | None:
        """The game a recorded session was recorded as (its manifest's, else its own roster's), or None."""
        extra = self._recorded(session)
        if extra is None or session is None:
            return None
        roster_game = None
        if (session / "roster.json").is_file():
            with contextlib.suppress(InputError, RulesInputError):  # the setup's own reading says what is wrong
                roster_game = parse_roster(read_json_file(session / "roster.json", "roster")).game
        return recorded_game(extra, roster_game)

    def _terrain_path(self, game: str | None, session: Path | None, flag: Path | None = None) -> Path | None:
        """Where game `game`'s terrain is read from: the flag's file (for the game chosen at start), else the one saved
        in the browser for this game and this very source, else the recorded session's own (when it was recorded as
        `game`), else the one saved for this game from any source, else, for an open-table game, the terrain saved
        before any game was chosen; None: the game has no terrain (a hex game until its players draw some)."""
        if flag is not None:
            return flag
        saved = self.setup_dir / terrain_file(game)
        if session is not None and saved.is_file() and self._saved_for().get(saved.name) == self._source_key():
            return saved
        if session is not None and (session / "terrain.json").is_file() and game == self._session_terrain_game:
            return session / "terrain.json"
        if saved.is_file():
            return saved
        before = self.setup_dir / TERRAIN_BEFORE_GAMES
        if game is not None and before.is_file() and find_game(game).board == "inches":
            return before
        return None

    def _read_terrain(self, game: str | None, session: Path | None, flag: Path | None = None) \
            -> tuple[TerrainPiece, ...]:
        """Game `game`'s terrain (`_terrain_path`); raises InputError naming a bad file."""
        path = self._terrain_path(game, session, flag)
        if path is None:
            return ()
        obj = read_json_file(path, "terrain")
        try:
            return parse_terrain(obj)
        except RulesInputError as err:
            said = str(err)
            raise SetupError(f"The terrain file {path} cannot be used: {said[:1].lower()}{said[1:]}") from None

    def _terrain_of(self, game: str) -> tuple[TerrainPiece, ...]:
        """The terrain game `game` is played on when chosen: as it was left earlier in this run, else as read."""
        if game in self._terrains_left:
            return self._terrains_left[game]
        session = self.live_source if self.live_source is not None and self.live_source.is_dir() else None
        return self._read_terrain(game, session)

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
    """In the setup folder: for which source each file was saved ({"terrain-valknut.json": source}), so that the
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
        """Write a setup file whole (calibration/file_write.py); FileWriteError names it and why it could not be."""
        try:
            self.setup_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise FileWriteError(f"The setup folder {self.setup_dir} could not be made: {why_not_written(err)}; "
                                 "give a --setup-dir you can write to.") from None
        write_file(self.setup_dir / name, json.dumps(obj, indent=2) + "\n", what="setup file")

    def save_setup_file(self, name: str, obj: Any) -> None:
        self._write(name, obj)
        self._write(self.SAVED_FOR, {**self._saved_for(), name: self._source_key()})

    def set_terrain(self, obj: Any) -> tuple[TerrainPiece, ...]:
        """Save and use the terrain of the game ruled now (each game keeps its own: `terrain_file`)."""
        pieces = parse_terrain(obj)
        check_tags_apart(self.setup.roster, pieces)
        with self.setup.lock:
            self.setup.terrain = pieces
            game = self.setup.game
        self.save_setup_file(terrain_file(game), terrain_to_json(pieces))
        self.live.rebuild()
        return pieces

    def _switch_terrain(self, old: str | None, new: str, terrain: tuple[TerrainPiece, ...]) -> None:
        """Under the setup's lock: game `old` leaves its terrain here for when it is chosen again; `new`'s is used."""
        self._terrains_left[old] = self.setup.terrain
        self._terrains_left.pop(new, None)
        self.setup.terrain = terrain

    def game_running(self) -> bool:
        """Whether the live table is ruling a game now that is not over (a change that cannot carry it would start
        it afresh; a game already won has nothing left to lose)."""
        pipe = self.live.pipeline
        state, game = getattr(pipe, "state", None), getattr(pipe, "game", None)
        return state is not None and not (game is not None and game.is_over(state))

    def set_roster(self, obj: Any, restart: bool = False) -> bool:
        """Save and use a roster. A rename (or any change the game does not rule on) keeps the running game; one
        that changes the units would start it afresh, so it is refused with a sentence unless `restart`. With
        `restart` a new game starts, the same units' too (a rematch). True: a game in progress goes on with it
        (False: a new game starts, or none was in progress)."""
        roster = parse_roster(obj)
        game = find_game(roster.game)
        with self.setup.lock:
            switching = self.setup.game != game.name
        terrain = self._terrain_of(game.name) if switching else self.setup.terrain  # each game its own terrain
        check_tags_apart(roster, terrain)
        with self.setup.lock:
            why = restart_reason(self.setup.roster, roster) if self.setup.roster is not None else ""
            if not why and self.setup.game is not None and self.setup.game != game.name:  # ruled as recorded
                why = f"it is for another game ({game_title(game.name)}, not {game_title(self.setup.game)})"
            recorded = bool(self.setup.declarations)  # the game on show is a recording's (the sample): nobody's to lose
        if why and not restart and not recorded and self.game_running():
            raise GameWouldRestart(f"Saving this setup starts a new game, because {why}, and the game in progress "
                                   "ends there; choose \"Start a new game\" to go ahead, or keep the game in progress.")
        with self.setup.lock:
            if switching:
                self._switch_terrain(self.setup.game, game.name, terrain)
            self.setup.roster = roster
            self.setup.game = game.name
            if why or restart:
                # the recording's plan was for its own units and game, and a new game is the players' own
                self.setup.game_setup, self.setup.declarations, self.setup.roll_for_us = None, {}, None
        self.save_setup_file("roster.json", obj)  # as written: a game's extra keys (cards, limits) are kept
        # "start a new game" starts one, even with the same units; a looping sample then keeps it at its end
        running = self.game_running() and not recorded
        self.live.rebuild(afresh=restart, players_game=bool(why or restart), hold=self._hold_for(game.name))
        return running and not (why or restart)

    def set_game(self, name: str) -> str:
        """Rule game `name`; choosing the game already ruled changes nothing (the game goes on)."""
        game = find_game(name)
        with self.setup.lock:
            if self.setup.game == game.name:
                return game.name
        terrain = self._terrain_of(game.name)  # each game its own terrain
        check_tags_apart(self.setup.roster, terrain)
        with self.setup.lock:
            self._switch_terrain(self.setup.game, game.name, terrain)
            self.setup.game_setup, self.setup.declarations, self.setup.roll_for_us = None, {}, None  # the recording's plan was for its game
            self.setup.game = game.name
        self.live.rebuild(players_game=True, hold=self._hold_for(game.name))
        return game.name

    def _hold_for(self, game: str | None) -> str | None:
        """A recording played as the live table (the sample, --replay) shows the game it was recorded as: under
        another game its figures would be taken for moves nobody made, so it stops on the frame shown (LiveLoop.
        rebuild's `hold`: the sentence saying why), and plays again ("") when its own game is chosen again; None:
        nothing changes."""
        recorded = self._session_terrain_game
        if self.settings.source_kind not in ("sample", "replay") or recorded is None:
            return None
        if game is not None and game != recorded:
            status = self.live.status()
            if status.status == "ended" or (not status.playing and not self._held):
                return None  # it shows its last frame for good already, or the players paused it themselves
            what = "The sample" if self.settings.source_kind == "sample" else "The recording"
            self._held = True
            return (f"{what} stopped on this frame: it shows a game of {game_title(recorded)}, whose figures would be "
                    f"taken for moves nobody made in {game_title(game)}. Declare your game's actions here, or play on "
                    "your own table with a camera (tablesight serve --camera 0).")
        if self._held:
            self._held = False
            return ""
        return None

    # ---- the lens ----

    LENS_FILE = "camera.json"
    """In the setup folder: the lens measured from chessboard or ChArUco photos on the Calibrate page."""

    def lens(self) -> LensInUse:
        """The lens the next table calibration uses: the setup folder's lens file, else (unless forgotten) the one
        the current calibration was made with, else none."""
        path = self.setup_dir / self.LENS_FILE
        if path.is_file():
            try:
                return LensInUse(load_camera(path), True)
            except CalibrationError as err:
                return LensInUse(None, True, str(err))
        with self.setup.lock:
            cal = self.setup.calibration
        if not self._lens_forgotten and cal is not None and cal.focal_source == "intrinsics":
            return LensInUse(cal.camera, False)
        return LensInUse(None, False)

    def save_lens(self, camera: CameraModel) -> None:
        """Keep `camera` as the lens of the next table calibrations (the setup folder's lens file)."""
        self.save_setup_file(self.LENS_FILE, camera.to_json())

    def forget_lens(self) -> LensInUse:
        """Forget the lens: the setup folder's lens file is removed and the current calibration's own lens is not
        used again, so the next table calibration is made without one. The lens forgotten is returned. The live
        table keeps its calibration until the table is calibrated again."""
        was = self.lens()
        (self.setup_dir / self.LENS_FILE).unlink(missing_ok=True)
        saved_for = self._saved_for()
        if saved_for.pop(self.LENS_FILE, None) is not None:
            self._write(self.SAVED_FOR, saved_for)
        self._lens_forgotten = True
        return was

    def set_calibration(self, cal: Any) -> None:
        if getattr(cal, "focal_source", "") == "intrinsics":
            self._lens_forgotten = False  # a calibration made with a lens brings its lens back into use
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
            # a session whose setup was edited while it was recorded is ruled with the setup of each frame
            timeline = Timeline(path, lambda: edited_pipeline(path, setup, lambda s: make_pipeline(s, every)))
            loop = LiveLoop(
                lambda: RecordingFeed.open(path, colour=True),
                lambda: edited_pipeline(path, setup, lambda s: make_pipeline(s, every)),
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
