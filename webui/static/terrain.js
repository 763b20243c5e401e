// The terrain editor: pieces drawn by clicking their corners on the camera picture (the server maps the pixels to
// table inches through the table calibration) or on the top-down board; selected, moved, edited and deleted on
// either; saved as the terrain of the game on the table, or loaded from a terrain file.
import { boardView, drawBoardBase, drawTerrainPieces, inside } from "/static/overlay.js";
import { api, SAME_ORIGIN, SERVER_DOWN } from "/static/feed.js";

const canvas = document.getElementById("tboard");
const camera = document.getElementById("tcamera");
const msgEl = document.getElementById("terrain-msg");
const fileMsg = document.getElementById("tfile-msg");
const pictureMsg = document.getElementById("picture-msg");
let board = { w: 30, d: 22 };
let pieces = [];
let tool = "select", selected = null, drag = null;
let drawing = [], hover = null;        // top-down board: corners in inches
let drawingPx = [], hoverPx = null;    // camera picture: corners in picture pixels
let picture = null;                    // { bitmap, w, h }: the newest camera frame
let calibrated = false;
const projected = new Map();           // piece name -> { key, foot, top }: its corners in picture pixels

const view = () => boardView(canvas, board);
const snap = (v) => Math.round(v * 4) / 4; // quarter inches on the top-down board
const round2 = (v) => Math.round(v * 100) / 100;
const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function say(text, cls) { msgEl.textContent = text; msgEl.className = cls || "muted"; }

function outline(ctx, pts) {
  ctx.beginPath();
  pts.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
  ctx.closePath();
}

function draw() {
  drawBoard();
  drawCamera();
  project();
}

function drawBoard() {
  const ctx = canvas.getContext("2d");
  const v = view();
  drawBoardBase(ctx, v);
  drawTerrainPieces(ctx, v, pieces, selected);
  if (drawing.length) {
    ctx.beginPath();
    [...drawing, ...(hover ? [hover] : [])].forEach(([x, y], i) => { const [px, py] = v.toPx(x, y); i ? ctx.lineTo(px, py) : ctx.moveTo(px, py); });
    ctx.strokeStyle = "#ffd32a"; ctx.lineWidth = 2; ctx.setLineDash([6, 4]); ctx.stroke(); ctx.setLineDash([]);
    for (const [x, y] of drawing) { const [px, py] = v.toPx(x, y); ctx.fillStyle = "#ffd32a"; ctx.fillRect(px - 3, py - 3, 6, 6); }
  }
  canvas.dataset.pieces = String(pieces.length);
}

// ---- the camera picture ----------------------------------------------------------------------------------

const keyOf = (p) => JSON.stringify([p.polygon, p.height_in]);

