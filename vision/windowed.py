"""Live tag detection that looks only where tags can be: windows round the last tags, plus full scans.

A full-frame scan at the fine decimation (the one `decimation_for` picks for the smallest tag: 1 at 1080p
with 0.5" tags) costs ~100-150 ms on a busy core (docs/bench.md). Between frames a base moves at most a
hand's slide, so `WindowedDetector` scans at that same decimation only inside a window round each tag it
saw last frame: the tag's box (white border included) grown on every side by `MARGIN_SIDES` sides of the
smallest expected tag (a slide in inches does not grow with the tag) plus `CONTEXT_PX` (the library's threshold looks ~8 px round a pixel), edges rounded out to the
library's 4-px threshold tiles so a window sees exactly the pixels and tiles the full frame does.
Overlapping windows are merged where that costs no more pixels;
a tag seen by two windows is kept once. Most bases stand still, so each tag is first looked for in a tight window (its box + STILL_PX), and only
the tags not found there in the wide one. Every frame it also scans the whole frame at a coarse decimation
(a ~320x180 image): a big tag placed anywhere (anchors, terrain, large bases) gets a window at once.
A full fine scan runs on the first frame, every `fine_every` frames (so a small base placed anywhere is
found within that many frames), and at once in the same frame whenever a tag seen last frame, not at
the frame's edge, was not found in its window (slid further than the margin, lifted, covered). A tag
missing from a frame keeps its window for `fine_every` frames more, so a base uncovered again (a hand
moved away, a partly hidden tag read again) is found at once, without a full scan.

Every tag returned comes from a fine-decimation detection, windowed or full, with corners refitted on
the full frame (`vision.tags.observations`): a tag found in a window has the same corners as a full
`detect_tags` gives it. All detections use the one process-wide detector of vision/tags.py.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from vision.tags import (
    MAX_DECIMATE,
    LibraryTag,
    TagObservation,
    check_gray,
    decimation_for,
    library_tags,
    observations,
)

FINE_EVERY = 15
"""A full fine scan every this many frames: a newly placed small base is found within that many."""
MARGIN_SIDES = 1.5
"""A window reaches this many sides of the smallest expected tag (`min_tag_px`; the tag's own side when
that is not given) beyond the tag's white border: a 0.5" tag's side is 0.5", so 0.75" of slide a frame at
the far side of the board (~22 in/s at 30 fps, a quick hand), a little less where the board is nearer."""
CONTEXT_PX = 8.0
"""And this many px more: the library's adaptive threshold looks at the 3x3 tiles of 4 px round a pixel."""
STILL_PX = 3.0
"""The first look at each tag is a tight window, its box grown by this (plus CONTEXT_PX): most bases stand
still between frames. Only tags not found there get the wide window (MARGIN_SIDES)."""
TILE_PX = 4
"""The library's threshold tile (px of the decimated image); windows start and end on tile edges."""
COARSE_PIXELS = 320 * 180
"""The coarse scan's decimation is the smallest that brings the frame down to this many pixels."""
MAX_COARSE_DECIMATE = 8


class Window(NamedTuple):
    """A rectangle of the frame, px: columns x0..x1-1, rows y0..y1-1."""

    x0: int
    y0: int
    x1: int
    y1: int

    def overlaps(self, other: Window) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def union(self, other: Window) -> Window:
        return Window(min(self.x0, other.x0), min(self.y0, other.y0), max(self.x1, other.x1), max(self.y1, other.y1))

    def contains(self, box: tuple[float, float, float, float]) -> bool:
        """True if the box (x0, y0, x1, y1), px, lies inside with a pixel to spare."""
        return self.x0 + 1 <= box[0] and self.y0 + 1 <= box[1] and box[2] <= self.x1 - 2 and box[3] <= self.y1 - 2

    @property
    def area(self) -> int:
        return (self.x1 - self.x0) * (self.y1 - self.y0)


def outer_box(corners_px: np.ndarray) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) px round a tag's white border (its black square grown by one cell each side)."""
    c = np.asarray(corners_px, np.float64)
    outer = c.mean(axis=0) + (c - c.mean(axis=0)) * (10.0 / 8.0)
    return float(outer[:, 0].min()), float(outer[:, 1].min()), float(outer[:, 0].max()), float(outer[:, 1].max())


