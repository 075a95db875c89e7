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

from babel import negotiate_locale
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


#: A bare language (or another region of it) goes to the region we translate for.
LANGUAGE_ALIASES = {locale.split("_", 1)[0].lower(): locale for locale in SUPPORTED_LOCALES}


def _best(preferred: list[str]) -> str | None:
    """Babel's negotiation over our locales: exact tags first, then each tag's language."""
    tags = [tag.strip().replace("-", "_") for tag in preferred if tag and tag.strip()]
    expanded = [name for tag in tags for name in (tag, tag.split("_", 1)[0])]
    found = negotiate_locale(expanded, SUPPORTED_LOCALES, sep="_", aliases=LANGUAGE_ALIASES)
    if found is None:
        return None
    return next(locale for locale in SUPPORTED_LOCALES if locale.lower() == found.lower())


def choose_locale(wanted: str | None) -> str:
    """The supported locale for `wanted` (`es_AR`, `es-ar`, `es`...), else the default."""
    return _best([wanted or ""]) or DEFAULT_LOCALE


def negotiate(accept_language: str | None) -> str:
    """The best supported locale for an `Accept-Language` header: its tags by quality, then
    order (at most 20 read), negotiated by Babel."""
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
        if tag and tag != "*" and quality > 0:
            choices.append((-quality, position, tag))
    return _best([tag for _quality, _position, tag in sorted(choices)]) or DEFAULT_LOCALE


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
