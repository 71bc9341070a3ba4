// The approvals queue: "select all" for the page's rows and a live count of the selection.
// Without JavaScript each row's checkbox still works on its own. The rows may be replaced by
// live.js (a new submission, another approver's decision): the handlers are delegated and
// the count is re-read after each swap (live.js carries the ticks over).
(function () {
  "use strict";

  function parts() {
    return {
      all: document.querySelector("[data-select-all]"),
      rows: Array.prototype.slice.call(document.querySelectorAll("[data-select-row]")),
      count: document.querySelector("[data-selected-count]"),
    };
  }

  var hint = null;

  function update() {
    var p = parts();
    if (!p.all) {
      return;
    }
    p.all.closest("label").hidden = p.rows.length === 0;
    var selected = p.rows.filter(function (box) { return box.checked; }).length;
    p.all.checked = p.rows.length > 0 && selected === p.rows.length;
    p.all.indeterminate = selected > 0 && selected < p.rows.length;
    if (p.count) {
      if (hint === null) {
        hint = p.count.textContent;
      }
      var template = p.count.getAttribute("data-template");
      p.count.textContent = selected > 0 && template
        ? template.replace("%(count)s", String(selected))
        : hint;
    }
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches("[data-select-all]")) {
      parts().rows.forEach(function (box) { box.checked = target.checked; });
      update();
    } else if (target.matches("[data-select-row]")) {
      update();
    }
  });
  document.addEventListener("td:live-swapped", update);
  document.addEventListener("DOMContentLoaded", update);
})();
