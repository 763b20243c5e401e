// Drawing the measurements: on the camera image (pixel shapes sent by the server) and on the top-down board
// (table inches). Every draw function returns how many shapes it drew; the pages put that count on the
// canvas as data-shapes so that a test (or a curious player) can read it.

export const STYLE = {
  "tag": { stroke: "#39ff14", width: 2 },
  "anchor": { stroke: "#00e5ff", width: 3 },
  "base": { width: 3 },
  "engagement": { stroke: "#ff5050", width: 2, fill: "rgba(255,80,80,0.10)" },
  "range-band": { stroke: "#5aa9ff", width: 2, fill: "rgba(90,169,255,0.07)", dash: [8, 6] },
  "los-clear": { stroke: "#2ecc71", width: 3 },
  "los-partial": { stroke: "#f1c40f", width: 3, dash: [10, 5] },
  "los-blocked": { stroke: "#e74c3c", width: 3, dash: [4, 4] },
  "terrain-blocking": { stroke: "#e74c3c", width: 3, fill: "rgba(231,76,60,0.30)" },
  "drop-zone": { stroke: "#a57cff", width: 2, fill: "rgba(165,124,255,0.10)" },
  "section": { stroke: "rgba(255,255,255,0.5)", width: 1, dash: [6, 6] },
  "move-allowance": { stroke: "#00d2d3", width: 2, fill: "rgba(0,210,211,0.08)" },
  "move-trail": { stroke: "#ffffff", width: 2, dash: [6, 4] },
  "illegal": { stroke: "#ff2d2d", width: 3, fill: "rgba(255,45,45,0.25)" },
  "too-close": { stroke: "#ff9f1a", width: 3, fill: "rgba(255,159,26,0.25)" },
  "hex-highlight": { stroke: "#ffd32a", width: 2, fill: "rgba(255,211,42,0.15)" },
  "hex-reachable": { stroke: "#0be881", width: 1, fill: "rgba(11,232,129,0.12)" },
  "attack-line": { stroke: "#ff3fa4", width: 3 },
  "wall": { stroke: "#8d5524", width: 5 },
  "score": { stroke: "#ffd700", width: 2 },
};
const FALLBACK = { stroke: "#dddddd", width: 2 };

function styleOf(name) { return STYLE[name] || FALLBACK; }

function path(ctx, pts, closed) {
  ctx.beginPath();
  pts.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
  if (closed) ctx.closePath();
}

function label(ctx, text, at, colour, px, priority = 1) {
  if (!text || !at) return;
  // While a de-cluttering pass is open (see placeLabels), words are collected and placed afterwards.
  if (ctx.pendingLabels) { ctx.pendingLabels.push({ text, at, colour, px, priority }); return; }
  drawLabel(ctx, text, at, colour, px);
}

// A word's width in a font, measured once: the same names and lengths are drawn every frame, and measuring is
// a good part of a frame's drawing.
const WIDTHS = new Map();
const WIDTHS_KEPT = 2000;
function textWidth(ctx, font, text) {
  const key = `${font}|${text}`;
  let w = WIDTHS.get(key);
  if (w === undefined) {
    ctx.font = font;
    w = ctx.measureText(text).width;
    if (WIDTHS.size >= WIDTHS_KEPT) WIDTHS.clear();
    WIDTHS.set(key, w);
  }
  return w;
}

function drawLabel(ctx, text, at, colour, px) {
  const font = `600 ${px}px system-ui, sans-serif`;
  const w = textWidth(ctx, font, text);
  ctx.font = font;
  ctx.fillStyle = "rgba(0,0,0,0.65)";
  ctx.fillRect(at[0] - w / 2 - 4, at[1] - px - 2, w + 8, px + 6);
  ctx.fillStyle = colour || "#fff";
  ctx.textAlign = "center";
  ctx.fillText(text, at[0], at[1]);
}