function drawCamera() {
  if (!picture) return;
  const ctx = camera.getContext("2d");
  const shownPx = camera.getBoundingClientRect().width;
  const k = shownPx > 0 ? camera.width / shownPx : 1; // picture pixels per screen pixel: lines and letters as on the board
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.drawImage(picture.bitmap, 0, 0);
  ctx.setTransform(1, 0, 0, 1, 0.5, 0.5); // overlays in OpenCV's pixels: a pixel's centre at a whole number
  let drawn = 0;
  const labels = [];
  for (const p of pieces) {
    const pr = projected.get(p.name);
    if (!pr || pr.key !== keyOf(p)) continue;
    const mine = p.name === selected;
    const dx = drag && drag.onCamera && drag.piece === p ? drag.px[0] : 0, dy = drag && drag.onCamera && drag.piece === p ? drag.px[1] : 0;
    const foot = pr.foot.map(([x, y]) => [x + dx, y + dy]), top = pr.top.map(([x, y]) => [x + dx, y + dy]);
    ctx.setLineDash([]);
    outline(ctx, foot);
    ctx.fillStyle = mine ? "rgba(255,211,42,0.30)" : "rgba(90,200,250,0.22)";
    ctx.fill();
    ctx.lineWidth = (mine ? 3 : 2) * k; ctx.strokeStyle = mine ? "#ffd32a" : "#5ac8fa";
    ctx.stroke();
    if (p.height_in > 0) { // the top and the upright edges: the height typed, as the camera would see it
      ctx.lineWidth = 1.5 * k; ctx.setLineDash([5 * k, 4 * k]);
      outline(ctx, top); ctx.stroke();
      ctx.beginPath();
      foot.forEach(([x, y], i) => { ctx.moveTo(x, y); ctx.lineTo(top[i][0], top[i][1]); });
      ctx.stroke(); ctx.setLineDash([]);
    }
    for (const [x, y] of foot) { ctx.fillStyle = mine ? "#ffd32a" : "#5ac8fa"; ctx.fillRect(x - 3 * k, y - 3 * k, 6 * k, 6 * k); }
    labels.push([`${p.name} ${p.height_in}"`, top.reduce((a, b) => [a[0] + b[0] / top.length, a[1] + b[1] / top.length], [0, 0])]);
    drawn++;
  }
  ctx.font = `600 ${Math.round(12 * k)}px system-ui, sans-serif`;
  ctx.textAlign = "center";
  const placed = [];
  for (const [text, c] of labels) { // over every piece, and below a name already there: no name hides another
    const w = ctx.measureText(text).width + 6 * k, h = 15 * k;
    let x = c[0] - w / 2, y = c[1] - 10 * k;
    for (let tries = 0; tries < 6 && placed.some((b) => x < b[0] + b[2] && b[0] < x + w && y < b[1] + b[3] && b[1] < y + h); tries++) y += h + 2 * k;
    placed.push([x, y, w, h]);
    ctx.fillStyle = "rgba(0,0,0,0.65)"; ctx.fillRect(x, y, w, h);
    ctx.fillStyle = "#fff"; ctx.fillText(text, x + w / 2, y + 12 * k);
  }
  ctx.textAlign = "start";
  if (drawingPx.length) {
    ctx.beginPath();
    [...drawingPx, ...(hoverPx ? [hoverPx] : [])].forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    ctx.strokeStyle = "#ffd32a"; ctx.lineWidth = 2 * k; ctx.setLineDash([6 * k, 4 * k]); ctx.stroke(); ctx.setLineDash([]);
    for (const [x, y] of drawingPx) { ctx.fillStyle = "#ffd32a"; ctx.fillRect(x - 4 * k, y - 4 * k, 8 * k, 8 * k); }
  }
  camera.dataset.pieces = String(drawn);
}

// Each piece's foot and top in picture pixels, asked of the server (the calibration's own maths) whenever a piece
// has moved or changed height; a piece carried by a tag moves with its tag and is shown on the live page instead.
let projecting = false, projectAgain = false, projectFailed = false; // failed: not asked again until a new picture
async function project() {
  if (!picture || !calibrated || projectFailed) return;
  const todo = pieces.filter((p) => p.tag === undefined || p.tag === null).filter((p) => { const pr = projected.get(p.name); return !pr || pr.key !== keyOf(p); });
  if (!todo.length) return;
  if (projecting) { projectAgain = true; return; }
  projecting = true;
  try {
    const pts = [];
    for (const p of todo) for (const z of [0, Number(p.height_in) || 0]) for (const [x, y] of p.polygon) pts.push([x, y, z]);
    const r = await api("/api/terrain/in-picture", { points_in: pts });
    const [cw, ch] = r.image_size;
    if (cw !== picture.w || ch !== picture.h) {
      throw new Error(`The camera picture is ${picture.w}x${picture.h} pixels but the table was calibrated at ${cw}x${ch}; calibrate the table again on the Calibrate page.`);
    }
    let i = 0;
    for (const p of todo) {
      const n = p.polygon.length;
      const foot = r.points_px.slice(i, i + n), top = r.points_px.slice(i + n, i + 2 * n);
      i += 2 * n;
      if ([...foot, ...top].some((q) => !q)) continue;  // a corner the camera cannot see: drawn on the board only
      projected.set(p.name, { key: keyOf(p), foot, top });
    }
  } catch (err) { pictureMsg.textContent = err.message; pictureMsg.className = "bad"; projectFailed = true; }
  projecting = false;
  drawCamera();
  if (projectAgain) { projectAgain = false; project(); }
}

