// The supervisor dashboard's live part refreshes without a reload: every few seconds the
// server renders it again (?part=live) and it replaces the old one. Paused while the tab is
// hidden; a failed fetch keeps what is shown and tries again at the next tick.
(function () {
  "use strict";
  // SLA and satisfaction over 30 days: a report, fetched once after the page is shown.
  var quality = document.getElementById("quality-part");
  if (quality) {
    fetch(quality.getAttribute("data-quality-url"), {
      credentials: "same-origin",
      headers: { "X-Requested-With": "fetch" },
    })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html !== null) {
          quality.innerHTML = html;
        }
      })
      .catch(function () {});
  }
  var live = document.getElementById("live");
  if (!live) {
    return;
  }
  var url = live.getAttribute("data-live-url");
  var interval = parseInt(live.getAttribute("data-refresh-ms"), 10) || 5000;
  var inFlight = false;
  function refresh() {
    if (inFlight || document.hidden) {
      return;
    }
    inFlight = true;
    fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html !== null) {
          live.innerHTML = html;
        }
      })
      .catch(function () {})
      .then(function () {
        inFlight = false;
      });
  }
  window.setInterval(refresh, interval);
})();
