"""Speed and accuracy on this machine: what `tablesight bench` measures (docs/bench.md says what each row means).

Vision rows: for each resolution, `frames` scenes of a 30" x 22" board (40 bases each with a figure, their
0.5-1.0" tags on toppers 1.6-5.2" up or on 60 mm rims, the 4 default anchors, 3 terrain blocks and a 3" ruin
floor; sensor noise, slight blur, webcam JPEG; `bare`: bare tags 0-3" up as before figures) are rendered once, seeded, before any timing. The table is calibrated on the first frame's
detected anchors (`calibrate_table`, with the renderer's true intrinsics, or none for the "no intrinsics"
row), the decimation is picked from the smallest expected tag (`smallest_tag_px`, `decimation_for`), and
then each frame is timed through detection + mapping (`detect_tags` then `measure_bases`) and, right after
on the same grey frame, through a bare pupil-apriltags Detector (one thread, the same decimation), so both
see the same load from whatever else runs on the machine. Accuracy is against the renderer's ground truth:
each tag's height and offset from the render's truth; recall over the base tags seen whole (and how many
were hidden), base-centre error in inches against the true base centres.

Live rows: what the server runs a frame (`vision.windowed.WindowedDetector`, built as session/pipeline.py builds
it, sweeping at `vision.windowed.FINE_EVERY`, then `measure_bases`) over a short rendered sequence
starting from the resolution's first scene: a few bases slide a little every frame, one is lifted and put
down elsewhere. Each frame is followed by a full scan of it (`detect_tags` + `measure_bases`) for the ratio
and the recall the frames allow; the pixels each frame scanned, the recall and the frames the sweep took to
find the base put down are reported beside the times.

Replay rows (bench/replay.py): a rendered 1080p recording with 40 bases replayed by `ReplayRun`, serially and
with the read-ahead (detection of the next frames on worker threads), against a bare detector's read + decode
+ detect of the same frames, in interleaved rounds: frames a second, and our CPU a frame as a ratio to the
bare one's measured in the same round.

Mount rows (bench/mounts.py): a 1.35" figure on every base and each way of mounting its tag (flat under the
figure, a topper card, a leaning topper before and after mount calibration, a rim tag, two rim tags fused) x
camera tilt 0, 15 and 30 degrees at 1080p, run through the live pipeline: units found, base-centre error
against the render's truth, frames to find a unit again after a hand passed over it, phantom moves.

Dice rows (bench/dice.py): d6 dice read in real photos, held out (the training's k-fold figures) and by the
shipped model, and the time to read a tray region on one thread; the full bench (not --quick) adds rendered trays
(bench/dice_rendered.py): d6 at 1080p in a tray region, and d20 from a close phone view.

Other rows: rules geometry (line of sight, edge distances, engagement) for 40 units, the tracker's update
with 40 tags, and the per-frame image costs the web UI pays (grey conversion, JPEG encode and decode).
All times are `time.perf_counter` wall clock, milliseconds, after one warm-up call; median and p95.
"""


from __future__ import annotations

import sys
import time
from collections.abc import Callable

from bench.costs import frame_cost_rows, rules_rows, tracker_rows
from bench.dice import dice_rows
from bench.dice_rendered import dice_render_rows
from bench.live import (
    live_frame_count,
    live_row,
    render_live_sequence,
)
from bench.mounts import mount_rows, mount_settings
from bench.replay import REPLAY_FPS, REPLAY_ROUNDS, replay_frame_count, replay_rows
from bench.report import (
    BenchReport,
    CostRow,
    LiveRow,
    VisionRow,
    machine_facts,
)
from bench.scenes import (
    BARE_HEIGHT_RANGE_IN,
    BASES,
    BOARD,
    CAMERA_HEIGHT_IN,
    CAMERA_TILT_DEG,
    DEFAULT_FRAMES,
    HEIGHT_RANGE_IN,
    LIVE_LIFT_FRAME,
    LIVE_PLACE_AWAY_IN,
    LIVE_PLACE_FRAME,
    LIVE_SLIDE_IN,
    LIVE_SLIDERS,
    MIN_REPEATS,
    NO_INTRINSICS_RESOLUTION,
    QUICK_RESOLUTIONS,
    RESOLUTIONS,
    SCENE_BASES,
    SEED,
    SMALLEST_TAG_IN,
    TAG_RANGE_IN,
    TERRAIN_BLOCKS,
    render_frames,
)
from bench.vision import bench_calibration, vision_row
from vision.synth.render import Rendered
from vision.windowed import FINE_EVERY


