"""Typed request bodies: msgspec Structs that decode a parsed JSON body and document it.

A JSON body reaches a handler through `server.multipart.read_body` (JSON, or the `data` part of
a multipart body: bounded, parsed off the event loop when large, texts checked at the door), and
is then decoded into the route's `RequestBody` subclass by `decode_body`. An unknown field is a
400 `unknown_field`; a missing field, a wrong type or a value out of range is a 400 with the
code the model gives that field in `field_codes` (`invalid_body` when none), and, when the model
gives one, the field's stable message from `field_messages`. `errors[0]` names the field.

The same Struct gives the request body's JSON Schema in the OpenAPI document (`schema_of`), so
the document and the decoder cannot drift apart. Responses are Structs too where the handler
builds them; Litestar documents those from the handler's return type.
"""

from __future__ import annotations

import functools
import operator
import re
import types
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Literal,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

import msgspec

from inspectlang.manifest import INPUT_TYPES, INSPECTION_TYPES
from server.errors import ApiError
from server.multipart import Body, is_absent

JsonSchema = dict[str, Any]

# The vocabulary's enumerations as types: a `Literal` of the tuple `inspectlang.manifest`
# defines (one list for the checker, the runtime and this document); `str` to mypy, which
# cannot read a `Literal` built from a tuple.
if TYPE_CHECKING:
    InspectionType = str
    InputType = str
else:
    InspectionType = Literal[INSPECTION_TYPES]
    InputType = Literal[INPUT_TYPES]


class RequestBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Base of request bodies: unknown fields are refused, every field is keyword-only."""

    #: Error code per top-level field, for a missing, mistyped or out-of-range value.
    field_codes: ClassVar[dict[str, str]] = {}
    #: Stable message per top-level field (else msgspec's, which names the expected type).
    field_messages: ClassVar[dict[str, str]] = {}
    #: Top-level fields whose JSON type another layer checks with codes of its own (the
    #: runtime's `invalid_metadata` problems): `decode_shape` leaves them as they are.
    typed_later: ClassVar[frozenset[str]] = frozenset()
    #: Code of an unknown field, at any depth (the review bodies keep their first code,
    #: `invalid_body`, from before they were decoded here).
    unknown_field_code: ClassVar[str] = "unknown_field"


class ResponseBody(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Base of response bodies: fields left at their default (`UNSET`) are not sent."""


M = TypeVar("M", bound=RequestBody)

#: msgspec's validation messages: `<what> - at `$.path``, the field name in backquotes.
_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_NAMED = re.compile(r"(?P<kind>unknown|missing required) field `(?P<name>[^`]*)`")
_TOP = re.compile(r"^\.(?P<name>[^.\[]+)")


def _refusal(model: type[RequestBody], message: str) -> ApiError:
    """The 400 for msgspec's validation `message`, naming the field (at most 100 characters
    of it: an unknown key is the client's text)."""
    at = _AT.search(message)
    path = at.group("path") if at else ""
    what = message[: at.start()] if at else message
    named = _NAMED.search(what)
    if named is not None:
        path = f"{path}.{named.group('name')}"
    field = path.lstrip(".")[:100] or "body"
    top = _TOP.match(path)
    name = top.group("name") if top else ""
    if named is not None and named.group("kind") == "unknown":
        return ApiError(
            model.unknown_field_code,
            400,
            f"The request body has no field {field!r}.",
            [{"field": field, "code": "unknown_field", "message": what}],
        )
    code = model.field_codes.get(name, "invalid_body")
    description = model.field_messages.get(name) or f"{field}: {what}."
    return ApiError(code, 400, description, [{"field": field, "code": code, "message": what}])


@functools.cache
def _required(model: type[RequestBody]) -> tuple[str, ...]:
    return tuple(f.encode_name for f in msgspec.structs.fields(model) if f.required)


def decode(value: Any, model: type[M]) -> M:
    """A parsed JSON value as `model`; a 400 naming the field when it does not fit."""
    if not isinstance(value, dict):
        raise ApiError.of("invalid_body", "The request body must be a JSON object.")
    for name in _required(model):
        # A missing field first: `{"src": ...}` is better told that `source` is missing.
        if name not in value:
            raise _refusal(model, f"Object missing required field `{name}`")
    try:
        return msgspec.convert(value, model)
    except msgspec.ValidationError as error:
        raise _refusal(model, str(error)) from None


def decode_shape(value: Any, model: type[RequestBody]) -> None:
    """Check that a parsed JSON value has the JSON types of `model` everywhere: a list where a
    text is due, an object where a number is, at any depth, is a 400 `invalid_body` (or the
    field's `field_codes` code) naming the field. Value rules (lengths, ranges, patterns,
    closed vocabularies, required and unknown fields) are left to the layer that checks them
    with its own codes: the runtime's intake, for the bodies it validates (`Documented`), which
    then meets only values of the types it reads."""
    if not isinstance(value, dict):
        raise ApiError.of("invalid_body", "The request body must be a JSON object.")
    try:
        msgspec.convert(value, _shape(model))
    except msgspec.ValidationError as error:
        raise _refusal(model, _with_keys(str(error), value)) from None


_SEGMENT = re.compile(r"\.(?P<name>[^.\[]+)|\[(?P<index>\d+|\.\.\.)\]")
_GOT = re.compile(r"got `(?P<json_type>[a-z]+)`")
_JSON_TYPES = {str: "str", bool: "bool", int: "int", float: "float", list: "array", dict: "object"}


def _json_type(value: Any) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), "")


