"""Reading the fields of a JSON value a player gave (a roster, a terrain, a board, a scenario): each check
raises the caller's error class with one sentence naming where the field is and what it must be.

Pure: the text has already been parsed (and its depth and number sizes checked) by
`calibration.json_input`; here a value is checked to be what the rules can use. JSON's true/false is never
taken for a number, and a number must be finite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

_NUMBER_KINDS = (int, float, (int, float), (float, int))


def require(obj: Any, key: str, kind: type | tuple[type, ...], where: str, error: type[Exception]) -> Any:
    """obj[key] checked to be of `kind` (a number also finite and never true/false); `error` otherwise."""
    if not isinstance(obj, Mapping):
        raise error(f"{where} must be a JSON object; got {_shown(obj)}.")
    if key not in obj:
        raise error(f'{where} is missing "{key}".')
    value = obj[key]
    if kind in _NUMBER_KINDS and (isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value))):
        raise error(f'{where}: "{key}" must be a number; got {_shown(value)}.')
    if not isinstance(value, kind):
        raise error(f'{where}: "{key}" has the wrong kind of value ({_shown(value)}).')
    return value


def number(value: Any, what: str, error: type[Exception], *, low: float | None = None, high: float | None = None,
           kind: str = "a number") -> float:
    """`value` as a finite float within [low, high]; `error` "<what> must be <kind>; got ..." otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise error(f"{what} must be {kind}; got {_shown(value)}.")
    if (low is not None and value < low) or (high is not None and value > high):
        raise error(f"{what} is {value:g}, outside {_g(low)} to {_g(high)}.")
    return float(value)


def whole(value: Any, what: str, error: type[Exception], *, low: int | None = None, high: int | None = None) -> int:
    """`value` as an int within [low, high] (never true/false, never 2.5); `error` naming `what` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{what} must be a whole number; got {_shown(value)}.")
    if (low is not None and value < low) or (high is not None and value > high):
        raise error(f"{what} is {value}, outside {_g(low)} to {_g(high)}.")
    return value


def field_number(obj: Mapping[str, Any], key: str, default: float, where: str, error: type[Exception], *,
                 low: float | None = None, high: float | None = None, kind: str = "a number") -> float:
    """obj[key] (or `default` when absent) through `number`, named "<where>: <key>"."""
    return number(obj.get(key, default), f"{where}: {key}", error, low=low, high=high, kind=kind)


def _g(bound: float | None) -> str:
    return "any" if bound is None else f"{bound:g}"


def _shown(value: Any) -> str:
    """`value` as quoted in a sentence: at most 60 characters of its repr."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