async function loadPicture() {
  let res;
  try { res = await fetch(`/api/live/frame.jpg?at=${Date.now()}`, { headers: SAME_ORIGIN, cache: "no-store" }); } catch (e) {
    pictureMsg.textContent = SERVER_DOWN; pictureMsg.className = "bad"; return;
  }
  if (!res.ok) {
    pictureMsg.textContent = "No camera picture has arrived yet; press New picture in a moment."; pictureMsg.className = "bad";
    return;
  }
  const bitmap = await createImageBitmap(await res.blob());
  picture = { bitmap, w: bitmap.width, h: bitmap.height };
  projectFailed = false;
  camera.width = picture.w; camera.height = picture.h;
  camera.dataset.picture = `${picture.w}x${picture.h}`;
  document.getElementById("camera-view").hidden = false;
  pictureMsg.textContent = "Click each corner where the piece stands on the table, then give its height under Piece.";
  pictureMsg.className = "muted";
  projected.clear(); // the table may have been calibrated again since: every piece is placed afresh
  draw();
}

// A click on the picture in its pixels as OpenCV counts them (a pixel's centre at a whole number; on the canvas a
// pixel spans i to i + 1, so its centre is half a pixel on: drawCamera shifts every overlay by that half back).
function cameraPx(ev) {
  const r = camera.getBoundingClientRect();
  return [((ev.clientX - r.left) * camera.width) / r.width - 0.5, ((ev.clientY - r.top) * camera.height) / r.height - 0.5];
}

function pieceAtPx([x, y]) {
  for (let i = pieces.length - 1; i >= 0; i--) {
    const pr = projected.get(pieces[i].name);
    if (pr && (inside(pr.foot, x, y) || inside(pr.top, x, y))) return pieces[i];
  }
  return null;
}

// Picture pixels -> table inches (the footprint: z = 0), by the server's calibration.
async function onTable(pointsPx) {
  const r = await api("/api/terrain/on-table", { image_size: [picture.w, picture.h], points_px: pointsPx });
  return r.points_in.map(([x, y]) => [round2(x), round2(y)]);
}

// Pointer events: their coordinates keep the fraction of a screen pixel (a mouse event's are whole), so a corner is
// placed as finely as the screen shows it.
camera.addEventListener("pointerdown", (ev) => {
  if (!picture) return;
  const p = cameraPx(ev);
  if (tool === "draw") { drawingPx.push(p); drawCamera(); return; }
  const hit = pieceAtPx(p);
  selected = hit ? hit.name : null;
  showPiece();
  if (hit) drag = { piece: hit, onCamera: true, from: p, px: [0, 0] };
  draw();
});
camera.addEventListener("pointermove", (ev) => {
  if (!picture) return;
  const p = cameraPx(ev);
  if (tool === "draw" && drawingPx.length) { hoverPx = p; drawCamera(); }
  if (drag && drag.onCamera) { drag.px = [p[0] - drag.from[0], p[1] - drag.from[1]]; drawCamera(); }
});
camera.addEventListener("dblclick", () => { if (tool === "draw") { drawingPx.pop(); finishCameraPiece(); } });

// A piece dragged on the picture moves by what its grab point moved on the table top.
async function dropOnCamera(d) {
  if (Math.hypot(d.px[0], d.px[1]) < 1) return;
  try {
    const [a, b] = await onTable([d.from, [d.from[0] + d.px[0], d.from[1] + d.px[1]]]);
    d.piece.polygon = d.piece.polygon.map(([x, y]) => [round2(x + b[0] - a[0]), round2(y + b[1] - a[1])]);
  } catch (err) { say(err.message, "bad"); }
  draw();
}

