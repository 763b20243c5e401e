"""AprilTag (tag36h11) detection: the one place pupil-apriltags is used.

Everything leaving this module is our own frozen `TagObservation` in OpenCV's pixel convention (the
centre of the top-left pixel is (0, 0)). pupil-apriltags puts pixel centres at +0.5 (its corners come out
half a pixel right of and below the truth); `detect_tags` subtracts that at once (measured: +0.49 px in
x and y on rendered tags with the library's edge refinement on). The library's corners alone still carry
~0.07 px of error whatever the tag's size, so each corner is then refitted from its two edges
(`refine_all`): on rendered tags the mean corner error drops to ~0.003 px (clean) / ~0.03 px (noise,
blur, JPEG) with no constant bias.

Decimation (`decimation_for`): quad_decimate is the largest of 1..4 that keeps the smallest expected tag
at least 12 px across in the decimated image (measured: 12-14 px decimated are all found, 10-12 px not
always); corners are always refined on the full-resolution frame.

Corner order (the AprilTag library's, checked against rendered tags and the C library's reference
output): with the tag's bitmap seen upright, 0 = bottom-left, 1 = bottom-right, 2 = top-right,
3 = top-left. Corners are the outer corners of the black square.

One Detector per process by default, used under a lock. A thread that detects beside others (a replay's
read-ahead, session/read_ahead.py) makes its own `TagDetector` and passes it as `detector=`: the library's
detect is a C call that releases the interpreter lock, so two detectors run on two cores, and a detector
gives the same tags for the same pixels whichever one it is (it keeps nothing from call to call).
pupil-apriltags frees the tag family before the detector when a Detector is garbage-collected
(pupil-labs/apriltags issues #46, #52: `apriltag_detector_destroy` then reads the freed family and the
process dies with SIGSEGV, exit status -11, after all its output). We never let that destructor run: a
`TagDetector` is released (at exit for the process-wide one, by `release()` for a thread's own) detector
first and family second, as the C library's own example does, and the wrapper is disarmed.
"""

from __future__ import annotations

import atexit
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.decode import ImageTooLarge, imdecode, too_large_sentence
from vision.errors import FrameError

FAMILY = "tag36h11"

PUPIL_PIXEL_OFFSET = 0.5
"""pupil-apriltags' corners minus OpenCV-convention corners (px, both axes)."""

CORNER_NOISE_PX = 0.05
"""The detector's corner noise, px, one sigma, used for the ±. Measured on rendered frames: mean corner
error 0.003 px on clean tags, 0.02-0.03 px with sensor noise, blur and JPEG, ~0.15 px on tags under 15 px
across (tests/test_vision_tags.py, tests/test_vision_render.py)."""

DECIMATED_TAG_PX = 12.0
"""Decimation rule: the smallest tag's black square must still span this many px after decimation."""

MIN_DECIMATED_SIDE_PX = 4
"""An image (or window) narrower than this after decimation is not given to the library: no tag fits in it, and
pupil-apriltags 1.0.4 crashes the process on a side of 2 px or less (a 10 x 800 frame at decimation 4)."""
MAX_DECIMATE = 4

BORDER_GUARD_PX = 1.0
"""A detection whose white border (one cell around the black square) comes this close to the frame's edge
is dropped: a tag cut by the frame gets a wrong edge and wrong corners."""


def decimation_for(min_tag_px: float | None) -> int:
    """quad_decimate for frames whose smallest expected tag spans `min_tag_px` px (black square side).

    d = floor(min_tag_px / 12), clamped to 1..4: 1080p with 0.75" tags (~25 px) gets 2, 4K gets 4, a small
    tag under 24 px gets 1. Unknown size: 1, the safe and slow choice. Decimation only finds the quads;
    corners are refined on the full image, so accuracy does not depend on it.
    """
    if min_tag_px is None or not math.isfinite(min_tag_px):
        return 1
    return int(max(1, min(MAX_DECIMATE, math.floor(min_tag_px / DECIMATED_TAG_PX))))


