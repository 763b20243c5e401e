"""Mount rows: a figure on every base, and each way of mounting its tag, measured from cameras tilted 0, 15
and 30 degrees at 1080p, as the live server measures it.

A miniature stands on every real base, so where the tag goes decides whether the camera sees it at all
(DESIGN.md, "Bases"). For each mount a seeded table of MOUNT_UNITS units is rendered (`vision.synth.render`
with `vision.synth.figures`): 1.35" figures in skirmish clusters, some with a spear reaching past the base
edge, on a 30" x 22" board with the default anchors; 1080p, camera 36" up framing the board, tilted 0, 15
and 30 degrees, true intrinsics; light gradient, slight blur, sensor noise, webcam JPEG. The mounts:

- `flat`: the largest tag a 32 mm base takes (`tag_side_for_base`), flat on the base under the figure's feet
  (what a player would do without being told);
- `topper`: a 0.7" tag on a card 1.85" up on a pin above the figure's head, 32 mm bases;
- `lean`: the same with every pin leaning 2 degrees (each its own way), measured with the roster's offset
  [0, 0] ...
- `lean fitted`: ... and after mount calibration: each base turned on the spot (MOUNT_TURN_FRAMES frames,
  MOUNT_TURN_STEP_DEG a frame) and its offset fitted by `vision.mount_fit.fit_mount`, written into the roster
  with its ± (a fit that fails keeps [0, 0]);
- `rim`: a 0.56" tag on the rim of a 60 mm base, 0.68" from its centre toward the tag's +y;
- `two rims`: that tag and a second one 0.68" the other way (the roster's `more_tags`), fused.

Each table is measured by `session.pipeline.Pipeline` built as the live server builds it (the windowed
detector sweeping at `FINE_EVERY`, heights and offsets from the roster, several tags of a base
fused): its first frame is a full scan. `found` counts the units with a fix in that frame; the error is each
fix's distance from the render's true base centre (`Rendered.bases`), inches.

Then the same frame is fed MOUNT_SETTLE_FRAMES times more (30 fps) so the tracker settles, a hand passes over
one unit for MOUNT_HAND_FRAMES frames (between the camera and the unit's tags, 3" up, chosen among units
whose tags the camera sees and reads so that its arm, reaching in from beyond the board's edge, misses the anchors), and the
frames after it are rendered until the pipeline has the unit again: `again` = 1 when it is back in the first
frame without the hand; None when not within a whole sweep. `moves`: the moves the tracker reported over
the whole sequence (nothing moved: each one is a phantom).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import cv2
import numpy as np

from bench.report import MountRow
from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, collect_anchors
from rules.engine import game_names
from rules.roster import parse_roster, tag_side_for_base
from session.mount_calibration import samples_by_tag
from session.pipeline import Pipeline
from vision.mount_fit import MountFit, MountFitError, fit_mount
from vision.positions import smallest_tag_px
from vision.synth.figures import Figure, RimTag, Topper
from vision.synth.render import (
    BasePlacement,
    CameraPose,
    Hand,
    Rendered,
    Scene,
    camera_framing_board,
    render_scene,
)
from vision.tags import decimation_for, detect_tags, gray_frame
from vision.tracker import Move
from vision.windowed import FINE_EVERY

MOUNT_SEED = 20261201
MOUNT_BOARD = (30.0, 22.0)
MOUNT_SIZE = (1920, 1080)
MOUNT_LABEL = "1080p"
MOUNT_TILTS = (0.0, 15.0, 30.0)
MOUNT_CAMERA_HEIGHT_IN = 36.0
MOUNT_UNITS = 10
MOUNT_SEEDS = 2
"""Tables (layouts) a mount and tilt; 1 with --quick."""
QUICK_MOUNT_SEEDS = 1
FIGURE_HEIGHT_IN = 1.35
SPEAR_SHARE = 0.4
"""About this share of the figures hold a spear reaching 0.2-0.5" past their base's edge."""
BASE_TOP_IN = 0.125
TOPPER_TAG_IN = 0.7
TOPPER_HEIGHT_IN = 1.85
LEAN_DEG = 2.0
RIM_BASE_MM = 60.0
RIM_TAG_IN = 0.56
RIM_OFFSET_IN = 0.68
SMALL_BASE_MM = 32.0
EXTRA_TAG_FROM = 100
"""The second rim tag of unit u is u + EXTRA_TAG_FROM."""
MOUNT_TURN_FRAMES = 8
MOUNT_TURN_STEP_DEG = 12.0
"""Mount calibration: each base turned on the spot this far a frame (84 degrees over the turn)."""
MOUNT_FPS = 30.0
MOUNT_SETTLE_FRAMES = 10
MOUNT_HAND_FRAMES = 3
MOUNT_HAND_Z_IN = 3.0
MOUNT_HAND_RADIUS_IN = 1.6
MOUNT_HAND_TRIES = 3
SEEN_FRACTION = 0.99
"""The hand's unit has every tag this much visible in the first frame (not `TagTruth.whole`: a topper's pin
shows through the middle of its card from overhead, ~0.3 % of the square, in today's renderer)."""
"""Units tried for the hand when its arm hides an anchor."""
MOUNT_AGAIN_MAX = FINE_EVERY + 1
"""Frames after the hand rendered at most while waiting for the unit to be found again."""
SMALLEST_TAG_IN = 0.5
"""The decimation of the mount fit's detection is picked from this (as session/pipeline.py does)."""
PALETTE = ((45.0, 45.0, 160.0), (160.0, 70.0, 40.0), (40.0, 120.0, 60.0), (60.0, 140.0, 170.0))


