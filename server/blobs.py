"""Blob storage (images, PDFs) behind a small interface; a local directory by default.

`INSPECTLANG_BLOB_URL` chooses the store (`open_store`, the only place one is made):
- `file:///dir` (default `<data_dir>/blobs`): files, one machine (or a shared filesystem);
- `s3://bucket/prefix`: an S3-compatible object store through boto3 (endpoint, region and
  credentials from settings), shared by every API and worker process;
- `postgresql`: chunked rows of the table `blob_chunks` in the service's own database, for
  deployments that want a single stateful component.

Keys are relative slash-separated paths such as `images/<companyId>/<imageId>.jpg`. Writes are
atomic: the bytes go to a temporary file in the same directory, are fsynced, then renamed over
the final name, so a reader sees the old blob or the new one, never half of one.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable
from urllib.parse import unquote, urlsplit

from sqlalchemy import delete, insert, select, text

from server.db import Database
from server.errors import ServerError, ServiceUnavailable, StorageUnavailable
from server.settings import Settings, SettingsError

#: A key segment: letters, digits, `.`, `_`, `-`, not starting with a dot (so no `..`).
_SEGMENT = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,199}")
MAX_KEY_LENGTH = 512
#: OS errors of a file operation the storage refused (read-only or full file system, no
#: permission, a failing disk): 503 `storage_unavailable`. Other OS errors are 503
#: `service_unavailable` (`server.errors`); a missing blob is `BlobNotFound`.
STORAGE_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT, errno.EIO}
#: The key `ping` writes and deletes to check that the store accepts writes.
PROBE_KEY = "ready-probe"


@contextmanager
def _file_faults(action: str) -> Iterator[None]:
    """OS errors of a local file operation as `StorageUnavailable` / `ServiceUnavailable`."""
    try:
        yield
    except OSError as error:
        kind = StorageUnavailable if error.errno in STORAGE_ERRNOS else ServiceUnavailable
        raise kind(f"blob store {action}: {error.strerror or error}") from error


@contextmanager
def _s3_faults(action: str) -> Iterator[None]:
    """botocore's failures (endpoint unreachable, 5xx, denied) as `ServiceUnavailable`."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except (BotoCoreError, ClientError) as error:
        raise ServiceUnavailable(f"S3 blob store {action}: {error}") from error


class BlobNotFound(ServerError, KeyError):
    """No blob under that key."""


class InvalidBlobKey(ServerError, ValueError):
    """A key that could escape the store or is not a plain relative path."""


@runtime_checkable
class BlobStore(Protocol):
    """Where images and PDFs are kept. Implementations must make `put` atomic."""

    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...

    def delete(self, key: str) -> None: ...

    def exists(self, key: str) -> bool: ...

    def ping(self) -> None:
        """Raise when the store cannot be reached (the readiness probe, `/ready`)."""
        ...


def validate_key(key: str) -> list[str]:
    """The segments of a safe key; `InvalidBlobKey` for anything that is not one."""
    if not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidBlobKey(f"blob key must be 1..{MAX_KEY_LENGTH} characters")
    segments = key.split("/")
    if not all(_SEGMENT.fullmatch(segment) for segment in segments):
        raise InvalidBlobKey(f"invalid blob key {key!r}")
    return segments


class LocalBlobStore:
    """Blobs as files under one directory (`<data_dir>/blobs` by default)."""

    def __init__(self, data_dir: Path | str, *, subdirectory: bool = True) -> None:
        """Blobs under `<data_dir>/blobs`, or directly under `data_dir` when not
        `subdirectory` (a `file:///dir` blob URL names the blobs' own directory)."""
        base = Path(data_dir).resolve()
        self.root = base / "blobs" if subdirectory else base
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        """The file holding `key` (it may not exist)."""
        return self.root.joinpath(*validate_key(key))

    def put(self, key: str, data: bytes) -> None:
        target = self.path(key)
        with _file_faults("write"):
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(temporary, target)
            except BaseException:
                with suppress(OSError):
                    temporary.unlink(missing_ok=True)
                raise
        _fsync_directory(target.parent)

    def get(self, key: str) -> bytes:
        path = self.path(key)
        with _file_faults("read"):
            try:
                return path.read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                raise BlobNotFound(key) from None

    def delete(self, key: str) -> None:
        """Remove the blob; deleting a missing key is not an error."""
        with _file_faults("delete"):
            self.path(key).unlink(missing_ok=True)

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def ping(self) -> None:
        """Write and delete a probe file: the store accepts writes (a read-only or full file
        system raises `StorageUnavailable`)."""
        self.put(PROBE_KEY, b"ready")
        self.delete(PROBE_KEY)


