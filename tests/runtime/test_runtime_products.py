"""Several products in one goods inspection live in the event log, so `replay` keeps them."""

from __future__ import annotations

from typing import Any

import pytest
from rt_support import NOW, at, compile_template, ids, jpeg

import runtime as rt
from runtime import InspectionError, InspectionState, Program

GOODS_SOURCE = """\
template "Parcel check"
    type: goods

variable uploads: numeric = 0

product
    require description

image packages
    side: "front"
    label: "The packages"
    validate complete

on image uploaded
    set uploads to uploads + 1

verdict
    approve when uploads > 0
    otherwise "No photo"
"""

PRODUCTS = [
    {"description": "Laptop", "quantity": 1, "serial": "SN-1"},
    {"description": "Monitor", "quantity": 2},
    {"description": "Dock", "value": 150},
]


def goods_program() -> Program:
    return rt.load_program(compile_template(GOODS_SOURCE, "parcel.insp"))


def goods_body(**extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "products": PRODUCTS,
    }
    body.update(extra)
    return body


def three_products(program: Program) -> InspectionState:
    return rt.create(program, goods_body(), inspection_type="goods", now=NOW, ids=ids())


def test_create_records_every_product_in_the_create_event() -> None:
    program = goods_program()
    state = three_products(program)
    assert [p.data for p in state.products] == PRODUCTS
    assert [p.id for p in state.products] == [f"{n:024x}" for n in (2, 3, 4)]
    create_event = state.events[0]
    assert [p["fields"] for p in create_event.data["products"]] == PRODUCTS[1:]
    assert rt.replay(program, state.events) == state


def test_images_go_to_the_second_product_and_replay_equals_the_state() -> None:
    program = goods_program()
    state = rt.start(program, three_products(program), now=at(0))
    second = state.products[1].id
    upload = rt.ImageUpload(data=jpeg(), content_type="image/jpeg", side="front")
    state, image = rt.add_image(program, state, second, upload, now=at(1), ids=ids("a"))
    state = rt.update_product(
        program, state, state.products[2].id, {"goods": {"serial": "SN-3"}}, now=at(2)
    )
    state = rt.finish(program, state, completed_by="client", now=at(3))
    assert [len(p.images) for p in state.products] == [0, 1, 0]
    assert state.products[1].images[0].id == image.id
    assert state.products[2].data["serial"] == "SN-3"
    assert state.veredict == "approved"
    assert rt.replay(program, state.events) == state


def test_to_api_lists_every_product() -> None:
    program = goods_program()
    state = three_products(program)
    document = rt.to_api(program, state)
    assert [p["_id"] for p in document["products"]] == [p.id for p in state.products]
    assert [p["goods"] for p in document["products"]] == PRODUCTS


def test_a_single_goods_product_keeps_the_old_event_shape() -> None:
    program = goods_program()
    state = rt.create(
        program, goods_body(products=[PRODUCTS[0]]), inspection_type="goods", now=NOW, ids=ids()
    )
    assert len(state.products) == 1
    assert "products" not in state.events[0].data
    assert rt.replay(program, state.events) == state


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"products": []}, "products"),
        ({"products": "laptop"}, "products"),
        ({"products": [{"description": "x"}] * 21}, "products"),
        ({"products": [{"description": "x"}, {"weight": 3}]}, "products.1.weight"),
        ({"products": [{"description": "x"}, "y"]}, "products.1"),
        ({"products": [{"description": "x"}], "goods": {"description": "y"}}, "products"),
    ],
)
def test_bad_product_lists(body: dict[str, Any], field: str) -> None:
    program = goods_program()
    with pytest.raises(InspectionError) as caught:
        rt.create(program, goods_body(**body), inspection_type="goods", now=NOW, ids=ids())
    assert caught.value.code == "invalid_body"
    assert [e["field"] for e in caught.value.errors] == [field]


def test_other_types_may_not_send_products() -> None:
    from rt_support import car_program, create_body

    with pytest.raises(InspectionError) as caught:
        rt.create(
            car_program(),
            create_body(products=[{"plate": "AB123CD"}]),
            inspection_type="car",
            now=NOW,
            ids=ids(),
        )
    assert caught.value.code == "invalid_body"
    assert [e["field"] for e in caught.value.errors] == ["products"]