def _side(corners_px: np.ndarray) -> float:
    c = np.asarray(corners_px, np.float64)
    return float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)))


def merge_windows(windows: Sequence[Window]) -> list[Window]:
    """Overlapping windows replaced by the box round both wherever that box is no bigger than the two
    apart, until no such pair is left (windows may still overlap where merging would cost more)."""
    out = list(windows)
    merged = True
    while merged:
        merged = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                a, b = out[i], out[j]
                if a.overlaps(b) and a.union(b).area <= a.area + b.area:
                    out[i] = a.union(b)
                    del out[j]
                    merged = True
                    break
            if merged:
                break
    return out


def unique(found: Sequence[LibraryTag]) -> list[LibraryTag]:
    """The tags with repeats (same id, centres within 2 px: one tag seen by two overlapping windows) dropped."""
    out: list[LibraryTag] = []
    for f in found:
        c = f.corners_px.mean(axis=0)
        if not any(o.id == f.id and np.hypot(*(o.corners_px.mean(axis=0) - c)) < 2.0 for o in out):
            out.append(f)
    return out


def coarse_decimation(width: int, height: int, fine: int) -> int:
    """The coarse scan's decimation: the smallest (>= 2x the fine one, <= 8) bringing the frame to COARSE_PIXELS."""
    d = max(2 * fine, 2)
    while d < MAX_COARSE_DECIMATE and (width / d) * (height / d) > COARSE_PIXELS:
        d += 1
    return min(d, MAX_COARSE_DECIMATE)


