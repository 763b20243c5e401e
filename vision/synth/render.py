"""The synthetic table: renders a camera's view of a board with anchors, tagged bases, terrain and hands.

Used for tests, sample sessions and benchmarks, so its ground truth is exact: the ideal pinhole image is
drawn first (faces supersampled, depth-buffered), then remapped through the lens distortion; the true
corner pixels are the 3-D corners projected with the same camera and distortion (cv2.projectPoints).
Pixels in OpenCV's convention (top-left pixel centre at (0, 0)); lengths in inches; colours BGR 0-255.

Tags lie flat: a tag at yaw 0 has its bitmap's top edge toward +y, corners 0..3 at centre +
(-s/2,-s/2), (+s/2,-s/2), (+s/2,+s/2), (-s/2,+s/2) (s = black square side), yaw turning it
counter-clockwise seen from above. Bitmaps are the official tag36h11 ones (`vision.tag_family`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.layout import AnchorLayout, default_layout
from vision.synth.figures import (
    Face,
    Figure,
    RimTag,
    TagPose,
    Topper,
    figure_faces,
    rim_tag,
    shadow_outline,
    topper_faces,
    topper_tag,
)
from vision.synth.raster import Canvas
from vision.tag_family import tag_bitmap

BGR = tuple[float, float, float]
MM_PER_INCH = 25.4
SKIN_BGR: BGR = (125.0, 155.0, 210.0)
PAPER_BLACK = 22.0
PAPER_WHITE = 232.0
TABLE_MARGIN_IN = 8.0
"""The table top reaches this far beyond the play area (the anchors sit 0.5-2.5" outside it)."""


@dataclass(frozen=True)
class BasePlacement:
    """A round base with a tag on top. x, y: base centre (table inches); z_in: height of the tag face."""

    tag: int
    x: float
    y: float
    z_in: float = 0.125
    yaw_deg: float = 0.0
    tag_in: float = 0.75
    """Black square side, inches."""
    base_mm: float = 32.0
    colour: BGR = (45.0, 45.0, 150.0)
    tag_offset_in: tuple[float, float] = (0.0, 0.0)
    """Tag centre relative to the base centre, in the base's frame (turned by yaw), inches."""
    base_height_in: float = 0.125
    """The base's own height under the tag face (the cylinder drawn), inches."""
    figure: Figure | None = None
    """A miniature standing on the base (vision.synth.figures): it hides what is behind it."""
    topper: Topper | None = None
    """A pin and card above the figure carrying `tag` (then z_in is the base top and tag_offset_in unused)."""
    more_tags: tuple[RimTag, ...] = ()
    """Extra tags glued flat on the base top at their offsets (base frame)."""

    @property
    def tag_center_in(self) -> tuple[float, float]:
        a = math.radians(self.yaw_deg)
        dx, dy = self.tag_offset_in
        return (
            self.x + dx * math.cos(a) - dy * math.sin(a),
            self.y + dx * math.sin(a) + dy * math.cos(a),
        )

    @property
    def floor_z_in(self) -> float:
        """Height of the base's underside (what it stands on), inches."""
        return max(0.0, self.z_in - self.base_height_in)

    @property
    def radius_in(self) -> float:
        return self.base_mm / MM_PER_INCH / 2.0

    def tag_poses(self) -> list[tuple[int, TagPose, str]]:
        """Every tag on this base: (id, where it lies, mount: "base", "topper" or "rim"), the main tag first."""
        if self.topper is not None:
            main = topper_tag(self.topper, self.x, self.y, self.z_in, self.floor_z_in, self.yaw_deg, self.tag_in)
            out = [(self.tag, main, "topper")]
        else:
            tx, ty = self.tag_center_in
            a = math.radians(self.yaw_deg)
            ex, ey = np.array([math.cos(a), math.sin(a), 0.0]), np.array([-math.sin(a), math.cos(a), 0.0])
            out = [(self.tag, TagPose(np.array([tx, ty, self.z_in]), ex, ey, self.tag_in), "base")]
        out += [(rim.tag, rim_tag(rim, self.x, self.y, self.z_in, self.yaw_deg), "rim") for rim in self.more_tags]
        return out


@dataclass(frozen=True)
class Block:
    """Terrain: a polygon (table inches) extruded from base_z_in up to base_z_in + height_in."""

    polygon: tuple[tuple[float, float], ...]
    height_in: float
    colour: BGR = (110.0, 125.0, 135.0)
    base_z_in: float = 0.0


@dataclass(frozen=True)
class Hand:
    """A hand (a skin-coloured palm with its arm reaching in from beyond the table) at height z, inches."""

    x: float
    y: float
    z: float
    radius_in: float = 1.8
    colour: BGR = SKIN_BGR


class CameraPose(NamedTuple):
    """A camera and where it is: rvec/tvec map table inches into the camera frame (OpenCV)."""

    camera: CameraModel
    rvec: np.ndarray
    tvec: np.ndarray


@dataclass(frozen=True, eq=False)
class Scene:
    """Everything in view. `layout` None: the default anchors for `board`."""

    board: tuple[float, float]
    camera: CameraModel
    rvec: np.ndarray
    tvec: np.ndarray
    layout: AnchorLayout | None = None
    anchor_turns: Mapping[int, int] = field(default_factory=dict)
    """Quarter turns (counter-clockwise) of each anchor as it lies on the table."""
    bases: tuple[BasePlacement, ...] = ()
    terrain: tuple[Block, ...] = ()
    hands: tuple[Hand, ...] = ()
    light_gradient: float = 0.15
    """Fractional darkening across the frame (0: even light)."""
    blur_px: float = 0.0
    """Gaussian blur sigma, px (focus and motion)."""
    noise_sigma: float = 1.5
    """Sensor noise, grey levels (one sigma)."""
    jpeg_quality: int | None = None
    """Compress and decompress at this JPEG quality (None: no compression)."""
    table_bgr: BGR = (70.0, 105.0, 85.0)
    supersample: int = 4

    @classmethod
    def at(cls, pose: CameraPose, board: tuple[float, float], **kwargs: object) -> Scene:
        return cls(board=board, camera=pose.camera, rvec=pose.rvec, tvec=pose.tvec, **kwargs)  # type: ignore[arg-type]

    def anchor_layout(self) -> AnchorLayout:
        return self.layout if self.layout is not None else default_layout(*self.board)


@dataclass(frozen=True, eq=False)
class TagTruth:
    """Ground truth of one tag in a rendered frame."""

    id: int
    corners_px: np.ndarray
    """(4, 2) true corners of the black square (order of the module docstring), px, with distortion."""
    center_px: np.ndarray
    """(2,) the projected tag centre, px."""
    center_in: tuple[float, float, float]
    """Tag centre (x, y, z) in table inches."""
    yaw_deg: float
    tag_in: float
    visible_fraction: float
    """Share of the black square the camera sees (hands, terrain and the frame edge hide the rest)."""
    anchor: bool
    base_in: tuple[float, float] | None
    """Base centre for base tags, inches."""
    unit: int | None = None
    """The main tag of the base this tag is on (its unit); None for anchors."""
    mount: str = "anchor"
    """Where the tag is: "anchor", "base" (flat on the base top), "topper" (a card on a pin) or "rim"."""
    whole: bool = False
    """True when the camera sees the black square and its white border whole: nothing in front, in frame."""

    @property
    def side_px(self) -> float:
        c = self.corners_px
        return float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)))


