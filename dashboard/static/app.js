// jobc dashboard: confirmations for every action, and live refresh of pages that ask
// for it (body[data-refresh] in milliseconds). No framework, no network but this site.
"use strict";

// Every form with data-confirm asks first; the server still checks the CSRF token.
document.addEventListener("submit", (ev) => {
  const msg = ev.target.dataset && ev.target.dataset.confirm;
  if (msg && !window.confirm(msg)) {
    ev.preventDefault();
  }
});

// Live refresh: fetch the same page and swap <main>, so scrolling and the header stay.
// It pauses while the tab is hidden, the user is typing in a field, or a pointer is
// pressed: a swap between a button's press and its release would lose the click.
(() => {
  const every = Number(document.body.dataset.refresh || 0);
  if (!every) {
    return;
  }
  let busy = false;
  let pressed = false;
  document.addEventListener("pointerdown", () => { pressed = true; }, true);
  for (const end of ["pointerup", "pointercancel"]) {
    document.addEventListener(end, () => { pressed = false; }, true);
  }
  window.addEventListener("blur", () => { pressed = false; }); // released outside the window
  const tick = async () => {
    const active = document.activeElement;
    if (busy || pressed || document.hidden || (active && ["INPUT", "SELECT", "TEXTAREA"].includes(active.tagName))) {
      return;
    }
    busy = true;
    try {
      const url = new URL(window.location.href);
      url.searchParams.delete("flash"); // a message is shown once
      url.searchParams.delete("fs");
      const res = await fetch(url, { credentials: "same-origin", cache: "no-store", headers: { "X-Jobc-Refresh": "1" } });
      if (!res.ok) {
        return;
      }
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const fresh = doc.getElementById("main");
      const main = document.getElementById("main");
      if (fresh && main && !pressed) {
        main.replaceChildren(...fresh.childNodes);
        document.body.dataset.refreshed = String(Date.now());
      }
    } catch (e) {
      // The server may be restarting: try again at the next tick.
    } finally {
      busy = false;
    }
  };
  setInterval(tick, every);
})();
