"""The focal length of an uncalibrated camera, from the anchor corners of one table photo.

Model: square pixels, principal point at the image centre, no distortion. The table-to-image homography
H = K [r1 r2 t] gives two constraints on f (r1 and r2 orthogonal, of equal length). Written in the
inverse square u = 1/f^2 (image coordinates centred and scaled by s = max(w, h)):

    orthogonal:   (a1 a2 + b1 b2) u + c1 c2 = 0
    equal length: ((a1^2 + b1^2) - (a2^2 + b2^2)) u / 2 + (c1^2 - c2^2) / 2 = 0

where (a, b, c) are the columns h1, h2 of H. The (c1 c2, (c1^2 - c2^2)/2) pair is the table axes' tilt
out of the image plane: a camera tilted about one table axis only zeroes the first equation, one tilted
about the diagonal the second; solving both together by least squares uses whichever is informative and
weighs them by how informative they are, whatever the yaw. A camera looking straight down zeroes both.

The closed-form value seeds a least-squares refinement of f with the pose (cv2.calibrateCamera on the
anchor corners: fixed principal point, fixed aspect, zero distortion). Its 1-sigma relative uncertainty,
from the Jacobian of the reprojection at the solution and the corner noise, decides whether the
estimate is used; if not, f is assumed from a typical webcam's field of view (ASSUMED_HFOV_DEG).

Lens distortion (`estimate_lens`): the default anchors sit near the frame's corners, where a webcam's
radial distortion is largest, and each anchor's four corners show the local stretch (radial against
tangential), so k1 is well fixed by one photo (1-sigma ~0.001 at 0.1 px corner noise, 720p-4K, tilts
0-40 degrees). The models of DISTORTION_MODELS are fitted with f (or, when the anchors cannot tell f,
with f fixed at the assumed value) and the pose; the simplest one whose anchor residual is not
significantly worse than the fullest model's (F ratio under SIGNIFICANCE_F, noise at least
MIN_NOISE_PX) is kept, provided its distortion is plausible over the frame (PLAUSIBLE_DISTORTION).
A lens without distortion thus keeps dist = 0 exactly.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import cv2
import numpy as np

ASSUMED_HFOV_DEG = 65.0
"""Horizontal field of view assumed when the anchors cannot tell the focal length (typical webcam, degrees)."""
MAX_REL_STD = 0.02
"""Largest 1-sigma relative uncertainty of an estimated focal length that is accepted (2 %)."""
NOMINAL_CORNER_NOISE_PX = 0.1
"""Corner noise (px, 1 sigma) assumed at least when judging how well the anchors fix the focal length."""

_LM_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-12)
_REFINE_FLAGS = (
    cv2.CALIB_USE_INTRINSIC_GUESS
    | cv2.CALIB_FIX_PRINCIPAL_POINT
    | cv2.CALIB_FIX_ASPECT_RATIO
    | cv2.CALIB_ZERO_TANGENT_DIST
    | cv2.CALIB_FIX_K1
    | cv2.CALIB_FIX_K2
    | cv2.CALIB_FIX_K3
    | cv2.CALIB_FIX_K4
    | cv2.CALIB_FIX_K5
    | cv2.CALIB_FIX_K6
)


DISTORTION_MODELS: tuple[tuple[str, ...], ...] = ((), ("k1",), ("k1", "p1", "p2"), ("k1", "k2"), ("k1", "k2", "p1", "p2"))
"""Distortion terms tried without a camera file, simplest first (OpenCV names; the others stay 0)."""
SIGNIFICANCE_F = 10.0
"""F ratio (residual drop per extra term over the fullest model's noise) that makes a term worth keeping."""
MIN_NOISE_PX = 0.02
"""Least corner noise (px, 1 sigma) assumed by the F ratio, so that exact corners do not demand terms."""
PLAUSIBLE_DISTORTION = 0.5
"""Largest relative radial shift (|r_distorted / r - 1|) a fitted lens may have out to the anchors."""
_DIST_INDEX = {"k1": 0, "k2": 1, "p1": 2, "p2": 3}
_FIX_TERM = {"k1": cv2.CALIB_FIX_K1, "k2": cv2.CALIB_FIX_K2}


class FocalFit(NamedTuple):
    """A focal length (px) with the pose it was fitted with and its 1-sigma relative uncertainty."""

    focal_px: float
    rvec: np.ndarray
    tvec: np.ndarray
    rel_std: float
    rms_px: float


def principal_point(image_size: tuple[int, int]) -> tuple[float, float]:
    """The image centre in OpenCV pixel coordinates (top-left pixel centre at 0, 0)."""
    return ((image_size[0] - 1) / 2.0, (image_size[1] - 1) / 2.0)


def assumed_focal_px(image_size: tuple[int, int]) -> float:
    """The focal length (px) of a camera with ASSUMED_HFOV_DEG horizontal field of view."""
    return image_size[0] / 2.0 / math.tan(math.radians(ASSUMED_HFOV_DEG) / 2.0)


def intrinsic_matrix(focal_px: float, image_size: tuple[int, int]) -> np.ndarray:
    """K with square pixels and the principal point at the image centre."""
    cx, cy = principal_point(image_size)
    return np.array([[focal_px, 0.0, cx], [0.0, focal_px, cy], [0.0, 0.0, 1.0]])


def focal_from_homography(H: np.ndarray, image_size: tuple[int, int]) -> float | None:
    """Closed-form f (px) from a table-plane homography (module docstring), or None if it has no answer."""
    cx, cy = principal_point(image_size)
    s = float(max(image_size))
    T = np.array([[1 / s, 0, -cx / s], [0, 1 / s, -cy / s], [0, 0, 1]])
    Hn = T @ np.asarray(H, dtype=np.float64)
    Hn = Hn / np.linalg.norm(Hn[:, :2])
    (a1, b1, c1), (a2, b2, c2) = Hn[:, 0], Hn[:, 1]
    A = np.array([a1 * a2 + b1 * b2, ((a1**2 + b1**2) - (a2**2 + b2**2)) / 2])
    B = np.array([c1 * c2, (c1**2 - c2**2) / 2])
    denom = float(A @ A)
    if denom <= 0:
        return None
    u = -float(A @ B) / denom
    if not math.isfinite(u) or u <= 0:
        return None
    return s / math.sqrt(u)


def focal_rel_std(
    object_in: np.ndarray, image_px: np.ndarray, fit: tuple[float, np.ndarray, np.ndarray], image_size: tuple[int, int], sigma_px: float
) -> float:
    """1-sigma relative uncertainty of f (fx = fy) jointly with the pose, for corner noise `sigma_px`."""
    f, rvec, tvec = fit
    _, jac = cv2.projectPoints(object_in, rvec, tvec, intrinsic_matrix(f, image_size), np.zeros(5))
    J = np.column_stack([jac[:, :6], jac[:, 6] + jac[:, 7]])
    JtJ = J.T @ J
    try:
        cov = np.linalg.inv(JtJ)
    except np.linalg.LinAlgError:
        return math.inf
    var = float(cov[6, 6])
    if not math.isfinite(var) or var < 0 or np.linalg.cond(JtJ) > 1e15:
        return math.inf
    return sigma_px * math.sqrt(var) / f


def refine_focal(
    object_in: np.ndarray, image_px: np.ndarray, image_size: tuple[int, int], focal_guess_px: float
) -> FocalFit | None:
    """Least-squares f and pose from the anchor corners, started at `focal_guess_px`; None if it fails."""
    obj = [np.ascontiguousarray(object_in, dtype=np.float32)]
    img = [np.ascontiguousarray(image_px, dtype=np.float32).reshape(-1, 1, 2)]
    K0 = intrinsic_matrix(focal_guess_px, image_size)
    try:
        rms, K, _dist, rvecs, tvecs = cv2.calibrateCamera(obj, img, image_size, K0, np.zeros(5), flags=_REFINE_FLAGS)
    except cv2.error:
        return None
    f = float(K[0, 0])
    if not math.isfinite(f) or not 0.05 * image_size[0] < f < 50 * image_size[0]:
        return None
    r0 = np.asarray(rvecs[0], dtype=np.float64).reshape(3, 1)
    t0 = np.asarray(tvecs[0], dtype=np.float64).reshape(3, 1)
    # calibrateCamera works in float32 object points; polish the pose in float64 at that focal length.
    r1, t1 = cv2.solvePnPRefineLM(object_in, image_px, K, np.zeros(5), r0, t0, criteria=_LM_CRITERIA)
    rvec, tvec = np.asarray(r1, dtype=np.float64).reshape(3), np.asarray(t1, dtype=np.float64).reshape(3)
    proj, _ = cv2.projectPoints(object_in, rvec, tvec, K, np.zeros(5))
    rms = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - image_px) ** 2, axis=1))))
    sigma = max(NOMINAL_CORNER_NOISE_PX, rms)
    rel = focal_rel_std(object_in, image_px, (f, rvec, tvec), image_size, sigma)
    return FocalFit(f, rvec, tvec, rel, rms)


