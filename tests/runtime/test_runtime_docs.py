"""docs/runtime.md documents every error code the runtime can give, and nothing else."""

from __future__ import annotations

import re

from rt_support import ROOT

from runtime.errors import ERROR_CODES, RULE_ERROR_CODES

DOC = (ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
SOURCES = "\n".join(path.read_text() for path in (ROOT / "runtime").glob("*.py"))


def test_every_request_error_code_is_documented() -> None:
    for code in ERROR_CODES:
        assert f"| `{code}` |" in DOC, code


def test_every_rule_error_code_is_documented() -> None:
    for code in RULE_ERROR_CODES:
        assert f"| `{code}` |" in DOC, code


def test_every_raised_code_is_in_the_table() -> None:
    raised = set(re.findall(r'InspectionError\(\s*"([a-z_]+)"', SOURCES))
    raised |= set(re.findall(r'code = "([a-z_]+)" if', SOURCES))
    recorded = set(re.findall(r'"code": "([a-z_]+)"', SOURCES))
    recorded |= set(re.findall(r"record\([a-z_]+, '?\"?([a-z_]+)", SOURCES))
    assert raised <= set(ERROR_CODES)
    assert raised >= {"invalid_body", "image_not_found", "invalid_event"}
    assert {"step_limit"} <= recorded <= set(RULE_ERROR_CODES) | {"required"}
