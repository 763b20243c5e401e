// The phone's camera page: the rear camera streamed to the server as JPEG frames over a WebSocket at the chosen
// size and rate. Newest frame wins: a frame is taken only when the one before it has been encoded and has left
// (nothing queues on the phone), and the server measures only the newest it has. The server answers each frame
// it measured with the anchors it found there, drawn over the preview. The screen is kept awake while streaming;
// the page says when it was in the background. Shots of a chessboard or ChArUco board measure the phone's lens.
import { SAME_ORIGIN, api } from "/static/feed.js";
import { counted, sentence } from "/static/words.js";

const $ = (id) => document.getElementById(id);
const video = $("preview"), outline = $("outline"), stateEl = $("cam-state"), startBtn = $("start");
const sizeSel = $("size"), rateSel = $("rate"), away = $("away"), wakeEl = $("wake"), chips = $("anchor-chips");
const allowed = $("phone").dataset.streaming === "yes";
const JPEG_QUALITY = 0.8;
const SHOT_QUALITY = 0.95;
const STALE_MS = 2000; // outlines older than this are cleared: the server has not measured a frame since

// What the tests and benchmarks read: frames sent, frames the server measured, and for each measured frame the
// time from its capture on this phone to the server's answer (ms, this page's clock: no clock sync needed).
const stats = { sent: 0, measured: 0, busy: 0, latencies: [], held: [], started: 0, connection: 0 };
window.tablesightPhone = stats;

let stream = null, ws = null, streaming = false, timer = null, encoding = false, seq = 0;
let sentAt = new Map(), wakeLock = null, hiddenAt = null, lastAnswer = 0, refused = false;
const sentTimes = [], measuredTimes = [];
const encoder = document.createElement("canvas");

function say(text, kind) { stateEl.textContent = text; stateEl.className = kind || "muted"; }

function frameSize() {
  const vw = video.videoWidth, vh = video.videoHeight;
  if (!vw || !vh) return null;
  const k = Math.min(1, Number(sizeSel.value) / Math.max(vw, vh)); // never larger than the camera gives
  return [Math.round(vw * k), Math.round(vh * k)];
}

async function openCamera() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    throw new Error("This browser gives the camera only to a secure page: open the https:// address the server printed (or scan its QR code).");
  }
  try {
    return await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: { facingMode: { ideal: "environment" }, width: { ideal: 1920 }, height: { ideal: 1080 } },
    });
  } catch (err) {
    if (err && err.name === "NotAllowedError") throw new Error("The camera was refused: allow it for this site in the browser's settings, then reload the page.");
    if (err && err.name === "NotFoundError") throw new Error("This device has no camera the browser can use.");
    if (err && err.name === "NotReadableError") throw new Error("The camera is in use by another app; close it, then press Start again.");
    throw new Error(`The camera could not be opened (${err && err.name ? err.name : err}); reload the page and try again.`);
  }
}

