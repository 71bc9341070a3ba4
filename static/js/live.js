// Live pages (live/ on the server): the page follows its Server-Sent Events stream
// (GET /events/, filtered by what this person may see) and, when something changed, re-reads
// itself through its ordinary GET view and swaps the changed regions in place — never the
// composer, so what the agent is typing survives. The stream resumes by itself after a drop
// (the browser sends Last-Event-ID; the first connection resumes from the id the page was
// rendered at); a `reset` means events were lost and the regions are simply re-read.
//
// The ticket page also says when its person is typing (POST .../activity/, at most every
// 3 s, "viewing" again after a quiet spell), so other agents see "… is replying…".
//
// On the pool's split view the list follows its stream and the ticket opened beside it
// follows its own (console.js announces the pane with "td:split-opened" and its closing with
// "td:split-closed"); each re-reads its own URL, the list the one the page was loaded at.
(function () {
  "use strict";

  // The regions a change may touch; each is replaced by the same region of the fresh page.
  // A list page (data-live-list: My work, the pool tabs, My tickets, Approvals) swaps its
  // whole content: rows, sections and the tabs' counts.
  var TICKET_REGIONS = ["#conversation", ".ticket-head", ".ticket-side"];
  var LIST_REGIONS = ["main.page"]; // or the list's own region (data-live-region)
  var ACTIVITY_EVERY_MS = 3000;
  var QUIET_MS = 8000;
  var COALESCE_MS = 150;

  if (!window.EventSource) {
    return;
  }

  // One followed region set: `root` carries the stream's URL; `scope` holds the regions
  // (the document, or the split pane); `pageUrl` is what is re-read; `marker` shows the
  // stream's state (data-live) for people and tests. Returns a function that stops it.
  function follow(root, scope, pageUrl, marker) {
    var streamUrl = root.getAttribute("data-live-events");
    var isList = root.hasAttribute("data-live-list");
    var listRegion = root.getAttribute("data-live-region");
    var REGIONS = isList ? (listRegion ? [listRegion] : LIST_REGIONS) : TICKET_REGIONS;
    var stopped = false;

    // On a list, a person typing in a field (the search, a filter) is not interrupted: the
    // swap waits and is tried again shortly. A ticked box is no typing: its ticks are
    // carried over instead (see swap).
    var NOT_TYPING = /^(checkbox|radio|button|submit|reset)$/;
    function busy() {
      if (!isList) {
        return false;
      }
      var active = document.activeElement;
      if (!active || !/^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) {
        return false;
      }
      var inRegion = REGIONS.some(function (selector) {
        var region = scope.querySelector(selector);
        return region && region.contains(active);
      });
      return inRegion && !(active.tagName === "INPUT" && NOT_TYPING.test(active.type));
    }

    // The boxes a person ticked (the approvals' selection), by name and value, to tick again
    // in the fresh rows; a row that left the list takes its tick with it.
    function ticked(region) {
      var keys = {};
      region.querySelectorAll("input[type=checkbox][name]:checked").forEach(function (box) {
        keys[box.name + "=" + box.value] = true;
      });
      return keys;
    }
    function tickAgain(region, keys) {
      region.querySelectorAll("input[type=checkbox][name]").forEach(function (box) {
        if (keys[box.name + "=" + box.value]) {
          box.checked = true;
        }
      });
    }
    // What a person chose or typed in a form that keeps its values across a swap
    // (data-live-keep: the pool's bulk bar), by name, to put back in the fresh form; a
    // select's change event lets its script (bulk.js) show the right fields again.
    var KEPT = "[data-live-keep] input[name]:not([type=checkbox]):not([type=radio])" +
      ":not([type=hidden]), [data-live-keep] select[name], [data-live-keep] textarea[name]";
    function typed(region) {
      var values = {};
      region.querySelectorAll(KEPT).forEach(function (field) {
        values[field.name] = field.value;
      });
      return values;
    }
    function typeAgain(region, values) {
      region.querySelectorAll(KEPT).forEach(function (field) {
        if (Object.prototype.hasOwnProperty.call(values, field.name) &&
            field.value !== values[field.name]) {
          field.value = values[field.name];
          if (field.tagName === "SELECT") {
            field.dispatchEvent(new Event("change", { bubbles: true }));
          }
        }
      });
    }
    var pending = null;
    var inFlight = false;
    var again = false;

    function latestReplyId() {
      var conversation = scope.querySelector("[data-latest-reply-id]");
      return conversation ? conversation.getAttribute("data-latest-reply-id") : null;
    }

    function swap(fresh) {
      REGIONS.forEach(function (selector) {
        var current = scope.querySelector(selector);
        var next = fresh.querySelector(selector);
        // A region the person is working in (a focused field) waits for the next change.
        var focused = current && current.contains(document.activeElement);
        if (current && next && (isList || !focused)) {
          var keys = ticked(current);
          var values = typed(current);
          var incoming = document.importNode(next, true);
          current.replaceWith(incoming);
          tickAgain(incoming, keys);
          typeAgain(incoming, values);
        }
      });
      document.dispatchEvent(new CustomEvent("td:live-swapped"));
    }

    function refresh() {
      if (stopped) {
        return;
      }
      if (busy()) {
        setTimeout(soon, 1000);
        return;
      }
      if (inFlight) {
        again = true;
        return;
      }
      inFlight = true;
      var before = latestReplyId();
      fetch(pageUrl, {
        credentials: "same-origin",
        headers: { "X-Requested-With": "live" },
      })
        .then(function (response) {
          return response.ok ? response.text() : null;
        })
        .then(function (html) {
          if (html === null || stopped) {
            return;
          }
          swap(new DOMParser().parseFromString(html, "text/html"));
          var after = latestReplyId();
          if (after !== before) {
            document.dispatchEvent(
              new CustomEvent("td:conversation-updated", { detail: { latestReplyId: after } })
            );
          }
        })
        .catch(function () {})
        .then(function () {
          inFlight = false;
          if (again) {
            again = false;
            refresh();
          }
        });
    }

    function soon() {
      if (pending) {
        clearTimeout(pending);
      }
      pending = setTimeout(function () {
        pending = null;
        refresh();
      }, COALESCE_MS);
    }

    var source = new EventSource(streamUrl);
    source.addEventListener("change", soon);
    source.addEventListener("reset", soon);
    marker.setAttribute("data-live", "connecting");
    source.addEventListener("open", function () {
      marker.setAttribute("data-live", "open");
    });

    // Typing in the composer: tell the team (throttled), and "viewing" once quiet again.
    var composer = scope.querySelector("form.composer");
    var activityUrl = pageUrl.split("?")[0].replace(/\/$/, "") + "/activity/";
    var lastSent = 0;
    var quiet = null;
    function tell(state) {
      if (stopped) {
        return;
      }
      var token = composer.querySelector("input[name=csrfmiddlewaretoken]");
      var body = new URLSearchParams({ state: state });
      fetch(activityUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRFToken": token ? token.value : "" },
        body: body,
      }).catch(function () {});
    }
    if (composer && root.hasAttribute("data-live-team")) {
      composer.addEventListener("input", function () {
        var now = Date.now();
        if (now - lastSent >= ACTIVITY_EVERY_MS) {
          lastSent = now;
          tell("replying");
        }
        if (quiet) {
          clearTimeout(quiet);
        }
        quiet = setTimeout(function () {
          lastSent = 0;
          tell("viewing");
        }, QUIET_MS);
      });
    }

    return function stop() {
      stopped = true;
      source.close();
      if (pending) {
        clearTimeout(pending);
      }
      if (quiet) {
        clearTimeout(quiet);
      }
      marker.removeAttribute("data-live");
    };
  }

  var root = document.querySelector("[data-live-events]");
  if (root) {
    // The page's own URL now: the split view changes the address bar to the open ticket's.
    var here = window.location.pathname + window.location.search;
    follow(root, document, here, document.documentElement);
  }

  var stopPane = null;
  document.addEventListener("td:split-opened", function (event) {
    if (stopPane) {
      stopPane();
      stopPane = null;
    }
    var pane = document.querySelector("[data-split-pane]");
    var paneRoot = pane && pane.querySelector("[data-live-events]");
    if (paneRoot && event.detail && event.detail.url) {
      stopPane = follow(paneRoot, pane, event.detail.url, pane);
    }
  });
  document.addEventListener("td:split-closed", function () {
    if (stopPane) {
      stopPane();
      stopPane = null;
    }
  });
})();
