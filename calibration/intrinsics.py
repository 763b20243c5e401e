"""Camera intrinsics from photos of a chessboard or a ChArUco board (OpenCV's calibrateCamera).

Chessboard: `pattern` is the count of INNER corners (columns x rows); corners are found with
findChessboardCorners and refined with cornerSubPix. ChArUco: `pattern` is the count of SQUARES
(columns x rows), with the marker side and the ArUco dictionary as OpenCV names it (e.g. DICT_6X6_250);
for an even number of rows both the current and the pre-4.6 ("legacy") layouts are tried and the one that
finds more corners is used. Sizes are in inches, so board poses come out in inches; K and the distortion
do not depend on the unit. The model: fx = fy (square pixels), k1, k2, p1, p2, k3.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.decode import ImageTooLarge, imdecode, too_large_sentence
from calibration.errors import CalibrationError

MIN_VIEWS = 3
"""Views of the target needed to calibrate."""
MIN_CHARUCO_CORNERS = 6
"""ChArUco corners a view needs to count."""
CALIBRATION_FLAGS = cv2.CALIB_FIX_ASPECT_RATIO
_SUBPIX_CRITERIA = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 50, 0.001)
_PATTERN_RE = re.compile(r"^\s*(\d+)\s*[xX×]\s*(\d+)\s*$")
MAX_PATTERN = 100
"""Most corners or squares a side of a calibration board may have (a bigger count is a typo)."""


@dataclass(frozen=True)
class View:
    """One photo's target points: object points (N, 3) inches and image points (N, 2) px."""

    name: str
    object_in: np.ndarray
    image_px: np.ndarray


@dataclass(frozen=True, eq=False)
class CameraFit:
    """The calibrated camera, each used view's RMS (px) and the images where no target was found."""

    camera: CameraModel
    per_view_rms_px: dict[str, float]
    skipped: tuple[str, ...]


def parse_pattern(text: str, what: str) -> tuple[int, int]:
    """`"9x6"` -> (9, 6); `what` names the option in the error message."""
    match = _PATTERN_RE.match(text)
    if not match or not all(2 <= int(match.group(i)) <= MAX_PATTERN for i in (1, 2)):
        raise CalibrationError(
            f"{what} {text!r} is not columns x rows (two whole numbers, 2 or more and at most {MAX_PATTERN}, like 9x6)."
        )
    return int(match.group(1)), int(match.group(2))


def read_gray(path: str | Path) -> np.ndarray:
    """An image file as 8-bit grey; CalibrationError naming it if missing or not an image."""
    p = Path(path)
    if not p.is_file():
        raise CalibrationError(f"Image {p} {'is a folder' if p.is_dir() else 'does not exist'}; check the path.")
    try:
        image = imdecode(np.fromfile(str(p), dtype=np.uint8), cv2.IMREAD_GRAYSCALE)
    except ImageTooLarge as err:
        raise CalibrationError(too_large_sentence(p, size=err.size)) from None
    if image is None:
        raise CalibrationError(f"{p} is not an image OpenCV can read; give a JPEG or PNG photo.")
    return np.asarray(image)


def chessboard_object_points(pattern: tuple[int, int], square_in: float) -> np.ndarray:
    """Inner corners of a `pattern` (cols, rows) chessboard in board inches (N, 3), OpenCV's order."""
    cols, rows = pattern
    grid = np.mgrid[0:cols, 0:rows].T.reshape(-1, 2).astype(np.float64) * square_in
    return np.column_stack([grid, np.zeros(len(grid))])


OPENCV_TUTORIAL_HALF_WINDOW = 11
"""cornerSubPix half-window (px) of OpenCV's calibration tutorial, which its reference figures were made with."""


def find_chessboard(gray: np.ndarray, pattern: tuple[int, int], half_window: int | None = None) -> np.ndarray | None:
    """Inner corners (N, 2) px of a `pattern` chessboard, refined to sub-pixel, or None if not found.

    half_window: cornerSubPix's half-window in px; None sizes it to a third of the square, so a window never
    reaches the neighbouring corners (a fixed 11 px one does on small squares, e.g. OpenCV's left02.jpg).
    """
    flags = cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE
    ok, corners = cv2.findChessboardCorners(gray, pattern, flags=flags)
    if not ok or corners is None:
        return None
    pts = corners.reshape(-1, 2)
    cols = pattern[0]
    grid = pts.reshape(-1, cols, 2)
    spacing = min(
        float(np.min(np.linalg.norm(np.diff(grid, axis=1), axis=2))),
        float(np.min(np.linalg.norm(np.diff(grid, axis=0), axis=2))) if grid.shape[0] > 1 else math.inf,
    )
    half = int(np.clip(spacing / 3, 3, 15)) if half_window is None else int(half_window)
    refined = cv2.cornerSubPix(gray, corners.astype(np.float32), (half, half), (-1, -1), _SUBPIX_CRITERIA)
    return np.asarray(refined, dtype=np.float64).reshape(-1, 2)


