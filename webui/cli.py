"""`tablesight`: the command line. Each sub-command lives in `webui/commands/<name>.py`.

Exit status: 0 done, 2 bad input (one plain sentence on stderr, no traceback), 1 a fault of ours.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from calibration.errors import InputError
from rules.engine import RulesInputError
from webui.commands import COMMANDS


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one sentence and exit status 2 like every other bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"tablesight {self.prog.split()[-1]}: {message}; see --help.\n")
        raise SystemExit(2)


def _command_module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"webui.commands.{name.replace('-', '_')}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that sub-command's module is imported (the others stay unloaded)."""
    parser = _Parser(prog="tablesight", description="Calibrated inches and rules verdicts from a webcam.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        module = _command_module(name)
        doc = (module.__doc__ or "").strip().splitlines()
        p = sub.add_parser(name, help=doc[0] if doc else None, description=module.__doc__)
        module.configure(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(chosen if chosen in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        status = int(args._run(args) or 0)
    except (InputError, RulesInputError) as err:
        sys.stderr.write(f"{err}\n")
        status = 2
    except KeyboardInterrupt:
        status = 130
    sys.stdout.flush()
    return status


def entry() -> None:
    """Console-script entry: run, flush, and leave without interpreter teardown of native detectors."""
    raise SystemExit(main())


if __name__ == "__main__":
    entry()
