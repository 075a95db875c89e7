// The template editor: diagnostics as you type (the server compiles with the API's rules and
// answers the compiler's JSON diagnostics), one click to apply a did-you-mean, format, simulate.
// No framework, no build step; every request carries the page's CSRF token.
(function () {
  "use strict";
  var source = document.getElementById("source");
  if (!source) return;
  var gutter = document.getElementById("gutter");
  var list = document.getElementById("diagnostics");
  var status = document.getElementById("check-status");
  var token = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  // The page's words, in its language (the template fills `data-words` from the catalog).
  var form = document.getElementById("editor-form");
  var words = JSON.parse((form && form.getAttribute("data-words")) || "{}");
  function word(key, fallback) { return words[key] || fallback; }
  var timer = null;
  var sequence = 0;
  var marked = {};

  function post(path, body) {
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrftoken": token },
      body: JSON.stringify(body)
    }).then(function (response) { return response.json(); });
  }

  function drawGutter() {
    var count = source.value.split("\n").length;
    var lines = [];
    for (var i = 1; i <= count; i++) lines.push((marked[i] ? "\u25CF " : "  ") + i);
    gutter.textContent = lines.join("\n");
    gutter.scrollTop = source.scrollTop;
  }

  function offsetOf(line, column) {
    var lines = source.value.split("\n");
    var offset = 0;
    for (var i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i].length + 1;
    return offset + column - 1;
  }

  function apply(d) {
    var start = offsetOf(d.line, d.column);
    var endLine = d.endLine || d.line;
    var endColumn = d.endColumn && d.endColumn > d.column ? d.endColumn : d.column;
    var end = offsetOf(endLine, endColumn);
    source.value = source.value.slice(0, start) + d.suggestion + source.value.slice(end);
    source.focus();
    source.setSelectionRange(start + d.suggestion.length, start + d.suggestion.length);
    check();
  }

  function show(diagnostics) {
    marked = {};
    list.textContent = "";
    diagnostics.forEach(function (d) {
      marked[d.line] = true;
      var item = document.createElement("li");
      item.className = "diagnostic " + (d.severity || "error");
      var where = document.createElement("span");
      where.className = "where";
      where.textContent = word("line", "line") + " " + d.line + ":" + d.column;
      item.appendChild(where);
      item.appendChild(document.createTextNode(" " + d.severity + "[" + d.code + "]: " + d.message));
      var pre = document.createElement("pre");
      pre.textContent = d.sourceLine + "\n" + d.caret;
      pre.tabIndex = 0;
      item.appendChild(pre);
      if (d.suggestion) {
        var hint = document.createElement("span");
        hint.className = "hint";
        hint.textContent = "did you mean ";
        var code = document.createElement("code");
        code.textContent = d.suggestion;
        hint.appendChild(code);
        hint.appendChild(document.createTextNode("? "));
        var button = document.createElement("button");
        button.type = "button";
        button.className = "apply";
        button.textContent = word("apply", "Apply") + " “" + d.suggestion + "”";
        button.addEventListener("click", function () { apply(d); });
        hint.appendChild(button);
        item.appendChild(hint);
      }
      list.appendChild(item);
    });
    status.textContent = diagnostics.length
      ? diagnostics.length + " " + (diagnostics.length === 1 ? word("problem", "problem") : word("problems", "problems"))
      : word("noProblems", "No problems");
    drawGutter();
  }

  function check() {
    var mine = ++sequence;
    post("/dashboard/templates/check", { source: source.value }).then(function (data) {
      if (mine === sequence && data.diagnostics) show(data.diagnostics);
    });
  }

  source.addEventListener("input", function () {
    drawGutter();
    clearTimeout(timer);
    timer = setTimeout(check, 300);
  });
  source.addEventListener("scroll", function () { gutter.scrollTop = source.scrollTop; });
  source.addEventListener("keydown", function (event) {
    if (event.key === "Tab" && !event.shiftKey && !event.ctrlKey && !event.metaKey) {
      // Tab indents (4 spaces); Escape then Tab leaves the field, as keyboard users expect.
      if (source.dataset.escaped === "1") { source.dataset.escaped = ""; return; }
      event.preventDefault();
      var at = source.selectionStart;
      source.value = source.value.slice(0, at) + "    " + source.value.slice(source.selectionEnd);
      source.setSelectionRange(at + 4, at + 4);
      source.dispatchEvent(new Event("input"));
    } else if (event.key === "Escape") {
      source.dataset.escaped = "1";
    }
  });

  document.getElementById("format-button").addEventListener("click", function () {
    post("/dashboard/templates/format", { source: source.value }).then(function (data) {
      if (data.source !== null && data.source !== undefined) {
        source.value = data.source;
        check();
      } else {
        show(data.diagnostics || []);
      }
    });
  });

  var simulateButton = document.getElementById("simulate-button");
  var result = document.getElementById("simulate-result");
  simulateButton.addEventListener("click", function () {
    result.textContent = word("running", "Running…");
    post("/dashboard/templates/simulate", {
      source: source.value,
      events: document.getElementById("events").value
    }).then(function (data) {
      if (data.diagnostics) {
        show(data.diagnostics);
        result.textContent = word("noCompile", "The template does not compile: fix the problems above first.");
        return;
      }
      var lines = [];
      (data.steps || []).forEach(function (step) {
        var line = "#" + step.step + " " + step.event;
        if (step.refused) line += "  REFUSED " + step.refused.code + ": " + step.refused.description;
        else if (step.status) line += "  status=" + step.status + " verdict=" + step.veredict;
        lines.push(line);
      });
      if (data.problem) lines.push(word("problemLabel", "Problem:") + " " + data.problem);
      if (data.explanation) lines.push("", data.explanation);
      result.textContent = lines.join("\n");
    });
  });

  drawGutter();
  check();
})();
