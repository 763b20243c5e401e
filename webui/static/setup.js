// The new-game page: the game, its table (a hex board drawn cell by cell, or an open table's size), each side's
// army with one mount for every tag, and the rules' options; saved as a roster (PUT /api/roster).
import { counted, sentence } from "/static/words.js";
import { api } from "/static/feed.js";

const $ = (id) => document.getElementById(id);
const SQRT3 = Math.sqrt(3);
const COLS = [["tag", "number", "Tag"], ["name", "text", "Name"], ["profile", "text", "Profile"], ["owner", "side", "Side"],
  ["base_mm", "number", "Base (mm)"], ["base_height_in", "number", "Tag height (in)"], ["tag_in", "number", "Tag size (in)"]];
const TERRAIN_COLOURS = { sea: "#1f5f8b", water: "#3b8fc9", land: "#6b8e4e", mountain: "#8a7a6a" };
const HILL_COLOURS = ["#6b8e4e", "#8c9a4a", "#a89544", "#b7833c", "#b06a36", "#9c5530"];
const MARGIN_IN = 1;  // the play area's margin round a board when no calibration says the play area

let games = [];
let game = null;  // the chosen game's description (GET /api/setup/games)
let extra = {};  // the roster's other keys (cards, players, note ...), kept as loaded
let units = [];  // the units, as the roster file has them
let board = null;  // a hex board: {note, layout, cells: Map("q,r" -> {terrain, elevation}), edges}
let boardName = "";
let playArea = null;  // the calibrated play area {w, d}, inches, if the table is calibrated
let tool = "kind";
let fit = null;  // the server's fit for the current pieces, base and size

const fmt = (x) => String(Math.round(x * 100) / 100);
const clone = (o) => JSON.parse(JSON.stringify(o));
const key = (q, r) => `${q},${r}`;
const unkey = (k) => k.split(",").map(Number);

// ---------------------------------------------------------------------------------------------------- the game

function drawGames() {
  const box = $("games");
  box.innerHTML = "";
  for (const g of games) {
    const label = document.createElement("label");
    label.className = "game-choice" + (game && game.name === g.name ? " on" : "");
    const input = document.createElement("input");
    input.type = "radio"; input.name = "game"; input.value = g.name; input.checked = Boolean(game && game.name === g.name);
    input.addEventListener("change", () => chooseGame(g.name));
    const title = document.createElement("b");
    title.textContent = g.title;
    const what = document.createElement("span");
    what.className = "muted";
    what.textContent = g.board === "hex" ? "on a hex board" : "on an open table, in inches";
    label.append(input, title, what);
    box.append(label);
  }
}

// A game chosen: its example army, its first standard board (or its open table), its options at their defaults.
function chooseGame(name, setup) {
  game = games.find((g) => g.name === name);
  const roster = clone(setup || game.example);
  units = roster.units || [];
  extra = Object.fromEntries(Object.entries(roster).filter(([k]) => k !== "game" && k !== "units" && k !== "roll_for_us"));
  // a setup loaded says; another game starts with the players rolling (the tick was for the game it was ticked for)
  $("roll-for-us").checked = Boolean(setup) && setup.roll_for_us === true;
  drawGames();
  $("open-table").hidden = game.board === "hex";
  $("hex-table").hidden = game.board !== "hex";
  if (game.board === "hex") {
    const choice = $("board-choice");
    choice.innerHTML = "";
    for (const b of game.boards) {
      const o = document.createElement("option");
      o.value = b.name; o.textContent = b.title; choice.append(o);
    }
    const own = document.createElement("option");
    own.value = ""; own.textContent = "Drawn on this page"; choice.append(own);
    const standard = game.boards.find((b) => sameBoard(b.board, extra.board));
    const first = standard || game.boards[0];
    if (extra.board && !standard) loadBoard(extra.board, "");
    else if (first) loadBoard(first.board, first.name);
    else loadBoard({ layout: { size_in: 1, orientation: "pointy" }, hexagon: 3 }, "");  // a game with no board of its own
    const fixed = !game.cell_kinds.length;
    $("board-tools").hidden = fixed;
    $("board-fixed").hidden = !fixed;
    $("board-fixed").textContent = fixed ? `${game.title} is played on its own board: only the hex size changes.` : "";
  } else {
    const b = extra.board || {};
    $("board-w").value = b.width_in ?? 30;
    $("board-d").value = b.depth_in ?? 22;
    // a game whose battlefield has set sizes offers those only
    const areas = game.play_areas || [];
    $("area-choice").hidden = !areas.length;
    $("area-size").hidden = Boolean(areas.length);
    const sel = $("board-area");
    sel.innerHTML = "";
    for (const [w, d] of areas) { const o = document.createElement("option"); o.value = `${w}x${d}`; o.textContent = `${w}" × ${d}"`; sel.append(o); }
    if (areas.length) {
      if (!areas.some(([w, d]) => w === Number($("board-w").value) && d === Number($("board-d").value))) [$("board-w").value, $("board-d").value] = areas[0];
      sel.value = `${$("board-w").value}x${$("board-d").value}`;
    }
    openNote();
  }
  $("mount").value = game.mount || "topper";  // figures carry toppers; a game of tiles lays its tags flat
  drawSides(); drawUnits(); drawOptions();
  for (const id of ["open-error", "board-error", "sides-error", "units-error", "options-error", "mount-msg", "save-msg"]) say(id, "");
  refit(!setup);
}

