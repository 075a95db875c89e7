"""Errors as JSON: every error response is `{"code", "status", "description", "detail", "errors"?}`
(`detail` repeats `description` for the client libraries, which read that name).

Handlers raise `ApiError`; Litestar's own exceptions (unknown route, wrong method, malformed
JSON, validation, body too large) and unexpected exceptions are turned into the same shape by
`EXCEPTION_HANDLERS`, so a client never sees an HTML page or a traceback. Every exception class
of the server package derives from `ServerError`.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from litestar import MediaType, Request, Response
from litestar.exceptions import (
    HTTPException,
    MethodNotAllowedException,
    NotAuthorizedException,
    NotFoundException,
    SerializationException,
    ValidationException,
)
from litestar.exceptions.http_exceptions import RequestEntityTooLarge

from server.allowed import allow_header

logger = logging.getLogger("server.errors")

#: HTTP status of each stable error code (runtime codes included). S2 and R append entries.
STATUS_BY_CODE: dict[str, int] = {
    # transport and auth
    "not_found": 404,
    "method_not_allowed": 405,
    "malformed_json": 400,
    "invalid_body": 400,
    "bad_request": 400,
    "body_too_large": 413,
    "unsupported_media_type": 415,
    "internal_error": 500,
    "unauthorized": 401,
    "rate_limited": 429,
    "not_ready": 503,
    "storage_unavailable": 503,
    "service_unavailable": 503,
    "forbidden": 403,
    "invalid_token": 401,
    "token_expired": 401,
    # partner applications, OAuth 2.0 (docs/api.md, "Partner applications")
    "insufficient_scope": 403,
    "membership_not_found": 404,
    "unknown_client": 400,
    "invalid_redirect_uri": 400,
    "invalid_app_name": 400,
    "invalid_app_redirect_uri": 400,
    "invalid_app_scopes": 400,
    "invalid_scope": 400,
    "app_not_found": 404,
    "authorization_not_found": 404,
    # idempotency
    "invalid_idempotency_key": 400,
    "idempotency_key_reused": 422,
    "idempotency_request_in_progress": 409,
    # spec: create inspection / get inspection
    "invalid_template_id": 400,
    "wrong_template_provided": 400,
    "not_found_template": 404,
    "not_found_shared_file": 404,
    "input_value_not_provided": 400,
    "invalid_input_value": 400,
    "not_found_user": 404,
    "inspection_not_found": 404,
    # runtime (docs/design/runtime-api.md)
    "invalid_locale": 400,
    "invalid_initial_status": 400,
    "inspection_not_editable": 409,
    "invalid_status_transition": 409,
    "product_not_found": 404,
    "image_not_found": 404,
    "max_attempts_exceeded": 409,
    "unknown_validation": 400,
    "invalid_validation_result": 400,
    "feature_not_enabled": 409,
    "update_inputs_missing": 409,
    "unknown_field": 400,
    # review (docs/review.md)
    "reason_required": 400,
    "inspection_not_in_review": 409,
    "review_conflict": 409,
    "retake_not_possible": 409,
    "validation_not_found": 404,
    # S2: templates, inspections, listing, images, presigned links (docs/api.md)
    "invalid_template": 422,
    "invalid_shared_file": 422,
    "template_name_taken": 409,
    "template_not_editable": 409,
    "template_type_changed": 409,
    "template_tests_failed": 422,
    "invalid_filter": 400,
    "invalid_limit": 400,
    "invalid_page": 400,
    "invalid_inspection_type": 400,
    "invalid_callback_url": 400,
    "invalid_metadata": 400,
    "invalid_multipart": 400,
    "invalid_image": 400,
    "unknown_file_input": 400,
    "product_update_not_supported": 400,
    "invalid_expires_in": 400,
    "invalid_link": 403,
    "link_expired": 403,
    # R: reports and webhooks (docs/reports.md)
    "inspection_not_completed": 409,
    "reports_unavailable": 503,
    "report_request_not_found": 404,
    "report_not_found": 404,
    "report_link_expired": 403,
    "report_link_invalid": 403,
    "callback_url_not_allowed": 400,
    "invalid_events": 400,
    "webhook_not_found": 404,
    "too_many_subscriptions": 409,
    "invalid_delivery_channel": 400,
    "invalid_delivery_destination": 400,
    "delivery_channel_unavailable": 400,
    "delivery_not_possible": 409,
    "too_many_deliveries": 429,
}

DESCRIPTIONS: dict[str, str] = {
    "not_found": "No resource at this path.",
    "method_not_allowed": "This path does not accept that HTTP method.",
    "malformed_json": "The request body is not valid JSON.",
    "invalid_body": "The request body or parameters are not valid.",
    "body_too_large": "The request body is larger than the server accepts.",
    "internal_error": "The server failed to handle the request.",
    "unauthorized": "A valid API key is required in the x-api-key header.",
    "storage_unavailable": "The storage refused to keep this write (read-only or full); retry "
    "after the time in Retry-After.",
    "service_unavailable": "A service this server depends on (database or file storage) is not "
    "answering; retry after the time in Retry-After.",
}

#: Seconds a client waits before retrying after a 503 `storage_unavailable` or
#: `service_unavailable` (`Retry-After`): an operator or a failover has to act first.
UNAVAILABLE_RETRY_AFTER_SECONDS = 30


class ServerError(Exception):
    """The base of every exception the server package defines (`ApiError`, `TokenError`,
    `SettingsError`, `BlobNotFound`, ...), so a caller can catch the server's own failures in
    one clause. Subclasses that were a `ValueError` or `KeyError` before stay one as well."""


class SchemaOutdated(ServerError):
    """The database's schema is older than the code's, and this process may not upgrade it
    (production: `inspectlang admin migrate` does, see `server.migrate`)."""


class StorageUnavailable(ServerError):
    """The storage refused a write: a read-only or full file system, a read-only database
    (503 `storage_unavailable`)."""


class ServiceUnavailable(ServerError):
    """A service the server depends on failed: the database connection was lost, the blob
    store did not answer (503 `service_unavailable`)."""


class ApiError(ServerError):
    """An error response with a stable `code`; raise it from anywhere under a handler."""

    def __init__(
        self,
        code: str,
        status: int,
        description: str,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(description)
        self.code = code
        self.status = status
        self.description = description
        self.errors = errors
        self.headers = headers or {}

    @classmethod
    def of(
        cls, code: str, description: str | None = None, errors: list[dict[str, Any]] | None = None
    ) -> ApiError:
        """An error whose status comes from `STATUS_BY_CODE` (400 for an unknown code)."""
        return cls(
            code,
            STATUS_BY_CODE.get(code, 400),
            description or DESCRIPTIONS.get(code, code.replace("_", " ")),
            errors,
        )

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "code": self.code,
            "status": self.status,
            "description": self.description,
            # The client libraries read `detail`: the same text under the name they use.
            "detail": self.description,
        }
        if self.errors is not None:
            body["errors"] = self.errors
        return body

    def to_response(self) -> Response[dict[str, Any]]:
        return Response(
            content=self.to_dict(),
            status_code=self.status,
            media_type=MediaType.JSON,
            headers=self.headers or None,
        )


class InspectionErrorLike(Protocol):
    """What `runtime.InspectionError` carries (structural, so this module needs no runtime)."""

    code: str
    description: str
    errors: list[dict[str, Any]]


def from_inspection_error(err: InspectionErrorLike) -> ApiError:
    """Map a runtime error to its HTTP status through `STATUS_BY_CODE` (400 when unknown)."""
    errors = list(err.errors) if err.errors else None
    return ApiError(err.code, STATUS_BY_CODE.get(err.code, 400), err.description, errors)


def unauthorized(description: str | None = None) -> ApiError:
    return ApiError.of("unauthorized", description)


def _error_response(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    error = api_error_for(exc)
    if error.status == 405:  # RFC 9110: a 405 says which methods the path does take
        error.headers = {**error.headers, **allow_header(request.app, request.scope["path"])}
    return error.to_response()


def api_error_for(exc: Exception) -> ApiError:
    """The `ApiError` that describes any exception raised while handling a request."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, HTTPException):
        return _from_http_exception(exc)
    fault = infrastructure_fault(exc)
    if fault is not None:
        # Not a bug: an operator's matter (logged as such, without the traceback's noise).
        logger.error("%s while handling a request: %s: %s", fault, type(exc).__name__, exc)
        return unavailable(fault)
    logger.error("unhandled error while handling a request", exc_info=exc)
    return ApiError.of("internal_error")


