"""UI message catalogs (gettext through Babel) for the web pages.

Catalogs live in `server/web/locale/<locale>/LC_MESSAGES/<domain>.po`, compiled beside them to
`<domain>.mo` (`python -m server.web.catalogs` recompiles; a test checks that every `.mo`
agrees with its `.po` and that every locale translates every message). One domain per page
area (`web`, `consumer`, `dashboard`, ...) so areas add messages without touching each other's
files; a locale's translations are all its domains merged. `en_US` is the source language.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from babel.support import NullTranslations, Translations

#: Where the catalogs are (shipped as package data).
LOCALE_DIRECTORY = Path(__file__).with_name("locale")
#: The UI languages. Inspections whose locale is another fall back to `DEFAULT_LOCALE`.
SUPPORTED_LOCALES = ("en_US", "es_AR", "pt_BR")
DEFAULT_LOCALE = "en_US"


def domains() -> list[str]:
    """Every catalog domain present for the default locale."""
    folder = LOCALE_DIRECTORY / DEFAULT_LOCALE / "LC_MESSAGES"
    return sorted(path.stem for path in folder.glob("*.po"))


def choose_locale(wanted: str | None) -> str:
    """The supported locale for `wanted` (`es_AR`, `es-ar`, `es`...), else the default."""
    if not wanted:
        return DEFAULT_LOCALE
    normalized = wanted.strip().replace("-", "_")
    for locale in SUPPORTED_LOCALES:
        if locale.lower() == normalized.lower():
            return locale
    language = normalized.split("_", 1)[0].lower()
    for locale in SUPPORTED_LOCALES:
        if locale.split("_", 1)[0] == language:
            return locale
    return DEFAULT_LOCALE


def negotiate(accept_language: str | None) -> str:
    """The best supported locale for an `Accept-Language` header (by quality, then order)."""
    if not accept_language:
        return DEFAULT_LOCALE
    choices: list[tuple[float, int, str]] = []
    for position, part in enumerate(accept_language.split(",")[:20]):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        if tag and tag != "*":
            choices.append((-quality, position, tag))
    for _quality, _position, tag in sorted(choices):
        language = tag.replace("-", "_").split("_", 1)[0].lower()
        if any(locale.split("_", 1)[0] == language for locale in SUPPORTED_LOCALES):
            return choose_locale(tag)
    return DEFAULT_LOCALE


@cache
def translations(locale: str) -> NullTranslations:
    """Every domain's messages for `locale`, merged (cached for the process's life)."""
    locale = choose_locale(locale)
    merged: Translations | None = None
    for domain in domains():
        loaded = Translations.load(str(LOCALE_DIRECTORY), [locale], domain=domain)
        if not isinstance(loaded, Translations):
            continue
        if merged is None:
            merged = loaded
        else:
            merged.merge(loaded)
    return merged if merged is not None else NullTranslations()
