// The roster editor: tag id -> unit, profile, owner and base; the game checks the army.
import { api, SERVER_DOWN } from "/static/feed.js";

const body = document.querySelector("#roster-table tbody");
const msg = document.getElementById("roster-msg");
const COLS = [["tag", "number"], ["name", "text"], ["profile", "text"], ["owner", "text"], ["base_mm", "number"], ["base_height_in", "number"], ["tag_in", "number"]];

// base_height_in is the tag face's height above the base's underside (1.85 on a topper, 0.125 flat on a base);
// tag_in the printed tag's black square (empty: what the tag sheet prints for the base): the pipeline tells a unit
// on a ruin floor from one on the table by it, so it must be the size printed.
const LABELS = { tag: "Tag", name: "Name", profile: "Profile", owner: "Owner", base_mm: "Base (mm)", base_height_in: "Tag height (in)", tag_in: "Tag size (in)" };
const HINTS = { base_height_in: "the tag face's height above the base's underside, as the tag sheet prints it (1.85 on a topper)",
  tag_in: "the printed tag's black square side, as the tag sheet prints it (empty: the flat tag printed for the base)" };

function addRow(u = {}) {
  const tr = document.createElement("tr");
  for (const [key, type] of COLS) {
    const td = document.createElement("td");
    td.dataset.label = LABELS[key] || key;
    const input = document.createElement("input");
    input.type = type; input.dataset.key = key; input.setAttribute("aria-label", LABELS[key] || key); input.value = u[key] ?? (key === "base_mm" ? 32 : key === "base_height_in" ? 0.125 : "");
    if (type === "number") input.step = "any";
    if (HINTS[key]) input.title = HINTS[key];
    if (key === "tag_in") input.placeholder = "as printed";
    td.append(input); tr.append(td);
  }
  const td = document.createElement("td");
  const del = document.createElement("button");
  del.type = "button"; del.textContent = "✕"; del.title = "remove";
  del.addEventListener("click", () => tr.remove());
  td.append(del); tr.append(td);
  tr.dataset.extra = JSON.stringify(Object.fromEntries(Object.entries(u).filter(([k]) => !COLS.some(([c]) => c === k))));
  body.append(tr);
}

function roster() {
  const units = [...body.querySelectorAll("tr")].map((tr) => {
    const u = JSON.parse(tr.dataset.extra || "{}");
    for (const input of tr.querySelectorAll("input")) {
      const key = input.dataset.key;
      if (input.value === "") continue;
      u[key] = input.type === "number" ? Number(input.value) : input.value;
    }
    return u;
  });
  return { ...extra, game: document.getElementById("rgame").value, units };
}

// The roster file's other top-level keys (a game's cards, board, players, limits), kept as loaded and saved back.
let extra = {};
function load(r) {
  extra = Object.fromEntries(Object.entries(r || {}).filter(([k]) => k !== "game" && k !== "units"));
  body.innerHTML = "";
  const sel = document.getElementById("rgame");
  if (r && r.game && [...sel.options].some((o) => o.value === String(r.game).toLowerCase())) sel.value = String(r.game).toLowerCase();
  for (const u of (r && r.units) || []) addRow(u);
  if (!r || !(r.units || []).length) addRow();
}

// Load a roster file from this computer: read here, shown in the table, checked by the game, saved with Save.
document.getElementById("rfile").addEventListener("change", async (ev) => {
  const file = ev.target.files[0];
  ev.target.value = "";
  if (!file) return;
  let obj;
  try { obj = JSON.parse(await file.text()); } catch (e) {
    fail(new Error(`${file.name} is not a roster file: it is not readable JSON. Choose the roster.json you saved or downloaded.`));
    return;
  }
  if (!obj || typeof obj !== "object" || !Array.isArray(obj.units)) {
    fail(new Error(`${file.name} is not a roster file: it has no list of units. Choose the roster.json you saved or downloaded.`));
    return;
  }
  load(obj);
  try { show(await api("/api/roster/check", roster()), `Loaded ${file.name}; the roster reads well`); } catch (err) { fail(err); }
});

