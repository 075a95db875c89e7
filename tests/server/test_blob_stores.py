"""Blob stores: the same contract for the local directory, S3 (moto's S3 server, speaking the
S3 REST protocol, started here on a free port) and the database (`blob_chunks`: the real
PostgreSQL under `make test-postgres`); and the API storing and serving images through S3 with
nothing on its disk."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.blobs import (
    CHUNK_BYTES,
    BlobNotFound,
    BlobStore,
    BlobUrlError,
    DatabaseBlobStore,
    InvalidBlobKey,
    LocalBlobStore,
    S3BlobStore,
    open_store,
    s3_client,
)
from server.db import Database
from server.settings import Settings
from tests.conftest import TEST_SECRET

BUCKET = "inspectlang-test"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """moto's S3-compatible server on a free port, with the test bucket."""
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        yield endpoint
    finally:
        server.stop()


def s3_settings(base: Settings, endpoint: str, prefix: str) -> Settings:
    return base.model_copy(
        update={
            "blob_url": f"s3://{BUCKET}/{prefix}",
            "s3_endpoint_url": endpoint,
            "s3_region": "us-east-1",
            "s3_access_key_id": "testing",
            "s3_secret_access_key": "testing",
        }
    )


@pytest.fixture(scope="module")
def settings(
    database_url: str, data_dir: Path, server_socket: socket.socket, s3_endpoint: str
) -> Settings:
    """The API of this module keeps its blobs in S3."""
    port = server_socket.getsockname()[1]
    base = Settings(
        database_url=database_url,
        data_dir=data_dir,
        public_url=f"http://127.0.0.1:{port}",
        secret=TEST_SECRET,
        allow_loopback_webhooks=True,
        worker=False,
        rate_limit_requests=0,
    )
    configured = s3_settings(base, s3_endpoint, "api")
    s3_client(configured).create_bucket(Bucket=BUCKET)
    return configured


@pytest.fixture(params=["file", "s3", "postgresql"])
def store(
    request: pytest.FixtureRequest, settings: Settings, db: Database, tmp_path: Path
) -> BlobStore:
    kind = request.param
    if kind == "file":
        chosen = settings.model_copy(update={"blob_url": f"file://{tmp_path / 'blobs'}"})
        made = open_store(chosen)
        assert isinstance(made, LocalBlobStore)
        assert made.root == (tmp_path / "blobs").resolve()
        return made
    if kind == "s3":
        made = open_store(settings.model_copy(update={"blob_url": f"s3://{BUCKET}/contract"}))
        assert isinstance(made, S3BlobStore)
        return made
    made = open_store(settings.model_copy(update={"blob_url": "postgresql"}), db)
    assert isinstance(made, DatabaseBlobStore)
    return made


def test_every_store_keeps_the_contract(store: BlobStore) -> None:
    key = f"images/company/{secrets.token_hex(6)}.jpg"
    assert not store.exists(key)
    with pytest.raises(BlobNotFound):
        store.get(key)
    store.put(key, b"first")
    assert store.exists(key)
    assert store.get(key) == b"first"
    store.put(key, b"second, longer")  # overwrite replaces the whole blob
    assert store.get(key) == b"second, longer"
    store.put(key, b"")
    assert store.get(key) == b""
    store.delete(key)
    assert not store.exists(key)
    store.delete(key)  # deleting a missing key is not an error
    for bad in ("../escape", "/absolute", "a//b", ".hidden/x", ""):
        with pytest.raises(InvalidBlobKey):
            store.put(bad, b"x")
    store.ping()


def test_every_store_keeps_large_blobs_whole(store: BlobStore) -> None:
    """Several database chunks (and one S3 object) come back byte for byte."""
    key = f"reports/company/{secrets.token_hex(6)}.pdf"
    data = secrets.token_bytes(2 * CHUNK_BYTES + 12345)
    store.put(key, data)
    assert store.get(key) == data
    store.put(key, data[:100])  # a shorter blob leaves no chunk of the longer one behind
    assert store.get(key) == data[:100]
    store.delete(key)


