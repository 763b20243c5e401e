"""Miniatures on the synthetic table: a figure standing on its base, a topper (pin and card) that carries the
base's tag above the figure's head, and extra tags glued flat on a base's rim.

The tag's own axes, which are the axes a player measures a tag's offset in: a tag lying flat at yaw 0 has
its printed bitmap's top edge toward +y and its right edge (as printed, read the right way up) toward +x.
So the tag's +y points from its centre toward the bitmap's top edge and its +x to the bitmap's right; the
base's yaw turns the tag, the figure and everything on the base counter-clockwise seen from above. An offset
(dx, dy) (`tag_offset_in`, `RimTag.offset_in`) is the tag centre from the base centre along those axes:
(0, 0.66) is a tag 0.66" from the centre toward the printed bitmap's top edge.

Everything here is geometry in table inches: planar faces (`Face`: an (N, 3) polygon and a flat-shaded
colour) that `vision.synth.render` draws with its depth-buffered rasteriser, so a figure really hides what is
behind it from the camera (its own base's tag, a neighbour's rim tag), and the 3-D corners of a topper's tag
for the ground truth. Solids are stacks of rings of one shape (scaled and shifted only), so every side is a
planar trapezoid. No randomness: a figure looks the same in every frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

BGR = tuple[float, float, float]
SKIN: BGR = (110.0, 140.0, 195.0)
METAL: BGR = (150.0, 150.0, 155.0)
WOOD: BGR = (40.0, 75.0, 105.0)
BRASS: BGR = (55.0, 135.0, 170.0)
CARD_WHITE: BGR = (232.0, 232.0, 232.0)
LIGHT = np.array([-0.35, 0.45, 0.82]) / np.linalg.norm([-0.35, 0.45, 0.82])
"""Where the light comes from (a unit vector, table frame): above, a little to the -x and +y side."""
TAG_CELLS_OVER_BLACK = 10.0 / 8.0
"""A tag36h11 tag with its white border is 10 cells across, its black square 8."""


@dataclass(frozen=True)
class Figure:
    """A miniature standing on its base: legs, a tunic and torso, arms, a head with a helmet, a shield.

    height_in: from the base top to the top of the head. width_in: across the shoulders. colour: the tunic
    (BGR; legs and belt are darker shades of it). reach_in: an arm's spear reaching this far past the base
    edge (None: no spear) toward reach_deg, degrees counter-clockwise from the base's +x in the base's frame
    (turned with the base's yaw). facing_deg: where the figure looks, same frame (90: the tag's +y).
    stance_in: the feet's centre from the base centre, base frame, inches.
    """

    height_in: float = 1.35
    width_in: float = 0.5
    colour: BGR = (45.0, 45.0, 150.0)
    reach_in: float | None = None
    reach_deg: float = 90.0
    facing_deg: float = 90.0
    stance_in: tuple[float, float] = (0.0, 0.0)
    shield: bool = True


@dataclass(frozen=True)
class Topper:
    """A pin from the base top up to a small flat card carrying the base's tag above the figure's head.

    height_in: the tag face's height above the base's underside (above the table for a base standing on
    it): the roster's `base_height_in`. lean_deg: how far the pin leans from upright (the card tilts with it,
    its centre shifted by ~pin length * sin(lean)); lean_dir_deg: toward where, degrees counter-clockwise from
    the base's +x in the base frame. margin_in: white card beyond the tag's own white border.
    """

    height_in: float = 1.85
    lean_deg: float = 0.0
    lean_dir_deg: float = 0.0
    margin_in: float = 0.06
    pin_in: float = 0.045
    """The pin's thickness, inches."""


@dataclass(frozen=True)
class RimTag:
    """An extra tag glued flat on the base top: id, centre offset (base frame, the tag's axes), black side."""

    tag: int
    offset_in: tuple[float, float]
    tag_in: float


class Face(NamedTuple):
    """A planar polygon (N, 3 table inches) and its colour (BGR, shaded)."""

    pts: np.ndarray
    colour: BGR


class TagPose(NamedTuple):
    """Where a tag lies in 3-D: centre (3,), its +x and +y unit axes (3,) each, black square side."""

    centre: np.ndarray
    ex: np.ndarray
    ey: np.ndarray
    side: float

    def corners(self, scale: float = 1.0) -> np.ndarray:
        """Black square corners 0..3 (4, 3): centre + (-s/2,-s/2), (+s/2,-s/2), (+s/2,+s/2), (-s/2,+s/2) in
        the tag's axes (bitmap bottom-left, bottom-right, top-right, top-left); `scale` grows the square."""
        h = self.side * scale / 2.0
        signs = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
        return self.centre + (signs[:, :1] * self.ex + signs[:, 1:] * self.ey) * h


