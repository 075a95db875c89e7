"""Blob storage (images, PDFs) behind a small interface; a local directory by default.

Keys are relative slash-separated paths such as `images/<companyId>/<imageId>.jpg`. Writes are
atomic: the bytes go to a temporary file in the same directory, are fsynced, then renamed over
the final name, so a reader sees the old blob or the new one, never half of one.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Protocol, runtime_checkable

from server.errors import ServerError
from server.settings import Settings

#: A key segment: letters, digits, `.`, `_`, `-`, not starting with a dot (so no `..`).
_SEGMENT = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,199}")
MAX_KEY_LENGTH = 512


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


def validate_key(key: str) -> list[str]:
    """The segments of a safe key; `InvalidBlobKey` for anything that is not one."""
    if not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidBlobKey(f"blob key must be 1..{MAX_KEY_LENGTH} characters")
    segments = key.split("/")
    if not all(_SEGMENT.fullmatch(segment) for segment in segments):
        raise InvalidBlobKey(f"invalid blob key {key!r}")
    return segments


class LocalBlobStore:
    """Blobs as files under `<data_dir>/blobs`."""

    def __init__(self, data_dir: Path | str) -> None:
        self.root = Path(data_dir).resolve() / "blobs"
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        """The file holding `key` (it may not exist)."""
        return self.root.joinpath(*validate_key(key))

    def put(self, key: str, data: bytes) -> None:
        target = self.path(key)
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
            temporary.unlink(missing_ok=True)
            raise
        _fsync_directory(target.parent)

    def get(self, key: str) -> bytes:
        try:
            return self.path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            raise BlobNotFound(key) from None

    def delete(self, key: str) -> None:
        """Remove the blob; deleting a missing key is not an error."""
        self.path(key).unlink(missing_ok=True)

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()


def open_store(settings: Settings) -> BlobStore:
    """The blob store `settings` configure: the one the app and the workers share (today the
    local directory `<data_dir>/blobs`; another backend is chosen here, in one place)."""
    return LocalBlobStore(settings.data_dir)


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
