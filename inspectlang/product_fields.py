"""The product fields of each inspection type, declared once.

A field has a name (its key in the API's product object and in templates: `car.plate`), an
expression type, a label in each locale the service speaks, and whether the dashboard's search
matches its value. The language types templates with it (`inspectlang.manifest.PRODUCT_FIELDS`,
what `inspectlang manifest` prints), the reports label their product rows with it and the
search text is written from its searchable fields: a field added here is typed, shown and
searched alike, where three copies used to drift (issue 38).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

#: The locales a label is written in (the service's pages and reports speak these).
LABEL_LOCALES = ("en_US", "es_AR", "pt_BR")


@dataclass(frozen=True, slots=True)
class ProductField:
    """One field of a product (`plate`, `make`, `imei`, ...): its type, labels and search."""

    name: str
    #: Its expression type in templates.
    type: Literal["text", "number"]
    #: Its label by locale, one for each of `LABEL_LOCALES`.
    labels: Mapping[str, str]
    #: Whether the dashboard's search matches its value (`server.inspections.searchtext`).
    searchable: bool = False

    def label(self, locale: str) -> str:
        """The label in `locale`, in English for a locale with none."""
        return self.labels.get(locale) or self.labels["en_US"]


def _field(
    name: str, kind: Literal["text", "number"], labels: str, *, searchable: bool = False
) -> ProductField:
    """A field whose `labels` are written `en_US | es_AR | pt_BR`."""
    words = [word.strip() for word in labels.split("|")]
    return ProductField(name, kind, dict(zip(LABEL_LOCALES, words, strict=True)), searchable)


#: Every product field by name, the searchable ones first in the order the search text is
#: written.
FIELDS: dict[str, ProductField] = {
    field.name: field
    for field in (
        _field("plate", "text", "Plate | Patente | Placa", searchable=True),
        _field("make", "text", "Make | Marca | Marca", searchable=True),
        _field("model", "text", "Model | Modelo | Modelo", searchable=True),
        _field("vin", "text", "VIN | Número de chasis | Chassi", searchable=True),
        _field("serial", "text", "Serial | Serie | Série", searchable=True),
        _field("imei", "text", "IMEI | IMEI | IMEI", searchable=True),
        _field("color", "text", "Color | Color | Cor"),
        _field("use", "text", "Use | Uso | Uso"),
        _field("year", "number", "Year | Año | Ano"),
        _field("milage", "number", "Mileage | Kilometraje | Quilometragem"),
        _field("chassis", "text", "Chassis | Chasis | Chassi"),
        _field("price", "number", "Price | Precio | Preço"),
        _field("serialNumber", "text", "Serial number | Número de serie | Número de série"),
        _field("hours", "number", "Hours | Horas | Horas"),
        _field("purpose", "text", "Purpose | Destino | Finalidade"),
        _field("type", "text", "Type | Tipo | Tipo"),
        _field("description", "text", "Description | Descripción | Descrição"),
        _field("quantity", "number", "Quantity | Cantidad | Quantidade"),
        _field("value", "number", "Value | Valor | Valor"),
        _field("category", "text", "Category | Categoría | Categoria"),
        _field("reference", "text", "Reference | Referencia | Referência"),
    )
}

#: The fields of each inspection type's product, in the order templates, the API's schema and
#: the reports list them.
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "car": ("plate", "color", "make", "model", "use", "year", "milage", "vin", "chassis"),
    "moto": ("plate", "color", "make", "model", "use", "year", "milage", "chassis"),
    "bike": ("make", "model", "color", "year", "serial", "price", "serialNumber"),
    "machinery": (
        *("make", "model", "year", "serial", "hours"),
        *("color", "purpose", "use", "type", "plate"),
    ),
    "goods": (
        *("description", "quantity", "value", "serial", "make"),
        *("model", "type", "category", "serialNumber", "price"),
    ),
    "people": (),
    "custom": ("description", "reference"),
    "cellphone": ("make", "model", "color", "imei", "year", "price", "serialNumber"),
}

#: Names of the fields the search text holds, in the order it writes them.
SEARCHABLE: tuple[str, ...] = tuple(name for name, field in FIELDS.items() if field.searchable)


def fields_of(inspection_type: str) -> tuple[ProductField, ...]:
    """The product fields of `inspection_type` (none for a type without a product)."""
    return tuple(FIELDS[name] for name in TYPE_FIELDS.get(inspection_type, ()))
