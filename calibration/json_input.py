"""The one reader of JSON text that a user gave: files (calibration, layout, camera, roster, terrain, manifest,
scenario, declarations) and request bodies. Every way it can be unusable is one sentence naming it:

- not UTF-8, not JSON (with line and column);
- nested deeper than MAX_DEPTH (a 100,000-deep `[[[...` would exhaust the stack);
- a whole number of more than MAX_INT_DIGITS digits (Python refuses over 4,300 with a ValueError);
- a number that is not finite (`1e400`, `NaN`, `Infinity`).

The fields of the value are then checked where the value is understood (`rules.fields` for the rules'
files, each file's own `from_json`). Lives in `calibration/`, the bottom layer, so every layer can use it.
"""

from __future__ import annotations

import errno
import json
import math
from pathlib import Path
from typing import Any

from calibration.errors import InputError

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted (Tablesight's own files nest at most 6 deep)."""
MAX_INT_DIGITS = 100
"""Longest whole number accepted, in digits (a tag id, a frame number or a seed has far fewer; each field
checks its own range)."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest JSON file read (a long session's declarations are a few MB)."""
MAX_NAME_CHARS = 255
"""Longest file or folder name the file systems we run on accept."""


class _Bad:
    """A number the reader refuses, kept in place while parsing so the sentence can name its field."""

    def __init__(self, why: str) -> None:
        self.why = why


def _int(text: str) -> int | _Bad:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _Bad(f"is a whole number of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float | _Bad:
    value = float(text)
    if not math.isfinite(value):
        return _Bad(f"is {text[:40]}, too large to be a number")
    return value


def _constant(text: str) -> _Bad:
    return _Bad(f"is {text}, which is not a number")


def _field(path: tuple[str | int, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "the value"


def _first_problem(value: Any) -> str | None:
    """Why `value` cannot be used (a refused number, naming its field; nesting over MAX_DEPTH), or None.
    Iterative, so no recursion of our own."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Bad):
            return f"{_field(path)} {item.why}"
        if isinstance(item, dict | list):
            if len(path) >= MAX_DEPTH:
                return f"nests arrays or objects deeper than {MAX_DEPTH} levels"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((v, (*path, k)) for k, v in reversed(list(pairs)) if isinstance(v, dict | list | _Bad))
    return None


def parse_json(text: str | bytes, what: str, fix: str = "fix it", error: type[Exception] = InputError) -> Any:
    """The JSON value of `text`; `error` with one sentence "<what> ...; <fix>." when it is not usable JSON."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(f"{what} is not UTF-8 text (byte {err.start}); {fix}.") from None
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except json.JSONDecodeError as err:
        raise error(f"{what} is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}); {fix}.") from None
    except RecursionError:
        raise error(f"{what} nests arrays or objects deeper than {MAX_DEPTH} levels; {fix}.") from None
    problem = _first_problem(value)
    if problem is not None:
        sep = ": " if not problem.startswith("nests") else " "
        raise error(f"{what}{sep}{problem}; {fix}.")
    return value


def path_problem(path: Path) -> str | None:
    """Why `path` cannot name a file on this machine (a name over MAX_NAME_CHARS, a NUL), or None."""
    text = str(path)
    if "\x00" in text:
        return "contains a NUL character"
    longest = max((len(part.encode("utf-8", "surrogateescape")) for part in path.parts), default=0)
    if longest > MAX_NAME_CHARS:
        return f"has a name of {longest} bytes, longer than the {MAX_NAME_CHARS} a file name may have"
    if len(text.encode("utf-8", "surrogateescape")) > 4000:
        return f"is {len(text)} characters long, longer than a path may be"
    return None


def read_error(err: OSError | UnicodeDecodeError, what: str, path: Path, fix: str) -> str:
    """One sentence for a file that could not be read."""
    if isinstance(err, FileNotFoundError):
        return f"{what} {path} does not exist; check the path or {fix}."
    if isinstance(err, IsADirectoryError):
        return f"{what} {path} is a folder, not a file; {fix}."
    if isinstance(err, PermissionError):
        return f"{what} {path} cannot be read (permission denied); check its permissions."
    if isinstance(err, OSError) and err.errno == errno.ENAMETOOLONG:
        return f"{what} {str(path)[:60]}... has a name too long for a file; {fix}."
    if isinstance(err, UnicodeDecodeError):
        return f"{what} {path} is not UTF-8 text; {fix}."
    return f"{what} {path} cannot be read ({err.strerror or err.__class__.__name__}); {fix}."


def read_json_file(path: Path | str, what: str, fix: str = "fix it", error: type[Exception] = InputError) -> Any:
    """The JSON value in the file `path`; `error` with one sentence naming `what` and the path otherwise."""
    p = Path(path)
    problem = path_problem(p)
    if problem is not None:
        raise error(f"{what} path {str(p)[:60]!r} {problem}; {fix}.")
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise error(read_error(err, what, p, fix)) from None
    if len(raw) > MAX_FILE_BYTES:
        raise error(f"{what} {p} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; {fix}.")
    return parse_json(raw, f"{what} {p}", fix, error)
