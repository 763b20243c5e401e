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
from session.report import BattleReport
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


def _score_table(report: BattleReport) -> tuple[list[str], list[dict[str, Any]]]:
    """Score keys and one row per turn: the score as it stood at the end of that turn."""
    final = report.final_score()
    if not final:
        return [], []
    flat_final = report_plots.score_numbers(final)
    keys = list(flat_final)
    rows: list[dict[str, Any]] = []
    current: dict[str, float] = dict.fromkeys(keys, 0.0)
    changes = list(report.scores)
    for turn, _frame in report.turn_frames:
        for _f, _t, score in [c for c in changes if c[1] == turn]:
            current.update(report_plots.score_numbers(score))
        rows.append({"turn": turn, "cells": {k: f"{v:g}" for k, v in current.items()}})
    rows[-1]["cells"] = {k: f"{v:g}" for k, v in flat_final.items()}
    return keys, rows


def render_report(report: BattleReport) -> str:
    """The report's HTML text."""
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=select_autoescape(["html"]))
    colours = report_plots.side_colours([u.owner for u in report.units.values()])
    attacks = report.attacks_by_unit()
    distance = report.distance_by_turn()
    units = [{"name": u.name, "owner": u.owner, "profile": u.profile,
              "moves": sum(1 for m in report.moves if m.unit == u.tag),
              "inches": sum(distance.get(u.tag, {}).values()),
              "attacks": attacks.get(u.tag, (0, 0))[0], "hits": attacks.get(u.tag, (0, 0))[1]}
             for u in sorted(report.units.values(), key=lambda u: (u.owner, u.name))]
    moves = [{"time": _clock(m.t), "turn": m.turn, "name": report.name_of(m.unit), "length_in": m.length_in,
              "pm_in": m.pm_in, "outcome": m.outcome, "css": _css(m.outcome),
              "words": " ".join(r.message for r in m.rulings if r.outcome != "legal") or
              " ".join(r.message for r in m.rulings[-1:])} for m in report.moves]
    times = {r.frame: r.t for r in report.rulings}
    dice = [{"time": _clock(times.get(d.frame, 0.0)), "faces": d.faces, "needed": d.needed, "message": d.message,
             "css": "" if d.success is None else ("hit" if d.success else "miss")} for d in report.dice]
    rulings = [{"time": _clock(r.t), "outcome": r.outcome or "info", "css": _css(r.outcome), "message": r.message,
                "rule": r.rule} for r in report.rulings]
    overrules = [{"time": _clock(r.t), "outcome": r.outcome or "info", "css": _css(r.outcome), "message": r.message}
                 for r in report.overrules()]
    key_frames = [{"time": _clock(times.get(k.frame, k.frame / 10)), "caption": k.caption, "jpeg_b64": k.jpeg_b64}
                  for k in report.key_frames]
    final = report.final_score() or {}
    score_keys, score_rows = _score_table(report)
    score_lines = [{"label": k, "value": f"{v:g}"} for k, v in report_plots.score_numbers(final).items()][:6]
    return env.get_template("report.html").render(
        r=report, key_frames=key_frames, version=_version(), when=_when(report.created), duration=_clock(report.duration_s),
        illegal=sum(r.outcome == "illegal" for r in report.rulings),
        too_close=sum(r.outcome == "too close to call" for r in report.rulings),
        attacks=sum(a for a, _ in attacks.values()), score_lines=score_lines, colours=colours, units=units,
        moves=moves, overrules=overrules, dice=dice, rulings=rulings, score_keys=score_keys, score_rows=score_rows,
        board=report_plots.board_svg(report), distance=report_plots.distance_svg(report),
        attacks_plot=report_plots.attacks_svg(report), score_plot=report_plots.score_svg(report),
        timeline=report_plots.timeline_svg(report))


def write_report(report: BattleReport, target: Path) -> Path:
    """Write the HTML to `target` atomically (a half-written report never replaces a good one)."""
    text = render_report(report)
    target = Path(target)
    if target.is_dir():
        raise InputError(f"{target} is a folder; give a file name for the report, e.g. {target / 'report.html'}.")
    if not target.parent.is_dir():
        raise InputError(f"The folder {target.parent} does not exist; create it or write the report elsewhere.")
    write_file(target, text, what="battle report")
    return target
