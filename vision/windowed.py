"""Tag detection for a camera's consecutive frames that looks only where tags can be: windows round the last
tags, where the picture changed, a coarse scan, and a fine sweep of the frame one cell a frame. The live view,
the replay page and `tablesight replay` all scan this way, each frame as a function of the frames before it
and its number, so a recording replays to exactly what was ruled live.

A full-frame scan at the fine decimation (the one `decimation_for` picks for the smallest tag: 1 at 1080p
with 0.5" tags) costs ~70-150 ms of a core (docs/bench.md). Between frames a base moves at most a hand's
slide, so `WindowedDetector` scans at that same decimation only inside a window round each tag it saw last
frame: the tag's box (white border included) grown on every side by `MARGIN_SIDES` sides of the smallest
expected tag (a slide in inches does not grow with the tag) plus the context (`CONTEXT_PX`, at least one
threshold tile: the library's threshold looks at the 3x3 tiles round a pixel), edges rounded out to the
library's threshold tiles (`TILE_PX` decimated px) so a window sees exactly the pixels and tiles the full
frame does. A tag is taken from a window only if its box lies inside the window less the context on every
side not at the frame's edge (`trusted`): there the window sees what the full frame sees. Overlapping
windows are merged where that costs no more pixels; a tag seen by two windows is kept once. Most bases stand
still, so each tag is first looked for in a tight window (its box + STILL_PX), and only the tags not found
there in the wide one.

Where the picture changed. Each frame's mean grey a threshold tile, less the mean of the tiles round it
(`tile_means`: light that changes smoothly over the table cancels), is compared with the last frame's; round
every tile that moved by more than CHANGE_GREY a window is scanned at once (`changed_windows`). So a base
put down anywhere, or uncovered by a hand that moves away, is read in the very frame it shows; when most of
the frame changed (the light switched, the camera knocked) the frame gets a full scan. And a tag whose tiles,
fitted to a small motion since the frame it was measured in, moved by at most KEEP_PX and show nothing else
(vision/stillness.py) keeps that measurement without a scan: it stands where it stood.

Two backstop scans (`Sweep`) catch what neither finds. Every COARSE_EVERY-th frame (by frame number) scans the
whole frame at a coarse decimation (a ~320x180 image): a tag with a black square of `DECIMATED_TAG_PX` coarse px
or more (72 px at 1080p) placed anywhere is found whether or not the picture changed round it. And a sweep
finds a tag that became readable with no change to the picture: the frame is cut into at most `fine_every`
cells (`sweep_cells`: the grid whose largest cell is smallest), each core grown on every side by half the outer
box of the biggest tag the coarse scan may miss plus the context, and frame number k scans cell k mod n at the
fine decimation. A tag's centre lies in one core, so its box lies in that cell's trusted part. A tag a backstop
scan found and the frame's windows did not is looked for in the next frame, in a window with room for a slide:
a tag anywhere (at a cell's edge or the frame's corner) is read within `fine_every` + 1 frames, a big one within
COARSE_EVERY + 1. The first frame (and the first after `reset`, a change of frame size, or a gap of more than
GAP_S between frames) is a full fine scan, as is every frame when `fine_every` is 1.

The backstop scans depend on nothing but the frame and its number, and only the next frame needs them: so a
frame waits for none. The live view's feed makes them on a thread of its own once the frame has gone to the
loop (from a camera: once the loop is done with it; session/feed_ahead.py), the replay's read-ahead with the
frame (session/read_ahead.py); either way the next frame's `detect` finds them made, or makes them
(`Sweep.run`), and the tags come out the same. The tiles that tell where the picture changed are made ahead
too (`scan_ahead`); `detect` takes them as `ahead`.

A tag seen last frame, not at the frame's edge, and not found in its window (slid further than the margin,
lifted, covered) gets, in the same frame, a scan of a reach window round where it was (`REACH_SIDES` sides
of the smallest tag: a slide of ~2" in a frame) instead of a full scan of the whole frame, which cost a
spike whenever a hand covered a base. A tag missing from a frame keeps its wide window for `fine_every`
frames more, so a base uncovered again (a hand moved away, a partly hidden tag read again) is found at once.

Every tag returned comes from a fine-decimation detection, windowed or full, with corners refitted
on the full frame (`vision.tags.observations`); a window or cell sees the same pixels and threshold tiles
round a tag it trusts as the full frame does, so it finds the same tags, with corners within ~0.03 px of a
full `detect_tags`'s (not to the last bit: pupil-apriltags fits quads in float32 relative to the scanned
image's origin, ~3e-5 px apart, and its edge refinement can turn that into ~0.1 px before our refit brings
it back). Detections use the process-wide detector of vision/tags.py (a backstop's or a full `scan_ahead`'s:
the caller's, when it gives one).
`scanned_px` counts the (decimated) pixels a frame's scans fed the library: the deterministic measure of its
work.
"""

