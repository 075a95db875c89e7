"""What the HTTP providers share: one client call, and how an answer's status maps to a
failure (429 and 5xx are worth another attempt, after the provider's Retry-After)."""

from __future__ import annotations

from typing import Any

import httpx

from server.common import retry_after_seconds
from server.delivery.providers.base import PermanentFailure, TransientFailure

TIMEOUT_SECONDS = 20.0
MAX_RETRY_AFTER_SECONDS = 3600.0


def request(method: str, url: str, **kwargs: Any) -> httpx.Response:
    try:
        with httpx.Client(timeout=TIMEOUT_SECONDS, follow_redirects=False, trust_env=False) as c:
            return c.request(method, url, **kwargs)
    except httpx.HTTPError as error:
        raise TransientFailure(f"{type(error).__name__}: {error}") from None


def refuse_unless_accepted(response: httpx.Response, provider: str) -> None:
    status = response.status_code
    if 200 <= status < 300:
        return
    detail = f"{provider} answered HTTP {status}: {response.text[:300]}"
    if status == 429 or status >= 500:
        raise TransientFailure(detail, retry_after=_retry_after(response))
    raise PermanentFailure(detail)


def _retry_after(response: httpx.Response) -> float | None:
    return retry_after_seconds(response.headers.get("retry-after"), cap=MAX_RETRY_AFTER_SECONDS)
