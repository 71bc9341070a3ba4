// Files on the forms that take them (form[data-uploads]: the new-ticket page and the ticket
// page's composer; templates/console/_upload_*.html). Without script the form sends its files
// itself (a plain file input, uploaded by the view). With it each file goes up at once, by
// the picker, by dropping it on the form or by pasting an image into it:
// - POST /api/attachments/ (one XMLHttpRequest a file, field `file`), its progress shown;
// - a file over the limit (data-max-bytes) is refused before it is sent, in the server's own
//   words (data-text-too-large); the server's refusals (413, 415, 422, 503) show its detail;
// - a finished upload is a hidden attachment_ids input of its row, and × drops the row;
// - Send waits (disabled, with a hint) while an upload runs.
// Its words come from the form's data- attributes and <template>, translated by the page.
(function () {
  "use strict";

  function hasFiles(event) {
    var types = event.dataTransfer && event.dataTransfer.types;
    return !!types && Array.prototype.indexOf.call(types, "Files") !== -1;
  }

  function pad(n) {
    return (n < 10 ? "0" : "") + n;
  }

  // A pasted picture has no name of its own ("image.png"): it is named after the moment.
  function screenshotName(type, index, now) {
    var ext = (type.split("/")[1] || "png").replace("jpeg", "jpg").replace(/[^a-z0-9]/g, "");
    var stamp =
      String(now.getFullYear()) + pad(now.getMonth() + 1) + pad(now.getDate()) + "-" +
      pad(now.getHours()) + pad(now.getMinutes()) + pad(now.getSeconds());
    return "screenshot-" + stamp + (index > 0 ? "-" + (index + 1) : "") + "." + ext;
  }

  // As Django's filesizeformat writes it (its words from the page, console/files.py).
  function sizeText(words, bytes) {
    var KB = 1024, MB = KB * 1024, GB = MB * 1024;
    function number(value) {
      return value.toFixed(1).replace(".", words.decimal || ".");
    }
    var text;
    if (bytes < KB) {
      text = (bytes === 1 ? words.byte : words.bytes).replace("%s", String(bytes));
    } else if (bytes < MB) {
      text = words.KB.replace("%s", number(bytes / KB));
    } else if (bytes < GB) {
      text = words.MB.replace("%s", number(bytes / MB));
    } else {
      text = words.GB.replace("%s", number(bytes / GB));
    }
    return text.replace(/ /g, "\u00a0");
  }

  function answerOf(xhr) {
    try {
      return JSON.parse(xhr.responseText);
    } catch (error) {
      return null;
    }
  }

  // The server's words: {"detail": …}, or the first of {"errors": {"file": […]}}.
  function refusalOf(body) {
    if (!body) return null;
    if (typeof body.detail === "string") return body.detail;
    var errors = body.errors || {};
    for (var name in errors) {
      var said = errors[name];
      if (Array.isArray(said) && said.length) return String(said[0]);
      if (typeof said === "string") return said;
    }
    return null;
  }

  function setUp(form) {
    if (form.hasAttribute("data-uploads-ready")) return;
    var list = form.querySelector("[data-upload-list]");
    var template = form.querySelector("template[data-upload-template]");
    var input = form.querySelector("input[type=file][data-upload-input]");
    var pick = form.querySelector("[data-upload-pick]");
    if (!list || !template || !input || !pick || !window.FormData) return;
    form.setAttribute("data-uploads-ready", "");
    var wait = form.querySelector("[data-upload-wait]");
    var hint = form.querySelector("[data-upload-hint]"); // in its place while waiting
    var maxBytes = Number(form.getAttribute("data-max-bytes") || 0);
    var url = form.getAttribute("data-upload-url");
    var token = form.querySelector("input[name=csrfmiddlewaretoken]");
    var words = {};
    try {
      words = JSON.parse(form.getAttribute("data-size-words") || "{}");
    } catch (error) {
      words = {};
    }
    var running = 0;

    form.querySelectorAll("[data-upload-plain]").forEach(function (plain) {
      plain.hidden = true;
    });
    pick.hidden = false;
    form.querySelectorAll("[data-upload-how]").forEach(function (how) {
      how.hidden = false;
    });
    if (hint) hint.title = hint.textContent.replace(/\s+/g, " ").trim();
    if (wait) wait.title = wait.textContent.trim();

    function named(item, name) {
      var label = item.querySelector("[data-upload-name]");
      label.textContent = name;
      label.title = name;
      var remove = item.querySelector("[data-upload-remove]");
      remove.setAttribute("aria-label", remove.title + ": " + name);
      item.querySelector("[data-upload-progress]").setAttribute("aria-label", name);
    }

    // The rows a form that came back carries: their × works now.
    list.querySelectorAll("[data-upload]").forEach(function (item) {
      named(item, item.querySelector("[data-upload-name]").textContent);
      item.querySelector("[data-upload-remove]").hidden = false;
    });

    // Send waits for the uploads; the buttons this disabled are enabled again after.
    function waiting() {
      form.querySelectorAll("button[type=submit], input[type=submit]").forEach(function (button) {
        if (running > 0 && !button.disabled) {
          button.disabled = true;
          button.setAttribute("data-upload-disabled", "");
        } else if (running === 0 && button.hasAttribute("data-upload-disabled")) {
          button.disabled = false;
          button.removeAttribute("data-upload-disabled");
        }
      });
      if (wait) wait.hidden = running === 0;
      if (hint) hint.hidden = running > 0;
      if (running > 0) {
        form.setAttribute("aria-busy", "true");
      } else {
        form.removeAttribute("aria-busy");
      }
    }

    function refused(item, message) {
      item.setAttribute("data-state", "failed");
      item.querySelector("[data-upload-error]").textContent =
        message || form.getAttribute("data-text-failed");
    }

    function done(item, body) {
      item.setAttribute("data-state", "done");
      item.querySelector("[data-upload-progress]").value = 100;
      named(item, body.filename);
      item.querySelector("[data-upload-size]").textContent = sizeText(words, body.size);
      var id = document.createElement("input");
      id.type = "hidden";
      id.name = "attachment_ids";
      id.value = String(body.id);
      item.appendChild(id);
    }

    function send(item, file) {
      var xhr = new XMLHttpRequest();
      var progress = item.querySelector("[data-upload-progress]");
      var settled = false;
      function settle() {
        if (settled) return false;
        settled = true;
        item.xhr = null;
        running -= 1;
        waiting();
        return true;
      }
      item.xhr = xhr;
      running += 1;
      waiting();
      xhr.open("POST", url);
      xhr.setRequestHeader("X-CSRFToken", token ? token.value : "");
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.addEventListener("progress", function (event) {
        if (event.lengthComputable && event.total > 0) {
          progress.value = Math.min(99, Math.round((event.loaded / event.total) * 100));
        }
      });
      xhr.addEventListener("load", function () {
        if (!settle()) return;
        var body = answerOf(xhr);
        if (xhr.status === 201 && body && body.id) {
          done(item, body);
        } else {
          refused(item, refusalOf(body));
        }
      });
      xhr.addEventListener("error", function () {
        if (settle()) refused(item, null);
      });
      xhr.addEventListener("abort", settle);
      var data = new FormData();
      data.append("file", file, file.name);
      xhr.send(data);
    }

    function add(file) {
      var item = template.content.firstElementChild.cloneNode(true);
      named(item, file.name);
      item.querySelector("[data-upload-size]").textContent = sizeText(words, file.size);
      list.appendChild(item);
      if (maxBytes > 0 && file.size > maxBytes) {
        refused(item, form.getAttribute("data-text-too-large")); // never sent
        return;
      }
      send(item, file);
    }

    function addAll(files) {
      for (var i = 0; i < files.length; i++) add(files[i]);
    }

    list.addEventListener("click", function (event) {
      var remove = event.target.closest && event.target.closest("[data-upload-remove]");
      if (!remove) return;
      var item = remove.closest("[data-upload]");
      if (item.xhr) item.xhr.abort();
      item.remove();
      pick.focus();
    });

    pick.addEventListener("click", function () {
      input.click();
    });
    input.addEventListener("change", function () {
      var chosen = Array.prototype.slice.call(input.files || []);
      input.value = ""; // uploaded here: the form does not send them again
      addAll(chosen);
    });

    // A picture pasted into the form (a screenshot); text copied along with a picture (a
    // spreadsheet's cells) is pasted as the text it is.
    form.addEventListener("paste", function (event) {
      var data = event.clipboardData;
      if (!data || Array.prototype.indexOf.call(data.types || [], "text/plain") !== -1) return;
      var pasted = Array.prototype.slice.call(data.files || []);
      if (!pasted.length) {
        Array.prototype.forEach.call(data.items || [], function (entry) {
          var file = entry.kind === "file" ? entry.getAsFile() : null;
          if (file) pasted.push(file);
        });
      }
      if (!pasted.length) return;
      event.preventDefault();
      var now = new Date();
      var pictures = 0;
      addAll(
        pasted.map(function (file) {
          if (!/^image\//.test(file.type) || (file.name && !/^image\.\w+$/.test(file.name))) {
            return file;
          }
          var name = screenshotName(file.type, pictures++, now);
          return new File([file], name, { type: file.type, lastModified: now.getTime() });
        })
      );
    });

    // The whole form is the drop zone, highlighted while files are over it.
    var depth = 0;
    form.addEventListener("dragenter", function (event) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth += 1;
      form.classList.add("is-drop-target");
    });
    form.addEventListener("dragover", function (event) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
      form.classList.add("is-drop-target");
    });
    form.addEventListener("dragleave", function (event) {
      if (!hasFiles(event)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) form.classList.remove("is-drop-target");
    });
    form.addEventListener("drop", function (event) {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth = 0;
      form.classList.remove("is-drop-target");
      addAll(event.dataTransfer.files || []);
    });

    // Ctrl+Enter and the buttons alike: nothing is sent while an upload runs (this listener
    // comes first, before composer.js's, which would take the send as made).
    form.addEventListener(
      "submit",
      function (event) {
        if (running === 0) return;
        event.preventDefault();
        event.stopImmediatePropagation();
        if (wait) wait.hidden = false;
      },
      true
    );
  }

  function start() {
    document.querySelectorAll("form[data-uploads]").forEach(setUp);
  }

  // A file dropped just beside the form must not replace the page with itself; while files
  // are dragged over the page its forms show where they go.
  document.addEventListener("dragenter", function (event) {
    if (hasFiles(event)) document.documentElement.classList.add("is-dragging-files");
  });
  document.addEventListener("dragleave", function (event) {
    if (!event.relatedTarget) document.documentElement.classList.remove("is-dragging-files");
  });
  document.addEventListener("dragover", function (event) {
    if (!hasFiles(event) || event.defaultPrevented) return;
    if (document.querySelector("form[data-uploads]")) {
      event.preventDefault();
      event.dataTransfer.dropEffect = "none";
    }
  });
  document.addEventListener("drop", function (event) {
    document.documentElement.classList.remove("is-dragging-files");
    if (hasFiles(event) && !event.defaultPrevented && document.querySelector("form[data-uploads]")) {
      event.preventDefault();
    }
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
  // A ticket opened beside its list (console.js's split view) brings its composer without
  // running its scripts: set it up when the pane has it.
  document.addEventListener("td:split-opened", start);
})();