// An open table's play area against the calibrated one.
function openNote() {
  const w = Number($("board-w").value), d = Number($("board-d").value), el = $("open-note");
  if (!playArea) { el.className = "muted"; el.textContent = "The table is not calibrated yet: calibrate it for this play area."; return; }
  const same = Math.abs(w - playArea.w) < 0.01 && Math.abs(d - playArea.d) < 0.01;
  el.className = same ? "muted" : "bad";
  el.textContent = same ? `The table is calibrated for this play area.` :
    `The table is calibrated for ${fmt(playArea.w)}" × ${fmt(playArea.d)}": calibrate it again for ${fmt(w)}" × ${fmt(d)}" before playing.`;
}
$("board-area").addEventListener("change", () => { [$("board-w").value, $("board-d").value] = $("board-area").value.split("x"); openNote(); });
$("board-w").addEventListener("change", openNote);
$("board-d").addEventListener("change", openNote);

function sameBoard(a, b) { return Boolean(a && b) && JSON.stringify(a) === JSON.stringify(b); }

// ---------------------------------------------------------------------------------------------------- the board

// A board file (docs/hex_boards.md) as cells by hex: a hexagon of `default` cells, then its own cells.
function loadBoard(file, name) {
  const def = file.default || {};
  const cells = new Map();
  const n = file.hexagon;
  if (Number.isInteger(n)) {
    for (let q = -n; q <= n; q++) {
      for (let r = Math.max(-n, -q - n); r <= Math.min(n, -q + n); r++) cells.set(key(q, r), { terrain: def.terrain || "land", elevation: def.elevation || 0 });
    }
  }
  for (const c of file.cells || []) cells.set(key(c.hex[0], c.hex[1]), { terrain: c.terrain ?? def.terrain ?? "land", elevation: c.elevation ?? def.elevation ?? 0 });
  const layout = { size_in: 1, orientation: "pointy", origin: [0, 0], rotation_deg: 0, ...(file.layout || {}) };
  board = { note: file.note, layout, cells, edges: file.edges || [] };
  boardName = name;
  $("board-choice").value = name;
  $("hex-size").value = fmt(layout.size_in);
  placeBoard();
}

// The board file for the roster: every cell listed (its terrain, and its elevation when above the table).
function boardFile() {
  const cells = [...board.cells.entries()].map(([k, c]) => {
    const [q, r] = unkey(k);
    return { hex: [q, r], terrain: c.terrain, ...(c.elevation ? { elevation: c.elevation } : {}) };
  }).sort((a, b) => a.hex[0] - b.hex[0] || a.hex[1] - b.hex[1]);
  const edges = board.edges.filter((e) => board.cells.has(key(e.hex[0], e.hex[1])));
  return { ...(board.note && boardName ? { note: board.note } : {}), layout: clone(board.layout), cells, ...(edges.length ? { edges } : {}) };
}

function centre(q, r, lay) {
  const s = lay.size_in;
  let x, y;
  if (lay.orientation === "pointy") { x = SQRT3 * q + SQRT3 / 2 * r; y = -1.5 * r; } else { x = 1.5 * q; y = -(SQRT3 / 2 * q + SQRT3 * r); }
  const a = (lay.rotation_deg || 0) * Math.PI / 180;
  return [Math.cos(a) * x * s - Math.sin(a) * y * s + lay.origin[0], Math.sin(a) * x * s + Math.cos(a) * y * s + lay.origin[1]];
}

function corners(q, r, lay) {
  const [cx, cy] = centre(q, r, lay);
  const base = (lay.orientation === "pointy" ? 30 : 0) + (lay.rotation_deg || 0);
  return [0, 1, 2, 3, 4, 5].map((c) => { const a = (base + 60 * c) * Math.PI / 180; return [cx + lay.size_in * Math.cos(a), cy + lay.size_in * Math.sin(a)]; });
}

function extent(lay) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const k of board.cells.keys()) {
    const [q, r] = unkey(k);
    for (const [x, y] of corners(q, r, lay)) { x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y); }
  }
  return { x0, y0, x1, y1, w: x1 - x0, d: y1 - y0 };
}

