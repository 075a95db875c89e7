"""The report's product rows are kept in a display order of their own; they must name exactly the
fields the language knows for each inspection type, so a new product field cannot be silently
left out of the PDF."""

from __future__ import annotations

import pytest

from inspectlang.manifest import INSPECTION_TYPES, PRODUCT_FIELDS
from server.reports.sections import PRODUCT_FIELD_LABELS


@pytest.mark.parametrize("inspection_type", INSPECTION_TYPES)
def test_the_report_shows_every_product_field_of_the_type(inspection_type: str) -> None:
    shown = [field for field, _label in PRODUCT_FIELD_LABELS.get(inspection_type, [])]
    assert sorted(shown) == sorted(PRODUCT_FIELDS[inspection_type])
    assert len(shown) == len(set(shown))
