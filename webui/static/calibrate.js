// The calibration wizard: capture (or upload), anchors found and missing, the residual; the lens (camera
// intrinsics): measured from photos, which one is in use, forgotten.
// The forms are sent by fetch with X-Tablesight: 1 (the server refuses a change without it).
const shot = document.getElementById("shot");
const caption = document.getElementById("shot-caption");

async function send(path, form) {
  let res;
  try { res = await fetch(path, { method: "POST", body: form, headers: { "X-Tablesight": "1" } }); } catch (e) {
    throw new Error("The Tablesight server is not answering; is it still running?");
  }
  const data = await res.json().catch(() => ({ detail: `The server refused the photo (status ${res.status}); try again.` }));
  if (!res.ok) throw new Error(typeof data.detail === "string" ? data.detail : `The server refused the photo (status ${res.status}); try again.`);
  return data;
}

async function loadPicture(file) {
  const blob = file || (await (await fetch(`/api/live/frame.jpg?t=${Date.now()}`)).blob());
  return createImageBitmap(blob);
}

function drawShot(bitmap, answer) {
  shot.width = bitmap.width; shot.height = bitmap.height;
  const ctx = shot.getContext("2d");
  ctx.drawImage(bitmap, 0, 0);
  const k = Math.max(1, bitmap.width / 1280);
  let n = 0;
  for (const [id, corners] of Object.entries(answer.anchor_corners || {})) {
    ctx.beginPath();
    corners.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
    ctx.closePath();
    ctx.lineWidth = 4 * k; ctx.strokeStyle = "#00e5ff"; ctx.stroke();
    ctx.font = `700 ${Math.round(18 * k)}px system-ui`; ctx.fillStyle = "#00e5ff";
    ctx.fillText(`anchor ${id}`, corners[3][0], corners[3][1] - 8 * k);
    n++;
  }
  shot.dataset.anchors = String(n);
}

document.getElementById("table-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = new FormData();
  form.append("board", document.getElementById("board").value);
  const file = document.getElementById("photo").files[0];
  if (file) form.append("image", file);
  const residual = document.getElementById("residual");
  const msg = document.getElementById("cal-message");
  const anchors = document.getElementById("anchors");
  const lensNote = document.getElementById("lens-note");
  residual.textContent = ""; residual.className = ""; msg.textContent = "Working…"; msg.className = "muted";
  document.getElementById("cal-advice").textContent = ""; lensNote.textContent = "";
  try {
    const bitmapPromise = loadPicture(file);
    const a = await send("/api/calibration/table", form);
    drawShot(await bitmapPromise, a);
    const source = a.source.charAt(0).toUpperCase() + a.source.slice(1);
    caption.textContent = `${source}: ${a.image_size[0]}×${a.image_size[1]} px`;
    anchors.innerHTML = "";
    for (const id of a.anchors_expected) {
      const span = document.createElement("span");
      const found = a.anchors_found.includes(id);
      span.className = `chip ${found ? "found" : "missing"}`;
      span.textContent = `${id} ${found ? "found" : "missing"}`;
      anchors.append(span);
    }
    if (a.ok) {
      const inches = document.createElement("b");
      inches.id = "residual-in";
      inches.textContent = `${Number(a.residual_in).toFixed(3)}"`;
      residual.replaceChildren("Residual ", inches,
        ` (${Number(a.residual_px).toFixed(2)} px), camera ${a.camera_height_in}" up, tilt ${a.tilt_deg}°`);
      residual.className = "ok";
    } else {
      residual.className = "bad";
    }
    msg.textContent = a.message;
    msg.className = a.ok ? "ok" : "bad";
    lensNote.textContent = a.lens || "";
    document.getElementById("cal-advice").textContent = (a.advice || []).join(" ");
    showLens();
  } catch (err) {
    anchors.innerHTML = "";
    msg.textContent = err.message;
    msg.className = "bad";
  }
});

// The marker side and the dictionary are a ChArUco board's only: shown when it is the target.
const pattern = document.getElementById("pattern");
function showCharucoFields() {
  const charuco = pattern.value === "charuco";
  for (const id of ["marker", "dictionary"]) {
    document.getElementById(id).hidden = !charuco;
    document.querySelector(`label[for=${id}]`).hidden = !charuco;
  }
}
pattern.addEventListener("change", showCharucoFields);
showCharucoFields();

document.getElementById("camera-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const out = document.getElementById("camera-result");
  const form = new FormData(ev.target);
  if (!document.getElementById("marker").value || pattern.value !== "charuco") form.delete("marker_in");
  out.textContent = "Working…";
  try {
    const r = await send("/api/calibration/camera", form);
    const skipped = r.skipped.length ? ` No board was found in ${r.skipped.join(", ")}.` : "";
    out.textContent = `${r.message}${skipped}`;
    out.className = "ok";
    showLens();
  } catch (err) { out.textContent = err.message; out.className = "bad"; }
});

// The lens in use (measured here, or the one the table was calibrated with), and forgetting it.
const lensState = document.getElementById("lens-state");
const lensResult = document.getElementById("lens-result");
const forgetLens = document.getElementById("forget-lens");

