"""File and video inputs, shared by creation and update: the file comes as a multipart part named
by the input's identifier, is stored in the blob store, and the input's value becomes
`{name: link to the stored file, contentType, size}`, which the runtime checks against the
input's `accepts` and `maximum size`.

A part named after anything but a file or video input is 400 `unknown_file_input`; a JSON value
for a file or video input has no file behind it and is 400 `invalid_input_value`
(`errors[].code` `file_part_required`), so an input's link always points at a file this service
stored for that inspection.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import insert

from inspectlang.manifest import Template
from runtime import new_object_id
from server.auth import AuthContext
from server.blobs import BlobStore
from server.common import content_url
from server.errors import ApiError
from server.inspections.tables import ImageRecord
from server.multipart import UploadedFile
from server.settings import Settings

#: Input types whose value is a stored file.
FILE_INPUT_TYPES = ("file", "video")
#: Built once, executed with a list of row dicts (see `file_rows`).
INSERT_FILES = insert(cast(Any, ImageRecord).__table__)


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A file part written to the blob store, not yet recorded in the database."""

    file_id: str
    upload: UploadedFile
    blob_key: str


def file_input_identifiers(manifest: Template) -> set[str]:
    return {spec.identifier for spec in manifest.inputs if spec.type in FILE_INPUT_TYPES}


def check_file_parts(manifest: Template, files: dict[str, UploadedFile]) -> None:
    """Every file part names a file or video input of the template, else `unknown_file_input`."""
    file_inputs = file_input_identifiers(manifest)
    for name in files:
        if name not in file_inputs:
            raise ApiError(
                "unknown_file_input",
                400,
                f"The multipart file {name!r} is not a file or video input of the template.",
                [{"field": name, "message": "no file input with this identifier"}],
            )


def refuse_file_values(manifest: Template, inputs: Any) -> None:
    """A JSON value (not null) for a file or video input: 400 `invalid_input_value`."""
    if not isinstance(inputs, list):
        return  # malformed inputs are the runtime's to refuse (`invalid_body`)
    file_inputs = file_input_identifiers(manifest)
    problems = [
        {
            "field": item["identifier"],
            "code": "file_part_required",
            "message": f"send the file as a multipart part named {item['identifier']}",
        }
        for item in inputs
        if isinstance(item, dict)
        and item.get("identifier") in file_inputs
        and item.get("value") is not None
    ]
    if problems:
        raise ApiError(
            "invalid_input_value",
            400,
            "File and video inputs take a file, sent as a multipart part named by the input's "
            "identifier, not a JSON value.",
            problems,
        )


def store_file_inputs(
    blobs: BlobStore,
    auth: AuthContext,
    manifest: Template,
    files: dict[str, UploadedFile],
    settings: Settings,
) -> tuple[list[dict[str, Any]], list[StoredFile]]:
    """Store file parts named by a file/video input identifier; their input values and files.

    The caller records the files (`file_rows`) in the transaction that applies the values, and
    deletes the blobs (`StoredFile.blob_key`) if that transaction does not commit.
    """
    check_file_parts(manifest, files)
    values: list[dict[str, Any]] = []
    stored: list[StoredFile] = []
    for name, upload in files.items():
        file_id = new_object_id()
        key = f"inputs/{auth.company_id}/{file_id}"
        blobs.put(key, upload.data)
        stored.append(StoredFile(file_id, upload, key))
        values.append(
            {
                "identifier": name,
                "value": {
                    "name": content_url(settings.public_url, file_id),
                    "contentType": upload.content_type,
                    "size": len(upload.data),
                },
            }
        )
    return values, stored


def with_file_values(body: dict[str, Any], values: list[dict[str, Any]]) -> dict[str, Any]:
    """The body with the stored files' values appended to its `inputs` (a copy)."""
    given = body.get("inputs")
    if not values or (given is not None and not isinstance(given, list)):
        return body  # nothing to add, or malformed inputs the runtime refuses
    return {**body, "inputs": [*(given or []), *values]}


def file_rows(
    stored: list[StoredFile], inspection_id: str, auth: AuthContext, now: datetime
) -> list[dict[str, Any]]:
    """The `inspection_images` rows (kind `input`) of stored files, for `INSERT_FILES`."""
    return [
        {
            "id": item.file_id,
            "inspection_id": inspection_id,
            "product_id": None,
            "company_id": auth.company_id,
            "testing": auth.testing,
            "kind": "input",
            "blob_key": item.blob_key,
            "content_type": item.upload.content_type,
            "size": len(item.upload.data),
            "filename": item.upload.filename[:500],
            "created_at": now,
        }
        for item in stored
    ]
