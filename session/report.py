"""A battle report: what happened in a recorded session, gathered by replaying it through the pipeline.

`gather_report(DIR)` replays the session as `tablesight replay` does (same events, same verdicts;
session/report_replay.py passes over a still table's frames once nothing is left to see in them) and collects
what a player wants to see afterwards: the winner or how the game stood, the game chapter by chapter as its
rules count them (deployment, turns or rounds; the game's standing is taken after each declaration, so a run of
declarations ruled at one frame of a still table falls in the rounds it was played in), each unit's trail (table
inches), every move with the verdicts ruled on it (illegal moves and take-backs left out of the inches moved),
every attack with its dice, each side's dice against a fair die, the score as the game's own panel says it
(`Game.panel`), the hex board when the game plays on one, and a few key frames from the camera. A roll the rules
asked for ("Waiting for the dice: ...") is not a ruling: it is kept apart (`BattleReport.asked`). `session.report_html` turns it into one self-contained HTML
file; `BattleReport.to_json()` is what `tablesight report --json` prints. Unit ids in the game's messages are
replaced by the roster's names.
"""

from __future__ import annotations

import base64
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.table import TableCalibration
from rules.engine import Game, Outcome, Panel, SideScore, TurnStatus
from rules.roster import Roster
from rules.terrain import TerrainPiece
from session.board_grid import board_grid
from session.replay import ReplayInputError, load_setup, open_source
from session.report_replay import ReportRun, StatusNote
from vision.session_dir import is_session_dir
from vision.sources import FrameError, SessionSource
from vision.tags import load_image

KEY_FRAMES = 8
"""At most this many camera frames are embedded (the first moves and attacks, then the last frame)."""
KEY_FRAME_WIDTH = 640
"""Width of an embedded key frame, pixels."""
BACK_WITHIN_IN = 0.25
"""A unit put down this close (inches, centre to centre) to where it stood before an illegal move was put back:
a take-back, not a move (session/take_back.py)."""

_UNIT_WORD = re.compile(r"\b([Uu])nit (\d+)\b")

DiceGroup = tuple[str, tuple[tuple[int, ...], ...]]
"""Whose dice ("attacker", "defender", "bear"; "" when the ruling does not say) and each throw of them (a tie
re-rolled is a throw more)."""


@dataclass(frozen=True)
class ReportUnit:
    """One unit as the report shows it; trail: (frame, x, y) in table inches, in order."""

    tag: int
    name: str
    owner: str
    profile: str
    base_radius_in: float
    trail: tuple[tuple[int, float, float], ...]


@dataclass(frozen=True)
class Ruling:
    """One verdict of the game: rule id, outcome (legal / illegal / too close to call / info), words."""

    frame: int
    t: float
    rule: str
    outcome: str
    message: str
    unit: int | None
    numbers: Mapping[str, Any]
    cause: str
    """What it was ruled on: "move", "placed", "declared" (a player's action) ..."""
    target: int | None = None
    """The unit a declared action aimed at (its "target" parameter), if any."""
    at: int = 0
    """Its place among the frame's rulings (0 first): a run of declarations ruled at one frame keeps its order."""


@dataclass(frozen=True)
class ReportMove:
    """A move the camera measured, inches, with the rulings made on it.

    kind: "move" (counted in the inches moved), "illegal" (ruled illegal: the unit stays where it stood),
    "taken back" (put back where it stood after an illegal move), "redeploy" (moved in a deployment phase).
    counted_in: what it adds to the inches moved (0 unless a "move"; measured from where the rules kept the unit
    after an illegal move that was not put back)."""

    frame: int
    t: float
    unit: int
    from_in: tuple[float, float]
    to_in: tuple[float, float]
    length_in: float
    pm_in: float
    chapter: int
    rulings: tuple[Ruling, ...]
    kind: str = "move"
    counted_in: float = 0.0

    @property
    def outcome(self) -> str:
        """The worst outcome among its rulings ("illegal" beats "too close to call" beats "legal")."""
        outcomes = {r.outcome for r in self.rulings}
        for worst in ("illegal", "too close to call", "legal"):
            if worst in outcomes:
                return worst
        return "measured"


@dataclass(frozen=True)
class DiceRoll:
    """Dice the rules took: the faces in the order rolled, the die (sides), whose they were (side) and who rolled
    them ("players" or "tablesight"); needed (e.g. 4 for "4+") and success when the ruling said."""

    frame: int
    unit: int | None
    faces: tuple[int, ...]
    needed: int | None
    success: bool | None
    message: str
    side: str = ""
    sides: int = 6
    by: str = ""