@dataclass(frozen=True, eq=False)
class TagObservation:
    """One tag found in a frame. Pixels in OpenCV's convention."""

    id: int
    corners_px: np.ndarray
    """(4, 2) float64: outer corners of the black square; 0 bottom-left, 1 bottom-right, 2 top-right,
    3 top-left of the upright bitmap."""
    center_px: np.ndarray
    """(2,) float64: where the tag's diagonals cross."""
    margin: float
    """Decision margin: how clearly the bits were read (higher is better; a few tens on a sharp tag)."""
    hamming: int
    """Bits corrected to make the code (0 best)."""

    def __post_init__(self) -> None:
        if self.corners_px.shape != (4, 2) or self.center_px.shape != (2,):
            raise ValueError(
                f"TagObservation needs corners (4, 2) and centre (2,); got {self.corners_px.shape} "
                f"and {self.center_px.shape}."
            )
        self.corners_px.setflags(write=False)
        self.center_px.setflags(write=False)

    @property
    def side_px(self) -> float:
        """Mean side of the black square, px."""
        c = self.corners_px
        return float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)))


class TagDetector:
    """A pupil-apriltags Detector with our settings (one thread), used under a lock, released in the safe
    order. The process-wide one serves every call that names none; a thread of its own makes its own and
    calls `release()` when done (`at_exit`: also released when the interpreter exits)."""

    def __init__(self, *, at_exit: bool = True) -> None:
        from pupil_apriltags import Detector

        self._lock = threading.Lock()
        self._det: Any = Detector(
            families=FAMILY, nthreads=1, quad_decimate=2.0, quad_sigma=0.0, refine_edges=1
        )
        # pupil-apriltags casts decode_sharpening to int (0.25 -> 0); set the C library's default.
        self._det.tag_detector_ptr.contents.decode_sharpening = 0.25
        if at_exit:
            atexit.register(self.release)

    def detect(self, gray: np.ndarray, decimate: float, refine_edges: bool) -> list[Any]:
        with self._lock:
            if self._det is None:
                raise RuntimeError("the tag detector was released at exit")
            params = self._det.tag_detector_ptr.contents
            params.quad_decimate = float(decimate)
            params.refine_edges = int(bool(refine_edges))
            return list(self._det.detect(gray))

    def release(self) -> None:
        """Destroy the detector first, then its family (the reverse of pupil-apriltags' __del__)."""
        with self._lock:
            det, self._det = self._det, None
            release_detector(det)


def release_detector(det: Any) -> None:
    """Free a pupil-apriltags Detector safely: the detector first, then its tag families, then disarm the
    library's own __del__ (which frees them the other way round and can segfault: pupil-labs/apriltags #46, #52)."""
    if det is None or det.tag_detector_ptr is None:
        return
    libc = det.libc
    libc.apriltag_detector_destroy.restype = None
    libc.apriltag_detector_destroy(det.tag_detector_ptr)
    for family in det.tag_families.values():
        destroy = getattr(libc, f"{FAMILY}_destroy")
        destroy.restype = None
        destroy(family)
    det.tag_families = {}
    det.tag_detector_ptr = None


_DETECTOR: TagDetector | None = None
_DETECTOR_LOCK = threading.Lock()


def _detector() -> TagDetector:
    global _DETECTOR
    with _DETECTOR_LOCK:
        if _DETECTOR is None:
            _DETECTOR = TagDetector()
        return _DETECTOR


def detect_tags(
    gray: np.ndarray,
    *,
    min_tag_px: float | None = None,
    decimate: int | None = None,
    refine_edges: bool = True,
    subpixel: bool = True,
    roi: tuple[int, int, int, int] | None = None,
    detector: TagDetector | None = None,
) -> tuple[TagObservation, ...]:
    """Every tag36h11 tag in a grey frame, sorted by id then position.

    gray: 2-D uint8. min_tag_px: the smallest tag's expected black-square side in px, which picks the
    decimation (`decimation_for`); `decimate` overrides it. refine_edges: the library's edge refinement
    (on in production; the C library's reference output was made with it off). subpixel: refit each
    corner from its two edges (`refine_corners`): the library alone leaves ~0.07 px of corner error.
    roi: (x, y, w, h) px, look only inside that window (tags must lie whole inside it); corners are still
    in the full frame's pixels. detector: a thread's own `TagDetector` (default: the process-wide one).
    """
    check_gray(gray)
    d = decimation_for(min_tag_px) if decimate is None else int(decimate)
    found = library_tags(gray, d, refine_edges=refine_edges, roi=roi, detector=detector)
    return observations(gray, found, subpixel=subpixel)


