"""Rendered dice in a tray, with their truth: d6 with pips and d20 with numerals, seen by a camera.

A die is a solid (a cube with rounded edges, or an icosahedron) lying in a tray: it is turned so that the face
asked for is up, then yawed, and tilted when it leans on the tray's wall (the truth is then the face whose
normal points most up, computed, never assumed). Its visible faces are projected through the camera (lens
distortion included), shaded by one light, drawn 4x supersampled, and blended into the frame: opaque or
translucent (the tray shows through, tinted), plain or marbled, with pips or numerals in white, black or gold,
a soft shadow, and a glare highlight on some. A hand may reach in from the frame's edge and hide some dice.
Lengths in inches (table frame, z up), pixels in OpenCV's convention, colours BGR 0-255.

Two uses:

(a) the table camera (1080p, dice ~25-40 px across), a tray drawn into a rendered table frame::

    from vision.synth.dice import Tray, roll_dice, render_table_with_tray
    tray = Tray(centre_in=(33.0, 6.0), size_in=(6.0, 4.0))        # beside the board, table inches
    dice = roll_dice(tray, sides=6, count=5, rng=7, faces=[6, 6, 4, 1, 3])
    rendered, truths = render_table_with_tray(scene, tray, dice, seed=7)   # scene: vision.synth.render.Scene
    # rendered: the usual Rendered (tags' truth unchanged); truths: one DieTruth a die (value, centre_px, box_px)
    # the tray region for a reader: tray_polygon_px(tray, CameraPose(scene.camera, scene.rvec, scene.tvec))

    The scene is rendered without its noise, blur and JPEG, the tray is drawn in, then those are applied to
    the whole frame as `render_scene` would.

(b) a phone held over the tray (dice 80-200 px across), for d20s::

    view = phone_view(tray, dice, seed=3)   # view.image, view.dice (DieTruth), view.region_px

(c) dice rolled straight onto the table, no tray: `render_table_with_dice(scene, Tray(centre_in=(x, y)), dice,
    seed)` (the Tray only places them).

The fonts of the d20 numerals are TrueType fonts found on the machine (DejaVu, Liberation; cv2's Hershey
fonts where none is found): `NUMERAL_FONTS`; a die picks one by `font` (an index).
"""

from __future__ import annotations

import functools
import glob
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import cv2
import numpy as np

from vision.synth.render import CameraPose, Rendered, Scene, render_scene

BGR = tuple[float, float, float]
SUPERSAMPLE = 4
D6_EDGE_IN = 0.63
"""A 16 mm d6."""
D20_EDGE_IN = 0.5
"""A d20 about 20 mm across its faces' corners (edge 12.7 mm)."""
LIGHT = np.array([-0.35, 0.45, 1.0]) / np.linalg.norm([-0.35, 0.45, 1.0])


@dataclass(frozen=True)
class Look:
    """What a die is made of: body colour, a second colour for marbling, ink of its pips or numerals.

    opacity: 1 opaque; below 1 translucent (the tray shows through, tinted by the body)."""

    name: str
    body: BGR
    ink: BGR
    opacity: float = 1.0
    marble: BGR | None = None


WHITE_INK: BGR = (235.0, 235.0, 235.0)
BLACK_INK: BGR = (25.0, 25.0, 25.0)
GOLD_INK: BGR = (45.0, 170.0, 215.0)
LOOKS: dict[str, Look] = {
    look.name: look
    for look in (
        Look("white", (228.0, 228.0, 225.0), BLACK_INK),
        Look("ivory", (200.0, 228.0, 238.0), (30.0, 30.0, 150.0)),
        Look("black", (32.0, 30.0, 30.0), WHITE_INK),
        Look("black-gold", (28.0, 28.0, 30.0), GOLD_INK),
        Look("red", (40.0, 40.0, 190.0), WHITE_INK),
        Look("blue", (170.0, 80.0, 30.0), WHITE_INK),
        Look("green", (60.0, 140.0, 40.0), GOLD_INK),
        Look("purple", (120.0, 40.0, 100.0), GOLD_INK),
        Look("yellow", (40.0, 200.0, 230.0), BLACK_INK),
        Look("clear-red", (60.0, 60.0, 220.0), WHITE_INK, opacity=0.55),
        Look("clear-blue", (220.0, 120.0, 60.0), WHITE_INK, opacity=0.5),
        Look("clear-green", (90.0, 200.0, 80.0), BLACK_INK, opacity=0.5),
        Look("clear-smoke", (90.0, 90.0, 90.0), WHITE_INK, opacity=0.6),
        Look("marble-blue", (190.0, 120.0, 40.0), WHITE_INK, marble=(235.0, 235.0, 230.0)),
        Look("marble-red", (50.0, 40.0, 170.0), GOLD_INK, marble=(40.0, 30.0, 30.0)),
        Look("marble-green", (70.0, 150.0, 60.0), BLACK_INK, marble=(215.0, 225.0, 215.0)),
    )
}


