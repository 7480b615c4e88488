// Keyboard shortcuts for the review pages. Plain script, no dependencies, no eval.
(function () {
  "use strict";

  var mode = document.body.getAttribute("data-mode");
  var page = document.body.getAttribute("data-page");
  var form = document.getElementById("answer");
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.metric"));
  var levelLine = document.getElementById("level");
  var clientError = document.getElementById("client-error");
  var cursor = 0;

  function isTyping(target) {
    var tag = target && target.tagName;
    return tag === "TEXTAREA" || (tag === "INPUT" && target.type !== "radio" && target.type !== "checkbox");
  }

  function checkedIn(row) {
    return row.querySelector("input[type=radio]:checked");
  }

  function describe(row) {
    if (!levelLine || !row) { return; }
    var picked = checkedIn(row);
    var label = picked ? picked.parentNode.getAttribute("title") : "not scored yet (1–5)";
    var response = row.closest("article").getAttribute("data-response");
    levelLine.textContent = "Response " + response + " · " + row.getAttribute("data-metric") + " — " + label;
  }

  function moveCursor(to) {
    if (!rows.length) { return; }
    cursor = Math.max(0, Math.min(rows.length - 1, to));
    rows.forEach(function (row, i) { row.classList.toggle("cursor", i === cursor); });
    rows[cursor].scrollIntoView({ block: "nearest" });
    describe(rows[cursor]);
  }

  function currentArticle() {
    if (rows.length) { return rows[cursor].closest("article"); }
    return null;
  }

  function firstUnscored() {
    for (var i = 0; i < rows.length; i++) { if (!checkedIn(rows[i])) { return i; } }
    return -1;
  }

  function submit() {
    if (!form) { return; }
    if (mode === "scores") {
      var missing = firstUnscored();
      if (missing >= 0) {
        moveCursor(missing);
        if (clientError) {
          clientError.textContent = "Score every metric from 1 to 5 before saving.";
          clientError.classList.remove("hidden");
        }
        return;
      }
    }
    if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
  }

  function follow(id) {
    var link = document.getElementById(id);
    if (link) { window.location.assign(link.getAttribute("href")); }
  }

  function toggle(id) {
    var box = document.getElementById(id);
    if (box) { box.open = !box.open; }
  }

  function pickWinner(value) {
    var radio = form && form.querySelector("input[name=winner][value='" + value + "']");
    if (radio) { radio.checked = true; submit(); }
  }

  rows.forEach(function (row, i) {
    row.addEventListener("click", function () { moveCursor(i); });
    row.addEventListener("change", function () { describe(row); });
  });
  if (rows.length) { moveCursor(Math.max(0, firstUnscored())); }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey) { return; }
    var target = event.target;
    if (isTyping(target)) {
      if (event.key === "Escape") { target.blur(); event.preventDefault(); }
      else if (event.key === "Enter" && event.ctrlKey && page === "item") { event.preventDefault(); submit(); }
      return;
    }
    if (event.ctrlKey) { return; }
    var key = event.key;
    if (page === "index") {
      if (key === "Enter" && target === document.body) { event.preventDefault(); follow("start"); }
      if (key === "/") { var id = document.getElementById("reviewer-id"); if (id) { event.preventDefault(); id.focus(); } }
      return;
    }
    if (key === "h" || (page === "done" && key === "Enter")) { event.preventDefault(); window.location.assign("/"); return; }
    if (page !== "item") { return; }
    if (key === "Enter") {
      if (target && (target.tagName === "A" || target.tagName === "BUTTON" || target.tagName === "SUMMARY")) { return; }
      event.preventDefault(); submit(); return;
    }
    if (mode === "scores" && /^[1-5]$/.test(key) && rows.length) {
      var radio = rows[cursor].querySelector("input[value='" + key + "']");
      if (radio) { radio.checked = true; }
      describe(rows[cursor]);
      if (cursor < rows.length - 1) { moveCursor(cursor + 1); }
      event.preventDefault(); return;
    }
    if (mode === "pairwise" && (key === "1" || key === "2")) { event.preventDefault(); pickWinner(key); return; }
    if (mode === "pairwise" && key === "t") { event.preventDefault(); pickWinner("tie"); return; }
    switch (key) {
      case "j": case "ArrowDown": if (rows.length) { event.preventDefault(); moveCursor(cursor + 1); } break;
      case "k": case "ArrowUp": if (rows.length) { event.preventDefault(); moveCursor(cursor - 1); } break;
      case "b": {
        var article = currentArticle();
        var box = article && article.querySelector("input[type=checkbox]");
        if (box) { box.checked = !box.checked; }
        event.preventDefault(); break;
      }
      case "n": {
        var scope = currentArticle() || form;
        var notes = scope && scope.querySelector("textarea");
        if (notes) { event.preventDefault(); notes.focus(); }
        break;
      }
      case "s": case "ArrowRight": event.preventDefault(); follow("skip"); break;
      case "p": case "ArrowLeft": event.preventDefault(); follow("back"); break;
      case "r": event.preventDefault(); toggle("rubric"); break;
      case "?": event.preventDefault(); toggle("keys"); break;
      default: break;
    }
  });
})();
