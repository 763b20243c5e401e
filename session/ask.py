"""The answer to a click on a target: range (edge to edge, with ±), line of sight, and what the game says.

Range and sight come from `rules.geometry` on the newest measured positions and the table's terrain;
the to-hit number and any other ruling come from the game, through the pipeline's `ask(unit, target)`.
"""

from __future__ import annotations

from typing import Any

from calibration.errors import InputError
from rules.engine import Placement
from rules.geometry import centre_distance, edge_distance, line_of_sight
from rules.terrain import place_terrain
from session.frame_message import image_shapes
from session.live_loop import LiveLoop
from session.runtime import TableSetup


class NotOnTable(InputError):
    """A unit asked about that the camera does not see now."""


def _placement(u: dict[str, Any]) -> Placement:
    z = max(0.0, float(u["z"]) - float(u["base_height_in"]))
    return Placement(int(u["tag"]), float(u["x"]), float(u["y"]), z, float(u["pm"]), float(u["yaw_deg"]))


def ask_about(loop: LiveLoop, setup: TableSetup, unit: int, target: int) -> dict[str, Any]:
    """Range, line of sight and the game's rulings for `unit` acting on `target` (tag ids), as JSON."""
    units = dict(loop.latest_positions)
    for tag in (unit, target):
        if tag not in units:
            raise NotOnTable(f"Unit {tag} is not on the table in the latest frame; put it down where the camera sees it.")
    if unit == target:
        raise InputError(f"Unit {unit} was asked about itself; click another unit as the target.")
    ua, ub = units[unit], units[target]
    a, b = _placement(ua), _placement(ub)
    ra, rb = float(ua["radius_in"]), float(ub["radius_in"])
    positions = {tag: _placement(u) for tag, u in units.items()}
    with setup.lock:
        terrain = place_terrain(setup.terrain, positions)
    edge = edge_distance(a, ra, b, rb)
    centre = centre_distance(a, b)
    sight = line_of_sight(a, ra, b, rb, terrain)
    overlays: list[dict[str, Any]] = [
        {
            "shape": "segment",
            "points": [[a.x, a.y], [b.x, b.y]],
            "style": f"los-{sight.verdict}",
            "radius": 0.0,
            "inner": 0.0,
            "label": f"{edge.text()} {sight.verdict}",
            "unit": unit,
            "owner": None,
        }
    ]
    for piece in terrain:
        if piece.name in sight.blockers:
            overlays.append(
                {
                    "shape": "polygon",
                    "points": [list(p) for p in piece.polygon],
                    "style": "terrain-blocking",
                    "radius": 0.0,
                    "inner": 0.0,
                    "label": piece.name,
                    "unit": None,
                    "owner": None,
                }
            )
    answer: dict[str, Any] = {
        "unit": unit,
        "target": target,
        "range_in": round(edge.value, 3),
        "pm_in": round(edge.pm, 3),
        "centre_in": round(centre.value, 3),
        "los": sight.verdict,
        "blockers": list(sight.blockers),
        "fraction_clear": round(sight.fraction_clear, 3),
        "game": setup.game,
        "verdicts": [],
        "to_hit": None,
        "overlays": overlays,
    }
    pipeline = loop.pipeline
    if pipeline is not None:
        ruling = pipeline.ask(unit, target)
        answer["verdicts"] = list(ruling.get("verdicts", []))
        answer["to_hit"] = ruling.get("to_hit")
        answer["overlays"] += list(ruling.get("overlays", []))
        for key, value in ruling.items():
            answer.setdefault(key, value)
    result = loop.latest_result
    cal = result.calibration if result is not None else None
    answer["image_shapes"] = image_shapes(cal.table_to_image, [], [], answer["overlays"], []) if cal is not None else []
    return answer
