"""The battle report (`tablesight report`): its numbers are the replay's (checked against the bundled samples'
golden transcripts), the HTML file is self-contained (opened in real Chromium with every network request
refused), and bad input is one sentence with exit status 2."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.web import CHROMIUM, CHROMIUM_ARGS
from session import report_plots
from session.report import BattleReport, gather_report, name_units
from session.report_html import render_report, write_report

SAMPLES = Path(__file__).resolve().parents[1] / "sample_frames"


def _golden(name: str) -> list[dict[str, Any]]:
    lines = (SAMPLES / name / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def valknut() -> BattleReport:
    return gather_report(SAMPLES / "valknut_skirmish")


@pytest.fixture(scope="module")
def magni() -> BattleReport:
    return gather_report(SAMPLES / "magni_placement")


def test_moves_are_the_replays_moves(valknut: BattleReport) -> None:
    golden = [e for e in _golden("valknut_skirmish") if e["type"] == "move"]
    assert len(valknut.moves) == len(golden) == 5
    for move, truth in zip(valknut.moves, golden, strict=True):
        assert move.unit == truth["tag"] and move.frame == truth["frame"]
        assert move.length_in == pytest.approx(truth["length_in"], abs=1e-9)
        assert move.pm_in == pytest.approx(truth["pm_in"], abs=1e-9)
    # each move carries the rulings made on it: Blue 3's 7.28" against Speed 6" is illegal.
    blue3 = next(m for m in valknut.moves if m.unit == 17)
    assert blue3.outcome == "illegal"
    assert any(r.rule == "valknut.move.distance" and r.numbers["allowance_in"] == 6.0 for r in blue3.rulings)
    assert [m.outcome for m in valknut.moves] == ["legal", "illegal", "illegal", "legal", "legal"]
    assert [m.kind for m in valknut.moves] == ["move", "illegal", "illegal", "move", "move"]


def test_trails_end_where_the_last_move_put_each_unit(valknut: BattleReport) -> None:
    red5 = valknut.units[14]
    assert red5.name == "Red 5" and red5.owner == "red"
    ends = [tuple(e["to_in"]) for e in _golden("valknut_skirmish") if e["type"] == "move" and e["tag"] == 14]
    assert [(round(x, 4), round(y, 4)) for _, x, y in red5.trail[-2:]] == ends
    assert math.dist(ends[-1], (12.0, 8.3)) < 0.002  # where the sample's script put it down
    assert len(red5.trail) == 3  # placed, moved, disengaged


def test_chapters_dice_and_attacks(valknut: BattleReport) -> None:
    """Deployment is a chapter of its own (the units put down before turn 1 began at frame 20); each turn starts
    right after the ruling that began it (Turn 1 after frame 20's third ruling, "Turn 1 begins"); an illegal move
    counts no inches."""
    assert [(c.title, c.frame, c.at, c.play) for c in valknut.chapters] == [
        ("Deployment", 0, 0, False), ("Turn 1", 20, 3, True), ("Turn 2", 115, 8, True)]
    began = [(r.frame, r.at, valknut.chapter_of(r.frame, r.at)) for r in valknut.rulings if r.rule == "valknut.turn.start"]
    assert began == [(20, 2, 0), (115, 7, 1)]  # the ruling that begins a turn is told at the end of the one before
    assert [m.chapter for m in valknut.moves] == [1, 1, 1, 1, 2]
    assert [(a.unit, a.target, a.hit, a.faces) for a in valknut.attacks] == [(15, 13, True, (4, 4, 1)), (17, 14, False, (3,))]
    assert [(d.unit, d.faces, d.side, d.sides) for d in valknut.dice] == [
        (15, (4,), "blue", 6), (13, (4, 1), "red", 6), (17, (3,), "blue", 6)]
    assert valknut.attacks_by_unit() == {15: (1, 1), 17: (1, 0)}
    per_chapter = valknut.distance_by_chapter()
    first, second = (e["length_in"] for e in _golden("valknut_skirmish") if e["type"] == "move" and e["tag"] == 14)
    blue2 = next(e["length_in"] for e in _golden("valknut_skirmish") if e["type"] == "move" and e["tag"] == 16)
    assert per_chapter == {14: {1: pytest.approx(first), 2: pytest.approx(second)}, 16: {1: pytest.approx(blue2)}}
    assert second == pytest.approx(math.dist((13.2, 10.2), (12.0, 8.3)), abs=0.003)  # the script's own slide
    assert valknut.headline == "No winner yet when the recording ended: Turn 2 of 6 · activations · red to activate."


def test_messages_name_units_not_ids(valknut: BattleReport) -> None:
    assert not any(re.search(r"\b[Uu]nit 1\d\b", r.message) for r in valknut.rulings)
    assert "Blue 1 (Accuracy 1) attacks Red 4 (Evasion 1): needs 4+, rolled 4: hit, 2 damage." in [
        r.message for r in valknut.rulings]
    assert name_units("Unit 14 attacks unit 99", {14: "Bjorn"}) == "Bjorn attacks unit 99"


def test_score_by_turn_is_the_games(magni: BattleReport) -> None:
    golden = _golden("magni_placement")
    changes = [e for e in golden if e["type"] == "score"]
    assert [(f, s) for f, _, s in magni.scores] == [(e["frame"], e["score"]) for e in changes]
    assert magni.final_score() == golden[-1]["score"] == {"red": 13, "blue": 12}
    # the winner in the headline, and each side's score in the game's own words at the end
    assert magni.headline == "Red wins: 13 points to 12."
    assert [(s.side, s.points) for s in magni.chapters[-1].score] == [("red", 13.0), ("blue", 12.0)]
    assert "13 points" in magni.chapters[-1].score[0].words
    assert len(magni.hex_cells) == 19  # the Magni board drawn, not terrain


def test_json_is_plain_and_complete(valknut: BattleReport) -> None:
    data = json.loads(json.dumps(valknut.to_json()))
    assert data["game"] == "Valknut: Skirmish Game" and data["frames"] == 140
    assert data["attacks_by_unit"] == {"Blue 1": {"attacks": 1, "hits": 1}, "Blue 3": {"attacks": 1, "hits": 0}}
    first, second = (e["length_in"] for e in _golden("valknut_skirmish") if e["type"] == "move" and e["tag"] == 14)
    assert data["distance_by_chapter"]["Red 5"] == {"1": round(first, 3), "2": round(second, 3)}
    assert [c["title"] for c in data["chapters"]] == ["Deployment", "Turn 1", "Turn 2"]
    assert data["headline"] == valknut.headline and data["panel"]["over"] is False
    assert len(data["moves"]) == 5 and data["moves"][1]["name"] == "Blue 3"


def test_html_is_self_contained(valknut: BattleReport, tmp_path: Path) -> None:
    out = write_report(valknut, tmp_path / "report.html")
    text = out.read_text(encoding="utf-8")
    # no file or page is fetched: every picture is inline SVG or a data: URI.
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:|#)""", text)
    assert "@import" not in text and "<script" not in text
    assert text.count("<svg") >= 6  # board, distances, attacks, dice, score, timeline
    assert text.count("data:image/jpeg;base64,") == len(valknut.key_frames) >= 6
    assert "Blue 3" in text and "7.28&#34; ± 0.004&#34;" in text


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_report_opens_offline_in_chromium(valknut: BattleReport, tmp_path: Path) -> None:
    from playwright.sync_api import Route, sync_playwright

    out = write_report(valknut, tmp_path / "report.html")
    asked: list[str] = []

    def only_local(route: Route) -> None:
        asked.append(route.request.url)
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.route("**/*", only_local)
        page.goto(out.as_uri())
        widths = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
        board = page.eval_on_selector("figure svg", "e => e.getBoundingClientRect().width")
        rows = page.eval_on_selector_all("table tr", "els => els.length")
        page.screenshot(path="/tmp/tablesight-report.png", full_page=True)
        browser.close()
    assert [u for u in asked if not u.startswith(("file:", "data:"))] == []
    assert widths and all(w == 640 for w in widths)
    assert board > 800  # the board picture fills the page's width
    assert rows > 20


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "webui.cli", "report", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env=None)


