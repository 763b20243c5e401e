"""session.frame_message: the pixel shapes of a frame, projected through a real calibration (lens included), and
the encoder's memo of the frames before giving exactly what projecting afresh gives."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from calibration.table import load_calibration
from session.frame_message import CIRCLE_POINTS, ShapeMemo, image_shapes

ROOT = Path(__file__).resolve().parents[1]
CAL = load_calibration(ROOT / "sample_frames" / "magni_placement" / "calibration.json")


def _unit(tag: int, x: float, y: float, z: float = 0.125) -> dict[str, Any]:
    return {"tag": tag, "x": x, "y": y, "z": z, "radius_in": 0.63, "base_height_in": 0.125, "owner": "red",
            "colour": "#e4572e", "name": f"Red {tag}"}


def _overlays(x: float, y: float) -> list[dict[str, Any]]:
    return [
        {"shape": "ring", "points": [[x, y]], "style": "engagement", "radius": 1.63, "inner": 0.63, "label": '1"',
         "unit": 1, "owner": "red"},
        {"shape": "segment", "points": [[x, y], [x + 7.5, y + 2.0]], "style": "move-trail", "label": '7.76"',
         "unit": 1, "owner": "red"},
        {"shape": "polygon", "points": [[10, 10], [14, 10], [14, 12], [10, 12]], "style": "terrain-blocking",
         "label": "wall", "unit": None, "owner": None},
    ]


def _shapes(units: list[dict[str, Any]], overlays: list[dict[str, Any]], memo: ShapeMemo | None,
            cal: Any = CAL) -> list[dict[str, Any]]:
    if memo is not None:
        memo.begin(cal)
    verdicts = [{"outcome": "illegal", "unit": 2, "rule": "r"}]
    return image_shapes(cal.table_to_image, [], units, overlays, verdicts, (), memo)


def test_base_outlines_are_the_calibrations_projection_of_the_base_circle() -> None:
    shapes = _shapes([_unit(1, 12.0, 9.0)], [], None)
    base = next(s for s in shapes if s["s"] == "base")
    assert base["k"] == "poly" and base["c"] and len(base["p"]) == CIRCLE_POINTS
    a = np.linspace(0.0, 2.0 * np.pi, CIRCLE_POINTS, endpoint=False)
    rim = np.column_stack([12.0 + 0.63 * np.cos(a), 9.0 + 0.63 * np.sin(a), np.full(CIRCLE_POINTS, 0.125)])
    truth = CAL.table_to_image(rim)
    assert np.abs(np.asarray(base["p"]) - truth).max() <= 0.05 + 1e-9  # rounded to 0.1 px
    centre = CAL.table_to_image(np.array([[12.0, 9.0, 0.125]]))[0]
    assert np.hypot(*(np.asarray(base["a"]) - centre)) <= 0.08


def test_the_memo_gives_what_projecting_afresh_gives_frame_after_frame() -> None:
    memo = ShapeMemo()
    frames = [(12.0, 9.0), (12.0, 9.0), (12.4, 9.1), (12.4, 9.1), (3.0, 20.0)]  # still, moved, still, far away
    for x, y in frames:
        units = [_unit(1, x, y), _unit(2, 20.0, 15.0), _unit(3, 25.0, 4.0, z=2.125)]
        fresh = _shapes(units, _overlays(x, y), None)
        remembered = _shapes(units, _overlays(x, y), memo)
        assert json.dumps(remembered) == json.dumps(fresh)
    # another calibration (the camera knocked and calibrated again): nothing of the old one's is given back
    moved = dataclasses.replace(CAL, tvec=np.asarray(CAL.tvec, np.float64) + np.array([[0.5], [0.0], [0.0]]).reshape(
        np.asarray(CAL.tvec).shape))
    units = [_unit(1, 3.0, 20.0), _unit(2, 20.0, 15.0), _unit(3, 25.0, 4.0, z=2.125)]
    fresh = _shapes(units, _overlays(3.0, 20.0), None, moved)
    remembered = _shapes(units, _overlays(3.0, 20.0), memo, moved)
    assert json.dumps(remembered) == json.dumps(fresh)
    assert json.dumps(fresh) != json.dumps(_shapes(units, _overlays(3.0, 20.0), None))
