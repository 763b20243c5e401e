"""Write printable tags at exact scale for one way of mounting them, with their roster values and a check ruler.

A figure stands on every base, so a tag under its feet is never seen. --mount topper (cards to fold and glue
on a pin above the figure's head, seen from everywhere), --mount rim (cards cut to the base's edge, glued beside
the feet of a base wide enough: give --base and the feet's --clearance), or --mount flat (the default: bare
tags, for tokens and tiles that carry no figure; with --base, the largest tag that fits and its cut circle).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from calibration.file_write import write_file
from session.printables import (
    BASE_HEIGHT_IN,
    CLEARANCE_IN,
    MIN_READABLE_TAG_IN,
    MOUNTS,
    PIN_IN,
    PrintableError,
    mount_sheet_pdf,
    parse_ids,
    plan_sheet,
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ids", required=True, help="tag ids, e.g. 10-29 or 10,12,14-16")
    p.add_argument("--size", type=float, help="black square side, inches (default: from --mount and --base)")
    p.add_argument("--base", type=float, help="base diameter in mm, e.g. 25, 32, 50 (needed for --mount rim)")
    p.add_argument("--mount", default="flat", choices=list(MOUNTS),
                   help="topper: on a pin above the figure; rim: beside its feet; flat: no figure (default)")
    p.add_argument("--pin", type=float,
                   help=f'topper: the tag face\'s height above the base\'s top, inches (default {PIN_IN:g})')
    p.add_argument("--clearance", type=float,
                   help=f"rim: the radius around the base's centre the feet need, inches (default {CLEARANCE_IN:g})")
    p.add_argument("--base-height", type=float,
                   help=f"the base's top above the table, inches (default {BASE_HEIGHT_IN:g})")
    p.add_argument("--paper", default="letter", choices=["letter", "a4"])
    p.add_argument("-o", "--output", required=True, help="the PDF to write")


def run(args: argparse.Namespace) -> int:
    ids = parse_ids(args.ids)
    sheet = plan_sheet(args.mount, args.size, args.base, pin_in=args.pin, clearance_in=args.clearance,
                       base_height_in=args.base_height)
    pdf = mount_sheet_pdf(ids, sheet, args.paper)
    out = Path(args.output)
    if not out.parent.exists():
        raise PrintableError(f"Cannot write {out}: folder {out.parent} does not exist.")
    write_file(out, pdf, what="tag sheet")
    kind = {"flat": "flat tags", "topper": "topper cards", "rim": "rim tags"}[sheet.mount]
    print(f'Wrote {len(ids)} {kind} of {sheet.tag_in:g}" to {out}; check its ruler after printing.')
    print(f"Roster values for each: {sheet.roster_text()}")
    if sheet.tag_in < MIN_READABLE_TAG_IN:
        print(f'Note: a {sheet.tag_in:g}" tag is below the {MIN_READABLE_TAG_IN:g}" a 1080p camera 3 ft up reads '
              "everywhere on the board; a 4K or closer camera may still read it.")
    return 0
