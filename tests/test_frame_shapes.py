"""session.frame_message: the pixel shapes of a frame, projected through a real calibration (lens included), and
the encoder's memo of the frames before giving exactly what projecting afresh gives."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from calibration.table import load_calibration
from session.frame_message import CIRCLE_POINTS, CIRCLE_TOLERANCE_PX, ShapeMemo, circle_points, image_shapes

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


def _strays_px(poly: np.ndarray, circle: np.ndarray) -> float:
    """How far, px, the closed polyline `poly` strays from the dense closed curve `circle`: the largest distance
    from a point of the curve to the polyline."""
    a, b = poly, np.roll(poly, -1, axis=0)
    ab = b - a
    t = np.clip(np.einsum("kij,ij->ki", circle[:, None, :] - a[None], ab) / np.einsum("ij,ij->i", ab, ab), 0.0, 1.0)
    nearest = a[None] + t[..., None] * ab[None]
    return float(np.hypot(*(nearest - circle[:, None, :]).transpose(2, 0, 1)).min(axis=1).max())


def test_base_outlines_are_the_calibrations_projection_of_the_base_circle_within_tolerance() -> None:
    for x, y, r, z in ((12.0, 9.0, 0.63, 0.125), (3.0, 20.0, 0.63, 0.125), (20.0, 15.0, 2.5, 0.125),
                       (25.0, 4.0, 0.2, 2.125)):
        shapes = _shapes([{**_unit(1, x, y, z), "radius_in": r}], [], None)
        base = next(s for s in shapes if s["s"] == "base")
        pts = np.asarray(base["p"])
        assert base["k"] == "poly" and base["c"] and CIRCLE_POINTS[0] <= len(pts) <= CIRCLE_POINTS[1]
        assert len(pts) % 4 == 0
        a = np.linspace(0.0, 2.0 * np.pi, 2000, endpoint=False)
        rim = CAL.table_to_image(np.column_stack([x + r * np.cos(a), y + r * np.sin(a), np.full(len(a), z)]))
        radius_px = float(np.hypot(*(rim - CAL.table_to_image(np.array([[x, y, z]]))[0]).T).max())
        # on the true circle (rounded to 0.1 px), and near it all round: fewer points for smaller circles
        on = CAL.table_to_image(np.column_stack([x + r * np.cos(np.linspace(0, 2 * np.pi, len(pts), endpoint=False)),
                                                 y + r * np.sin(np.linspace(0, 2 * np.pi, len(pts), endpoint=False)),
                                                 np.full(len(pts), z)]))
        assert np.abs(pts - on).max() <= 0.05 + 1e-9
        assert _strays_px(pts, rim) <= CIRCLE_TOLERANCE_PX + 0.1
        assert len(pts) == circle_points(radius_px) or len(pts) == circle_points(radius_px) + 4
        centre = CAL.table_to_image(np.array([[x, y, z]]))[0]
        assert np.hypot(*(np.asarray(base["a"]) - centre)) <= 0.08
    assert circle_points(17.0) == 20 and circle_points(44.0) == 32 and circle_points(1000.0) == 64
    assert circle_points(0.0) == circle_points(float("nan")) == 12


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
