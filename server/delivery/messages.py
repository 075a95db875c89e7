"""The message that carries the magic link, in the inspection's locale: the company's name,
what to do, the link and when it expires. Email gets an HTML and a text part; SMS and WhatsApp
the short text. Dates are formatted by Babel in the same locale."""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime

from babel.dates import format_datetime

#: Locales with their own texts; any other falls back to its language, then to en_US.
TEXTS: dict[str, dict[str, str]] = {
    "en_US": {
        "subject": "{company}: complete your inspection",
        "intro": "{company} asks you to complete an inspection.",
        "what": "Open the link on your phone, take the photos and answer a few questions. "
        "It takes a few minutes and needs no app.",
        "button": "Start the inspection",
        "expires": "The link expires on {expires}.",
        "short": "{company}: complete your inspection here: {link}",
        "short_expires": " (valid until {expires})",
        "ignore": "If you did not expect this message, you can ignore it.",
        "retake_subject": "{company}: please retake some photos",
        "retake_intro": "{company} asks you to take some photos of your inspection again.",
        "retake_short": "{company}: please retake some photos: {note} {link}",
    },
    "es_AR": {
        "subject": "{company}: completá tu inspección",
        "intro": "{company} te pide que completes una inspección.",
        "what": "Abrí el enlace en tu teléfono, sacá las fotos y respondé unas preguntas. "
        "Lleva unos minutos y no hace falta instalar nada.",
        "button": "Empezar la inspección",
        "expires": "El enlace vence el {expires}.",
        "short": "{company}: completá tu inspección acá: {link}",
        "short_expires": " (válido hasta el {expires})",
        "ignore": "Si no esperabas este mensaje, podés ignorarlo.",
        "retake_subject": "{company}: volvé a sacar algunas fotos",
        "retake_intro": "{company} te pide que vuelvas a sacar algunas fotos de tu inspección.",
        "retake_short": "{company}: volvé a sacar algunas fotos: {note} {link}",
    },
    "pt_BR": {
        "subject": "{company}: conclua sua vistoria",
        "intro": "{company} pede que você conclua uma vistoria.",
        "what": "Abra o link no seu celular, tire as fotos e responda algumas perguntas. "
        "Leva poucos minutos e não precisa instalar nenhum aplicativo.",
        "button": "Começar a vistoria",
        "expires": "O link expira em {expires}.",
        "short": "{company}: conclua sua vistoria aqui: {link}",
        "short_expires": " (válido até {expires})",
        "ignore": "Se você não esperava esta mensagem, pode ignorá-la.",
        "retake_subject": "{company}: tire algumas fotos novamente",
        "retake_intro": "{company} pede que você tire algumas fotos da sua vistoria novamente.",
        "retake_short": "{company}: tire algumas fotos novamente: {note} {link}",
    },
}
_BY_LANGUAGE = {"en": "en_US", "es": "es_AR", "pt": "pt_BR"}


@dataclass(frozen=True, slots=True)
class Message:
    locale: str
    subject: str
    text: str
    html: str
    #: For SMS and WhatsApp: one short line with the link.
    short: str


def texts_locale(locale: str | None) -> str:
    if locale in TEXTS:
        return locale
    return _BY_LANGUAGE.get((locale or "")[:2], "en_US")


def compose(
    locale: str | None,
    company: str,
    link: str,
    expires_at: datetime | None,
    note: str | None = None,
) -> Message:
    """The link's message; with `note` (a reviewer's retake message, docs/review.md) it asks
    to retake photos and carries the note as written."""
    chosen = texts_locale(locale)
    words = TEXTS[chosen]
    if note is not None:
        words = {
            **words,
            "subject": words["retake_subject"],
            "intro": words["retake_intro"],
            "what": note,
            "short": words["retake_short"].replace(
                "{note}", note.replace("{", "{{").replace("}", "}}")
            ),
        }
    expires = (
        format_datetime(expires_at, "medium", tzinfo=expires_at.tzinfo, locale=chosen) + " UTC"
        if expires_at is not None
        else None
    )
    lines = [words["intro"].format(company=company), "", words["what"], "", link, ""]
    if expires:
        lines += [words["expires"].format(expires=expires), ""]
    lines.append(words["ignore"])
    text = "\n".join(lines) + "\n"
    escaped = {"link": html.escape(link, quote=True)}
    parts = [
        f"<p>{html.escape(words['intro'].format(company=company))}</p>",
        f"<p>{html.escape(words['what'])}</p>",
        f'<p><a href="{escaped["link"]}">{html.escape(words["button"])}</a></p>',
    ]
    if expires:
        parts.append(f"<p>{html.escape(words['expires'].format(expires=expires))}</p>")
    parts.append(f"<p><small>{html.escape(words['ignore'])}</small></p>")
    lang = chosen.replace("_", "-")
    page = (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{html.escape(words['subject'].format(company=company))}</title></head>"
        f"<body>{''.join(parts)}</body></html>"
    )
    short = words["short"].format(company=company, link=link)
    if expires:
        short += words["short_expires"].format(expires=expires)
    return Message(
        locale=chosen,
        subject=words["subject"].format(company=company),
        text=text,
        html=page,
        short=short,
    )