function connect() {
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/camera`;
  const sock = new WebSocket(url);
  sock.binaryType = "arraybuffer";
  seq = 0; sentAt = new Map(); stats.connection += 1;
  sock.onopen = () => { if (ws === sock) { say("Streaming to the server.", "ok"); tellVisibility(); } };
  sock.onmessage = (ev) => { if (typeof ev.data === "string") answer(JSON.parse(ev.data)); };
  sock.onclose = (ev) => {
    if (ws !== sock) return;
    ws = null;
    if (!streaming || refused) return;
    if (ev.code === 1008) { stop("The access token is missing or wrong: scan the QR code or open the address the server printed.", "bad"); return; }
    say("Lost the connection to the Tablesight server; reconnecting…", "bad");
    setTimeout(() => { if (streaming && !ws && !document.hidden) ws = connect(); }, 1000);
  };
  return sock;
}

function answer(msg) {
  if (msg.type === "refused" || msg.type === "replaced") {
    refused = msg.type === "refused" || msg.type === "replaced";
    stop(msg.message, "bad");
    return;
  }
  if (msg.type !== "measured") return;
  const now = performance.now();
  const at = sentAt.get(msg.seq);
  if (at !== undefined) {
    stats.latencies.push(now - at);
    if (stats.latencies.length > 5000) stats.latencies.splice(0, 1000);
    for (const k of sentAt.keys()) if (k <= msg.seq) sentAt.delete(k);
  }
  stats.held.push(msg.held_ms);
  if (stats.held.length > 5000) stats.held.splice(0, 1000);
  stats.measured += 1;
  measuredTimes.push(now);
  lastAnswer = now;
  drawAnchors(msg);
  const lat = stats.latencies.slice(-30).sort((a, b) => a - b);
  $("st-latency").textContent = lat.length ? `${Math.round(lat[Math.floor(lat.length / 2)])} ms capture → measured` : "–";
  $("st-server").textContent = `${msg.status === "ok" ? "measuring" : msg.status}${msg.calibrated ? ", calibrated" : ", not calibrated"}, ${msg.tags} tags` + (msg.recording ? `, recording ${msg.recording}` : "");
  if (msg.status === "error" && msg.message) say(msg.message, "bad");
  else if (streaming && ws) say("Streaming to the server.", "ok");
}

function drawAnchors(msg) {
  const [w, h] = msg.image_size;
  if (w && h && (outline.width !== w || outline.height !== h)) { outline.width = w; outline.height = h; }
  const ctx = outline.getContext("2d");
  ctx.clearRect(0, 0, outline.width, outline.height);
  const k = Math.max(1, outline.width / 640);
  const found = new Set();
  for (const a of msg.anchors) {
    found.add(a.id);
    ctx.beginPath();
    a.corners.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
    ctx.closePath();
    ctx.lineWidth = 3 * k; ctx.strokeStyle = "#00e5ff"; ctx.stroke();
    ctx.font = `700 ${Math.round(14 * k)}px system-ui`; ctx.fillStyle = "#00e5ff";
    ctx.fillText(`anchor ${a.id}`, a.corners[3][0], a.corners[3][1] + 16 * k);
  }
  outline.dataset.anchors = String(found.size);
  chips.innerHTML = "";
  for (const id of msg.anchor_ids) {
    const span = document.createElement("span");
    span.className = `chip ${found.has(id) ? "found" : "missing"}`;
    span.textContent = `anchor ${id} ${found.has(id) ? "found" : "missing"}`;
    chips.append(span);
  }
}

function perSecond(times, now) {
  while (times.length && now - times[0] > 2000) times.shift();
  return times.length / 2;
}

function tick() {
  timer = setTimeout(tick, 1000 / Number(rateSel.value));
  const now = performance.now();
  $("st-sent").textContent = `${perSecond(sentTimes, now).toFixed(1)} frames/s (${stats.sent} in all)`;
  $("st-measured").textContent = `${perSecond(measuredTimes, now).toFixed(1)} frames/s` + (stats.busy ? `, ${stats.busy} skipped while busy` : "");
  if (lastAnswer && now - lastAnswer > STALE_MS) {
    outline.getContext("2d").clearRect(0, 0, outline.width, outline.height);
    outline.dataset.anchors = "0";
  }
  if (!streaming || document.hidden || !ws || ws.readyState !== WebSocket.OPEN) return;
  if (encoding || ws.bufferedAmount > 0) { stats.busy += 1; return; } // newest wins: never queue a frame
  const size = frameSize();
  if (!size) return;
  const [w, h] = size;
  if (encoder.width !== w || encoder.height !== h) { encoder.width = w; encoder.height = h; }
  encoder.getContext("2d").drawImage(video, 0, 0, w, h);
  const captured = performance.now();
  const sock = ws;
  encoding = true;
  encoder.toBlob((blob) => {
    encoding = false;
    if (!blob || sock !== ws || sock.readyState !== WebSocket.OPEN) return;
    sentAt.set(seq, captured);
    seq += 1;
    sock.send(blob);
    stats.sent += 1;
    sentTimes.push(performance.now());
  }, "image/jpeg", JPEG_QUALITY);
}

async function keepAwake() {
  if (!("wakeLock" in navigator)) {
    wakeEl.textContent = "This browser cannot keep the screen on: turn off auto-lock in the phone's settings while you play.";
    return;
  }
  try {
    wakeLock = await navigator.wakeLock.request("screen");
    wakeEl.textContent = "The screen stays on while streaming.";
    wakeLock.addEventListener("release", () => { wakeLock = null; if (streaming) wakeEl.textContent = "The screen may turn off now; it is kept on again when the page is in front."; });
  } catch (err) {
    wakeEl.textContent = `The browser would not keep the screen on (${err && err.name ? err.name : "refused"}; battery saver?): turn off auto-lock while you play.`;
  }
}

function tellVisibility() {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "visibility", hidden: document.hidden }));
}

document.addEventListener("visibilitychange", () => {
  tellVisibility();
  if (document.hidden) {
    hiddenAt = Date.now();
    away.hidden = false;
    away.textContent = "The page is in the background: no frames are sent until it is in front again.";
    return;
  }
  const secs = hiddenAt ? Math.round((Date.now() - hiddenAt) / 1000) : 0;
  hiddenAt = null;
  if (streaming) {
    away.hidden = false;
    away.textContent = `The page was in the background for ${secs} s, so the stream stopped meanwhile; it goes on now.`;
    if (!ws) ws = connect();
    if (!wakeLock) keepAwake();
  } else {
    away.hidden = true;
  }
});

async function start() {
  refused = false;
  away.hidden = true;
  startBtn.disabled = true;
  try {
    if (!stream) {
      say("Asking for the camera…");
      stream = await openCamera();
      video.srcObject = stream;
      await video.play().catch(() => {});
      stream.getVideoTracks()[0].addEventListener("ended", () => stop("The camera stopped (another app took it?); press Start again.", "bad"));
    }
    if (!allowed) { say("The camera is shown for lens shots only: this server takes no frames from it (see above).", "bad"); return; }
    streaming = true;
    stats.started = performance.now();
    ws = connect();
    if (timer === null) tick();
    keepAwake();
    startBtn.textContent = "Stop";
  } catch (err) {
    say(err.message, "bad");
  } finally {
    startBtn.disabled = false;
  }
}

function stop(message, kind) {
  streaming = false;
  const sock = ws;
  ws = null;
  if (sock) sock.close();
  if (wakeLock) { wakeLock.release().catch(() => {}); wakeLock = null; }
  wakeEl.textContent = "";
  startBtn.textContent = "Start";
  say(message || "Stopped: the server gets no frames from this phone.", kind || "muted");
}

startBtn.addEventListener("click", () => (streaming ? stop() : start()));
const diceMode = $("phone").dataset.mode === "dice";  // /camera?dice=1: the phone reads the dice, never streams
if (allowed && !diceMode) start(); // scanned, opened, streaming: one tap less (the browser still asks for the camera once)

// ---- the table, from the picture the server has now (this phone's newest frame) ----

async function post(path, form) {
  let res;
  try { res = await fetch(path, { method: "POST", body: form, headers: SAME_ORIGIN }); } catch (e) {
    throw new Error("The Tablesight server is not answering; is it still running?");
  }
  const data = await res.json().catch(() => ({ detail: `The server refused it (status ${res.status}); try again.` }));
  if (!res.ok) throw new Error(typeof data.detail === "string" ? data.detail : `The server refused it (status ${res.status}); try again.`);
  return data;
}

if ($("table-form")) $("table-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const out = $("table-result");
  const form = new FormData();
  form.append("board", $("board").value);
  out.textContent = "Working…"; out.className = "muted";
  try {
    const a = await post("/api/calibration/table", form);
    const missing = a.anchors_missing.length ? ` Missing: anchor ${a.anchors_missing.join(", ")}.` : "";
    out.textContent = a.ok ? `${a.message} Residual ${a.residual_in.toFixed(3)}" (${a.residual_px.toFixed(2)} px).` : `${a.message}${missing}`;
    out.className = a.ok ? "ok" : "bad";
    out.dataset.ok = a.ok ? "yes" : "no";
  } catch (err) { out.textContent = err.message; out.className = "bad"; out.dataset.ok = "no"; }
});