@dataclass(frozen=True)
class MountKind:
    """One way of mounting a unit's tag, as rendered and as the roster gives it."""

    key: str
    label: str
    base_mm: float
    tag_in: float
    height_in: float
    """The tag face's height above the base's underside (the roster's base_height_in)."""
    table: str
    """Which rendered table it is measured on (two rows may share one: the leaning pins)."""
    fitted: bool = False


FLAT_TAG_IN = tag_side_for_base(SMALL_BASE_MM)
MOUNT_KINDS: tuple[MountKind, ...] = (
    MountKind("flat", f'flat {FLAT_TAG_IN:g}" under the figure', SMALL_BASE_MM, FLAT_TAG_IN, BASE_TOP_IN, "flat"),
    MountKind("topper", f'topper {TOPPER_TAG_IN:g}" at {TOPPER_HEIGHT_IN:g}"', SMALL_BASE_MM, TOPPER_TAG_IN,
              TOPPER_HEIGHT_IN, "topper"),
    MountKind("lean", f"topper, pin leans {LEAN_DEG:g} deg", SMALL_BASE_MM, TOPPER_TAG_IN, TOPPER_HEIGHT_IN,
              "lean"),
    MountKind("lean fitted", "  after mount calibration", SMALL_BASE_MM, TOPPER_TAG_IN, TOPPER_HEIGHT_IN,
              "lean", fitted=True),
    MountKind("rim", f'rim {RIM_TAG_IN:g}" at {RIM_OFFSET_IN:g}"', RIM_BASE_MM, RIM_TAG_IN, BASE_TOP_IN, "rim"),
    MountKind("two rims", f'two rims {RIM_TAG_IN:g}", fused', RIM_BASE_MM, RIM_TAG_IN, BASE_TOP_IN, "two rims"),
)


class Unit(NamedTuple):
    """A unit of a mount table: where its base stands and the figure on it (the mount comes from the kind)."""

    x: float
    y: float
    yaw_deg: float
    figure: Figure
    lean_dir_deg: float


@dataclass(frozen=True, eq=False)
class MountFrame:
    """What `Pipeline.process` reads a frame as."""

    index: int
    t: float
    image: np.ndarray


# ------------------------------------------------------------------------------------------------ tables


