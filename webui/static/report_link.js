// A battle report link (a[data-report]): made in the background while the page shows how far it is, then
// downloaded. The page asks every second; a report nobody asks about any more stops (session/report_jobs.py).
import { api } from "/static/feed.js";

const ASK_EVERY_MS = 1000;

function progressWords(p) {
  if (p.state === "made") return "Battle report ready.";
  if (p.total) return `Making the battle report: frame ${p.frames.toLocaleString()} of ${p.total.toLocaleString()} (${p.percent} %)…`;
  return `Making the battle report: frame ${p.frames.toLocaleString()}…`;
}

export function reportLinks(root = document) {
  for (const link of root.querySelectorAll("a[data-report]")) {
    const note = document.createElement("span");
    note.className = "muted small report-progress";
    note.setAttribute("role", "status");
    link.after(note);
    let busy = false;
    link.addEventListener("click", async (ev) => {
      ev.preventDefault();
      if (busy) return;
      busy = true;
      note.classList.remove("form-error");
      try {
        for (;;) {
          const p = await api(link.dataset.report);
          note.textContent = ` ${progressWords(p)}`;
          if (p.state === "made") break;
          if (p.state === "failed") throw new Error(p.error);
          if (p.state === "cancelled") throw new Error("The battle report was stopped while no page was waiting for it; click again to make it.");
          await new Promise((r) => setTimeout(r, ASK_EVERY_MS));
        }
        const a = document.createElement("a");  // the made report, downloaded as the link names it
        a.href = link.href;
        a.download = link.getAttribute("download") || "";
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => { note.textContent = ""; }, 4000);
      } catch (err) {
        note.textContent = ` ${err.message}`;
        note.classList.add("form-error");
      } finally {
        busy = false;
      }
    });
  }
}
