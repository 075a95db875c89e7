"""The consumer's pages behind the magic link (`/i/:inspectionId?code=...`).

Opening the link checks the code (`server.inspections.access`), starts the inspection when it
is `created` (the `inspection_started` event is published by the service), stores a session
bound to this inspection only and redirects to a URL without the code. Every later page needs
that session; a session of another inspection, like no session, gets the same 404 page as a
wrong code. Pages read and change the inspection only through the services the API uses.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from litestar import Request, get, post
from litestar.datastructures import UploadFile
from litestar.params import FromPath
from litestar.response import Template

from runtime.api_view import input_label
from runtime.engine import attempts_left
from runtime.state import allows
from server.boundary import name_problem
from server.common import in_thread
from server.consumer import flow
from server.consumer.messages import localized
from server.consumer.names import template_name
from server.consumer.outbox import ClientIdMiddleware, go_to, refusal, wants_json
from server.consumer.photos import photo_status, upload_photo
from server.consumer.visits import (
    KIND,
    SESSION_LIFETIME,
    Visit,
    image_src,
    not_found,
    previous_flags,
    redirect,
    sent_by_consumer,
    session_path,
    set_flags,
    status_page,
    step_url,
    too_many_attempts,
    visit_of,
)
from server.deps import services
from server.errors import ApiError
from server.inspections import access
from server.inspections import service as inspections
from server.inspections.schemas import DamageBody
from server.multipart import UploadedFile
from server.ratelimit import LinkThrottle
from server.web import sessions
from server.web.i18n import choose_locale, negotiate
from server.web.security import page_router
from server.web.templating import gettext, page

# --- opening the link ----------------------------------------------------------------------------


@get("/{inspection_id:str}", sync_to_thread=True)
def open_link(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """With `?code=`: check it, start a session, redirect to a URL without the code. Without:
    continue the session this browser has, or the 404 page."""
    shared = services(request)
    now = shared.clock()
    code = request.query_params.get("code")
    if code is None:
        visit = visit_of(request, inspection_id)
        if visit is None:
            return not_found()
        return redirect(_continue_url(visit, now))
    throttle: LinkThrottle = request.app.state.link_throttle
    address = request.client.host if request.client is not None else "unknown"
    # The app's clock, as everything of the request: its windows are the ones tests pin.
    wait = throttle.refused(address, inspection_id, now.timestamp())
    if wait is not None:
        return too_many_attempts(negotiate(request.headers.get("accept-language")), wait)
    holder = access.open_with_code(shared.db, inspection_id, code)
    if holder is None:
        throttle.failed(address, inspection_id, now.timestamp())
        return not_found(negotiate(request.headers.get("accept-language")))
    view = access.read_for_consumer(shared.db, shared.settings, holder.auth, inspection_id)
    locale = choose_locale(view.state.locale)
    # A link past its own window while the inspection is still open (an expired inspection is
    # blocked below, by the first change that notices it, and shows the same page).
    if (
        allows(view.state, "edit")
        and not inspections.expired(view.state, now)
        and access.link_expired(view, now)
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
    if allows(view.state, "start"):
        # An ApiError here: expired meanwhile (now blocked), or started by another request.
        with contextlib.suppress(ApiError):
            inspections.start_inspection(
                shared.db, shared.settings, holder.auth, inspection_id, now
            )
        view = access.read_for_consumer(shared.db, shared.settings, holder.auth, inspection_id)
    ended = status_page(view, now)
    if ended is not None:
        return ended
    flags = previous_flags(shared, inspection_id, now)
    token = sessions.start_session(
        shared.db,
        kind=KIND,
        company_id=holder.auth.company_id,
        subject_id=inspection_id,
        now=now,
        lifetime=SESSION_LIFETIME,
        data={**flags, "testing": holder.auth.testing},
    )
    target = f"/i/{inspection_id}/done" if sent_by_consumer(view.state) else None
    if target is None:
        step = flow.resume_step(view.program, view.state, flags)
        target = step_url(inspection_id, step.key)
    response = redirect(target)
    sessions.set_session_cookie(
        response, request, KIND, token, lifetime=SESSION_LIFETIME, path=session_path(inspection_id)
    )
    return response


def _continue_url(visit: Visit, now: datetime) -> str:
    if sent_by_consumer(visit.view.state):
        return f"/i/{visit.inspection_id}/done"
    step = flow.resume_step(visit.view.program, visit.view.state, visit.flags)
    return step_url(visit.inspection_id, step.key)


# --- the steps ---------------------------------------------------------------------------------


def _common(visit: Visit, step: flow.Step) -> dict[str, Any]:
    all_steps = flow.steps(visit.view.program, visit.view.state)
    index = next((i for i, s in enumerate(all_steps) if s.key == step.key), 0)
    previous, following = flow.neighbours(visit.view.program, step.key, visit.view.state)
    return {
        "company": visit.view.company_name,
        "template_name": template_name(visit.view.state, visit.locale),
        "inspection_id": visit.inspection_id,
        "step": step,
        "step_number": index + 1,
        "step_count": len(all_steps),
        "previous_url": step_url(visit.inspection_id, previous.key) if previous else None,
        "next_url": step_url(visit.inspection_id, following.key) if following else None,
        "base": f"/i/{visit.inspection_id}",
        # Every step, for the service worker to keep: each opens offline, seen or not.
        "step_urls": [step_url(visit.inspection_id, s.key) for s in all_steps],
    }


def _ended(visit: Visit) -> Any | None:
    now = visit.shared.clock()
    if sent_by_consumer(visit.view.state):
        return redirect(f"/i/{visit.inspection_id}/done")
    return status_page(visit.view, now)


@get("/{inspection_id:str}/step/{key:str}", sync_to_thread=True)
def show_step(
    request: Request[Any, Any, Any], inspection_id: FromPath[str], key: FromPath[str]
) -> Any:
    visit = visit_of(request, inspection_id)
    if visit is None:
        return not_found()
    ended = _ended(visit)
    if ended is not None:
        return ended
    step = flow.step_by_key(visit.view.program, key)
    if step is None:
        return not_found(visit.locale)
    return _render_step(visit, step)


def _render_step(
    visit: Visit, step: flow.Step, *, errors: dict[str, str] | None = None, status: int = 200
) -> Template:
    program, state, locale = visit.view.program, visit.view.state, visit.locale
    context = _common(visit, step)
    if step.kind == "welcome":
        context["photo_count"] = len(program.manifest.images)
        context["input_count"] = len(flow.update_inputs(program.manifest))
        context["kind"] = state.type
        context["damage"] = flow.damage_enabled(program)
        context["consent"] = bool(visit.flags.get("consent"))
        context["location"] = bool(visit.flags.get("location"))
        context["location_use"] = flow.location_use(program)
        context["consent_error"] = bool(errors and "consent" in errors)
    elif step.kind == "details":
        fields = flow.fields(program, state, locale, None)
        for item in fields:
            item.error = (errors or {}).get(item.identifier)
        context["fields"] = fields
        context["has_files"] = any(f.type in ("file", "video") for f in fields)
        context["error_count"] = len(errors or {})
    elif step.kind == "photo" and step.image is not None:
        fields = flow.fields(program, state, locale, step.image.identifier)
        for item in fields:
            item.error = (errors or {}).get(item.identifier)
        context["fields"] = fields
        context["has_files"] = any(f.type in ("file", "video") for f in fields)
        context["error_count"] = len(errors or {})
        photo = flow.photo_of(state, step.image.identifier)
        retake = state.retake
        following = flow.after_photo(program, state, visit.flags, step.key)
        context["next_url"] = step_url(visit.inspection_id, following.key) if following else None
        context.update(
            image=step.image,
            label=flow.photo_label(program, step.image, locale),
            capture=flow.capture_mode(step.image),
            photo=photo,
            photo_src=image_src(visit.view.document, photo.id) if photo else None,
            attempts_left=attempts_left(program, state, step.image.identifier),
            retake_message=(
                retake.message
                if retake is not None and step.image.identifier in retake.identifiers
                else None
            ),
            max_attempts=program.manifest.parameters.maxAttempts,
            location=bool(visit.flags.get("location")),
        )
    elif step.kind == "damage":
        product = state.products[0] if state.products else None
        context["damages"] = [d for d in (product.damages if product else []) if d.declared]
        context["extras"] = [
            (image, image_src(visit.view.document, image.id))
            for image in (product.extraImages if product else [])
        ]
        context["errors"] = errors or {}
        context["location"] = bool(visit.flags.get("location"))
    elif step.kind == "review":
        context["fields"] = flow.fields(program, state, locale)
        shown = {s.image.identifier for s in flow.steps(program, state) if s.image is not None}
        context["photos"] = [
            (
                image,
                flow.photo_label(program, image, locale),
                flow.photo_of(state, image.identifier),
            )
            for image in program.manifest.images
            if image.identifier in shown or flow.photo_of(state, image.identifier) is not None
        ]
        context["missing_photos"] = [
            flow.photo_label(program, image, locale)
            for image in program.manifest.images
            if flow.photo_of(state, image.identifier) is None
            and image.identifier in shown
            and not program.image_optional(image.identifier)
        ]
        context["missing_inputs"] = [
            item.label for item in context["fields"] if item.required and item.value is None
        ]
        product = state.products[0] if state.products else None
        context["damages"] = [d for d in (product.damages if product else []) if d.declared]
        context["extra_count"] = len(product.extraImages) if product else 0
        context["error"] = (errors or {}).get("finish")
        declined = [
            record
            for product in state.products
            for image in product.images
            for record in image.validations
            if record.declined == "location"
        ]
        context["location_declined"] = (
            ("required" if any(record.required for record in declined) else "optional")
            if declined
            else None
        )
        context["photo_sources"] = {
            photo.id: image_src(visit.view.document, photo.id)
            for _spec, _label, photo in context["photos"]
            if photo is not None
        }
    return page(f"consumer/{step.kind}.html", locale=locale, context=context, status_code=status)


@post("/{inspection_id:str}/welcome", status_code=303)
async def accept_welcome(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = await in_thread(visit_of, request, inspection_id)
    if visit is None:
        return not_found()
    form = await request.form()
    if form.get("consent") != "yes":
        step = flow.Step("welcome", "welcome")
        return await in_thread(
            _render_step, visit, step, errors={"consent": "required"}, status=400
        )
    await in_thread(set_flags, visit, consent=True, location=form.get("location") == "yes")
    _previous, following = flow.neighbours(visit.view.program, "welcome", visit.view.state)
    return redirect(step_url(inspection_id, following.key if following else "review"))


@post("/{inspection_id:str}/details", status_code=303)
async def submit_details(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = await in_thread(visit_of, request, inspection_id)
    if visit is None:
        return not_found()
    form = await request.form()
    inputs: list[dict[str, Any]] = []
    files: dict[str, UploadedFile] = {}
    errors: dict[str, str] = {}
    locale = visit.locale
    # The general inputs (the details step), or those asked next to one photo (`?image=`).
    image = request.query_params.get("image")
    step = flow.Step("details", "details")
    if image is not None:
        found = next(
            (s for s in flow.steps(visit.view.program) if s.image and s.image.identifier == image),
            None,
        )
        if found is None:
            return not_found(locale)
        step = found
    shown = flow.fields(visit.view.program, visit.view.state, locale, image)
    for item in shown:
        if item.locked:
            continue
        value: Any
        if item.type in ("file", "video"):
            upload = form.get(item.identifier)
            if isinstance(upload, UploadFile) and upload.filename:
                why = name_problem(upload.filename)
                if why is not None:  # the API's multipart files are refused the same way
                    refused = ApiError.of("invalid_body", errors=[
                        {"field": item.identifier, "code": "invalid_file_name",
                         "message": f"the file name {why}"}])  # fmt: skip
                    errors.update(_field_errors(visit, refused))
                    continue
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
        if wants_json(request):
            return refusal("invalid_answers", gettext(locale, "Some answers need your attention."),
                           status=400, errors=errors)  # fmt: skip
        fresh = await in_thread(visit_of, request, inspection_id)
        return await in_thread(_render_step, fresh or visit, step, errors=errors, status=400)
    if visit.view.program.asks:
        # An answer may make a question of this step asked (`ask when`): show it now.
        fresh = await in_thread(visit_of, request, inspection_id)
        before = {item.identifier for item in shown}
        if fresh is not None and any(
            item.identifier not in before and item.value is None
            for item in flow.fields(fresh.view.program, fresh.view.state, locale, image)
        ):
            if wants_json(request):
                return go_to(step_url(inspection_id, step.key), request)
            return await in_thread(_render_step, fresh, step)
    if image is not None:
        return go_to(step_url(inspection_id, step.key), request)
    await in_thread(set_flags, visit, details=True)
    # The answers just saved decide which photos are asked (`ask when` of images).
    current = await in_thread(visit_of, request, inspection_id) if visit.view.program.asks else None
    state = (current or visit).view.state
    _previous, following = flow.neighbours(visit.view.program, "details", state)
    return go_to(step_url(inspection_id, following.key if following else "review"), request)


def _field_errors(visit: Visit, error: ApiError) -> dict[str, str]:
    """The API's problems by input, in the page's words (`messages.localized`)."""
    specs = {spec.identifier: spec for spec in visit.view.manifest.inputs}
    found: dict[str, str] = {}
    for problem in error.errors or [
        {"field": "", "code": error.code, "message": error.description}
    ]:
        field = str(problem.get("field") or "")
        spec = specs.get(field)
        message = str(problem.get("message") or error.description)
        if spec is not None:
            other_spec = specs.get(str(problem.get("other")))
            other = input_label(visit.view.program, other_spec, visit.locale) if other_spec else ""
            found.setdefault(
                field, localized(spec, str(problem.get("code")), message, visit.locale, other)
            )
        else:
            found.setdefault("form", message)
    return found


# --- damage, review, finish ---------------------------------------------------------------------


@post("/{inspection_id:str}/damage", status_code=303)
async def submit_damage(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = await in_thread(visit_of, request, inspection_id)
    if visit is None:
        return not_found()
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
            if wants_json(request):
                message = errors.get("form") or gettext(visit.locale, "This field is required.")
                return refusal("invalid_answers", message, status=400, errors=errors)
            return await in_thread(
                _render_step, visit, flow.Step("damage", "damage"), errors=errors, status=400
            )
        return go_to(step_url(inspection_id, "damage") + "#declared", request)
    await in_thread(set_flags, visit, damage=True)
    return go_to(step_url(inspection_id, "review"), request)


@post("/{inspection_id:str}/finish", status_code=303)
async def finish(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = await in_thread(visit_of, request, inspection_id)
    if visit is None:
        return not_found()
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
        fresh = await in_thread(visit_of, request, inspection_id)
        if wants_json(request):
            if fresh is not None and sent_by_consumer(fresh.view.state):
                return go_to(f"/i/{inspection_id}/done", request)
            return refusal(error.code, _finish_refusal(fresh or visit, error), status=409)
        ended = _ended(fresh) if fresh else None
        if ended is not None:
            return ended
        return await in_thread(
            _render_step,
            fresh or visit,
            flow.Step("review", "review"),
            errors={"finish": _finish_refusal(fresh or visit, error)},
            status=409,
        )
    return go_to(f"/i/{inspection_id}/done", request)


def _finish_refusal(visit: Visit, error: ApiError) -> str:
    if error.code == "update_inputs_missing":
        return gettext(visit.locale, "Answer the missing questions before sending.")
    return error.description


@get("/{inspection_id:str}/done", sync_to_thread=True)
def done(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    visit = visit_of(request, inspection_id)
    if visit is None:
        return not_found()
    if not sent_by_consumer(visit.view.state):
        return redirect(_continue_url(visit, visit.shared.clock()))
    return page(
        "consumer/done.html",
        locale=visit.locale,
        context={
            "company": visit.view.company_name,
            "template_name": template_name(visit.view.state, visit.locale),
            "inspection_id": inspection_id,
            "done": True,
        },
    )


#: The assets a page of the flow loads: the service worker keeps them at install.
ASSETS = (
    "web/base.css",
    "consumer/consumer.css",
    "consumer/vendor/idb-8.0.4.umd.js",
    "consumer/outbox.js",
    "consumer/consumer.js",
    "consumer/offline.js",
)
#: Raised when the service worker itself changes in a way its assets' hashes do not show.
WORKER_REVISION = "1"


@get("/{inspection_id:str}/sw.js", sync_to_thread=True)
def service_worker(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """The service worker of this inspection's link (scope `/i/:id`, docs/consumer.md,
    "Offline"); only for the browser holding its session."""
    visit = visit_of(request, inspection_id)
    if visit is None:
        return not_found()
    engine: Any = request.app.template_engine  # the pages' Jinja engine (server.web.templating)
    static = engine.engine.globals["static"]
    assets = [static(name) for name in ASSETS]
    version = WORKER_REVISION + "-" + "".join(url.rsplit("=", 1)[-1][:6] for url in assets)
    return Template(
        template_name="consumer/sw.js",
        context={"assets": assets, "version": version},
        media_type="text/javascript; charset=utf-8",
        headers={
            "Service-Worker-Allowed": session_path(inspection_id),
            "Cache-Control": "no-cache",
        },
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
            service_worker,
        ],
        session_kind=KIND,
        middleware=[ClientIdMiddleware],
    )
]
