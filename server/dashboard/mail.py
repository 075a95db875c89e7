"""The messages the dashboard sends by email link (invitations, password resets).

Everything goes through `send(...)`, which hands the message to the configured sender. Until
the delivery issue's mail sending is merged, the only sender is the development outbox: one
RFC 5322 file per message under `<data_dir>/outbox/dashboard/`, which a developer (or a test)
opens to follow the link.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path
from typing import Protocol

OUTBOX_DIRECTORY = Path("outbox") / "dashboard"


@dataclass(frozen=True, slots=True)
class Mail:
    to: str
    subject: str
    text: str


class Sender(Protocol):
    def __call__(self, mail: Mail) -> None: ...


class DevelopmentOutbox:
    """Writes each message as an `.eml` file (written whole, then renamed into place)."""

    def __init__(self, data_dir: Path) -> None:
        self.directory = data_dir / OUTBOX_DIRECTORY

    def __call__(self, mail: Mail) -> None:
        message = EmailMessage()
        message["To"] = mail.to
        message["From"] = "inspectlang dashboard <no-reply@inspectlang.invalid>"
        message["Subject"] = mail.subject
        message.set_content(mail.text)
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"{os.getpid()}-{secrets.token_hex(8)}"
        temporary = self.directory / f".{name}.tmp"
        temporary.write_bytes(message.as_bytes())
        os.replace(temporary, self.directory / f"{name}.eml")

    def messages(self, to: str | None = None) -> list[Mail]:
        """The messages written so far, oldest first, optionally only those sent to `to`."""
        if not self.directory.is_dir():
            return []
        found: list[Mail] = []
        paths = sorted(self.directory.glob("*.eml"), key=lambda path: path.stat().st_mtime_ns)
        for path in paths:
            parsed = BytesParser(policy=default_policy).parsebytes(path.read_bytes())
            body = parsed.get_body(preferencelist=("plain",))
            text = body.get_content() if body is not None else ""
            mail = Mail(to=str(parsed["To"]), subject=str(parsed["Subject"]), text=str(text))
            if to is None or mail.to == to:
                found.append(mail)
        return found
