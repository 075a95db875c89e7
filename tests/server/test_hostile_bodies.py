"""Hostile JSON bodies on every operation of the OpenAPI document that takes one: none may
answer 5xx (issue 39 §4).

An outside probe sent 22,000 hostile bodies over 11 endpoints and got 36 answers 500, all
one cause: a list or an object as `inputs[].identifier`, a place no generated body had put
one. So this test does not wait for a generator to stumble on a place: it walks each request
body's schema in the document and puts a value of each JSON type (`HOSTILE_FIELDS`) at every
field it finds (objects' properties, a map's values, an array's first item, every alternative
of a union), inside a body that is otherwise valid where one is known, so that the request
gets past the checks that come first; every value of `HOSTILE` is sent as a whole body. Then
Hypothesis puts random JSON (nested lists and objects, any scalar) at random fields, a bounded
number of times per operation. Path parameters are real resources of the caller, so each
request reaches the code that reads its body.

Bounded: about 2,000 requests, about a minute here. It prints the figure: requests sent and
how many answered 5xx. Before the bodies were checked at the door (`server.bodies.decode_shape`)
it found 13 answers 500 on the creation and the update: `inputs[].identifier` and
`consumer.sex` as a list or an object.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.server.test_schemathesis import _real_resources

#: What is put in place of a whole body: each JSON type, empty and not, and the edges of each.
HOSTILE: tuple[Any, ...] = (
    [],
    [1, "a", None],
    {},
    "",
    "text",
    0,
    -1,
    1.5,
    1e308,
    True,
    None,
    "\u0000",
    "x" * 5000,
)
#: What is put at each field: one value of each JSON type the fields are not all of (a null
#: is "not given" almost everywhere, and the texts' edges are the whole body's part).
HOSTILE_FIELDS: tuple[Any, ...] = (
    [1, "a", None],
    {"identifier": ["x"], "value": {"k": [1]}},
    "text",
    1e308,
    True,
)

#: Any JSON value, nested a little (Hypothesis' part).
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
#: Random values per operation, beside the walk.
RANDOM_EXAMPLES = 15
#: Requests the walk sends at once (the server answers each in its own thread).
CONCURRENT = 4
#: How deep the walk follows a body's schema.
MAX_DEPTH = 6

Path = tuple[str | int, ...]

CREATION: dict[str, Any] = {
    "templateId": "easy",
    "locale": "en_US",
    "delivery": {"channel": "email", "destination": "driver@example.com"},
}


def field_paths(schema: dict[str, Any], prefix: Path = ()) -> Iterator[Path]:
    """Every field of a JSON body `schema` (the document inlines its references)."""
    if len(prefix) > MAX_DEPTH:
        return
    for alternative in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        yield from field_paths(alternative, prefix)
    for name, property_schema in schema.get("properties", {}).items():
        yield (*prefix, name)
        yield from field_paths(property_schema, (*prefix, name))
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        yield (*prefix, "some-key")
        yield from field_paths(additional, (*prefix, "some-key"))
    items = schema.get("items")
    if isinstance(items, dict):
        yield (*prefix, 0)
        yield from field_paths(items, (*prefix, 0))


def with_value(base: Any, path: Path, value: Any) -> Any:
    """A copy of `base` with `value` at `path`, making the objects and arrays on the way."""
    if not path:
        return value
    first, rest = path[0], path[1:]
    if isinstance(first, int):
        items = copy.deepcopy(base) if isinstance(base, list) and base else [None]
        items[0] = with_value(items[0], rest, value)
        return items
    fields = copy.deepcopy(base) if isinstance(base, dict) else {}
    fields[first] = with_value(fields.get(first), rest, value)
    return fields


def _resources(http: httpx.Client, key: str) -> dict[str, str]:
    """Real resources of the caller, by path parameter name: those of the schemathesis test,
    a shared file, a webhook and a report request."""
    known = _real_resources(str(http.base_url), key)
    shared = http.put("/v1/inspection/shared/hostile", json={"source": "let x = 1\n"})
    assert shared.status_code in (200, 201), shared.text
    webhook = http.post(
        "/v1/notification/webhook", json={"url": "https://93.184.216.34/hook", "events": []}
    ).json()
    report = http.post(f"/v1/inspection/{known['inspection_id']}/report/request", json={}).json()
    return {
        **known,
        "name": "hostile",
        "webhook_id": str(webhook.get("_id") or webhook.get("id") or "0" * 24),
        "report_request_id": str(report.get("_id") or report.get("id") or "0" * 24),
    }


@contextmanager
def fuzzing(
    live_server: str, headers: dict[str, str]
) -> Iterator[tuple[httpx.Client, dict[str, Any], dict[str, str]]]:
    """A client of the caller (`CONCURRENT` connections), the OpenAPI document, and the
    caller's real resources by path parameter name (`_resources`)."""
    limits = httpx.Limits(max_connections=CONCURRENT)
    with httpx.Client(base_url=live_server, timeout=60, headers=headers, limits=limits) as http:
        document = http.get("/schema/openapi.json").json()
        yield http, document, _resources(http, headers["x-api-key"])


