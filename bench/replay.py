"""Replay rows: how fast `tablesight replay` runs a recorded 1080p session with 40 bases, serially and with the
read-ahead (session/read_ahead.py), and our CPU a frame against a bare detector's on the same frames.

The recording is rendered and written once (JPEG, as a camera records), seeded: the bench's first 1080p scene
(40 bases with figures, 0.5-1.0" tags on toppers and rims, 3 terrain blocks and a ruin), calibrated on its first
frame with the true intrinsics, a roster of 40 units (heights and offsets from the render's truth) (two players, a game's example units, so moves are ruled), and in every frame after
the first a few bases slide a little; one base is lifted and put down elsewhere. Then rounds are run back to
back, interleaved, so that each round's three runs see the same load:

- bare: each frame file read and its grey decoded (`cv2.imdecode`, the JPEG's luminance) and given to a bare pupil-apriltags
  Detector (one thread) at the replay's decimation: what any program must spend on these frames;
- serial: `ReplayRun(workers=0)`, every frame read, detected, mapped, tracked and ruled in turn;
- read-ahead: `ReplayRun()` (one detection thread a usable core beside the ruling thread).

Each run's wall clock gives frames a second; its CPU (`time.process_time`, every thread of the process) a
frame gives our cost against the bare one's. A round's ratios are taken within it; the row gives the median
over rounds.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from bench.live import _free
from bench.report import ReplayRow
from bench.scenes import (
    BOARD,
    CAMERA_HEIGHT_IN,
    CAMERA_TILT_DEG,
    LIVE_SLIDE_IN,
    LIVE_SLIDERS,
    SEED,
    bench_scene,
    on_a_ruin,
    roster_truth,
)
from bench.vision import BareDetector
from calibration.errors import InputError
from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, collect_anchors
from rules.engine import RulesInputError, find_game, game_names
from rules.roster import parse_roster
from session.pipeline import default_setup
from session.read_ahead import default_workers
from session.replay import ReplayRun, load_setup, open_source
from vision.recorder import Recorder
from vision.sources import JPEG_GRAY, SessionSource
from vision.synth.render import BasePlacement, Scene, camera_framing_board, render_scene
from vision.tags import detect_tags, gray_frame

REPLAY_LABEL = "1080p"
REPLAY_SIZE = (1920, 1080)
REPLAY_FPS = 30.0
"""The recording's frame rate: a replay at this many frames a second keeps up with the game as it was played."""
REPLAY_FRAMES_PER_FRAME = 3
"""The recording has this many frames per `frames` (30 by default), ..."""
REPLAY_MIN_FRAMES = 20
REPLAY_MAX_FRAMES = 120
"""... 20 at least and 120 at most."""
REPLAY_ROUNDS = 3
"""Interleaved rounds of bare / serial / read-ahead runs; the row gives the median over them."""
EXAMPLE_ROSTERS = Path(__file__).resolve().parent.parent / "examples" / "rosters"
"""The example roster of each game (examples/rosters/<game>.json): the replay's units are made from the first,
in the games' name order, whose game can be played by two players with 40 units."""
REPLAY_JPEG_QUALITY = 90
REPLAY_STREAM = 60
"""Seed stream of the replay recording (the detection frames use 0-2, the live sequences 50)."""
REPLAY_LIFT_FRAME = 3
REPLAY_PLACE_FRAME = 8
"""One base is lifted at this frame and put down elsewhere at this one."""


def replay_frame_count(frames: int) -> int:
    return max(REPLAY_MIN_FRAMES, min(REPLAY_MAX_FRAMES, REPLAY_FRAMES_PER_FRAME * frames))


def replay_roster(bases: Sequence[BasePlacement], heights: Mapping[int, float],
                  offsets: Mapping[int, tuple[float, float]]) -> dict[str, Any] | None:
    """A roster for the bases, each tag at its true height and offset (`heights`, `offsets`: the render's truth,
    `bench.scenes.roster_truth`), two players taking turns: the units of
    the first game (by name) whose example roster, stretched to len(bases) units, starts a game (so the
    replay's moves are ruled); None (measuring only) if no game takes that many."""
    for name in game_names():
        try:
            example = json.loads((EXAMPLE_ROSTERS / f"{name}.json").read_text(encoding="utf-8"))
            kinds = [u for u in example["units"] if isinstance(u, dict)]
            owners = sorted({str(u["owner"]) for u in kinds})
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not kinds or len(owners) < 2:
            continue
        units = []
        for i, b in enumerate(bases):
            units.append({**kinds[i % len(kinds)], "tag": b.tag, "name": f"unit {b.tag}", "owner": owners[i % 2],
                          "base_mm": round(b.base_mm, 2), "base_height_in": round(max(0.0, heights[b.tag]), 4),
                          "tag_in": round(b.tag_in, 4),
                          "tag_offset_in": [round(offsets[b.tag][0], 4), round(offsets[b.tag][1], 4)]})
        roster = {**example, "units": units}
        try:
            parsed = parse_roster(roster, f"the bench's {name} roster")
            find_game(name).new_state(default_setup(parsed, ()))
        except (InputError, RulesInputError):
            continue
        return roster
    return None


