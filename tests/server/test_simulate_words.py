"""Issue 33: the editor's Simulate panel speaks the page's language. The runtime gives each
step's codes and values and the explanation; `server.dashboard.editor_words.SimulationWords`
words them from the catalogs. `inspectlang simulate` keeps its English lines."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.dashboard.template_pages import simulate_source

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
SOURCE = """template "Marked check"
    type: car
    locales: en_US, es_AR

image front
    label: "Front"
    validate complete

check known_make
    name: "Known make"
    name es_AR: "Marca conocida"
    valid when: lower(car.make) = "fiat"

check renault_fleet
    name: "Renault fleet"
    valid when: lower(car.make) = "renault"
    for information

verdict
    disapprove "Unknown make" when not checks.known_make
        reason es_AR: "Marca desconocida"
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""
SCRIPT = {
    "events": [
        {"event": "create", "body": {"car": {"plate": "AB123CD", "make": "Ford"}}},
        {"event": "start"},
        {"event": "finish"},
        {"event": "start"},
    ]
}
EXPECTED = {
    "es_AR": (
        [
            "#1 create: Creada, Sin veredicto",
            "#2 start: Iniciada, Sin veredicto",
            "#3 finish: Completada, Desaprobada",
            "#4 start: rechazado, el estado de la inspección no lo permite",
        ],
        [
            "Veredicto: Desaprobada (Completada)",
            "Falta la foto: Front",
            "  desaprobar “Marca desconocida” (línea 20): se cumple · decidió el veredicto",
            "  Marca conocida (línea 9): falla",
            "  Renault fleet (línea 14): falla · informativo",
            "      car.make = “Ford”",
        ],
    ),
    "pt_BR": (
        ["#3 finish: Concluída, Reprovada", "#4 start: recusado, o status da vistoria não permite"],
        ["Veredito: Reprovada (Concluída)", "  Renault fleet (linha 14): falha · informativo"],
    ),
    "en_US": (
        [
            "#3 finish: Completed, Disapproved",
            "#4 start: refused, the inspection's status does not allow it",
        ],
        ["Verdict: Disapproved (Completed)", "  Renault fleet (line 14): fails · for information"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("locale", sorted(EXPECTED))
def test_the_panel_words_steps_and_explanation_in_the_page_language(locale: str) -> None:
    result = simulate_source(SOURCE, SCRIPT, NOW, None, locale)
    steps, explained = EXPECTED[locale]
    assert all(step in result["lines"] for step in steps), result["lines"]
    lines = result["explanation"].splitlines()
    assert all(line in lines for line in explained), lines
    # The runtime's codes stay beside the words (the steps the panel's script may read).
    assert result["steps"][2]["status"] == "completed"
    assert result["steps"][3]["refused"]["code"] == "invalid_status_transition"
    if locale != "en_US":
        for english in ("status=", "REFUSED", "Verdict", "reason:", "Checks:", "for information"):
            assert english not in "\n".join([*result["lines"], result["explanation"]]), english


def test_a_broken_event_is_said_in_the_page_language() -> None:
    script = {"events": [{"event": "start"}]}
    result = simulate_source(SOURCE, script, NOW, None, "es_AR")
    assert result["problem"] == (
        "El evento 1 (start) viene antes del create: el primer evento tiene que ser un create."
    )


def test_the_command_line_keeps_its_english(tmp_path: Path) -> None:
    template, events = tmp_path / "t.insp", tmp_path / "events.json"
    template.write_text(SOURCE, encoding="utf-8")
    events.write_text(json.dumps(SCRIPT), encoding="utf-8")
    ran = subprocess.run(
        [Path(sys.executable).parent / "inspectlang", "simulate", str(template), str(events)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert "#3   finish          status=completed veredict=disapproved" in ran.stdout
    assert "#4   start           REFUSED invalid_status_transition:" in ran.stdout
    assert "Verdict: disapproved (status completed)" in ran.stdout
    assert "   Renault fleet [line 14]: False" in ran.stdout