class BaseTruth(NamedTuple):
    """Ground truth of one base: its unit (main tag id), centre and underside height (table inches), yaw,
    and the ids of every tag on it (main first)."""

    unit: int
    center_in: tuple[float, float, float]
    yaw_deg: float
    tags: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Rendered:
    """A rendered frame (uint8 BGR) and its ground truth."""

    image: np.ndarray
    tags: dict[int, TagTruth]
    camera: CameraModel
    rvec: np.ndarray
    tvec: np.ndarray
    bases: dict[int, BaseTruth] = field(default_factory=dict)
    """Every base in the scene by its unit (main tag id)."""


def camera_looking_at(
    board: tuple[float, float],
    height_in: float,
    tilt_deg: float,
    yaw_deg: float,
    image_size: tuple[int, int],
    hfov_deg: float,
    dist: np.ndarray | list[float] | None = None,
) -> CameraPose:
    """A camera `height_in` above the table looking at the board's centre.

    tilt_deg: angle of the optical axis from straight down; the camera leans back toward -y (the near
    player's side) turned by yaw_deg about the board centre. At yaw 0 the image shows +x to the right and
    +y up. hfov_deg: horizontal field of view; square pixels, principal point at the image centre.
    """
    w, h = image_size
    f = (w / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
    K = np.array([[f, 0.0, (w - 1) / 2.0], [0.0, f, (h - 1) / 2.0], [0.0, 0.0, 1.0]])
    d = np.zeros(5) if dist is None else np.asarray(dist, np.float64).ravel()
    yaw, tilt = math.radians(yaw_deg), math.radians(tilt_deg)
    target = np.array([board[0] / 2.0, board[1] / 2.0, 0.0])
    away = np.array([math.sin(yaw), -math.cos(yaw), 0.0])
    centre = target + height_in * math.tan(tilt) * away + np.array([0.0, 0.0, height_in])
    z_c = (target - centre) / np.linalg.norm(target - centre)
    x_c = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    y_c = np.cross(z_c, x_c)
    R = np.vstack([x_c, y_c, z_c])
    rvec, _ = cv2.Rodrigues(R)
    tvec = -R @ centre
    return CameraPose(CameraModel((w, h), K, d, 0.0), rvec.reshape(3), tvec.reshape(3))


def camera_framing_board(
    board: tuple[float, float],
    height_in: float,
    tilt_deg: float,
    yaw_deg: float,
    image_size: tuple[int, int],
    dist: np.ndarray | list[float] | None = None,
    layout: AnchorLayout | None = None,
    margin: float = 0.03,
) -> CameraPose:
    """`camera_looking_at` with the narrowest field of view (1 degree steps) that shows every anchor with
    its white border, at least `margin` of the frame inside each edge. ValueError if none up to 130 deg."""
    lay = layout if layout is not None else default_layout(*board)
    pts = np.vstack(
        [_square(a.centre[0], a.centre[1], a.z_in, a.size_in * 10.0 / 8.0, 0.0) for a in lay.anchors.values()]
    )
    w, h = image_size
    for hfov in range(30, 131):
        pose = camera_looking_at(board, height_in, tilt_deg, yaw_deg, image_size, float(hfov), dist)
        cam_pts = pts @ cv2.Rodrigues(pose.rvec)[0].T + pose.tvec
        if np.any(cam_pts[:, 2] <= 0):
            continue
        proj, _ = cv2.projectPoints(pts, pose.rvec, pose.tvec, pose.camera.K, pose.camera.dist)
        p = proj.reshape(-1, 2)
        if (
            p[:, 0].min() >= margin * w
            and p[:, 0].max() <= (1 - margin) * w
            and p[:, 1].min() >= margin * h
            and p[:, 1].max() <= (1 - margin) * h
        ):
            return pose
    raise ValueError(
        f"No field of view up to 130 degrees shows the whole board from {height_in:g} inches up."
    )


# ---------------------------------------------------------------------------------------------- drawing


def _shade(bgr: BGR, factor: float) -> BGR:
    return (bgr[0] * factor, bgr[1] * factor, bgr[2] * factor)


def _circle(x: float, y: float, z: float, r: float, n: int = 48) -> np.ndarray:
    a = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    return np.column_stack([x + r * np.cos(a), y + r * np.sin(a), np.full(n, z)])


def _square(cx: float, cy: float, z: float, side: float, yaw_deg: float) -> np.ndarray:
    """Corners 0..3 (bottom-left, bottom-right, top-right, top-left of the upright square), (4, 3)."""
    a = math.radians(yaw_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    unit = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) * side
    xy = unit @ rot.T + [cx, cy]
    return np.column_stack([xy, np.full(4, z)])


@functools.lru_cache(maxsize=256)
def _tag_texture(tag_id: int, px_per_cell: int) -> np.ndarray:
    bitmap = tag_bitmap(tag_id)
    grey = np.where(bitmap > 127, PAPER_WHITE, PAPER_BLACK).astype(np.float32)
    big = cv2.resize(grey, None, fx=px_per_cell, fy=px_per_cell, interpolation=cv2.INTER_NEAREST)
    tex = np.repeat(big[:, :, None], 3, axis=2)
    tex.setflags(write=False)
    return tex


class _Drawer:
    """Draws a scene's objects into a canvas, numbering faces; remembers each tag's face id."""

    def __init__(self, canvas: Canvas) -> None:
        self.canvas = canvas
        self.next_face = 1
        self.tag_faces: dict[int, int] = {}

    def face(self) -> int:
        self.next_face += 1
        return self.next_face - 1

    def tag(self, tag_id: int, cx: float, cy: float, z: float, side: float, yaw_deg: float) -> None:
        full = side * 10.0 / 8.0
        sq = _square(cx, cy, z, full, yaw_deg)
        px = self.canvas.project(sq)
        span = float(np.max(np.linalg.norm(px - np.roll(px, -1, axis=0), axis=1)))
        per_cell = int(np.clip(math.ceil(span * self.canvas.supersample / 10.0), 2, 96))
        # texture corner order: top-left, top-right, bottom-right, bottom-left of the upright bitmap
        quad = sq[[3, 2, 1, 0]]
        face = self.face()
        self.tag_faces[tag_id] = face
        self.canvas.draw_texture(quad, _tag_texture(tag_id, per_cell), face)

    def tag_at(self, tag_id: int, pose: TagPose) -> None:
        """A tag lying anywhere (a topper's tilted card): its white-bordered bitmap over `pose`."""
        full = pose.corners(10.0 / 8.0)
        if not self.canvas.visible(full):
            self.tag_faces[tag_id] = self.face()
            return
        px = self.canvas.project(full)
        span = float(np.max(np.linalg.norm(px - np.roll(px, -1, axis=0), axis=1)))
        per_cell = int(np.clip(math.ceil(span * self.canvas.supersample / 10.0), 2, 96))
        face = self.face()
        self.tag_faces[tag_id] = face
        self.canvas.draw_texture(full[[3, 2, 1, 0]], _tag_texture(tag_id, per_cell), face)

    def anchor(self, tag_id: int, cx: float, cy: float, z: float, side: float, turns: int) -> None:
        self.canvas.draw_polygon(_square(cx, cy, z, side * 1.5, 0.0), (PAPER_WHITE,) * 3, self.face())
        self.tag(tag_id, cx, cy, z, side, 90.0 * turns)

    def base(self, b: BasePlacement) -> None:
        r = b.base_mm / MM_PER_INCH / 2.0
        top, bottom = b.z_in, max(0.0, b.z_in - b.base_height_in)
        ring_top = _circle(b.x, b.y, top, r)
        if top - bottom > 1e-6:
            ring_bottom = _circle(b.x, b.y, bottom, r)
            both = np.vstack([ring_top, ring_bottom])
            if self.canvas.visible(both):
                hull = cv2.convexHull(self.canvas.project(both).astype(np.float32)).reshape(-1, 2)
                mid = _circle(b.x, b.y, (top + bottom) / 2.0, r, 3)
                self.canvas.draw_outline(hull.astype(np.float64), mid, _shade(b.colour, 0.6), self.face())
        self.canvas.draw_polygon(ring_top, b.colour, self.face())
        if b.topper is None:
            tx, ty = b.tag_center_in
            self.tag(b.tag, tx, ty, top, b.tag_in, b.yaw_deg)
        for rim in b.more_tags:
            self.tag_at(rim.tag, rim_tag(rim, b.x, b.y, top, b.yaw_deg))
        if b.figure is None and b.topper is None:
            return
        # the figure, the pin and the card: far faces first, so that edges blend over what is behind them
        items: list[tuple[float, Callable[[], None]]] = []

        def depth(pts: np.ndarray) -> float:
            return float(np.mean(self.canvas.to_camera(pts)[:, 2]))

        solid: list[Face] = []
        if b.figure is not None:
            solid += figure_faces(b.figure, b.x, b.y, top, b.yaw_deg, r)
        if b.topper is not None:
            card_tag = topper_tag(b.topper, b.x, b.y, top, bottom, b.yaw_deg, b.tag_in)
            pin, card = topper_faces(b.topper, card_tag, b.x, b.y, top)
            solid += pin

            def card_and_tag(card_pts: np.ndarray = card.pts, bgr: BGR = card.colour) -> None:
                self.canvas.draw_polygon(card_pts, bgr, self.face())
                self.tag_at(b.tag, card_tag)

            items.append((depth(card.pts), card_and_tag))
        for f in solid:
            items.append((depth(f.pts), functools.partial(self.canvas.draw_polygon, f.pts, f.colour, self.face())))
        for _, draw in sorted(items, key=lambda it: -it[0]):
            draw()

    def block(self, blk: Block) -> None:
        poly = np.asarray(blk.polygon, np.float64)
        z0, z1 = blk.base_z_in, blk.base_z_in + blk.height_in
        area = 0.5 * float(
            np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1])
        )
        light = np.array([-0.5, 0.8])
        light /= np.linalg.norm(light)
        walls = []
        for i in range(len(poly)):
            p, q = poly[i], poly[(i + 1) % len(poly)]
            edge = q - p
            outward = np.array([edge[1], -edge[0]]) * (1.0 if area > 0 else -1.0)
            outward /= max(float(np.linalg.norm(outward)), 1e-12)
            quad = np.array([[p[0], p[1], z0], [q[0], q[1], z0], [q[0], q[1], z1], [p[0], p[1], z1]])
            depth = float(np.mean(self.canvas.to_camera(quad)[:, 2]))
            walls.append((depth, quad, 0.55 + 0.3 * float(outward @ light)))
        for _, quad, factor in sorted(walls, key=lambda w: -w[0]):
            self.canvas.draw_polygon(quad, _shade(blk.colour, factor), self.face())
        top = np.column_stack([poly, np.full(len(poly), z1)])
        self.canvas.draw_polygon(top, blk.colour, self.face())

    def hand(self, hd: Hand, board: tuple[float, float]) -> None:
        centre = np.array([board[0] / 2.0, board[1] / 2.0])
        out = np.array([hd.x, hd.y]) - centre
        out = out / max(float(np.linalg.norm(out)), 1e-9)
        side = np.array([-out[1], out[0]]) * hd.radius_in * 0.55
        start = np.array([hd.x, hd.y])
        end = start + out * (max(board) + 2 * TABLE_MARGIN_IN)
        arm = np.array([start + side, end + side, end - side, start - side])
        z_arm = hd.z + 0.5
        self.canvas.draw_polygon(
            np.column_stack([arm, np.full(4, z_arm)]), _shade(hd.colour, 0.85), self.face()
        )
        self.canvas.draw_polygon(_circle(hd.x, hd.y, hd.z, hd.radius_in), _shade(hd.colour, 0.9), self.face())
        inner = _circle(hd.x, hd.y, hd.z, hd.radius_in * 0.7)
        self.canvas.draw_polygon(inner, hd.colour, self.face())


