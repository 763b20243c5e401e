"""A battle report as one self-contained HTML file: the template `session/templates/report.html` filled
with the report's tables, matplotlib's inline SVG pictures and the key frames as embedded JPEGs, so it opens
anywhere without a network connection."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from calibration.errors import InputError
from calibration.file_write import write_file
from session import report_plots
from session.report import BattleReport, DiceGroup, ReportMove, Ruling, dice_groups
from vision.session_dir import local_time

_TEMPLATES = Path(__file__).with_name("templates")


def _version() -> str:
    try:
        return metadata.version("tablesight")
    except metadata.PackageNotFoundError:
        return "(development)"


def _clock(seconds: float) -> str:
    """12.3 -> "0:12"; 3725 -> "1:02:05"."""
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _css(outcome: str) -> str:
    return outcome.replace(" ", "-") if outcome else "info"


def _when(created: str) -> str:
    """When recording began, on this machine's clock (the recorder's stamp is UTC)."""
    when = local_time(created)
    return when.strftime("%d %B %Y, %H:%M") if when is not None else ""


def _faces(faces: tuple[int, ...] | list[int]) -> str:
    """Dice one by one: (4, 1, 3) -> "4 1 3"."""
    return " ".join(str(f) for f in faces)


def _score_rows(report: BattleReport) -> tuple[list[str], list[dict[str, Any]]]:
    """The sides, and one row per chapter: each side's score at its end, in the game's words (and points)."""
    sides = list(dict.fromkeys(s.side for c in report.chapters for s in c.score))
    rows = [{"title": c.title, "cells": {s.side: (s.words, "" if s.points is None else f"{s.points:g}")
                                          for s in c.score}} for c in report.chapters if c.score]
    return sides, rows


def _groups(groups: list[DiceGroup]) -> list[dict[str, Any]]:
    """Dice groups for the page: whose ("attacker: "), then each throw's faces one by one (a re-rolled tie
    after a "tie, then")."""
    return [{"whose": whose, "throws": [list(t) for t in throws], "first": n == 0} for n, (whose, throws) in enumerate(groups)]


def _story(report: BattleReport) -> list[dict[str, Any]]:
    """The game chapter by chapter: what each unit did in order (deployments, moves with their verdicts,
    declared actions, attacks with their dice), then the score at the chapter's end. A roll asked for is not told
    (its answer is, with its dice), but one still waiting when the recording ended is, last."""
    lines: list[list[tuple[int, int, dict[str, Any]]]] = [[] for _ in report.chapters]
    order = 0

    def add(frame: int, at: int, line: dict[str, Any]) -> None:
        nonlocal order
        order += 1
        lines[report.chapter_of(frame, at)].append((frame, order, line))

    attacks = {(a.frame, a.message): a for a in report.attacks}
    moved = {(r.frame, r.at) for m in report.moves for r in m.rulings}
    events: list[tuple[int, int, int, Any]] = [(m.frame, min((r.at for r in m.rulings), default=0), 1, m)
                                               for m in report.moves]
    events += [(r.frame, r.at, 2, r) for r in report.rulings if (r.frame, r.at) not in moved]
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    grouped: list[tuple[int, int, Any, list[Ruling]]] = []
    for frame, at, what, thing in events:
        if what == 1:
            grouped.append((frame, at, thing, []))
            continue
        r: Ruling = thing
        last = grouped[-1] if grouped else None
        if (last is not None and last[2] is None and last[0] == frame and last[3][-1].rule == r.rule
                and report.chapter_of(frame, at) == report.chapter_of(frame, last[1])
                and (r.frame, r.message) not in attacks and (frame, last[3][-1].message) not in attacks):
            last[3].append(r)
        else:
            grouped.append((frame, at, None, [r]))
    for frame, at, move, rulings in grouped:
        if move is not None:
            m: ReportMove = move
            note = {"illegal": "Illegal: left out of the inches moved; the unit stays where it stood.",
                    "taken back": "Put back where it stood after an illegal move: a take-back, not counted.",
                    "redeploy": "Redeployed before play began: not counted as a move."}.get(m.kind, "")
            said = " ".join(r.message for r in m.rulings if r.outcome != "legal") or \
                " ".join(r.message for r in m.rulings[-1:]) or \
                f"{report.name_of(m.unit)} moved {m.length_in:.2f}\" ± {m.pm_in:.3f}\"."
            add(frame, at, {"time": _clock(m.t), "css": _css(m.outcome), "outcome": m.kind if m.kind != "move" else m.outcome,
                        "text": f"{said} {note}".strip(), "dice": []})
            continue
        first = rulings[0]
        attack = attacks.get((first.frame, first.message))
        text = " ".join(r.message for r in rulings)
        css = "" if attack is None else ("hit" if attack.hit else "miss")
        dice = _groups([g for r in rulings for g in dice_groups(r.numbers)])  # each line its own dice
        outcome = first.outcome or "info"
        if attack is not None:
            outcome = attack.kind
        add(frame, at, {"time": _clock(first.t), "css": _css(first.outcome) if attack is None else ("legal" if attack.hit else "illegal"),
                    "outcome": outcome, "text": text, "dice": dice, "dice_css": css})
    for waiting in report.unanswered():
        add(waiting.frame, waiting.at, {"time": _clock(waiting.t), "css": "info", "outcome": "roll asked for",
                                        "text": f"{waiting.message} The recording ended before the dice were given.",
                                        "dice": []})
    out = []
    for chapter, found in zip(report.chapters, lines, strict=True):
        found.sort(key=lambda x: (x[0], x[1]))
        shown = ""
        for _f, _o, line in found:  # a run of declarations ruled at one frame shares its time: said once
            line["time"], shown = ("" if line["time"] == shown else line["time"]), line["time"]
        phases = [p.replace("_", " ") for p in chapter.phases]
        if [chapter.title.lower()] in (phases, [f"{p} phase" for p in phases]):
            phases = []  # "Place phase", not "Place phase: place"
        out.append({"title": chapter.title, "phases": ", ".join(phases),
                    "lines": [line for _f, _o, line in found],
                    "score": [{"side": s.side, "words": s.words} for s in chapter.score]})
    return out


def render_report(report: BattleReport) -> str:
    """The report's HTML text."""
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=select_autoescape(["html"]))
    env.filters["sentence"] = _sentence
    colours = report_plots.side_colours([u.owner for u in report.units.values()])
    attacks = report.attacks_by_unit()
    distance = report.distance_by_chapter()
    unit_words = {u.unit: u.words for u in report.panel.units} if report.panel is not None else {}
    units = [{"name": u.name, "owner": u.owner, "profile": u.profile,
              "moves": sum(1 for m in report.moves if m.unit == u.tag and m.kind == "move"),
              "inches": sum(distance.get(u.tag, {}).values()),
              "attacks": attacks.get(u.tag, (0, 0))[0], "hits": attacks.get(u.tag, (0, 0))[1],
              "state": unit_words.get(u.tag, "")}
             for u in sorted(report.units.values(), key=lambda u: (u.owner, u.name))]
    # a column the game never filled is left out (Magni's tiles neither move nor attack once placed)
    columns = {"profile": any(u["profile"] for u in units), "moves": any(u["moves"] or u["inches"] for u in units),
               "attacks": any(u["attacks"] for u in units)}
    moves = [{"time": _clock(m.t), "chapter": report.chapters[m.chapter].title, "name": report.name_of(m.unit),
              "length_in": m.length_in, "pm_in": m.pm_in, "counted_in": m.counted_in, "kind": m.kind,
              "outcome": m.outcome if m.kind in ("move", "illegal") else m.kind,
              "css": _css(m.outcome) if m.kind in ("move", "illegal") else "info",
              "words": " ".join(r.message for r in m.rulings if r.outcome != "legal") or
              " ".join(r.message for r in m.rulings[-1:])} for m in report.moves]
    attack_rows = [{"time": _clock(a.t), "kind": a.kind, "name": report.name_of(a.unit),
                    "target": report.name_of(a.target), "dice": _groups(list(a.dice)), "hit": a.hit,
                    "css": "hit" if a.hit else "miss", "message": a.message} for a in report.attacks]
    dice = [{"time": _clock(report.time_of(d.frame)), "faces": list(d.faces), "sides": d.sides, "side": d.side,
             "by": d.by, "needed": d.needed, "message": d.message,
             "css": "" if d.success is None else ("hit" if d.success else "miss")} for d in report.dice]
    by_side = report.attacks_by_side()
    dice_sides = []
    for (side, sides), faces in sorted(report.faces_by_side().items()):
        made, hits = by_side.get(side, (0, 0))
        ours = sum(len(d.faces) for d in report.dice if d.side == side and d.sides == sides and d.by == "tablesight")
        dice_sides.append({"side": side or "unowned", "sides": sides, "count": len(faces), "ours": ours,
                           "counts": [faces.count(f) for f in range(1, sides + 1)],
                           "expected": len(faces) / sides if sides else 0.0,
                           "mean": sum(faces) / len(faces) if faces else 0.0, "fair_mean": (sides + 1) / 2,
                           "attacks": made, "hits": hits})
    for side, (made, hits) in sorted(by_side.items()):
        if not any(d["side"] == (side or "unowned") for d in dice_sides):
            dice_sides.append({"side": side or "unowned", "sides": 0, "count": 0, "ours": 0, "counts": [], "expected": 0.0,
                               "mean": 0.0, "fair_mean": 0.0, "attacks": made, "hits": hits})
    rulings = [{"time": _clock(r.t), "outcome": r.outcome or "info", "css": _css(r.outcome), "message": r.message,
                "rule": r.rule} for r in report.rulings]
    overrules = [{"time": _clock(r.t), "outcome": r.outcome or "info", "css": _css(r.outcome), "message": r.message}
                 for r in report.overrules()]
    key_frames = [{"time": _clock(report.time_of(k.frame)), "caption": k.caption, "jpeg_b64": k.jpeg_b64}
                  for k in report.key_frames]
    score_sides, score_rows = _score_rows(report)
    play = sum(c.play for c in report.chapters)
    final = report.panel
    return env.get_template("report.html").render(
        r=report, key_frames=key_frames, version=_version(), when=_when(report.created), duration=_clock(report.duration_s),
        illegal=sum(m.kind == "illegal" for m in report.moves),
        too_close=sum(r.outcome == "too close to call" for r in report.rulings),
        attacks=len(report.attacks), hits=sum(a.hit for a in report.attacks), play=play,
        play_word=_play_word(report), final=final, colours=colours, units=units, columns=columns,
        moves=moves, overrules=overrules, attack_rows=attack_rows, dice=dice, dice_sides=dice_sides,
        rulings=rulings, score_sides=score_sides, score_rows=score_rows, story=_story(report),
        board=report_plots.board_svg(report), distance=report_plots.distance_svg(report),
        attacks_plot=report_plots.attacks_svg(report), dice_plot=report_plots.dice_svg(report),
        score_plot=report_plots.score_svg(report), timeline=report_plots.timeline_svg(report))


def _play_word(report: BattleReport) -> str:
    """What the game counts its chapters in: "turn", "round", or "phase" when it counts neither (plural added by
    the page)."""
    titles = [c.title for c in report.chapters if c.play]
    if not titles:
        return "phase"
    if all(t.startswith("Round") and "turn" not in t for t in titles):
        return "round"
    return "turn"


def write_report(report: BattleReport, target: Path) -> Path:
    """Write the HTML to `target` atomically (a half-written report never replaces a good one)."""
    target = check_target(target)
    write_file(target, render_report(report), what="battle report")
    return target


def check_target(target: Path) -> Path:
    """`target` if a report can be written there; else InputError in one sentence (checked before a long replay)."""
    target = Path(target)
    if target.is_dir():
        raise InputError(f"{target} is a folder; give a file name for the report, e.g. {target / 'report.html'}.")
    if not target.parent.is_dir():
        raise InputError(f"The folder {target.parent} does not exist; create it or write the report elsewhere.")
    return target


def _sentence(text: object) -> str:
    """A message as a sentence starts, with a capital ("red's army is appraised ..." -> "Red's army ...")."""
    words = str(text)
    return words[:1].upper() + words[1:]
