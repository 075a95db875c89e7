"""UI message catalogs (gettext through Babel) for the web pages.

Catalogs live in `server/web/locale/<locale>/LC_MESSAGES/<domain>.po`; only the `.po` is in
git. Its compiled `<domain>.mo` is made from it when it is missing or older than the `.po`: by
`make install` / `make run` / `make test` (`python -m server.web.catalogs`), else when the
catalog is first loaded, written beside the `.po` when the folder is writable (so a machine
pays it once) and otherwise kept in memory. A stale `.mo` cannot be served. One domain per page
area (`web`, `consumer`, `dashboard`, ...) so areas add messages without touching each other's
files; a locale's translations are all its domains merged. `en_US` is the source language.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
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


def compile_po(po: Path) -> bytes:
    """The `.mo` bytes Babel writes for the `.po` at `po` (fuzzy entries left out)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as handle:
        catalog = read_po(handle, locale=po.parent.parent.name)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue()


def is_current(po: Path, mo: Path) -> bool:
    """Whether `mo` exists and is no older than `po` (it was compiled from this `.po`)."""
    try:
        return mo.stat().st_mtime_ns >= po.stat().st_mtime_ns
    except FileNotFoundError:
        return False


def write_atomically(target: Path, data: bytes) -> None:
    """`data` into `target` through a temporary file and a rename: a process loading the
    catalog meanwhile reads the old file or the new one, never half of one."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def compiled_catalog(po: Path) -> bytes:
    """The `.mo` of `po`: the file beside it when current, else compiled now and written there
    when the folder lets us (a read-only install keeps it in memory for this process)."""
    mo = po.with_suffix(".mo")
    if is_current(po, mo):
        try:
            return mo.read_bytes()
        except OSError:
            pass
    data = compile_po(po)
    with contextlib.suppress(OSError):  # read-only: this process keeps it in memory
        write_atomically(mo, data)
    return data


@cache
def translations(locale: str) -> NullTranslations:
    """Every domain's messages for `locale`, merged (cached for the process's life)."""
    locale = choose_locale(locale)
    merged: Translations | None = None
    for domain in domains():
        po = LOCALE_DIRECTORY / locale / "LC_MESSAGES" / f"{domain}.po"
        if not po.exists():
            continue
        loaded = Translations(fp=io.BytesIO(compiled_catalog(po)), domain=domain)
        if merged is None:
            merged = loaded
        else:
            merged.merge(loaded)
    return merged if merged is not None else NullTranslations()
