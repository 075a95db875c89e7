"""What the machine saw, on the reviewer's pages (issue 37): the audit trail's line for a
machine's result and a review-band reason, in the reader's language, the validation by its
name for people."""

from __future__ import annotations

from runtime.state import EventRecord
from server.review.service import _reworded
from server.web import history
from server.web.validations import validation_label

COLOR = {"kind": "color", "colors": ["white", "grey"], "colorless": True}


def test_the_history_says_what_the_machine_saw_for_each_result() -> None:
    events = [
        EventRecord(
            kind="validation",
            at="2026-03-02T12:00:00Z",
            data={"imageId": "i1", "validation": "plate", "confidence": 62.4, "result": "AB123CD"},
        ),
        EventRecord(
            kind="validation",
            at="2026-03-02T12:01:00Z",
            data={"imageId": "i1", "validation": "color", "confidence": 55.0,
                  "result": "white", "seen": COLOR},
        ),
    ]  # fmt: skip
    plate, color = history.steps(events, {"i1": "Frente"}, "es_AR", "UTC")
    plate_label = validation_label("plate", "es_AR")
    assert plate.photo == "Frente"
    assert plate.why == f"“{plate_label}”: se leyó AB123CD con 62%"
    assert color.why.startswith("color de carrocería entre blanco y gris")
    [_, english] = history.steps(events, {}, "en_US", "UTC")
    assert english.why.startswith("body color between white and grey")


def test_a_review_band_reason_is_reworded_for_its_reader() -> None:
    reason = {
        "code": "low_confidence",
        "message": "front: la confianza de color, 55, es menor que 70",
        "label": "front",
        "validation": "color",
        "confidence": 55.0,
        "reviewBelow": 70.0,
        "result": "white",
        "seen": COLOR,
        "machineSaw": "color de carrocería entre blanco y gris, …",
    }
    shown = _reworded(reason, "pt_BR")
    assert shown["machineSaw"].startswith("cor da carroceria entre branco e cinza")
    assert validation_label("color", "pt_BR") in shown["message"]
    # A reason without what the machine saw (a rule's, a missing result's) gets none.
    assert "machineSaw" not in _reworded({"code": "rule", "message": "Check it"}, "en_US")