@dataclass(frozen=True)
class Attack:
    """One attack as ruled: who attacked whom, whether it hit (a close combat: whether the attacker won), the dice
    of its ruling in the order rolled, and its words. kind: "close combat" or "attack"."""

    frame: int
    t: float
    unit: int | None
    target: int | None
    hit: bool
    kind: str
    faces: tuple[int, ...]
    message: str
    side: str = ""
    dice: tuple[DiceGroup, ...] = ()
    """The same dice by whose they are and throw by throw (`dice_groups`)."""


@dataclass(frozen=True)
class Chapter:
    """A stretch of the game as its rules count it ("Deployment", "Turn 2", "Round 3"), from `frame` on. phases:
    the game's phases in it, in order; score: each side's score at its end, as the game's panel says it."""

    title: str
    frame: int
    phases: tuple[str, ...] = ()
    score: tuple[SideScore, ...] = ()
    play: bool = False
    """Whether it is a turn or round of play (False: setup, deployment, the game over)."""
    at: int = 0
    """The ruling of frame `frame` it begins at (0: the frame's start; more when a declaration ruled at that frame
    began it)."""


@dataclass(frozen=True)
class KeyFrame:
    """A camera frame worth seeing, as a JPEG (base64) with a caption."""

    frame: int
    caption: str
    jpeg_b64: str


