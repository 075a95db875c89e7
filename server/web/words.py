"""Coded values in words, the same on every page that shows them: a color read, a declared use,
a damage's part, kind and severity (`VALUE_WORDS`), a photo's usual side (`SIDE_WORDS`) and an
inspection's type (`TYPE_WORDS`).

The PDF report (`server.reports.sections`) and the history (`server.web.history`: the
dashboard's and the review page's history, its CSV) both say them from here, so a damage reads
"baúl · abolladura · leve" and an unlabelled photo "Frente" wherever an es_AR reader meets it.
Translated in the catalog domain `web`.
"""

from __future__ import annotations

from typing import Any

from server.web import i18n


def _(message: str) -> str:
    """Marks a message for the catalog extraction (domain `web`); `value_word` translates."""
    return message


#: Inspection and product types (`inspectlang.manifest.INSPECTION_TYPES`, the spec's) in words:
#: the PDF's type rows and the dashboard's template list.
TYPE_WORDS: dict[str, str] = {
    "car": _("Car"),
    "moto": _("Motorbike"),
    "bike": _("Bicycle"),
    "machinery": _("Machine"),
    "goods": _("Goods"),
    "people": _("Person"),
    "custom": _("Other"),
    "cellphone": _("Phone"),
}

#: Values the API and the analyzers write as English codes (a color read, a declared use, a
#: damage's part, kind and severity), in words of the reader's language. A value not listed
#: (a plate, a make, a company's own words) is shown as written.
VALUE_WORDS: dict[str, str] = {
    "yellow": _("yellow"),
    "blue": _("blue"),
    "white": _("white"),
    "gold": _("gold"),
    "grey": _("grey"),
    "gray": _("grey"),
    "silver": _("silver"),
    "orange": _("orange"),
    "black": _("black"),
    "red": _("red"),
    "green": _("green"),
    "brown": _("brown"),
    "private": _("private"),
    "commercial": _("commercial"),
    "dent": _("dent"),
    "scratch": _("scratch"),
    "broken": _("broken"),
    "minor": _("minor"),
    "moderate": _("moderate"),
    "severe": _("severe"),
    "unknown": _("not known"),
    "trunk": _("trunk"),
    "hood": _("hood"),
    "door": _("door"),
    "bumper": _("bumper"),
    "windshield": _("windshield"),
}


def pgettext(context: str, message: str) -> tuple[str, str]:
    """Marks a message with its context for the catalog extraction; translated by `side_word`."""
    return context, message


#: The usual photo sides in words, for a photo whose template gives it no label (a side of the
#: template's own, `trunk_open`, is shown as written). In the context "photo side": "Back" is
#: also the consumer's button ("Volver"), a side here ("Parte trasera").
SIDE_WORDS: dict[str, tuple[str, str]] = {
    "front": pgettext("photo side", "Front"),
    "back": pgettext("photo side", "Back"),
    "left": pgettext("photo side", "Left side"),
    "right": pgettext("photo side", "Right side"),
    "dashboard": pgettext("photo side", "Dashboard"),
    "odometer": pgettext("photo side", "Odometer"),
    "interior": pgettext("photo side", "Interior"),
    "plate": pgettext("photo side", "Plate"),
    "selfie": pgettext("photo side", "Selfie"),
}


def value_word(value: Any, locale: str | None) -> str | None:
    """A coded value (`grey`, `minor`, `trunk`) in words of `locale`; None for any other value
    (a plate, a make, a company's own words), which its caller shows as written."""
    if not isinstance(value, str) or value.strip().lower() not in VALUE_WORDS:
        return None
    translations = i18n.translations(i18n.choose_locale(locale))
    return str(translations.gettext(VALUE_WORDS[value.strip().lower()]))


def side_word(side: str, locale: str | None) -> str:
    """A photo's side in words of `locale` (`front` -> "Frente"); a side of the template's own
    (`trunk_open`) as written."""
    if side in SIDE_WORDS:
        return str(i18n.translations(i18n.choose_locale(locale)).pgettext(*SIDE_WORDS[side]))
    return side
