"""The calibration wizard: capture a frame (or upload a photo), show the anchors found and missing, calibrate
the table for a board size and report the residual; the lens (camera intrinsics) from chessboard or ChArUco photos,
which lens is in use and forgetting it (a lens of another size is scaled or set aside: calibration/lens_fit.py); and
"Measure tag mounts": each base turned on the spot before the live camera gives its tag's real offset
(session/mount_calibration.py, vision/mount_fit.py), which the page saves into the roster through PUT
/api/roster."""

from __future__ import annotations

import re
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import cv2
import numpy as np
from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from calibration.camera import CameraModel
from calibration.decode import ImageTooLarge, imdecode, too_large_sentence
from calibration.errors import CalibrationError, InputError
from calibration.intrinsics import aruco_dictionary, calibrate_charuco, calibrate_chessboard, parse_pattern
from calibration.layout import default_layout, parse_board
from calibration.lens_fit import fit_lens, size_words
from calibration.mount_advice import mount_advice
from calibration.table import calibrate_table, collect_anchors
from rules.roster import Roster
from session.mount_calibration import live_progress, survey_fits, with_mounts
from session.runtime import LensInUse
from vision.mount_fit import MountSurvey
from vision.tags import detect_tags, gray_frame
from webui.deps import RuntimeDep, SettingsDep, page
from webui.words import page_words

router = APIRouter()


class UploadError(InputError):
    """An uploaded file that is not a usable image."""


@router.get("/calibrate")
def calibrate_page(request: Request) -> Response:
    return page(request, "calibrate.html", "calibrate")


async def read_upload(upload: UploadFile, limit: int) -> bytes:
    """The upload's bytes; 413 naming the file when it is over `limit` bytes."""
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(
            413,
            f"{upload.filename or 'The upload'} is larger than {limit / 1e6:.1f} MB, the limit for one image; "
            "send a smaller photo.",
        )
    return data


def decode_image(data: bytes, name: str) -> np.ndarray:
    try:
        image = imdecode(data, cv2.IMREAD_COLOR)
    except ImageTooLarge as err:
        raise UploadError(too_large_sentence(name, "upload a JPEG or PNG photo of the table (e.g. 1920x1080)",
                                             err.size)) from None
    if image is None:
        raise UploadError(f"{name} is not a readable image; upload a JPEG or PNG photo of the table.")
    return image


MEASURE_LENS_HERE = "measure the lens in step 2 below"
"""How a page sentence says to measure the lens (the command line's says "tablesight calibrate-camera")."""
UNREADABLE_LENS = ("The saved lens file cannot be read, so the table is calibrated without it; forget it and "
                   "measure the lens again.")


def page_sentence(text: str) -> str:
    """A calibration sentence in the page's words: no flags, no command to run."""
    return page_words(text).replace("measure the lens with tablesight calibrate-camera", MEASURE_LENS_HERE)


def _lens_for(lens: LensInUse, size: tuple[int, int]) -> tuple[CameraModel | None, str]:
    """The lens to calibrate a frame of `size` (w, h) px with (None: without one), and the sentence saying what was
    done with it ("" when it is used as measured, or there is none)."""
    if lens.unreadable:
        return None, UNREADABLE_LENS
    if lens.camera is None:
        return None, ""
    fit = fit_lens(lens.camera, size)
    return fit.camera, fit.sentence


