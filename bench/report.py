"""The benchmark's report: its rows as values (times in ms, errors in inches), the machine it ran on, and
the table `tablesight bench` prints."""


from __future__ import annotations

import math
import os
import platform
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

import cv2
import numpy as np

# ------------------------------------------------------------------------------------------------ values


@dataclass(frozen=True)
class Timing:
    """Wall-clock times of one repeated operation, milliseconds."""

    median_ms: float
    p95_ms: float
    runs: int

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Timing:
        ms = np.asarray(seconds, np.float64) * 1000.0
        return cls(float(np.median(ms)), float(np.percentile(ms, 95)), len(ms))


@dataclass(frozen=True)
class VisionRow:
    """Detection + mapping at one resolution: speed against the bare detector, and accuracy against truth."""

    label: str
    image_size: tuple[int, int]
    intrinsics: bool
    """True: calibrated with the renderer's true camera; False: no camera file (focal from the anchors)."""
    focal_source: str
    residual_px: float
    """RMS reprojection of the anchor corners in the calibration, px."""
    decimate: int
    smallest_tag_px: float
    ours: Timing
    """detect_tags + measure_bases per frame."""
    mapping: Timing
    """measure_bases alone (pixels -> inches for every base) per frame."""
    bare: Timing
    """pupil-apriltags Detector(nthreads=1, quad_decimate=decimate).detect(gray) per frame."""
    ratio: float
    """ours.median_ms / bare.median_ms."""
    fps: float
    """1000 / ours.median_ms."""
    found: int
    eligible: int
    """Base tags the camera sees whole (and inside the frame) over all frames (`bench.vision.fully_visible`)."""
    recall: float
    false_ids: int
    bases_measured: int
    error_p50_in: float
    error_p95_in: float
    error_max_in: float
    hidden: int = 0
    """Base tags over all frames left out of `eligible`: hidden in part (figures, terrain) or cut by the frame."""


@dataclass(frozen=True)
class LiveRow:
    """What the live server runs a frame (`WindowedDetector` + measure_bases) over a short rendered sequence at
    one resolution, against a full scan (detect_tags + measure_bases) of each same frame right after it."""

    label: str
    image_size: tuple[int, int]
    decimate: int
    smallest_tag_px: float
    fine_every: int
    cells: int
    """Sweep cells the detector cut this frame size into (at most fine_every)."""
    frames: int
    """Frames timed: the sequence less its first frame (the detector's full scan, the warm-up)."""
    live: Timing
    """WindowedDetector.detect + measure_bases per frame."""
    live_max_ms: float
    full: Timing
    """detect_tags + measure_bases on the same frame, right after."""
    ratio: float
    """live.median_ms / full.median_ms."""
    scanned_fraction: float
    """Mean over the timed frames of scanned_px / the pixels of a full scan at the fine decimation."""
    scanned_fraction_max: float
    found: int
    eligible: int
    """Base tags the camera sees whole (and inside the frame) over the timed frames."""
    recall: float
    full_found: int
    full_recall: float
    """The same count for the full scans: what the frames allow at this resolution."""
    false_ids: int
    placed_tag: int
    """The base lifted at LIVE_LIFT_FRAME and put down elsewhere at LIVE_PLACE_FRAME."""
    placed_found_after: int | None
    """Frames from its putting down until the live detector reported it (1: that very frame); None: never."""
    placed_full_found_after: int | None
    """The same for the full scans (1 unless the tag is too small for the detector there)."""
    hidden: int = 0
    """Base tags over the timed frames left out of `eligible`: hidden in part or cut by the frame."""
    bare: Timing | None = None
    """A bare pupil-apriltags detect (1 thread, the same decimation) of the whole frame, timed right after."""
    bare_ratio: float = math.nan
    """live.median_ms / bare.median_ms: the live detector's time a frame against the library's full scan."""