async function finishCameraPiece() {
  const corners = drawingPx;
  drawingPx = []; hoverPx = null;
  if (corners.length >= 3) {
    try { addPiece(await onTable(corners)); } catch (err) { say(err.message, "bad"); }
  } else if (corners.length) say("A piece needs at least 3 corners; click them, then double-click the last one.", "bad");
  draw();
}

// ---- the top-down board ----------------------------------------------------------------------------------

function toInches(ev) {
  const r = canvas.getBoundingClientRect();
  const [x, y] = view().toIn(((ev.clientX - r.left) * canvas.width) / r.width, ((ev.clientY - r.top) * canvas.height) / r.height);
  return [snap(x), snap(y)];
}

function pieceAt([x, y]) {
  for (let i = pieces.length - 1; i >= 0; i--) if (inside(pieces[i].polygon, x, y)) return pieces[i];
  return null;
}

function showPiece() {
  const p = pieces.find((q) => q.name === selected);
  document.getElementById("pname").value = p ? p.name : "";
  document.getElementById("pheight").value = p ? p.height_in : 2;
  document.getElementById("pclimb").checked = p ? p.climbable !== false : true;
  for (const box of document.querySelectorAll("#pkinds input")) box.checked = p ? (p.kind || []).includes(box.value) : box.value === "blocking";
}

function addPiece(polygon) {
  let n = pieces.length + 1;
  while (pieces.some((p) => p.name === `piece ${n}`)) n++;
  const kinds = [...document.querySelectorAll("#pkinds input:checked")].map((b) => b.value);
  const height = Number(document.getElementById("pheight").value);
  pieces.push({ name: `piece ${n}`, kind: kinds.length ? kinds : ["blocking"], polygon, height_in: height >= 0 ? height : 2, climbable: true });
  selected = `piece ${n}`;
  showPiece();
  say(`Drew piece ${n}; give its height and name under Piece, then save.`, "muted");
}

function finishPiece() {
  if (drawing.length >= 3) addPiece(drawing);
  drawing = []; hover = null;
  draw();
}

canvas.addEventListener("mousedown", (ev) => {
  const p = toInches(ev);
  if (tool === "draw") { drawing.push(p); drawBoard(); return; }
  const hit = pieceAt(p);
  selected = hit ? hit.name : null;
  showPiece();
  if (hit) drag = { piece: hit, from: p, orig: hit.polygon.map((q) => [...q]) };
  draw();
});
canvas.addEventListener("mousemove", (ev) => {
  const p = toInches(ev);
  if (tool === "draw" && drawing.length) { hover = p; drawBoard(); }
  if (drag && !drag.onCamera) {
    const dx = p[0] - drag.from[0], dy = p[1] - drag.from[1];
    drag.piece.polygon = drag.orig.map(([x, y]) => [snap(x + dx), snap(y + dy)]);
    drawBoard();
  }
});
window.addEventListener("mouseup", () => {
  const d = drag;
  drag = null;
  if (d && d.onCamera) dropOnCamera(d); else if (d) draw();
});
canvas.addEventListener("dblclick", () => { if (tool === "draw") { drawing.pop(); finishPiece(); } });
window.addEventListener("keydown", (ev) => {
  if (ev.target.tagName === "INPUT") return;
  if (ev.key === "Enter" && tool === "draw") { if (drawingPx.length) finishCameraPiece(); else finishPiece(); }
  if (ev.key === "Escape") { drawing = []; hover = null; drawingPx = []; hoverPx = null; draw(); }
  if ((ev.key === "Delete" || ev.key === "Backspace") && selected) removeSelected();
});

function removeSelected() { pieces = pieces.filter((p) => p.name !== selected); selected = null; showPiece(); draw(); }