# ----------------------------------------------------------------------------------------- distortion


def _undistort_px(K: np.ndarray, dist: np.ndarray, pts: np.ndarray) -> np.ndarray:
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-12)
    out = cv2.undistortPoints(pts.reshape(-1, 1, 2).astype(np.float64), K, dist, None, None, K, criteria)
    return np.asarray(out).reshape(-1, 2)


def _canvas_offset(camera: CameraModel) -> tuple[tuple[int, int], tuple[int, int]]:
    """(offset, size) of the ideal canvas holding every point the distorted frame shows."""
    w, h = camera.image_size
    if not np.any(camera.dist):
        return (0, 0), (w, h)
    n = 64
    xs, ys = np.linspace(-0.5, w - 0.5, n), np.linspace(-0.5, h - 0.5, n)
    border = np.vstack(
        [
            np.column_stack([xs, np.full(n, -0.5)]),
            np.column_stack([xs, np.full(n, h - 0.5)]),
            np.column_stack([np.full(n, -0.5), ys]),
            np.column_stack([np.full(n, w - 0.5), ys]),
        ]
    )
    ideal = _undistort_px(camera.K, camera.dist, border)
    lo = np.minimum(ideal.min(axis=0), [0.0, 0.0])
    hi = np.maximum(ideal.max(axis=0), [w, h])
    lo = np.maximum(lo, [-w, -h])
    hi = np.minimum(hi, [2 * w, 2 * h])
    ox, oy = int(math.ceil(-lo[0])) + 3, int(math.ceil(-lo[1])) + 3
    return (ox, oy), (int(math.ceil(hi[0])) + ox + 3, int(math.ceil(hi[1])) + oy + 3)


