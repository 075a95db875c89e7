"""The review and retake bodies decoded once, at the server's edge (issue 38), into the
runtime's typed requests: every refusal keeps the status and code the runtime gave it when it
checked the dicts by hand (tests/runtime/test_review.py had these vectors), and what was taken
is still taken (a `null` or blank optional text is absent)."""

from __future__ import annotations

from typing import Any

import pytest

from runtime import review as rv
from server.errors import ApiError
from server.review.schemas import retake_request, review_request

RESULT = {"imageId": "a" * 24, "validation": "recaptured", "valid": True}


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        ({"veredict": "approved"}, "reason_required", "reason"),
        ({"veredict": "approved", "reason": ""}, "reason_required", "reason"),
        ({"veredict": "approved", "reason": "   "}, "reason_required", "reason"),
        ({"veredict": "approved", "reason": None}, "reason_required", "reason"),
        ({"veredict": "approved", "reason": 5}, "reason_required", "reason"),
        ({"veredict": "maybe", "reason": "x"}, "invalid_body", "veredict"),
        ({"veredict": "maybe"}, "invalid_body", "veredict"),
        ({}, "invalid_body", None),
        ({"validations": []}, "invalid_body", None),
        ({"validations": "all"}, "invalid_body", "validations"),
        ({"validations": None, "veredict": "approved", "reason": "x"}, "invalid_body", None),
        ({"extra": 1, "veredict": "approved", "reason": "x"}, "invalid_body", "extra"),
        ({"validations": [{**RESULT, "valid": "yes"}]}, "invalid_body", "validations[0].valid"),
        ({"validations": [{**RESULT, "valid": 1}]}, "invalid_body", "validations[0].valid"),
        ({"validations": [{**RESULT, "other": 1}]}, "invalid_body", "validations[0].other"),
        ({"validations": ["x"]}, "invalid_body", "validations[0]"),
        ({"validations": [{**RESULT, "note": 3}]}, "invalid_body", "validations[0].note"),
        ({"validations": [{**RESULT, "note": "n" * 2001}]}, "invalid_body", None),
        ({"validations": [{**RESULT, "damages": "x"}]}, "invalid_body", None),
        ({"validations": [{**RESULT, "damages": [{"part": "door"}]}]}, "invalid_body", None),
        ({"validations": [RESULT] * 201}, "invalid_body", "validations"),
        ({"veredict": "approved", "reason": "x" * 2001}, "invalid_body", "reason"),
        ({"validations": [RESULT], "reason": 5}, "invalid_body", "reason"),
        ([], "invalid_body", None),
    ],
)
def test_each_bad_review_body_keeps_its_code(body: Any, code: str, field: str | None) -> None:
    with pytest.raises(ApiError) as refused:
        review_request(body)
    assert (refused.value.status, refused.value.code) == (400, code)
    if field is not None:
        assert refused.value.errors is not None
        assert refused.value.errors[0]["field"] == field


def test_a_review_body_becomes_the_runtimes_typed_request() -> None:
    damage = {"part": "door", "damage": "dent", "severity": "minor", "percentage": 40}
    body = {
        "validations": [
            {**RESULT, "note": "  seen  ", "damages": [damage]},
            {**RESULT, "validation": "complete", "note": "   ", "damages": None},
            {**RESULT, "validation": "plate", "note": None},
        ],
        "veredict": "disapproved",
        "reason": "  a screen  ",
    }
    found = rv.FoundDamage("door", "dent", "minor", 40.0)
    assert review_request(body) == rv.ReviewRequest(
        results=(
            rv.PersonResult("a" * 24, "recaptured", True, note="seen", damages=(found,)),
            rv.PersonResult("a" * 24, "complete", True),
            rv.PersonResult("a" * 24, "plate", True),
        ),
        decision=rv.Decision("disapproved", "a screen"),
    )


@pytest.mark.parametrize(
    "body",
    [
        {"validations": [RESULT], "reason": "   "},
        {"validations": [RESULT], "reason": None},
        {"validations": [RESULT], "veredict": None},
    ],
)
def test_an_absent_optional_text_is_taken_as_before(body: dict[str, Any]) -> None:
    request = review_request(body)
    assert request == rv.ReviewRequest(results=(rv.PersonResult("a" * 24, "recaptured", True),))


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"images": [], "message": "x"}, "images"),
        ({"images": ["a"]}, "message"),
        ({"images": ["a"], "message": " "}, "message"),
        ({"images": ["a"], "message": None}, "message"),
        ({"images": ["a"], "message": "m" * 2001}, "message"),
        ({"images": "a", "message": "x"}, "images"),
        ({"images": [3], "message": "x"}, "images[0]"),
        ({"images": [""], "message": "x"}, "images[0]"),
        ({"images": ["a"] * 51, "message": "x"}, "images"),
        ({"images": ["a"], "message": "x", "extra": 1}, "extra"),
    ],
)
def test_each_bad_retake_body_keeps_its_code(body: dict[str, Any], field: str) -> None:
    with pytest.raises(ApiError) as refused:
        retake_request(body)
    assert (refused.value.status, refused.value.code) == (400, "invalid_body")
    assert refused.value.errors is not None and refused.value.errors[0]["field"] == field


def test_a_retake_body_becomes_the_runtimes_typed_request() -> None:
    body = {"images": ["b", "a", "b"], "message": "  again, in daylight "}
    assert retake_request(body) == rv.RetakeRequest(("b", "a", "b"), "again, in daylight")
