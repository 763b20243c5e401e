// The side panel's roll call (session/roll_call.py): the roster's units the camera has lost and the bases standing
// too close for their tags to be read, a warning each in words; quietly, the units not on the table yet.
export function startRollCall() {
  const card = document.getElementById("roll-call");
  const list = document.getElementById("unseen");
  const notYet = document.getElementById("not-yet");
  let shown = null;
  // Called with every frame message; the panel is rewritten only when its words change.
  return (msg) => {
    const rc = msg && msg.roll_call;
    if (!rc || !card) return;
    const warnings = [...(rc.too_close || []), ...(rc.unseen || [])];
    const key = JSON.stringify([warnings.map((w) => w.text), rc.not_yet_text || ""]);
    if (key === shown) return;
    shown = key;
    list.replaceChildren(...warnings.map((w) => {
      const li = document.createElement("li");
      li.className = w.tags ? "too-close" : "illegal";
      li.dataset.units = String(w.tags ? w.tags.join(",") : w.tag);
      li.textContent = w.text;
      return li;
    }));
    notYet.textContent = rc.not_yet_text || "";
    card.hidden = !warnings.length && !rc.not_yet_text;
  };
}
