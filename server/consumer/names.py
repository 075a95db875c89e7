"""The built-in templates' names in the consumer's language.

A built-in template (`inspectlang/builtins/*.insp`) is written once, in English, and its name is
part of its fixed manifest; the consumer's pages say it in the page's locale from the
`consumer` catalog, where each name below is a message. A company's own template is shown by
the name it wrote. tests/server/test_consumer_words.py keeps this list equal to the built-ins'
names.
"""

from __future__ import annotations

from inspectlang.builtins import ALIAS_TABLE
from runtime import InspectionState
from server.web.templating import gettext


def _(message: str) -> str:
    """Marks a message for the catalog extraction (domain `consumer`); said by `gettext`."""
    return message


#: Every built-in template's name, as its file writes it.
BUILTIN_NAMES = frozenset(
    {
        _("Easy car inspection"),
        _("Easy motorcycle inspection"),
        _("Easy bicycle inspection"),
        _("Easy machinery inspection"),
        _("Easy goods inspection"),
        _("Easy identity check"),
        _("Easy custom inspection"),
        _("Easy cellphone inspection"),
        _("Deep car inspection"),
        _("Deep motorcycle inspection"),
        _("Car damage declaration"),
    }
)
#: The built-ins' fixed ids (`inspectlang.builtins.ALIAS_TABLE`).
BUILTIN_IDS = frozenset(ident for by_type in ALIAS_TABLE.values() for ident in by_type.values())


def template_name(state: InspectionState, locale: str) -> str:
    """The inspection's template name as the consumer reads it: a built-in's in `locale`."""
    name = state.template.name
    if state.template.id in BUILTIN_IDS and name in BUILTIN_NAMES:
        return gettext(locale, name)
    return name
