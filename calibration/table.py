"""The table calibration: where the camera is over the table, from the anchor tags in one photo.

`calibrate_table` uses all four corners of every anchor of the layout. Each anchor may lie in any of its
four right-angle rotations: a homography from the anchor centres (or, for layouts of fewer than four
anchors, from one anchor's corners) predicts where each rotation's corners would be, and the closest
wins. With intrinsics the pose comes from solvePnP (IPPE for a flat layout) polished by Levenberg-
Marquardt, lens distortion removed. Without, the focal length and the lens's radial (and, when the
corners demand it, tangential) distortion are estimated from the anchors (`calibration.focal`,
`distortion_source == "estimated"`, or "none" when a pinhole fits them as well); when the anchors cannot
tell the focal length (a camera looking nearly straight down) it is assumed from a typical webcam field
of view and only the distortion is fitted: the table plane still maps exactly, but heights above it are
only as good as the assumption, and the calibration says so (`focal_source == "assumed"`, `warning`).

Calibration file (JSON)::

    {"format": "tablesight-calibration", "version": 1,
     "units": {"table": "inches", "image": "pixels"},
     "image_size": [w, h],
     "camera": {...camera file...},          see calibration/camera.py
     "board_in": [W, D],
     "layout": {...layout file...},          see calibration/layout.py
     "pose": {"rvec": [3], "tvec": [3]},    OpenCV: table inches -> camera frame
     "anchor_turns": {"0": k, ...},          quarter turns CCW each anchor was found in
     "residual_px": r, "residual_in": r,    RMS reprojection of the anchor corners
     "anchors_seen": [ids], "focal_source": "intrinsics" | "estimated" | "assumed",
     "focal_rel_std": s,                     1-sigma relative uncertainty of f (0 with intrinsics)
     "distortion_source": "intrinsics" | "estimated" | "none",   optional (older files: from the camera)
     "camera_position_in": [x, y, z], "tilt_deg": t}   informational
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration import focal
from calibration.camera import CameraModel, read_json, write_json
from calibration.errors import CalibrationError
from calibration.layout import AnchorLayout, layout_from_json

CALIBRATION_FORMAT = "tablesight-calibration"
CALIBRATION_VERSION = 1
INCONSISTENT_IN = 0.25
"""An anchor whose corners miss the layout by more than this (RMS, inches) makes the calibration refuse."""
FOCAL_SOURCES = ("intrinsics", "estimated", "assumed")
DISTORTION_SOURCES = ("intrinsics", "estimated", "none")
_LM_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-12)
_UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-12)


@dataclass(frozen=True, eq=False)
class TableCalibration:
    """A camera and its pose over the table. rvec/tvec map table inches into the camera frame (OpenCV)."""

    camera: CameraModel
    rvec: np.ndarray
    tvec: np.ndarray
    board_in: tuple[float, float]
    layout: AnchorLayout
    residual_px: float
    """RMS reprojection error of the anchor corners, pixels (2-D)."""
    residual_in: float
    """RMS distance between the anchor corners mapped to the table and their layout positions, inches."""
    anchors_seen: tuple[int, ...]
    focal_source: str
    anchor_turns: Mapping[int, int] = field(default_factory=dict)
    focal_rel_std: float = 0.0
    distortion_source: str = ""
    """"intrinsics" (the camera file's), "estimated" (fitted to the anchors) or "none" (dist = 0); empty:
    worked out from focal_source and the camera's dist."""

    def __post_init__(self) -> None:
        r = np.array(self.rvec, dtype=np.float64).reshape(3)
        t = np.array(self.tvec, dtype=np.float64).reshape(3)
        r.setflags(write=False)
        t.setflags(write=False)
        object.__setattr__(self, "rvec", r)
        object.__setattr__(self, "tvec", t)
        if self.focal_source not in FOCAL_SOURCES:
            raise CalibrationError(f"Focal source {self.focal_source!r} is not one of {', '.join(FOCAL_SOURCES)}.")
        if not self.distortion_source:
            if self.focal_source == "intrinsics":
                implied = "intrinsics"
            else:
                implied = "estimated" if np.any(self.camera.dist) else "none"
            object.__setattr__(self, "distortion_source", implied)
        if self.distortion_source not in DISTORTION_SOURCES:
            raise CalibrationError(
                f"Distortion source {self.distortion_source!r} is not one of {', '.join(DISTORTION_SOURCES)}."
            )

    # --- the pose ---------------------------------------------------------------------------------------
    @property
    def image_size(self) -> tuple[int, int]:
        """(w, h) pixels the calibration was made at."""
        return self.camera.image_size

    @property
    def rotation(self) -> np.ndarray:
        """3x3 rotation table frame -> camera frame."""
        return np.asarray(cv2.Rodrigues(self.rvec)[0])

    @property
    def camera_position_in(self) -> np.ndarray:
        """The camera's optical centre in table inches (x, y, z)."""
        return -self.rotation.T @ self.tvec

    @property
    def camera_height_in(self) -> float:
        """Height of the camera above the table top, inches."""
        return float(self.camera_position_in[2])

    @property
    def tilt_deg(self) -> float:
        """Angle between the optical axis and straight down, degrees (0 = looking straight down)."""
        axis = self.rotation.T @ np.array([0.0, 0.0, 1.0])
        return math.degrees(math.acos(float(np.clip(-axis[2], -1.0, 1.0))))

    @property
    def warning(self) -> str | None:
        """A sentence for the command line's user when the focal length was assumed, else None."""
        return self.warning_with("run tablesight calibrate-camera and pass --intrinsics")

    def warning_with(self, fix: str) -> str | None:
        """The sentence of `warning`, ending in `fix` (how to measure the lens where the user is), or None."""
        if self.focal_source != "assumed":
            return None
        return (
            f"The camera looks almost straight down, so the anchors cannot tell its focal length; a "
            f"{focal.ASSUMED_HFOV_DEG:g} degree field of view was assumed: positions on the table are exact but "
            f"heights above it are not, so {fix}."
        )

    # --- mapping ----------------------------------------------------------------------------------------
    def check_frame(self, image_size: tuple[int, int]) -> None:
        """Raise CalibrationError if a frame of `image_size` (w, h) was not taken at the calibrated size."""
        w, h = int(image_size[0]), int(image_size[1])
        cw, ch = self.image_size
        if (w, h) != (cw, ch):
            raise CalibrationError(
                f"The frame is {w}x{h} pixels but the calibration was made at {cw}x{ch}; set the camera to "
                f"{cw}x{ch} or calibrate again at {w}x{h}."
            )

    def image_to_table(self, points_px: np.ndarray, height_in: float | np.ndarray = 0.0) -> np.ndarray:
        """(N, 2) pixels seen on the plane z = height_in (inches, scalar or (N,)) -> (N, 2) table inches.

        Rays that do not meet that plane in front of the camera give NaN.
        """
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
        if pts.shape[0] == 0:
            return np.zeros((0, 2))
        norm = cv2.undistortPoints(
            pts.reshape(-1, 1, 2), self.camera.K, self.camera.dist, criteria=_UNDISTORT_CRITERIA
        ).reshape(-1, 2)
        rays = np.column_stack([norm, np.ones(len(norm))]) @ self.rotation  # rows: R^T ray, table frame
        centre = self.camera_position_in
        h = np.broadcast_to(np.asarray(height_in, dtype=np.float64), (len(pts),))
        with np.errstate(divide="ignore", invalid="ignore"):
            s = (h - centre[2]) / rays[:, 2]
        out = centre[:2] + s[:, None] * rays[:, :2]
        out[~(s > 0)] = np.nan
        return out

    def table_to_image(self, points_in: np.ndarray) -> np.ndarray:
        """(N, 3) table inches -> (N, 2) pixels, lens distortion included."""
        pts = np.asarray(points_in, dtype=np.float64).reshape(-1, 3)
        if pts.shape[0] == 0:
            return np.zeros((0, 2))
        proj, _ = cv2.projectPoints(pts, self.rvec, self.tvec, self.camera.K, self.camera.dist)
        return proj.reshape(-1, 2)

    def inches_per_px(self, points_px: np.ndarray, height_in: float | np.ndarray = 0.0) -> np.ndarray:
        """(N,) the largest table inches one pixel spans there on the plane z = height_in."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
        h = np.broadcast_to(np.asarray(height_in, dtype=np.float64), (len(pts),))
        d = 0.5
        cols = []
        for step in ((d, 0.0), (0.0, d)):
            delta = np.array(step)
            cols.append((self.image_to_table(pts + delta, h) - self.image_to_table(pts - delta, h)) / (2 * d))
        jac = np.stack(cols, axis=2)  # (N, 2 table, 2 pixel)
        return np.linalg.svd(jac, compute_uv=False)[:, 0]

    def position_pm(
        self, points_px: np.ndarray, height_in: float | np.ndarray, corner_noise_px: float
    ) -> np.ndarray:
        """(N,) two-sigma ± (inches) of a tag centre measured at `points_px` on the plane z = height_in.

        Per image axis, sigma_px^2 = residual_px^2 / 2 (the calibration's 2-D RMS split over x and y) +
        (corner_noise_px / 2)^2 (a centre from four corners of 1-sigma noise corner_noise_px); scaled by
        the local inches per pixel in the worst direction.
        """
        sigma_px = math.sqrt(self.residual_px**2 / 2 + (corner_noise_px / 2) ** 2)
        return 2.0 * sigma_px * self.inches_per_px(points_px, height_in)

    # --- files ------------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The calibration as the JSON object of the module docstring."""
        return {
            "format": CALIBRATION_FORMAT,
            "version": CALIBRATION_VERSION,
            "units": {"table": "inches", "image": "pixels"},
            "image_size": list(self.image_size),
            "camera": self.camera.to_json(),
            "board_in": [self.board_in[0], self.board_in[1]],
            "layout": self.layout.to_json(),
            "pose": {"rvec": self.rvec.tolist(), "tvec": self.tvec.tolist()},
            "anchor_turns": {str(k): v for k, v in sorted(self.anchor_turns.items())},
            "residual_px": self.residual_px,
            "residual_in": self.residual_in,
            "anchors_seen": list(self.anchors_seen),
            "focal_source": self.focal_source,
            "focal_rel_std": self.focal_rel_std if math.isfinite(self.focal_rel_std) else None,
            "distortion_source": self.distortion_source,
            "camera_position_in": self.camera_position_in.tolist(),
            "tilt_deg": self.tilt_deg,
        }

    @classmethod
    def from_json(cls, obj: Any, source: str = "The calibration") -> TableCalibration:
        """Validate a calibration JSON object; CalibrationError (one sentence naming `source`) if malformed."""
        fix = "make it again with tablesight calibrate"
        if not isinstance(obj, dict) or obj.get("format") != CALIBRATION_FORMAT:
            raise CalibrationError(f"{source} is not a Tablesight calibration; {fix}.")
        if obj.get("version") != CALIBRATION_VERSION:
            raise CalibrationError(
                f"{source} is version {obj.get('version')!r} but this Tablesight reads version "
                f"{CALIBRATION_VERSION}; {fix}."
            )
        needed = ("image_size", "camera", "board_in", "layout", "pose", "residual_px", "residual_in")
        missing = [k for k in (*needed, "anchors_seen", "focal_source") if k not in obj]
        if missing:
            raise CalibrationError(f"{source} has no {', '.join(repr(m) for m in missing)}; {fix}.")
        camera = CameraModel.from_json(obj["camera"], source=f"{source}'s camera")
        if list(camera.image_size) != obj["image_size"]:
            raise CalibrationError(f"{source}'s image_size disagrees with its camera's; {fix}.")
        layout = layout_from_json(obj["layout"], None, source=f"{source}'s layout")
        try:
            rvec = np.array(obj["pose"]["rvec"], dtype=np.float64)
            tvec = np.array(obj["pose"]["tvec"], dtype=np.float64)
            board = (float(obj["board_in"][0]), float(obj["board_in"][1]))
            residual_px, residual_in = float(obj["residual_px"]), float(obj["residual_in"])
            seen = tuple(int(i) for i in obj["anchors_seen"])
            turns = {int(k): int(v) for k, v in obj.get("anchor_turns", {}).items()}
            rel = obj.get("focal_rel_std", 0.0)
            rel = math.inf if rel is None else float(rel)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            raise CalibrationError(f"{source} has a malformed pose, board or residual; {fix}.") from None
        if not (all(math.isfinite(v) and v > 0 for v in board) and math.isfinite(residual_px) and residual_px >= 0
                and math.isfinite(residual_in) and residual_in >= 0):
            raise CalibrationError(f"{source} needs a positive board size and finite residuals of 0 or more; {fix}.")
        if rvec.shape != (3,) or tvec.shape != (3,) or not np.all(np.isfinite(np.r_[rvec, tvec])):
            raise CalibrationError(f"{source}'s pose must hold rvec and tvec of three numbers each; {fix}.")
        if obj["focal_source"] not in FOCAL_SOURCES:
            raise CalibrationError(f"{source}'s focal_source {obj['focal_source']!r} is unknown; {fix}.")
        distortion = obj.get("distortion_source", "")
        if distortion != "" and distortion not in DISTORTION_SOURCES:
            raise CalibrationError(f"{source}'s distortion_source {distortion!r} is unknown; {fix}.")
        cal = cls(
            camera, rvec, tvec, board, layout, residual_px, residual_in, seen, obj["focal_source"], turns, rel,
            distortion,
        )
        height = cal.camera_height_in
        if not math.isfinite(height) or height <= 0:
            raise CalibrationError(f"{source} puts the camera on or below the table; {fix}.")
        return cal


def save_calibration(cal: TableCalibration, path: str | Path) -> None:
    """Write `cal` as JSON to `path`."""
    write_json(cal.to_json(), Path(path))


def load_calibration(path: str | Path) -> TableCalibration:
    """Read a calibration file; one-sentence CalibrationError if missing, not JSON, incomplete or another version."""
    p = Path(path)
    obj = read_json(p, "Calibration file", "make one with tablesight calibrate")
    return TableCalibration.from_json(obj, source=f"Calibration file {p}")


# --- making one -------------------------------------------------------------------------------------------
def collect_anchors(tags: Iterable[tuple[int, np.ndarray]], layout: AnchorLayout) -> dict[int, np.ndarray]:
    """The layout's anchors among detected (id, corners px (4, 2)) pairs; other ids are ignored.

    Raises CalibrationError if an anchor id is seen twice.
    """
    found: dict[int, np.ndarray] = {}
    for tag_id, corners in tags:
        if tag_id not in layout.anchors:
            continue
        if tag_id in found:
            raise CalibrationError(
                f"Anchor {tag_id} was seen twice in the image; remove the extra tag {tag_id} (only the anchor "
                f"at its corner may carry that id)."
            )
        found[tag_id] = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    return found


def _id_list(ids: list[int]) -> str:
    return ", ".join(str(i) for i in ids[:-1]) + f" and {ids[-1]}" if len(ids) > 1 else str(ids[0])


def _missing_error(missing: list[int], layout: AnchorLayout) -> CalibrationError:
    noun = f"Anchor {missing[0]} was" if len(missing) == 1 else f"Anchors {_id_list(missing)} were"
    return CalibrationError(
        f"{noun} not found in the image; make sure all {len(layout.anchors)} anchor tags "
        f"({_id_list(list(layout.ids))}) are in view, flat, unobstructed and lit."
    )


def _diagonal_centre(corners: np.ndarray) -> np.ndarray:
    """Where the diagonals of a quadrilateral cross: the image of the square's centre under perspective."""
    h = np.column_stack([corners, np.ones(4)])
    x = np.cross(np.cross(h[0], h[2]), np.cross(h[1], h[3]))
    if abs(x[2]) < 1e-12:
        return np.asarray(corners.mean(axis=0))
    return np.asarray(x[:2] / x[2])


def _turns_under(H: np.ndarray, observed: Mapping[int, np.ndarray], layout: AnchorLayout) -> dict[int, int]:
    turns = {}
    for i, seen in observed.items():
        anchor = layout.anchors[i]
        errors = []
        for k in range(4):
            pred = cv2.perspectiveTransform(anchor.corners_in(k)[:, :2].reshape(-1, 1, 2), H).reshape(4, 2)
            errors.append(float(np.sum((pred - seen) ** 2)))
        turns[i] = int(np.argmin(errors))
    return turns


def _homography_rms(observed: Mapping[int, np.ndarray], layout: AnchorLayout, turns: Mapping[int, int]) -> float:
    src = np.vstack([layout.anchors[i].corners_in(turns[i])[:, :2] for i in observed])
    dst = np.vstack([observed[i] for i in observed])
    H, _ = cv2.findHomography(src, dst, 0)
    if H is None:
        return math.inf
    pred = cv2.perspectiveTransform(src.reshape(-1, 1, 2), H).reshape(-1, 2)
    return float(np.sqrt(np.mean(np.sum((pred - dst) ** 2, axis=1))))


def anchor_turns(observed: Mapping[int, np.ndarray], layout: AnchorLayout) -> dict[int, int]:
    """Quarter turns (CCW, 0..3) each anchor lies in, from its corners (px, lens distortion removed).

    Candidates: the homography of the anchor centres (four or more anchors), and the homography of the
    largest anchor's own corners in each of its rotations; the candidate whose corners fit one plane
    homography best wins.
    """
    candidates: list[dict[int, int]] = []
    ids = list(observed)
    if len(ids) >= 4:
        src = np.array([layout.anchors[i].centre for i in ids])
        dst = np.array([_diagonal_centre(observed[i]) for i in ids])
        H, _ = cv2.findHomography(src, dst, 0)
        if H is not None:
            candidates.append(_turns_under(H, observed, layout))
    ref = max(ids, key=lambda i: abs(cv2.contourArea(observed[i].astype(np.float32))))
    for k in range(4):
        H, _ = cv2.findHomography(layout.anchors[ref].corners_in(k)[:, :2], observed[ref], 0)
        if H is not None:
            candidates.append(_turns_under(H, observed, layout))
    if not candidates:
        raise CalibrationError("The anchor tags are degenerate in the image (zero area); take the photo again.")
    return min(candidates, key=lambda t: _homography_rms(observed, layout, t))


def _solve_pose(obj: np.ndarray, img: np.ndarray, K: np.ndarray, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    flat = bool(np.allclose(obj[:, 2], 0.0))
    flags = cv2.SOLVEPNP_IPPE if flat else cv2.SOLVEPNP_SQPNP
    ok, rvec, tvec = cv2.solvePnP(obj, img, K, dist, flags=flags)
    if not ok:
        raise CalibrationError("The camera pose could not be found from the anchors; check --board and --layout.")
    rvec, tvec = cv2.solvePnPRefineLM(obj, img, K, dist, rvec, tvec, criteria=_LM_CRITERIA)
    return rvec.reshape(3), tvec.reshape(3)


def calibrate_table(
    anchors: Mapping[int, np.ndarray],
    layout: AnchorLayout,
    image_size: tuple[int, int],
    camera: CameraModel | None = None,
) -> TableCalibration:
    """Calibrate from anchor corners (tag id -> (4, 2) px, corner order of CONTRACT_VISION) in one image.

    `image_size` is (w, h) px. With `camera` its intrinsics are used (and must be of the same size);
    without, the focal length is estimated (module docstring). Raises CalibrationError naming missing,
    malformed or inconsistent anchors, or a camera of another resolution.
    """
    size = (int(image_size[0]), int(image_size[1]))
    if size[0] <= 0 or size[1] <= 0:
        raise CalibrationError(f"The image size {size[0]}x{size[1]} is not a picture; check the image.")
    if camera is not None and camera.image_size != size:
        cw, ch = camera.image_size
        raise CalibrationError(
            f"The image is {size[0]}x{size[1]} pixels but the camera file was calibrated at {cw}x{ch}; take the "
            f"photo at {cw}x{ch} or calibrate the camera at {size[0]}x{size[1]}."
        )
    missing = [i for i in layout.ids if i not in anchors]
    if missing:
        raise _missing_error(missing, layout)
    ids = layout.ids
    observed: dict[int, np.ndarray] = {}
    for i in ids:
        c = np.asarray(anchors[i], dtype=np.float64)
        if c.shape != (4, 2) or not np.all(np.isfinite(c)):
            raise CalibrationError(f"Anchor {i}'s corners must be 4 finite (x, y) pixel pairs, got shape {c.shape}.")
        observed[i] = c
    if camera is not None:
        ideal = {
            i: cv2.undistortPoints(
                c.reshape(-1, 1, 2), camera.K, camera.dist, P=camera.K, criteria=_UNDISTORT_CRITERIA
            ).reshape(4, 2)
            for i, c in observed.items()
        }
    else:
        ideal = observed
    turns = anchor_turns(ideal, layout)
    obj = np.vstack([layout.anchors[i].corners_in(turns[i]) for i in ids])
    img = np.vstack([observed[i] for i in ids])

    rel = 0.0
    if camera is not None:
        rvec, tvec = _solve_pose(obj, img, camera.K, camera.dist)
        source = "intrinsics"
        used = camera
    else:
        fit = focal.estimate_lens(obj, img, size)
        if fit is not None and fit.rel_std <= focal.MAX_REL_STD:
            f, K, dist, rvec, tvec = fit.focal_px, fit.K, fit.dist, fit.rvec, fit.tvec
            rel, source = fit.rel_std, "estimated"
        else:
            f = focal.assumed_focal_px(size)
            rel = fit.rel_std if fit is not None else math.inf
            source = "assumed"
            held = focal.estimate_lens(obj, img, size, fix_focal_px=f)
            if held is not None:
                K, dist, rvec, tvec = held.K, held.dist, held.rvec, held.tvec
            else:
                K, dist = focal.intrinsic_matrix(f, size), np.zeros(5)
                rvec, tvec = _solve_pose(obj, img, K, dist)
        used = CameraModel(size, K, dist, 0.0)

    proj, _ = cv2.projectPoints(obj, rvec, tvec, used.K, used.dist)
    residual_px = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - img) ** 2, axis=1))))
    if camera is None:
        used = CameraModel(size, used.K, used.dist, residual_px)
    cal = TableCalibration(
        camera=used,
        rvec=rvec,
        tvec=tvec,
        board_in=layout.board,
        layout=layout,
        residual_px=residual_px,
        residual_in=0.0,
        anchors_seen=ids,
        focal_source=source,
        anchor_turns=turns,
        focal_rel_std=rel,
    )
    if cal.camera_height_in <= 0:
        raise CalibrationError(
            "The anchors put the camera under the table, so their corners do not fit the layout; check --board "
            "and --layout."
        )
    back = cal.image_to_table(img, obj[:, 2])
    err = np.linalg.norm(back - obj[:, :2], axis=1)
    err = np.where(np.isfinite(err), err, 1e9)
    per_anchor = np.sqrt(np.mean(err.reshape(-1, 4) ** 2, axis=1))
    worst = int(np.argmax(per_anchor))
    if per_anchor[worst] > INCONSISTENT_IN:
        W, D = layout.board
        lens = " (or, if they are right, measure the lens with tablesight calibrate-camera)" if camera is None else ""
        raise CalibrationError(
            f"Anchor {ids[worst]} is {per_anchor[worst]:.2f}\" from where a {W:g}x{D:g} board puts it, so the "
            f"anchors do not fit the layout; check --board (the play area's width x depth in inches) and "
            f"--layout{lens}."
        )
    residual_in = float(np.sqrt(np.mean(err**2)))
    return TableCalibration(
        used, rvec, tvec, layout.board, layout, residual_px, residual_in, ids, source, turns, rel, cal.distortion_source
    )