// Place the collected words so that none covers another: the most important first (unit names, then
// measured lengths, then zone names), each moved up or down by whole label heights to the nearest free place
// with a thin leader line back to its point; a word with no free place nearby is left out (the legend and
// the side panel still say it). Returns how many were left out.
function placeLabels(ctx) {
  const pending = ctx.pendingLabels || [];
  ctx.pendingLabels = null;
  pending.sort((a, b) => b.priority - a.priority);
  const boxes = [];
  let dropped = 0;
  const free = (r) => boxes.every((b) => r.x1 <= b.x0 || r.x0 >= b.x1 || r.y1 <= b.y0 || r.y0 >= b.y1);
  const said = [];
  for (const l of pending) {
    if (said.some((p) => p.text === l.text && Math.hypot(p.at[0] - l.at[0], p.at[1] - l.at[1]) < 60)) continue;  // said once
    said.push(l);
    const w = textWidth(ctx, `${l.badge ? 700 : 600} ${l.px}px system-ui, sans-serif`, l.text) + (l.badge ? 16 : 8);
    const h = l.px + (l.badge ? 8 : 6);
    const top = l.badge ? h / 2 : l.px + 2;  // from the anchor point up to the box's top edge
    let spot = null;
    for (const step of [0, -1, 1, -2, 2, -3]) {
      const y = l.at[1] + step * (h + 2);
      const r = { x0: l.at[0] - w / 2, x1: l.at[0] + w / 2, y0: y - top, y1: y - top + h };
      if (free(r)) { spot = { y, r, step }; break; }
    }
    if (!spot) { dropped++; continue; }
    boxes.push({ ...spot.r, text: l.text });
    if (spot.step !== 0) {
      ctx.setLineDash([]);
      ctx.strokeStyle = "rgba(255,255,255,0.55)";
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(l.at[0], l.at[1]);
      ctx.lineTo(l.at[0], spot.step < 0 ? spot.r.y1 : spot.r.y0);
      ctx.stroke();
    }
    (l.badge ? drawBadge : drawLabel)(ctx, l.text, [l.at[0], spot.y], l.colour, l.px);
  }
  if (ctx.canvas) ctx.canvas.labelBoxes = boxes;  // where the words went (a test checks that none overlap)
  return dropped;
}

function badge(ctx, text, at, colour, px) {
  if (ctx.pendingLabels) { ctx.pendingLabels.push({ text, at, colour, px, priority: 5, badge: true }); return; }
  drawBadge(ctx, text, at, colour, px);
}

function drawBadge(ctx, text, at, colour, px) {
  const font = `700 ${px}px system-ui, sans-serif`;
  const w = textWidth(ctx, font, text);
  ctx.font = font;
  ctx.fillStyle = colour;
  const h = px + 8;
  ctx.beginPath();
  ctx.roundRect(at[0] - w / 2 - 8, at[1] - h / 2, w + 16, h, h / 2);
  ctx.fill();
  ctx.fillStyle = "#000";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(text, at[0], at[1] + 1);
  ctx.textBaseline = "alphabetic";
}

// One pixel shape from the server (see session/frame_message.py for the keys). `k` scales line widths.
function drawPixelShape(ctx, s, k, selected, owners) {
  ctx.globalAlpha = s.faint ? 0.25 : 1;  // another unit's ring while one is in focus
  try { return drawPixel(ctx, s, k, selected, owners); } finally { ctx.globalAlpha = 1; }
}

function drawPixel(ctx, s, k, selected, owners = {}) {
  const st = ownedStyle(s.s, s.o, owners);
  ctx.setLineDash((st.dash || []).map((d) => d * k));
  ctx.lineWidth = (st.width || 2) * k;
  const stroke = s.s === "base" ? s.col : st.stroke;
  ctx.strokeStyle = stroke;
  const fontPx = Math.round(14 * k);
  if (s.k === "tag") {
    path(ctx, s.p, true);
    ctx.stroke();
    // corner 3 (top-left of the upright bitmap) marked, so the tag's turn can be read
    ctx.fillStyle = stroke;
    ctx.fillRect(s.p[3][0] - 2 * k, s.p[3][1] - 2 * k, 4 * k, 4 * k);
    if (s.s === "anchor") label(ctx, `anchor ${s.id}`, [s.p[2][0], s.p[2][1] - 4 * k], st.stroke, fontPx);
  } else if (s.k === "poly") {
    path(ctx, s.p, s.c);
    if (s.c && (st.fill || s.s === "base")) {
      ctx.fillStyle = s.s === "base" ? hexAlpha(s.col, selected === s.u ? 0.35 : 0.18) : st.fill;
      ctx.fill();
    }
    if (s.s === "base" && selected === s.u) ctx.lineWidth = 6 * k;
    ctx.stroke();
    if (s.s === "base") label(ctx, s.l, s.a, "#fff", fontPx, 3);
    else if (s.l) label(ctx, s.l, s.a, st.stroke, fontPx, LABEL_PRIORITY[layerOf(s)] || 1);
  } else if (s.k === "ring") {
    path(ctx, s.p, true);
    if (s.q && s.q.length) {
      const inner = [...s.q].reverse();
      inner.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
      ctx.closePath();
    }
    if (st.fill) { ctx.fillStyle = st.fill; ctx.fill("evenodd"); }
    path(ctx, s.p, true); ctx.stroke();
    if (s.q && s.q.length) { path(ctx, s.q, true); ctx.stroke(); }
    if (s.l) label(ctx, s.l, s.a, st.stroke, fontPx, LABEL_PRIORITY[layerOf(s)] || 1);
  } else if (s.k === "label") {
    label(ctx, s.l, s.a, st.stroke, fontPx, LABEL_PRIORITY[layerOf(s)] || 1);
  } else if (s.k === "badge") {
    badge(ctx, s.l, s.a, st.stroke, fontPx);
  } else {
    return 0;
  }
  ctx.setLineDash([]);
  return 1;
}

