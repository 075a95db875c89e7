"""The small HTTP receivers the tests start (webhooks, providers, analysis services)."""

from __future__ import annotations

import threading
from socketserver import BaseServer


def serve_in_thread(server: BaseServer) -> threading.Thread:
    """`server.serve_forever()` in a daemon thread, started. It looks for `shutdown()` every
    50 ms: at the default 0.5 s, every test's teardown waited that long."""
    thread = threading.Thread(
        target=server.serve_forever, daemon=True, kwargs={"poll_interval": 0.05}
    )
    thread.start()
    return thread
