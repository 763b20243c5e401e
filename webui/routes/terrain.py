"""The terrain editor: its page, the current game's terrain as JSON, saving an edited terrain, loading a terrain file,
and the camera picture's pixels as table inches and back (through the table calibration), so pieces are drawn by
clicking their corners on the picture."""

from __future__ import annotations

import re
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, File, HTTPException, Request, UploadFile
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from calibration.errors import InputError
from calibration.json_input import parse_json
from rules.engine import RulesInputError
from rules.terrain import KINDS, MAX_IN
from webui.deps import RuntimeDep, SettingsDep, page
from webui.json_body import NotJson, json_body

router = APIRouter()

MAX_POINTS = 4000
"""Most points one request may map (every corner of every piece, top and foot, on a crowded table)."""

Pixel = Annotated[float, Field(ge=-100_000, le=100_000)]
Inch = Annotated[float, Field(ge=-MAX_IN, le=MAX_IN)]


class TerrainPictureError(InputError):
    """A point on the camera picture that cannot be had in table inches (no calibration, off the table top)."""


class TerrainFileError(InputError):
    """A terrain file that cannot be loaded."""


class PicturePoints(BaseModel):
    """Points clicked on a camera picture `image_size` (w, h) pixels across, pixels (x right, y down)."""

    model_config = ConfigDict(extra="forbid")
    image_size: tuple[Annotated[int, Field(gt=0, le=100_000)], Annotated[int, Field(gt=0, le=100_000)]]
    points_px: list[tuple[Pixel, Pixel]] = Field(max_length=MAX_POINTS)


class TablePoints(BaseModel):
    """Points on or above the table, inches (x, y, z up from the table top)."""

    model_config = ConfigDict(extra="forbid")
    points_in: list[tuple[Inch, Inch, Inch]] = Field(max_length=MAX_POINTS)


@router.get("/terrain")
def terrain_page(request: Request) -> Response:
    return page(request, "terrain.html", "terrain", kinds=sorted(KINDS))


@router.get("/api/terrain")
def get_terrain(runtime: RuntimeDep) -> dict[str, Any]:
    with runtime.setup.lock:
        return runtime.setup.terrain_json()


def page_terrain_words(text: str) -> str:
    """A terrain sentence in the page's words: the outline, not the file's "polygon"; a height, not "height_in"."""
    text = re.sub(r" \((?:Self-intersection|Ring Self-intersection|Too few points)[^)]*\)", "", text)
    text = re.sub(r"\bpolygon\b", "outline", text)
    return re.sub(r"\bheight_in\b", "height", text)


@router.put("/api/terrain")
async def put_terrain(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """Replace the terrain of the game ruled now ({"pieces": [...]}, rules/terrain.py), save it in the setup folder
    (each game keeps its own) and use it from the next frame."""
    obj = await json_body(request, "The terrain")
    try:
        pieces = runtime.set_terrain(obj)
    except RulesInputError as err:
        raise TerrainFileError(page_terrain_words(str(err))) from None
    return {"saved": True, "pieces": len(pieces)}


@router.post("/api/terrain/file")
async def load_terrain_file(runtime: RuntimeDep, settings: SettingsDep,
                            file: Annotated[UploadFile, File()]) -> dict[str, Any]:
    """Load a terrain file (the JSON the page downloads, docs/terrain.md) as the terrain of the game ruled now, and
    save it; a bad file is one sentence naming it, and nothing is saved."""
    name = (file.filename or "terrain.json")[:80]
    data = await file.read(settings.max_json_bytes + 1)
    if len(data) > settings.max_json_bytes:
        raise HTTPException(413, f"The file {name} is larger than {settings.max_json_bytes / 1e6:.1f} MB, far more than a "
                                 "terrain file; choose the terrain file you saved or downloaded.")
    obj = parse_json(data, f"The terrain file {name}", "choose the terrain file you saved or downloaded", NotJson)
    if not isinstance(obj, dict) or not isinstance(obj.get("pieces"), list):
        raise TerrainFileError(f"The file {name} is not a terrain file: it has no list of terrain pieces; choose the terrain "
                               "file you saved or downloaded.")
    try:
        pieces = runtime.set_terrain(obj)
    except (InputError, RulesInputError) as err:
        said = page_terrain_words(str(err))
        raise TerrainFileError(f"The file {name} cannot be loaded: {said[:1].lower()}{said[1:]}") from None
    return {"saved": True, "pieces": len(pieces), "terrain": runtime.setup.terrain_json()}


def _calibration(runtime: Any) -> Any:
    with runtime.setup.lock:
        cal = runtime.setup.calibration
    if cal is None:
        raise TerrainPictureError("The table is not calibrated yet; calibrate it on the Calibrate page, then draw "
                                  "terrain on the camera picture.")
    return cal


@router.post("/api/terrain/on-table")
def picture_to_table(body: PicturePoints, runtime: RuntimeDep) -> dict[str, Any]:
    """The table-top points (inches, z = 0: a piece's footprint) seen at pixels of the camera picture, through the
    table calibration (calibration/table.py)."""
    cal = _calibration(runtime)
    cal.check_frame(body.image_size)
    points = cal.image_to_table(np.array(body.points_px, dtype=np.float64).reshape(-1, 2), 0.0)
    if not np.all(np.isfinite(points)):
        raise TerrainPictureError("A point clicked on the picture is above the table's far edge, where the table top "
                                  "is not; click the corners where they stand on the table.")
    return {"points_in": np.round(points, 3).tolist()}


@router.post("/api/terrain/in-picture")
def table_to_picture(body: TablePoints, runtime: RuntimeDep) -> dict[str, Any]:
    """Where points on or above the table (inches) are seen in the camera picture, pixels of a picture of the
    calibrated size (lens distortion included), so the page draws each piece's foot and top over the picture."""
    cal = _calibration(runtime)
    points = np.array(body.points_in, dtype=np.float64).reshape(-1, 3)
    if len(points) and float(points[:, 2].max()) >= 0.9 * cal.camera_height_in:
        raise TerrainPictureError(f"A piece {points[:, 2].max():g}\" high reaches the camera, which is "
                                  f"{cal.camera_height_in:.0f}\" above the table; give its real height.")
    pixels = np.asarray(cal.table_to_image(points), dtype=np.float64)
    rows = [[round(float(x), 2), round(float(y), 2)] if np.isfinite([x, y]).all() else None for x, y in pixels]
    return {"points_px": rows, "image_size": list(cal.image_size)}