from __future__ import annotations

import copy
import math
import threading
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import cv2
import numpy as np

from vision.stillness import Reference, reference, still_all, tile_grid
from vision.tags import (
    DECIMATED_TAG_PX,
    MAX_DECIMATE,
    LibraryTag,
    TagDetector,
    TagObservation,
    check_gray,
    decimation_for,
    detect_tags,
    library_tags,
    observations,
)

FINE_EVERY = 60
"""The sweep covers the whole frame at the fine decimation in this many frames (at most; 2 s at 30 fps): the
backstop for a tag that became readable with no change to the picture (a base put down is read where the
picture changed, at once). Each cell reaches ~80 px (1080p) past its core on every side, so shorter sweeps
cost more pixels a frame: 178 k at 30 cells, 110 k at 60."""
COARSE_EVERY = 2
"""Frames numbered k with k % COARSE_EVERY == 0 get the coarse scan (~6 ms of a core at 1080p): it only backs up
the windows round what changed, for tags too big for the sweep's cells."""
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
CHANGE_GREY = 32.0
"""A threshold tile (TILE_PX x decimation px square) whose mean grey, less the mean of the CHANGE_AREA_TILES
square round it, moved by more than this since the last frame has changed: a base put down or uncovered by a
hand is looked for there at once. Light that changes smoothly over the table moves a tile and its
neighbours alike and is not a change; camera noise moves a tile by ~1 level, a tag's black or white cells
by ~100. (On rendered 1080p frames whose light changes direction every frame, 99 % of tiles move less than
15 levels.)"""
CHANGE_AREA_TILES = 7
CHANGE_FULL_FRACTION = 0.5
"""When the windows round what changed would cover more than this share of the frame (the light was switched,
the camera knocked), the frame gets a full scan instead."""
GAP_S = 0.5
"""A frame more than this many seconds after the last (a stalled camera, a recording paused between frames) gets
a full scan: in that time a base can be anywhere."""
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
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = np.asarray(corners_px, np.float64).tolist()  # plain floats: called ~100x a frame
    mx, my = (x0 + x1 + x2 + x3) / 4.0, (y0 + y1 + y2 + y3) / 4.0
    xs = [mx + (x - mx) * 1.25 for x in (x0, x1, x2, x3)]
    ys = [my + (y - my) * 1.25 for y in (y0, y1, y2, y3)]
    return min(xs), min(ys), max(xs), max(ys)


def _side(corners_px: np.ndarray) -> float:
    c = np.asarray(corners_px, np.float64)
    return float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)))


