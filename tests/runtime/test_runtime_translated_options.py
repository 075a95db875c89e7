"""Regression: an `es_AR` inspection refused its own option labels ("Particular").

A select value may be sent as the template's label, the option key, or the label in any locale
the template declares; it is stored as the template's label.
"""

from __future__ import annotations

from typing import Any

import pytest

import runtime as rt
from tests.runtime.rt_support import car_program, created, input_id


def _use_value(value: Any, locale: str = "es_AR") -> Any:
    program = car_program()
    inputs = [
        {"identifier": input_id(program, "Mileage"), "value": 1},
        {"identifier": input_id(program, "Use"), "value": value},
    ]
    state = created(program, inputs=inputs, locale=locale)
    return state.inputs[input_id(program, "Use")]


@pytest.mark.parametrize("sent", ["Private", "private", "Particular"])
def test_every_name_of_an_option_is_stored_as_the_template_label(sent: str) -> None:
    stored = _use_value(sent)
    value = stored["value"] if isinstance(stored, dict) else stored
    assert value == "Private"


def test_a_label_no_locale_declares_is_still_refused() -> None:
    with pytest.raises(rt.InspectionError) as raised:
        _use_value("Privado")
    assert raised.value.code == "invalid_input_value"
    assert raised.value.errors[0]["code"] == "option"
