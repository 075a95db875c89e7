"""The consumer's pages behind the magic link (`/i/:inspectionId?code=...`).

Opening the link checks the code (`server.inspections.access`), starts the inspection when it
is `created` (the `inspection_started` event is published by the service), stores a session
bound to this inspection only and redirects to a URL without the code. Every later page needs
that session; a session of another inspection, like no session, gets the same 404 page as a
wrong code. Pages read and change the inspection only through the services the API uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from litestar import Request, get, post
from litestar.datastructures import UploadFile
from litestar.params import FromPath
from litestar.response import Redirect, Response, Template
from sqlalchemy import select

from server.common import in_thread
from server.consumer import flow
from server.consumer.messages import localized
from server.deps import Services, services
from server.errors import ApiError
from server.images import service as images
from server.inspections import access
from server.inspections import service as inspections
from server.inspections.schemas import DamageBody
from server.multipart import UploadedFile, read_body
from server.web import sessions
from server.web.i18n import choose_locale
from server.web.security import page_router
from server.web.tables import WebSession
from server.web.templating import gettext, page

KIND = "consumer"
#: How long a consumer session lasts without the inspection expiring first.
SESSION_LIFETIME = timedelta(days=7)
#: Session flags a returning consumer keeps (consent given, steps passed).
FLAGS = ("consent", "location", "details", "damage")


@dataclass
class Visit:
    """A request of a consumer with a live session for this inspection."""

    shared: Services
    session: WebSession
    auth: Any
    inspection_id: str
    view: access.ConsumerView

    @property
    def locale(self) -> str:
        return choose_locale(self.view.state.locale)

    @property
    def flags(self) -> dict[str, Any]:
        return dict(self.session.data)


def _not_found(locale: str = "en_US") -> Template:
    return page(
        "web/message.html",
        locale=locale,
        status_code=404,
        context={
            "heading": gettext(locale, "This link does not work"),
            "text": gettext(
                locale,
                "Check that you opened the whole link from the message you received, "
                "or ask the company that sent it for a new one.",
            ),
            "tone": "bad",
        },
    )


def _status_page(view: access.ConsumerView, now: datetime) -> Template | None:
    """The page of an inspection the consumer can no longer work on, or None."""
    locale = choose_locale(view.state.locale)
    status = view.state.status
    expired = inspections.expired(view.state, now) or (
        status == "blocked" and view.state.completedBy == "expiration"
    )
    if status == "completed":
        if view.state.completedBy == "consumer":
            return None  # the thank-you page
        heading = gettext(locale, "This inspection is already complete")
        text = gettext(locale, "There is nothing left to do. Thank you.")
        tone = "ok"
    elif expired or (status == "blocked" and _expired_at(view, now)):
        heading = gettext(locale, "This link has expired")
        text = gettext(locale, "Ask the company that sent it for a new link.")
        tone = "bad"
    elif status == "blocked":
        heading = gettext(locale, "This inspection is blocked")
        text = gettext(locale, "It can no longer be changed. Contact the company that sent it.")
        tone = "bad"
    else:
        return None
    return page(
        "web/message.html",
        locale=locale,
        status_code=410 if tone == "bad" else 200,
        context={"heading": heading, "text": text, "tone": tone, "company": view.company_name},
    )


def _expired_at(view: access.ConsumerView, now: datetime) -> bool:
    expires_at = inspections.parse_moment(view.state.expiresAt)
    return expires_at is not None and now >= expires_at


def _previous_flags(shared: Services, inspection_id: str, now: datetime) -> dict[str, Any]:
    """The flags of this inspection's latest live session (resume on a new tab or device)."""
    statement = (
        select(WebSession)
        .where(WebSession.kind == KIND, WebSession.subject_id == inspection_id)  # type: ignore[arg-type]
        .order_by(WebSession.created_at.desc())  # type: ignore[attr-defined]
        .limit(1)
    )
    with shared.db.session() as session:
        row = session.execute(statement).scalars().first()
    if row is None or row.expires_at <= now:
        return {}
    return {key: row.data[key] for key in FLAGS if key in row.data}


def _session_path(inspection_id: str) -> str:
    return f"/i/{inspection_id}"


