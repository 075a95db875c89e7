"""Inspections: create, read and change inspections through the runtime, one transaction each.

Every change loads the inspection row under a write lock (`SELECT ... FOR UPDATE` on
PostgreSQL, `BEGIN IMMEDIATE` on SQLite), runs the pure runtime function on its state, and
saves the new state, the indexed filter columns and the events in the same transaction, so two
concurrent changes of one inspection never lose each other's work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import msgspec
from sqlalchemy import bindparam, select
from sqlmodel import Session

import runtime
from inspectlang.manifest import INSPECTION_TYPES, Template
from runtime import InspectionState, Program
from runtime.state import allows
from server.auth import AuthContext
from server.blobs import BlobStore
from server.common import (
    not_found_inspection,
    run_runtime,
    sign_sources,
)
from server.db import Database
from server.errors import ApiError, ServerError
from server.idempotency import StoredResponse, current_claim, store_with
from server.inspections import review_queue, searchtext
from server.inspections.events import publish
from server.inspections.files import (
    INSERT_FILES,
    StoredFile,
    check_file_parts,
    file_rows,
    refuse_file_values,
    store_file_inputs,
    with_file_values,
)
from server.inspections.schemas import DamageBody, ValidationResult
from server.inspections.tables import InspectionRecord, ProductRecord
from server.multipart import UploadedFile
from server.settings import Settings
from server.templates import service as templates

#: Longest value copied into an indexed filter column (longer values are cut for the index).
MAX_INDEXED_CHARS = 200

#: Runtime statuses that publish an event when an operation moves an inspection into them.
STATUS_EVENTS = {
    "started": "inspection_started",
    "blocked": "inspection_blocked",
    "completed": "inspection_completed",
    "review": "inspection_review_required",
}


@dataclass(frozen=True, slots=True)
class Loaded:
    """An inspection row with its program and parsed state, inside a locked transaction."""

    record: InspectionRecord
    manifest: Template
    program: Program
    state: InspectionState
    #: The stored document as loaded (the record's `state` is replaced on save).
    state_document: dict[str, Any]


# --- validation of what the runtime does not know about ----------------------------------------


def check_type(inspection_type: str) -> None:
    if inspection_type not in INSPECTION_TYPES:
        raise ApiError(
            "invalid_inspection_type",
            400,
            f"Unknown inspection type {inspection_type!r}; one of {', '.join(INSPECTION_TYPES)}.",
        )


# --- columns, documents ------------------------------------------------------------------------


def dump_state(state: InspectionState) -> dict[str, Any]:
    return state.model_dump(mode="json", by_alias=True)


def _indexed(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)[:MAX_INDEXED_CHARS]


def filter_columns(document: dict[str, Any]) -> dict[str, Any]:
    """The indexed list-filter columns of a stored state document."""
    consumer = document.get("consumer") or {}
    products = document.get("products") or []
    plate = None
    if products:
        first = products[0]
        data = first.get(first.get("type") or "") or first.get("data") or {}
        plate = (data.get("plate") if isinstance(data, dict) else None) or first.get("plate")
    template = document.get("template") or {}
    producer = document.get("producer")
    producer_id = producer.get("userId") if isinstance(producer, dict) else None
    return {
        "producer_id": producer_id if isinstance(producer_id, str) and producer_id else None,
        "expires_at": parse_moment(document.get("expiresAt")),
        "status": str(document.get("status") or "created"),
        "veredict": str(document.get("veredict") or "not_defined"),
        "consumer_identification": _indexed(
            consumer.get("identification") if isinstance(consumer, dict) else None
        ),
        "plate": _indexed(plate),
        "template_id": str(template.get("_id") or template.get("id") or ""),
        "search_text": searchtext.search_text(document),
    }


def parse_moment(value: Any) -> datetime | None:
    """An ISO 8601 UTC moment of the state (`...Z`) as an aware datetime; None if absent."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def product_ids(document: dict[str, Any]) -> list[str]:
    return [str(p.get("_id") or p.get("id")) for p in document.get("products") or []]


def render(program: Program, state: InspectionState) -> dict[str, Any]:
    """The Inspection object as stored in the row's `document` column (unsigned links)."""
    return dict(runtime.to_api(program, state))