@dataclass(frozen=True)
class ReplayRow:
    """`tablesight replay` of a rendered recording (bench/replay.py): frames a second serially and with the
    read-ahead, and CPU a frame against a bare detector's on the same frames; medians over interleaved rounds."""

    label: str
    image_size: tuple[int, int]
    frames: int
    bases: int
    decimate: int
    workers: int
    """Detection threads of the read-ahead run."""
    rounds: int
    recording_fps: float
    bare_cpu_ms: float
    """CPU a frame of the bare run: read + grey imdecode + a bare pupil-apriltags detect at `decimate`."""
    bare_detect_ms: float
    """CPU a frame of the bare detect alone."""
    serial_fps: float
    serial_cpu_ms: float
    """CPU a frame of `ReplayRun(workers=0)`: the whole replay, every event written."""
    serial_ratio: float
    """serial_cpu_ms / bare_cpu_ms, taken within each round."""
    ahead_fps: float
    ahead_cpu_ms: float
    ahead_ratio: float
    """ahead_cpu_ms / bare_cpu_ms, taken within each round."""
    ahead_detect_ratio: float
    """ahead_cpu_ms / bare_detect_ms: against the library's detect alone (no decoding)."""
    speedup: float
    """ahead_fps / serial_fps, taken within each round."""
    realtime: float
    """ahead_fps / recording_fps: above 1 the recording replays faster than it was filmed."""
    same_events: bool
    """The read-ahead run's events equal the serial run's (but the summary's "seconds")."""
    moves: int
    verdicts: int


@dataclass(frozen=True)
class MountRow:
    """One tag mount at one camera tilt with a figure on every base (bench/mounts.py): units found, base-centre
    error against the render's truth, and frames to find a unit again after a hand passed over it."""

    label: str
    mount: str
    image_size: tuple[int, int]
    tilt_deg: float
    base_mm: float
    tag_in: float
    tag_height_in: float
    """The tag face's height above the base's underside, inches (the roster's base_height_in)."""
    units: int
    found: int
    """Units with a fix in the first frame (a full scan), over every table of this mount and tilt."""
    error_p50_in: float
    error_p95_in: float
    error_max_in: float
    hand_tables: int
    """Tables on which a hand passed over a unit (a unit whose tags it saw)."""
    hand_hidden: bool
    """The hand hid every tag of its unit in every hand frame, on every such table."""
    hand_anchors_clear: bool
    found_again_after: tuple[int | None, ...]
    """Per table: frames after the hand left until the pipeline had the unit again (1: the first); None: never."""
    found_again_worst: int | None
    moves: int
    """Moves the tracker reported over the sequences (nothing moved: phantom moves)."""
    fitted: int | None = None
    """Mount calibration rows: tags whose offset was fitted from a turn."""
    fit_error_max_in: float | None = None
    """The largest distance of a fitted offset from the true one, inches."""


@dataclass(frozen=True)
class CostRow:
    """One timed operation outside detection (rules geometry, tracker, image costs)."""

    name: str
    what: str
    timing: Timing
    size_kb: float | None = None
    """Encoded size for JPEG rows, kB."""


@dataclass(frozen=True)
class MachineFacts:
    """What the figures were measured on."""

    cores: int
    usable_cores: int
    machine: str
    python: str
    opencv: str
    opencv_threads: int
    numpy: str
    pupil_apriltags: str
    shapely: str
    detector_threads: int
    openblas_coretype: str | None
    load_average: tuple[float, float, float]
    """1, 5 and 15 minute load average when the bench started (other work on the machine)."""


@dataclass(frozen=True)
class BenchReport:
    """Everything `tablesight bench` prints."""

    machine: MachineFacts
    settings: dict[str, Any]
    vision: tuple[VisionRow, ...]
    live: tuple[LiveRow, ...]
    rules: tuple[CostRow, ...]
    tracker: tuple[CostRow, ...]
    frame_costs: tuple[CostRow, ...]
    seconds: float
    """Wall-clock length of the whole bench, rendering included."""
    replay: tuple[ReplayRow, ...] = ()
    mounts: tuple[MountRow, ...] = ()
    dice: tuple[Any, ...] = ()
    """bench/dice.py's DiceRow values."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-ready dict (times in ms, lengths in inches), rounded."""
        return _rounded(asdict(self))


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return round(value, 5) + 0.0
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