def test_every_store_keeps_thumbnails(store: BlobStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A photo's thumbnail is made once and kept in the store beside it; an unreadable file's
    lack of one is kept too (`server.thumbnails.NO_THUMBNAIL`), so neither is decoded again."""
    import io

    from PIL import Image

    import server.thumbnails as thumbnails

    made: list[int] = []
    decode = thumbnails.reduced_picture
    monkeypatch.setattr(
        thumbnails, "reduced_picture", lambda data, side: made.append(side) or decode(data, side)
    )
    picture = io.BytesIO()
    Image.new("RGB", (900, 600), (10, 120, 200)).save(picture, format="JPEG")
    key = f"images/company/{secrets.token_hex(6)}"
    store.put(key, picture.getvalue())
    first = thumbnails.kept_thumbnail(store, key)
    assert first is not None and first[:2] == b"\xff\xd8"
    assert thumbnails.kept_thumbnail(store, key) == first
    assert made == [thumbnails.THUMBNAIL_SIZE]
    kept = thumbnails.thumbnail_key(key, thumbnails.THUMBNAIL_SIZE, thumbnails.THUMBNAIL_QUALITY)
    assert store.get(kept) == first
    # Another size or quality is its own thumbnail.
    assert thumbnails.kept_thumbnail(store, key, 200, 90) not in (None, first)
    assert made == [thumbnails.THUMBNAIL_SIZE, 200]

    document = f"images/company/{secrets.token_hex(6)}"
    store.put(document, b"%PDF-1.7 not a photo")
    assert thumbnails.kept_thumbnail(store, document) is None
    assert thumbnails.kept_thumbnail(store, document) is None
    assert len(made) == 3
    with pytest.raises(BlobNotFound):
        thumbnails.kept_thumbnail(store, f"images/company/{secrets.token_hex(6)}")


def test_unknown_blob_urls_are_refused(settings: Settings) -> None:
    for url in ("ftp://host/dir", "s3://", "file://host/dir", "mongodb"):
        with pytest.raises(BlobUrlError):
            open_store(settings.model_copy(update={"blob_url": url}))


def test_settings_read_the_blob_url_and_s3_options(tmp_path: Path) -> None:
    environ = {
        "INSPECTLANG_DATA_DIR": str(tmp_path),
        "INSPECTLANG_SECRET": "x" * 40,
        "INSPECTLANG_BLOB_URL": "s3://bucket/prefix",
        "INSPECTLANG_S3_ENDPOINT_URL": "http://127.0.0.1:9000",
        "INSPECTLANG_S3_REGION": "eu-west-1",
        "INSPECTLANG_S3_ACCESS_KEY_ID": "id",
        "INSPECTLANG_S3_SECRET_ACCESS_KEY": "secret",
    }
    read = Settings.from_env(environ)
    assert read.blob_url == "s3://bucket/prefix"
    assert read.s3_endpoint_url == "http://127.0.0.1:9000"
    assert read.s3_region == "eu-west-1"
    assert "secret" not in repr(read)
    assert Settings.from_env({**environ, "INSPECTLANG_BLOB_URL": ""}).blob_url is None


def test_the_api_stores_and_serves_images_through_s3(
    client: httpx.Client, test_headers: dict[str, str], settings: Settings, data_dir: Path
) -> None:
    from tests.server.test_images import PHOTO, creation, upload

    # No delivery: test_delivery expects no delivery rows in a shared PostgreSQL schema.
    body = {**creation(), "delivery": {"disabled": True}}
    created = client.post("/v1/inspection/car", json=body, headers=test_headers)
    assert created.status_code == 201, created.text
    uploaded = upload(client, test_headers, created.json()["productId"], {"side": "front"})
    assert uploaded.status_code == 201, uploaded.text
    image_id = uploaded.json()["_id"]
    served = client.get(f"/v1/inspection/image/{image_id}/content", headers=test_headers)
    assert served.status_code == 200
    assert served.content == PHOTO
    # The bytes are an object of the bucket under the configured prefix, not a local file.
    client_s3 = s3_client(settings)
    listed: dict[str, Any] = client_s3.list_objects_v2(Bucket=BUCKET, Prefix="api/images/")
    stored = [item["Key"] for item in listed.get("Contents", [])]
    contents = [client_s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() for key in stored]
    assert PHOTO in contents, stored
    local = data_dir / "blobs"
    assert not local.exists() or not [path for path in local.rglob("*") if path.is_file()]


def test_ready_reports_the_blob_store(client: httpx.Client) -> None:
    response = client.get("/ready")
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "blobs": "ok"}}
