"""ASGI middleware counting every HTTP request in `server.metrics` by method, route template
(`/inspections/{inspection_id:str}`, never the raw path: ids would explode the label set) and
status code."""

from __future__ import annotations

import time
from typing import Any

from litestar.types import ASGIApp, Message, Receive, Scope, Send

from server import metrics


class RequestMetricsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        recorded = False

        def record() -> None:
            nonlocal recorded
            if recorded:
                return
            recorded = True
            route: Any = scope.get("path_template") or "unmatched"
            metrics.request_done(
                scope.get("method", "GET"), str(route), status, time.perf_counter() - started
            )

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                record()
            await send(message)

        try:
            await self.app(scope, receive, send=counting_send)
        finally:
            record()