// The board laid on the table: centred on the calibrated play area when it fits there, else 1" from its corner.
function placeBoard() {
  const lay = { ...board.layout, origin: [0, 0] };
  const e = extent(lay);
  const cx = playArea && e.w <= playArea.w && e.d <= playArea.d ? playArea.w / 2 : e.w / 2 + MARGIN_IN;
  const cy = playArea && e.w <= playArea.w && e.d <= playArea.d ? playArea.d / 2 : e.d / 2 + MARGIN_IN;
  board.layout.origin = [Math.round((cx - (e.x0 + e.x1) / 2) * 1000) / 1000, Math.round((cy - (e.y0 + e.y1) / 2) * 1000) / 1000];
  drawBoard();
}

// Which of the game's cell kinds a cell is (-1: none of them, e.g. a board file's own).
function kindOf(c) { return game.cell_kinds.findIndex((k) => k.terrain === c.terrain && k.elevation === (c.elevation || 0)); }
function colour(c) {
  if (c.terrain === "land" && c.elevation) return HILL_COLOURS[Math.min(c.elevation, HILL_COLOURS.length - 1)];
  return TERRAIN_COLOURS[c.terrain] || "#666";
}
function kindWords(c) {
  const k = game.cell_kinds[kindOf(c)];
  return k ? k.label : sentence(c.terrain) + (c.elevation ? `, ${counted(c.elevation, "level")}` : "");
}

function drawBoard() {
  const svg = $("board-svg");
  const lay = board.layout;
  const e = extent(lay);
  const ns = "http://www.w3.org/2000/svg";
  svg.innerHTML = "";
  const pad = lay.size_in;
  // table inches with +y up: drawn with y flipped; the calibrated play area (dashed) and the board within it
  const v = playArea ? { x0: Math.min(e.x0, 0), y0: Math.min(e.y0, 0), x1: Math.max(e.x1, playArea.w), y1: Math.max(e.y1, playArea.d) } : e;
  svg.setAttribute("viewBox", `${v.x0 - pad} ${-(v.y1 + pad)} ${v.x1 - v.x0 + 2 * pad} ${v.y1 - v.y0 + 2 * pad}`);
  if (playArea) {
    const rect = document.createElementNS(ns, "rect");
    rect.setAttribute("x", 0); rect.setAttribute("y", -playArea.d); rect.setAttribute("width", playArea.w); rect.setAttribute("height", playArea.d);
    rect.setAttribute("class", "play-area");
    svg.append(rect);
  }
  const poly = (pts, cls, fill) => {
    const p = document.createElementNS(ns, "polygon");
    p.setAttribute("points", pts.map(([x, y]) => `${x},${-y}`).join(" "));
    p.setAttribute("class", cls);
    if (fill) p.setAttribute("fill", fill);
    svg.append(p);
    return p;
  };
  const rim = new Set();
  for (const k of board.cells.keys()) {
    const [q, r] = unkey(k);
    for (const [dq, dr] of [[1, 0], [1, -1], [0, -1], [-1, 0], [-1, 1], [0, 1]]) {
      const n = key(q + dq, r + dr);
      if (!board.cells.has(n)) rim.add(n);
    }
  }
  if (tool === "rim" && game.cell_kinds.length) {
    for (const k of rim) {
      const [q, r] = unkey(k);
      const p = poly(corners(q, r, lay), "ghost");
      p.dataset.hex = k;
      const t = document.createElementNS(ns, "title"); t.textContent = "Add a cell here"; p.append(t);
      p.addEventListener("click", () => { const f = game.cell_kinds[0]; board.cells.set(k, { terrain: f.terrain, elevation: f.elevation }); edited(); });
    }
  }
  for (const [k, c] of board.cells) {
    const [q, r] = unkey(k);
    const p = poly(corners(q, r, lay), "cell", colour(c));
    p.dataset.hex = k; p.dataset.kind = kindWords(c);
    const t = document.createElementNS(ns, "title"); t.textContent = `${kindWords(c)} [${q}, ${r}]`; p.append(t);
    p.addEventListener("click", () => clickCell(k));
    if (c.elevation) {
      const [x, y] = centre(q, r, lay);
      const text = document.createElementNS(ns, "text");
      text.setAttribute("x", x); text.setAttribute("y", -y + lay.size_in * 0.2);
      text.setAttribute("font-size", lay.size_in * 0.6);
      text.textContent = c.elevation;
      svg.append(text);
    }
  }
  for (const ed of board.edges) {
    if (!board.cells.has(key(ed.hex[0], ed.hex[1]))) continue;
    const cs = corners(ed.hex[0], ed.hex[1], lay);
    const a = cs[(ed.dir + 5) % 6], b = cs[ed.dir % 6];  // the corners either side of direction dir
    const l = document.createElementNS(ns, "line");
    l.setAttribute("x1", a[0]); l.setAttribute("y1", -a[1]); l.setAttribute("x2", b[0]); l.setAttribute("y2", -b[1]);
    l.setAttribute("class", "wall");
    svg.append(l);
  }
  drawLegend();
  sizeWords(e);
}

