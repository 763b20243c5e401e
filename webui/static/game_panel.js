// The game panel: where the game stands, what is left to do, each unit's state, the score and the winner banner,
// as the game says them (Game.panel, GET /api/live/panel or /api/replay/NAME/panel). Fetched every REFRESH_MS
// while the page is shown and at once when asked (`refreshGamePanel`, after a declaration).
import { api } from "/static/feed.js";
import { sentence } from "/static/words.js";

const REFRESH_MS = 1500;
let refreshNow = () => {};

export function refreshGamePanel() { refreshNow(); }

// path: where the panel comes from; undoPath: where "undo" is declared (the live page's /api/live/declare), or none.
export function startGamePanel(path, undoPath = null) {
  const card = document.getElementById("game-panel");
  if (!card) return;
  const src = path || card.dataset.path;
  const el = (id) => document.getElementById(id);
  let shown = "", timer = null, busy = false;

  function sideChip(side, colours) {
    const chip = document.createElement("span");
    chip.className = "gp-side";
    chip.textContent = sentence(side);
    const c = colours && colours[side];
    if (c) chip.style.borderColor = c;
    return chip;
  }

  let undoneAt = null;  // the panel as the last Undo left it: its message goes once the game moves on from there
  function render(r) {
    const key = JSON.stringify(r);
    if (key === shown) return;
    if (undoneAt === "") undoneAt = key;  // the first panel after the Undo
    else if (undoneAt !== null) {
      const msg = el("gp-undo-msg");
      if (msg) msg.textContent = "";
      undoneAt = null;
    }
    shown = key;
    const p = r.panel;
    card.hidden = !p && !r.message;
    // the Declare card's own status line says less than the panel's headline: one of them is enough
    const declareStatus = document.getElementById("declare-status");
    if (declareStatus) declareStatus.hidden = Boolean(p);
    el("gp-title").textContent = r.title || "Game";
    if (!p) {
      el("gp-headline").textContent = r.message || "";
      for (const id of ["gp-score", "gp-todo", "gp-unit-rows"]) el(id).replaceChildren();
      el("gp-units").hidden = true;
      el("gp-winner").hidden = true;
      el("gp-victory").textContent = "";
      return;
    }
    el("gp-headline").textContent = sentence(p.headline || (p.over ? "The game is over." : ""));
    const win = el("gp-winner");
    win.hidden = !(p.winner || p.over);
    win.textContent = p.winner ? sentence(p.winner) : p.over ? "The game is over." : "";
    win.classList.toggle("gp-draw", !p.winner);
    const score = el("gp-score");
    score.replaceChildren();
    for (const s of p.score || []) {
      const row = document.createElement("div");
      row.className = "gp-score-row";
      row.dataset.side = s.side;
      const words = document.createElement("span");
      words.textContent = s.words;
      row.append(sideChip(s.side, r.colours), words);
      score.append(row);
    }
    const todo = el("gp-todo");
    todo.replaceChildren();
    for (const line of p.to_do || []) {
      const li = document.createElement("li");
      li.textContent = sentence(line);
      todo.append(li);
    }
    const units = p.units || [];
    el("gp-units").hidden = units.length === 0;
    const here = units.filter((u) => !u.gone).length;
    // the game's count (destroyed, in reserve or aboard is out of play), not the camera's (the Units card says that)
    el("gp-units-title").textContent = `Units: ${here} in play` + (units.length > here ? `, ${units.length - here} out of play` : "");
    const rows = el("gp-unit-rows");
    rows.replaceChildren();
    for (const u of units) {
      const tr = document.createElement("tr");
      tr.dataset.unit = String(u.unit);
      if (u.gone) tr.className = "gp-gone";
      const name = document.createElement("td");
      name.append(u.side ? sideChip(u.name, { [u.name]: r.colours && r.colours[u.side] }) : document.createTextNode(u.name));
      const words = document.createElement("td");
      words.textContent = u.words + (u.left ? ` · left: ${u.left}` : "");
      tr.append(name, words);
      rows.append(tr);
    }
    el("gp-victory").textContent = p.victory ? `To win: ${p.victory}` : "";
  }

  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try { render(await api(src)); } catch (err) { /* the page's banner already says when the server is down */ }
    finally { busy = false; }
  }
  // Undo (the live page only: a replay plays what was recorded): the game goes on from before the last declaration
  const undoBox = el("gp-undo-box");
  if (undoBox && undoPath) {
    undoBox.hidden = false;
    el("gp-undo").addEventListener("click", async () => {
      const msg = el("gp-undo-msg");
      try {
        const out = await api(undoPath, { action: { kind: "undo" } });
        const v = (out.verdicts || []).find((x) => x.rule === "tablesight.undo") || (out.verdicts || [])[0];
        msg.textContent = v ? v.message : "";
        msg.className = `small ${v && v.outcome === "illegal" ? "illegal" : "legal"}`;
      } catch (err) { msg.textContent = err.message; msg.className = "small illegal"; }
      shown = "";
      undoneAt = "";
      refresh();
      document.dispatchEvent(new CustomEvent("tablesight:undone"));
    });
  }
  refreshNow = () => { refresh(); };
  refresh();
  timer = setInterval(refresh, REFRESH_MS);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  return () => clearInterval(timer);
}
