"""Downloads: the printable tag sheet and anchor mat (PDF), and the current setup files (JSON)."""

from __future__ import annotations

import json

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from calibration.layout import default_layout, parse_board
from session.printables import anchor_mat_pdf, parse_ids, tag_sheet_pdf
from webui.deps import RuntimeDep

router = APIRouter()

MAX_SHEET_TAGS = 200


def _pdf(data: bytes, name: str) -> Response:
    return Response(data, media_type="application/pdf", headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.get("/download/tags.pdf")
def tags_pdf(
    ids: str = Query("10-29", max_length=200),
    size: float = Query(0.6, gt=0.1, le=6.0),
    paper: str = Query("letter", pattern="^(letter|a4)$"),
    base_mm: float | None = Query(None, gt=5, le=200),
) -> Response:
    """A sheet of base tags (black square `size` inches), ids like 10-29 or 10,12,14-16; with `base_mm`, each
    tag inside its base's cut circle (and refused when it does not fit the base)."""
    tag_ids = parse_ids(ids)
    if len(tag_ids) > MAX_SHEET_TAGS:
        raise HTTPException(400, f"{len(tag_ids)} tags were asked for; print at most {MAX_SHEET_TAGS} at a time.")
    return _pdf(tag_sheet_pdf(tag_ids, size, base_mm=base_mm, paper=paper), f"tags-{ids}.pdf")


@router.get("/download/mat.pdf")
def mat_pdf(board: str = Query("30x22", max_length=20), paper: str = Query("letter", pattern="^(letter|a4)$")) -> Response:
    """The four anchor tags for a board of W x D inches."""
    w, d = parse_board(board)
    return _pdf(anchor_mat_pdf(default_layout(w, d), paper=paper), f"anchors-{w:g}x{d:g}.pdf")


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