// The game's check of the army, in words: one line per verdict ("legal: Red's team rating is 12 of 15").
function show(r, verb) {
  const army = r.army || {};
  msg.className = army.legal === false ? "bad" : "ok";
  msg.textContent = `${verb}: ${r.units} units for ${r.owners.join(" and ")}` +
    (army.legal === false ? `, but ${army.title || "the game"} does not accept the army as it is.` : ".");
  const box = document.getElementById("army");
  box.innerHTML = "";
  box.hidden = !(army.verdicts || []).length;
  for (const v of army.verdicts || []) {
    const p = document.createElement("p");
    p.className = v.outcome === "illegal" ? "illegal" : v.outcome === "too close to call" ? "too-close" : "legal";
    p.textContent = `${v.outcome}: ${v.message}`;
    box.append(p);
  }
}
function fail(err) {
  msg.className = "bad"; msg.textContent = err.message;
  const box = document.getElementById("army"); box.innerHTML = ""; box.hidden = true;
}

document.getElementById("add").addEventListener("click", () => addRow());
document.getElementById("check").addEventListener("click", async () => {
  try { show(await api("/api/roster/check", roster()), "The roster reads well"); } catch (err) { fail(err); }
});
// Saving keeps the running game; a roster that changes the units would start it afresh, so the server asks first
// (409): the sentence and a button to start a new game with it.
async function save(restart) {
  try {
    show(await api("/api/roster" + (restart ? "?restart=true" : ""), roster(), "PUT"), restart ? "Saved; a new game has started" : "Saved; the game goes on");
  } catch (err) {
    fail(err);
    if (err.status === 409 && err.data && err.data.restart) {
      const b = document.createElement("button");
      b.type = "button"; b.id = "restart-save"; b.textContent = "Start a new game with this roster";
      b.addEventListener("click", () => save(true));
      msg.append(" ", b);
    }
  }
}
document.getElementById("rsave").addEventListener("click", () => save(false));

(async () => {
  const setup = await api("/api/setup");
  const sel = document.getElementById("rgame");
  for (const g of setup.games) { const o = document.createElement("option"); o.value = g; o.textContent = (setup.titles || {})[g] || g; sel.append(o); }
  const r = setup.roster;
  load(r);
  // the game the table rules (a recorded session's own, or --game), which a save keeps; else the roster's
  if (setup.game) sel.value = setup.game;
  else if (!sel.value) sel.value = setup.games[0] || "";
  let shown = sel.value;
  // another game chosen: a hex game brings its standard board (a board of the game before would not do), an open
  // table drops a hex board; its other settings are the roster's own (the new-game page, /setup, sets them all)
  sel.addEventListener("change", async () => {
    if (sel.value === shown) return;
    shown = sel.value;
    let games;
    try { games = (await api("/api/setup/games")).games; } catch (err) { fail(err); return; }
    const g = games.find((x) => x.name === sel.value);
    const hexBoard = extra.board && typeof extra.board === "object" && ("layout" in extra.board || "cells" in extra.board);
    if (g && g.board === "hex" && g.boards.length) extra.board = JSON.parse(JSON.stringify(g.boards[0].board));
    else if (g && g.board !== "hex" && hexBoard) delete extra.board;
  });
})();

// The tag sheet's mount shows only its own fields (pin height for a topper, feet clearance for a rim tag); a
// field hidden keeps what was typed but is not sent.
const mountSel = document.getElementById("tmount");
function showMountFields() {
  for (const el of document.querySelectorAll("form.printable [data-mount]")) {
    const mine = el.dataset.mount === mountSel.value;
    el.hidden = !mine;
    if (el.tagName === "INPUT") el.disabled = !mine;
  }
}
if (mountSel) { mountSel.addEventListener("change", showMountFields); showMountFields(); }

// The printables: downloaded by the page, so that a wrong size is a sentence under the form, not a page of JSON.
for (const form of document.querySelectorAll("form.printable")) {
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const err = form.querySelector(".form-error");
    err.textContent = "";
    const params = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (String(v).trim() !== "") params.append(k, String(v).trim());
    let res;
    try { res = await fetch(`${form.getAttribute("action")}?${params}`); } catch (e) { err.textContent = SERVER_DOWN; return; }
    if (!res.ok) {
      const data = await res.json().catch(() => ({}));
      err.textContent = typeof data.detail === "string" ? data.detail : `The server could not make the PDF (status ${res.status}); check the fields.`;
      return;
    }
    const blob = await res.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = (res.headers.get("Content-Disposition") || "").match(/filename="([^"]+)"/)?.[1] || "tablesight.pdf";
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    form.dataset.downloaded = a.download;
  });
}