function drawLegend() {
  const box = $("legend");
  box.innerHTML = "";
  for (const k of game.cell_kinds) {
    const span = document.createElement("span");
    span.className = "legend-item";
    const i = document.createElement("i");
    i.style.background = colour(k); i.style.borderColor = colour(k);
    span.append(i, document.createTextNode(k.label));
    box.append(span);
  }
}

function clickCell(k) {
  if (!game.cell_kinds.length) return;
  if (tool === "kind") {
    const c = board.cells.get(k);
    const next = game.cell_kinds[(kindOf(c) + 1) % game.cell_kinds.length];
    board.cells.set(k, { terrain: next.terrain, elevation: next.elevation });
    edited(false);
    return;
  }
  const [q, r] = unkey(k);
  const inner = [[1, 0], [1, -1], [0, -1], [-1, 0], [-1, 1], [0, 1]].every(([dq, dr]) => board.cells.has(key(q + dq, r + dr)));
  if (inner) { say("board-error", "Only a cell on the rim can be removed: the board may not have a hole."); return; }
  if (board.cells.size <= 1) { say("board-error", "A board needs at least one cell."); return; }
  board.cells.delete(k);
  edited();
}

// A cell changed: the board is now this page's own; cells added or removed move it to the middle again.
function edited(reshaped = true) {
  say("board-error", "");
  boardName = "";
  $("board-choice").value = "";
  if (reshaped) placeBoard(); else drawBoard();
}

let boardInches = null;  // the board's last size in inches ({w, d}): said again once the hex size the pieces need is known
function sizeWords(e) {
  boardInches = e;
  const need = [Math.ceil(e.w), Math.ceil(e.d)];
  let words = `The board is ${fmt(e.w)}" × ${fmt(e.d)}" (${counted(board.cells.size, "cell")}); it needs a play area of at least ${need[0]}" × ${need[1]}".`;
  const el = $("board-size");
  el.className = "muted";
  if (playArea) {
    if (e.w <= playArea.w && e.d <= playArea.d) words += ` The table is calibrated for ${fmt(playArea.w)}" × ${fmt(playArea.d)}", and the board is centred on it.`;
    else {
      // smaller hexes only while they still hold the game's pieces (the least size is the fit's)
      const least = fit ? fit.proposed_size_in : null;
      const larger = ` The table is calibrated for ${fmt(playArea.w)}" × ${fmt(playArea.d)}" only: calibrate a larger play area on the Calibrate page`;
      if (least === null) words += `${larger}, or make the hexes smaller.`;
      else if (board.layout.size_in > least + 1e-6) words += `${larger}, or make the hexes smaller (down to ${fmt(least)}", the least that holds its pieces).`;
      else words += `${larger}; smaller hexes would not hold its pieces (${fmt(least)}" is the least).`;
      el.className = "bad";
    }
  } else words += " The table is not calibrated yet.";
  el.textContent = words;
}

// The hex size the game's pieces need: the most pieces a cell may hold, on the army's largest base.
async function refit(auto = false) {
  if (!game || game.board !== "hex") return;
  const bases = units.map((u) => Number(u.base_mm) || 32);
  const base = Math.max(...bases, 10);
  const size = Number($("hex-size").value);
  const n = game.pieces_per_cell;
  try {
    fit = await api(`/api/setup/fit?pieces=${n}&base_mm=${base}` + (size > 0 ? `&size_in=${size}` : ""));
  } catch (err) { say("board-error", err.message); return; }
  if (auto && !fit.fits) {  // a new game's board gets hexes its pieces fit
    setSize(fit.proposed_size_in);
    return;
  }
  const note = $("fit-note");
  const who = n === 1 ? `one piece on a ${fmt(base)} mm base` : `${n} pieces on ${fmt(base)} mm bases`;
  const proposed = `${fmt(fit.proposed_size_in)}"`;
  if (fit.fits) { note.className = "ok"; note.textContent = `A cell of this game holds up to ${who}: they fit a ${fmt(size)}" hex (${proposed} is the least that holds them).`; }
  else { note.className = "bad"; note.textContent = `A cell of this game holds up to ${who}: they do not fit a ${fmt(size)}" hex; ${proposed} is the least that holds them.`; }
  $("use-proposed").textContent = `Use ${proposed}`;
  $("use-proposed").hidden = fit.fits;  // a size that holds them is the players' to keep
  if (boardInches) sizeWords(boardInches);  // what it says of the play area depends on the least size
}

function setSize(size) {
  if (!(size > 0)) { say("board-error", "The hex size must be a number of inches above 0, e.g. 1.5."); return; }
  say("board-error", "");
  if (Math.abs(size - board.layout.size_in) > 1e-9) board.note = undefined;  // a standard board's note names its size
  board.layout.size_in = size;
  $("hex-size").value = fmt(size);
  placeBoard();
  refit();
}
$("hex-size").addEventListener("change", () => setSize(Number($("hex-size").value)));
$("use-proposed").addEventListener("click", () => { if (fit) setSize(fit.proposed_size_in); });
$("board-choice").addEventListener("change", () => {
  const b = game.boards.find((x) => x.name === $("board-choice").value);
  if (b) { loadBoard(b.board, b.name); refit(true); } else boardName = "";
});
for (const b of document.querySelectorAll("#board-tools button[data-tool]")) {
  b.addEventListener("click", () => {
    tool = b.dataset.tool;
    for (const o of document.querySelectorAll("#board-tools button[data-tool]")) o.classList.toggle("on", o === b);
    drawBoard();
  });
}