# ------------------------------------------------------------------------------------------- frames


def in_base_frame(x: float, y: float, yaw_deg: float, dx: float, dy: float) -> tuple[float, float]:
    """A point (dx, dy) of the base frame (the tag's axes) on the table, for a base at (x, y) turned yaw."""
    a = math.radians(yaw_deg)
    return (x + dx * math.cos(a) - dy * math.sin(a), y + dx * math.sin(a) + dy * math.cos(a))


def _shade(colour: BGR, factor: float) -> BGR:
    return (colour[0] * factor, colour[1] * factor, colour[2] * factor)


def _lit(pts: np.ndarray, colour: BGR, outward: np.ndarray) -> Face:
    """A face flat-shaded by the light (Newell normal, turned to point away from `outward`'s inside point)."""
    n = np.zeros(3)
    nxt = np.roll(pts, -1, axis=0)
    n[0] = float(np.sum((pts[:, 1] - nxt[:, 1]) * (pts[:, 2] + nxt[:, 2])))
    n[1] = float(np.sum((pts[:, 2] - nxt[:, 2]) * (pts[:, 0] + nxt[:, 0])))
    n[2] = float(np.sum((pts[:, 0] - nxt[:, 0]) * (pts[:, 1] + nxt[:, 1])))
    norm = float(np.linalg.norm(n))
    if norm > 1e-12:
        n /= norm
        if float(n @ (pts.mean(axis=0) - outward)) < 0:
            n = -n
    light = max(0.0, float(n @ LIGHT))
    return Face(pts, _shade(colour, 0.38 + 0.62 * light))


class _Local:
    """The figure's own frame: origin at its feet on the base top, +y where it faces, +x its right, +z up."""

    def __init__(self, feet: np.ndarray, facing_rad: float) -> None:
        self.o = feet
        self.f = np.array([math.cos(facing_rad), math.sin(facing_rad), 0.0])
        self.r = np.array([math.sin(facing_rad), -math.cos(facing_rad), 0.0])

    def __call__(self, p: np.ndarray) -> np.ndarray:
        p = np.atleast_2d(np.asarray(p, np.float64))
        return self.o + p[:, :1] * self.r + p[:, 1:2] * self.f + p[:, 2:3] * np.array([0.0, 0.0, 1.0])


def _stack(
    at: _Local,
    rings: list[tuple[float, float, float, float]],
    aspect: float,
    colours: list[BGR],
    n: int = 8,
    cap_top: bool = True,
    cap_bottom: bool = False,
) -> list[Face]:
    """A solid of rings (z, half-width, centre x, centre y; figure frame) of one ellipse shape (depth/width
    `aspect`): side trapezoids between rings (colours[i] for band i) and flat caps."""
    a = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False) + math.pi / n
    unit = np.column_stack([np.cos(a), np.sin(a) * aspect])
    loops = [at(np.column_stack([cx + rx * unit[:, 0], cy + rx * unit[:, 1], np.full(n, z)])) for z, rx, cx, cy in rings]
    inside = at(np.array([[np.mean([r[2] for r in rings]), np.mean([r[3] for r in rings]),
                           np.mean([r[0] for r in rings])]]))[0]
    faces: list[Face] = []
    for i in range(len(loops) - 1):
        lo, hi = loops[i], loops[i + 1]
        for k in range(n):
            j = (k + 1) % n
            quad = np.array([lo[k], lo[j], hi[j], hi[k]])
            if np.linalg.norm(quad[0] - quad[1]) + np.linalg.norm(quad[2] - quad[3]) < 1e-9:
                continue
            faces.append(_lit(quad, colours[i], inside))
    if cap_top and rings[-1][1] > 1e-6:
        faces.append(_lit(loops[-1], colours[-1], inside))
    if cap_bottom and rings[0][1] > 1e-6:
        faces.append(_lit(loops[0], colours[0], inside))
    return faces


def _rod(p: np.ndarray, q: np.ndarray, width: float, colour: BGR) -> list[Face]:
    """A thin box of square section `width` from p to q (3,) each: four sides and two ends."""
    axis = q - p
    length = float(np.linalg.norm(axis))
    if length < 1e-9:
        return []
    axis = axis / length
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u)
    v = np.cross(axis, u)
    h = width / 2.0
    ring = [(-h, -h), (h, -h), (h, h), (-h, h)]
    a = np.array([p + s * u + t * v for s, t in ring])
    b = np.array([q + s * u + t * v for s, t in ring])
    inside = (p + q) / 2.0
    faces = [_lit(np.array([a[k], a[(k + 1) % 4], b[(k + 1) % 4], b[k]]), colour, inside) for k in range(4)]
    faces.append(_lit(a[::-1].copy(), colour, inside))
    faces.append(_lit(b.copy(), colour, inside))
    return faces


