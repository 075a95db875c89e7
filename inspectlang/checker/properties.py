"""Reading declaration properties: `key: value` items by key, texts, numbers, quantities,
sizes, locales and written ids, each wrong value reported where it stands."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from inspectlang import ast
from inspectlang.diagnostics import Reporter, did_you_mean
from inspectlang.property_values import norm, number, span_of, text
from inspectlang.vocabulary import MAX_NUMBER, MAX_TEXT_LENGTH

#: A locale as the language writes it: `en_US`.
LOCALE = re.compile(r"^[a-z]{2}_[A-Z]{2}$")
DEFAULT_LOCALE = "en_US"
#: A locale written with the wrong separator or case: `es-AR`, `es_ar`, `ES_AR`.
MISCASED_LOCALE = re.compile(r"[A-Za-z]{2}[-_][A-Za-z]{2}")
#: Keywords that start a line inside a block, offered for a misspelt one.
LINE_KEYWORDS = ("approve", "disapprove", "otherwise", "require", "validate", "option", "feature")
#: Hours per time unit and meters per distance unit accepted in quantities.
HOURS = {
    "hour": 1.0,
    "hours": 1.0,
    "h": 1.0,
    "day": 24.0,
    "days": 24.0,
    "week": 168.0,
    "weeks": 168.0,
    "minute": 1 / 60,
    "minutes": 1 / 60,
}
METERS = {
    "meter": 1.0,
    "meters": 1.0,
    "m": 1.0,
    "kilometer": 1000.0,
    "kilometers": 1000.0,
    "km": 1000.0,
}


class PropertyReader:
    """Reads property values of one template, reporting each wrong one. It knows the template's
    locales (set by the header stage) and every id written or derived so far (ids are unique)."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter
        self.report = reporter.report
        self.locales = [DEFAULT_LOCALE]
        self.identifiers: dict[str, ast.Span] = {}

    # -- properties --------------------------------------------------------------------------

    def properties(
        self,
        items: tuple[ast.Item, ...],
        allowed: tuple[str, ...],
        where: str,
        translatable: tuple[str, ...] = (),
    ) -> dict[str, ast.Property]:
        """The block's `key: value` properties by normalized key; other items are reported."""
        found: dict[str, ast.Property] = {}
        for item in items:
            if not isinstance(item, ast.Property):
                first = item.words.split()[0] if isinstance(item, ast.Flag) else ""
                keyword = did_you_mean(first, LINE_KEYWORDS) if first else None
                self.report(
                    "E010",
                    f"{self.describe_item(item)} is not allowed in {where}",
                    item.span,
                    keyword,
                )
                continue
            words = item.key.split()
            if item.locale is None and len(words) > 1 and LOCALE.match(words[-1]):
                item = replace(item, key=" ".join(words[:-1]), locale=words[-1])
            key = norm(item.key)
            if key not in allowed and len(words) > 1 and MISCASED_LOCALE.fullmatch(words[-1]):
                written = words[-1]
                fixed = f"{written[:2].lower()}_{written[3:].upper()}"
                if norm(" ".join(words[:-1])) in translatable:
                    self.report(
                        "E028",
                        f"a locale is written `{fixed}`: the language in lower case, `_`, the "
                        f"country in upper case (`{written}` is not)",
                        span_of(item),
                        fixed,
                    )
                    continue
            if key not in allowed:
                self.report(
                    "E010",
                    f"unknown property `{item.key}` in {where}",
                    span_of(item),
                    did_you_mean(key, allowed),
                )
                continue
            if item.locale is not None:
                if key not in translatable:
                    self.report("E019", f"`{key}` cannot have a locale", span_of(item))
                    continue
                self.check_locale(item.locale, item)
                key = f"{key} {item.locale}"
            if key in found:
                self.report("E012", f"`{key}` is given twice in {where}", span_of(item))
                continue
            found[key] = item
        return found

    @staticmethod
    def describe_item(item: ast.Item) -> str:
        if isinstance(item, ast.Flag):
            return f"`{item.words}`"
        names = {
            ast.Validate: "`validate`",
            ast.FeatureUse: "`feature`",
            ast.Require: "`require`",
            ast.Option: "`option`",
            ast.Disapprove: "`disapprove`",
            ast.Review: "`review`",
            ast.Approve: "`approve`",
            ast.Otherwise: "`otherwise`",
            ast.Property: "a property",
        }
        return names.get(type(item), type(item).__name__)

    def check_locale(self, locale: str, node: Any) -> bool:
        if locale not in self.locales:
            self.report(
                "E028",
                f"locale `{locale}` is not declared in `locales`",
                span_of(node),
                did_you_mean(locale, self.locales),
            )
            return False
        return True

    def single(self, prop: ast.Property, what: str) -> ast.PropertyValue | None:
        if len(prop.values) != 1:
            self.report("E019", f"`{prop.key}` takes one {what}", prop.span)
            return None
        return prop.values[0]

    def text_value(self, prop: ast.Property | None) -> str | None:
        if prop is None:
            return None
        value = self.single(prop, "text")
        if value is None:
            return None
        result = text(value)
        if result is None:
            self.report("E019", f"`{prop.key}` takes a text in quotes", value.span)
        elif len(result) > MAX_TEXT_LENGTH:
            self.report("E037", f"text longer than {MAX_TEXT_LENGTH} characters", value.span)
            return None
        return result

    def number_value(
        self,
        prop: ast.Property,
        low: float | None = None,
        high: float | None = None,
        integer: bool = False,
    ) -> int | float | None:
        value = self.single(prop, "number")
        if value is None:
            return None
        result = number(value)
        if result is None or (integer and not isinstance(result, int)):
            kind = "whole number" if integer else "number"
            self.report("E019", f"`{prop.key}` takes a {kind}", value.span)
            return None
        if (low is not None and result < low) or (high is not None and result > high):
            bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            shown = f"{result:g}" if math.isfinite(result) else "a number that long"
            self.report("E019", f"`{prop.key}` must be {bounds}, not {shown}", value.span)
            return None
        return result

    def quantity(
        self, value: Any, units: dict[str, float], what: str, span: ast.Span
    ) -> float | None:
        if not isinstance(value, ast.Quantity) or value.unit.lower() not in units:
            unit = value.unit.lower() if isinstance(value, ast.Quantity) else ""
            known_elsewhere = unit in HOURS or unit in METERS
            suggestion = None if known_elsewhere else did_you_mean(unit, units)
            self.report("E019", f"expected {what}", getattr(value, "span", span), suggestion)
            return None
        result = value.amount * units[value.unit.lower()]
        if not 0 <= result <= MAX_NUMBER:
            self.report("E019", f"{what} must be from 0 to {MAX_NUMBER:g}", value.span)
            return None
        return result

    def size_value(self, value: Any, span: ast.Span) -> tuple[int, int] | None:
        if not isinstance(value, ast.Size) or value.width <= 0 or value.height <= 0:
            self.report(
                "E019", "expected a size in pixels: `WIDTH x HEIGHT`", getattr(value, "span", span)
            )
            return None
        return value.width, value.height

    def identifier(
        self,
        prop: ast.Property | None,
        pattern: re.Pattern[str],
        form: str,
        derived: str,
        owner: ast.Span,
    ) -> str:
        """The written id when valid and unique, else the derived one (after a diagnostic).
        Derived ids are registered too, so a written id cannot take another declaration's."""
        if prop is None:
            if derived in self.identifiers:
                self.report(
                    "E014",
                    f"the id derived from this name, `{derived}`, is written on line "
                    f"{self.identifiers[derived].line} for another declaration",
                    owner,
                    notes=("write another `id:` for one of them",),
                )
            self.identifiers[derived] = ast.NO_SPAN
            return derived
        value = self.text_value(prop)
        if value is None:
            return derived
        if not pattern.match(value):
            self.report(
                "E015", f"`{value}` is not a valid id: expected {form}", prop.values[0].span
            )
            return derived
        if value in self.identifiers:
            first = self.identifiers[value].line
            self.report(
                "E014",
                f"id `{value}` is used twice",
                prop.values[0].span,
                notes=(f"first used on line {first}",) if first else ("it is derived from a name",),
            )
            return derived
        self.identifiers[value] = prop.values[0].span
        return value
