"""Email over SMTP: `smtp://user:pass@host:587` (STARTTLS whenever the server offers it) or
`smtps://user:pass@host:465` (TLS from the first byte). A text and an HTML part; the
Message-ID is the delivery's, the same on every attempt."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate
from urllib.parse import unquote, urlsplit

from server.delivery.providers.base import Outgoing, PermanentFailure, TransientFailure
from server.settings import Settings

TIMEOUT_SECONDS = 30.0


class Smtp:
    name = "smtp"

    def __init__(self, settings: Settings) -> None:
        assert settings.smtp_url
        parts = urlsplit(settings.smtp_url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(
                "INSPECTLANG_SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://..."
            )
        self.implicit_tls = parts.scheme == "smtps"
        self.host = parts.hostname
        self.port = parts.port or (465 if self.implicit_tls else 587)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.sender = settings.mail_from

    def build(self, outgoing: Outgoing) -> EmailMessage:
        message = EmailMessage()
        message["From"] = self.sender
        message["To"] = outgoing.to
        message["Subject"] = outgoing.message.subject
        message["Date"] = formatdate(usegmt=True)
        message["Message-ID"] = outgoing.message_id
        message["Auto-Submitted"] = "auto-generated"
        message.set_content(outgoing.message.text)
        message.add_alternative(outgoing.message.html, subtype="html")
        # After the parts: setting content replaces the Content-* headers.
        message["Content-Language"] = outgoing.message.locale.replace("_", "-")
        return message

    def send(self, outgoing: Outgoing) -> str:
        try:
            message = self.build(outgoing)
        except (ValueError, TypeError) as error:  # a header the email library refuses
            raise PermanentFailure(f"the message cannot be built: {error}") from None
        context = ssl.create_default_context()
        try:
            if self.implicit_tls:
                client: smtplib.SMTP = smtplib.SMTP_SSL(
                    self.host, self.port, timeout=TIMEOUT_SECONDS, context=context
                )
            else:
                client = smtplib.SMTP(self.host, self.port, timeout=TIMEOUT_SECONDS)
            with client:
                client.ehlo()
                if not self.implicit_tls and client.has_extn("starttls"):
                    client.starttls(context=context)
                    client.ehlo()
                if self.username:
                    client.login(self.username, self.password or "")
                refused = client.send_message(message)
        except smtplib.SMTPRecipientsRefused as error:
            codes = [code for code, _ in error.recipients.values()]
            detail = "; ".join(f"{code} {text!r}" for code, text in error.recipients.values())
            if all(400 <= code < 500 for code in codes):
                raise TransientFailure(f"SMTP recipient refused: {detail}") from None
            raise PermanentFailure(f"SMTP recipient refused: {detail}") from None
        except smtplib.SMTPResponseException as error:
            text = f"SMTP {error.smtp_code}: {error.smtp_error!r}"
            if 400 <= error.smtp_code < 500:
                raise TransientFailure(text) from None
            raise PermanentFailure(text) from None
        except smtplib.SMTPNotSupportedError as error:
            raise PermanentFailure(f"SMTP: {error}") from None
        except (TimeoutError, smtplib.SMTPException, OSError) as error:
            raise TransientFailure(f"SMTP connection: {type(error).__name__}: {error}") from None
        if refused:
            raise PermanentFailure(f"SMTP refused recipients: {refused}")
        return outgoing.message_id

    def find_sent(self, outgoing: Outgoing) -> str | None:
        # SMTP cannot be asked what it accepted. A retry after a crash resends the message with
        # the same Message-ID, which mail systems use to drop the duplicate (docs/delivery.md).
        return None
