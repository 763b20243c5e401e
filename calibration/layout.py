"""Anchor layouts: where the anchor tags lie on the table, in table inches.

The default layout for a W x D board (DESIGN.md): tag36h11 ids 0, 1, 2, 3, black square 2.0" a side,
centres (-1.5, -1.5), (W+1.5, -1.5), (W+1.5, D+1.5), (-1.5, D+1.5). Each anchor may lie in any of its four
right-angle rotations; `calibration.table` works out which from the image.

Any other layout is a JSON file::

    {
      "format": "tablesight-layout",        optional; if present exactly this
      "version": 1,                         optional; if present exactly 1
      "board_in": [W, D],                   optional; if present it must equal --board
      "anchors": [                          two or more, distinct ids
        {"id": 0,                           tag36h11 id, 0..586
         "center_in": [x, y],               centre of the black square, table inches
         "size_in": 2.0,                    side of the black square, inches (> 0)
         "z_in": 0.0},                      optional: height of the tag face above the table, inches
        ...
      ]
    }
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from calibration.errors import CalibrationError
from calibration.json_input import read_json_file

DEFAULT_ANCHOR_IDS = (0, 1, 2, 3)
DEFAULT_ANCHOR_SIZE_IN = 2.0
DEFAULT_ANCHOR_INSET_IN = 1.5
"""Distance of a default anchor's centre outside each edge of the play area, inches."""
MAX_TAG_ID = 586
LAYOUT_FORMAT = "tablesight-layout"
LAYOUT_VERSION = 1

# Corner offsets of a tag at yaw 0 in units of its side, corners 0..3 (CONTRACT: bottom-left, bottom-right,
# top-right, top-left as the bitmap is seen upright; counter-clockwise seen from above).
_UNIT_CORNERS = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])


@dataclass(frozen=True)
class Anchor:
    """One anchor tag: id, centre (x, y) in table inches, black-square side in inches, face height in inches."""

    id: int
    centre: tuple[float, float]
    size_in: float
    z_in: float = 0.0

    def corners_in(self, quarter_turns: int = 0) -> np.ndarray:
        """Corners 0..3 in table inches, (4, 3), with the tag turned `quarter_turns` x 90 degrees CCW."""
        return anchor_corners(self.centre, self.size_in, self.z_in, quarter_turns)


def anchor_corners(centre: tuple[float, float], size_in: float, z_in: float, quarter_turns: int) -> np.ndarray:
    """Corners 0..3 (table inches, (4, 3)) of a tag at `centre` turned `quarter_turns` x 90 degrees CCW."""
    angle = math.pi / 2 * (quarter_turns % 4)
    c, s = round(math.cos(angle)), round(math.sin(angle))
    rot = np.array([[c, -s], [s, c]], dtype=np.float64)
    xy = np.asarray(centre, dtype=np.float64) + size_in * _UNIT_CORNERS @ rot.T
    return np.column_stack([xy, np.full(4, float(z_in))])


@dataclass(frozen=True)
class AnchorLayout:
    """The board (W, D) in inches and its anchors by tag id."""

    board: tuple[float, float]
    anchors: Mapping[int, Anchor]

    def __post_init__(self) -> None:
        if len(self.anchors) < 2:
            raise CalibrationError(
                f"The anchor layout has {len(self.anchors)} anchor(s); it needs two or more to fix the table."
            )

    @property
    def ids(self) -> tuple[int, ...]:
        """Anchor tag ids in ascending order."""
        return tuple(sorted(self.anchors))

    def to_json(self) -> dict[str, Any]:
        """The layout as the JSON object of the module docstring."""
        return {
            "format": LAYOUT_FORMAT,
            "version": LAYOUT_VERSION,
            "board_in": [self.board[0], self.board[1]],
            "anchors": [
                {"id": a.id, "center_in": [a.centre[0], a.centre[1]], "size_in": a.size_in, "z_in": a.z_in}
                for a in (self.anchors[i] for i in self.ids)
            ],
        }


def default_layout(width_in: float, depth_in: float) -> AnchorLayout:
    """The default four-anchor layout of DESIGN.md for a `width_in` x `depth_in` board."""
    _check_board((width_in, depth_in), "The board")
    m, w, d = DEFAULT_ANCHOR_INSET_IN, float(width_in), float(depth_in)
    centres = ((-m, -m), (w + m, -m), (w + m, d + m), (-m, d + m))
    return AnchorLayout(
        board=(w, d),
        anchors={i: Anchor(i, c, DEFAULT_ANCHOR_SIZE_IN) for i, c in zip(DEFAULT_ANCHOR_IDS, centres)},
    )