@router.post("/api/calibration/table")
async def calibrate_table_route(
    runtime: RuntimeDep,
    settings: SettingsDep,
    board: Annotated[str, Form()],
    image: Annotated[UploadFile | None, File()] = None,
) -> dict[str, Any]:
    """Calibrate from an uploaded photo, or from the newest live frame when none is sent.

    The decoding, the detection and the fit run on a worker thread: the live view keeps its frames meanwhile."""
    try:
        w, d = parse_board(board)
    except CalibrationError:
        raise UploadError(f"The board size {board.strip()[:40]} is not a width x depth in inches, both above 0; "
                          "write it like 30x22.") from None
    if image is not None:
        data = await read_upload(image, settings.max_upload_bytes)
        name = image.filename or "The upload"
        return await run_in_threadpool(_calibrate_table, runtime, w, d,
                                       [(lambda: decode_image(data, name), image.filename or "upload")])
    recent = list(reversed(runtime.live.recent_results))
    if not recent:
        raise UploadError("No camera frame has arrived yet; wait for the picture or upload a photo.")
    return await run_in_threadpool(_calibrate_table, runtime, w, d,
                                   [(_picture_of(r), f"live frame {r.frame_index}") for r in recent])


def _picture_of(result: Any) -> Callable[[], np.ndarray]:
    return lambda: np.asarray(result.image)


def _calibrate_table(runtime: Any, w: float, d: float,
                     pictures: Sequence[tuple[Callable[[], np.ndarray], str]]) -> dict[str, Any]:
    """Calibrate from the picture among `pictures` (newest first) whose anchors agree best: a hand over an anchor
    or a blurred frame spoils one frame of the live feed, not the next; if none calibrates, the newest's answer."""
    lens = runtime.lens()
    tried = [_fit_table(lens, w, d, picture, source) for picture, source in pictures]
    good = [(answer, cal) for answer, cal in tried if cal is not None]
    if not good:
        return tried[0][0]
    answer, cal = min(good, key=lambda ac: ac[1].residual_in)
    runtime.set_calibration(cal)
    if len(pictures) > 1:
        answer["frames_tried"] = len(pictures)
    return answer


def _fit_table(lens: LensInUse, w: float, d: float, picture: Callable[[], np.ndarray],
               source: str) -> tuple[dict[str, Any], Any]:
    """The calibration answer for one picture with `lens`, and its TableCalibration (None: it does not calibrate).
    `lens` in the answer: what was done with the lens (scaled, set aside), or ""."""
    frame = picture()
    layout = default_layout(w, d)
    tags = detect_tags(gray_frame(frame))
    found = collect_anchors(((t.id, t.corners_px) for t in tags), layout)
    size = (int(frame.shape[1]), int(frame.shape[0]))
    answer: dict[str, Any] = {
        "source": source,
        "board": {"w": w, "d": d},
        "image_size": list(size),
        "anchors_expected": list(layout.ids),
        "anchors_found": sorted(found),
        "anchors_missing": [i for i in layout.ids if i not in found],
        "anchor_corners": {str(i): np.round(c, 2).tolist() for i, c in found.items()},
        "other_tags": sorted({t.id for t in tags if t.id not in layout.anchors}),
        "ok": False,
        "message": "",
    }
    camera, answer["lens"] = _lens_for(lens, size)
    try:
        cal = calibrate_table(found, layout, size, camera)
    except CalibrationError as err:
        answer["message"] = page_sentence(str(err))
        if camera is not None and not answer["anchors_missing"]:
            answer["lens"] = " ".join(filter(None, [answer["lens"], "If the board size is right, the lens may be "
                                                    "wrong: forget it below and calibrate again."]))
        return answer, None
    answer.update(
        ok=True,
        residual_in=round(float(cal.residual_in), 4),
        residual_px=round(float(cal.residual_px), 3),
        focal_source=cal.focal_source,
        camera_height_in=round(cal.camera_height_in, 2),
        tilt_deg=round(cal.tilt_deg, 1),
        message=cal.warning_with(MEASURE_LENS_HERE) or
        f"Calibrated: anchor corners agree to {cal.residual_in:.3f}\" RMS.",
        advice=mount_advice(cal).sentences(),
    )
    return answer, cal