def _keyed_path(value: Any, segments: list[re.Match[str]], json_type: str) -> str | None:
    """The path of `segments` in `value` with each `[...]` (msgspec's word for "some key of
    this object") made the key whose value has `json_type` at the end; None if none does."""
    if not segments:
        return "" if _json_type(value) == json_type else None
    first, rest = segments[0], segments[1:]
    name, index = first.group("name"), first.group("index")
    if index == "...":
        candidates = list(value.items()) if isinstance(value, dict) else []
    elif index is not None:
        position = int(index)
        in_range = isinstance(value, list) and position < len(value)
        candidates = [(f"[{index}]", value[position])] if in_range else []
    else:
        candidates = [(name, value[name])] if isinstance(value, dict) and name in value else []
    for key, item in candidates:
        found = _keyed_path(item, rest, json_type)
        if found is not None:
            step = key if key.startswith("[") else f".{key}"
            return step + found
    return None


def _with_keys(message: str, value: Any) -> str:
    """msgspec's `message` with the object keys its path leaves out (`[...]`) named."""
    at, got = _AT.search(message), _GOT.search(message)
    if at is None or got is None or "[...]" not in at.group("path"):
        return message
    segments = list(_SEGMENT.finditer(at.group("path")))
    path = _keyed_path(value, segments, got.group("json_type"))
    return message if path is None else f"{message[: at.start()]} - at `${path}`"


_UNION = (Union, types.UnionType)


def _type_shape(annotation: Any) -> Any:
    """The JSON types of `annotation`: constraints (`Meta`) and literal values dropped, a whole
    number as any number, Structs as their `_shape`."""
    origin = get_origin(annotation)
    arguments = get_args(annotation)
    if origin is Annotated:
        return _type_shape(arguments[0])
    if origin is Literal:
        return functools.reduce(operator.or_, {type(item) for item in arguments})
    if origin in _UNION:
        return functools.reduce(operator.or_, [_type_shape(item) for item in arguments])
    if origin is list:
        return list[_type_shape(arguments[0])]  # type: ignore[misc]
    if origin is dict:
        return dict[_type_shape(arguments[0]), _type_shape(arguments[1])]  # type: ignore[misc]
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return _shape(annotation)
    if annotation is int:
        return float  # JSON has one number type: `32.0` is a whole number (docs/api.md)
    return annotation


@functools.cache
def _shape(model: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """`model` as JSON types only (`_type_shape`): every field optional, unknown ones allowed
    (the fields a `RequestBody` says are `typed_later` as any value). Built once per model,
    from the Struct the document is made of, so the two cannot drift."""
    hints = get_type_hints(model, include_extras=True)
    later: frozenset[str] = getattr(model, "typed_later", frozenset())
    fields = [
        (
            field.name,
            Any if field.encode_name in later else _type_shape(hints[field.name]) | None,
            msgspec.field(default=None, name=field.encode_name),
        )
        for field in msgspec.structs.fields(model)
    ]
    return msgspec.defstruct(f"{model.__name__}Shape", fields, kw_only=True)


def decode_body(body: Body, model: type[M], *, required: bool = True) -> M:
    """The body's JSON value as `model`. An absent body is `model()` when not `required`
    (clients finish or presign with no body at all, or PHP's `[]`: `is_absent`), else a 400
    `invalid_body`."""
    if not required and is_absent(body.data):
        return decode({}, model)
    return decode(body.data, model)


def schema_of(model: Any) -> JsonSchema:
    """The JSON Schema of a type (a Struct, `list[Struct]`) with every `$ref` inlined, as an
    OpenAPI operation embeds it (msgspec's `$defs` would otherwise resolve against the whole
    document). The objects of a `RequestBody` are closed (`additionalProperties: false`), as
    its decoder is."""
    generated = msgspec.json.schema(model)
    definitions: dict[str, JsonSchema] = generated.pop("$defs", {})
    closed = isinstance(model, type) and issubclass(model, RequestBody)

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                return inline(definitions[reference.removeprefix("#/$defs/")])
            copied = {key: inline(item) for key, item in node.items()}
            if closed and node.get("type") == "object" and "properties" in node:
                copied.setdefault("additionalProperties", False)
            return copied
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    schema: JsonSchema = inline(generated)
    return with_storable_texts(schema) if closed else schema


#: What every text of a request may hold: no NUL (`server.boundary` refuses it with 400
#: `invalid_body`, since no database column can store it). Stated in the document as a pattern,
#: so that a client, or a fuzzer, knows it before sending. Lone surrogates (`"\\ud800"` alone),
#: refused the same way, are not valid Unicode text at all, so JSON Schema's `string` (a
#: sequence of Unicode characters) already excludes them; a pattern cannot name them, as
#: ECMA-262 regular expressions in Unicode mode match code points, never half of one.
STORABLE_TEXT = "^[^\\u0000]*$"


def with_storable_texts(node: Any) -> Any:
    """`node` with `STORABLE_TEXT` stated on every free text (a string schema with no `enum`,
    `const` or `format` of its own); a string that already has a pattern gets both, as `allOf`."""
    if isinstance(node, list):
        return [with_storable_texts(item) for item in node]
    if not isinstance(node, dict):
        return node
    copied = {key: with_storable_texts(item) for key, item in node.items()}
    if copied.get("type") == "string" and not {"enum", "const"} & copied.keys():
        if "pattern" not in copied:
            copied["pattern"] = STORABLE_TEXT
        elif copied["pattern"] != STORABLE_TEXT:
            copied.setdefault("allOf", []).append({"pattern": STORABLE_TEXT})
    return copied
