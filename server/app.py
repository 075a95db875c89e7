"""`create_app(settings)`: the Litestar application with auth, idempotency, errors and routes.

Pages (`server.web`): Jinja templates, CSRF on the page routers (never the API), static assets.

Middleware order: request metrics (`server.metrics`) outermost, then the boundary
(`server.boundary`: no NUL or lone surrogate in the path or query, no body announced larger than
the route accepts), then authentication, then the per-key rate limit (`server.ratelimit`), then
idempotency (so unauthenticated requests store nothing), then the handler. Shared objects
(database, settings, blob store, clock, idempotency store, rate limiter) live in `app.state`;
handlers reach them through `server.deps.services(request)`.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

from litestar import Litestar, Request, Response, get
from litestar.datastructures import CacheControlHeader, State
from litestar.middleware import DefineMiddleware
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, RedocRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router
from sqlalchemy import text

from server import jobs, log_redaction, metrics, migrate, routing
from server.blobs import BlobStore, open_store
from server.boundary import BoundaryMiddleware, SafeTextResponse
from server.consumer import CONSUMER_AREA
from server.dashboard.routes import DASHBOARD_AREA
from server.db import Database, DatabaseReadOnly
from server.delivery.service import DELIVERY_JOB
from server.deps import (
    BEARER_STATE,
    PUBLIC_OPT,
    AuthMiddleware,
    Clock,
    Services,
    system_clock,
)
from server.errors import EXCEPTION_HANDLERS, UNAVAILABLE_RETRY_AFTER_SECONDS
from server.idempotency import IdempotencyMiddleware, IdempotencyStore
from server.images.controller import ROUTES as IMAGE_ROUTES
from server.inspections.controller import ROUTES as INSPECTION_ROUTES
from server.inspections.delivery_routes import ROUTES as DELIVERY_ROUTES
from server.inspections.presign import ROUTES as PRESIGN_ROUTES
from server.key_lookup import AsyncKeyLookup
from server.metrics_middleware import RequestMetricsMiddleware
from server.multipart import FormRequest
from server.oauth import service as oauth
from server.oauth.controller import ROUTES as OAUTH_ROUTES
from server.oauth.routes import OAUTH_AREA
from server.ratelimit import LinkThrottle, RateLimitMiddleware, make_counter, make_limiter
from server.reports.controller import ROUTES as REPORT_ROUTES
from server.review.controller import ROUTES as REVIEW_ROUTES
from server.review.routes import REVIEW_AREA
from server.settings import Settings
from server.templates.controller import ROUTES as TEMPLATE_ROUTES
from server.urlsafety import check_provider_urls
from server.web.routes import WEB_AREA, PageArea, mount
from server.webhooks.controller import ROUTES as WEBHOOK_ROUTES

logger = logging.getLogger("server.app")

API_TITLE = "inspectlang inspection service"
API_VERSION = "1.0.0"

#: Every resource's routes, one folder per resource (`server/<resource>/controller.py`). The
#: order matters where paths overlap: templates' fixed paths before inspections' `{id}` ones.
RESOURCE_ROUTES: list[Any] = [
    *OAUTH_ROUTES,  # partner applications: `/v1/inspection/me`, `/all` before `{id}`
    *TEMPLATE_ROUTES,
    *INSPECTION_ROUTES,
    *IMAGE_ROUTES,
    *PRESIGN_ROUTES,
    *REPORT_ROUTES,
    *WEBHOOK_ROUTES,
    *DELIVERY_ROUTES,
    *REVIEW_ROUTES,
]

#: The web pages, one area per line (`server.web.routes.PageArea`): templates, assets, routes.
PAGE_AREAS: list[PageArea] = [
    WEB_AREA,
    CONSUMER_AREA,
    DASHBOARD_AREA,
    REVIEW_AREA,
    OAUTH_AREA,
]


@get("/health", opt={PUBLIC_OPT: True}, sync_to_thread=False, include_in_schema=False)
def health() -> dict[str, str]:
    """Liveness probe: answers without touching the database."""
    return {"status": "ok"}


@get("/ready", opt={PUBLIC_OPT: True}, sync_to_thread=True, include_in_schema=False)
def ready(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    """Readiness probe: 200 when the database and the blob store answer, else 503 `not_ready`
    with which one failed (a load balancer stops sending requests to this process)."""
    checks = readiness(request.app.state.db, request.app.state.blobs)
    ok = all(value == "ok" for value in checks.values())
    body: dict[str, Any] = {"status": "ok" if ok else "not_ready", "checks": checks}
    if not ok:
        body["code"] = "not_ready"
    headers = None if ok else {"Retry-After": str(UNAVAILABLE_RETRY_AFTER_SECONDS)}
    return Response(body, status_code=200 if ok else 503, headers=headers)


def readiness(database: Database, blobs: BlobStore) -> dict[str, str]:
    """`{"database": "ok" | error, "blobs": "ok" | error}`: each answers and accepts writes
    (`Database.check_writable`, `BlobStore.ping` writes and deletes a probe), so a process whose
    data directory turned read-only or full leaves the load balancer's rotation. The errors name
    the exception, and for a refused write (`DatabaseReadOnly`) why it was refused (its
    message is the server's own: no connection strings or credentials)."""
    checks: dict[str, str] = {}
    try:
        with database.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        database.check_writable()
        checks["database"] = "ok"
    except DatabaseReadOnly as error:
        checks["database"] = f"{type(error).__name__}: {error}"
    except Exception as error:
        checks["database"] = type(error).__name__
    try:
        blobs.ping()
        checks["blobs"] = "ok"
    except Exception as error:
        checks["blobs"] = type(error).__name__
    return checks


@get("/metrics", opt={PUBLIC_OPT: True}, sync_to_thread=True, include_in_schema=False)
def metrics_endpoint(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Prometheus text exposition of this process (`server.metrics`)."""
    body, content_type = metrics.exposition(request.app.state.db)
    return Response(body, media_type=content_type)


#: The API docs pages' JavaScript and CSS, shipped in the package (Swagger UI, Apache-2.0; Redoc,
#: MIT; their licenses beside them), so the pages work with no internet access.
API_DOCS_ASSETS = Path(__file__).with_name("static") / "vendor" / "apidocs"
API_DOCS_ASSETS_PATH = "/schema/assets"
#: No icon (Litestar's default loads one from a CDN): an empty data URL stops the browser asking.
NO_FAVICON = "<link rel='icon' href='data:,'>"


def openapi_config() -> OpenAPIConfig:
    """OpenAPI 3.1 at `/schema/openapi.json`, browsable at `/schema` and `/schema/swagger`
    (Swagger UI) and `/schema/redoc` (Redoc), every asset served by this app."""
    assets = API_DOCS_ASSETS_PATH
    swagger = SwaggerRenderPlugin(
        path=["/", "/swagger"],
        js_url=f"{assets}/swagger-ui-bundle.js",
        css_url=f"{assets}/swagger-ui.css",
        standalone_preset_js_url=f"{assets}/swagger-ui-standalone-preset.js",
        favicon=NO_FAVICON,
    )
    return OpenAPIConfig(
        title=API_TITLE,
        version=API_VERSION,
        path="/schema",
        render_plugins=[
            swagger,
            RedocRenderPlugin(
                path="/redoc",
                js_url=f"{assets}/redoc.standalone.js",
                google_fonts=False,
                favicon=NO_FAVICON,
            ),
            JsonRenderPlugin(path="/openapi.json"),
        ],
        components=Components(
            security_schemes={
                "apiKey": SecurityScheme(
                    type="apiKey",
                    name="x-api-key",
                    security_scheme_in="header",
                    description="The company's test or live API key.",
                )
            }
        ),
        security=[{"apiKey": []}],
    )


def api_docs_assets() -> Any:
    """The static files router of the docs pages' assets (public, cached for a day)."""
    return create_static_files_router(
        path=API_DOCS_ASSETS_PATH,
        directories=[API_DOCS_ASSETS],
        opt={PUBLIC_OPT: True},
        include_in_schema=False,
        cache_control=CacheControlHeader(max_age=86_400, public=True),
        send_as_attachment=False,
    )


def job_kinds(analyzers: routing.Analyzers) -> jobs.Registry:
    """Every kind of durable job with its handlers, and the worker's chores: named here, at the
    composition root, in imports the layering contracts check (not strings resolved later). The
    analysis job runs `analyzers`, the app's own."""
    from server.images import analysis
    from server.inspections import deliveries, expiry
    from server.reports import service as reports
    from server.web import sessions
    from server.webhooks import service as webhooks

    return jobs.Registry(
        kinds={
            reports.REPORT_JOB: jobs.JobKind(reports.run_report_job, reports.report_job_given_up),
            reports.CALLBACK_JOB: jobs.JobKind(
                reports.run_callback_job, webhooks.delivery_given_up
            ),
            webhooks.WEBHOOK_JOB: jobs.JobKind(
                webhooks.run_delivery_job, webhooks.delivery_given_up
            ),
            DELIVERY_JOB: jobs.JobKind(
                deliveries.run_link_delivery_job, deliveries.link_delivery_given_up
            ),
            analysis.JOB_KIND: jobs.JobKind(
                functools.partial(analysis.run_analysis_job, analyzers)
            ),
        },
        expiry_sweep=expiry.expire_overdue,
        purge_sessions=sessions.purge_expired,
        purge_partner_tokens=oauth.purge_spent,
    )


def worker_jobs(settings: Settings) -> jobs.Registry:
    """The job kinds of a worker outside an app (the `worker` command): with its own analyzers."""
    return job_kinds(routing.local_analyzers(settings))


def create_app(
    settings: Settings,
    *,
    db: Database | None = None,
    blobs: BlobStore | None = None,
    clock: Clock | None = None,
    extra_routes: list[Any] | None = None,
    include_controllers: bool = True,
    page_areas: list[PageArea] | None = None,
) -> Litestar:
    """The application. `db`, `blobs` and `clock` default to ones made from `settings`;
    `extra_routes` lets tests mount handlers beside (or, with `include_controllers=False`,
    instead of) the resource controllers; `page_areas` replaces `PAGE_AREAS` (the web pages)."""
    log_redaction.install()  # before the first request is logged
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    check_provider_urls(settings)
    database = db or Database(settings.database_url)
    migrate.prepare(database, settings.env)
    analyzers = routing.local_analyzers(settings)
    shared = Services(
        db=database,
        settings=settings,
        blobs=blobs or open_store(settings, database),
        clock=clock or system_clock,
        analyzers=analyzers,
        jobs=job_kinds(analyzers),
    )
    pages = mount(settings, PAGE_AREAS if page_areas is None else page_areas)
    state = State(
        {
            "services": shared,
            "settings": settings,
            "db": database,
            "blobs": shared.blobs,
            "clock": shared.clock,
            "idempotency": IdempotencyStore(database),
            "worker": None,
            "key_lookup": None,
            # Partner applications' access tokens (`server.deps`, `oauth_scope` routes).
            BEARER_STATE: oauth.authenticate_bearer,
            "csrf_config": pages.csrf_config,
            "rate_limiter": make_limiter(settings, database),
            "link_throttle": LinkThrottle(make_counter(settings, database)),
        }
    )
    return Litestar(
        route_handlers=[
            health,
            ready,
            metrics_endpoint,
            api_docs_assets(),
            *(RESOURCE_ROUTES if include_controllers else []),
            *(pages.route_handlers if include_controllers else []),
            *(extra_routes or []),
        ],
        template_config=pages.template_config,
        state=state,
        middleware=[
            RequestMetricsMiddleware,
            DefineMiddleware(BoundaryMiddleware),
            DefineMiddleware(AuthMiddleware),
            RateLimitMiddleware,
            DefineMiddleware(IdempotencyMiddleware),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        request_class=FormRequest,
        response_class=SafeTextResponse,
        openapi_config=openapi_config(),
        request_max_body_size=settings.max_body_bytes,
        on_startup=[_open_key_lookup, _log_capabilities, _start_worker],
        on_shutdown=[_stop_worker, _close_key_lookup, _close_rate_limiter],
        debug=False,
    )


async def _open_key_lookup(app: Litestar) -> None:
    """On PostgreSQL, API keys are looked up on the event loop (`server.key_lookup`)."""
    database: Database = app.state.db
    if database.dialect != "postgresql":
        return
    lookup = AsyncKeyLookup(database)
    await lookup.open()
    app.state.key_lookup = lookup


async def _close_key_lookup(app: Litestar) -> None:
    lookup: AsyncKeyLookup | None = app.state.key_lookup
    app.state.key_lookup = None
    if lookup is not None:
        await lookup.close()


def _close_rate_limiter(app: Litestar) -> None:
    throttle = app.state.get("link_throttle")
    if throttle is not None:
        throttle.close()
    limiter = app.state.get("rate_limiter")
    if limiter is not None:
        limiter.close()


def _log_capabilities(app: Litestar) -> None:
    """Say at start-up which validations go to a person here (docs/review.md)."""
    shared: Services = app.state.services
    routing.log_capabilities(shared.settings, shared.analyzers)


def _start_worker(app: Litestar) -> None:
    """Start the in-process job worker when `settings.worker` is on."""
    settings: Settings = app.state.settings
    if not settings.worker:
        return
    from server.jobs import start_worker_thread  # the job handlers import the report renderer

    shared: Services = app.state.services
    app.state.worker = start_worker_thread(
        shared.db, settings, registry=shared.jobs, blobs=shared.blobs
    )


def _stop_worker(app: Litestar) -> None:
    """Stop the in-process worker (it finishes its current job) before the process exits."""
    worker = app.state.worker
    app.state.worker = None
    if worker is None:
        return
    stop = getattr(worker, "stop", None)
    if callable(stop):
        stop()
    elif callable(worker):
        worker()
