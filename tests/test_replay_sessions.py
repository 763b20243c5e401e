"""The bundled sample sessions (sample_frames/) replayed through the pipeline: each gives exactly its golden
transcript, and what it reports agrees with the session's ground truth (truth.json): every physical move once
with its true length, nothing while a hand covers the board, the light changes or the camera is knocked,
engagement gaps and sight verdicts as the true positions give them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rules.engine import Placement
from rules.geometry import edge_distance, line_of_sight
from rules.terrain import parse_terrain
from session.replay import ReplayRun, load_setup, open_source

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_frames"
SESSIONS = ("valknut_skirmish", "magni_placement", "stress")
LENGTH_TOLERANCE_IN = 0.05
GAP_TOLERANCE_IN = 0.05
MM_PER_INCH = 25.4


def _without_timing(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if not (event.get("type") == "summary" and k == "seconds")}


@pytest.fixture(scope="module")
def replayed() -> dict[str, list[dict[str, Any]]]:
    """Each bundled session replayed once, in process (the same code the CLI runs)."""
    out = {}
    for name in SESSIONS:
        source = open_source(SAMPLES / name)
        with source:
            out[name] = list(ReplayRun(source, load_setup(source)).events())
    return out


def _truth(name: str) -> dict[str, Any]:
    return json.loads((SAMPLES / name / "truth.json").read_text(encoding="utf-8"))


def _golden(name: str) -> list[dict[str, Any]]:
    lines = (SAMPLES / name / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_sample_sessions_fit_in_sixty_megabytes() -> None:
    total = sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file())
    assert total < 60e6


@pytest.mark.parametrize("name", SESSIONS)
def test_replay_gives_the_golden_transcript(name: str, replayed: dict[str, list[dict[str, Any]]]) -> None:
    got = [_without_timing(e) for e in replayed[name]]
    want = [_without_timing(e) for e in _golden(name)]
    assert got == want
    assert got[-1]["type"] == "summary" and all("type" in e and "frame" in e for e in got)


def test_cli_prints_the_golden_transcript_for_magni() -> None:
    """`tablesight replay DIR --json` prints exactly golden.jsonl (but the summary's seconds)."""
    done = subprocess.run([sys.executable, "-m", "webui.cli", "replay", str(SAMPLES / "magni_placement"), "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    got = [_without_timing(json.loads(line)) for line in done.stdout.splitlines()]
    assert got == [_without_timing(e) for e in _golden("magni_placement")]


@pytest.mark.parametrize("name", ["valknut_skirmish", "stress"])
def test_every_true_move_is_reported_once_with_its_length(name: str, replayed: dict[str, list[dict[str, Any]]]) -> None:
    truth = _truth(name)
    moves = [e for e in replayed[name] if e["type"] == "move"]
    assert len(moves) == len(truth["moves"])
    for true in truth["moves"]:
        found = [m for m in moves if m["tag"] == true["tag"] and true["left_frame"] - 2 <= m["left_frame"]
                 and m["frame"] >= true["placed_frame"] and m["frame"] <= true["placed_frame"] + 15]
        assert len(found) == 1, (true, moves)
        m = found[0]
        assert abs(m["length_in"] - true["length_in"]) <= LENGTH_TOLERANCE_IN
        for got, want in ((m["from_in"], true["from_in"]), (m["to_in"], true["to_in"])):
            assert abs(got[0] - want[0]) <= LENGTH_TOLERANCE_IN and abs(got[1] - want[1]) <= LENGTH_TOLERANCE_IN


@pytest.mark.parametrize("name", SESSIONS)
def test_nothing_moves_while_a_hand_covers_the_board_or_the_light_or_camera_change(
        name: str, replayed: dict[str, list[dict[str, Any]]]) -> None:
    truth = _truth(name)
    for q in truth["quiet"]:
        for e in replayed[name]:
            if e["type"] == "move":
                assert e["frame"] < q["first"] or e["left_frame"] > q["last"], (q, e)
            if e["type"] == "placed":
                assert not q["first"] <= e["frame"] <= q["last"], (q, e)


def test_stress_camera_knock_is_noticed_and_the_pose_solved_again(replayed: dict[str, list[dict[str, Any]]]) -> None:
    knocked = [q for q in _truth("stress")["quiet"] if q["what"] == "the camera knocked"][0]
    moved = [e for e in replayed["stress"] if e["type"] == "camera_moved"]
    assert len(moved) == 1 and knocked["first"] <= moved[0]["frame"] <= knocked["first"] + 1
    assert moved[0]["residual_px"] < 1.0


def test_magni_fills_the_board_and_scores(replayed: dict[str, list[dict[str, Any]]]) -> None:
    events = replayed["magni_placement"]
    placed = [e for e in events if e["type"] == "verdict" and e["rule"] == "magni.place.tile"]
    assert len(placed) == 17
    scores = [e for e in events if e["type"] == "score"]
    assert scores and events[-1]["score"] == scores[-1]["score"]
    assert any(e["type"] == "verdict" and e["rule"] == "magni.end" for e in events)


def test_magni_tiles_stand_on_the_cells_the_layout_gives() -> None:
    from rules.hexgrid import Layout
    from vision.synth.samples import MAGNI_CELLS, flat_hex_centre

    board = json.loads((ROOT / "examples" / "boards" / "magni_19.json").read_text(encoding="utf-8"))["layout"]
    layout = Layout(size_in=board["size_in"], orientation="flat", origin=tuple(board["origin"]))
    for q, r in MAGNI_CELLS:
        x, y = flat_hex_centre(q, r, board["size_in"], tuple(board["origin"]), 0.0)
        cell, off = layout.from_table(x, y)
        assert (cell.q, cell.r) == (q, r) and off < 1e-9


# ---------------------------------------------------------------------------------------- rules vs truth


def _valknut_world() -> tuple[dict[str, Any], dict[int, str], float]:
    d = SAMPLES / "valknut_skirmish"
    roster = json.loads((d / "roster.json").read_text(encoding="utf-8"))
    owners = {u["tag"]: u["owner"] for u in roster["units"]}
    radius = roster["units"][0]["base_mm"] / MM_PER_INCH / 2.0
    return _truth("valknut_skirmish"), owners, radius


def _true_placements(truth: dict[str, Any], frame: int) -> dict[int, Placement]:
    """The units where they truly stand: base centre and the floor under the base (its underside's height)."""
    tags = truth["frames"][frame]["tags"]
    return {int(t): Placement(int(t), v["base_in"][0], v["base_in"][1], v["floor_in"]) for t, v in tags.items()}


def _as_ruled(at: dict[int, Placement], events: list[dict[str, Any]], upto: dict[str, Any]) -> dict[int, Placement]:
    """The true placements as the rules hold them when `upto` was ruled: a unit whose illegal move was taken back
    stands where it legally stood (its "tablesight.take_back" ruling) until a later move of it is ruled legal."""
    held: dict[int, tuple[float, float]] = {}
    for e in events:
        if e is upto:
            break
        if e["type"] != "verdict":
            continue
        if e["rule"] == "tablesight.take_back":
            held[int(e["unit"])] = tuple(e["numbers"]["legal_in"])  # type: ignore[assignment]
        elif e["rule"].endswith(".distance") and e["outcome"] == "legal" and e.get("unit") is not None:
            held.pop(int(e["unit"]), None)
    return {t: (Placement(t, *held[t], 0.0) if t in held else p) for t, p in at.items()}


def _frame_of_positions(v: dict[str, Any], moves: list[dict[str, Any]]) -> int:
    """The frame whose true positions a verdict was ruled on: before the move for a move's verdicts."""
    if v.get("event") == "move":
        move = next(m for m in moves if m["frame"] == v["frame"] and m["tag"] == v["unit"])
        return int(move["left_frame"]) - 1
    return int(v["frame"])


def test_engagement_verdicts_agree_with_true_geometry(replayed: dict[str, list[dict[str, Any]]]) -> None:
    truth, owners, r = _valknut_world()
    events = replayed["valknut_skirmish"]
    moves = [e for e in events if e["type"] == "move"]
    checked = 0
    for v in (e for e in events if e["type"] == "verdict"):
        if not v["rule"].endswith(".engagement") and v["rule"] != "valknut.attack.melee_range":
            continue
        at = _as_ruled(_true_placements(truth, _frame_of_positions(v, moves)), events, v)
        unit = int(v["unit"])
        if v["rule"] == "valknut.attack.melee_range":
            enemies = [int(v["action"]["params"]["target"])]
        elif "enemy" in v["numbers"]:
            enemies = [int(v["numbers"]["enemy"])]
        else:  # "no enemy within 1"": truly none
            gaps = [edge_distance(at[unit], r, at[e], r).value for e in at if owners[e] != owners[unit]]
            assert min(gaps) > 1.0 + GAP_TOLERANCE_IN
            checked += 1
            continue
        true_gap = edge_distance(at[unit], r, at[enemies[0]], r).value
        assert abs(true_gap - v["numbers"]["gap_in"]) <= GAP_TOLERANCE_IN
        assert (true_gap <= 1.0) == (v["outcome"] == "legal" if v["rule"] != "valknut.move.engagement"
                                     else v["outcome"] == "illegal")
        checked += 1
    assert checked >= 5


def test_sight_verdicts_agree_with_true_geometry(replayed: dict[str, list[dict[str, Any]]]) -> None:
    truth, _owners, r = _valknut_world()
    terrain = parse_terrain(json.loads((SAMPLES / "valknut_skirmish" / "terrain.json").read_text(encoding="utf-8")))
    sights = [e for e in replayed["valknut_skirmish"] if e["type"] == "verdict" and e["rule"] == "valknut.attack.sight"]
    assert {s["numbers"]["sight"] for s in sights} >= {"blocked", "clear"}
    for s in sights:
        at = _as_ruled(_true_placements(truth, int(s["frame"])), replayed["valknut_skirmish"], s)
        target = int(s["action"]["params"]["target"])
        true = line_of_sight(at[int(s["unit"])], r, at[target], r, terrain)
        assert true.verdict == s["numbers"]["sight"]


def test_valknut_transcript_has_real_rulings(replayed: dict[str, list[dict[str, Any]]]) -> None:
    verdicts = [e for e in replayed["valknut_skirmish"] if e["type"] == "verdict"]
    rules = {(v["rule"], v["outcome"]) for v in verdicts}
    assert ("valknut.move.distance", "illegal") in rules  # beyond Speed
    assert ("valknut.move.distance", "legal") in rules
    # Blue 3's 7.28" move was taken back: the rules keep it where it stood, so nobody is engaged later on
    assert ("tablesight.take_back", "info") in rules
    assert sum(v["rule"] == "valknut.deploy.wholly_within" and v["outcome"] == "legal" for v in verdicts) == 10
    climbed = [e for e in replayed["valknut_skirmish"] if e["type"] == "move" and e["tag"] == 13]
    truth = _truth("valknut_skirmish")
    last = truth["frames"][climbed[0]["frame"]]["tags"]["13"]
    assert abs(last["floor_in"] - 3.0) < 1e-9  # the base stands on the 3" ruin floor ...
    assert last["mount"] == "topper" and abs(last["z_in"] - (3.0 + 1.85)) < 1e-9  # ... its topper's tag 1.85" above
