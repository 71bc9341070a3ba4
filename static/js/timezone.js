// Sends the browser's time zone once, while the person has not chosen one (their profile
// can change it any time). The server keeps it only if the profile's zone is still empty;
// pages show times in it from the next one on.
(function () {
  "use strict";
  var holder = document.querySelector("[data-detect-time-zone-url]");
  if (!holder || !window.Intl || !Intl.DateTimeFormat) {
    return;
  }
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone) {
    return;
  }
  var body = new URLSearchParams();
  body.set("time_zone", zone);
  body.set("csrfmiddlewaretoken", holder.getAttribute("data-csrf-token"));
  fetch(holder.getAttribute("data-detect-time-zone-url"), {
    method: "POST",
    credentials: "same-origin",
    headers: { "X-CSRFToken": holder.getAttribute("data-csrf-token") },
    body: body
  });  // the next page shows times in it; this one is not reloaded under the person
})();
