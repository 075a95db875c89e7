"""The webhook verification code of docs/reports.md runs as written and accepts exactly what the
service signs (issue 24: every code block of the docs runs in a test)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from server.webhooks import service as webhooks

DOC = Path(__file__).resolve().parents[2] / "docs" / "reports.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_documented_verifier_accepts_the_service_signature_and_nothing_else() -> None:
    [block] = _python_blocks()
    scope: dict[str, Any] = {}
    exec(compile(block, str(DOC), "exec"), scope)  # the documentation's own code
    verify = scope["verify"]
    secret = webhooks.new_secret()
    body = b'{"event":"inspection_completed","payload":{"_id":"0123"}}'
    now = int(time.time())
    headers = webhooks.signed_headers(secret, "msg_1", now, body)
    assert verify(secret, headers, body) is True
    assert verify(secret, headers, body + b" ") is False
    assert verify(webhooks.new_secret(), headers, body) is False
    stale = webhooks.signed_headers(secret, "msg_1", now - 3600, body)
    assert verify(secret, stale, body) is False  # a replay outside the tolerance