@dataclass(frozen=True)
class Tray:
    """A rectangular dice tray lying on the table: floor of felt, walls `wall_in` high and `rim_in` thick."""

    centre_in: tuple[float, float]
    size_in: tuple[float, float] = (6.0, 4.0)
    """Inside length along x and width along y, inches."""
    yaw_deg: float = 0.0
    felt: BGR = (70.0, 40.0, 35.0)
    wall: BGR = (40.0, 60.0, 90.0)
    wall_in: float = 0.6
    rim_in: float = 0.35

    def to_table(self, local: np.ndarray) -> np.ndarray:
        """(N, 2 or 3) tray coordinates (origin at its centre, x along its length) -> table inches."""
        pts = np.asarray(local, np.float64)
        a = math.radians(self.yaw_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        xy = pts[:, :2] @ rot.T + np.asarray(self.centre_in)
        return np.column_stack([xy, pts[:, 2]]) if pts.shape[1] == 3 else xy


@dataclass(frozen=True)
class DieAt:
    """One die in a tray: `value` up, centre (x, y) in tray coordinates (inches), yawed, leaning `tilt_deg`
    toward `tilt_dir_deg` (tray frame), `font` an index into NUMERAL_FONTS, `mark` how 6 and 9 are told
    apart on a d20 ("bar" under the numeral or "dot" after it), `glare` 0..1 the strength of a highlight."""

    sides: int
    value: int
    x: float
    y: float
    yaw_deg: float = 0.0
    tilt_deg: float = 0.0
    tilt_dir_deg: float = 0.0
    look: Look = LOOKS["white"]
    edge_in: float | None = None
    font: int = 0
    mark: str = "bar"
    glare: float = 0.0

    @property
    def edge(self) -> float:
        if self.edge_in is not None:
            return self.edge_in
        return D6_EDGE_IN if self.sides == 6 else D20_EDGE_IN


@dataclass(frozen=True)
class DieTruth:
    """What a rendered die is: its face up (the face most up), centre (the solid's centre projected) and box
    (its drawn pixels' bounds) in pixels; `visible` the share of it not hidden by a hand or the frame;
    `up_deg` the image direction of the top face's numeral (d20) or face edge (d6), degrees, counter-clockwise
    from +x with y down (so 90 is up the image)."""

    value: int
    sides: int
    centre_px: tuple[float, float]
    box_px: tuple[float, float, float, float]
    visible: float
    up_deg: float
    look: str = ""
    face_px: tuple[float, float] = (0.0, 0.0)
    """The centre of the face up (its centroid projected), px."""
    face_visible: float = 1.0
    """The share of the face up not hidden by a hand, a nearer die or the frame's edge: under half, nobody can read
    it from this picture."""


class TrayView(NamedTuple):
    """A rendered close view of a tray: the image, each die's truth and the tray's floor polygon in pixels."""

    image: np.ndarray
    dice: list[DieTruth]
    region_px: np.ndarray


# --------------------------------------------------------------------------------------------- solids


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@functools.lru_cache(maxsize=2)
def _solid(sides: int) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """Vertices (edge 1, centred) and faces (vertex indices, counter-clockwise seen from outside)."""
    if sides == 6:
        v = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    else:
        p = (1 + math.sqrt(5)) / 2
        raw = []
        for a in (-1.0, 1.0):
            for b in (-p, p):
                raw += [[0.0, a, b], [a, b, 0.0], [b, 0.0, a]]
        v = np.array(raw) / 2.0
    n = len(v)
    d = np.linalg.norm(v[:, None] - v[None], axis=2)
    faces: list[tuple[int, ...]] = []
    if sides == 6:
        for axis in range(3):
            for s in (-0.5, 0.5):
                idx = [i for i in range(n) if abs(v[i, axis] - s) < 1e-9]
                faces.append(tuple(idx))
    else:
        for i in range(n):
            for j in range(i + 1, n):
                for k in range(j + 1, n):
                    if abs(d[i, j] - 1) < 1e-6 and abs(d[j, k] - 1) < 1e-6 and abs(d[i, k] - 1) < 1e-6:
                        faces.append((i, j, k))
    ordered = []
    for f in faces:
        pts = v[list(f)]
        c = pts.mean(axis=0)
        nrm = _unit(c)
        e1 = _unit(pts[0] - c)
        e2 = np.cross(nrm, e1)
        ang = np.arctan2((pts - c) @ e2, (pts - c) @ e1)
        ordered.append(tuple(int(f[i]) for i in np.argsort(ang)))
    return v, tuple(ordered)


def _face_values(sides: int, top: int, normals: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A value for every face, opposite faces summing to sides + 1, face 0 gets `top`."""
    n = len(normals)
    values = np.zeros(n, np.int64)
    pairs = []
    seen: set[int] = set()
    for i in range(n):
        if i in seen:
            continue
        j = int(np.argmin(normals @ normals[i]))
        pairs.append((i, j))
        seen |= {i, j}
    lows = list(range(1, sides // 2 + 1))
    rng.shuffle(lows)
    for (i, j), low in zip(pairs, lows, strict=True):
        if rng.random() < 0.5:
            i, j = j, i
        values[i], values[j] = low, sides + 1 - low
    k = int(np.flatnonzero(values == top)[0])
    if k != 0:  # swap so that face 0 carries `top`, keeping opposite sums
        o0, ok = int(np.argmin(normals @ normals[0])), int(np.argmin(normals @ normals[k]))
        if ok == 0:
            values[0], values[k] = values[k], values[0]
        else:
            values[[0, k]] = values[[k, 0]]
            values[[o0, ok]] = values[[ok, o0]]
    return values


def _rotation_to_up(n: np.ndarray) -> np.ndarray:
    """A rotation taking unit vector n to +z."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(n, z)
    s, c = float(np.linalg.norm(axis)), float(n @ z)
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    rvec = axis / s * math.atan2(s, c)
    return cv2.Rodrigues(rvec)[0]


def _rot_z(deg: float) -> np.ndarray:
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])


class _Posed(NamedTuple):
    verts: np.ndarray
    """(V, 3) table inches."""
    faces: tuple[tuple[int, ...], ...]
    normals: np.ndarray
    """(F, 3) unit outward normals, table frame."""
    values: np.ndarray
    up_vertex: np.ndarray
    """(F,) the vertex each face's numeral points to."""
    centre: np.ndarray


def _pose(die: DieAt, tray: Tray, rng: np.random.Generator) -> _Posed:
    v0, faces = _solid(die.sides)
    normals0 = np.array([_unit(v0[list(f)].mean(axis=0)) for f in faces])
    values = _face_values(die.sides, die.value, normals0, rng)
    R = _rotation_to_up(normals0[0])
    R = _rot_z(die.yaw_deg + tray.yaw_deg) @ R
    if die.tilt_deg:
        d = math.radians(die.tilt_dir_deg + tray.yaw_deg)
        axis = np.array([-math.sin(d), math.cos(d), 0.0])
        R = cv2.Rodrigues(axis * math.radians(die.tilt_deg))[0] @ R
    verts = (v0 * die.edge) @ R.T
    centre_xy = tray.to_table(np.array([[die.x, die.y]]))[0]
    lift = -float(verts[:, 2].min())
    centre = np.array([centre_xy[0], centre_xy[1], lift])
    up_vertex = np.array([f[int(rng.integers(len(f)))] for f in faces])
    return _Posed(verts + centre, faces, normals0 @ R.T, values, up_vertex, centre)


