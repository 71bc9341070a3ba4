// The submit form's custom fields (templates/console/submit.html): every category's fields
// are on the page, each saying which categories it belongs to (data-categories, blank: every
// category); this shows only those of the category chosen, and again when it changes. The
// server reads only the chosen category's either way (console/forms.py), so without script
// all of them show and the others are ignored.
(function () {
  "use strict";

  function setUp(form) {
    var select = form.querySelector("select[name=category]");
    var fields = form.querySelectorAll("[data-testid=submit-field]");
    if (!select || !fields.length) return;

    function show() {
      var chosen = select.value;
      fields.forEach(function (field) {
        var names = (field.getAttribute("data-categories") || "").split(" ").filter(Boolean);
        var applies = !names.length || (chosen !== "" && names.indexOf(chosen) !== -1);
        field.hidden = !applies;
        field.style.display = applies ? "" : "none"; // (.stack sets display, beating [hidden])
        field.querySelectorAll("input, select, textarea").forEach(function (input) {
          input.disabled = !applies;
        });
      });
    }

    select.addEventListener("change", show);
    show();
  }

  document.querySelectorAll("[data-testid=submit-form]").forEach(setUp);
})();
