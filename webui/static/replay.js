// The replay page: the same table view, plus a timeline with the events marked, play/pause, speed, seek.
import { startTableView, eventClass, listed } from "/static/table_view.js";
import { api, banner } from "/static/feed.js";
import { startRollCall } from "/static/roll_call.js";
import { counted } from "/static/words.js";

const SEEK_SLACK = 30;
// Frames past a sought frame that still count as having arrived there (a playing replay may skip a few).
const MARK_COLOURS = { move: "#ffffff", illegal: "#ff2d2d", "too-close": "#ff9f1a", legal: "#2ecc71" };

export function startReplay({ wsPath, name }) {
  const base = `/api/replay/${encodeURIComponent(name)}`;
  const seek = document.getElementById("seek");
  const marks = document.getElementById("marks");
  const play = document.getElementById("play");
  const stateEl = document.getElementById("timeline-state");
  let playing = false, dragging = false, timeline = null, frames = 0, sought = null;
  // The events list is the recording's own: the timeline's entries (a straight play of the whole recording) up to the
  // frame shown, whatever was played or sought before; a frame's own entries only past what the timeline has scanned.
  let scannedTo = -1, shownTo = -1, fed = 0, namesReady = false;

  const rollCall = startRollCall();
  const control = (body) => api(`${base}/control`, body).catch((err) => banner(err.message, "bad"));

  const view = startTableView({
    wsPath,
    selectPath: `${base}/select`,
    askPath: `${base}/ask`,
    terrainPath: `${base}/terrain`,
    setupPath: `${base}/setup`,
    fromFeed: (e) => Number(e.frame) > scannedTo,
    onFrame(msg, status) {
      if (msg) {
        follow(msg.frame_index);
        rollCall(msg);
        // a seek is shown as under way until its frame arrives: the slider never jumps back meanwhile
        if (sought !== null && msg.frame_index >= sought && msg.frame_index <= sought + SEEK_SLACK) { sought = null; seekNote(""); }
        if (!dragging && sought === null) seek.value = String(msg.frame_index);
        seek.dataset.frame = String(msg.frame_index);
        if (msg.status) setPlaying(msg.status.playing);
      } else if (status && status.playing !== undefined) {
        setPlaying(status.playing);
      }
    },
  });

  view.namesKnown.then(() => { namesReady = true; follow(shownTo); });

  // The list as it stands at frame `frame`: later frames' entries go (a seek back, by this page or another), then the
  // timeline's entries up to it come in (the frames a seek forward skipped, too).
  function follow(frame) {
    frame = Number(frame);
    if (frame < shownTo) { view.eventsUpTo(frame); fed = 0; }
    shownTo = frame;
    const entries = timeline ? timeline.events : [];
    if (!namesReady || fed >= entries.length || entries[fed].frame > frame) return;
    const start = fed;
    while (fed < entries.length && entries[fed].frame <= frame) fed++;
    view.addEvents(entries.slice(start, fed));
  }

  function setPlaying(p) { playing = !!p; play.textContent = playing ? "Pause" : "Play"; }

  play.addEventListener("click", () => { control({ action: playing ? "pause" : "play" }); setPlaying(!playing); });
  document.getElementById("step").addEventListener("click", () => control({ action: "step" }));
  document.getElementById("speed").addEventListener("change", (ev) => control({ action: "speed", speed: Number(ev.target.value) }));
  seek.addEventListener("input", () => { dragging = true; });
  seek.addEventListener("change", () => { dragging = false; goTo(Number(seek.value)); });

  // Going to a frame: the recording is played silently from the nearest saved point up to it, which can take a
  // few seconds; the page says so until the frame is shown.
  const note = document.createElement("span");
  note.id = "seek-note"; note.className = "muted";
  stateEl.after(note);
  function seekNote(text) { note.textContent = text; }
  function goTo(frame) {
    sought = frame;
    seek.value = String(frame);
    seekNote(`Going to frame ${frame}…`);
    control({ action: "seek", frame });
  }

  function drawMarks() {
    const ctx = marks.getContext("2d");
    marks.width = marks.clientWidth || marks.width;
    ctx.clearRect(0, 0, marks.width, marks.height);
    ctx.fillStyle = "#333"; ctx.fillRect(0, 0, marks.width, marks.height);
    if (!timeline || !frames) return;
    let n = 0;
    for (const e of timeline.events) {
      if (!listed(e)) continue;
      const x = (e.frame / Math.max(1, frames - 1)) * (marks.width - 2) + 1;
      const cls = e.type === "move" ? "move" : eventClass(e);
      ctx.fillStyle = MARK_COLOURS[cls] || "#5aa9ff";
      ctx.fillRect(x - 1, 2, 3, marks.height - 4);
      n++;
    }
    const done = (timeline.scanned / Math.max(1, frames)) * marks.width;
    ctx.fillStyle = "rgba(90,169,255,0.5)"; ctx.fillRect(0, marks.height - 2, done, 2);
    marks.dataset.marks = String(n);
  }
  // a click on an event in the log goes to its frame
  const log = document.getElementById("events");
  log.classList.add("seekable");
  log.title = "Click an event to go to its frame";
  log.addEventListener("click", (ev) => {
    const li = ev.target.closest("li[data-frame]");
    if (li) goTo(Number(li.dataset.frame));
  });
  marks.addEventListener("click", (ev) => {
    const r = marks.getBoundingClientRect();
    const f = Math.round(((ev.clientX - r.left) / r.width) * Math.max(0, frames - 1));
    goTo(f);
  });

  async function poll() {
    try {
      const info = await api(base);
      frames = info.frames || info.timeline.frames || 0;
      seek.max = String(Math.max(0, frames - 1));
      timeline = info.timeline;
      const to = timeline.scanned_to ?? -1;
      if (to > scannedTo) { view.forgetFedUpTo(to); scannedTo = to; }  // the timeline's own entries replace them
      follow(shownTo);
      stateEl.textContent = timeline.complete ? counted(timeline.events.filter(listed).length, "event") : timeline.error ? timeline.error : `Scanning frame ${timeline.scanned} of ${timeline.frames}…`;
      drawMarks();
      if (!timeline.complete && !timeline.error) setTimeout(poll, 1000);
    } catch (err) { banner(err.message, "bad"); }
  }
  poll();
}