def test_cli_bad_inputs_are_one_sentence(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    for bad in (str(tmp_path / "nowhere"), str(SAMPLES)):
        done = _cli(bad, "-o", str(tmp_path / "r.html"), cwd=root)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "is not a recorded session" in done.stderr
    done = _cli(str(SAMPLES / "stress"), "-o", str(tmp_path / "missing" / "r.html"), cwd=root)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "does not exist" in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_the_report_says_when_it_was_recorded_on_this_machines_clock(valknut: BattleReport, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorder stamps UTC; the report, like the replay list, says the local time (Berlin here: UTC+1 in
    November), not the UTC hour unmarked."""
    import dataclasses
    import time

    monkeypatch.setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3")
    time.tzset()
    try:
        report = dataclasses.replace(valknut, created="2026-11-24T21:07:30+00:00")
        text = write_report(report, tmp_path / "report.html").read_text(encoding="utf-8")
        assert "24 November 2026, 22:07" in text and "21:07" not in text
        report = dataclasses.replace(valknut, created="not a time")
        assert "not a time" not in write_report(report, tmp_path / "bad.html").read_text(encoding="utf-8")
    finally:
        monkeypatch.undo()
        time.tzset()


def test_magni_report_leaves_out_what_the_game_never_fills(magni: BattleReport) -> None:
    """Magni's tiles neither move nor attack once placed: no Moves, Inches, Attacks or Hits column, no "0 of 0
    attacks hit"; its chapters are phases ("Place phase", never "Place place"); and its score is plotted at every
    change of the points (11 in the sample, each a tile placed) from 0 to 0, not at two chapter ends."""
    golden = [e for e in _golden("magni_placement") if e["type"] == "score"]
    text = render_report(magni)
    assert [c.title for c in magni.chapters] == ["Lead phase", "Place phase"]
    assert re.findall(r"<h3>([^<]*)</h3>", text)[:2] == ["Lead phase", "Place phase"]  # no phase words repeated
    header = re.search(r"<tr><th>Unit</th>.*?</tr>", text)
    assert header is not None and header.group(0) == "<tr><th>Unit</th><th>Owner</th><th>Profile</th><th>At the end</th></tr>"
    assert "attacks hit" not in text and "The game, phase by phase" in text
    points = [(f, [s.points for s in score]) for f, _at, score in magni.points]
    assert points == [(0, [0, 0])] + [(e["frame"], [e["score"]["red"], e["score"]["blue"]]) for e in golden]
    fig = report_plots.score_figure(magni)
    assert fig is not None
    marks = {ln.get_color(): list(np.asarray(ln.get_ydata())) for ln in fig.axes[0].lines if ln.get_marker() == "o"}
    assert sorted(marks.values()) == sorted([[p[0] for _f, p in points], [p[1] for _f, p in points]])
    assert len(next(iter(marks.values()))) == 12