def run_bench(
    frames: int = DEFAULT_FRAMES, quick: bool = False, progress: Callable[[str], None] | None = None,
    mounts: bool = True, bare: bool = False,
) -> BenchReport:
    """Render, time and score everything; `quick` benches 720p and 1080p only (and one table a mount);
    `mounts` False leaves out the mount rows (bench/mounts.py); `bare`: the older scenes of bare tags lying on
    bases (no figures) for the vision, live and replay rows."""
    say = progress or (lambda _m: None)
    start = time.perf_counter()
    facts = machine_facts()
    chosen = [
        (k, label, size)
        for k, (label, size) in enumerate(RESOLUTIONS)
        if not quick or label in QUICK_RESOLUTIONS
    ]
    repeats = max(frames, MIN_REPEATS)
    vision: list[VisionRow] = []
    live: list[LiveRow] = []
    costs: list[CostRow] = []
    tracker_truth: Rendered | None = None
    live_frames: dict[str, int] = {}
    for stream, label, size in chosen:
        say(f"rendering {frames} frame(s) at {label}")
        rendered = render_frames(size, frames, stream, bare)
        say(f"timing detection + mapping at {label}")
        vision.append(vision_row(label, rendered, rendered[0].rendered.camera))
        if label == NO_INTRINSICS_RESOLUTION:
            vision.append(vision_row(f"{label} no intrinsics", rendered, None))
        tracker_truth = tracker_truth or rendered[0].rendered
        costs += frame_cost_rows(label, rendered[0].rendered.image, repeats)
        first = rendered[0]
        cal = bench_calibration(label, first, first.rendered.camera)
        del rendered  # the BGR frames: a 4K sequence is big enough without them
        live_frames[label] = live_frame_count(label, frames)
        say(f"rendering a live sequence of {live_frames[label]} frames at {label}")
        sequence = render_live_sequence(first.scene, live_frames[label], stream)
        say(f"timing live (windowed) detection at {label}")
        live.append(live_row(label, sequence, cal))
        del first, sequence
    replay = replay_rows(frames, say, bare)
    mount = mount_rows(quick, say) if mounts else []
    dice = dice_rows(say) + ([] if quick else dice_render_rows(say))  # rendered trays: ~80 s, the full bench only
    say("timing rules geometry and the tracker")
    rules = rules_rows(repeats)
    assert tracker_truth is not None  # at least one resolution is benched
    tracker = tracker_rows(tracker_truth, repeats)
    settings = {
        "frames": frames,
        "quick": quick,
        "seed": SEED,
        "board_in": list(BOARD),
        "bases": BASES,
        "tag_in": list(TAG_RANGE_IN),
        "tag_height_in": list(BARE_HEIGHT_RANGE_IN if bare else HEIGHT_RANGE_IN),
        "scene_bases": "with bare tags" if bare else SCENE_BASES,
        "terrain_blocks": TERRAIN_BLOCKS,
        "camera_height_in": CAMERA_HEIGHT_IN,
        "camera_tilt_deg": CAMERA_TILT_DEG,
        "smallest_tag_in": SMALLEST_TAG_IN,
        "repeats": repeats,
        "live_frames": live_frames,
        "live_fine_every": FINE_EVERY,
        "live_sliders": LIVE_SLIDERS,
        "live_slide_in": list(LIVE_SLIDE_IN),
        "live_lift_frame": LIVE_LIFT_FRAME,
        "live_place_frame": LIVE_PLACE_FRAME,
        "live_place_away_in": LIVE_PLACE_AWAY_IN,
        "replay_frames": replay_frame_count(frames),
        "replay_rounds": REPLAY_ROUNDS,
        "replay_recording_fps": REPLAY_FPS,
        **(mount_settings(quick) if mounts else {}),
    }
    return BenchReport(
        machine=facts,
        settings=settings,
        vision=tuple(vision),
        live=tuple(live),
        rules=tuple(rules),
        tracker=tuple(tracker),
        frame_costs=tuple(costs),
        seconds=time.perf_counter() - start,
        replay=tuple(replay),
        mounts=tuple(mount),
        dice=tuple(dice),
    )


# ---------------------------------------------------------------------------------------------- the table


def main_progress(message: str) -> None:
    """Progress lines for a person watching: to stderr, so stdout stays the table or the JSON."""
    sys.stderr.write(f"bench: {message}\n")
    sys.stderr.flush()
