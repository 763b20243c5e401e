"""The battle report tells the game: the winner in its headline, the story chapter by chapter (deployment, turns,
rounds), illegal moves and take-backs left out of the inches moved, every game scored its own way (Vigtavl's
victory tokens, its hex board, close combats among the attacks), dice one by one and each side's dice against a
fair die, legends beside their plots, and a long recording's still table passed over without changing a ruling.

Sessions: a whole Vigtavl game played to its winner by seeded legal play, its declarations (dice included)
recorded over a still camera frame of the Magni sample's empty table; and the Valknut sample cut after Blue 3's
illegal move, with Blue 3 put back where it stood and a long still table after."""

from __future__ import annotations

import json
import math
import random
import re
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from rules.engine import Action, TurnStatus, find_game
from session import report_html, report_plots
from session.report import BattleReport, Chapter, ReportMove, Ruling, _moves, gather_report, kept_rolls
from session.report_html import render_report
from webui.commands.report import progress_line

SAMPLES = Path(__file__).resolve().parents[1] / "sample_frames"
VIGTAVL = find_game("vigtavl")
VIGTAVL_BOARD = {
    "hexagon": 3, "default": {"terrain": "sea"},
    "cells": [{"hex": [q, r], "terrain": "land"} for q, r in ((0, 0), (1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1),
                                                              (2, -1), (-2, 1), (1, -2), (-1, 2))]
    + [{"hex": [1, -1], "terrain": "mountain"}],
    "layout": {"size_in": 1.5, "orientation": "pointy", "origin": [12.0, 12.0]},
}
"""The board of `Vigtavl.example`: a radius-3 map, an island with a mountain in a sea ring, on the Magni
sample's 24" x 24" table."""


