"""The UI message catalogs: every `.po` compiles, a missing or stale `.mo` is compiled again
when the catalog loads (the `.mo` files are not in git), every locale has every domain, every
message the sources ask for is in the catalog, and every message is translated in every locale
(an untranslated one would show English to a user of es_AR or pt_BR without anyone noticing)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from server.web import catalogs, i18n


def test_every_locale_has_every_domain() -> None:
    for locale in i18n.SUPPORTED_LOCALES:
        folder = i18n.LOCALE_DIRECTORY / locale / "LC_MESSAGES"
        assert sorted(path.stem for path in folder.glob("*.po")) == i18n.domains(), locale


@pytest.mark.parametrize(
    "po", catalogs.po_files(), ids=lambda path: f"{path.parent.parent.name}/{path.name}"
)
def test_every_po_compiles_to_what_the_pages_load(po: Path) -> None:
    """Babel reads the `.po` and writes a `.mo` holding each of its translated messages; the
    `.mo` the pages load (written beside it, by `make` or at first load) is that one."""
    from babel.support import Translations

    compiled = i18n.compile_po(po)
    loaded = Translations(fp=io.BytesIO(compiled))
    catalog = catalogs.read_catalog(po)
    for message in catalog:
        if message.id and isinstance(message.id, str) and not message.context:
            assert loaded.gettext(message.id) == message.string, (po, message.id)
    assert i18n.compiled_catalog(po) == compiled
    assert i18n.is_current(po, po.with_suffix(".mo"))


def _one_catalog(tmp_path: Path) -> Path:
    source = i18n.LOCALE_DIRECTORY / "es_AR" / "LC_MESSAGES" / "web.po"
    po = tmp_path / "es_AR" / "LC_MESSAGES" / "web.po"
    po.parent.mkdir(parents=True)
    po.write_bytes(source.read_bytes())
    return po


def test_a_missing_or_stale_mo_is_compiled_again_and_written(tmp_path: Path) -> None:
    po = _one_catalog(tmp_path)
    mo = po.with_suffix(".mo")
    fresh = i18n.compiled_catalog(po)
    assert mo.read_bytes() == fresh  # missing: compiled and written, paid once
    mo.write_bytes(b"stale")
    os.utime(mo, ns=(po.stat().st_mtime_ns - 10**9,) * 2)  # older than its .po
    assert not i18n.is_current(po, mo)
    assert i18n.compiled_catalog(po) == fresh and mo.read_bytes() == fresh
    assert catalogs.compile_all(tmp_path) == []  # current: nothing written
    os.utime(mo, ns=(po.stat().st_mtime_ns - 10**9,) * 2)
    assert catalogs.compile_all(tmp_path) == [mo]


def test_a_read_only_install_keeps_the_compiled_catalog_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    po = _one_catalog(tmp_path)

    def refuse(target: Path, data: bytes) -> None:
        raise PermissionError(13, "Read-only file system", str(target))

    monkeypatch.setattr(i18n, "write_atomically", refuse)
    assert i18n.compiled_catalog(po) == i18n.compile_po(po)
    assert not po.with_suffix(".mo").exists()


@pytest.mark.parametrize("domain", i18n.domains())
def test_catalogs_hold_every_extracted_message_translated(domain: str) -> None:
    wanted = {
        (message.id, message.context) for message in catalogs.extract_domain(domain) if message.id
    }
    assert wanted, f"no message extracted for {domain}"
    for locale in i18n.SUPPORTED_LOCALES:
        path = i18n.LOCALE_DIRECTORY / locale / "LC_MESSAGES" / f"{domain}.po"
        catalog = catalogs.read_catalog(path)
        present = {(message.id, message.context) for message in catalog if message.id}
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


@pytest.mark.parametrize("locale", i18n.SUPPORTED_LOCALES)
def test_one_message_one_translation_across_domains(locale: str) -> None:
    """A locale's domains are merged into one catalog, so the same message (English text and
    context) translated two ways would show one area the other's word (the review's "Daño"
    as the consumer's page title). Two meanings of one word take a `pgettext` context."""
    seen: dict[tuple[object, object], tuple[str, object]] = {}
    clashes = []
    for domain in i18n.domains():
        path = i18n.LOCALE_DIRECTORY / locale / "LC_MESSAGES" / f"{domain}.po"
        for message in catalogs.read_catalog(path):
            if not message.id:
                continue
            key = (message.id, message.context)
            first = seen.setdefault(key, (domain, message.string))
            if first[1] != message.string:
                clashes.append(f"{key}: {first[0]} {first[1]!r} vs {domain} {message.string!r}")
    assert not clashes, clashes