def check_gray(gray: np.ndarray) -> None:
    """Raise FrameError unless `gray` is a 2-D uint8 frame big enough to hold a tag."""
    if not isinstance(gray, np.ndarray):
        raise FrameError(f"A frame must be a numpy image array; got {type(gray).__name__}.")
    if gray.ndim != 2 or gray.dtype != np.uint8:
        raise FrameError(
            f"A frame for tag detection must be 2-D 8-bit grey; got shape {gray.shape} of {gray.dtype} "
            "(convert colour frames with gray_frame first)."
        )
    if gray.shape[0] < 8 or gray.shape[1] < 8:
        raise FrameError(f"A frame of {gray.shape[1]}x{gray.shape[0]} px is too small to hold a tag.")


@dataclass(frozen=True, eq=False)
class LibraryTag:
    """A tag as the library found it, before the sub-pixel refit. Full-frame pixels, OpenCV convention."""

    id: int
    corners_px: np.ndarray
    margin: float
    hamming: int


def library_tags(
    gray: np.ndarray, decimate: int, *, refine_edges: bool = True, roi: tuple[int, int, int, int] | None = None,
    detector: TagDetector | None = None,
) -> list[LibraryTag]:
    """The detector's (default: the process-wide one's) tags in `gray` (or in its window `roi` = (x, y, w, h)
    px), with the +0.5 px correction made, shifted to full-frame pixels, and those whose white border touches
    the frame's (or the window's) edge dropped. `gray` must pass `check_gray`."""
    if not 1 <= int(decimate) <= 8:
        raise FrameError(f"Decimation must be 1 to 8; got {decimate}.")
    x0, y0 = 0, 0
    image = gray
    if roi is not None:
        x0, y0, rw, rh = (int(v) for v in roi)
        x0, y0 = max(0, x0), max(0, y0)
        image = gray[y0 : y0 + rh, x0 : x0 + rw]
        if image.shape[0] < 8 or image.shape[1] < 8:
            return []
    if min(image.shape[:2]) // int(decimate) < MIN_DECIMATED_SIDE_PX:
        return []  # no tag fits; and pupil-apriltags crashes (segfault) on a decimated side of 2 px or less
    raw = (detector or _detector()).detect(np.ascontiguousarray(image), int(decimate), refine_edges)
    h, w = image.shape
    g = BORDER_GUARD_PX
    kept = []
    for r in raw:
        corners = np.asarray(r.corners, dtype=np.float64) - PUPIL_PIXEL_OFFSET
        outer = corners.mean(axis=0) + (corners - corners.mean(axis=0)) * (10.0 / 8.0)
        xs, ys = outer[:, 0], outer[:, 1]
        if xs.min() < g - 0.5 or ys.min() < g - 0.5 or xs.max() > w - 0.5 - g or ys.max() > h - 0.5 - g:
            continue  # its white border is cut by the frame's edge: the corners cannot be trusted
        corners += (x0, y0)  # window pixels -> frame pixels (both with pixel centres at integers)
        kept.append(LibraryTag(int(r.tag_id), corners, float(r.decision_margin), int(r.hamming)))
    return kept


def observations(gray: np.ndarray, found: list[LibraryTag], *, subpixel: bool = True) -> tuple[TagObservation, ...]:
    """`TagObservation`s of the library's tags, corners refitted on the full frame `gray`, sorted."""
    all_corners = np.array([k.corners_px for k in found]).reshape(-1, 4, 2)
    if subpixel and found:
        all_corners = refine_all(gray, all_corners)
    tags = [
        TagObservation(
            id=k.id,
            corners_px=np.array(corners),
            center_px=_diagonal_crossing(corners),
            margin=k.margin,
            hamming=k.hamming,
        )
        for k, corners in zip(found, all_corners)
    ]
    tags.sort(key=lambda t: (t.id, float(t.center_px[1]), float(t.center_px[0])))
    return tuple(tags)


def _diagonal_crossing(c: np.ndarray) -> np.ndarray:
    """Where the diagonals 0-2 and 1-3 cross (the tag centre under perspective), px."""
    m = np.column_stack([c[2] - c[0], c[1] - c[3]])
    if abs(np.linalg.det(m)) < 1e-12:
        return np.asarray(c.mean(axis=0))
    s = np.linalg.solve(m, c[1] - c[0])
    return np.asarray(c[0] + s[0] * (c[2] - c[0]))


def gray_frame(image: np.ndarray) -> np.ndarray:
    """A BGR, BGRA or grey 8-bit image as a 2-D uint8 grey frame."""
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise FrameError("A frame must be a non-empty numpy image array.")
    if image.dtype != np.uint8:
        raise FrameError(f"A frame must be 8-bit; got {image.dtype}.")
    if image.ndim == 2:
        return image
    if image.ndim == 3 and image.shape[2] == 3:
        return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    if image.ndim == 3 and image.shape[2] == 1:
        return np.ascontiguousarray(image[:, :, 0])
    raise FrameError(f"A frame must be grey, BGR or BGRA; got shape {image.shape}.")