class S3BlobStore:
    """Blobs as objects `<prefix>/<key>` of one S3 bucket. A PUT is atomic in S3 (a reader sees
    the old object or the new one), so no temporary names are needed."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    def object_key(self, key: str) -> str:
        validate_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def put(self, key: str, data: bytes) -> None:
        with _s3_faults("write"):
            self.client.put_object(Bucket=self.bucket, Key=self.object_key(key), Body=data)

    def get(self, key: str) -> bytes:
        with _s3_faults("read"):
            try:
                answer = self.client.get_object(Bucket=self.bucket, Key=self.object_key(key))
            except self.client.exceptions.NoSuchKey:
                raise BlobNotFound(key) from None
            return bytes(answer["Body"].read())

    def delete(self, key: str) -> None:
        """Remove the object; deleting a missing key is not an error (S3 agrees)."""
        with _s3_faults("delete"):
            self.client.delete_object(Bucket=self.bucket, Key=self.object_key(key))

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self.object_key(key))
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
        return True

    def ping(self) -> None:
        """Write and delete a small probe object: the bucket accepts this server's writes."""
        self.put(PROBE_KEY, b"ready")
        self.delete(PROBE_KEY)


#: Bytes per row of `blob_chunks` (PostgreSQL's TOAST compresses/out-of-lines each one).
CHUNK_BYTES = 1024 * 1024


class DatabaseBlobStore:
    """Blobs as rows `(key, seq, data)` of `blob_chunks` in the service's database. `put`
    replaces every chunk of the key in one transaction, so readers (one statement, one snapshot)
    see the old blob or the new one."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def put(self, key: str, data: bytes) -> None:
        from server.tables import BlobChunk

        validate_key(key)
        table = cast(Any, BlobChunk).__table__
        chunks = [
            {"key": key, "seq": index, "data": data[start : start + CHUNK_BYTES]}
            for index, start in enumerate(range(0, max(len(data), 1), CHUNK_BYTES))
        ]
        with self.db.engine.begin() as connection:
            connection.execute(delete(table).where(table.c.key == key))
            connection.execute(insert(table), chunks)

    def get(self, key: str) -> bytes:
        from server.tables import BlobChunk

        validate_key(key)
        table = cast(Any, BlobChunk).__table__
        with self.db.engine.connect() as connection:
            rows = connection.execute(
                select(table.c.data).where(table.c.key == key).order_by(table.c.seq)
            ).all()
        if not rows:
            raise BlobNotFound(key)
        return b"".join(bytes(row[0]) for row in rows)

    def delete(self, key: str) -> None:
        from server.tables import BlobChunk

        validate_key(key)
        table = cast(Any, BlobChunk).__table__
        with self.db.engine.begin() as connection:
            connection.execute(delete(table).where(table.c.key == key))

    def exists(self, key: str) -> bool:
        from server.tables import BlobChunk

        validate_key(key)
        table = cast(Any, BlobChunk).__table__
        with self.db.engine.connect() as connection:
            found = connection.execute(
                select(table.c.seq).where(table.c.key == key).limit(1)
            ).first()
        return found is not None

    def ping(self) -> None:
        with self.db.engine.connect() as connection:
            connection.execute(text("SELECT 1"))


class BlobUrlError(SettingsError):
    """`INSPECTLANG_BLOB_URL` names no store this server has."""


def s3_client(settings: Settings) -> Any:
    """A boto3 S3 client from the settings' endpoint, region and credentials (path-style
    addressing, which every S3-compatible server understands)."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=settings.s3_endpoint_url,
        region_name=settings.s3_region or "us-east-1",
        aws_access_key_id=settings.s3_access_key_id,
        aws_secret_access_key=settings.s3_secret_access_key,
        config=Config(
            s3={"addressing_style": "path"},
            retries={"max_attempts": 5, "mode": "standard"},
            max_pool_connections=50,
        ),
    )


def open_store(settings: Settings, db: Database | None = None) -> BlobStore:
    """The blob store `settings.blob_url` names: the one every API and worker process shares.
    The `postgresql` store uses `db` (default: a new `Database` of `settings.database_url`)."""
    url = settings.blob_url or ""
    if not url:
        return LocalBlobStore(settings.data_dir)
    parsed = urlsplit(url)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost") or not parsed.path:
            raise BlobUrlError(f"INSPECTLANG_BLOB_URL {url!r}: use file:///absolute/dir")
        return LocalBlobStore(Path(unquote(parsed.path)), subdirectory=False)
    if parsed.scheme == "s3":
        if not parsed.netloc:
            raise BlobUrlError(f"INSPECTLANG_BLOB_URL {url!r}: use s3://bucket/prefix")
        return S3BlobStore(s3_client(settings), parsed.netloc, unquote(parsed.path))
    if url in ("postgresql", "postgres", "database"):
        if db is None:
            db = Database(settings.database_url)
        return DatabaseBlobStore(db)
    raise BlobUrlError(
        f"INSPECTLANG_BLOB_URL {url!r}: use file:///dir, s3://bucket/prefix or postgresql"
    )


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable (POSIX); silently skipped where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
