/* The consumer's pages: checks of the answers before sending, and the camera uploads.
   Plain JavaScript, no dependencies; loaded as a same-origin file (the pages' CSP allows no
   inline script). Photos are downscaled here (longest side 2048 px, JPEG) before upload; the
   original's EXIF (capture time, GPS, camera, software) is carried into the downscaled JPEG,
   and a JPEG already small enough is sent as it is (docs/consumer.md, "Photos"). */
(function () {
  "use strict";
  var MAX_SIDE = 2048, QUALITY = 0.85, TRIES = 4, POLL_MS = 2000, POLLS = 60;
  var ORIGINAL_MAX_BYTES = 3 * 1024 * 1024;
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
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

  /* ---- photos ---- */
  /* The original's EXIF segment (APP1 "Exif"), or null. Its Orientation is set to 1 (the canvas
     draws the photo upright) and its thumbnail (IFD1: the photo unturned, at full framing) is
     unlinked, so the copy does not contradict its own pixels. */
  function exifSegment(buffer) {
    var bytes = new Uint8Array(buffer), i = 2;
    if (bytes[0] !== 0xFF || bytes[1] !== 0xD8) return null;
    while (i + 10 <= bytes.length && bytes[i] === 0xFF) {
      var marker = bytes[i + 1], length = (bytes[i + 2] << 8) | bytes[i + 3];
      if (marker === 0xDA || marker === 0xD9) break;
      if (marker === 0xE1 && String.fromCharCode(bytes[i + 4], bytes[i + 5], bytes[i + 6], bytes[i + 7]) === "Exif") {
        var segment = bytes.slice(i, i + 2 + length);
        try { upright(new DataView(segment.buffer), 10); } catch (e) { return null; }
        return segment;
      }
      i += 2 + length;
    }
    return null;
  }
  function upright(view, tiff) {
    var little = view.getUint16(tiff) === 0x4949;
    var ifd0 = tiff + view.getUint32(tiff + 4, little), count = view.getUint16(ifd0, little);
    for (var k = 0; k < count; k++) {
      var entry = ifd0 + 2 + k * 12;
      if (view.getUint16(entry, little) === 0x0112) view.setUint16(entry + 8, 1, little);
    }
    view.setUint32(ifd0 + 2 + count * 12, 0, little);
  }
  /* The downscaled JPEG with the original's EXIF segment right after its start of image. */
  function withExif(blob, segment) {
    if (!segment || !blob.arrayBuffer) return Promise.resolve(blob);
    return blob.arrayBuffer().then(function (buffer) {
      var bytes = new Uint8Array(buffer);
      return new Blob([bytes.subarray(0, 2), segment, bytes.subarray(2)], { type: "image/jpeg" });
    });
  }
  function downscale(file) {
    if (!window.createImageBitmap) return Promise.resolve(file);
    var original = file.arrayBuffer ? file.arrayBuffer().catch(function () { return null; }) : Promise.resolve(null);
    return Promise.all([createImageBitmap(file, { imageOrientation: "from-image" }), original]).then(function (got) {
      var bitmap = got[0], buffer = got[1];
      var segment = buffer ? exifSegment(buffer) : null;
      var scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
      if (scale === 1 && file.type === "image/jpeg" && file.size <= ORIGINAL_MAX_BYTES) return file;
      var canvas = document.createElement("canvas");
      canvas.width = Math.round(bitmap.width * scale);
      canvas.height = Math.round(bitmap.height * scale);
      canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      return new Promise(function (resolve) {
        canvas.toBlob(function (blob) { resolve(blob ? withExif(blob, segment) : file); }, "image/jpeg", QUALITY);
      });
    }, function () { return file; });
  }
  /* Now, in the phone's local time with its UTC offset: an EXIF time without an offset is read
     in it (the camera's clock is local). */
  function localNow() {
    var now = new Date(), minutes = -now.getTimezoneOffset(), sign = minutes < 0 ? "-" : "+";
    var local = new Date(now.getTime() + minutes * 60000).toISOString().slice(0, 19);
    var abs = Math.abs(minutes);
    function two(n) { return (n < 10 ? "0" : "") + n; }
    return local + sign + two(Math.floor(abs / 60)) + ":" + two(abs % 60);
  }
  function locate(wanted) {
    if (!wanted || !navigator.geolocation) return Promise.resolve(null);
    return new Promise(function (resolve) {
      navigator.geolocation.getCurrentPosition(function (p) {
        resolve({ latitude: p.coords.latitude, longitude: p.coords.longitude });
      }, function () { resolve(null); }, { timeout: 5000, maximumAge: 60000 });
    });
  }
  function send(url, form, onProgress) {
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open("POST", url);
      xhr.setRequestHeader("x-csrftoken", csrf);
      xhr.setRequestHeader("accept", "application/json");
      xhr.upload.onprogress = function (e) { if (e.lengthComputable) onProgress(e.loaded / e.total); };
      xhr.onload = function () {
        var body = null;
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
        if (xhr.status >= 500) reject({ retry: true });
        else resolve({ status: xhr.status, body: body || {} });
      };
      xhr.onerror = function () { reject({ retry: true }); };
      xhr.ontimeout = function () { reject({ retry: true }); };
      xhr.timeout = 120000;
      xhr.send(form);
    });
  }
  function wait(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  Array.prototype.forEach.call(document.querySelectorAll("[data-photo]"), function (box) {
    var words = box.querySelector("template[data-words]").dataset;
    var camera = box.querySelector("[data-camera]");
    if (!camera) return;
    var progress = box.querySelector("[data-progress]");
    var bar = progress.querySelector("progress");
    var progressText = box.querySelector("[data-progress-text]");
    var notice = box.querySelector("[data-notice]");
    var checks = box.querySelector("[data-checks]");
    var take = box.querySelector("[data-take]");
    var next = document.querySelector("[data-next]");
    function say(text, tone) {
      notice.textContent = text; notice.hidden = !text;
      notice.className = "notice" + (tone ? " " + tone : "");
    }
    function upload(blob, coordinates, attempt) {
      var data = { date: localNow() };
      if (box.dataset.identifier) data.identifier = box.dataset.identifier;
      else data.side = "extra";
      if (coordinates) data.coordinates = coordinates;
      var form = new FormData();
      form.append("data", new Blob([JSON.stringify(data)], { type: "application/json" }));
      form.append("image", blob, "photo.jpg");
      progressText.textContent = attempt > 1 ? words.retrying : words.uploading;
      return send(box.dataset.upload, form, function (f) { bar.value = Math.round(f * 100); })
        .catch(function (failure) {
          if (failure && failure.retry && attempt < TRIES) {
            return wait(1000 * Math.pow(2, attempt - 1)).then(function () { return upload(blob, coordinates, attempt + 1); });
          }
          throw failure;
        });
    }
    function poll(imageId, left) {
      if (!box.dataset.status || !checks || left <= 0) return;
      fetch(box.dataset.status, { headers: { accept: "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (body) {
          var image = (body.images || []).filter(function (i) { return i._id === imageId; })[0];
          if (!image) return;
          checks.textContent = "";
          image.validations.forEach(function (v) {
            var li = document.createElement("li");
            li.className = v.done ? (v.valid ? "ok" : "bad") : "wait";
            li.textContent = v.label + ": " + (v.done ? (v.valid ? words.passed : words.notPassed) : words.checking);
            if (v.help) {  /* what the check looks at, in the page's language */
              var help = document.createElement("small");
              help.className = "check-help";
              help.textContent = v.help;
              li.appendChild(document.createElement("br"));
              li.appendChild(help);
            }
            checks.appendChild(li);
          });
          if (!image.processed) setTimeout(function () { poll(imageId, left - 1); }, POLL_MS);
        }).catch(function () { setTimeout(function () { poll(imageId, left - 1); }, POLL_MS); });
    }
    camera.addEventListener("change", function () {
      var file = camera.files && camera.files[0];
      if (!file) return;
      say("", "");
      if (checks) checks.textContent = "";
      progress.hidden = false; bar.value = 0;
      take.classList.add("busy");
      Promise.all([downscale(file), locate(box.dataset.location === "yes")]).then(function (got) {
        return upload(got[0], got[1], 1).then(function (answer) { return [got[0], answer]; });
      }).then(function (result) {
        var blob = result[0], answer = result[1], body = answer.body;
        progress.hidden = true;
        take.classList.remove("busy");
        camera.value = "";
        if (answer.status >= 400) { say(body.message || words.failed, "bad"); return; }
        var url = URL.createObjectURL(blob);
        if (box.dataset.extra !== undefined) {
          var img = document.createElement("img");
          img.src = url; img.alt = take.textContent;
          box.querySelector("[data-extras]").appendChild(img);
        } else {
          var preview = box.querySelector("[data-preview]");
          preview.src = url; preview.hidden = false;
          box.querySelector("[data-placeholder]").hidden = true;
          take.textContent = words.retakeLabel;
        }
        var quality = body.quality;
        if (quality && quality.passed === false) {
          say(words.retake + " " + quality.problems.map(function (p) { return p.message; }).join(" "), "bad");
        } else {
          say(words.sent, "ok");
        }
        if (next) { next.classList.remove("secondary"); next.textContent = next.dataset.continue || next.textContent; }
        var attempts = box.querySelector("[data-attempts]");
        if (attempts && typeof body.attemptsLeft === "number") {
          attempts.textContent = (body.attemptsLeft === 1 ? words.leftOne : words.leftOther).replace("{n}", body.attemptsLeft);
          if (body.attemptsLeft === 0) { take.hidden = true; camera.tabIndex = -1; }
        }
        if (body._id) poll(body._id, POLLS);
      }).catch(function () {
        progress.hidden = true;
        take.classList.remove("busy");
        camera.value = "";
        say(words.failed, "bad");
      });
    });
  });
})();
