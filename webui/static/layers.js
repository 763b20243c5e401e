// What a player chooses to see on the camera and the board: layers switched on and off (kept in this browser),
// the selected unit in focus (the other units' rings faint and unlabelled), and a legend of what each colour means.
import { STYLE, GRID_TERRAIN, GRID_LEVEL, GRID_WALL } from "/static/overlay.js";

export const PLAYER_LAYERS = [
  ["grid", "Hex grid"],
  ["names", "Unit names"],
  ["rings", "Rings and zones of control"],
  ["answers", "Answers and lines"],
  ["stockpiles", "Stockpiles and objectives"],
  ["sections", "Sections"],
  ["zones", "Drop zones and hexes"],
  ["terrain", "Terrain"],
  ["terrain-names", "Terrain names"],
  ["tags", "Tags and anchors"],
];

const STYLE_LAYER = {
  "engagement": "rings", "range-band": "rings", "move-allowance": "rings",
  "los-clear": "answers", "los-partial": "answers", "los-blocked": "answers", "attack-line": "answers", "move-trail": "answers",
  "score": "stockpiles", "section": "sections",
  "drop-zone": "zones", "hex-highlight": "zones", "hex-reachable": "zones",
  "terrain": "terrain", "terrain-blocking": "terrain", "wall": "terrain",
  "tag": "tags", "anchor": "tags",
};

export const LEGEND = [
  ["engagement", "engagement zone"],  // 1" on an open table (Valknut), adjacent hexes on a hex board
  ["move-allowance", "how far the unit may move"],
  ["range-band", "weapon range"],
  ["los-clear", "clear line of sight"],
  ["los-partial", "partial line of sight"],
  ["los-blocked", "blocked line of sight"],
  ["terrain-blocking", "terrain in the way"],
  ["move-trail", "last move"],
  ["drop-zone", "drop zone"],
  ["section", "table section"],
  ["score", "stockpile or objective"],
  ["illegal", "illegal"],
  ["too-close", "too close to call"],
];

// The hex grid's legend: one entry for each kind of cell or edge (session/board_grid.py's "kinds"), shown only
// for the kinds on the board being played.
const GRID_LEGEND = [
  ...Object.entries(GRID_TERRAIN).map(([kind, t]) => [kind, { fill: t.fill }, t.words]),
  ["elevation", { fill: GRID_LEVEL.fill }, GRID_LEVEL.words],
  ["wall", { wall: GRID_WALL.stroke }, GRID_WALL.words],
];

const KEY = "tablesight.layers.off";

function layerOfStyle(style) { return STYLE_LAYER[style] || null; }

// The layer bar and legend in `container`; onChange() redraws. Returns the filters the table view applies.
export function startLayers(container, onChange) {
  const legendItems = new Map();
  const gridItems = new Map();
  let gridToggle = null;
  let off;
  try { off = new Set(JSON.parse(localStorage.getItem(KEY) || "[]")); } catch (e) { off = new Set(); }
  if (container) {
    const bar = document.createElement("div");
    bar.className = "layers";
    bar.id = "layers";
    bar.append("Show: ");
    for (const [key, words] of PLAYER_LAYERS) {
      const label = document.createElement("label");
      if (key === "grid") { label.hidden = true; gridToggle = label; }  // shown on a hex board only
      const box = document.createElement("input");
      box.type = "checkbox"; box.checked = !off.has(key); box.dataset.layer = key;
      box.addEventListener("change", () => {
        if (box.checked) off.delete(key); else off.add(key);
        try { localStorage.setItem(KEY, JSON.stringify([...off])); } catch (e) { /* private mode: not kept */ }
        onChange();
      });
      label.append(box, " ", words);
      bar.append(label);
    }
    const legend = document.createElement("details");
    legend.className = "legend";
    legend.id = "legend";
    legend.open = window.innerWidth > 700;  // folded on a phone, where the picture comes first
    const sum = document.createElement("summary");
    sum.textContent = "Legend";
    legend.append(sum);
    for (const [style, words] of LEGEND) {
      const st = STYLE[style] || {};
      const item = document.createElement("span");
      item.className = "legend-item";
      item.dataset.style = style;
      item.hidden = true;  // shown once this page draws a shape of its style: a hex game has no 1" zone to explain
      legendItems.set(style, item);
      const sw = document.createElement("i");
      sw.style.borderColor = st.stroke || "#ddd";
      sw.style.background = st.fill || "transparent";
      if (st.dash) sw.style.borderStyle = "dashed";
      item.append(sw, words);
      legend.append(item);
    }
    for (const [kind, swatch, words] of GRID_LEGEND) {
      const item = document.createElement("span");
      item.className = "legend-item grid-kind";
      item.dataset.grid = kind;
      item.hidden = true;
      const sw = document.createElement("i");
      if (swatch.fill) { sw.style.background = swatch.fill; sw.style.borderColor = "rgba(0,0,0,0.5)"; }
      else { sw.style.borderColor = swatch.wall; sw.style.borderWidth = "0 0 4px 0"; }
      item.append(sw, words);
      gridItems.set(kind, item);
      legend.append(item);
    }
    container.append(bar, legend);
  }

  const shown = (style) => { const l = layerOfStyle(style); return !l || !off.has(l); };
  const isRing = (style) => layerOfStyle(style) === "rings";

  return {
    off,
    // Pixel shapes as this player wants them: hidden layers dropped, names removed, other units' rings faint.
    pixel(shapes, selected) {
      const out = [];
      for (const s of shapes || []) {
        const style = s.k === "tag" ? s.s : s.s;
        if (!shown(style)) continue;
        let t = s;
        if (s.s === "base" && off.has("names")) t = { ...t, l: "" };
        if ((s.s === "terrain" || s.s === "terrain-blocking") && off.has("terrain-names")) t = { ...t, l: "" };
        if (selected !== null && selected !== undefined && isRing(s.s) && s.u !== null && s.u !== undefined && s.u !== selected) {
          t = { ...t, l: "", faint: true };
        }
        out.push(t);
      }
      return out;
    },
    // Inch overlays for the board, the same way.
    inch(overlays, selected) {
      const out = [];
      for (const o of overlays || []) {
        if (!shown(o.style)) continue;
        let t = o;
        if ((o.style === "terrain" || o.style === "terrain-blocking") && off.has("terrain-names")) t = { ...t, label: "" };
        if (selected !== null && selected !== undefined && isRing(o.style) && o.unit !== null && o.unit !== undefined && o.unit !== selected) {
          t = { ...t, label: "", faint: true };
        }
        out.push(t);
      }
      return out;
    },
    names() { return !off.has("names"); },
    // The hex grid as this player wants it: the grid, or null with the "Hex grid" layer off.
    grid(g) { return g && !off.has("grid") ? g : null; },
    // The board being played changed: the "Hex grid" switch is offered on a hex board only, and the legend
    // names the kinds of cells on this board, no others.
    board(g) {
      const kinds = new Set((g && g.kinds) || []);
      if (gridToggle) gridToggle.hidden = !(g && g.cells && g.cells.length);
      for (const [kind, item] of gridItems) item.hidden = !kinds.has(kind);
    },
    // The styles of the shapes drawn: their legend entries are shown from then on.
    seen(shapes) {
      for (const s of shapes) {
        const item = legendItems.get(s.s || s.style);
        if (item && item.hidden) item.hidden = false;
      }
    },
    terrain(pieces) {
      if (off.has("terrain")) return [];
      return off.has("terrain-names") ? pieces.map((p) => ({ ...p, name: "" })) : pieces;
    },
  };
}
