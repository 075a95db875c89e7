"""The built-in templates: every alias of the spec resolves, compiles with its fixed id and works
with a bare creation body (no required `create` input, no required product or consumer field)."""

from __future__ import annotations

import datetime as dt
import io
import re
from functools import cache
from typing import Any

import jsonschema
import pytest
from PIL import Image, ImageDraw

from inspectlang import builtins
from inspectlang.builtins import (
    ALIAS_TABLE,
    BUILTIN_TIMESTAMP,
    builtin_source,
    builtin_templates,
    get_builtin,
    get_builtin_by_id,
    is_alias,
)
from inspectlang.compiler import compile_source
from inspectlang.diagnostics import TemplateError
from inspectlang.manifest import ALIASES, INSPECTION_TYPES, Template
from runtime import (
    ImageUpload,
    InspectionState,
    add_image,
    create,
    declare_damage,
    finish,
    load_program,
    record_validation,
    start,
    to_api,
    update,
)

#: The spec's alias table ("Built-in templates and aliases"), written out independently.
SPEC_ALIASES = {
    ("easy", "car"),
    ("easy", "moto"),
    ("easy", "bike"),
    ("easy", "machinery"),
    ("easy", "goods"),
    ("easy", "people"),
    ("easy", "custom"),
    ("easy", "cellphone"),
    ("deep", "car"),
    ("deep", "moto"),
    ("damage", "car"),
}

PAIRS = sorted(SPEC_ALIASES)

#: The smallest creation body the spec allows: a locale and the delivery.
BARE_BODY: dict[str, Any] = {
    "locale": "es_AR",
    "delivery": {"channel": "email", "destination": "ana@example.com", "countryISO": "AR"},
}


def test_alias_table_matches_the_spec_and_the_manifest_contract() -> None:
    table_pairs = {(alias, kind) for alias, by_type in ALIAS_TABLE.items() for kind in by_type}
    manifest_pairs = {(alias, kind) for alias, kinds in ALIASES.items() for kind in kinds}
    assert table_pairs == SPEC_ALIASES
    assert manifest_pairs == SPEC_ALIASES
    assert len(builtin_templates()) == 11
    assert set(ALIAS_TABLE["easy"]) == set(INSPECTION_TYPES)


def test_builtin_ids_are_fixed_distinct_object_ids() -> None:
    ids = [template_id for by_type in ALIAS_TABLE.values() for template_id in by_type.values()]
    assert len(set(ids)) == len(ids) == 11
    assert all(re.fullmatch(r"[0-9a-f]{24}", template_id) for template_id in ids)
    assert sorted(t.id for t in builtin_templates()) == sorted(ids)


@pytest.mark.parametrize(("alias", "inspection_type"), PAIRS)
def test_builtin_compiles_with_its_fixed_id(alias: str, inspection_type: str) -> None:
    template = get_builtin(alias, inspection_type)
    assert template is not None
    # The id is written in the file itself, not only in the table.
    source = builtin_source(alias, inspection_type)
    assert f'id: "{ALIAS_TABLE[alias][inspection_type]}"' in source
    assert template.id == ALIAS_TABLE[alias][inspection_type]
    assert template.type == "built-in"
    assert template.inspectionType == inspection_type
    assert template.createdAt == template.updatedAt == BUILTIN_TIMESTAMP
    assert get_builtin_by_id(template.id) is template
    api = template.to_api(with_logic=False)
    assert api["_id"] == template.id
    assert api["type"] == "built-in"


@pytest.mark.parametrize(("alias", "inspection_type"), PAIRS)
def test_builtin_needs_nothing_at_creation(alias: str, inspection_type: str) -> None:
    template = get_builtin(alias, inspection_type)
    assert template is not None
    required_at_create = [
        i.identifier
        for i in template.inputs
        if "create" in i.stages and i.validationSchema.required
    ]
    assert required_at_create == []
    assert template.logic.requirements.product == []
    assert template.logic.requirements.consumer == []
    # The bare body is valid against the template's own schema.
    jsonschema.Draft3Validator(template.schema_).validate(BARE_BODY)


@pytest.mark.parametrize(("alias", "inspection_type"), PAIRS)
def test_builtin_schema_is_a_valid_draft3_schema(alias: str, inspection_type: str) -> None:
    template = get_builtin(alias, inspection_type)
    assert template is not None
    schema = template.schema_
    jsonschema.Draft3Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert {"locale", "delivery", "inputs"} <= set(schema["properties"])
    input_properties = schema["properties"]["inputs"]["properties"]
    assert set(input_properties) == {i.identifier for i in template.inputs}