// ---------------------------------------------------------------------------------------------------- the armies

function sides() { return [...new Set(units.map((u) => u.owner).filter(Boolean))]; }

function drawSides() {
  const box = $("sides");
  box.innerHTML = "";
  sides().forEach((name, i) => {
    const label = document.createElement("label");
    label.textContent = `Side ${i + 1} `;
    const input = document.createElement("input");
    input.value = name; input.dataset.side = name; input.setAttribute("aria-label", `Side ${i + 1}'s name`);
    input.addEventListener("change", () => renameSide(name, input.value.trim(), input));
    const count = document.createElement("span");
    count.className = "muted";
    count.textContent = ` ${counted(units.filter((u) => u.owner === name).length, "unit")}`;
    label.append(input, count);
    box.append(label);
  });
}

// A side renamed: every unit of that side, and whatever names the side (Valyr's seating order and priority).
function renameSide(from, to, input) {
  // said beside the sides (the units' message is far below them), the name put back
  if (!to) { say("sides-error", `A side needs a name, so it is still ${from}; type another name to rename it.`); input.value = from; return; }
  if (to !== from && sides().includes(to)) { say("sides-error", `There is already a side called ${to}; give each side its own name.`); input.value = from; return; }
  say("sides-error", "");
  for (const u of units) if (u.owner === from) u.owner = to;
  if (Array.isArray(extra.players)) extra.players = extra.players.map((p) => (p === from ? to : p));
  if (extra.priority === from) extra.priority = to;
  drawSides(); drawUnits(); drawOptions();
}

// What a unit the players left unnamed is called: its profile and tag ("Marsh Archer 14").
const unnamed = (u) => `${u.profile || "unit"} ${u.tag ?? ""}`.trim();

// The unit table's columns: the common ones, then the values each unit of this game carries (a hero's rating).
function columns() {
  return [...COLS, ...(game.unit_fields || []).map((f) => [f.key, "number", f.label, f])];
}

// The header row: the common columns as the page has them, then this game's own, each with its rule-book help.
function drawHeader() {
  const row = document.querySelector("#units thead tr");
  for (const th of row.querySelectorAll("th.unit-field")) th.remove();
  const last = row.lastElementChild;
  for (const f of game.unit_fields || []) {
    const th = document.createElement("th");
    th.className = "unit-field"; th.textContent = f.label; th.title = f.help;
    row.insertBefore(th, last);
  }
}

// Each side's total of a value the rules cap per side ("Rating: red 23, blue 24 of at most 23").
function sideTotals() {
  const out = [];
  for (const f of (game.unit_fields || []).filter((x) => x.side_most != null)) {
    const sums = sides().map((s) => [s, units.filter((u) => u.owner === s).reduce((a, u) => a + (Number(u[f.key]) || 0), 0)]);
    const over = sums.filter(([, n]) => n > f.side_most).map(([s]) => s);
    out.push(`${f.label}: ${sums.map(([s, n]) => `${s} ${n}`).join(", ")} (at most ${f.side_most} a side` +
      (over.length ? `; ${over.join(" and ")} ${over.length > 1 ? "are" : "is"} over)` : ")"));
  }
  return out.join(" · ");
}

