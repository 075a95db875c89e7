"""Outside analysis services (`INSPECTLANG_VALIDATION_PROVIDERS`), against a local HTTP server
that implements the documented contract: it verifies the HMAC signature, reads the photo and
the declared fields, and answers as the test scripts it (429 then 200; 400; a body that does
not fit). The worker's job is run by `run_once`, as a worker process would."""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image, ImageDraw
from sqlmodel import col, select

from server.app import worker_jobs
from server.db import Database
from server.jobs import WorkerConfig, run_once
from server.settings import Settings
from server.tables import JobRecord
from tests.http_threads import serve_in_thread

FAST = WorkerConfig(
    lease_seconds=5, poll_seconds=0.05, backoff_base_seconds=0.05, backoff_max_seconds=0.1
)
PROVIDER_SECRET = "provider-secret-for-tests"


@dataclass
class Provider:
    """A local analysis service: answers per validation name from a script of (status, body)."""

    script: dict[str, list[tuple[int, Any]]] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)
    refused_signatures: int = 0
    url: str = ""


def _verify(headers: Any, body: bytes) -> bool:
    timestamp = headers.get("x-inspectlang-timestamp", "")
    expected = hmac.new(
        PROVIDER_SECRET.encode(), timestamp.encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    fresh = timestamp.isdigit() and abs(time.time() - int(timestamp)) < 300
    given = headers.get("x-inspectlang-signature", "")
    return fresh and hmac.compare_digest(given, f"v1={expected}")


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    state = Provider()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if not _verify(self.headers, body):
                state.refused_signatures += 1
                self._answer(401, {"error": "bad signature"})
                return
            request = json.loads(body)
            request["idempotencyKey"] = self.headers.get("idempotency-key")
            state.received.append(request)
            answers = state.script.get(request["validation"]) or [(500, {"error": "no script"})]
            status, answer = answers.pop(0) if len(answers) > 1 else answers[0]
            self._answer(status, answer)

        def _answer(self, status: int, answer: Any) -> None:
            raw = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            if status == 429:
                self.send_header("retry-after", "0")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serve_in_thread(server)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/analyse"
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def settings(settings: Settings, provider: Provider) -> Settings:
    names = ("make", "model", "damage")
    return settings.model_copy(
        update={
            "validation_providers": {name: f"{provider.url}/{name}" for name in names},
            "validation_provider_secret": PROVIDER_SECRET,
            # The test provider listens on 127.0.0.1: a development setting (issue 21 §4).
            "allow_loopback_providers": True,
        }
    )


def photo() -> bytes:
    image = Image.new("RGB", (1024, 768), (90, 120, 160))
    draw = ImageDraw.Draw(image)
    for x in range(0, 1024, 64):
        draw.line([(x, 0), (1024 - x, 768)], fill=(240, 240, 240), width=6)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


PHOTO = photo()


def run_jobs(db: Database, settings: Settings, seconds: float = 20) -> None:
    """Run every due job until the queue holds no queued analysis job."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if run_once(db, settings, FAST, registry=worker_jobs(settings)):
            continue
        with db.session() as session:
            waiting = session.execute(
                select(JobRecord.id).where(
                    col(JobRecord.kind) == "image_analysis", col(JobRecord.status) == "queued"
                )
            ).first()
        if waiting is None:
            return
        time.sleep(0.05)
    raise AssertionError("the analysis jobs did not finish")


def create_and_upload(client: httpx.Client, headers: dict[str, str]) -> tuple[str, str]:
    body = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"disabled": True},
        "car": {"plate": "AB123CD", "make": "Toyota", "color": "red"},
    }
    created = client.post("/v1/inspection/car", json=body, headers=headers)
    assert created.status_code == 201, created.text
    ids = created.json()
    files = {"image": ("front.jpg", PHOTO, "image/jpeg"), "data": (None, '{"side": "front"}')}
    uploaded = client.post(f"/v1/inspection/image/{ids['productId']}", files=files, headers=headers)
    assert uploaded.status_code == 201, uploaded.text
    return ids["inspectionId"], uploaded.json()["_id"]


def validations(client: httpx.Client, headers: dict[str, str], inspection_id: str) -> Any:
    document = client.get(f"/v1/inspection/{inspection_id}", headers=headers).json()
    front = document["products"][0]["images"][0]
    return {v["validation"]: v for v in front["validations"]}


def test_a_provider_gets_the_photo_signed_and_its_answer_is_recorded(
    client: httpx.Client,
    test_headers: dict[str, str],
    db: Database,
    settings: Settings,
    provider: Provider,
) -> None:
    provider.script = {
        # 429 first: retried (Retry-After: 0), then the answer.
        "make": [(429, {"error": "slow down"}), (200, {"confidence": 91, "result": "Toyota"})],
        # 400: permanent; the validation keeps waiting for a result posted to the API.
        "model": [(400, {"error": "cannot"})],
    }
    provider.received.clear()
    inspection_id, image_id = create_and_upload(client, test_headers)
    run_jobs(db, settings)

    found = validations(client, test_headers, inspection_id)
    assert found["make"]["confidence"] == 91
    assert found["make"]["valid"] is True
    assert found["make"]["result"] == "Toyota"
    assert "model" not in found  # still waiting
    assert provider.refused_signatures == 0
    makes = [r for r in provider.received if r["validation"] == "make"]
    assert len(makes) == 2  # the 429, then the answer
    first = makes[0]
    assert first["inspectionId"] == inspection_id and first["imageId"] == image_id
    assert base64.b64decode(first["image"]["data"]) == PHOTO
    assert first["image"]["contentType"] == "image/jpeg"
    assert first["declared"]["make"] == "Toyota" and first["declared"]["plate"] == "AB123CD"
    assert first["idempotencyKey"] == f"{image_id}:make"
    # The permanent failure was not retried past the job's own retry for `make`.
    assert len([r for r in provider.received if r["validation"] == "model"]) <= 2


def test_an_answer_that_does_not_fit_the_contract_records_nothing(
    client: httpx.Client,
    test_headers: dict[str, str],
    db: Database,
    settings: Settings,
    provider: Provider,
) -> None:
    provider.script = {
        "make": [(200, {"confidence": 250, "result": "Toyota"})],  # out of range
        "model": [(200, b"not json")],
    }
    inspection_id, _image_id = create_and_upload(client, test_headers)
    run_jobs(db, settings)
    found = validations(client, test_headers, inspection_id)
    assert "make" not in found and "model" not in found


def test_a_result_posted_meanwhile_is_not_recorded_twice(
    client: httpx.Client,
    test_headers: dict[str, str],
    db: Database,
    settings: Settings,
    provider: Provider,
) -> None:
    """An outside service posted `make` through the API before the job ran: the job's answer
    for it is dropped, the posted one stays."""
    provider.script = {
        "make": [(200, {"confidence": 10, "result": "Fiat"})],
        "model": [(200, {"confidence": 88, "result": "Corolla"})],
    }
    inspection_id, image_id = create_and_upload(client, test_headers)
    posted = client.post(
        f"/v1/inspection/{inspection_id}/image/{image_id}/validation",
        json={"validation": "make", "confidence": 95, "result": "Toyota"},
        headers=test_headers,
    )
    assert posted.status_code == 200, posted.text
    run_jobs(db, settings)
    found = validations(client, test_headers, inspection_id)
    assert (found["make"]["confidence"], found["make"]["result"]) == (95, "Toyota")
    assert (found["model"]["confidence"], found["model"]["result"]) == (88, "Corolla")


def test_provider_settings_need_a_secret(tmp_path: Path) -> None:
    from server.settings import SettingsError

    environment = {"INSPECTLANG_VALIDATION_PROVIDERS": "make=https://a.example/v1"}
    with pytest.raises(SettingsError, match="INSPECTLANG_VALIDATION_PROVIDER_SECRET"):
        Settings.from_env(environment, data_dir=tmp_path)
    with pytest.raises(SettingsError, match="name=URL"):
        Settings.from_env(
            {"INSPECTLANG_VALIDATION_PROVIDERS": "make=ftp://x", "INSPECTLANG_SECRET": "s"},
            data_dir=tmp_path,
        )
    parsed = Settings.from_env(
        {
            **environment,
            "INSPECTLANG_VALIDATION_PROVIDER_SECRET": "k",
            "INSPECTLANG_SECRET": "s",
        },
        data_dir=tmp_path,
    )
    assert parsed.validation_providers == {"make": "https://a.example/v1"}