# ------------------------------------------------------------------------------------------ machine facts


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def machine_facts() -> MachineFacts:
    """Cores, library versions and threads of this machine (the environment is read, never changed)."""
    import shapely

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 1
    try:
        load = os.getloadavg()
    except OSError:
        load = (math.nan, math.nan, math.nan)
    return MachineFacts(
        cores=os.cpu_count() or 1,
        usable_cores=usable,
        machine=f"{platform.system()} {platform.machine()}",
        python=platform.python_version(),
        opencv=cv2.__version__,
        opencv_threads=cv2.getNumThreads(),
        numpy=np.__version__,
        pupil_apriltags=_version("pupil-apriltags"),
        shapely=shapely.__version__,
        detector_threads=1,
        openblas_coretype=os.environ.get("OPENBLAS_CORETYPE"),
        load_average=(float(load[0]), float(load[1]), float(load[2])),
    )


# ------------------------------------------------------------------------------------------------ scenes


def _f(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


ERR_P50, ERR_P95, ERR_MAX = 'err p50"', 'p95"', 'max"'


def format_table(report: Mapping[str, Any]) -> str:
    """The report (as `BenchReport.to_json()` gives it) as a plain-text table."""
    m, s = report["machine"], report["settings"]
    load = " ".join(_f(v, ".2f") for v in m["load_average"])
    lines = [
        "Tablesight bench",
        f"machine: {m['cores']} cores ({m['usable_cores']} usable), {m['machine']}, Python {m['python']}, "
        f"OpenCV {m['opencv']} ({m['opencv_threads']} threads), numpy {m['numpy']}, "
        f"pupil-apriltags {m['pupil_apriltags']}, shapely {m['shapely']}",
        f"detector threads {m['detector_threads']}; OPENBLAS_CORETYPE={m['openblas_coretype'] or '(unset)'}; "
        f"load average at start {load}",
        f'scene: {s["board_in"][0]:g}"x{s["board_in"][1]:g}" board, {s["bases"]} bases '
        f'{s.get("scene_bases") or "with bare tags"} (tags {s["tag_in"][0]:g}-{s["tag_in"][1]:g}", faces {s["tag_height_in"][0]:g}-{s["tag_height_in"][1]:g}" up), '
        f'4 anchors, {s["terrain_blocks"]} terrain blocks; camera {s["camera_height_in"]:g}" up, tilted '
        f"{s['camera_tilt_deg']:g} deg; {s['frames']} frame(s) a resolution, seed {s['seed']}",
        "",
        "Detection + mapping per frame (detect_tags + measure_bases) vs bare pupil-apriltags, 1 thread each",
        f"{'row':<20} {'focal':<10} {'dec':>3} {'tag px':>6} {'med ms':>7} {'p95 ms':>7} {'map ms':>6} "
        f"{'bare ms':>7} "
        f"{'ratio':>5} {'fps':>6} {'recall':>14} {'hidden':>6} {ERR_P50:>9} {ERR_P95:>7} {ERR_MAX:>7}",
    ]
    for r in report["vision"]:
        recall = f"{r['found']}/{r['eligible']} {_f(r['recall'], '.3f')}"
        lines.append(
            f"{r['label']:<20} {r['focal_source']:<10} {r['decimate']:>3} {_f(r['smallest_tag_px'], '6.1f')} "
            f"{r['ours']['median_ms']:7.1f} {r['ours']['p95_ms']:7.1f} {r['mapping']['median_ms']:6.2f} "
            f"{r['bare']['median_ms']:7.1f} "
            f"{r['ratio']:5.2f} {r['fps']:6.1f} {recall:>14} {_f(r.get('hidden'), '>6')} "
            f"{_f(r['error_p50_in'], '9.4f')} "
            f"{_f(r['error_p95_in'], '7.4f')} {_f(r['error_max_in'], '7.4f')}"
        )
    lines += _live_lines(report)
    lines += _replay_lines(report)
    lines += _mount_lines(report)
    lines += dice_lines(dict(report))
    for title, key in (
        ("Rules geometry", "rules"),
        ("Tracker", "tracker"),
        ("Frame image costs", "frame_costs"),
    ):
        lines += ["", title, f"{'operation':<18} {'what':<62} {'med ms':>8} {'p95 ms':>8}"]
        for row in report[key]:
            extra = f"  {row['size_kb']:.0f} kB" if row.get("size_kb") is not None else ""
            lines.append(
                f"{row['name']:<18} {row['what']:<62} {row['timing']['median_ms']:8.3f} "
                f"{row['timing']['p95_ms']:8.3f}{extra}"
            )
    lines += ["", f"bench took {report['seconds']:.1f} s (rendering included)"]
    return "\n".join(lines)


LIVE_HEADER = (
    f"{'row':<6} {'dec':>3} {'tag px':>6} {'frames':>6} {'cells':>5} {'med ms':>7} {'p95 ms':>7} {'max ms':>7} "
    f"{'full ms':>7} {'ratio':>5} {'bare ms':>7} {'vs bare':>7} {'scanned':>7} {'recall':>14} {'full recall':>14} "
    f"{'hidden':>6} {'placed':>6}"
)


def _live_lines(report: Mapping[str, Any]) -> list[str]:
    """The live detection section of the table (none for a report without it)."""
    rows = report.get("live") or []
    if not rows:
        return []
    s = report["settings"]
    lines = [
        "",
        f"Live detection per frame (WindowedDetector, fine_every {s['live_fine_every']}, + measure_bases) vs a "
        "full scan of the same frame and a bare pupil-apriltags detect of it, 1 thread",
        f"sequence: {s['live_sliders']} bases slid {s['live_slide_in'][0]:g}-{s['live_slide_in'][1]:g}\" a frame; "
        f"one lifted at frame {s['live_lift_frame']}, put down >= {s['live_place_away_in']:g}\" away at frame "
        f"{s['live_place_frame']}; first frame (a full scan) not timed",
        LIVE_HEADER,
    ]
    for r in rows:
        recall = f"{r['found']}/{r['eligible']} {_f(r['recall'], '.3f')}"
        full_recall = f"{r['full_found']}/{r['eligible']} {_f(r['full_recall'], '.3f')}"
        placed = "-" if r["placed_found_after"] is None else str(r["placed_found_after"])
        lines.append(
            f"{r['label']:<6} {r['decimate']:>3} {_f(r['smallest_tag_px'], '6.1f')} {r['frames']:>6} {r['cells']:>5} "
            f"{r['live']['median_ms']:7.1f} {r['live']['p95_ms']:7.1f} {r['live_max_ms']:7.1f} "
            f"{r['full']['median_ms']:7.1f} {r['ratio']:5.2f} "
            f"{_f((r.get('bare') or {}).get('median_ms'), '7.1f')} {_f(r.get('bare_ratio'), '7.2f')} "
            f"{_f(r['scanned_fraction'], '7.3f')} "
            f"{recall:>14} {full_recall:>14} {_f(r.get('hidden'), '>6')} {placed:>6}"
        )
    return lines




REPLAY_HEADER = (
    f"{'row':<6} {'dec':>3} {'frames':>6} {'bases':>5} {'bare ms':>7} {'detect ms':>9} {'serial fps':>10} "
    f"{'cpu ms':>7} {'ratio':>5} {'ahead fps':>9} {'threads':>7} {'cpu ms':>7} {'ratio':>5} {'vs detect':>9} "
    f"{'speedup':>7} {'x real':>6} {'same':>4}"
)


def _replay_lines(report: Mapping[str, Any]) -> list[str]:
    """The replay section of the table (none for a report without it)."""
    rows = report.get("replay") or []
    if not rows:
        return []
    s = report["settings"]
    lines = [
        "",
        "Replay of a recording (tablesight replay: read, detect, map, track, rule, write events), serial and with "
        "the read-ahead,",
        f"vs a bare read + decode + pupil-apriltags detect of the same frames; CPU ms a frame (all threads); "
        f"median of {s.get('replay_rounds', '?')} interleaved rounds",
        REPLAY_HEADER,
    ]
    for r in rows:
        lines.append(
            f"{r['label']:<6} {r['decimate']:>3} {r['frames']:>6} {r['bases']:>5} {r['bare_cpu_ms']:7.1f} "
            f"{r['bare_detect_ms']:9.1f} {r['serial_fps']:10.1f} {r['serial_cpu_ms']:7.1f} {r['serial_ratio']:5.2f} "
            f"{r['ahead_fps']:9.1f} {r['workers']:>7} {r['ahead_cpu_ms']:7.1f} {r['ahead_ratio']:5.2f} "
            f"{r['ahead_detect_ratio']:9.2f} {r['speedup']:7.2f} {r['realtime']:6.2f} "
            f"{'yes' if r['same_events'] else 'NO':>4}"
        )
    return lines


MOUNT_HEADER = (
    f"{'mount':<34} {'base':>5} {'tilt':>4} {'units':>7} {ERR_P50:>9} {ERR_P95:>7} {ERR_MAX:>7} {'again':>5} "
    f"{'moves':>5} {'fit':>12}"
)


def _mount_lines(report: Mapping[str, Any]) -> list[str]:
    """The mounts section of the table (none for a report without it)."""
    rows = report.get("mounts") or []
    if not rows:
        return []
    s = report["settings"]
    lines = [
        "",
        f"Mounts with a {s.get('mount_figure_in', '?')}\" figure on every base, {rows[0]['image_size'][1]}p, "
        f"camera {s.get('mount_camera_height_in', '?')}\" up; {s.get('mount_units', '?')} units a table, "
        f"{s.get('mount_tables', '?')} table(s) a row; the live pipeline (windowed detector, tags fused)",
        "units: found in a full scan of the first frame; again: frames after a hand over one unit until it is "
        "found (1: at once); moves: phantom moves",
        MOUNT_HEADER,
    ]
    for r in rows:
        units = f"{r['found']}/{r['units']}"
        again = "-" if r["found_again_worst"] is None else str(r["found_again_worst"])
        if r["hand_tables"] and not r["hand_hidden"]:
            again += "?"  # the hand did not hide the unit's tags: not a measure of finding it again
        fit = "" if r.get("fitted") is None else f"{r['fitted']} fit {_f(r['fit_error_max_in'], '.3f')}"
        lines.append(
            f"{r['label']:<34} {r['base_mm']:>3.0f}mm {r['tilt_deg']:>4.0f} {units:>7} "
            f"{_f(r['error_p50_in'], '.4f'):>9} {_f(r['error_p95_in'], '.4f'):>7} {_f(r['error_max_in'], '.4f'):>7} "
            f"{again:>5} {r['moves']:>5} {fit:>12}"
        )
    return lines


# ------------------------------------------------------------------------ dice (bench/dice.py's rows)
def pct(n: int, of: int) -> str:
    return f"{100.0 * n / of:.1f}%" if of else "-"


DICE_HEADER = (f"{'row':<36} {'photos':>6} {'dice':>5} {'read right':>15} {'wrong face':>12} {'missed':>12} "
               f"{'false':>12} {'low conf':>8} {'sure wrong':>10} {'med ms':>7} {'p95 ms':>7}")


def dice_lines(report: dict[str, Any]) -> list[str]:
    """The Dice section of the table (none for a report without it)."""
    rows = report.get("dice") or []
    if not rows:
        return []
    lines = ["", "Dice (d6) read in real photos of a dice tray (dice_tray_d6, 200 photos, 1,487 dice); false: per "
             "cent of the dice labelled; low conf: read under 0.8 (the players confirm them); sure wrong: read wrong at 0.8 or "
             "more", DICE_HEADER]
    for r in rows:
        n = r["dice"]
        ms = r.get("ms") or {}
        lines.append(
            f"{r['label']:<36} {r['photos']:>6} {n:>5} {r['right']:>6} {pct(r['right'], n):>8} "
            f"{r['wrong']:>5} {pct(r['wrong'], n):>6} {r['missed']:>5} {pct(r['missed'], n):>6} "
            f"{r['false']:>5} {pct(r['false'], n):>6} {r['low_confidence']:>8} {r.get('wrong_confident', 0):>10} "
            f"{_ms(ms.get('median_ms')):>7} {_ms(ms.get('p95_ms')):>7}" + (f"  ({r['note']})" if r["note"] else ""))
    held = next((r for r in rows if r["held_out"]), None)
    if held:
        lines += ["confusion, held out (rows: face labelled 1-6; columns: face read 1-6)"]
        lines += ["  " + str(k + 1) + ": " + " ".join(f"{v:>4}" for v in row) for k, row in
                  enumerate(held["confusion"])]
    return lines


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"
