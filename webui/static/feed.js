// The frame feed: a WebSocket carrying a JSON message per frame followed by that frame's JPEG (binary).
// The newest frame wins: while a picture is being decoded, later ones replace the waiting one, which hands the newer
// one its events and verdicts (`carried`), so the page's list misses none of them.
// `shows`: the canvas the picture is drawn on; the server is told how wide it is on screen (device px), and
// sends pictures no wider than that (one 900 px across costs a third of a 1280 px one to decode).

export function connectFeed(wsPath, { onFrame, onStatus, shows }) {
  let ws = null, pendingMsg = null, waiting = null, busy = false, closed = false, viewWidth = 0;
  function sayView() {
    if (!shows || !ws || ws.readyState !== WebSocket.OPEN) return;
    const px = Math.ceil((shows.clientWidth * (window.devicePixelRatio || 1)) / 64) * 64;  // steps of 64: no churn
    if (px > 0 && px !== viewWidth) { viewWidth = px; ws.send(JSON.stringify({ type: "view", width: px })); }
  }
  if (shows && window.ResizeObserver) new ResizeObserver(sayView).observe(shows);
  const url = () => `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${wsPath}`;

  // `newer` with the events and verdicts of a skipped `older` frame message in front of its own; `covered`: the
  // numbers of the messages whose entries it holds (the server numbers its frame messages, `sent`)
  function carried(older, newer) {
    if (!older || older.run !== newer.run) return newer;  // a new pass of a looping recording starts its list afresh
    return { ...newer, covered: [...(older.covered || [older.sent]), newer.sent],
      events: [...(older.events || []), ...(newer.events || [])],
      verdicts: [...(older.verdicts || []).map((v) => ({ frame: older.frame_index, ...v })), ...(newer.verdicts || [])] };
  }

  async function drain() {
    if (busy || !waiting) return;
    busy = true;
    while (waiting) {
      const { msg, blob, received } = waiting;
      waiting = null;
      let bitmap = null;
      try { bitmap = blob ? await createImageBitmap(blob) : null; } catch (e) { bitmap = null; }
      onFrame(msg, bitmap, received);
    }
    busy = false;
  }

  function open() {
    ws = new WebSocket(url());
    ws.binaryType = "blob";
    ws.onmessage = (ev) => {
      const received = performance.now();
      if (typeof ev.data === "string") {
        const msg = JSON.parse(ev.data);
        if (msg.type === "frame") pendingMsg = carried(pendingMsg, msg);  // one that came without its picture
        else if (onStatus) onStatus(msg);
        return;
      }
      if (pendingMsg) {
        waiting = { msg: carried(waiting && waiting.msg, pendingMsg), blob: ev.data, received };
        pendingMsg = null;
        drain();
      }
    };
    ws.onclose = (ev) => {
      if (closed) return;
      if (onStatus) onStatus({ type: "status", status: "disconnected", message: ev.code === 1008 ? "The access token is missing or wrong; open the address printed when the server started." : "Lost the connection to the Tablesight server; reconnecting…" });
      setTimeout(open, 1000);
    };
    ws.onopen = () => {
      viewWidth = 0;
      sayView();
      if (onStatus) onStatus({ type: "status", status: "connected", message: "" });
    };
  }
  open();
  return { close() { closed = true; if (ws) ws.close(); } };
}

// Every call says it comes from Tablesight's own page (X-Tablesight: 1): the server refuses a change without
// it, and a page on another site cannot send it.
export const SAME_ORIGIN = { "X-Tablesight": "1" };

export const SERVER_DOWN = "The Tablesight server is not answering; is it still running?";

// A sentence for an HTTP status the server sent without one of its own.
function httpSentence(status) {
  if (status === 401 || status === 403) return "The server refused this page; open the address printed when the server started.";
  if (status === 404) return "The server does not know this address; reload the page.";
  if (status === 413) return "That is too large for the server; send a smaller file.";
  if (status >= 500) return "The server failed on this request; see its log, then try again.";
  return `The server refused the request (status ${status}); reload the page and try again.`;
}

// GET (no body) or POST/PUT a JSON body; the answer's JSON, or an Error with one sentence (err.status, err.data).
export async function api(path, body, method) {
  const init = body === undefined ? { method: method || "GET", headers: SAME_ORIGIN } : {
    method: method || "POST",
    headers: { ...SAME_ORIGIN, "Content-Type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
  let res;
  try { res = await fetch(path, init); } catch (e) { throw new Error(SERVER_DOWN); }
  const data = await res.json().catch(() => ({ detail: httpSentence(res.status) }));
  if (!res.ok) {
    const err = new Error(typeof data.detail === "string" ? data.detail : httpSentence(res.status));
    err.status = res.status;
    err.data = data;
    throw err;
  }
  return data;
}

export function banner(text, kind) {
  const el = document.getElementById("banner");
  if (!el) return;
  const cls = `banner ${kind || ""}`;
  if (el.hidden === !text && el.textContent === (text || "") && el.className === cls) return;  // every frame calls it
  el.hidden = !text;
  el.textContent = text || "";
  el.className = cls;
}
