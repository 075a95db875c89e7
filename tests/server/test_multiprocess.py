"""Two `serve` processes (separate data directories: nothing shared on disk) and two `worker`
processes on one database and one blob store (moto's S3 server), behind nginx (the example
configuration of docs/operations.md). Inspections are created on one API process, their photos
uploaded through the other, reports rendered by whichever worker claims them and PDFs read
through the other API; mid-load one API process and one worker are killed with SIGKILL and
started again. Nothing is lost, nothing is done twice. The consumer opens a magic link on one
API process and continues its flow on the other."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import httpx
import pytest

from server.auth import create_company
from server.db import Database
from tests.cluster import Client, Cluster, Outcome, run_load, verify

BUCKET = "cluster"
INSPECTIONS = 8


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    import boto3
    from moto.server import ThreadedMotoServer

    from tests.cluster import free_port

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=BUCKET)
    try:
        yield {
            "INSPECTLANG_BLOB_URL": f"s3://{BUCKET}/blobs",
            "INSPECTLANG_S3_ENDPOINT_URL": endpoint,
            "INSPECTLANG_S3_REGION": "us-east-1",
            "INSPECTLANG_S3_ACCESS_KEY_ID": "testing",
            "INSPECTLANG_S3_SECRET_ACCESS_KEY": "testing",
        }
    finally:
        server.stop()


def test_two_apis_and_two_workers_lose_nothing_and_do_nothing_twice(
    database_url: str, db: Database, s3_env: dict[str, str]
) -> None:
    keys = create_company(db, f"Cluster {secrets.token_hex(3)}", ["member"])
    cluster = Cluster(database_url, s3_env)
    try:
        cluster.start()
        assert cluster.balancer is not None
        balanced = cluster.balancer.base_url
        # The load balancer answers and spreads over both processes.
        for _ in range(4):
            assert httpx.get(f"{balanced}/ready", timeout=10).status_code == 200
        client = Client(lambda: [api.base_url for api in cluster.api], keys["testKey"])
        outcomes = [
            Outcome(plate=f"MP{index:03d}{secrets.token_hex(2)}") for index in range(INSPECTIONS)
        ]
        run_load(client, outcomes[: INSPECTIONS // 2])
        # Mid-load: kill one API process and one worker, keep sending, then restart them.
        import threading

        rest = threading.Thread(target=run_load, args=(client, outcomes[INSPECTIONS // 2 :]))
        rest.start()
        time.sleep(0.5)
        cluster.api[1].kill()
        cluster.worker[0].kill()
        time.sleep(1.5)
        cluster.restart(cluster.api[1])
        cluster.restart(cluster.worker[0])
        rest.join()
        assert [o.error for o in outcomes if o.error] == [], cluster.logs()
        for index, outcome in enumerate(outcomes):
            client.read_pdf(index, outcome)
        # Reads through nginx reach both processes and see the same data.
        through_balancer = Client(lambda: [balanced], keys["testKey"])
        listed = through_balancer.call("GET", "/v1/inspection?limit=100", 0).json()
        assert listed["totalInspections"] == INSPECTIONS
        _consumer_flow_through_either(cluster, keys["testKey"])
        counted = verify(database_url, keys["companyId"], outcomes)
        assert counted == {"lost": 0, "duplicated": 0}, cluster.logs()
    finally:
        cluster.stop()


def _consumer_flow_through_either(cluster: Cluster, api_key: str) -> None:
    """The consumer opens the magic link on one API process and continues on the other: the
    browser session is a database row, so either process accepts its cookie."""
    from urllib.parse import urlsplit

    from tests.cluster import creation

    first, second = (api.base_url for api in cluster.api)
    created = httpx.post(
        f"{first}/v1/inspection/car",
        json=creation(f"CF{secrets.token_hex(3)}"),
        headers={"x-api-key": api_key},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    link = urlsplit(created.json()["magicLink"])
    opened = httpx.get(f"{second}{link.path}?{link.query}", timeout=30)
    assert opened.status_code == 303, opened.text
    cookie = opened.headers["set-cookie"].split(";")[0]
    step = urlsplit(opened.headers["location"]).path
    page = httpx.get(f"{first}{step}", headers={"cookie": cookie}, timeout=30)
    assert page.status_code == 200, page.text
    inspection_id = created.json()["inspectionId"]
    shown = httpx.get(
        f"{first}/v1/inspection/{inspection_id}", headers={"x-api-key": api_key}, timeout=30
    )
    assert shown.json()["status"] == "started"  # opened on the other process
    refused = httpx.get(f"{first}{step}", timeout=30)  # no cookie: no flow
    assert refused.status_code in (303, 404), refused.status_code
