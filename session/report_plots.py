"""The battle report's pictures, drawn with matplotlib as inline SVG text: the board from above with every
unit's trail (and the hex board, when the game plays on one), inches moved per unit per chapter, attacks and hits
per unit, each side's dice against a fair die, the score chapter by chapter, and the timeline of moves and
rulings. Each `*_svg` function returns an `<svg>` element (no XML header) or "" when there is nothing to draw; a
legend always stands beside its axes, never over what they show."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import patheffects  # noqa: E402
from matplotlib.colors import is_color_like  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
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
HEX_COLOURS = {"sea": "#aed6f1", "water": "#aed6f1", "ocean": "#aed6f1", "lake": "#aed6f1", "river": "#aed6f1",
               "plains": "#e8f1d4", "grass": "#e8f1d4", "field": "#e8f1d4", "land": "#e8f1d4",
               "forest": "#a9cc9f", "woods": "#a9cc9f", "hill": "#e3cf9f", "hills": "#e3cf9f", "mountain": "#b3a79a",
               "mountains": "#b3a79a", "rock": "#b3a79a", "desert": "#f3e3b5", "sand": "#f3e3b5", "swamp": "#b7c9a8",
               "marsh": "#b7c9a8", "road": "#d7ccc8", "town": "#d7bde2", "castle": "#d7bde2", "ice": "#eaf2f8"}
"""Cell fills by terrain word (any other terrain: a plain beige)."""
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
    for corners, terrain, elevation in report.hex_cells:
        ax.add_patch(Polygon(corners, closed=True, facecolor=HEX_COLOURS.get(terrain, "#e5e0d0"), edgecolor="#8d8d8d",
                             linewidth=0.6, alpha=0.85))
        if elevation:
            cx = sum(p[0] for p in corners) / len(corners)
            cy = sum(p[1] for p in corners) / len(corners)
            ax.text(cx, cy, str(elevation), ha="center", va="center", fontsize=6, color="#4d4d4d")
    for ends, _kind in report.hex_edges:
        ax.plot([ends[0][0], ends[-1][0]], [ends[0][1], ends[-1][1]], color="#3b3b3b", linewidth=3.0,
                solid_capstyle="round")
    for piece in () if report.hex_cells else report.terrain:
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


def _legend_beside(ax: Any, n: int) -> None:
    """The legend to the right of the axes, outside them, so it never covers a bar."""
    if n:
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def distance_figure(report: BattleReport) -> Figure | None:
    """Grouped bars: inches each unit moved (legal moves only), one bar per chapter."""
    per = report.distance_by_chapter()
    if not per:
        return None
    chapters = sorted({c for d in per.values() for c in d})
    units = sorted(per, key=lambda u: (report.units[u].owner if u in report.units else "", report.name_of(u)))
    fig, ax = plt.subplots(figsize=(min(9.0, 3.5 + 1.0 * len(units)), 3.2))
    width = 0.8 / len(chapters)
    cmap = plt.get_cmap("viridis", max(2, len(chapters)))
    for i, chapter in enumerate(chapters):
        xs = [k + (i - (len(chapters) - 1) / 2) * width for k in range(len(units))]
        title = report.chapters[chapter].title if chapter < len(report.chapters) else f"chapter {chapter}"
        ax.bar(xs, [per[u].get(chapter, 0.0) for u in units], width, label=title, color=cmap(i))
    ax.set_xticks(range(len(units)), [report.name_of(u) for u in units], rotation=30, ha="right")
    ax.set_ylabel("inches moved")
    _legend_beside(ax, len(chapters))
    return fig


def distance_svg(report: BattleReport) -> str:
    fig = distance_figure(report)
    return _svg(fig) if fig is not None else ""


def attacks_figure(report: BattleReport) -> Figure | None:
    """Bars: attacks each unit made (close combats included), and how many hit."""
    per = report.attacks_by_unit()
    if not per:
        return None
    units = sorted(per, key=report.name_of)
    fig, ax = plt.subplots(figsize=(min(9.0, 3.5 + 1.0 * len(units)), 2.8))
    xs = range(len(units))
    ax.bar([x - 0.2 for x in xs], [per[u][0] for u in units], 0.4, label="attacks", color="#85929e")
    ax.bar([x + 0.2 for x in xs], [per[u][1] for u in units], 0.4, label="hits", color="#c0392b")
    ax.set_xticks(list(xs), [report.name_of(u) for u in units])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _legend_beside(ax, 2)
    return fig


def attacks_svg(report: BattleReport) -> str:
    fig = attacks_figure(report)
    return _svg(fig) if fig is not None else ""


def dice_figure(report: BattleReport) -> Figure | None:
    """Each side's dice against a fair die: for each side and die, how many times each face came up (bars) and
    how many a fair die would give in as many rolls (the dashed line: rolls / sides)."""
    faces = {k: v for k, v in report.faces_by_side().items() if v}
    if not faces:
        return None
    keys = sorted(faces)
    colours = side_colours([side for side, _ in keys])
    fig, axes = plt.subplots(1, len(keys), figsize=(min(9.0, 3.2 * len(keys) + 0.6), 2.8), squeeze=False)
    for ax, (side, sides) in zip(axes[0], keys, strict=True):
        rolled = faces[(side, sides)]
        counts = [rolled.count(f) for f in range(1, sides + 1)]
        expected = len(rolled) / sides
        ax.bar(range(1, sides + 1), counts, 0.7, color=colours.get(side, "#566573"), label="rolled")
        ax.axhline(expected, color="#1c2833", linestyle="--", linewidth=1.2, label=f"fair die ({expected:.2g} each)")
        ax.set_xticks(range(1, sides + 1) if sides <= 12 else range(1, sides + 1, 2))
        ax.set_xlabel(f"face (d{sides})")
        ax.set_title(f"{side or 'unowned'}: {len(rolled)} d{sides}, mean {sum(rolled) / len(rolled):.2f} "
                     f"(fair {(sides + 1) / 2:g})", fontsize=9)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(0, max(max(counts), expected) * 1.2 + 0.5)
    axes[0][0].set_ylabel("times rolled")
    fig.legend([Rectangle((0, 0), 1, 1, color="#85929e"), Line2D([], [], color="#1c2833", linestyle="--")],
               ["times each face came up", "a fair die, in as many rolls"], frameon=False, loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncols=2)
    fig.tight_layout()
    return fig


def dice_svg(report: BattleReport) -> str:
    fig = dice_figure(report)
    return _svg(fig) if fig is not None else ""


def score_numbers(score: object, prefix: str = "") -> dict[str, float]:
    """{"red": 1, "kills": {"red": 0}} -> {"red": 1, "kills red": 0}: every number in a score object."""
    out: dict[str, float] = {}
    if isinstance(score, dict):
        for key, value in score.items():
            out.update(score_numbers(value, f"{prefix}{key} " if prefix or isinstance(value, dict) else f"{key}"))
    elif isinstance(score, int | float) and not isinstance(score, bool):
        out[prefix.strip()] = float(score)
    return out


CHAPTERS_TO_PLOT = 3
"""Fewer chapters with points than this (Magni's placing is one chapter) and the score is plotted as it changed."""


def score_figure(report: BattleReport) -> Figure | None:
    """Each side's points at the end of every chapter, as the game's panel counts them; for a game of fewer than
    CHAPTERS_TO_PLOT such chapters, a point each time the points changed (seconds from the start); without points,
    each number of the game's score object as it changed over the recording."""
    with_points = [c for c in report.chapters if any(s.points is not None for s in c.score)]
    if len(with_points) < CHAPTERS_TO_PLOT and len(report.points) >= 2:
        return _points_figure(report)
    if with_points:
        sides = list(dict.fromkeys(s.side for c in with_points for s in c.score))
        colours = side_colours(sides)
        fig, ax = plt.subplots(figsize=(9, 2.8))
        ticks = list(range(len(with_points)))
        for side in sides:
            ys = [next((s.points for s in c.score if s.side == side and s.points is not None), float("nan"))
                  for c in with_points]
            ax.plot(ticks, ys, marker="o", label=side, color=colours.get(side), linewidth=2)
        ax.set_xticks(ticks, [c.title for c in with_points], rotation=30 if len(ticks) > 6 else 0,
                      ha="right" if len(ticks) > 6 else "center")
        ax.set_ylabel("points")
        pts = [s.points or 0.0 for c in with_points for s in c.score]
        ax.set_ylim(min(pts + [0.0]) * 1.15, max(pts + [1.0]) * 1.15)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        _legend_beside(ax, len(sides))
        return fig
    if not report.scores:
        return None
    series: dict[str, list[tuple[float, float]]] = {}
    for frame, _chapter, score in report.scores:
        for key, value in score_numbers(score).items():
            series.setdefault(key, []).append((report.time_of(frame), value))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(9, 2.8))
    colours = side_colours(list(series))
    for key, points in series.items():
        xs = [0.0] + [p[0] for p in points] + [report.duration_s]
        ys = [0.0] + [p[1] for p in points] + [points[-1][1]]
        ax.step(xs, ys, where="post", label=key, color=colours.get(key), linewidth=2)
    ax.set_xlabel("seconds")
    ax.set_ylabel("score")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _legend_beside(ax, len(series))
    return fig


