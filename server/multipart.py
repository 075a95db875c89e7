"""Request bodies of the resource endpoints: JSON, multipart/form-data, or plain text.

The spec lets any JSON body come as multipart/form-data instead: a part named `data` holds the
JSON, and file parts carry files (an image, or a file input named by its input identifier).
`read_body` accepts all three forms and turns every malformed body into a 400 with a stable
code, never a 500: bad JSON (`malformed_json`), bad multipart (`invalid_multipart`), a body of
another media type (`unsupported_media_type`, 415).

JSON is bounded before and while it is parsed, so one request cannot stall the process: a JSON
text over `MAX_JSON_BYTES` is 413 `body_too_large` before parsing (files travel as multipart
parts, so no legitimate JSON body comes near it), and a parsed value with more than
`MAX_JSON_ITEMS` values or nested deeper than `MAX_JSON_DEPTH` is refused. Texts over
`THREAD_PARSE_BYTES` are parsed and checked in a worker thread, off the event loop: a 10 MB body
of 5 million integers took 6.7 s on the loop and held `/health` for all of it.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from litestar import Request
from litestar.datastructures import FormMultiDict, UploadFile
from litestar.exceptions import ClientException

from server.boundary import check_name, check_text, check_text_tree
from server.errors import ApiError

#: Deepest JSON nesting accepted; deeper bodies are refused before they can exhaust the stack.
MAX_JSON_DEPTH = 64
#: Largest JSON text accepted (a body, or a multipart `data` part), in bytes. The largest real
#: body, a goods inspection with 20 products, inputs and 50 metadata pairs, is under 100 KB.
MAX_JSON_BYTES = 1024 * 1024
#: Most values (scalars, arrays and objects, at any depth) in one JSON text.
MAX_JSON_ITEMS = 20_000
#: JSON texts longer than this are parsed in a worker thread (json.loads of 64 KB takes ~5 ms).
THREAD_PARSE_BYTES = 64 * 1024

# Whole-body limits, per endpoint (`request_max_body_size=` on its route): Litestar refuses a
# larger announced body with 413 `body_too_large` before reading it. Endpoints that take files
# (creation, inspection PUT, image upload) keep the app's limit (`INSPECTLANG_MAX_BODY_BYTES`).

#: Endpoints that take only JSON: the JSON bound plus room for a multipart envelope.
JSON_ONLY_BODY_BYTES = MAX_JSON_BYTES + 64 * 1024
#: Template endpoints: a source of `MAX_SOURCE_CHARS` (200,000) characters sent as JSON with
#: every character escaped (`\u00e9`, 6 bytes each) still fits; so does its JSON text bound.
TEMPLATE_BODY_BYTES = 2 * 1024 * 1024

JSON_TYPES = ("application/json",)
MULTIPART_TYPE = "multipart/form-data"
TEXT_TYPE = "text/plain"


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """A file part of a multipart body, read into memory (the body size limit bounds it)."""

    name: str
    filename: str
    content_type: str
    data: bytes


@dataclass(slots=True)
class Body:
    """A parsed request body: the JSON value (None when absent), its files, or its text."""

    data: Any = None
    files: dict[str, UploadedFile] = field(default_factory=dict)
    text: str | None = None
    multipart: bool = False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: A JSON string literal (unrolled, so it runs in linear time without backtracking).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def _separators_outside_strings(raw: bytes) -> int:
    """Commas outside string literals: one less than the values of a flat array. Counted
    before parsing, because `json.loads` holds the interpreter lock for the whole parse (44 ms
    for 500,000 integers), even in a worker thread. The strings are blanked out only when the
    plain count already exceeds the bound, so ordinary bodies pay one `bytes.count`."""
    commas = raw.count(b",")
    if commas <= MAX_JSON_ITEMS:
        return commas
    return _JSON_STRING.sub(b'""', raw).count(b",")


def _check_shape(value: Any, what: str) -> None:
    """Refuse a parsed value nested deeper than `MAX_JSON_DEPTH` or with more than
    `MAX_JSON_ITEMS` values; iterative, so hostile input cannot exhaust the stack."""
    items = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        items += 1
        if depth > MAX_JSON_DEPTH:
            raise ApiError.of("malformed_json", f"{what} is nested deeper than {MAX_JSON_DEPTH}.")
        if items > MAX_JSON_ITEMS:
            raise ApiError.of("invalid_body", f"{what} holds more than {MAX_JSON_ITEMS} values.")
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)


def parse_json(
    raw: bytes | str, *, what: str = "The request body", max_bytes: int = MAX_JSON_BYTES
) -> Any:
    """Parse JSON text; `malformed_json` 400 for anything that is not strict JSON, 413
    `body_too_large` over `max_bytes`, 400 for too many values or a text that cannot be
    stored (`server.boundary`)."""
    if len(raw) > max_bytes:
        raise ApiError.of("body_too_large", f"{what} is larger than {max_bytes} bytes of JSON.")
    encoded = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _separators_outside_strings(encoded) >= MAX_JSON_ITEMS:
        raise ApiError.of("invalid_body", f"{what} holds more than {MAX_JSON_ITEMS} values.")
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise ApiError.of("malformed_json", f"{what} is not valid JSON.") from None
    _check_shape(value, what)
    check_text_tree(value)
    return value


async def parse_json_off_loop(
    raw: bytes | str, *, what: str = "The request body", max_bytes: int = MAX_JSON_BYTES
) -> Any:
    """`parse_json`, in a worker thread when the text is long enough to hold the event loop."""
    parse = functools.partial(parse_json, raw, what=what, max_bytes=max_bytes)
    if len(raw) <= THREAD_PARSE_BYTES or len(raw) > max_bytes:
        return parse()
    return await anyio.to_thread.run_sync(parse)


def _invalid_multipart(description: str) -> ApiError:
    return ApiError("invalid_multipart", 400, description)


class FormRequest(Request[Any, Any, Any]):
    """The app's request (`Litestar(request_class=...)`): its form, read by the API's bodies
    (`read_body`) and by every page's handler and the CSRF check (`await request.form()`), is
    decoded at the door for all of them. A text field that is not text in its charset (bytes of
    a photo sent as a field, invalid UTF-8) was a `UnicodeDecodeError` deep in the page's
    handler, a 500 (the consumer's details form, found by tests/server/
    test_hostile_requests.py); it is 400 `invalid_multipart`."""

    async def form(self) -> FormMultiDict:
        try:
            return await super().form()
        except (UnicodeDecodeError, LookupError):
            raise _invalid_multipart(
                "A multipart field is not text in its declared charset."
            ) from None


async def _read_upload(name: str, upload: UploadFile) -> UploadedFile:
    try:
        data = await upload.read()
    finally:
        await upload.close()
    check_name(f"The file name of the multipart part {name!r}", upload.filename or "")
    return UploadedFile(
        name=name,
        filename=upload.filename or name,
        content_type=(upload.content_type or "application/octet-stream").split(";")[0].strip(),
        data=data,
    )


async def _read_multipart(request: Request[Any, Any, Any], max_json_bytes: int) -> Body:
    try:
        form = await request.form()
    except ClientException as error:
        if "Too Large" in str(error.detail):
            raise ApiError.of("body_too_large") from None
        raise _invalid_multipart(f"The multipart body is malformed: {error.detail}") from None
    body = Body(multipart=True)
    for name, values in form.dict().items():
        check_text("A multipart field name", name)
        if len(values) > 1:
            raise _invalid_multipart(f"The multipart field {name!r} is sent more than once.")
        value = values[0]
        if name == "data":
            raw = (await _read_upload(name, value)).data if isinstance(value, UploadFile) else value
            what = "The multipart `data` part"
            body.data = (
                await parse_json_off_loop(raw, what=what, max_bytes=max_json_bytes) if raw else None
            )
        elif isinstance(value, UploadFile):
            body.files[name] = await _read_upload(name, value)
        else:
            raise _invalid_multipart(
                f"The multipart field {name!r} is not a file; send values inside the `data` part."
            )
    return body


async def read_body(
    request: Request[Any, Any, Any],
    *,
    allow_text: bool = False,
    max_json_bytes: int = MAX_JSON_BYTES,
) -> Body:
    """The request body in any accepted form; empty bodies give `Body(data=None)`. The whole
    body is bounded by the route's `request_max_body_size`, its JSON text by `max_json_bytes`."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type == MULTIPART_TYPE:
        return await _read_multipart(request, max_json_bytes)
    raw = await request.body()
    if not raw.strip():
        return Body()
    if media_type == "" and allow_text and not _looks_like_json(raw):
        # No Content-Type on an endpoint that takes text: a template's source, sent by a
        # client that set none (it is never JSON, which starts with `{` or `[`).
        return _text_body(raw)
    if media_type in JSON_TYPES or media_type.endswith("+json") or media_type == "":
        return Body(data=await parse_json_off_loop(raw, max_bytes=max_json_bytes))
    if allow_text and media_type == TEXT_TYPE:
        return _text_body(raw)
    accepted = "application/json, multipart/form-data or text/plain (the template's source)"
    raise ApiError.of(
        "unsupported_media_type",
        f"Send the body as {accepted if allow_text else 'application/json or multipart/form-data'}"
        f", not {media_type!r}.",
    )


def _looks_like_json(raw: bytes) -> bool:
    """A body that can only be meant as JSON: an object or an array."""
    return raw.lstrip()[:1] in (b"{", b"[")


def _text_body(raw: bytes) -> Body:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError.of("bad_request", "The text body is not valid UTF-8.") from None
    check_text("The text body", text)
    return Body(text=text)


def is_absent(value: Any) -> bool:
    """An optional body that says nothing: none at all, or `[]`, which is how PHP's
    `json_encode([])` writes an empty map (the PHP library sends it for "no options")."""
    return value is None or value == []


def json_object(body: Body, *, required: bool = True) -> dict[str, Any]:
    """The body's JSON value as an object: `invalid_body` 400 when it is anything else. When
    the body is optional, an absent one (`is_absent`) is `{}`."""
    if not required and is_absent(body.data):
        return {}
    if not isinstance(body.data, dict):
        raise ApiError.of("invalid_body", "The request body must be a JSON object.")
    return body.data