def unavailable(code: str) -> ApiError:
    """503 `storage_unavailable` or `service_unavailable`, with `Retry-After`."""
    error = ApiError.of(code)
    error.headers = {"Retry-After": str(UNAVAILABLE_RETRY_AFTER_SECONDS)}
    return error


#: SQLite's primary result codes (`sqlite3` gives them in `sqlite_errorcode`; the low byte is
#: the primary code) meaning the storage refused a write: PERM, READONLY, IOERR, FULL, CANTOPEN;
#: and those of a database that cannot serve now: BUSY and LOCKED (past the busy timeout),
#: NOMEM. Anything else (SQLITE_ERROR: no such table, a syntax error) is a bug.
SQLITE_STORAGE_CODES = {3, 8, 10, 13, 14}
_SQLITE_SERVICE_CODES = {5, 6, 7}
#: PostgreSQL SQLSTATEs meaning the storage refused a write: read-only transaction (a standby,
#: or `default_transaction_read_only`), and class 53 (disk full, out of memory, too many
#: connections are 53300: that one is a service failure, handled below).
_POSTGRES_STORAGE_STATES = {"25006", "53100", "53000"}


def infrastructure_fault(exc: BaseException) -> str | None:
    """`"storage_unavailable"` when the storage refused a write, `"service_unavailable"` when
    the database or the blob store failed (connection lost, timed out), None for anything else
    (a bug: 500 `internal_error`)."""
    if isinstance(exc, StorageUnavailable):
        return "storage_unavailable"
    if isinstance(exc, ServiceUnavailable):
        return "service_unavailable"
    from sqlalchemy import exc as sa

    if isinstance(exc, sa.DBAPIError):
        original = exc.orig
        sqlite_code = getattr(original, "sqlite_errorcode", None)
        if isinstance(sqlite_code, int):
            if sqlite_code & 0xFF in SQLITE_STORAGE_CODES:
                return "storage_unavailable"
            return "service_unavailable" if sqlite_code & 0xFF in _SQLITE_SERVICE_CODES else None
        if getattr(original, "sqlstate", None) in _POSTGRES_STORAGE_STATES:
            return "storage_unavailable"
        if exc.connection_invalidated or isinstance(exc, sa.OperationalError | sa.InterfaceError):
            return "service_unavailable"
        return None
    if isinstance(exc, sa.DisconnectionError | sa.TimeoutError):
        return "service_unavailable"
    if type(exc).__module__.split(".")[0] in ("psycopg", "psycopg_pool"):
        # psycopg's own errors, where it is used without SQLAlchemy (`server.key_lookup`).
        if getattr(exc, "sqlstate", None) in _POSTGRES_STORAGE_STATES:
            return "storage_unavailable"
        import psycopg

        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
            return "service_unavailable"
    return None


