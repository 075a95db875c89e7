"""The OpenAPI operation of each resource route: its request body, its responses, its errors.

Handlers read bodies themselves (JSON, text or multipart, see `server.multipart`), so Litestar
cannot derive the request body from a `data` parameter: each route gets an `operation(...)`
class that puts the request body's schema, generated from the body's Struct
(`server/<resource>/schemas.py`, `server.bodies.schema_of`), into its operation, with the
success response (derived by Litestar from the handler's return type, or generated from a
Struct where the hot paths build dicts) and every error response (`ErrorBody`). schemathesis
checks every response against them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

import msgspec
from litestar.openapi.spec import Encoding, Operation, RequestBody, Schema
from litestar.openapi.spec import OpenAPIMediaType as MediaTypeObject
from litestar.openapi.spec import OpenAPIResponse as ResponseObject

from server.bodies import JsonSchema, ResponseBody, schema_of


@dataclass
class RawSchema(Schema):
    """A Schema object written as a plain JSON Schema dict (serialized as is)."""

    raw: JsonSchema = field(default_factory=dict)

    def to_schema(self) -> dict[str, Any]:
        return self.raw


class ErrorBody(ResponseBody):
    """Every error response (`server.errors.ApiError.to_dict`)."""

    code: Annotated[str, msgspec.Meta(description="Stable error code (docs/api.md).")]
    status: int
    description: str
    detail: Annotated[
        str,
        msgspec.Meta(description="The same text as `description` (the client libraries read it)."),
    ]
    errors: list[dict[str, Any]] | msgspec.UnsetType = msgspec.UNSET


class Message(ResponseBody):
    """A write that returns no resource: `{"message": "Product updated"}`."""

    message: str


#: The body of start and finish, which read none: an empty object, or nothing at all.
FINISH_BODY: JsonSchema = {"type": "object", "properties": {}}


# --- Operations --------------------------------------------------------------------------------

_STATUS_TEXT = {
    200: "OK",
    201: "Created",
    400: "Bad request: the body or a parameter is not valid",
    401: "Missing, wrong or revoked API key",
    403: "Forbidden: the signed token is not valid or has expired",
    404: "Not found (also: another company's or the other key mode's resource)",
    409: "Conflict with the resource's current state, or an Idempotency-Key still in flight",
    413: "Request body too large",
    415: "Unsupported content type",
    422: "Unprocessable: the template does not compile, or an Idempotency-Key was reused",
}


#: `operation(response=DERIVED)`: keep the success response Litestar derives from the
#: handler's return type (a `ResponseBody` Struct).
DERIVED: Final = "derived"

#: A JSON Schema, or the type (a Struct, `list[Struct]`) it is generated from.
BodySchema = JsonSchema | type[msgspec.Struct] | Any


def _schema(schema: BodySchema) -> JsonSchema:
    return schema if isinstance(schema, dict) else schema_of(schema)


def _media(schema: BodySchema) -> MediaTypeObject:
    return MediaTypeObject(schema=RawSchema(raw=_schema(schema)))


def _multipart(form: JsonSchema, part_types: dict[str, str] | None = None) -> MediaTypeObject:
    """A multipart form; its `data` part, when it has one, holds JSON (as the spec says), and
    `part_types` names the media types of other parts."""
    types = {"data": "application/json", **(part_types or {})}
    encoding = {
        name: Encoding(content_type=types[name])
        for name in form.get("properties", {})
        if name in types
    }
    return MediaTypeObject(schema=RawSchema(raw=form), encoding=encoding or None)


def _json_in_multipart(schema: BodySchema) -> MediaTypeObject:
    """The multipart form of a JSON body: one part, `data`, holding that JSON, and nothing
    else; the server refuses any other text part."""
    return _multipart(
        {
            "type": "object",
            "properties": {"data": _schema(schema)},
            "required": ["data"],
            "additionalProperties": False,
        }
    )


def _body(
    schema: BodySchema | None,
    *,
    multipart: bool,
    text: bool,
    multipart_schema: JsonSchema | None,
    part_types: dict[str, str] | None,
) -> RequestBody | None:
    content: dict[str, MediaTypeObject] = {}
    if schema is not None:
        content["application/json"] = _media(schema)
        if multipart:
            content["multipart/form-data"] = (
                _multipart(multipart_schema, part_types)
                if multipart_schema
                else _json_in_multipart(schema)
            )
    if text:
        # The text body is what the JSON body's `source` holds.
        source = _schema(schema)["properties"]["source"] if schema is not None else {}
        content["text/plain"] = _media({"type": "string", **source})
    if multipart_schema is not None and schema is None:
        content["multipart/form-data"] = _multipart(multipart_schema, part_types)
    return RequestBody(content=content, required=bool(content)) if content else None


def operation(
    *,
    status: int,
    response: BodySchema | Literal["derived"] | None,
    errors: tuple[int, ...],
    body: BodySchema | None = None,
    multipart: bool = True,
    text: bool = False,
    multipart_schema: JsonSchema | None = None,
    part_types: dict[str, str] | None = None,
    public: bool = False,
    write: bool = True,
) -> type[Operation]:
    """An Operation class for `@get/@post(operation_class=...)` with these bodies and responses.

    `body` and `response` are JSON Schemas or the Structs that decode or build them;
    `response=DERIVED` keeps what Litestar derived from the handler's return type. Every route
    may answer 400 (bad body or parameter) besides `errors`; every authenticated
    route also 401; every write (POST, PUT) also 413 and 415 (body size and type), 409 and 422
    (an `Idempotency-Key` in flight or reused with another request).
    """
    request_body = _body(
        body,
        multipart=multipart,
        text=text,
        multipart_schema=multipart_schema,
        part_types=part_types,
    )
    statuses = set(errors) | {400}
    if write:
        statuses |= {409, 413, 415, 422}
    if not public:
        statuses.add(401)

    def init(self: Operation, *args: Any, **kwargs: Any) -> None:
        Operation.__init__(self, *args, **kwargs)
        derived = (self.responses or {}).get(str(status))
        success = (
            derived
            if response == DERIVED and isinstance(derived, ResponseObject)
            else ResponseObject(
                description=_STATUS_TEXT.get(status, "Success"),
                content={"application/json": _media(response)}
                if response is not None and response != DERIVED
                else None,
            )
        )
        success.description = _STATUS_TEXT.get(status, "Success")
        responses: dict[str, ResponseObject] = {str(status): success}
        for code in sorted(statuses):
            responses[str(code)] = ResponseObject(
                description=_STATUS_TEXT.get(code, "Error"),
                content={"application/json": _media(ErrorBody)},
            )
        self.responses = responses  # type: ignore[assignment]
        if request_body is not None:
            self.request_body = request_body

    return type("ResourceOperation", (Operation,), {"__init__": init})
