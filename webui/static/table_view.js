import { drawCamera, drawBoard, boardView, imagePoint, layoutSize, unitAtPixel, unitAtInches, cellAt } from "/static/overlay.js";
import { connectFeed, api, banner } from "/static/feed.js";
import { startLayers } from "/static/layers.js";
import { counted, sentence } from "/static/words.js";
import { refreshGamePanel } from "/static/game_panel.js";

/* A ± in inches: three decimals under 0.005" so a real, small ± never reads 0.00. */
function fmtPm(pm) {
  const v = Number(pm || 0);
  return v > 0 && v < 0.005 ? v.toFixed(3) : v.toFixed(2);
}
// The camera canvas, the board canvas, the side panel and the clicks: shared by the live and replay pages.

const EVENT_LIMIT = 200;
const PANEL_EVERY_MS = 250;
// The side panel's figures (fps, latency, frame) are rewritten at most this often.
const BOARD_EVERY_MS = 100;
// A frame redraws the board at most this often (the newest positions, a timer drawing the last change): with bases
// moving every frame, a board drawn 30 times a second cost the browser ~2.5 ms of its ~17 a frame (docs/bench.md).
// A player's own change (a selection, a layer, an answer) draws it at once.
let panelShownAt = -Infinity, panelStatus;
const STILL = ["paused", "ended"];
// A feed the server stopped for a reason it gives (the sample under another game than its own), not a plain pause.
const held = (st) => st.status === "paused" && Boolean(st.message) && st.message !== "Paused.";
// A source in one of these statuses plays no frames: the panel says "–" frames a second, not the last rate.
function setText(id, text) {
  const el = document.getElementById(id);
  if (el && el.textContent !== String(text)) el.textContent = String(text);
}
const GONE_FRAMES = 20;
// Frames in a row without a unit before its answer is cleared (it left the table).

// Units by tag id (name, owner): from the roster, then from every frame. Words are shown, ids only as a detail.
const UNITS = new Map();
// How many units have names (a panel that wrote "unit 10" before the names came writes its words again).
export const namesKnownCount = () => UNITS.size;
export function noteUnits(list) { for (const u of list || []) if (u && u.tag !== undefined && u.name) UNITS.set(Number(u.tag), { name: u.name, owner: u.owner }); }
// The event log waits for these names, so that it never shows "tag 12" for a unit the roster names. The roster is the
// shown table's own: the live setup's (/api/setup), a replay's (/api/replay/<name>/setup), fetched once by the first
// of `rosterNames` (startTableView) or the next tick (pages that only name units: the dice).
let unitsNoted = null;
function rosterNames(setupPath) {
  if (!unitsNoted) unitsNoted = api(setupPath).then((s) => noteUnits(s.roster ? s.roster.units : [])).catch(() => {});
  return unitsNoted;
}
setTimeout(() => rosterNames("/api/setup"), 0);

// "Red 2" (its owner added when the name does not say it: "Sigrid (red)"); "tag 17" for a tag no roster names.
export function nameOf(tag) {
  const u = UNITS.get(Number(tag));
  if (!u) return `tag ${tag}`;
  return u.owner && !u.name.toLowerCase().includes(String(u.owner).toLowerCase()) ? `${u.name} (${u.owner})` : u.name;
}

// A game's sentence with its "unit 17" / "tag 17" replaced by the unit's name.
export function named(text) {
  // "Red 1 (tag 10)" already names the unit: its tag in brackets goes, rather than reading "Red 1 (Red 1)"
  const once = String(text ?? "").replace(/([^()]+?) \([Tt]ag (\d+)\)/g, (m, before, n) => {
    const u = UNITS.get(Number(n));
    return u && before.endsWith(u.name) ? before : m;
  });
  return once.replace(/\b([Uu]nit|[Tt]ag) (\d+)\b/g, (m, _w, n) => (UNITS.has(Number(n)) ? nameOf(n) : m));
}

