"""Derived identifiers: `identifiers.uuid5` writes what `uuid.uuid5` does."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from inspectlang import identifiers


@given(st.binary(min_size=16, max_size=16), st.text())
def test_uuid5_is_the_standard_version_5_uuid(namespace: bytes, name: str) -> None:
    expected = str(uuid.uuid5(uuid.UUID(bytes=namespace), name))
    assert identifiers.uuid5(namespace, name) == expected


def test_image_and_input_identifiers_are_the_standard_uuids() -> None:
    namespace = uuid.uuid5(uuid.NAMESPACE_URL, "inspectlang:template:" + "0" * 24)
    assert identifiers.image_identifier("0" * 24, "front") == "image_" + str(
        uuid.uuid5(namespace, "image:front")
    )
    assert identifiers.input_identifier("0" * 24, "km") == "input_" + str(
        uuid.uuid5(namespace, "input:km")
    )
