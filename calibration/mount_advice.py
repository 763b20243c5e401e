"""Which tag mounts will work where on this board, from the calibrated camera pose.

A figure stands on every base. A tag under its feet is never seen; a tag on a topper above its head is seen
from anywhere the camera sees the board; a tag on the base's rim is seen unless the figure stands between it
and the camera. The worst case is a rim tag on the side of the base away from the camera: the sight line from
the tag to the camera's optical centre rises by (camera height / horizontal distance) per inch, and passes over
the figure's axis, `rim_in` closer to the camera, at tag height + rim_in x that slope. Below the figure's top
it is hidden. So rim tags stay visible only within a horizontal distance of rim_in x camera height /
(figure - tag height) of the point under the camera. All lengths inches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.table import TableCalibration

FIGURE_IN = 1.35
"""A typical 28-32 mm figure's height above its base, inches."""
RIM_OFFSET_IN = 0.68
"""A 0.56" rim tag's centre from the centre of a 60 mm base (what `tablesight tags --mount rim --base 60` prints),
inches: no readable tag fits beside the feet on a smaller base."""
TAG_HEIGHT_IN = 0.125
"""A rim tag lies on the base's top, this high, inches."""
GRID_STEP_IN = 0.5


@dataclass(frozen=True)
class MountAdvice:
    """Where rim tags hide behind their own figure on this board (the side away from the camera)."""

    figure_in: float
    rim_in: float
    camera_height_in: float
    visible_within_in: float
    """Rim tags on every side are seen within this horizontal distance of the point under the camera."""
    hidden_fraction: float
    """Share of the board's area where a rim tag on the far side is hidden, 0-1."""
    raise_to_in: float
    """The camera height at which no rim tag on this board would hide (same place over the table)."""

    def sentences(self) -> list[str]:
        """What to tell the player: toppers always; rim tags where they work; what to change."""
        out = ["Tags on toppers above the figures will be seen everywhere on this board; a tag under a figure's "
               "feet never is."]
        if self.hidden_fraction <= 0.005:
            out.append(f"Rim tags ({self.rim_in:.2f}\" from the base centre, beside {self.figure_in:.2f}\" figures) "
                       "will be seen on every side of a base anywhere on this board.")
        else:
            out.append(f"Rim tags on the side of a base away from the camera will be hidden behind "
                       f"{self.figure_in:.2f}\" figures on {100 * self.hidden_fraction:.0f} % of this board (more than "
                       f"{self.visible_within_in:.1f}\" from the point under the camera): raise the camera to "
                       f"{self.raise_to_in:.0f}\" above the table, turn those tags toward the camera, glue a second rim "
                       "tag on the opposite side of each base (add it to its unit in the roster file), or use toppers.")
        return out


def mount_advice(cal: TableCalibration, figure_in: float = FIGURE_IN, rim_in: float = RIM_OFFSET_IN) -> MountAdvice:
    """The advice for this calibration's camera and board."""
    cam = np.asarray(cal.camera_position_in, dtype=np.float64)
    height = max(float(cam[2]) - TAG_HEIGHT_IN, 1e-6)
    rise = max(figure_in - TAG_HEIGHT_IN, 1e-6)
    within = rim_in * height / rise
    w, d = cal.board_in
    xs = np.arange(GRID_STEP_IN / 2, w, GRID_STEP_IN)
    ys = np.arange(GRID_STEP_IN / 2, d, GRID_STEP_IN)
    gx, gy = np.meshgrid(xs, ys)
    far = np.hypot(gx - cam[0], gy - cam[1])
    hidden = float(np.mean(far > within)) if far.size else 0.0
    corners = np.array([[0.0, 0.0], [w, 0.0], [w, d], [0.0, d]])
    farthest = float(np.max(np.hypot(corners[:, 0] - cam[0], corners[:, 1] - cam[1])))
    raise_to = TAG_HEIGHT_IN + farthest * rise / rim_in
    return MountAdvice(figure_in, rim_in, float(cam[2]), within, hidden, raise_to)
