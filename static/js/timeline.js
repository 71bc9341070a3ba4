// The ticket page's people-facing touches (issue 24, points 6 and 7), no dependencies:
// - Transfer's confirm names the target, from the chosen options at click time
//   (console.js asks the data-confirm question on submit);
// - every mark of the SLA timeline (level, deadline, bar, pause, now) is focusable and shows
//   its time in a visible tip on tap, click, hover or keyboard focus, not only in <title>.
(function () {
  "use strict";

  function chosenText(select) {
    if (!select || !select.value) {
      return null;
    }
    var option = select.options[select.selectedIndex];
    return option ? option.text : null;
  }

  function transferQuestion() {
    document.addEventListener("click", function (event) {
      var button = event.target.closest && event.target.closest("[data-confirm-template]");
      if (!button || !button.form) {
        return;
      }
      var form = button.form;
      var group = chosenText(form.querySelector("select[name=handler_group_id]")) ||
        button.getAttribute("data-current-group");
      var handler = chosenText(form.querySelector("select[name=handler_id]")) ||
        button.getAttribute("data-group-routes");
      var question = button.getAttribute("data-confirm-template")
        .split("__GROUP__").join(group)
        .split("__HANDLER__").join(handler);
      button.setAttribute("data-confirm", question);
    }, true);
  }

  function markTips() {
    var svg = document.querySelector("svg.sla-timeline");
    if (!svg) {
      return;
    }
    var figure = svg.parentNode;
    var tip = document.createElement("p");
    tip.className = "sla-tip";
    tip.id = "sla-tip";
    tip.setAttribute("role", "status");
    tip.hidden = true;
    figure.insertBefore(tip, svg.nextSibling);
    var marks = svg.querySelectorAll(".sla-level, .sla-deadline, .sla-bar, .sla-pause, .sla-now");
    Array.prototype.forEach.call(marks, function (mark) {
      var title = mark.querySelector("title");
      if (!title) {
        return;
      }
      mark.setAttribute("tabindex", "0");
      mark.setAttribute("focusable", "true");
      mark.setAttribute("role", "button");
      mark.setAttribute("aria-label", title.textContent);
      mark.classList.add("sla-mark");
      function show() {
        tip.textContent = title.textContent;
        tip.hidden = false;
        var active = svg.querySelectorAll(".sla-mark-active");
        Array.prototype.forEach.call(active, function (m) { m.classList.remove("sla-mark-active"); });
        mark.classList.add("sla-mark-active");
      }
      mark.addEventListener("click", show);
      mark.addEventListener("focus", show);
      mark.addEventListener("mouseenter", show);
      mark.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          show();
        } else if (event.key === "Escape") {
          tip.hidden = true;
        }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    transferQuestion();
    markTips();
  });
})();