def estimate_focal(
    object_in: np.ndarray, image_px: np.ndarray, image_size: tuple[int, int]
) -> tuple[FocalFit | None, float | None]:
    """(refined fit or None, closed-form seed or None) for anchor corners `object_in` (N, 3) -> `image_px`."""
    H, _ = cv2.findHomography(object_in[:, :2], image_px, 0)
    seed = focal_from_homography(H, image_size) if H is not None else None
    w = image_size[0]
    start = seed if seed is not None and 0.15 * w < seed < 20 * w else assumed_focal_px(image_size)
    return refine_focal(object_in, image_px, image_size, start), seed


class LensFit(NamedTuple):
    """A focal length (px), distortion (OpenCV order, 5) and pose fitted to the anchor corners.

    rel_std: 1-sigma relative uncertainty of f jointly with the pose and the distortion terms (0 when f
    was held fixed); rms_px: RMS reprojection error of the corners; terms: the distortion terms fitted.
    """

    focal_px: float
    K: np.ndarray
    dist: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    rel_std: float
    rms_px: float
    terms: tuple[str, ...]


def _lens_flags(terms: tuple[str, ...], fix_focal: bool) -> int:
    flags = (
        cv2.CALIB_USE_INTRINSIC_GUESS
        | cv2.CALIB_FIX_PRINCIPAL_POINT
        | cv2.CALIB_FIX_ASPECT_RATIO
        | cv2.CALIB_FIX_K3
        | cv2.CALIB_FIX_K4
        | cv2.CALIB_FIX_K5
        | cv2.CALIB_FIX_K6
    )
    for term, flag in _FIX_TERM.items():
        if term not in terms:
            flags |= flag
    if "p1" not in terms:
        flags |= cv2.CALIB_ZERO_TANGENT_DIST
    if fix_focal:
        flags |= cv2.CALIB_FIX_FOCAL_LENGTH
    return flags


