"""The JSON that the browser draws one frame from: shapes in table inches and the same shapes in image pixels.

Overlays arrive from the rules in table inches. We project them to image pixels here, on the server, with
the table calibration (`project_to_image`, lens distortion included) and send pixel polylines: a
homography could not follow a distorted lens or a unit standing 3" up on a ruin. Circles and rings become
closed polylines of 12-64 points, as many as keep them within CIRCLE_TOLERANCE_PX of the circle. The top-down
board draws the inch shapes directly.

Pixel shapes (`image_shapes`) are small dicts: k = "poly" (p: points, c: closed), "ring" (p: outer,
q: inner), "tag" (p: 4 corners, id), "label" / "badge" (a: anchor point, l: text); s = style,
u = unit, o = owner, l = label, a = where the label goes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from calibration.table import TableCalibration
from rules.roster import Roster
from session.drivable import FrameLike
from session.owner_colours import PAGE, owner_colours
from session.roll_call import RollCall

CIRCLE_TOLERANCE_PX = 0.25
"""A circle's polyline strays at most this far from the circle, image px: a base 17 px across at 1080p gets 20
points, a 3" range ring 40 (every point is ~15 bytes of every frame's message, for every page)."""
CIRCLE_POINTS = (12, 64)
"""...with at least and at most this many points (a multiple of 4: the point at a quarter turn anchors a label)."""
UNKNOWN_OWNER_COLOUR = "#9aa0a6"

Projector = Callable[[np.ndarray], np.ndarray]
"""(N, 3) table inches -> (N, 2) image pixels."""


def side_colours(roster: Roster | None) -> dict[str, str]:
    """Each side's colour on the pages (session/owner_colours.py), in the order the roster's sides first appear."""
    return dict(_page_colours(tuple(roster.owners()))) if roster is not None else {}


