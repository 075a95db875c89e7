"""The provider interface, its failures, and the choice of a provider per channel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from server.delivery.messages import Message
from server.errors import ServerError


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One message to send: for which delivery, over which channel, to whom."""

    delivery_id: str
    channel: str
    to: str
    company: str
    link: str
    message: Message

    @property
    def message_id(self) -> str:
        """The RFC 5322 Message-ID of this delivery: the same on every attempt."""
        return f"<{self.delivery_id}@inspectlang.delivery>"


class TransientFailure(ServerError):
    """Worth another attempt: a connection failure, SMTP 4xx, HTTP 429 or 5xx."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class PermanentFailure(ServerError):
    """Another attempt would fail the same way: SMTP 5xx, HTTP 4xx (bad number, credentials)."""


class Provider(Protocol):
    name: str

    def send(self, outgoing: Outgoing) -> str:
        """Hand the message over; the provider's id for it. Raises the failures above."""
        ...

    def find_sent(self, outgoing: Outgoing) -> str | None:
        """After an attempt that died mid-send: the id of the message if the provider did
        accept it, None if it did not or cannot tell."""
        ...