def _calibrated(image: np.ndarray, scene: Scene) -> TableCalibration:
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, REPLAY_JPEG_QUALITY])
    assert ok
    seen = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), np.uint8)
    layout = default_layout(*BOARD)
    anchors = collect_anchors(((t.id, t.corners_px) for t in detect_tags(gray_frame(seen))), layout)
    return calibrate_table(anchors, layout, scene.camera.image_size, scene.camera)


def record_replay_session(directory: Path, count: int, size: tuple[int, int] = REPLAY_SIZE,
                          on_frame: Callable[[int], None] | None = None, bare: bool = False) -> Path:
    """Render and record the bench's replay session of `count` frames at `size` into `directory` (new or empty)."""
    pose = camera_framing_board(BOARD, CAMERA_HEIGHT_IN, CAMERA_TILT_DEG, 0.0, size)
    first = bench_scene(pose, np.random.default_rng([SEED, REPLAY_STREAM]), bare)
    rng = np.random.default_rng([SEED, REPLAY_STREAM, 1])
    bases = list(first.bases)
    on_table = [b for b in bases if not on_a_ruin(b)]  # put down on the table, as it was
    lifted = on_table[len(on_table) // 2].tag
    rec: Recorder | None = None
    try:
        for k in range(count):
            if k > 0:
                for i in rng.choice(len(bases), LIVE_SLIDERS, replace=False):
                    b = bases[i]
                    step, heading = rng.uniform(*LIVE_SLIDE_IN), rng.uniform(0.0, 2.0 * math.pi)
                    x, y = b.x + step * math.cos(heading), b.y + step * math.sin(heading)
                    if b.tag != lifted and _free(b, x, y, bases, first):
                        bases[i] = dataclasses.replace(b, x=float(x), y=float(y),
                                                       yaw_deg=b.yaw_deg + float(rng.uniform(-5.0, 5.0)))
            if k == REPLAY_PLACE_FRAME:
                idx = next(i for i, b in enumerate(bases) if b.tag == lifted)
                old = bases[idx]
                for _ in range(2000):
                    x, y = float(rng.uniform(0.0, BOARD[0])), float(rng.uniform(0.0, BOARD[1]))
                    if math.hypot(x - old.x, y - old.y) >= 4.0 and _free(old, x, y, bases, first):
                        bases[idx] = dataclasses.replace(old, x=x, y=y)
                        break
            shown = [b for b in bases if b.tag != lifted or not REPLAY_LIFT_FRAME <= k < REPLAY_PLACE_FRAME]
            scene = dataclasses.replace(first, bases=tuple(shown))
            rendered = render_scene(scene, np.random.default_rng([SEED, REPLAY_STREAM, 2, k]))
            image = rendered.image
            if rec is None:  # frame 0: every base is in it
                roster = replay_roster(first.bases, *roster_truth(rendered.tags, rendered.bases))
                extra: dict[str, Any] = {"fps": REPLAY_FPS}
                if roster is not None:
                    extra["game"] = roster["game"]
                rec = Recorder(directory, source="tablesight bench replay recording (rendered)",
                               calibration=_calibrated(image, scene).to_json(), roster=roster,
                               jpeg_quality=REPLAY_JPEG_QUALITY, fsync=False, extra=extra)
            rec.write(image, k / REPLAY_FPS)
            if on_frame is not None:
                on_frame(k)
    finally:
        if rec is not None:
            rec.close()
    return directory


def _bare_run(files: Sequence[Path], detector: BareDetector) -> tuple[float, float]:
    """CPU seconds of the bare run over `files` (read + grey decode + bare detect), and of the detects alone.
    The grey is the JPEG's luminance decoded alone, as Tablesight's own replay reads it (vision/sources.py
    `Frame.of_jpeg`): the cheapest decode anyone would write, so the ratio charges us nothing for it."""
    total = detect = 0.0
    for path in files:
        c0 = time.process_time()
        gray = cv2.imdecode(np.fromfile(str(path), np.uint8), JPEG_GRAY)
        assert gray is not None, path  # the bench's own recording
        c1 = time.process_time()
        detector.detect(gray)
        c2 = time.process_time()
        total += c2 - c0
        detect += c2 - c1
    return total, detect


def _replay_run(directory: Path, workers: int) -> tuple[float, float, list[dict[str, Any]]]:
    """Wall and CPU seconds of `ReplayRun(workers=workers)` over the recording, and its events (but "seconds")."""
    source = open_source(directory)
    with source:
        run = ReplayRun(source, load_setup(source), workers=workers)
        w0, c0 = time.perf_counter(), time.process_time()
        events = [json.dumps(e) for e in run.events()]  # each event written, as the command does
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    out = [json.loads(e) for e in events]
    out[-1].pop("seconds", None)
    return wall, cpu, out


def replay_row(directory: Path, rounds: int = REPLAY_ROUNDS, workers: int | None = None,
               say: Callable[[str], None] | None = None) -> ReplayRow:
    """Time the bare, serial and read-ahead runs over the recording in `directory`, interleaved, `rounds` times."""
    source = open_source(directory)
    with source:
        setup = load_setup(source)
        files = [source.directory / e.file for e in source.session.entries] if isinstance(source, SessionSource) else []
        size = source.size
    probe = ReplayRun(open_source(directory), setup, workers=0)
    decimate = probe.pipeline.detector.decimate
    probe.source.close()
    workers = default_workers() if workers is None else workers
    n = len(files)
    detector = BareDetector(decimate)
    per_round: list[dict[str, float]] = []
    same = True
    moves = verdicts = 0
    try:
        _bare_run(files[:2], detector)  # warm up
        for k in range(rounds):
            if say is not None:
                say(f"replay round {k + 1} of {rounds}: bare detector, serial replay, read-ahead replay")
            bare, bare_detect = _bare_run(files, detector)
            s_wall, s_cpu, s_events = _replay_run(directory, 0)
            a_wall, a_cpu, a_events = _replay_run(directory, workers)
            same = same and s_events == a_events
            summary = s_events[-1]
            moves, verdicts = int(summary.get("moves", 0)), int(summary.get("verdicts", 0))
            per_round.append({"bare": bare / n, "bare_detect": bare_detect / n, "s_fps": n / s_wall,
                              "s_cpu": s_cpu / n, "a_fps": n / a_wall, "a_cpu": a_cpu / n,
                              "s_ratio": s_cpu / bare, "a_ratio": a_cpu / bare, "a_detect_ratio": a_cpu / bare_detect,
                              "speedup": s_wall / a_wall})
    finally:
        detector.release()

    def med(key: str) -> float:
        return float(np.median([r[key] for r in per_round]))

    return ReplayRow(
        label=REPLAY_LABEL,
        image_size=(int(size[0]), int(size[1])),
        frames=n,
        bases=len(setup.roster.units) if setup.roster is not None else 0,
        decimate=decimate,
        workers=workers,
        rounds=rounds,
        recording_fps=REPLAY_FPS,
        bare_cpu_ms=med("bare") * 1000.0,
        bare_detect_ms=med("bare_detect") * 1000.0,
        serial_fps=med("s_fps"),
        serial_cpu_ms=med("s_cpu") * 1000.0,
        serial_ratio=med("s_ratio"),
        ahead_fps=med("a_fps"),
        ahead_cpu_ms=med("a_cpu") * 1000.0,
        ahead_ratio=med("a_ratio"),
        ahead_detect_ratio=med("a_detect_ratio"),
        speedup=med("speedup"),
        realtime=med("a_fps") / REPLAY_FPS,
        same_events=same,
        moves=moves,
        verdicts=verdicts,
    )


def replay_rows(frames: int, say: Callable[[str], None] | None = None, bare: bool = False) -> list[ReplayRow]:
    """Render the replay recording (`replay_frame_count(frames)` frames) into a temporary folder and time it."""
    count = replay_frame_count(frames)
    with tempfile.TemporaryDirectory(prefix="tablesight-bench-replay-") as tmp:
        if say is not None:
            say(f"rendering a {count}-frame {REPLAY_LABEL} recording with 40 bases")
        directory = record_replay_session(Path(tmp) / "recording", count, bare=bare)
        return [replay_row(directory, say=say)]