function drawLens(state) {
  lensState.textContent = state.message;
  lensState.className = state.in_use ? "ok" : "muted";
  lensState.dataset.inUse = String(state.in_use);
  forgetLens.disabled = !state.can_forget;
  forgetLens.hidden = !state.can_forget;  // nothing to forget: no button
}

async function showLens() {
  try { drawLens(await sendJson("/api/calibration/lens", "GET")); } catch (err) {
    lensState.textContent = err.message; lensState.className = "bad";
  }
}

forgetLens.addEventListener("click", async () => {
  lensResult.textContent = "Forgetting…"; lensResult.className = "muted";
  try {
    const state = await sendJson("/api/calibration/lens", "DELETE");
    drawLens(state);
    lensResult.textContent = state.forgot; lensResult.className = "ok";
  } catch (err) { lensResult.textContent = err.message; lensResult.className = "bad"; }
});

showLens();

// Step 3, tag mounts: while measuring, each look adds the newest live frame on the server and shows every roster
// tag's turn; Save asks the server for the roster with the measured mounts in, then saves it as the Roster page does.
const mountsBody = document.querySelector("#mounts-table tbody");
const mountsStatus = document.getElementById("mounts-status");
const mountsResult = document.getElementById("mounts-result");
const mountsStart = document.getElementById("mounts-start");
const mountsSave = document.getElementById("mounts-save");
let mountsTimer = null;