def load_gray(path: str | Path) -> np.ndarray:
    """An image file as a 2-D uint8 grey frame; FrameError for a missing file or one that is not an image.

    A JPEG's luminance is decoded directly (as the AprilTag library's own tools do), not rebuilt from
    its colour channels, which would shift a few pixels by a grey level.
    """
    return _read_image(path, cv2.IMREAD_GRAYSCALE)


def load_image(path: str | Path) -> np.ndarray:
    """An image file as a BGR uint8 array; FrameError for a missing file or one that is not an image."""
    return _read_image(path, cv2.IMREAD_COLOR)


def _read_image(path: str | Path, flags: int) -> np.ndarray:
    p = Path(path)
    if not p.is_file():
        what = "is a folder" if p.is_dir() else "does not exist"
        raise FrameError(f"Image {p} {what}; give the path of a photo or frame (PNG or JPEG).")
    try:
        image = imdecode(np.fromfile(str(p), dtype=np.uint8), flags)
    except ImageTooLarge as err:
        raise FrameError(too_large_sentence(p, size=err.size)) from None
    if image is None:
        raise FrameError(f"{p} is not an image OpenCV can read; give a PNG or JPEG photo of the table.")
    return image


# ------------------------------------------------------------------------------------- edge refinement

EDGE_END_MARGIN = 0.12
"""Share of each edge left out at both ends (the corners' own blur)."""
EDGE_SECTIONS = 32
"""Cross-sections sampled along each edge."""
SECTION_SAMPLES = 21
"""Samples along each cross-section, from the black border cell's middle to the white border cell's."""
MIN_CELL_PX = 1.5
"""Tags with cells smaller than this keep the library's corners (too few pixels to refit)."""
MAX_REFINE_SHIFT_PX = 1.0
"""A refined corner further than this from the detector's is not trusted (occlusion, clutter)."""


