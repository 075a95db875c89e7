"""Issue 33: the template editor's review says what the runtime found in the page's language.
The runtime gives codes and values (`runtime.proofs.cases`, `runtime.cli.ScriptError`); every
code it can give has its words in `server.dashboard.editor_words`, and each is translated."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from runtime.proofs import cases
from runtime.proofs.cases import CasesError, read_cases
from server.dashboard import editor_words
from server.dashboard.editor_words import Words


def test_every_case_problem_and_tests_file_problem_has_its_words() -> None:
    assert set(cases.CASE_PROBLEMS) == set(editor_words.CASE_PROBLEMS) | {"event_invalid"}
    # `unreadable_file` is a file on disk (`inspectlang test`), never the editor's field.
    assert set(cases.TESTS_FILE_PROBLEMS) - {"unreadable_file"} == set(
        editor_words.TESTS_FILE_PROBLEMS
    )


def test_every_script_error_code_has_its_words() -> None:
    """The codes `ScriptError` is raised with in the runtime, read from its source."""
    source = Path("runtime/cli.py").read_text(encoding="utf-8")
    raised = set(re.findall(r'raise ScriptError\([^)]*?, "(\w+)"', source))
    assert raised and raised - {"events_not_list"} <= set(editor_words.EVENT_PROBLEMS)


#: One failure of each code, as a case's `failures` item says it.
FAILURES: list[dict[str, Any]] = [
    {"code": "start_invalid", "start": "ayer", "detail": "Invalid isoformat string: 'ayer'"},
    {"code": "event_refused", "event": 3, "kind": "finish", "error": "update_inputs_missing"},
    {"code": "event_refused", "event": 3, "kind": "finish", "error": "some_new_code"},
    *[
        {"code": "event_invalid", "event": 2, "kind": "image", "reason": reason, "name": "x"}
        for reason in editor_words.EVENT_PROBLEMS
    ],
    {"code": "status_differs", "actual": "review", "expected": "completed"},
    {"code": "veredict_differs", "actual": None, "expected": "approved"},
    {"code": "reasons_differ", "actual": [], "expected": ["Too old"]},
    {"code": "reason_missing", "reason": "Too old", "actual": ["Too many kilometres"]},
]


@pytest.mark.parametrize("locale", ["es_AR", "pt_BR"])
def test_each_failure_is_said_in_spanish_and_portuguese(locale: str) -> None:
    english, words = Words("en_US"), Words(locale)
    for failure in FAILURES:
        said = words.case_problem(failure)
        assert said != english.case_problem(failure), failure
        assert "%(" not in said and said[0].isupper(), said
    assert "“Too old”" in words.case_problem(FAILURES[-1])
    assert "some_new_code" in words.case_problem(FAILURES[2])  # a code without words: itself


#: A tests document of each kind of mistake `read_cases` names.
BROKEN: list[Any] = [
    [],
    {"cases": [{}] * 201},
    {"cases": [1]},
    {"cases": [{"name": ""}]},
    {"cases": [{"name": "a", "events": []}]},
    {"cases": [{"name": "a", "events": [{}] * 201}]},
    {"cases": [{"name": "a", "events": [1]}]},
    {"cases": [{"name": "a", "events": [{"event": "image", "width": 0}]}]},
    {"cases": [{"name": "a", "events": [{"event": "image", "width": 4096, "height": 4096}] * 13,
                "expect": {"status": "completed"}}] * 2},
    {"cases": [{"name": "a", "events": [{}], "expect": {}}]},
    {"cases": [{"name": "a", "events": [{}], "expect": {"verdict": "approved"}}]},
    {"cases": [{"name": "a", "events": [{}], "expect": {"status": 1}}]},
    {"cases": [{"name": "a", "events": [{}], "expect": {"reasons": "Too old"}}]},
]  # fmt: skip


def test_each_unreadable_tests_field_is_said_with_its_case() -> None:
    spanish, english = Words("es_AR"), Words("en_US")
    codes = set()
    for document in BROKEN:
        with pytest.raises(CasesError) as raised:
            read_cases(document)
        codes.add(raised.value.code)
        said = spanish.unreadable_tests(raised.value)
        assert said != english.unreadable_tests(raised.value) and "%(" not in said
        if raised.value.case is not None:
            assert said.startswith(f"Caso {raised.value.case + 1}"), said
    assert codes == set(editor_words.TESTS_FILE_PROBLEMS)
    with pytest.raises(CasesError) as raised:
        read_cases(BROKEN[7])
    assert spanish.unreadable_tests(raised.value) == (
        "Caso 1 (a): El ancho de la foto del evento 1 tiene que ser un número entero de píxeles "
        "entre 1 y 4096."
    )


def test_an_example_inspections_facts_in_words() -> None:
    words = Words("es_AR")
    assert words.fact({"name": "mileage", "value": 150000.5}) == "mileage = 150.000,5"
    assert words.fact({"name": "product.color", "value": "grey"}) == "product.color = gris"
    assert words.fact({"name": "product.plate", "value": "AB123CD"}) == "product.plate = “AB123CD”"
    assert words.fact({"name": "insured", "value": True}) == "insured = sí"
    photo = {"photo": "front", "results": [{"validation": "plate", "result": 93}]}
    assert words.fact(photo) == "foto Frente (plate: 93)"
    damage = {"damage": {"part": "trunk", "damage": "dent", "severity": "minor"}}
    assert words.fact(damage) == "un daño declarado: baúl · abolladura · leve"


def test_every_decision_kind_has_its_words() -> None:
    assert set(cases.DECISION_TEXTS) == set(editor_words.DECISIONS)
    english, spanish = Words("en_US"), Words("es_AR")
    for kind in cases.DECISION_TEXTS:
        decision = cases.Decision(kind, 14, "plausible_mileage").to_json()
        said = spanish.decision(decision)
        assert said != english.decision(decision) and "%(" not in said, kind
    otherwise = cases.Decision("otherwise", 14).to_json()
    assert spanish.decision(otherwise) == "la línea approve 14 cuando no se cumple (otherwise)"


def test_a_refused_save_is_said_by_its_code() -> None:
    spanish = Words("es_AR")
    assert spanish.refused_save("invalid_template", "…", has_lines=False) == (
        "El código de la plantilla tiene más de 200.000 caracteres."
    )
    assert spanish.refused_save("invalid_template", "…", has_lines=True) == (
        "La plantilla no se puede guardar: los problemas se muestran en sus líneas."
    )
    assert spanish.refused_save("template_type_changed", "…", has_lines=False).startswith(
        "Una revisión no puede cambiar el tipo de inspección"
    )
    assert spanish.refused_save("some_new_code", "In English.", has_lines=False) == "In English."