def _url(path: str, parameters: list[dict[str, Any]], known: dict[str, str]) -> str:
    for parameter in parameters:
        if parameter.get("in") != "path":
            continue
        name = parameter["name"]
        allowed = parameter.get("schema", {}).get("enum")
        value = known.get(name, "0" * 24)
        if allowed and value not in allowed:
            value = allowed[0]
        path = path.replace("{" + name + "}", value)
    return path


def _json_operations(
    document: dict[str, Any], known: dict[str, str]
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(method, URL, label, body schema) of each operation taking a JSON body, with the
    caller's real resources in the URL; `finish` last, so that the inspection stays open for
    the others."""
    found = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                url = _url(path, operation.get("parameters", []), known)
                schema = content["application/json"].get("schema", {})
                found.append((method, url, f"{method.upper()} {path}", schema))
    return sorted(found, key=lambda item: "/finish/" in item[2])


def answered_once_more_after_an_outage(
    call: Callable[[], httpx.Response], label: str, retried: list[str]
) -> httpx.Response:
    """`call()`'s answer; after a 503 `service_unavailable` with `Retry-After` (the database
    did not answer in time: on a loaded machine a burst of new PostgreSQL connections can take
    over `connect_timeout`), the answer to the same request sent again, `label` noted in
    `retried`. That 503 is the service's "retry" answer, not the input's doing; a 5xx the
    input causes comes again and fails the test."""
    response = call()
    if response.status_code == 503 and "retry-after" in response.headers:
        try:
            code = response.json().get("code")
        except ValueError:
            code = None
        if code == "service_unavailable":
            retried.append(label)
            time.sleep(0.5)
            response = call()
    return response


def test_no_hostile_body_gets_a_5xx(
    live_server: str, test_headers: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    failures: list[str] = []
    sent: list[int] = []
    retried: list[str] = []
    with fuzzing(live_server, test_headers) as (http, document, known):
        operations = _json_operations(document, known)
        assert len(operations) >= 15, [label for _, _, label, _ in operations]

        def send(request: tuple[str, str, str, Any]) -> None:
            method, url, label, body = request
            content = json.dumps(body, allow_nan=False)
            response = answered_once_more_after_an_outage(
                lambda: http.request(
                    method, url, content=content, headers={"content-type": "application/json"}
                ),
                label,
                retried,
            )
            sent.append(response.status_code)
            if response.status_code >= 500:
                failures.append(f"{label} {json.dumps(body)[:300]} -> {response.text[:300]}")

        for method, url, label, schema in operations:
            base: Any = CREATION if label == "POST /v1/inspection/{inspection_type}" else {}
            paths = list(dict.fromkeys(field_paths(schema)))
            walk = [(method, url, label, value) for value in HOSTILE] + [
                (method, url, label, with_value(base, field, value))
                for field in paths
                for value in HOSTILE_FIELDS
            ]
            with ThreadPoolExecutor(CONCURRENT) as pool:
                list(pool.map(send, walk))

            @given(field=st.sampled_from(paths or [()]), value=JSON)
            @settings(
                max_examples=RANDOM_EXAMPLES,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.generate],
            )
            def random_values(field: Path, value: Any) -> None:
                send((method, url, label, with_value(base, field, value)))  # noqa: B023

            random_values()
    server_errors = sum(status >= 500 for status in sent)
    with capsys.disabled():
        print(
            f"\nhostile bodies: {len(sent)} requests, {server_errors} answered 5xx "
            f"({len(retried)} sent again after a 503 service_unavailable)"
        )
    assert not failures, "\n".join(failures[:20])
