"""Stand-in for webui/pipeline.py until it lands: real detection and real base positions, a tiny move rule.

Only the game part is faked: each unit gets its 1" engagement ring, and a base seen more than 0.5" from
where it stood is one "move" event. Everything else (tags, calibration, positions, ±) is the real code.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rules.engine import Overlay, Shape
from vision.positions import measure_bases
from vision.tags import detect_tags, gray_frame


@dataclass(frozen=True)
class FakeResult:
    frame_index: int
    t: float
    image: np.ndarray
    tags: tuple[Any, ...]
    fixes: tuple[Any, ...]
    events: tuple[dict[str, Any], ...]
    verdicts: tuple[dict[str, Any], ...]
    overlays: tuple[dict[str, Any], ...]
    board: dict[str, float]
    calibration: Any
    timings_ms: dict[str, float] = field(default_factory=dict)

    def project_to_image(self, points_in: np.ndarray) -> np.ndarray:
        return np.asarray(self.calibration.table_to_image(points_in))


class FakePipeline:
    def __init__(self, calibration: Any, roster: Any, terrain: Any, game: Any) -> None:
        self.cal, self.roster = calibration, roster
        self.where: dict[int, tuple[float, float]] = {}

    def overlays_for(self, unit: int) -> list[dict[str, Any]]:
        if unit not in self.where:
            return []
        x, y = self.where[unit]
        return [Overlay(Shape.RING, ((x, y),), "range-band", radius=12.0, inner=6.0, label='6-12"', unit=unit).to_json()]

    def process(self, frame: Any) -> FakeResult:
        t0 = time.perf_counter()
        tags = detect_tags(gray_frame(frame.image))
        fixes = tuple(measure_bases(tags, self.cal))
        events = []
        for f in fixes:
            old = self.where.get(f.tag)
            if old is not None and math.dist(old, (f.x, f.y)) > 0.5:
                events.append(
                    {"type": "move", "frame": frame.index, "tag": f.tag, "from_in": list(old), "to_in": [f.x, f.y],
                     "length_in": math.dist(old, (f.x, f.y)), "pm_in": f.pm}
                )
            self.where[f.tag] = (f.x, f.y)
        r = 32 / 25.4 / 2
        overlays = tuple(
            Overlay(Shape.RING, ((f.x, f.y),), "engagement", radius=r + 1.0, inner=r, unit=f.tag).to_json() for f in fixes
        )
        return FakeResult(
            frame.index, frame.t, frame.image, tags, fixes, tuple(events), (), overlays,
            {"w": self.cal.board_in[0], "d": self.cal.board_in[1]}, self.cal,
            {"total": (time.perf_counter() - t0) * 1000},
        )