def _session_files(src: Path, dst: Path, files: list[str], extra: dict[str, Any]) -> None:
    """A recorded session in `dst`: `files` (of `src`) as its frames in order, 10 a second, src's calibration."""
    dst.mkdir(parents=True)
    for name in ("calibration.json", "camera.json"):
        shutil.copy(src / name, dst / name)
    for name in sorted(set(files)):
        (dst / name).symlink_to(src / name)
    (dst / "frames.jsonl").write_text("".join(json.dumps({"index": i, "t": round(i / 10, 3), "file": f}) + "\n"
                                              for i, f in enumerate(files)), encoding="utf-8")
    manifest = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
    manifest.update({"frames": len(files), "attachments": ["calibration.json"], **extra})
    manifest.pop("sample", None)
    (dst / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _play_vigtavl(seed: int) -> tuple[list[tuple[Action, TurnStatus]], list[Any], Any]:
    """A whole 2-player game by seeded legal play (attacks preferred, turns ended now and then): each action with
    the dice it took as its "rolls" and the status before it; the Results; the final state."""
    rng = random.Random(seed)
    state, _ = VIGTAVL.example(random.Random(seed))
    assert state == VIGTAVL.new_state({"board": VIGTAVL_BOARD, "players": ["red", "blue"], "winds": state.winds})
    played: list[tuple[Action, TurnStatus]] = []
    results = []
    for _ in range(400):
        if VIGTAVL.is_over(state):
            break
        acts = VIGTAVL.legal_actions(state, {})
        attacks = [a for a in acts if a.kind == "attack"]
        ends = [a for a in acts if a.kind.startswith("end") or a.kind == "finish"]
        if attacks and rng.random() < 0.8:
            a = rng.choice(attacks)
        elif ends and rng.random() < 0.35:
            a = rng.choice(ends)
        else:
            a = rng.choice(acts)
        res = VIGTAVL.apply(state, {}, a, rng)
        faces = [f for r in res.rolls for f in r.faces]
        played.append((Action(a.kind, a.unit, {**a.params, **({"rolls": faces} if faces else {})}), VIGTAVL.status(state)))
        results.append(res)
        state = res.state
    assert VIGTAVL.is_over(state)
    return played, results, state


@pytest.fixture(scope="module")
def vigtavl(tmp_path_factory: pytest.TempPathFactory) -> tuple[BattleReport, list[Any], Any, list[TurnStatus]]:
    """The Vigtavl game recorded: a frame a status (each action declared at the frame of the status it was taken
    in), over the Magni sample's first frame (an empty table: the camera sees no base)."""
    played, results, final = _play_vigtavl(0)
    dst = tmp_path_factory.mktemp("vigtavl") / "2026-11-27_1200_vigtavl"
    frame, status, lines = 0, None, []
    for action, before in played:
        if before != status:
            frame, status = frame + 1, before
        lines.append(json.dumps({"frame": frame, "action": action.to_json()}))
    _session_files(SAMPLES / "magni_placement", dst, ["frame_000000.jpg"] * (frame + 3),
                   {"game": "vigtavl", "setup": "setup.json", "declarations": "declarations.jsonl", "rolls": "recorded"})
    (dst / "setup.json").write_text(json.dumps({"board": VIGTAVL_BOARD, "players": ["red", "blue"],
                                                "winds": final.winds}), encoding="utf-8")
    (dst / "declarations.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return gather_report(dst), results, final, [s for _a, s in played]


@pytest.fixture(scope="module")
def vigtavl_on_one_frame(tmp_path_factory: pytest.TempPathFactory) -> BattleReport:
    """The same Vigtavl game recorded as a still table records it: every declaration at one frame (a declaration
    is ruled at the last frame processed, and the camera sent none between them), each action with dice declared
    first without them (the rules ask for the roll: "Waiting for the dice") and then again with its faces."""
    played, _results, final = _play_vigtavl(0)
    dst = tmp_path_factory.mktemp("vigtavl_one") / "2026-11-27_1200_vigtavl"
    lines = []
    for action, _before in played:
        if "rolls" in action.params:
            asked = Action(action.kind, action.unit, {k: v for k, v in action.params.items() if k != "rolls"})
            lines.append(json.dumps({"frame": 1, "action": asked.to_json()}))
        lines.append(json.dumps({"frame": 1, "action": action.to_json()}))
    _session_files(SAMPLES / "magni_placement", dst, ["frame_000000.jpg"] * 3,
                   {"game": "vigtavl", "setup": "setup.json", "declarations": "declarations.jsonl", "rolls": "recorded"})
    (dst / "setup.json").write_text(json.dumps({"board": VIGTAVL_BOARD, "players": ["red", "blue"],
                                                "winds": final.winds}), encoding="utf-8")
    (dst / "declarations.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return gather_report(dst)


def _told(report: BattleReport) -> list[tuple[str, str, list[str]]]:
    """The story as the page tells it: each chapter's title, its words (a run of like rulings at one frame is one
    line) and its closing score."""
    return [(c["title"], " ".join(line["text"] for line in c["lines"]), [s["words"] for s in c["score"]])
            for c in report_html._story(report)]


def test_a_roll_asked_for_is_not_a_ruling(vigtavl: tuple[BattleReport, list[Any], Any, Any],
                                          vigtavl_on_one_frame: BattleReport) -> None:
    """Each action with dice was asked for its roll once before its faces were given: those "Waiting for the dice"
    answers are rolls asked for, not rulings, so the rulings, their count and the story are the game's alone,
    the same as a recording that gave every roll at once."""
    asked_for, given = vigtavl_on_one_frame, vigtavl[0]
    dice_actions = sum(1 for r in vigtavl[1] if r.rolls)
    assert dice_actions >= 10 and len(asked_for.asked) == dice_actions
    assert all(w.outcome == "waiting" and w.message.startswith("Waiting for the dice: ") for w in asked_for.asked)
    assert not [r for r in asked_for.rulings if r.outcome == "waiting" or r.rule == "dice.pending"]
    assert [(r.rule, r.outcome, r.message) for r in asked_for.rulings] == \
        [(r.rule, r.outcome, r.message) for r in given.rulings]
    assert asked_for.unanswered() == []
    assert asked_for.attacks == [replace(a, frame=1, t=asked_for.time_of(1)) for a in given.attacks]
    html = render_report(asked_for)
    assert f"Every ruling ({len(given.rulings)})" in html and "Waiting for the dice" not in html


def test_a_run_of_declarations_on_one_frame_is_told_round_by_round(
        vigtavl: tuple[BattleReport, list[Any], Any, Any], vigtavl_on_one_frame: BattleReport) -> None:
    """Every declaration of a six-round game ruled at one frame: the game's standing is taken after each of them,
    so the chapters, each ruling's round and each round's closing score are those of the recording that gave every
    status a frame of its own (the truth: the status each action was taken in)."""
    one, truth = vigtavl_on_one_frame, vigtavl[0]
    rounds = [c.title for c in truth.chapters]
    assert len(rounds) >= 4 and [c.title for c in one.chapters] == rounds
    assert [c.score for c in one.chapters] == [c.score for c in truth.chapters]
    assert {c.frame for c in one.chapters[1:]} == {1} and [c.at for c in one.chapters] == sorted(c.at for c in one.chapters)
    assert _told(one) == _told(truth)
    html = render_report(one)
    assert f"<b>{len(rounds)}</b><span>rounds played</span>" in html
    assert [s for f, _c, s in one.scores] == [s for f, _c, s in truth.scores][-1:]  # one frame: one change of score


def test_a_roll_still_waiting_when_the_recording_ended_is_told_last() -> None:
    chapters = [Chapter("Round 1", 0, ("battle",), play=True)]
    attack = Ruling(5, 0.5, "vigtavl.combat.ranged", "legal", "Ship 11 fires at ship 21: a hit.", 11, {"hit": True},
                    "declared", 21, 0)
    early = Ruling(5, 0.5, "dice.pending", "waiting", "Waiting for the dice: roll 1 d6 for ship 11.", 11, {}, "declared")
    late = Ruling(9, 0.9, "dice.pending", "waiting", "Waiting for the dice: roll 2 d6 for ship 12.", 12, {}, "declared")
    report = BattleReport("s", "g", "", 10, 1.0, (24.0, 24.0), (), {}, [], [attack], [], [], chapters, [],
                          asked=[early, late])
    assert report.unanswered() == [late]
    told = report_html._story(report)[0]["lines"]
    assert [line["outcome"] for line in told] == ["legal", "roll asked for"]
    assert told[-1]["text"] == ("Waiting for the dice: roll 2 d6 for ship 12. The recording ended before the dice "
                                "were given.")


def test_vigtavl_headline_names_the_winner_after_round_6(vigtavl: tuple[BattleReport, list[Any], Any, Any]) -> None:
    report, _results, final, _ = vigtavl
    banner = VIGTAVL.panel(final, {}).winner
    assert banner is not None and re.fullmatch(r"(Red|Blue) wins: \d+ victory tokens to \d+\.", banner)
    assert report.headline == banner.rstrip(".") + ", round 6."
    assert report.panel is not None and report.panel.winner == banner and report.panel.over


def test_vigtavl_story_is_told_round_by_round_with_its_tokens(vigtavl: tuple[BattleReport, list[Any], Any, Any]) -> None:
    report, _results, final, statuses = vigtavl
    rounds = sorted({s.round for s in statuses if s.round})
    assert rounds[0] == 1 and rounds[-1] == 6 and len(rounds) >= 4  # a round the players ended at once has no action
    assert [c.title for c in report.chapters] == [f"Round {r}" for r in rounds]
    assert report.chapters[0].phases[0] == "placement" and report.chapters[-1].phases == ("battle",)
    # each round ends with each player's tokens, gold and silver as the game's panel counts them
    last = report.chapters[-1].score
    truth = VIGTAVL.panel(final, {}).score
    assert last == truth and all("victory token" in s.words for s in last)
    assert {s.side: s.points for s in last} == {p: float(final.tokens(p)) for p in final.players}
    html = render_report(report)
    assert "The game keeps no score" not in html and not re.search(r"\b1 turns?\b", html)
    assert f"<b>{len(rounds)}</b><span>rounds played</span>" in html
    assert html.count('<section class="chapter">') == len(rounds)
    # each ruling is told as a sentence starts: "Red places ...", not "red places ..."
    starts = re.findall(r'<span class="badge [^"]*">[^<]*</span> (\S)', html)
    assert len(starts) > 50 and not [c for c in starts if c.islower()], sorted(set(starts))


def test_vigtavl_close_combats_are_attacks_with_their_dice(vigtavl: tuple[BattleReport, list[Any], Any, Any]) -> None:
    report, results, final, _ = vigtavl
    close = [v for res in results for v in res.verdicts if v.rule == "vigtavl.combat.close"]
    ranged = [v for res in results for v in res.verdicts if v.rule == "vigtavl.combat.ranged"]
    assert len(close) >= 3
    assert [a.kind for a in report.attacks].count("close combat") == len(close)
    assert len(report.attacks) == len(close) + len(ranged)
    won = sum(v.numbers["winner"] == "attacker" for v in close) + sum(bool(v.numbers["hit"]) for v in ranged)
    assert sum(a.hit for a in report.attacks) == won
    # every die the rules took, each side's as that side rolled it
    owner = {p.id: p.owner for p in final.pieces}
    truth: dict[tuple[str, int], list[int]] = {}
    for res in results:
        for r in res.rolls:
            truth.setdefault((r.request.side or owner[r.request.unit], r.request.sides), []).extend(r.faces)
    assert report.faces_by_side() == truth
    first = next(a for a in report.attacks if a.kind == "close combat")
    combat = close[0].numbers
    assert first.faces[:len(combat["attacker_rolls"][0])] == tuple(combat["attacker_rolls"][0])
    assert first.dice[:2] == (("attacker", tuple(map(tuple, combat["attacker_rolls"]))),
                              ("defender", tuple(map(tuple, combat["defender_rolls"]))))


def test_vigtavl_hex_board_is_drawn(vigtavl: tuple[BattleReport, list[Any], Any, Any]) -> None:
    report, _results, final, _ = vigtavl
    assert len(report.hex_cells) == len(final.cells) == 37
    centre = next(c for c in report.hex_cells if abs(sum(x for x, _ in c[0]) / 6 - 12.0) < 1e-6
                  and abs(sum(y for _, y in c[0]) / 6 - 12.0) < 1e-6)
    assert centre[1] == "land" and all(math.dist(p, (12.0, 12.0)) == pytest.approx(1.5, abs=1e-3) for p in centre[0])
    assert Counter(t for _c, t, _e in report.hex_cells) == Counter({"sea": 26, "land": 10, "mountain": 1})
    with_hexes = report_plots.board_svg(report).count("<path")
    report.hex_cells, cells = [], report.hex_cells
    try:
        assert with_hexes - report_plots.board_svg(report).count("<path") == len(cells)
    finally:
        report.hex_cells = cells


# ------------------------------------------------------------------------------------------------ Valknut

TAKE_BACK_AT = 81
"""The first frame of the cut session that shows Blue 3 back where it stood (the sample's frame 55)."""
STILL = 1200
"""Frames of a still table at the end of the cut session (2 minutes at 10 a second)."""


@pytest.fixture(scope="module")
def taken_back(tmp_path_factory: pytest.TempPathFactory) -> tuple[BattleReport, list[tuple[int, int | None]]]:
    """The Valknut sample to frame 80 (Blue 3's 7.28" slide ruled illegal at 73), then frames 55-60 (Blue 3 back
    on its start, nothing else moved) and the last of them again STILL times; with the progress it told."""
    src = SAMPLES / "valknut_skirmish"
    dst = tmp_path_factory.mktemp("valknut") / "2026-11-27_1200_valknut"
    order = [*range(81), *range(55, 61), *[60] * STILL]
    _session_files(src, dst, [f"frame_{i:06d}.jpg" for i in order],
                   {"game": "valknut", "setup": "setup.json", "declarations": "declarations.jsonl",
                    "attachments": ["calibration.json", "roster.json", "terrain.json"]})
    for name in ("setup.json", "roster.json", "terrain.json"):
        shutil.copy(src / name, dst / name)
    lines = (src / "declarations.jsonl").read_text(encoding="utf-8").splitlines()
    (dst / "declarations.jsonl").write_text("".join(line + "\n" for line in lines if json.loads(line)["frame"] <= 80),
                                            encoding="utf-8")
    told: list[tuple[int, int | None]] = []
    return gather_report(dst, progress=lambda frame, total: told.append((frame, total))), told


def test_illegal_moves_and_take_backs_are_left_out_of_the_inches(
        taken_back: tuple[BattleReport, list[tuple[int, int | None]]]) -> None:
    report, _ = taken_back
    truth = json.loads((SAMPLES / "valknut_skirmish" / "truth.json").read_text(encoding="utf-8"))["moves"]
    red5, blue3 = truth[0], truth[1]
    assert [(report.name_of(m.unit), m.kind) for m in report.moves] == [
        ("Red 5", "move"), ("Blue 3", "illegal"), ("Blue 3", "taken back")]
    move, illegal, back = report.moves
    assert move.counted_in == pytest.approx(red5["length_in"], abs=0.01)
    assert illegal.length_in == pytest.approx(blue3["length_in"], abs=0.01) and illegal.counted_in == 0.0
    assert back.frame > TAKE_BACK_AT and math.dist(back.to_in, blue3["from_in"]) < 0.05 and back.counted_in == 0.0
    assert report.distance_by_chapter() == {14: {1: move.counted_in}}  # Blue 3 moved nothing that counts
    html = render_report(report)
    assert "a take-back, not counted" in html and "Illegal: left out of the inches moved" in html


def test_a_still_table_is_passed_over_and_the_progress_told(
        taken_back: tuple[BattleReport, list[tuple[int, int | None]]]) -> None:
    report, told = taken_back
    total = 81 + 6 + STILL
    assert report.frames == total
    assert report.seconds["frames_skipped"] >= STILL - 20
    assert report.seconds["frames_replayed"] + report.seconds["frames_skipped"] == total
    frames = [f for f, _ in told]
    assert frames == sorted(frames) and frames[0] == 1 and frames[-1] == total and {t for _, t in told} == {total}
    assert progress_line(1200, 36000) == "report: frame 1,200 of 36,000 (3 %)"


def test_passing_over_a_still_table_changes_no_ruling(tmp_path: Path) -> None:
    """The same cut session with a still table of 40 frames in the middle, replayed whole and with the still
    frames passed over: the same moves (to 0.001"), verdicts, attacks and chapters."""
    src = SAMPLES / "valknut_skirmish"
    dst = tmp_path / "2026-11-27_1200_valknut"
    order = [*range(56), *[55] * 40, *range(56, 80)]
    _session_files(src, dst, [f"frame_{i:06d}.jpg" for i in order],
                   {"game": "valknut", "setup": "setup.json", "declarations": "declarations.jsonl",
                    "attachments": ["calibration.json", "roster.json", "terrain.json"]})
    for name in ("setup.json", "roster.json", "terrain.json"):
        shutil.copy(src / name, dst / name)
    lines = [json.loads(line) for line in (src / "declarations.jsonl").read_text(encoding="utf-8").splitlines()]
    (dst / "declarations.jsonl").write_text("".join(json.dumps({**d, "frame": d["frame"] + (40 if d["frame"] > 55 else 0)})
                                                    + "\n" for d in lines if d["frame"] < 80), encoding="utf-8")
    fast, whole = gather_report(dst), gather_report(dst, skip_still=False)
    assert fast.seconds["frames_skipped"] >= 30 and whole.seconds["frames_skipped"] == 0
    assert [(m.frame, m.unit, m.kind) for m in fast.moves] == [(m.frame, m.unit, m.kind) for m in whole.moves]
    assert len(fast.moves) == 2
    for a, b in zip(fast.moves, whole.moves, strict=True):
        assert a.length_in == pytest.approx(b.length_in, abs=0.001)
    assert [(r.frame, r.rule, r.outcome) for r in fast.rulings] == [(r.frame, r.rule, r.outcome) for r in whole.rulings]
    assert fast.chapters == whole.chapters and fast.headline == whole.headline


def test_a_move_in_deployment_is_a_redeployment_not_an_illegal_move() -> None:
    chapters = [Chapter("Deployment", 0, ("deploy",)), Chapter("Turn 1", 10, ("turn_start", "activations"), play=True)]
    report = BattleReport("s", "g", "", 20, 2.0, (30.0, 22.0), (), {}, [], [], [], [], chapters, [])

    def raw(frame: int, a: tuple[float, float], b: tuple[float, float]) -> dict[str, Any]:
        return {"frame": frame, "tag": 12, "from_in": list(a), "to_in": list(b), "length_in": math.dist(a, b), "pm_in": 0.004}

    moves = [raw(5, (2, 2), (3, 2)), raw(12, (3, 2), (10, 2)), raw(14, (10, 2), (5, 2)), raw(16, (5, 2), (3.1, 2.1))]
    bad = Ruling(12, 1.2, "valknut.move.distance", "illegal", "too far", 12, {}, "move")
    ok = Ruling(14, 1.4, "valknut.move.distance", "legal", "fine", 12, {}, "move")
    got: list[ReportMove] = _moves(report, moves, {0: [], 1: [bad], 2: [ok], 3: []}, {})
    assert [m.kind for m in got] == ["redeploy", "illegal", "move", "move"]
    # after the illegal move to (10, 2) the rules kept the unit at (3, 2): its next move counts from there
    assert [round(m.counted_in, 4) for m in got] == [0.0, 0.0, 2.0, round(math.dist((5, 2), (3.1, 2.1)), 4)]


# ------------------------------------------------------------------------------------------------ dice, plots

def test_a_dice_correction_replaces_the_rolls_it_corrects() -> None:
    """The players typed 2 5 for an attack at frame 40 and corrected it to 6 5 at frame 41: the attack's dice are
    6 5, once; the rolls of other frames stay."""
    def roll(frame: int, faces: list[int]) -> dict[str, Any]:
        return {"type": "roll", "frame": frame, "unit": 12, "side": "red", "sides": 6, "faces": faces, "by": "players"}

    events = [roll(30, [2]), roll(40, [2]), roll(40, [5]),
              {"type": "roll_correction", "frame": 41, "faces_before": [2, 5], "faces": [6, 5], "ruled_frame": 40},
              roll(41, [6]), roll(41, [5])]
    assert [(e["frame"], e["faces"]) for e in kept_rolls(events)] == [(30, [2]), (41, [6]), (41, [5])]


@pytest.fixture(scope="module")
def valknut() -> BattleReport:
    return gather_report(SAMPLES / "valknut_skirmish")


def test_dice_one_by_one_and_each_sides_against_a_fair_die(valknut: BattleReport) -> None:
    assert valknut.faces_by_side() == {("blue", 6): [4, 3], ("red", 6): [4, 1]}
    assert valknut.attacks_by_side() == {"blue": (2, 1)}
    html = render_report(valknut)
    assert re.search(r'<span class="die[^"]*">4</span><span class="die[^"]*">1</span>', html)  # Red 4's Bear dice
    faces = re.findall(r'<span class="die[^"]*">([^<]*)</span>', html)
    assert faces and all(f in {"1", "2", "3", "4", "5", "6"} for f in faces)  # one d6 a box, never "413536"
    assert "1 of 2" in html and report_plots.dice_svg(valknut).startswith("<svg")
    fig = report_plots.dice_figure(valknut)
    assert fig is not None
    bars = {ax.get_title().split(":")[0]: [p.get_height() for p in ax.patches if isinstance(p, Rectangle)]
            for ax in fig.axes}
    assert bars == {"blue": [0, 0, 1, 1, 0, 0], "red": [1, 0, 0, 1, 0, 0]}
    lines = [float(np.asarray(ln.get_ydata())[0]) for ax in fig.axes for ln in ax.lines]
    assert lines == pytest.approx([2 / 6, 2 / 6])  # a fair die: 2 rolls / 6 faces


def _overlaps(fig: Figure) -> list[str]:
    """Every bar (or point) a legend of `fig` covers, by its axes' title or label."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    legends = [leg for leg in (ax.get_legend() for ax in fig.axes) if leg is not None] + list(fig.legends)
    boxes = [leg.get_window_extent(renderer) for leg in legends]
    assert boxes, "the figure has no legend"
    hit = []
    for ax in fig.axes:
        for patch in ax.patches:
            box = patch.get_window_extent(renderer)
            if box.height > 0 and any(box.overlaps(b) for b in boxes):
                hit.append(f"{ax.get_title()} bar at {box}")
    return hit


def test_legends_never_cover_their_bars(valknut: BattleReport, taken_back: tuple[BattleReport, Any]) -> None:
    for make in (report_plots.attacks_figure, report_plots.distance_figure, report_plots.dice_figure):
        fig = make(valknut)
        assert fig is not None
        assert _overlaps(fig) == [], make.__name__
    fig = report_plots.distance_figure(taken_back[0])
    assert fig is not None and _overlaps(fig) == []
