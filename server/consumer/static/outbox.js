/* The outbox on the phone (docs/consumer.md, "Offline"): what the consumer does is written to
   IndexedDB first, then sent from there, one item at a time, oldest first, each with its
   client-made id as Idempotency-Key (the server answers a repeat with its first answer), and
   marked sent only when the server answered. Shared by the pages (consumer.js) and the
   service worker (sw.js, for Background Sync): no DOM here. Needs idb (vendor/).

   An item: {clientId, kind: "photo"|"form"|"finish", url, body: Blob (the whole request body,
   built once, so every retry sends the same bytes), contentType, slot, step, thumb, state}.
   States: saved -> sending -> sent | failed (the server refused it: retrying would not help)
   | waiting (no answer, a 5xx, 429 or a request still in flight: tried again later). */
(function (root) {
  "use strict";
  var VERSION = 1, ITEMS = "items", META = "meta";
  /* Backoff of the page's timer after a failed try: 2 s, doubled per failure, at most 60 s. */
  var BACKOFF_MS = 2000, BACKOFF_CAP_MS = 60000;
  var RETRY_CODES = { idempotency_request_in_progress: 1, service_unavailable: 1 };

  function Outbox(inspectionId) {
    this.id = inspectionId;
    this.name = "inspectlang-outbox-" + inspectionId;
    this.listeners = [];
    this.failures = 0;
    var self = this;
    this.db = root.idb.openDB(this.name, VERSION, {
      upgrade: function (db) {
        db.createObjectStore(ITEMS, { keyPath: "seq", autoIncrement: true })
          .createIndex("clientId", "clientId", { unique: true });
        db.createObjectStore(META);
      }
    });
    if (root.BroadcastChannel) {
      this.channel = new root.BroadcastChannel(this.name);
      this.channel.onmessage = function (event) { self.emit(event.data, false); };
    }
  }
  Outbox.prototype.emit = function (change, broadcast) {
    this.listeners.forEach(function (listener) { listener(change); });
    if (broadcast !== false && this.channel) this.channel.postMessage(change);
  };
  Outbox.prototype.listen = function (listener) { this.listeners.push(listener); };
  Outbox.prototype.add = function (item) {
    var self = this;
    item.state = "saved"; item.tries = 0; item.savedAt = Date.now();
    return this.db.then(function (db) { return db.add(ITEMS, item); }).then(function (seq) {
      item.seq = seq;
      self.emit({ clientId: item.clientId, state: "saved" });
      return item;
    });
  };
  Outbox.prototype.all = function () {
    return this.db.then(function (db) { return db.getAll(ITEMS); });
  };
  Outbox.prototype.update = function (item, changes) {
    var self = this;
    Object.keys(changes).forEach(function (k) { item[k] = changes[k]; });
    return this.db.then(function (db) { return db.put(ITEMS, item); }).then(function () {
      self.emit({ clientId: item.clientId, state: item.state });
    });
  };
  Outbox.prototype.remove = function (item) {
    var self = this;
    return this.db.then(function (db) { return db.delete(ITEMS, item.seq); }).then(function () {
      self.emit({ clientId: item.clientId, state: "removed" });
    });
  };
  /* The session's CSRF token, kept by each page: items queued under an older page send it. */
  Outbox.prototype.setToken = function (token) {
    return this.db.then(function (db) { return db.put(META, token, "csrf"); });
  };
  Outbox.prototype.pending = function (item) {
    return item.state === "saved" || item.state === "sending" || item.state === "waiting";
  };
  /* Send what waits, oldest first, until it is all sent or one try fails for want of a
     network (the rest waits behind it: the final send goes after the photos). Resolves to
     {left: items still to send}. Under a Web Lock, so the page and the service worker never
     send at once (the server's idempotency covers browsers without locks). */
  Outbox.prototype.drain = function (onProgress) {
    var self = this, locks = root.navigator && root.navigator.locks;
    var run = function () { return self.drainNow(onProgress); };
    return locks ? locks.request(this.name, run) : run();
  };
  Outbox.prototype.drainNow = function (onProgress) {
    var self = this;
    return Promise.all([this.all(), this.db.then(function (db) { return db.get(META, "csrf"); })])
      .then(function (got) {
        var items = got[0].filter(function (i) { return self.pending(i); }), token = got[1];
        function next(index) {
          if (index >= items.length) { self.failures = 0; return { left: 0 }; }
          var item = items[index];
          return self.update(item, { state: "sending", tries: item.tries + 1 })
            .then(function () { return send(item, token || item.csrf, onProgress); })
            .then(function (result) {
              if (result.retry) {
                self.failures += 1;
                return self.update(item, { state: "waiting", why: result.why })
                  .then(function () { return { left: items.length - index }; });
              }
              var changes = { answer: result.body, status: result.status, body: null, answeredAt: Date.now() };
              changes.state = result.status < 400 ? "sent" : "failed";
              return self.update(item, changes).then(function () { return next(index + 1); });
            });
        }
        return next(0);
      });
  };
  /* How long the page waits before its next try. */
  Outbox.prototype.backoff = function () {
    return Math.min(BACKOFF_CAP_MS, BACKOFF_MS * Math.pow(2, Math.max(0, this.failures - 1)));
  };

  function classify(status, body) {
    if (status >= 500 || status === 408 || status === 429 || RETRY_CODES[body && body.code]) {
      return { retry: true, why: status };
    }
    return { status: status, body: body || {} };
  }
  function headersOf(item, token) {
    return {
      "content-type": item.contentType, "accept": "application/json",
      "x-csrftoken": token || "", "idempotency-key": item.clientId
    };
  }
  /* One try: XMLHttpRequest in a page (upload progress), fetch in the service worker. */
  function send(item, token, onProgress) {
    var headers = headersOf(item, token);
    if (typeof root.XMLHttpRequest === "undefined") {
      return root.fetch(item.url, { method: "POST", body: item.body, headers: headers, credentials: "same-origin" })
        .then(function (response) {
          return response.json().catch(function () { return null; })
            .then(function (body) { return classify(response.status, body); });
        }, function () { return { retry: true, why: "network" }; });
    }
    return new Promise(function (resolve) {
      var xhr = new root.XMLHttpRequest();
      xhr.open("POST", item.url);
      Object.keys(headers).forEach(function (name) { xhr.setRequestHeader(name, headers[name]); });
      if (onProgress) xhr.upload.onprogress = function (e) { if (e.lengthComputable) onProgress(item, e.loaded / e.total); };
      xhr.onload = function () {
        var body = null;
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
        resolve(classify(xhr.status, body));
      };
      xhr.onerror = xhr.ontimeout = xhr.onabort = function () { resolve({ retry: true, why: "network" }); };
      xhr.timeout = 120000;
      xhr.send(item.body);
    });
  }

  /* A request body of fields and files (multipart/form-data) with a boundary made from the
     item's id: the same bytes on every try. `parts`: [[name, string | File/Blob, filename]]. */
  function multipart(clientId, parts) {
    var boundary = "----inspectlang-" + clientId, chunks = [];
    function quoted(text) { return String(text).replace(/"/g, "%22").replace(/\r|\n/g, " "); }
    parts.forEach(function (part) {
      var head = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + quoted(part[0]) + "\"";
      if (typeof part[1] === "string") {
        chunks.push(head + "\r\n\r\n", part[1], "\r\n");
      } else {
        head += "; filename=\"" + quoted(part[2] || "file") + "\"\r\nContent-Type: " + (part[1].type || "application/octet-stream");
        chunks.push(head + "\r\n\r\n", part[1], "\r\n");
      }
    });
    chunks.push("--" + boundary + "--\r\n");
    return { body: new Blob(chunks), contentType: "multipart/form-data; boundary=" + boundary };
  }
  function newId() {
    if (root.crypto && root.crypto.randomUUID) return root.crypto.randomUUID();
    var bytes = root.crypto.getRandomValues(new Uint8Array(16));
    return Array.prototype.map.call(bytes, function (b) { return (b < 16 ? "0" : "") + b.toString(16); }).join("");
  }

  root.InspectlangOutbox = { Outbox: Outbox, multipart: multipart, newId: newId };
})(typeof self !== "undefined" ? self : this);
