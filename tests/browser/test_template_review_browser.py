"""Issue 33 in the dashboard's template editor, in a real Chromium at 360 px: a template saved
through the API with its template tests opens in the editor with its cases; the author raises
the mileage limit and adds a case, presses save, and sees before anything is stored what the
revision approves that the saved one refused (an example inspection, with how each revision
ends) and the failing case, marked at its line in the tests and at the verdict line that decided
it; confirms, and the API answers revision 2 with the three cases. The same review in es_AR and
pt_BR.
Screenshots under tests/artifacts/test_template_review_browser/."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

import httpx
import pytest

from runtime.proofs.cases import case_lines
from server.dashboard import accounts
from tests.browser.test_dashboard_browser import PASSWORD, WIDTH, look, sign_in
from tests.server.test_template_tests_api import HIGH, LOW, MIDDLE, MILEAGE


@pytest.fixture(scope="module")
def team(db: Any) -> dict[str, Any]:
    from server.auth import create_company

    company = create_company(db, f"Gate Insurance {secrets.token_hex(2)}", ["driver-1"])
    email = f"author-{secrets.token_hex(3)}@gate.example.com"
    accounts.create_account(db, company["companyId"], email, "owner", PASSWORD)
    return {**company, "email": email}


def _saved(live_server: str, team: dict[str, Any], n: int) -> dict[str, Any]:
    """Template number `n`, revision 1, saved through the API with two passing cases."""
    with httpx.Client(base_url=live_server, timeout=60) as api:
        created = api.post(
            "/v1/inspection/template",
            json={"source": MILEAGE.format(n=n, limit=100000), "tests": {"cases": [LOW, HIGH]}},
            headers={"x-api-key": team["testKey"]},
        )
    assert created.status_code == 201, created.text
    assert created.json()["testResults"]["passed"] is True
    return dict(created.json())


@pytest.fixture(scope="module")
def saved(live_server: str, team: dict[str, Any]) -> dict[str, Any]:
    return _saved(live_server, team, 1)


def _edit(page: Any, source_limit: str) -> None:
    """Raise the limit in the source and add the 150,000 km case to the tests."""
    source = page.locator("#source")
    source.fill(source.input_value().replace("100000", source_limit))
    tests = page.locator("#tests")
    cases = json.loads(tests.input_value())
    cases["cases"].append(MIDDLE)
    tests.fill(json.dumps(cases, indent=2))


def test_the_editor_reviews_diff_and_tests_before_saving(
    live_server: str,
    team: dict[str, Any],
    saved: dict[str, Any],
    new_phone: Any,
    screenshot: Any,
    axe_check: Any,
) -> None:
    _context, page, _log = new_phone(width=WIDTH)
    sign_in(page, live_server, team["email"])
    page.goto(f"{live_server}/dashboard/templates/{saved['_id']}")
    assert json.loads(page.get_by_label("Template tests (JSON)").input_value()) == {
        "cases": [LOW, HIGH]
    }
    _edit(page, "160000")
    page.get_by_role("button", name="Save as a new revision").click()
    review = page.locator("#review")
    review.wait_for(state="visible", timeout=60_000)
    text = review.inner_text()
    assert "Before you save" in text
    assert "Approved by this revision and not by the saved one: for example: mileage = " in text
    assert "the saved revision: Disapproved (Completed): Too many kilometres" in text
    assert "this revision: Approved (Completed)" in text
    assert "Approved by the saved revision and not by this one: none" in text
    assert "2 of 3 cases pass" in text
    tests_text = page.locator("#tests").input_value()
    case_line = case_lines(tests_text)[2]  # where the third case's object begins
    failing = review.locator("li.case.failed")
    assert failing.count() == 1
    assert failing.inner_text().startswith(f"✗ {MIDDLE['name']}: fails")
    assert f"tests line {case_line}" in failing.inner_text()
    assert "decided at template line 14" in failing.inner_text()
    assert "Verdict Approved, expected Disapproved." in failing.inner_text()
    # Marked at their place: the template's approve line and the case's first line.
    assert "✗ 14" in page.locator("#gutter").inner_text().splitlines()
    assert f"✗ {case_line}" in page.locator("#tests-gutter").inner_text().splitlines()
    look(page, "01-review-before-save", screenshot, axe_check)
    with httpx.Client(base_url=live_server, timeout=60) as api:
        before = api.get(
            f"/v1/inspection/template/{saved['_id']}", headers={"x-api-key": team["testKey"]}
        ).json()
    assert before["revision"] == 1  # nothing stored yet

    page.get_by_role("button", name="Confirm and save").click()
    page.wait_for_url(re.compile(r"\?saved=1$"))
    look(page, "02-saved", screenshot, axe_check)
    with httpx.Client(base_url=live_server, timeout=60) as api:
        after = api.get(
            f"/v1/inspection/template/{saved['_id']}", headers={"x-api-key": team["testKey"]}
        ).json()
    assert after["revision"] == 2
    assert after["tests"] == {"cases": [LOW, HIGH, MIDDLE]}
    assert json.loads(page.locator("#tests").input_value()) == after["tests"]


#: Per browser locale: the sign-in and save buttons, the review's words, the button to close it.
WORDS = {
    "es-AR": ("Iniciar sesión", "Guardar como nueva revisión",
              ["Antes de guardar", "Qué decide distinto esta revisión",
               "Pruebas de la plantilla", "Pasan", "cobertura de decisiones", "por ejemplo"],
              "Seguir editando"),
    "pt-BR": ("Entrar", "Salvar como nova revisão",
              ["Antes de salvar", "O que esta revisão decide de outro modo",
               "Testes do modelo", "Passam", "cobertura de decisões", "por exemplo"],
              "Continuar editando"),
}  # fmt: skip


@pytest.mark.parametrize("locale", sorted(WORDS))
def test_the_review_in_spanish_and_portuguese_and_keep_editing(
    live_server: str,
    team: dict[str, Any],
    saved: dict[str, Any],
    new_phone: Any,
    screenshot: Any,
    axe_check: Any,
    locale: str,
) -> None:
    sign_in_button, save_button, expected, keep_editing = WORDS[locale]
    _context, page, _log = new_phone(width=WIDTH, locale=locale)
    page.goto(f"{live_server}/dashboard/sign-in")
    page.locator("#email").fill(team["email"])
    page.locator("#password").fill(PASSWORD)
    page.get_by_role("button", name=sign_in_button).click()
    page.wait_for_load_state()
    page.goto(f"{live_server}/dashboard/templates/{saved['_id']}")
    source = page.locator("#source")
    source.fill(source.input_value().replace(" > 1", " > 2", 1))  # the limit doubled, or more
    page.get_by_role("button", name=save_button).click()
    review = page.locator("#review")
    review.wait_for(state="visible", timeout=60_000)
    text = review.inner_text()
    for words in expected:
        assert words in text, (words, text)
    assert "Before you save" not in text and "for example" not in text
    assert "veredict is" not in text and "(completed)" not in text
    look(page, f"03-review-{locale}", screenshot, axe_check)
    page.get_by_role("button", name=keep_editing).click()
    assert review.is_hidden()


def test_a_failing_case_is_said_in_spanish_and_the_revision_is_saved(
    live_server: str, team: dict[str, Any], new_phone: Any, screenshot: Any, axe_check: Any
) -> None:
    """An es_AR author saves a revision whose tests fail in every way the runtime names: a
    verdict and reasons that differ, an input the template lacks, an event before the create.
    The review before the save says each in Spanish (worded from the runtime's codes, values in
    words: 'Desaprobada', '150.000'), with no English sentence of the runtime left; a tests field
    that is not JSON is refused in Spanish too; confirmed, the API answers revision 2 with the
    failing cases stored."""
    template_id = _saved(live_server, team, 5)["_id"]
    _context, page, _log = new_phone(width=WIDTH, locale="es-AR")
    page.goto(f"{live_server}/dashboard/sign-in")
    page.locator("#email").fill(team["email"])
    page.locator("#password").fill(PASSWORD)
    page.get_by_role("button", name="Iniciar sesión").click()
    page.wait_for_load_state()
    page.goto(f"{live_server}/dashboard/templates/{template_id}")
    tests = page.locator("#tests")
    tests.fill("{oops")
    page.get_by_role("button", name="Guardar como nueva revisión").click()
    status = page.locator("#review-status")
    status.get_by_text("no son JSON").wait_for(timeout=60_000)
    assert status.inner_text() == (
        "Problema: Las pruebas de la plantilla no son JSON válido: línea 1, columna 2."
    )
    look(page, "04-tests-not-json-es-AR", screenshot, axe_check)  # the sentence wraps at 360 px
    wrong = {**HIGH, "expect": {"veredict": "approved", "reasons": []}}
    unknown = {
        "name": "una pregunta que no existe",
        "events": [
            {"event": "start"},
            {"event": "create", "body": {"inputs": [{"input": "kilometraje", "value": 1}]}},
        ],
        "expect": {"status": "started"},
    }
    tests.fill(json.dumps({"cases": [LOW, wrong, unknown, MIDDLE]}, indent=2))
    source = page.locator("#source")
    source.fill(source.input_value().replace("100000", "160000"))
    page.get_by_role("button", name="Guardar como nueva revisión").click()
    review = page.locator("#review")
    review.wait_for(state="visible", timeout=60_000)
    failing = review.locator("li.case.failed")
    assert failing.count() == 3
    said = [failing.nth(index).locator("ul.problems").inner_text() for index in range(3)]
    assert said[0].splitlines() == [
        "Veredicto: Desaprobada; se esperaba: Aprobada.",
        "Los motivos fueron: “Too many kilometres”; se esperaban exactamente: ningún motivo.",
    ]
    assert said[1].splitlines() == [
        "El evento 1 (start) viene antes del create: el primer evento tiene que ser un create.",
        "El evento 2 (create) nombra una pregunta que la plantilla no tiene: kilometraje.",
        "Estado: sin inspección; se esperaba: Iniciada.",
    ]
    assert said[2] == "Veredicto: Aprobada; se esperaba: Desaprobada."
    text = review.inner_text()
    assert "Pasan 1 de 4 casos; cobertura de decisiones 66,7%." in text
    assert "Decisiones que ningún caso pone a prueba: 1" in text
    review.locator("details.missed summary").click()
    assert review.locator("details.missed li").all_inner_texts() == [
        "la línea approve 14 cuando no se cumple (otherwise)"
    ]
    assert re.search(r"por ejemplo: mileage = 1\d\d\.\d\d\d", text), text
    # The runtime's sentences, in the problems and the difference (a case's name is the author's).
    worded = "\n".join([*said, review.locator("section.changes").inner_text()])
    for english in ("veredict is", "reasons are", "event 1", "refused:", ", expected", "named"):
        assert english not in worded, (english, worded)
    review.scroll_into_view_if_needed()
    look(page, "05-failing-cases-es-AR", screenshot, axe_check)

    page.get_by_role("button", name="Confirmar y guardar").click()
    page.wait_for_url(re.compile(r"\?saved=1$"))
    with httpx.Client(base_url=live_server, timeout=60) as api:
        after = api.get(
            f"/v1/inspection/template/{template_id}", headers={"x-api-key": team["testKey"]}
        ).json()
    assert after["revision"] == 2
    assert after["tests"] == {"cases": [LOW, wrong, unknown, MIDDLE]}
