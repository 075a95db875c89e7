"""Completed inspections for report tests, made with the runtime and stored like the server does.

The template is a hand-written manifest (no compiler needed): a car with two photos, each with
a few validations. The inspection runs through the real runtime (create, add images, record
validation results, finish) and is stored with S2's tables and helpers, images in the blob store.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime
from typing import Any

import runtime
from inspectlang.manifest import (
    ImageLogic,
    ImageSpec,
    Logic,
    Template,
    ValidationLogic,
    ValidationSpec,
)
from server.blobs import BlobStore
from server.db import Database
from server.inspections.service import dump_state, filter_columns, product_ids
from server.inspections.tables import ImageRecord, InspectionRecord, ProductRecord
from server.templates import service as templates

from .samples import photo

SIDES = ("front", "back", "left", "right", "dashboard", "interior")
VALIDATIONS = ("plate", "color", "recaptured", "make", "model", "complete", "angle", "date")


def _identifier(index: int) -> str:
    return f"image_0000000{index}-0000-4000-8000-00000000000{index}"


def report_manifest(images: int = 2, validations: int = 3) -> Template:
    """A custom car template with `images` photos and `validations` validations on each."""
    sides = SIDES[:images]
    names = VALIDATIONS[:validations]
    specs = [
        ImageSpec(
            side=side,
            identifier=_identifier(index),
            validations=[
                ValidationSpec(_id=f"{index}{k:023d}", validation=name, required=False)
                for k, name in enumerate(names)
            ],
        )
        for index, side in enumerate(sides, start=1)
    ]
    logic = Logic(
        revision="report-test-"
        + hashlib.sha256(f"report-manifest-v1-{images}-{validations}".encode()).hexdigest()[:16],
        locales=["en_US", "es_AR"],
        images={
            _identifier(index): ImageLogic(
                name=side,
                labels={"": f"Photo of the {side}", "es_AR": f"Foto {side}"},
                validations={name: ValidationLogic(minConfidence=80) for name in names},
            )
            for index, side in enumerate(sides, start=1)
        },
    )
    return Template(
        _id=f"5f0c0a00000000000000be{images}{validations}",
        inspectionType="car",
        name="Report test car",
        createdAt="2026-11-01T00:00:00Z",
        updatedAt="2026-11-01T00:00:00Z",
        images=specs,
        schema={"type": "object", "properties": {}},
        logic=logic,
    )


def insert_inspection(
    db: Database,
    blobs: BlobStore,
    company_id: str,
    *,
    testing: bool = True,
    finish: bool = True,
    plate: str = "AB123CD",
    images: int = 2,
    validations: int = 3,
    image_size: tuple[int, int] = (960, 720),
) -> dict[str, Any]:
    """A car inspection with photos and their validation results; completed if `finish`."""
    now = datetime.now(UTC)
    manifest = report_manifest(images, validations)
    program = runtime.load_program(manifest)
    body = {
        "templateId": manifest.id,
        "locale": "es_AR",
        "delivery": {"disabled": True},
        "car": {"plate": plate, "make": "Toyota", "model": "Corolla", "year": 2019},
        "consumer": {"firstName": "Ana", "lastName": "Perez", "identification": "30125678"},
        "metadata": {"policy": "P-1"},
    }
    state = runtime.create(
        program,
        body,
        inspection_type="car",
        now=now,
        ids=runtime.new_object_id,
        company_id=company_id,
        user_id="",
        testing=testing,
    )
    product_id = product_ids(dump_state(state))[0]
    stored: list[tuple[str, str, int]] = []
    for index, side in enumerate(SIDES[:images], start=1):
        content = photo(index, size=image_size, quality=75)
        image_id = runtime.new_object_id()
        upload = runtime.ImageUpload(
            data=content,
            content_type="image/jpeg",
            identifier=_identifier(index),
            side=side,
            src=f"http://127.0.0.1/{image_id}",
        )
        fresh = iter([image_id])
        state, _ = runtime.add_image(
            program,
            state,
            product_id,
            upload,
            now=now,
            ids=lambda fresh=fresh: next(fresh, None) or runtime.new_object_id(),  # type: ignore[misc]
        )
        for k, name in enumerate(VALIDATIONS[:validations]):
            state = runtime.record_validation(
                program,
                state,
                image_id,
                {"validation": name, "confidence": 95 - 7 * k - index, "result": plate},
                now=now,
            )
        key = f"images/{company_id}/{image_id}"
        blobs.put(key, content)
        stored.append((image_id, key, len(content)))
    if finish:
        state = runtime.finish(program, state, completed_by="client", now=now)
    document = dump_state(state)
    key = templates.manifest_key(manifest)
    with db.session() as session:
        templates.store_manifest(session, key, manifest, now)
        record = InspectionRecord(
            id=str(document.get("_id") or document.get("id")),
            company_id=company_id,
            testing=testing,
            type="car",
            manifest_key=key,
            access_code_hash=hashlib.sha256(secrets.token_bytes(8)).hexdigest(),
            created_at=now,
            updated_at=now,
            state=document,
            **filter_columns(document),
        )
        session.add(record)
        session.flush()
        session.add(
            ProductRecord(
                id=product_id,
                inspection_id=record.id,
                company_id=company_id,
                testing=testing,
                type="car",
            )
        )
        for image_id, blob_key, size in stored:
            session.add(
                ImageRecord(
                    id=image_id,
                    inspection_id=record.id,
                    product_id=product_id,
                    company_id=company_id,
                    testing=testing,
                    kind="image",
                    blob_key=blob_key,
                    content_type="image/jpeg",
                    size=size,
                    created_at=now,
                )
            )
        session.commit()
        return {"inspectionId": record.id, "productId": product_id, "status": record.status}
