// The template editor: diagnostics as you type (the server compiles with the API's rules and
// answers the compiler's JSON diagnostics), one click to apply a did-you-mean, format, simulate,
// and a review before each save: what the revision decides differently from the saved one (the
// semantic diff) and the template tests' results, failing cases marked in both gutters; the
// author confirms to save. No framework, no build step; every request carries the CSRF token.
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
  // Lines of failing template tests: in the template (the verdict lines that decided them) and
  // in the tests field (where each failing case begins); cleared by the next edit.
  var failing = {};
  var failingCases = {};
  var tests = document.getElementById("tests");
  var testsGutter = document.getElementById("tests-gutter");
  var review = document.getElementById("review");
  var reviewBody = document.getElementById("review-body");
  var reviewStatus = document.getElementById("review-status");
  var confirmed = false;

  function post(path, body) {
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrftoken": token },
      body: JSON.stringify(body)
    }).then(function (response) { return response.json(); });
  }

  function mark(line, diagnostic, test) {
    return (test ? "\u2717" : diagnostic ? "\u25CF" : " ") + " " + line;
  }

  function drawGutter() {
    var count = source.value.split("\n").length;
    var lines = [];
    for (var i = 1; i <= count; i++) lines.push(mark(i, marked[i], failing[i]));
    gutter.textContent = lines.join("\n");
    gutter.scrollTop = source.scrollTop;
    if (!tests) return;
    var testLines = [];
    var testCount = tests.value.split("\n").length;
    for (var j = 1; j <= testCount; j++) testLines.push(mark(j, false, failingCases[j]));
    testsGutter.textContent = testLines.join("\n");
    testsGutter.scrollTop = tests.scrollTop;
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
      item.appendChild(document.createTextNode(" " + word("severity." + d.severity, d.severity) + "[" + d.code + "]: " + d.message));
      var pre = document.createElement("pre");
      pre.textContent = d.sourceLine + "\n" + d.caret;
      pre.tabIndex = 0;
      item.appendChild(pre);
      if (d.suggestion) {
        var hint = document.createElement("span");
        hint.className = "hint";
        hint.textContent = word("didYouMean", "did you mean") + " ";
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
    failing = {};
    hideReview();
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
      // The steps and the explanation come worded in the page's language from the server.
      var lines = (data.lines || []).slice();
      if (data.problem) lines.push(word("problemLabel", "Problem:") + " " + data.problem);
      if (data.explanation) lines.push("", data.explanation);
      result.textContent = lines.join("\n");
    });
  });

  // --- the review before a save ----------------------------------------------------------

  // A number in the page's language (66,7 in es-AR).
  function number(value) {
    try { return new Intl.NumberFormat(document.documentElement.lang || undefined).format(value); }
    catch (error) { return String(value); }
  }

  function fill(text, values) {
    return text.replace(/\{(\w+)\}/g, function (_, key) { return values[key]; });
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function ends(end) {
    var text = word(end.veredict, end.veredict) + " (" + word("status." + end.status, end.status) + ")";
    if (end.reasons && end.reasons.length) text += ": " + end.reasons.join("; ");
    return text;
  }

  function showChanges(changes) {
    var part = element("section", "changes");
    part.appendChild(element("h3", "", word("changesTitle", "What this revision decides differently")));
    if (!changes) {
      part.appendChild(element("p", "", word("newTemplate", "A new template.")));
      return part;
    }
    if (changes.equivalent) {
      part.appendChild(element("p", "equivalent", word("equivalent", "Equivalent.")));
      return part;
    }
    var list = element("ul", "differences");
    changes.differences.forEach(function (d) {
      var item = element("li", "difference " + d.answer);
      var title = element("strong", "", word(d.difference, d.description) + ": ");
      item.appendChild(title);
      if (d.answer !== "differs") {
        // Why it is not decided, in the page's words (`reason`; `detail` is the API's English).
        item.appendChild(document.createTextNode(d.reason ? word("unknown." + d.reason, d.reason) : word(d.answer, d.answer)));
      } else {
        var facts = (d.facts || []).map(function (fact) { return fact.text; });
        item.appendChild(document.createTextNode(word("forExample", "for example:") + " " + (facts.length ? facts.join("; ") : word("nothingSent", "nothing sent"))));
        var outcome = element("ul", "outcomes");
        outcome.appendChild(element("li", "", word("savedEnds", "the saved revision:") + " " + ends(d.example.old.ends)));
        outcome.appendChild(element("li", "", word("newEnds", "this revision:") + " " + ends(d.example.new.ends)));
        item.appendChild(outcome);
      }
      list.appendChild(item);
    });
    part.appendChild(list);
    return part;
  }

  function showTests(results) {
    var part = element("section", "tests-results");
    part.appendChild(element("h3", "", word("testsTitle", "Template tests")));
    failing = {};
    failingCases = {};
    if (!results) {
      part.appendChild(element("p", "", word("noTests", "No template tests.")));
      return part;
    }
    var passed = results.cases.filter(function (c) { return c.passed; }).length;
    part.appendChild(element("p", results.passed ? "passed" : "failed", fill(word("testsSummary", "{passed} of {total} cases pass; decision coverage {coverage}%."), { passed: passed, total: results.cases.length, coverage: number(results.coverage) })));
    if (results.missedTexts && results.missedTexts.length) {
      var missed = element("details", "missed");
      missed.appendChild(element("summary", "", word("notExercised", "No case exercises:") + " " + results.missedTexts.length));
      var missedList = element("ul", "");
      results.missedTexts.forEach(function (text) { missedList.appendChild(element("li", "", text)); });
      missed.appendChild(missedList);
      part.appendChild(missed);
    }
    var list = element("ul", "cases");
    results.cases.forEach(function (c) {
      var item = element("li", c.passed ? "case passed" : "case failed");
      var head = (c.passed ? "\u2713 " : "\u2717 ") + c.name + ": " + (c.passed ? word("casePasses", "passes") : word("caseFails", "fails"));
      item.appendChild(element("strong", "", head));
      if (!c.passed) {
        var where = [];
        if (c.at) { where.push(fill(word("testsLine", "tests line {line}"), { line: c.at })); failingCases[c.at] = true; }
        if (c.lines && c.lines.length) {
          where.push(fill(word("templateLines", "decided at template line {lines}"), { lines: c.lines.join(", ") }));
          c.lines.forEach(function (line) { failing[line] = true; });
        }
        if (where.length) item.appendChild(element("span", "where", " (" + where.join("; ") + ")"));
        var problems = element("ul", "problems");
        // Worded by the server in the page's language from the case's `failures`.
        (c.texts || c.problems).forEach(function (p) { problems.appendChild(element("li", "", p)); });
        item.appendChild(problems);
      }
      list.appendChild(item);
    });
    part.appendChild(list);
    return part;
  }

  // Scroll a field to the first of `lines` (1-based), a few lines above it, so its mark shows.
  function scrollTo(field, lines) {
    if (!lines.length) return;
    var first = Math.min.apply(null, lines.map(Number));
    var height = parseFloat(getComputedStyle(field).lineHeight) || 20;
    field.scrollTop = Math.max(0, (first - 3) * height);
  }

  function hideReview() {
    if (review) review.hidden = true;
    if (reviewStatus) reviewStatus.textContent = "";  // a refusal's words are stale after an edit
  }

  function templateId() {
    var field = form.querySelector('input[name="template_id"]');
    return field ? field.value : "";
  }

  if (form && review && tests) {
    tests.addEventListener("input", function () { failingCases = {}; hideReview(); drawGutter(); });
    tests.addEventListener("scroll", function () { testsGutter.scrollTop = tests.scrollTop; });
    form.addEventListener("submit", function (event) {
      if (confirmed) return;
      event.preventDefault();
      reviewStatus.textContent = word("reviewing", "Reviewing…");
      post("/dashboard/templates/review", {
        source: source.value, tests: tests.value, template_id: templateId()
      }).then(function (data) {
        reviewStatus.textContent = "";
        if (data.diagnostics) { show(data.diagnostics); return; }
        if (data.problem) { reviewStatus.textContent = word("problemLabel", "Problem:") + " " + data.problem; return; }
        if (!data.changes && !data.testResults) {  // a new template without tests: nothing to review
          confirmed = true;
          form.submit();
          return;
        }
        reviewBody.textContent = "";
        reviewBody.appendChild(showChanges(data.changes));
        reviewBody.appendChild(showTests(data.testResults));
        review.hidden = false;
        drawGutter();
        scrollTo(source, Object.keys(failing));
        scrollTo(tests, Object.keys(failingCases));
        review.focus();
      });
    });
    document.getElementById("confirm-save").addEventListener("click", function () {
      confirmed = true;
      form.submit();
    });
    document.getElementById("keep-editing").addEventListener("click", function () {
      hideReview();
      source.focus();
    });
  }

  drawGutter();
  check();
})();