@router.get("/api/calibration")
def calibration_state(runtime: RuntimeDep) -> dict[str, Any]:
    cal = runtime.setup.calibration
    if cal is None:
        return {"calibrated": False}
    return {
        "calibrated": True,
        "board": {"w": cal.board_in[0], "d": cal.board_in[1]},
        "residual_in": round(float(cal.residual_in), 4),
        "residual_px": round(float(cal.residual_px), 3),
        "focal_source": cal.focal_source,
        "image_size": list(cal.image_size),
    }


@router.post("/api/calibration/camera")
async def calibrate_camera_route(
    runtime: RuntimeDep,
    settings: SettingsDep,
    images: Annotated[list[UploadFile], File()],
    pattern: Annotated[str, Form()],
    size: Annotated[str, Form()],
    square_in: Annotated[float, Form(gt=0, lt=20)],
    marker_in: Annotated[float | None, Form(gt=0, lt=20)] = None,
    dictionary: Annotated[str, Form()] = "DICT_4X4_1000",
) -> dict[str, Any]:
    """Camera intrinsics from chessboard (`size` = inner corners CxR) or ChArUco (`size` = squares CxR) photos."""
    if len(images) > settings.max_uploads:
        raise HTTPException(413, f"{len(images)} photos were sent; the limit is {settings.max_uploads}.")
    kind = pattern.strip().lower()
    if kind not in ("chessboard", "charuco"):
        raise UploadError(f"The target {pattern.strip()[:40]} is not known; choose a chessboard or a ChArUco board.")
    try:
        grid = parse_pattern(size, "The size")
    except CalibrationError:
        raise UploadError(f"The size {size.strip()[:40]} is not columns x rows; write two whole numbers from 2 to "
                          "100, like 9x6.") from None
    if kind == "charuco" and marker_in is None:
        raise UploadError("A ChArUco board needs the side of its markers; fill in Marker, in inches.")
    if kind == "charuco":
        try:
            aruco_dictionary(dictionary.strip())
        except CalibrationError:
            raise UploadError(f"The dictionary {dictionary.strip()[:40]} is not one OpenCV knows; write its name as "
                              "OpenCV spells it, like DICT_4X4_1000.") from None
    photos = [(await read_upload(up, settings.max_upload_bytes), up.filename or f"Photo {i + 1}")
              for i, up in enumerate(images)]

    def fit_camera() -> Any:  # on a worker thread: decoding and the corner search take seconds
        with tempfile.TemporaryDirectory(prefix="tablesight-cam-") as tmp:
            paths = []
            for i, (data, name) in enumerate(photos):
                decode_image(data, name)
                safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name)[-60:]
                path = Path(tmp) / f"{i + 1:02d}_{safe}"
                path.write_bytes(data)
                paths.append(path)
            if kind == "chessboard":
                return calibrate_chessboard(paths, grid, square_in)
            assert marker_in is not None
            return calibrate_charuco(paths, grid, square_in, marker_in, dictionary.strip())

    fit = await run_in_threadpool(fit_camera)
    camera = fit.camera
    runtime.save_lens(camera)
    photos_used = len(fit.per_view_rms_px)
    return {
        "image_size": list(camera.image_size),
        "rms_px": round(float(camera.rms_px), 4),
        "fx": round(float(camera.K[0, 0]), 2),
        "fy": round(float(camera.K[1, 1]), 2),
        "used": [Path(n).name.split("_", 1)[-1] for n in fit.per_view_rms_px],
        "skipped": [Path(n).name.split("_", 1)[-1] for n in fit.skipped],
        "message": f"The lens was measured from {photos_used} photo{'' if photos_used == 1 else 's'} at "
        f"{size_words(camera.image_size)} ({camera.rms_px:.3f} px RMS); calibrate the table again to use it.",
    }