@dataclass
class BattleReport:
    """Everything the report shows; all lengths in inches, times in seconds from the recording's start."""

    session: str
    game: str
    created: str
    frames: int
    duration_s: float
    board_in: tuple[float, float]
    terrain: tuple[TerrainPiece, ...]
    units: dict[int, ReportUnit]
    moves: list[ReportMove]
    rulings: list[Ruling]
    dice: list[DiceRoll]
    scores: list[tuple[int, int, dict[str, Any]]]
    """(frame, chapter, score) each time the game's score object changed."""
    chapters: list[Chapter]
    camera_moved: list[int]
    attacks: list[Attack] = field(default_factory=list)
    asked: list[Ruling] = field(default_factory=list)
    """The rolls the rules asked the players for ("Waiting for the dice: ..."): not rulings; each was answered by
    the same action declared again with its faces, unless the recording ended first (`unanswered`)."""
    points: list[tuple[int, int, tuple[SideScore, ...]]] = field(default_factory=list)
    """(frame, ruling of that frame, each side's score as the game's panel says it) each time the score changed,
    from the start of the recording."""
    headline: str = ""
    """The winner ("Blue wins: 3 Runestones delivered, turn 5"), or how the game stood when the recording ended."""
    panel: Panel | None = None
    """The game's panel when the recording ended."""
    hex_cells: list[tuple[tuple[tuple[float, float], ...], str, int]] = field(default_factory=list)
    """The hex board's cells, when the game plays on one: (corners in table inches, terrain, elevation)."""
    hex_edges: list[tuple[tuple[tuple[float, float], ...], str]] = field(default_factory=list)
    """Features on cell edges (walls): (the edge's two ends in table inches, kind)."""
    key_frames: list[KeyFrame] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    """Where the report's time went: "replay", "key_frames" (seconds), and "frames_skipped" (a still table)."""
    times: dict[int, float] = field(default_factory=dict, repr=False)
    """Each frame's time, seconds from the recording's start."""

    def time_of(self, frame: int) -> float:
        return self.times.get(frame, 0.0)

    def name_of(self, tag: int | None) -> str:
        if tag is None:
            return ""
        unit = self.units.get(int(tag))
        return unit.name if unit is not None else f"tag {tag}"

    def owner_of(self, tag: int | None) -> str:
        unit = self.units.get(int(tag)) if tag is not None else None
        return unit.owner if unit is not None else ""

    def attacks_by_unit(self) -> dict[int, tuple[int, int]]:
        """unit -> (attacks made, hits): every attack ruled, close combats included (won counts as a hit)."""
        out: dict[int, tuple[int, int]] = {}
        for a in self.attacks:
            if a.unit is not None:
                made, hits = out.get(a.unit, (0, 0))
                out[a.unit] = (made + 1, hits + int(a.hit))
        return out

    def attacks_by_side(self) -> dict[str, tuple[int, int]]:
        """side -> (attacks made, hits)."""
        out: dict[str, tuple[int, int]] = {}
        for a in self.attacks:
            made, hits = out.get(a.side, (0, 0))
            out[a.side] = (made + 1, hits + int(a.hit))
        return out

    def distance_by_chapter(self) -> dict[int, dict[int, float]]:
        """unit -> {chapter: inches moved in it}: legal moves only (illegal ones, take-backs and redeployments
        are left out)."""
        out: dict[int, dict[int, float]] = {}
        for m in self.moves:
            if m.kind == "move":
                per = out.setdefault(m.unit, {})
                per[m.chapter] = per.get(m.chapter, 0.0) + m.counted_in
        return out

    def faces_by_side(self) -> dict[tuple[str, int], list[int]]:
        """(side, sides of the die) -> every face that side rolled with such dice."""
        out: dict[tuple[str, int], list[int]] = {}
        for d in self.dice:
            out.setdefault((d.side, d.sides), []).extend(d.faces)
        return out

    def positions_at(self, frame: int) -> dict[int, tuple[float, float]]:
        """Where each unit stood at `frame` (its last trail point at or before it), table inches."""
        out: dict[int, tuple[float, float]] = {}
        for tag, unit in self.units.items():
            here = [p for p in unit.trail if p[0] <= frame]
            if here:
                out[tag] = (here[-1][1], here[-1][2])
        return out

    def overrules(self) -> list[Ruling]:
        """The players' overrules and position corrections, in the order they were made."""
        return [r for r in self.rulings if r.rule.startswith("tablesight.") and r.rule != "tablesight.take_back"]

    def final_score(self) -> dict[str, Any] | None:
        return self.scores[-1][2] if self.scores else self.summary.get("score")

    def chapter_of(self, frame: int, at: int = 0) -> int:
        """The chapter ruling `at` of frame `frame` belongs to (at 0: what the camera saw in the frame, before its
        declarations); 0 before the first."""
        found = 0
        for i, c in enumerate(self.chapters):
            if (c.frame, c.at) <= (frame, at):
                found = i
        return found

    def unanswered(self) -> list[Ruling]:
        """The rolls asked for after the last ruling, move and answer: still waiting when the recording ended."""
        last = max([(r.frame, r.at) for r in self.rulings] + [(m.frame, 0) for m in self.moves], default=(-1, -1))
        return [w for w in self.asked if (w.frame, w.at) > last][-1:]

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON values (no key frames: those are in the HTML)."""
        return {
            "session": self.session, "game": self.game, "created": self.created, "frames": self.frames,
            "duration_s": self.duration_s, "board_in": list(self.board_in), "headline": self.headline,
            "panel": self.panel.to_json() if self.panel is not None else None,
            "units": [asdict(u) for u in self.units.values()],
            "moves": [{**{k: v for k, v in asdict(m).items() if k != "rulings"}, "name": self.name_of(m.unit),
                       "outcome": m.outcome, "rulings": [asdict(r) for r in m.rulings]} for m in self.moves],
            "rulings": [asdict(r) for r in self.rulings],
            "dice": [asdict(d) for d in self.dice],
            "attacks": [{**asdict(a), "name": self.name_of(a.unit), "target_name": self.name_of(a.target)}
                        for a in self.attacks],
            "attacks_by_unit": {self.name_of(u): {"attacks": a, "hits": h} for u, (a, h) in self.attacks_by_unit().items()},
            "distance_by_chapter": {self.name_of(u): {str(c): round(d, 3) for c, d in per.items()}
                                    for u, per in self.distance_by_chapter().items()},
            "chapters": [{"title": c.title, "frame": c.frame, "at": c.at, "phases": list(c.phases), "play": c.play,
                          "score": [s.to_json() for s in c.score]} for c in self.chapters],
            "rolls_asked": [asdict(r) for r in self.asked],
            "points": [{"frame": f, "at": at, "score": [s.to_json() for s in score]} for f, at, score in self.points],
            "scores": [{"frame": f, "chapter": c, "score": s} for f, c, s in self.scores],
            "camera_moved": self.camera_moved,
            "overrules": [asdict(r) for r in self.overrules()],
            "summary": self.summary,
            "seconds": self.seconds,
        }


def name_units(text: str, names: Mapping[int, str]) -> str:
    """"Unit 14 attacks unit 17" -> "Bjorn attacks Sigrid" for every id the roster names."""

    def swap(m: re.Match[str]) -> str:
        name = names.get(int(m.group(2)))
        return name if name is not None else m.group(0)

    return _UNIT_WORD.sub(swap, text)


def _faces_in(value: Any) -> list[int]:
    """Every whole number in a face list, nested lists (re-rolled ties) read in order."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, list | tuple):
        return [f for v in value for f in _faces_in(v)]
    return []


def dice_of(numbers: Mapping[str, Any]) -> list[tuple[str, tuple[int, ...]]]:
    """(key, faces) for each roll a ruling's numbers carry: "roll", "rolls", any "*_roll" or "*_rolls" (nested
    lists read in order), and "attack" / "defense" when they are lists of faces."""
    out: list[tuple[str, tuple[int, ...]]] = []
    for key, value in numbers.items():
        named = key in ("roll", "rolls") or key.endswith(("_roll", "_rolls"))
        listed_faces = key in ("attack", "defense") and isinstance(value, list | tuple)
        if named or listed_faces:
            faces = tuple(_faces_in(value))
            if faces:
                out.append((key, faces))
    return out


