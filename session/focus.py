"""Each page's own selection: which unit every open page (a browser tab, named by an id it makes up) has
selected, so that one player's selection is never drawn on another player's view.

The loop asks the game for the rings of every unit some page has selected and sends them in the frame
message under `focus` (keyed by tag id, session/frame_message.py's `focus_message`); each page draws only its
own unit's. Nothing is drawn for a unit
nobody has selected, so a spectator's view stays clean.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

MAX_PAGES = 64
"""At most this many pages keep a selection; the one that chose longest ago is forgotten first."""


class Focus:
    """page id -> selected tag id, thread-safe (requests set it, the loop's thread reads it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_page: OrderedDict[str, int] = OrderedDict()

    def select(self, page: str, unit: int | None) -> None:
        with self._lock:
            self._by_page.pop(page, None)
            if unit is not None:
                self._by_page[page] = int(unit)
                while len(self._by_page) > MAX_PAGES:
                    self._by_page.popitem(last=False)

    def of(self, page: str) -> int | None:
        with self._lock:
            return self._by_page.get(page)

    def units(self) -> list[int]:
        """The tag ids some page has selected, each once."""
        with self._lock:
            return sorted(set(self._by_page.values()))
