"""Outside analysis services for validations this machine cannot run (make, model, damage...):
per validation name, a URL the worker posts the photo to (`INSPECTLANG_VALIDATION_PROVIDERS`).

The contract (docs/vision.md): a JSON POST of the photo (base64) and what it is compared with,
signed with HMAC-SHA256 over `"{timestamp}.{body}"` in `X-Inspectlang-Signature: v1=<hex>`
(timestamp in `X-Inspectlang-Timestamp`), with `Idempotency-Key: <imageId>:<validation>`. A
200 answer carries `{confidence, result?, entities?, damages?}`. Connection errors, timeouts,
429 and 5xx are transient (retried with backoff, honouring `Retry-After`); any other answer,
or a body that does not fit the contract, is permanent: the validation keeps waiting for a
result posted through the API.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from server.common import retry_after_seconds
from server.errors import ServerError
from server.inspections.schemas import DamageFields, Entity, Percent, ResultValue
from server.settings import Settings
from server.tokens import hmac_sha256
from server.urlsafety import UnsafeURLError, check_provider_url

#: Longest `Retry-After` honoured (seconds); a longer one is capped to this.
MAX_RETRY_AFTER_SECONDS = 3600


class ProviderError(ServerError):
    """A provider's attempt failed; `transient` ones are tried again."""

    def __init__(self, message: str, *, transient: bool, retry_after: float | None = None):
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after


class ProviderAnswer(msgspec.Struct, forbid_unknown_fields=False, kw_only=True):
    """What a provider answers with 200 (unknown fields are ignored, for forward
    compatibility)."""

    confidence: Percent
    result: ResultValue = None
    entities: list[Entity] = msgspec.field(default_factory=list)
    damages: list[DamageFields] = msgspec.field(default_factory=list)


@dataclass(frozen=True)
class ProviderRequest:
    validation: str
    inspection_id: str
    image_id: str
    data: bytes
    content_type: str
    declared: dict[str, Any] = field(default_factory=dict)
    country: str | None = None
    options: dict[str, float] = field(default_factory=dict)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """`v1=<hex HMAC-SHA256 of "{timestamp}.{body}">`, what the provider verifies."""
    return "v1=" + hmac_sha256(secret.encode(), timestamp.encode() + b"." + body).hex()


def request_body(request: ProviderRequest) -> bytes:
    return json.dumps(
        {
            "validation": request.validation,
            "inspectionId": request.inspection_id,
            "imageId": request.image_id,
            "image": {
                "contentType": request.content_type,
                "data": base64.b64encode(request.data).decode("ascii"),
            },
            "declared": request.declared,
            "country": request.country,
            "options": request.options,
        },
        separators=(",", ":"),
        default=str,
    ).encode()


def _retry_after(response: httpx.Response) -> float | None:
    return retry_after_seconds(response.headers.get("retry-after"), cap=MAX_RETRY_AFTER_SECONDS)


def call(settings: Settings, url: str, request: ProviderRequest) -> ProviderAnswer:
    """One attempt at the provider; `ProviderError` says whether to try again."""
    try:
        check_provider_url(settings, url)  # again: a DNS answer may have changed since start-up
    except UnsafeURLError as error:
        raise ProviderError(f"the provider's URL is refused: {error}", transient=False) from None
    body = request_body(request)
    timestamp = str(int(time.time()))
    secret = settings.validation_provider_secret or ""
    headers = {
        "content-type": "application/json",
        "x-inspectlang-timestamp": timestamp,
        "x-inspectlang-signature": signature(secret, timestamp, body),
        "idempotency-key": f"{request.image_id}:{request.validation}",
        "user-agent": "inspectlang-worker",
    }
    try:
        with httpx.Client(
            timeout=settings.validation_provider_timeout_seconds,
            follow_redirects=False,
            trust_env=False,
        ) as client:
            response = client.post(url, content=body, headers=headers)
    except httpx.HTTPError as error:
        raise ProviderError(f"{type(error).__name__}: {error}", transient=True) from None
    if response.status_code == 429 or response.status_code >= 500:
        raise ProviderError(
            f"the provider answered {response.status_code}",
            transient=True,
            retry_after=_retry_after(response),
        )
    if response.status_code != 200:
        raise ProviderError(f"the provider answered {response.status_code}", transient=False)
    try:
        return msgspec.json.decode(response.content, type=ProviderAnswer)
    except msgspec.DecodeError as error:
        message = f"the provider's answer does not fit: {error}"
        raise ProviderError(message, transient=False) from None