def _upsample_grid(coarse: np.ndarray, step: int, w: int, h: int) -> np.ndarray:
    """Bilinear (separable) upsampling of values given at pixels (j*step, i*step) to every pixel."""
    xs = np.arange(w, dtype=np.float64) / step
    ys = np.arange(h, dtype=np.float64) / step
    x0 = np.floor(xs).astype(np.intp)
    y0 = np.floor(ys).astype(np.intp)
    fx, fy = (xs - x0).astype(coarse.dtype), (ys - y0).astype(coarse.dtype)
    rows = coarse[:, x0] * (1 - fx) + coarse[:, x0 + 1] * fx
    return rows[y0] * (1 - fy)[:, None] + rows[y0 + 1] * fy[:, None]


class _Lens(NamedTuple):
    """Bilinear taps on the ideal canvas for every pixel of the distorted frame."""

    first_tap: np.ndarray
    """(h*w,) flat canvas index of the top-left tap."""
    weights: np.ndarray
    """(4, h*w, 1) float32 weights of the taps (0,0), (0,1), (1,0), (1,1)."""
    canvas_width: int


@functools.lru_cache(maxsize=4)
def _lens(
    k_bytes: bytes, d_bytes: bytes, size: tuple[int, int], offset: tuple[int, int], canvas: tuple[int, int]
) -> _Lens:
    """Where each distorted pixel lies on the ideal canvas.

    Exact (iterated) undistortion on a 4 px grid, bilinear in between: under 0.005 px for the lenses a
    webcam has. (cv2.remap is not used: it rounds coordinates to 1/32 px.)
    """
    K = np.frombuffer(k_bytes, np.float64).reshape(3, 3)
    dist = np.frombuffer(d_bytes, np.float64)
    w, h = size
    cw, ch = canvas
    step = 4
    gx = np.arange(0, w + 2 * step, step, dtype=np.float64)
    gy = np.arange(0, h + 2 * step, step, dtype=np.float64)
    grid = np.stack(np.meshgrid(gx, gy), axis=-1).reshape(-1, 2)
    ideal = _undistort_px(K, dist, grid).reshape(len(gy), len(gx), 2) + np.asarray(offset, np.float64)
    coarse = ideal.astype(np.float32)  # float32 holds canvas coordinates to ~0.0003 px
    mx = np.clip(_upsample_grid(coarse[:, :, 0], step, w, h), 0.0, cw - 1.001).ravel()
    my = np.clip(_upsample_grid(coarse[:, :, 1], step, w, h), 0.0, ch - 1.001).ravel()
    x0 = mx.astype(np.intp)
    y0 = my.astype(np.intp)
    fx = mx - x0
    fy = my - y0
    weights = np.empty((4, w * h, 1), np.float32)
    weights[0, :, 0] = (1 - fx) * (1 - fy)
    weights[1, :, 0] = fx * (1 - fy)
    weights[2, :, 0] = (1 - fx) * fy
    weights[3, :, 0] = fx * fy
    index = y0 * cw + x0
    index.setflags(write=False)
    weights.setflags(write=False)
    return _Lens(index, weights, cw)