function drawUnits() {
  drawHeader();
  const body = document.querySelector("#units tbody");
  body.innerHTML = "";
  const list = $("profiles");
  list.innerHTML = "";
  for (const p of new Set([...(game.example.units || []), ...units].map((u) => u.profile).filter(Boolean))) {
    const o = document.createElement("option"); o.value = p; list.append(o);
  }
  units.forEach((u, i) => {
    const tr = document.createElement("tr");
    tr.dataset.index = i;
    for (const [k, type, label, field] of columns()) {
      const td = document.createElement("td");
      td.dataset.label = label;
      let input;
      if (type === "side") {
        input = document.createElement("select");
        for (const s of sides()) { const o = document.createElement("option"); o.value = s; o.textContent = s; input.append(o); }
        input.value = u.owner;
      } else {
        input = document.createElement("input");
        input.type = type; input.value = u[k] ?? "";
        if (type === "number") input.step = field ? "1" : "any";
        if (field) {
          input.title = field.help;
          if (field.low != null) input.min = field.low;
          if (field.high != null) input.max = field.high;
        }
        if (k === "profile") input.setAttribute("list", "profiles");
        if (k === "name") input.placeholder = unnamed(u);
        if (k === "tag_in") input.placeholder = "as printed";
      }
      input.dataset.key = k; input.setAttribute("aria-label", `${label}, unit ${i + 1}`);
      input.addEventListener("change", () => {
        const v = input.value.trim();
        if (k === "profile" && "card" in u && u.card === u.profile) u.card = v;  // a game that reads the card by name
        const named = u.name !== undefined && u.name === unnamed(u);  // a name that is its profile and tag follows them
        if (v === "") delete u[k]; else u[k] = type === "number" ? Number(v) : v;
        if (named && (k === "tag" || k === "profile")) {
          u.name = unnamed(u);
          const name = tr.querySelector("input[data-key=name]");
          if (name) name.value = u.name;
        }
        if (k === "owner") drawSides();
        if (field || k === "owner") countUnits();
        if (k === "base_mm") refit();
        if (k === "tag" || k === "profile") {  // an unnamed unit's name follows its profile and tag
          const name = tr.querySelector("input[data-key=name]");
          if (name) name.placeholder = unnamed(u);
        }
        clearRowError(tr);
      });
      td.append(input); tr.append(td);
    }
    const td = document.createElement("td");
    const del = document.createElement("button");
    del.type = "button"; del.textContent = "✕"; del.title = "remove this unit"; del.setAttribute("aria-label", `Remove unit ${i + 1}`);
    del.addEventListener("click", () => { units.splice(i, 1); drawSides(); drawUnits(); refit(); });
    td.append(del); tr.append(td);
    body.append(tr);
  });
  countUnits();
}

function countUnits() {
  const totals = sideTotals();
  $("unit-count").textContent = `${counted(units.length, "unit")} on ${counted(sides().length, "side")}` +
    (totals ? ` · ${totals}` : "");
}

// A new unit: like the side's last one (its profile, base, mount and card), with the next free tag.
$("add-unit").addEventListener("click", () => {
  const last = units[units.length - 1] || { owner: "red", profile: "unit", base_mm: 32 };
  const tag = Math.max(9, ...units.map((u) => Number(u.tag) || 0)) + 1;
  const u = Object.fromEntries(Object.entries(last).filter(([k]) => !["tag", "name", "hex", "aboard", "at"].includes(k)));
  units.push({ ...u, tag });
  drawSides(); drawUnits();
});

// One mount for every tag: each unit's tag height, size and offset as the tag sheet prints them for its base.
$("apply-mount").addEventListener("click", async () => {
  const mount = $("mount").value;
  const bases = [...new Set(units.map((u) => Number(u.base_mm) || 32))];
  try {
    const r = await api(`/api/setup/mount?mount=${mount}&` + bases.map((b) => `base_mm=${b}`).join("&"));
    const byBase = new Map(r.bases.map((b, i) => [bases[i], b]));  // in the order asked
    for (const u of units) {
      const v = byBase.get(Number(u.base_mm) || 32);
      u.base_height_in = v.base_height_in; u.tag_in = v.tag_in; u.tag_offset_in = v.tag_offset_in;
    }
    drawUnits();
    const shown = { topper: "a topper", rim: "the rim", flat: "the base" }[mount];
    say("mount-msg", `Every unit's tag is on ${shown}: ${counted(units.length, "unit")} filled in as the tag sheet prints them.`, "ok");
  } catch (err) { say("mount-msg", err.message); }
});

// ---------------------------------------------------------------------------------------------------- the options

function getAt(obj, path) { return path.reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), obj); }
function setAt(obj, path, value) {
  let o = obj;
  for (const k of path.slice(0, -1)) { if (!o[k] || typeof o[k] !== "object") o[k] = {}; o = o[k]; }
  if (value === undefined) delete o[path[path.length - 1]]; else o[path[path.length - 1]] = value;
}

function drawOptions() {
  const box = $("options");
  box.innerHTML = "";
  if (!game.options.length) { box.textContent = `${game.title} has no options to set.`; return; }
  for (const f of game.options) {
    const id = "opt-" + f.path.join("-");
    const row = document.createElement("div");
    row.className = "option";
    const label = document.createElement("label");
    label.htmlFor = id; label.textContent = f.label;
    const now = getAt(extra, f.path) ?? f.default;
    let input;
    if (f.kind === "bool") {
      input = document.createElement("input"); input.type = "checkbox"; input.checked = Boolean(now);
    } else if (f.kind === "int") {
      input = document.createElement("input"); input.type = "number"; input.step = "1"; input.value = now;
      if (f.low != null) input.min = f.low;
      if (f.high != null) input.max = f.high;
    } else {
      input = document.createElement("select");
      const choices = f.kind === "side" ? [["", "Left to the rules"], ...sides().map((s) => [s, s])] : f.choices;
      for (const [v, words] of choices) { const o = document.createElement("option"); o.value = v; o.textContent = words; input.append(o); }
      input.value = now ?? "";
    }
    input.id = id; input.dataset.path = f.path.join(".");
    input.addEventListener("change", () => readOptions(extra, true));  // kept when the options are drawn again
    const help = document.createElement("p");
    help.className = "muted small"; help.textContent = f.help;
    const err = document.createElement("p");
    err.className = "field-error"; err.id = id + "-error";
    row.append(label, input, help, err);
    box.append(row);
  }
}

