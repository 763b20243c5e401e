"""Write the anchor tags for a board as a PDF, one anchor a page, with where each goes and a check ruler."""

from __future__ import annotations

import argparse
from pathlib import Path

from calibration.file_write import write_file
from calibration.layout import default_layout, load_layout, parse_board
from session.printables import PrintableError, anchor_mat_pdf


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--board", required=True, help="play area W x D in inches, e.g. 30x22")
    p.add_argument("--layout", help="an anchor layout JSON file instead of the default corners")
    p.add_argument("--paper", default="letter", choices=["letter", "a4"])
    p.add_argument("-o", "--output", required=True, help="the PDF to write")


def run(args: argparse.Namespace) -> int:
    board = parse_board(args.board)
    layout = load_layout(args.layout) if args.layout else default_layout(*board)
    out = Path(args.output)
    if not out.parent.exists():
        raise PrintableError(f"Cannot write {out}: folder {out.parent} does not exist.")
    write_file(out, anchor_mat_pdf(layout, args.paper), what="anchor mat")
    print(f"Wrote {len(layout.anchors)} anchors for a {board[0]:g}\" x {board[1]:g}\" board to {out}.")
    return 0
