"""The battle report's pictures, drawn with matplotlib as inline SVG text: the board from above with every
unit's trail, inches moved per unit per turn, attacks and hits per unit, the score over the game, and the
timeline of moves and rulings. Each function returns an `<svg>` element (no XML header) or "" when there is
nothing to draw."""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import patheffects  # noqa: E402
from matplotlib.colors import is_color_like  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Circle, FancyArrowPatch, Polygon, Rectangle  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from session.owner_colours import Palette, owner_colours  # noqa: E402
from session.report import BattleReport  # noqa: E402

REPORT = Palette(
    named={"red": "#c0392b", "blue": "#2471a3", "green": "#1e8449", "yellow": "#b7950b", "white": "#7f8c8d",
           "black": "#273746", "orange": "#ca6f1e", "purple": "#7d3c98", "pink": "#c2185b", "grey": "#566573",
           "gray": "#566573", "brown": "#6e2c00", "gold": "#9a7d0a", "silver": "#839192"},
    spare=("#c0392b", "#2471a3", "#1e8449", "#b9770e", "#7d3c98", "#117a65", "#a04000", "#566573"),
)
"""Darker shades, for the report's white page."""
OUTCOME_COLOURS = {"legal": "#1e8449", "illegal": "#c0392b", "too close to call": "#d68910", "info": "#566573",
                   "measured": "#566573"}

plt.rcParams.update({"svg.fonttype": "none", "font.size": 10, "font.family": "sans-serif",
                     "axes.spines.top": False, "axes.spines.right": False,
                     "text.parse_math": False})  # names are text: "Red $\\frac$" is drawn as written, never as TeX


def side_colours(owners: Sequence[str]) -> dict[str, str]:
    """owner -> colour in the report (session/owner_colours.py): also any colour matplotlib knows by the name."""
    return owner_colours(owners, REPORT, lambda name: name if name not in ("none", "") and is_color_like(name)
                         else None)


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", transparent=True)
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _colours(report: BattleReport) -> dict[str, str]:
    return side_colours([u.owner for u in report.units.values()])