@functools.lru_cache(maxsize=16)
def _page_colours(sides: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Worked out once for the sides of a roster, not for every frame's message."""
    return tuple(owner_colours(sides, PAGE).items())


@functools.cache
def _unit_circle(points: int) -> np.ndarray:
    a = np.linspace(0.0, 2.0 * math.pi, points, endpoint=False)
    return np.stack([np.cos(a), np.sin(a)], axis=1)


def circle_points(radius_px: float) -> int:
    """Points (a multiple of 4, within CIRCLE_POINTS) for a circle `radius_px` image px across to stay within
    CIRCLE_TOLERANCE_PX of its polyline (the sagitta r (1 - cos(pi / n)))."""
    lo, hi = CIRCLE_POINTS
    if not math.isfinite(radius_px) or radius_px <= CIRCLE_TOLERANCE_PX:
        return lo
    n = math.pi / math.acos(1.0 - CIRCLE_TOLERANCE_PX / radius_px)
    return int(min(hi, max(lo, 4 * math.ceil(n / 4))))


def _circle(cx: float, cy: float, r: float, points: int) -> np.ndarray:
    return _unit_circle(points) * r + (cx, cy)


def _radius_px(project: Projector, cx: float, cy: float, r: float, z: float) -> float:
    """The largest radius, image px, of the circle (cx, cy, r) inches at height z: from its centre to its four
    quarter points."""
    pts = np.array([[cx, cy, z], [cx + r, cy, z], [cx - r, cy, z], [cx, cy + r, z], [cx, cy - r, z]])
    px = np.asarray(project(pts), np.float64).reshape(-1, 2)
    return float(np.hypot(*(px[1:] - px[0]).T).max())


class ShapeMemo:
    """Pixel points of inch shapes projected for the last two frames, by what they were made from (a circle's
    centre, radius and height; a polyline's points): most units stand still from frame to frame, and making and
    projecting their shapes again is most of a frame's shape work. One calibration at a time (another one
    empties it); one thread (the live encoder's)."""

    def __init__(self) -> None:
        self._calibration: object | None = None
        self._now: dict[tuple[Any, ...], list[list[float]]] = {}
        self._before: dict[tuple[Any, ...], list[list[float]]] = {}

    def begin(self, calibration: object) -> None:
        """Start a frame projected with `calibration`: what the frame before did not use is forgotten."""
        if calibration is not self._calibration:
            self._calibration, self._now, self._before = calibration, {}, {}
        else:
            self._before, self._now = self._now, {}

    def get(self, key: tuple[Any, ...]) -> list[list[float]] | None:
        got = self._now.get(key)
        if got is None:
            got = self._before.get(key)
            if got is not None:
                self._now[key] = got
        return got

    def put(self, key: tuple[Any, ...], points: list[list[float]]) -> None:
        self._now[key] = points


class _Batch:
    """Collects inch polylines, projects them all in one call, and hands back rounded pixel lists (shared with
    the memo: not to be changed)."""

    def __init__(self, memo: ShapeMemo | None = None) -> None:
        self.memo = memo
        self.out: list[list[list[float]] | None] = []
        self.todo: list[tuple[int, tuple[Any, ...] | None, np.ndarray]] = []

    def add(self, key: tuple[Any, ...] | None, make: Callable[[], np.ndarray], z: float) -> int:
        """The index of the pixel points of the inch points `make()` at height z (inches); `key` names them
        for the memo (None: not remembered)."""
        got = self.memo.get(key) if self.memo is not None and key is not None else None
        self.out.append(got)
        if got is None:
            pts = np.asarray(make(), dtype=np.float64).reshape(-1, 2)
            self.todo.append((len(self.out) - 1, key, np.column_stack([pts, np.full(len(pts), z)])))
        return len(self.out) - 1

    def project(self, project: Projector) -> list[list[list[float]]]:
        if self.todo:
            allpts = np.concatenate([c for _, _, c in self.todo], axis=0)
            flat = np.round(np.asarray(project(allpts), dtype=np.float64).reshape(-1, 2), 1).tolist()
            i = 0
            for index, key, chunk in self.todo:
                self.out[index] = got = flat[i : i + len(chunk)]
                i += len(chunk)
                if self.memo is not None and key is not None:
                    self.memo.put(key, got)
            self.todo = []
        return [o if o is not None else [] for o in self.out]


def move_trail_overlays(moves: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each unit's last move as a "move-trail" segment labelled with its length and ±, in overlay JSON form."""
    out = []
    for ev in moves:
        a, b = ev.get("from_in"), ev.get("to_in")
        if not (isinstance(a, Sequence) and isinstance(b, Sequence)):
            continue
        length = float(ev.get("length_in", math.dist(a[:2], b[:2])))
        pm = float(ev.get("pm_in", 0.0))
        out.append(
            {
                "shape": "segment",
                "points": [list(a[:2]), list(b[:2])],
                "style": "move-trail",
                "radius": 0.0,
                "inner": 0.0,
                "label": f'{length:.2f}" ± {pm:.3f}"' if 0 < pm < 0.005 else f'{length:.2f}" ± {pm:.2f}"',
                "unit": ev.get("tag"),
                "owner": None,
            }
        )
    return out


def unit_list(fixes: Sequence[Any], roster: Roster | None, colours: Mapping[str, str],
              corrected: Mapping[int, tuple[float, float]] | None = None) -> list[dict[str, Any]]:
    """One entry per measured base: where it is (inches), its ± and its base, named and coloured by roster;
    `corrected`: units the players put elsewhere than the camera measured, drawn where they put them."""
    units = []
    for f in fixes:
        ru = roster.units.get(int(f.tag)) if roster is not None else None
        owner = ru.owner if ru else None
        x, y = (corrected or {}).get(int(f.tag), (float(f.x), float(f.y)))
        units.append(
            {
                "tag": int(f.tag),
                "x": round(float(x), 3),
                "y": round(float(y), 3),
                "z": round(float(f.z), 3),
                "yaw_deg": round(float(f.yaw_deg), 1),
                "pm": round(float(f.pm), 3),
                "name": ru.name if ru else f"tag {int(f.tag)}",
                "profile": ru.profile if ru else None,
                "owner": owner,
                "colour": colours.get(owner or "", UNKNOWN_OWNER_COLOUR),
                "radius_in": round(ru.base_radius_in if ru else 0.63, 3),
                "base_height_in": ru.base_height_in if ru else 0.125,
                # the floor under it was taken from the terrain's footprint, not told by the tag's printed size
                "height_assumed": bool(getattr(f, "height_assumed", False)),
                # a mount never measured: its ± carries what a leaning pin may hide (rules/roster.py)
                "mount_unmeasured": bool(ru.mount_unmeasured) if ru else False,
            }
        )
    return units


def tag_shapes(tags: Sequence[Any], anchor_ids: Iterable[int] = ()) -> list[dict[str, Any]]:
    """Each tag's outline in image pixels ("anchor" style for the table's anchors)."""
    anchors = set(anchor_ids)
    return [
        {
            "k": "tag",
            "p": np.round(np.asarray(t.corners_px, dtype=np.float64), 1).tolist(),
            "id": int(t.id),
            "s": "anchor" if int(t.id) in anchors else "tag",
        }
        for t in tags
    ]


def image_shapes(
    project: Projector,
    tags: Sequence[Any],
    units: Sequence[Mapping[str, Any]],
    overlays: Sequence[Mapping[str, Any]],
    verdicts: Sequence[Mapping[str, Any]],
    anchor_ids: Iterable[int] = (),
    memo: ShapeMemo | None = None,
) -> list[dict[str, Any]]:
    """Every shape to draw over the camera image, in image pixels (see the module docstring); `memo` (begun
    for this frame's calibration) gives back the points of shapes made the frame before."""
    shapes = tag_shapes(tags, anchor_ids)
    batch = _Batch(memo)
    pending: list[tuple[dict[str, Any], list[int]]] = []
    height = {int(u["tag"]): float(u["z"]) - float(u["base_height_in"]) for u in units}

    def circle(cx: float, cy: float, r: float, z: float) -> int:
        return batch.add(("circle", cx, cy, r, z),
                         lambda: _circle(cx, cy, r, circle_points(_radius_px(project, cx, cy, r, z))), z)

    def point(x: float, y: float, z: float) -> int:
        return batch.add(("point", x, y, z), lambda: np.array([[x, y]]), z)

    for u in units:
        x, y, z = float(u["x"]), float(u["y"]), float(u["z"])
        ids = [circle(x, y, float(u["radius_in"]), z), point(x, y, z)]
        pending.append(({"k": "base", "s": "base", "u": u["tag"], "o": u["owner"], "col": u["colour"], "l": u["name"]}, ids))
    for ov in overlays:
        pts = np.asarray(ov.get("points") or [], dtype=np.float64).reshape(-1, 2)
        if len(pts) == 0:
            continue
        unit = ov.get("unit")
        z = max(0.0, height.get(int(unit), 0.0)) if isinstance(unit, int) else 0.0
        base = {"s": ov.get("style", ""), "u": unit, "o": ov.get("owner"), "l": ov.get("label", "")}
        shape = ov.get("shape")
        cx, cy = float(pts[0, 0]), float(pts[0, 1])
        if shape == "circle":
            pending.append(({"k": "poly", "c": True, **base}, [circle(cx, cy, float(ov.get("radius", 0)), z)]))
        elif shape == "ring":
            ids = [circle(cx, cy, float(ov.get("radius", 0)), z)]
            if float(ov.get("inner", 0)) > 0:
                ids.append(circle(cx, cy, float(ov["inner"]), z))
            pending.append(({"k": "ring", **base}, ids))
        elif shape == "label":
            pending.append(({"k": "label", **base}, [point(cx, cy, z)]))
        else:
            closed = shape == "polygon"
            line = batch.add(("line", closed, pts.tobytes(), z), functools.partial(densify, pts, closed), z)
            lx, ly = (float(v) for v in _label_point(pts)[0])
            pending.append(({"k": "poly", "c": closed, **base}, [line, point(lx, ly, z)]))
    by_unit = {int(u["tag"]): u for u in units}
    for v in verdicts:
        outcome = v.get("outcome")
        unit = v.get("unit")
        if outcome not in ("illegal", "too close to call") or not isinstance(unit, int) or unit not in by_unit:
            continue
        u = by_unit[unit]
        style = "illegal" if outcome == "illegal" else "too-close"
        at = point(float(u["x"]), float(u["y"]) + float(u["radius_in"]) + 0.3, float(u["z"]))
        pending.append(({"k": "badge", "s": style, "u": unit, "l": "illegal" if style == "illegal" else "too close to call"}, [at]))
    projected = batch.project(project)
    for shape_dict, ids in pending:
        k = shape_dict["k"]
        if k == "base":
            shape_dict["k"] = "poly"
            shape_dict["c"] = True
            shape_dict["p"] = projected[ids[0]]
            shape_dict["a"] = projected[ids[1]][0]
        elif k == "ring":
            shape_dict["p"] = projected[ids[0]]
            shape_dict["q"] = projected[ids[1]] if len(ids) > 1 else []
            shape_dict["a"] = projected[ids[0]][len(projected[ids[0]]) // 4]
        elif k in ("label", "badge"):
            shape_dict["a"] = projected[ids[0]][0]
        else:
            shape_dict["p"] = projected[ids[0]]
            if len(ids) > 1:
                shape_dict["a"] = projected[ids[1]][0]
            elif shape_dict["p"]:
                shape_dict["a"] = shape_dict["p"][0]
        shapes.append(shape_dict)
    return shapes


def densify(pts: np.ndarray, closed: bool, step_in: float = 1.0) -> np.ndarray:
    """Points every `step_in` inches along the path, so that lens distortion bends long lines as it should."""
    path = np.vstack([pts, pts[:1]]) if closed and len(pts) > 2 else pts
    out = [path[:1]]
    for a, b in zip(path[:-1], path[1:]):
        n = max(1, int(math.ceil(float(np.hypot(*(b - a))) / step_in)))
        t = np.linspace(0.0, 1.0, n + 1)[1:, None]
        out.append(a + (b - a) * t)
    dense = np.concatenate(out, axis=0)
    return dense[:-1] if closed and len(pts) > 2 else dense


def _label_point(pts: np.ndarray) -> np.ndarray:
    if len(pts) == 2:
        return (pts[:1] + pts[1:2]) / 2.0
    return pts.mean(axis=0, keepdims=True)


def board_of(result: Any) -> dict[str, float]:
    board = getattr(result, "board", None) or {}
    return {"w": float(board.get("w", 0.0)), "d": float(board.get("d", 0.0))}


def round_overlay(ov: Mapping[str, Any]) -> dict[str, Any]:
    """An overlay's JSON with coordinates rounded to 0.001" (smaller messages, same drawing)."""
    out = dict(ov)
    out["points"] = [[round(float(c), 3) for c in p] for p in ov.get("points") or []]
    return out


def build_frame_message(
    result: FrameLike,
    *,
    roster: Roster | None,
    focus: Mapping[int, Sequence[Mapping[str, Any]]] | None = None,
    moves: Sequence[Mapping[str, Any]] = (),
    events: Sequence[Mapping[str, Any]] = (),
    verdicts: Sequence[Mapping[str, Any]] = (),
    shapes: bool = True,
) -> dict[str, Any]:
    """The JSON the page draws one frame from (inch overlays for the board, pixel shapes for the image).
    shapes=False leaves "image_shapes" None, for `add_image_shapes` to fill in later (on the encoder's thread)."""
    colours = side_colours(roster)
    units = unit_list(result.fixes, roster, colours, getattr(result, "corrected", None))
    overlays = [round_overlay(o) for o in result.overlays]
    trailed = _units_with_trails(overlays)
    overlays += move_trail_overlays(m for m in moves if m.get("tag") not in trailed)
    tags = result.tags
    cal = result.calibration
    anchors = _anchor_ids(cal)
    pixel_shapes = _image_shapes(result, units, overlays, verdicts) if shapes else None
    w, h = result.size
    return {
        "type": "frame",
        "frame_index": int(result.frame_index),
        "t": round(float(result.t), 3),
        "image_size": [int(w), int(h)],
        "board": board_of(result),
        "calibrated": cal is not None,
        "residual_in": _float_or_none(cal.residual_in if cal is not None else None),
        "tags": [{"id": int(t.id), "anchor": int(t.id) in anchors} for t in tags],
        "units": units,
        "owners": colours,
        "selected": None,
        "focus": focus_message({u: [round_overlay(o) for o in ovs] for u, ovs in (focus or {}).items()},
                               units, cal.table_to_image if cal is not None else None, anchors, overlays),
        "pipeline_status": "",
        "grid_key": None,  # the hex grid the frame is drawn over (session/board_grid.py), filled in by the loop
        "overlays": overlays,
        "image_shapes": pixel_shapes,
        "events": list(events),
        "verdicts": list(verdicts),
        "roll_call": roll_call_message(result, roster),
        "timings_ms": {k: round(float(v), 2) for k, v in result.timings_ms.items()},
    }


def roll_call_message(result: FrameLike, roster: Roster | None) -> dict[str, Any]:
    """The roster's units lost from view, not on the table yet or standing too close, in words
    (session/roll_call.py); empty lists for a frame that has no roll call (a table not calibrated yet)."""
    call = getattr(result, "roll_call", None)
    return (call if isinstance(call, RollCall) else RollCall()).to_json(roster)


def _image_shapes(result: FrameLike, units: Sequence[Mapping[str, Any]], overlays: Sequence[Mapping[str, Any]],
                  verdicts: Sequence[Mapping[str, Any]], memo: ShapeMemo | None = None) -> list[dict[str, Any]]:
    cal = result.calibration
    anchors = _anchor_ids(cal)
    if cal is not None:
        if memo is not None:
            memo.begin(cal)
        return image_shapes(cal.table_to_image, result.tags, units, overlays, verdicts, anchors, memo)
    return tag_shapes(result.tags, anchors)


def add_image_shapes(message: dict[str, Any], result: FrameLike, memo: ShapeMemo | None = None) -> None:
    """Fill in the "image_shapes" of a message built with shapes=False from `result` (the same frame's); `memo`:
    the shapes of the frames before, kept by the one thread that calls this for a feed."""
    message["image_shapes"] = _image_shapes(result, message["units"], message["overlays"], message["verdicts"], memo)


def selection_rings(unit: int, units: Sequence[Mapping[str, Any]], overlays: Sequence[Mapping[str, Any]]
                    ) -> list[dict[str, Any]]:
    """The selected unit's 1" engagement ring (DESIGN.md: within 1" edge to edge), unless the game drew one."""
    if any(o.get("unit") == unit and o.get("style") == "engagement" for o in overlays):
        return []
    for u in units:
        if u["tag"] == unit:
            r = float(u["radius_in"])
            return [{"shape": "ring", "points": [[u["x"], u["y"]]], "style": "engagement", "radius": r + 1.0,
                     "inner": r, "label": '1"', "unit": unit, "owner": u["owner"]}]
    return []


def _key(o: Mapping[str, Any]) -> tuple[Any, ...]:
    return (o.get("style"), o.get("shape"), o.get("label"), o.get("unit"), repr(o.get("points")))


def focus_message(
    rings_of: Mapping[int, Sequence[Mapping[str, Any]]],
    units: Sequence[Mapping[str, Any]],
    project: Any,
    anchors: set[int],
    shown: Sequence[Mapping[str, Any]] = (),
) -> dict[str, dict[str, Any]]:
    """{str(tag): {"overlays": inch shapes, "image_shapes": pixel shapes}} for every unit some page selected
    (session/focus.py), on the table; only what the selection adds (the game's shapes already in `shown`, the
    frame's own, are not repeated). Each page draws only its own unit's."""
    out: dict[str, dict[str, Any]] = {}
    on_table = {int(u["tag"]) for u in units}
    seen = {_key(o) for o in shown}
    for unit, rings in rings_of.items():
        if unit not in on_table:
            continue
        overlays = [dict(o) for o in rings if _key(o) not in seen] + selection_rings(unit, units, rings)
        shapes = ([s for s in image_shapes(project, (), units, overlays, (), anchors) if s.get("s") != "base"]
                  if project is not None else [])
        out[str(unit)] = {"overlays": overlays, "image_shapes": shapes}
    return out


def _units_with_trails(overlays: Sequence[Mapping[str, Any]]) -> set[Any]:
    """The units whose move trail the game draws itself (so Tablesight does not draw a second)."""
    return {o.get("unit") for o in overlays if o.get("style") == "move-trail"}


def _anchor_ids(cal: TableCalibration | None) -> set[int]:
    """The anchor tags' ids (the default layout's 0-3 before calibration)."""
    return {int(k) for k in cal.layout.anchors} if cal is not None else {0, 1, 2, 3}


def _float_or_none(v: Any) -> float | None:
    try:
        return None if v is None else round(float(v), 4)
    except (TypeError, ValueError):
        return None