def ideal_radius(object_in: np.ndarray, rvec: np.ndarray, tvec: np.ndarray) -> float:
    """Largest normalised pinhole radius (distance from the optical axis / depth) of the points."""
    cam = np.asarray(object_in, dtype=np.float64) @ cv2.Rodrigues(rvec)[0].T + np.asarray(tvec).reshape(3)
    return float(np.max(np.hypot(cam[:, 0], cam[:, 1]) / cam[:, 2]))


def plausible_distortion(dist: np.ndarray, radius: float) -> bool:
    """True if the radial distortion is monotonic and shifts by at most PLAUSIBLE_DISTORTION out to the
    normalised `radius` (the anchors': the play area lies inside them, so this is where it is used)."""
    k1, k2 = float(dist[0]), float(dist[1])
    r2 = np.linspace(0.0, radius, 64) ** 2
    shift = k1 * r2 + k2 * r2 * r2
    slope = 1.0 + 3.0 * k1 * r2 + 5.0 * k2 * r2 * r2
    return bool(np.all(np.abs(shift) <= PLAUSIBLE_DISTORTION) and np.all(slope > 0.02))


def lens_rel_std(
    object_in: np.ndarray, fit: LensFit, image_size: tuple[int, int], sigma_px: float, fix_focal: bool
) -> float:
    """1-sigma relative uncertainty of f jointly with the pose and `fit.terms` (0 if f is fixed, inf if
    the fit is degenerate: terms or pose that the corners cannot separate)."""
    _, jac = cv2.projectPoints(object_in, fit.rvec, fit.tvec, fit.K, fit.dist)
    cols = [jac[:, :6]]
    if not fix_focal:
        cols.append((jac[:, 6] + jac[:, 7])[:, None])
    cols += [jac[:, 10 + _DIST_INDEX[t]][:, None] for t in fit.terms]
    J = np.hstack(cols)
    JtJ = J.T @ J
    scale = np.sqrt(np.diag(JtJ))
    if np.any(scale <= 0) or not np.all(np.isfinite(scale)):
        return math.inf
    Jn = JtJ / np.outer(scale, scale)  # conditioning judged on unit-free columns
    if np.linalg.cond(Jn) > 1e12:
        return math.inf
    if fix_focal:
        return 0.0
    cov = np.linalg.inv(JtJ)
    var = float(cov[6, 6])
    if not math.isfinite(var) or var < 0:
        return math.inf
    return sigma_px * math.sqrt(var) / fit.focal_px


