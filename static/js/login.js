// The browser's time zone goes with the login form (the hidden time_zone field), so the
// first page after login shows times in it rather than the server's zone.
(function () {
  "use strict";
  var field = document.getElementById("id_time_zone");
  if (field && window.Intl && Intl.DateTimeFormat) {
    field.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  }
})();
