"""`load_program`: verification, the cache by revision, and the lookups the engine uses."""

from __future__ import annotations

from pathlib import Path

import pytest
from rt_support import NOW, ROOT, car_program, compile_template, create_body, ids, image_id

import runtime as rt
from inspectlang.manifest import Template
from runtime.program import DEFAULT_OTHERWISE, revision_of


def without_revision(template: Template, **logic_changes: object) -> Template:
    data = template.to_api()
    data["logic"]["revision"] = ""
    data["logic"].update(logic_changes)
    return Template.from_api(data)


def test_revision_falls_back_to_a_content_hash() -> None:
    manifest = without_revision(car_program().manifest)
    revision = revision_of(manifest)
    # the one identity of a manifest: what the compiler writes into `logic.revision`
    assert revision == car_program().manifest.logic.revision
    first = rt.load_program(manifest)
    assert rt.load_program(without_revision(car_program().manifest)) is first
    changed = rt.load_program(without_revision(car_program().manifest, sourceName="other"))
    assert changed is not first


def test_with_path_shares_the_compiled_code() -> None:
    program = car_program()
    reference = program.with_path("reference")
    assert (program.path, reference.path) == ("compiled", "reference")
    assert reference.functions is program.functions
    state = rt.create(reference, create_body(), inspection_type="car", now=NOW, ids=ids())
    assert state.variables == {"score": 100, "risk": "low", "uploads": 0}


def test_thresholds_and_features() -> None:
    program = car_program()
    front = program.image_spec(image_id(program, "front"))
    assert front is not None
    thresholds = {v.validation: program.threshold(front.identifier, v) for v in front.validations}
    assert thresholds == {"plate": 85, "color": 80, "complete": 80, "date": 80, "recaptured": 80}
    assert program.feature_enabled("damage_declaration")
    assert not program.feature_enabled("video_call")
    assert program.image_by_side("back") is not None
    assert program.image_by_side("roof") is None


def test_verdict_defaults() -> None:
    source = (
        'template "T"\n    type: car\n\nimage front\n    validate plate\n\n'
        "verdict\n    approve when images.front.approved\n"
    )
    program = rt.load_program(compile_template(source))
    assert program.otherwise == DEFAULT_OTHERWISE
    body = {"locale": "en_US", "delivery": {"channel": "e", "destination": "d"}, "car": {}}
    state = rt.create(program, body, inspection_type="car", now=NOW)
    state = rt.finish(program, state, now=NOW)
    assert (state.veredict, state.reasons) == (
        "disapproved",
        ["Required photo not uploaded: front", DEFAULT_OTHERWISE],
    )


@pytest.mark.parametrize("path", sorted((ROOT / "inspectlang" / "builtins").glob("*.insp")))
def test_every_builtin_template_loads(path: Path) -> None:
    source = path.read_text()
    program = rt.load_program(compile_template(source, str(path)))
    assert "def verdict(env):" in program.source


def test_people_have_no_product_data() -> None:
    source = (ROOT / "inspectlang" / "builtins" / "people_easy.insp").read_text()
    program = rt.load_program(compile_template(source))
    body = {"locale": "en_US", "delivery": {"channel": "sms", "destination": "+54"}}
    state = rt.create(program, body, inspection_type="people", now=NOW)
    with pytest.raises(rt.InspectionError) as caught:
        rt.update_product(program, state, state.products[0].id, {"people": {}}, now=NOW)
    assert caught.value.code == "invalid_body"