# ------------------------------------------------------------------------------------------- numerals


def _font_files() -> tuple[str, ...]:
    found = []
    for pattern in ("/usr/share/fonts/truetype/*/*.ttf", "/usr/share/fonts/TTF/*.ttf", "/usr/share/fonts/*/*.ttf"):
        found += glob.glob(pattern)
    keep = [f for f in sorted(set(found)) if not any(s in f for s in ("Math", "ExtraLight", "Symbol", "Emoji"))]
    return tuple(keep)


NUMERAL_FONTS: tuple[str, ...] = _font_files() + ("hershey-simplex", "hershey-duplex", "hershey-triplex")
"""The fonts numerals are drawn in: the TrueType files on this machine, then cv2's Hershey fonts."""


@functools.lru_cache(maxsize=2048)
def numeral_mask(text: str, font: int, mark: str, size: int = 96) -> np.ndarray:
    """A `size` x `size` float32 mask (1 ink) of `text` centred, upright, its cap height ~0.36 of `size`;
    "6" and "9" carry `mark` ("bar" under, "dot" after)."""
    name = NUMERAL_FONTS[font % len(NUMERAL_FONTS)]
    big = size * 4
    img = np.zeros((big, big), np.uint8)
    cap = 0.36 * big
    if name.startswith("hershey"):
        face = {"hershey-simplex": cv2.FONT_HERSHEY_SIMPLEX, "hershey-duplex": cv2.FONT_HERSHEY_DUPLEX}.get(
            name, cv2.FONT_HERSHEY_TRIPLEX)
        (tw, th), _ = cv2.getTextSize(text, face, 1.0, 2)
        scale = cap / th
        thick = max(2, int(scale * 2.2))
        (tw, th), _ = cv2.getTextSize(text, face, scale, thick)
        cv2.putText(img, text, (int(big / 2 - tw / 2), int(big / 2 + th / 2)), face, scale, 255, thick, cv2.LINE_AA)
        x0, y0, x1, y1 = big / 2 - tw / 2, big / 2 - th / 2, big / 2 + tw / 2, big / 2 + th / 2
    else:
        from PIL import Image, ImageDraw, ImageFont

        pil_font = ImageFont.truetype(name, int(cap * 1.4))
        left, t, r, b = pil_font.getbbox(text)
        pil = Image.new("L", (big, big), 0)
        draw = ImageDraw.Draw(pil)
        draw.text((big / 2 - (left + r) / 2, big / 2 - (t + b) / 2), text, font=pil_font, fill=255)
        img = np.array(pil)
        x0, y0, x1, y1 = big / 2 - (r - left) / 2, big / 2 - (b - t) / 2, big / 2 + (r - left) / 2, big / 2 + (b - t) / 2
    if text in ("6", "9"):
        stroke = max(3, int(0.11 * (y1 - y0)))
        if mark == "dot":
            cv2.circle(img, (int(x1 + 2.2 * stroke), int(y1 - stroke)), int(stroke * 0.9), 255, -1, cv2.LINE_AA)
        else:
            yb = int(y1 + 2.2 * stroke)
            cv2.rectangle(img, (int(x0), yb), (int(x1), yb + stroke), 255, -1, cv2.LINE_AA)
    return cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


# -------------------------------------------------------------------------------------------- drawing


def _face_seen(pose: CameraPose, posed: _Posed, cover: np.ndarray) -> float:
    """The share of a die's face up that `cover` (float32, the frame's size; 1 where a hand or a nearer die is)
    leaves seen; a part past the frame's edge counts as hidden."""
    top = int(np.argmax(posed.normals[:, 2]))
    poly = _project(pose, posed.verts[list(posed.faces[top])])
    x0, y0 = np.floor(poly.min(axis=0)).astype(int)
    x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 1
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [np.round((poly - (x0, y0)) * 16).astype(np.int32)], 1, shift=4)
    area = float(mask.sum())
    if area == 0:
        return 0.0
    over = np.ones(mask.shape, np.float32)
    h, w = cover.shape
    ix0, iy0, ix1, iy1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if ix0 < ix1 and iy0 < iy1:
        over[iy0 - y0 : iy1 - y0, ix0 - x0 : ix1 - x0] = cover[iy0:iy1, ix0:ix1]
    return float((mask * (1.0 - over)).sum()) / area


def _project(pose: CameraPose, pts: np.ndarray) -> np.ndarray:
    out, _ = cv2.projectPoints(np.asarray(pts, np.float64).reshape(-1, 3), pose.rvec, pose.tvec, pose.camera.K,
                               pose.camera.dist)
    return out.reshape(-1, 2)


def _camera_centre(pose: CameraPose) -> np.ndarray:
    R = cv2.Rodrigues(np.asarray(pose.rvec, np.float64).reshape(3, 1))[0]
    return -R.T @ np.asarray(pose.tvec, np.float64).reshape(3)


def _fill(mask: np.ndarray, pts_px: np.ndarray, origin: np.ndarray, value: float = 1.0) -> None:
    q = np.rint((pts_px - origin) * SUPERSAMPLE * 16).astype(np.int32)
    cv2.fillPoly(mask, [q], value, cv2.LINE_AA, 4)


