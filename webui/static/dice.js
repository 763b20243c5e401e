// The live page's dice panel: the roll the table waits for (its sentence, for which unit and rule, who rolls), big
// face buttons to type the faces the players rolled (chips to take one back; digits and Enter on a keyboard),
// the faces the camera read drawn on the tray's picture (an unsure die is tapped to set its face), then the
// verdict worked through, a correction of the faces after it, and the "Roll for us" choice.
// The server's dice state (GET /api/live/dice, the same object as every frame message's "dice") is all it shows.
import { api } from "/static/feed.js";
import { named, nameOf, namesKnownCount } from "/static/table_view.js";
import { counted, sentence } from "/static/words.js";

const POLL_MS = 2000;
// With no frame coming (a paused or ended feed), the state is asked for this often.
const PICTURE_EVERY_MS = 1000;
// The tray's picture is fetched again at most this often while the camera reads dice.
const KEY_WAIT_MS = 900;
// A typed "1" on a d20 waits this long for a second digit before it counts as a 1.

const SOURCE_WORDS = { typed: "typed in", camera: "read by the camera", phone: "read by the phone", rolled: "rolled by Tablesight",
  correction: "corrected" };

const $ = (id) => document.getElementById(id);

// An action without its faces: the pending roll's action and the one ruled with them are the same action.
function actionKey(a) {
  if (!a) return "";
  const params = { ...(a.params || {}) };
  delete params.rolls;
  return JSON.stringify([a.kind, a.unit ?? null, Object.keys(params).sort().map((k) => [k, params[k]])]);
}

// "valyr.attack.roll" -> "attack roll": a rule's name as words, without its game.
function ruleWords(clause) {
  const parts = String(clause || "").split(".");
  return (parts.length > 1 ? parts.slice(1) : parts).join(" ").replace(/_/g, " ").trim();
}

// What a roll none of whose faces counts says: "no hit", "no skull", "none on target", "none ignores damage" (by
// the word a face would count as, found by trying every face).
function noneCounts(count, sides) {
  const word = Array.from({ length: sides }, (_, i) => count(i + 1)).find(Boolean);
  if (!word) return " no die counts";
  return word === "ignored" ? " none ignores damage" : word === "on target" ? " none on target" : ` no ${word}`;
}

// Which faces of a roll count, from how the rule said the roll is read ("4+ hits", "each below 15 after Mender's +1
// armor is on target", "each 1-3 is a skull", "each 6 ignores a point of damage"): a function from a face to what it
// counts as, or null when the words are none of these (then no die is marked).
export function counts(reads) {
  const text = String(reads || "");
  let m;
  if ((m = /(\d+)\+ hits/.exec(text))) { const n = Number(m[1]); return (f) => (f >= n ? "hit" : null); }
  if ((m = /each below (\d+)(?: after [^;]*?\+(\d+) armou?r)?[^;]*? is on target/.exec(text))) {
    const n = Number(m[1]), armor = Number(m[2] || 0);
    return (f) => (f + armor < n ? "on target" : null);
  }
  if ((m = /each (?:skull \()?(\d+)-(\d+)\)? is an? (\w+)/.exec(text))) {
    const lo = Number(m[1]), hi = Number(m[2]), word = m[3];
    return (f) => (f >= lo && f <= hi ? word : null);
  }
  if ((m = /each (\d+) ignores/.exec(text))) { const n = Number(m[1]); return (f) => (f === n ? "ignored" : null); }
  if ((m = /\b(?:any 1-(\d+)|any 1 or (2)|a (1)) (hits|breaches)/.exec(text))) {  // Vigtavl: "any 1-3 hits"
    const n = Number(m[1] || m[2] || m[3]), word = m[4] === "hits" ? "hit" : "breach";
    return (f) => (f <= n ? word : null);
  }
  return null;
}

// A d6 in one row; a d20 in a 5x4 grid; the others as near square as their faces allow.
function padColumns(sides) {
  if (sides <= 6) return sides;
  if (sides === 8) return 4;
  if (sides === 12) return 6;
  return 5;
}

