"""Print a hex board at exact scale over several pages, with its anchors, target marks and a check ruler.

BOARD is a board file (docs/hex_boards.md), a roster file with a "board", or a standard board by name: a hex
game's name (its first board) or the board's own name, e.g. magni, vigtavl or vigtavl_2p. The anchors are those
of the smallest whole-inch play area that holds the board as its layout lays it, or of --board WxD.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from calibration.file_write import write_file
from calibration.json_input import read_json_file
from calibration.layout import parse_board
from session.hex_map_print import (
    MapBoard,
    MapError,
    anchors_words,
    hex_map_pdf,
    map_board,
    plan_map,
    standard_map_board,
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("board", metavar="BOARD",
                   help="a board file, a roster file with a board, or a standard board's or hex game's name")
    p.add_argument("--board", dest="play_area", metavar="WxD",
                   help="the play area in inches whose anchors to print, e.g. 30x22 (default: the smallest that holds "
                        "the board)")
    p.add_argument("--paper", default="letter", choices=["letter", "a4"])
    p.add_argument("-o", "--output", required=True, help="the PDF to write")


def read_board(arg: str) -> MapBoard:
    """The board BOARD names: a file when it is one (or ends in .json), else a standard board's name."""
    path = Path(arg)
    if path.suffix.lower() == ".json" or path.exists():
        obj = read_json_file(path, "Board file", "give a hex board file, a roster with a board, or a game's name",
                             MapError)
        return map_board(obj, path.name, f"Board file {path}")
    return standard_map_board(arg)


def run(args: argparse.Namespace) -> int:
    out = Path(args.output)
    mb = read_board(args.board)
    play_area = parse_board(args.play_area) if args.play_area else None
    plan = plan_map(mb, args.paper, play_area)
    if not out.parent.exists():
        raise MapError(f"Cannot write {out}: folder {out.parent} does not exist; check the -o path.")
    write_file(out, hex_map_pdf(plan), what="map")
    w, d = plan.play_area
    print(f"Wrote the map of {mb.title} to {out}: {plan.pages} pages ({len(plan.tiles.tiles)} to glue together "
          f"and an overview), {anchors_words(plan.anchors)}.")
    print(f"Calibrate with --board {w:g}x{d:g}; check each page's ruler after printing.")
    return 0
