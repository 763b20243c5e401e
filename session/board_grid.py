"""The hex board a game plays on, as the pages draw it: every cell's outline in table inches and in camera-image
pixels, with its terrain and elevation, and the features on cell edges (Vigtavl's walls).

The grid is sent once for each change of game, board or calibration, not in every frame's message: a frame says
only its `grid_key`, and a page whose grid has another key fetches the grid again (webui/routes/board.py).
Outlines are projected with the table calibration (`table_to_image`, lens distortion included), each cell edge
cut into pieces at most GRID_STEP_IN long so that a distorted lens bends it as it bends the printed board.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from rules.engine import Game
from rules.hexgrid import HexBoard, Layout
from session.frame_message import densify

GRID_STEP_IN = 0.5
"""The longest straight piece of a cell edge in the projected outline, inches."""

LaidBoard = tuple[HexBoard, Layout]
"""A hex board and how it lies on the table (`Game.hex_board`)."""


def laid_board(game: Game | None, state: Any) -> LaidBoard | None:
    """The hex board the game's state plays on, or None (no game ruled, or an open table)."""
    if game is None or state is None:
        return None
    return game.hex_board(state)


def _calibration_stamp(calibration: Any) -> tuple[Any, ...] | None:
    """What a calibration projects with (pose and camera), as a hashable value; None before calibration."""
    if calibration is None:
        return None
    cam = calibration.camera
    return tuple(np.asarray(a, dtype=np.float64).tobytes() for a in (calibration.rvec, calibration.tvec, cam.K, cam.dist))


def grid_key(game: Game | None, laid: LaidBoard | None, calibration: Any) -> str | None:
    """A short name that changes whenever the grid a page draws would change (game, cells, edges, layout or
    calibration); None when there is no hex board. Stable within one server process."""
    if game is None or laid is None:
        return None
    board, layout = laid
    h = hash((game.name, frozenset(board.cells.items()), frozenset(board.edges.items()), layout,
              _calibration_stamp(calibration)))
    return f"{h & 0xFFFF_FFFF_FFFF:012x}"


class GridKeys:
    """Each frame's grid key, worked out again only when the game, its state or the calibration is another object
    than the frame before's (states are immutable values; they are held here so that no new one can take an old
    one's place unseen). One per frame loop, on that loop's thread."""

    def __init__(self) -> None:
        self._last: tuple[Any, Any, Any, str | None] = (None, None, None, None)

    def __call__(self, pipeline: Any, calibration: Any) -> str | None:
        game, state = getattr(pipeline, "game", None), getattr(pipeline, "state", None)
        g, s, c, key = self._last
        if game is g and state is s and calibration is c:
            return key
        key = grid_key(game, laid_board(game, state), calibration)
        self._last = (game, state, calibration, key)
        return key


def _rounded(points: np.ndarray, digits: int) -> list[list[float]]:
    out: list[list[float]] = np.round(np.asarray(points, dtype=np.float64), digits).tolist()
    return out


def board_grid(game: Game | None, state: Any, calibration: Any) -> dict[str, Any]:
    """The grid as the page draws it:

    {"key", "layout", "edge_points": pieces per cell edge in "px",
     "cells": [{"hex": [q, r], "terrain", "elevation", "in": 6 corners (inches), "px": outline (image px) or None}],
     "edges": [{"hexes": [[q, r], [q, r]], "kind": "wall", "in": 2 ends (inches), "px": the edge (image px)}],
     "kinds": the terrains on this board, then "elevation" and the edge kinds when it has any}

    "px" outlines start at corner 0 and run counter-clockwise; corner c is point c * edge_points. They are None
    before the table is calibrated. A game without a hex board gives {"key": None, "cells": [], "edges": []}.
    """
    laid = laid_board(game, state)
    key = grid_key(game, laid, calibration)
    if laid is None:
        return {"key": None, "layout": None, "edge_points": 0, "cells": [], "edges": [], "kinds": []}
    board, layout = laid
    per_edge = max(1, math.ceil(layout.size_in / GRID_STEP_IN))
    hexes = board.hexes()
    corners = [np.asarray(layout.polygon(h), dtype=np.float64) for h in hexes]
    edges = sorted(board.edges.items(), key=lambda item: (item[0].hex, item[0].dir))
    ends = [np.asarray(layout.edge_segment(e), dtype=np.float64) for e, _kind in edges]
    project: Callable[[np.ndarray], np.ndarray] | None = calibration.table_to_image if calibration is not None else None
    cell_px: list[list[list[float]] | None] = [None] * len(hexes)
    edge_px: list[list[list[float]] | None] = [None] * len(edges)
    if project is not None:
        step = layout.size_in / per_edge
        lines = [densify(c, True, step * (1 + 1e-9)) for c in corners] + [densify(e, False, step * (1 + 1e-9)) for e in ends]
        flat = np.concatenate(lines, axis=0) if lines else np.zeros((0, 2))
        px = np.asarray(project(np.column_stack([flat, np.zeros(len(flat))])), dtype=np.float64).reshape(-1, 2)
        at = 0
        for i, line in enumerate(lines):
            part = px[at : at + len(line)]
            at += len(line)
            got = _rounded(part, 2) if np.isfinite(part).all() else None  # a cell beyond the camera's view: none
            if i < len(hexes):
                cell_px[i] = got
            else:
                edge_px[i - len(hexes)] = got
    cells = []
    for h, outline, px_outline in zip(hexes, corners, cell_px, strict=True):
        c = board.cells[h]
        cells.append({"hex": h.to_json(), "terrain": c.terrain, "elevation": c.elevation, "in": _rounded(outline, 4),
                      "px": px_outline})
    kinds = sorted({c.terrain for c in board.cells.values()})
    if any(c.elevation for c in board.cells.values()):
        kinds.append("elevation")
    kinds += sorted(set(board.edges.values()))
    return {
        "key": key,
        "layout": layout.to_json(),
        "edge_points": per_edge,
        "cells": cells,
        "edges": [{"hexes": [h.to_json() for h in e.hexes], "kind": kind, "in": _rounded(seg, 4), "px": seg_px}
                  for (e, kind), seg, seg_px in zip(edges, ends, edge_px, strict=True)],
        "kinds": kinds,
    }
