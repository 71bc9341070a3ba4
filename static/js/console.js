// Console behaviour without a build step: the inbox badge polls the unread count, and
// buttons with data-confirm ask before submitting their form.
(function () {
  "use strict";

  function setBadge(badge, count) {
    var text = String(count);
    if (badge.textContent !== text) {
      badge.textContent = text;
    }
    badge.classList.toggle("badge-unread", count > 0);
    badge.classList.toggle("badge-zero", count === 0);
    badge.setAttribute("aria-label", count + " " + (badge.getAttribute("data-unread-label") || "unread"));
    var title = document.title.replace(/^\(\d+\) /, "");
    document.title = count > 0 ? "(" + count + ") " + title : title;
  }

  function startBadgePolling(badge) {
    var url = badge.getAttribute("data-poll-url");
    var interval = parseInt(badge.getAttribute("data-poll-ms"), 10) || 15000;
    var timer = null;
    var inFlight = false;

    function poll() {
      if (inFlight || document.hidden) {
        return;
      }
      inFlight = true;
      fetch(url, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
        cache: "no-store",
      })
        .then(function (response) {
          if (response.status === 401 || response.status === 403) {
            // Logged out elsewhere: stop asking until the next page load.
            window.clearInterval(timer);
            return null;
          }
          return response.ok ? response.json() : null;
        })
        .then(function (body) {
          if (body && typeof body.unread === "number") {
            setBadge(badge, body.unread);
          }
        })
        .catch(function () {
          /* offline or server restarting: try again on the next tick */
        })
        .then(function () {
          inFlight = false;
        });
    }

    timer = window.setInterval(poll, interval);
    document.addEventListener("visibilitychange", function () {
      if (!document.hidden) {
        poll();
      }
    });
    if (badge.textContent.trim() === "") {
      poll(); // rendered without a count (e.g. an error page)
    }
  }

  function confirmButtons() {
    document.addEventListener("submit", function (event) {
      var button = event.submitter;
      var question = button && button.getAttribute("data-confirm");
      if (question && !window.confirm(question)) {
        event.preventDefault();
      }
    });
  }

  // Filters fold away on a phone: <details data-open-wide> starts open on wider screens.
  function openWideFolds() {
    if (!window.matchMedia || !window.matchMedia("(min-width: 600px)").matches) {
      return;
    }
    document.querySelectorAll("details[data-open-wide]").forEach(function (fold) {
      fold.open = true;
    });
  }

  // A <select data-autosubmit> (the work list's sort) applies as soon as it changes.
  function autosubmitSelects() {
    document.addEventListener("change", function (event) {
      var select = event.target;
      if (select.matches && select.matches("select[data-autosubmit]") && select.form) {
        select.form.requestSubmit ? select.form.requestSubmit() : select.form.submit();
      }
    });
  }

  // "r" puts the cursor in the ticket's reply box (not while typing in a field).
  function replyShortcut() {
    document.addEventListener("keydown", function (event) {
      if (event.key !== "r" || event.ctrlKey || event.metaKey || event.altKey) {
        return;
      }
      var target = event.target;
      if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
        return;
      }
      var box = document.querySelector(".reply-form textarea");
      if (box) {
        event.preventDefault();
        box.focus();
      }
    });
  }

  // "/" puts the cursor in the header's search box (templates/console/base.html), its text
  // selected; not while typing in a field.
  function searchShortcut() {
    document.addEventListener("keydown", function (event) {
      if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) {
        return;
      }
      var box = document.querySelector("[data-search-box]");
      if (box && !document.querySelector("dialog[open]")) {
        event.preventDefault();
        box.focus();
        box.select();
      }
    });
  }

  // j / k move through the rows of a list (tickets, approvals, inbox), Enter or o opens the
  // row's ticket, x ticks its checkbox (bulk approve). The current row is marked and
  // scrolled into view; typing in a field is never taken over.
  function listNavigation() {
    var current = -1;

    function rows() {
      var list = document.querySelector("[data-keyboard-list]");
      return list ? Array.prototype.slice.call(list.querySelectorAll("[data-keyboard-row]")) : [];
    }

    function move(all, index) {
      if (current >= 0 && all[current]) {
        all[current].classList.remove("is-keyboard-current");
        all[current].removeAttribute("data-keyboard-current");
      }
      current = Math.max(0, Math.min(all.length - 1, index));
      var row = all[current];
      row.classList.add("is-keyboard-current");
      row.setAttribute("data-keyboard-current", "");
      var link = row.querySelector("[data-row-link]");
      if (link) {
        link.focus({ preventScroll: true });
      }
      row.scrollIntoView({ block: "nearest" });
    }

    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) {
        return;
      }
      var target = event.target;
      if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
        return;
      }
      var all = rows();
      if (!all.length) {
        return;
      }
      if (event.key === "j") {
        event.preventDefault();
        move(all, current + 1);
      } else if (event.key === "k") {
        event.preventDefault();
        move(all, current < 0 ? 0 : current - 1);
      } else if ((event.key === "o" || event.key === "Enter") && current >= 0 && all[current]) {
        var link = all[current].querySelector("[data-row-link]");
        if (link && event.key === "o") {
          event.preventDefault();
          link.click();
        }
      } else if (event.key === "x" && current >= 0 && all[current]) {
        var box = all[current].querySelector("input[type=checkbox]");
        if (box) {
          event.preventDefault();
          box.click();
        }
      }
    });
  }

  // The composer's tabs: the form's class follows the chosen tab (the CSS already switches
  // the hint and the button label without JS; this keeps the class for other styles).
  function composerTabs() {
    document.addEventListener("change", function (event) {
      var radio = event.target;
      if (radio.matches && radio.matches(".composer-radio") && radio.form) {
        radio.form.classList.toggle("is-internal", radio.value === "2");
      }
    });
  }

  function isTyping(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  // "?" (Shift+/) lists every shortcut in a dialog (templates/console/_shortcuts.html, its
  // labels translated there); the footer's link opens it too; Esc closes it (the dialog's own).
  function shortcutsOverlay() {
    var dialog = document.getElementById("shortcuts-dialog");
    if (!dialog || typeof dialog.showModal !== "function") {
      return;
    }
    function open() {
      if (!dialog.open) {
        dialog.showModal();
      }
    }
    document.querySelectorAll("[data-shortcuts-open]").forEach(function (button) {
      button.addEventListener("click", open);
    });
    document.addEventListener("keydown", function (event) {
      if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) {
        return;
      }
      event.preventDefault();
      open();
    });
  }

  // Split view on a wide screen: a row's link on the work list opens the ticket in the pane
  // beside the list (the ticket page's own [data-ticket-page] part, fetched), and the address
  // becomes the ticket's, so Back closes the pane and a copied link opens the ticket. Narrow
  // screens, modified clicks and pages without script keep the plain link.
  function splitView() {
    var split = document.querySelector("[data-split]");
    var pane = split && split.querySelector("[data-split-pane]");
    if (!pane || !window.matchMedia || !window.history.pushState) {
      return;
    }
    var wide = window.matchMedia("(min-width: 1600px)");
    var listUrl = window.location.href;
    var loading = 0;

    function markRow(url) {
      split.querySelectorAll("[data-keyboard-row]").forEach(function (row) {
        var link = row.querySelector("[data-row-link]");
        if (link && url && link.href === url) {
          row.setAttribute("aria-current", "true");
        } else if (!row.classList.contains("is-next")) {
          row.removeAttribute("aria-current");
        }
      });
    }

    function close() {
      pane.hidden = true;
      pane.innerHTML = "";
      split.classList.remove("is-split");
      markRow(null);
      document.dispatchEvent(new CustomEvent("td:split-closed"));
    }

    function show(url) {
      var ticket = ++loading;
      split.classList.add("is-split");
      pane.hidden = false;
      pane.setAttribute("aria-busy", "true");
      markRow(url);
      return fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) {
          if (!response.ok) {
            throw new Error(String(response.status));
          }
          return response.text();
        })
        .then(function (html) {
          if (ticket !== loading) {
            return; // a later click won
          }
          var doc = new DOMParser().parseFromString(html, "text/html");
          var part = doc.querySelector("[data-ticket-page]");
          if (!part) {
            throw new Error("no ticket");
          }
          var closeButton = document.createElement("button");
          closeButton.type = "button";
          closeButton.className = "button small split-close";
          closeButton.textContent = pane.getAttribute("data-close-label") || "Close";
          closeButton.setAttribute("data-split-close", "");
          closeButton.addEventListener("click", function () {
            window.history.pushState({ splitList: true }, "", listUrl);
            close();
          });
          pane.replaceChildren(closeButton, document.importNode(part, true));
          pane.scrollTop = 0;
          document.dispatchEvent(new CustomEvent("td:split-opened", { detail: { url: url } }));
        })
        .catch(function () {
          if (ticket !== loading) {
            return;
          }
          var p = document.createElement("p");
          p.className = "message message-error";
          var a = document.createElement("a");
          a.href = url;
          a.textContent = pane.getAttribute("data-failed-label") || url;
          p.appendChild(a);
          pane.replaceChildren(p);
        })
        .then(function () {
          pane.removeAttribute("aria-busy");
        });
    }

    split.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest(".split-list [data-row-link]");
      if (!link || !wide.matches || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
        return;
      }
      event.preventDefault();
      window.history.pushState({ splitTicket: link.href }, "", link.href);
      show(link.href);
    });
    window.addEventListener("popstate", function (event) {
      var state = event.state || {};
      if (state.splitTicket && wide.matches) {
        show(state.splitTicket);
      } else if (!state.splitTicket && !pane.hidden) {
        close();
      } else if (state.splitTicket) {
        window.location.reload(); // narrowed meanwhile: show the ticket's own page
      }
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && !pane.hidden && !isTyping(event.target) && !document.querySelector("dialog[open]")) {
        window.history.pushState({ splitList: true }, "", listUrl);
        close();
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var badge = document.getElementById("unread-badge");
    if (badge && badge.getAttribute("data-poll-url")) {
      startBadgePolling(badge);
    }
    confirmButtons();
    openWideFolds();
    autosubmitSelects();
    replyShortcut();
    searchShortcut();
    listNavigation();
    composerTabs();
    shortcutsOverlay();
    splitView();
  });
})();
