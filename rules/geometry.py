"""Table geometry in inches: measures with their ±, base distances, the engagement zone, line of sight, moves.

Every measured length is a `Measure` (value ± pm). A rule compares it with a limit through `at_most` /
`at_least`, which answer "too close to call" when the limit lies inside the ±.

Line of sight (`line_of_sight`, `all_pairs_sight`) — the elevation model:
- Each unit sees from, and is seen at, its *eye*: `eye_height_in` above the underside of its base
  (Placement.z + eye_height_in; default 1.25", a 28-32 mm figure). A unit on a 3" ruin floor has z = 3.
- Five sight lines join the two base discs: the centre line, the two outer tangent lines (edge to edge on
  the same side) and the two lines half-way between (offsets -1, -1/2, 0, 1/2, 1 of each radius across the
  centre line). Each runs in 3D from eye to eye, so its height varies linearly along it.
- A line is *blocked* by a "blocking" piece when it passes over the piece's footprint lower than the
  piece's top (`height_in`) anywhere; a viewer whose eye is above a 2" wall, looking at a target whose eye
  is too, sees over it. A line through an "obscuring" piece below its top is *obscured*.
- Verdict: "clear" when every line is neither blocked nor obscured; "blocked" when every line is blocked;
  otherwise "partial" (so an obscuring piece across all lines gives "partial"). `fraction_clear` is the
  share of lines that are clear; `blockers` names every piece that blocked or obscured a line. A line that
  only grazes a corner (touches the footprint in a point) is not stopped by it. Units never block sight.

Moves (`trace_move`, `move_cost`): the horizontal length plus the vertical part (climbing up or down,
`climb_factor` times). Along each straight leg the unit walks on the highest floor at or below it (the
table, an "elevated" floor, or the top of a "blocking" piece); crossing a "blocking" piece whose top is
above it means climbing onto it and down again, and climbing a piece that is not `climbable` is reported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon

from rules.engine import Inches, Outcome, Placement, UnitId
from rules.terrain import TerrainPiece

EPS = 1e-9
"""Slack for exact comparisons (a 6.0" move against a 6" limit with no ± is legal)."""
DEFAULT_EYE_HEIGHT_IN = 1.25
SIGHT_OFFSETS = (-1.0, -0.5, 0.0, 0.5, 1.0)
"""Where the sight lines cross each base, as a fraction of its radius across the centre line."""
LEVEL_TOLERANCE_IN = 0.2
"""Height differences up to this are noise in a measured z, not climbing."""
GRAZE_IN = 1e-6
"""A sight line must run at least this far over a footprint for the piece to affect it."""


@dataclass(frozen=True)
class Measure:
    """A measured length: value ± pm, inches."""

    value: Inches
    pm: Inches = 0.0

    def at_most(self, limit: Inches) -> Outcome:
        """LEGAL when the whole ± lies within limit, ILLEGAL when it lies beyond, else TOO_CLOSE_TO_CALL."""
        if self.value + self.pm <= limit + EPS:
            return Outcome.LEGAL
        if self.value - self.pm > limit + EPS:
            return Outcome.ILLEGAL
        return Outcome.TOO_CLOSE_TO_CALL

    def at_least(self, limit: Inches) -> Outcome:
        """LEGAL when the whole ± lies at or above limit, ILLEGAL when below, else TOO_CLOSE_TO_CALL."""
        if self.value - self.pm >= limit - EPS:
            return Outcome.LEGAL
        if self.value + self.pm < limit - EPS:
            return Outcome.ILLEGAL
        return Outcome.TOO_CLOSE_TO_CALL

    def __add__(self, other: Measure) -> Measure:
        return Measure(self.value + other.value, math.hypot(self.pm, other.pm))

    def scaled(self, factor: float) -> Measure:
        return Measure(self.value * factor, self.pm * abs(factor))

    def text(self) -> str:
        """E.g. 6.30" ± 0.02"; a ± under 0.01" keeps a third decimal (6.301" ± 0.003") so it never reads 0.00."""
        if 0 < self.pm < 0.005:
            return f'{self.value:.3f}" ± {self.pm:.3f}"'
        return f'{self.value:.2f}" ± {self.pm:.2f}"'


def combined_pm(*pms: Inches) -> Inches:
    """Independent ± combined (root sum of squares), inches."""
    return math.sqrt(sum(p * p for p in pms))