export function describeEvent(e) {
  if (e.type === "move") return `${nameOf(e.tag)} moved ${Number(e.length_in).toFixed(2)}" ± ${fmtPm(e.pm_in)}"`;
  if (e.type === "placed") return `${nameOf(e.tag)} is on the table`;
  if (e.type === "lost" || e.type === "removed") return `${nameOf(e.tag)} left the table`;
  if (e.type === "verdict") return sentence(`${e.event === "declared" ? "declared, " : ""}${e.outcome}: ${named(e.message)}`);
  if (e.type === "unknown_tag") return `A tag ${e.tag} that is in no roster is on the table: add it to the roster, or take it away`;
  if (e.type === "duplicate_tag") return `Two bases show tag ${e.tag}${UNITS.has(Number(e.tag)) ? ` (${nameOf(e.tag)})` : ""}: give each base a tag of its own`;
  if (e.type === "roll") {  // the faces a rule took, and where they came from
    const faces = (e.faces || []).join(" ");
    const from = e.by === "tablesight" ? "rolled by Tablesight" : { typed: "typed in", camera: "read by the camera", phone: "read by the phone" }[e.source] || "";
    return sentence(`${named(String(e.what || "a roll"))}: ${(e.faces || []).length} d${e.sides} rolled ${faces}${from ? ` (${from})` : ""}`);
  }
  if (e.type === "roll_correction") return `Dice corrected from ${(e.faces_before || []).join(" ")} to ${(e.faces || []).join(" ")}`;
  if (e.type === "camera_moved") return `The camera moved (the anchors shifted ${Number(e.anchor_shift_px).toFixed(1)} px): its place was worked out again`;
  if (e.message) return sentence(`${e.type.replace(/_/g, " ")}: ${named(e.message)}`);
  return sentence(`${e.type.replace(/_/g, " ")}${e.tag !== undefined ? " " + nameOf(e.tag) : ""}`);
}

// The to-hit roll ("4+") only when the attack can be made: not without a line of sight, nor when the game says no.
export function toHit(a) {
  if (a.to_hit === null || a.to_hit === undefined) return "—";
  if (a.los === "blocked") return "— (no line of sight: no attack)";
  const no = (a.verdicts || []).find((v) => v.outcome === "illegal");
  if (no) return "— (no attack now)";
  return `${a.to_hit}+ on a die`;
}

// What the events list shows of a frame's (or a timeline's) entries: every event, and the rulings a player must see.
// Every ruling is listed, legal ones too (a disengage allowed, a battle won by a move, a score): a player reads what
// the rules made of each move, not only what they refused.
export function listed(e) {
  return Boolean(e);
}

export function eventClass(e) {
  if (e.type === "verdict" || e.outcome) return e.outcome === "illegal" ? "illegal" : e.outcome === "too close to call" ? "too-close" : "legal";
  return e.type || "";
}

// The players' last word (live page only): an "Overrule" button on each verdict of the events list, and
// "Correct position" for the selected unit (then a click on the board). Both are declared actions of
// Tablesight's own (session/overrule.py): recorded with the session and replayed the same way.
// A player's word on a form: who and why (built as elements, never as HTML: what a page shows is text).
function signedFields(form, buttonText, ...before) {
  const field = (name, placeholder, maxLength) => {
    const input = document.createElement("input");
    input.name = name;
    input.placeholder = placeholder;
    input.required = true;
    input.maxLength = maxLength;
    return input;
  };
  const button = document.createElement("button");
  button.type = "submit";
  button.textContent = buttonText;
  const error = document.createElement("span");
  error.className = "form-error";
  error.setAttribute("role", "alert");
  form.append(...before, field("by", "your name", 60), field("reason", "why the camera is wrong here", 300), button, error);
}

function overruleForm(e, declarePath, onDone) {
  const form = document.createElement("form");
  form.className = "overrule";
  const stands = e.outcome === "illegal" ? "illegal" : "legal";
  const other = stands === "illegal" ? "legal" : "illegal";
  const label = document.createElement("label");
  const select = document.createElement("select");
  select.name = "outcome";
  for (const o of [other, stands]) select.append(new Option(o, o));
  label.append("Stands as ", select);
  // the overruling player's side: an overrule stands against its own side, and the other side may undo it
  const sides = Object.keys((window.tablesight && window.tablesight.msg && window.tablesight.msg.owners) || {});
  const sideLabel = document.createElement("label");
  const side = document.createElement("select");
  side.name = "side";
  for (const o of sides) side.append(new Option(o, o));
  sideLabel.append("Your side ", side);
  if (sides.length) signedFields(form, "Overrule", label, sideLabel);
  else signedFields(form, "Overrule", label);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const err = form.querySelector(".form-error");
    err.textContent = "";
    try {
      const r = await api(declarePath, { action: { kind: "overrule", unit: e.unit ?? null, params: {
        frame: Number(e.frame), rule: e.rule, outcome: f.get("outcome"), by: f.get("by"), reason: f.get("reason"), side: f.get("side") || undefined } } });
      const bad = (r.verdicts || []).find((v) => v.outcome === "illegal");
      if (bad) { err.textContent = bad.message; return; }
      form.remove();
      onDone(r);
    } catch (x) { err.textContent = x.message; }
  });
  return form;
}