def _lens_state(runtime: Any, lens: LensInUse) -> dict[str, Any]:
    """Which lens the next table calibration uses, in one sentence: its size and RMS, scaled to the live camera's
    frames or set aside for them, or that there is none. `in_use`: a lens will be used; `can_forget`: there is one."""
    if lens.unreadable:
        return {"in_use": False, "can_forget": True, "message": UNREADABLE_LENS}
    if lens.camera is None:
        return {"in_use": False, "can_forget": False, "message": "No lens is measured, so the table is calibrated "
                "without one; measure it below for the best accuracy."}
    cam = lens.camera
    latest = runtime.live.latest_result
    fit = fit_lens(cam, latest.size) if latest is not None else None
    if fit is not None and fit.camera is None:
        return {"in_use": False, "can_forget": True, "message": fit.sentence}
    measured = f"{size_words(cam.image_size)}, {cam.rms_px:.2f} px RMS"
    what = f"The lens measured at {measured}," if lens.from_file else f"The lens the table was calibrated with ({measured})"
    scaled = f", scaled to this camera's {size_words(fit.frame_size)}" if fit is not None and fit.scaled else ""
    return {"in_use": True, "can_forget": True, "message": f"{what} is in use{scaled}."}


@router.get("/api/calibration/lens")
def lens_state(runtime: RuntimeDep) -> dict[str, Any]:
    """The lens in use (see `_lens_state`)."""
    return _lens_state(runtime, runtime.lens())


@router.delete("/api/calibration/lens")
def forget_lens(runtime: RuntimeDep) -> dict[str, Any]:
    """Forget the lens: the next table calibration is made without one. The answer is the lens state, with a
    `forgot` sentence."""
    was = runtime.forget_lens()
    state = _lens_state(runtime, runtime.lens())
    if was.camera is not None:
        state["forgot"] = (f"Forgot the lens measured at {size_words(was.camera.image_size)}: the next table "
                           "calibration is made without it.")
    elif was.unreadable:
        state["forgot"] = "Forgot the saved lens file: the next table calibration is made without a lens."
    else:
        state["forgot"] = "There was no lens to forget; the table is calibrated without one."
    return state


# ---------------------------------------------------------------------------------------------- tag mounts


_MOUNT_LOCK = threading.Lock()
"""One look, reset or save at a time (they run on worker threads)."""


def _mount_survey(request: Request) -> MountSurvey:
    """The server's one mount measurement in progress (the wizard's step 3)."""
    survey = getattr(request.app.state, "mount_survey", None)
    if not isinstance(survey, MountSurvey):
        survey = MountSurvey()
        request.app.state.mount_survey = survey
    return survey


def _roster(runtime: Any) -> Roster:
    with runtime.setup.lock:
        roster = runtime.setup.roster
    if roster is None:
        raise UploadError("There is no roster yet; add the units and their tags on the Roster page, then measure "
                          "their mounts.")
    return roster  # type: ignore[no-any-return]


@router.post("/api/calibration/mounts/look")
def look_at_mounts(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """Add the newest live frame to the mount measurement; each roster tag's degrees turned and fitted offset."""
    roster = _roster(runtime)
    with _MOUNT_LOCK:
        return live_progress(_mount_survey(request), roster, runtime.live.latest_result)


@router.post("/api/calibration/mounts/reset")
def reset_mounts(request: Request) -> dict[str, Any]:
    """Forget every turn measured so far."""
    with _MOUNT_LOCK:
        _mount_survey(request).reset()
    return {"reset": True}


@router.post("/api/calibration/mounts/roster")
def roster_with_mounts(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """The current roster with the measured mounts written in (tag_offset_in, mount_pm_in), not saved: the page
    saves it with PUT /api/roster, as the Roster page does."""
    roster = _roster(runtime)
    with _MOUNT_LOCK:
        fits = survey_fits(_mount_survey(request), roster)
    if not fits:
        raise UploadError("No tag has turned far enough on the spot yet; turn each base a quarter turn about its own "
                          "centre where the camera sees its tag, then save.")
    return {"roster": with_mounts(roster.to_json(), fits), "measured": sorted(fits)}