def _box_filter(a: np.ndarray) -> np.ndarray:
    h, w = a.shape[:2]
    return cv2.resize(a, (w // SUPERSAMPLE, h // SUPERSAMPLE), interpolation=cv2.INTER_AREA)


def _shade(n: np.ndarray) -> float:
    return 0.5 + 0.55 * max(0.0, float(n @ LIGHT))


def _draw_die(image: np.ndarray, pose: CameraPose, die: DieAt, posed: _Posed, rng: np.random.Generator,
              ) -> tuple[np.ndarray, tuple[int, int], DieTruth] | None:
    """Blend one die into `image` (float32, in place); returns its coverage mask, the mask's origin and truth."""
    h_img, w_img = image.shape[:2]
    px = _project(pose, posed.verts)
    x0, y0 = np.floor(px.min(axis=0)).astype(int) - 3
    x1, y1 = np.ceil(px.max(axis=0)).astype(int) + 4
    if x1 <= 0 or y1 <= 0 or x0 >= w_img or y0 >= h_img:
        return None
    origin = np.array([x0, y0], np.float64)
    W, H = (x1 - x0) * SUPERSAMPLE, (y1 - y0) * SUPERSAMPLE
    eye = _camera_centre(pose)
    body = np.zeros((H, W), np.float32)
    colour = np.zeros((H, W, 3), np.float32)
    ink = np.zeros((H, W), np.float32)
    ink_lit = np.zeros((H, W), np.float32)
    size_px = float(np.max(px.max(axis=0) - px.min(axis=0)))
    top = int(np.argmax(posed.normals[:, 2]))
    up_deg = 0.0
    face_px = (0.0, 0.0)
    look = die.look
    for k, f in enumerate(posed.faces):
        pts3 = posed.verts[list(f)]
        c3 = pts3.mean(axis=0)
        if float(posed.normals[k] @ (eye - c3)) <= 0:
            continue
        fpx = _project(pose, pts3)
        face_mask = np.zeros((H, W), np.float32)
        _fill(face_mask, fpx, origin)
        shade = _shade(posed.normals[k])
        colour += face_mask[:, :, None] * np.float32(shade)
        body = np.maximum(body, face_mask)
        n = posed.normals[k]
        up = _unit(posed.verts[posed.up_vertex[k]] - c3) if die.sides == 20 else _unit(pts3[0] - c3)
        right = np.cross(up, n)  # seen from outside, with up up: right
        if k == top:
            c_px, u_px = _project(pose, np.vstack([c3, c3 + up * 0.1]))
            up_deg = math.degrees(math.atan2(-(u_px[1] - c_px[1]), u_px[0] - c_px[0]))
            face_px = (float(c_px[0]), float(c_px[1]))
        value = int(posed.values[k])
        face_ink = np.zeros((H, W), np.float32)
        if die.sides == 6:
            for pu, pv in _PIPS[value]:
                centre = c3 + right * pu * die.edge + up * pv * die.edge
                r = die.edge * (0.085 if value != 1 else 0.12)
                a = np.linspace(0, 2 * math.pi, 20, endpoint=False)
                circ = centre + np.outer(np.cos(a), right * r) + np.outer(np.sin(a), up * r)
                _fill(face_ink, _project(pose, circ), origin)
        else:
            tex = numeral_mask(str(value), die.font, die.mark)
            span = 1.0 * die.edge  # the texture's side, inches: numerals 0.36 of an edge high
            src: list[list[float]] = []
            for vi in f:
                d = posed.verts[vi] - c3
                s, t = float(d @ right), float(d @ up)
                src.append([(s / span + 0.5) * tex.shape[1], (0.5 - t / span) * tex.shape[0]])
            dst = ((fpx - origin) * SUPERSAMPLE).astype(np.float32)
            M = cv2.getAffineTransform(np.array(src, np.float32), dst)
            face_ink = cv2.warpAffine(tex, M, (W, H), flags=cv2.INTER_LINEAR) * face_mask
        ink = np.maximum(ink, face_ink)
        ink_lit = np.maximum(ink_lit, face_ink * np.float32(shade))
    # rounded edges and corners: open the silhouette with a disk
    r = max(1, int(round((0.1 if die.sides == 6 else 0.04) * size_px * SUPERSAMPLE)))
    soft = cv2.GaussianBlur(body, (0, 0), r * 0.7)
    body = np.clip((soft - 0.5) * 4.0 + 0.5, 0.0, 1.0) * body  # corners and edges rounded off
    shade_map = np.clip(colour[:, :, 0], 0, 1.2)
    edge_dark = cv2.GaussianBlur(body, (0, 0), r * 0.6 + 1)
    shade_map = shade_map * (0.75 + 0.25 * edge_dark)
    base = np.asarray(look.body, np.float32)
    if look.marble is not None:
        low = np.asarray(cv2.resize(rng.standard_normal((6, 6)).astype(np.float32), (W, H),
                                    interpolation=cv2.INTER_CUBIC))
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32) / max(W, H)
        swirl = np.sin(9.0 * (xx + 0.6 * yy) + 3.0 * low)
        mix = np.clip(0.35 + 0.6 * swirl, 0, 0.75)[:, :, None]
        tint = base * (1 - mix) + np.asarray(look.marble, np.float32) * mix
    else:
        tint = np.broadcast_to(base, (H, W, 3))
    die_col = tint * shade_map[:, :, None]
    # down to pixels and into the frame
    cov = _box_filter(body)
    col = _box_filter(np.ascontiguousarray(die_col))
    ink_in = _box_filter(np.minimum(ink, body))
    ink_cov = np.clip(ink_in / np.maximum(cov, 1e-3), 0, 1)
    ink_shade = np.clip(_box_filter(ink_lit) / np.maximum(_box_filter(ink), 1e-3), 0, 1.2)
    ix0, iy0 = max(0, x0), max(0, y0)
    ix1, iy1 = min(w_img, x1), min(h_img, y1)
    sl = (slice(iy0 - y0, iy1 - y0), slice(ix0 - x0, ix1 - x0))
    bg = image[iy0:iy1, ix0:ix1]
    c, col, ink_cov, ink_shade = cov[sl][:, :, None], col[sl], ink_cov[sl][:, :, None], ink_shade[sl][:, :, None]
    o = np.float32(look.opacity)
    die_px = col * o + bg * (1 - o) * (np.asarray(look.body, np.float32) / 255.0 * 0.8 + 0.35)
    ink_col = np.asarray(look.ink, np.float32) * np.clip(0.6 + 0.4 * ink_shade, 0.6, 1.1)
    die_px = die_px * (1 - ink_cov) + ink_col * ink_cov
    if die.glare > 0:
        gx, gy = rng.uniform(0.3, 0.7) * (x1 - x0) + x0 - ix0, rng.uniform(0.3, 0.7) * (y1 - y0) + y0 - iy0
        sig = rng.uniform(0.06, 0.14) * size_px
        yy, xx = np.mgrid[0 : iy1 - iy0, 0 : ix1 - ix0].astype(np.float32)
        g = np.exp(-((xx - gx) ** 2 + ((yy - gy) * 1.6) ** 2) / (2 * sig * sig))[:, :, None]
        die_px = die_px + np.float32(die.glare * 230.0) * g
    image[iy0:iy1, ix0:ix1] = bg * (1 - c) + die_px * c
    mask = cov
    ys, xs = np.nonzero(mask > 0.25)
    box = (float(xs.min() + x0 - 0.5), float(ys.min() + y0 - 0.5), float(xs.max() + x0 + 0.5),
           float(ys.max() + y0 + 0.5)) if len(xs) else (float(x0), float(y0), float(x1), float(y1))
    cpx = _project(pose, posed.centre[None])[0]
    area = float(mask.sum())
    seen = float(mask[sl].sum()) / area if area > 0 else 0.0
    truth = DieTruth(int(posed.values[top]), die.sides, (float(cpx[0]), float(cpx[1])), box, seen, up_deg,
                     look.name, face_px)
    return mask, (x0, y0), truth


_PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(0.0, 0.0)],
    2: [(-0.25, -0.25), (0.25, 0.25)],
    3: [(-0.25, -0.25), (0.0, 0.0), (0.25, 0.25)],
    4: [(-0.25, -0.25), (0.25, 0.25), (-0.25, 0.25), (0.25, -0.25)],
    5: [(-0.25, -0.25), (0.25, 0.25), (-0.25, 0.25), (0.25, -0.25), (0.0, 0.0)],
    6: [(-0.25, -0.25), (0.25, 0.25), (-0.25, 0.25), (0.25, -0.25), (-0.25, 0.0), (0.25, 0.0)],
}


