"""A battle report: what happened in a recorded session, gathered by replaying it through the pipeline.

`gather_report(DIR)` replays the session exactly as `tablesight replay` does (same events, same verdicts)
and collects what a player wants to see afterwards: each unit's trail (table inches), every move and the
verdicts ruled on it, every question and attack with its measured numbers and ±, the dice and their
faces, the score as it changed and by turn, and a few key frames from the camera. `session.report_html`
turns it into one self-contained HTML file; `BattleReport.to_json()` is what `tablesight report --json`
prints. Unit ids in the game's messages are replaced by the roster's names.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.table import TableCalibration
from rules.roster import Roster
from rules.terrain import TerrainPiece
from session.replay import ReplayInputError, ReplayRun, load_setup, open_source
from vision.session_dir import is_session_dir
from vision.sources import FrameError, SessionSource
from vision.tags import load_image

KEY_FRAMES = 8
"""At most this many camera frames are embedded (the first moves and attacks, then the last frame)."""
KEY_FRAME_WIDTH = 640
"""Width of an embedded key frame, pixels."""

_UNIT_WORD = re.compile(r"\b([Uu])nit (\d+)\b")


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


@dataclass(frozen=True)
class ReportMove:
    """A move the camera measured, inches, with the rulings made on it."""

    frame: int
    t: float
    unit: int
    from_in: tuple[float, float]
    to_in: tuple[float, float]
    length_in: float
    pm_in: float
    turn: int
    rulings: tuple[Ruling, ...]

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
    """Dice a ruling rolled: the faces as rolled, and what was needed (e.g. 4 for "4+") if the game said."""

    frame: int
    unit: int | None
    faces: tuple[int, ...]
    needed: int | None
    success: bool | None
    message: str


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
    """(frame, turn, score) each time the score changed."""
    turn_frames: list[tuple[int, int]]
    """(turn, first frame) as the game announced its turns; turn 1 from frame 0 when it never did."""
    camera_moved: list[int]
    key_frames: list[KeyFrame] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    def name_of(self, tag: int | None) -> str:
        if tag is None:
            return ""
        unit = self.units.get(int(tag))
        return unit.name if unit is not None else f"tag {tag}"

    def attacks_by_unit(self) -> dict[int, tuple[int, int]]:
        """unit -> (attacks rolled, hits): every ruling whose numbers say "hit" true or false."""
        out: dict[int, tuple[int, int]] = {}
        for r in self.rulings:
            hit = r.numbers.get("hit")
            if isinstance(hit, bool) and r.unit is not None:
                made, hits = out.get(r.unit, (0, 0))
                out[r.unit] = (made + 1, hits + int(hit))
        return out

    def distance_by_turn(self) -> dict[int, dict[int, float]]:
        """unit -> {turn: inches moved that turn}."""
        out: dict[int, dict[int, float]] = {}
        for m in self.moves:
            per = out.setdefault(m.unit, {})
            per[m.turn] = per.get(m.turn, 0.0) + m.length_in
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
        return [r for r in self.rulings if r.rule.startswith("tablesight.")]

    def final_score(self) -> dict[str, Any] | None:
        return self.scores[-1][2] if self.scores else self.summary.get("score")

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON values (no key frames: those are in the HTML)."""
        return {
            "session": self.session, "game": self.game, "created": self.created, "frames": self.frames,
            "duration_s": self.duration_s, "board_in": list(self.board_in),
            "units": [asdict(u) for u in self.units.values()],
            "moves": [{**{k: v for k, v in asdict(m).items() if k != "rulings"}, "name": self.name_of(m.unit),
                       "outcome": m.outcome, "rulings": [asdict(r) for r in m.rulings]} for m in self.moves],
            "rulings": [asdict(r) for r in self.rulings],
            "dice": [asdict(d) for d in self.dice],
            "attacks": {self.name_of(u): {"attacks": a, "hits": h} for u, (a, h) in self.attacks_by_unit().items()},
            "distance_by_turn": {self.name_of(u): {str(t): round(d, 3) for t, d in per.items()}
                                 for u, per in self.distance_by_turn().items()},
            "scores": [{"frame": f, "turn": t, "score": s} for f, t, s in self.scores],
            "turns": [{"turn": t, "frame": f} for t, f in self.turn_frames],
            "camera_moved": self.camera_moved,
            "overrules": [asdict(r) for r in self.overrules()],
            "summary": self.summary,
        }