// The options as set on the page, into the roster; a sentence under each that is not a number in its range (quiet:
// the valid ones only, as they are typed, with no sentence that would move the page under the player's click).
function readOptions(out, quiet = false) {
  let ok = true;
  for (const f of game.options) {
    const input = $("opt-" + f.path.join("-"));
    if (quiet) { if (input.value.trim() === "" && f.kind === "int") continue; } else $(input.id + "-error").textContent = "";
    let v;
    if (f.kind === "bool") v = input.checked;
    else if (f.kind === "int") {
      v = Number(input.value);
      if (input.value.trim() === "" || !Number.isInteger(v) || (f.low != null && v < f.low) || (f.high != null && v > f.high)) {
        if (!quiet) $(input.id + "-error").textContent = `${f.label} must be a whole number from ${f.low} to ${f.high}.`;
        ok = false; continue;
      }
    } else v = input.value === "" ? undefined : input.value;
    setAt(out, f.path, v);
  }
  return ok;
}

// ---------------------------------------------------------------------------------------------------- saving

function say(id, text, cls) { const el = $(id); el.textContent = text; el.className = text ? (cls || "field-error") : "field-error"; }

function clearRowError(tr) { const next = tr.nextElementSibling; if (next && next.classList.contains("row-error")) next.remove(); }
function rowError(i, text) {
  const tr = document.querySelector(`#units tbody tr[data-index="${i}"]`);
  clearRowError(tr);
  const er = document.createElement("tr");
  er.className = "row-error";
  const td = document.createElement("td"); td.colSpan = columns().length + 1; td.className = "field-error"; td.textContent = text;
  er.append(td); tr.after(er);
}

// What a player could get wrong in the unit table, said under the unit's row.
function checkUnits() {
  for (const tr of document.querySelectorAll("#units tbody tr.row-error")) tr.remove();
  const seen = new Map();
  let ok = true;
  units.forEach((u, i) => {
    const who = `Unit ${i + 1}` + (u.name ? ` (${u.name})` : "");
    const bad = (t) => { rowError(i, t); ok = false; };
    if (!Number.isInteger(u.tag) || u.tag < 10 || u.tag > 586) return bad(`${who} needs the id printed on its tag, a whole number from 10 to 586 (0-9 are the anchors).`);
    if (seen.has(u.tag)) return bad(`${who} has tag ${u.tag}, like unit ${seen.get(u.tag) + 1}; every base needs its own tag.`);
    seen.set(u.tag, i);
    if (!u.profile) return bad(`${who} has no profile; give the name of its card or stat line.`);
    if (!(u.base_mm >= 10 && u.base_mm <= 200)) return bad(`${who}'s base must be 10 to 200 mm across, e.g. 25 or 32.`);
    if (u.base_height_in != null && !(u.base_height_in >= 0 && u.base_height_in <= 12)) return bad(`${who}'s tag height must be 0 to 12 inches; choose the mount and apply it.`);
    if (u.tag_in != null && !(u.tag_in >= 0.1 && u.tag_in <= 12)) return bad(`${who}'s tag size must be 0.1 to 12 inches, as printed.`);
    for (const f of game.unit_fields || []) {
      const v = u[f.key];
      const range = f.low != null && f.high != null ? ` from ${f.low} to ${f.high}`
        : f.low != null ? ` of ${f.low} or more` : f.high != null ? ` up to ${f.high}` : "";
      if (!Number.isInteger(v) || (f.low != null && v < f.low) || (f.high != null && v > f.high)) {
        return bad(`${who} needs its ${f.label}, a whole number${range}: ${f.help}`);
      }
    }
    return null;
  });
  if (!units.length) { say("units-error", "Each side needs at least one unit; add one."); ok = false; }
  return ok;
}

// The whole setup as a roster file: the units, the board or play area, the options.
function setupFile() {
  const out = { ...clone(extra), game: game.name, units: clone(units) };
  if (game.board === "hex") out.board = boardFile();
  else out.board = { width_in: Number($("board-w").value), depth_in: Number($("board-d").value) };
  if (Array.isArray(out.players)) out.players = out.players.filter((p) => sides().includes(p));
  out.roll_for_us = $("roll-for-us").checked;  // the software rolls the dice only when the players chose it
  return out;
}

// Where a sentence from the server belongs: under the board, a unit's row, the options, or the save button.
function place(message) {
  const tag = message.match(/\btag (\d+)\b/);
  if (tag) { const i = units.findIndex((u) => u.tag === Number(tag[1])); if (i >= 0) { rowError(i, message); return; } }
  if (/board|cell|hex|layout|map|battlefield/i.test(message)) { say(game.board === "hex" ? "board-error" : "open-error", message); return; }
  if (/option/i.test(message)) { say("options-error", message); return; }
  say("save-msg", message, "bad");
}

