"""Secrets out of logs: every log record of the process is redacted as it is made.

The service stores only hashes of what it hands out (`server.tokens.hash_token`), but a
secret travels in URLs: the magic link's `?code=`, the signed `?token=` of images, shares and
presigned details, reset and invitation links' `?token=`, report links' `?signature=`. The
access log (uvicorn's) prints each request's path with its query string, and any message or
traceback may quote a URL or a key. `install` sets a log record factory (the one hook every
logger of the process goes through, whatever its handlers) that rewrites the message, its
arguments and the traceback's text before any handler sees them:

- the value of a query parameter named in `SECRET_PARAMETERS` (after `?` or `&`) becomes
  `[redacted]`: `/i/ID?code=[redacted]`;
- a signed token (`server.tokens`: base64url JSON claims, a dot, a signature) anywhere;
- an API key's secret part (`sk_test_<id>_<secret>` keeps its id, which is not secret and
  says which key it was).
"""

from __future__ import annotations

import logging
import re
from typing import Any

#: Query parameters whose value is a secret (compared without case): the magic link's code,
#: signed tokens, report link signatures, and the names other software uses for keys,
#: passwords, reset and invitation tokens.
SECRET_PARAMETERS = (
    "code",
    "token",
    "signature",
    "access_token",
    "accessToken",
    "api_key",
    "apikey",
    "key",
    "password",
    "secret",
    "reset",
    "invitation",
)
REDACTED = "[redacted]"

_QUERY_SECRET = re.compile(
    r"(?P<name>(?<=[?&])(?:" + "|".join(SECRET_PARAMETERS) + r")=)[^&\s\"'#<>]*",
    re.IGNORECASE,
)
#: A `server.tokens` token: compact JSON claims (`{"` is `eyJ` in base64url), a dot, a signature.
_SIGNED_TOKEN = re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
#: An API key (`server.auth.create_api_key`): `sk_<mode>_<key id>_<secret>`.
_API_KEY = re.compile(r"\b(?P<kept>sk_(?:test|live)_[0-9a-f]+_)[A-Za-z0-9_-]+")


def redact(text: str) -> str:
    """`text` with every secret this module knows the shape of replaced by `REDACTED`."""
    if "=" in text:
        text = _QUERY_SECRET.sub(lambda match: match.group("name") + REDACTED, text)
    if "eyJ" in text:
        text = _SIGNED_TOKEN.sub(REDACTED, text)
    if "sk_" in text:
        text = _API_KEY.sub(lambda match: match.group("kept") + REDACTED, text)
    return text


def _redacted_argument(value: Any) -> Any:
    """A log argument with its secrets redacted: a text as text; another object as its
    redacted text only when it holds a secret (numbers keep their `%d`)."""
    if isinstance(value, str):
        return redact(value)
    if value is None or isinstance(value, int | float):
        return value
    text = str(value)
    redacted = redact(text)
    return value if redacted == text else redacted


def redact_record(record: logging.LogRecord) -> None:
    """Redact `record` in place: its message, its arguments, its traceback's text."""
    if isinstance(record.msg, str):
        record.msg = redact(record.msg)
    else:
        record.msg = _redacted_argument(record.msg)
    if isinstance(record.args, tuple):
        record.args = tuple(_redacted_argument(value) for value in record.args)
    elif isinstance(record.args, dict):
        record.args = {key: _redacted_argument(value) for key, value in record.args.items()}
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


_installed = False


def install() -> None:
    """Redact every log record made in this process from now on (once; later calls do
    nothing). The app and the worker call it as they start."""
    global _installed
    if _installed:
        return
    make_record = logging.getLogRecordFactory()

    def redacted_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        redact_record(record)
        return record

    logging.setLogRecordFactory(redacted_record)
    _installed = True