export function hexAlpha(hex, a) {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex || "");
  if (!m) return `rgba(160,160,160,${a})`;
  return `rgba(${parseInt(m[1], 16)},${parseInt(m[2], 16)},${parseInt(m[3], 16)},${a})`;
}

// Which layer a pixel shape belongs to, so that a page (or a stream overlay) can switch layers on and off.
// The same table is in session/overlay_image.py for the server-drawn stream.
const LAYER_OF_STYLE = {
  "anchor": "tags", "tag": "tags", "base": "bases",
  "engagement": "rings", "range-band": "rings", "move-allowance": "rings",
  "drop-zone": "zones", "section": "zones", "hex-highlight": "zones", "hex-reachable": "zones", "score": "zones",
  "terrain-blocking": "terrain", "wall": "terrain",
  "los-clear": "lines", "los-partial": "lines", "los-blocked": "lines", "attack-line": "lines", "move-trail": "lines",
  "illegal": "verdicts", "too-close": "verdicts",
};
const LABEL_PRIORITY = { verdicts: 4, bases: 3, lines: 2, rings: 1, terrain: 1, zones: 0, tags: 0 };
export const LAYERS = ["bases", "rings", "lines", "zones", "verdicts", "labels", "terrain", "tags"];
export function layerOf(s) {
  if (s.k === "tag") return "tags";
  if (s.k === "badge") return "verdicts";
  return LAYER_OF_STYLE[s.s] || "lines";
}

// Size a canvas's pixels to what the screen shows of it (its CSS width x devicePixelRatio), at most
// width x height (the picture's or the layout's own), keeping that shape; returns the canvas's [w, h].
function fitCanvas(canvas, width, height) {
  const shown = canvas.clientWidth * (window.devicePixelRatio || 1);
  const fit = shown > 0 ? Math.min(1, shown / width) : 1;
  const w = Math.max(1, Math.round(width * fit)), h = Math.max(1, Math.round(height * fit));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  return [w, h];
}

// The camera canvas: the frame's picture, then every pixel shape. Returns the number of shapes drawn.
// opts: transparent (no picture: for a stream overlay), layers (a Set: only those layers; "labels" off drops
// the shapes' words), scale (line widths and text larger, e.g. 1.6 to read across a room), grid (a hex board's
// grid to draw under the shapes; its counts go to data-grid-cells, -edges and -units).
// The canvas holds only the pixels the screen shows (its CSS width x devicePixelRatio, at most the image's):
// a 4K frame drawn at its own size would cost the browser 8 million pixels a frame to paint and then shrink.
// Shapes come in image px and are drawn through a scale (see imagePoint for a click's way back).
export function drawCamera(canvas, bitmap, msg, extraShapes = [], opts = {}) {
  const ctx = canvas.getContext("2d");
  const size = (msg && msg.image_size) || (bitmap ? [bitmap.width, bitmap.height] : [canvas.width, canvas.height]);
  const [w, h] = fitCanvas(canvas, size[0], size[1]);
  canvas.dataset.imageWidth = String(size[0]);
  canvas.dataset.imageHeight = String(size[1]);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  if (opts.transparent) ctx.clearRect(0, 0, w, h);
  else if (bitmap) ctx.drawImage(bitmap, 0, 0, w, h);
  else { ctx.fillStyle = "#111"; ctx.fillRect(0, 0, w, h); }
  ctx.setTransform(w / size[0], 0, 0, h / size[1], 0, 0);
  const k = Math.max(1, size[0] / 1280) * (opts.scale || 1);
  let n = 0;
  // the hex grid under every shape (opts.grid: session/board_grid.py's, or null for none)
  const grid = drawGridCamera(ctx, opts.grid || null, msg ? msg.units : [], k);
  noteGrid(canvas, grid);
  const shapes = opts.shapes || (msg && msg.image_shapes) || [];
  const layers = opts.layers || null;
  const keep = (s) => !layers || layers.has(layerOf(s));
  const words = !layers || layers.has("labels");
  // Areas first, then lines, then bases and tags, then labels and badges on top.
  const order = (s) => (s.k === "badge" ? 4 : s.k === "tag" ? 3 : s.s === "base" ? 2 : s.k === "ring" || (s.k === "poly" && s.c) ? 0 : 1);
  const all = [...shapes, ...extraShapes].filter(keep).map((s) => (words || s.k === "badge" ? s : { ...s, l: "" }))
    .sort((a, b) => order(a) - order(b));
  ctx.pendingLabels = [];
  const owners = (msg && msg.owners) || {};
  for (const s of all) n += drawPixelShape(ctx, s, k, msg ? msg.selected : null, owners);
  canvas.dataset.hiddenLabels = String(placeLabels(ctx));
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  canvas.dataset.shapes = String(n);
  canvas.dataset.frame = String(msg ? msg.frame_index : -1);
  return n;
}

