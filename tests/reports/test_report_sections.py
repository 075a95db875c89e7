"""The report's product rows come from the language's one table of product fields
(`inspectlang.product_fields`): each type's fields, in its order, labelled in the report's
locale, so a new product field cannot be silently left out of the PDF or shown unlabelled."""

from __future__ import annotations

import pytest

from inspectlang.manifest import INSPECTION_TYPES, PRODUCT_FIELDS
from inspectlang.product_fields import FIELDS, LABEL_LOCALES
from server.reports.data import ReportData
from server.reports.sections import MASKED_FIELDS, product_sections
from server.web import i18n


def test_labels_are_written_in_each_locale_the_service_speaks() -> None:
    assert set(LABEL_LOCALES) == set(i18n.SUPPORTED_LOCALES)
    for field in FIELDS.values():
        assert set(field.labels) == set(LABEL_LOCALES) and all(field.labels.values()), field


@pytest.mark.parametrize("locale", LABEL_LOCALES)
@pytest.mark.parametrize("inspection_type", [t for t in INSPECTION_TYPES if PRODUCT_FIELDS[t]])
def test_the_report_shows_every_product_field_of_the_type(
    inspection_type: str, locale: str
) -> None:
    fields = PRODUCT_FIELDS[inspection_type]
    values = {name: 2020 if kind == "number" else f"value-{name}" for name, kind in fields.items()}
    inspection = {
        "type": inspection_type,
        "locale": locale,
        "products": [{"type": inspection_type, inspection_type: values}],
    }
    report = ReportData(inspection=inspection, template={}, explanation={}, company_name="Co")
    (section,) = product_sections(report)
    shown = section.rows[1:]  # after the product's type
    assert [label for label, _ in shown] == [FIELDS[name].labels[locale] for name in fields]
    for (_label, value), name in zip(shown, fields, strict=True):
        if name not in MASKED_FIELDS:
            assert value == str(values[name])


def test_every_inspection_type_has_its_word() -> None:
    """The words are keyed by the spec's types: the report's table keyed `motorbike`, `machine`
    and `phone` left a moto's, a machine's and a phone's report saying `moto`, `machinery`,
    `cellphone`."""
    from inspectlang.manifest import INSPECTION_TYPES
    from server.web.words import TYPE_WORDS

    assert set(TYPE_WORDS) == set(INSPECTION_TYPES)
