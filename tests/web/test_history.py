"""The history's words (server/web/history.py, shared by the inspection page, the review page,
the PDF and the CSV): a damage and an unlabelled photo read in the reader's language, in the
same words as the PDF (server/web/words.py), and a value of a company's own as written."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from runtime.state import EventRecord
from server.reports.data import ReportData
from server.reports.sections import Words, image_label
from server.web import history

AT = "2026-11-25T14:03:00+00:00"
DOCUMENT = {
    "products": [
        {
            "images": [
                {"_id": "i-front", "side": "front"},
                {"_id": "i-back", "side": "back", "label": "Atrás, con la patente"},
                {"_id": "i-own", "side": "trunk_open"},
            ],
            "replacedImages": [{"_id": "i-old", "side": "left"}],
        }
    ],
    "identity": {"images": [{"_id": "i-selfie", "side": "selfie"}]},
}


def test_an_unlabelled_photo_is_named_by_its_side_in_words() -> None:
    assert history.photo_names(DOCUMENT, "es_AR") == {
        "i-front": "Frente",
        "i-back": "Atrás, con la patente",  # a label is shown as written
        "i-own": "trunk_open",  # a side of the template's own, as written
        "i-old": "Lateral izquierdo",
        "i-selfie": "Selfie",
    }
    assert history.photo_names(DOCUMENT, "pt_BR")["i-old"] == "Lateral esquerda"
    assert history.photo_names(DOCUMENT, "en_US")["i-front"] == "Front"
    # "Back" as a side, not the consumer's button ("Volver")
    assert history.photo_names({"products": [{"images": [{"_id": "b", "side": "back"}]}]},
                               "es_AR") == {"b": "Parte trasera"}  # fmt: skip


def steps_of(events: list[EventRecord], locale: str) -> list[history.Step]:
    return history.steps(events, history.photo_names(DOCUMENT, locale), locale, "UTC")


def test_a_damage_reads_in_the_readers_language() -> None:
    recorded = EventRecord(
        kind="damage",
        at=AT,
        data={"damage": {"part": "trunk", "damage": "dent", "severity": "minor"}},
    )
    reviewed = EventRecord(
        kind="review",
        at=AT,
        data={
            "by": {"name": "Rosa"},
            "results": [
                {
                    "imageId": "i-front",
                    "validation": "recaptured",
                    "valid": True,
                    "damages": [
                        {"part": "rear bumper", "damage": "Scratch ", "severity": "severe"}
                    ],
                }
            ],
        },
    )
    found = steps_of([recorded, reviewed], "es_AR")
    damages = [(s.what, s.photo, s.why) for s in found if s.what == "Registró un daño"]
    assert damages == [
        ("Registró un daño", "", "baúl · abolladura · leve"),
        # a part of the company's own is shown as written; a code read whatever its case
        ("Registró un daño", "Frente", "rear bumper · rayón · grave"),
    ]
    [portuguese] = [s.why for s in steps_of([recorded], "pt_BR")]
    assert portuguese == "porta-malas · amassado · leve"
    [english] = [s.why for s in steps_of([recorded], "en_US")]
    assert english == "trunk · dent · minor"


def test_a_coded_value_the_machine_read_is_in_words() -> None:
    read = {"validation": "color", "confidence": 93.2, "result": "grey", "imageId": "i-front"}
    [step] = steps_of([EventRecord(kind="validation", at=AT, data=read)], "es_AR")
    assert (step.photo, step.why) == ("Frente", "“Color coincide”: se leyó gris con 93%")
    plate = {**read, "validation": "plate", "result": "AB123CD"}  # not a code: as written
    [step] = steps_of([EventRecord(kind="validation", at=AT, data=plate)], "es_AR")
    assert "AB123CD" in step.why


def test_the_history_and_the_pdf_say_the_same_words() -> None:
    words = Words("es_AR")
    [step] = steps_of(
        [EventRecord(kind="damage", at=AT, data={"damage": {"part": "hood", "damage": "broken"}})],
        "es_AR",
    )
    assert step.why == f"{words.word('hood')} · {words.word('broken')}" == "capó · roto"
    unlabelled = cast(ReportData, SimpleNamespace(template={}))  # the PDF reads its template
    pdf_side = image_label(unlabelled, None, "front", "es_AR")
    assert history.photo_names(DOCUMENT, "es_AR")["i-front"] == pdf_side == "Frente"