// The tool in use is shown: its button pressed, the hint for it, the cursor.
const HINTS = {
  draw: "Drawing: click the corners on the picture or the board, then double-click the last one (or press Enter); Escape cancels.",
  select: "Selecting: click a piece to edit it on the right, drag it to move it; Delete removes it.",
};
function setTool(t) {
  tool = t; drawing = []; hover = null; drawingPx = []; hoverPx = null;
  for (const [id, name] of [["tool-draw", "draw"], ["tool-select", "select"]]) {
    const b = document.getElementById(id);
    b.classList.toggle("on", tool === name);
    b.setAttribute("aria-pressed", String(tool === name));
  }
  canvas.style.cursor = camera.style.cursor = tool === "draw" ? "crosshair" : "pointer";
  canvas.dataset.tool = tool;
  say(HINTS[tool]);
  draw();
}
document.getElementById("tool-draw").addEventListener("click", () => setTool("draw"));
document.getElementById("tool-select").addEventListener("click", () => setTool("select"));
setTool("select");
document.getElementById("delete").addEventListener("click", removeSelected);
document.getElementById("new-picture").addEventListener("click", loadPicture);

document.getElementById("piece").addEventListener("input", () => {
  const p = pieces.find((q) => q.name === selected);
  if (!p) return;
  const name = document.getElementById("pname").value.trim();
  if (name && !pieces.some((q) => q !== p && q.name === name)) { projected.delete(p.name); p.name = name; selected = name; }
  p.height_in = Number(document.getElementById("pheight").value) || 0;
  p.climbable = document.getElementById("pclimb").checked;
  p.kind = [...document.querySelectorAll("#pkinds input:checked")].map((b) => b.value);
  draw();
});

document.getElementById("save").addEventListener("click", async () => {
  try {
    const r = await api("/api/terrain", { pieces }, "PUT");
    say(r.pieces ? `Saved ${count(r.pieces, "piece")}; the game goes on with ${r.pieces === 1 ? "it" : "them"}.` : "Saved: no terrain on the table now.", "ok");
  } catch (err) { say(err.message, "bad"); }
});

// Load a terrain file from this computer: the server checks it and keeps it for this game, or says in one sentence
// under the button what is wrong with it (and keeps the terrain as it was).
document.getElementById("tfile").addEventListener("change", async (ev) => {
  const file = ev.target.files[0];
  ev.target.value = "";
  if (!file) return;
  fileMsg.textContent = "";
  const form = new FormData();
  form.append("file", file);
  let res;
  try { res = await fetch("/api/terrain/file", { method: "POST", headers: SAME_ORIGIN, body: form }); } catch (e) {
    fileMsg.textContent = SERVER_DOWN; return;
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    fileMsg.textContent = typeof data.detail === "string" ? data.detail : `${file.name} could not be loaded; try again.`;
    return;
  }
  pieces = data.terrain.pieces || [];
  selected = null; showPiece(); projected.clear();
  say(data.pieces ? `Loaded ${file.name} and saved ${count(data.pieces, "piece")}; the game goes on with ${data.pieces === 1 ? "it" : "them"}.`
    : `Loaded ${file.name}: no terrain on the table now.`, "ok");
  draw();
});

function sayGame(setup) {
  const el = document.getElementById("terrain-game");
  const title = setup.game ? (setup.titles || {})[setup.game] || setup.game : null;
  el.textContent = title
    ? `This is the terrain of ${title}; each game keeps its own, and choosing another game brings out that game's terrain.`
    : "No game is chosen yet; this terrain goes to the first open-table game chosen.";
}

(async () => {
  let setup;
  try { setup = await api("/api/setup"); } catch (err) { say(err.message, "bad"); return; }
  if (setup.board) board = setup.board;
  pieces = (setup.terrain && setup.terrain.pieces) || [];
  calibrated = !!setup.calibrated;
  sayGame(setup);
  window.tablesightTerrain = { get pieces() { return pieces; }, get picture() { return picture && [picture.w, picture.h]; } };
  if (calibrated) {
    document.getElementById("picture-bar").hidden = false;
    await loadPicture();
  } else {
    const no = document.getElementById("no-picture");
    no.hidden = false;
    no.innerHTML = 'The table is not calibrated yet, so clicks on the camera picture cannot be measured in inches: <a href="/calibrate">calibrate the table</a> first, or draw on the top-down board below.';
    document.getElementById("main-views").append(document.getElementById("board-part"));
  }
  draw();
})();