def name_units(text: str, names: Mapping[int, str]) -> str:
    """"Unit 14 attacks unit 17" -> "Bjorn attacks Sigrid" for every id the roster names."""

    def swap(m: re.Match[str]) -> str:
        name = names.get(int(m.group(2)))
        return name if name is not None else m.group(0)

    return _UNIT_WORD.sub(swap, text)


def _dice_of(numbers: Mapping[str, Any]) -> tuple[int, ...]:
    """The faces a ruling's numbers carry: "roll" (one die), "rolls" or any "*_rolls" list."""
    faces: list[int] = []
    for key, value in numbers.items():
        if key == "roll" or key.endswith("_roll"):
            if isinstance(value, int) and not isinstance(value, bool):
                faces.append(value)
        elif (key == "rolls" or key.endswith("_rolls")) and isinstance(value, list | tuple):
            faces.extend(int(v) for v in value if isinstance(v, int) and not isinstance(v, bool))
    return tuple(faces)


def _turn_in(numbers: Mapping[str, Any]) -> int | None:
    for key in ("turn", "round"):
        value = numbers.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


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
                  progress: Callable[[int, int | None], None] | None = None) -> BattleReport:
    """Replay the recorded session in `directory` and gather its battle report. Raises InputError naming a
    session that cannot be replayed. `progress(frames replayed, frames in all or None)` is called after each
    frame's events (it may raise to stop the report)."""
    path = Path(directory)
    if not is_session_dir(path):
        raise ReplayInputError(f"{path} is not a recorded session (it has no manifest.json); a battle report needs "
                               "a session recorded by tablesight serve, or a bundled sample in sample_frames/.")
    source = open_source(path)
    assert isinstance(source, SessionSource)
    with source:
        setup = load_setup(source)
        run = ReplayRun(source, setup, seed=seed)
        total = run.total_frames
        events: list[dict[str, Any]] = []
        told = -1
        for event in run.events():
            events.append(event)
            if progress is not None and run.frames != told:
                told = run.frames
                progress(run.frames, total)
        times = {e.index: float(e.t) for e in source.session.entries}
        roster = _units(setup.roster)
        names = {tag: v[0] for tag, v in roster.items()}
        trails: dict[int, list[tuple[int, float, float]]] = {}
        rulings: list[Ruling] = []
        moves_raw: list[dict[str, Any]] = []
        dice: list[DiceRoll] = []
        scores: list[tuple[int, int, dict[str, Any]]] = []
        turn_frames: list[tuple[int, int]] = []
        camera_moved: list[int] = []
        turn = 1
        by_move: dict[int, list[Ruling]] = {}
        summary: dict[str, Any] = {}
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
                moves_raw.append({**e, "turn": turn})
                by_move[len(moves_raw) - 1] = []
            elif kind == "verdict":
                numbers = e.get("numbers") or {}
                announced = _turn_in(numbers)
                if announced is not None and announced != turn:
                    turn = announced
                    turn_frames.append((turn, frame))
                unit = e.get("unit")
                params = (e.get("action") or {}).get("params") or {}
                target = params.get("target") if isinstance(params, dict) else None
                ruling = Ruling(frame, times.get(frame, 0.0), str(e.get("rule", "")), str(e.get("outcome", "")),
                                name_units(str(e.get("message", "")), names),
                                None if unit is None else int(unit), numbers, str(e.get("event", "")),
                                target if isinstance(target, int) and not isinstance(target, bool) else None)
                rulings.append(ruling)
                if ruling.cause == "move" and moves_raw and int(moves_raw[-1]["frame"]) == frame:
                    by_move[len(moves_raw) - 1].append(ruling)
                faces = _dice_of(numbers)
                if faces:
                    needed = numbers.get("to_hit", numbers.get("needed"))
                    success = numbers.get("hit", numbers.get("success"))
                    dice.append(DiceRoll(frame, ruling.unit, faces,
                                         needed if isinstance(needed, int) and not isinstance(needed, bool) else None,
                                         success if isinstance(success, bool) else None, ruling.message))
            elif kind == "score":
                scores.append((frame, turn, dict(e.get("score") or {})))
            elif kind == "camera_moved":
                camera_moved.append(frame)
            elif kind == "summary":
                summary = {k: v for k, v in e.items() if k not in ("type", "seconds")}
        overruled = {(int(r.numbers["frame"]), str(r.numbers["rule"]), r.unit): r for r in rulings
                     if r.rule == "tablesight.overrule" and "frame" in r.numbers}
        for i, ruled in by_move.items():
            by_move[i] = [_as_overruled(r, overruled.get((r.frame, r.rule, r.unit))) for r in ruled]
        if not turn_frames or turn_frames[0][1] > 0:
            turn_frames.insert(0, (1, 0))
        moves = [ReportMove(int(m["frame"]), times.get(int(m["frame"]), 0.0), int(m["tag"]),
                            (float(m["from_in"][0]), float(m["from_in"][1])),
                            (float(m["to_in"][0]), float(m["to_in"][1])), float(m["length_in"]), float(m["pm_in"]),
                            int(m["turn"]), tuple(by_move[i])) for i, m in enumerate(moves_raw)]
        units: dict[int, ReportUnit] = {}
        for tag in sorted(set(roster) | set(trails)):
            name, owner, profile, radius = roster.get(tag, (f"tag {tag}", "", "", 0.63))
            units[tag] = ReportUnit(tag, name, owner, profile, radius, tuple(trails.get(tag, ())))
        manifest = source.session.manifest
        entries = source.session.entries
        report = BattleReport(
            session=path.name, game=setup.game.title if setup.game is not None else "",
            created=str(manifest.created or ""), frames=len(entries),
            duration_s=float(entries[-1].t) if entries else 0.0, board_in=(float(setup.calibration.board_in[0]), float(setup.calibration.board_in[1])),
            terrain=tuple(setup.terrain), units=units, moves=moves, rulings=rulings, dice=dice, scores=scores,
            turn_frames=turn_frames, camera_moved=camera_moved, summary=summary)
        report.key_frames = _key_frames(source, setup.calibration, report)
    return report