# ------------------------------------------------------------------------------------------- a figure


def figure_faces(fig: Figure, x: float, y: float, top_z: float, yaw_deg: float, base_radius_in: float) -> list[Face]:
    """The faces of `fig` standing on a base centred at (x, y) whose top is at `top_z`, turned `yaw_deg`."""
    H, W = fig.height_in, fig.width_in
    fx, fy = in_base_frame(x, y, yaw_deg, *fig.stance_in)
    at = _Local(np.array([fx, fy, top_z]), math.radians(yaw_deg + fig.facing_deg))
    body, dark, darker = fig.colour, _shade(fig.colour, 0.55), _shade(fig.colour, 0.35)
    trousers: BGR = (55.0, 60.0, 70.0)
    faces: list[Face] = []
    # legs, apart, a little forward at the feet
    for side in (-1.0, 1.0):
        lx = side * 0.16 * W
        faces += _stack(at, [(0.0, 0.075 * W, lx, 0.05 * W), (0.06 * H, 0.09 * W, lx, 0.02 * W),
                             (0.38 * H, 0.13 * W, lx * 0.9, 0.0)], 1.0, [darker, trousers], n=6)
    # tunic (hem to belt), torso (belt to shoulders), shoulders to neck
    faces += _stack(at, [(0.22 * H, 0.40 * W, 0.0, -0.01 * W), (0.44 * H, 0.32 * W, 0.0, 0.0),
                         (0.50 * H, 0.31 * W, 0.0, 0.0), (0.68 * H, 0.44 * W, 0.0, 0.0),
                         (0.76 * H, 0.50 * W, 0.0, -0.01 * W), (0.80 * H, 0.22 * W, 0.0, -0.01 * W)],
                    0.58, [body, darker, body, body, body], n=10, cap_bottom=True)
    # head: skin below, a helmet above
    metal = METAL
    faces += _stack(at, [(0.78 * H, 0.09 * W, 0.0, 0.0), (0.83 * H, 0.19 * W, 0.0, 0.01 * W),
                         (0.89 * H, 0.22 * W, 0.0, 0.01 * W), (0.93 * H, 0.23 * W, 0.0, 0.0),
                         (0.975 * H, 0.17 * W, 0.0, -0.005 * W), (1.0 * H, 0.07 * W, 0.0, -0.01 * W)],
                    0.95, [SKIN, SKIN, metal, metal, metal], n=8)
    shoulder_z = 0.73 * H
    arm_w = 0.13 * W
    left_sh = at(np.array([-0.43 * W, 0.0, shoulder_z]))[0]
    right_sh = at(np.array([0.43 * W, 0.0, shoulder_z]))[0]
    # left arm: forward, holding a round shield
    left_hand = at(np.array([-0.38 * W, 0.30 * W, 0.52 * H]))[0]
    faces += _rod(left_sh, left_hand, arm_w, dark)
    if fig.shield:
        a = np.linspace(0.0, 2.0 * math.pi, 10, endpoint=False)
        turn = math.radians(25.0)
        out = np.array([-math.sin(turn), math.cos(turn), 0.0])  # faces forward, turned outward (left)
        along = np.array([math.cos(turn), math.sin(turn), 0.0])
        up = np.array([0.0, 0.0, 1.0])
        c = np.array([-0.42 * W, 0.40 * W, 0.52 * H])
        ring = np.cos(a)[:, None] * along + np.sin(a)[:, None] * up
        front = at(c + 0.36 * W * ring)
        back = at(c - 0.03 * out + 0.36 * W * ring)
        boss = at(c + 0.012 * out + 0.1 * W * ring)
        centre = at(c - 0.015 * out)[0]
        faces.append(_lit(back[::-1].copy(), WOOD, centre))
        faces.append(_lit(front, _shade(fig.colour, 0.8), centre))
        faces.append(_lit(boss, METAL, centre))
    # right arm: a spear reaching past the base edge, or hanging by the side
    if fig.reach_in is not None:
        tx, ty = in_base_frame(x, y, yaw_deg, *_polar(base_radius_in + fig.reach_in, fig.reach_deg))
        tip = np.array([tx, ty, top_z + 0.62 * H])
        toward = tip - right_sh
        toward[2] = 0.0
        reach = toward / max(float(np.linalg.norm(toward)), 1e-9)
        hand = right_sh + reach * 0.32 * W + np.array([0.0, 0.0, -0.2 * H])
        faces += _rod(right_sh, hand, arm_w, dark)
        shaft = tip - hand
        butt = hand - shaft / max(float(np.linalg.norm(shaft)), 1e-9) * 0.35
        head_at = tip - shaft / max(float(np.linalg.norm(shaft)), 1e-9) * 0.14
        faces += _rod(butt, head_at, 0.035, WOOD)
        faces += _rod(head_at, tip, 0.05, METAL)
    else:
        hand = at(np.array([0.46 * W, 0.08 * W, 0.45 * H]))[0]
        faces += _rod(right_sh, hand, arm_w, dark)
        sword_tip = at(np.array([0.48 * W, 0.55 * W, 0.62 * H]))[0]
        faces += _rod(hand, sword_tip, 0.04, METAL)
    return faces


