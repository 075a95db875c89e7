"""Extract, update and compile the UI catalogs: `python -m server.web.catalogs [update]`.

A domain's messages come from the package of the same name (`web` from `server/web/`,
`consumer` from `server/consumer/`): `_()`/`{% trans %}` in its templates and
`gettext(locale, "...")` in its Python. `update` merges newly extracted messages into every
locale's `.po` (translations kept, new ones empty for a person to fill); the default run
compiles each `.po` whose `.mo` is missing or older (`make install`, `make run` and `make test`
run it; the `.mo` files are not in git, and the server compiles one it finds missing or stale
when it loads the catalog). Babel's own reader and writer, no `pybabel` command needed;
`extract_domain` is what the agreement tests compare against.
"""

from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from server.web.i18n import (
    DEFAULT_LOCALE,
    LOCALE_DIRECTORY,
    SUPPORTED_LOCALES,
    compile_po,
    is_current,
    write_atomically,
)

#: `server/`: a domain's sources are `server/<domain>/`.
SERVER_PACKAGE = LOCALE_DIRECTORY.parent.parent
EXTRACTION_METHODS = [("**/templates/**.html", "jinja2"), ("**.py", "python")]
#: `gettext(locale, message)` in Python: the message is the second argument.
KEYWORDS = {"_": None, "gettext": (2,), "ngettext": (1, 2), "pgettext": ((1, "c"), 2)}
OPTIONS = {"**/templates/**.html": {"extensions": "jinja2.ext.i18n", "trimmed": "true"}}


def po_files(root: Path = LOCALE_DIRECTORY) -> list[Path]:
    return sorted(root.glob("*/LC_MESSAGES/*.po"))


def read_catalog(path: Path) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, locale=path.parent.parent.name)


def compile_all(root: Path = LOCALE_DIRECTORY, *, force: bool = False) -> list[Path]:
    """Write the `.mo` beside each `.po` whose `.mo` is missing or older (every one with
    `force`); returns the files written."""
    written = []
    for path in po_files(root):
        target = path.with_suffix(".mo")
        if force or not is_current(path, target):
            write_atomically(target, compile_po(path))
            written.append(target)
    return written


def extract_domain(domain: str) -> Catalog:
    """Every message the package `server/<domain>/` asks for."""
    catalog = Catalog(locale=DEFAULT_LOCALE, domain=domain)
    source = SERVER_PACKAGE / domain
    for filename, lineno, message, comments, context in extract_from_dir(
        str(source),
        EXTRACTION_METHODS,
        options_map=OPTIONS,
        keywords=KEYWORDS,
        strip_comment_tags=True,
    ):
        catalog.add(
            message,
            locations=[(f"server/{domain}/{filename}", lineno)],
            auto_comments=comments,
            context=context,
        )
    return catalog


def update_domain(domain: str, root: Path = LOCALE_DIRECTORY) -> None:
    """Merge the extracted messages into each locale's `<domain>.po` (English copies itself)."""
    from babel.messages.pofile import write_po

    for locale in SUPPORTED_LOCALES:
        template = extract_domain(domain)  # fresh each time: `update` shares message objects
        path = root / locale / "LC_MESSAGES" / f"{domain}.po"
        path.parent.mkdir(parents=True, exist_ok=True)
        catalog = read_catalog(path) if path.exists() else Catalog(locale=locale, domain=domain)
        catalog.update(template, no_fuzzy_matching=True)
        catalog.obsolete.clear()
        catalog.fuzzy = False
        catalog.project, catalog.version = "inspectlang", "1"
        catalog.copyright_holder = "the inspectlang authors"
        if locale == DEFAULT_LOCALE:
            for message in catalog:
                if isinstance(message.id, tuple) and not all(message.string or ()):
                    message.string = tuple(message.id)
                elif message.id and not message.string:
                    message.string = message.id
        with path.open("wb") as handle:
            write_po(handle, catalog, width=100, omit_header=False, sort_output=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["update"]:
        for domain in argv[1:] or ["web"]:
            update_domain(domain)
    for path in compile_all(force=argv[:1] == ["--force"]):
        print(path.relative_to(LOCALE_DIRECTORY.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
