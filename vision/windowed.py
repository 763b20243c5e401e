"""Live tag detection that looks only where tags can be: windows round the last tags, a coarse scan, and a
fine sweep of the frame one cell a frame.

A full-frame scan at the fine decimation (the one `decimation_for` picks for the smallest tag: 1 at 1080p
with 0.5" tags) costs ~80-150 ms on a busy core (docs/bench.md). Between frames a base moves at most a
hand's slide, so `WindowedDetector` scans at that same decimation only inside a window round each tag it
saw last frame: the tag's box (white border included) grown on every side by `MARGIN_SIDES` sides of the
smallest expected tag (a slide in inches does not grow with the tag) plus the context (`CONTEXT_PX`, at
least one threshold tile: the library's threshold looks at the 3x3 tiles round a pixel), edges rounded out
to the library's threshold tiles (`TILE_PX` decimated px) so a window sees exactly the pixels and tiles the
full frame does. A tag is taken from a window only if its box lies inside the window less the context on
every side not at the frame's edge (`trusted`): there the window sees what the full frame sees. Overlapping windows
are merged where that costs no more pixels; a tag seen by two windows is kept once. Most bases stand
still, so each tag is first looked for in a tight window (its box + STILL_PX), and only the tags not found
there in the wide one.

Every frame it also scans the whole frame at a coarse decimation (a ~320x180 image): a tag with a black
square of `DECIMATED_TAG_PX` coarse px or more (72 px at 1080p) placed anywhere gets a window at once.
Smaller new tags are found by the sweep: the frame is cut into at most `fine_every` cells (`sweep_cells`: the
grid whose largest cell is smallest), each core grown on every side by half the outer box of the biggest
tag the coarse scan may miss plus the context, and one cell is scanned at the fine decimation each frame,
merged with the windows where that costs nothing. A tag's centre lies in one core, so its box lies in that
cell's trusted part: a tag placed anywhere (at a cell's edge or the frame's corner) is found whole within
`fine_every` frames, with a frame's fine work bounded by its windows plus one cell (~13 % of a 1080p frame
at 14 cells) instead of a whole frame every `fine_every` frames. The first frame (and the first after
`reset` or a change of frame size) is a full fine scan, as is every frame when `fine_every` is 1.

A tag seen last frame, not at the frame's edge, and not found in its window (slid further than the margin,
lifted, covered) gets, in the same frame, a scan of a reach window round where it was (`REACH_SIDES` sides
of the smallest tag: a slide of ~2" in a frame) instead of a full scan of the whole frame, which cost a
spike whenever a hand covered a base. Measured on the three sample sessions (live: 15 frames) and a
rendered 1080p sequence with bases lifted and put down elsewhere: of 109 tags lost from their windows, the
full scan found none anywhere in the frame (they were lifted or covered), and the live pipeline reported
every move it reported before (and one the old detector missed in `stress`). One that did slide beyond the reach would be found by the sweep within `fine_every` frames, as a
newly placed base is. A tag missing from a frame keeps its wide window for `fine_every` frames more, so a
base uncovered again (a hand moved away, a partly hidden tag read again) is found at once.

Every tag returned comes from a fine-decimation detection, windowed, swept or full, with corners refitted
on the full frame (`vision.tags.observations`); a window or cell sees the same pixels and threshold tiles
round a tag it trusts as the full frame does, so it finds the same tags, with corners within ~0.01 px of a
full `detect_tags`'s (0.013 px on rendered 1080p frames, 0.03 px on the sample sessions' blurred ones; not
to the last bit: pupil-apriltags fits quads in float32 relative to the scanned
image's origin, ~3e-5 px apart, and its edge refinement can turn that into ~0.1 px before our refit brings
it back). All detections use the one process-wide detector of vision/tags.py. `scanned_px` counts the
(decimated) pixels a frame's scans fed the library: the deterministic measure of its work.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from vision.tags import (
    DECIMATED_TAG_PX,
    MAX_DECIMATE,
    LibraryTag,
    TagObservation,
    check_gray,
    decimation_for,
    library_tags,
    observations,
)

FINE_EVERY = 15
"""The sweep covers the whole frame at the fine decimation in this many frames (at most): a newly placed
small base is found within that many."""
MARGIN_SIDES = 1.5
"""A window reaches this many sides of the smallest expected tag (`min_tag_px`; the tag's own side when
that is not given) beyond the tag's white border: a 0.5" tag's side is 0.5", so 0.75" of slide a frame at
the far side of the board (~22 in/s at 30 fps, a quick hand), a little less where the board is nearer."""
REACH_SIDES = 4.0
"""A tag lost from its window is looked for at once this many sides of the smallest tag round where it
was (2" for 0.5" tags: ~60 in/s at 30 fps)."""
CONTEXT_PX = 8.0
"""And this many px more (at least one threshold tile, TILE_PX x decimation): the library's adaptive
threshold looks at the 3x3 tiles of 4 decimated px round a pixel."""
STILL_PX = 3.0
"""The first look at each tag is a tight window, its box grown by this (plus the context): most bases stand
still between frames. Only tags not found there get the wide window (MARGIN_SIDES)."""
TILE_PX = 4
"""The library's threshold tile (px of the decimated image); windows start and end on tile edges."""
COARSE_PIXELS = 320 * 180
"""The coarse scan's decimation is the smallest that brings the frame down to this many pixels."""
MAX_COARSE_DECIMATE = 8
OUTER_SPAN = 1.25 * math.sqrt(2.0) * 1.1
"""A tag's outer box (white border included) spans at most this many times its black square's side, px: the
border's 10/8, the diagonal of a turned square, and 10 % for perspective."""


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

    def covers(self, other: Window) -> bool:
        return self.x0 <= other.x0 and self.y0 <= other.y0 and other.x1 <= self.x1 and other.y1 <= self.y1

    @property
    def area(self) -> int:
        return (self.x1 - self.x0) * (self.y1 - self.y0)


