"""ASGI middleware counting every HTTP request in `server.metrics` by method, route template
(`/inspections/{inspection_id:str}`, never the raw path: ids would explode the label set) and
status code."""

from __future__ import annotations

import time
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from server import metrics


class RequestMetricsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
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
            method = str(scope.get("method") or "GET")
            metrics.request_done(method, str(route), status, time.perf_counter() - started)

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                record()
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            record()