def aruco_dictionary(name: str) -> cv2.aruco.Dictionary:
    """The predefined ArUco dictionary OpenCV calls `name` (e.g. DICT_6X6_250)."""
    value = getattr(cv2.aruco, name, None) if name.startswith("DICT_") else None
    if not isinstance(value, int):
        raise CalibrationError(
            f"Dictionary {name!r} is not an OpenCV ArUco dictionary; use a name as OpenCV spells it, like DICT_6X6_250."
        )
    return cv2.aruco.getPredefinedDictionary(value)


MAX_SQUARE_IN = 20.0
"""The largest board square accepted, inches (a printed or screen board's squares are 0.5-3")."""


def check_square(square_in: float) -> None:
    """CalibrationError unless `square_in` is a board square's side in inches (0 < side <= MAX_SQUARE_IN)."""
    if not (math.isfinite(square_in) and 0 < square_in <= MAX_SQUARE_IN):
        raise CalibrationError(f"The square side {square_in:g}\" must be a positive number of inches, at most "
                               f"{MAX_SQUARE_IN:g}; measure one square of the printed board.")


def charuco_board(
    squares: tuple[int, int], square_in: float, marker_in: float, dictionary: str, legacy: bool = False
) -> cv2.aruco.CharucoBoard:
    """A ChArUco board of `squares` (cols, rows), sizes in inches; `legacy` for boards made before OpenCV 4.6."""
    check_square(square_in)
    if not (math.isfinite(marker_in) and 0 < marker_in < square_in):
        raise CalibrationError(
            f"The marker side {marker_in:g}\" must be positive and smaller than the square side {square_in:g}\"."
        )
    words = aruco_dictionary(dictionary)
    markers = squares[0] * squares[1] // 2
    if markers > len(words.bytesList):
        raise CalibrationError(
            f"A {squares[0]}x{squares[1]} ChArUco board needs {markers} markers but {dictionary} has only "
            f"{len(words.bytesList)}; check the board's size in squares (columns x rows) and its dictionary."
        )
    board = cv2.aruco.CharucoBoard(squares, float(square_in), float(marker_in), words)
    board.setLegacyPattern(legacy)
    return board


def detect_charuco(gray: np.ndarray, board: cv2.aruco.CharucoBoard) -> tuple[np.ndarray, np.ndarray]:
    """ChArUco corners (N, 2) px and their ids (N,) found in `gray` (N may be 0)."""
    corners, ids, _marker_corners, _marker_ids = cv2.aruco.CharucoDetector(board).detectBoard(gray)
    if corners is None or ids is None or len(corners) == 0:
        return np.zeros((0, 2)), np.zeros(0, dtype=np.int32)
    return np.asarray(corners, dtype=np.float64).reshape(-1, 2), np.asarray(ids, dtype=np.int32).ravel()


def charuco_view(name: str, gray: np.ndarray, board: cv2.aruco.CharucoBoard) -> View | None:
    """A View of the ChArUco corners in `gray`, or None if fewer than MIN_CHARUCO_CORNERS were found."""
    corners, ids = detect_charuco(gray, board)
    if len(ids) < MIN_CHARUCO_CORNERS:
        return None
    found = corners.reshape(-1, 1, 2).astype(np.float32)
    obj, img = board.matchImagePoints(found, ids.reshape(-1, 1))  # type: ignore[call-overload]
    return View(name, np.asarray(obj, dtype=np.float64).reshape(-1, 3), np.asarray(img, dtype=np.float64).reshape(-1, 2))


def board_pose(view: View, camera: CameraModel) -> tuple[np.ndarray, np.ndarray, float]:
    """(rvec, tvec, RMS px) of the target in `view` seen by `camera` (solvePnP + LM refinement)."""
    ok, rvec, tvec = cv2.solvePnP(view.object_in, view.image_px, camera.K, camera.dist, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise CalibrationError(f"The board pose in {view.name} could not be found; take the photo again.")
    rvec, tvec = cv2.solvePnPRefineLM(view.object_in, view.image_px, camera.K, camera.dist, rvec, tvec)
    proj, _ = cv2.projectPoints(view.object_in, rvec, tvec, camera.K, camera.dist)
    rms = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - view.image_px) ** 2, axis=1))))
    return rvec.reshape(3), tvec.reshape(3), rms