def _shadow(image: np.ndarray, pose: CameraPose, posed: _Posed, edge: float) -> None:
    a = np.linspace(0, 2 * math.pi, 24, endpoint=False)
    off = -LIGHT[:2] / LIGHT[2] * edge * 0.35
    ring = np.column_stack([posed.centre[0] + off[0] + 0.62 * edge * np.cos(a),
                            posed.centre[1] + off[1] + 0.62 * edge * np.sin(a), np.zeros_like(a)])
    px = _project(pose, ring)
    x0, y0 = np.floor(px.min(axis=0)).astype(int) - 6
    x1, y1 = np.ceil(px.max(axis=0)).astype(int) + 7
    h, w = image.shape[:2]
    ix0, iy0, ix1, iy1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if ix1 <= ix0 or iy1 <= iy0:
        return
    m = np.zeros((y1 - y0, x1 - x0), np.float32)
    cv2.fillPoly(m, [np.rint(px - [x0, y0]).astype(np.int32)], 1.0)
    m = cv2.GaussianBlur(m, (0, 0), max(1.0, 0.08 * float(np.ptp(px[:, 0]))))
    sl = m[iy0 - y0 : iy1 - y0, ix0 - x0 : ix1 - x0][:, :, None]
    image[iy0:iy1, ix0:ix1] *= 1 - 0.45 * sl


def _polygon_px(pose: CameraPose, pts3: np.ndarray, n: int = 12) -> np.ndarray:
    """A 3-D polygon's outline projected with the lens (edges subdivided, so they bend as the lens bends)."""
    out = []
    for i in range(len(pts3)):
        p, q = pts3[i], pts3[(i + 1) % len(pts3)]
        t = np.linspace(0, 1, n, endpoint=False)[:, None]
        out.append(p + (q - p) * t)
    return _project(pose, np.vstack(out))


