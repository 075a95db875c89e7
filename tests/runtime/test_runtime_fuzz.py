"""Bad input of any shape gets an `InspectionError` with a known code, never a crash."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rt_support import NOW, at, car_program, create_body, ids, input_id, jpeg

import runtime as rt
from runtime import InspectionError
from runtime.errors import ERROR_CODES

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = [
    "locale",
    "delivery",
    "car",
    "consumer",
    "inputs",
    "initialStatus",
    "metadata",
    "producer",
]


def mutated_bodies() -> st.SearchStrategy[dict[str, Any]]:
    program = car_program()
    mileage = input_id(program, "Mileage")
    return st.fixed_dictionaries(
        {},
        optional={
            **{name: json_values for name in FIELDS},
            "inputs": st.lists(
                st.fixed_dictionaries(
                    {
                        "identifier": st.sampled_from([mileage, input_id(program, "Use"), "x"]),
                        "value": json_values,
                    }
                ),
                max_size=3,
            ),
        },
    )


def outcome(call: Any) -> str:
    try:
        call()
    except InspectionError as error:
        assert error.code in ERROR_CODES
        assert isinstance(error.to_dict()["description"], str)
        return error.code
    return "ok"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=mutated_bodies())
def test_create_with_any_body(changes: dict[str, Any]) -> None:
    program = car_program()
    body = {**create_body(), **changes}
    outcome(lambda: rt.create(program, body, inspection_type="car", now=NOW, ids=ids()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=json_values, result=json_values, damage=json_values, side=json_values)
def test_other_requests_with_any_body(body: Any, result: Any, damage: Any, side: Any) -> None:
    program = car_program()
    state = rt.create(program, create_body(), inspection_type="car", now=NOW, ids=ids())
    product = state.products[0].id
    outcome(lambda: rt.update(program, state, body, now=at(1)))
    outcome(lambda: rt.update_product(program, state, product, body, now=at(1)))
    outcome(lambda: rt.declare_damage(program, state, product, damage, now=at(1)))
    # any non-empty text is a side (an unknown one makes an extra image); "" is refused
    upload = rt.ImageUpload(data=jpeg(), side=side if isinstance(side, str) and side else "front")
    state, image = rt.add_image(program, state, product, upload, now=at(2), ids=ids("i"))
    outcome(lambda: rt.record_validation(program, state, image.id, result, now=at(3)))
    damages = damage if isinstance(damage, list) else [damage]
    outcome(
        lambda: rt.record_validation(
            program,
            state,
            image.id,
            {"validation": "plate", "confidence": 50},
            damages=damages,
            now=at(3),
        )
    )