def _visit(request: Request[Any, Any, Any], inspection_id: str) -> Visit | None:
    shared = services(request)
    now = shared.clock()
    row = sessions.load_session(shared.db, sessions.session_token(request, KIND), KIND, now)
    if row is None or row.subject_id != inspection_id:
        return None
    auth = access.consumer_auth(row.company_id, row.data.get("testing", False), inspection_id)
    try:
        view = access.read_for_consumer(shared.db, shared.settings.public_url, auth, inspection_id)
    except ApiError:
        return None
    return Visit(shared=shared, session=row, auth=auth, inspection_id=inspection_id, view=view)


def _step_url(inspection_id: str, key: str) -> str:
    return f"/i/{inspection_id}/step/{key}"


def _redirect(url: str) -> Redirect:
    return Redirect(url, status_code=303)


def _set_flags(visit: Visit, **changes: Any) -> None:
    sessions.update_data(visit.shared.db, visit.session, {**visit.session.data, **changes})


# --- opening the link ----------------------------------------------------------------------------


@get("/{inspection_id:str}", sync_to_thread=True)
def open_link(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """With `?code=`: check it, start a session, redirect to a URL without the code. Without:
    continue the session this browser has, or the 404 page."""
    shared = services(request)
    now = shared.clock()
    code = request.query_params.get("code")
    if code is None:
        visit = _visit(request, inspection_id)
        if visit is None:
            return _not_found()
        return _redirect(_continue_url(visit, now))
    holder = access.open_with_code(shared.db, inspection_id, code)
    if holder is None:
        return _not_found(request.headers.get("accept-language", "en_US")[:5])
    view = access.read_for_consumer(
        shared.db, shared.settings.public_url, holder.auth, inspection_id
    )
    locale = choose_locale(view.state.locale)
    if view.state.status in ("created", "started", "processing") and access.link_expired(
        view.manifest, view.created_at, now
    ):
        return page(
            "web/message.html",
            locale=locale,
            status_code=410,
            context={
                "heading": gettext(locale, "This link has expired"),
                "text": gettext(locale, "Ask the company that sent it for a new link."),
                "tone": "bad",
            },
        )
    if view.state.status == "created" or (
        view.state.status == "processing" and view.state.resumeStatus == "created"
    ):
        try:
            inspections.start_inspection(
                shared.db, shared.settings, holder.auth, inspection_id, now
            )
        except ApiError:
            pass  # expired meanwhile (now blocked) or started by another request
        view = access.read_for_consumer(
            shared.db, shared.settings.public_url, holder.auth, inspection_id
        )
    ended = _status_page(view, now)
    if ended is not None:
        return ended
    flags = _previous_flags(shared, inspection_id, now)
    token = sessions.start_session(
        shared.db,
        kind=KIND,
        company_id=holder.auth.company_id,
        subject_id=inspection_id,
        now=now,
        lifetime=SESSION_LIFETIME,
        data={**flags, "testing": holder.auth.testing},
    )
    target = f"/i/{inspection_id}/done" if view.state.status == "completed" else None
    if target is None:
        step = flow.resume_step(view.program, view.state, flags)
        target = _step_url(inspection_id, step.key)
    response = _redirect(target)
    sessions.set_session_cookie(
        response, request, KIND, token, lifetime=SESSION_LIFETIME, path=_session_path(inspection_id)
    )
    return response


def _continue_url(visit: Visit, now: datetime) -> str:
    if visit.view.state.status == "completed" and visit.view.state.completedBy == "consumer":
        return f"/i/{visit.inspection_id}/done"
    step = flow.resume_step(visit.view.program, visit.view.state, visit.flags)
    return _step_url(visit.inspection_id, step.key)


# --- the steps -------------------------------------------------------------------------------------


def _common(visit: Visit, step: flow.Step) -> dict[str, Any]:
    all_steps = flow.steps(visit.view.program)
    index = next(i for i, s in enumerate(all_steps) if s.key == step.key)
    previous, following = flow.neighbours(visit.view.program, step.key)
    return {
        "company": visit.view.company_name,
        "template_name": visit.view.state.template.name,
        "inspection_id": visit.inspection_id,
        "step": step,
        "step_number": index + 1,
        "step_count": len(all_steps),
        "previous_url": _step_url(visit.inspection_id, previous.key) if previous else None,
        "next_url": _step_url(visit.inspection_id, following.key) if following else None,
        "base": f"/i/{visit.inspection_id}",
    }


def _ended(visit: Visit) -> Any | None:
    now = visit.shared.clock()
    if visit.view.state.status == "completed" and visit.view.state.completedBy == "consumer":
        return _redirect(f"/i/{visit.inspection_id}/done")
    return _status_page(visit.view, now)


@get("/{inspection_id:str}/step/{key:str}", sync_to_thread=True)
def show_step(
    request: Request[Any, Any, Any], inspection_id: FromPath[str], key: FromPath[str]
) -> Any:
    visit = _visit(request, inspection_id)
    if visit is None:
        return _not_found()
    ended = _ended(visit)
    if ended is not None:
        return ended
    step = flow.step_by_key(visit.view.program, key)
    if step is None:
        return _not_found(visit.locale)
    return _render_step(visit, step)


def _render_step(
    visit: Visit, step: flow.Step, *, errors: dict[str, str] | None = None, status: int = 200
) -> Template:
    program, state, locale = visit.view.program, visit.view.state, visit.locale
    context = _common(visit, step)
    if step.kind == "welcome":
        context["photo_count"] = len(program.manifest.images)
        context["input_count"] = len(flow.update_inputs(program.manifest))
        context["damage"] = flow.damage_enabled(program)
        context["consent"] = bool(visit.flags.get("consent"))
        context["location"] = bool(visit.flags.get("location"))
    elif step.kind == "details":
        fields = flow.fields(program, state, locale)
        for item in fields:
            item.error = (errors or {}).get(item.identifier)
        context["fields"] = fields
        context["has_files"] = any(f.type in ("file", "video") for f in fields)
        context["error_count"] = len(errors or {})
    elif step.kind == "photo" and step.image is not None:
        photo = flow.photo_of(state, step.image.identifier)
        used = state.attempts.get(step.image.identifier, 0)
        context.update(
            image=step.image,
            label=flow.photo_label(program, step.image, locale),
            capture=flow.capture_mode(step.image),
            photo=photo,
            photo_src=_image_src(visit.view.document, photo.id) if photo else None,
            attempts_left=max(0, program.manifest.parameters.maxAttempts - used),
            max_attempts=program.manifest.parameters.maxAttempts,
            location=bool(visit.flags.get("location")),
        )
    elif step.kind == "damage":
        product = state.products[0] if state.products else None
        context["damages"] = [d for d in (product.damages if product else []) if d.declared]
        context["extras"] = [
            (image, _image_src(visit.view.document, image.id))
            for image in (product.extraImages if product else [])
        ]
        context["errors"] = errors or {}
        context["location"] = bool(visit.flags.get("location"))
    elif step.kind == "review":
        context["fields"] = flow.fields(program, state, locale)
        context["photos"] = [
            (
                image,
                flow.photo_label(program, image, locale),
                flow.photo_of(state, image.identifier),
            )
            for image in program.manifest.images
        ]
        context["missing_photos"] = [
            flow.photo_label(program, image, locale)
            for image in program.manifest.images
            if flow.photo_of(state, image.identifier) is None
        ]
        context["missing_inputs"] = [
            item.label for item in context["fields"] if item.required and item.value is None
        ]
        product = state.products[0] if state.products else None
        context["damages"] = [d for d in (product.damages if product else []) if d.declared]
        context["extra_count"] = len(product.extraImages) if product else 0
        context["error"] = (errors or {}).get("finish")
        context["photo_sources"] = {
            photo.id: _image_src(visit.view.document, photo.id)
            for _spec, _label, photo in context["photos"]
            if photo is not None
        }
    return page(f"consumer/{step.kind}.html", locale=locale, context=context, status_code=status)


def _image_src(document: dict[str, Any], image_id: str) -> str | None:
    """The signed `src` of an image in the API's Inspection object (readable without a key)."""
    holders = [*(document.get("products") or []), document.get("identity") or {}]
    holders.append(document.get("custom") or {})
    for holder in holders:
        for image in [*(holder.get("images") or []), *(holder.get("extraImages") or [])]:
            if image.get("_id") == image_id:
                src = image.get("src")
                return str(src) if src else None
    return None


@post("/{inspection_id:str}/welcome", status_code=303)
async def accept_welcome(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = await in_thread(_visit, request, inspection_id)
    if visit is None:
        return _not_found()
    form = await request.form()
    if form.get("consent") != "yes":
        step = flow.Step("welcome", "welcome")
        return await in_thread(_render_step, visit, step, status=400)
    await in_thread(_set_flags, visit, consent=True, location=form.get("location") == "yes")
    _previous, following = flow.neighbours(visit.view.program, "welcome")
    return _redirect(_step_url(inspection_id, following.key if following else "review"))


@post("/{inspection_id:str}/details", status_code=303)
async def submit_details(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = await in_thread(_visit, request, inspection_id)
    if visit is None:
        return _not_found()
    form = await request.form()
    inputs: list[dict[str, Any]] = []
    files: dict[str, UploadedFile] = {}
    errors: dict[str, str] = {}
    locale = visit.locale
    for item in flow.fields(visit.view.program, visit.view.state, locale):
        if item.locked:
            continue
        value: Any
        if item.type in ("file", "video"):
            upload = form.get(item.identifier)
            if isinstance(upload, UploadFile) and upload.filename:
                data = await upload.read()
                files[item.identifier] = UploadedFile(
                    name=item.identifier,
                    filename=upload.filename,
                    content_type=upload.content_type,
                    data=data,
                )
                continue
            value = None
        elif item.type == "multiselect":
            value = [v for v in form.getall(item.identifier, []) if isinstance(v, str)] or None
        elif item.type == "check":
            value = form.get(item.identifier) == "true"
        else:
            raw = form.get(item.identifier)
            value = raw.strip() if isinstance(raw, str) and raw.strip() else None
        if value is None and item.required:
            errors[item.identifier] = item.messages["required"]
        elif value is not None:
            inputs.append({"identifier": item.identifier, "value": value})
    if not errors and (inputs or files):
        try:
            await in_thread(
                inspections.update_inspection,
                visit.shared.db,
                visit.shared.settings,
                visit.shared.blobs,
                visit.auth,
                inspection_id,
                {"inputs": inputs},
                files,
                visit.shared.clock(),
            )
        except ApiError as error:
            errors = _field_errors(visit, error)
    if errors:
        fresh = await in_thread(_visit, request, inspection_id)
        return await in_thread(
            _render_step, fresh or visit, flow.Step("details", "details"), errors=errors, status=400
        )
    await in_thread(_set_flags, visit, details=True)
    _previous, following = flow.neighbours(visit.view.program, "details")
    return _redirect(_step_url(inspection_id, following.key if following else "review"))


def _field_errors(visit: Visit, error: ApiError) -> dict[str, str]:
    """The API's problems by input, in the page's words (`messages.localized`)."""
    specs = {spec.identifier: spec for spec in visit.view.manifest.inputs}
    found: dict[str, str] = {}
    for problem in error.errors or [{"field": "", "code": error.code, "message": error.description}]:
        field = str(problem.get("field") or "")
        spec = specs.get(field)
        message = str(problem.get("message") or error.description)
        if spec is not None:
            found.setdefault(field, localized(spec, str(problem.get("code")), message, visit.locale))
        else:
            found.setdefault("form", message)
    return found


# --- photos (called by consumer.js) -----------------------------------------------------------


def _json_error(visit: Visit | None, error: ApiError) -> Response[Any]:
    locale = visit.locale if visit else "en_US"
    words = {
        "max_attempts_exceeded": gettext(
            locale, "No more retakes are allowed for this photo; your last photo is kept."
        ),
        "inspection_not_editable": gettext(locale, "This inspection can no longer be changed."),
        "invalid_image": gettext(locale, "That file is not a photo we can read. Try again."),
    }
    return Response(
        {"code": error.code, "message": words.get(error.code, error.description)},
        status_code=error.status,
        media_type="application/json",
    )


@post("/{inspection_id:str}/photo", status_code=201)
async def upload_photo(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """A photo from `consumer.js` (multipart: `image`, `data` JSON with `identifier` or
    `side`, `coordinates`). Answers the image as the API does, plus `attemptsLeft`."""
    visit = await in_thread(_visit, request, inspection_id)
    if visit is None:
        return Response({"code": "inspection_not_found"}, status_code=404)
    try:
        body = await read_body(request)
        data = body.data if isinstance(body.data, dict) else {}
        products = visit.view.state.products
        if not products:
            raise ApiError.of("product_not_found", "The inspection has no product.")
        view = await in_thread(
            images.upload_image,
            visit.shared.db,
            visit.shared.settings,
            visit.shared.blobs,
            visit.auth,
            products[0].id,
            body.files.get("image"),
            data,
            visit.shared.clock(),
        )
    except ApiError as error:
        return _json_error(visit, error)
    identifier = data.get("identifier")
    left = None
    if isinstance(identifier, str):
        fresh = await in_thread(_visit, request, inspection_id)
        if fresh is not None:
            used = fresh.view.state.attempts.get(identifier, 0)
            left = max(0, fresh.view.manifest.parameters.maxAttempts - used)
    return Response(
        {**view, "attemptsLeft": left}, status_code=201, media_type="application/json"
    )


@get("/{inspection_id:str}/status", sync_to_thread=True)
def photo_status(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """Each photo's validations as they complete (`consumer.js` polls this)."""
    visit = _visit(request, inspection_id)
    if visit is None:
        return Response({"code": "inspection_not_found"}, status_code=404)
    found = []
    for product in visit.view.state.products:
        for image in product.images:
            found.append(
                {
                    "_id": image.id,
                    "identifier": image.templateImageIdentifier,
                    "processed": image.processed,
                    "approved": image.approved,
                    "validations": [
                        {
                            "validation": v.validation,
                            "label": _validation_label(v.validation, visit.locale),
                            "done": v.reported or not v.run,
                            "valid": v.valid,
                            "required": v.required,
                        }
                        for v in image.validations
                        if v.run
                    ],
                }
            )
    return Response(
        {"status": visit.view.state.status, "images": found},
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _validation_label(name: str, locale: str) -> str:
    labels = {
        "date": gettext(locale, "Photo is recent"),
        "distance": gettext(locale, "Taken at the right place"),
        "complete": gettext(locale, "Whole object in the frame"),
        "recaptured": gettext(locale, "Not a photo of a screen"),
        "plate": gettext(locale, "Plate readable"),
    }
    return labels.get(name, name.replace("_", " "))


# --- damage, review, finish ---------------------------------------------------------------------


@post("/{inspection_id:str}/damage", status_code=303)
async def submit_damage(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = await in_thread(_visit, request, inspection_id)
    if visit is None:
        return _not_found()
    form = await request.form()
    if form.get("action") == "add":
        part = str(form.get("part") or "").strip()
        damage = str(form.get("damage") or "").strip()
        severity = str(form.get("severity") or "").strip()
        errors: dict[str, str] = {}
        required_text = gettext(visit.locale, "This field is required.")
        for name, value in (("part", part), ("damage", damage), ("severity", severity)):
            if not value:
                errors[name] = required_text
        if not errors:
            try:
                await in_thread(
                    inspections.declare_damage,
                    visit.shared.db,
                    visit.shared.settings,
                    visit.auth,
                    inspection_id,
                    DamageBody(part=part[:200], damage=damage[:200], severity=severity[:200]),
                    visit.shared.clock(),
                )
            except ApiError as error:
                errors["form"] = error.description
        if errors:
            return await in_thread(
                _render_step, visit, flow.Step("damage", "damage"), errors=errors, status=400
            )
        return _redirect(_step_url(inspection_id, "damage") + "#declared")
    await in_thread(_set_flags, visit, damage=True)
    return _redirect(_step_url(inspection_id, "review"))


@post("/{inspection_id:str}/finish", status_code=303)
async def finish(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = await in_thread(_visit, request, inspection_id)
    if visit is None:
        return _not_found()
    try:
        await in_thread(
            inspections.finish_inspection,
            visit.shared.db,
            visit.shared.settings,
            visit.auth,
            inspection_id,
            visit.shared.clock(),
            completed_by="consumer",
        )
    except ApiError as error:
        fresh = await in_thread(_visit, request, inspection_id)
        ended = _ended(fresh) if fresh else None
        if ended is not None:
            return ended
        return await in_thread(
            _render_step,
            fresh or visit,
            flow.Step("review", "review"),
            errors={"finish": error.description},
            status=409,
        )
    return _redirect(f"/i/{inspection_id}/done")


@get("/{inspection_id:str}/done", sync_to_thread=True)
def done(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = _visit(request, inspection_id)
    if visit is None:
        return _not_found()
    if visit.view.state.status != "completed":
        return _redirect(_continue_url(visit, visit.shared.clock()))
    return page(
        "consumer/done.html",
        locale=visit.locale,
        context={"company": visit.view.company_name, "template_name": visit.view.state.template.name},
    )


ROUTES = [
    page_router(
        "/i",
        [
            open_link,
            show_step,
            accept_welcome,
            submit_details,
            upload_photo,
            photo_status,
            submit_damage,
            finish,
            done,
        ],
    )
]


