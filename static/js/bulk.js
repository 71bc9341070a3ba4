// The pool's bulk bar: "select all" for the page's rows, a live count of the selection, and
// only the chosen action's field shown. Without JavaScript every field shows and each row's
// checkbox still works on its own (the form posts them all; the action reads its own).
// live.js may replace the rows: the handlers are delegated and the count re-read after.
(function () {
  "use strict";

  var hint = null;

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-bulk-row]"));
  }

  function update() {
    var bar = document.querySelector("[data-bulk-bar]");
    if (!bar) {
      return;
    }
    var all = bar.querySelector("[data-bulk-all]");
    var count = bar.querySelector("[data-bulk-count]");
    var boxes = rows();
    var selected = boxes.filter(function (box) { return box.checked; }).length;
    all.closest("label").hidden = boxes.length === 0;
    all.checked = boxes.length > 0 && selected === boxes.length;
    all.indeterminate = selected > 0 && selected < boxes.length;
    if (hint === null) {
      hint = count.textContent;
    }
    var template = count.getAttribute("data-template");
    count.textContent = selected > 0 && template
      ? template.replace("%(count)s", String(selected))
      : hint;
  }

  function showParams() {
    var bar = document.querySelector("[data-bulk-bar]");
    if (!bar) {
      return;
    }
    var action = bar.querySelector("[data-bulk-action]").value;
    Array.prototype.forEach.call(bar.querySelectorAll("[data-bulk-param]"), function (part) {
      var shown = part.getAttribute("data-bulk-param").split(" ").indexOf(action) !== -1;
      part.hidden = !shown;
      Array.prototype.forEach.call(part.querySelectorAll("input, select"), function (input) {
        input.disabled = !shown;
      });
    });
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches("[data-bulk-all]")) {
      rows().forEach(function (box) { box.checked = target.checked; });
      update();
    } else if (target.matches("[data-bulk-row]")) {
      update();
    } else if (target.matches("[data-bulk-action]")) {
      showParams();
    }
  });

  document.addEventListener("submit", function (event) {
    if (event.target.matches("[data-bulk-bar]") && !rows().some(function (b) { return b.checked; })) {
      event.preventDefault();  // nothing ticked: the count's hint says what to do
      var count = event.target.querySelector("[data-bulk-count]");
      if (count) {
        count.classList.add("field-error");
      }
    }
  });

  document.addEventListener("td:live-swapped", function () { showParams(); update(); });
  document.addEventListener("DOMContentLoaded", function () {
    showParams();
    update();
  });
  if (document.readyState !== "loading") {
    showParams();
    update();
  }
})();
