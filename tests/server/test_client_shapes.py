"""The client libraries' shapes, read in one place (`server/inspections/client_shapes.py`) into
the API's one shape before any check: what each function makes of what the libraries send."""

from __future__ import annotations

import pytest

from server.errors import ApiError
from server.inspections import client_shapes


def test_php_empty_arrays_are_empty_objects_where_an_object_is_meant() -> None:
    body = {
        "metadata": [],
        "consumer": [],
        "delivery": [],
        "producer": [],
        "people": {"configuration": {"sex": [], "dni": {"run": True}}},
        "inputs": [],
    }
    shaped, goods_list = client_shapes.creation_body(body, "people")
    assert shaped == {
        "metadata": {},
        "consumer": {},
        "delivery": {},
        "producer": {},
        "people": {"configuration": {"sex": {}, "dni": {"run": True}}},
        "inputs": [],  # an array in the API too
    }
    assert not goods_list
    assert client_shapes.creation_body({"car": []}, "car")[0] == {"car": {}}
    assert client_shapes.update_body({"metadata": [], "inputs": []}) == {
        "metadata": {},
        "inputs": [],
    }


def test_the_libraries_goods_list_is_the_apis_products() -> None:
    shaped, goods_list = client_shapes.creation_body({"goods": [{"make": "A"}, []]}, "goods")
    assert shaped == {"products": [{"make": "A"}, {}]} and goods_list
    assert client_shapes.creation_body({"goods": []}, "goods") == ({}, False)
    with pytest.raises(ApiError) as both:
        client_shapes.creation_body({"goods": [{}], "products": [{}]}, "goods")
    assert (both.value.code, both.value.errors) == (
        "invalid_body",
        [{"field": "products", "code": "conflict", "message": "also sent goods"}],
    )


@pytest.mark.parametrize(
    ("runtime_field", "client_field"),
    [
        ("goods.category", "goods.0.category"),
        ("goods.configuration.wings", "goods.0.configuration.wings"),
        ("products.2.price", "goods.2.price"),
        ("goods.1.price", "goods.1.price"),
        ("consumer.sex", "consumer.sex"),
    ],
)
def test_refusals_name_fields_as_a_goods_list_client_sent_them(
    runtime_field: str, client_field: str
) -> None:
    assert client_shapes.client_field(runtime_field) == client_field
    error = ApiError.of("invalid_body", "x", [{"field": runtime_field, "code": "c"}])
    assert client_shapes.as_sent(error, True).errors == [{"field": client_field, "code": "c"}]


def test_product_updates() -> None:
    shape = client_shapes.product_update_body
    assert shape({"productId": "p1", "car": {"make": "X"}, "inputs": []}, "car", "p1") == {
        "car": {"make": "X"}
    }
    with pytest.raises(ApiError) as mismatch:
        shape({"productId": "p2"}, "car", "p1")
    assert mismatch.value.code == "product_id_mismatch"
    # Flat: machinery only (the Node library's update), and only when every key is a field.
    assert shape({"make": "CAT", "purpose": "Vial"}, "machinery", "p1") == {
        "machinery": {"make": "CAT", "purpose": "Vial"}
    }
    assert shape({"make": "CAT", "wheels": 4}, "machinery", "p1") == {"make": "CAT", "wheels": 4}
    assert shape({"color": "red"}, "car", "p1") == {"color": "red"}
    assert client_shapes.goods_update_body({"good": {"price": "9"}}, "p1") == {
        "goods": {"price": "9"}
    }
