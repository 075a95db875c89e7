"""The compiler: the manifest of a template is the spec's Template object plus `logic`, with stable
ids, a content revision, the given timestamps, and every error at once."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import BaseModel

import inspectlang
from inspectlang.compiler import check_source, compile_expression, compile_source
from inspectlang.diagnostics import TemplateError
from inspectlang.manifest import Template, revision_of, with_revision

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)
SYNTAX_EXAMPLE = re.search(
    r"```\n(.*?)```", (ROOT / "docs/design/syntax.md").read_text(encoding="utf-8"), re.S
)
assert SYNTAX_EXAMPLE is not None
EXAMPLE = SYNTAX_EXAMPLE.group(1)
SMALL = 'template "Small"\n    type: bike\nverdict\n    approve when count(images) = 0\n'
SPEC_TEMPLATE_KEYS = {
    "_id",
    "type",
    "inspectionType",
    "name",
    "createdAt",
    "updatedAt",
    "parameters",
    "variables",
    "images",
    "inputs",
    "features",
    "schema",
}


def namespace(template_id: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, "inspectlang:template:" + template_id)


def test_the_syntax_example_compiles_to_the_spec_template_object_plus_logic() -> None:
    template = compile_source(EXAMPLE, "motor.insp", now=NOW)
    data = template.to_api()
    assert set(data) == SPEC_TEMPLATE_KEYS | {"logic"}
    assert set(template.to_api(with_logic=False)) == SPEC_TEMPLATE_KEYS
    assert data["_id"] == "65a1f0c2b3d4e5f601234567"
    assert data["type"] == "created"
    assert data["inspectionType"] == "car"
    assert data["createdAt"] == data["updatedAt"] == "2026-03-04T05:06:07.891Z"
    assert data["parameters"]["maxAttempts"] == 3
    assert data["parameters"]["linkExpiresInHours"] == 48
    assert data["parameters"]["expiresInHours"] == 7 * 24
    assert data["variables"] == [
        {"name": "score", "type": "numeric", "initialValue": 100},
        {"name": "risk", "type": "text", "initialValue": "low"},
    ]
    front = data["images"][0]
    assert front["identifier"] == "image_1b4e28ba-2fa1-41d2-883f-0016d3cca427"
    assert [(v["validation"], v["required"], v["run"]) for v in front["validations"]] == [
        ("plate", True, True),
        ("color", True, True),
        ("damage", False, True),
        ("recaptured", True, False),
        ("complete", True, True),
    ]
    assert [i["type"] for i in data["inputs"]] == ["numeric", "select", "text"]
    assert data["features"] == [
        {
            "_id": hashlib.sha256(
                b"65a1f0c2b3d4e5f601234567:feature:damage_declaration"
            ).hexdigest()[:24],
            "feature": "damage_declaration",
        }
    ]
    logic = data["logic"]
    assert [r["on"]["event"] for r in logic["rules"]] == [
        "inspection_created",
        "damage_declared",
        "validation_failed",
    ]
    assert logic["verdict"]["otherwise"] == "Some photos were not approved"
    assert Template.from_api(data) == template


def test_derived_ids_follow_the_documented_formulas() -> None:
    source = (
        'template "Derived"\n    type: car\nimage front\n    validate plate\n'
        "input km\n    type: numeric\ncheck ok\n    valid when: inputs.km > 0\n"
        "verdict\n    approve when checks.ok\n"
    )
    template = compile_source(source)
    template_id = hashlib.sha256(b"template:Derived").hexdigest()[:24]
    assert template.id == template_id
    assert template.images[0].identifier == "image_" + str(
        uuid.uuid5(namespace(template_id), "image:front")
    )
    assert template.inputs[0].identifier == "input_" + str(
        uuid.uuid5(namespace(template_id), "input:km")
    )
    validation = template.images[0].validations[0]
    assert (
        validation.id
        == hashlib.sha256(f"{template_id}:validation:front:plate".encode()).hexdigest()[:24]
    )
    assert (
        template.logic.checks[0].id
        == hashlib.sha256(f"{template_id}:check:ok".encode()).hexdigest()[:24]
    )


def test_recompiling_gives_identical_ids_and_revision_but_new_timestamps() -> None:
    first = compile_source(EXAMPLE, "motor.insp", now=NOW)
    later = compile_source(EXAMPLE, "motor.insp", now=NOW + timedelta(days=1))
    assert first.createdAt != later.createdAt
    assert first.logic.revision == later.logic.revision
    assert first.model_dump(exclude={"createdAt", "updatedAt"}) == later.model_dump(
        exclude={"createdAt", "updatedAt"}
    )


def test_revision_is_the_sha256_of_the_manifest_json_without_timestamps() -> None:
    template = compile_source(EXAMPLE, "motor.insp", now=NOW)
    data = json.loads(template.model_dump_json(by_alias=True, exclude_none=True))
    del data["createdAt"], data["updatedAt"], data["logic"]["revision"]
    content = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    assert template.logic.revision == hashlib.sha256(content.encode()).hexdigest()


def test_the_revision_covers_everything_but_the_timestamps() -> None:
    template = compile_source(EXAMPLE, "motor.insp", now=NOW)
    renamed = template.model_copy(update={"name": "Other"})
    retimed = template.model_copy(update={"createdAt": "2030-01-01T00:00:00.000Z"})
    assert with_revision(renamed).logic.revision != template.logic.revision
    assert with_revision(retimed).logic.revision == template.logic.revision
    assert with_revision(template) == template


def test_a_changed_template_gets_a_new_revision() -> None:
    changed = EXAMPLE.replace("max attempts: 3", "max attempts: 4")
    assert changed != EXAMPLE
    assert compile_source(EXAMPLE).logic.revision != compile_source(changed).logic.revision


def test_timestamps_are_utc_with_z_whatever_the_given_zone() -> None:
    plus_three = datetime(2026, 3, 4, 8, 6, 7, tzinfo=timezone(timedelta(hours=3)))
    assert compile_source(SMALL, now=plus_three).createdAt == "2026-03-04T05:06:07.000Z"
    now_text = compile_source(SMALL).createdAt
    moment = datetime.fromisoformat(now_text.replace("Z", "+00:00"))
    assert abs(datetime.now(UTC) - moment) < timedelta(minutes=1)


def test_built_in_kind_is_reported_in_the_manifest() -> None:
    assert compile_source(SMALL, template_kind="built-in").type == "built-in"


def test_template_error_carries_every_error_and_renders_carets() -> None:
    source = (
        'template "Bad"\n    type: carr\nimage front\n    validate plat\n'
        "verdict\n    approve when scor > 1\n"
    )
    with pytest.raises(TemplateError) as caught:
        compile_source(source, "bad.insp")
    error = caught.value
    assert [(d.code, d.span.line, d.span.column, d.suggestion) for d in error.diagnostics] == [
        ("E016", 2, 11, "car"),
        ("E026", 4, 14, "plate"),
        ("E020", 6, 18, None),
    ]
    rendered = error.render()
    assert "bad.insp:2:11: error[E016]: unknown inspection type `carr`" in rendered
    assert "   2 |     type: carr\n" in rendered
    assert "\n" + " " * 17 + "^^^^\n" in rendered
    assert "did you mean `car`?" in rendered
    assert error.to_list()[0]["code"] == "E016"


def test_syntax_errors_do_not_bring_spurious_missing_declaration_errors() -> None:
    source = 'template "T"\n    type: car\nverdict\n    approve when = 1\n'
    codes = [d.code for d in check_source(source)]
    assert codes == ["E001"]


def test_a_file_over_one_megabyte_is_refused() -> None:
    source = SMALL + "# padding\n" * 110_000
    assert len(source.encode()) > 1_000_000
    assert [d.code for d in check_source(source)] == ["E005"]


def test_the_public_api_is_importable_from_the_package() -> None:
    assert inspectlang.compile_source is compile_source
    assert inspectlang.check_source is check_source
    assert inspectlang.compile_expression is compile_expression
    assert inspectlang.Template is Template
    assert inspectlang.TemplateError is TemplateError
    assert inspectlang.parse('template "P"\n    type: car\n').declarations[0].name == "P"
    assert inspectlang.format_source('template "P"\n    type:   car\n') == (
        'template "P"\n    type: car\n'
    )
    assert inspectlang.decompile(compile_source(SMALL)).startswith('template "Small"')
    assert inspectlang.Diagnostic.__name__ == "Diagnostic"
    assert set(inspectlang.__all__) <= set(dir(inspectlang))
    with pytest.raises(AttributeError):
        _ = inspectlang.no_such_name  # type: ignore[attr-defined]


# -- compile_expression ------------------------------------------------------------------------


def test_compile_expression_gives_typed_ir_with_spans_relative_to_the_expression() -> None:
    node = compile_expression("score * 2 > 10", variables={"score": "numeric"})
    assert node == {
        "op": "binary",
        "operator": ">",
        "left": {
            "op": "binary",
            "operator": "*",
            "left": {"op": "var", "name": "score", "type": "number", "span": [1, 1, 1, 6]},
            "right": {"op": "literal", "value": 2, "type": "number", "span": [1, 9, 1, 10]},
            "type": "number",
            "span": [1, 1, 1, 10],
        },
        "right": {"op": "literal", "value": 10, "type": "number", "span": [1, 13, 1, 15]},
        "type": "boolean",
        "span": [1, 1, 1, 15],
    }


def test_compile_expression_with_locals_and_product_fields() -> None:
    node = compile_expression(
        'i.approved and moto.plate = "AB"', inspection_type="moto", locals={"i": "image"}
    )
    assert node["left"] == {
        "op": "field",
        "of": {"op": "local", "name": "i", "type": "image", "span": [1, 1, 1, 2]},
        "name": "approved",
        "type": "boolean",
        "span": [1, 1, 1, 11],
    }
    assert node["right"]["left"]["op"] == "product"


def test_compile_expression_errors_point_into_the_expression() -> None:
    with pytest.raises(TemplateError) as caught:
        compile_expression('1 + "a"')
    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.code, diagnostic.span.line, diagnostic.span.column) == ("E023", 1, 1)
    with pytest.raises(TemplateError) as caught:
        compile_expression("1 +")
    assert caught.value.diagnostics[0].code == "E001"
    assert caught.value.diagnostics[0].span.line == 1
    with pytest.raises(TemplateError) as caught:
        compile_expression("1\n+ 2")
    assert caught.value.diagnostics[0].code == "E001"


# -- the shipped templates ---------------------------------------------------------------------

SHIPPED = sorted((ROOT / "examples").glob("*.insp")) + sorted(
    (ROOT / "inspectlang/builtins").glob("*.insp")
)


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_template_compiles_without_diagnostics(path: Path) -> None:
    kind = "built-in" if path.parent.name == "builtins" else "created"
    source = path.read_text(encoding="utf-8")
    assert [d.render(source) for d in check_source(source, str(path), template_kind=kind)] == []
    template = compile_source(source, str(path), template_kind=kind)
    assert template.type == kind


def test_importing_the_package_loads_no_parser_pydantic_or_jsonschema() -> None:
    code = (
        "import sys, inspectlang; "
        "print(sorted(m for m in ('lark', 'pydantic', 'jsonschema') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


def test_an_unknown_template_kind_is_the_callers_error() -> None:
    with pytest.raises(ValueError, match="template_kind must be one of"):
        compile_source(SMALL, template_kind="custom")


def test_the_compiled_manifest_equals_the_same_manifest_validated_from_json() -> None:
    """The compiler builds models without validation: they must hold what validation would
    (floats in float fields), so JSON, equality and the revision do not depend on the path."""
    template = compile_source(EXAMPLE, "motor.insp", now=NOW)
    loaded = Template.from_api(template.to_api())
    assert loaded == template
    assert loaded.model_dump_json(by_alias=True) == template.model_dump_json(by_alias=True)
    assert revision_of(loaded) == template.logic.revision
    assert isinstance(template.parameters.minConfidence, float)


def _models(value: object) -> list[BaseModel]:
    if isinstance(value, BaseModel):
        return [value, *(m for item in value.__dict__.values() for m in _models(item))]
    if isinstance(value, dict):
        return [m for item in value.values() for m in _models(item)]
    if isinstance(value, list):
        return [m for item in value for m in _models(item)]
    return []


def test_every_model_of_a_manifest_is_what_model_construct_builds() -> None:
    """The compiler's own constructor (`_construct`, faster than pydantic's) builds each model
    exactly as `model_construct` would from the same values: the same `__dict__` in the same
    order, the same fields set, no extra, no private."""
    template = compile_source(EXAMPLE, "motor.insp", now=NOW)
    models = _models(template)
    assert len({type(model) for model in models}) > 15
    for model in models:
        given = {name: getattr(model, name) for name in model.model_fields_set}
        built = type(model).model_construct(**given)
        assert list(built.__dict__.items()) == list(model.__dict__.items())
        assert built.model_fields_set == model.model_fields_set
        assert built.__pydantic_extra__ is None and model.__pydantic_extra__ is None
        assert built.__pydantic_private__ is None and model.__pydantic_private__ is None


def test_compiling_builds_no_pydantic_schema() -> None:
    """Cold start: a fresh interpreter compiles a built-in without building the manifest
    models' pydantic schemas (deferred until validation or serialization)."""
    code = (
        "from pathlib import Path\n"
        "from inspectlang.compiler import compile_source\n"
        "from inspectlang import manifest\n"
        "path = Path('inspectlang/builtins/car_easy.insp')\n"
        "template = compile_source(path.read_text(encoding='utf-8'), str(path))\n"
        "assert len(template.logic.revision) == 64\n"
        "print(manifest.Template.__pydantic_complete__,"
        " manifest.Parameters.__pydantic_complete__)\n"
        "template.to_api()\n"
        "print(manifest.Template.__pydantic_complete__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split() == ["False", "False", "True"]