_BOARD_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*[xX×]\s*(\d+(?:\.\d*)?|\.\d+)\s*$")


def parse_board(text: str) -> tuple[float, float]:
    """`"30x22"` -> (30.0, 22.0): a board's width x depth in inches."""
    match = _BOARD_RE.match(text)
    if not match:
        raise CalibrationError(f"Board {text!r} is not width x depth in inches; write it like 30x22.")
    board = (float(match.group(1)), float(match.group(2)))
    _check_board(board, f"Board {text!r}")
    return board


def _check_board(board: tuple[float, float], what: str) -> None:
    if not all(math.isfinite(v) and v > 0 for v in board):
        raise CalibrationError(f"{what} must have a positive width and depth in inches, like 30x22.")


def layout_from_json(obj: Any, board: tuple[float, float] | None = None, source: str = "The layout") -> AnchorLayout:
    """Validate a layout JSON object (module docstring); `board` (from --board) wins if the file has none."""
    if not isinstance(obj, dict):
        raise CalibrationError(f"{source} is not a JSON object with an \"anchors\" list; see calibration/layout.py.")
    if "format" in obj and obj["format"] != LAYOUT_FORMAT:
        raise CalibrationError(f"{source} has format {obj['format']!r}, not {LAYOUT_FORMAT!r}.")
    if "version" in obj and obj["version"] != LAYOUT_VERSION:
        raise CalibrationError(f"{source} is version {obj['version']!r}; this Tablesight reads version 1.")
    file_board: tuple[float, float] | None = None
    if "board_in" in obj:
        file_board = _pair(obj["board_in"], f"{source}'s \"board_in\"")
        _check_board(file_board, f"{source}'s \"board_in\"")
    if board is not None and file_board is not None and not np.allclose(board, file_board):
        raise CalibrationError(
            f"{source} is for a {file_board[0]:g}x{file_board[1]:g} board but --board says "
            f"{board[0]:g}x{board[1]:g}; make them agree."
        )
    chosen = board if board is not None else file_board
    if chosen is None:
        raise CalibrationError(f"{source} has no \"board_in\"; give the board size with --board WxD.")
    raw = obj.get("anchors")
    if not isinstance(raw, list) or not raw:
        raise CalibrationError(f"{source} needs an \"anchors\" list of {{\"id\", \"center_in\", \"size_in\"}} objects.")
    anchors: dict[int, Anchor] = {}
    for n, item in enumerate(raw):
        where = f"{source}'s anchor #{n + 1}"
        if not isinstance(item, dict):
            raise CalibrationError(f"{where} is not an object with \"id\", \"center_in\" and \"size_in\".")
        for key in ("id", "center_in", "size_in"):
            if key not in item:
                raise CalibrationError(f"{where} has no {key!r}; add it (see calibration/layout.py).")
        tag = item["id"]
        if isinstance(tag, bool) or not isinstance(tag, int) or not 0 <= tag <= MAX_TAG_ID:
            raise CalibrationError(f"{where} has id {tag!r}; a tag36h11 id is a whole number from 0 to 586.")
        if tag in anchors:
            raise CalibrationError(f"{source} lists anchor {tag} twice; give each anchor once.")
        centre = _pair(item["center_in"], f"{where}'s \"center_in\"")
        size = _number(item["size_in"], f"{where}'s \"size_in\"")
        if size <= 0:
            raise CalibrationError(f"{where}'s \"size_in\" is {size:g}; the black square's side must be > 0 inches.")
        z = _number(item.get("z_in", 0.0), f"{where}'s \"z_in\"")
        anchors[tag] = Anchor(tag, centre, size, z)
    if len(anchors) < 2:
        raise CalibrationError(f"{source} has one anchor; it needs two or more (four at the corners is best).")
    return AnchorLayout(board=(float(chosen[0]), float(chosen[1])), anchors=anchors)


def load_layout(path: str | Path, board: tuple[float, float] | None = None) -> AnchorLayout:
    """Read a layout JSON file (module docstring); one-sentence CalibrationError if it cannot be used."""
    p = Path(path)
    obj = read_json_file(p, "Layout file", "give a layout JSON file (check the --layout path)", CalibrationError)
    return layout_from_json(obj, board, source=f"Layout file {p}")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CalibrationError(f"{what} is {value!r}; it must be a number of inches.")
    return float(value)


def _pair(value: Any, what: str) -> tuple[float, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise CalibrationError(f"{what} is {value!r}; it must be a list of two numbers [x, y] in inches.")
    return (_number(value[0], what), _number(value[1], what))
