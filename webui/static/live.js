// The live table page.
import { startTableView } from "/static/table_view.js";
import { api, banner } from "/static/feed.js";

// Frames drawn, newest last, for `tablesight bench --web`: [frame_index, captured_at (server wall clock, s),
// drawn_at (this page's wall clock, s, right after the overlays were drawn), the server's pipeline ms].
const DRAWN_LIMIT = 2000;

export async function startLive({ wsPath }) {
  const drawn = [];
  window.tablesightDrawn = drawn;
  startTableView({
    wsPath, selectPath: "/api/live/select", askPath: "/api/live/ask", eventsPath: "/api/live/events",
    onFrame(msg) {
      if (!msg || typeof msg.captured_at !== "number") return;
      const pipelineMs = msg.status ? msg.status.latency_ms : null;
      drawn.push([msg.frame_index, msg.captured_at, (performance.timeOrigin + performance.now()) / 1000, pipelineMs]);
      if (drawn.length > DRAWN_LIMIT) drawn.splice(0, drawn.length - DRAWN_LIMIT);
    },
  });
  const select = document.getElementById("game");
  const info = document.getElementById("roster-info");
  const setup = await api("/api/setup");
  for (const g of setup.games) {
    const o = document.createElement("option");
    o.value = g; o.textContent = g; o.selected = g === setup.game;
    select.append(o);
  }
  if (!setup.game) { const o = document.createElement("option"); o.value = ""; o.textContent = "(none)"; o.selected = true; select.prepend(o); }
  info.textContent = setup.roster ? `roster: ${setup.roster.units.length} units (${setup.roster.game})` : "no roster";
  select.addEventListener("change", async () => {
    try { await api("/api/live/game", { game: select.value }); banner(""); } catch (err) { banner(err.message, "bad"); }
  });
}