def trusted(w: Window, box: tuple[float, float, float, float], context: float, width: int, height: int) -> bool:
    """True if a tag with outer box `box` (px) found in window `w` is found as the full frame finds it: the
    box lies `context` px (and a pixel) inside every side of `w` that is not the frame's edge."""
    return (
        (w.x0 == 0 or w.x0 + context + 1 <= box[0])
        and (w.y0 == 0 or w.y0 + context + 1 <= box[1])
        and (w.x1 == width or box[2] <= w.x1 - context - 2)
        and (w.y1 == height or box[3] <= w.y1 - context - 2)
    )


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


def _cuts(length: int, parts: int, tile: int) -> list[int]:
    """`parts` + 1 tile-aligned cut points from 0 to `length`, px, as even as the tiles allow."""
    inner = [int(round(k * length / parts / tile)) * tile for k in range(1, parts)]
    return [0, *inner, length]


def sweep_cells(width: int, height: int, count: int, reach_px: float, tile: int) -> list[Window]:
    """At most `count` cells covering a `width` x `height` frame, px, in raster order: a grid of cores, each
    grown by `reach_px` on every side, rounded out to `tile` px and clipped to the frame. Of the grids of at
    most `count` cells the one whose largest cell has fewest pixels (then the one with fewest cells)."""
    best: tuple[int, int, list[Window]] | None = None
    for nx in range(1, count + 1):
        for ny in range(1, count // nx + 1):
            xs, ys = _cuts(width, nx, tile), _cuts(height, ny, tile)
            if len(set(xs)) != nx + 1 or len(set(ys)) != ny + 1:
                continue  # cores thinner than a tile
            cells = [
                Window(
                    max(0, int(math.floor((xs[i] - reach_px) / tile)) * tile),
                    max(0, int(math.floor((ys[j] - reach_px) / tile)) * tile),
                    min(width, int(math.ceil((xs[i + 1] + reach_px) / tile)) * tile),
                    min(height, int(math.ceil((ys[j + 1] + reach_px) / tile)) * tile),
                )
                for j in range(ny)
                for i in range(nx)
            ]
            key = (max(c.area for c in cells), len(cells))
            if best is None or key < best[:2]:
                best = (*key, cells)
    assert best is not None  # nx = ny = 1 always qualifies
    return best[2]


class WindowedDetector:
    """Tag detection for consecutive frames of one camera: windows round known tags, a coarse scan and a
    fine sweep.

    min_tag_px: the smallest expected tag's black-square side, px: it picks the fine decimation as
    `detect_tags` does (`decimate` overrides that) and sizes the windows (MARGIN_SIDES). fine_every: the
    sweep's length, frames (1: every frame is a full scan, as `detect_tags`). coarse: run the coarse
    full-frame scan every frame (without it a tag bigger than the sweep's overlap, `sweep_tag_px`, that
    straddles a cell's edge may never be found). Not thread-safe: one loop feeds it frames in order. A new
    detector (or `reset`) starts with a full scan.
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
        self.context_px = max(float(context_px), float(TILE_PX * self.decimate))
        self.last_scan = ""
        """What the last frame ran: "full" (a fine scan of the whole frame) or "windows" (windows and a cell)."""
        self.windows: tuple[Window, ...] = ()
        """The windows the last frame scanned at the fine decimation, after merging (empty after a full scan)."""
        self.cell: Window | None = None
        """The sweep cell the last frame scanned (None after a full scan)."""
        self.scanned_px = 0
        """Pixels the last frame's scans fed the library, each counted in its scan's decimated image."""
        self.cells: tuple[Window, ...] = ()
        """The sweep's cells for the current frame size, in the order they are scanned."""
        self.reset()

    def reset(self) -> None:
        """Forget the tags seen: the next frame gets a full scan."""
        self._last: tuple[TagObservation, ...] = ()
        self._missing: dict[int, tuple[TagObservation, int]] = {}
        """Tags seen recently but not last frame (covered, flickering at the detector's limit): id -> (where
        last seen, frames since)."""
        self._next_cell = 0
        self._size: tuple[int, int] | None = None

    # ------------------------------------------------------------------------------------------ windows
    def window_round(self, corners_px: np.ndarray, width: int, height: int, still: bool = False) -> Window:
        """The window a tag with these corners (px) is looked for in next frame, tile-aligned, clipped:
        with room for a slide, or (still) for a base that stands where it stood (STILL_PX)."""
        return self._window(corners_px, width, height, STILL_PX if still else self._slide_px(corners_px))

    def _window(self, corners_px: np.ndarray, width: int, height: int, slide_px: float) -> Window:
        x0, y0, x1, y1 = outer_box(corners_px)
        grow = slide_px + self.context_px
        a = TILE_PX * self.decimate
        wx0 = max(0, int(math.floor((x0 - grow) / a)) * a)
        wy0 = max(0, int(math.floor((y0 - grow) / a)) * a)
        wx1 = min(width, int(math.ceil((x1 + grow + 1) / a)) * a)
        wy1 = min(height, int(math.ceil((y1 + grow + 1) / a)) * a)
        return Window(wx0, wy0, wx1, wy1)

    def _slide_px(self, corners_px: np.ndarray, sides: float | None = None) -> float:
        """How far, px, the tag with these corners may slide by next frame (or `sides` of the smallest tag)."""
        n = self.margin_sides if sides is None else sides
        return n * (self.min_tag_px if self.min_tag_px is not None else _side(corners_px))

    def _near_edge(self, tag: TagObservation, width: int, height: int) -> bool:
        """True if the tag could have left the frame by next frame (its window reaches the frame's edge)."""
        x0, y0, x1, y1 = outer_box(tag.corners_px)
        grow = self._slide_px(tag.corners_px)
        return x0 - grow <= 1 or y0 - grow <= 1 or x1 + grow >= width - 2 or y1 + grow >= height - 2

    def sweep_tag_px(self, width: int, height: int) -> float:
        """The biggest black-square side, px, the sweep finds whole wherever it lies: the smallest the coarse
        scan finds (DECIMATED_TAG_PX coarse px)."""
        return DECIMATED_TAG_PX * coarse_decimation(width, height, self.decimate)

    # ------------------------------------------------------------------------------------------ frames
    def detect(self, gray: np.ndarray) -> tuple[TagObservation, ...]:
        """Every tag in this frame (as `detect_tags` would give, within the rules above), sorted by id."""
        check_gray(gray)
        height, width = gray.shape
        if self._size is not None and self._size != (width, height):
            self.reset()  # where tags were in a frame of another size says nothing of where they are in this one
        if self._size != (width, height) or self.fine_every == 1:
            return self._full(gray)
        cell = self.cells[self._next_cell % len(self.cells)]
        self._next_cell += 1
        if len(self.cells) == 1:
            return self._full(gray)
        self.scanned_px = 0
        small = [self.window_round(t.corners_px, width, height, still=True) for t in self._last]
        if self.coarse:
            d = coarse_decimation(width, height, self.decimate)
            self.scanned_px += (width // d) * (height // d)
            looked = [cell, *merge_windows(small)]
            for found in library_tags(gray, d, refine_edges=False):
                box = outer_box(found.corners_px)
                if not any(trusted(w, box, self.context_px, width, height) for w in looked):
                    small.append(self.window_round(found.corners_px, width, height, still=True))
        scanned = merge_windows([cell, *small])
        found_tags = self._scan(gray, scanned)
        # Second look, with room for a slide, for the tags that moved out of their tight windows and for
        # those missing lately; then a reach window for each tag seen last frame still lost.
        here = {f.id for f in found_tags}
        moved = [t for t in self._last if t.id not in here] + [t for t, _ in self._missing.values()]
        found_tags = self._look_again(gray, found_tags, moved, scanned, self.margin_sides)
        seen = Counter(f.id for f in found_tags)
        expected = Counter(t.id for t in self._last)
        lost = [t for t in self._last if not self._near_edge(t, width, height) and seen[t.id] < expected[t.id]]
        found_tags = self._look_again(gray, found_tags, lost, scanned, REACH_SIDES)
        tags = observations(gray, found_tags)
        self._remember(tags)
        self.last_scan = "windows"
        self.windows = tuple(scanned)
        self.cell = cell
        return tags

    def _look_again(
        self, gray: np.ndarray, found: list[LibraryTag], tags: Sequence[TagObservation], scanned: list[Window],
        sides: float,
    ) -> list[LibraryTag]:
        """`found` plus what windows of `sides` slide round `tags` find, skipping those a window already
        scanned this frame covers; the new windows are added to `scanned`."""
        height, width = gray.shape
        new = [self._window(t.corners_px, width, height, self._slide_px(t.corners_px, sides)) for t in tags]
        new = merge_windows([w for w in new if not any(s.covers(w) for s in scanned)])
        if not new:
            return found
        scanned += new
        return unique(found + self._scan(gray, new))

    def _scan(self, gray: np.ndarray, windows: Sequence[Window]) -> list[LibraryTag]:
        """The tags each window finds in its trusted part, each once."""
        height, width = gray.shape
        found: list[LibraryTag] = []
        for w in windows:
            self.scanned_px += ((w.x1 - w.x0) // self.decimate) * ((w.y1 - w.y0) // self.decimate)
            for f in library_tags(gray, self.decimate, roi=(w.x0, w.y0, w.x1 - w.x0, w.y1 - w.y0)):
                if trusted(w, outer_box(f.corners_px), self.context_px, width, height):
                    found.append(f)
        return unique(found)

    def _full(self, gray: np.ndarray) -> tuple[TagObservation, ...]:
        tags = observations(gray, library_tags(gray, self.decimate))
        self._remember(tags)
        height, width = gray.shape
        if self._size != (width, height):
            self._size = (width, height)
            reach = OUTER_SPAN * self.sweep_tag_px(width, height) / 2.0 + self.context_px + 2.0
            self.cells = tuple(sweep_cells(width, height, self.fine_every, reach, TILE_PX * self.decimate))
            self._next_cell = 0
        self.last_scan = "full"
        self.windows = ()
        self.cell = None
        self.scanned_px = (width // self.decimate) * (height // self.decimate)
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
