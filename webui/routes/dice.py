"""The players' own dice on the live table (docs: the dice API): the pending roll and the last one, faces typed or
read by a camera, cancelling, correcting, "roll for us", the dice tray and the phone's dice photos.

Every answer rules at once (the live loop's lock, never a frame's wait). Bad input is one sentence: 400 for a body
or faces that do not fit, 409 when there is no roll to answer or nothing to correct."""

from __future__ import annotations

import io
import logging
import warnings
from typing import Annotated, Any, Literal, TypeVar

import cv2
import numpy as np
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError
from starlette.concurrency import run_in_threadpool

from calibration.errors import InputError
from session.dice_watch import TRAY_FILE, Tray, library_reader
from session.drivable import NoGameToRule
from session.pending_roll import NoRollPending, NothingToCorrect, RollsAsRecorded
from session.table_setup import with_roll_for_us
from webui.deps import RuntimeDep
from webui.json_body import json_body

router = APIRouter()
log = logging.getLogger("tablesight.dice")

MOST_DICE = 60
"""At most this many faces in one answer."""
MOST_PIXELS = 40_000_000
"""At most this many pixels in a dice photo (the phone's dice camera sends 1920 px at most; a few hundred kB of PNG
can unpack to gigabytes, so the size is read from the file's header before it is unpacked)."""


class BadDiceInput(InputError):
    """A dice request body that does not fit its form."""


Face = Annotated[StrictInt, Field(ge=1, le=100)]


class RollBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    faces: list[Face] = Field(min_length=1, max_length=MOST_DICE)
    source: Literal["typed", "camera", "phone"] = "typed"
    roll: StrictInt | None = None
    """The id of the pending roll the faces answer (as /api/live/dice gave it): a page that shows a roll answered
    meanwhile (on another phone) is told so (409) instead of answering the roll now pending with them."""


class CorrectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    faces: list[Face] = Field(min_length=1, max_length=MOST_DICE)
    last: StrictInt | None = None
    """The id of the ruling the faces correct (/api/live/dice's "last"): 409 when another has been ruled since."""


class RollForUsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    on: StrictBool


class TrayBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    polygon_px: list[Any] | None


WORDS = {
    "faces": 'the faces, a list of whole numbers such as [4, 6, 1] (each the number a die shows)',
    "source": 'where the faces came from: "typed", "camera" or "phone"',
    "on": "true or false",
    "polygon_px": "the tray's corners as [[x, y], ...] in pixels, or null",
    "roll": "the id of the pending roll, a whole number (as /api/live/dice gives it), or left out",
    "last": "the id of the last roll ruled, a whole number (as /api/live/dice gives it), or left out",
}


M = TypeVar("M", bound=BaseModel)


async def _body(request: Request, model: type[M], what: str) -> M:
    """The JSON body as `model`, or one sentence naming the field that does not fit (400)."""
    obj = await json_body(request, what)
    try:
        return model.model_validate(obj)
    except ValidationError as err:
        first = err.errors()[0]
        loc = [str(p) for p in first.get("loc", ()) if isinstance(p, str)]
        if first.get("type") == "model_type":
            raise BadDiceInput(f"{what} must be a JSON object; send e.g. {_example(model)}.") from None
        field = loc[0] if loc else ""
        if first.get("type") == "extra_forbidden":
            raise BadDiceInput(f"{what} has a field {field!r} it does not take; send e.g. {_example(model)}.") from None
        if first.get("type") == "missing":
            raise BadDiceInput(f"{what} needs {field!r}: {WORDS.get(field, 'see the dice API')}.") from None
        if first.get("type") == "too_long" and field == "faces":
            raise BadDiceInput(f"{what} gives {len(obj[field])} faces; at most {MOST_DICE} dice are taken at once: "
                               "give the faces of the roll asked for.") from None
        raise BadDiceInput(f"{what}'s {field!r} must be {WORDS.get(field, 'as the dice API says')}; got "
                           f"{_short(first.get('input'))}.") from None