def dice_groups(numbers: Mapping[str, Any]) -> list[DiceGroup]:
    """The rolls of a ruling's numbers (`dice_of`) grouped by whose they are, each throw apart."""
    out: list[DiceGroup] = []
    for key, value in numbers.items():
        named = key in ("roll", "rolls") or key.endswith(("_roll", "_rolls"))
        if not (named or (key in ("attack", "defense") and isinstance(value, list | tuple))):
            continue
        throws = [tuple(_faces_in(v)) for v in value] if isinstance(value, list | tuple) and value \
            and all(isinstance(v, list | tuple) for v in value) else [tuple(_faces_in(value))]
        throws = [t for t in throws if t]
        if throws:
            whose = key.removesuffix("_rolls").removesuffix("_roll") if key not in ("roll", "rolls") else ""
            out.append((whose.replace("_", " "), tuple(throws)))
    return out


def _attack_of(numbers: Mapping[str, Any]) -> tuple[bool, str] | None:
    """(hit, kind) when a ruling's numbers settle an attack: "hit" true or false, a close combat's "winner"
    ("attacker" wins: a hit), or a dice pool's "hits" (one or more: a hit); None for any other ruling."""
    hit = numbers.get("hit")
    if isinstance(hit, bool):
        return hit, "attack"
    winner = numbers.get("winner")
    if winner in ("attacker", "defender"):
        return winner == "attacker", "close combat"
    hits = numbers.get("hits")  # a dice pool's hits counted (Valyr's d20 attack)
    if isinstance(hits, int) and not isinstance(hits, bool) and "rolls" in numbers:
        return hits > 0, "attack"
    return None


ChapterKey = tuple[str, int | None, int | None]


def chapter_key(status: TurnStatus | None) -> ChapterKey:
    """Which chapter a game status belongs to: ("play", round, None) once the game counts rounds (a round's turns
    are told within it), ("play", None, turn) when it counts turns alone (numbers of 0 are not counted), else its
    phase ("deploy", "over" ...; "" without a game)."""
    if status is None:
        return ("", None, None)
    rnd = status.round or None
    turn = None if rnd is not None else status.turn or None
    if status.phase != "over" and (rnd is not None or turn is not None):
        return ("play", rnd, turn)
    return (status.phase or "", None, None)


def chapter_title(key: ChapterKey, ruled: bool) -> str:
    """"Round 2, turn 3", "Turn 5", "Deployment", "After the game"; "The recording" when no game was ruled."""
    kind, rnd, turn = key
    if kind == "play":
        if rnd is not None and turn is not None:
            return f"Round {rnd}, turn {turn}"
        return f"Round {rnd}" if rnd is not None else f"Turn {turn}"
    if not kind:
        return "Before play" if ruled else "The recording"
    if "deploy" in kind:
        return "Deployment"
    if kind == "over":
        return "After the game"
    return kind.replace("_", " ").capitalize() + " phase"


def _as_overruled(r: Ruling, overrule: Ruling | None) -> Ruling:
    """The ruling as the players left it: the overrule's outcome, the camera's kept in the words."""
    if overrule is None:
        return r
    n = overrule.numbers
    return replace(r, outcome=str(n.get("outcome", r.outcome)),
                   message=f"{r.message} Overruled by {n.get('by')} ({r.outcome} by the camera): {n.get('reason')}")


def _units(roster: Roster | None) -> dict[int, tuple[str, str, str, float]]:
    if roster is None:
        return {}
    return {int(tag): (u.name, u.owner, u.profile, u.base_radius_in) for tag, u in roster.units.items()}


def _key_frame(source: SessionSource, cal: TableCalibration, frame: int, caption: str,
               arrows: Iterable[tuple[tuple[float, float], tuple[float, float], tuple[int, int, int]]]) -> KeyFrame | None:
    """Frame `frame` of the session with each (from, to, BGR colour) drawn as an arrow, scaled to KEY_FRAME_WIDTH."""
    entries = source.session.entries
    entry = next((e for e in entries if e.index == frame), None)
    if entry is None:
        return None
    try:
        image = load_image(source.session.directory / entry.file)
    except FrameError:
        return None
    scale = KEY_FRAME_WIDTH / image.shape[1]
    for a, b, colour in arrows:
        pts = cal.table_to_image(np.array([[a[0], a[1], 0.0], [b[0], b[1], 0.0]], dtype=np.float64))
        p, q = (tuple(int(round(v)) for v in pt[:2]) for pt in pts)
        thick = max(2, int(round(2 / scale)))
        cv2.arrowedLine(image, p, q, (0, 0, 0), thick + 2, cv2.LINE_AA, tipLength=0.08)
        cv2.arrowedLine(image, p, q, colour, thick, cv2.LINE_AA, tipLength=0.08)
    small = cv2.resize(image, (KEY_FRAME_WIDTH, max(1, int(round(image.shape[0] * scale)))),
                       interpolation=cv2.INTER_AREA)
    ok, jpeg = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 80])
    if not ok:
        return None
    return KeyFrame(frame, caption, base64.b64encode(jpeg.tobytes()).decode("ascii"))


