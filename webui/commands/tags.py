"""Write printable base tags at exact scale, with a check ruler.

Give the black square's side with --size, or a base diameter with --base (25, 28, 32, 40 or 50 mm) to get
the largest tag that fits it and its cut circle.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from session.printables import BASE_SIZES_MM, PrintableError, parse_ids, tag_sheet_pdf, tag_size_for_base


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ids", required=True, help="tag ids, e.g. 10-29 or 10,12,14-16")
    p.add_argument("--size", type=float, help="black square side, inches (default: fits --base, else 0.75)")
    p.add_argument("--base", type=float, help=f"base diameter in mm, e.g. {', '.join(map(str, BASE_SIZES_MM))}")
    p.add_argument("--paper", default="letter", choices=["letter", "a4"])
    p.add_argument("-o", "--output", required=True, help="the PDF to write")


def run(args: argparse.Namespace) -> int:
    ids = parse_ids(args.ids)
    if args.base is not None and not 10 <= args.base <= 200:
        raise PrintableError(f"--base {args.base:g} is not a base diameter in mm; use e.g. 25, 32 or 50.")
    size = args.size if args.size is not None else (tag_size_for_base(args.base) if args.base else 0.75)
    pdf = tag_sheet_pdf(ids, size, args.base, args.paper)
    out = Path(args.output)
    if not out.parent.exists():
        raise PrintableError(f"Cannot write {out}: folder {out.parent} does not exist.")
    try:
        out.write_bytes(pdf)
    except OSError as err:
        raise PrintableError(f"Cannot write {out} ({err.strerror or err}); check the -o path.") from None
    print(f'Wrote {len(ids)} tags of {size:g}" to {out}; check its ruler after printing.')
    return 0
