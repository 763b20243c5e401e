"""The new-game page: a game chosen, its table, each side's army and mount, its options; saved as a roster.

Everything a new game starts from comes from the Game's hooks (its example army, standard boards, cell kinds,
options and how many pieces a cell holds); the tag values for a mount come from the tag sheets
(session/printables.py); saving is the roster's own PUT /api/roster."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from calibration.errors import InputError
from rules.cell_fit import MOST_PIECES, fits, proposed_size
from rules.engine import find_game, game_names
from rules.roster import MM_PER_INCH
from session.printables import PrintableError, plan_sheet
from webui.deps import page
from webui.words import page_words

router = APIRouter()


@router.get("/setup")
def setup_page(request: Request) -> Response:
    return page(request, "setup.html", "setup")


@router.get("/api/setup/games")
def setup_games() -> dict[str, Any]:
    """Every game as a new game starts: its title, board kind, example army (a roster file), standard boards, the
    cell kinds a board may have, the most pieces a cell holds, where its tags usually go, the play areas an open
    table may be, its options and the values each unit carries (a hero's rating)."""
    out = []
    for name in game_names():
        game = find_game(name)
        out.append({
            "name": game.name,
            "title": game.title,
            "board": game.board,
            "example": game.example_roster(),
            "boards": [b.to_json() for b in game.standard_boards()],
            "cell_kinds": [k.to_json() for k in game.cell_kinds()],
            "pieces_per_cell": game.pieces_per_cell(),
            "mount": game.usual_mount(),
            "play_areas": [list(a) for a in game.play_areas()],
            "options": [f.to_json() for f in game.option_fields()],
            "unit_fields": [f.to_json() for f in game.unit_fields()],
        })
    return {"games": out}


@router.get("/api/setup/mount")
def mount_values(
    base_mm: Annotated[list[float], Query(min_length=1, max_length=50)],
    mount: str = Query("topper", pattern="^(flat|topper|rim)$"),
) -> dict[str, Any]:
    """The tag height, size and offset the tag sheet for `mount` prints for each base size (mm), in the order asked:
    what every unit on such a base needs in the roster. A base the mount cannot take is one sentence (400) in the
    page's words."""
    out = []
    for b in dict.fromkeys(base_mm):
        try:
            out.append({"base_mm": b, **plan_sheet(mount, None, b).roster_values()})
        except PrintableError as err:
            raise InputError(page_words(str(err))) from None
    return {"mount": mount, "bases": out}


@router.get("/api/setup/fit")
def cell_fit(
    pieces: int = Query(..., ge=1, le=MOST_PIECES),
    base_mm: float = Query(..., gt=5, le=200),
    size_in: float | None = Query(None, gt=0, le=20),
) -> dict[str, Any]:
    """The hex size (centre to corner, inches) that holds `pieces` bases of `base_mm`, and whether `size_in` does."""
    diameter = base_mm / MM_PER_INCH
    out: dict[str, Any] = {"pieces": pieces, "base_mm": base_mm, "proposed_size_in": proposed_size(pieces, diameter)}
    if size_in is not None:
        out["size_in"] = size_in
        out["fits"] = fits(pieces, diameter, size_in)
    return out