// ---- the lens: shots at the streaming size, sent together to the camera calibration ----

const shots = [];
function showShots() {
  const el = $("shots");
  el.dataset.count = String(shots.length);
  el.textContent = shots.length ? `${shots.length} shot${shots.length > 1 ? "s" : ""} at ${shots[0].w}×${shots[0].h} px (10–20 from different angles work best).` : "No shots yet.";
  $("measure-lens").disabled = shots.length < 3;
  $("measure-lens").textContent = `Measure the lens (${shots.length} shots)`;
}

$("shot").addEventListener("click", async () => {
  const size = frameSize();
  if (!size) { $("lens-result").textContent = "Start the camera first."; $("lens-result").className = "bad"; return; }
  const c = document.createElement("canvas");
  [c.width, c.height] = size;
  c.getContext("2d").drawImage(video, 0, 0, c.width, c.height);
  const blob = await new Promise((resolve) => c.toBlob(resolve, "image/jpeg", SHOT_QUALITY));
  if (blob) shots.push({ blob, w: c.width, h: c.height });
  showShots();
});

$("forget-shots").addEventListener("click", () => { shots.length = 0; showShots(); $("lens-result").textContent = ""; });

$("measure-lens").addEventListener("click", async () => {
  const out = $("lens-result");
  const form = new FormData($("lens-form"));
  if (!$("marker").value) form.delete("marker_in");
  shots.forEach((s, i) => form.append("images", s.blob, `shot_${String(i + 1).padStart(2, "0")}.jpg`));
  out.textContent = `Measuring the lens from ${shots.length} shots…`; out.className = "muted";
  try {
    const r = await post("/api/calibration/camera", form);
    out.textContent = `${r.message} fx ${r.fx} px at ${r.image_size[0]}×${r.image_size[1]}, ${r.used.length} shots used${r.skipped.length ? ", pattern not found in " + r.skipped.join(", ") : ""}.`;
    out.className = "ok";
    out.dataset.fx = String(r.fx);
  } catch (err) { out.textContent = err.message; out.className = "bad"; }
});
showShots();

