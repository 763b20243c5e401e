"""The renderer's rasteriser: planar faces into an ideal (undistorted) pinhole image with a depth buffer.

Every face is a planar polygon in table inches, drawn either as a solid colour or as an image (texture)
stretched over a quad. A face is rasterised `supersample` x `supersample` times finer inside its own
bounding box, box-filtered down (exact area coverage up to the sub-sample grid) and blended in where it is
nearer the camera than what is there (per-pixel depth from the face's plane, so occlusion is right).
Pixel coordinates use OpenCV's convention: the centre of the top-left pixel is (0, 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

DEPTH_EPS_IN = 1e-3
"""A face this close behind what is drawn still wins: decals (a tag on its base) are drawn after."""


@dataclass
class Canvas:
    """The ideal image being drawn: colour (float32 BGR), depth (inches along the optical axis), face ids."""

    K: np.ndarray
    """3x3 intrinsics of this canvas (principal point shifted by its margin)."""
    R: np.ndarray
    """3x3 rotation table -> camera."""
    t: np.ndarray
    """(3,) translation table -> camera, inches."""
    colour: np.ndarray
    depth: np.ndarray
    face_id: np.ndarray
    supersample: int = 4

    @classmethod
    def blank(
        cls, K: np.ndarray, R: np.ndarray, t: np.ndarray, size: tuple[int, int], supersample: int
    ) -> Canvas:
        w, h = size
        return cls(
            K=K,
            R=R,
            t=t,
            colour=np.zeros((h, w, 3), np.float32),
            depth=np.full((h, w), np.inf, np.float32),
            face_id=np.full((h, w), -1, np.int32),
            supersample=supersample,
        )

    @property
    def size(self) -> tuple[int, int]:
        return self.colour.shape[1], self.colour.shape[0]

    def to_camera(self, pts_in: np.ndarray) -> np.ndarray:
        """(N, 3) table inches -> (N, 3) camera frame inches."""
        return np.asarray(pts_in, np.float64) @ self.R.T + self.t

    def project(self, pts_in: np.ndarray) -> np.ndarray:
        """(N, 3) table inches -> (N, 2) ideal canvas pixels (no distortion)."""
        cam = self.to_camera(pts_in)
        uvw = cam @ self.K.T
        return uvw[:, :2] / uvw[:, 2:3]

    def _roi(self, px: np.ndarray) -> tuple[int, int, int, int] | None:
        w, h = self.size
        x0 = max(int(np.floor(px[:, 0].min())) - 1, 0)
        y0 = max(int(np.floor(px[:, 1].min())) - 1, 0)
        x1 = min(int(np.ceil(px[:, 0].max())) + 2, w)
        y1 = min(int(np.ceil(px[:, 1].max())) + 2, h)
        if x1 <= x0 or y1 <= y0:
            return None
        return x0, y0, x1, y1

    def _hi_res(self, x0: int, y0: int) -> np.ndarray:
        """Canvas pixels -> sub-sample pixels of the ROI starting at (x0, y0)."""
        s = float(self.supersample)
        return np.array([[s, 0, s * (0.5 - x0) - 0.5], [0, s, s * (0.5 - y0) - 0.5], [0, 0, 1]])

    def _plane_depth(self, pts_in: np.ndarray, roi: tuple[int, int, int, int], within: bool = False) -> np.ndarray:
        """Depth (camera z, inches) of the plane through `pts_in` at each pixel of `roi`; `within`: no nearer or
        farther than the points themselves (a face's own depths). A face seen nearly edge-on covers part of a pixel
        whose centre lies off the face, where its plane can be far nearer than the face is: it would show through
        what stands in front of it (a topper's pin through its card)."""
        cam = self.to_camera(pts_in)
        n = np.cross(cam[1] - cam[0], cam[2] - cam[0])
        if np.linalg.norm(n) < 1e-12:
            n = np.cross(cam[2] - cam[0], cam[-1] - cam[0])
        d = float(n @ cam[0])
        x0, y0, x1, y1 = roi
        kinv = np.linalg.inv(self.K)
        # n . (K^-1 [u v 1]) is affine in (u, v): depth = d / that.
        a = n @ kinv
        u = np.arange(x0, x1, dtype=np.float64)
        v = np.arange(y0, y1, dtype=np.float64)
        denom = a[0] * u[None, :] + a[1] * v[:, None] + a[2]
        with np.errstate(divide="ignore", invalid="ignore"):
            depth = d / denom
        depth[~np.isfinite(depth) | (depth <= 0)] = np.inf
        if within:
            finite = np.isfinite(depth)
            depth[finite] = np.clip(depth[finite], cam[:, 2].min(), cam[:, 2].max())
        return depth.astype(np.float32)

    def _blend(
        self,
        roi: tuple[int, int, int, int],
        colour: np.ndarray,
        alpha: np.ndarray,
        depth: np.ndarray,
        face: int,
    ) -> None:
        x0, y0, x1, y1 = roi
        zbuf = self.depth[y0:y1, x0:x1]
        front = depth <= zbuf + DEPTH_EPS_IN
        a = alpha * front
        if not np.any(a > 0):
            return
        dst = self.colour[y0:y1, x0:x1]
        dst += (colour - dst) * a[:, :, None]
        win = front & (alpha >= 0.5)
        zbuf[win] = depth[win]
        self.face_id[y0:y1, x0:x1][win] = face

    def visible(self, pts_in: np.ndarray) -> bool:
        """True when every point is in front of the camera."""
        return bool(np.all(self.to_camera(pts_in)[:, 2] > 1e-3))

    def draw_polygon(self, pts_in: np.ndarray, bgr: tuple[float, float, float], face: int) -> None:
        """A solid planar polygon (N, 3 table inches)."""
        if not self.visible(pts_in):
            return
        self.draw_outline(self.project(pts_in), pts_in, bgr, face, within=True)

    def draw_outline(
        self, px: np.ndarray, plane_in: np.ndarray, bgr: tuple[float, float, float], face: int, within: bool = False
    ) -> None:
        """A solid polygon given in canvas pixels (N, 2), its depth taken from the plane through `plane_in` (`within`:
        no nearer or farther than those points, when they are the face's own corners).

        For silhouettes of curved things (a base's side) whose exact depth does not matter.
        """
        roi = self._roi(px)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        s = self.supersample
        hi = self._hi_res(x0, y0)
        sub = px @ hi[:2, :2].T + hi[:2, 2]
        mask = np.zeros(((y1 - y0) * s, (x1 - x0) * s), np.uint8)
        shift = 4
        pts = np.round(sub * (1 << shift)).astype(np.int32)
        cv2.fillPoly(mask, [pts], 255, lineType=cv2.LINE_8, shift=shift)
        alpha = cv2.resize(mask, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
        colour = np.empty((y1 - y0, x1 - x0, 3), np.float32)
        colour[:] = np.asarray(bgr, np.float32)
        self._blend(roi, colour, alpha, self._plane_depth(plane_in, roi, within), face)

    def draw_texture(self, quad_in: np.ndarray, texture: np.ndarray, face: int) -> None:
        """A texture (H, W, 3 float32 or uint8) stretched over a planar quad (4, 3 table inches).

        quad corners in order: the texture's top-left, top-right, bottom-right, bottom-left (its outer
        pixel edges, i.e. source points (-0.5, -0.5), (W-0.5, -0.5), (W-0.5, H-0.5), (-0.5, H-0.5)).
        """
        if not self.visible(quad_in):
            return
        px = self.project(quad_in)
        roi = self._roi(px)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        s = self.supersample
        th, tw = texture.shape[:2]
        src = np.array([[-0.5, -0.5], [tw - 0.5, -0.5], [tw - 0.5, th - 0.5], [-0.5, th - 0.5]], np.float32)
        hi = self._hi_res(x0, y0)
        dst = (px @ hi[:2, :2].T + hi[:2, 2]).astype(np.float32)
        # getPerspectiveTransform works on point coordinates; warpPerspective samples at integer pixel
        # centres with the same convention, so the quad's outer edges land exactly on `dst`.
        H = cv2.getPerspectiveTransform(src, dst)
        size = ((x1 - x0) * s, (y1 - y0) * s)
        tex = texture.astype(np.float32, copy=False)
        warped = cv2.warpPerspective(tex, H, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        ones = np.ones((th, tw), np.float32)
        cover = cv2.warpPerspective(ones, H, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        colour = cv2.resize(warped, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA)
        alpha = cv2.resize(cover, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA)
        self._blend(roi, colour, alpha, self._plane_depth(quad_in, roi, within=True), face)

    def draw_background(
        self, quad_in: np.ndarray, texture: np.ndarray, outside_bgr: tuple[float, float, float]
    ) -> None:
        """The table: a texture over a quad on z = 0 drawn at 1x over the whole canvas, `outside_bgr` beyond."""
        px = self.project(quad_in)
        th, tw = texture.shape[:2]
        src = np.array([[-0.5, -0.5], [tw - 0.5, -0.5], [tw - 0.5, th - 0.5], [-0.5, th - 0.5]], np.float32)
        H = cv2.getPerspectiveTransform(src, px.astype(np.float32))
        w, h = self.size
        self.colour[:] = cv2.warpPerspective(
            texture.astype(np.float32, copy=False),
            H,
            (w, h),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=tuple(float(c) for c in outside_bgr),
        )
        self.depth[:] = self._plane_depth(quad_in, (0, 0, w, h))
        self.face_id[:] = 0

    def darken(self, pts_in: np.ndarray, factor: float, soften_in: float) -> None:
        """A soft shadow: what is drawn inside the polygon (N, 3 table inches) darkened to `factor`, its edge
        blurred over ~`soften_in` inches (measured at the polygon's first point)."""
        if not self.visible(pts_in):
            return
        px = self.project(pts_in)
        step = self.project(np.asarray(pts_in[:1]) + [[soften_in, 0.0, 0.0]])
        sigma = max(0.5, float(np.linalg.norm(step[0] - px[0])))
        pad = int(np.ceil(3.0 * sigma)) + 1
        w, h = self.size
        x0 = max(int(np.floor(px[:, 0].min())) - pad, 0)
        y0 = max(int(np.floor(px[:, 1].min())) - pad, 0)
        x1 = min(int(np.ceil(px[:, 0].max())) + pad + 1, w)
        y1 = min(int(np.ceil(px[:, 1].max())) + pad + 1, h)
        if x1 <= x0 or y1 <= y0:
            return
        mask = np.zeros((y1 - y0, x1 - x0), np.float32)
        shift = 4
        pts = np.round((px - [x0, y0]) * (1 << shift)).astype(np.int32)
        cv2.fillPoly(mask, [pts], 1.0, lineType=cv2.LINE_AA, shift=shift)
        soft = np.asarray(cv2.GaussianBlur(mask, (0, 0), sigma), np.float32)
        self.colour[y0:y1, x0:x1] *= (1.0 - (1.0 - factor) * soft)[:, :, None]

    def coverage_of(self, pts_in: np.ndarray, face: int) -> float:
        """Fraction of the polygon's pixels (N, 3 table inches) where face `face` is what the camera sees."""
        px = self.project(pts_in)
        roi = self._roi(px)
        if roi is None:
            return 0.0
        x0, y0, x1, y1 = roi
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        shift = 4
        pts = np.round((px - [x0, y0]) * (1 << shift)).astype(np.int32)
        cv2.fillPoly(mask, [pts], 1, lineType=cv2.LINE_8, shift=shift)
        inside = mask.astype(bool)
        total = max(float(cv2.contourArea(px.astype(np.float32))), float(inside.sum()))
        if total <= 0:
            return 0.0
        return min(1.0, float(np.count_nonzero(self.face_id[y0:y1, x0:x1][inside] == face)) / total)
