// @mentions in the composer's internal note (templates/console/ticket/_composer.html): typing
// "@" and the start of a name lists the people the note could tell (GET
// /api/tickets/{id}/mentionable/?q=, the ticket's team only); arrows move, Enter or Tab
// inserts "@username ", Esc closes, a click picks. Public replies mention nobody: the list
// stays shut on that tab. Without script the "@username" typed by hand works the same
// (workflow/mentions.py reads the saved text). Its words come from the form's data-
// attributes, translated by the template.
(function () {
  "use strict";

  // Usernames as Django allows them ([\w.@+-]); "@" after one of those is inside a word or
  // an e-mail address, not a mention.
  var NAME_CHAR = "[\\p{L}\\p{N}_.@+-]";
  var TRIGGER = new RegExp("(^|[^\\p{L}\\p{N}_.@+-])@(" + NAME_CHAR + "{1,150})$", "u");
  var DELAY_MS = 120;

  function setUp(form) {
    var box = form.querySelector("textarea");
    var url = form.getAttribute("data-mentionable-url");
    if (!box || !url || form.hasAttribute("data-mentions-ready")) return;
    form.setAttribute("data-mentions-ready", "");

    var listId = "mention-list-" + (form.getAttribute("data-ticket-id") || "0");
    var list = document.createElement("ul");
    list.id = listId;
    list.className = "mention-list";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", form.getAttribute("data-text-mention-list") || "");
    list.setAttribute("data-testid", "mention-list");
    list.hidden = true;
    box.parentNode.insertBefore(list, box.nextSibling);

    var status = document.createElement("p");
    status.className = "visually-hidden";
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    list.parentNode.insertBefore(status, list.nextSibling);

    box.setAttribute("aria-autocomplete", "list");
    box.setAttribute("aria-haspopup", "listbox");
    box.setAttribute("aria-controls", listId);
    box.setAttribute("aria-expanded", "false");

    var people = [];
    var active = -1;
    var token = null; // {start, end}: the "@word" being completed, in box.value
    var asked = 0; // answers to older questions are dropped
    var timer = null;

    function internal() {
      var checked = form.querySelector(".composer-radio:checked");
      return checked !== null && checked.value === "2";
    }

    function close() {
      list.hidden = true;
      list.textContent = "";
      people = [];
      active = -1;
      token = null;
      box.setAttribute("aria-expanded", "false");
      box.removeAttribute("aria-activedescendant");
    }

    function choose(index) {
      var items = list.querySelectorAll("[role=option]");
      for (var i = 0; i < items.length; i++) {
        items[i].setAttribute("aria-selected", i === index ? "true" : "false");
      }
      active = index;
      if (index >= 0 && items[index]) {
        box.setAttribute("aria-activedescendant", items[index].id);
        items[index].scrollIntoView({ block: "nearest" });
      } else {
        box.removeAttribute("aria-activedescendant");
      }
    }

    function show(found) {
      people = found;
      list.textContent = "";
      if (!found.length) {
        close();
        status.textContent = form.getAttribute("data-text-mention-none") || "";
        return;
      }
      found.forEach(function (person, i) {
        var item = document.createElement("li");
        item.id = listId + "-" + i;
        item.setAttribute("role", "option");
        item.setAttribute("data-username", person.username);
        item.className = "mention-option";
        var name = document.createElement("span");
        name.className = "mention-name";
        name.textContent = person.name;
        var handle = document.createElement("span");
        handle.className = "mention-username muted";
        handle.textContent = "@" + person.username;
        item.appendChild(name);
        item.appendChild(handle);
        // mousedown, not click: the box keeps its focus (and its caret).
        item.addEventListener("mousedown", function (event) {
          event.preventDefault();
          insert(i);
        });
        list.appendChild(item);
      });
      list.hidden = false;
      box.setAttribute("aria-expanded", "true");
      choose(0);
      status.textContent = String(found.length);
    }

    function insert(index) {
      var person = people[index];
      if (!person || !token) return;
      var text = "@" + person.username + " ";
      var before = box.value.slice(0, token.start);
      var after = box.value.slice(token.end);
      box.value = before + text + after;
      var caret = before.length + text.length;
      box.setSelectionRange(caret, caret);
      close();
      box.focus();
      // composer.js keeps the draft on input.
      box.dispatchEvent(new Event("input", { bubbles: true }));
    }

    function lookUp() {
      if (!internal() || box.selectionStart !== box.selectionEnd) {
        close();
        return;
      }
      var caret = box.selectionStart;
      var match = TRIGGER.exec(box.value.slice(0, caret));
      if (!match) {
        close();
        return;
      }
      var query = match[2];
      token = { start: caret - query.length - 1, end: caret };
      var mine = ++asked;
      var address = url + (url.indexOf("?") < 0 ? "?" : "&") + "q=" + encodeURIComponent(query);
      fetch(address, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) throw new Error(String(response.status));
          return response.json();
        })
        .then(function (found) {
          if (mine === asked && token) show(found);
        })
        .catch(function () {
          if (mine === asked) close();
        });
    }

    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(lookUp, DELAY_MS);
    });

    box.addEventListener("keydown", function (event) {
      if (list.hidden || !people.length) return;
      if (event.key === "ArrowDown") {
        event.preventDefault();
        choose((active + 1) % people.length);
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        choose((active - 1 + people.length) % people.length);
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
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        close();
      }
    });

    box.addEventListener("blur", function () {
      setTimeout(close, 150);
    });
    form.addEventListener("change", function (event) {
      if (event.target && event.target.classList.contains("composer-radio")) close();
    });
    form.addEventListener("submit", close);
  }

  function start() {
    var forms = document.querySelectorAll("form.composer[data-mentionable-url]");
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
