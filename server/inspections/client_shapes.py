"""The shapes the public client libraries send, turned into the API's one shape at the door.

autoinspector-node and autoinspector-php send bodies the API documents differently; this module
is the only place that knows them, so the services and the runtime see one shape:

- PHP's `json_encode` writes an empty map as `[]`: an object field sent as `[]` is `{}`
  (`metadata`, `consumer`, `delivery`, `producer`, the product object, its `configuration`
  and each setting in it), and `goods: []` is no goods.
- The libraries create goods as `goods: [{...}, ...]`: that is the API's `products` list.
- PHP's product update sends `productId` in the body beside the path's (`product_id_mismatch`
  when they differ), and the Node library's machinery update sends the fields without the
  `machinery` wrapper (`{make, model, purpose}`); its goods update is `POST` with
  `{good: {...}}`.

Numbers written as texts (`year: "2020"`) are values, not shapes: the runtime reads those
(`runtime.intake`), as it does for every input.
"""

from __future__ import annotations

from typing import Any

from inspectlang.manifest import PRODUCT_FIELDS
from server.errors import ApiError

#: Top-level fields of a creation or update whose value is an object.
OBJECT_FIELDS = ("metadata", "consumer", "delivery", "producer")
#: Product types whose update a client library sends flat (autoinspector-node's
#: `machinery.update`); the others wrap the fields in the type's name, and a flat key there
#: stays `unknown_field`.
FLAT_UPDATE_TYPES = ("machinery",)


def _map(value: Any) -> Any:
    """PHP's `[]` for an empty map as `{}`; anything else as it is."""
    return {} if value == [] else value


def _product(value: Any) -> Any:
    """A product object with PHP's `[]` read as `{}`, its `configuration` and settings too."""
    value = _map(value)
    if isinstance(value, dict) and "configuration" in value:
        configuration = _map(value["configuration"])
        if isinstance(configuration, dict):
            configuration = {name: _map(setting) for name, setting in configuration.items()}
        value = {**value, "configuration": configuration}
    return value


def creation_body(body: dict[str, Any], inspection_type: str) -> tuple[dict[str, Any], bool]:
    """The creation body in the API's shape, and whether its goods came as the libraries'
    `goods: [...]` list (the refusals then name `goods.N`, as the client sent them)."""
    shaped = {key: _map(value) if key in OBJECT_FIELDS else value for key, value in body.items()}
    goods_list = False
    product = shaped.get(inspection_type)
    if inspection_type == "goods" and isinstance(product, list):
        del shaped["goods"]
        if product:
            if "products" in shaped:
                raise ApiError.of(
                    "invalid_body",
                    "Send the products either as `goods` or as `products`, not both.",
                    [{"field": "products", "code": "conflict", "message": "also sent goods"}],
                )
            shaped["products"] = product
            goods_list = True
    elif inspection_type in shaped:
        shaped[inspection_type] = _product(product)
    if isinstance(shaped.get("products"), list):
        shaped["products"] = [_product(item) for item in shaped["products"]]
    return shaped, goods_list


def update_body(body: dict[str, Any]) -> dict[str, Any]:
    """An inspection update (`PUT /v1/inspection/:id`) with PHP's `[]` read as `{}` for its
    object fields (`metadata`, `consumer`)."""
    return {key: _map(value) if key in OBJECT_FIELDS else value for key, value in body.items()}


def goods_update_body(body: dict[str, Any], product_id: str) -> dict[str, Any]:
    """The libraries' `POST /v1/inspection/goods/:productId` with `{good: {...}}` as the
    product update's `{goods: {...}}` (any other body is read as a product update is)."""
    if set(body) <= {"good"}:
        return {"goods": _map(body.get("good"))}
    return product_update_body(body, "goods", product_id)


def client_field(field: str) -> str:
    """A refusal's field as a client that sent `goods: [...]` names it: `products.N...` is
    `goods.N...`, and the first product's `goods.x` is `goods.0.x`."""
    if field.startswith("products."):
        return "goods." + field.removeprefix("products.")
    if field.startswith("goods.") and not field[len("goods.") :].split(".")[0].isdigit():
        return "goods.0." + field.removeprefix("goods.")
    return field


def as_sent(error: ApiError, goods_list: bool) -> ApiError:
    """`error` with its fields named as the client sent them (`client_field`)."""
    if goods_list and error.errors:
        error.errors = [
            {**item, "field": client_field(str(item["field"]))} if "field" in item else item
            for item in error.errors
        ]
    return error


def product_update_body(
    body: dict[str, Any], inspection_type: str, product_id: str
) -> dict[str, Any]:
    """A product update in the API's shape: `{<type>: {...}, inputs?: [...]}`.

    PHP's `productId` must be the path's (400 `product_id_mismatch`) and is dropped; PHP's
    `inputs: []` is no inputs; for `FLAT_UPDATE_TYPES`, a flat body whose every key is a field
    of the product type (the Node library's machinery update) is the product object."""
    shaped = dict(body)
    if "productId" in shaped:
        sent = shaped.pop("productId")
        if sent != product_id:
            raise ApiError.of(
                "product_id_mismatch",
                "The body's productId is not the product of the path.",
                [
                    {
                        "field": "productId",
                        "code": "product_id_mismatch",
                        "message": "must equal the path's product id",
                    }
                ],
            )
    if shaped.get("inputs") == []:
        del shaped["inputs"]
    fields = PRODUCT_FIELDS.get(inspection_type, {})
    rest = {key: value for key, value in shaped.items() if key != "inputs"}
    flat = inspection_type in FLAT_UPDATE_TYPES and inspection_type not in rest
    if flat and rest and all(key in fields for key in rest):
        shaped = {
            inspection_type: rest,
            **({"inputs": shaped["inputs"]} if "inputs" in shaped else {}),
        }
    if inspection_type in shaped:
        shaped[inspection_type] = _map(shaped[inspection_type])
    return shaped