def centre_distance(a: Placement, b: Placement) -> Measure:
    """Horizontal distance between two base centres, inches."""
    return Measure(math.hypot(a.x - b.x, a.y - b.y), combined_pm(a.pm, b.pm))


def edge_distance(a: Placement, ra: Inches, b: Placement, rb: Inches) -> Measure:
    """Horizontal gap between two round bases' edges (radii ra, rb), inches, never below 0."""
    d = math.hypot(a.x - b.x, a.y - b.y) - ra - rb
    return Measure(max(0.0, d), combined_pm(a.pm, b.pm))


def engagement_zone(
    unit: UnitId,
    positions: Mapping[UnitId, Placement],
    radii: Mapping[UnitId, Inches],
    owners: Mapping[UnitId, str],
    zone: Inches = 1.0,
) -> list[tuple[UnitId, Measure, Outcome]]:
    """Enemies of `unit` whose base edge is within `zone` of its base edge (legal = surely within, too close
    to call = maybe), nearest first."""
    me = positions[unit]
    out: list[tuple[UnitId, Measure, Outcome]] = []
    for other, p in positions.items():
        if other == unit or other not in owners or owners.get(other) == owners.get(unit):
            continue
        m = edge_distance(me, radii[unit], p, radii[other])
        verdict = m.at_most(zone)
        if verdict is not Outcome.ILLEGAL:
            out.append((other, m, verdict))
    out.sort(key=lambda t: t[1].value)
    return out


def wholly_within(p: Placement, radius: Inches, area: Polygon) -> Measure:
    """How far the base stays inside `area`: the gap from its edge to the area's outline, inches (negative
    when it sticks out). `.at_least(0)` says whether the base is wholly within."""
    centre = Point(p.x, p.y)
    d = area.exterior.distance(centre)
    inside = area.contains(centre)
    return Measure((d if inside else -d) - radius, p.pm)


# ---------------------------------------------------------------------------------------------- sight


@dataclass(frozen=True)
class Sight:
    """Line of sight between two bases: "clear" | "partial" | "blocked", the pieces in the way, the clear share."""

    verdict: str
    blockers: tuple[str, ...] = ()
    fraction_clear: float = 1.0


def _sight_lines(
    ax: float, ay: float, ra: float, bx: float, by: float, rb: float
) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    dx, dy = bx - ax, by - ay
    n = math.hypot(dx, dy)
    if n < EPS:
        return [((ax, ay), (bx, by)) for _ in SIGHT_OFFSETS]
    px, py = -dy / n, dx / n
    return [((ax + f * ra * px, ay + f * ra * py), (bx + f * rb * px, by + f * rb * py)) for f in SIGHT_OFFSETS]


def _sight_pieces(terrain: Sequence[TerrainPiece]) -> list[TerrainPiece]:
    return [t for t in terrain if (t.has("blocking") or t.has("obscuring")) and t.height_in > 0]


def _verdict(blocked: int, obscured_or_blocked: int, n: int, names: Sequence[str]) -> Sight:
    clear = n - obscured_or_blocked
    if clear == n:
        return Sight("clear", (), 1.0)
    verdict = "blocked" if blocked == n else "partial"
    return Sight(verdict, tuple(sorted(set(names))), clear / n)


def line_of_sight(
    a: Placement,
    ra: Inches,
    b: Placement,
    rb: Inches,
    terrain: Sequence[TerrainPiece],
    eye_height_in: Inches = DEFAULT_EYE_HEIGHT_IN,
) -> Sight:
    """Line of sight between two bases (see the module docstring for the elevation model)."""
    za, zb = a.z + eye_height_in, b.z + eye_height_in
    pieces = _sight_pieces(terrain)
    lines = _sight_lines(a.x, a.y, ra, b.x, b.y, rb)
    blocked = hindered = 0
    names: list[str] = []
    for (sx, sy), (ex, ey) in lines:
        seg = LineString([(sx, sy), (ex, ey)])
        dx, dy = ex - sx, ey - sy
        d2 = dx * dx + dy * dy
        line_blocked = line_hindered = False
        for piece in pieces:
            inter = seg.intersection(piece.shape)
            if inter.is_empty or inter.length <= GRAZE_IN:
                continue
            ts = [((x - sx) * dx + (y - sy) * dy) / d2 for x, y in shapely.get_coordinates(inter)]
            low = min(za + (zb - za) * min(ts), za + (zb - za) * max(ts))
            if low < piece.height_in - EPS:
                names.append(piece.name)
                line_hindered = True
                line_blocked = line_blocked or piece.has("blocking")
        blocked += line_blocked
        hindered += line_hindered
    return _verdict(blocked, hindered, len(lines), names)