def layout(seed: int, base_mm: float, units: int = MOUNT_UNITS) -> list[Unit]:
    """`units` bases in skirmish clusters of three (neighbours 0.35-1.2" apart edge to edge), kept 3" inside
    the board's edges (clear of the anchors from every tilt), each with a figure."""
    rng = np.random.default_rng([MOUNT_SEED, seed, int(base_mm)])
    r = base_mm / 25.4 / 2.0
    w, d = MOUNT_BOARD
    out: list[Unit] = []
    for _ in range(10_000):
        if len(out) >= units:
            break
        if len(out) % 3 == 0:
            x, y = float(rng.uniform(5.0, w - 5.0)), float(rng.uniform(4.5, d - 4.5))
        else:
            a = float(rng.uniform(0.0, 2.0 * math.pi))
            gap = float(rng.uniform(2.0 * r + 0.35, 2.0 * r + 1.2))
            x, y = out[-1].x + gap * math.cos(a), out[-1].y + gap * math.sin(a)
        if not (3.0 + r < x < w - 3.0 - r and 3.0 + r < y < d - 3.0 - r):
            continue
        if any(math.hypot(x - u.x, y - u.y) < 2.0 * r + 0.3 for u in out):
            continue
        reach = float(rng.uniform(0.2, 0.5)) if rng.random() < SPEAR_SHARE else None
        fig = Figure(height_in=FIGURE_HEIGHT_IN, colour=PALETTE[len(out) % len(PALETTE)], reach_in=reach,
                     reach_deg=float(rng.uniform(30.0, 150.0)), facing_deg=float(rng.uniform(60.0, 120.0)))
        out.append(Unit(x, y, float(rng.uniform(-180.0, 180.0)), fig, float(rng.uniform(0.0, 360.0))))
    if len(out) < units:
        raise RuntimeError(f"Only {len(out)} of {units} units fit the mount bench's board; its layout is at fault.")
    return out


def placements(table: str, units: Sequence[Unit], turn_deg: float = 0.0) -> tuple[BasePlacement, ...]:
    """The bases of `table` ("flat", "topper", "lean", "rim", "two rims"), each turned `turn_deg` more."""
    out = []
    for i, u in enumerate(units):
        tag, yaw = 10 + i, u.yaw_deg + turn_deg
        if table == "flat":
            out.append(BasePlacement(tag, u.x, u.y, yaw_deg=yaw, tag_in=FLAT_TAG_IN, base_mm=SMALL_BASE_MM,
                                     figure=u.figure))
        elif table in ("topper", "lean"):
            lean = LEAN_DEG if table == "lean" else 0.0
            out.append(BasePlacement(tag, u.x, u.y, yaw_deg=yaw, tag_in=TOPPER_TAG_IN, base_mm=SMALL_BASE_MM,
                                     figure=u.figure, topper=Topper(TOPPER_HEIGHT_IN, lean, u.lean_dir_deg)))
        else:
            more = (RimTag(tag + EXTRA_TAG_FROM, (0.0, -RIM_OFFSET_IN), RIM_TAG_IN),) if table == "two rims" else ()
            out.append(BasePlacement(tag, u.x, u.y, yaw_deg=yaw, tag_in=RIM_TAG_IN, base_mm=RIM_BASE_MM,
                                     tag_offset_in=(0.0, RIM_OFFSET_IN), figure=u.figure, more_tags=more))
    return tuple(out)


def true_lean_offset(u: Unit) -> tuple[float, float]:
    """Where a leaning pin puts its card's centre from the base centre, in the tag's frame, inches."""
    shift = (TOPPER_HEIGHT_IN - BASE_TOP_IN) * math.tan(math.radians(LEAN_DEG))
    a = math.radians(u.lean_dir_deg)
    return (shift * math.cos(a), shift * math.sin(a))


def roster_for(kind: MountKind, units: Sequence[Unit], fits: dict[int, MountFit] | None = None) -> dict[str, Any]:
    """The roster a player would write for `kind` (with the fitted offsets and ± for a calibrated one)."""
    out = []
    for i in range(len(units)):
        tag = 10 + i
        entry: dict[str, Any] = {"tag": tag, "profile": "warrior", "owner": ("red", "blue")[i % 2],
                                 "base_mm": kind.base_mm, "base_height_in": kind.height_in, "tag_in": kind.tag_in,
                                 "tag_offset_in": [0.0, RIM_OFFSET_IN] if kind.table in ("rim", "two rims") else
                                 [0.0, 0.0]}
        fit = (fits or {}).get(tag)
        if fit is not None:
            entry["tag_offset_in"] = [round(fit.offset_in[0], 3), round(fit.offset_in[1], 3)]
            entry["mount_pm_in"] = fit.pm_in
        if kind.table == "two rims":
            entry["more_tags"] = [{"tag": tag + EXTRA_TAG_FROM, "base_height_in": BASE_TOP_IN,
                                   "tag_offset_in": [0.0, -RIM_OFFSET_IN], "tag_in": RIM_TAG_IN}]
        out.append(entry)
    return {"game": game_names()[0], "units": out}  # measured without a game: the name is only the roster's label


