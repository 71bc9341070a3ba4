// The ticket page's composer (templates/console/ticket/_composer.html):
// - a draft per person and ticket in localStorage (text and tab), restored on load and
//   cleared only once the server accepted the send (the page after the redirect says so);
// - Preview: the server renders the Markdown (POST /console/preview/), shown in place;
// - Ctrl+Enter / Cmd+Enter sends;
// - a newer reply arrived while writing (the live conversation's "td:conversation-updated"
//   event): the first Send shows the notice and scrolls to it, the second sends.
// The same in a ticket opened beside the pool's list (the split view's "td:split-opened").
// Its words come from the form's data- attributes, translated by the template.
(function () {
  "use strict";

  function storage() {
    try {
      return window.localStorage;
    } catch (error) {
      return null; // storage disabled: the composer works without drafts
    }
  }

  function readDraft(store, key) {
    if (!store) return null;
    try {
      var draft = JSON.parse(store.getItem(key) || "null");
      return draft && typeof draft.text === "string" ? draft : null;
    } catch (error) {
      return null;
    }
  }

  function setUp(form) {
    var box = form.querySelector("textarea");
    if (!box || form.hasAttribute("data-composer-ready")) return;
    form.setAttribute("data-composer-ready", "");
    var userId = form.getAttribute("data-user-id");
    var ticketId = form.getAttribute("data-ticket-id");
    var key = "td-composer-draft:" + userId + ":" + ticketId;
    var pendingKey = "td-composer-pending:" + userId + ":" + ticketId;
    var store = storage();
    var seen = form.querySelector("input[name=seen_reply_id]");
    var notice = form.querySelector(".composer-notice");
    var preview = form.querySelector(".composer-preview");
    var toggle = form.querySelector(".composer-preview-toggle");

    function chosenTab() {
      var checked = form.querySelector(".composer-radio:checked");
      return checked ? checked.value : null;
    }

    function chooseTab(value) {
      var radio = form.querySelector(".composer-radio[value='" + value + "']");
      if (radio && !radio.checked) {
        radio.checked = true;
        form.classList.toggle("is-internal", value === "2");
      }
    }

    function save() {
      if (!store) return;
      if (box.value.trim() === "") {
        store.removeItem(key);
      } else {
        store.setItem(key, JSON.stringify({ text: box.value, tab: chosenTab(), at: Date.now() }));
      }
    }

    // The send that led here: cleared only when the server accepted it (data-sent), and
    // only if the draft is still the text that was sent.
    var pending = store ? store.getItem(pendingKey) : null;
    if (store && pending !== null) {
      store.removeItem(pendingKey);
      var kept = readDraft(store, key);
      if (form.hasAttribute("data-sent") && kept && kept.text === pending) {
        store.removeItem(key);
      }
    }
    var draft = readDraft(store, key);
    if (draft && box.value === "") {
      box.value = draft.text;
      if (draft.tab) chooseTab(draft.tab);
    } else if (box.value !== "") {
      save(); // the page came back with the text (an error, or the newer-reply notice)
    }

    box.addEventListener("input", save);
    form.addEventListener("change", function (event) {
      if (event.target.matches && event.target.matches(".composer-radio")) save();
    });

    // The newest reply the page shows, and the one shown when the person started typing.
    var shownId = seen ? Number(seen.value || 0) : 0;
    var startedAt = box.value.trim() === "" ? null : shownId;
    box.addEventListener("input", function () {
      if (box.value.trim() === "") {
        startedAt = null;
      } else if (startedAt === null) {
        startedAt = shownId;
      }
    });
    document.addEventListener("td:conversation-updated", function (event) {
      var latest = Number((event.detail && event.detail.latestReplyId) || 0);
      if (latest <= shownId) return;
      shownId = latest;
      // Nothing typed yet: the person will read it before writing.
      if (startedAt === null && seen) seen.value = String(latest);
    });

    form.addEventListener("submit", function (event) {
      if (startedAt !== null && shownId > startedAt && box.value.trim() !== "") {
        event.preventDefault();
        startedAt = shownId;
        if (seen) seen.value = String(shownId);
        if (notice) {
          notice.hidden = false;
          notice.scrollIntoView({ block: "center" });
        }
        return;
      }
      if (store) store.setItem(pendingKey, box.value);
    });

    // Ctrl+Enter (Cmd+Enter on a Mac) sends, through the same submit as the button.
    box.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        if (form.requestSubmit) {
          form.requestSubmit(form.querySelector(".composer-send"));
        } else {
          form.submit();
        }
      }
    });

    if (toggle && preview) {
      toggle.hidden = false;
      var token = form.querySelector("input[name=csrfmiddlewaretoken]");
      function showEditor() {
        preview.hidden = true;
        box.hidden = false;
        toggle.setAttribute("aria-pressed", "false");
        toggle.textContent = form.getAttribute("data-text-preview");
        box.focus();
      }
      function showPreview() {
        toggle.setAttribute("aria-pressed", "true");
        toggle.textContent = form.getAttribute("data-text-edit");
        preview.hidden = false;
        box.hidden = true;
        if (box.value.trim() === "") {
          preview.textContent = form.getAttribute("data-text-preview-empty");
          return;
        }
        var body = new URLSearchParams();
        body.set("content", box.value);
        fetch(form.getAttribute("data-preview-url"), {
          method: "POST",
          credentials: "same-origin",
          headers: { "X-CSRFToken": token ? token.value : "", Accept: "application/json" },
          body: body,
        })
          .then(function (response) {
            if (!response.ok) throw new Error(String(response.status));
            return response.json();
          })
          .then(function (data) {
            // The server's HTML, sanitised there (notifications/markup.py).
            preview.innerHTML = data.html;
          })
          .catch(function () {
            preview.textContent = form.getAttribute("data-text-preview-failed");
          });
      }
      toggle.addEventListener("click", function () {
        if (toggle.getAttribute("aria-pressed") === "true") {
          showEditor();
        } else {
          showPreview();
        }
      });
      form.addEventListener("submit", function () {
        box.hidden = false;
      });
    }

    if (notice && !notice.hidden) {
      notice.scrollIntoView({ block: "center" });
    }
  }

  function start() {
    var forms = document.querySelectorAll("form.composer[data-ticket-id]");
    for (var i = 0; i < forms.length; i++) setUp(forms[i]);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
  // A ticket opened beside its list (console.js's split view) brings its composer without
  // running its scripts: set it up when the pane has it.
  document.addEventListener("td:split-opened", start);
})();