@pytest.mark.parametrize(("alias", "inspection_type"), PAIRS)
def test_builtin_is_realistic(alias: str, inspection_type: str) -> None:
    """Every built-in asks for photos with validations, is translated, and has a verdict."""
    template = get_builtin(alias, inspection_type)
    assert template is not None
    assert len(template.images) >= 2
    assert all(image.validations for image in template.images)
    names = {v.validation for image in template.images for v in image.validations}
    assert "recaptured" in names
    assert template.logic.locales == ["en_US", "es_AR", "pt_BR"]
    for image in template.logic.images.values():
        assert {"es_AR", "pt_BR"} <= set(image.labels), image.name
    for spec in template.inputs:
        translations = template.logic.inputs[spec.identifier].translations
        assert {"es_AR", "pt_BR"} <= set(translations), spec.label
    verdict = template.logic.verdict
    assert verdict.approveWhen is not None or verdict.disapprove


def test_type_specific_validations() -> None:
    def validations(alias: str, kind: str) -> dict[str, set[str]]:
        template = get_builtin(alias, kind)
        assert template is not None
        return {i.side: {v.validation for v in i.validations} for i in template.images}

    car = validations("easy", "car")
    assert {"front", "back", "left", "right"} <= set(car)
    assert {"recaptured", "date", "distance", "complete", "plate"} <= car["front"]
    deep = validations("deep", "car")
    assert {"plate", "make", "model", "color", "damage"} <= deep["front"]
    people = validations("easy", "people")
    assert "face_comparison" in people["selfie"]
    assert {"dni", "birthdate", "full_name", "age", "sex"} <= people["dni"]
    cellphone = validations("easy", "cellphone")
    assert {"front", "back", "imei"} <= set(cellphone)
    machinery = validations("easy", "machinery")
    assert {"serial_plate", "hour_meter"} <= set(machinery)


def test_damage_builtin_turns_on_damage_declaration() -> None:
    template = get_builtin("damage", "car")
    assert template is not None
    assert [f.feature for f in template.features] == ["damage_declaration"]
    assert all("damage_declaration" in image.features for image in template.logic.images.values())
    assert any(rule.on.event == "damage_declared" for rule in template.logic.rules)


def test_deep_car_compares_declared_and_read_plate() -> None:
    template = get_builtin("deep", "car")
    assert template is not None
    checks = {check.key: check for check in template.logic.checks}
    assert "plate_matches" in checks
    text = repr(checks["plate_matches"].valid)
    assert "'product'" in text and "'plate'" in text


@pytest.mark.parametrize(
    ("alias", "inspection_type"),
    [("damage", "moto"), ("deep", "people"), ("deep", "bike"), ("hard", "car"), ("easy", "boat")],
)
def test_alias_not_available_gives_none(alias: str, inspection_type: str) -> None:
    assert get_builtin(alias, inspection_type) is None


def test_unknown_id_gives_none_and_aliases_are_recognised() -> None:
    assert get_builtin_by_id("000000000000000000000000") is None
    assert get_builtin_by_id("easy") is None
    assert is_alias("easy") and is_alias("deep") and is_alias("damage")
    assert not is_alias("5f0c0a000000000000000001")


def test_builtins_are_compiled_once_per_process() -> None:
    first = builtin_templates()
    second = builtin_templates()
    assert all(a is b for a, b in zip(first, second, strict=True))


def test_builtin_manifests_round_trip_and_are_reproducible() -> None:
    for alias, kind in PAIRS:
        template = get_builtin(alias, kind)
        assert template is not None
        assert Template.from_api(template.to_api()) == template
        again = compile_source(
            builtin_source(alias, kind), f"builtins/{kind}_{alias}.insp", template_kind="built-in"
        )
        assert again.logic.revision == template.logic.revision
        assert [i.identifier for i in again.images] == [i.identifier for i in template.images]
        assert [i.identifier for i in again.inputs] == [i.identifier for i in template.inputs]