_OUTCOME_BGR = {"legal": (80, 175, 76), "illegal": (54, 67, 244), "too close to call": (0, 152, 255)}


def gather_report(directory: Path | str, seed: int = 0,
                  progress: Callable[[int, int | None], None] | None = None, skip_still: bool = True) -> BattleReport:
    """Replay the recorded session in `directory` and gather its battle report. Raises InputError naming a
    session that cannot be replayed. `progress(frame number, frames in all or None)` is called before each frame
    replayed (it may raise to stop the report). skip_still: pass over a still table's frames once nothing is left
    to see in them (session/report_replay.py)."""
    path = Path(directory)
    if not is_session_dir(path):
        raise ReplayInputError(f"{path} is not a recorded session (it has no manifest.json); a battle report needs "
                               "a session recorded by tablesight serve, or a bundled sample in sample_frames/.")
    started = time.perf_counter()
    source = open_source(path)
    assert isinstance(source, SessionSource)
    with source:
        setup = load_setup(source)
        run = ReportRun(source, setup, seed=seed, skip_still=skip_still, progress=progress)
        events = list(run.events())
        replayed = time.perf_counter() - started
        game: Game | None = run.pipeline.game
        state = run.pipeline.state
        final = run.panel()
        times = {e.index: float(e.t) for e in source.session.entries}
        roster = _units(setup.roster)
        for line in final.units if final is not None else ():  # units the roster does not name (a game's own pieces)
            roster.setdefault(int(line.unit), (line.name, line.side or "", "", 0.5))
        names = {tag: v[0] for tag, v in roster.items()}
        owners = {tag: v[1] for tag, v in roster.items()}
        chapters, keys = _chapters(run.status_before, final, game is not None)
        points = _points(run.status_before, final, source.session.entries[-1].index if source.session.entries else 0)
        report = BattleReport(
            session=path.name, game=game.title if game is not None else "", created=str(source.session.manifest.created or ""),
            frames=len(source.session.entries),
            duration_s=float(source.session.entries[-1].t) if source.session.entries else 0.0,
            board_in=(float(setup.calibration.board_in[0]), float(setup.calibration.board_in[1])),
            terrain=tuple(setup.terrain), units={}, moves=[], rulings=[], dice=[], scores=[], chapters=chapters,
            camera_moved=[], panel=final, times=times, points=points)
        _read_events(report, events, times, names, owners, roster)
        _drop_empty_chapters(report)
        report.headline = _headline(report, final, keys, game is not None)
        if game is not None and state is not None:
            grid = board_grid(game, state, None)
            report.hex_cells = [(tuple((float(x), float(y)) for x, y in c["in"]), str(c["terrain"]),
                                 int(c["elevation"] or 0)) for c in grid["cells"]]
            report.hex_edges = [(tuple((float(x), float(y)) for x, y in e["in"]), str(e["kind"])) for e in grid["edges"]]
        framed = time.perf_counter()
        report.key_frames = _key_frames(source, setup.calibration, report)
        report.seconds = {"replay": round(replayed, 2), "key_frames": round(time.perf_counter() - framed, 2),
                          "frames_replayed": run.frames, "frames_skipped": run.skipped}
    return report


def _chapters(noted: Iterable[StatusNote], final: Panel | None,
              ruled: bool) -> tuple[list[Chapter], list[ChapterKey]]:
    """The chapters of the game from its status noted whenever it changed (before a frame, or after a declaration
    ruled in it); each with the score at its end (the score noted as the next one began; the last: the final
    panel's)."""
    keys: list[ChapterKey] = []
    starts: list[tuple[int, int]] = []
    phases: list[list[str]] = []
    scores: list[tuple[SideScore, ...]] = []
    for frame, at, status, score in noted:
        key = chapter_key(status)
        if keys and keys[-1] == key:
            if status is not None and status.phase and status.phase not in phases[-1]:
                phases[-1].append(status.phase)
            continue
        if keys:
            scores[-1] = score
        keys.append(key)
        starts.append((frame, at) if starts else (0, 0))
        phases.append([status.phase] if status is not None and status.phase else [])
        scores.append(score)
    if not keys:
        keys, starts, phases, scores = [("", None, None)], [(0, 0)], [[]], [()]
    scores[-1] = final.score if final is not None else scores[-1]
    chapters = [Chapter(chapter_title(k, ruled), f, tuple(p), s, k[0] == "play", at)
                for k, (f, at), p, s in zip(keys, starts, phases, scores, strict=True)]
    return chapters, keys