def _from_http_exception(exc: HTTPException) -> ApiError:
    status = exc.status_code
    if isinstance(exc, NotFoundException):
        return ApiError.of("not_found")
    if isinstance(exc, MethodNotAllowedException):
        return ApiError.of("method_not_allowed")
    if isinstance(exc, NotAuthorizedException):
        return ApiError.of("unauthorized", _detail(exc, "unauthorized"))
    if isinstance(exc, RequestEntityTooLarge) or status == 413 or "Entity Too Large" in exc.detail:
        return ApiError.of("body_too_large")
    if isinstance(exc.__cause__, SerializationException):
        return ApiError.of("malformed_json")
    if isinstance(exc, ValidationException):
        return ApiError.of("invalid_body", errors=_validation_errors(exc.extra))
    if status >= 500:
        logger.error("server error while handling a request", exc_info=exc)
        return ApiError.of("internal_error")
    code = {401: "unauthorized", 403: "forbidden", 415: "unsupported_media_type"}.get(
        status, "bad_request"
    )
    return ApiError(code, status, _detail(exc, code))


def _detail(exc: HTTPException, code: str) -> str:
    generic = exc.detail in ("", None) or exc.detail == getattr(type(exc), "detail", None)
    return DESCRIPTIONS.get(code, code.replace("_", " ")) if generic else str(exc.detail)


def _validation_errors(extra: Any) -> list[dict[str, Any]]:
    """Litestar's validation messages as `[{"field", "source", "message"}]`."""
    items = extra if isinstance(extra, list) else [extra] if extra else []
    errors: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict):
            entry: dict[str, Any] = {"message": str(item.get("message", "invalid value"))}
            if item.get("key") is not None:
                entry["field"] = str(item["key"])
            if item.get("source") is not None:
                entry["source"] = str(item["source"])
            errors.append(entry)
        else:
            errors.append({"message": str(item)})
    return errors


#: Handed to `Litestar(exception_handlers=...)`: everything becomes the JSON error shape.
EXCEPTION_HANDLERS: dict[type[Exception] | int, Any] = {
    ApiError: _error_response,
    HTTPException: _error_response,
    Exception: _error_response,
}
