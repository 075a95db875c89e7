"""SMS and WhatsApp through Twilio's Messages API (`POST /2010-04-01/Accounts/{Sid}/Messages.json`
with form fields `To`, `From`, `Body` and HTTP basic auth). After an attempt that died mid-send,
the Messages list (`GET` the same path, filtered by `To`, `From` and `DateSent>`) tells whether
Twilio accepted it: the body carries the delivery's link, which no other message has."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from server.delivery.providers.base import Outgoing, PermanentFailure
from server.delivery.providers.http import refuse_unless_accepted, request
from server.settings import Settings


class Twilio:
    def __init__(self, settings: Settings, *, whatsapp: bool) -> None:
        assert settings.twilio_account_sid and settings.twilio_auth_token
        self.name = "twilio"
        self.whatsapp = whatsapp
        self.account = settings.twilio_account_sid
        self.auth = (settings.twilio_account_sid, settings.twilio_auth_token)
        sender = settings.twilio_whatsapp_from if whatsapp else settings.twilio_from
        assert sender
        self.sender = self._address(sender)
        base = settings.twilio_base_url.rstrip("/")
        self.url = f"{base}/2010-04-01/Accounts/{self.account}/Messages.json"

    def _address(self, number: str) -> str:
        if self.whatsapp and not number.startswith("whatsapp:"):
            return f"whatsapp:{number}"
        return number

    def send(self, outgoing: Outgoing) -> str:
        form = {
            "To": self._address(outgoing.to),
            "From": self.sender,
            "Body": outgoing.message.short,
        }
        response = request("POST", self.url, data=form, auth=self.auth)
        refuse_unless_accepted(response, "Twilio")
        sid = response.json().get("sid")
        if not isinstance(sid, str):
            raise PermanentFailure("Twilio accepted the message but returned no sid")
        return sid

    def find_sent(self, outgoing: Outgoing) -> str | None:
        since = (datetime.now(UTC) - timedelta(days=2)).date().isoformat()
        params = {"To": self._address(outgoing.to), "From": self.sender, "DateSent>": since}
        response = request("GET", self.url, params=params, auth=self.auth)
        refuse_unless_accepted(response, "Twilio")
        for message in response.json().get("messages") or []:
            if outgoing.link in str(message.get("body", "")):
                return str(message.get("sid"))
        return None