def fit_lens(
    object_in: np.ndarray,
    image_px: np.ndarray,
    image_size: tuple[int, int],
    focal_px: float,
    terms: tuple[str, ...],
    fix_focal: bool = False,
) -> LensFit | None:
    """Least-squares f (started at, or with `fix_focal` held at, `focal_px`), distortion `terms` and pose
    from the anchor corners; None if it fails, is degenerate or gives an implausible lens."""
    obj = [np.ascontiguousarray(object_in, dtype=np.float32)]
    img = [np.ascontiguousarray(image_px, dtype=np.float32).reshape(-1, 1, 2)]
    K0 = intrinsic_matrix(focal_px, image_size)
    try:
        _rms, K, dist, rvecs, tvecs = cv2.calibrateCamera(
            obj, img, image_size, K0, np.zeros(5), flags=_lens_flags(terms, fix_focal), criteria=_LM_CRITERIA
        )
    except cv2.error:
        return None
    f = float(K[0, 0])
    d = np.zeros(5)
    d[:4] = np.asarray(dist, dtype=np.float64).ravel()[:4]
    if not math.isfinite(f) or not 0.05 * image_size[0] < f < 50 * image_size[0] or not np.all(np.isfinite(d)):
        return None
    K = intrinsic_matrix(f, image_size)
    r0 = np.asarray(rvecs[0], dtype=np.float64).reshape(3, 1)
    t0 = np.asarray(tvecs[0], dtype=np.float64).reshape(3, 1)
    # calibrateCamera works in float32 object points; polish the pose in float64 with that lens.
    r1, t1 = cv2.solvePnPRefineLM(object_in, image_px, K, d, r0, t0, criteria=_LM_CRITERIA)
    rvec, tvec = np.asarray(r1, dtype=np.float64).reshape(3), np.asarray(t1, dtype=np.float64).reshape(3)
    if not plausible_distortion(d, 1.05 * ideal_radius(object_in, rvec, tvec)):
        return None
    proj, _ = cv2.projectPoints(object_in, rvec, tvec, K, d)
    rms = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - image_px) ** 2, axis=1))))
    fit = LensFit(f, K, d, rvec, tvec, 0.0, rms, terms)
    rel = lens_rel_std(object_in, fit, image_size, max(NOMINAL_CORNER_NOISE_PX, rms), fix_focal)
    if not math.isfinite(rel) and terms:
        return None  # distortion the corners cannot separate from f and the pose
    return fit._replace(rel_std=rel)


def select_lens(fits: list[LensFit], n_points: int) -> LensFit:
    """The simplest fit whose residual is not significantly worse than the fullest fit's (F ratio under
    SIGNIFICANCE_F with the fullest fit's noise, at least MIN_NOISE_PX). `fits` must not be empty."""
    full = max(fits, key=lambda x: len(x.terms))
    n = 2 * n_points
    dof = n - (7 + len(full.terms))
    noise2 = max(full.rms_px**2 * n / max(dof, 1), MIN_NOISE_PX**2)
    rss_full = full.rms_px**2 * n
    for fit in sorted(fits, key=lambda x: (len(x.terms), x.rms_px)):
        extra = len(full.terms) - len(fit.terms)
        if extra == 0:
            return fit
        if (fit.rms_px**2 * n - rss_full) / extra / noise2 < SIGNIFICANCE_F:
            return fit
    return full


def estimate_lens(
    object_in: np.ndarray, image_px: np.ndarray, image_size: tuple[int, int], fix_focal_px: float | None = None
) -> LensFit | None:
    """f and lens distortion (module docstring) for anchor corners `object_in` (N, 3) -> `image_px` (N, 2).

    With `fix_focal_px` f is held there and only distortion and pose are fitted. The models tried are
    those of DISTORTION_MODELS that leave at least 4 degrees of freedom; None if none could be fitted.
    """
    n = len(object_in)
    if fix_focal_px is None:
        seed_fit, seed = estimate_focal(object_in, image_px, image_size)
        if seed_fit is not None:
            start = seed_fit.focal_px
        elif seed is not None and 0.15 * image_size[0] < seed < 20 * image_size[0]:
            start = seed
        else:
            start = assumed_focal_px(image_size)
    else:
        start = fix_focal_px
    fits = []
    for terms in DISTORTION_MODELS:
        if 2 * n - (7 + len(terms)) < 4:
            continue
        fit = fit_lens(object_in, image_px, image_size, start, terms, fix_focal_px is not None)
        if fit is not None:
            fits.append(fit)
    if not fits:
        return None
    return select_lens(fits, n)
