// The live table page.
import { startTableView } from "/static/table_view.js";
import { api, banner } from "/static/feed.js";

export async function startLive({ wsPath }) {
  startTableView({ wsPath, selectPath: "/api/live/select", askPath: "/api/live/ask", eventsPath: "/api/live/events" });
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