def merge_windows(windows: Sequence[Window]) -> list[Window]:
    """Overlapping windows replaced by the box round both wherever that box is no bigger than the two
    apart, until no such pair is left (windows may still overlap where merging would cost more)."""
    out = [tuple(w) for w in windows]  # plain tuples: this runs on every frame's few dozen windows
    merged = True
    while merged:  # the first mergeable pair in order, merged, then look again from the start
        merged = False
        for i in range(len(out)):
            ax0, ay0, ax1, ay1 = out[i]
            a_area = (ax1 - ax0) * (ay1 - ay0)
            for j in range(i + 1, len(out)):
                bx0, by0, bx1, by1 = out[j]
                if ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1:
                    u = (min(ax0, bx0), min(ay0, by0), max(ax1, bx1), max(ay1, by1))
                    if (u[2] - u[0]) * (u[3] - u[1]) <= a_area + (bx1 - bx0) * (by1 - by0):
                        out[i] = u
                        del out[j]
                        merged = True
                        break
            if merged:
                break
    return [Window(*w) for w in out]


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


class Sweep:
    """The backstop scans of one frame: the coarse scan of the whole frame (on the frames COARSE_EVERY divides)
    and the fine scan of the sweep's cell for its number (`WindowedDetector.sweep_for`). Made once, by whichever
    thread asks first (`run`): the feed's backstop thread, once the frame has gone to the loop, or the loop at the
    next frame. What it finds is looked for in the next frame's windows, so a frame waits for no backstop scan."""

    def __init__(self, gray: np.ndarray, key: tuple[int, int, int, int, Window], context_px: float) -> None:
        self.key = key
        """(width, height, fine decimation, coarse decimation (0: none), cell) of the frame it scans."""
        self._gray: np.ndarray | None = gray
        self._context_px = context_px
        self._lock = threading.Lock()
        self._found: tuple[tuple[LibraryTag, ...], tuple[LibraryTag, ...]] | None = None

    @property
    def made(self) -> bool:
        """The scans have been made (`run`)."""
        return self._found is not None

    @property
    def scanned_px(self) -> int:
        """Pixels its scans feed the library, each counted in its scan's decimated image."""
        width, height, fine, coarse, cell = self.key
        px = ((cell.x1 - cell.x0) // fine) * ((cell.y1 - cell.y0) // fine)
        return px + ((width // coarse) * (height // coarse) if coarse else 0)

    def run(self, detector: TagDetector | None = None) -> tuple[tuple[LibraryTag, ...], tuple[LibraryTag, ...]]:
        """(the coarse scan's tags, without edge refinement; the cell's tags at the fine decimation, each lying in
        its trusted part), scanned the first time it is asked for (with `detector`: the caller's own, or the
        process-wide one) and kept; the frame's pixels are let go then."""
        with self._lock:
            if self._found is None:
                gray = self._gray
                assert gray is not None
                width, height, fine, coarse, cell = self.key
                wide = tuple(library_tags(gray, coarse, refine_edges=False, detector=detector)) if coarse else ()
                roi = (cell.x0, cell.y0, cell.x1 - cell.x0, cell.y1 - cell.y0)
                found = [f for f in library_tags(gray, fine, roi=roi, detector=detector)
                         if trusted(cell, outer_box(f.corners_px), self._context_px, width, height)]
                self._found = (wide, tuple(unique(found)))
                self._gray = None
            return self._found


class AheadScan(NamedTuple):
    """What can be made of a frame before the frames before it are done (`WindowedDetector.scan_ahead`)."""

    key: tuple[int, int, int, int, Window | None]
    """(width, height, fine decimation, coarse decimation (0: none this frame), cell) it was made for; (.., 0,
    None): a full scan."""
    tiles: np.ndarray | None = None
    """The frame's `tile_means`, which tell where it changed from the last."""
    grid: np.ndarray | None = None
    """The frame's mean grey a threshold tile (vision/stillness.py `tile_grid`), which tells which tags stand
    where they were measured."""
    full: tuple[TagObservation, ...] | None = None
    """A full scan's tags (`detect_tags` at the fine decimation), for a detector with fine_every 1."""
    sweep: Sweep | None = None
    """The frame's backstop scans, made now or later (`Sweep.run`); the next frame looks where they found tags."""


def _same_tag(found: LibraryTag | TagObservation, tag: TagObservation) -> bool:
    """True if `found` is `tag` seen again: the same id, its centre within half the tag's side."""
    if found.id != tag.id:  # most pairs: no arithmetic (this runs for every kept tag against every fresh one)
        return False
    c = np.asarray(found.corners_px, np.float64).mean(axis=0)
    return float(np.hypot(*(c - tag.corners_px.mean(axis=0)))) < 0.5 * tag.side_px


def _order(t: TagObservation) -> tuple[int, float, float]:
    return (t.id, float(t.center_px[1]), float(t.center_px[0]))


class WindowedDetector:
    """Tag detection for consecutive frames of one camera: windows round known tags, a coarse scan and a
    fine sweep.

    min_tag_px: the smallest expected tag's black-square side, px: it picks the fine decimation as
    `detect_tags` does (`decimate` overrides that) and sizes the windows (MARGIN_SIDES). fine_every: the
    sweep's length, frames (1: every frame is a full scan, as `detect_tags`). coarse: run the coarse
    full-frame scan every COARSE_EVERY frames (without it a tag bigger than the sweep's overlap, `sweep_tag_px`, that
    straddles a cell's edge may never be found). changes: scan at once, at the fine decimation, round every
    tile that changed since the last frame (and the whole frame when most of it did). Not thread-safe: one loop
    feeds it frames in order. A new detector (or `reset`) starts with a full scan.
    """

    def __init__(
        self,
        *,
        min_tag_px: float | None = None,
        decimate: int | None = None,
        fine_every: int = FINE_EVERY,
        coarse: bool = True,
        changes: bool = True,
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
        self.changes = bool(changes)
        self.margin_sides = float(margin_sides)
        self.min_tag_px = None if min_tag_px is None or not math.isfinite(min_tag_px) else float(min_tag_px)
        self.context_px = max(float(context_px), float(TILE_PX * self.decimate))
        self.last_scan = ""
        """What the last frame ran: "full" (a fine scan of the whole frame) or "windows" (windows and a cell)."""
        self.windows: tuple[Window, ...] = ()
        """The windows the last frame scanned at the fine decimation, after merging (empty after a full scan)."""
        self.cell: Window | None = None
        """The last frame's sweep cell (None after a full scan), scanned with its backstop scans, now or later."""
        self.scanned_px = 0
        """Pixels the last frame's scans fed the library, each counted in its scan's decimated image (its backstop
        scans counted whether they are made now or later)."""
        self.kept: tuple[int, ...] = ()
        """Ids of the tags the last frame kept as they were measured before (their picture had not changed)."""
        self.cells: tuple[Window, ...] = ()
        """The sweep's cells for the current frame size, in the order frame numbers take them."""
        self._cells_by_size: dict[tuple[int, int], tuple[Window, ...]] = {}
        self.reset()

    def reset(self) -> None:
        """Forget the tags seen: the next frame gets a full scan."""
        self._last: tuple[TagObservation, ...] = ()
        self._missing: dict[int, tuple[TagObservation, int]] = {}
        """Tags seen recently but not last frame (covered, flickering at the detector's limit): id -> (where
        last seen, frames since)."""
        self._refs: tuple[Reference | None, ...] = ()
        """For each of `_last`: its tiles in the frame it was measured in (vision/stillness.py; None: look again)."""
        self._next_cell = -1
        self._size: tuple[int, int] | None = None
        self._t: float | None = None
        self._tiles: np.ndarray | None = None
        """The last frame's `tile_means` (None: the next frame gets a full scan)."""
        self._behind: Sweep | None = None
        """The last frame's backstop scans, looked at this frame (None: it had a full scan)."""

    def checkpoint(self) -> WindowedDetector:
        """A copy of where this detector stands, without the last frame's tiles and backstop scans (pixels: a
        checkpoint stays small); `prime` with that frame gives them back."""
        tiles, behind, self._tiles, self._behind = self._tiles, self._behind, None, None
        try:
            return copy.deepcopy(self)
        finally:
            self._tiles, self._behind = tiles, behind

    def prime(self, gray: np.ndarray, index: int | None = None, sweep: Sweep | None = None) -> None:
        """Take `gray`, frame `index` (None: the frames seen since the last full scan), as the last frame (after
        carrying on from a `checkpoint` taken after it); `sweep`: that frame's backstop scans, if made already."""
        if self.changes and self._size is not None:
            self._tiles = self.tile_means(self.tile_grid(gray))
        if self._size is not None and self.last_scan == "windows":
            behind = self.sweep_for(gray, self._next_cell if index is None else index)
            self._behind = sweep if sweep is not None and sweep.key == behind.key else behind

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
    def cells_for(self, width: int, height: int) -> tuple[Window, ...]:
        """The sweep's cells for a `width` x `height` frame, in the order frame numbers take them."""
        key = (int(width), int(height))
        cells = self._cells_by_size.get(key)
        if cells is None:
            reach = OUTER_SPAN * self.sweep_tag_px(width, height) / 2.0 + self.context_px + 2.0
            cells = tuple(sweep_cells(width, height, self.fine_every, reach, TILE_PX * self.decimate))
            self._cells_by_size[key] = cells
        return cells

    def sweep_for(self, gray: np.ndarray, index: int) -> Sweep:
        """Frame `index`'s backstop scans (`Sweep`), not made yet: its coarse scan if its number takes one, and its
        sweep cell (`cells_for(...)[index % n]`)."""
        height, width = gray.shape
        cells = self.cells_for(width, height)
        key = (width, height, self.decimate, self._coarse_for(width, height, int(index)), cells[int(index) % len(cells)])
        return Sweep(gray, key, self.context_px)

    def scan_ahead(self, gray: np.ndarray, index: int, detector: TagDetector | None = None) -> AheadScan:
        """The part of frame `index`'s work that depends on nothing but the frame: its tiles and, for a sweep
        (fine_every > 1), its backstop scans, to be made (`Sweep.run`, with a detector of the caller's) now or
        later; for fine_every 1 the full scan, made now with `detector`. Thread-safe: the read-ahead runs it on
        other cores; `detect` takes it as `ahead` or makes it itself."""
        check_gray(gray)
        height, width = gray.shape
        if self.fine_every == 1:
            full = detect_tags(gray, decimate=self.decimate, detector=detector)
            return AheadScan((width, height, self.decimate, 0, None), full=full)
        sweep = self.sweep_for(gray, index)
        grid = self.tile_grid(gray)
        return AheadScan(sweep.key, self.tile_means(grid), grid, sweep=sweep)

    def _coarse_for(self, width: int, height: int, index: int) -> int:
        """The coarse scan's decimation for frame `index` (0: this frame has none)."""
        if not self.coarse or index % COARSE_EVERY:
            return 0
        return coarse_decimation(width, height, self.decimate)

    def tile_grid(self, gray: np.ndarray) -> np.ndarray:
        """The mean grey of each threshold tile (TILE_PX x decimation px square; partial tiles at the right and
        bottom edges dropped), float32 (rows, columns)."""
        return tile_grid(gray, TILE_PX * self.decimate)

    @staticmethod
    def tile_means(grid: np.ndarray) -> np.ndarray:
        """A `tile_grid` less the mean of the CHANGE_AREA_TILES square round each tile, float32."""
        if grid.size == 0:  # a frame smaller than a tile: nothing to compare
            return grid
        k = CHANGE_AREA_TILES
        return np.asarray(grid - cv2.blur(grid, (k, k), borderType=cv2.BORDER_REFLECT), np.float32)

    def changed_windows(self, before: np.ndarray, now: np.ndarray, width: int, height: int) -> list[Window] | None:
        """Windows round every tile whose mean grey moved more than CHANGE_GREY from `before` to `now` (each
        grown by the outer box of the smallest expected tag, plus the context: a tag put down lies whole in
        one's trusted part, as does a small tag any part of which changed, say uncovered by a hand; a bigger
        tag partly uncovered is left to the coarse scan and the sweep), merged; None when they would cover
        more than CHANGE_FULL_FRACTION of the frame (a full scan is due)."""
        if before.shape != now.shape:
            return None
        if now.size == 0:  # a frame smaller than a tile
            return []
        changed = (cv2.absdiff(before, now) > CHANGE_GREY).astype(np.uint8)
        if not changed.any():
            return []
        a = TILE_PX * self.decimate
        small = self.min_tag_px if self.min_tag_px is not None else DECIMATED_TAG_PX * self.decimate
        grow = math.ceil((OUTER_SPAN * small + self.context_px + 2.0) / a)
        count, _, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
        windows = [
            Window(max(0, (x - grow) * a), max(0, (y - grow) * a), min(width, (x + w + grow) * a),
                   min(height, (y + h + grow) * a))
            for x, y, w, h, _ in (stats[k] for k in range(1, count))
        ]
        windows = merge_windows(windows)
        if sum(w.area for w in windows) > CHANGE_FULL_FRACTION * width * height:
            return None
        return windows

    def detect(self, gray: np.ndarray, index: int | None = None, at_s: float | None = None,
               ahead: AheadScan | None = None) -> tuple[TagObservation, ...]:
        """Every tag in this frame (as `detect_tags` would give, within the rules above), sorted by id.

        index: the frame's number in its recording (the sweep's cell is `index % n`, so a live run and a
        replay of its recording scan the same cells); None: the frames this detector saw since its last full
        scan. at_s: the frame's time, s; a frame more than `GAP_S` after the last gets a full scan. ahead: this
        frame's `scan_ahead`, made beforehand (on another core); used if it was made for this frame size,
        decimation and cell (or full scan)."""
        check_gray(gray)
        height, width = gray.shape
        if self._size is not None and self._size != (width, height):
            self.reset()  # where tags were in a frame of another size says nothing of where they are in this one
        gap = at_s is not None and self._t is not None and not 0.0 <= float(at_s) - self._t <= GAP_S
        self._t = None if at_s is None else float(at_s)
        if self._size != (width, height) or self.fine_every == 1 or gap:
            return self._full(gray, ahead)
        cells = self.cells_for(width, height)
        if len(cells) == 1:
            return self._full(gray, ahead)
        if index is None:
            self._next_cell += 1
            index = self._next_cell
        cell = cells[int(index) % len(cells)]
        d = self._coarse_for(width, height, int(index))
        if ahead is None or ahead.key != (width, height, self.decimate, d, cell) or ahead.grid is None \
                or ahead.sweep is None:
            ahead = self.scan_ahead(gray, int(index))
        assert ahead.tiles is not None and ahead.grid is not None and ahead.sweep is not None
        grid = ahead.grid
        changed: list[Window] | None = []
        if self.changes:
            changed = self.changed_windows(self._tiles, ahead.tiles, width, height) if self._tiles is not None else None
            if changed is None:
                return self._full(gray, ahead)
            self._tiles = ahead.tiles
        behind, self._behind = self._behind, ahead.sweep
        self.scanned_px = ahead.sweep.scanned_px  # this frame's backstop scans, made now or later
        # tags that stand where they were measured (vision/stillness.py) keep that measurement; the rest are
        # looked for in a tight window round where they were
        kept = [i for i, is_still in enumerate(still_all(grid, self._refs)) if is_still]
        kept_tags = [self._last[i] for i in kept]
        kept_set = set(kept)
        look = [t for i, t in enumerate(self._last) if i not in kept_set]
        small = [self.window_round(t.corners_px, width, height, still=True) for t in look]
        if behind is not None and behind.key[:3] == (width, height, self.decimate):
            # what the last frame's backstop scans found that it did not know: a window with room for a slide
            coarse, fine = behind.run()
            for found in (*coarse, *fine):
                if not any(_same_tag(found, t) for t in self._last):
                    small.append(self.window_round(found.corners_px, width, height))
        windows = merge_windows(small + (changed or []))
        found_tags = self._scan(gray, windows)
        scanned = list(windows)
        # Second look, with room for a slide, for the tags that moved out of their tight windows and for
        # those missing lately; then a reach window for each tag seen last frame still lost.
        here = {f.id for f in found_tags} | {t.id for t in kept_tags}
        moved = [t for t in look if t.id not in here] + [t for t, _ in self._missing.values()]
        found_tags = self._look_again(gray, found_tags, moved, scanned, self.margin_sides)
        seen = Counter(f.id for f in found_tags) + Counter(t.id for t in kept_tags)
        expected = Counter(t.id for t in self._last)
        lost = [t for t in look if not self._near_edge(t, width, height) and seen[t.id] < expected[t.id]]
        found_tags = self._look_again(gray, found_tags, lost, scanned, REACH_SIDES)
        fresh = observations(gray, found_tags)
        # a kept tag found afresh (its window, the cell or a change round it scanned it) takes the new measurement
        kept = [i for i in kept if not any(_same_tag(f, self._last[i]) for f in fresh)]
        both = [*fresh, *(self._last[i] for i in kept)]
        refs = [self._reference(gray, grid, t) for t in fresh] + [self._refs[i] for i in kept]
        order = sorted(range(len(both)), key=lambda k: _order(both[k]))
        tags = tuple(both[k] for k in order)
        self.kept = tuple(sorted(self._last[i].id for i in kept))
        self._remember(tags, [refs[k] for k in order])
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

    def _full(self, gray: np.ndarray, ahead: AheadScan | None = None) -> tuple[TagObservation, ...]:
        height, width = gray.shape
        if ahead is not None and ahead.full is not None and ahead.key[:3] == (width, height, self.decimate):
            tags = ahead.full
        else:
            tags = detect_tags(gray, decimate=self.decimate)
        if self.fine_every == 1:
            self._tiles = None
            self._remember(tags, [None] * len(tags))
        else:  # the tiles made ahead, when they were made of this frame size and decimation
            if (ahead is not None and ahead.grid is not None and ahead.tiles is not None
                    and ahead.key[:3] == (width, height, self.decimate)):
                grid, tiles = ahead.grid, ahead.tiles
            else:
                grid = self.tile_grid(gray)
                tiles = self.tile_means(grid)
            self._tiles = tiles if self.changes else None
            self._remember(tags, [self._reference(gray, grid, t) for t in tags])
        self._size = (width, height)
        self.cells = self.cells_for(width, height)
        self._next_cell = -1
        self.last_scan = "full"
        self._behind = None  # the full scan found what any backstop would
        self.kept = ()
        self.windows = ()
        self.cell = None
        self.scanned_px = (width // self.decimate) * (height // self.decimate)
        return tags

    def _reference(self, gray: np.ndarray, grid: np.ndarray, tag: TagObservation) -> Reference | None:
        """What tells, in later frames, whether `tag` still stands where it was measured in `gray` (whose
        `tile_grid` is `grid`)."""
        return reference(gray, grid, tag.corners_px, outer_box(tag.corners_px), TILE_PX * self.decimate)

    def _remember(self, tags: tuple[TagObservation, ...], refs: Sequence[Reference | None]) -> None:
        """Keep this frame's tags (and the tiles round each when it was measured), and for `fine_every` frames
        where each tag not seen now was last seen."""
        seen = {t.id for t in tags}
        missing = {i: (t, age + 1) for i, (t, age) in self._missing.items() if i not in seen and age + 1 < self.fine_every}
        for t in self._last:
            if t.id not in seen:
                missing[t.id] = (t, 0)
        self._missing = missing
        self._last = tags
        self._refs = tuple(refs)
