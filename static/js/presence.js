// The header's presence switch (templates/console/_presence_switch.html): choosing a state
// saves it without a reload, and while the agent is available an open console tab sends a
// heartbeat every data-heartbeat-ms (a third of the server's timeout). Tabs share one
// heartbeat (the last one's time is in localStorage) and tell each other of a change
// (BroadcastChannel). A tab coming back into view asks for the state at once; a hidden tab
// keeps beating (its clock runs in a worker, which the browser does not throttle).
(function () {
  "use strict";
  var form = document.querySelector("[data-presence]");
  if (!form || !window.fetch) {
    return;
  }
  form.classList.add("js");
  var select = form.querySelector("select[name=state]");
  var word = form.querySelector(".presence-word");
  var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var interval = parseInt(form.getAttribute("data-heartbeat-ms"), 10) || 20000;
  var beatUrl = form.getAttribute("data-heartbeat-url");
  var state = form.getAttribute("data-state");
  var channel = window.BroadcastChannel ? new BroadcastChannel("td-presence") : null;
  var ticker = null;
  var stopped = false;

  function lastBeat() {
    try {
      return parseInt(localStorage.getItem("td-presence-beat"), 10) || 0;
    } catch (e) {
      return 0;
    }
  }
  function noteBeat() {
    try {
      localStorage.setItem("td-presence-beat", String(Date.now()));
    } catch (e) { /* private mode: every tab beats, which is harmless */ }
  }

  function apply(next, label, fromElsewhere) {
    form.className = form.className.replace(/\bstate-\S+/, "state-" + next);
    form.setAttribute("data-state", next);
    word.textContent = label;
    var shown = null;
    for (var i = 0; i < select.options.length; i++) {
      if (select.options[i].value === next) {
        shown = select.options[i];
      }
    }
    if (!shown) {  // a state the switch does not offer (wrap-up): named, not choosable
      shown = select.querySelector("option[data-unoffered]") || document.createElement("option");
      shown.value = next;
      shown.textContent = label;
      shown.disabled = true;
      shown.setAttribute("data-unoffered", "");
      select.insertBefore(shown, select.firstChild);
    }
    select.value = next;
    if (next !== state && channel && !fromElsewhere) {
      channel.postMessage({ state: next, label: label });
    }
    state = next;
    schedule();
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf, "X-Requested-With": "fetch" },
      body: body
    }).then(function (response) {
      var json = (response.headers.get("Content-Type") || "").indexOf("json") >= 0;
      if (!json || response.status === 403) {
        stopped = true;  // signed out or no presence any more: stop beating
        schedule();
        throw new Error("presence: " + response.status);
      }
      return response.json().then(function (data) {
        if (!response.ok) {
          throw new Error("presence: " + response.status);
        }
        return data;
      });
    });
  }

  function beat(force) {
    if (stopped || (!force && Date.now() - lastBeat() < interval / 2)) {
      return;  // another tab beat a moment ago
    }
    noteBeat();
    var body = new URLSearchParams();
    body.set("csrfmiddlewaretoken", csrf);
    post(beatUrl, body).then(function (data) {
      if (data.state !== state) {
        apply(data.state, data.label, false);
      }
    }).catch(function () {});
  }

  function schedule() {
    var on = state === "available" && !stopped;
    if (window.Worker) {
      if (!ticker && !on) {
        return;
      }
      if (!ticker) {
        ticker = new Worker(form.getAttribute("data-ticker-url"));
        ticker.onmessage = function () { beat(false); };
      }
      ticker.postMessage(on ? interval : 0);
    } else {
      clearInterval(ticker);
      ticker = on ? setInterval(function () { beat(false); }, interval) : null;
    }
  }

  select.addEventListener("change", function () {
    if (!select.value) {
      return;
    }
    var previous = state;
    var body = new FormData(form);
    select.disabled = true;
    post(form.getAttribute("action"), body).then(function (data) {
      noteBeat();
      apply(data.state, data.label, false);
    }).catch(function () {
      select.value = previous;
    }).then(function () {
      select.disabled = false;
    });
  });

  if (channel) {
    channel.onmessage = function (event) {
      apply(event.data.state, event.data.label, true);
    };
  }
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) {
      beat(true);  // back in view: show the state the server holds now
    }
  });
  schedule();
  if (state === "available") {
    beat(false);
  }
})();
