/* The consumer's steps that save through the phone's outbox (docs/consumer.md, "Offline"): the
   photos, the answers and the final send are written to IndexedDB first (outbox.js, with the
   vendored idb) and sent from there; each one's state is shown. Loaded after consumer.js (its
   checks run first) by every step but the welcome page. Photos are downscaled here (longest
   side 1600 px, JPEG: what the analyzers need, benchmarks/bench_photo_side.py) before they are
   queued; the original's EXIF (capture time, GPS, camera, software) is carried into the
   downscaled JPEG, and a JPEG already small enough is sent as it is. */
(function () {
  "use strict";
  var MAX_SIDE = 1600, QUALITY = 0.85, THUMB_SIDE = 480, POLL_MS = 2000, POLLS = 60;
  var ORIGINAL_MAX_BYTES = 3 * 1024 * 1024;
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
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
      }, function (error) {
        /* A refused permission is a declined location (docs/consumer.md); a timeout is not. */
        resolve(error && error.code === 1 ? { denied: true } : null);
      }, { timeout: 5000, maximumAge: 60000 });
    });
  }
  /* A small copy of the photo for previews (pending ones are shown from it, offline too). */
  function thumbnail(blob) {
    if (!window.createImageBitmap) return Promise.resolve(null);
    return createImageBitmap(blob).then(function (bitmap) {
      var scale = Math.min(1, THUMB_SIDE / Math.max(bitmap.width, bitmap.height));
      var canvas = document.createElement("canvas");
      canvas.width = Math.round(bitmap.width * scale); canvas.height = Math.round(bitmap.height * scale);
      canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      return new Promise(function (resolve) { canvas.toBlob(resolve, "image/jpeg", 0.7); });
    }).catch(function () { return null; });
  }

  /* ---- the outbox: everything is saved on the phone first, then sent from there ---- */
  var Box = window.InspectlangOutbox, shell = document.querySelector("[data-consumer]");
  var outbox = shell && Box && window.indexedDB ? new Box.Outbox(shell.dataset.inspection) : null;
  var words = shell ? shell.querySelector("template[data-outbox-words]").dataset : {};
  var statusLine = document.querySelector("[data-outbox-status]");
  var timer = null, settled = {}, urls = {}, progressOf = {}, awaiting = {};
  function drain() {
    if (!outbox) return Promise.resolve({ left: 0 });
    clearTimeout(timer);
    return outbox.drain(function (item, fraction) {
      progressOf[item.clientId] = fraction; render();
    }).then(function (result) {
      if (result.left) timer = setTimeout(drain, outbox.backoff());
      return result;
    }, function () { timer = setTimeout(drain, outbox.backoff()); return { left: 1 }; });
  }
  function syncLater() {  /* Background Sync: the service worker sends it, the page closed too */
    if (!("serviceWorker" in navigator) || !window.SyncManager) return;
    navigator.serviceWorker.ready.then(function (r) { return r.sync.register("inspectlang-outbox"); }).catch(function () {});
  }
  function queue(item) {
    if (navigator.storage && navigator.storage.persist) navigator.storage.persist().catch(function () {});
    item.csrf = csrf; item.step = location.pathname;
    return outbox.add(item).then(function (saved) { render(); syncLater(); return saved; });
  }
  function url(item) {
    if (!item.thumb) return null;
    return urls[item.clientId] || (urls[item.clientId] = URL.createObjectURL(item.thumb));
  }
  function stateText(item) {
    if (item.state === "sending") {
      var f = progressOf[item.clientId];
      return words.sending + (f ? " " + Math.round(f * 100) + "%" : "");
    }
    if (item.state === "failed") return words.failed + " " + ((item.answer || {}).message || "");
    if (item.state === "saved" || item.state === "waiting") return words.waiting;
    return words[item.state] || "";
  }
  var photoBoxes = Array.prototype.slice.call(document.querySelectorAll("[data-photo]"));
  function slotOf(box) { return box.dataset.identifier || "extra"; }
  function render() {
    if (!outbox) return;
    outbox.all().then(function (items) {
      photoBoxes.forEach(function (box) { box.render(items.filter(function (i) { return i.slot === slotOf(box); })); });
      review(items);
      refill(items);
      forms(items);
      sendButtons(items);
      var failed = items.filter(function (i) { return i.state === "failed" && i.kind !== "photo" && !settled[i.clientId]; });
      var text = waitingText(items.filter(function (i) { return outbox.pending(i); }));
      failed.forEach(function (i) { text += " " + words.failed + " " + ((i.answer || {}).message || ""); });
      if (statusLine && statusLine.textContent !== text.trim()) statusLine.textContent = text.trim();
      if (statusLine) statusLine.hidden = !text.trim();
    });
  }
  /* What waits on the phone, in the consumer's words: the photos counted, the answers and
     the send named, and when offline that it all goes out by itself. */
  function waitingText(pending) {
    var photos = pending.filter(function (i) { return i.kind === "photo"; }).length, parts = [];
    if (photos) parts.push((photos === 1 ? words.photosOne : words.photosOther).replace("{n}", photos));
    if (pending.some(function (i) { return i.kind === "form"; })) parts.push(words.answersWaiting);
    if (pending.some(function (i) { return i.kind === "finish"; })) parts.push(words.sendWaitingLine);
    /* offline: the browser says so, or the last try found no network (a weak signal) */
    var cut = !navigator.onLine || pending.some(function (i) { return i.state === "waiting" && i.why === "network"; });
    if (parts.length && cut) parts.push(words.offline);
    return parts.join(" ");
  }
  /* The review page: a photo kept on the phone (or sent since the page was drawn) instead of
     "Missing", with that same photo's state; the list of photos not taken says only those. */
  function review(items) {
    Array.prototype.forEach.call(document.querySelectorAll("[data-slot]"), function (li) {
      var mine = items.filter(function (i) { return i.slot === li.dataset.slot && i.state !== "failed" && url(i); }).pop();
      var missing = li.querySelector(".missing"), shown = li.querySelector("img[data-kept]");
      if (!mine || (!missing && !shown)) return;
      if (missing) {
        shown = document.createElement("img");
        shown.dataset.kept = ""; shown.alt = missing.dataset.label || "";
        missing.replaceWith(shown);
        var note = document.createElement("span");
        note.className = "state"; note.dataset.state = "";
        li.appendChild(note);
      }
      if (shown.getAttribute("src") !== url(mine)) shown.src = url(mine);
      li.querySelector("[data-state]").textContent = stateText(mine);
    });
    var list = document.querySelector("[data-missing-list]");
    if (!list) return;
    var labels = Array.prototype.map.call(document.querySelectorAll("[data-slot] .missing"), function (m) { return m.dataset.label; });
    list.hidden = !labels.length;
    if (labels.length) list.textContent = list.dataset.words.replace("{list}", labels.join(", "));
    var gaps = document.querySelector("[data-missing-photos]");
    if (gaps) gaps.hidden = !labels.length;
  }
  function go(next) {  /* to the page the server named: a new copy even when only its #part differs */
    var target = new URL(next, location.href);
    if (target.pathname !== location.pathname || target.search !== location.search) { location.assign(target.href); return; }
    history.replaceState(null, "", target.href);
    location.reload();
  }
  /* A form sent through the outbox: the answer says where to go next, or what was refused. */
  function forms(items) {
    items.forEach(function (item) {
      if (item.kind === "photo" || settled[item.clientId] || outbox.pending(item)) return;
      var answer = item.answer || {};
      if (item.state === "sent" && item.kind === "finish" && answer.next) {
        settled[item.clientId] = true;
        if (location.pathname !== answer.next) go(answer.next);
      } else if (awaiting[item.clientId] && item.state === "sent") {
        settled[item.clientId] = true;
        go(answer.next || location.pathname);
      } else if (awaiting[item.clientId] && item.state === "failed") {
        settled[item.clientId] = true;
        refusedHere(item);
        outbox.remove(item);
      }
    });
  }
  /* The Send button says where the send is and cannot queue a second one: disabled while a
     send waits in the outbox (this page's or one queued before a reload), with its state as
     its label; back as it was when the server refused the send (its words are shown). */
  function sendButtons(items) {
    Array.prototype.forEach.call(document.querySelectorAll("form[data-outbox='finish']"), function (form) {
      var mine = items.filter(function (i) { return i.kind === "finish" && outbox.pending(i); })[0];
      /* a send the server took: the page is moving on, the button stays as it was */
      var took = items.some(function (i) { return i.kind === "finish" && i.state === "sent" && (i.answer || {}).next; });
      holdSend(form, mine ? (mine.state === "sending" || navigator.onLine && !mine.tries ? "sending" : "waiting") : took ? "sending" : null);
    });
  }
  function holdSend(form, state) {
    var button = form.querySelector("button[type=submit]");
    if (!button) return;
    if (!button.dataset.label) button.dataset.label = button.textContent;
    if (!state && form.dataset.waiting) return;  /* this page's send, still being saved */
    var text = state === "sending" ? words.sending : state === "waiting" ? words.sendWaiting : button.dataset.label;
    form.dataset.held = state || "";
    button.disabled = !!state;
    if (state) button.setAttribute("aria-disabled", "true"); else button.removeAttribute("aria-disabled");
    if (button.textContent !== text) button.textContent = text;
  }
  function refusedHere(item) {
    var form = document.querySelector("form[data-outbox][data-waiting='" + item.clientId + "']");
    if (!form) return;
    form.removeAttribute("data-waiting");
    form.classList.remove("busy");
    if (form.dataset.outbox === "finish") holdSend(form, null);
    var errors = (item.answer || {}).errors || {}, first = null;
    Object.keys(errors).forEach(function (name) {
      var field = form.querySelector("[data-field='" + name + "']") || (form.querySelector("[name='" + name + "']") || {}).parentNode;
      var box = field && field.querySelector(".error");
      if (!box) return;
      box.textContent = errors[name]; box.hidden = false;
      if (!first) first = field.querySelector("input,select,textarea");
    });
    var notice = form.querySelector("[data-form-notice]");
    if (notice) { notice.textContent = (item.answer || {}).message || words.failed; notice.hidden = false; }
    if (first) first.focus();
  }
  function partsOf(form, submitter) {
    var parts = [];
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.disabled || el.type === "submit" || el.type === "button") return;
      if ((el.type === "checkbox" || el.type === "radio") && !el.checked) return;
      if (el.type === "file") {
        Array.prototype.forEach.call(el.files || [], function (file) { parts.push([el.name, file, file.name]); });
      } else if (el.tagName === "SELECT" && el.multiple) {
        Array.prototype.forEach.call(el.selectedOptions, function (o) { parts.push([el.name, o.value]); });
      } else {
        parts.push([el.name, el.value]);
      }
    });
    if (submitter && submitter.name) parts.push([submitter.name, submitter.value]);
    return parts;
  }
  /* The answers of a form as [name, value] pairs (no file, no token): kept beside the request
     body, so a page opened again before they are sent shows them (refill). */
  function answersOf(form) {
    return partsOf(form, null).filter(function (part) {
      var control = form.elements[part[0]];
      return typeof part[1] === "string" && !(control && control.type === "hidden");
    });
  }
  /* A page drawn before its answers were sent (offline, from the service worker's copy) shows
     the answers waiting in the outbox, not empty fields the consumer would fill again. */
  var refilled = false;
  function refill(items) {
    if (refilled) return;
    refilled = true;
    Array.prototype.forEach.call(document.querySelectorAll("form[data-outbox='form']"), function (form) {
      var target = new URL(form.getAttribute("action"), location.href).href;
      var mine = items.filter(function (i) { return i.url === target && i.fields && outbox.pending(i); }).pop();
      if (!mine) return;
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name || el.disabled || el.type === "hidden" || el.type === "file" || el.type === "submit") return;
        var given = mine.fields.filter(function (f) { return f[0] === el.name; }).map(function (f) { return f[1]; });
        if (el.type === "checkbox" || el.type === "radio") el.checked = given.indexOf(el.value) >= 0;
        else if (given.length) el.value = given[0];
      });
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("form[data-outbox]"), function (form) {
    form.addEventListener("submit", function (event) {
      if (!outbox || event.defaultPrevented) return;
      event.preventDefault();
      /* a second press while the first is being saved, or with a send already queued */
      if (form.dataset.waiting || form.dataset.held) return;
      if (form.dataset.outbox === "finish") holdSend(form, "sending");
      var id = Box.newId(), body = Box.multipart(id, partsOf(form, event.submitter));
      /* getAttribute: a field named "action" (the damage form's) hides form.action */
      var target = new URL(form.getAttribute("action"), location.href).href;
      var item = { clientId: id, kind: form.dataset.outbox, url: target, body: body.body, contentType: body.contentType,
        fields: answersOf(form) };
      var notice = form.querySelector("[data-form-notice]");
      form.classList.add("busy");
      form.dataset.waiting = id;
      awaiting[id] = true;
      queue(item).then(drain).then(function () {
        return outbox.all();
      }).then(function (items) {
        var mine = items.filter(function (i) { return i.clientId === id; })[0];
        if (!mine || !outbox.pending(mine)) return;  /* answered: render() goes on */
        delete awaiting[id];
        form.removeAttribute("data-waiting");
        form.classList.remove("busy");
        if (form.dataset.outbox === "finish") holdSend(form, "waiting");
        if (notice) { notice.textContent = form.dataset.queued; notice.hidden = false; notice.className = "notice ok"; }
        if (form.dataset.offlineNext) go(form.dataset.offlineNext);
      }).catch(function (error) {
        delete awaiting[id];
        form.removeAttribute("data-waiting");
        form.classList.remove("busy");
        if (form.dataset.outbox === "finish") holdSend(form, null);
        if (notice) { notice.textContent = error && error.name === "QuotaExceededError" ? words.full : words.failed; notice.hidden = false; notice.className = "notice bad"; }
      });
    });
  });

  photoBoxes.forEach(function (box) {
    var photoWords = box.querySelector("template[data-words]").dataset;
    var camera = box.querySelector("[data-camera]");
    var progress = box.querySelector("[data-progress]");
    var bar = progress.querySelector("progress");
    var progressText = box.querySelector("[data-progress-text]");
    var notice = box.querySelector("[data-notice]");
    var checks = box.querySelector("[data-checks]");
    var list = box.querySelector("[data-queue]");
    var take = box.querySelector("[data-take]");
    var next = document.querySelector("[data-next]");
    var extras = box.querySelector("[data-extras]"), shownExtras = {};
    var handled = null;  /* items already answered: answered() has run, or the page shows them */
    var initial = null;  /* items answered before this page was asked for: the server drew them */
    var knownLeft = Number(box.dataset.attemptsLeft);  /* the server's latest word */
    /* How many more photos the slot takes: the server's count less the photos still on the
       phone, which will use theirs; none left hides the camera (a fourth photo offline of a
       slot that takes three would only be refused). */
    function showLeft(pending) {
      var attempts = box.querySelector("[data-attempts]");
      if (!attempts || isNaN(knownLeft) || extras) return;
      var left = Math.max(0, knownLeft - pending);
      var text = left === 0 ? photoWords.leftNone : (left === 1 ? photoWords.leftOne : photoWords.leftOther).replace("{n}", left);
      if (attempts.textContent !== text) attempts.textContent = text;
      if (take) { take.hidden = left === 0; camera.tabIndex = left === 0 ? -1 : 0; }
    }
    function say(text, tone) {
      notice.textContent = text; notice.hidden = !text;
      notice.className = "notice" + (tone ? " " + tone : "");
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
            li.textContent = v.label + ": " + (v.done ? (v.valid ? photoWords.passed : photoWords.notPassed) : photoWords.checking);
            if (v.read) {  /* what the check read, beside what was declared */
              var read = document.createElement("small");
              read.className = "check-read";
              read.textContent = v.read;
              li.appendChild(document.createElement("br"));
              li.appendChild(read);
            }
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
    function answered(item) {  /* the server's answer to a photo sent while this page is open */
      var body = item.answer || {};
      if (item.state === "failed") { say(body.message || photoWords.failed, "bad"); return; }
      var quality = body.quality;
      if (quality && quality.passed === false) {
        say(photoWords.retake + " " + quality.problems.map(function (p) { return p.message; }).join(" "), "bad");
      } else {
        say(photoWords.sent, "ok");
      }
      if (next) { next.classList.remove("secondary"); next.textContent = next.dataset.continue || next.textContent; }
      if (typeof body.attemptsLeft === "number") knownLeft = body.attemptsLeft;
      if (checks) checks.textContent = "";
      if (body._id) poll(body._id, POLLS);
    }
    box.render = function (items) {
      if (handled === null) {
        handled = {}; initial = {};
        /* one answered after the page was asked for (the service worker sent it while the
           page loaded) may be missing from what the server drew: it is shown as sent */
        var asked = performance.timeOrigin || 0;
        items.forEach(function (i) {
          if (!outbox.pending(i) && !(i.answeredAt > asked)) handled[i.clientId] = initial[i.clientId] = true;
        });
      }
      var sending = items.filter(function (i) { return i.state === "sending"; })[0];
      progress.hidden = !sending;
      if (sending) {
        bar.value = Math.round((progressOf[sending.clientId] || 0) * 100);
        progressText.textContent = sending.tries > 1 ? photoWords.retrying : photoWords.uploading;
      }
      list.textContent = "";
      items.forEach(function (item) {
        if (handled[item.clientId] && item.state === "sent") return;
        var li = document.createElement("li");
        li.className = "state-" + item.state;
        if (url(item)) {
          var img = document.createElement("img");
          img.src = url(item); img.alt = "";
          li.appendChild(img);
        }
        li.appendChild(document.createTextNode(stateText(item)));
        list.appendChild(li);
      });
      var latest = items.filter(function (i) { return i.state !== "failed" && !initial[i.clientId] && url(i); }).pop();
      if (latest && url(latest) && !extras) {
        var preview = box.querySelector("[data-preview]");
        preview.src = url(latest); preview.hidden = false;
        box.querySelector("[data-placeholder]").hidden = true;
        take.textContent = photoWords.retakeLabel;
      }
      items.forEach(function (item) {
        if (extras && url(item) && item.state !== "failed" && !shownExtras[item.clientId] && !handled[item.clientId]) {
          shownExtras[item.clientId] = true;
          var extra = document.createElement("img");
          extra.src = url(item); extra.alt = take.textContent;
          extras.appendChild(extra);
        }
        if (!handled[item.clientId] && !outbox.pending(item)) {
          handled[item.clientId] = true;
          answered(item);
        }
      });
      /* a photo sent since this copy of the page was drawn (offline, the service worker's
         copy) told the count; the outbox is emptied at the thank-you page, before any
         reviewer's retake could raise it */
      items.forEach(function (i) {
        var said = (i.answer || {}).attemptsLeft;
        if (i.state === "sent" && typeof said === "number" && !(said >= knownLeft)) knownLeft = said;
      });
      showLeft(items.filter(function (i) { return outbox.pending(i); }).length);
      if (items.some(function (i) { return outbox.pending(i); }) && next) {
        next.classList.remove("secondary"); next.textContent = next.dataset.continue || next.textContent;
      }
    };
    if (!camera) return;
    camera.addEventListener("change", function () {
      var file = camera.files && camera.files[0];
      if (!file) return;
      say("", "");
      if (checks) checks.textContent = "";
      take.classList.add("busy");
      Promise.all([downscale(file), locate(box.dataset.location === "yes")]).then(function (got) {
        var data = { date: localNow() }, id = Box.newId();
        if (box.dataset.identifier) data.identifier = box.dataset.identifier;
        else data.side = "extra";
        if (got[1] && got[1].denied) data.locationDenied = true;
        else if (got[1]) data.coordinates = got[1];
        var body = Box.multipart(id, [["data", JSON.stringify(data)], ["image", got[0], "photo.jpg"]]);
        return thumbnail(got[0]).then(function (thumb) {
          return queue({ clientId: id, kind: "photo", url: box.dataset.upload, body: body.body,
            contentType: body.contentType, slot: slotOf(box), thumb: thumb });
        });
      }).then(function () {
        take.classList.remove("busy");
        camera.value = "";
        return drain();
      }).catch(function (error) {
        take.classList.remove("busy");
        camera.value = "";
        say(error && error.name === "QuotaExceededError" ? words.full : photoWords.failed, "bad");
      });
    });
  });

  if (outbox) {
    outbox.setToken(csrf);
    outbox.listen(render);
    window.addEventListener("online", function () { outbox.failures = 0; drain(); });
    window.addEventListener("offline", render);
    if (shell.dataset.done !== undefined) {
      outbox.all().then(function (items) {  /* sent: nothing is left to keep on the phone */
        items.forEach(function (i) { if (!outbox.pending(i)) outbox.remove(i); });
      });
    }
    render();
    drain();
  }
})();
