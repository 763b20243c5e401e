"""`tablesight`: the command line. Each sub-command lives in `webui/commands/<name>.py`.

Exit status: 0 done, 2 bad input (one plain sentence on stderr, no traceback), 1 a fault of ours.
stderr carries our sentence only: FFmpeg's and OpenCV's own logging are silenced before OpenCV loads (set
OPENCV_FFMPEG_LOGLEVEL / OPENCV_LOG_LEVEL yourself to see them), libpng's and libjpeg's complaints while an
image decodes are kept off fd 2 (calibration.decode.QUIET_NATIVE; not for `serve`, whose threads log), and
numpy's floating-point warnings are not printed (an absurd number is refused by the check of its input).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")  # AV_LOG_QUIET
os.environ.setdefault("OPENCV_LOG_LEVEL", "SILENT")

import argparse  # noqa: E402 - after the environment OpenCV reads when it loads
import errno  # noqa: E402
import importlib  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

from calibration.errors import InputError
from calibration.json_input import path_problem
from rules.engine import RulesInputError
from webui.commands import COMMANDS


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one sentence and exit status 2 like every other bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"tablesight {self.prog.split()[-1]}: {message}; see --help.\n")
        raise SystemExit(2)


def version() -> str:
    """The installed package's version (pyproject.toml's), or "(not installed)" when run from a bare tree."""
    try:
        return metadata.version("tablesight")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _command_module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"webui.commands.{name.replace('-', '_')}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that sub-command's module is imported (the others stay unloaded)."""
    parser = _Parser(prog="tablesight", description="Calibrated inches and rules verdicts from a webcam.")
    parser.add_argument("--version", action="version", version=f"tablesight {version()}")
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


PATH_ARGS = frozenset({"image", "images", "layout", "intrinsics", "output", "calibration", "scenario", "source",
                       "video", "replay", "roster", "terrain", "store", "sessions", "setup_dir", "out"})
"""The options and arguments that name files or folders: each is checked by `check_paths` before a command runs."""


def check_paths(args: argparse.Namespace) -> None:
    """InputError naming the first path argument that cannot name a file (a name over 255 bytes, a NUL)."""
    for dest, value in vars(args).items():
        for one in value if isinstance(value, list) else [value]:
            if (dest in PATH_ARGS and isinstance(one, str)) or isinstance(one, Path):
                problem = path_problem(Path(one))
                if problem is not None:
                    flag = dest.upper() if dest in ("image", "images", "scenario", "source", "session") else \
                        "--" + dest.replace("_", "-")
                    raise InputError(f"{flag} {str(one)[:40]!r}... {problem}; give a shorter path.")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(chosen if chosen in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    import numpy as np

    if args.command != "serve":
        from calibration.decode import QUIET_NATIVE

        QUIET_NATIVE["on"] = True
    warnings.filterwarnings("ignore", category=RuntimeWarning, module="numpy")
    try:
        check_paths(args)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            status = int(args._run(args) or 0)
    except (InputError, RulesInputError) as err:
        sys.stderr.write(f"{err}\n")
        status = 2
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        return _reader_left()
    except OSError as err:
        if err.errno not in (errno.ENAMETOOLONG, errno.EINVAL):
            raise
        sys.stderr.write(f"The path {str(err.filename)[:60]!r}... cannot name a file here ({err.strerror}); "
                         "give a shorter path.\n")
        status = 2
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return _reader_left()
    return status


def _reader_left() -> int:
    """The reader of our output went away (`tablesight replay --json | head`): stop quietly, as a Unix tool
    does. Python's own advice: point stdout at devnull so that the exit's flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


def entry() -> None:
    """Console-script entry: run, flush, and leave without interpreter teardown of native detectors."""
    raise SystemExit(main())


if __name__ == "__main__":
    entry()