def test_a_builtin_may_not_require_an_input_at_creation() -> None:
    source = builtin_source("easy", "custom") + (
        "\ninput reference\n"
        "    type: text\n"
        '    label: "Reference"\n'
        "    asked at: create\n"
        "    required\n"
    )
    with pytest.raises(TemplateError) as raised:
        compile_source(source, "custom_easy.insp", template_kind="built-in")
    assert [d.code for d in raised.value.diagnostics] == ["E031"]
    # The same input is fine in a company's own template.
    created = compile_source(source, "custom_easy.insp", template_kind="created")
    assert created.type == "created"


def test_builtin_files_are_package_data() -> None:
    assert builtins.builtin_filename("easy", "car") == "car_easy.insp"
    assert builtin_source("damage", "car").startswith("# Car damage declaration")


# ---------------------------------------------------------------------------------------------
# The built-ins at work: whole inspections through the real runtime.
# ---------------------------------------------------------------------------------------------

NOW = dt.datetime(2026, 3, 2, 12, 0, tzinfo=dt.UTC)


@cache
def photo() -> bytes:
    """A real JPEG, large enough for every built-in's `minimum photo size`, showing a shape
    (`complete` refuses blank photos)."""
    buffer = io.BytesIO()
    image = Image.new("RGB", (1600, 1200), (120, 130, 140))
    ImageDraw.Draw(image).rectangle((400, 300, 1200, 900), fill=(200, 60, 50))
    image.save(buffer, "JPEG")
    return buffer.getvalue()


def run_inspection(
    alias: str,
    inspection_type: str,
    *,
    body: dict[str, Any] | None = None,
    results: dict[str, tuple[float, str | None]] | None = None,
    detected: dict[tuple[str, str], list[dict[str, Any]]] | None = None,
    declared: tuple[dict[str, Any], ...] = (),
    inputs: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], InspectionState]:
    """Create (bare body plus `body`), start, upload every image, report every validation the
    runtime does not run itself (`results`: validation -> (confidence, result); 95 otherwise),
    declare damages, set inputs by name, finish: the spec's Inspection object and the state."""
    template = get_builtin(alias, inspection_type)
    assert template is not None
    program = load_program(template)
    state = create(program, {**BARE_BODY, **(body or {})}, inspection_type=inspection_type, now=NOW)
    state = start(program, state, now=NOW)
    product = state.products[0].id
    for image in template.images:
        upload = ImageUpload(
            photo(),
            "image/jpeg",
            identifier=image.identifier,
            date=NOW.isoformat(),
            latitude=-34.6037,
            longitude=-58.3816,
        )
        state, record = add_image(program, state, product, upload, now=NOW)
        for validation in record.validations:
            if not validation.run or validation.reported:
                continue
            confidence, result = (results or {}).get(validation.validation, (95, None))
            state = record_validation(
                program,
                state,
                record.id,
                {"validation": validation.validation, "confidence": confidence, "result": result},
                damages=(detected or {}).get((image.side, validation.validation), []),
                now=NOW,
            )
    for damage in declared:
        state = declare_damage(program, state, product, damage, now=NOW)
    if inputs:
        by_name = {i.name: identifier for identifier, i in template.logic.inputs.items()}
        items = [{"identifier": by_name[name], "value": value} for name, value in inputs.items()]
        state = update(program, state, {"inputs": items}, now=NOW)
    state = finish(program, state, now=NOW)
    return to_api(program, state), state


def variables(document: dict[str, Any]) -> dict[str, Any]:
    return {item["name"]: item["value"] for item in document["variables"]}


@pytest.mark.parametrize(("alias", "inspection_type"), PAIRS)
def test_a_bare_body_creates_an_inspection(alias: str, inspection_type: str) -> None:
    template = get_builtin(alias, inspection_type)
    assert template is not None
    state = create(load_program(template), BARE_BODY, inspection_type=inspection_type, now=NOW)
    assert state.status == "created"
    assert state.veredict == "not_defined"


#: Inputs a built-in requires at update (finishing without them is refused).
REQUIRED_UPDATES: dict[tuple[str, str], dict[str, Any]] = {
    ("deep", "car"): {"mileage": 85000},
    ("deep", "moto"): {"mileage": 12000},
}


@pytest.mark.parametrize(("alias", "inspection_type"), PAIRS)
def test_every_builtin_approves_an_inspection_where_every_photo_passes(
    alias: str, inspection_type: str
) -> None:
    document, state = run_inspection(
        alias, inspection_type, inputs=REQUIRED_UPDATES.get((alias, inspection_type))
    )
    assert (document["status"], document["veredict"], state.reasons) == (
        "completed",
        "approved",
        [],
    )
    assert all(image["approved"] for product in document["products"] for image in product["images"])
    assert state.ruleErrors == []