async function sendJson(path, method = "POST", body = undefined) {
  let res;
  const headers = { "X-Tablesight": "1" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new Error("The Tablesight server is not answering; is it still running?");
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(typeof data.detail === "string" ? data.detail : `The server refused (status ${res.status}); try again.`);
  return data;
}

const fmt = (p) => `${p[0].toFixed(3)}", ${p[1].toFixed(3)}"`;  // inches along the tag's own right and up

function showMounts(answer) {
  mountsBody.innerHTML = "";
  for (const m of answer.mounts) {
    const tr = document.createElement("tr");
    tr.dataset.tag = String(m.tag);
    tr.className = m.ready ? "ready" : "";
    const cells = [m.name + (m.extra ? " (extra tag)" : ""), String(m.tag), "", fmt(m.old_offset_in),
                   m.ready ? fmt(m.offset_in) : m.hint, m.ready ? `${m.pm_in.toFixed(3)}"` : ""];
    cells.forEach((text, i) => {
      const td = document.createElement("td");
      if (i === 2) {
        const bar = document.createElement("progress");
        bar.max = 90; bar.value = Math.min(90, m.turned_deg);
        td.append(bar, ` ${Math.round(m.turned_deg)}°`);
        td.className = "turned";
      } else {
        td.textContent = text;
      }
      if (i === 4) { td.className = m.ready ? "ok offset" : "muted offset"; if (!m.ready) td.title = m.message; }
      tr.append(td);
    });
    mountsBody.append(tr);
  }
  mountsSave.disabled = !answer.ready;
  mountsStatus.textContent = answer.status || `${answer.ready} of ${answer.mounts.length} tag${answer.mounts.length === 1 ? "" : "s"} measured; turn each base ${answer.min_turn_deg}° or more.`;
  mountsStatus.className = answer.status ? "bad" : "muted";
}

async function lookAtMounts() {
  try {
    showMounts(await sendJson("/api/calibration/mounts/look"));
  } catch (err) {
    stopMounts();
    mountsStatus.textContent = err.message; mountsStatus.className = "bad";
  }
}

function stopMounts() {
  if (mountsTimer !== null) clearInterval(mountsTimer);
  mountsTimer = null;
  mountsStart.textContent = "Start measuring";
}

mountsStart.addEventListener("click", () => {
  if (mountsTimer !== null) { stopMounts(); return; }
  mountsStart.textContent = "Pause";
  mountsResult.textContent = "";
  lookAtMounts();
  mountsTimer = setInterval(lookAtMounts, 300);
});

document.getElementById("mounts-reset").addEventListener("click", async () => {
  try {
    await sendJson("/api/calibration/mounts/reset");
    mountsBody.innerHTML = ""; mountsSave.disabled = true; mountsResult.textContent = "";
    if (mountsTimer === null) mountsStatus.textContent = "";
  } catch (err) { mountsStatus.textContent = err.message; mountsStatus.className = "bad"; }
});

mountsSave.addEventListener("click", async () => {
  mountsResult.textContent = "Saving…"; mountsResult.className = "muted";
  try {
    const r = await sendJson("/api/calibration/mounts/roster");
    await sendJson("/api/roster", "PUT", r.roster);
    mountsResult.textContent = `Saved the measured mount of tag${r.measured.length > 1 ? "s" : ""} ${r.measured.join(", ")} into the roster.`;
    mountsResult.className = "ok";
  } catch (err) { mountsResult.textContent = err.message; mountsResult.className = "bad"; }
});

// Step 4, the dice tray: its corners clicked on the camera's newest picture, saved beside the calibration
// (PUT /api/live/dice/tray); while a roll is waiting the camera reads the dice inside it.
const trayShot = document.getElementById("tray-shot");
const trayMsg = document.getElementById("tray-msg");
const trayUndo = document.getElementById("tray-undo");
const traySave = document.getElementById("tray-save");
const trayClear = document.getElementById("tray-clear");
let trayPicture = null, trayCorners = [], traySaved = null;

function trayNote(text, kind) { trayMsg.textContent = text; trayMsg.className = kind || "muted"; }

function drawTray() {
  const ctx = trayShot.getContext("2d");
  if (trayPicture && (trayShot.width !== trayPicture.width || trayShot.height !== trayPicture.height)) {
    trayShot.width = trayPicture.width; trayShot.height = trayPicture.height;
  }
  ctx.fillStyle = "#2b3036";
  ctx.fillRect(0, 0, trayShot.width, trayShot.height);
  if (trayPicture) ctx.drawImage(trayPicture, 0, 0);
  const k = Math.max(1, trayShot.width / 1280);
  const outline = (pts, colour, closed, dash) => {
    if (!pts.length) return;
    ctx.beginPath();
    pts.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
    if (closed) ctx.closePath();
    ctx.setLineDash(dash ? [10 * k, 6 * k] : []);
    ctx.lineWidth = 3 * k; ctx.strokeStyle = colour; ctx.stroke();
    ctx.setLineDash([]);
  };
  if (traySaved) {
    outline(traySaved, "#2ecc71", true, true);
    ctx.font = `700 ${Math.round(18 * k)}px system-ui`; ctx.fillStyle = "#2ecc71";
    ctx.fillText("dice tray (saved)", traySaved[0][0] + 6 * k, traySaved[0][1] - 8 * k);
  }
  outline(trayCorners, "#00e5ff", trayCorners.length >= 3, false);
  trayCorners.forEach((p, i) => {
    ctx.beginPath(); ctx.arc(p[0], p[1], 6 * k, 0, 2 * Math.PI); ctx.fillStyle = "#00e5ff"; ctx.fill();
    ctx.font = `700 ${Math.round(16 * k)}px system-ui`; ctx.fillText(String(i + 1), p[0] + 8 * k, p[1] - 8 * k);
  });
  trayShot.dataset.corners = String(trayCorners.length);
  trayShot.dataset.saved = String(traySaved ? traySaved.length : 0);
  trayUndo.disabled = !trayCorners.length;
  traySave.disabled = trayCorners.length < 3;
  trayClear.disabled = !traySaved;
}

async function loadTrayPicture() {
  try {
    const res = await fetch(`/api/live/frame.jpg?t=${Date.now()}`, { headers: { "X-Tablesight": "1" } });
    if (!res.ok) throw new Error("No camera picture yet: start the camera (or the recording), then try again.");
    if (trayPicture) trayPicture.close();
    trayPicture = await createImageBitmap(await res.blob());
    drawTray();
    trayNote(trayCorners.length ? "" : "Click the tray's first corner on the picture.");
  } catch (err) { trayNote(err.message, "bad"); }
}

trayShot.addEventListener("click", (ev) => {
  if (!trayPicture) { trayNote("Press Show the camera first: the corners are clicked on its picture.", "bad"); return; }
  const r = trayShot.getBoundingClientRect();
  const x = Math.round(((ev.clientX - r.left) * trayShot.width) / r.width);
  const y = Math.round(((ev.clientY - r.top) * trayShot.height) / r.height);
  trayCorners.push([x, y]);
  drawTray();
  const n = trayCorners.length;
  trayNote(n < 3 ? `${n} corner${n === 1 ? "" : "s"}: click ${3 - n} more at least.` : `${n} corners: click another, or save the tray.`);
});

trayUndo.addEventListener("click", () => { trayCorners.pop(); drawTray(); trayNote(""); });

traySave.addEventListener("click", async () => {
  try {
    const r = await sendJson("/api/live/dice/tray", "PUT", { polygon_px: trayCorners });
    traySaved = (r.tray && r.tray.polygon_px) || r.polygon_px || trayCorners;
    trayCorners = [];
    drawTray();
    trayNote(`Saved the dice tray (${traySaved.length} corners): the camera reads the dice in it while a roll is waiting.`, "ok");
  } catch (err) { trayNote(err.message, "bad"); }
});

trayClear.addEventListener("click", async () => {
  try {
    await sendJson("/api/live/dice/tray", "PUT", { polygon_px: null });
    traySaved = null;
    drawTray();
    trayNote("The dice tray is forgotten: type the faces on the live page, or use the phone as a dice camera.", "ok");
  } catch (err) { trayNote(err.message, "bad"); }
});

document.getElementById("tray-picture").addEventListener("click", loadTrayPicture);

(async () => {
  try {
    const d = await sendJson("/api/live/dice", "GET");
    traySaved = d.tray && d.tray.polygon_px ? d.tray.polygon_px : null;
    if (traySaved) { await loadTrayPicture(); trayNote(`A dice tray of ${traySaved.length} corners is saved; click new corners to replace it.`); }
  } catch (err) { /* no dice on this server: the card stays as it is */ }
  drawTray();
})();