def _scene(pose: CameraPose, bases: tuple[BasePlacement, ...], hands: tuple[Hand, ...] = ()) -> Scene:
    return Scene.at(pose, MOUNT_BOARD, bases=bases, hands=hands, anchor_turns={0: 1, 2: 3}, light_gradient=0.15,
                    blur_px=0.5, noise_sigma=1.5, jpeg_quality=90)


def _calibrated(rendered: Rendered, label: str) -> TableCalibration:
    lay = default_layout(*MOUNT_BOARD)
    anchors = collect_anchors(((t.id, t.corners_px) for t in detect_tags(gray_frame(rendered.image))), lay)
    try:
        return calibrate_table(anchors, lay, MOUNT_SIZE, rendered.camera)
    except Exception as err:  # our own rendered frame: a fault of ours, not the user's
        raise RuntimeError(f"The mount bench could not calibrate its own {label} frame: {err}") from err


def camera_centre(pose: CameraPose) -> np.ndarray:
    """The camera's centre in table inches."""
    R, _ = cv2.Rodrigues(np.asarray(pose.rvec, np.float64).reshape(3, 1))
    return np.asarray(-R.T @ np.asarray(pose.tvec, np.float64).reshape(3))


def hand_over(pose: CameraPose, x: float, y: float, z: float) -> Hand:
    """A hand MOUNT_HAND_Z_IN up between the camera and the point (x, y, z): over it as the camera sees it."""
    c = camera_centre(pose)
    k = (MOUNT_HAND_Z_IN - z) / (c[2] - z)
    return Hand(x + (c[0] - x) * k, y + (c[1] - y) * k, MOUNT_HAND_Z_IN, MOUNT_HAND_RADIUS_IN)


@dataclass(eq=False)
class MountTable:
    """One rendered table of a mount (a layout at a tilt): its first frame, the hand's frames, the frames after
    the hand (rendered as a pipeline needs them) and, for leaning pins, the mount calibration."""

    table: str
    tilt_deg: float
    seed: int
    pose: CameraPose
    units: list[Unit]
    first: Rendered
    hand_unit: int | None = None
    hand_frames: list[np.ndarray] = field(default_factory=list)
    hidden: bool = False
    """Every tag of the hand's unit was hidden (under half of it visible) in every hand frame."""
    anchors_clear: bool = True
    """No anchor was hidden (a hand over an anchor makes the pipeline measure nothing that frame)."""
    after: list[np.ndarray] = field(default_factory=list)

    def rng(self, k: int) -> np.random.Generator:
        return np.random.default_rng([MOUNT_SEED, 1 + MOUNT_KEYS.index(self.table), int(self.tilt_deg), self.seed, k])

    def bases(self) -> tuple[BasePlacement, ...]:
        return placements(self.table, self.units)

    def render_hand(self) -> None:
        """Pick the hand's unit and render its frames: a unit whose tags are seen (SEEN_FRACTION) and
        its own read in the first frame, the one whose hand's arm
        (reaching out from the board's centre through the hand) points most nearly along y, between the anchors;
        the next one if the arm still hid an anchor (at most MOUNT_HAND_TRIES)."""
        read = {t.id for t in detect_tags(gray_frame(self.first.image), decimate=1)}
        whole = [b for b in self.bases() if b.tag in read
                 and all(self.first.tags[t].visible_fraction >= SEEN_FRACTION for t in self.first.bases[b.tag].tags)]
        cx, cy = MOUNT_BOARD[0] / 2.0, MOUNT_BOARD[1] / 2.0
        hands: list[tuple[float, int, Hand]] = []
        for b in whole:
            z = max(self.first.tags[t].center_in[2] for t in self.first.bases[b.tag].tags)
            hand = hand_over(self.pose, b.x, b.y, z)
            hands.append((math.atan2(abs(hand.x - cx), abs(hand.y - cy)), b.tag, hand))
        for _, tag, hand in sorted(hands, key=lambda h: (h[0], h[1]))[:MOUNT_HAND_TRIES]:
            self.hand_unit, self.hand_frames = tag, []
            self.hidden, self.anchors_clear = True, True
            for k in range(MOUNT_HAND_FRAMES):
                r = render_scene(_scene(self.pose, self.bases(), (hand,)), self.rng(100 + k))
                self.hand_frames.append(r.image)
                self.hidden &= all(r.tags[t].visible_fraction < 0.5 for t in r.bases[tag].tags)
                self.anchors_clear &= all(t.visible_fraction > 0.999 for t in r.tags.values() if t.anchor)
            if self.anchors_clear:
                return

    def after_hand(self, k: int) -> np.ndarray:
        """Frame k (0: the first) after the hand left, rendered once and shared by the rows on this table."""
        while len(self.after) <= k:
            r = render_scene(_scene(self.pose, self.bases()), self.rng(200 + len(self.after)))
            self.after.append(r.image)
        return self.after[k]

    def fit_mounts(self, cal: TableCalibration) -> dict[int, MountFit]:
        """Mount calibration: every base turned on the spot; each tag's offset fitted from the turn."""
        decimate = decimation_for(smallest_tag_px(cal, SMALLEST_TAG_IN, 0.0))
        frames = [(0, detect_tags(gray_frame(self.first.image), decimate=decimate))]
        for k in range(1, MOUNT_TURN_FRAMES):
            scene = _scene(self.pose, placements(self.table, self.units, k * MOUNT_TURN_STEP_DEG))
            r = render_scene(scene, self.rng(300 + k))
            frames.append((k, detect_tags(gray_frame(r.image), decimate=decimate)))
        heights = {10 + i: TOPPER_HEIGHT_IN for i in range(len(self.units))}
        fits: dict[int, MountFit] = {}
        for tag, samples in samples_by_tag(frames, cal, heights).items():
            try:
                fits[tag] = fit_mount(samples, tag)
            except MountFitError:
                continue
        return fits