def test_easy_car_approves_four_good_photos() -> None:
    document, _ = run_inspection("easy", "car")
    assert document["veredict"] == "approved"
    assert variables(document) == {"approved_photos": 4}


def test_easy_car_disapproves_a_recaptured_photo() -> None:
    document, state = run_inspection("easy", "car", results={"recaptured": (20, None)})
    assert document["veredict"] == "disapproved"
    # The built-ins translate their reasons: the inspection is es_AR, the other locales are kept.
    assert state.reasons == ["Una foto fue tomada de una pantalla o de una impresión"]
    assert state.reasons_in("en_US") == ["A photo was taken from a screen or a print"]
    assert state.reasons_in("pt_BR") == ["Uma foto foi tirada de uma tela ou de uma impressão"]
    # `recaptured` is optional in the built-ins (docs/vision.md: no analyzer here runs it), so
    # a failed one leaves the photos approved; the `live_photos` check disapproves on its own.
    assert variables(document) == {"approved_photos": 4}


def test_deep_car_approves_when_the_declared_plate_is_read() -> None:
    document, _ = run_inspection(
        "deep",
        "car",
        body={"car": {"plate": " ab123cd "}},
        results={"plate": (97, "AB123CD")},
        inputs={"mileage": 85000},
    )
    assert document["veredict"] == "approved"
    assert variables(document) == {"damage_score": 0, "risk": "low"}


def test_deep_car_disapproves_a_plate_that_does_not_match() -> None:
    document, state = run_inspection(
        "deep",
        "car",
        body={"car": {"plate": "AB123CD"}},
        results={"plate": (97, "XX999XX")},
        inputs={"mileage": 85000},
    )
    assert document["veredict"] == "disapproved"
    assert state.reasons_in("en_US") == [
        "The plate in the photos does not match the declared plate"
    ]
    # The checks' names in the inspection's language (es_AR here): the built-ins translate them.
    assert document["locale"] == "es_AR"
    checks = {item["name"]: item["valid"] for item in document["globalValidations"]}
    assert checks == {
        "La patente coincide": False,
        "La marca coincide": True,
        "Fotos en vivo": True,
    }


def test_deep_car_scores_detected_damage() -> None:
    dent = {"part": "trunk", "damage": "dent", "severity": "minor", "percentage": 35}
    document, _ = run_inspection(
        "deep", "car", detected={("back", "damage"): [dent]}, inputs={"mileage": 1000}
    )
    assert variables(document) == {"damage_score": 35, "risk": "medium"}
    assert document["veredict"] == "approved"
    crash = {**dent, "severity": "severe", "percentage": 70}
    document, state = run_inspection(
        "deep", "car", detected={("front", "damage"): [crash]}, inputs={"mileage": 1000}
    )
    assert variables(document) == {"damage_score": 70, "risk": "high"}
    assert state.reasons_in("en_US") == ["The car has too much damage"]


def test_damage_car_scores_declared_damages() -> None:
    scratch = {"part": "door", "damage": "scratch", "severity": "minor", "percentage": 5}
    dent = {"part": "trunk", "damage": "dent", "severity": "moderate", "percentage": 15}
    document, _ = run_inspection("damage", "car", declared=(scratch, dent))
    assert document["veredict"] == "approved"
    assert variables(document)["condition_score"] == 80
    assert variables(document)["declared_damages"] == 2
    crash = {"part": "hood", "damage": "crash", "severity": "severe", "percentage": 60}
    document, state = run_inspection("damage", "car", declared=(crash,))
    assert variables(document)["condition_score"] == 60
    assert state.reasons_in("en_US") == ["The car has severe damage"]


def test_easy_people_disapproves_a_selfie_that_does_not_match() -> None:
    document, _ = run_inspection("easy", "people")
    assert document["veredict"] == "approved"
    document, state = run_inspection("easy", "people", results={"face_comparison": (40, None)})
    assert document["veredict"] == "disapproved"
    assert state.reasons_in("en_US") == ["The selfie does not match the identity card"]


def test_easy_cellphone_disapproves_a_damaged_screen() -> None:
    document, state = run_inspection("easy", "cellphone", results={"damage": (10, None)})
    assert variables(document) == {"screen_state": "damaged"}
    assert state.reasons_in("en_US") == ["The screen is damaged"]