def _points(noted: Iterable[StatusNote], final: Panel | None, end: int) -> list[tuple[int, int, tuple[SideScore, ...]]]:
    """(frame, ruling, score) each time the sides' points changed, from the first noted on; the final panel's at
    the last frame `end`, if the last frame changed them."""
    out: list[tuple[int, int, tuple[SideScore, ...]]] = []
    for frame, at, score in [(n.frame, n.at, n.score) for n in noted] + \
            ([(end, 1 << 30, final.score)] if final is not None else []):
        pts = [s.points for s in score]
        if any(p is not None for p in pts) and (not out or [s.points for s in out[-1][2]] != pts):
            out.append((frame, at, score))
    return out


def _read_events(report: BattleReport, events: list[dict[str, Any]], times: Mapping[int, float],
                 names: Mapping[int, str], owners: Mapping[int, str],
                 roster: Mapping[int, tuple[str, str, str, float]]) -> None:
    """Fill in the report's trails, moves, rulings, attacks, dice and scores from the replay's events."""
    trails: dict[int, list[tuple[int, float, float]]] = {}
    moves_raw: list[dict[str, Any]] = []
    by_move: dict[int, list[Ruling]] = {}
    rolls: list[dict[str, Any]] = []
    ruled_in: dict[int, int] = {}  # frame -> its verdicts so far
    for e in events:
        kind = e.get("type")
        frame = int(e.get("frame", 0))
        if kind == "placed":
            tag = int(e["tag"])
            trails.setdefault(tag, []).append((frame, float(e["at_in"][0]), float(e["at_in"][1])))
        elif kind == "move":
            tag = int(e["tag"])
            trail = trails.setdefault(tag, [])
            if not trail:
                trail.append((frame, float(e["from_in"][0]), float(e["from_in"][1])))
            trail.append((frame, float(e["to_in"][0]), float(e["to_in"][1])))
            moves_raw.append(e)
            by_move[len(moves_raw) - 1] = []
        elif kind == "verdict":
            numbers = e.get("numbers") or {}
            unit = e.get("unit")
            params = (e.get("action") or {}).get("params") or {}
            target = params.get("target") if isinstance(params, dict) else None
            at = ruled_in.get(frame, 0)
            ruled_in[frame] = at + 1
            ruling = Ruling(frame, times.get(frame, 0.0), str(e.get("rule", "")), str(e.get("outcome", "")),
                            name_units(str(e.get("message", "")), names),
                            None if unit is None else int(unit), numbers, str(e.get("event", "")),
                            target if isinstance(target, int) and not isinstance(target, bool) else None, at)
            if ruling.outcome == Outcome.WAITING.value:  # a roll asked for: the action is ruled once its dice are given
                report.asked.append(ruling)
                continue
            report.rulings.append(ruling)
            if ruling.cause == "move" and moves_raw and int(moves_raw[-1]["frame"]) == frame:
                by_move[len(moves_raw) - 1].append(ruling)
        elif kind in ("roll", "roll_correction"):
            rolls.append(e)
        elif kind == "score":  # the score once the frame's rulings are all made
            report.scores.append((frame, report.chapter_of(frame, ruled_in.get(frame, 0)), dict(e.get("score") or {})))
        elif kind == "camera_moved":
            report.camera_moved.append(frame)
        elif kind == "summary":
            report.summary = {k: v for k, v in e.items() if k not in ("type", "seconds")}
    overruled = {(int(r.numbers["frame"]), str(r.numbers["rule"]), r.unit): r for r in report.rulings
                 if r.rule == "tablesight.overrule" and "frame" in r.numbers}
    for i, ruled in by_move.items():
        by_move[i] = [_as_overruled(r, overruled.get((r.frame, r.rule, r.unit))) for r in ruled]
    report.moves = _moves(report, moves_raw, by_move, times)
    for tag in sorted(set(roster) | set(trails)):
        name, owner, profile, radius = roster.get(tag, (f"tag {tag}", "", "", 0.63))
        report.units[tag] = ReportUnit(tag, name, owner, profile, radius, tuple(trails.get(tag, ())))
    report.attacks = _attacks(report)
    report.dice = _rolls(kept_rolls(rolls), names, owners) if rolls else _dice_in_rulings(report)