MOUNT_KEYS = ("flat", "topper", "lean", "rim", "two rims")
"""The rendered tables (the leaning pins' two rows share one)."""


def _errors(fixes: Sequence[Any], truth: Rendered, units: int) -> list[float]:
    return [math.hypot(f.x - truth.bases[f.tag].center_in[0], f.y - truth.bases[f.tag].center_in[1])
            for f in fixes if f.tag in truth.bases and f.tag < 10 + units]


def measure_table(kind: MountKind, t: MountTable, cal: TableCalibration,
                  fits: dict[int, MountFit] | None) -> tuple[int, list[float], int | None, int]:
    """Run `t` through a live pipeline with `kind`'s roster: (units found in the first frame, their errors,
    frames to find the hand's unit again (None: not within MOUNT_AGAIN_MAX), moves reported)."""
    pipe = Pipeline(cal, parse_roster(roster_for(kind, t.units, fits)), fine_every=FINE_EVERY)
    first = pipe.process(MountFrame(0, 0.0, t.first.image))
    units = [f for f in first.fixes if f.tag in t.first.bases]
    moves = sum(isinstance(e, Move) for e in first.events)
    n = 1
    for _ in range(MOUNT_SETTLE_FRAMES):
        moves += sum(isinstance(e, Move) for e in pipe.process(MountFrame(n, n / MOUNT_FPS, t.first.image)).events)
        n += 1
    again: int | None = None
    if t.hand_unit is not None:
        for image in t.hand_frames:
            moves += sum(isinstance(e, Move) for e in pipe.process(MountFrame(n, n / MOUNT_FPS, image)).events)
            n += 1
        for k in range(MOUNT_AGAIN_MAX):
            res = pipe.process(MountFrame(n, n / MOUNT_FPS, t.after_hand(k)))
            n += 1
            moves += sum(isinstance(e, Move) for e in res.events)
            if any(f.tag == t.hand_unit for f in res.fixes):
                again = k + 1
                break
    return len(units), _errors(units, t.first, len(t.units)), again, moves


