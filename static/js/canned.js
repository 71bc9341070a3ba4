// Canned responses in the composer (templates/console/ticket/_composer.html, the team's
// only): typing "::" and a word lists the responses the agent may use whose name or text
// matches (GET /api/canned-responses/?q=, session-authenticated); the "Canned responses"
// button opens the same list with a search box. Arrows move, Enter or Tab inserts, Esc
// closes, a click picks. The text inserted is the server's, filled in for this ticket (POST
// /api/tickets/{id}/canned-responses/{cid}/render/: nothing is sent), replacing the "::word"
// or at the caret. Its words come from the form's data- attributes, translated by the
// template. Without script the button stays hidden and the agent types the text.
(function () {
  "use strict";

  // "::" at the start or after a space, then the word being typed (possibly empty).
  var TRIGGER = /(^|\s)::([\p{L}\p{N}_-]{0,100})$/u;
  var DELAY_MS = 120;

  function setUp(form) {
    var box = form.querySelector("textarea[name=content]");
    var listUrl = form.getAttribute("data-canned-url");
    var renderUrl = form.getAttribute("data-canned-render-url");
    if (!box || !listUrl || !renderUrl || form.hasAttribute("data-canned-ready")) return;
    form.setAttribute("data-canned-ready", "");
    var opener = form.querySelector("[data-testid=canned-open]");
    var token = form.querySelector("input[name=csrfmiddlewaretoken]");

    var listId = "canned-list-" + (form.getAttribute("data-ticket-id") || "0");
    var picker = document.createElement("div");
    picker.className = "canned-picker";
    picker.hidden = true;
    var search = document.createElement("input");
    search.type = "search";
    search.className = "canned-search";
    search.setAttribute("data-testid", "canned-search");
    search.setAttribute("aria-label", form.getAttribute("data-text-canned-search") || "");
    search.setAttribute("placeholder", form.getAttribute("data-text-canned-search") || "");
    search.setAttribute("aria-controls", listId);
    search.setAttribute("aria-autocomplete", "list");
    search.hidden = true;
    var list = document.createElement("ul");
    list.id = listId;
    list.className = "mention-list canned-list";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", form.getAttribute("data-text-canned-list") || "");
    list.setAttribute("data-testid", "canned-list");
    var status = document.createElement("p");
    status.className = "visually-hidden";
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    picker.appendChild(search);
    picker.appendChild(list);
    box.parentNode.insertBefore(picker, box.nextSibling);
    picker.parentNode.insertBefore(status, picker.nextSibling);

    var items = [];
    var active = -1;
    var typed = null; // {start, end}: the "::word" being completed, in box.value
    var caretAt = null; // where the button's pick goes
    var fromButton = false;
    var asked = 0;
    var timer = null;

    function isOpen() {
      return !picker.hidden;
    }

    function close() {
      picker.hidden = true;
      search.hidden = true;
      list.textContent = "";
      items = [];
      active = -1;
      typed = null;
      caretAt = null;
      fromButton = false;
      box.setAttribute("aria-expanded", "false");
      box.removeAttribute("aria-activedescendant");
      search.removeAttribute("aria-activedescendant");
      if (opener) opener.setAttribute("aria-expanded", "false");
    }

    function focusHolder() {
      return fromButton ? search : box;
    }

    function choose(index) {
      var options = list.querySelectorAll("[role=option]");
      for (var i = 0; i < options.length; i++) {
        options[i].setAttribute("aria-selected", i === index ? "true" : "false");
      }
      active = index;
      if (index >= 0 && options[index]) {
        focusHolder().setAttribute("aria-activedescendant", options[index].id);
        options[index].scrollIntoView({ block: "nearest" });
      } else {
        focusHolder().removeAttribute("aria-activedescendant");
      }
    }

    function show(found) {
      items = found;
      list.textContent = "";
      picker.hidden = false;
      if (!found.length) {
        var none = document.createElement("li");
        none.className = "mention-option muted";
        none.setAttribute("data-testid", "canned-none");
        none.textContent = form.getAttribute("data-text-canned-none") || "";
        list.appendChild(none);
        status.textContent = none.textContent;
        active = -1;
        return;
      }
      found.forEach(function (canned, i) {
        var item = document.createElement("li");
        item.id = listId + "-" + i;
        item.setAttribute("role", "option");
        item.setAttribute("data-testid", "canned-item");
        item.setAttribute("data-canned-id", String(canned.id));
        item.className = "mention-option";
        var name = document.createElement("span");
        name.className = "mention-name";
        name.textContent = canned.name;
        var more = document.createElement("span");
        more.className = "mention-username muted";
        more.textContent = (canned.language ? "[" + canned.language + "] " : "") + canned.body.slice(0, 60);
        item.appendChild(name);
        item.appendChild(more);
        // mousedown, not click: the box keeps its focus (and its caret).
        item.addEventListener("mousedown", function (event) {
          event.preventDefault();
          insert(i);
        });
        list.appendChild(item);
      });
      box.setAttribute("aria-expanded", fromButton ? "false" : "true");
      choose(0);
      status.textContent = String(found.length);
    }

    function fetchList(query) {
      var mine = ++asked;
      var address = listUrl + (listUrl.indexOf("?") < 0 ? "?" : "&") + "q=" + encodeURIComponent(query);
      fetch(address, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) throw new Error(String(response.status));
          return response.json();
        })
        .then(function (found) {
          if (mine === asked && (typed || fromButton)) show(found);
        })
        .catch(function () {
          if (mine === asked) close();
        });
    }

    function insert(index) {
      var canned = items[index];
      if (!canned) return;
      var where = typed || caretAt || { start: box.value.length, end: box.value.length };
      var address = renderUrl.replace(/\/0\/render\/$/, "/" + canned.id + "/render/");
      close();
      fetch(address, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRFToken": token ? token.value : "", Accept: "application/json" },
      })
        .then(function (response) {
          if (!response.ok) throw new Error(String(response.status));
          return response.json();
        })
        .then(function (rendered) {
          var before = box.value.slice(0, where.start);
          var after = box.value.slice(where.end);
          box.value = before + rendered.text + after;
          var caret = before.length + rendered.text.length;
          box.focus();
          box.setSelectionRange(caret, caret);
          // composer.js keeps the draft on input.
          box.dispatchEvent(new Event("input", { bubbles: true }));
        })
        .catch(function () {
          status.textContent = form.getAttribute("data-text-canned-failed") || "";
          box.focus();
        });
    }

    function lookUp() {
      if (box.selectionStart !== box.selectionEnd) {
        if (!fromButton) close();
        return;
      }
      var caret = box.selectionStart;
      var match = TRIGGER.exec(box.value.slice(0, caret));
      if (!match) {
        if (!fromButton) close();
        return;
      }
      fromButton = false;
      search.hidden = true;
      var query = match[2];
      typed = { start: caret - query.length - 2, end: caret };
      fetchList(query);
    }

    function keys(event) {
      if (!isOpen()) return;
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        var back = fromButton;
        close();
        if (back) box.focus();
        return;
      }
      if (!items.length) return;
      if (event.key === "ArrowDown") {
        event.preventDefault();
        choose((active + 1) % items.length);
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        choose((active - 1 + items.length) % items.length);
      } else if (
        (event.key === "Enter" || event.key === "Tab") &&
        !event.ctrlKey &&
        !event.metaKey &&
        !event.shiftKey &&
        !event.altKey
      ) {
        event.preventDefault();
        event.stopPropagation();
        insert(active < 0 ? 0 : active);
      }
    }

    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(lookUp, DELAY_MS);
    });
    // Capture: before composer.js's Ctrl+Enter and mentions.js's keys on the same box.
    box.addEventListener("keydown", keys, true);
    search.addEventListener("keydown", keys);
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        fetchList(search.value.trim());
      }, DELAY_MS);
    });
    box.addEventListener("blur", function () {
      setTimeout(function () {
        if (!fromButton && document.activeElement !== search) close();
      }, 150);
    });
    search.addEventListener("blur", function () {
      setTimeout(function () {
        if (document.activeElement !== search && document.activeElement !== opener) close();
      }, 150);
    });
    form.addEventListener("submit", close);

    if (opener) {
      opener.hidden = false;
      opener.setAttribute("aria-controls", listId);
      opener.addEventListener("click", function () {
        if (isOpen() && fromButton) {
          close();
          return;
        }
        close();
        caretAt = { start: box.selectionStart, end: box.selectionEnd };
        fromButton = true;
        search.hidden = false;
        search.value = "";
        picker.hidden = false;
        opener.setAttribute("aria-expanded", "true");
        search.focus();
        fetchList("");
      });
    }
  }

  function start() {
    var forms = document.querySelectorAll("form.composer[data-canned-url]");
    for (var i = 0; i < forms.length; i++) setUp(forms[i]);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
  // A ticket opened beside its list (console.js's split view): set up its composer too.
  document.addEventListener("td:split-opened", start);
})();
