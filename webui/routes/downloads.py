"""Downloads: the printable tag sheet (for a mount), anchor mat and hex map (PDF), and the current setup files (JSON)."""

from __future__ import annotations

import json

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from calibration.layout import default_layout, parse_board
from session.hex_map_print import MapError, hex_map_pdf, plan_map, table_map_board
from session.printables import anchor_mat_pdf, mount_sheet_pdf, parse_ids, plan_sheet
from webui.deps import RuntimeDep

router = APIRouter()

MAX_SHEET_TAGS = 200


def _pdf(data: bytes, name: str) -> Response:
    return Response(data, media_type="application/pdf", headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.get("/download/tags.pdf")
def tags_pdf(
    ids: str = Query("10-29", max_length=200),
    mount: str = Query("flat", pattern="^(flat|topper|rim)$"),
    size: float | None = Query(None, gt=0.1, le=6.0),
    base_mm: float | None = Query(None, gt=5, le=200),
    pin_in: float | None = Query(None, gt=0, le=8),
    clearance_in: float | None = Query(None, ge=0, le=4),
    base_height_in: float | None = Query(None, ge=0, le=2),
    paper: str = Query("letter", pattern="^(letter|a4)$"),
) -> Response:
    """A sheet of tags for one mount (`tablesight tags --mount`), ids like 10-29 or 10,12,14-16: topper cards
    (`pin_in`: the tag face above the base's top), rim tags cut to a `base_mm` base beside feet that need
    `clearance_in`, or flat tags (with `base_mm`, inside the base's cut circle). `size` is the black square,
    inches (default: from the mount and the base). A value for another mount's field is left out, since the
    page keeps what was typed there."""
    tag_ids = parse_ids(ids)
    if len(tag_ids) > MAX_SHEET_TAGS:
        raise HTTPException(400, f"{len(tag_ids)} tags were asked for; print at most {MAX_SHEET_TAGS} at a time.")
    sheet = plan_sheet(
        mount,
        size,
        base_mm,
        pin_in=pin_in if mount == "topper" else None,
        clearance_in=clearance_in if mount == "rim" else None,
        base_height_in=base_height_in,
    )
    name = f"{tag_ids[0]}-{tag_ids[-1]}" if len(tag_ids) > 1 else str(tag_ids[0])  # not the typed text
    return _pdf(mount_sheet_pdf(tag_ids, sheet, paper=paper), f"tags-{name}-{mount}.pdf")


@router.get("/download/mat.pdf")
def mat_pdf(board: str = Query("30x22", max_length=20), paper: str = Query("letter", pattern="^(letter|a4)$")) -> Response:
    """The four anchor tags for a board of W x D inches."""
    w, d = parse_board(board)
    return _pdf(anchor_mat_pdf(default_layout(w, d), paper=paper), f"anchors-{w:g}x{d:g}.pdf")


@router.get("/download/map.pdf")
def map_pdf(
    runtime: RuntimeDep,
    board: str | None = Query(None, max_length=20),
    paper: str = Query("letter", pattern="^(letter|a4)$"),
) -> Response:
    """The hex board of the game on the table at exact scale over several pages (`tablesight map`), its anchors
    those of `board` (W x D inches), else of the calibrated table when the board fits it, else of the smallest
    play area that holds it; 400 with a sentence for a game on an open table."""
    s = runtime.setup
    with s.lock:
        game = s.game or (s.roster.game if s.roster is not None else None)
        roster = s.roster.to_json() if s.roster is not None else None
        game_setup = dict(s.game_setup) if s.game_setup else None
        calibrated = tuple(s.calibration.board_in) if s.calibration is not None else None
    mb = table_map_board(game, roster, game_setup)
    if board:
        plan = plan_map(mb, paper, parse_board(board))
    else:
        try:
            plan = plan_map(mb, paper, (float(calibrated[0]), float(calibrated[1])) if calibrated else None)
        except MapError:  # the board does not fit the calibrated table: the map says which play area it needs
            plan = plan_map(mb, paper)
    w, d = plan.play_area
    return _pdf(hex_map_pdf(plan), f"map-{w:g}x{d:g}.pdf")


@router.get("/download/{what}.json")
def setup_json(what: str, runtime: RuntimeDep) -> Response:
    """The current calibration, roster or terrain as the JSON file the command line reads."""
    s = runtime.setup
    with s.lock:
        if what == "terrain":
            obj = s.terrain_json()
        elif what == "roster" and s.roster is not None:
            obj = s.roster.to_json()
        elif what == "calibration" and s.calibration is not None:
            obj = s.calibration.to_json()
        else:
            raise HTTPException(404, f"There is no {what} to download; set one up first.")
    return Response(
        json.dumps(obj, indent=2) + "\n",
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{what}.json"'},
    )