// ---- the dice camera (/camera?dice=1): a close picture of the tray, read by the server (POST /api/live/dice/photo),
// its dice drawn on it; an unsure die is tapped to set its face; "Use these faces" answers the roll that waits. ----

function startDiceCamera() {
  const LOW_CONFIDENCE = 0.8;  // vision/dice/die.py: a die read with less is shown for a tap
  const READ_EVERY_MS = 1000;
  const POLL_MS = 1000;
  const rollEl = $("dice-cam-roll"), readBtn = $("dice-read"), auto = $("dice-auto"), sidesSel = $("dice-cam-sides");
  const facesEl = $("dice-cam-faces"), pickEl = $("dice-cam-pick"), noteEl = $("dice-cam-note"), useBtn = $("dice-cam-use");
  const verdictEl = $("dice-cam-verdict"), msgEl = $("dice-cam-msg");
  let pending = null, read = null, setFaces = {}, picking = null, reading = false, sending = false, readAt = -Infinity;
  const snap = document.createElement("canvas");
  const sides = () => (pending ? pending.request.sides : Number(sidesSel.value));
  const sayDice = (text, kind) => { msgEl.textContent = text || ""; msgEl.className = `dice-msg ${kind || ""}`; };
  const facesNow = () => (read ? read.dice.map((d, i) => setFaces[i] ?? d.value) : []);
  const unsure = () => (read ? read.dice.map((d, i) => i).filter((i) => read.dice[i].confidence < LOW_CONFIDENCE && setFaces[i] === undefined) : []);
  window.tablesightDiceCamera = { get read() { return read; }, get pending() { return pending; }, faces: facesNow };

  async function ensureCamera() {
    if (stream) return;
    say("Asking for the camera…");
    stream = await openCamera();
    video.srcObject = stream;
    await video.play().catch(() => {});
    say("Point the phone at the dice tray.", "ok");
  }

  function showRoll() {
    $("dice-cam-sides-label").hidden = Boolean(pending);
    const req = pending && pending.request;
    rollEl.textContent = req ? `${sentence(req.sentence)}.` : "No roll is waiting. Declare an action that needs dice on the live table; this page reads the dice then.";
    rollEl.dataset.pending = pending ? String(pending.id) : "";
    showRead();
  }

  async function poll() {
    try {
      const d = await api("/api/live/dice");
      const was = pending ? pending.id : null;
      pending = d.pending || null;
      if ((pending ? pending.id : null) !== was && read && !sending) { read = null; setFaces = {}; picking = null; drawRead(); }
      showRoll();
    } catch (err) { rollEl.textContent = err.message; }
  }

  function showRead() {
    const faces = facesNow(), low = unsure();
    facesEl.replaceChildren();
    faces.forEach((f, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = `dice-chip${low.includes(i) ? " low" : ""}${picking === i ? " picked" : ""}`;
      b.textContent = low.includes(i) ? `${f}?` : String(f);
      b.title = "Tap to set this die's face";
      b.addEventListener("click", () => { picking = picking === i ? null : i; showRead(); drawRead(); });
      facesEl.append(b);
    });
    facesEl.dataset.faces = faces.join(",");
    pickEl.hidden = picking === null;
    if (picking !== null && pickEl.dataset.key !== `${picking}/${sides()}`) {
      pickEl.replaceChildren();
      pickEl.style.setProperty("--cols", String(sides() <= 6 ? sides() : 5));
      for (let f = 1; f <= sides(); f++) {
        const b = document.createElement("button");
        b.type = "button"; b.className = "dice-face"; b.textContent = String(f); b.dataset.face = String(f);
        b.addEventListener("click", () => { if (picking !== null) setFaces[picking] = f; picking = null; showRead(); drawRead(); });
        pickEl.append(b);
      }
    }
    pickEl.dataset.key = picking === null ? "" : `${picking}/${sides()}`;
    const req = pending && pending.request;
    let note = read ? (faces.length ? `Read ${counted(faces.length, "die", "dice")}: ${faces.join(" ")}.` : "No dice in the picture: hold the phone over the tray.") : "No dice read yet.";
    if (low.length) note += ` ${low.length === 1 ? "One die is" : `${low.length} dice are`} unsure: tap ${low.length === 1 ? "it" : "each"} to set its face.`;
    if (req && read && faces.length !== req.count) note += ` The roll takes ${counted(req.count, "die", "dice")}.`;
    noteEl.textContent = note;
    useBtn.disabled = sending || !req || !read || faces.length !== req.count;
  }

  // The picture that was read, with each die's box and face, over the live preview.
  function drawRead() {
    const ctx = outline.getContext("2d");
    if (!read) { ctx.clearRect(0, 0, outline.width, outline.height); outline.dataset.dice = "0"; return; }
    if (outline.width !== snap.width || outline.height !== snap.height) { outline.width = snap.width; outline.height = snap.height; }
    ctx.drawImage(snap, 0, 0);
    const [iw, ih] = read.size || [snap.width, snap.height];
    const sx = snap.width / iw, sy = snap.height / ih, k = Math.max(1, snap.width / 640);
    const low = unsure(), faces = facesNow();
    read.dice.forEach((d, i) => {
      const [x0, y0, x1, y1] = d.box_px;
      ctx.lineWidth = (low.includes(i) ? 5 : 3) * k;
      ctx.strokeStyle = low.includes(i) ? "#ffb000" : setFaces[i] !== undefined ? "#2ecc71" : "#00e5ff";
      ctx.strokeRect(x0 * sx, y0 * sy, (x1 - x0) * sx, (y1 - y0) * sy);
      const label = low.includes(i) ? `${faces[i]}?` : String(faces[i]);
      const fs = Math.round(Math.max(18, Math.min(48, (y1 - y0) * sy * 0.5)));
      ctx.font = `700 ${fs}px system-ui`;
      const tw = ctx.measureText(label).width;
      ctx.fillStyle = "rgba(0,0,0,.7)";
      ctx.fillRect(x0 * sx, y0 * sy - fs - 6, tw + 10, fs + 6);
      ctx.fillStyle = low.includes(i) ? "#ffb000" : "#fff";
      ctx.fillText(label, x0 * sx + 5, y0 * sy - 6);
    });
    outline.dataset.dice = String(read.dice.length);
  }

  outline.addEventListener("click", (ev) => {
    if (!read) return;
    const r = outline.getBoundingClientRect();
    const [iw, ih] = read.size || [outline.width, outline.height];
    const x = ((ev.clientX - r.left) / r.width) * iw, y = ((ev.clientY - r.top) / r.height) * ih;
    const i = read.dice.findIndex((d) => x >= d.box_px[0] && x <= d.box_px[2] && y >= d.box_px[1] && y <= d.box_px[3]);
    picking = i >= 0 ? i : null;
    showRead(); drawRead();
  });

  async function readDice() {
    if (reading || sending) return;
    reading = true;
    readBtn.disabled = true;
    readAt = performance.now();
    try {
      await ensureCamera();
      const vw = video.videoWidth, vh = video.videoHeight;
      if (!vw || !vh) throw new Error("The camera has no picture yet; wait a moment and read again.");
      const k = Math.min(1, 1920 / Math.max(vw, vh));
      snap.width = Math.round(vw * k); snap.height = Math.round(vh * k);
      snap.getContext("2d").drawImage(video, 0, 0, snap.width, snap.height);
      const blob = await new Promise((resolve) => snap.toBlob(resolve, "image/jpeg", 0.9));
      if (!blob) throw new Error("The picture could not be taken; read again.");
      let res;
      try {
        res = await fetch(`/api/live/dice/photo?sides=${sides()}`, { method: "POST", body: blob, headers: { ...SAME_ORIGIN, "Content-Type": "image/jpeg" } });
      } catch (e) { throw new Error("The Tablesight server is not answering; is it still running?"); }
      const data = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error(typeof data.detail === "string" ? data.detail : `The server could not read the picture (status ${res.status}); read again.`);
      read = { dice: data.dice || [], size: data.image_size || [snap.width, snap.height] };
      setFaces = {}; picking = null;
      sayDice("");
      showRead(); drawRead();
    } catch (err) { sayDice(err.message, "bad"); }
    reading = false;
    readBtn.disabled = false;
  }

  useBtn.addEventListener("click", async () => {
    if (!read || !pending) return;
    sending = true;
    showRead();
    try {
      const r = await api("/api/live/dice/roll", { faces: facesNow(), source: "phone" });
      verdictEl.hidden = false;
      verdictEl.replaceChildren();
      for (const v of r.verdicts || []) {
        const p = document.createElement("p");
        p.className = `dice-said ${v.outcome === "illegal" ? "illegal" : v.outcome === "waiting" ? "waiting" : "legal"}`;
        p.textContent = sentence(v.message);
        verdictEl.append(p);
      }
      sayDice(r.pending ? "Taken: the next roll waits." : "Taken: the table has ruled with these faces.", "ok");
      read = null; setFaces = {}; picking = null;
      pending = r.pending || null;
      drawRead();
    } catch (err) { sayDice(err.message, "bad"); }
    sending = false;
    showRoll();
  });

  readBtn.addEventListener("click", readDice);
  sidesSel.addEventListener("change", () => { read = null; drawRead(); showRead(); });
  // every second while a roll waits, unless the player is setting a die's face
  setInterval(() => {
    if (auto.checked && pending && !document.hidden && picking === null && !Object.keys(setFaces).length
        && performance.now() - readAt >= READ_EVERY_MS && stream) readDice();
  }, 250);
  setInterval(() => { if (!document.hidden) poll(); }, POLL_MS);
  poll();
  ensureCamera().catch((err) => say(err.message, "bad"));
}

if (diceMode) startDiceCamera();