class WindowedDetector:
    """Tag detection for consecutive frames of one camera: windows round known tags, coarse and fine scans.

    min_tag_px: the smallest expected tag's black-square side, px: it picks the fine decimation as
    `detect_tags` does (`decimate` overrides that) and sizes the windows (MARGIN_SIDES). fine_every: full fine scan period, frames (1: every frame
    is a full scan, as `detect_tags`). coarse: run the coarse full-frame scan every frame. Not thread-safe:
    one loop feeds it frames in order. A new detector (or `reset`) starts with a full scan.
    """

    def __init__(
        self,
        *,
        min_tag_px: float | None = None,
        decimate: int | None = None,
        fine_every: int = FINE_EVERY,
        coarse: bool = True,
        margin_sides: float = MARGIN_SIDES,
        context_px: float = CONTEXT_PX,
    ) -> None:
        if fine_every < 1:
            raise ValueError(f"fine_every must be 1 or more frames; got {fine_every}.")
        self.decimate = decimation_for(min_tag_px) if decimate is None else int(decimate)
        if not 1 <= self.decimate <= MAX_DECIMATE * 2:
            raise ValueError(f"Decimation must be 1 to 8; got {decimate}.")
        self.fine_every = int(fine_every)
        self.coarse = bool(coarse)
        self.margin_sides = float(margin_sides)
        self.min_tag_px = None if min_tag_px is None or not math.isfinite(min_tag_px) else float(min_tag_px)
        self.context_px = float(context_px)
        self.last_scan = ""
        """What the last frame ran: "full" (a fine scan of the whole frame) or "windows"."""
        self.windows: tuple[Window, ...] = ()
        """The windows the last frame scanned (empty after a full scan)."""
        self.reset()

    def reset(self) -> None:
        """Forget the tags seen: the next frame gets a full scan."""
        self._last: tuple[TagObservation, ...] = ()
        self._missing: dict[int, tuple[TagObservation, int]] = {}
        """Tags seen recently but not last frame (covered, flickering at the detector's limit): id -> (where
        last seen, frames since)."""
        self._since_full = self.fine_every
        self._size: tuple[int, int] | None = None

    # ------------------------------------------------------------------------------------------ windows
    def window_round(self, corners_px: np.ndarray, width: int, height: int, still: bool = False) -> Window:
        """The window a tag with these corners (px) is looked for in next frame, tile-aligned, clipped:
        with room for a slide, or (still) for a base that stands where it stood (STILL_PX)."""
        x0, y0, x1, y1 = outer_box(corners_px)
        grow = (STILL_PX if still else self._slide_px(corners_px)) + self.context_px
        a = TILE_PX * self.decimate
        wx0 = max(0, int(math.floor((x0 - grow) / a)) * a)
        wy0 = max(0, int(math.floor((y0 - grow) / a)) * a)
        wx1 = min(width, int(math.ceil((x1 + grow + 1) / a)) * a)
        wy1 = min(height, int(math.ceil((y1 + grow + 1) / a)) * a)
        return Window(wx0, wy0, wx1, wy1)

    def _slide_px(self, corners_px: np.ndarray) -> float:
        """How far, px, the tag with these corners may slide by next frame."""
        return self.margin_sides * (self.min_tag_px if self.min_tag_px is not None else _side(corners_px))

    def _near_edge(self, tag: TagObservation, width: int, height: int) -> bool:
        """True if the tag could have left the frame by next frame (its window reaches the frame's edge)."""
        x0, y0, x1, y1 = outer_box(tag.corners_px)
        grow = self._slide_px(tag.corners_px)
        return x0 - grow <= 1 or y0 - grow <= 1 or x1 + grow >= width - 2 or y1 + grow >= height - 2

    # ------------------------------------------------------------------------------------------ frames
    def detect(self, gray: np.ndarray) -> tuple[TagObservation, ...]:
        """Every tag in this frame (as `detect_tags` would give, within the rules above), sorted by id."""
        check_gray(gray)
        height, width = gray.shape
        if self._size != (width, height) or self._since_full + 1 >= self.fine_every:
            return self._full(gray)
        small = [self.window_round(t.corners_px, width, height, still=True) for t in self._last]
        if self.coarse:
            merged = merge_windows(small)
            d = coarse_decimation(width, height, self.decimate)
            for found in library_tags(gray, d, refine_edges=False):
                box = outer_box(found.corners_px)
                if not any(w.contains(box) for w in merged):
                    small.append(self.window_round(found.corners_px, width, height, still=True))
        found_tags = self._scan(gray, merge_windows(small))
        windows = list(small)
        # Second look, with room for a slide, for the tags that moved out of their tight windows and for
        # those missing lately.
        here = {f.id for f in found_tags}
        moved = [t for t in self._last if t.id not in here] + [t for t, _ in self._missing.values()]
        if moved:
            wide = merge_windows([self.window_round(t.corners_px, width, height) for t in moved])
            found_tags = unique(found_tags + self._scan(gray, wide))
            windows += wide
        seen = Counter(f.id for f in found_tags)
        expected = Counter(t.id for t in self._last if not self._near_edge(t, width, height))
        if any(seen[i] < n for i, n in expected.items()):  # a tag was lost away from the edge
            return self._full(gray)
        tags = observations(gray, found_tags)
        self._remember(tags)
        self._since_full += 1
        self.last_scan = "windows"
        self.windows = tuple(windows)
        return tags

    def _scan(self, gray: np.ndarray, windows: Sequence[Window]) -> list[LibraryTag]:
        found: list[LibraryTag] = []
        for w in windows:
            found += library_tags(gray, self.decimate, roi=(w.x0, w.y0, w.x1 - w.x0, w.y1 - w.y0))
        return unique(found)

    def _full(self, gray: np.ndarray) -> tuple[TagObservation, ...]:
        tags = observations(gray, library_tags(gray, self.decimate))
        self._remember(tags)
        self._since_full = 0
        self._size = (int(gray.shape[1]), int(gray.shape[0]))
        self.last_scan = "full"
        self.windows = ()
        return tags

    def _remember(self, tags: tuple[TagObservation, ...]) -> None:
        """Keep this frame's tags, and for `fine_every` frames where each tag not seen now was last seen."""
        seen = {t.id for t in tags}
        missing = {i: (t, age + 1) for i, (t, age) in self._missing.items() if i not in seen and age + 1 < self.fine_every}
        for t in self._last:
            if t.id not in seen:
                missing[t.id] = (t, 0)
        self._missing = missing
        self._last = tags