def calibrate_views(views: Sequence[View], image_size: tuple[int, int], skipped: Sequence[str] = ()) -> CameraFit:
    """calibrateCamera over `views` (at least MIN_VIEWS) taken at `image_size` (w, h) px."""
    obj = [v.object_in.astype(np.float32) for v in views]
    img = [v.image_px.astype(np.float32).reshape(-1, 1, 2) for v in views]
    K0 = np.eye(3)
    try:
        rms, K, dist, rvecs, tvecs = cv2.calibrateCamera(obj, img, image_size, K0, None, flags=CALIBRATION_FLAGS)
    except cv2.error:
        raise CalibrationError(
            "OpenCV could not calibrate from these views; take more photos with the board tilted in different ways."
        ) from None
    per_view = {}
    for v, r, t in zip(views, rvecs, tvecs):
        proj, _ = cv2.projectPoints(v.object_in, r, t, K, dist)
        per_view[v.name] = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - v.image_px) ** 2, axis=1))))
    camera = CameraModel(image_size, K, np.asarray(dist).ravel(), float(rms))
    return CameraFit(camera, per_view, tuple(skipped))


def _load_all(paths: Sequence[str | Path]) -> tuple[list[tuple[str, np.ndarray]], tuple[int, int]]:
    if not paths:
        raise CalibrationError("No images were given; pass photos of the calibration board.")
    images = [(Path(p).name, read_gray(p)) for p in paths]
    h, w = images[0][1].shape
    for name, g in images[1:]:
        if g.shape != (h, w):
            raise CalibrationError(
                f"{name} is {g.shape[1]}x{g.shape[0]} but {images[0][0]} is {w}x{h}; calibrate one resolution at a time."
            )
    return images, (w, h)


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


def _enough(views: list[View], skipped: list[str], target: str) -> None:
    if not views:
        raise CalibrationError(
            f"No {target} was found in {_names(skipped)}; check the board size option and that the whole board is "
            f"in view and sharp."
        )
    if len(views) < MIN_VIEWS:
        extra = f" ({_names(skipped)} had none)" if skipped else ""
        raise CalibrationError(
            f"The {target} was found in {len(views)} image(s){extra}; calibration needs at least {MIN_VIEWS} views, "
            f"so take more photos with the board at different angles."
        )


def calibrate_chessboard(
    paths: Sequence[str | Path], pattern: tuple[int, int], square_in: float, half_window: int | None = None
) -> CameraFit:
    """Intrinsics from photos of a chessboard of `pattern` (inner corners, cols x rows), squares `square_in`;
    `half_window` as in `find_chessboard`."""
    check_square(square_in)
    if min(pattern) < 3:
        raise CalibrationError(
            f"A {pattern[0]}x{pattern[1]} chessboard is too small for OpenCV; count the inner corners (3x3 or more)."
        )
    images, size = _load_all(paths)
    obj = chessboard_object_points(pattern, square_in)
    views, skipped = [], []
    for name, gray in images:
        corners = find_chessboard(gray, pattern, half_window)
        if corners is None:
            skipped.append(name)
        else:
            views.append(View(name, obj, corners))
    _enough(views, skipped, f"{pattern[0]}x{pattern[1]} chessboard (inner corners)")
    fit = calibrate_views(views, size, skipped)
    extra = {"square_in": square_in, "pattern": {"kind": "chessboard", "inner_corners": list(pattern)}}
    return _with_extra(fit, extra)


def calibrate_charuco(
    paths: Sequence[str | Path], squares: tuple[int, int], square_in: float, marker_in: float, dictionary: str
) -> CameraFit:
    """Intrinsics from photos of a ChArUco board of `squares` (cols x rows), sizes in inches."""
    if not (math.isfinite(square_in) and square_in > 0):
        raise CalibrationError(f"The square side {square_in:g}\" must be a positive number of inches.")
    images, size = _load_all(paths)
    best: tuple[list[View], list[str], bool] | None = None
    for legacy in (False, True) if squares[1] % 2 == 0 else (False,):
        board = charuco_board(squares, square_in, marker_in, dictionary, legacy)
        views, skipped = [], []
        for name, gray in images:
            view = charuco_view(name, gray, board)
            if view is None:
                skipped.append(name)
            else:
                views.append(view)
        if best is None or sum(len(v.object_in) for v in views) > sum(len(v.object_in) for v in best[0]):
            best = (views, skipped, legacy)
    assert best is not None
    views, skipped, legacy = best
    _enough(views, skipped, f"{squares[0]}x{squares[1]} ChArUco board ({dictionary})")
    fit = calibrate_views(views, size, skipped)
    extra = {
        "square_in": square_in,
        "pattern": {
            "kind": "charuco",
            "squares": list(squares),
            "marker_in": marker_in,
            "dictionary": dictionary,
            "legacy": legacy,
        },
    }
    return _with_extra(fit, extra)


def _with_extra(fit: CameraFit, extra: dict[str, object]) -> CameraFit:
    cam = fit.camera
    extra = {**extra, "images": list(fit.per_view_rms_px), "skipped_images": list(fit.skipped)}
    return CameraFit(CameraModel(cam.image_size, cam.K, cam.dist, cam.rms_px, extra), fit.per_view_rms_px, fit.skipped)