def _short(value: Any) -> str:
    """A value as the sentence quotes it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _example(model: type[BaseModel]) -> str:
    return {RollBody: '{"faces": [4, 6, 1], "source": "typed"}', CorrectBody: '{"faces": [4, 6, 1]}',
            RollForUsBody: '{"on": true}', TrayBody: '{"polygon_px": [[100, 80], [400, 80], [400, 300]]}'}.get(
                model, "{}")


def _request_words(pending: dict[str, Any]) -> str:
    """A pending roll's sentence ("roll 1 d6 for ..."), from /api/live/dice's object."""
    request = pending.get("request") or {}
    return str(request.get("sentence") or pending.get("words") or "see the dice panel")


def _conflict(err: InputError) -> JSONResponse:
    return JSONResponse({"detail": str(err)}, status_code=409)


@router.get("/api/live/dice")
def dice_state(runtime: RuntimeDep) -> dict[str, Any]:
    """The pending roll, what the camera reads, the tray, the last roll and whether Tablesight rolls for the players."""
    return runtime.live.dice_state()


@router.post("/api/live/dice/roll", response_model=None)
async def dice_roll(request: Request, runtime: RuntimeDep) -> dict[str, Any] | JSONResponse:
    """The faces of the pending roll: its action is ruled again at once with them."""
    body = await _body(request, RollBody, "The roll")
    pending = (await run_in_threadpool(runtime.live.dice_state))["pending"]  # it waits for the ruling lock
    if body.roll is not None and pending is not None and pending["id"] != body.roll:
        return _conflict(NoRollPending(f"That roll was answered or cancelled meanwhile; the table now waits for "
                                       f"this one: {_request_words(pending)}."))
    try:
        return await run_in_threadpool(runtime.live.answer_roll, body.faces, body.source)
    except NoRollPending as err:
        return _conflict(err)


@router.post("/api/live/dice/cancel")
async def dice_cancel(runtime: RuntimeDep) -> dict[str, Any]:
    """Drop the pending roll; its action is not ruled."""
    return await run_in_threadpool(runtime.live.cancel_roll)


@router.post("/api/live/dice/correct", response_model=None)
async def dice_correct(request: Request, runtime: RuntimeDep) -> dict[str, Any] | JSONResponse:
    """Overrule the faces of the last action ruled with dice: it is ruled again with these (recorded)."""
    body = await _body(request, CorrectBody, "The correction")
    last = (await run_in_threadpool(runtime.live.dice_state))["last"]  # it waits for the ruling lock
    if body.last is not None and last is not None and last["id"] != body.last:
        return _conflict(NothingToCorrect(f"Another action was ruled with dice since ({last['words']}); correct that "
                                          "one, or overrule the verdict instead."))
    try:
        return await run_in_threadpool(runtime.live.correct_roll, body.faces)
    except NothingToCorrect as err:
        return _conflict(err)


@router.put("/api/live/dice/roll-for-us", response_model=None)
async def dice_roll_for_us(request: Request, runtime: RuntimeDep) -> dict[str, Any] | JSONResponse:
    """Whether Tablesight rolls the dice the players do not give, saved with the game (its roster's "roll_for_us");
    a recorded session playing its own script (the sample) rolls as recorded: 409, and nothing is saved."""
    body = await _body(request, RollForUsBody, "Roll for us")
    with runtime.setup.lock:
        scripted = bool(runtime.setup.declarations)  # what makes the pipeline play the recording's script
    if scripted:
        return _conflict(RollsAsRecorded())
    roster = with_roll_for_us(runtime.setup, body.on)
    if roster is None:
        raise NoGameToRule("No game is set up to save it with: choose a game and its units on the new-game page first.")
    runtime.save_setup_file("roster.json", roster)
    return {"roll_for_us": await run_in_threadpool(runtime.live.set_roll_for_us, body.on)}


@router.put("/api/live/dice/tray")
async def dice_tray(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """The dice tray's outline in the camera image (pixels), or null for none; saved beside the calibration."""
    body = await _body(request, TrayBody, "The dice tray")
    if body.polygon_px is None:
        runtime.live.dice.set_tray(None)
        runtime.save_setup_file(TRAY_FILE, None)
        return {"tray": None}
    result = runtime.live.latest_result
    with runtime.setup.lock:
        cal = runtime.setup.calibration
    size = result.size if result is not None else tuple(cal.image_size) if cal is not None else None
    if size is None:
        raise BadDiceInput("No camera picture has arrived yet to mark the tray on; wait for the camera and mark it.")
    tray = Tray.of(body.polygon_px, (int(size[0]), int(size[1])))
    runtime.save_setup_file(TRAY_FILE, tray.to_json())
    runtime.live.dice.set_tray(tray)
    return {"tray": tray.to_json()}


@router.post("/api/live/dice/photo", response_model=None)
async def dice_photo(request: Request, sides: Annotated[int, Query()] = 6) -> dict[str, Any] | JSONResponse:
    """Read the dice in a photo (the phone's dice camera): {"dice": [...], "image_size": [w, h]}; the players confirm
    them, which posts /api/live/dice/roll with source "phone"."""
    if sides not in (6, 20):
        raise BadDiceInput(f"Dice photos are read as d6 or d20; sides {sides} is neither: use ?sides=6 or ?sides=20.")
    data = await request.body()
    image = await run_in_threadpool(_photo, data)  # unpacking a big photo must not hold up every other request
    read = library_reader()
    if read is None:
        return JSONResponse({"detail": "Dice reading is unavailable in this Tablesight; type the faces instead."},
                            status_code=503)
    try:
        dice = await run_in_threadpool(read, image, sides=sides)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - a reader that cannot run (its model missing): the faces can be typed
        log.warning("the dice photo could not be read", exc_info=True)
        return JSONResponse({"detail": f"The dice could not be read ({type(err).__name__}); type the faces instead."},
                            status_code=503)
    h, w = image.shape[:2]
    return {"dice": [d.to_json() for d in dice], "image_size": [int(w), int(h)]}


def _photo(data: bytes) -> np.ndarray:
    """The photo's pixels (BGR); a sentence when it is not an image or is too big to unpack."""
    not_image = BadDiceInput("The dice photo is not an image Tablesight can read; send the camera's JPEG.")
    if not data:
        raise not_image
    try:  # the header only: its size before a byte is unpacked
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as header:
                w, h = header.size
    except Image.DecompressionBombError:
        w, h = 0, 0  # over Pillow's own limit: bigger than ours
    except (OSError, ValueError, SyntaxError):
        raise not_image from None
    if w <= 0 or h <= 0 or w * h > MOST_PIXELS:
        size = f"{w}x{h} pixels" if w > 0 and h > 0 else "too big to unpack"
        raise BadDiceInput(f"The dice photo is {size}; send one of at most {MOST_PIXELS // 1_000_000} megapixels "
                           "(the phone's dice camera sends 1920 px at most).")
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise not_image
    return image
