// The streaming overlay (/overlay): the live measurements alone on a transparent page, for OBS's browser
// source (or over the camera picture with ?camera=1), and the game's verdicts as cards that fade after a while.
import { connectFeed } from "/static/feed.js";
import { drawCamera } from "/static/overlay.js";

const NEWSWORTHY = new Set(["illegal", "too close to call"]);

// "Unit 14 attacks tag 17" -> "Bjorn attacks Sigrid", from the units in the frame message.
export function withNames(text, units) {
  const names = new Map((units || []).map((u) => [u.tag, u.name]));
  return String(text || "").replace(/\b([Uu]nit|[Tt]ag) (\d+)\b/g, (m, _u, id) => names.get(Number(id)) || m);
}

export function startOverlay({ wsPath, camera, layers, scale, seconds }) {
  const canvas = document.getElementById("camera");
  const cards = document.getElementById("verdicts");
  const status = document.getElementById("status");
  const wanted = new Set(layers);
  const shown = new Set();
  let last = null;
  const state = { msg: null, cards: 0 };
  window.tablesight = state;

  function card(v, units) {
    const key = `${v.frame}|${v.rule}|${v.unit}|${v.message}`;
    if (shown.has(key)) return;
    shown.add(key);
    const el = document.createElement("div");
    el.className = `card ${(v.outcome || "info").replace(/ /g, "-")}`;
    el.textContent = withNames(v.message, units);
    cards.append(el);
    state.cards += 1;
    while (cards.children.length > 4) cards.firstChild.remove();
    setTimeout(() => el.classList.add("fading"), seconds * 1000);
    setTimeout(() => el.remove(), seconds * 1000 + 700);
  }

  connectFeed(wsPath, {
    shows: camera ? canvas : null,
    onFrame(msg, bitmap) {
      state.msg = msg;
      if (bitmap && last && last !== bitmap) last.close();
      if (bitmap) last = bitmap;
      drawCamera(canvas, camera ? last : null, msg, [], { transparent: !camera, layers: wanted, scale });
      if (wanted.has("verdicts")) {
        for (const v of msg.verdicts || []) {
          if (NEWSWORTHY.has(v.outcome) || v.event === "declared") card({ frame: msg.frame_index, ...v }, msg.units);
        }
      }
      status.hidden = true;
    },
    onStatus(msg) {
      const bad = ["lost", "error", "disconnected"].includes(msg.status);
      status.hidden = !bad;
      if (bad) status.textContent = msg.message || "The camera is lost.";
    },
  });
}
