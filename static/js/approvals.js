// The approvals queue: "select all" for the page's rows and a live count of the selection.
// Without JavaScript each row's checkbox still works on its own.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", function () {
    var all = document.querySelector("[data-select-all]");
    var rows = Array.prototype.slice.call(document.querySelectorAll("[data-select-row]"));
    var count = document.querySelector("[data-selected-count]");
    if (!all || rows.length === 0) {
      return;
    }
    var hint = count ? count.textContent : "";
    var template = count ? count.getAttribute("data-template") : null;

    function update() {
      var selected = rows.filter(function (box) { return box.checked; }).length;
      all.checked = selected === rows.length;
      all.indeterminate = selected > 0 && selected < rows.length;
      if (count) {
        count.textContent = selected > 0 && template
          ? template.replace("%(count)s", String(selected))
          : hint;
      }
    }

    all.closest("label").hidden = false;
    all.addEventListener("change", function () {
      rows.forEach(function (box) { box.checked = all.checked; });
      update();
    });
    rows.forEach(function (box) { box.addEventListener("change", update); });
    update();
  });
})();