def all_pairs_sight(
    placements: Sequence[Placement],
    radii: Mapping[UnitId, Inches],
    terrain: Sequence[TerrainPiece],
    eye_height_in: Inches = DEFAULT_EYE_HEIGHT_IN,
) -> dict[tuple[UnitId, UnitId], Sight]:
    """`line_of_sight` for every pair of units at once (shapely 2 arrays + numpy), keyed both ways round."""
    n = len(placements)
    if n < 2:
        return {}
    ids = [p.unit for p in placements]
    xs = np.array([p.x for p in placements])
    ys = np.array([p.y for p in placements])
    zs = np.array([p.z for p in placements]) + eye_height_in
    rs = np.array([radii[u] for u in ids])
    i, j = np.triu_indices(n, 1)
    n_pairs, n_lines = len(i), len(SIGHT_OFFSETS)
    dx, dy = xs[j] - xs[i], ys[j] - ys[i]
    norm = np.hypot(dx, dy)
    safe = np.where(norm < EPS, 1.0, norm)
    px, py = np.where(norm < EPS, 0.0, -dy / safe), np.where(norm < EPS, 0.0, dx / safe)
    f = np.array(SIGHT_OFFSETS)
    start = np.stack([xs[i, None] + f * rs[i, None] * px[:, None], ys[i, None] + f * rs[i, None] * py[:, None]], -1)
    end = np.stack([xs[j, None] + f * rs[j, None] * px[:, None], ys[j, None] + f * rs[j, None] * py[:, None]], -1)
    start, end = start.reshape(-1, 2), end.reshape(-1, 2)  # (pairs * lines, 2)
    z0 = np.repeat(zs[i], n_lines)
    z1 = np.repeat(zs[j], n_lines)

    pieces = _sight_pieces(terrain)
    hindered = np.zeros(n_pairs * n_lines, dtype=bool)
    blocked = np.zeros(n_pairs * n_lines, dtype=bool)
    pair_piece = np.zeros((0, 2), dtype=np.int64)
    if pieces:
        li, pi, tmin, tmax = _line_piece_spans(start, end, pieces, n_lines)
        heights = np.array([p.height_in for p in pieces])
        is_blocking = np.array([p.has("blocking") for p in pieces])
        za, zb = z0[li], z1[li]
        low = np.minimum(za + (zb - za) * tmin, za + (zb - za) * tmax)
        hit = low < heights[pi] - EPS
        hindered[li[hit]] = True
        blocked[li[hit & is_blocking[pi]]] = True
        key = np.unique((li[hit] // n_lines) * len(pieces) + pi[hit])
        pair_piece = np.stack([key // len(pieces), key % len(pieces)], 1)
    n_blocked = blocked.reshape(n_pairs, n_lines).sum(1)
    n_hindered = hindered.reshape(n_pairs, n_lines).sum(1)
    names: dict[int, list[str]] = {}
    for pair, piece in pair_piece.tolist():
        names.setdefault(pair, []).append(pieces[piece].name)
    out: dict[tuple[UnitId, UnitId], Sight] = {}
    clear = Sight("clear", (), 1.0)
    for k_pair, (a, b) in enumerate(zip(i.tolist(), j.tolist())):
        if n_hindered[k_pair] == 0:
            sight = clear
        else:
            sight = _verdict(int(n_blocked[k_pair]), int(n_hindered[k_pair]), n_lines, names.get(k_pair, []))
        out[(ids[a], ids[b])] = sight
        out[(ids[b], ids[a])] = sight
    return out


def _line_piece_spans(
    start: np.ndarray, end: np.ndarray, pieces: Sequence[TerrainPiece], group: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For every segment (start[k] -> end[k]) and footprint it runs over: (segment index, piece index, first and
    last parameter t in [0, 1] of the part over the footprint).

    Candidates come from an STRtree of the footprints queried with one bounding box per `group` consecutive
    segments (the sight lines of one pair); the exact test crosses each segment with the footprint's edges
    in numpy, and a ray-crossing count says whether each end lies inside (no GEOS overlay per line).
    """
    polys = np.array([p.shape for p in pieces], dtype=object)
    rings = [np.asarray(p.polygon, dtype=float) for p in pieces]
    counts = np.array([len(r) for r in rings])
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    e0 = np.concatenate(rings)
    e1 = np.concatenate([np.roll(r, -1, axis=0) for r in rings])
    ends = np.concatenate([start, end], 1).reshape(-1, group * 2, 2)
    boxes = shapely.box(ends[..., 0].min(1), ends[..., 1].min(1), ends[..., 0].max(1), ends[..., 1].max(1))
    gi, pi = shapely.STRtree(polys).query(boxes)
    li = (gi[:, None] * group + np.arange(group)).ravel()
    pi = np.repeat(pi, group)
    sx, sy, ex, ey = start[:, 0], start[:, 1], end[:, 0], end[:, 1]
    bounds = shapely.bounds(polys)
    bx0, by0, bx1, by1 = (bounds[pi, k] for k in range(4))
    lsx, lsy, lex, ley = sx[li], sy[li], ex[li], ey[li]
    near = (
        (np.minimum(lsx, lex) <= bx1) & (np.maximum(lsx, lex) >= bx0)
        & (np.minimum(lsy, ley) <= by1) & (np.maximum(lsy, ley) >= by0)
    )
    li, pi = li[near], pi[near]
    # the line must separate the corners of the footprint's bounding box
    lsx, lsy, ldx, ldy = sx[li], sy[li], ex[li] - sx[li], ey[li] - sy[li]
    side = [ldx * (bounds[pi, cy] - lsy) - ldy * (bounds[pi, cx] - lsx) for cx, cy in ((0, 1), (2, 1), (2, 3), (0, 3))]
    lo, hi = np.minimum.reduce(side), np.maximum.reduce(side)
    cross = (lo <= 0) & (hi >= 0)
    li, pi = li[cross], pi[cross]
    if len(li) == 0:
        empty = np.zeros(0)
        return li, pi, empty, empty
    rep = counts[pi]
    first = np.cumsum(rep) - rep
    edge = np.arange(rep.sum()) - np.repeat(first - offsets[pi], rep)
    seg = np.repeat(li, rep)
    px, py = sx[seg], sy[seg]
    dx, dy = ex[seg] - px, ey[seg] - py
    ax, ay, bx, by = e0[:, 0][edge], e0[:, 1][edge], e1[:, 0][edge], e1[:, 1][edge]
    qx, qy = bx - ax, by - ay
    wx, wy = ax - px, ay - py
    denom = dx * qy - dy * qx
    ok = np.abs(denom) > 1e-12
    safe = np.where(ok, denom, 1.0)
    t = (wx * qy - wy * qx) / safe
    u = (wx * dy - wy * dx) / safe
    tol = 1e-12
    ok &= (t >= -tol) & (t <= 1 + tol) & (u >= -tol) & (u <= 1 + tol)
    t = np.clip(t, 0.0, 1.0)
    tmin = np.minimum.reduceat(np.where(ok, t, np.inf), first)
    tmax = np.maximum.reduceat(np.where(ok, t, -np.inf), first)

    def inside(x: np.ndarray, y: np.ndarray) -> np.ndarray:  # even-odd ray crossing towards +x
        straddle = (ay > y) != (by > y)
        x_cross = ax + (y - ay) * qx / np.where(straddle, qy, 1.0)
        return np.add.reduceat((straddle & (x < x_cross)).astype(np.int64), first) % 2 == 1

    tmin = np.where(inside(px, py), 0.0, tmin)
    tmax = np.where(inside(px + dx, py + dy), 1.0, tmax)
    seg_len = np.hypot(ex[li] - sx[li], ey[li] - sy[li])
    keep = np.isfinite(tmin) & np.isfinite(tmax) & ((tmax - tmin) * seg_len > GRAZE_IN)
    return li[keep], pi[keep], tmin[keep], tmax[keep]


# ---------------------------------------------------------------------------------------------- moves


@dataclass(frozen=True)
class MoveTrace:
    """What a path costs: horizontal and vertical inches, the pieces climbed, those that cannot be climbed."""

    horizontal_in: Inches
    vertical_in: Inches
    climbed: tuple[str, ...] = ()
    unclimbable: tuple[str, ...] = ()

    def cost(self, climb_factor: float = 2.0) -> Inches:
        """Horizontal inches plus the vertical inches counted `climb_factor` times."""
        return self.horizontal_in + climb_factor * self.vertical_in


def path_length(points: Sequence[Sequence[float]]) -> Inches:
    """Length of a path through table points (x, y), horizontal only, inches."""
    pts = np.asarray([(p[0], p[1]) for p in points], dtype=float)
    if len(pts) < 2:
        return 0.0
    return float(np.hypot(*np.diff(pts, axis=0).T).sum())


def _floor_pieces(terrain: Sequence[TerrainPiece]) -> list[TerrainPiece]:
    return [t for t in terrain if (t.has("elevated") or t.has("blocking")) and t.height_in > 0]


def trace_move(path3d: Sequence[Sequence[float]], terrain: Sequence[TerrainPiece]) -> MoveTrace:
    """Follow a path of (x, y, z) points (z optional, default 0) over the terrain; see the module docstring."""
    pts = [(float(p[0]), float(p[1]), float(p[2]) if len(p) > 2 else 0.0) for p in path3d]
    pieces = _floor_pieces(terrain)
    horizontal = vertical = 0.0
    climbed: list[str] = []
    unclimbable: list[str] = []

    def climb(z_from: float, z_to: float, at: Point, candidates: list[TerrainPiece]) -> None:
        nonlocal vertical
        if abs(z_to - z_from) <= LEVEL_TOLERANCE_IN:
            return
        vertical += abs(z_to - z_from)
        if z_to > z_from:
            onto = [t for t in candidates if t.shape.covers(at) and t.height_in >= z_to - LEVEL_TOLERANCE_IN]
            for t in onto or candidates:
                (climbed if t.climbable else unclimbable).append(t.name)

    for (x0, y0, z0), (x1, y1, z1) in zip(pts, pts[1:]):
        seg = LineString([(x0, y0), (x1, y1)])
        horizontal += seg.length
        ts = {0.0, 1.0}
        if seg.length > EPS:
            near = [t for t in pieces if seg.intersects(t.shape)]
            for t in near:
                for x, y in shapely.get_coordinates(seg.intersection(t.shape.exterior)):
                    ts.add(float(seg.project(Point(x, y), normalized=True)))
        else:
            near = [t for t in pieces if t.shape.covers(Point(x0, y0))]
        z = z0
        cuts = sorted(ts)
        for ta, tb in zip(cuts, cuts[1:]):
            if tb - ta < 1e-12:
                continue
            mid = seg.interpolate((ta + tb) / 2, normalized=True)
            under = [t for t in near if t.shape.contains(mid)]
            floors = [0.0] + [t.height_in for t in under]
            solid = max([t.height_in for t in under if t.has("blocking")], default=0.0)
            level = max(max(f for f in floors if f <= z + LEVEL_TOLERANCE_IN), solid)
            climb(z, level, mid, [t for t in under if t.height_in >= level - LEVEL_TOLERANCE_IN] or under)
            z = level if abs(level - z) > LEVEL_TOLERANCE_IN else z
        end = Point(x1, y1)
        climb(z, z1, end, [t for t in near if t.shape.covers(end)])
    return MoveTrace(horizontal, vertical, tuple(dict.fromkeys(climbed)), tuple(dict.fromkeys(unclimbable)))


def move_cost(
    path3d: Sequence[Sequence[float]],
    terrain: Sequence[TerrainPiece],
    climb_factor: float = 2.0,
    pm: Inches = 0.0,
) -> Measure:
    """The inches a path uses: horizontal length plus the vertical part counted `climb_factor` times (± pm)."""
    return Measure(trace_move(path3d, terrain).cost(climb_factor), pm)


def crosses_impassable(
    path: Sequence[Sequence[float]], terrain: Sequence[TerrainPiece], radius: Inches
) -> tuple[str, ...]:
    """The impassable pieces that a base of `radius` overlaps anywhere along `path` (x, y points)."""
    pts = [(float(p[0]), float(p[1])) for p in path]
    swept = (LineString(pts) if len(pts) > 1 and path_length(pts) > EPS else Point(pts[0])).buffer(radius)
    return tuple(
        t.name for t in terrain if t.has("impassable") and swept.intersection(t.shape).area > 1e-6
    )