def _fit_lines(points: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Total-least-squares lines through (..., N, 2) points where keep (..., N): (centroid, unit normal)."""
    w = keep.astype(np.float64)
    count = np.maximum(w.sum(axis=-1, keepdims=True), 1.0)
    mean = (points * w[..., None]).sum(axis=-2) / count
    d = (points - mean[..., None, :]) * np.sqrt(w)[..., None]
    sxx = (d[..., 0] ** 2).sum(-1)
    syy = (d[..., 1] ** 2).sum(-1)
    sxy = (d[..., 0] * d[..., 1]).sum(-1)
    angle = 0.5 * np.arctan2(2 * sxy, sxx - syy)  # direction of largest spread
    normal = np.stack([-np.sin(angle), np.cos(angle)], axis=-1)
    return mean, normal


def _row_median(values: np.ndarray, skip_nan: bool = False) -> np.ndarray:
    """The median of each row (last axis) of `values`, the very number np.median (skip_nan: np.nanmedian)
    gives, bit for bit, at a fraction of their cost on many short rows (they cost ~2 ms a frame for 40 tags
    through their generic paths). Both take the middle of the sorted row, or (low + high) / 2 of the two middle
    values. A row holding NaN is NaN (skip_nan: its NaNs are left out; NaN if nothing is left)."""
    ordered = np.sort(values, axis=-1)  # NaNs sort last
    n = values.shape[-1]
    if not skip_nan:
        low, high = ordered[..., (n - 1) // 2], ordered[..., n // 2]
        return np.where(np.isnan(ordered[..., -1]), np.nan, (low + high) / 2.0)
    count = n - np.count_nonzero(np.isnan(ordered), axis=-1)
    low_i = np.maximum(count - 1, 0)[..., None] // 2
    high_i = np.minimum(count // 2, n - 1)[..., None]
    low = np.take_along_axis(ordered, low_i, axis=-1)[..., 0]
    high = np.take_along_axis(ordered, high_i, axis=-1)[..., 0]
    return np.where(count > 0, (low + high) / 2.0, np.nan)


def refine_all(gray: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Sub-pixel corners for many tags at once: (T, 4, 2) -> (T, 4, 2); a tag keeps its corners if unsure.

    Each side is sampled across at EDGE_SECTIONS places. Along each cross-section the boundary is found
    from the area (first moment) of the normalised intensity between the middle of the black border cell
    and the middle of the white border cell; that is unbiased for area-sampled, symmetrically blurred
    edges (a 50 % crossing on interpolated pixels is not). A total-least-squares line is fitted to each
    side (outliers dropped) and neighbouring sides are intersected.
    """
    c = np.asarray(corners, np.float64)
    if c.size == 0:
        return c
    nxt = np.roll(c, -1, axis=1)
    edge = nxt - c  # (T, 4, 2): side i runs from corner i to corner i+1
    length = np.linalg.norm(edge, axis=-1)
    side = length.mean(axis=1)  # (T,)
    half = 0.5 * side / 8.0  # half a cell
    direction = edge / np.maximum(length, 1e-9)[..., None]
    normal = np.stack([direction[..., 1], -direction[..., 0]], axis=-1)
    centre = c.mean(axis=1, keepdims=True)
    mid = (c + nxt) / 2
    flip = np.sum(normal * (mid - centre), axis=-1) < 0
    normal[flip] *= -1  # outward, toward the white border
    ts = np.linspace(EDGE_END_MARGIN, 1 - EDGE_END_MARGIN, EDGE_SECTIONS)
    base = c[:, :, None, :] + ts[None, None, :, None] * edge[:, :, None, :]  # (T, 4, N, 2)
    u = np.linspace(-1.0, 1.0, SECTION_SAMPLES)
    offsets = u[None, :] * half[:, None]  # (T, M)
    pts = base[:, :, :, None, :] + offsets[:, None, None, :, None] * normal[:, :, None, None, :]
    t_count = len(c)
    flat = pts.reshape(-1, SECTION_SAMPLES, 2).astype(np.float32)
    prof = (
        cv2.remap(gray, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        .astype(np.float64)
        .reshape(t_count, 4, EDGE_SECTIONS, SECTION_SAMPLES)
    )
    black = _row_median(prof[..., 0])
    white = _row_median(prof[..., -1])
    contrast = white - black  # (T, 4)
    frac = np.clip((prof - black[..., None, None]) / np.maximum(contrast, 1e-9)[..., None, None], 0.0, 1.0)
    step = (2 * half / (SECTION_SAMPLES - 1))[:, None, None]
    area = step * (frac.sum(axis=-1) - 0.5 * (frac[..., 0] + frac[..., -1]))
    shift = half[:, None, None] - area  # boundary position along the outward normal
    edge_pts = base + shift[..., None] * normal[:, :, None, :]
    keep = np.ones(edge_pts.shape[:-1], bool)
    for _ in range(2):
        mean, n = _fit_lines(edge_pts, keep)
        resid = np.sum((edge_pts - mean[..., None, :]) * n[..., None, :], axis=-1)
        med = np.nan_to_num(_row_median(np.where(keep, resid, np.nan))[..., None])  # 0 unless every point is kept
        mad = _row_median(np.where(keep, np.abs(resid - med), np.nan), skip_nan=True)[..., None]
        keep = np.abs(resid - med) < np.maximum(4.0 * 1.4826 * np.nan_to_num(mad), 0.05)
    mean, n = _fit_lines(edge_pts, keep)
    # corner i joins side i-1 and side i: solve n_a . p = n_a . m_a, n_b . p = n_b . m_b
    na, ma = np.roll(n, 1, axis=1), np.roll(mean, 1, axis=1)
    nb, mb = n, mean
    det = na[..., 0] * nb[..., 1] - na[..., 1] * nb[..., 0]
    ra = np.sum(na * ma, axis=-1)
    rb = np.sum(nb * mb, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        px = (ra * nb[..., 1] - rb * na[..., 1]) / det
        py = (na[..., 0] * rb - nb[..., 0] * ra) / det
    refined = np.stack([px, py], axis=-1)
    ok = (
        (half >= MIN_CELL_PX / 2)
        & np.all(contrast >= 10.0, axis=1)
        & np.all(keep.sum(axis=-1) >= 6, axis=1)
        & np.all(np.abs(det) > 1e-6, axis=1)
        & np.all(np.isfinite(refined), axis=(1, 2))
        & np.all(np.linalg.norm(refined - c, axis=-1) <= MAX_REFINE_SHIFT_PX, axis=1)
    )
    return np.where(ok[:, None, None], refined, c)


def refine_corners(gray: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Sub-pixel corners (4, 2) of one tag from its four edges in `gray`; the input corners if unsure."""
    return refine_all(gray, np.asarray(corners, np.float64)[None])[0]