def board_svg(report: BattleReport) -> str:
    """The board from above (inches, +y up as the table frame has it): terrain, each unit's trail with an
    arrow per move (red when a ruling called it illegal), and each unit's base where it ended, named."""
    w, d = report.board_in
    fig, ax = plt.subplots(figsize=(9, 9 * d / w if w else 6))
    ax.add_patch(Rectangle((0, 0), w, d, facecolor="#f4efe4", edgecolor="#8d8d8d", linewidth=1.2))
    for piece in report.terrain:
        ax.add_patch(Polygon(piece.polygon, closed=True, facecolor="#a9a9a9", edgecolor="#5d5d5d", alpha=0.75))
        xs = [p[0] for p in piece.polygon]
        ys = [p[1] for p in piece.polygon]
        ax.text(sum(xs) / len(xs), sum(ys) / len(ys), piece.name, ha="center", va="center", fontsize=8,
                color="#2c2c2c", style="italic")
    colours = _colours(report)
    outcome_at = {(m.unit, m.frame): m.outcome for m in report.moves}
    for unit in report.units.values():
        if not unit.trail:
            continue
        colour = colours.get(unit.owner, "#566573")
        for a, b in zip(unit.trail, unit.trail[1:], strict=False):
            bad = outcome_at.get((unit.tag, b[0])) == "illegal"
            ax.add_patch(FancyArrowPatch((a[1], a[2]), (b[1], b[2]), arrowstyle="-|>", mutation_scale=14,
                                         color=OUTCOME_COLOURS["illegal"] if bad else colour, linewidth=1.8,
                                         linestyle="--" if bad else "-", shrinkA=0, shrinkB=4))
        first, last = unit.trail[0], unit.trail[-1]
        ax.add_patch(Circle((first[1], first[2]), unit.base_radius_in, facecolor="none", edgecolor=colour,
                            linewidth=0.8, linestyle=":"))
        ax.add_patch(Circle((last[1], last[2]), unit.base_radius_in, facecolor=colour, edgecolor="black",
                            linewidth=0.8, alpha=0.9))
        ax.text(last[1], last[2], unit.name.replace(" ", "\n", 1) if len(unit.name) > 8 else unit.name,
                ha="center", va="center", fontsize=7, fontweight="bold", color="white", linespacing=0.95,
                path_effects=[patheffects.withStroke(linewidth=2, foreground="#1c1c1c")])
    ax.set_xlim(-0.5, w + 0.5)
    ax.set_ylim(-0.5, d + 0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("inches")
    ax.set_ylabel("inches")
    return _svg(fig)


def distance_svg(report: BattleReport) -> str:
    """Grouped bars: inches each unit moved, one bar per turn."""
    per = report.distance_by_turn()
    if not per:
        return ""
    turns = sorted({t for d in per.values() for t in d})
    units = sorted(per, key=lambda u: (report.units[u].owner if u in report.units else "", report.name_of(u)))
    fig, ax = plt.subplots(figsize=(min(9.0, 2.5 + 1.2 * len(units)), 3.2))
    width = 0.8 / len(turns)
    cmap = plt.get_cmap("viridis", max(2, len(turns)))
    for i, turn in enumerate(turns):
        xs = [k + (i - (len(turns) - 1) / 2) * width for k in range(len(units))]
        ax.bar(xs, [per[u].get(turn, 0.0) for u in units], width, label=f"turn {turn}", color=cmap(i))
    ax.set_xticks(range(len(units)), [report.name_of(u) for u in units], rotation=30, ha="right")
    ax.set_ylabel("inches moved")
    ax.legend(frameon=False, ncols=min(len(turns), 6))
    return _svg(fig)


def attacks_svg(report: BattleReport) -> str:
    """Bars: attacks each unit rolled, and how many hit."""
    per = report.attacks_by_unit()
    if not per:
        return ""
    units = sorted(per, key=report.name_of)
    fig, ax = plt.subplots(figsize=(min(9.0, 2.5 + 1.2 * len(units)), 2.8))
    xs = range(len(units))
    ax.bar([x - 0.2 for x in xs], [per[u][0] for u in units], 0.4, label="attacks", color="#85929e")
    ax.bar([x + 0.2 for x in xs], [per[u][1] for u in units], 0.4, label="hits", color="#c0392b")
    ax.set_xticks(list(xs), [report.name_of(u) for u in units])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(frameon=False)
    return _svg(fig)


def score_numbers(score: object, prefix: str = "") -> dict[str, float]:
    """{"red": 1, "kills": {"red": 0}} -> {"red": 1, "kills red": 0}: every number in a score object."""
    out: dict[str, float] = {}
    if isinstance(score, dict):
        for key, value in score.items():
            out.update(score_numbers(value, f"{prefix}{key} " if prefix or isinstance(value, dict) else f"{key}"))
    elif isinstance(score, int | float) and not isinstance(score, bool):
        out[prefix.strip()] = float(score)
    return out


def score_svg(report: BattleReport) -> str:
    """Steps: each number of the score as it changed over the recording (seconds)."""
    if not report.scores:
        return ""
    times = {r.frame: r.t for r in report.rulings}
    series: dict[str, list[tuple[float, float]]] = {}
    for frame, _turn, score in report.scores:
        for key, value in score_numbers(score).items():
            series.setdefault(key, []).append((times.get(frame, frame), value))
    fig, ax = plt.subplots(figsize=(9, 2.8))
    colours = side_colours(list(series))
    for key, points in series.items():
        xs = [0.0] + [p[0] for p in points] + [report.duration_s]
        ys = [0.0] + [p[1] for p in points] + [points[-1][1]]
        ax.step(xs, ys, where="post", label=key, color=colours.get(key), linewidth=2)
    ax.set_xlabel("seconds")
    ax.set_ylabel("score")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(frameon=False)
    return _svg(fig)


def timeline_svg(report: BattleReport) -> str:
    """One strip per kind of thing (moves, attacks, other rulings) over the recording's seconds, each mark
    coloured by its outcome; turn starts as vertical lines."""
    fig, ax = plt.subplots(figsize=(9, 1.9))
    rows = {"moves": 2, "attacks": 1, "rulings": 0}
    for m in report.moves:
        ax.scatter([m.t], [rows["moves"]], color=OUTCOME_COLOURS.get(m.outcome, "#566573"), s=40, zorder=3)
    for r in report.rulings:
        if r.cause == "move":
            continue
        row = rows["attacks"] if "hit" in r.numbers else rows["rulings"]
        ax.scatter([r.t], [row], color=OUTCOME_COLOURS.get(r.outcome, "#566573"), s=22, marker="|" if row == 0
                   else "o", zorder=3)
    times = {r.frame: r.t for r in report.rulings}
    for turn, frame in report.turn_frames:
        x = times.get(frame, 0.0)
        ax.axvline(x, color="#aab7b8", linewidth=1, zorder=1)
        ax.text(x, 2.55, f" turn {turn}", fontsize=8, color="#566573", va="bottom")
    ax.set_yticks(list(rows.values()), list(rows))
    ax.set_ylim(-0.6, 2.9)
    ax.set_xlim(0, max(report.duration_s, 1.0))
    ax.set_xlabel("seconds")
    ax.spines["left"].set_visible(False)
    return _svg(fig)