def test_a_context_tells_two_meanings_of_one_word_apart() -> None:
    translations = i18n.translations("es_AR")
    assert translations.gettext("Why") == "Por qué"
    assert translations.pgettext("purpose", "Why") == "Para qué"
    assert translations.gettext("Damage") == "Daño"
    assert translations.pgettext("page title: the damages", "Damage") == "Daños"


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


#: Dashboard templates: every one says every word through the catalog (`_()` / `{% trans %}`);
#: the test below fails on any word written outside it, in a template of the folder added later
#: too.
def _dashboard_templates() -> list[str]:
    from pathlib import Path

    import server.dashboard

    folder = Path(server.dashboard.__file__).with_name("templates")
    return sorted(path.name for path in folder.glob("*.html"))


TRANSLATED_DASHBOARD_TEMPLATES = tuple(_dashboard_templates())
#: Words that are the same in every language.
UNTRANSLATED_WORDS = {"inspectlang", "UTC", "HTTP"}


def bare_words(template: str) -> list[str]:
    """The words of a Jinja template outside tags, expressions, comments and HTML markup: what
    a reader sees in the page's source language without going through the catalog."""
    import re

    text = re.sub(r"{#.*?#}", " ", template, flags=re.S)
    # A block naming a CSS class is markup, not text.
    text = re.sub(r"{% block body_class %}.*?{% endblock %}", " ", text, flags=re.S)
    text = re.sub(r"{%.*?%}", " ", text, flags=re.S)
    text = re.sub(r"{{.*?}}", " ", text, flags=re.S)
    text = re.sub(r"<[^>]*>", " ", text, flags=re.S)
    words = re.findall(r"[^\W\d_]{2,}", text)
    return [word for word in words if word not in UNTRANSLATED_WORDS]


def test_bare_words_finds_an_untranslated_word() -> None:
    assert bare_words('<p>{{ _("Search") }} Filters <a title="x">{{ n }}</a></p>') == ["Filters"]
    assert bare_words("{% if x %}{{ _('Yes') }}{% endif %} · — {# note #}") == []


@pytest.mark.parametrize("name", TRANSLATED_DASHBOARD_TEMPLATES)
def test_dashboard_templates_say_every_word_through_the_catalog(name: str) -> None:
    from pathlib import Path

    import server.dashboard

    folder = Path(server.dashboard.__file__).with_name("templates")
    assert bare_words((folder / name).read_text(encoding="utf-8")) == [], name


def test_attribute_texts_of_translated_templates_are_translated() -> None:
    """`aria-label`, `alt`, `title` and `placeholder` are read aloud or shown: translated too."""
    import re
    from pathlib import Path

    import server.dashboard

    folder = Path(server.dashboard.__file__).with_name("templates")
    for name in TRANSLATED_DASHBOARD_TEMPLATES:
        source = (folder / name).read_text(encoding="utf-8")
        for attribute in re.findall(r'(?:aria-label|alt|title|placeholder)="([^"]*)"', source):
            assert not bare_words(attribute), f"{name}: {attribute!r}"


def test_every_validation_has_a_label_and_help_in_every_locale() -> None:
    """The validations' texts are written in their entries (inspectlang.validations), not in
    the catalogs: every entry in every locale of the pages, translated, not English copies."""
    from inspectlang.validations import LOCALES, VALIDATION_NAMES
    from server.web.validations import validation_help, validation_label

    assert LOCALES == i18n.SUPPORTED_LOCALES
    for name in VALIDATION_NAMES:
        english = validation_label(name, "en_US"), validation_help(name, "en_US")
        assert all(english) and english[0] != name, name
        for locale in ("es_AR", "pt_BR"):
            translated = validation_label(name, locale), validation_help(name, locale)
            assert translated[0] != english[0], (locale, name)
            assert translated[1] != english[1], (locale, name)
    # `complete` decodes and measures the photo: its name says so, not "whole object".
    assert "whole" not in validation_label("complete", "en_US").lower()
    assert validation_label("my_check", "es_AR") == "my check"
    # The page's locale as the pages choose it: a bare language, another region, none known.
    assert validation_label("date", "es") == validation_label("date", "es_AR") == "Foto reciente"
    assert validation_label("date", "pt-PT") == "Foto recente"
    assert validation_label("date", "de_DE") == "Photo is recent"
