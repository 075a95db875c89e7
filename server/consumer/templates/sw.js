{# The consumer's service worker, served at /i/<id>/sw.js with the scope /i/<id> (the link and
   its steps): the flow opens without a network, and Background Sync sends the outbox. #}
/* The consumer's service worker (docs/consumer.md, "Offline"). Scope: one inspection's link.
   - Pages of the flow: network first, each page answered kept in this inspection's cache, so
     a reload offline shows the last copy (the page's script adds what waits in the outbox).
     Offline, the link itself (with or without its code) is answered with a redirect to the
     step last seen: the code never stays in the address bar.
   - Assets (URLs with a content hash): from the cache, kept at install.
   - The cache's name carries the assets' version; caches of older versions are removed when
     this one activates.
   - `sync` (Background Sync, where the browser has it): the outbox is sent from here, even
     with the page closed; the pages send it too (page load, `online`, a timer). */
"use strict";
var ASSETS = {{ assets | tojson }};
importScripts({{ static("consumer/vendor/idb-8.0.4.umd.js") | tojson }}, {{ static("consumer/outbox.js") | tojson }});
var SCOPE = new URL(self.registration.scope).pathname.replace(/\/$/, "");
var INSPECTION = SCOPE.split("/").pop();
var PREFIX = "inspectlang-consumer-" + INSPECTION + "-";
var CACHE = PREFIX + {{ version | tojson }};
var LAST = SCOPE + "/__last-step";
var SYNC_TAG = "inspectlang-outbox";

/* Each asset on its own: one that fails now (a bad moment of the network) must not keep the
   worker from installing; it is kept when a page first loads it (below). */
self.addEventListener("install", function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    return Promise.all(ASSETS.map(function (asset) { return cache.add(asset).catch(function () {}); }));
  }).then(function () { return self.skipWaiting(); }));
});
self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (names) {
    return Promise.all(names.filter(function (name) {
      return name.indexOf(PREFIX) === 0 && name !== CACHE;
    }).map(function (name) { return caches.delete(name); }));
  }).then(function () { return self.clients.claim(); }));
});

function keep(url, response, seen) {
  /* Only a page of this inspection answered 200 in one piece (no redirect followed). */
  if (!response || response.status !== 200 || response.redirected || response.type !== "basic") return Promise.resolve();
  var copy = response.clone();
  return caches.open(CACHE).then(function (cache) {
    return Promise.all([
      cache.put(url.origin + url.pathname, copy),
      seen && /\/(step\/[^/]+|done)$/.test(url.pathname) ? cache.put(url.origin + LAST, new Response(url.pathname)) : null
    ]);
  });
}
function offlinePage(url) {
  return caches.open(CACHE).then(function (cache) {
    return cache.match(url.origin + url.pathname).then(function (page) {
      if (page && url.pathname !== SCOPE) return page;
      return cache.match(url.origin + LAST).then(function (last) {
        return last ? last.text().then(function (path) { return Response.redirect(path, 303); }) : Response.error();
      });
    });
  });
}
self.addEventListener("fetch", function (event) {
  var request = event.request, url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.indexOf("/static/") === 0) {
    event.respondWith(caches.open(CACHE).then(function (cache) {
      return cache.match(request).then(function (hit) {
        return hit || fetch(request).then(function (response) {
          if (response.ok) event.waitUntil(cache.put(request, response.clone()));
          return response;
        });
      });
    }));
    return;
  }
  if (request.mode !== "navigate" || (url.pathname !== SCOPE && url.pathname.indexOf(SCOPE + "/") !== 0)) return;
  event.respondWith(fetch(request).then(function (response) {
    event.waitUntil(keep(url, response, true));
    return response;
  }, function () { return offlinePage(url); }));
});
/* The page lists the flow's steps: each one not kept yet is fetched now, so every step opens
   offline, not only those seen. */
self.addEventListener("message", function (event) {
  var data = event.data || {};
  if (data.type !== "keep" || !Array.isArray(data.urls)) return;
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    return Promise.all(data.urls.map(function (path) {
      var url = new URL(path, self.location.origin);
      if (url.origin !== self.location.origin || url.pathname.indexOf(SCOPE + "/") !== 0) return null;
      return cache.match(url.origin + url.pathname).then(function (hit) {
        return hit || fetch(url.href, { credentials: "same-origin" }).then(function (response) {
          return keep(url, response, false);
        }, function () { return null; });
      });
    }));
  }));
});
self.addEventListener("sync", function (event) {
  if (event.tag !== SYNC_TAG) return;
  var outbox = new self.InspectlangOutbox.Outbox(INSPECTION);
  event.waitUntil(outbox.drain().then(function (result) {
    if (result.left) throw new Error("the outbox waits for a network");
  }));
});
