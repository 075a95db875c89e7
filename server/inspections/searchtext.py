"""The text the dashboard's search matches (`InspectionRecord.search_text`), written with the
filter columns on every save, and a query's terms folded the same way (`server.inspections.search`
explains the matching). No import of the other inspection modules: `service` uses it."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from inspectlang.product_fields import SEARCHABLE

#: Longest `search_text` stored (characters): enough for every searched field of a real
#: inspection; a giant metadata value is cut, not indexed whole.
MAX_SEARCH_CHARS = 2000
#: Product fields searched: the searchable ones of the language's table.
PRODUCT_FIELDS = SEARCHABLE
#: Consumer fields searched.
CONSUMER_FIELDS = ("identification", "email", "phone")


def fold(text: str) -> str:
    """Accent- and case-folded, every run of non-alphanumerics one space ("Pérez-Núñez" ->
    `perez nunez`)."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join("".join(c if c.isalnum() else " " for c in plain).split())


def _words(value: Any) -> list[str]:
    if value is None or isinstance(value, (dict, list, bool)):
        return []
    words = fold(str(value)).split()
    return [*words, "".join(words)] if len(words) > 1 else words


def search_text(document: Mapping[str, Any]) -> str:
    """The normalized text a search matches, from a stored state document (or an API
    Inspection object: the same field names)."""
    parts: list[str] = []
    parts += _words(document.get("_id") or document.get("id"))
    consumer = document.get("consumer")
    if isinstance(consumer, Mapping):
        name = " ".join(
            str(consumer[key])
            for key in ("firstName", "lastName")
            if isinstance(consumer.get(key), str)
        )
        parts += _words(name)
        for key in CONSUMER_FIELDS:
            parts += _words(consumer.get(key))
    for product in document.get("products") or []:
        if not isinstance(product, Mapping):
            continue
        data = product.get("data")
        if not isinstance(data, Mapping):
            data = product.get(product.get("type") or "")
        if isinstance(data, Mapping):
            for key in PRODUCT_FIELDS:
                parts += _words(data.get(key))
    metadata = document.get("metadata")
    if isinstance(metadata, Mapping):
        for value in metadata.values():
            parts += _words(value)
    seen: dict[str, None] = dict.fromkeys(parts)
    return " ".join(seen)[:MAX_SEARCH_CHARS]


def terms(query: str) -> list[str]:
    """The terms of a query: its whitespace-separated words, each folded and compacted (so an
    email, a dashed plate or an accented name is one term)."""
    found = []
    for word in query.split():
        compact = fold(word).replace(" ", "")
        if compact and compact not in found:
            found.append(compact)
    return found


def like_pattern(term: str) -> str:
    """The `LIKE ... ESCAPE '\\'` pattern matching `term` anywhere in `search_text`."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
