"""Webhooks as the client libraries receive them: `autoinspector-signature` checked exactly as
autoinspector-node's `Webhooks.constructEvent` does (`createHmac('sha256', webhookSecret)
.update(body).digest('hex')`, the secret string as issued), and `image_processed` naming the
product and the image."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
from typing import Any

import httpx
from PIL import Image

from .conftest import Drain, Receiver

#: One image whose only validation (`date`) runs here, so the upload processes it at once.
TEMPLATE = """\
template "Webhook check"
    type: car
    locales: en_US

image front
    label: "Front"
    validate date, optional

verdict
    approve when all(i in images where i.approved)
"""


def construct_event(body: bytes, request_signature: str, webhook_secret: str) -> Any:
    """autoinspector-node `Webhooks.constructEvent`, line for line."""
    real_digest = hmac.new(webhook_secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    if request_signature != real_digest:
        raise ValueError("The signature provided in the request is not valid")
    return json.loads(body.decode("utf-8"))


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (20, 130, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_image_processed_reaches_a_client_verifying_the_legacy_signature(
    client: httpx.Client, headers: dict[str, str], receiver: Receiver, drain: Drain
) -> None:
    subscribed = client.post(
        "/v1/notification/webhook",
        json={"events": ["image_processed"], "endpoint": receiver.url},
        headers=headers,
    )
    assert subscribed.status_code == 201, subscribed.text
    secret = subscribed.json()["secret"]
    assert secret.startswith("whsec_")
    template = client.post(
        "/v1/inspection/template",
        content=TEMPLATE.encode(),
        headers={**headers, "content-type": "text/plain"},
    )
    assert template.status_code == 201, template.text
    created = client.post(
        "/v1/inspection/car",
        json={
            "templateId": template.json()["_id"],
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
            "car": {"plate": "AB123CD", "year": "2020"},
        },
        headers=headers,
    )
    assert created.status_code == 201, created.text
    product_id = created.json()["productId"]
    uploaded = client.post(
        f"/v1/inspection/image/{product_id}",
        files={"image": ("front.png", _png(), "image/png"), "data": (None, '{"side": "front"}')},
        headers=headers,
    )
    assert uploaded.status_code == 201, uploaded.text
    drain()
    (delivery,) = receiver.wait_for(1)
    event = construct_event(delivery.body, delivery.headers["autoinspector-signature"], secret)
    assert event["event"] == "image_processed"
    assert event["payload"]["productId"] == product_id
    assert event["payload"]["imageId"] == uploaded.json()["_id"]
    tampered = delivery.body.replace(b"image_processed", b"image_processeD")
    try:
        construct_event(tampered, delivery.headers["autoinspector-signature"], secret)
    except ValueError:
        pass
    else:
        raise AssertionError("a changed body must not verify")
