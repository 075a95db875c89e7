"""Fuzz the resource API from its own OpenAPI document against the live server.

Every operation of this part of the API (`/v1/inspection...` except the report routes, which
R tests) gets a few generated requests with a valid API key: none may answer 5xx, every status
must be one the document declares, and every JSON body must match its declared schema. The run
is bounded (a handful of examples per operation) so it stays well under two minutes.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from PIL import Image
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS as REGISTRY
from schemathesis.checks import load_all_checks

from inspectlang.manifest import INSPECTION_TYPES
from server.images.content import IMAGE_FORMATS
from server.templates.schemas import SHARED_SOURCE_FORMAT, SOURCE_FORMAT
from tests.server.test_images import PHOTO

load_all_checks()


def _example_sources() -> list[str]:
    root = Path(__file__).resolve().parents[2]
    return [path.read_text() for path in sorted(root.glob("examples/*.insp"))]


#: Templates that compile, for the document's `format: insp` (a template source): every example
#: as it is, and small templates with any name, of every inspection type.
INSP_SOURCES = st.one_of(
    st.sampled_from(_example_sources()),
    st.builds(
        lambda name, kind: (
            f'template "{name}"\n    type: {kind}\n\nverdict\n    approve when true\n'
        ),
        st.text(
            # A name is one line of printable text (`server.boundary.name_problem`).
            st.characters(
                codec="utf-8", exclude_categories=("Cc", "Zl", "Zp"), exclude_characters='"\\'
            ),
            min_size=1,
            max_size=40,
        ).filter(str.strip),
        st.sampled_from(sorted(INSPECTION_TYPES)),
    ),
)
schemathesis.openapi.format(SOURCE_FORMAT, INSP_SOURCES)

#: Shared files, for `format: insp-shared` (what `include "NAME"` reads): the fleet example's,
#: and lets of any valid name.
SHARED_SOURCES = st.one_of(
    st.just(
        (Path(__file__).resolve().parents[2] / "examples/fleet/vehicle-common.insp").read_text()
    ),
    st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True).map(lambda name: f"let {name} = 1\n"),
)
schemathesis.openapi.format(SHARED_SOURCE_FORMAT, SHARED_SOURCES)


def _photo(kind: str, width: int, height: int, color: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format=kind)
    return out.getvalue()


#: Photos for the upload's `image` part, in each format the document names for it.
for _kind, _media_type in IMAGE_FORMATS.items():
    schemathesis.openapi.media_type(
        _media_type,
        st.builds(
            functools.partial(_photo, _kind),
            st.integers(1, 64),
            st.integers(1, 64),
            st.tuples(*[st.integers(0, 255)] * 3),
        ),
    )
#: Every check schemathesis has (issue 9 §5: "all checks"), from its own registry, so a check a
#: new version adds runs too: server errors, status codes, content types, response headers and
#: schemas, negative data rejected, positive data accepted, missing required headers,
#: unsupported methods, Allow headers, use after free, resource availability, ignored auth,
#: object-level authorization.
CHECKS = list(REGISTRY.get_all())

#: Operations on which `positive_data_acceptance` (a schema-valid request must succeed) does not
#: run: their bodies depend on the path's inspection type (a car's product fields differ from a
#: goods item's, an alias exists for some types only), which one OpenAPI operation over
#: `{inspection_type}` cannot state, and creation also follows the chosen template's own
#: schema. Every other check runs on them, and every check runs on every other operation: a
#: template's source is `format: insp`, a JSON body's multipart form is one `data` part holding
#: that JSON, an upload's image part is a decodable photo, and every text is free of NUL.
BODY_RULES_NOT_YET_DOCUMENTED = {
    "POST /v1/inspection/{inspection_type}",
    "PUT /v1/inspection/{inspection_type}/{product_id}",
}


#: Operations whose bodies carry the inspection's inputs: which identifiers exist and what each
#: takes is the template's own schema (`GET /v1/inspection/template/:id`), which the document
#: names but a generator cannot know. On these, a schema-valid request may be refused for
#: exactly those rules, with these codes; any other refusal fails as usual.
TEMPLATE_INPUT_RULES = {
    "PUT /v1/inspection/{inspection_id}": {"unknown_input", "invalid_input_value"},
    # A template saved with `testsMustPass` and its cases: whether a generated case passes is
    # the template's own behaviour (docs/api.md), so 422 `template_tests_failed` may answer it.
    "POST /v1/inspection/template": {"template_tests_failed"},
    "PUT /v1/inspection/template/{template_id}": {"template_tests_failed"},
}


def _accepted_but_for(codes: set[str]) -> Any:
    def positive_data_acceptance_but_template_inputs(ctx: Any, response: Any, case: Any) -> Any:
        if response.status_code in (400, 422) and response.json().get("code") in codes:
            return None
        return POSITIVE(ctx, response, case)

    return positive_data_acceptance_but_template_inputs


POSITIVE = next(check for check in CHECKS if check.__name__ == "positive_data_acceptance")


def checks_for(label: str) -> list[Any]:
    others = [check for check in CHECKS if check is not POSITIVE]
    if label in BODY_RULES_NOT_YET_DOCUMENTED:
        return others
    if label in TEMPLATE_INPUT_RULES:
        return [*others, _accepted_but_for(TEMPLATE_INPUT_RULES[label])]
    return CHECKS


@pytest.fixture(scope="module")
def fuzz_key(live_server: str, db: Any) -> str:
    from server.auth import create_company

    return create_company(db, "Fuzzing company", ["member-1"])["testKey"]


def _real_resources(base_url: str, key: str) -> dict[str, str]:
    """An existing template, inspection, product and image, so positive cases reach success."""
    headers = {"x-api-key": key}
    with httpx.Client(base_url=base_url, timeout=30, headers=headers) as http:
        template = http.post(
            "/v1/inspection/template",
            json={"source": 'template "Fuzzed"\n    type: car\n\nverdict\n    approve when true\n'},
        ).json()
        created = http.post(
            "/v1/inspection/car",
            json={
                "templateId": "easy",
                "locale": "en_US",
                "delivery": {"channel": "email", "destination": "a@example.com"},
            },
        ).json()
        image = http.post(
            f"/v1/inspection/image/{created['productId']}",
            files={"image": ("a.png", PHOTO, "image/png"), "data": (None, '{"side": "front"}')},
        ).json()
    return {
        "inspection_type": "car",
        "template_id": template["_id"],
        "inspection_id": created["inspectionId"],
        "product_id": created["productId"],
        "image_id": image["_id"],
    }


#: Generated requests per operation and mode (positive: schema-valid; negative: schema-breaking).
EXAMPLES_PER_OPERATION = 5


def test_api_answers_as_documented(live_server: str, fuzz_key: str) -> None:
    """Drive Hypothesis directly (schemathesis' pytest loader does not support pytest 9)."""
    schema = schemathesis.openapi.from_url(f"{live_server}/schema/openapi.json").include(
        path_regex=r"^/v1/inspection(?!.*/report)"
    )
    known = _real_resources(live_server, fuzz_key)
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 17
    for operation in operations:
        real = {k: v for k, v in known.items() if "{" + k + "}" in operation.path}
        for mode, path_parameters in (
            (GenerationMode.POSITIVE, real),
            (GenerationMode.POSITIVE, None),
            (GenerationMode.NEGATIVE, None),
        ):
            strategy = operation.as_strategy(generation_mode=mode, path_parameters=path_parameters)

            @given(case=strategy)
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.generate],
            )
            def run(case: Any) -> None:
                case.call_and_validate(
                    base_url=live_server,
                    headers={"x-api-key": fuzz_key},
                    checks=checks_for(operation.label),  # noqa: B023 - run() runs right here
                    timeout=30,
                )

            try:
                run()
            except BaseException as error:  # an ExceptionGroup too: collect all, then report
                failures.append(f"{operation.label} ({mode.value}, {path_parameters}): {error}")
    assert not failures, "\n\n".join(failures)


