// The live table page.
import { startTableView, eventClass, named } from "/static/table_view.js";
import { api, banner } from "/static/feed.js";
import { startRollCall } from "/static/roll_call.js";
import { startDice } from "/static/dice.js";
import { counted } from "/static/words.js";

const REFRESH_MS = 2000;
const STEP_GAP_MS = 1000;
const GROUP_FOLD = 8;
// A group of more declarable actions than this is folded until a unit is selected.
const DRAWN_LIMIT = 2000;

// Frames drawn, newest last, for `tablesight bench --web` (bench/web.py): [frame_index, captured_at
// (server wall clock when the frame was read, s), drawn_at (this page's wall clock right after the overlays
// were drawn, s), the server's pipeline ms].
const drawn = [];
window.tablesightDrawn = drawn;
function noteDrawn(msg) {
  if (typeof msg.captured_at !== "number") return;
  const pipelineMs = msg.status ? msg.status.latency_ms : null;
  drawn.push([msg.frame_index, msg.captured_at, (performance.timeOrigin + performance.now()) / 1000, pipelineMs]);
  if (drawn.length > DRAWN_LIMIT) drawn.splice(0, drawn.length - DRAWN_LIMIT);
}

// The recording state in the toolbar, small: the session folder being recorded, and why the last one closed.
function startRecordingNote() {
  const el = document.createElement("span");
  el.id = "recording";
  el.className = "muted small";
  const bar = document.querySelector(".toolbar");
  if (bar) bar.append(el);
  let shown = null;
  return (st) => {
    if (!st || st.recording === undefined) return;
    const text = (st.recording ? `● recording ${st.recording}` : "not recording") + (st.recording_note ? ` — ${st.recording_note}` : "");
    if (text === shown) return;
    shown = text;
    el.textContent = text;
    el.dataset.recording = st.recording || "";
  };
}

export async function startLive({ wsPath }) {
  const declare = startDeclare();
  const dice = startDice({ onRuled() { declare.answered(); } });
  declare.onDeclared(() => dice.refresh());
  document.addEventListener("tablesight:undone", () => { dice.refresh(); declare.refresh(); });  // the game panel's Undo
  const recording = startRecordingNote();
  const rollCall = startRollCall();
  startTableView({
    wsPath, selectPath: "/api/live/select", askPath: "/api/live/ask", eventsPath: "/api/live/events", skippedPath: "/api/live/skipped",
    declarePath: "/api/live/declare",
    onPoint(x, y, selected) { declare.at(x, y, selected); },
    onSelect(unit) { declare.select(unit); },
    onFrame(msg) { if (msg) { noteDrawn(msg); declare.frame(msg); recording(msg.status); rollCall(msg); dice.frame(msg); } },
  });
  const select = document.getElementById("game");
  const info = document.getElementById("roster-info");
  const setup = await api("/api/setup");
  const titles = setup.titles || {};
  declare.titles(titles);
  for (const g of setup.games) {
    const o = document.createElement("option");
    o.value = g; o.textContent = titles[g] || g; o.selected = g === setup.game;
    select.append(o);
  }
  if (!setup.game) { const o = document.createElement("option"); o.value = ""; o.textContent = "(no game: measuring only)"; o.selected = true; select.prepend(o); }
  info.textContent = setup.roster ? `Roster: ${counted(setup.roster.units.length, "unit")} for ${titles[setup.roster.game] || setup.roster.game}` : "No roster yet";
  document.getElementById("new-game-link").hidden = Boolean(setup.roster);  // no roster: the new-game page is the way in
  let ruled = select.value;
  select.addEventListener("change", async () => {
    if (ruled && !confirm(`Rule ${select.options[select.selectedIndex].textContent} instead? The game in progress ends and a new one starts.`)) {
      select.value = ruled;
      return;
    }
    try { await api("/api/live/game", { game: select.value }); ruled = select.value; banner(""); declare.refresh(); } catch (err) { banner(err.message, "bad"); }
  });
}

