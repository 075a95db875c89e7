"""The UI message catalogs: every shipped `.mo` is exactly what its `.po` compiles to, every
locale has every domain, every message the sources ask for is in the catalog, and every
message is translated in every locale (an untranslated one would show English to a user of
es_AR or pt_BR without anyone noticing)."""

from __future__ import annotations

import pytest

from server.web import catalogs, i18n


def test_every_locale_has_every_domain() -> None:
    for locale in i18n.SUPPORTED_LOCALES:
        folder = i18n.LOCALE_DIRECTORY / locale / "LC_MESSAGES"
        assert sorted(path.stem for path in folder.glob("*.po")) == i18n.domains(), locale
        assert sorted(path.stem for path in folder.glob("*.mo")) == i18n.domains(), locale


@pytest.mark.parametrize(
    "po", catalogs.po_files(), ids=lambda path: f"{path.parent.parent.name}/{path.name}"
)
def test_mo_agrees_with_po(po: object) -> None:
    from pathlib import Path

    assert isinstance(po, Path)
    assert po.with_suffix(".mo").read_bytes() == catalogs.compiled_bytes(po), (
        f"{po.with_suffix('.mo')} is stale: run `python -m server.web.catalogs`"
    )


@pytest.mark.parametrize("domain", i18n.domains())
def test_catalogs_hold_every_extracted_message_translated(domain: str) -> None:
    wanted = {message.id for message in catalogs.extract_domain(domain) if message.id}
    assert wanted, f"no message extracted for {domain}"
    for locale in i18n.SUPPORTED_LOCALES:
        path = i18n.LOCALE_DIRECTORY / locale / "LC_MESSAGES" / f"{domain}.po"
        catalog = catalogs.read_catalog(path)
        present = {message.id for message in catalog if message.id}
        missing = sorted(str(item) for item in wanted - present)
        assert not missing, (
            f"{locale}/{domain}.po lacks {missing}: "
            f"run `python -m server.web.catalogs update {domain}`"
        )
        untranslated = [
            str(message.id)
            for message in catalog
            if message.id
            and (
                not message.string
                or (isinstance(message.string, tuple) and not all(message.string))
            )
        ]
        assert not untranslated, f"{locale}/{domain}.po leaves untranslated: {untranslated}"
        assert not [m.id for m in catalog if m.id and m.fuzzy], (
            f"{locale}/{domain}.po has fuzzy entries"
        )


def test_translations_merge_domains_and_fall_back() -> None:
    assert i18n.translations("es_AR").gettext("Skip to content") == "Ir al contenido"
    assert i18n.translations("pt-BR").gettext("Skip to content") == "Pular para o conteúdo"
    assert i18n.translations("fr_FR").gettext("Skip to content") == "Skip to content"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, "en_US"),
        ("es-AR,es;q=0.9,en;q=0.8", "es_AR"),
        ("es-MX", "es_AR"),
        ("fr-FR, pt;q=0.5, en;q=0.4", "pt_BR"),
        ("de, *;q=0.1", "en_US"),
        ("en;q=0.2, es;q=0.9", "es_AR"),
        ("garbage;q=x", "en_US"),
    ],
)
def test_negotiate(header: str | None, expected: str) -> None:
    assert i18n.negotiate(header) == expected