def _through_lens(image: np.ndarray, lens: _Lens, size: tuple[int, int]) -> np.ndarray:
    """The ideal canvas (H, W, 3 float32) as the distorted frame sees it."""
    flat = image.reshape(-1, image.shape[2])
    i, wt, cw = lens.first_tap, lens.weights, lens.canvas_width
    out = flat[i] * wt[0]
    out += flat[i + 1] * wt[1]
    out += flat[i + cw] * wt[2]
    out += flat[i + cw + 1] * wt[3]
    return out.reshape(size[1], size[0], image.shape[2])


# ------------------------------------------------------------------------------------------- textures


def _table_texture(board: tuple[float, float], bgr: BGR, rng: np.random.Generator) -> np.ndarray:
    px_per_in = 8
    w = int((board[0] + 2 * TABLE_MARGIN_IN) * px_per_in)
    h = int((board[1] + 2 * TABLE_MARGIN_IN) * px_per_in)
    low = rng.standard_normal((max(2, h // 40), max(2, w // 40), 1)).astype(np.float32)
    low = cv2.resize(low, (w, h), interpolation=cv2.INTER_CUBIC)[:, :, None] * 8.0
    grain = rng.standard_normal((h, w, 1)).astype(np.float32) * 3.0
    return np.asarray(bgr, np.float32)[None, None, :] + low + grain


def _lighting(size: tuple[int, int], strength: float, rng: np.random.Generator) -> np.ndarray:
    w, h = size
    angle = rng.uniform(0.0, 2.0 * math.pi)
    c, s = math.cos(angle), math.sin(angle)
    xn = np.linspace(-1.0, 1.0, w, dtype=np.float32)
    yn = np.linspace(-1.0, 1.0, h, dtype=np.float32)
    ramp = (c * xn[None, :] + s * yn[:, None]) / (abs(c) + abs(s))
    return (1.0 - strength * (0.5 + 0.5 * ramp)).astype(np.float32)


# ---------------------------------------------------------------------------------------------- render


def render_scene(scene: Scene, rng: np.random.Generator | int) -> Rendered:
    """Draw `scene` as the camera sees it; seeded (same scene and seed -> same image)."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    cam = scene.camera
    w, h = cam.image_size
    R, _ = cv2.Rodrigues(np.asarray(scene.rvec, np.float64).reshape(3, 1))
    t = np.asarray(scene.tvec, np.float64).reshape(3)
    (ox, oy), canvas_size = _canvas_offset(cam)
    K_c = cam.K.copy()
    K_c[0, 2] += ox
    K_c[1, 2] += oy
    canvas = Canvas.blank(K_c, R, t, canvas_size, scene.supersample)

    bw, bd = scene.board
    m = TABLE_MARGIN_IN
    table_quad = np.array([[-m, bd + m, 0.0], [bw + m, bd + m, 0.0], [bw + m, -m, 0.0], [-m, -m, 0.0]])
    floor = (38.0, 42.0, 48.0)
    canvas.draw_background(table_quad, _table_texture(scene.board, scene.table_bgr, gen), floor)
    canvas.colour[~np.isfinite(canvas.depth)] = floor
    for b in scene.bases:
        if b.figure is not None and b.floor_z_in < 1e-6:
            canvas.darken(shadow_outline(b.figure, b.x, b.y, 0.0, b.radius_in), 0.6, 0.12)

    drawer = _Drawer(canvas)
    layout = scene.anchor_layout()
    jobs: list[tuple[float, Callable[[], None]]] = []

    def depth_of(x: float, y: float, z: float) -> float:
        return float(canvas.to_camera(np.array([[x, y, z]]))[0, 2])

    for a in layout.anchors.values():
        turns = int(scene.anchor_turns.get(a.id, 0))
        jobs.append(
            (
                depth_of(a.centre[0], a.centre[1], a.z_in) + 1e3,  # flat on the table: drawn first
                functools.partial(drawer.anchor, a.id, a.centre[0], a.centre[1], a.z_in, a.size_in, turns),
            )
        )
    for blk in scene.terrain:
        cx, cy = np.mean(np.asarray(blk.polygon, np.float64), axis=0)
        jobs.append((depth_of(cx, cy, blk.base_z_in), functools.partial(drawer.block, blk)))
    for b in scene.bases:
        jobs.append((depth_of(b.x, b.y, b.z_in), functools.partial(drawer.base, b)))
    for hd in scene.hands:
        jobs.append((depth_of(hd.x, hd.y, hd.z) - 1e3, functools.partial(drawer.hand, hd, scene.board)))
    for _, job in sorted(jobs, key=lambda j: -j[0]):
        job()

    # ground truth
    truths: dict[int, TagTruth] = {}
    frame = np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]], np.float32)
    placed: list[tuple[int, np.ndarray, np.ndarray, float, float, BasePlacement | None, str]] = []
    for a in layout.anchors.values():
        turns = int(scene.anchor_turns.get(a.id, 0))
        centre = np.array([a.centre[0], a.centre[1], a.z_in])
        corners = _square(a.centre[0], a.centre[1], a.z_in, a.size_in, 90.0 * turns)
        placed.append((a.id, corners, centre, a.size_in, 90.0 * turns, None, "anchor"))
    bases: dict[int, BaseTruth] = {}
    for b in scene.bases:
        on_base = b.tag_poses()
        bases[b.tag] = BaseTruth(b.tag, (b.x, b.y, b.floor_z_in), b.yaw_deg, tuple(t for t, _, _ in on_base))
        for tag_id, pose, mount in on_base:
            if mount == "base":  # as ever: the flat square through _square (exact same numbers)
                tx, ty = float(pose.centre[0]), float(pose.centre[1])
                corners = _square(tx, ty, b.z_in, b.tag_in, b.yaw_deg)
            else:
                corners = pose.corners()
            placed.append((tag_id, corners, pose.centre, pose.side, b.yaw_deg, b, mount))
    for tag_id, corners3, centre3, side, yaw, on, mount in placed:
        cx, cy, z = (float(v) for v in centre3)
        pts = np.vstack([corners3, [[cx, cy, z]]])
        proj, _ = cv2.projectPoints(pts, scene.rvec, scene.tvec, cam.K, cam.dist)
        proj = proj.reshape(-1, 2)
        seen = canvas.coverage_of(corners3, drawer.tag_faces[tag_id]) if canvas.visible(corners3) else 0.0
        quad = proj[:4].astype(np.float32)
        area = abs(float(cv2.contourArea(quad)))
        if area > 0:
            inter, _ = cv2.intersectConvexConvex(quad, frame)
            seen *= min(1.0, float(inter) / area)
        # the white border too (half a cell in from its outer edge): a spear across it spoils the read
        bordered = centre3 + (corners3 - centre3) * (9.0 / 8.0)
        whole = seen > 0.999 and canvas.visible(bordered)
        whole = whole and canvas.coverage_of(bordered, drawer.tag_faces[tag_id]) > 0.999
        truths[tag_id] = TagTruth(
            id=tag_id,
            corners_px=proj[:4].copy(),
            center_px=proj[4].copy(),
            center_in=(cx, cy, z),
            yaw_deg=yaw,
            tag_in=side,
            visible_fraction=seen,
            anchor=on is None,
            base_in=None if on is None else (on.x, on.y),
            unit=None if on is None else on.tag,
            mount=mount,
            whole=bool(whole),
        )

    # lens, light, blur, noise, compression
    if np.any(cam.dist):
        lens = _lens(cam.K.tobytes(), cam.dist.tobytes(), (w, h), (ox, oy), canvas_size)
        image = _through_lens(canvas.colour, lens, (w, h))
    else:
        image = canvas.colour[oy : oy + h, ox : ox + w]
    if scene.light_gradient > 0:
        image = image * _lighting((w, h), scene.light_gradient, gen)[:, :, None]
    if scene.blur_px > 0:
        image = cv2.GaussianBlur(image, (0, 0), scene.blur_px)
    if scene.noise_sigma > 0:
        image = image + gen.standard_normal(image.shape, dtype=np.float32) * np.float32(scene.noise_sigma)
    out = np.clip(np.rint(image), 0, 255).astype(np.uint8)
    if scene.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(scene.jpeg_quality)])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return Rendered(
        image=out,
        tags=truths,
        camera=cam,
        rvec=np.asarray(scene.rvec),
        tvec=np.asarray(scene.tvec),
        bases=bases,
    )