// The Declare panel: the actions the camera cannot see (setup, paths, attacks, ending an activation), as buttons
// grouped by kind and filtered to the selected unit; the phase and whose turn; the verdicts of the last one.
function startDeclare() {
  const card = document.getElementById("declare");
  const selection = document.getElementById("selection");
  if (card && selection) selection.after(card); // into the side panel, under the selection
  const diceCard = document.getElementById("dice");
  if (diceCard && selection) selection.after(diceCard); // the dice the table waits for, above the actions
  const statusEl = document.getElementById("declare-status");
  const listEl = document.getElementById("declare-actions");
  const msgEl = document.getElementById("declare-msg");
  const resultEl = document.getElementById("declare-result");
  let unit = null, busy = false, shown = "", timer = null, titles = {}, declared = () => {};
  let point = null;  // a table point (inches) clicked on the board: the actions there are listed instead
  const opened = new Set(), finds = new Map();  // by group kind: a fold the player opened, the words typed to find

  function statusText(st, key) {
    const game = titles[key] || key;
    if (!st) return game ? `${game}: no game state` : "No game is being ruled.";
    const parts = [game];
    if (st.phase) parts.push(`phase: ${st.phase.replace(/_/g, " ")}`);
    if (st.round !== undefined) parts.push(`round ${st.round}`);
    else if (st.turn !== undefined) parts.push(`turn ${st.turn}`);
    if (st.player) parts.push(`${st.player} to act`);
    return parts.join(" · ");
  }

  function render(r) {
    const key = JSON.stringify(r);
    if (key === shown) return;
    shown = key;
    statusEl.textContent = statusText(r.status, r.game);
    msgEl.textContent = r.message || "";
    listEl.innerHTML = "";
    if (point) {  // the actions at the clicked point, and the way back to all of them
      const here = document.createElement("p");
      here.className = "declare-here";
      here.textContent = `At (${point[0].toFixed(1)}, ${point[1].toFixed(1)})${unit === null || unit === undefined ? "" : " for the selected unit"}: `;
      const back = document.createElement("button");
      back.type = "button";
      back.textContent = "Show every action";
      back.addEventListener("click", () => { point = null; shown = ""; refresh(); });
      here.append(back);
      listEl.append(here);
    }
    for (const g of r.groups || []) {
      const h = document.createElement("h4");
      h.textContent = `${g.title} (${g.actions.length})`;
      const box = document.createElement("div");
      box.className = "declare-group";
      box.dataset.kind = g.kind;
      // a long list (a deploy phase: every unit in every place) is folded: pick by clicking a unit on the table,
      // when its actions are units' (Magni's lead actions name none: clicking a unit would not narrow them)
      let holder = box;
      if (g.actions.length > GROUP_FOLD && (unit === null || unit === undefined)) {
        const fold = document.createElement("details");
        fold.className = "declare-fold";
        fold.open = opened.has(g.kind);  // the page's next reading of the actions keeps it as the player left it
        fold.addEventListener("toggle", () => { if (fold.open) opened.add(g.kind); else opened.delete(g.kind); });
        const sum = document.createElement("summary");
        const ofUnits = g.actions.some((a) => a.action.unit !== null && a.action.unit !== undefined);
        sum.textContent = `Show all ${g.actions.length}` + (ofUnits ? ", or click a unit on the table to see only its actions" : "");
        fold.append(sum, finder(g.kind, fold));
        box.append(fold);
        holder = fold;
      }
      for (const a of g.actions) {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = a.label;
        b.dataset.kind = a.action.kind;
        if (a.legal === false) {  // offered so the players may try it and read why the rules refuse it
          b.classList.add("refused");
          b.title = "The rules would refuse this now; declare it to read why.";
        }
        b.disabled = busy;
        b.addEventListener("click", () => send(a.action, a.label));
        holder.append(b);
      }
      listEl.append(h, box);
    }
    for (const fold of listEl.querySelectorAll("details.declare-fold")) narrow(fold);
    listEl.dataset.count = String(r.count || 0);
    listEl.dataset.legal = String(r.legal ?? r.count ?? 0);
  }

  // A long group's search box: only the actions whose words hold every word typed ("ember tide", "0, -1").
  function finder(kind, fold) {
    const input = document.createElement("input");
    input.type = "search";
    input.className = "declare-find";
    input.placeholder = "Find: a unit, a side or a place";
    input.setAttribute("aria-label", "Find an action");
    input.value = finds.get(kind) || "";
    input.addEventListener("input", () => { finds.set(kind, input.value); narrow(fold); });
    return input;
  }
  function narrow(fold) {
    const input = fold.querySelector("input.declare-find");
    const words = (input ? input.value : "").toLowerCase().split(/\s+/).filter(Boolean);
    let left = 0;
    for (const b of fold.querySelectorAll("button")) {
      const text = b.textContent.toLowerCase();
      b.hidden = !words.every((w) => text.includes(w));
      if (!b.hidden) left += 1;
    }
    fold.dataset.shown = String(left);
  }

  let askedAt = -Infinity;  // when the actions were last asked for (performance.now(), ms)
  async function refresh() {
    if (busy) return;
    askedAt = performance.now();
    try {
      const q = new URLSearchParams();
      if (unit !== null && unit !== undefined) q.set("unit", String(unit));
      if (point) q.set("at", `${point[0].toFixed(3)},${point[1].toFixed(3)}`);
      render(await api("/api/live/actions" + (q.toString() ? `?${q}` : "")));
    } catch (err) {
      msgEl.textContent = err.message;
    }
  }

  function showResult(label, out, error) {
    resultEl.innerHTML = "";
    const head = document.createElement("p");
    const waits = !error && (out.verdicts || []).some((v) => v.outcome === "waiting");  // the dice panel asks for the roll
    head.className = `head ${error ? "illegal" : waits ? "waiting" : eventClass({ outcome: out.outcome })}`;
    head.textContent = error ? `${label}: ${error}` : `${label}: ${waits ? "waiting for the dice" : out.outcome}`;
    resultEl.append(head);
    for (const v of (out && out.verdicts) || []) {
      const p = document.createElement("p");
      p.className = v.outcome === "waiting" ? "waiting" : eventClass(v);
      p.dataset.rule = v.rule;
      p.textContent = named(v.message);
      resultEl.append(p);
    }
    resultEl.dataset.outcome = error ? "error" : waits ? "waiting" : out.outcome;
  }

  async function send(action, label) {
    if (busy) return;
    busy = true;
    for (const b of listEl.querySelectorAll("button")) b.disabled = true;
    try {
      const out = await api("/api/live/declare", { action });
      showResult(label, out);
      if (out.outcome !== "illegal") point = null;  // the point's action was taken: the unit's whole list again
    } catch (err) {
      showResult(label, null, err.message);
    }
    busy = false;
    shown = "";
    declared();
    await refresh();
  }

  // msg.game_step: the game changed at a frame, so may what can be declared. Asked at once, but at most once every
  // STEP_GAP_MS (the list costs the server ~50 ms; a game with units on the move changes most seconds)
  let gameStep = null, stepTimer = null;
  function frame(msg) {
    const sel = msg.selected === undefined ? null : msg.selected;
    const changed = msg.game_step !== undefined && gameStep !== null && msg.game_step !== gameStep;
    if (msg.game_step !== undefined) gameStep = msg.game_step;
    if (sel !== unit) { unit = sel; point = null; refresh(); }
    else if (changed && stepTimer === null) {
      stepTimer = setTimeout(() => { stepTimer = null; refresh(); }, Math.max(0, askedAt + STEP_GAP_MS - performance.now()));
    }
  }

  // The page selected a unit (null: none): its own actions are listed at once, with no frame to wait for.
  function select(sel) {
    if (sel === unit) return;
    unit = sel; point = null; refresh();
  }

  // A click on the board where no unit stands: what could be declared there (for the selected unit, if any).
  function at(x, y, selected) {
    point = [x, y];
    if (selected !== undefined) unit = selected;
    shown = "";
    refresh();
    card.scrollIntoView({ block: "nearest" });
  }

  // first shown once the games' titles are known (`titles`, from /api/setup): not a moment with the game's key
  // the poll is for what changes with the units' places alone (ranges, targets); skipped just after an ask
  timer = setInterval(() => { if (!document.hidden && performance.now() - askedAt >= REFRESH_MS / 2) refresh(); }, REFRESH_MS);
  // the roll it waited for was answered (the dice panel shows the verdict): the waiting line goes, the list moves on
  function answered() {
    if (resultEl.dataset.outcome === "waiting") { resultEl.innerHTML = ""; resultEl.dataset.outcome = ""; }
    refresh();
  }

  return { refresh, frame, answered, at, select, titles(t) { titles = t; shown = ""; refresh(); }, onDeclared(f) { declared = f; }, stop() { clearInterval(timer); } };
}
