/* The consumer's pages, the part every page loads: checks of the answers before sending and
   the service worker of the link. Plain JavaScript, loaded as a same-origin file (the pages'
   CSP allows no inline script). What saves through the phone's outbox (the photos, answers
   sent offline, the final send) is offline.js, with outbox.js and the vendored idb: loaded only
   by the steps that use it, so the link's first page stays light (docs/consumer.md). */
(function () {
  "use strict";
  var EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

  /* ---- answers ---- */
  function valuesOf(field) {
    var inputs = field.querySelectorAll("input,select,textarea");
    var rules = JSON.parse(field.dataset.rules);
    if (rules.type === "multiselect") {
      return Array.prototype.filter.call(inputs, function (i) { return i.checked; })
        .map(function (i) { return i.value; });
    }
    var input = inputs[0];
    if (!input) return null;
    if (rules.type === "check") return input.checked;
    if (rules.type === "file" || rules.type === "video") return input.files && input.files[0] || null;
    return input.value.trim();
  }
  function problemOf(field) {
    var rules = JSON.parse(field.dataset.rules), v = valuesOf(field), t = rules.type;
    var control = field.querySelector("input,select,textarea");
    // An answer already given is shown, not asked: a disabled control, or none at all for a
    // file already sent.
    if (!control || control.disabled) return null;
    var empty = v === null || v === "" || (Array.isArray(v) && v.length === 0) || (t === "check" && v === false);
    if (empty) return rules.required ? "required" : null;
    if (t === "numeric") {
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) return "not_a_number";
      var n = Number(v);
      if (rules.minimum !== undefined && n < rules.minimum) return "minimum";
      if (rules.maximum !== undefined && n > rules.maximum) return "maximum";
      if (rules.integer && n !== Math.floor(n)) return "integer";
    } else if (t === "text" || t === "textarea") {
      if (rules.maxLength !== undefined && v.length > rules.maxLength) return "max_length";
      if (rules.minLength !== undefined && v.length < rules.minLength) return "min_length";
      if (rules.pattern) { try { if (!new RegExp(rules.pattern).test(v)) return "pattern"; } catch (e) { /* the server checks */ } }
      if (rules.email && !EMAIL.test(v)) return "email";
    } else if (t === "date") {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return "not_a_date";
      if (rules.minDate && v < rules.minDate.slice(0, 10)) return "min_date";
      if (rules.maxDate && v > rules.maxDate.slice(0, 10)) return "max_date";
      if (rules.orderMin && v < rules.orderMin) return "not_before";
      if (rules.orderMax && v > rules.orderMax) return "not_after";
    } else if (t === "multiselect") {
      if (rules.minItems !== undefined && v.length < rules.minItems) return "min_items";
      if (rules.maxItems !== undefined && v.length > rules.maxItems) return "max_items";
    } else if (t === "file" || t === "video") {
      if (rules.mediaTypes && rules.mediaTypes.indexOf(v.type) < 0) return "media_type";
      if (rules.maxSizeBytes !== undefined && v.size > rules.maxSizeBytes) return "too_large";
    }
    return null;
  }
  function show(field, code) {
    var messages = JSON.parse(field.dataset.messages), box = field.querySelector(".error");
    var controls = field.querySelectorAll("input,select,textarea");
    box.textContent = code ? (messages[code] || code) : "";
    box.hidden = !code;
    Array.prototype.forEach.call(controls, function (c) {
      if (code) c.setAttribute("aria-invalid", "true"); else c.removeAttribute("aria-invalid");
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("form[data-validate]"), function (form) {
    form.addEventListener("submit", function (event) {
      var first = null;
      Array.prototype.forEach.call(form.querySelectorAll("[data-field]"), function (field) {
        var code = problemOf(field);
        show(field, code);
        if (code && !first) first = field;
      });
      if (first) {
        event.preventDefault();
        var control = first.querySelector("input,select,textarea");
        if (control) control.focus();
      }
    });
    /* Re-checked while typing ("input"), not on blur: a message vanishing on blur would move
       the page under the finger that is tapping the next field. */
    function recheck(event) {
      var field = event.target.closest("[data-field]");
      if (field && !field.querySelector(".error").hidden) show(field, problemOf(field));
    }
    form.addEventListener("input", recheck);
    form.addEventListener("change", function (event) {
      if (event.target.type === "checkbox" || event.target.tagName === "SELECT" || event.target.type === "file") recheck(event);
    });
  });

  /* The welcome's consent: a message in the page (announced: role=alert), not only the
     browser's bubble, when Start is pressed without it. */
  Array.prototype.forEach.call(document.querySelectorAll("form[data-consent]"), function (form) {
    var box = form.querySelector("input[name=consent]"), error = form.querySelector("[data-consent-error]");
    form.addEventListener("submit", function (event) {
      if (box.checked) return;
      event.preventDefault();
      error.textContent = error.dataset.message;
      error.hidden = false;
      box.setAttribute("aria-invalid", "true");
      box.focus();
    });
    box.addEventListener("change", function () {
      if (!box.checked) return;
      error.hidden = true; error.textContent = "";
      box.removeAttribute("aria-invalid");
    });
  });

  /* The link's service worker: every page registers it, the first one too, so the flow opens
     offline from then on (its install keeps offline.js and the outbox for the next steps). */
  var shell = document.querySelector("[data-consumer]");
  if (shell && "serviceWorker" in navigator) {
    navigator.serviceWorker.register(shell.dataset.worker, { scope: shell.dataset.scope }).catch(function () {});
    navigator.serviceWorker.ready.then(function (registration) {
      if (registration.active) registration.active.postMessage({ type: "keep", urls: JSON.parse(shell.dataset.steps || "[]") });
    }).catch(function () {});
  }
})();
