"""Fixtures for the HTTP tests: request headers for a company's test and live keys."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def test_headers(company: dict[str, Any]) -> dict[str, str]:
    """Headers authenticating with the company's test key."""
    return {"x-api-key": company["testKey"]}


@pytest.fixture
def live_headers(company: dict[str, Any]) -> dict[str, str]:
    """Headers authenticating with the company's live key."""
    return {"x-api-key": company["liveKey"]}
