"""The creation's `delivery` object, checked for its channel: which channels exist, whether a
provider can carry them here, and destinations normalized (email addresses by the service's one
email check, `runtime.intake.email_address`; phone numbers with `phonenumbers`, stored in
E.164)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import phonenumbers

from runtime.intake import email_address
from server.errors import ApiError
from server.settings import Settings

Channel = Literal["email", "sms", "wsp"]
#: The channels existing clients send: email, SMS, and WhatsApp (`wsp`).
CHANNELS: tuple[Channel, ...] = ("email", "sms", "wsp")


@dataclass(frozen=True, slots=True)
class Destination:
    channel: Channel
    #: The normalized address: an email address, or a phone number in E.164 (`+5491122334455`).
    address: str


def _refuse(code: str, field: str, message: str) -> ApiError:
    return ApiError.of(code, message, [{"field": field, "code": code, "message": message}])


def locale_country(locale: Any) -> str | None:
    """The country of a locale such as `es_AR` (`AR`), or None when it names none."""
    if isinstance(locale, str) and len(locale) == 5 and locale[2] == "_":
        country = locale[3:].upper()
        return country if country in _REGIONS else None
    return None


def check_delivery(
    delivery: Any, settings: Settings, *, locale: Any = None
) -> tuple[dict[str, Any], Destination | None]:
    """The delivery object with its destination normalized, and where to send the link (None
    when `disabled: true`). A missing delivery, or one that is not an object, is 400
    `invalid_body` (field `delivery`).
    A phone number without `countryISO` is read in the country of the inspection's `locale`
    (`es_AR`: Argentina), as the PHP library's own example sends it (docs/delivery.md)."""
    if not isinstance(delivery, dict):
        raise _refuse(
            "invalid_body",
            "delivery",
            "delivery is required: {channel, destination} to send the link, or "
            "{disabled: true} to hand it out yourself.",
        )
    if delivery.get("disabled") is True:
        return delivery, None
    channel = delivery.get("channel")
    if channel not in CHANNELS:
        raise _refuse(
            "invalid_delivery_channel",
            "delivery.channel",
            f"delivery.channel must be one of {', '.join(CHANNELS)} "
            "(or send delivery.disabled: true and hand the link out yourself).",
        )
    country = delivery.get("countryISO")
    destination = parse_destination(
        channel,
        delivery.get("destination"),
        locale_country(locale) if country is None else country,
    )
    if channel not in available_channels(settings):
        raise _refuse(
            "delivery_channel_unavailable",
            "delivery.channel",
            f"No provider is configured for {channel} on this service (docs/delivery.md).",
        )
    return {**delivery, "destination": destination.address}, destination


def parse_destination(
    channel: Channel, destination: Any, country: Any, *, prefix: str = "delivery."
) -> Destination:
    """The destination normalized for its channel; 400 `invalid_delivery_destination` naming
    `{prefix}destination` (or `{prefix}countryISO`) otherwise."""
    if not isinstance(destination, str) or not destination.strip() or len(destination) > 320:
        raise _refuse(
            "invalid_delivery_destination",
            f"{prefix}destination",
            f"{prefix}destination is required: an email address or a phone number.",
        )
    if channel == "email":
        try:
            address = email_address(destination.strip())
        except ValueError as error:
            raise _refuse(
                "invalid_delivery_destination",
                f"{prefix}destination",
                f"{prefix}destination is not an email address: {error}",
            ) from None
        return Destination(channel, address)
    region = None
    if country is not None:
        if not isinstance(country, str) or country.upper() not in _REGIONS:
            raise _refuse(
                "invalid_delivery_destination",
                f"{prefix}countryISO",
                f"{prefix}countryISO must be a two-letter country code (ISO 3166-1), e.g. AR.",
            )
        region = country.upper()
    try:
        number = phonenumbers.parse(destination, region)
    except phonenumbers.NumberParseException:
        number = None
    if number is None or not phonenumbers.is_valid_number(number):
        hint = "" if region else " (with a + and the country code, or send countryISO)"
        raise _refuse(
            "invalid_delivery_destination",
            f"{prefix}destination",
            f"{prefix}destination is not a valid phone number{hint}.",
        )
    formatted = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return Destination(channel, formatted)


_REGIONS = frozenset(phonenumbers.SUPPORTED_REGIONS)


def available_channels(settings: Settings) -> frozenset[Channel]:
    """The channels a provider can carry. In development, every channel: what has no provider
    goes to the outbox. In production, only the configured ones."""
    if settings.env == "development":
        return frozenset(CHANNELS)
    found: set[Channel] = set()
    if settings.smtp_url:
        found.add("email")
    twilio = bool(settings.twilio_account_sid and settings.twilio_auth_token)
    if twilio and settings.twilio_from:
        found.add("sms")
    if (twilio and settings.twilio_whatsapp_from) or (
        settings.meta_whatsapp_token and settings.meta_phone_number_id
    ):
        found.add("wsp")
    return frozenset(found)


def masked(address: str) -> str:
    """An address as the API shows it: `j***@example.com`, `+54*******4455`."""
    if "@" in address:
        local, _, domain = address.partition("@")
        return f"{local[:1]}***@{domain}"
    if len(address) <= 6:
        return "*" * len(address)
    return address[:3] + "*" * (len(address) - 7) + address[-4:]
