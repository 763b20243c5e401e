"""The live measurements drawn onto the camera picture with OpenCV, for tools that take a video stream
(`/api/live/overlay.mjpg`): the frame message's pixel shapes (see `session.frame_message`), filtered by
layer, in the colours of the web page's overlay (webui/static/overlay.js has the same layer table)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import cv2
import numpy as np

LAYERS = ("bases", "rings", "lines", "zones", "verdicts", "labels", "terrain", "tags")
"""Every layer a viewer may switch on or off."""
DEFAULT_LAYERS = ("bases", "rings", "lines", "verdicts", "labels")
"""What a stream shows unless told otherwise: the units, their rings, lines and verdicts, named (no tag outlines,
terrain, sections or stockpiles: the camera shows those, and a stream should stay readable)."""

_LAYER_OF_STYLE = {
    "anchor": "tags", "tag": "tags", "base": "bases",
    "engagement": "rings", "range-band": "rings", "move-allowance": "rings",
    "drop-zone": "zones", "section": "zones", "hex-highlight": "zones", "hex-reachable": "zones", "score": "zones",
    "terrain-blocking": "terrain", "wall": "terrain",
    "los-clear": "lines", "los-partial": "lines", "los-blocked": "lines", "attack-line": "lines",
    "move-trail": "lines", "illegal": "verdicts", "too-close": "verdicts",
}

_RGB = {
    "tag": "#39ff14", "anchor": "#00e5ff", "engagement": "#ff5050", "range-band": "#5aa9ff", "los-clear": "#2ecc71",
    "los-partial": "#f1c40f", "los-blocked": "#e74c3c", "terrain-blocking": "#e74c3c", "drop-zone": "#a57cff",
    "section": "#bbbbbb", "move-allowance": "#00d2d3", "move-trail": "#ffffff", "illegal": "#ff2d2d",
    "too-close": "#ff9f1a", "hex-highlight": "#ffd32a", "hex-reachable": "#0be881", "attack-line": "#ff3fa4",
    "wall": "#8d5524", "score": "#ffd700",
}
_FILLED = {"engagement": 0.10, "range-band": 0.07, "terrain-blocking": 0.30, "drop-zone": 0.10,
           "move-allowance": 0.08, "illegal": 0.25, "too-close": 0.25, "hex-highlight": 0.15, "hex-reachable": 0.12}


def layer_of(shape: Mapping[str, Any]) -> str:
    """The layer a pixel shape belongs to."""
    if shape.get("k") == "tag":
        return "tags"
    if shape.get("k") == "badge":
        return "verdicts"
    return _LAYER_OF_STYLE.get(str(shape.get("s", "")), "lines")


def parse_layers(text: str | None) -> tuple[str, ...]:
    """"bases,rings" -> ("bases", "rings"); None or "" -> DEFAULT_LAYERS. Raises ValueError naming an unknown
    layer."""
    if not text:
        return DEFAULT_LAYERS
    chosen = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in chosen if name not in LAYERS]
    if unknown:
        raise ValueError(f"There is no overlay layer called {unknown[0]!r}; choose among {', '.join(LAYERS)}.")
    return chosen


def _bgr(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    if len(h) != 6:
        return (200, 200, 200)
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return (b, g, r)


def _pts(points: Sequence[Sequence[float]]) -> np.ndarray:
    return np.round(np.asarray(points, dtype=np.float64).reshape(-1, 2) * 4).astype(np.int32)


def _label(image: np.ndarray, text: str, at: Sequence[float], colour: tuple[int, int, int], scale: float) -> None:
    """Words on a dark box centred above `at` (pixels)."""
    if not text:
        return
    font, size, thick = cv2.FONT_HERSHEY_SIMPLEX, 0.5 * scale, max(1, int(round(1.4 * scale)))
    (w, h), base = cv2.getTextSize(text, font, size, thick)
    x, y = int(at[0] - w / 2), int(at[1])
    x0, y0, x1, y1 = x - 4, y - h - 4, x + w + 4, y + base + 2
    H, W = image.shape[:2]
    if x1 < 0 or y1 < 0 or x0 >= W or y0 >= H:
        return
    sub = image[max(0, y0):min(H, y1), max(0, x0):min(W, x1)]
    sub[:] = (sub * 0.35).astype(image.dtype)
    cv2.putText(image, text, (x, y), font, size, colour, thick, cv2.LINE_AA)


def _draw_order(s: Mapping[str, Any]) -> int:
    """Areas first, then lines, then bases, then tags, then words on top (as the web page draws them)."""
    kind = s.get("k")
    if kind in ("label", "badge"):
        return 4
    if kind == "tag":
        return 3
    if s.get("s") == "base":
        return 2
    return 0 if kind == "ring" or (kind == "poly" and s.get("c")) else 1


def draw_shapes(image: np.ndarray, shapes: Sequence[Mapping[str, Any]],
                layers: Collection[str] = DEFAULT_LAYERS, scale: float = 1.0) -> int:
    """Draw `shapes` (a frame message's "image_shapes") onto `image` (BGR, changed in place) and return how
    many were drawn. `scale` multiplies line widths and text (1.0 at 1280 px wide grows with the frame)."""
    k = max(1.0, image.shape[1] / 1280) * scale
    words = "labels" in layers
    chosen = sorted((s for s in shapes if layer_of(s) in layers), key=_draw_order)
    fills = image.copy()
    filled_any = False
    for s in chosen:
        style = str(s.get("s", ""))
        alpha = _FILLED.get(style)
        kind = s.get("k")
        if alpha and kind in ("poly", "ring") and (s.get("c") or kind == "ring") and s.get("p"):
            cv2.fillPoly(fills, [_pts(s["p"])], _bgr(_RGB.get(style, "#dddddd")), cv2.LINE_AA, shift=2)
            filled_any = True
        elif style == "base" and s.get("p"):
            cv2.fillPoly(fills, [_pts(s["p"])], _bgr(str(s.get("col") or "#a0a0a0")), cv2.LINE_AA, shift=2)
            filled_any = True
    if filled_any:
        cv2.addWeighted(fills, 0.25, image, 0.75, 0, dst=image)
    n = 0
    for s in chosen:
        style = str(s.get("s", ""))
        kind = s.get("k")
        colour = _bgr(str(s.get("col")) if style == "base" and s.get("col") else _RGB.get(style, "#dddddd"))
        width = max(1, int(round((3 if style in ("base", "illegal", "too-close", "attack-line") else 2) * k)))
        if kind in ("poly", "tag") and s.get("p"):
            cv2.polylines(image, [_pts(s["p"])], bool(s.get("c")) or kind == "tag", colour, width, cv2.LINE_AA, shift=2)
        elif kind == "ring" and s.get("p"):
            cv2.polylines(image, [_pts(s["p"])], True, colour, width, cv2.LINE_AA, shift=2)
            if s.get("q"):
                cv2.polylines(image, [_pts(s["q"])], True, colour, width, cv2.LINE_AA, shift=2)
        elif kind == "badge" and s.get("a"):
            _label(image, str(s.get("l", "")), s["a"], colour, 1.2 * k)
            n += 1
            continue
        elif kind != "label":
            continue
        if words and s.get("l") and s.get("a"):
            _label(image, str(s["l"]), s["a"], (255, 255, 255) if style == "base" else colour, k)
        n += 1
    return n


def overlay_jpeg(jpeg: bytes | None, shapes: Sequence[Mapping[str, Any]], size: Sequence[int],
                 layers: Collection[str], camera: bool, scale: float = 1.0, quality: int = 80) -> bytes:
    """One stream frame: the camera picture (or, without `camera`, a pure green #00ff00 for a chroma key)
    with the shapes drawn, as JPEG bytes."""
    image = None
    if camera and jpeg is not None:
        image = cv2.imdecode(np.frombuffer(jpeg, dtype=np.uint8), cv2.IMREAD_COLOR)
        if image is not None and len(size) == 2 and (image.shape[1], image.shape[0]) != (int(size[0]), int(size[1])):
            image = cv2.resize(image, (int(size[0]), int(size[1])), interpolation=cv2.INTER_LINEAR)  # the sent picture
    if image is None:
        w, h = (int(size[0]), int(size[1])) if len(size) == 2 else (1280, 720)
        image = np.zeros((h, w, 3), dtype=np.uint8)
        image[:] = (0, 255, 0)
    draw_shapes(image, shapes, layers, scale)
    ok, out = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("The overlay frame could not be encoded as JPEG.")
    return out.tobytes()