def _key_frames(source: SessionSource, cal: TableCalibration, report: BattleReport) -> list[KeyFrame]:
    """The frames of the first moves and attacks (arrows drawn), then the last frame of the game."""
    picks: list[tuple[int, str, list[tuple[tuple[float, float], tuple[float, float], tuple[int, int, int]]]]] = []
    for m in report.moves:
        colour = _OUTCOME_BGR.get(m.outcome, (255, 255, 255))
        picks.append((m.frame, f"{report.name_of(m.unit)} moves {m.length_in:.2f}\" ± {m.pm_in:.3f}\" ({m.outcome})",
                      [(m.from_in, m.to_in, colour)]))
    for r in report.rulings:
        hit = r.numbers.get("hit")
        if isinstance(hit, bool) and r.unit is not None:
            where = report.positions_at(r.frame)
            arrows = []
            if r.target in where and r.unit in where:
                arrows.append((where[r.unit], where[r.target], _OUTCOME_BGR["legal" if hit else "illegal"]))
            picks.append((r.frame, r.message, arrows))
    picks.sort(key=lambda p: p[0])
    chosen = picks[: KEY_FRAMES - 1]
    if report.frames:
        last = source.session.entries[-1].index
        chosen.append((last, "The table at the end of the recording.", []))
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


__all__ = ["BattleReport", "DiceRoll", "KeyFrame", "ReportMove", "ReportUnit", "Ruling",
           "gather_report", "name_units"]