const FROM_FEED = Symbol("from the feed");
// Marks a list entry that came with a frame (not from a timeline, the event log or an answer).

// This page's own id: its selection is its own (the server draws a unit's rings only for the page that chose it).
const PAGE_ID = `p${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;

// terrainPath / setupPath: the shown table's terrain and setup (a replay passes its recording's own).
// fromFeed(entry): whether the events list takes a frame's entry from the feed (a replay takes its timeline's instead).
// onPoint(x, y, unit): a click on the top-down board where no unit stands, table inches, with the selected unit (or
// null): the live page lists what could be declared there; without it such a click clears the selection.
// onSelect(unit): the page's selection changed (null: none), at once, whether or not a frame follows (a still table).
export function startTableView({ wsPath, selectPath, askPath, eventsPath, skippedPath, declarePath, onFrame, boardPath,
  terrainPath = "/api/terrain", setupPath = "/api/setup", fromFeed = () => true, onPoint = null, onSelect = null }) {
  const camera = document.getElementById("camera");
  const board = document.getElementById("board");
  const events = document.getElementById("events");
  const state = { msg: null, terrain: [], answer: null, selected: null, bitmapSize: null, correcting: null, boardFrame: null,
    grid: null, gridKey: null };
  window.tablesight = state;
  // The hex grid lives beside the loop's select path: /api/live/board, /api/replay/<name>/board (webui/routes/board.py).
  const gridPath = boardPath || String(selectPath).replace(/\/select$/, "/board");
  let gridWanted = null, gridFetching = false;
  // A frame names the grid it is drawn over (its grid_key); the grid itself is fetched only when that changes.
  function followGrid(key) {
    key = key ?? null;
    if (key === state.gridKey && !gridFetching) return;
    gridWanted = key;
    if (gridFetching) return;
    // a grid arriving redraws as a frame does: the board no more often than BOARD_EVERY_MS
    if (key === null) { state.grid = null; state.gridKey = null; layers.board(null); redraw(null, true); return; }
    gridFetching = true;
    api(gridPath)
      .then((g) => { state.grid = g && g.key ? g : null; layers.board(state.grid); })
      .catch(() => { state.grid = null; layers.board(null); })
      .finally(() => {
        gridFetching = false;
        state.gridKey = key;
        redraw(null, true);
        if (gridWanted !== key) followGrid(gridWanted);
      });
  }

  async function loadTerrain() {
    try { state.terrain = (await api(terrainPath)).pieces || []; } catch (e) { state.terrain = []; }
    // a paused replay shows one frame: its board is drawn again with the terrain (paced as a frame is, so a
    // playing feed's board is still drawn no more often than BOARD_EVERY_MS)
    if (state.msg) redraw(null, true);
  }
  loadTerrain();
  state.namesKnown = rosterNames(setupPath);
  // the list so far, of the pass it was asked in (`listRun`): a page whose first frame is of the next pass empties it
  let listRun = null;
  // the frame messages published before the list was read (`listSent`) and the page's first frame message: the
  // entries of the messages between them came before this page watched and after the list was read (a declaration
  // ruled during a reload), and are asked for as a skipped frame's are
  let listSent = null, firstSeen = null, gapAsked = false;
  function askListGap() {
    if (gapAsked || listSent === null || firstSeen === null) return;
    gapAsked = true;
    if (firstSeen.sent - listSent > firstSeen.covered.size) askSkipped(listSent, firstSeen.sent, run, firstSeen.covered);
  }
  if (eventsPath) {
    state.namesKnown.then(() => api(eventsPath)).then((r) => {
      if (run !== null && r.run !== undefined && r.run !== run) return;  // asked in the pass before the one shown
      listRun = r.run ?? null;
      listSent = typeof r.sent === "number" ? r.sent : null;
      showSoon(r.events || []);
      askListGap();
    }).catch(() => {});
  }

  // A frame's new events wait for the panel's next rewrite (PANEL_EVERY_MS): each change to the list costs the page
  // a layout, and with many bases on the table a game has something to say most frames.
  const seen = new Set();
  let eventsWaiting = [], eventsShownAt = -Infinity, eventsTimer = null;
  let clearing = false;  // a new pass: the list is emptied with its next rewrite
  let run = null;  // the loop's pass over its recording (msg.run): a new pass starts the list afresh
  let gameStep = null;  // how often the game's state changed as frames were shown (msg.game_step)
  let lastSent = null;  // the number of the last frame message shown (msg.sent)
  // Frame messages the page never saw (the server sends a slow page only the newest): their entries, asked for
  // (skippedPath: /api/live/skipped), join the list as the frames' own would have; none of another pass's.
  let asking = 0;
  function askSkipped(after, before, pass, covered) {
    asking += 1;
    api(`${skippedPath}?after=${after}&before=${before}`).then((r) => {
      if (run !== pass) return;
      for (const m of r.messages || []) {
        if ((m.run ?? null) !== pass || covered.has(m.sent)) continue;
        queueEvents([...(m.events || []), ...(m.verdicts || []).map((v) => ({ type: "verdict", frame: m.frame, ...v }))]);
      }
    }).catch(() => {}).finally(() => { asking -= 1; });  // settled once its entries wait in the list's batch
  }
  function queueEvents(list) {
    list = list.filter(fromFeed);
    if (list.length) showSoon(list.map((e) => ({ ...e, [FROM_FEED]: true })));
  }
  // One entry of the list: a verdict is one rule's on one unit at one frame (the feed and a declaration's answer
  // bring the same verdicts: the list shows them once); a declaration's, with its number: the same action declared
  // again at that frame (after an Undo) is listed anew
  const entryKey = (e) => `${e.frame}|${e.type}|${e.tag}|${e.rule}|${e.unit}`
    + (e.event === "declared" ? `|${e.message}` : "")
    + (e.type === "roll" || e.type === "roll_correction" ? `|${e.what}|${(e.faces_before || []).join(",")}|${(e.faces || []).join(",")}` : "")
    + ((e.event === "declared" || e.type === "roll" || e.type === "roll_correction") && e.declaration ? `|d${e.declaration}` : "");
  const undoneDeclarations = new Set();  // the declarations an Undo took back (their verdicts' "declaration")
  // entries wait for the list's next rewrite: PANEL_EVERY_MS after the last one (the list asked for at load too)
  function showSoon(list) {
    eventsWaiting.push(...list);
    if (eventsTimer === null) {
      eventsTimer = setTimeout(() => addEvents([]), Math.max(0, eventsShownAt + PANEL_EVERY_MS - performance.now()));
    }
  }
  function addEvents(list) {
    if (eventsTimer !== null) { clearTimeout(eventsTimer); eventsTimer = null; }
    if (eventsWaiting.length) { list = [...eventsWaiting, ...list]; eventsWaiting = []; }
    eventsShownAt = performance.now();
    if (clearing) { clearing = false; while (events.firstElementChild) forget(events.firstElementChild); }
    for (const e of list) {
      const key = entryKey(e);
      if (seen.has(key)) continue;
      seen.add(key);
      if (Array.isArray(e.undoes)) undone(e.undoes);
      const li = document.createElement("li");
      li.className = eventClass(e);
      li.dataset.frame = e.frame;
      li.dataset.key = key;
      if (e[FROM_FEED]) li.dataset.fed = "1";
      li.textContent = `#${e.frame} ${describeEvent(e)}`;
      if (e.declaration) li.dataset.declaration = e.declaration;
      if (undoneDeclarations.has(e.declaration)) struck(li);
      else if (declarePath && e.type === "verdict" && e.rule && !String(e.rule).startsWith("tablesight.")
          && (e.outcome === "legal" || e.outcome === "illegal" || e.outcome === "too close to call")) {
        const b = document.createElement("button");
        b.type = "button"; b.className = "link overrule-open"; b.textContent = "overrule";
        b.addEventListener("click", () => {
          if (li.querySelector("form")) return;
          li.append(overruleForm(e, declarePath, (r) => addEvents((r.verdicts || []).map((v) => ({ type: "verdict", frame: e.frame, ...v })))));
        });
        li.append(" ", b);
      }
      // newest frame on top; an entry of a frame before the top one (a replay's timeline) goes in its place, and
      // at one frame a later declaration's above an earlier one's (the feed and the log bring them in either order)
      let at = events.firstElementChild;
      while (at && later(at, e)) at = at.nextElementSibling;
      events.insertBefore(li, at);
    }
    while (events.children.length > EVENT_LIMIT) forget(events.lastChild);
  }
  function later(li, e) {
    const f = Number(li.dataset.frame), g = Number(e.frame);
    return f > g || (f === g && (Number(li.dataset.declaration) || 0) > (Number(e.declaration) || 0));
  }
  function forget(li) { seen.delete(li.dataset.key); li.remove(); }
  // The verdicts of the declarations an Undo took back, or whose dice were corrected (ruled again), are struck out
  // and can no longer be overruled (in whichever order the feed, the log and the answers bring them)
  function undone(declarations) {
    for (const n of declarations) {
      undoneDeclarations.add(n);
      for (const li of events.querySelectorAll(`li[data-declaration="${Number(n)}"]`)) struck(li);
    }
  }
  function struck(li) {
    li.classList.add("undone");
    li.title = "Taken back: undone, or ruled again with corrected dice";
    for (const b of li.querySelectorAll("button.overrule-open, form.overrule")) b.remove();
  }
  // A new pass empties the list with its next rewrite (the last pass's entries stay until then): the list changes
  // no more often than PANEL_EVERY_MS at a new pass too
  function clearList() {
    eventsWaiting = [];
    undoneDeclarations.clear();
    clearing = true;
    showSoon([]);
  }
  // The list as it stood at frame `frame`: the entries of later frames go (a replay sought back).
  function eventsUpTo(frame) {
    eventsWaiting = eventsWaiting.filter((e) => Number(e.frame) <= frame);
    while (events.firstElementChild && !(Number(events.firstElementChild.dataset.frame) <= frame)) forget(events.firstElementChild);
  }
  state.eventsUpTo = eventsUpTo;
  // whether every entry of the frames shown so far is on the list (none waiting for its batch or being asked for)
  state.listSettled = () => eventsWaiting.length === 0 && asking === 0 && !clearing;
  state.addEvents = (list) => addEvents(list.filter(listed));
  // The entries taken from the feed for frames up to `frame` go (a replay's timeline now has those frames' own).
  state.forgetFedUpTo = (frame) => {
    eventsWaiting = eventsWaiting.filter((e) => Number(e.frame) > frame);
    for (const li of [...events.querySelectorAll("li[data-fed]")]) if (Number(li.dataset.frame) <= frame) forget(li);
  };

  // The selected unit's rings: only this page's selection, from the frame's `focus` (other pages' stay theirs).
  function focusOf(msg) {
    const f = msg && msg.focus && state.selected !== null && state.selected !== undefined ? msg.focus[String(state.selected)] : null;
    return { image_shapes: (f && f.image_shapes) || [], overlays: (f && f.overlays) || [] };
  }

  const layers = startLayers(document.querySelector(".views"), () => redraw(null));

  let lastBitmap = null;
  // redraw(bitmap, true): a frame came (its picture, or null when it had none); redraw(null): the player changed
  // what shows, and the board is drawn at once.
  function redraw(bitmap, fromFrame = false) {
    if (bitmap && bitmap !== lastBitmap) { if (lastBitmap) lastBitmap.close(); lastBitmap = bitmap; }
    bitmap = bitmap || lastBitmap;
    const msg = state.msg;
    const sel = state.selected;
    const mine = focusOf(msg);
    const extra = layers.pixel([...mine.image_shapes, ...(state.answer ? state.answer.image_shapes || [] : [])], sel);
    const shapes = layers.pixel(msg ? msg.image_shapes : [], sel);
    drawCamera(camera, bitmap, msg, extra, { shapes, grid: layers.grid(state.grid) });
    layers.seen(shapes);
    layers.seen(extra);
    const focus = [...new Set(mine.image_shapes.map((x) => x.u).filter((u) => u !== null && u !== undefined))].join(",");
    if (camera.dataset.focusUnits !== focus) camera.dataset.focusUnits = focus;  // an attribute written restyles the page
    if (fromFrame && performance.now() - boardDrawnAt < BOARD_EVERY_MS) {
      if (boardTimer === null) boardTimer = setTimeout(redrawBoard, boardDrawnAt + BOARD_EVERY_MS - performance.now());
      return;
    }
    redrawBoard();
  }

  // The board shows positions, not the picture: drawn again only when something on it changed as far as it can
  // show (a table standing still costs the browser its camera view alone, ~a fifth less a frame).
  function redrawBoard() {
    if (boardTimer !== null) { clearTimeout(boardTimer); boardTimer = null; }
    const msg = state.msg;
    const sel = state.selected;
    const mine = focusOf(msg);
    const terrain = layers.terrain(state.terrain);
    const extraOverlays = layers.inch([...mine.overlays, ...(state.answer ? state.answer.overlays || [] : [])], sel);
    const overlays = layers.inch(msg ? msg.overlays : [], sel);
    layers.seen(overlays);
    layers.seen(extraOverlays);
    const names = layers.names();
    const units = ((msg && msg.units) || []).map((u) => ({ tag: u.tag, x: u.x, y: u.y, yaw_deg: u.yaw_deg, r: u.radius_in, colour: u.colour, name: u.name }));
    const grid = layers.grid(state.grid);
    const key = JSON.stringify([msg && msg.board, units, overlays, extraOverlays, names, sel, board.clientWidth,
      board.clientHeight, window.devicePixelRatio, grid ? grid.key : null], asShownOnBoard) + JSON.stringify(terrain);
    state.boardFrame = msg ? msg.frame_index : null;  // the frame whose positions the board shows
    if (key === boardKey) return;
    boardKey = key;
    boardDrawnAt = performance.now();
    drawBoard(board, msg, terrain, extraOverlays, { overlays, names, grid });
    board.dataset.drawnAt = boardDrawnAt.toFixed(1);  // when (performance.now(), ms): a test reads the pace
    board.dataset.draws = String(Number(board.dataset.draws || 0) + 1);
  }
  let boardKey = null, boardDrawnAt = -Infinity, boardTimer = null;
  board.addEventListener("contextrestored", () => { boardKey = null; });  // a canvas the browser had to clear
  // Inches to 0.02" and angles to 2 degrees, a fraction of a board pixel: a still base whose measured position
  // flickers in the third decimal (its ± is larger) is not drawn again for it. Only what the board draws of a unit
  // is in the key (its ± and height are not drawn); the terrain goes whole (its heights are written on it).
  const asShownOnBoard = (k, v) => (typeof v !== "number" ? v : k === "yaw_deg" ? Math.round(v / 2) : Math.round(v * 50));

  let panelTimer = null, panelDue = null;
  let endedAt = -Infinity;  // when the page was told the recording ended (performance.now())
  function flushPanel() {  // show the frame the throttle held back, if one is due
    const args = panelDue;
    if (panelTimer !== null) { clearTimeout(panelTimer); panelTimer = null; }
    panelDue = null;
    if (args) showPanel(...args);
  }
  function showPanel(msg, st, sinceReceived) {
    panelShownAt = performance.now();
    panelStatus = st.status;
    setText("fps", st.fps && !STILL.includes(st.status) ? st.fps.toFixed(1) : "–");
    setText("latency", `${(st.latency_ms || 0).toFixed(0)} + ${sinceReceived.toFixed(0)}`);
    setText("frame", msg.frame_index);
    setText("watchers", st.watchers ?? "–");
    setText("board-size", msg.board && msg.board.w ? `${msg.board.w}" × ${msg.board.d}"` : "(not calibrated)");
    setText("status-line", (msg.calibrated ? `${counted(msg.units.length, "unit")}, ${counted(msg.tags.length, "tag")}` : "not calibrated: tags only") + (msg.pipeline_status ? ` — ${msg.pipeline_status}` : ""));
  }

  connectFeed(wsPath, {
    shows: camera,
    onFrame(msg, bitmap, received) {
      msg.selected = state.selected;
      noteUnits(msg.units);
      state.msg = msg;
      if ((msg.grid_key ?? null) !== state.gridKey) followGrid(msg.grid_key);
      if (state.answer && state.selected !== state.answer.unit) state.answer = null;
      if (state.answer) followAnswer(msg);
      redraw(bitmap, true);
      const st = msg.status || {};
      const now = performance.now();
      // words change a few times a second (each change costs a layout), at once when the status does, and the
      // last frame's by a timer (a seek while paused sends one frame: the panel must say its number)
      if (panelTimer !== null) { clearTimeout(panelTimer); panelTimer = null; panelDue = null; }
      if (now - panelShownAt >= PANEL_EVERY_MS || st.status !== panelStatus) showPanel(msg, st, now - received);
      else {
        panelDue = [msg, st, now - received];
        panelTimer = setTimeout(flushPanel, panelShownAt + PANEL_EVERY_MS - now);
      }
      if ((msg.run ?? null) !== run) {  // the recording started again (the looping sample): so does its list
        if (run !== null || (listRun !== null && listRun !== (msg.run ?? null))) clearList();
        run = msg.run ?? null;
      }
      const covered = new Set(msg.covered || [msg.sent]);  // the messages whose entries this one holds
      if (firstSeen === null && typeof msg.sent === "number") { firstSeen = { sent: msg.sent, covered }; askListGap(); }
      if (skippedPath && lastSent !== null && msg.sent - lastSent > covered.size) askSkipped(lastSent, msg.sent, run, covered);
      if (msg.sent !== undefined) lastSent = msg.sent;
      // the game changed at this frame (a move ruled, a new turn, a new pass): the panel says so now, not at its
      // next poll
      if (msg.game_step !== undefined && msg.game_step !== gameStep) {
        if (gameStep !== null) refreshGamePanel();
        gameStep = msg.game_step;
      }
      if (msg.events && msg.events.length) queueEvents(msg.events);
      const shown = (msg.verdicts || []).map((v) => ({ type: "verdict", frame: msg.frame_index, ...v })).filter(listed);
      if (shown.length) queueEvents(shown);
      // a frame clears the banner, unless it came before the status that set it (its picture decodes meanwhile)
      if (held(st)) banner(st.message, "info");
      else if (!["lost", "error"].includes(st.status) && !(received < endedAt)) banner("");
      if (onFrame) onFrame(msg);
    },
    onStatus(msg) {
      endedAt = msg.status === "ended" ? performance.now() : -Infinity;
      if (msg.status === "lost" || msg.status === "error" || msg.status === "disconnected") banner(msg.message || "The camera is lost.", "bad");
      else if (msg.status === "ended") banner(msg.message || "The recording has ended.", "info");
      else if (held(msg)) banner(msg.message, "info");
      else if (msg.status === "ok" || msg.status === "connected") banner("");
      if (STILL.includes(msg.status)) { flushPanel(); setText("fps", "–"); }
      if (onFrame && msg.status) onFrame(null, msg);
    },
  });

  // An answer follows its units: asked again when either has moved more than 0.1", cleared when one left.
  let reasking = false;
  function followAnswer(msg) {
    const a = state.answer;
    const at = (tag) => (msg.units || []).find((u) => u.tag === tag);
    const u = at(a.unit), t = at(a.target);
    a.missing = !u || !t ? (a.missing || 0) + 1 : 0;
    if (a.missing > 0 && a.missing < GONE_FRAMES) return;  // a tag unseen for a moment (a hand, a figure) is not gone
    if (!u || !t) {
      state.answer = null;
      document.getElementById("answer").innerHTML = "";
      document.getElementById("selected-text").textContent = `${nameOf(u ? a.target : a.unit)} left the table; the answer was cleared.`;
      return;
    }
    const moved = !a.at || Math.hypot(u.x - a.at[0][0], u.y - a.at[0][1]) > 0.1 || Math.hypot(t.x - a.at[1][0], t.y - a.at[1][1]) > 0.1;
    if (moved && !reasking && askPath) {
      reasking = true;
      api(askPath, { unit: a.unit, target: a.target })
        .then((b) => { if (state.answer === a) { showAnswer(b, msg); } })
        .catch(() => { if (state.answer === a) { state.answer = null; document.getElementById("answer").innerHTML = ""; } })
        .finally(() => { reasking = false; });
    }
  }

  function showAnswer(a, msg) {
    const at = (tag) => ((msg && msg.units) || []).find((u) => u.tag === tag);
    const u = at(a.unit), t = at(a.target);
    a.at = u && t ? [[u.x, u.y], [t.x, t.y]] : null;
    state.answer = a;
    const answerEl = document.getElementById("answer");
    answerEl.innerHTML = "";
    const rows = [
      ["Target", `${nameOf(a.target)} (tag ${a.target})`],
      ["Range (edge to edge)", `${a.range_in.toFixed(2)}" ± ${fmtPm(a.pm_in)}"`],
      ["Line of sight", a.los + (a.blockers.length ? ` (${a.blockers.join(", ")})` : "")],
      ["To hit", toHit(a)],
    ];
    const dl = document.createElement("dl");
    dl.id = "answer-table";
    for (const [k, v] of rows) { const dt = document.createElement("dt"); dt.textContent = k; const dd = document.createElement("dd"); dd.textContent = v; dl.append(dt, dd); }
    answerEl.append(dl);
    for (const v of a.verdicts || []) { const p = document.createElement("p"); p.className = eventClass(v); p.textContent = named(v.message); answerEl.append(p); }
    redraw(null);
  }

  async function click(unit) {
    const sel = state.selected;
    const text = document.getElementById("selected-text");
    const answerEl = document.getElementById("answer");
    try {
      if (unit === null || unit === sel) {
        state.answer = null; answerEl.innerHTML = "";
        state.selected = null;
        if (state.msg) state.msg.selected = null;
        redraw(null);
        if (onSelect) onSelect(null);
        await api(selectPath, { unit: null, page: PAGE_ID });
        text.textContent = "Click a unit to select it, then click a target.";
      } else if (sel === null || sel === undefined || !askPath) {
        state.answer = null; answerEl.innerHTML = "";
        state.selected = unit;
        if (state.msg) state.msg.selected = unit;
        redraw(null);
        if (onSelect) onSelect(unit);
        await api(selectPath, { unit, page: PAGE_ID });
        const u = (state.msg.units || []).find((x) => x.tag === unit);
        const up = u && u.z - u.base_height_in > 0.05 ? ` ${(u.z - u.base_height_in).toFixed(1)}" up${u.height_assumed ? " (height assumed from the terrain: check the printed tag size in the roster)" : ""}` : "";
        const mount = u && u.mount_unmeasured ? ` Mount not measured: its position is ± ${u.pm.toFixed(2)}" until the mounts are measured (Calibrate page).` : "";
        text.textContent = `Selected ${u ? u.name : nameOf(unit)} (${u && u.owner ? u.owner + ", " : ""}tag ${unit})${up}.${mount} Click a target.`;
      } else {
        showAnswer(await api(askPath, { unit: sel, target: unit }), state.msg);
      }
    } catch (err) {
      text.textContent = err.message;
    }
  }

  camera.addEventListener("click", (ev) => {
    const [x, y] = imagePoint(camera, ev.clientX, ev.clientY);
    click(unitAtPixel(state.msg, x, y));
  });
  // The table point (inches) under a pointer on the board.
  function boardInches(ev) {
    const r = board.getBoundingClientRect();
    const view = boardView(board, state.msg && state.msg.board && state.msg.board.w ? state.msg.board : null);
    const [bw, bh] = layoutSize(board);
    return view.toIn(((ev.clientX - r.left) * bw) / r.width, ((ev.clientY - r.top) * bh) / r.height);
  }
  // On a hex board the board's tooltip names the cell under the pointer, as the Declare buttons do.
  board.addEventListener("mousemove", (ev) => {
    const i = state.grid ? cellAt(state.grid, ...boardInches(ev)) : -1;
    const c = i >= 0 ? state.grid.cells[i] : null;
    const words = c ? `hex [${c.hex[0]}, ${c.hex[1]}]: ${c.terrain}${c.elevation ? `, level ${c.elevation}` : ""}` : "";
    if (board.title !== words) board.title = words;
  });
  board.addEventListener("click", (ev) => {
    const [x, y] = boardInches(ev);
    if (state.correcting !== null && state.correcting !== undefined) { correctTo(x, y); return; }
    const hit = unitAtInches(state.msg, x, y);
    if ((hit === null || hit === undefined) && onPoint) { onPoint(x, y, state.selected ?? null); return; }
    click(hit);
  });

  // Correct position: the selected unit really stands where the next click on the board says.
  function correctTo(x, y) {
    const unit = state.correcting;
    state.correcting = null;
    const answerEl = document.getElementById("answer");
    const u = ((state.msg && state.msg.units) || []).find((v) => v.tag === unit);
    const form = document.createElement("form");
    form.className = "overrule";
    const said = document.createElement("p");
    said.textContent = `${u ? u.name : "tag " + unit} stands at (${x.toFixed(2)}, ${y.toFixed(2)})` +
      (u ? `, ${Math.hypot(x - u.x, y - u.y).toFixed(2)}" from where the camera has it` : "") + ".";
    signedFields(form, "Correct", said);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const f = new FormData(form);
      const err = form.querySelector(".form-error");
      try {
        const r = await api(declarePath, { action: { kind: "correct", unit, params: {
          at_in: [Number(x.toFixed(3)), Number(y.toFixed(3))], by: f.get("by"), reason: f.get("reason") } } });
        const bad = (r.verdicts || []).find((v) => v.outcome === "illegal" && String(v.rule).startsWith("tablesight."));
        if (bad) { err.textContent = bad.message; return; }
        form.remove();
        addEvents((r.verdicts || []).map((v) => ({ type: "verdict", frame: state.msg ? state.msg.frame_index : 0, ...v })));
      } catch (x2) { err.textContent = x2.message; }
    });
    answerEl.innerHTML = "";
    answerEl.append(form);
    form.scrollIntoView({ block: "nearest" });
  }
  if (declarePath) {
    const panel = document.getElementById("selection");
    const b = document.createElement("button");
    b.type = "button"; b.id = "correct-position"; b.textContent = "Correct position…";
    b.title = "The camera has the selected unit in the wrong place: click where it really stands on the board";
    b.addEventListener("click", () => {
      const sel = state.selected;
      const text = document.getElementById("selected-text");
      if (sel === null || sel === undefined) { text.textContent = "Select the unit first, then Correct position."; return; }
      state.correcting = sel;
      text.textContent = "Click on the top-down board where the unit really stands.";
      board.scrollIntoView({ block: "nearest" });  // under the camera's picture on a laptop
    });
    panel.append(b);
  }
  return state;
}
