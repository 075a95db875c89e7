"""Request and response schemas of the resource endpoints, as the OpenAPI document shows them.

Handlers read bodies themselves (JSON, text or multipart, see `server.multipart`) and return plain
dicts, so Litestar cannot infer these shapes: each route gets an `operation(...)` class that puts
the JSON Schemas below into its OpenAPI operation. The schemas describe what the handlers really
send (schemathesis checks every response against them), including every error response.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

import msgspec
from litestar.openapi.spec import OpenAPIMediaType as MediaTypeObject
from litestar.openapi.spec import OpenAPIResponse as ResponseObject
from litestar.openapi.spec import Operation, RequestBody, Schema

from inspectlang.manifest import PRODUCT_FIELDS
from server.bodies import JsonSchema, ResponseBody, schema_of


@dataclass
class RawSchema(Schema):
    """A Schema object written as a plain JSON Schema dict (serialized as is)."""

    raw: JsonSchema = field(default_factory=dict)

    def to_schema(self) -> dict[str, Any]:
        return self.raw


def _nullable(kind: str) -> JsonSchema:
    return {"type": [kind, "null"]}


STRING: JsonSchema = {"type": "string"}
OBJECT: JsonSchema = {"type": "object"}
OBJECT_ID: JsonSchema = {"type": "string", "pattern": "^[0-9a-f]{24}$"}
TIMESTAMP: JsonSchema = {"type": "string", "format": "date-time"}


class ErrorBody(ResponseBody):
    """Every error response (`server.errors.ApiError.to_dict`)."""

    code: Annotated[str, msgspec.Meta(description="Stable error code (docs/api.md).")]
    status: int
    description: str
    errors: list[dict[str, Any]] | msgspec.UnsetType = msgspec.UNSET


class Message(ResponseBody):
    """A write that returns no resource: `{"message": "Product updated"}`."""

    message: str


MESSAGE: JsonSchema = schema_of(Message)

# --- Inspections -------------------------------------------------------------------------------

_PRODUCT_DATA: JsonSchema = {
    "type": "object",
    "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
}

_INPUT_VALUES: JsonSchema = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["identifier", "value"],
        "properties": {"identifier": STRING, "value": {}},
    },
}

_METADATA: JsonSchema = {
    "type": "object",
    "maxProperties": 50,
    "propertyNames": {"maxLength": 50},
    "additionalProperties": {"type": "string", "maxLength": 500},
}

_CONSUMER: JsonSchema = {
    "type": "object",
    "properties": {
        "firstName": STRING,
        "lastName": STRING,
        "identification": STRING,
        "email": STRING,
        "phone": STRING,
    },
}

CREATE_INSPECTION_BODY: JsonSchema = {
    "type": "object",
    "required": ["templateId"],
    "properties": {
        "templateId": {
            "type": "string",
            "description": "A 24-hex template id, or an alias: easy, deep, damage.",
        },
        "delivery": {
            "type": "object",
            "properties": {
                "disabled": {"type": "boolean"},
                "channel": STRING,
                "destination": STRING,
                "countryISO": STRING,
            },
        },
        "locale": {"type": "string", "description": "`xx_YY`, e.g. en_US."},
        "producer": {"type": "object", "properties": {"internalId": STRING}},
        **{kind: _PRODUCT_DATA for kind, fields in PRODUCT_FIELDS.items() if fields},
        "products": {"type": "array", "items": _PRODUCT_DATA},
        "consumer": _CONSUMER,
        "inputs": _INPUT_VALUES,
        "initialStatus": {"type": "string", "enum": ["created", "started"]},
        "metadata": _METADATA,
        "callbackURL": {"type": "string", "format": "uri"},
    },
}


UPDATE_INSPECTION_BODY: JsonSchema = {
    "type": "object",
    "properties": {"consumer": _CONSUMER, "metadata": _METADATA, "inputs": _INPUT_VALUES},
}

UPDATE_PRODUCT_BODY: JsonSchema = {
    "type": "object",
    "properties": {kind: _PRODUCT_DATA for kind, fields in PRODUCT_FIELDS.items() if fields},
}


FINISH_BODY: JsonSchema = {"type": "object", "properties": {}}


# --- Images and signed links -------------------------------------------------------------------

IMAGE_DATA_PART: JsonSchema = {
    "type": "object",
    "required": ["side"],
    "properties": {
        "side": STRING,
        "identifier": STRING,
        "date": STRING,
        "coordinates": {
            "type": "object",
            "required": ["latitude", "longitude"],
            "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
        },
    },
}

IMAGE_UPLOAD_BODY: JsonSchema = {
    "type": "object",
    "required": ["image", "data"],
    "properties": {
        "image": {"type": "string", "format": "binary"},
        "data": {
            "type": "string",
            "description": "JSON text of an object matching: " + json.dumps(IMAGE_DATA_PART),
        },
    },
}


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


def _body(
    schema: BodySchema | None, *, multipart: bool, text: bool, multipart_schema: JsonSchema | None
) -> RequestBody | None:
    content: dict[str, MediaTypeObject] = {}
    if schema is not None:
        content["application/json"] = _media(schema)
        if multipart:
            content["multipart/form-data"] = _media(
                multipart_schema
                or {
                    "type": "object",
                    "properties": {
                        "data": {"type": "string", "description": "The JSON body, as text."}
                    },
                }
            )
    if text:
        content["text/plain"] = _media({"type": "string"})
    if multipart_schema is not None and schema is None:
        content["multipart/form-data"] = _media(multipart_schema)
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
    request_body = _body(body, multipart=multipart, text=text, multipart_schema=multipart_schema)
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