def _moves(report: BattleReport, raw: list[dict[str, Any]], by_move: Mapping[int, list[Ruling]],
           times: Mapping[int, float]) -> list[ReportMove]:
    """The camera's moves, each with its chapter and kind: a move in a deployment phase is a redeployment, an illegal one
    holds the unit where it stood (its next move is measured from there), and a unit put back there after an
    illegal move was taken back; only moves count in the inches moved."""
    held: dict[int, tuple[float, float]] = {}
    out: list[ReportMove] = []
    for i, m in enumerate(raw):
        frame, tag = int(m["frame"]), int(m["tag"])
        a = (float(m["from_in"][0]), float(m["from_in"][1]))
        b = (float(m["to_in"][0]), float(m["to_in"][1]))
        chapter = report.chapter_of(frame)
        move = ReportMove(frame, times.get(frame, 0.0), tag, a, b, float(m["length_in"]), float(m["pm_in"]), chapter,
                          tuple(by_move[i]))
        if any("deploy" in phase for phase in report.chapters[chapter].phases):
            kind, counted = "redeploy", 0.0
        elif tag in held and math.dist(b, held[tag]) <= BACK_WITHIN_IN:
            kind, counted = "taken back", 0.0
            del held[tag]
        elif move.outcome == "illegal":
            kind, counted = "illegal", 0.0
            held.setdefault(tag, a)
        else:
            kind = "move"
            counted = math.dist(held.pop(tag), b) if tag in held else move.length_in
        out.append(replace(move, kind=kind, counted_in=counted))
    return out


def _attacks(report: BattleReport) -> list[Attack]:
    """Every attack ruled, close combats included, with the dice of its ruling and of the rulings that follow it
    in the same frame (the defender's dice, damage) up to the next attack."""
    out: list[Attack] = []
    rulings = report.rulings
    for i, r in enumerate(rulings):
        settled = _attack_of(r.numbers)
        if settled is None:
            continue
        faces = [f for _k, fs in dice_of(r.numbers) for f in fs]
        groups = dice_groups(r.numbers)
        for later in rulings[i + 1:]:
            if later.frame != r.frame or _attack_of(later.numbers) is not None:
                break
            faces += [f for _k, fs in dice_of(later.numbers) for f in fs]
            groups += dice_groups(later.numbers)
        out.append(Attack(r.frame, r.t, r.unit, r.target, settled[0], settled[1], tuple(faces), r.message,
                          report.owner_of(r.unit), tuple(groups)))
    return out


