"""One die found in a picture: its face up, where it lies (pixels) and how sure the reader is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Die:
    """A die read in an image.

    value: the face up (1..sides); sides: 6 or 20; centre_px: its centre (x, y), pixels, OpenCV's convention
    (pixel centres at integers); box_px: (x0, y0, x1, y1), pixels; confidence: 0..1, how sure the face is
    (the panel highlights a die under `LOW_CONFIDENCE` for the players to tap).
    """

    value: int
    sides: int
    centre_px: tuple[float, float]
    box_px: tuple[float, float, float, float]
    confidence: float

    @property
    def side_px(self) -> float:
        """Its box's larger side, pixels."""
        return max(self.box_px[2] - self.box_px[0], self.box_px[3] - self.box_px[1])

    def to_json(self) -> dict[str, Any]:
        """As `tablesight dice --json` prints it."""
        return {"value": self.value, "sides": self.sides, "centre_px": [round(c, 1) for c in self.centre_px],
                "box_px": [round(c, 1) for c in self.box_px], "confidence": round(self.confidence, 3)}


LOW_CONFIDENCE = 0.8
"""Below this a die's face is shown for the players to confirm with one tap."""