// The image px (of the frame drawn last) under a page point (clientX, clientY) on a camera canvas.
export function imagePoint(canvas, clientX, clientY) {
  const r = canvas.getBoundingClientRect();
  const w = Number(canvas.dataset.imageWidth) || canvas.width, h = Number(canvas.dataset.imageHeight) || canvas.height;
  return [((clientX - r.left) * w) / r.width, ((clientY - r.top) * h) / r.height];
}

// ---- the hex grid (session/board_grid.py) --------------------------------------------------------------
// A hex game's board, fetched once for each change of game, board or calibration: every cell outlined and
// filled by its terrain (a raised cell darker by its level, the level written on it), walls thick on their
// edges, and each unit's cell outlined in its owner's colour. On the camera picture the same cells, projected by
// the server, are translucent so that the figures stay visible.

export const GRID_TERRAIN = {
  "sea": { fill: "#2f6db3", words: "sea" },
  "land": { fill: "#8a8a4e", words: "land" },
  "mountain": { fill: "#8d8d92", words: "mountain" },
  "water": { fill: "#8fd0f0", words: "water" },
};
export const GRID_LEVEL = { fill: "#5a5a32", words: "hill or height (its level written)" };
export const GRID_WALL = { stroke: "#3b2412", words: "wall" };
const GRID_CAMERA_ALPHA = 0.3;
const CELL_NAMES_FROM_PX = 22;
// The board writes each cell's name ("-5,0") once a cell is this many screen px centre to corner (smaller, the
// words could not be read; the board's tooltip still names the cell under the pointer).
const LEVEL_DARKER = 0.14;
// Each level above the table makes a cell's colour this much darker (at most 4 levels' worth).

