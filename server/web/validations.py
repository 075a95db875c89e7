"""What each validation is called where people read it (the consumer's pages, the dashboard, the
PDF): a short label and one sentence of help, in the page's locale. The texts are each
validation's entry in `inspectlang.validations` (written there in every locale, beside its name
and options), so a new validation brings its own; a validation a template names that has no
entry shows its name with spaces."""

from __future__ import annotations

from inspectlang.validations import VALIDATION_NAMES, VALIDATIONS
from server.web import i18n

#: Fraud signals the consumer's pages never show while photos are taken (the entries with
#: `shown_to_consumers=False`): naming which one fired teaches whoever is inspected how to get
#: past it. The company sees them (API, dashboard, PDF).
HIDDEN_FROM_CONSUMERS = frozenset(
    name for name, entry in VALIDATIONS.items() if not entry.shown_to_consumers
)


def validation_label(name: str, locale: str) -> str:
    """The validation's name for people, in `locale`."""
    found = VALIDATIONS.get(name)
    if found is None:
        return name.replace("_", " ")
    return found.label.in_locale(i18n.choose_locale(locale))


def validation_help(name: str, locale: str) -> str:
    """One sentence saying what the validation checks, in `locale` ("" when unknown)."""
    found = VALIDATIONS.get(name)
    return found.help.in_locale(i18n.choose_locale(locale)) if found is not None else ""


__all__ = [
    "HIDDEN_FROM_CONSUMERS",
    "VALIDATIONS",
    "VALIDATION_NAMES",
    "validation_help",
    "validation_label",
]