def present(
    document: dict[str, Any],
    inspection_id: str,
    company_id: str,
    testing: bool,
    settings: Settings,
    delivery: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A stored document as the API returns it: `testing` from the row (the key mode it
    belongs to), the link's `delivery` (kept in its own column: the delivery job updates it),
    and links to stored files signed for reading without a key."""
    document["_id"] = inspection_id
    document["testing"] = testing
    if delivery is not None:
        document["delivery"] = delivery
    sign_sources(settings, document, company_id, testing)
    return document


def to_document(
    program: Program, state: InspectionState, record: InspectionRecord, settings: Settings
) -> dict[str, Any]:
    """The Inspection object of a state just computed."""
    return present(
        render(program, state),
        record.id,
        record.company_id,
        record.testing,
        settings,
        record.delivery,
    )


def event_payload(record: InspectionRecord, **extra: Any) -> dict[str, Any]:
    return {
        "inspectionId": record.id,
        "type": record.type,
        "status": record.status,
        "veredict": record.veredict,
        **extra,
    }


# --- read --------------------------------------------------------------------------------------


def find_inspection(
    session: Session, auth: AuthContext, inspection_id: str, *, lock: bool
) -> InspectionRecord:
    statement = select(InspectionRecord).where(
        cast(Any, InspectionRecord.id) == inspection_id,
        cast(Any, InspectionRecord.company_id) == auth.company_id,
        cast(Any, InspectionRecord.testing) == auth.testing,
    )
    if lock:
        statement = statement.with_for_update()
    record: InspectionRecord | None = session.execute(statement).scalars().first()
    if record is None:
        raise not_found_inspection()
    return record


def load(session: Session, record: InspectionRecord) -> Loaded:
    manifest = templates.load_manifest(session, record.manifest_key)
    program = templates.program_for(record.manifest_key, manifest)
    state = InspectionState.model_validate(record.state)
    return Loaded(
        record=record, manifest=manifest, program=program, state=state, state_document=record.state
    )


_inspections = cast(Any, InspectionRecord).__table__
#: Built once, executed with parameters: building the statement per request cost about as much
#: as running it.
_READ_DOCUMENT = select(_inspections.c.document, _inspections.c.delivery).where(
    _inspections.c.id == bindparam("id"),
    _inspections.c.company_id == bindparam("company_id"),
    _inspections.c.testing == bindparam("testing"),
)


def get_inspection(
    db: Database, settings: Settings, auth: AuthContext, inspection_id: str
) -> dict[str, Any]:
    """The spec's Inspection object; 404 `inspection_not_found` for anything not the caller's.

    Reads only the stored document (no state parsing, no runtime call).
    """
    params = {"id": inspection_id, "company_id": auth.company_id, "testing": auth.testing}
    with db.engine.connect() as connection:  # Core: no ORM session for a one-column read
        found = connection.execute(_READ_DOCUMENT, params).first()
    if found is None:
        raise not_found_inspection()
    document = found[0]
    if document is None:
        with db.session() as session:
            document = stored_document(session, inspection_id)
    return present(document, inspection_id, auth.company_id, auth.testing, settings, found[1])


def informational_checks(db: Database, auth: AuthContext, inspection_id: str) -> frozenset[str]:
    """The ids of the inspection's checks marked `for information` in its template revision
    (`globalValidations[]._id`): a page tags them, their failure being no refusal."""
    with db.session() as session:
        record = find_inspection(session, auth, inspection_id, lock=False)
        manifest = templates.load_manifest(session, record.manifest_key)
        return templates.program_for(record.manifest_key, manifest).informational_checks()


def stored_document(session: Session, inspection_id: str) -> dict[str, Any]:
    """Render the document of a row stored without one (written by other code paths)."""
    record = session.get(InspectionRecord, inspection_id)
    if record is None:
        raise not_found_inspection()
    loaded = load(session, record)
    return render(loaded.program, loaded.state)


# --- changes -----------------------------------------------------------------------------------

Change = Callable[[Loaded], InspectionState]
Events = Callable[[Loaded, InspectionState], list[tuple[str, dict[str, Any]]]]
After = Callable[[Session, Loaded, InspectionState], None]
Before = Callable[[Session, Loaded], None]


def change(
    db: Database,
    auth: AuthContext,
    inspection_id: str,
    operation: Change,
    now: datetime,
    *,
    events: Events | None = None,
    after: After | None = None,
    before: Before | None = None,
) -> tuple[Loaded, InspectionState]:
    """Run `operation` on the inspection under a write lock and save its result.

    `events` names extra events to publish; `before` reads what the operation needs in the
    same transaction, under the write lock (and may take more locks); `after` adds rows in the
    same transaction. An
    inspection past its `expiresAt` is blocked first (and the operation refused with 409
    `inspection_not_editable`): expiry is applied by the first change that notices it.
    """
    with db.session(immediate=True) as session:
        loaded = load(session, find_inspection(session, auth, inspection_id, lock=True))
        if expired(loaded.state, now):
            expire_loaded(session, loaded, now)
            session.commit()
            raise ApiError.of(
                "inspection_not_editable",
                f"The inspection expired at {loaded.state.expiresAt} and is now blocked.",
            )
        if before is not None:
            before(session, loaded)
        new_state = operation(loaded)
        save(session, loaded, new_state, now, events(loaded, new_state) if events else [])
        if after is not None:
            after(session, loaded, new_state)
        session.commit()
    return loaded, new_state


def expired(state: InspectionState, now: datetime) -> bool:
    """Past its `expiresAt` while the table lets it expire (`runtime.state.MOVES`)."""
    if not allows(state, "expire"):
        return False
    expires_at = parse_moment(state.expiresAt)
    return expires_at is not None and now >= expires_at


def expire_loaded(session: Session, loaded: Loaded, now: datetime) -> InspectionState:
    """Block an inspection past its expiry (`runtime.expire`) and save it in `session`: state,
    filter columns, document and the `inspection_blocked` event, all in the caller's
    transaction (commit is the caller's). Used by the next change and by the expiry sweep."""
    blocked = run_runtime(runtime.expire, loaded.program, loaded.state, now=now)
    save(session, loaded, blocked, now, [])
    return blocked


def save(
    session: Session,
    loaded: Loaded,
    new_state: InspectionState,
    now: datetime,
    events: list[tuple[str, dict[str, Any]]],
) -> None:
    """Write the new state and its filter columns; publish status and extra events."""
    record = loaded.record
    old_status = record.status
    document = dump_state(new_state)
    for column, value in filter_columns(document).items():
        setattr(record, column, value)
    record.state = document
    record.document = render(loaded.program, new_state)
    record.updated_at = now
    session.add(record)
    if new_state.review is not None or loaded.state.review is not None:
        review_queue.sync(
            session,
            program=loaded.program,
            inspection_id=record.id,
            company_id=record.company_id,
            testing=record.testing,
            before=loaded.state,
            after=new_state,
            now=now,
        )
    known = set(product_ids(loaded.state_document))
    for product_id in product_ids(document):
        if product_id not in known:
            session.add(
                ProductRecord(
                    id=product_id,
                    inspection_id=record.id,
                    company_id=record.company_id,
                    testing=record.testing,
                    type=record.type,
                )
            )
    for event, payload in events:
        publish(
            session,
            company_id=record.company_id,
            testing=record.testing,
            event=event,
            payload=event_payload(record, **payload),
        )
    if record.status != old_status and record.status in STATUS_EVENTS:
        publish(
            session,
            company_id=record.company_id,
            testing=record.testing,
            event=STATUS_EVENTS[record.status],
            payload=event_payload(record, previousStatus=old_status),
        )


def _with_inputs(
    loaded: Loaded,
    state: InspectionState,
    body: dict[str, Any],
    files: dict[str, UploadedFile],
    stored: list[StoredFile],
    blobs: BlobStore,
    auth: AuthContext,
    settings: Settings,
    now: datetime,
) -> InspectionState:
    """`runtime.update` with the body's consumer, metadata and inputs, the file inputs taken
    from `files` (stored as at creation, added to `stored`); values already defined, and their
    files, are ignored. Shared by both updates, so they check and answer alike."""
    refuse_file_values(loaded.manifest, body.get("inputs"))
    check_file_parts(loaded.manifest, files)
    fresh = {name: upload for name, upload in files.items() if state.inputs.get(name) is None}
    values, new_files = store_file_inputs(blobs, auth, loaded.manifest, fresh, settings)
    stored.extend(new_files)
    request = with_file_values(body, values)
    return run_runtime(runtime.update, loaded.program, state, request, now=now)


def _change_with_files(
    db: Database,
    blobs: BlobStore,
    auth: AuthContext,
    inspection_id: str,
    operation: Callable[[Loaded, list[StoredFile]], InspectionState],
    now: datetime,
) -> None:
    """`change` for an operation that may store files: their rows are written in the same
    transaction, and their blobs deleted when it does not commit (no value points at them)."""
    stored: list[StoredFile] = []

    def record_files(session: Session, loaded: Loaded, state: InspectionState) -> None:
        if stored:
            session.execute(INSERT_FILES, file_rows(stored, loaded.record.id, auth, now))

    try:
        change(
            db,
            auth,
            inspection_id,
            lambda loaded: operation(loaded, stored),
            now,
            after=record_files,
        )
    except BaseException:
        for item in stored:
            blobs.delete(item.blob_key)
        raise


def update_inspection(
    db: Database,
    settings: Settings,
    blobs: BlobStore,
    auth: AuthContext,
    inspection_id: str,
    body: dict[str, Any],
    files: dict[str, UploadedFile],
    now: datetime,
) -> dict[str, Any]:
    """The spec's PUT: only fields not yet defined are applied; created/started only.

    File inputs come as multipart parts and are stored as at creation (`files.py`); a part for
    an input already defined is ignored like any defined value, and nothing is stored for it.
    """
    _change_with_files(
        db,
        blobs,
        auth,
        inspection_id,
        lambda loaded, stored: _with_inputs(
            loaded, loaded.state, body, files, stored, blobs, auth, settings, now
        ),
        now,
    )
    return {"message": "Inspection updated"}


def find_product(session: Session, auth: AuthContext, product_id: str) -> ProductRecord:
    product = session.get(ProductRecord, product_id)
    if product is None or product.company_id != auth.company_id or product.testing != auth.testing:
        raise ApiError.of("product_not_found", "No product with that id.")
    return product


def update_product(
    db: Database,
    settings: Settings,
    blobs: BlobStore,
    auth: AuthContext,
    inspection_type: str,
    product_id: str,
    body: dict[str, Any],
    files: dict[str, UploadedFile],
    now: datetime,
) -> dict[str, Any]:
    """The spec's product PUT; `people` has no product (update the inspection's consumer).

    `body` is `{<type>: {...}, inputs?: [...]}` (`client_shapes.product_update_body`): the
    product's fields, and inputs with their file parts applied as `PUT /v1/inspection/:id`
    applies them (same checks, same codes), all in one transaction."""
    check_type(inspection_type)
    if inspection_type == "people":
        raise ApiError(
            "product_update_not_supported",
            400,
            "People inspections have no product: update the inspection's `consumer` with "
            "PUT /v1/inspection/:inspectionId instead.",
        )
    with db.session() as session:
        product = find_product(session, auth, product_id)
    if product.type != inspection_type:
        raise ApiError.of("product_not_found", f"No {inspection_type} product with that id.")
    inputs = body.get("inputs")
    fields = {key: value for key, value in body.items() if key != "inputs"}

    def operation(loaded: Loaded, stored: list[StoredFile]) -> InspectionState:
        state = loaded.state
        if inputs is not None or files:
            request = {} if inputs is None else {"inputs": inputs}
            state = _with_inputs(loaded, state, request, files, stored, blobs, auth, settings, now)
            if not fields:
                return state
        return run_runtime(
            runtime.update_product, loaded.program, state, product_id, fields, now=now
        )

    _change_with_files(db, blobs, auth, product.inspection_id, operation, now)
    return {"message": "Product updated"}


def changed_document(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    operation: Change,
    now: datetime,
    *,
    message: str | None = None,
    events: Events | None = None,
) -> dict[str, Any]:
    """`change`, answered with the Inspection object (and a `message` beside its fields). With
    an Idempotency-Key the answer is stored in the change's own transaction, as a creation's
    and an upload's are: a process killed between that commit and the middleware's store
    leaves the answer for the retry to replay, not a key to run the change again (a finish
    retried so answered 409 "cannot finish an inspection that is completed", a review
    decision 409 `review_conflict`: tests/server/test_idempotency.py)."""
    answers: list[dict[str, Any]] = []

    def answer(session: Session, loaded: Loaded, state: InspectionState) -> None:
        document = to_document(loaded.program, state, loaded.record, settings)
        answers.append(document if message is None else {**document, "message": message})
        store_answer(session, 200, answers[0])

    change(db, auth, inspection_id, operation, now, events=events, after=answer)
    return answers[0]


def store_answer(session: Session, status_code: int, answer: dict[str, Any]) -> None:
    """Store a change's JSON `answer` for the request's Idempotency-Key, if it came with one,
    in the change's own transaction (`session`'s): both commit, or neither."""
    claim = current_claim()
    if claim is not None:
        store_with(session, claim, StoredResponse.json(status_code, answer))


def start_inspection(
    db: Database, settings: Settings, auth: AuthContext, inspection_id: str, now: datetime
) -> dict[str, Any]:
    return changed_document(
        db,
        settings,
        auth,
        inspection_id,
        lambda loaded: run_runtime(runtime.start, loaded.program, loaded.state, now=now),
        now,
    )


def finish_inspection(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    now: datetime,
    *,
    completed_by: str = "client",
) -> dict[str, Any]:
    """Finish the inspection: the verdict is computed; `completedBy` is `client` through the
    API, `consumer` from the consumer's pages. The answer is the Inspection object with a
    `message` beside its fields."""
    return changed_document(
        db,
        settings,
        auth,
        inspection_id,
        lambda loaded: run_runtime(
            runtime.finish, loaded.program, loaded.state, completed_by=completed_by, now=now
        ),
        now,
        message="Inspection finished",
    )


def declare_damage(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    body: DamageBody,
    now: datetime,
) -> dict[str, Any]:
    """A damage declared by the consumer (template feature `damage_declaration`)."""
    damage = {k: v for k, v in msgspec.to_builtins(body).items() if k != "productId"}

    def operation(loaded: Loaded) -> InspectionState:
        product_id = body.productId
        if isinstance(product_id, msgspec.UnsetType):
            products = product_ids(loaded.record.state)
            if not products:
                raise ApiError.of("product_not_found", "The inspection has no product.")
            product_id = products[0]
        return run_runtime(
            runtime.declare_damage, loaded.program, loaded.state, product_id, damage, now=now
        )

    return changed_document(db, settings, auth, inspection_id, operation, now)


def record_validation(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    image_id: str,
    body: ValidationResult,
    now: datetime,
) -> dict[str, Any]:
    """An analysis service's result for one validation of an image."""
    result = {"validation": body.validation, "confidence": body.confidence, "result": body.result}
    damages = msgspec.to_builtins(body.damages) if body.damages else []
    entities = msgspec.to_builtins(body.entities) if body.entities else []
    recorded = record_result(
        db, auth, inspection_id, image_id, result, damages=damages, entities=entities, now=now
    )
    assert recorded is not None  # only `only_once` results are skipped
    loaded, state = recorded
    return to_document(loaded.program, state, loaded.record, settings)


class _AlreadyReported(ServerError):
    """The validation had its result already: nothing is written."""


def record_result(
    db: Database,
    auth: AuthContext,
    inspection_id: str,
    image_id: str,
    result: dict[str, Any],
    *,
    damages: list[dict[str, Any]] | None = None,
    entities: list[dict[str, Any]] | None = None,
    now: datetime,
    only_once: bool = False,
) -> tuple[Loaded, InspectionState] | None:
    """Record one validation's result (`runtime.record_validation`) and publish
    `image_processed` when it completes the image. With `only_once` (the analysis job, which
    may run again after its worker died), a result already recorded is left alone and None is
    returned, instead of the 409 an outside service gets."""

    def operation(loaded: Loaded) -> InspectionState:
        if only_once:
            found = loaded.state.find_image(image_id)
            done = found is not None and any(
                v.validation == result.get("validation") and v.reported
                for v in found[1].validations
            )
            if done:
                raise _AlreadyReported
        return run_runtime(
            runtime.record_validation,
            loaded.program,
            loaded.state,
            image_id,
            result,
            damages=damages or [],
            entities=entities or [],
            now=now,
        )

    def events(loaded: Loaded, state: InspectionState) -> list[tuple[str, dict[str, Any]]]:
        """`image_processed` once, when this result completes the image's processing."""
        before, after = loaded.state.find_image(image_id), state.find_image(image_id)
        if after is not None and after[1].processed and not (before and before[1].processed):
            return [("image_processed", {"imageId": image_id, "productId": after[0].id})]
        return []

    try:
        return change(db, auth, inspection_id, operation, now, events=events)
    except _AlreadyReported:
        return None