function shade(hex, level) {
  const k = 1 - LEVEL_DARKER * Math.min(4, Math.max(0, level || 0));
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return hex;
  const c = [m[1], m[2], m[3]].map((v) => Math.round(parseInt(v, 16) * k));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

export function gridFill(cell) {
  return shade((GRID_TERRAIN[cell.terrain] || GRID_TERRAIN.land).fill, cell.elevation);
}

// The grid's cells by their centres (inches and image px), worked out once for each grid fetched.
function gridIndex(grid) {
  if (grid._index) return grid._index;
  const mean = (pts) => pts.reduce((a, p) => [a[0] + p[0] / pts.length, a[1] + p[1] / pts.length], [0, 0]);
  const size = (grid.layout && grid.layout.size_in) || 1;
  grid._index = {
    size,
    centres: grid.cells.map((c) => mean(c.in)),
    pxCentres: grid.cells.map((c) => (c.px && c.px.length ? mean(c.px) : null)),
  };
  return grid._index;
}

// The index of the cell a table point (inches) lies in, or -1 off the board: in a hex grid the nearest cell
// centre is the cell's own.
export function cellAt(grid, x, y) {
  if (!grid || !grid.cells || !grid.cells.length) return -1;
  const ix = gridIndex(grid);
  let best = -1, bestD = Infinity;
  ix.centres.forEach(([cx, cy], i) => { const d = Math.hypot(cx - x, cy - y); if (d < bestD) { bestD = d; best = i; } });
  return bestD <= ix.size ? best : -1;
}

// The units standing on a cell of the board: [{cell index, colour}] (a unit off the board is left out).
function unitCells(grid, units) {
  const out = [];
  for (const u of units || []) {
    const i = cellAt(grid, u.x, u.y);
    if (i >= 0) out.push({ i, colour: u.colour || "#ffffff" });
  }
  return out;
}

// The grid's cells, levels and walls drawn once into a picture of the canvas's own pixel size, then laid on each
// frame in one stroke (drawing 91 translucent cells every frame cost the browser ~2 ms a frame). `slot` keeps the
// camera's and the board's pictures apart; `key` says what they were drawn for (size, scale, view).
function gridLayer(grid, slot, key, ctx, draw) {
  const w = ctx.canvas.width, h = ctx.canvas.height;
  const kept = grid[slot];
  if (kept && kept.key === key && kept.canvas.width === w && kept.canvas.height === h) return kept.canvas;
  const canvas = document.createElement("canvas");
  canvas.width = w;
  canvas.height = h;
  const layer = canvas.getContext("2d");
  layer.setTransform(ctx.getTransform());
  draw(layer);
  grid[slot] = { key, canvas };
  return canvas;
}

function layDown(ctx, picture) {
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.drawImage(picture, 0, 0);
  ctx.restore();
}

// Draws the grid on the top-down board; returns {cells, edges, units} drawn.
export function drawGridBoard(ctx, view, grid, units) {
  if (!grid || !grid.cells || !grid.cells.length) return { cells: 0, edges: 0, units: 0 };
  const ix = gridIndex(grid);
  const cellPx = ix.size * view.scale;
  const t = ctx.getTransform();
  const key = [view.scale, view.width, view.height, view.w, view.d, t.a, t.d].join(" ");
  layDown(ctx, gridLayer(grid, "_boardLayer", key, ctx, (g) => {
    for (const c of grid.cells) {
      path(g, c.in.map(([x, y]) => view.toPx(x, y)), true);
      g.fillStyle = gridFill(c);
      g.fill();
      g.lineWidth = 1;
      g.strokeStyle = "rgba(20,20,20,0.55)";
      g.stroke();
    }
    g.textAlign = "center";
    g.textBaseline = "middle";
    g.font = `700 ${Math.max(9, Math.round(cellPx * 0.5))}px system-ui, sans-serif`;
    g.fillStyle = "rgba(255,255,255,0.85)";
    grid.cells.forEach((c, i) => {
      const [px, py] = view.toPx(...ix.centres[i]);
      if (c.elevation) g.fillText(`▲${c.elevation}`, px, py - cellPx * 0.15);
    });
    if (cellPx * t.a >= CELL_NAMES_FROM_PX) {  // each cell's name as the Declare buttons say it ("hex [-5, 0]")
      g.font = `500 ${Math.round(cellPx * 0.32)}px system-ui, sans-serif`;
      grid.cells.forEach((c, i) => {
        const [px, py] = view.toPx(...ix.centres[i]);
        g.fillStyle = c.terrain === "water" ? "rgba(0,0,0,0.6)" : "rgba(255,255,255,0.6)";
        g.fillText(`${c.hex[0]},${c.hex[1]}`, px, py + cellPx * (c.elevation ? 0.4 : 0.3));
      });
    }
    g.lineCap = "round";
    g.lineWidth = Math.max(5, cellPx * 0.24);
    g.strokeStyle = GRID_WALL.stroke;
    for (const e of grid.edges || []) {
      const [a, b] = e.in.map(([x, y]) => view.toPx(x, y));
      g.beginPath(); g.moveTo(a[0], a[1]); g.lineTo(b[0], b[1]); g.stroke();
    }
  }));
  ctx.setLineDash([]);
  const mine = unitCells(grid, units);
  ctx.lineWidth = 3;
  for (const { i, colour } of mine) {
    path(ctx, grid.cells[i].in.map(([x, y]) => view.toPx(x, y)), true);
    ctx.strokeStyle = colour;
    ctx.stroke();
  }
  return { cells: grid.cells.length, edges: (grid.edges || []).length, units: mine.length };
}

// Path2D outlines of the projected cells, one for each fill colour, made once for each grid fetched.
function gridPaths(grid) {
  if (grid._paths) return grid._paths;
  const fills = new Map();
  const all = new Path2D();
  for (const c of grid.cells) {
    if (!c.px || !c.px.length) continue;
    const one = new Path2D();
    c.px.forEach((p, i) => (i ? one.lineTo(p[0], p[1]) : one.moveTo(p[0], p[1])));
    one.closePath();
    const fill = gridFill(c);
    if (!fills.has(fill)) fills.set(fill, new Path2D());
    fills.get(fill).addPath(one);
    all.addPath(one);
  }
  const walls = new Path2D();
  for (const e of grid.edges || []) {
    if (!e.px || !e.px.length) continue;
    e.px.forEach((p, i) => (i ? walls.lineTo(p[0], p[1]) : walls.moveTo(p[0], p[1])));
  }
  grid._paths = { fills, all, walls, drawn: grid.cells.filter((c) => c.px && c.px.length).length };
  return grid._paths;
}

// Draws the projected grid over the camera picture (image px; `k` scales line widths); returns the counts.
function drawGridCamera(ctx, grid, units, k) {
  if (!grid || !grid.cells || !grid.cells.length) return { cells: 0, edges: 0, units: 0 };
  const paths = gridPaths(grid);
  if (!paths.drawn) return { cells: 0, edges: 0, units: 0 };
  const ix = gridIndex(grid);
  const edges = (grid.edges || []).filter((e) => e.px && e.px.length).length;
  const t = ctx.getTransform();
  layDown(ctx, gridLayer(grid, "_cameraLayer", [k, t.a, t.d].join(" "), ctx, (g) => {
    g.globalAlpha = GRID_CAMERA_ALPHA;
    for (const [fill, p] of paths.fills) { g.fillStyle = fill; g.fill(p); }
    g.globalAlpha = 1;
    g.lineWidth = 1.2 * k;
    g.strokeStyle = "rgba(255,255,255,0.55)";
    g.stroke(paths.all);
    if (edges) {
      g.lineCap = "round";
      g.lineWidth = 6 * k;
      g.strokeStyle = GRID_WALL.stroke;
      g.stroke(paths.walls);
    }
    g.font = `700 ${Math.round(13 * k)}px system-ui, sans-serif`;
    g.textAlign = "center";
    g.textBaseline = "middle";
    grid.cells.forEach((c, i) => {
      const at = ix.pxCentres[i];
      if (!c.elevation || !at) return;
      g.fillStyle = "rgba(0,0,0,0.55)";
      g.fillText(`▲${c.elevation}`, at[0] + k, at[1] + k);
      g.fillStyle = "#ffffff";
      g.fillText(`▲${c.elevation}`, at[0], at[1]);
    });
  }));
  ctx.setLineDash([]);
  const mine = unitCells(grid, units).filter(({ i }) => grid.cells[i].px && grid.cells[i].px.length);
  ctx.lineWidth = 3 * k;
  for (const { i, colour } of mine) {
    path(ctx, grid.cells[i].px, true);
    ctx.strokeStyle = colour;
    ctx.stroke();
  }
  return { cells: paths.drawn, edges, units: mine.length };
}

function noteGrid(canvas, counts) {
  const text = `${counts.cells} ${counts.edges} ${counts.units}`;
  if (canvas.dataset.grid !== text) {  // an attribute written restyles the page: only when it changed
    canvas.dataset.grid = text;
    canvas.dataset.gridCells = String(counts.cells);
    canvas.dataset.gridEdges = String(counts.edges);
    canvas.dataset.gridUnits = String(counts.units);
  }
}

// ---- the top-down board -------------------------------------------------------------------------------

export const BOARD_MARGIN_IN = 3.5;

// A canvas's drawing size: the size its page gave it (its width and height attributes, kept in data-layout-*
// once the canvas holds fewer pixels than that; see drawBoard).
export function layoutSize(canvas) {
  return [Number(canvas.dataset.layoutWidth) || canvas.width, Number(canvas.dataset.layoutHeight) || canvas.height];
}

export function boardView(canvas, board) {
  const w = (board && board.w) || 30, d = (board && board.d) || 22;
  const [width, height] = layoutSize(canvas);
  const span = w + 2 * BOARD_MARGIN_IN, depth = d + 2 * BOARD_MARGIN_IN;
  const scale = Math.min(width / span, height / depth);
  const ox = (width - span * scale) / 2 + BOARD_MARGIN_IN * scale;
  const oy = (height - depth * scale) / 2 + BOARD_MARGIN_IN * scale;
  return {
    w, d, scale, width, height,
    // table inches (x right, y away from the players: up on the screen) -> canvas px
    toPx: (x, y) => [ox + x * scale, oy + (d - y) * scale],
    toIn: (px, py) => [(px - ox) / scale, d - (py - oy) / scale],
  };
}

function circlePts(cx, cy, r, n = 48) {
  const out = [];
  for (let i = 0; i < n; i++) out.push([cx + r * Math.cos((2 * Math.PI * i) / n), cy + r * Math.sin((2 * Math.PI * i) / n)]);
  return out;
}

export function drawTerrainPieces(ctx, view, pieces, highlight) {
  let n = 0;
  for (const p of pieces || []) {
    const pts = p.polygon.map(([x, y]) => view.toPx(x, y));
    path(ctx, pts, true);
    const kinds = Array.isArray(p.kind) ? p.kind : [p.kind];
    const blocking = kinds.includes("blocking");
    ctx.fillStyle = blocking ? "rgba(120,120,130,0.75)" : kinds.includes("obscuring") ? "rgba(60,140,70,0.55)" : "rgba(150,120,80,0.5)";
    ctx.fill();
    ctx.lineWidth = highlight === p.name ? 4 : 1.5;
    ctx.strokeStyle = highlight === p.name ? "#ffd32a" : "#222";
    ctx.setLineDash([]);
    ctx.stroke();
    const c = pts.reduce((a, b) => [a[0] + b[0] / pts.length, a[1] + b[1] / pts.length], [0, 0]);
    if (p.name) label(ctx, `${p.name} ${p.height_in}"`, [c[0], c[1] + 5], "#fff", 12);
    n++;
  }
  return n;
}

export function drawBoardBase(ctx, view) {
  ctx.fillStyle = "#1d2b1f";
  ctx.fillRect(0, 0, view.width, view.height);
  const [x0, y0] = view.toPx(0, view.d);
  ctx.fillStyle = "#3d5a3f";
  ctx.fillRect(x0, y0, view.w * view.scale, view.d * view.scale);
  ctx.strokeStyle = "rgba(255,255,255,0.12)";
  ctx.lineWidth = 1;
  for (let x = 0; x <= view.w; x += 1) { const a = view.toPx(x, 0), b = view.toPx(x, view.d); ctx.beginPath(); ctx.moveTo(a[0], a[1]); ctx.lineTo(b[0], b[1]); ctx.stroke(); }
  for (let y = 0; y <= view.d; y += 1) { const a = view.toPx(0, y), b = view.toPx(view.w, y); ctx.beginPath(); ctx.moveTo(a[0], a[1]); ctx.lineTo(b[0], b[1]); ctx.stroke(); }
  ctx.strokeStyle = "#ddd";
  ctx.strokeRect(x0, y0, view.w * view.scale, view.d * view.scale);
}

function drawInchOverlay(ctx, view, ov) {
  ctx.globalAlpha = ov.faint ? 0.25 : 1;
  try { return drawInchShape(ctx, view, ov); } finally { ctx.globalAlpha = 1; }
}

// A game's cell of one side's (Rise of the Magni's tiles, "hex-highlight" with an owner): in that side's colour,
// on the board and on the camera's picture alike.
const OWNED_STYLES = new Set(["hex-highlight"]);
function ownedStyle(style, owner, owners) {
  const own = OWNED_STYLES.has(style) && owner && owners ? owners[owner] : null;
  return own ? { ...styleOf(style), stroke: own, fill: hexAlpha(own, 0.25) } : styleOf(style);
}

function drawInchShape(ctx, view, ov) {
  const st = ownedStyle(ov.style, ov.owner, view.owners);
  const k = 1;
  ctx.setLineDash(st.dash || []);
  ctx.lineWidth = (st.width || 2) * k;
  ctx.strokeStyle = st.stroke;
  const pts = (ov.points || []).map(([x, y]) => view.toPx(x, y));
  if (!pts.length) return 0;
  let at = pts[0];
  if (ov.shape === "circle" || ov.shape === "ring") {
    const [cx, cy] = ov.points[0];
    const outer = circlePts(cx, cy, ov.radius).map(([x, y]) => view.toPx(x, y));
    path(ctx, outer, true);
    if (ov.shape === "ring" && ov.inner > 0) {
      const inner = circlePts(cx, cy, ov.inner).map(([x, y]) => view.toPx(x, y)).reverse();
      inner.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
      ctx.closePath();
    }
    if (st.fill) { ctx.fillStyle = st.fill; ctx.fill("evenodd"); }
    path(ctx, outer, true); ctx.stroke();
    at = outer[12];
  } else if (ov.shape === "label") {
    label(ctx, ov.label, at, st.stroke, 12);
    ctx.setLineDash([]);
    return 1;
  } else {
    const closed = ov.shape === "polygon";
    path(ctx, pts, closed);
    if (closed && st.fill) { ctx.fillStyle = st.fill; ctx.fill(); }
    ctx.stroke();
    at = pts.length === 2 ? [(pts[0][0] + pts[1][0]) / 2, (pts[0][1] + pts[1][1]) / 2] : pts[0];
  }
  ctx.setLineDash([]);
  if (ov.label) label(ctx, ov.label, at, st.stroke, 12);
  return 1;
}

// The board canvas: a hex game's grid (opts.grid), terrain, overlays in inches, the bases coloured by owner.
// Returns the shapes drawn (the grid's cells are counted apart, in data-grid-cells).
// Drawn in the page's layout size through a scale: the canvas holds only the pixels the screen shows (its CSS
// width x devicePixelRatio), the words and lines keep their size relative to the board.
export function drawBoard(canvas, msg, terrain, extraOverlays = [], opts = {}) {
  const ctx = canvas.getContext("2d");
  const [width, height] = layoutSize(canvas);
  canvas.dataset.layoutWidth = String(width);
  canvas.dataset.layoutHeight = String(height);
  const [w, h] = fitCanvas(canvas, width, height);
  ctx.setTransform(w / width, 0, 0, h / height, 0, 0);
  const view = boardView(canvas, msg && msg.board && msg.board.w ? msg.board : null);
  view.owners = (msg && msg.owners) || {};
  drawBoardBase(ctx, view);
  const grid = drawGridBoard(ctx, view, opts.grid || null, (msg && msg.units) || []);
  noteGrid(canvas, grid);
  ctx.pendingLabels = [];
  let n = drawTerrainPieces(ctx, view, terrain);
  const overlays = [...(opts.overlays || (msg && msg.overlays) || []), ...extraOverlays];
  const order = (o) => (o.shape === "polygon" || o.shape === "circle" || o.shape === "ring" ? 0 : 1);
  for (const ov of [...overlays].sort((a, b) => order(a) - order(b))) n += drawInchOverlay(ctx, view, ov);
  for (const u of (msg && msg.units) || []) {
    const [px, py] = view.toPx(u.x, u.y);
    ctx.beginPath();
    ctx.arc(px, py, Math.max(3, u.radius_in * view.scale), 0, 2 * Math.PI);
    ctx.fillStyle = hexAlpha(u.colour, 0.85);
    ctx.fill();
    ctx.lineWidth = msg.selected === u.tag ? 4 : 1.5;
    ctx.strokeStyle = msg.selected === u.tag ? "#fff" : "#111";
    ctx.stroke();
    const a = ((u.yaw_deg || 0) * Math.PI) / 180;
    ctx.beginPath();
    ctx.moveTo(px, py);
    ctx.lineTo(px + Math.cos(a) * u.radius_in * view.scale, py - Math.sin(a) * u.radius_in * view.scale);
    ctx.strokeStyle = "#111"; ctx.lineWidth = 2; ctx.stroke();
    if (opts.names !== false) label(ctx, u.name || String(u.tag), [px, py - u.radius_in * view.scale - 4], "#fff", 11, 3);
    n++;
  }
  canvas.dataset.hiddenLabels = String(placeLabels(ctx));
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  canvas.dataset.shapes = String(n);
  return { n, view };
}

// Which unit is under a click on the camera canvas (pixel shapes of style "base"), or null.
export function unitAtPixel(msg, x, y) {
  for (const s of (msg && msg.image_shapes) || []) {
    if (s.s === "base" && s.k === "poly" && inside(s.p, x, y)) return s.u;
  }
  return null;
}

// Which unit is under a click on the board (inches), or null.
export function unitAtInches(msg, x, y) {
  let best = null, bestD = Infinity;
  for (const u of (msg && msg.units) || []) {
    const d = Math.hypot(u.x - x, u.y - y);
    if (d <= u.radius_in + 0.25 && d < bestD) { best = u.tag; bestD = d; }
  }
  return best;
}

export function inside(poly, x, y) {
  let c = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i], [xj, yj] = poly[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) c = !c;
  }
  return c;
}
