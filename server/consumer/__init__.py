"""The consumer's mobile web flow behind the magic link (`/i/:inspectionId?code=...`).

`controller` has the pages, `photos` the two JSON endpoints the script calls, `visits` the
session of a visit and the pages that end one, `flow` the steps worked out from the template and
the state, `messages` the inputs' validation messages (the API's own words), `templates/` and
`static/` the HTML, CSS and scripts (`consumer.js` on every page; `offline.js` and the outbox,
`outbox.js`, with the vendored idb), `outbox` the server's half of the outbox (a client id
runs a request once), `templates/sw.js` the service worker. Everything goes through the
services the API uses.
"""

from __future__ import annotations

from pathlib import Path

from server.consumer.controller import ROUTES
from server.web.routes import PageArea

CONSUMER_AREA = PageArea(
    name="consumer",
    templates=Path(__file__).with_name("templates"),
    static=Path(__file__).with_name("static"),
    routes=ROUTES,
)
