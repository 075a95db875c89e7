"""The Inspection object vectors (issue 38): `runtime.to_api` writes, byte for byte, the JSON
stored for each state in `api_view_vectors/` (key order, absent keys against nulls, whole
numbers against decimals), over every product type, persons' reviews, retakes, replaced and
extra photos, identity entities and two locales. `api_view_vectors/write.py` wrote them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from api_view_vectors.templates import program_of

import runtime as rt
from inspectlang.manifest import CONSUMER_FIELDS, INSPECTION_TYPES
from runtime import api_view
from runtime.program import Program
from runtime.state import InspectionState

VECTORS = Path(__file__).resolve().parent / "api_view_vectors"
_programs: dict[str, Program] = {}


def _vectors() -> Iterator[Any]:
    for path in sorted(VECTORS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for vector in data["vectors"]:
            yield pytest.param(
                path.stem, data["template"], vector, id=f"{path.stem}: {vector['name']}"
            )


def test_the_vectors_cover_every_product_type_and_a_persons_part() -> None:
    documents = [vector.values[2]["inspection"] for vector in _vectors()]
    assert {d["type"] for d in documents} == {
        "car", "moto", "bike", "machinery", "goods", "people", "custom", "cellphone",
    }  # fmt: skip
    products = [p for d in documents for p in d["products"]]
    images = [i for p in products for i in p["images"]]
    assert any(p.get("replacedImages") for p in products)
    assert any(p["extraImages"] for p in products)
    assert any(p["damages"] for p in products)
    assert any(i.get("label") for i in images)
    assert any(i["capture"]["device"] for i in images)
    assert any(v.get("note") for i in images for v in i["validations"])
    assert any(i.get("entities") for d in documents for i in d["identity"]["images"])
    assert any(d["custom"]["images"] for d in documents)
    reviews = [d["review"] for d in documents if d["review"]]
    assert any(r.get("retake") for r in reviews) and any(r["decisions"] for r in reviews)
    assert any(r["assignee"] for r in reviews) and any(r["pending"] for r in reviews)
    assert {d["locale"] for d in documents} >= {"en_US", "es_AR"}


@pytest.mark.parametrize(("name", "template", "vector"), list(_vectors()))
def test_to_api_writes_the_stored_bytes(
    name: str, template: dict[str, Any], vector: dict[str, Any]
) -> None:
    program = _programs.get(name)
    if program is None:
        program = _programs[name] = program_of(template)
    state = InspectionState.model_validate(vector["state"])
    written = json.dumps(rt.to_api(program, state), ensure_ascii=False)
    assert written == json.dumps(vector["inspection"], ensure_ascii=False)


def test_the_views_name_every_product_type_and_consumer_field_of_the_vocabulary() -> None:
    """`Product` and `Identity` spell out, for mypy and the OpenAPI document, keys that come
    from `inspectlang.manifest`'s tables: they stay equal."""
    common = {"_id", "type", "images", "extraImages", "inputs", "damages", "replacedImages"}
    assert set(api_view.Product.__annotations__) - common == set(INSPECTION_TYPES)
    consumer = get_type_hints(api_view.Identity)
    for holder in api_view.ImagesHolder.__annotations__:
        consumer.pop(holder)
    json_types = {"text": str | None, "date": str | None, "number": float | None}
    assert consumer == {name: json_types[kind] for name, kind in CONSUMER_FIELDS.items()}
