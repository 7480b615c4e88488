// Keyboard navigation over the rows of a list (runs, cases, changes): j/k move, Enter opens
// the row's first link, / focuses the search box. No data is read or sent by this script.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("table.nav tr.row"));
  var at = -1;
  function move(to) {
    if (!rows.length) return;
    if (at >= 0) rows[at].classList.remove("cursor");
    at = Math.max(0, Math.min(rows.length - 1, to));
    rows[at].classList.add("cursor");
    rows[at].scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j") { move(at + 1); event.preventDefault(); }
    else if (event.key === "k") { move(at - 1); event.preventDefault(); }
    else if (event.key === "Enter" && at >= 0) {
      var link = rows[at].querySelector("a.open");
      if (link) { window.location.href = link.href; event.preventDefault(); }
    } else if (event.key === "/") {
      var search = document.querySelector("input[type=search]");
      if (search) { search.focus(); event.preventDefault(); }
    } else if (event.key === "[" || event.key === "]") {
      var step = document.querySelector(event.key === "[" ? "a[rel=prev]" : "a[rel=next]");
      if (step) { window.location.href = step.href; event.preventDefault(); }
    }
  });
})();
