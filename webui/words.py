"""Messages in the page's own words: the command line's flags named as the page names those inputs.

The domain modules speak to the command line ("check --board and --layout"); a web page has no flags, so every
sentence the server sends a page goes through `page_words` (webui/server.py's error handlers)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

FLAG_WORDS = {
    "--board": "the board size",
    "--layout": "the anchor layout",
    "--ids": "the tag ids",
    "--size": "the tag size",
    "--base": "the base size",
    "--base-height": "the base height",
    "--mount": "the mount",
    "--pin": "the pin height",
    "--clearance": "the feet clearance",
    "--calibration": "the calibration",
    "--roster": "the roster",
    "--terrain": "the terrain",
    "--game": "the game",
    "--camera": "the camera",
    "--video": "the video",
    "--replay": "the recorded session",
    "--sessions": "the sessions folder",
    "--paper": "the paper",
}
_FLAG = re.compile(r"--[a-z][a-z-]*")


def page_words(text: str) -> str:
    """`text` with every command-line flag replaced by the page's name for that input."""
    out = _FLAG.sub(lambda m: FLAG_WORDS.get(m.group(0), "that setting"), text)
    out = out.replace("the board size WxD", "the board size (like 30x22)")
    out = out.replace("(the mount topper)", "(the topper mount)")
    return out[:1].upper() + out[1:] if _FLAG.match(text) else out


FIELD_WORDS = {
    "size": "the tag size (inches)",
    "base_mm": "the base size (mm)",
    "mount": "the mount",
    "pin_in": "the pin height (inches)",
    "clearance_in": "the feet clearance (inches)",
    "base_height_in": "the base height (inches)",
    "square_in": "the square size (inches)",
    "marker_in": "the marker size (inches)",
    "paper": "the paper",
    "ids": "the tag ids",
    "board": "the board size",
}
"""A form field's name in the page's words."""


def field_limits(error: Mapping[str, Any]) -> str:
    """What a field's value must be, from a validation error's context ("more than 0.1 and at most 6")."""
    ctx = error.get("ctx") or {}
    parts = []
    for key, words in (("gt", "more than"), ("ge", "at least"), ("lt", "less than"), ("le", "at most")):
        if key in ctx:
            parts.append(f"{words} {ctx[key]}")
    if parts:
        return "a number " + " and ".join(parts)
    if "pattern" in ctx:
        return "one of the choices offered"
    return "a number" if "float" in str(error.get("type", "")) or "int" in str(error.get("type", "")) else "valid"