def _draw_poly(image: np.ndarray, px: np.ndarray, bgr: BGR | np.ndarray, alpha: float = 1.0) -> None:
    h, w = image.shape[:2]
    m = np.zeros((h, w), np.float32)
    cv2.fillPoly(m, [np.rint(px * 16).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    ys, xs = np.nonzero(m)
    if len(ys) == 0:
        return
    sl = (slice(ys.min(), ys.max() + 1), slice(xs.min(), xs.max() + 1))
    a = m[sl][:, :, None] * np.float32(alpha)
    image[sl] = image[sl] * (1 - a) + np.asarray(bgr, np.float32) * a


def tray_polygon_px(tray: Tray, pose: CameraPose) -> np.ndarray:
    """The tray's floor as the camera sees it, (N, 2) pixels: the region to read dice in."""
    hx, hy = tray.size_in[0] / 2, tray.size_in[1] / 2
    floor = tray.to_table(np.array([[-hx, -hy, 0.0], [hx, -hy, 0.0], [hx, hy, 0.0], [-hx, hy, 0.0]]))
    return _polygon_px(pose, floor, 6).astype(np.float32)


def _draw_tray(image: np.ndarray, pose: CameraPose, tray: Tray, rng: np.random.Generator) -> None:
    hx, hy = tray.size_in[0] / 2, tray.size_in[1] / 2
    rim = tray.rim_in
    floor = tray.to_table(np.array([[-hx, -hy, 0.0], [hx, -hy, 0.0], [hx, hy, 0.0], [-hx, hy, 0.0]]))
    inner_top = floor + [0.0, 0.0, tray.wall_in]
    ox, oy = hx + rim, hy + rim
    outer_top = tray.to_table(np.array([[-ox, -oy, tray.wall_in], [ox, -oy, tray.wall_in], [ox, oy, tray.wall_in],
                                        [-ox, oy, tray.wall_in]]))
    outer_bot = outer_top - [0.0, 0.0, tray.wall_in]
    eye = _camera_centre(pose)
    centre = np.array([*tray.centre_in, 0.0])
    # outer walls facing the camera, the rim, the felt, then the inner walls facing the camera
    for i in range(4):
        j = (i + 1) % 4
        quad = np.array([outer_bot[i], outer_bot[j], outer_top[j], outer_top[i]])
        mid = quad.mean(axis=0)
        out = _unit((mid - centre) * [1, 1, 0])
        if float(out @ (eye - mid)) > 0:
            _draw_poly(image, _polygon_px(pose, quad), np.asarray(tray.wall) * 0.7)
    rim_px = _polygon_px(pose, outer_top)
    _draw_poly(image, rim_px, tray.wall)
    floor_px = _polygon_px(pose, floor)
    h, w = image.shape[:2]
    m = np.zeros((h, w), np.float32)
    cv2.fillPoly(m, [np.rint(floor_px * 16).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    ys, xs = np.nonzero(m)
    if len(ys):
        sl = (slice(ys.min(), ys.max() + 1), slice(xs.min(), xs.max() + 1))
        hh, ww = ys.max() - ys.min() + 1, xs.max() - xs.min() + 1
        low = cv2.resize(rng.standard_normal((8, 8)).astype(np.float32), (ww, hh), interpolation=cv2.INTER_CUBIC)
        felt = np.asarray(tray.felt, np.float32) * (1 + 0.06 * low[:, :, None])
        felt = felt + rng.standard_normal((hh, ww, 1)).astype(np.float32) * 4.0
        a = m[sl][:, :, None]
        image[sl] = image[sl] * (1 - a) + felt * a
    for i in range(4):
        j = (i + 1) % 4
        quad = np.array([floor[i], floor[j], inner_top[j], inner_top[i]])
        mid = quad.mean(axis=0)
        inward = _unit((centre - mid) * [1, 1, 0])
        if float(inward @ (eye - mid)) > 0:
            shade = 0.8 + 0.3 * float(np.r_[inward[:2], 0.3] @ LIGHT)
            _draw_poly(image, _polygon_px(pose, quad), np.asarray(tray.wall) * shade)


def _draw_hand(image: np.ndarray, rng: np.random.Generator, towards: np.ndarray, reach_px: float,
               ) -> np.ndarray:
    """A hand leaving the frame: an arm from the nearest frame edge to a palm near `towards`; its mask."""
    h, w = image.shape[:2]
    tx, ty = float(towards[0]), float(towards[1])
    dists = [tx, w - tx, ty, h - ty]
    edge = int(np.argmin(dists))
    start = [(-50.0, ty), (w + 50.0, ty), (tx, -50.0), (tx, h + 50.0)][edge]
    d = _unit(np.array([tx - start[0], ty - start[1]]))
    palm = np.array([tx, ty]) - d * reach_px * 1.1
    side = np.array([-d[1], d[0]]) * reach_px * 0.55
    arm = np.array([np.asarray(start) + side, palm + side, palm - side, np.asarray(start) - side])
    m = np.zeros((h, w), np.float32)
    cv2.fillPoly(m, [np.rint(arm * 16).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    cv2.ellipse(m, (int(palm[0] * 16), int(palm[1] * 16)), (int(reach_px * 0.75 * 16), int(reach_px * 0.6 * 16)),
                math.degrees(math.atan2(d[1], d[0])), 0, 360, 1.0, -1, cv2.LINE_AA, 4)
    for k in range(4):  # fingers
        f0 = palm + d * reach_px * 0.5 + np.array([-d[1], d[0]]) * reach_px * (k - 1.5) * 0.32
        f1 = f0 + d * reach_px * rng.uniform(0.4, 0.8)
        cv2.line(m, (int(f0[0] * 16), int(f0[1] * 16)), (int(f1[0] * 16), int(f1[1] * 16)), 1.0,
                 max(2, int(reach_px * 0.22)), cv2.LINE_AA, 4)
    skin = np.array([125.0, 155.0, 210.0], np.float32) * rng.uniform(0.8, 1.1)
    yy, xx = np.mgrid[0:h, 0:w]
    lit = 0.85 + 0.15 * np.cos((xx * d[1] - yy * d[0]) / max(reach_px, 1.0)).astype(np.float32)
    a = m[:, :, None]
    image[:] = image * (1 - a) + (skin * lit[:, :, None]) * a
    return m


def draw_tray(image: np.ndarray, pose: CameraPose, tray: Tray, dice: Sequence[DieAt], seed: int,
              hand: bool = False, shadows: bool = True) -> tuple[np.ndarray, list[DieTruth]]:
    """The tray and its dice drawn into `image` (a frame seen by `pose`'s camera; not changed), float32, and
    the truth of every die in the order given. hand: a hand reaches in from the nearest frame edge over one
    die (its truth's `visible` drops); shadows: each die's soft shadow on the felt."""
    rng = np.random.default_rng(seed)
    out = image.astype(np.float32)
    _draw_tray(out, pose, tray, rng)
    eye = _camera_centre(pose)
    posed = [_pose(d, tray, rng) for d in dice]
    for d, p in zip(dice, posed, strict=True):
        if shadows:
            _shadow(out, pose, p, d.edge)
    drawn: list[tuple[int, tuple[np.ndarray, tuple[int, int], DieTruth] | None]] = []
    order = sorted(range(len(dice)), key=lambda i: -float(np.linalg.norm(posed[i].centre - eye)))
    for i in order:
        drawn.append((i, _draw_die(out, pose, dice[i], posed[i], rng)))
    truths: dict[int, DieTruth] = {}
    hand_mask = None
    if hand and dice:
        k = int(rng.integers(len(dice)))
        c = _project(pose, posed[k].centre[None])[0]
        size = float(np.ptp(_project(pose, posed[k].verts)[:, 0]))
        hand_mask = _draw_hand(out, rng, c, size * rng.uniform(0.8, 1.2))
    # nearer dice hide farther ones: each die's share left visible
    cover = np.zeros(out.shape[:2], np.float32) if hand_mask is None else hand_mask.copy()
    for i, res in reversed(drawn):
        if res is None:
            continue
        mask, (x0, y0), t = res
        H, W = mask.shape
        full = np.zeros(out.shape[:2], np.float32)
        ix0, iy0, ix1, iy1 = max(0, x0), max(0, y0), min(out.shape[1], x0 + W), min(out.shape[0], y0 + H)
        full[iy0:iy1, ix0:ix1] = mask[iy0 - y0 : iy1 - y0, ix0 - x0 : ix1 - x0]
        area = float(mask.sum())
        seen = float((full * (1 - cover)).sum()) / area if area > 0 else 0.0
        face = _face_seen(pose, posed[i], cover)
        cover = np.maximum(cover, full)
        truths[i] = replace(t, visible=seen, face_visible=face)
    result = [truths[i] for i in range(len(dice)) if i in truths]
    return out, result


def _finish(image: np.ndarray, rng: np.random.Generator, blur_px: float, noise: float,
            jpeg: int | None) -> np.ndarray:
    if blur_px > 0:
        image = cv2.GaussianBlur(image, (0, 0), blur_px)
    if noise > 0:
        image = image + rng.standard_normal(image.shape, dtype=np.float32) * np.float32(noise)
    out = np.clip(np.rint(image), 0, 255).astype(np.uint8)
    if jpeg is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg)])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def render_table_with_tray(scene: Scene, tray: Tray, dice: Sequence[DieAt], seed: int, hand: bool = False,
                           ) -> tuple[Rendered, list[DieTruth]]:
    """`render_scene(scene, seed)` with a tray of dice on the table (drawn over the table, so keep it off the
    bases and anchors); the scene's blur, noise and JPEG applied after the tray as `render_scene` does."""
    clean = replace(scene, blur_px=0.0, noise_sigma=0.0, jpeg_quality=None)
    rendered = render_scene(clean, seed)
    pose = CameraPose(scene.camera, np.asarray(scene.rvec), np.asarray(scene.tvec))
    img, truths = draw_tray(rendered.image, pose, tray, dice, seed, hand)
    rng = np.random.default_rng(seed + 1)
    out = _finish(img, rng, scene.blur_px, scene.noise_sigma, scene.jpeg_quality)
    return replace(rendered, image=out), truths


# ------------------------------------------------------------------------------------------- layouts


def roll_dice(tray: Tray, sides: int, count: int, rng: np.random.Generator | int,
              faces: Sequence[int] | None = None, looks: Sequence[str] | None = None, touching: float = 0.3,
              leaning: float = 0.15, glare: float = 0.3, fonts: Sequence[int] | None = None,
              edge_in: float | None = None) -> list[DieAt]:
    """`count` dice thrown into `tray`: faces given or random, looks drawn from `looks` (names in LOOKS;
    default all), a share `touching` set against an earlier die, `leaning` against a wall (tilted), `glare`
    the share with a highlight, `fonts` the font indices to draw from (d20)."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    names = list(looks) if looks is not None else list(LOOKS)
    font_pool = list(fonts) if fonts is not None else list(range(len(NUMERAL_FONTS)))
    edge = edge_in if edge_in is not None else (D6_EDGE_IN if sides == 6 else D20_EDGE_IN)
    span = edge * (1.0 if sides == 6 else 1.9)  # across the die, inches
    hx, hy = tray.size_in[0] / 2 - span * 0.75, tray.size_in[1] / 2 - span * 0.75
    placed: list[DieAt] = []
    for n in range(count):
        value = int(faces[n]) if faces is not None else int(gen.integers(1, sides + 1))
        tilt, tilt_dir = 0.0, 0.0
        for _ in range(400):
            r = gen.random()
            if placed and r < touching:
                other = placed[int(gen.integers(len(placed)))]
                a = gen.uniform(0, 2 * math.pi)
                gap = span * (1.42 if sides == 6 else 0.98) + gen.uniform(0.0, 0.03)  # cubes of any yaw: their
                # corners' circle (1.41 edges) apart
                x, y = other.x + gap * math.cos(a), other.y + gap * math.sin(a)
            elif r < touching + leaning:
                wall = int(gen.integers(4))
                t = gen.uniform(-0.8, 0.8)
                x, y = [(hx + span * 0.3, t * hy), (-hx - span * 0.3, t * hy), (t * hx, hy + span * 0.3),
                        (t * hx, -hy - span * 0.3)][wall]
                tilt = gen.uniform(10, 22) if sides == 6 else gen.uniform(6, 12)
                tilt_dir = [0.0, 180.0, 90.0, -90.0][wall]
            else:
                x, y = gen.uniform(-hx, hx), gen.uniform(-hy, hy)
                tilt = 0.0
            if abs(x) > hx + span * 0.35 or abs(y) > hy + span * 0.35:
                continue
            if all(math.hypot(x - o.x, y - o.y) >= span * (1.41 if sides == 6 else 0.95) for o in placed):
                break
        else:
            raise ValueError(f"{count} dice do not fit in a {tray.size_in[0]:g} x {tray.size_in[1]:g} inch tray.")
        placed.append(DieAt(sides, value, float(x), float(y), float(gen.uniform(0, 360)), float(tilt),
                            float(tilt_dir), LOOKS[names[int(gen.integers(len(names)))]], edge_in,
                            int(font_pool[int(gen.integers(len(font_pool)))]),
                            "dot" if gen.random() < 0.4 else "bar",
                            float(gen.uniform(0.3, 0.8)) if gen.random() < glare else 0.0))
    return placed


def phone_pose(tray: Tray, height_in: float, tilt_deg: float, yaw_deg: float,
               image_size: tuple[int, int] = (1280, 960), hfov_deg: float = 62.0) -> CameraPose:
    """A phone `height_in` above the tray's centre, leaning `tilt_deg` from straight down."""
    from vision.synth.render import camera_looking_at

    cx, cy = tray.centre_in
    return camera_looking_at((2 * cx, 2 * cy), height_in, tilt_deg, yaw_deg, image_size, hfov_deg)


def phone_view(tray: Tray, dice: Sequence[DieAt], seed: int, height_in: float = 9.0, tilt_deg: float = 10.0,
               yaw_deg: float = 0.0, image_size: tuple[int, int] = (1280, 960), hand: bool = False,
               noise: float = 2.0, jpeg: int | None = 88, blur_px: float = 0.6, hfov_deg: float = 62.0) -> TrayView:
    """A close view of the tray as a phone takes it: the table around it, sensor noise, blur and JPEG."""
    pose = phone_pose(tray, height_in, tilt_deg, yaw_deg, image_size, hfov_deg)
    rng = np.random.default_rng(seed)
    w, h = image_size
    table = np.asarray((70.0, 105.0, 85.0), np.float32) * rng.uniform(0.7, 1.3)
    low = cv2.resize(rng.standard_normal((6, 8)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    back = np.clip(table[None, None, :] * (1 + 0.08 * low[:, :, None]), 0, 255).astype(np.float32)
    img, truths = draw_tray(back, pose, tray, dice, seed, hand)
    return TrayView(_finish(img, rng, blur_px, noise, jpeg), truths, tray_polygon_px(tray, pose))


FELTS: tuple[BGR, ...] = ((70.0, 40.0, 35.0), (40.0, 40.0, 40.0), (40.0, 70.0, 40.0), (30.0, 30.0, 110.0),
                          (120.0, 120.0, 115.0), (80.0, 50.0, 90.0))


@dataclass(frozen=True)
class TrayCase:
    """One rendered close view of a tray for tests and the bench: how it was made and what it shows."""

    seed: int
    sides: int
    view: TrayView
    params: dict[str, float] = field(default_factory=dict)


def random_phone_tray(seed: int, sides: int = 20, count: int | None = None, fonts: Sequence[int] | None = None,
                      looks: Sequence[str] | None = None, hand: bool | None = None) -> TrayCase:
    """A random tray photographed close up: felt, dice, phone height (dice ~80-200 px), tilt and yaw."""
    rng = np.random.default_rng(seed)
    tray = Tray((10.0, 10.0), (float(rng.uniform(5.0, 7.0)), float(rng.uniform(3.6, 4.6))), float(rng.uniform(-8, 8)),
                FELTS[int(rng.integers(len(FELTS)))])
    n = int(count) if count is not None else int(rng.integers(3, 8))
    dice = roll_dice(tray, sides, n, rng, looks=looks, fonts=fonts)
    height = float(rng.uniform(5.5, 10.0))
    hand_on = bool(rng.random() < 0.2) if hand is None else hand
    view = phone_view(tray, dice, seed, height, float(rng.uniform(0, 18)), float(rng.uniform(-180, 180)),
                      hand=hand_on, noise=float(rng.uniform(1.0, 3.5)), jpeg=int(rng.integers(75, 95)),
                      blur_px=float(rng.uniform(0.3, 1.0)))
    return TrayCase(seed, sides, view, {"height_in": height})


# ------------------------------------------------------------------------------------- dice on the bare table


def draw_dice_on_table(image: np.ndarray, pose: CameraPose, spot: Tray, dice: Sequence[DieAt], seed: int,
                       shadows: bool = True) -> tuple[np.ndarray, list[DieTruth]]:
    """`dice` lying straight on the table, no tray drawn: `spot` only places them (its centre and yaw; a die's x, y
    are inches from that centre), its felt and walls are unused. Returns the frame (float32; `image` is not
    changed) and each die's truth in the order given (`visible`: the share not hidden by a nearer die)."""
    rng = np.random.default_rng(seed)
    out = image.astype(np.float32)
    eye = _camera_centre(pose)
    posed = [_pose(d, spot, rng) for d in dice]
    if shadows:
        for d, p in zip(dice, posed, strict=True):
            _shadow(out, pose, p, d.edge)
    drawn: list[tuple[int, tuple[np.ndarray, tuple[int, int], DieTruth] | None]] = []
    for i in sorted(range(len(dice)), key=lambda i: -float(np.linalg.norm(posed[i].centre - eye))):
        drawn.append((i, _draw_die(out, pose, dice[i], posed[i], rng)))
    cover = np.zeros(out.shape[:2], np.float32)
    truths: dict[int, DieTruth] = {}
    for i, res in reversed(drawn):
        if res is None:
            continue
        mask, (x0, y0), t = res
        H, W = mask.shape
        full = np.zeros(out.shape[:2], np.float32)
        ix0, iy0, ix1, iy1 = max(0, x0), max(0, y0), min(out.shape[1], x0 + W), min(out.shape[0], y0 + H)
        full[iy0:iy1, ix0:ix1] = mask[iy0 - y0 : iy1 - y0, ix0 - x0 : ix1 - x0]
        area = float(mask.sum())
        truths[i] = replace(t, visible=float((full * (1 - cover)).sum()) / area if area > 0 else 0.0,
                            face_visible=_face_seen(pose, posed[i], cover))
        cover = np.maximum(cover, full)
    return out, [truths[i] for i in range(len(dice)) if i in truths]


def render_table_with_dice(scene: Scene, spot: Tray, dice: Sequence[DieAt], seed: int,
                           ) -> tuple[Rendered, list[DieTruth]]:
    """`render_scene(scene, seed)` with `dice` rolled straight onto the table around `spot`'s centre (no tray; see
    draw_dice_on_table), drawn over whatever lies there; the scene's blur, noise and JPEG applied after them as
    `render_scene` does."""
    clean = replace(scene, blur_px=0.0, noise_sigma=0.0, jpeg_quality=None)
    rendered = render_scene(clean, seed)
    pose = CameraPose(scene.camera, np.asarray(scene.rvec), np.asarray(scene.tvec))
    img, truths = draw_dice_on_table(rendered.image, pose, spot, dice, seed)
    out = _finish(img, np.random.default_rng(seed + 1), scene.blur_px, scene.noise_sigma, scene.jpeg_quality)
    return replace(rendered, image=out), truths