def _polar(r: float, deg: float) -> tuple[float, float]:
    return (r * math.cos(math.radians(deg)), r * math.sin(math.radians(deg)))


def shadow_outline(fig: Figure, x: float, y: float, z: float, base_radius_in: float) -> np.ndarray:
    """A soft shadow's outline (N, 3) on the plane z under a figure on a base at (x, y): an ellipse cast
    away from the light, a little wider than the base."""
    away = -LIGHT[:2] / np.linalg.norm(LIGHT[:2])
    lean = fig.height_in * 0.5 * float(np.linalg.norm(LIGHT[:2]) / LIGHT[2])
    cx, cy = x + away[0] * lean * 0.6, y + away[1] * lean * 0.6
    a = np.linspace(0.0, 2.0 * math.pi, 32, endpoint=False)
    along, across = base_radius_in + lean * 0.6, base_radius_in + 0.08
    pts = np.column_stack([along * np.cos(a), across * np.sin(a)])
    rot = np.array([[away[0], -away[1]], [away[1], away[0]]])
    xy = pts @ rot.T + [cx, cy]
    return np.column_stack([xy, np.full(len(a), z)])


# ------------------------------------------------------------------------------------------- mounts


def topper_tag(top: Topper, x: float, y: float, top_z: float, floor_z: float, yaw_deg: float,
               tag_in: float) -> TagPose:
    """The tag on a topper over a base at (x, y) (base top `top_z`, underside `floor_z`), turned yaw_deg: its
    face `top.height_in` above the underside, shifted and tilted by the pin's lean."""
    rise = max(top.height_in - (top_z - floor_z), 0.0)
    lean = math.radians(top.lean_deg)
    d = math.radians(yaw_deg + top.lean_dir_deg)
    shift = rise * math.tan(lean)
    centre = np.array([x + shift * math.cos(d), y + shift * math.sin(d), floor_z + top.height_in])
    a = math.radians(yaw_deg)
    ex, ey = np.array([math.cos(a), math.sin(a), 0.0]), np.array([-math.sin(a), math.cos(a), 0.0])
    if lean != 0.0:
        axis = np.array([-math.sin(d), math.cos(d), 0.0])  # z x (lean direction): +z tips toward it
        ex, ey = _turn(ex, axis, lean), _turn(ey, axis, lean)
    return TagPose(centre, ex, ey, tag_in)


def _turn(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """v turned by `angle` (radians) about the unit `axis` (Rodrigues)."""
    c, s = math.cos(angle), math.sin(angle)
    return v * c + np.cross(axis, v) * s + axis * float(axis @ v) * (1.0 - c)


def topper_faces(top: Topper, tag: TagPose, x: float, y: float, top_z: float) -> tuple[list[Face], Face]:
    """The pin (from the base centre on its top to the card) and the white card (returned apart: the tag is
    drawn on it right after)."""
    pin = _rod(np.array([x, y, top_z]), tag.centre - np.cross(tag.ex, tag.ey) * 0.01, top.pin_in, BRASS)
    half = tag.side * TAG_CELLS_OVER_BLACK / 2.0 + top.margin_in
    signs = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    card = tag.centre + (signs[:, :1] * tag.ex + signs[:, 1:] * tag.ey) * half
    return pin, Face(card, CARD_WHITE)


def rim_tag(rim: RimTag, x: float, y: float, top_z: float, yaw_deg: float) -> TagPose:
    """A tag glued flat on the base top at its offset (base frame), turned with the base."""
    cx, cy = in_base_frame(x, y, yaw_deg, *rim.offset_in)
    a = math.radians(yaw_deg)
    return TagPose(np.array([cx, cy, top_z]), np.array([math.cos(a), math.sin(a), 0.0]),
                   np.array([-math.sin(a), math.cos(a), 0.0]), rim.tag_in)