def kept_rolls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The "roll" events as the game stands: a "roll_correction" (the players overruled the faces of the last
    action ruled with dice) drops the rolls of that action (at its "ruled_frame", whose faces run as
    "faces_before"); the corrected rolls follow it as rolls of their own."""
    out: list[dict[str, Any]] = []
    for e in events:
        if e.get("type") != "roll_correction":
            out.append(e)
            continue
        before = _faces_in(e.get("faces_before") or [])
        ruled = e.get("ruled_frame")
        at = [i for i, r in enumerate(out) if r.get("frame") == ruled]
        for start in range(len(at)):  # the run of that frame's rolls whose faces are the ones corrected
            for end in range(start + 1, len(at) + 1):
                if [f for i in at[start:end] for f in _faces_in(out[i].get("faces") or [])] == before:
                    drop = set(at[start:end])
                    out = [r for i, r in enumerate(out) if i not in drop]
                    break
            else:
                continue
            break
    return out


def _rolls(events: list[dict[str, Any]], names: Mapping[int, str], owners: Mapping[int, str]) -> list[DiceRoll]:
    """The rolls the rules took, as recorded (events of type "roll")."""
    out: list[DiceRoll] = []
    for e in events:
        unit = e.get("unit")
        unit = int(unit) if isinstance(unit, int) and not isinstance(unit, bool) else None
        side = e.get("side") or (owners.get(unit, "") if unit is not None else "")
        out.append(DiceRoll(int(e.get("frame", 0)), unit, tuple(_faces_in(e.get("faces") or [])), None, None,
                            name_units(str(e.get("what") or e.get("clause") or ""), names), str(side),
                            int(e.get("sides") or 6), str(e.get("by") or "")))
    return out


def _dice_in_rulings(report: BattleReport) -> list[DiceRoll]:
    """The dice the rulings' numbers carry (a session recorded before rolls were events of their own): a
    defender's dice ("defender_rolls", "defense") are the target's side's, the rest the ruled unit's; d20 when any
    face is above 6, else d6."""
    found: list[tuple[Ruling, str, tuple[int, ...]]] = [(r, k, f) for r in report.rulings for k, f in dice_of(r.numbers)]
    sides = 20 if any(face > 6 for _r, _k, faces in found for face in faces) else 6
    out: list[DiceRoll] = []
    for r, key, faces in found:
        needed = r.numbers.get("to_hit", r.numbers.get("needed"))
        success = r.numbers.get("hit", r.numbers.get("success"))
        whose = r.target if key.startswith("defen") and r.target is not None else r.unit
        out.append(DiceRoll(r.frame, r.unit, faces,
                            needed if isinstance(needed, int) and not isinstance(needed, bool) else None,
                            success if isinstance(success, bool) else None, r.message, report.owner_of(whose), sides,
                            "players"))
    return out


def _drop_empty_chapters(report: BattleReport) -> None:
    """Leave out the chapters in which nothing happened (a setup phase the recording began after), renumbering
    what refers to them."""
    used = {report.chapter_of(m.frame) for m in report.moves} | {report.chapter_of(r.frame, r.at) for r in report.rulings}
    for unit in report.units.values():
        used.update(report.chapter_of(p[0]) for p in unit.trail)
    keep = [i for i in range(len(report.chapters)) if i in used] or [0]
    if len(keep) == len(report.chapters):
        return
    new_index = {old: n for n, old in enumerate(keep)}
    # a kept chapter runs on over the empty ones after it: its score is the one at the end of the last of them
    ends = [*(k - 1 for k in keep[1:]), len(report.chapters) - 1]
    chapters = [replace(report.chapters[i], score=report.chapters[end].score or report.chapters[i].score)
                for i, end in zip(keep, ends, strict=True)]
    chapters[0] = replace(chapters[0], frame=0, at=0)

    def moved(old: int) -> int:
        return new_index.get(old, max((n for o, n in new_index.items() if o <= old), default=0))

    report.chapters = chapters
    report.moves = [replace(m, chapter=moved(m.chapter)) for m in report.moves]
    report.scores = [(f, moved(c), s) for f, c, s in report.scores]


def _headline(report: BattleReport, final: Panel | None, keys: list[ChapterKey], ruled: bool) -> str:
    """The winner and when ("Blue wins: 3 Runestones delivered, turn 5"), the end without a winner, or how the
    game stood when the recording ended."""
    if not ruled:
        return "Measured only: no game was ruled in this recording."
    if final is None:
        return "The game could not say how it stood at the end of the recording."
    play = [k for k in keys if k[0] == "play"]
    when = chapter_title(play[-1], True).lower() if play else ""
    if final.winner:
        return final.winner.rstrip(". ") + (f", {when}" if when else "") + "."
    if final.over:
        return f"The game is over without a winner: {final.headline}."
    return f"No winner yet when the recording ended: {final.headline}."


def _key_frames(source: SessionSource, cal: TableCalibration, report: BattleReport) -> list[KeyFrame]:
    """The frames of the first moves and attacks (arrows drawn), then the last frame of the game."""
    picks: list[tuple[int, str, list[tuple[tuple[float, float], tuple[float, float], tuple[int, int, int]]]]] = []
    for m in report.moves:
        colour = _OUTCOME_BGR.get(m.outcome, (255, 255, 255))
        picks.append((m.frame, f"{report.name_of(m.unit)} moves {m.length_in:.2f}\" ± {m.pm_in:.3f}\" ({m.outcome})",
                      [(m.from_in, m.to_in, colour)]))
    for a in report.attacks:
        if a.unit is not None:
            where = report.positions_at(a.frame)
            arrows = []
            if a.target in where and a.unit in where:
                arrows.append((where[a.unit], where[a.target], _OUTCOME_BGR["legal" if a.hit else "illegal"]))
            picks.append((a.frame, a.message, arrows))
    picks.sort(key=lambda p: p[0])
    chosen = picks[: KEY_FRAMES - 1]
    if report.frames:
        last = source.session.entries[-1].index
        chosen.append((last, f"The table at the end of the recording. {report.headline}", []))
    out: list[KeyFrame] = []
    seen: set[tuple[int, str]] = set()
    for frame, caption, arrows in chosen:
        if (frame, caption) in seen:
            continue
        seen.add((frame, caption))
        kf = _key_frame(source, cal, frame, caption, arrows)
        if kf is not None:
            out.append(kf)
    return out


__all__ = ["Attack", "BattleReport", "Chapter", "DiceRoll", "KeyFrame", "ReportMove", "ReportUnit", "Ruling",
           "chapter_key", "chapter_title", "dice_groups", "dice_of", "gather_report", "kept_rolls", "name_units"]