function faceButton(face, onTap, cls = "dice-face") {
  const b = document.createElement("button");
  b.type = "button";
  b.className = cls;
  b.textContent = String(face);
  b.dataset.face = String(face);
  b.addEventListener("click", () => onTap(face));
  return b;
}

// A die shown as a chip (its face); `onTap` takes it back or picks it.
function dieChip(face, sides, onTap, title) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "dice-chip";
  b.textContent = String(face);
  b.dataset.face = String(face);
  b.title = title || `d${sides} showing ${face}`;
  if (onTap) b.addEventListener("click", onTap); else b.disabled = true;
  return b;
}

function fillPad(pad, sides, onTap, full) {
  pad.replaceChildren();
  pad.style.setProperty("--cols", String(padColumns(sides)));
  pad.dataset.sides = String(sides);
  for (let f = 1; f <= sides; f++) {
    const b = faceButton(f, onTap);
    b.disabled = Boolean(full);
    pad.append(b);
  }
}

export function startDice({ onRuled } = {}) {
  const card = $("dice");
  if (!card) return { frame() {}, refresh() {} };
  const el = {
    pending: $("dice-pending"), sentence: $("dice-sentence"), forWho: $("dice-for"), typed: $("dice-typed"), pad: $("dice-pad"),
    rule: $("dice-rule"), cancel: $("dice-cancel"), keys: $("dice-keys"), tray: $("dice-tray"), picture: $("dice-tray-picture"),
    readNote: $("dice-read-note"), pick: $("dice-face-pick"), useCamera: $("dice-use-camera"), idle: $("dice-idle"),
    verdict: $("dice-verdict"), correct: $("dice-correct"), correctTyped: $("dice-correct-typed"), correctPad: $("dice-correct-pad"),
    correctSend: $("dice-correct-send"), correctClose: $("dice-correct-close"), msg: $("dice-msg"), rollForUs: $("dice-roll-for-us"),
    rollNote: $("dice-roll-note"),
  };
  let dice = null, owners = {}, shownKey = "", busy = false;
  let seq = 0;  // the newest dice state's "seq" taken: a frame's message can arrive after an answered roll's newer state
  let typed = [], typingFor = null, buffer = "", bufferTimer = null;
  let camFaces = {}, picking = null, readCentres = [];  // faces the player set on the camera's dice (by index), the die picked
  let correcting = null, correctPick = null;  // the faces under correction, by roll; the die picked [roll, face]
  let lastFrameAt = -Infinity, picture = null, pictureAt = -Infinity, pictureFrame = null, pictureLoading = false;
  const wordsOf = new Map();  // an action's words as its pending roll said them (the ruled action's carry its faces)
  // how each roll is read ("4+ hits"), by its rule and subject, as its request said: kept in this tab's
  // sessionStorage, so that a verdict shown after a reload still marks the faces that count
  const READS_KEY = "tablesight.dice.reads";
  const readsOf = new Map((() => {
    try {
      const kept = JSON.parse(sessionStorage.getItem(READS_KEY) || "[]");
      return Array.isArray(kept) ? kept.filter((x) => Array.isArray(x) && x.length === 2) : [];
    } catch (e) { return []; }
  })());
  function keepReads(key, reads) {
    if (readsOf.get(key) === reads) return;
    readsOf.set(key, reads);
    try { sessionStorage.setItem(READS_KEY, JSON.stringify([...readsOf].slice(-50))); } catch (e) { /* private mode */ }
  }

  // A unit's owner, from the newest frame's units (or "" when the page has not seen it).
  function ownerOf(tag) {
    const units = (window.tablesight && window.tablesight.msg && window.tablesight.msg.units) || [];
    const u = units.find((x) => x.tag === tag);
    return u && u.owner ? String(u.owner) : "";
  }

  // A message is about the roll pending and the last roll ruled when it is said: it goes when either changes (another
  // roll waits, none does, an Undo took the last one back).
  let saidFor = null;
  const rollsNow = () => JSON.stringify([dice && dice.pending ? dice.pending.id : null, dice && dice.last ? dice.last.id : null]);
  function say(text, kind) {
    el.msg.textContent = text || "";
    el.msg.className = `dice-msg ${kind || ""}`;
    saidFor = rollsNow();
  }

  const request = () => (dice && dice.pending ? dice.pending.request : null);

  // True when `state` (or a reply carrying "seq") is not older than what the panel shows; it then becomes the newest.
  function newest(state) {
    if (!state || typeof state.seq !== "number") return true;
    if (state.seq < seq) return false;
    seq = state.seq;
    return true;
  }

  // ---------------------------------------------------------------- what shows
  let wasPending = null;
  function render(force = false) {
    const nowPending = dice && dice.pending ? dice.pending.id : null;
    if (wasPending !== null && nowPending !== wasPending && onRuled) onRuled(null);  // answered here or elsewhere
    wasPending = nowPending;
    if (el.msg.textContent && rollsNow() !== saidFor) say("");
    const key = JSON.stringify([dice, typed, buffer, camFaces, picking, correcting, correctPick, busy, owners, namesKnownCount()]);
    if (key === shownKey && !force) return;
    shownKey = key;
    const p = dice && dice.pending;
    const req = request();
    // the first roll's words: a later roll of the same action carries the faces so far, and its words say them
    if (p && p.words && (!(p.request.given || []).length || !wordsOf.has(actionKey(p.action)))) wordsOf.set(actionKey(p.action), p.words);
    if (p && req.reads) keepReads(`${req.clause}|${req.what}`, req.reads);
    if (p && typingFor !== p.id) {
      typed = typedBefore(p, req); buffer = ""; typingFor = p.id; camFaces = {}; picking = null;
      // a new roll waits: on a page of one column (a tablet) the panel comes into view; a phone shows it as a sheet
      if (window.matchMedia("(min-width: 701px) and (max-width: 1100px)").matches) setTimeout(() => card.scrollIntoView({ block: "nearest" }), 0);
    }
    if (p) keepTyped(p, req);
    card.dataset.state = p ? "pending" : correcting ? "correcting" : dice && dice.last ? "ruled" : "idle";
    card.dataset.pending = p ? String(p.id) : "";
    el.pending.hidden = !p;
    el.idle.hidden = Boolean(p || (dice && dice.last));
    if (p) showPending(p, req);
    showRead(req);
    showVerdict(p ? null : dice && dice.last);
    showCorrection(p ? null : correcting);
    const on = Boolean(dice && dice.roll_for_us), script = Boolean(dice && dice.script);
    el.rollForUs.checked = on;
    el.rollForUs.disabled = busy || !dice || script;
    el.rollNote.textContent = script
      ? "This recorded session rolls its dice as they were recorded. Set up a game on the New game page to roll your own."
      : on
        ? "Tablesight rolls every die of this game itself. Untick it to roll your own."
        : "You roll your own dice; Tablesight rolls only when this is ticked.";
  }

  function showPending(p, req) {
    el.sentence.textContent = sentence(named(req.sentence)) + ".";
    el.sentence.dataset.sides = String(req.sides);
    el.sentence.dataset.count = String(req.count);
    const who = req.side ? String(req.side) : ownerOf(req.unit);  // no side named: the unit's owner rolls
    el.sentence.style.borderLeftColor = owners[who] || "";
    el.sentence.dataset.side = who || "";
    const rule = ruleWords(req.clause);
    const lines = [];
    if (!req.side && who) lines.push(`${sentence(who)} rolls.`);
    if (req.unit !== null && req.unit !== undefined) lines.push(`For ${nameOf(req.unit)}.`);
    if (rule) lines.push(`Rule: ${rule}.`);
    const words = wordsOf.get(actionKey(p.action)) || p.words;
    if (words) lines.push(`Declared: ${named(words)}.`);
    if (req.given && req.given.length) lines.push(`Already rolled for it: ${req.given.join(" ")}.`);
    el.forWho.textContent = lines.join(" ");
    const full = typed.length >= req.count;
    const typedKey = JSON.stringify([typed, buffer, req.count, req.sides]);
    if (el.typed.dataset.key !== typedKey) showTyped(req, typedKey);
    if (el.pad.dataset.sides !== String(req.sides) || el.pad.dataset.full !== String(full) || el.pad.dataset.busy !== String(busy)) {
      fillPad(el.pad, req.sides, tapFace, full || busy);
      el.pad.dataset.full = String(full);
      el.pad.dataset.busy = String(busy);
    }
    el.rule.disabled = busy || typed.length !== req.count;
    el.rule.textContent = typed.length === req.count ? "Rule it" : `Rule it (${req.count - typed.length} more)`;
    el.cancel.disabled = busy;
  }

  // The faces typed so far as chips (a tap takes one back), and how many of the dice that is.
  function showTyped(req, key) {
    el.typed.dataset.key = key;
    el.typed.replaceChildren();
    typed.forEach((f, i) => el.typed.append(dieChip(f, req.sides, () => { typed.splice(i, 1); render(); }, `Take back this ${f}`)));
    if (buffer) { const c = dieChip(`${buffer}…`, req.sides, null); c.classList.add("typing"); el.typed.append(c); }
    const count = document.createElement("span");
    count.className = "dice-count muted small";
    count.textContent = `${typed.length} of ${counted(req.count, "die", "dice")}`;
    el.typed.append(count);
    el.typed.dataset.faces = typed.join(",");
  }

  // The camera's dice on the tray's picture: boxes and faces; an unsure die (read.low) is tapped to set its face.
  function showRead(req) {
    const seen = dice && dice.read && dice.read.dice ? dice.read : null;
    const tray = dice && dice.tray && dice.tray.polygon_px ? dice.tray : null;
    const has = Boolean(req && ((seen && seen.dice.length) || tray));  // a marked tray is shown while a roll waits
    el.tray.hidden = !has;
    if (!has) { el.picture.dataset.dice = "0"; return; }
    const read = seen || { frame: null, dice: [], low: [] };
    const centres = read.dice.map((d) => d.centre_px);
    const moved = centres.length !== readCentres.length
      || centres.some((c, i) => Math.hypot(c[0] - readCentres[i][0], c[1] - readCentres[i][1]) > 20);
    if (moved) { camFaces = {}; picking = null; }  // other dice (or moved): the faces tapped were for those
    readCentres = centres;
    const faces = read.dice.map((d, i) => camFaces[i] ?? d.value);
    const low = (read.low || []).filter((i) => camFaces[i] === undefined);
    const where = read.where === "table" ? " on the table" : "";  // no tray marked: the table away from the bases
    const bits = [`The camera reads ${counted(read.dice.length, "die", "dice")}${where}: ${faces.join(" ")}`];
    if (read.needed_frames) bits.push(`still for ${read.still_frames} of ${read.needed_frames} frames`);
    const none = read.where === "table"
      ? "The camera sees no dice on the table yet: roll them away from the bases, or tap the faces."
      : "The camera sees no dice in the tray yet: roll them there, or tap the faces.";
    let note = read.dice.length ? bits.join(", ") + "." : none;
    if (low.length) note += ` ${low.length === 1 ? "One die is" : `${low.length} dice are`} unsure: tap ${low.length === 1 ? "it" : "each"} to set its face.`;
    if (read.dice.length && read.dice.length !== req.count) note += ` The roll takes ${counted(req.count, "die", "dice")}.`;
    if (picking !== null) note = `Which face does the die framed in white show? Tap it here (it was read as ${faces[picking]}):`;
    el.readNote.textContent = note;
    el.useCamera.hidden = !read.dice.length;
    el.useCamera.disabled = busy || read.dice.length !== req.count;
    el.useCamera.dataset.faces = faces.join(",");
    el.pick.hidden = picking === null;
    const pickKey = picking === null ? "" : `${picking}/${req.sides}`;
    if (picking !== null && el.pick.dataset.key !== pickKey) {
      fillPad(el.pick, req.sides, (f) => { if (picking !== null) camFaces[picking] = f; picking = null; render(); }, false);
    }
    el.pick.dataset.key = pickKey;
    drawTray(read, faces, low);
    const now = performance.now();
    const wanted = read.frame ?? `tray ${Math.floor(now / (5 * PICTURE_EVERY_MS))}`;  // no dice read: every 5 s
    if (now - pictureAt > PICTURE_EVERY_MS && pictureFrame !== wanted) loadPicture(wanted);
  }

  async function loadPicture(frame) {
    if (pictureLoading) return;
    pictureLoading = true;
    pictureAt = performance.now();
    try {
      const res = await fetch(`/api/live/frame.jpg?t=${Date.now()}`, { headers: { "X-Tablesight": "1" } });
      if (res.ok) {
        const bitmap = await createImageBitmap(await res.blob());
        if (picture) picture.close();
        picture = bitmap;
        pictureFrame = frame;
        shownKey = "";
        render();
      }
    } catch (e) { /* no picture: the boxes are drawn on grey */ }
    pictureLoading = false;
  }

  // The part of the frame the tray covers (its outline's bounding box, and any die read across its edge, leaning on
  // its wall), or the dice's own when no tray is marked.
  function trayBox(read) {
    const tray = dice && dice.tray;
    const corners = read.dice.flatMap((d) => [[d.box_px[0], d.box_px[1]], [d.box_px[2], d.box_px[3]]]);
    const pts = tray && tray.polygon_px && tray.polygon_px.length >= 3 ? tray.polygon_px.concat(corners) : corners;
    if (!pts.length) return [0, 0, 1, 1];
    const xs = pts.map((q) => q[0]), ys = pts.map((q) => q[1]);
    const pad = tray ? 8 : 40;
    return [Math.min(...xs) - pad, Math.min(...ys) - pad, Math.max(...xs) + pad, Math.max(...ys) + pad];
  }

  function drawTray(read, faces, low) {
    const [x0, y0, x1, y1] = trayBox(read);
    const w = Math.max(1, x1 - x0), h = Math.max(1, y1 - y0);
    const k = Math.min(2, 640 / w);  // canvas px per image px
    const cw = Math.round(w * k), ch = Math.round(h * k);
    const c = el.picture;
    if (c.width !== cw || c.height !== ch) { c.width = cw; c.height = ch; }
    const ctx = c.getContext("2d");
    ctx.fillStyle = "#2b3036";
    ctx.fillRect(0, 0, cw, ch);
    const size = (dice.tray && dice.tray.image_size) || null;
    if (picture) {
      // the picture may be another size than the image the dice were read in (the tray's image_size)
      const sx = size ? picture.width / size[0] : 1, sy = size ? picture.height / size[1] : 1;
      ctx.drawImage(picture, x0 * sx, y0 * sy, w * sx, h * sy, 0, 0, cw, ch);
    }
    const at = (q) => [(q[0] - x0) * k, (q[1] - y0) * k];
    const tray = dice.tray;
    if (tray && tray.polygon_px) {
      ctx.beginPath();
      tray.polygon_px.forEach((q, i) => { const [x, y] = at(q); if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y); });
      ctx.closePath();
      ctx.setLineDash([6, 4]); ctx.lineWidth = 2; ctx.strokeStyle = "#5aa9ff"; ctx.stroke(); ctx.setLineDash([]);
    }
    const lowSet = new Set(low);
    read.dice.forEach((d, i) => {
      const [ax, ay] = at([d.box_px[0], d.box_px[1]]), [bx, by] = at([d.box_px[2], d.box_px[3]]);
      const unsure = lowSet.has(i), set = camFaces[i] !== undefined;
      ctx.lineWidth = unsure ? 4 : 2.5;
      ctx.strokeStyle = unsure ? "#ffb000" : set ? "#2ecc71" : "#00e5ff";
      ctx.strokeRect(ax, ay, bx - ax, by - ay);
      if (picking === i) {  // the die being set: a white frame round it
        ctx.lineWidth = 5; ctx.strokeStyle = "#fff"; ctx.strokeRect(ax - 9, ay - 9, bx - ax + 18, by - ay + 18);
      }
      const label = unsure ? `${faces[i]}?` : String(faces[i]);
      const fs = Math.max(14, Math.min(28, (by - ay) * 0.6));
      ctx.font = `700 ${fs}px system-ui`;
      const tw = ctx.measureText(label).width;
      const ly = ay - 4 < fs ? by + fs + 2 : ay - 4;
      ctx.fillStyle = "rgba(0,0,0,.7)";
      ctx.fillRect(ax - 2, ly - fs, tw + 6, fs + 4);
      ctx.fillStyle = unsure ? "#ffb000" : "#fff";
      ctx.fillText(label, ax + 1, ly);
    });
    c.dataset.dice = String(read.dice.length);
    c.dataset.low = low.join(",");
    c.dataset.picture = picture ? "yes" : "no";
  }

  el.picture.addEventListener("click", (ev) => {
    const read = dice && dice.read;
    if (!read || !read.dice) return;
    const r = el.picture.getBoundingClientRect();
    const [x0, y0, x1] = trayBox(read);
    const k = el.picture.width / Math.max(1, x1 - x0);
    const x = x0 + ((ev.clientX - r.left) * el.picture.width) / r.width / k;
    const y = y0 + ((ev.clientY - r.top) * el.picture.height) / r.height / k;
    const slack = 10;
    const i = read.dice.findIndex((d) => x >= d.box_px[0] - slack && x <= d.box_px[2] + slack && y >= d.box_px[1] - slack && y <= d.box_px[3] + slack);
    picking = i >= 0 ? i : null;
    render();
  });

  // The verdict worked through: what was declared, each roll's faces and who gave them, the rules' sentences.
  function showVerdict(last) {
    el.verdict.hidden = !last;
    if (!last) { el.verdict.dataset.id = ""; return; }
    const key = JSON.stringify([last, Boolean(correcting), (dice && dice.correct_refused) || "", namesKnownCount()]);
    if (el.verdict.dataset.key === key) return;
    el.verdict.dataset.key = key;
    el.verdict.dataset.id = String(last.id);
    el.verdict.replaceChildren();
    const head = document.createElement("p");
    head.className = "head";
    head.textContent = sentence(named(wordsOf.get(actionKey(last.action)) || last.words || "the last roll")) + (last.source ? ` (dice ${SOURCE_WORDS[last.source] || last.source})` : "");
    el.verdict.append(head);
    for (const r of last.rolls || []) {
      const row = document.createElement("p");
      row.className = "dice-roll";
      row.dataset.faces = (r.faces || []).join(",");
      const what = document.createElement("span");
      what.textContent = `${sentence(named(r.what))}: `;
      const count = counts(readsOf.get(`${r.clause}|${r.what}`));
      const marks = (r.faces || []).map((f) => (count ? count(f) : null));
      row.append(what, ...(r.faces || []).map((f, i) => {
        const chip = dieChip(f, r.sides, null, marks[i] ? `${f}: ${marks[i]}` : undefined);
        if (marks[i]) { chip.classList.add("counts"); chip.dataset.counts = marks[i]; }
        return chip;
      }));
      const marked = marks.filter(Boolean);
      if (count) {
        const note = document.createElement("span");
        note.className = "dice-counts muted small";
        note.textContent = marked.length
          ? ` ${/^(on target|ignored)$/.test(marked[0]) ? `${marked.length} ${marked[0]}` : counted(marked.length, marked[0], marked[0] === "breach" ? "breaches" : undefined)}`
          : noneCounts(count, r.sides);
        row.append(note);
      }
      if (r.by === "tablesight") row.append(" (rolled by Tablesight)");
      el.verdict.append(row);
    }
    for (const v of last.verdicts || []) {
      const p = document.createElement("p");
      p.className = `dice-said ${v.outcome === "illegal" ? "illegal" : v.outcome === "too close to call" ? "too-close" : v.outcome === "waiting" ? "waiting" : v.outcome === "legal" ? "legal" : "info"}`;
      p.dataset.rule = v.rule || "";
      p.textContent = sentence(named(v.message));
      el.verdict.append(p);
    }
    const refused = dice && dice.correct_refused;
    if ((last.rolls || []).length && !correcting && refused) {  // the game moved on: the button would be refused
      const p = document.createElement("p");
      p.id = "dice-correct-refused";
      p.className = "muted small";
      p.textContent = sentence(named(refused));
      el.verdict.append(p);
    } else if ((last.rolls || []).length && !correcting) {
      const b = document.createElement("button");
      b.type = "button";
      b.id = "dice-correct-open";
      b.textContent = "Correct the faces";
      b.addEventListener("click", () => {
        correcting = (dice.last.rolls || []).map((r) => ({ sides: r.sides, what: r.what, faces: [...(r.faces || [])], was: [...(r.faces || [])] }));
        correctPick = null;
        say("");
        render();
      });
      el.verdict.append(b);
    }
  }

  // A correction: each die of the verdict as a chip; tap one, then its true face.
  function showCorrection(rolls) {
    el.correct.hidden = !rolls;
    if (!rolls) return;
    el.correctTyped.replaceChildren();
    rolls.forEach((r, ri) => {
      const row = document.createElement("p");
      row.className = "dice-roll";
      row.append(`${sentence(named(r.what))}: `);
      r.faces.forEach((f, fi) => {
        const chip = dieChip(f, r.sides, () => { correctPick = [ri, fi]; render(); }, `Change this ${f}`);
        if (f !== r.was[fi]) chip.classList.add("changed");
        if (correctPick && correctPick[0] === ri && correctPick[1] === fi) chip.classList.add("picked");
        row.append(chip);
      });
      el.correctTyped.append(row);
    });
    const changed = rolls.some((r) => r.faces.some((f, i) => f !== r.was[i]));
    el.correctPad.hidden = !correctPick;
    if (correctPick) {
      const r = rolls[correctPick[0]];
      fillPad(el.correctPad, r.sides, (f) => { r.faces[correctPick[1]] = f; correctPick = null; render(); }, busy);
    }
    el.correctSend.disabled = busy || !changed;
  }

  // ---------------------------------------------------------------- typing
  // The faces tapped for the waiting roll outlive a reload of the page (this tab's sessionStorage), for that roll only.
  const TYPED_KEY = "tablesight.dice.typed";
  const rollKey = (p, req) => JSON.stringify([p.id, actionKey(p.action), req.what, req.count, req.sides]);
  function keepTyped(p, req) {
    try { sessionStorage.setItem(TYPED_KEY, JSON.stringify({ roll: rollKey(p, req), faces: typed })); } catch (e) { /* private mode */ }
  }
  function typedBefore(p, req) {
    try {
      const kept = JSON.parse(sessionStorage.getItem(TYPED_KEY) || "null");
      if (!kept || kept.roll !== rollKey(p, req) || !Array.isArray(kept.faces)) return [];
      return kept.faces.filter((f) => Number.isInteger(f) && f >= 1 && f <= req.sides).slice(0, req.count);
    } catch (e) { return []; }
  }
  function tapFace(face) {
    const req = request();
    if (!req || busy || typed.length >= req.count) return;
    typed.push(face);
    say("");
    render();
  }

  function commitBuffer() {
    if (bufferTimer !== null) { clearTimeout(bufferTimer); bufferTimer = null; }
    const req = request();
    const f = Number(buffer);
    buffer = "";
    if (req && f >= 1 && f <= req.sides) tapFace(f);
    else { if (req) notAFace(f, req); render(); }
  }
  const notAFace = (f, req) => say(`${f} is not a face of a d${req.sides}: type 1 to ${req.sides}.`, "bad");

  document.addEventListener("keydown", (ev) => {
    const req = request();
    if (!req || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (/^[0-9]$/.test(ev.key)) {
      ev.preventDefault();
      if (typed.length >= req.count) return;
      buffer += ev.key;
      if (bufferTimer !== null) { clearTimeout(bufferTimer); bufferTimer = null; }
      if (Number(buffer) === 0) { buffer = ""; notAFace(0, req); render(); return; }
      if (Number(buffer) * 10 > req.sides || buffer.length >= String(req.sides).length) commitBuffer();  // no digit can follow
      else { bufferTimer = setTimeout(commitBuffer, KEY_WAIT_MS); render(); }
    } else if (ev.key === "Enter" || ev.key === " " || ev.key === ",") {
      if (buffer) { ev.preventDefault(); commitBuffer(); return; }
      if (ev.key === "Enter" && typed.length === req.count && !busy) { ev.preventDefault(); rule(typed, "typed"); }
    } else if (ev.key === "Backspace") {
      ev.preventDefault();
      if (buffer) buffer = ""; else typed.pop();
      render();
    }
  });

  // ---------------------------------------------------------------- to the server
  async function send(path, body, method) {
    busy = true;
    render();
    try { return await api(path, body, method); } finally { busy = false; }
  }

  async function rule(faces, source) {
    say("");
    try {
      const roll = dice && dice.pending ? dice.pending.id : null;  // answered meanwhile elsewhere: refused, not misapplied
      const r = await send("/api/live/dice/roll", { faces: [...faces], source, roll });
      newest(r);
      dice = { ...(dice || {}), pending: r.pending ?? null, last: r.last ?? (dice && dice.last), correct_refused: r.correct_refused ?? "", read: null };
      typed = []; buffer = ""; correcting = null;
      if (r.pending) say(`Taken: ${faces.join(" ")}. The next roll waits.`, "ok");
    } catch (err) { say(err.message, "bad"); }
    render(true);
    if (!dice.pending && window.matchMedia("(max-width: 700px)").matches) card.scrollIntoView({ block: "start" });  // the sheet is gone
    refresh();
  }

  el.rule.addEventListener("click", () => { if (request() && typed.length === request().count) rule(typed, "typed"); });
  el.useCamera.addEventListener("click", () => {
    const read = dice && dice.read;
    if (read && read.dice) rule(read.dice.map((d, i) => camFaces[i] ?? d.value), "camera");
  });
  el.cancel.addEventListener("click", async () => {
    say("");
    try {
      newest(await send("/api/live/dice/cancel", {}));
      dice = { ...(dice || {}), pending: null, read: null };
      say("The roll was cancelled: the action was not ruled.", "ok");
    } catch (err) { say(err.message, "bad"); }
    render(true);
    refresh();
  });
  el.correctClose.addEventListener("click", () => { correcting = null; correctPick = null; render(); });
  el.correctSend.addEventListener("click", async () => {
    if (!correcting) return;
    say("");
    try {
      const r = await send("/api/live/dice/correct", { faces: correcting.flatMap((x) => x.faces) });
      newest(r);
      dice = { ...(dice || {}), pending: r.pending ?? null, last: r.last ?? (dice && dice.last), correct_refused: r.correct_refused ?? "" };
      correcting = null; correctPick = null;
      say("Corrected: the action was ruled again with these faces, and the correction is recorded.", "ok");
      if (onRuled) onRuled(r);
    } catch (err) { say(err.message, "bad"); }
    render(true);
    refresh();
  });
  el.rollForUs.addEventListener("change", async () => {
    const on = el.rollForUs.checked, was = Boolean(dice && dice.roll_for_us);
    dice = { ...(dice || {}), roll_for_us: on };  // as ticked while the server saves it
    say("");
    try {
      const r = await send("/api/live/dice/roll-for-us", { on }, "PUT");
      dice = { ...(dice || {}), roll_for_us: Boolean(r.roll_for_us) };
    } catch (err) { dice = { ...(dice || {}), roll_for_us: was }; say(err.message, "bad"); }
    render(true);
  });

  async function refresh() {
    try {
      const got = await api("/api/live/dice");
      if (!newest(got)) return;  // a roll answered while it was asked for: the panel already shows what came after
      dice = got;
      render();
    } catch (err) {
      if (err.status === 404) { card.dataset.state = "unavailable"; say("This server does not take the players' dice yet."); }
    }
  }

  // The frame messages carry the same object: no asking while a feed plays.
  function frame(msg) {
    if (!msg) return;
    if (msg.owners) owners = msg.owners;
    if (msg.dice === undefined) return;
    lastFrameAt = performance.now();
    // an older state than the panel's stays unshown; the frame's units still name who rolls (after a reload the
    // panel's first state comes before the first frame)
    if (newest(msg.dice)) dice = msg.dice;
    render();
  }

  refresh();
  setInterval(() => { if (!document.hidden && !busy && performance.now() - lastFrameAt > POLL_MS) refresh(); }, POLL_MS);
  window.tablesightDice = { get state() { return dice; }, get typed() { return [...typed]; } };
  return { frame, refresh };
}