def _points_figure(report: BattleReport) -> Figure:
    """Each side's points as they changed: a marker at every change (seconds from the start), held until the next;
    chapter starts as vertical lines."""
    sides = list(dict.fromkeys(s.side for _f, _a, score in report.points for s in score))
    colours = side_colours(sides)
    fig, ax = plt.subplots(figsize=(9, 2.8))
    end = max(report.duration_s, *(report.time_of(f) for f, _a, _s in report.points))
    for side in sides:
        xs = [report.time_of(f) for f, _a, _s in report.points]
        ys = [next((s.points for s in score if s.side == side and s.points is not None), float("nan"))
              for _f, _a, score in report.points]
        ax.step([*xs, end], [*ys, ys[-1]], where="post", color=colours.get(side), linewidth=2, label=side)
        ax.plot(xs, ys, linestyle="none", marker="o", color=colours.get(side))
    for chapter in report.chapters[1:]:
        ax.axvline(report.time_of(chapter.frame), color="#aab7b8", linewidth=1, zorder=0)
    ax.set_xlabel("seconds")
    ax.set_ylabel("points")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _legend_beside(ax, len(sides))
    return fig


def score_svg(report: BattleReport) -> str:
    fig = score_figure(report)
    return _svg(fig) if fig is not None else ""


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
        row = rows["attacks"] if any(a.frame == r.frame and a.message == r.message for a in report.attacks) \
            else rows["rulings"]
        ax.scatter([r.t], [row], color=OUTCOME_COLOURS.get(r.outcome, "#566573"), s=22, marker="|" if row == 0
                   else "o", zorder=3)
    for chapter in report.chapters:
        x = report.time_of(chapter.frame)
        ax.axvline(x, color="#aab7b8", linewidth=1, zorder=1)
        ax.text(x, 2.55, f" {chapter.title}", fontsize=8, color="#566573", va="bottom")
    ax.set_yticks(list(rows.values()), list(rows))
    ax.set_ylim(-0.6, 2.9)
    ax.set_xlim(0, max(report.duration_s, 1.0))
    ax.set_xlabel("seconds")
    ax.spines["left"].set_visible(False)
    return _svg(fig)
