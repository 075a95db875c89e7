"""Photo analysis off the request path: one durable `image_analysis` job per uploaded photo.

The upload enqueues the job in its own transaction when one of the photo's validations waits
for a result that this service can produce: an analyzer of `runtime.vision` (when the `vision`
extra is installed and `INSPECTLANG_VISION` is on) or an outside provider
(`server.images.providers`). The worker loads the photo from the blob store, runs each waiting
validation and records each result in its own transaction through `runtime.record_validation`,
the path outside services' results take (so `image_processed`, the `processing` status, the
webhooks, variables and verdict follow the same way).

A worker killed mid-analysis leaves its job to be claimed again; the results it had recorded
are skipped (`record_result(only_once=True)`), so each is recorded once. A validation whose
analyzer needs a reference photo that is not there yet (a selfie before the identity document)
waits: the document's upload enqueues the selfie's analysis again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlmodel import Session

from runtime import analysis
from runtime.state import InspectionState
from runtime.validators import ValidationOutcome
from server import metrics
from server.auth import AuthContext
from server.blobs import BlobNotFound
from server.errors import ApiError
from server.images import providers
from server.inspections import service as inspections
from server.inspections.tables import ImageRecord as ImageRow
from server.jobs import GiveUp, JobContext, RetryLater, job_row
from server.routing import Analyzers, analyzable, local_analyzers, machine_validations
from server.settings import Settings

logger = logging.getLogger("server.analysis")

__all__ = ["analyzable", "local_analyzers", "machine_validations"]

JOB_KIND = "image_analysis"
#: Attempts of an analysis job (a provider's transient failures are retried with backoff).
MAX_ATTEMPTS = 6


def _needs(analyzers: Analyzers, name: str) -> frozenset[str]:
    """Reference roles the analyzer of `name` compares with (none for a provider)."""
    analyzer = analyzers.get(name)
    return analyzer.needs if analyzer is not None else frozenset()


def jobs_after_upload(
    settings: Settings, analyzers: Analyzers, state: InspectionState, image_id: str
) -> list[str]:
    """Images to analyse after `image_id` was uploaded: that one when it waits for something
    the worker can produce, and any other photo waiting for this one as its reference (a
    selfie's face comparison waiting for the identity document)."""
    names = analyzable(settings, analyzers)
    if not names:
        return []
    wanted: list[str] = []
    uploaded = analysis.pending(state, image_id)
    if uploaded is not None and set(uploaded.names) & names:
        wanted.append(image_id)
    for other_id in analysis.waiting_images(state):
        other = analysis.pending(state, other_id)
        if other is None or other_id == image_id:
            continue
        refs = analysis.references(state, other.image)
        if any(
            ref.id == image_id and role in _needs(analyzers, name)
            for name in other.names
            for role, ref in refs.items()
        ):
            wanted.append(other_id)
    return wanted


def enqueue_analysis(
    session: Session, auth: AuthContext, inspection_id: str, image_ids: list[str]
) -> None:
    """Add one analysis job per image in the caller's transaction."""
    from server.jobs import enqueue_rows

    enqueue_rows(
        session,
        [
            job_row(
                JOB_KIND,
                {
                    "inspectionId": inspection_id,
                    "imageId": image_id,
                    "companyId": auth.company_id,
                    "mode": auth.mode,
                },
                max_attempts=MAX_ATTEMPTS,
            )
            for image_id in image_ids
        ],
    )


def _bytes(ctx: JobContext, image_id: str) -> tuple[bytes, str] | None:
    with ctx.db.session() as session:
        row = session.get(ImageRow, image_id)
    if row is None:
        return None
    try:
        return ctx.blobs.get(row.blob_key), row.content_type or "image/jpeg"
    except BlobNotFound:
        return None


@dataclass
class _Photo:
    """What the job knows of the photo it analyses."""

    ctx: JobContext
    analyzers: Analyzers
    inspection_id: str
    image_id: str
    data: bytes
    content_type: str
    declared: dict[str, Any]
    country: str | None
    #: Reference photos by role (`analysis.references`), and their bytes once loaded.
    references: dict[str, Any]
    reference_bytes: dict[str, bytes] = field(default_factory=dict)


def run_analysis_job(analyzers: Analyzers, ctx: JobContext) -> None:
    """Analyse one photo: every waiting validation this worker can produce (with a provider or
    one of `analyzers`, the app's), one record each."""
    payload = ctx.payload
    inspection_id, image_id = payload["inspectionId"], payload["imageId"]
    auth = AuthContext(company_id=payload["companyId"], mode=payload["mode"], key_id="worker")
    with ctx.db.session() as session:
        try:
            loaded = inspections.load(
                session, inspections.find_inspection(session, auth, inspection_id, lock=False)
            )
        except ApiError:
            loaded = None
    waiting = analysis.pending(loaded.state, image_id) if loaded is not None else None
    stored = _bytes(ctx, image_id) if waiting is not None else None
    if loaded is None or waiting is None or stored is None:
        _complete(ctx)  # deleted, replaced by a retake, already analysed, or bytes gone
        return
    state = loaded.state
    photo = _Photo(
        ctx,
        analyzers,
        inspection_id,
        image_id,
        *stored,
        declared=analysis.declared(state, waiting.product),
        country=analysis.country(state),
        references=analysis.references(state, waiting.image),
    )
    transient: providers.ProviderError | None = None
    for name in waiting.names:
        options = analysis.options(loaded.program, waiting.image, name)
        started = time.monotonic()
        try:
            found = _outcome(photo, name, options)
        except providers.ProviderError as error:
            metrics.validation_done(name, "error")
            logger.warning("provider for %s failed on %s: %s", name, image_id, error)
            if error.transient:
                transient = error
            continue
        if found is None:
            continue  # nothing here produces it, or its reference photo is not there yet
        outcome, damages = found
        _record(ctx, auth, inspection_id, image_id, name, outcome, damages)
        metrics.validation_done(name, "valid" if outcome.valid else "invalid")
        logger.info(
            "%s on %s: %s (%.0f) in %.2f s",
            name,
            image_id,
            outcome.result,
            outcome.confidence,
            time.monotonic() - started,
        )
    if transient is not None:
        if ctx.last_attempt:
            raise GiveUp(str(transient))
        if transient.retry_after is not None:
            raise RetryLater(transient.retry_after, str(transient))
        raise transient
    _complete(ctx)


def _outcome(
    photo: _Photo, name: str, options: dict[str, float]
) -> tuple[ValidationOutcome, list[dict[str, Any]]] | None:
    """Validation `name` of the photo, with the damages found, from its configured provider
    (which may raise `ProviderError`) or its analyzer here; None when neither can produce it
    now (a face comparison whose document is not uploaded waits: the document's upload queues
    this photo again)."""
    url = photo.ctx.settings.validation_providers.get(name)
    if url is not None:
        request = providers.ProviderRequest(
            name,
            photo.inspection_id,
            photo.image_id,
            photo.data,
            photo.content_type,
            photo.declared,
            photo.country,
            options,
        )
        answer = providers.call(photo.ctx.settings, url, request)
        entities = tuple(_builtins(entity) for entity in answer.entities)
        outcome = ValidationOutcome(
            answer.confidence, answer.confidence >= 50, answer.result, entities
        )
        return outcome, [_builtins(damage) for damage in answer.damages]
    analyzer = photo.analyzers.get(name)
    if analyzer is None:
        return None
    roles = analyzer.needs
    for role in roles:
        if role in photo.references and role not in photo.reference_bytes:
            got = _bytes(photo.ctx, photo.references[role].id)
            if got is not None:
                photo.reference_bytes[role] = got[0]
    if any(role not in photo.reference_bytes for role in roles):
        return None
    from runtime.vision import AnalysisSubject

    subject = AnalysisSubject(
        data=photo.data,
        declared=photo.declared,
        country=photo.country,
        references={role: photo.reference_bytes[role] for role in roles},
        now=datetime.now(UTC),
        options=options,
    )
    try:
        return analyzer.analyze(subject), []
    except Exception:  # a photo the model cannot take is a failed validation, not a stall
        logger.exception("analyzer %s failed on image %s", name, photo.image_id)
        return ValidationOutcome(0.0, False, "the photo could not be analysed"), []


def _builtins(value: Any) -> dict[str, Any]:
    import msgspec

    built: dict[str, Any] = msgspec.to_builtins(value)
    return built


def _record(
    ctx: JobContext,
    auth: AuthContext,
    inspection_id: str,
    image_id: str,
    name: str,
    outcome: ValidationOutcome,
    damages: list[dict[str, Any]],
) -> None:
    """Record one result, once: a result already there (an earlier attempt of this job, or an
    outside service) is left alone; an inspection closed meanwhile takes none."""
    result = outcome.result
    value = result if result is None or isinstance(result, str | int | float) else str(result)
    if isinstance(value, str):
        value = value[:1000]
    reported: dict[str, Any] = {
        "validation": name,
        "confidence": max(0.0, min(100.0, float(outcome.confidence))),
        "result": value,
    }
    if outcome.seen is not None:
        reported["seen"] = outcome.seen
    try:
        inspections.record_result(
            ctx.db,
            auth,
            inspection_id,
            image_id,
            reported,
            entities=[dict(entity) for entity in outcome.entities],
            damages=damages,
            now=datetime.now(UTC),
            only_once=True,
        )
    except ApiError as error:
        # Not editable any more (finished, blocked, expired) or the image was replaced.
        logger.info("result of %s on %s not recorded: %s", name, image_id, error.code)


def _complete(ctx: JobContext) -> None:
    with ctx.db.session(immediate=True) as session:
        ctx.complete_in(session)
        session.commit()