def mount_rows(quick: bool = False, progress: Callable[[str], None] | None = None,
               kinds: Sequence[MountKind] = MOUNT_KINDS, tilts: Sequence[float] = MOUNT_TILTS,
               seeds: int | None = None) -> list[MountRow]:
    """Every mount in `kinds` x camera tilt in `tilts`: units found, position error, frames to find a unit again
    after a hand (see the module docstring). `quick`: one table a mount and tilt."""
    say = progress or (lambda _m: None)
    n_seeds = seeds if seeds is not None else (QUICK_MOUNT_SEEDS if quick else MOUNT_SEEDS)
    tables_needed = [k for k in MOUNT_KEYS if any(kind.table == k for kind in kinds)]
    rows: list[MountRow] = []
    for tilt in tilts:
        pose = camera_framing_board(MOUNT_BOARD, MOUNT_CAMERA_HEIGHT_IN, tilt, 0.0, MOUNT_SIZE)
        cal: TableCalibration | None = None
        tables: dict[tuple[str, int], MountTable] = {}
        for seed in range(n_seeds):
            for key in tables_needed:
                say(f"mounts: rendering the {key} table, tilt {tilt:g} deg, layout {seed + 1} of {n_seeds}")
                base_mm = RIM_BASE_MM if key in ("rim", "two rims") else SMALL_BASE_MM
                units = layout(seed, base_mm)
                t = MountTable(key, tilt, seed, pose, units, render_scene(
                    _scene(pose, placements(key, units)),
                    np.random.default_rng([MOUNT_SEED, 1 + MOUNT_KEYS.index(key), int(tilt), seed, 0])))
                cal = cal or _calibrated(t.first, f"tilt {tilt:g}")
                t.render_hand()
                tables[(key, seed)] = t
        assert cal is not None
        fits: dict[int, dict[int, MountFit]] = {}
        if any(kind.fitted for kind in kinds):
            for seed in range(n_seeds):
                say(f"mounts: mount calibration (a turn of every base), tilt {tilt:g} deg, layout {seed + 1}")
                fits[seed] = tables[("lean", seed)].fit_mounts(cal)
        for kind in kinds:
            say(f"mounts: measuring {kind.key}, tilt {tilt:g} deg")
            found = units_total = moves = 0
            errors: list[float] = []
            again: list[int | None] = []
            hidden: list[bool] = []
            clear: list[bool] = []
            fitted = 0
            fit_errors: list[float] = []
            for seed in range(n_seeds):
                t = tables[(kind.table, seed)]
                seed_fits = fits.get(seed) if kind.fitted else None
                if seed_fits is not None:
                    fitted += len(seed_fits)
                    for tag, fit in seed_fits.items():
                        true = true_lean_offset(t.units[tag - 10])
                        fit_errors.append(math.dist(fit.offset_in, true))
                got, errs, back, mv = measure_table(kind, t, cal, seed_fits)
                found += got
                units_total += len(t.units)
                errors += errs
                moves += mv
                if t.hand_unit is not None:
                    again.append(back)
                    hidden.append(t.hidden)
                    clear.append(t.anchors_clear)
            e = np.asarray(errors) if errors else np.array([math.nan])
            rows.append(MountRow(
                label=kind.label,
                mount=kind.key,
                image_size=MOUNT_SIZE,
                tilt_deg=float(tilt),
                base_mm=kind.base_mm,
                tag_in=kind.tag_in,
                tag_height_in=kind.height_in,
                units=units_total,
                found=found,
                error_p50_in=float(np.median(e)),
                error_p95_in=float(np.percentile(e, 95)),
                error_max_in=float(np.max(e)),
                hand_tables=len(again),
                hand_hidden=all(hidden) if hidden else False,
                hand_anchors_clear=all(clear) if clear else True,
                found_again_after=tuple(again),
                found_again_worst=_worst(again),
                moves=moves,
                fitted=fitted if kind.fitted else None,
                fit_error_max_in=max(fit_errors) if fit_errors else None,
            ))
        del tables
    return rows


def _worst(again: Sequence[int | None]) -> int | None:
    """The most frames any table took to find its unit again; None if one never did (or no table had a hand)."""
    if not again or any(a is None for a in again):
        return None
    return max(a for a in again if a is not None)


def mount_settings(quick: bool) -> dict[str, Any]:
    """What the mount rows measured, for the report's settings."""
    return {
        "mount_units": MOUNT_UNITS,
        "mount_tables": QUICK_MOUNT_SEEDS if quick else MOUNT_SEEDS,
        "mount_tilts_deg": list(MOUNT_TILTS),
        "mount_figure_in": FIGURE_HEIGHT_IN,
        "mount_camera_height_in": MOUNT_CAMERA_HEIGHT_IN,
        "mount_hand_frames": MOUNT_HAND_FRAMES,
        "mount_settle_frames": MOUNT_SETTLE_FRAMES,
        "mount_turn": [MOUNT_TURN_FRAMES, MOUNT_TURN_STEP_DEG],
        "mount_seed": MOUNT_SEED,
    }