def test_schema_declares_every_resource_route(live_server: str) -> None:
    paths = httpx.get(f"{live_server}/schema/openapi.json", timeout=30).json()["paths"]
    expected = {
        "/v1/inspection": {"get"},
        "/v1/inspection/template": {"get", "post"},
        "/v1/inspection/template/{template_id}": {"get", "put"},
        "/v1/inspection/template/{template_id}/source": {"get"},
        "/v1/inspection/template/preview": {"get"},
        "/v1/inspection/{inspection_type}": {"post"},
        "/v1/inspection/{inspection_id}": {"get", "put"},
        "/v1/inspection/{inspection_id}/explanation": {"get"},
        "/v1/inspection/{inspection_type}/{product_id}": {"put", "post"},
        "/v1/inspection/finish/{inspection_id}": {"post"},
        "/v1/inspection/{inspection_id}/start": {"post"},
        "/v1/inspection/{inspection_id}/damage": {"post"},
        "/v1/inspection/image/{product_id}": {"post"},
        "/v1/inspection/image/token/{product_id}": {"post"},
        "/v1/inspection/image/{image_id}/content": {"get"},
        "/v1/inspection/{inspection_id}/image/{image_id}/validation": {"post"},
        "/v1/inspection/presign/detail/{inspection_id}": {"get", "post"},
    }
    for path, methods in expected.items():
        assert path in paths, path
        assert methods <= set(paths[path]), path
        for method in methods:
            responses = paths[path][method]["responses"]
            assert "400" in responses, (path, method)
            error = responses["400"]["content"]["application/json"]["schema"]
            assert error["required"] == ["code", "status", "description", "detail"]
