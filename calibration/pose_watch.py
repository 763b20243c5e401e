"""A knocked camera: notice it from the anchors in view and solve the pose again from them.

Every frame already shows the anchors. Their detected centres are compared with where the calibration
projects them; past ANCHOR_SHIFT_PX (RMS) with every anchor in view, the pose is solved again (same camera,
same layout) and the frame is measured with the new one, so a bumped tripod does not turn into moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from calibration.errors import CalibrationError
from calibration.table import TableCalibration, calibrate_table, collect_anchors

ANCHOR_SHIFT_PX = 1.5
"""RMS distance (px) between the anchors' detected centres and where the calibration projects them beyond
which the camera has moved: detector noise is ~0.05 px, a knock of a third of a degree ~5-10 px."""

REFINE_FRAMES = 10
"""Frames after a knock in which the pose is solved again and kept when its residual is clearly lower."""


class PoseWatch:
    """Notices a knocked camera: the anchors' detected centres against the calibration's projection of them;
    past ANCHOR_SHIFT_PX (RMS) with every anchor in view, the pose is solved again from them."""

    def __init__(self, calibration: TableCalibration) -> None:
        self.calibration = calibration
        layout = calibration.layout
        self._ids = tuple(layout.ids)
        self._refine = 0
        self._centres = np.array([[*layout.anchors[i].centre, layout.anchors[i].z_in] for i in self._ids], np.float64)

    def shift_px(self, tags: Any) -> float | None:
        seen = {t.id: t.center_px for t in tags if t.id in self._ids}
        if len(seen) < 2:
            return None
        idx = [k for k, i in enumerate(self._ids) if i in seen]
        predicted = self.calibration.table_to_image(self._centres[idx])
        found = np.array([seen[self._ids[k]] for k in idx])
        return float(np.sqrt(np.mean(np.sum((predicted - found) ** 2, axis=1))))

    def _solve(self, tags: Any, size: tuple[int, int]) -> TableCalibration | None:
        anchors = collect_anchors(((t.id, t.corners_px) for t in tags), self.calibration.layout)
        if len(anchors) < len(self._ids):
            return None
        try:
            return calibrate_table(anchors, self.calibration.layout, size, self.calibration.camera)
        except CalibrationError:
            return None

    def check(self, tags: Any, size: tuple[int, int]) -> tuple[TableCalibration, float | None] | None:
        """A new calibration if the camera moved (with the anchor shift that showed it), or, in the
        REFINE_FRAMES after that, a better one (shift None: a jolted camera's first frames are blurred)."""
        shift = self.shift_px(tags)
        if shift is None:
            return None
        if shift <= ANCHOR_SHIFT_PX:
            if self._refine <= 0:
                return None
            self._refine -= 1
            cal = self._solve(tags, size)
            if cal is None or cal.residual_px >= 0.8 * self.calibration.residual_px:
                return None
            self.calibration = cal
            return cal, None
        cal = self._solve(tags, size)
        if cal is None:
            return None
        self.calibration = cal
        self._refine = REFINE_FRAMES
        return cal, shift
