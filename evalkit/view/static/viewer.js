// evalkit viewer: the few things a page does by itself (no library, nothing fetched elsewhere).
(function () {
  "use strict";
  // In a static copy (no server to ask), the conversation filters run here, on the rows.
  var form = document.querySelector("form.vw-filters[data-static-filter='1']");
  if (form) {
    var rows = Array.prototype.slice.call(document.querySelectorAll("tr.vw-conv"));
    var count = document.getElementById("vw-count");
    var apply = function () {
      var f = new FormData(form);
      var persona = f.get("persona"), status = f.get("status");
      var rule = f.get("rule"), verdict = f.get("verdict");
      var text = String(f.get("text") || "").toLowerCase().trim();
      var shown = 0;
      rows.forEach(function (row) {
        var d = row.dataset, ok = true;
        if (persona && d.persona !== persona) ok = false;
        if (status && d.status !== status) ok = false;
        if (rule || verdict) {
          var keys = (d.verdicts || "").split(" ");
          ok = ok && keys.some(function (k) {
            var parts = k.split("=");
            return (!rule || parts[0] === rule) && (!verdict || parts[1] === verdict);
          });
        }
        if (text && (d.text || "").indexOf(text) < 0) ok = false;
        row.classList.toggle("vw-hidden", !ok);
        if (ok) shown += 1;
      });
      if (count) count.textContent = shown + " of " + rows.length + " conversations";
    };
    form.addEventListener("submit", function (e) { e.preventDefault(); apply(); });
    form.addEventListener("change", apply);
  }
  // A page of a run still going reloads itself, unless the reader is typing or choosing.
  var every = parseFloat(document.body.dataset.refresh || "");
  if (every > 0) {
    var tick = function () {
      var active = document.activeElement;
      var busy = active && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName);
      if (busy) { window.setTimeout(tick, every * 1000); } else { window.location.reload(); }
    };
    window.setTimeout(tick, every * 1000);
  }
  // A play control loads its audio only when asked (synthesis costs a call the first time).
  document.querySelectorAll("audio.vw-play").forEach(function (audio) {
    audio.addEventListener("error", function () {
      var note = document.createElement("span");
      note.className = "ek-note";
      note.textContent = " audio unavailable (is a service configured for the viewer?)";
      audio.insertAdjacentElement("afterend", note);
    });
  });
})();
// "Label next": one keystroke per verdict (p pass, f fail, n n/a, s skip).
(function () {
  "use strict";
  var queue = document.querySelector("form.vw-queue");
  if (!queue) return;
  var evidence = document.querySelector(".ek-evidence");
  if (evidence && evidence.scrollIntoView) evidence.scrollIntoView({block: "center"});
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = queue.querySelector("[data-key='" + event.key.toLowerCase() + "']");
    if (!target) return;
    event.preventDefault();
    target.click();
  });
})();
