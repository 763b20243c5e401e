"""Names are text everywhere, never markup or mathtext: a unit or terrain piece named like TeX makes a report."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

import pytest

from rules.terrain import TerrainPiece
from session.report import BattleReport, gather_report
from session.report_html import write_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_frames"
NAMES = ("Red $\\frac$", "Blue $x^{$", "A & <b>bold</b> $$")


@pytest.fixture(scope="module")
def report() -> BattleReport:
    return gather_report(SAMPLES / "valknut_skirmish")


def test_tex_like_names_are_drawn_as_written(report: BattleReport, tmp_path: Path) -> None:
    units = dict(report.units)
    tags = [tag for tag in sorted(units) if units[tag].trail][: len(NAMES)]  # drawn on the board picture
    for tag, name in zip(tags, NAMES, strict=True):
        units[tag] = dataclasses.replace(units[tag], name=name)
    terrain = tuple(dataclasses.replace(p, name="ruin $\\sqrt{$") if i == 0 else p
                    for i, p in enumerate(report.terrain))
    assert terrain and isinstance(terrain[0], TerrainPiece)
    odd = dataclasses.replace(report, units=units, terrain=terrain)
    out = write_report(odd, tmp_path / "report.html")
    text = out.read_text(encoding="utf-8")
    svg = text[text.index("<svg"):]
    for name in (*NAMES, "ruin $\\sqrt{$"):
        # in the page's own text (escaped as HTML), and in the board picture's SVG text as written (a long name
        # is drawn on two lines: its last word is enough)
        assert html.escape(name, quote=False) in text, name
        assert html.escape(name.split(" ", 1)[-1], quote=False) in svg, name
