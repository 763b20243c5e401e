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
