"""Several API and worker processes on one PostgreSQL and one blob store.

Starts `inspectlang serve --no-worker` processes (each with its own data directory) and two
`inspectlang worker` processes on one fresh PostgreSQL schema and one blob store (moto's S3
server by default; `BENCH_BLOB=postgresql` keeps blobs in the database), then:

1. throughput of one API process: 16 client threads create an inspection then read it back,
   for `BENCH_DURATION` seconds (default 5), all on the first API process (the second one and
   the workers run, idle);
2. the same load spread over both API processes (the ratio is `two_vs_one_api`; it can only
   approach 2 with a core per API process to spare: on a 2-core machine shared by the client,
   the servers, PostgreSQL and moto it stays near 1);
3. `BENCH_INSPECTIONS` (default 20) whole lives across both APIs (create on one, upload through
   the other, finish, report rendered by whichever worker claims it, PDF read through the other
   API), killing one API process and one worker with SIGKILL mid-load and restarting them; then
   counts what was lost and what was done twice (`tests/cluster.py`, `verify`).

The last line is one JSON object: `lost`, `duplicated` (both 0 when it works), `two_vs_one_api`,
the throughputs, and how many operations the client retried or had to reconcile.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cluster import Client, Cluster, Outcome, creation, free_port, run_load, verify  # noqa: E402

POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
DURATION = float(os.environ.get("BENCH_DURATION", "5"))
INSPECTIONS = int(os.environ.get("BENCH_INSPECTIONS", "20"))
BLOB = os.environ.get("BENCH_BLOB", "s3")
THREADS = 16
BUCKET = "bench-scale"


@contextmanager
def postgres_schema() -> Iterator[str]:
    import psycopg

    connection = psycopg.connect(POSTGRES_URL, connect_timeout=5, autocommit=True)
    schema = f"bench_{secrets.token_hex(4)}"
    connection.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    finally:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')
        connection.close()


@contextmanager
def blob_store() -> Iterator[dict[str, str]]:
    if BLOB == "postgresql":
        yield {"INSPECTLANG_BLOB_URL": "postgresql"}
        return
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
    ).create_bucket(Bucket=BUCKET)
    try:
        yield {
            "INSPECTLANG_BLOB_URL": f"s3://{BUCKET}/blobs",
            "INSPECTLANG_S3_ENDPOINT_URL": endpoint,
            "INSPECTLANG_S3_REGION": "us-east-1",
            "INSPECTLANG_S3_ACCESS_KEY_ID": "bench",
            "INSPECTLANG_S3_SECRET_ACCESS_KEY": "bench",
        }
    finally:
        server.stop()


def throughput(bases: list[str], api_key: str) -> dict[str, Any]:
    """Create-then-read pairs per second over `bases` (round robin), THREADS at once."""
    headers = {"x-api-key": api_key}
    done = [0] * THREADS
    errors = [0] * THREADS
    stop = time.monotonic() + DURATION

    def run(slot: int) -> None:
        with httpx.Client(timeout=30) as http:
            turn = slot
            while time.monotonic() < stop:
                base = bases[turn % len(bases)]
                turn += 1
                created = http.post(
                    f"{base}/v1/inspection/car",
                    json=creation(f"TP{slot}{turn}"),
                    headers={**headers, "Idempotency-Key": secrets.token_hex(8)},
                )
                if created.status_code != 201:
                    errors[slot] += 1
                    continue
                read = http.get(
                    f"{base}/v1/inspection/{created.json()['inspectionId']}", headers=headers
                )
                if read.status_code == 200:
                    done[slot] += 1
                else:
                    errors[slot] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(slot,)) for slot in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return {"pairs_per_s": sum(done) / elapsed, "errors": sum(errors)}


def main() -> None:
    from server import migrate
    from server.auth import create_company
    from server.db import Database

    with postgres_schema() as database_url, blob_store() as blob_env:
        database = Database(database_url)
        migrate.upgrade(database)
        keys = create_company(database, "Bench scale", ["bench"])
        database.dispose()
        print(f"blob store: {blob_env['INSPECTLANG_BLOB_URL']}; {THREADS} client threads")

        # One cluster for both throughputs (same processes running, same machine load):
        # first all the load on api0, then spread over api0 and api1.
        cluster = Cluster(database_url, blob_env, apis=2, workers=2, nginx=True)
        try:
            cluster.start()
            single = throughput([cluster.api[0].base_url], keys["testKey"])
            print(f"one API process:   {single['pairs_per_s']:6.1f} create+read/s ({single})")
            double = throughput([api.base_url for api in cluster.api], keys["testKey"])
            print(f"two API processes: {double['pairs_per_s']:6.1f} create+read/s ({double})")

            client = Client(lambda: [api.base_url for api in cluster.api], keys["testKey"])
            outcomes = [
                Outcome(plate=f"BS{index:04d}{secrets.token_hex(2)}")
                for index in range(INSPECTIONS)
            ]
            started = time.monotonic()
            load = threading.Thread(target=run_load, args=(client, outcomes))
            load.start()
            time.sleep(2.0)
            cluster.api[1].kill()
            cluster.worker[0].kill()
            print("killed api1 and worker0 (SIGKILL) mid-load")
            time.sleep(1.0)
            cluster.restart(cluster.api[1])
            cluster.restart(cluster.worker[0])
            print("restarted them")
            load.join()
            errors = [outcome.error for outcome in outcomes if outcome.error]
            for index, outcome in enumerate(outcomes):
                if outcome.error is None:
                    try:
                        client.read_pdf(index, outcome)
                    except Exception as error:
                        errors.append(str(error))
            lifecycle_s = time.monotonic() - started
            counted = verify(database_url, keys["companyId"], outcomes)
        finally:
            cluster.stop()
    for error in errors:
        print("error:", error[:300])
    print(
        f"{INSPECTIONS} inspections' lives (with the kills) in {lifecycle_s:.1f}s: "
        f"lost {counted['lost']}, duplicated {counted['duplicated']}, "
        f"client retries {client.retries}, reconciled {client.reconciled}"
    )
    ratio = double["pairs_per_s"] / single["pairs_per_s"] if single["pairs_per_s"] else None
    print(
        json.dumps(
            {
                "lost": counted["lost"],
                "duplicated": counted["duplicated"],
                "two_vs_one_api": round(ratio, 3) if ratio else None,
                "one_api_pairs_per_s": round(single["pairs_per_s"], 1),
                "two_api_pairs_per_s": round(double["pairs_per_s"], 1),
                "inspections": INSPECTIONS,
                "errors": len(errors),
                "client_retries": client.retries,
                "reconciled": client.reconciled,
                "blob_store": BLOB,
            }
        )
    )


if __name__ == "__main__":
    main()
