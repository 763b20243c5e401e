// The terrain editor: draw, select, move and delete polygons on the top-down board; save as terrain JSON.
import { boardView, drawBoardBase, drawTerrainPieces, inside } from "/static/overlay.js";
import { api } from "/static/feed.js";

const canvas = document.getElementById("tboard");
const msgEl = document.getElementById("terrain-msg");
let board = { w: 30, d: 22 };
let pieces = [];
let tool = "select", selected = null, drawing = [], drag = null, hover = null;

const view = () => boardView(canvas, board);
const snap = (v) => Math.round(v * 4) / 4; // quarter inches

function draw() {
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

function finishPiece() {
  if (drawing.length >= 3) {
    let n = pieces.length + 1;
    while (pieces.some((p) => p.name === `piece ${n}`)) n++;
    const kinds = [...document.querySelectorAll("#pkinds input:checked")].map((b) => b.value);
    pieces.push({ name: `piece ${n}`, kind: kinds.length ? kinds : ["blocking"], polygon: drawing, height_in: Number(document.getElementById("pheight").value) || 2, climbable: true });
    selected = `piece ${n}`;
    showPiece();
  }
  drawing = []; hover = null;
  draw();
}

canvas.addEventListener("mousedown", (ev) => {
  const p = toInches(ev);
  if (tool === "draw") { drawing.push(p); draw(); return; }
  const hit = pieceAt(p);
  selected = hit ? hit.name : null;
  showPiece();
  if (hit) drag = { piece: hit, from: p, orig: hit.polygon.map((q) => [...q]) };
  draw();
});
canvas.addEventListener("mousemove", (ev) => {
  const p = toInches(ev);
  if (tool === "draw" && drawing.length) { hover = p; draw(); }
  if (drag) {
    const dx = p[0] - drag.from[0], dy = p[1] - drag.from[1];
    drag.piece.polygon = drag.orig.map(([x, y]) => [snap(x + dx), snap(y + dy)]);
    draw();
  }
});
window.addEventListener("mouseup", () => { drag = null; });
canvas.addEventListener("dblclick", () => { if (tool === "draw") { drawing.pop(); finishPiece(); } });
window.addEventListener("keydown", (ev) => {
  if (ev.target.tagName === "INPUT") return;
  if (ev.key === "Enter" && tool === "draw") finishPiece();
  if (ev.key === "Escape") { drawing = []; hover = null; draw(); }
  if ((ev.key === "Delete" || ev.key === "Backspace") && selected) removeSelected();
});

function removeSelected() { pieces = pieces.filter((p) => p.name !== selected); selected = null; showPiece(); draw(); }

// The tool in use is shown: its button pressed, the hint for it, the cursor.
const HINTS = {
  draw: "Drawing: click the corners, then double-click (or press Enter) to close the piece; Escape cancels.",
  select: "Selecting: click a piece to edit it on the right, drag it to move it; Delete removes it.",
};
function setTool(t) {
  tool = t; drawing = []; hover = null;
  for (const [id, name] of [["tool-draw", "draw"], ["tool-select", "select"]]) {
    const b = document.getElementById(id);
    b.classList.toggle("on", tool === name);
    b.setAttribute("aria-pressed", String(tool === name));
  }
  canvas.style.cursor = tool === "draw" ? "crosshair" : "pointer";
  canvas.dataset.tool = tool;
  msgEl.textContent = HINTS[tool]; msgEl.className = "muted";
  draw();
}
document.getElementById("tool-draw").addEventListener("click", () => setTool("draw"));
document.getElementById("tool-select").addEventListener("click", () => setTool("select"));
setTool("select");
document.getElementById("delete").addEventListener("click", removeSelected);

document.getElementById("piece").addEventListener("input", () => {
  const p = pieces.find((q) => q.name === selected);
  if (!p) return;
  const name = document.getElementById("pname").value.trim();
  if (name && !pieces.some((q) => q !== p && q.name === name)) { p.name = name; selected = name; }
  p.height_in = Number(document.getElementById("pheight").value) || 0;
  p.climbable = document.getElementById("pclimb").checked;
  p.kind = [...document.querySelectorAll("#pkinds input:checked")].map((b) => b.value);
  draw();
});

document.getElementById("save").addEventListener("click", async () => {
  try {
    const r = await api("/api/terrain", { pieces }, "PUT");
    msgEl.textContent = `Saved ${r.pieces} pieces; the game goes on with them.`; msgEl.className = "ok";
  } catch (err) { msgEl.textContent = err.message; msgEl.className = "bad"; }
});

(async () => {
  const setup = await api("/api/setup");
  if (setup.board) board = setup.board;
  pieces = (setup.terrain && setup.terrain.pieces) || [];
  window.tablesightTerrain = { get pieces() { return pieces; } };
  draw();
})();
