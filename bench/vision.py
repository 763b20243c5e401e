"""Vision rows: detection + mapping of each rendered frame against a bare pupil-apriltags detector on the
same grey frame, and accuracy against the renderer's ground truth."""


from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.report import (
    Timing,
    VisionRow,
)
from bench.scenes import (
    BOARD,
    SMALLEST_TAG_HEIGHT_IN,
    SMALLEST_TAG_IN,
    BenchFrame,
    roster_truth,
)
from calibration.camera import CameraModel
from calibration.errors import CalibrationError
from calibration.layout import default_layout
from calibration.table import TableCalibration, calibrate_table, collect_anchors
from vision.positions import measure_bases, smallest_tag_px
from vision.tags import FAMILY, decimation_for, detect_tags, release_detector


class BareDetector:
    """A plain pupil-apriltags Detector(families="tag36h11", nthreads=1, quad_decimate=d), released safely.

    pupil-apriltags' own destructor frees the tag family before the detector and can crash the process
    (see vision/tags.py); `release` destroys the detector first and disarms that destructor.
    """

    def __init__(self, decimate: int) -> None:
        from pupil_apriltags import Detector

        self._det: Any = Detector(families=FAMILY, nthreads=1, quad_decimate=float(decimate))

    def detect(self, gray: np.ndarray) -> list[Any]:
        return list(self._det.detect(gray))

    def release(self) -> None:
        det, self._det = self._det, None
        release_detector(det)


# ------------------------------------------------------------------------------------------- vision rows


TOPPER_SEEN_FRACTION = 0.99
"""A topper's tag counts as seen whole from this visible fraction: the renderer draws the pin's top through
the middle of its card from overhead (~0.1-0.5 % of the square; bench/mounts.py's SEEN_FRACTION), so the
truth's `whole` is False for many toppers that nothing else hides (13 of 36 in a 720p bench frame)."""


def fully_visible(truth: Any, w: int, h: int) -> bool:
    """A base tag the detector must find: the camera sees it whole (the render's `TagTruth.whole`: nothing in
    front of the black square or its white border; a topper's: `TOPPER_SEEN_FRACTION` of it), its white
    border inside the frame."""
    if truth.anchor:
        return False
    if truth.mount == "topper":
        if truth.visible_fraction < TOPPER_SEEN_FRACTION:
            return False
    elif not (truth.whole and truth.visible_fraction >= 0.999):
        return False
    outer = truth.center_px + (truth.corners_px - truth.center_px) * 1.25
    return bool(outer.min() >= 1 and outer[:, 0].max() <= w - 2 and outer[:, 1].max() <= h - 2)


def bench_calibration(label: str, first: BenchFrame, camera: CameraModel | None) -> TableCalibration:
    """The table calibrated on the detected anchors of `first` (with `camera`'s intrinsics, or none)."""
    layout = default_layout(*BOARD)
    anchors = collect_anchors(((t.id, t.corners_px) for t in detect_tags(first.gray)), layout)
    try:
        return calibrate_table(anchors, layout, first.rendered.camera.image_size, camera)
    except CalibrationError as err:  # our own rendered frame: a fault of ours, not the user's
        raise RuntimeError(f"The bench could not calibrate its own {label} frame: {err}") from err


def vision_row(label: str, frames: Sequence[BenchFrame], camera: CameraModel | None) -> VisionRow:
    """Time and score detection + mapping over `frames` (calibrated on the first one)."""
    first = frames[0]
    w, h = first.rendered.camera.image_size
    cal = bench_calibration(label, first, camera)
    small = smallest_tag_px(cal, SMALLEST_TAG_IN, SMALLEST_TAG_HEIGHT_IN)
    decimate = decimation_for(small)
    rosters = [roster_truth(f.rendered.tags, f.rendered.bases) for f in frames]  # each tag's true height and offset

    bare = BareDetector(decimate)
    try:
        detect_tags(first.gray, decimate=decimate)  # warm up both
        bare.detect(first.gray)
        our_s, map_s, bare_s, results = [], [], [], []
        for i, f in enumerate(frames):
            t0 = time.perf_counter()
            tags = detect_tags(f.gray, decimate=decimate)
            t1 = time.perf_counter()
            fixes = measure_bases(tags, cal, rosters[i][0], rosters[i][1])
            t2 = time.perf_counter()
            bare.detect(f.gray)
            t3 = time.perf_counter()
            our_s.append(t2 - t0)
            map_s.append(t2 - t1)
            bare_s.append(t3 - t2)
            results.append(fixes)
    finally:
        bare.release()

    found = eligible = hidden = false_ids = 0
    errors: list[float] = []
    for f, fixes in zip(frames, results):
        truth = f.rendered.tags
        seen = {fx.tag for fx in fixes}
        for tid, t in truth.items():
            if t.anchor:
                continue
            if fully_visible(t, w, h):
                eligible += 1
                found += tid in seen
            else:
                hidden += 1
        for fx in fixes:
            unit = truth[fx.tag].unit if fx.tag in truth else None
            if unit is None or unit not in f.rendered.bases:
                false_ids += 1
                continue
            centre = f.rendered.bases[unit].center_in  # the base's true centre, from the render
            errors.append(math.hypot(fx.x - centre[0], fx.y - centre[1]))
    e = np.asarray(errors) if errors else np.array([math.nan])
    ours_t, bare_t = Timing.of(our_s), Timing.of(bare_s)
    return VisionRow(
        label=label,
        image_size=(w, h),
        intrinsics=camera is not None,
        focal_source=cal.focal_source,
        residual_px=cal.residual_px,
        decimate=decimate,
        smallest_tag_px=small,
        ours=ours_t,
        mapping=Timing.of(map_s),
        bare=bare_t,
        ratio=ours_t.median_ms / bare_t.median_ms,
        fps=1000.0 / ours_t.median_ms,
        found=found,
        eligible=eligible,
        recall=found / eligible if eligible else math.nan,
        hidden=hidden,
        false_ids=false_ids,
        bases_measured=len(errors),
        error_p50_in=float(np.median(e)),
        error_p95_in=float(np.percentile(e, 95)),
        error_max_in=float(np.max(e)),
    )


# ----------------------------------------------------------------------------------------- live detection