async function save(restart) {
  for (const id of ["open-error", "board-error", "units-error", "options-error", "save-msg"]) say(id, "");
  const out = setupFile();
  const fine = checkUnits() & readOptions(out);
  if (!fine) { say("save-msg", "Nothing was saved: fix what is said above.", "bad"); return; }
  try {
    const r = await api("/api/roster" + (restart ? "?restart=true" : ""), out, "PUT");
    const army = r.army || {};
    const note = (army.verdicts || []).filter((v) => v.outcome === "illegal").map((v) => v.message).join(" ");
    const what = restart ? `A new game of ${game.title} has started.`
      : r.game_goes_on ? `The game of ${game.title} in progress goes on with it.` : `${game.title} is on the live table.`;
    say("save-msg", `Saved: ${counted(r.units, "unit")} for ${r.owners.join(" and ")}. ${what}` + (note ? ` ${note}` : ""), note ? "bad" : "ok");
    const a = document.createElement("a"); a.href = "/"; a.textContent = "Play it on the live table"; $("save-msg").append(" ", a);
    if (r.game_goes_on) {  // the same units: a rematch is a new game only when the players ask for one
      const b = document.createElement("button");
      b.type = "button"; b.id = "restart-save"; b.textContent = "Start a new game instead";
      b.addEventListener("click", () => save(true));
      $("save-msg").append(" ", b);
    }
  } catch (err) {
    if (err.status === 409 && err.data && err.data.restart) {
      say("save-msg", err.message, "bad");
      const b = document.createElement("button");
      b.type = "button"; b.id = "restart-save"; b.textContent = "Start a new game with this setup";
      b.addEventListener("click", () => save(true));
      $("save-msg").append(" ", b);
      return;
    }
    place(err.message);
  }
}
$("save").addEventListener("click", () => save(false));

// ---------------------------------------------------------------------------------------------------- files

function download(obj, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([JSON.stringify(obj, null, 1) + "\n"], { type: "application/json" }));
  a.download = name;
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
$("setup-download").addEventListener("click", () => { const out = setupFile(); readOptions(out); download(out, `${game.name}-setup.json`); });
$("board-download").addEventListener("click", () => download(boardFile(), `${game.name}-board.json`));

async function readFile(input, what) {
  const file = input.files[0];
  input.value = "";
  if (!file) return null;
  try { return [file.name, JSON.parse(await file.text())]; } catch (e) {
    throw new Error(`${file.name} is not a ${what} file: it is not readable JSON. Choose a ${what} file you saved or downloaded.`);
  }
}

// A setup (roster) file: its game, its army, its board and options; a roster without a board keeps the page's.
$("setup-file").addEventListener("change", async (ev) => {
  say("setup-file-msg", "");
  try {
    const got = await readFile(ev.target, "setup");
    if (!got) return;
    const [name, obj] = got;
    const g = obj && typeof obj === "object" && games.find((x) => x.name === String(obj.game || "").toLowerCase());
    if (!g || !Array.isArray(obj.units)) {
      throw new Error(`${name} is not a setup file: it names no game this Tablesight has, or lists no units. Choose a setup or roster file you saved or downloaded.`);
    }
    const keep = g.board === "hex" && !obj.board && game && game.name === g.name ? boardFile() : null;
    chooseGame(g.name, keep ? { ...obj, board: keep } : obj);
    say("setup-file-msg", `Loaded ${name}: ${counted(units.length, "unit")} for ${g.title}.`, "ok");
  } catch (err) { say("setup-file-msg", err.message); }
});

// A board file: drawn, sized and checked with Save (the game's own board rules say what is wrong with it).
$("board-file").addEventListener("change", async (ev) => {
  say("board-error", "");
  try {
    const got = await readFile(ev.target, "board");
    if (!got) return;
    const [name, obj] = got;
    const file = obj && obj.board && !obj.hexagon && !obj.cells ? obj.board : obj;  // a setup file's board will do
    if (!file || typeof file !== "object" || (!Number.isInteger(file.hexagon) && !Array.isArray(file.cells))) {
      throw new Error(`${name} is not a board file: it has neither a hexagon size nor a list of cells. Choose a board file you saved or downloaded.`);
    }
    loadBoard(file, "");
    refit();
    say("board-error", `Loaded ${name}: ${counted(board.cells.size, "cell")}.`, "ok");
  } catch (err) { say("board-error", err.message); }
});

(async () => {
  const [list, now] = await Promise.all([api("/api/setup/games"), api("/api/setup")]);
  games = list.games;
  playArea = now.board;
  const roster = now.roster;
  const first = games.find((g) => roster && g.name === roster.game) || games.find((g) => g.name === now.game) || games[0];
  // the roster in use is where the page starts; else the game on the table (or the first) from its example
  chooseGame(first.name, roster && roster.game === first.name ? roster : undefined);
  document.body.dataset.ready = "1";
})();
