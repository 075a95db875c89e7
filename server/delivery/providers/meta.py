"""WhatsApp through Meta's Cloud API: a template message (`POST /{phone-number-id}/messages`,
bearer token). The template (`INSPECTLANG_META_TEMPLATE`, approved in the WhatsApp Manager) has
two body parameters: the company's name and the link."""

from __future__ import annotations

from server.delivery.providers.base import Outgoing, PermanentFailure
from server.delivery.providers.http import refuse_unless_accepted, request
from server.settings import Settings


class MetaWhatsApp:
    name = "meta"

    def __init__(self, settings: Settings) -> None:
        assert settings.meta_whatsapp_token and settings.meta_phone_number_id
        self.token = settings.meta_whatsapp_token
        self.template = settings.meta_template
        base = settings.meta_base_url.rstrip("/")
        self.url = f"{base}/{settings.meta_phone_number_id}/messages"

    def send(self, outgoing: Outgoing) -> str:
        body = {
            "messaging_product": "whatsapp",
            "to": outgoing.to.lstrip("+"),
            "type": "template",
            "template": {
                "name": self.template,
                "language": {"code": outgoing.message.locale},
                "components": [
                    {
                        "type": "body",
                        "parameters": [
                            {"type": "text", "text": outgoing.company},
                            {"type": "text", "text": outgoing.link},
                        ],
                    }
                ],
            },
        }
        response = request(
            "POST", self.url, json=body, headers={"Authorization": f"Bearer {self.token}"}
        )
        refuse_unless_accepted(response, "Meta")
        messages = response.json().get("messages") or []
        if not messages or not isinstance(messages[0].get("id"), str):
            raise PermanentFailure("Meta accepted the message but returned no id")
        return str(messages[0]["id"])

    def find_sent(self, outgoing: Outgoing) -> str | None:
        # The Cloud API cannot list sent messages: a retry after a crash mid-send may repeat
        # the message (docs/delivery.md).
        return None
