"""Which provider carries a channel: the configured one, else (development) the outbox."""

from __future__ import annotations

from server.db import Database
from server.delivery.providers.base import Provider
from server.delivery.providers.meta import MetaWhatsApp
from server.delivery.providers.outbox import Outbox
from server.delivery.providers.smtp import Smtp
from server.delivery.providers.twilio import Twilio
from server.settings import Settings


def choose(settings: Settings, channel: str, db: Database) -> Provider:
    if channel == "email" and settings.smtp_url:
        return Smtp(settings)
    twilio = settings.twilio_account_sid and settings.twilio_auth_token
    if channel == "sms" and twilio and settings.twilio_from:
        return Twilio(settings, whatsapp=False)
    if channel == "wsp" and twilio and settings.twilio_whatsapp_from:
        return Twilio(settings, whatsapp=True)
    if channel == "wsp" and settings.meta_whatsapp_token and settings.meta_phone_number_id:
        return MetaWhatsApp(settings)
    return Outbox(db)
