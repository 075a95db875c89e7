"""A loaded template: verified, compiled logic plus the lookup tables the engine needs.

`load_program(manifest)` verifies the manifest's logic (`runtime.verify`), generates Python for
every rule, check and the verdict (`runtime.codegen`) and `compile()`s it once per template
revision; later calls with the same `logic.revision` return the cached Program. A Program is
immutable and holds no inspection data, so any number of inspections can share it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from cachetools import LRUCache

from inspectlang import ir
from inspectlang.manifest import (
    ImageSpec,
    InputSpec,
    ReasonTranslation,
    Template,
    ValidationSpec,
    Verdict,
)
from inspectlang.manifest import revision_of as content_revision
from runtime import codegen
from runtime.errors import InvalidProgram, StepLimitExceeded
from runtime.reference import Reason, ReferenceEvaluator
from runtime.verify import Scope, Verifier
from runtime.wording import say

EvaluationPath = Literal["compiled", "reference"]

#: Default reason when `approve when` does not hold and the template gives none (in other
#: locales: `runtime.wording`, "otherwise").
DEFAULT_OTHERWISE = say("otherwise", "en_US")
#: Programs kept in the cache (by revision).
CACHE_SIZE = 256


@dataclass(frozen=True)
class RuleProgram:
    id: str
    event: str
    input: str | None
    image: str | None
    validation: str | None
    body: tuple[ir.Statement, ...]
    span: list[int]


@dataclass(frozen=True)
class CheckProgram:
    id: str
    key: str
    name: str
    description: str
    valid: ir.Expression
    span: list[int]
    #: locale -> (name, description) where the template translates them (`name es_AR:`).
    translations: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: `for information`: shown for a person or the report, deciding nothing on purpose.
    informational: bool = False

    def texts(self, locale: str) -> tuple[str, str]:
        """The name and description in `locale` (the default locale's where not translated)."""
        return self.translations.get(locale, (self.name, self.description))


@dataclass(frozen=True)
class Program:
    """Everything the engine needs from one template revision."""

    manifest: Template
    revision: str
    rules: tuple[RuleProgram, ...]
    checks: tuple[CheckProgram, ...]
    disapprovals: tuple[tuple[Reason, ir.Expression, list[int]], ...]
    approve_when: ir.Expression | None
    otherwise: Reason
    source: str
    functions: dict[str, Callable[..., Any]] = field(repr=False)
    path: EvaluationPath = "compiled"
    #: Input or image identifier -> (function name, verified `ask when` condition).
    asks: dict[str, tuple[str, ir.Expression]] = field(default_factory=dict)
    #: The verdict block's `review "reason" when ...` rules (reason, condition, span), in
    #: source order; each compiled as `review_<i>`. Empty until the language writes them.
    reviews: tuple[tuple[Reason, ir.Expression, list[int]], ...] = ()
    #: The verdict's reasons in each locale the template translates any of them into
    #: (`reason es_AR: "..."`), a line without a translation in its default text; compiled as
    #: `verdict_l<n>` and `review_<i>_l<n>`, n the locale's position here.
    localized: dict[str, LocalizedReasons] = field(default_factory=dict)
    #: `image_labels` per locale, filled on first use (a Program is shared and immutable; the
    #: labels of a locale never change, so a race only computes them twice).
    _image_labels: dict[str, dict[str, str]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def image_labels(self, locale: str) -> dict[str, str]:
        """`i.label` of each template image by identifier: its label in `locale`, else its
        default label, else its name in the template, else its identifier. Computed once per
        locale: records are built on every event."""
        found = self._image_labels.get(locale)
        if found is None:
            found = {}
            for spec in self.manifest.images:
                logic = self.manifest.logic.images.get(spec.identifier)
                labels = logic.labels if logic is not None else {}
                name = logic.name if logic is not None else ""
                found[spec.identifier] = (
                    labels.get(locale) or labels.get("") or name or spec.identifier
                )
            self._image_labels[locale] = found
        return found

    def informational_checks(self) -> frozenset[str]:
        """The ids (`globalValidations[]._id`) of the checks marked `for information`."""
        return frozenset(check.id for check in self.checks if check.informational)

    def reasons_in(self, locale: str | None) -> LocalizedReasons:
        """The verdict's reasons as `locale` reads them (the default text where untranslated)."""
        found = self.localized.get(locale or "")
        if found is not None:
            return found
        return LocalizedReasons(
            tuple(reason for reason, _, _ in self.disapprovals),
            self.otherwise if self.manifest.logic.verdict.otherwise else say("otherwise", locale),
            tuple(reason for reason, _, _ in self.reviews),
        )

    def _suffix(self, locale: str | None) -> str:
        """The compiled functions' suffix for `locale` ("" for the default texts)."""
        if locale is None or locale not in self.localized:
            return ""
        return f"_l{list(self.localized).index(locale)}"

    # -- lookups --------------------------------------------------------------------------------

    def image_spec(self, identifier: str) -> ImageSpec | None:
        return next((i for i in self.manifest.images if i.identifier == identifier), None)

    def runs_validation(self, name: str) -> bool:
        """Whether any photo of the template runs validation `name` (`validate NAME`)."""
        return any(
            spec.validation == name and spec.run
            for image in self.manifest.images
            for spec in image.validations
        )

    def image_by_side(self, side: str) -> ImageSpec | None:
        return next((i for i in self.manifest.images if i.side == side), None)

    def input_spec(self, identifier: str) -> InputSpec | None:
        return next((i for i in self.manifest.inputs if i.identifier == identifier), None)

    def threshold(self, image: str, validation: ValidationSpec) -> float:
        logic = self.manifest.logic.images.get(image)
        if logic is not None and validation.validation in logic.validations:
            return logic.validations[validation.validation].minConfidence
        return self.manifest.parameters.minConfidence

    def validator_options(self, image: str, validation: str) -> dict[str, float]:
        logic = self.manifest.logic.images.get(image)
        if logic is not None and validation in logic.validations:
            return dict(logic.validations[validation].options)
        return {}

    def feature_enabled(self, name: str) -> bool:
        """On when the template enables it, or an image asks for it and it is not turned off."""
        logic = self.manifest.logic
        if any(f.feature == name and not f.active for f in logic.features):
            return False
        if any(f.feature == name for f in self.manifest.features):
            return True
        if any(f.feature == name and f.active for f in logic.features):
            return True
        return any(name in image.features for image in logic.images.values())

    def with_path(self, path: EvaluationPath) -> Program:
        """The same program evaluated through the other path (tests, explanations)."""
        return replace(self, path=path)

    # -- evaluation -----------------------------------------------------------------------------

    def run_rule(self, index: int, env: dict[str, Any]) -> None:
        if self.path == "compiled":
            self.functions[f"rule_{index}"](env)
        else:
            ReferenceEvaluator().statements(self.rules[index].body, env)

    def run_check(self, index: int, env: dict[str, Any]) -> bool:
        if self.path == "compiled":
            return bool(self.functions[f"check_{index}"](env))
        return ReferenceEvaluator().condition(self.checks[index].valid, env) is True

    def image_optional(self, identifier: str) -> bool:
        """The image is `optional`: a photo the consumer may leave out."""
        logic = self.manifest.logic.images.get(identifier)
        return bool(logic is not None and logic.optional)

    def input_asked(self, identifier: str, env: dict[str, Any]) -> bool:
        """Whether the input (or image) is asked on this data: it has no `ask when`, or it
        holds."""
        ask = self.asks.get(identifier)
        if ask is None:
            return True
        name, node = ask
        try:
            if self.path == "compiled":
                return bool(self.functions[name](env))
            return ReferenceEvaluator().condition(node, env) is True
        except StepLimitExceeded:
            return True  # never expected of a small condition: asking is the safe side

    def run_review(self, index: int, env: dict[str, Any], locale: str | None = None) -> str | None:
        """The reason of review rule `index` (in `locale`, else the default text) when its
        condition holds, else None."""
        if self.path == "compiled":
            held, reasons = self.functions[f"review_{index}{self._suffix(locale)}"](env)
        else:
            reason = self.reasons_in(locale).reviews[index]
            when = self.reviews[index][1]
            held, reasons = ReferenceEvaluator().verdict([(reason, when)], None, "", env)
        return None if held else str(next(iter(reasons)))

    def run_verdict(self, env: dict[str, Any], locale: str | None = None) -> tuple[bool, list[str]]:
        """(approved, reasons): the reasons in `locale` where the template translates them (and
        the runtime's default `otherwise` in `locale`'s words, `runtime.wording`)."""
        if self.path == "compiled":
            approved, found = self.functions[f"verdict{self._suffix(locale)}"](env)
            reasons = list(found)
        else:
            texts = self.reasons_in(locale)
            approved, reasons = ReferenceEvaluator().verdict(
                [
                    (reason, when)
                    for reason, (_, when, _) in zip(
                        texts.disapprovals, self.disapprovals, strict=True
                    )
                ],
                self.approve_when,
                texts.otherwise,
                env,
            )
        if reasons == [DEFAULT_OTHERWISE] and self.manifest.logic.verdict.otherwise is None:
            # the approval did not hold and the template wrote no `otherwise`: the compiled
            # default verdict holds the English text, every locale reads its own
            reasons = [say("otherwise", locale)]
        return bool(approved), reasons


@dataclass(frozen=True)
class LocalizedReasons:
    """The verdict's reasons in one locale: one per disapproval and review line, in order."""

    disapprovals: tuple[Reason, ...]
    otherwise: Reason
    reviews: tuple[Reason, ...]


def _reason(
    verifier: Verifier, scope: Scope, text: str, message: dict[str, Any] | None, where: str
) -> Reason:
    """A verdict reason: its text, or (text, verified text node) when it shows values."""
    if message is None:
        return text
    node = verifier.expression(message, scope, f"{where}.message")
    if node.type != "text":
        raise InvalidProgram("a reason's message must be a text", where)
    return text, node


#: Programs by revision, the least recently used dropped past `CACHE_SIZE`. A hit also needs
#: the same template id, so it is checked by hand rather than through a memoizing decorator.
_CACHE: LRUCache[str, Program] = LRUCache(maxsize=CACHE_SIZE)
#: The cache is shared by the server's threads (cachetools objects are not thread-safe).
_CACHE_LOCK = threading.Lock()


def revision_of(manifest: Template) -> str:
    """`logic.revision`, or, for a manifest that carries none, the hash the compiler would have
    written there (`inspectlang.manifest.revision_of`: one identity for a manifest)."""
    return manifest.logic.revision or content_revision(manifest)


def load_program(manifest: Template) -> Program:
    """Verify and compile a manifest's logic, once per revision (cached)."""
    revision = revision_of(manifest)
    with _CACHE_LOCK:
        cached = _CACHE.get(revision)
        if cached is not None and cached.manifest.id == manifest.id:
            return cached
    program = build_program(manifest, revision)
    with _CACHE_LOCK:
        _CACHE[revision] = program
    return program


def build_program(manifest: Template, revision: str | None = None) -> Program:
    """Verify and compile without the cache."""
    logic = manifest.logic
    verifier = Verifier(manifest)
    rules: list[RuleProgram] = []
    for index, rule in enumerate(logic.rules):
        where = f"logic.rules[{index}]"
        if rule.on.input is not None and rule.on.input not in verifier.base.inputs:
            raise InvalidProgram(f"rule on unknown input {rule.on.input!r}", where)
        if rule.on.image is not None and rule.on.image not in verifier.base.images:
            raise InvalidProgram(f"rule on unknown image {rule.on.image!r}", where)
        scope = Scope(
            **{
                **verifier.base.__dict__,
                "checks": frozenset(c.id for c in logic.checks),
                "value_type": verifier.base.inputs.get(rule.on.input or ""),
            }
        )
        body = verifier.statements(rule.body, scope, f"{where}.body")
        rules.append(
            RuleProgram(
                id=rule.id,
                event=rule.on.event,
                input=rule.on.input,
                image=rule.on.image,
                validation=rule.on.validation,
                body=body,
                span=verifier.span({"span": rule.span}, where),
            )
        )
    checks: list[CheckProgram] = []
    seen: set[str] = set()
    for index, check in enumerate(logic.checks):
        where = f"logic.checks[{index}]"
        verifier.reference(check.id, where)
        if check.id in seen:
            raise InvalidProgram(f"duplicate check {check.id!r}", where)
        scope = Scope(**{**verifier.base.__dict__, "checks": frozenset(seen)})
        valid = verifier.condition(check.valid, scope, f"{where}.valid")
        checks.append(
            CheckProgram(
                id=check.id,
                key=check.key,
                name=check.name,
                description=check.description,
                valid=valid,
                span=verifier.span({"span": check.span}, where),
                translations={
                    locale: (texts.name or check.name, texts.description or check.description)
                    for locale, texts in (check.translations or {}).items()
                },
                informational=bool(check.informational),
            )
        )
        seen.add(check.id)
    full = Scope(**{**verifier.base.__dict__, "checks": frozenset(seen)})
    disapprovals = tuple(
        (
            _reason(verifier, full, item.reason, item.message, f"logic.verdict.disapprove[{i}]"),
            verifier.condition(item.when, full, f"logic.verdict.disapprove[{i}].when"),
            verifier.span({"span": item.span}, f"logic.verdict.disapprove[{i}]"),
        )
        for i, item in enumerate(logic.verdict.disapprove)
    )
    reviews = tuple(
        (
            _reason(verifier, full, item.reason, item.message, f"logic.verdict.review[{i}]"),
            verifier.condition(item.when, full, f"logic.verdict.review[{i}].when"),
            verifier.span({"span": item.span}, f"logic.verdict.review[{i}]"),
        )
        for i, item in enumerate(logic.verdict.review or ())
    )
    approve_when = (
        None
        if logic.verdict.approveWhen is None
        else verifier.condition(logic.verdict.approveWhen, full, "logic.verdict.approveWhen")
    )
    otherwise = _reason(
        verifier,
        full,
        logic.verdict.otherwise or DEFAULT_OTHERWISE,
        logic.verdict.otherwiseMessage,
        "logic.verdict.otherwise",
    )
    localized = _localized(verifier, full, logic.verdict, disapprovals, reviews, otherwise)
    parts = [codegen.generate_rule(f"rule_{i}", rule.body) for i, rule in enumerate(rules)]
    parts += [codegen.generate_check(f"check_{i}", check.valid) for i, check in enumerate(checks)]
    asks: dict[str, tuple[str, ir.Expression]] = {}
    for index, spec in enumerate(manifest.inputs):
        input_logic = logic.inputs.get(spec.identifier)
        if input_logic is not None and input_logic.askWhen is not None:
            where = f"logic.inputs.{spec.identifier}.askWhen"
            node = verifier.condition(input_logic.askWhen, verifier.base, where)
            asks[spec.identifier] = (f"ask_{index}", node)
            parts.append(codegen.generate_check(f"ask_{index}", node))
    for index, image in enumerate(manifest.images):
        image_logic = logic.images.get(image.identifier)
        if image_logic is not None and image_logic.askWhen is not None:
            where = f"logic.images.{image.identifier}.askWhen"
            node = verifier.condition(image_logic.askWhen, verifier.base, where)
            asks[image.identifier] = (f"ask_image_{index}", node)
            parts.append(codegen.generate_check(f"ask_image_{index}", node))
    parts.append(
        codegen.generate_verdict(
            "verdict", [(reason, when) for reason, when, _ in disapprovals], approve_when, otherwise
        )
    )
    # A review rule is compiled as a verdict of one disapproval: (False, [reason]) when it holds.
    parts += [
        codegen.generate_verdict(f"review_{i}", [(reason, when)], None, "")
        for i, (reason, when, _) in enumerate(reviews)
    ]
    for n, texts in enumerate(localized.values()):
        conditions = [when for _, when, _ in disapprovals]
        parts.append(
            codegen.generate_verdict(
                f"verdict_l{n}",
                list(zip(texts.disapprovals, conditions, strict=True)),
                approve_when,
                texts.otherwise,
            )
        )
        parts += [
            codegen.generate_verdict(f"review_{i}_l{n}", [(reason, when)], None, "")
            for i, (reason, (_, when, _)) in enumerate(zip(texts.reviews, reviews, strict=True))
        ]
    source = "\n".join(parts)
    revision = revision or revision_of(manifest)
    functions = codegen.compile_functions(source, f"<template {revision[:20]}>")
    return Program(
        manifest=manifest,
        revision=revision,
        rules=tuple(rules),
        checks=tuple(checks),
        disapprovals=disapprovals,
        approve_when=approve_when,
        otherwise=otherwise,
        source=source,
        functions=functions,
        asks=asks,
        reviews=reviews,
        localized=localized,
    )


def _localized(
    verifier: Verifier,
    scope: Scope,
    verdict: Verdict,
    disapprovals: tuple[tuple[Reason, ir.Expression, list[int]], ...],
    reviews: tuple[tuple[Reason, ir.Expression, list[int]], ...],
    otherwise: Reason,
) -> dict[str, LocalizedReasons]:
    """The verdict's reasons per locale the manifest translates any into, each translation's
    message verified as the line's own is."""
    lines = [*verdict.disapprove, *(verdict.review or ())]
    locales = list(
        dict.fromkeys(
            locale
            for translations in [
                *(line.translations for line in lines),
                verdict.otherwiseTranslations,
            ]
            for locale in translations or {}
        )
    )

    def pick(
        translations: dict[str, ReasonTranslation] | None,
        default: Reason,
        locale: str,
        where: str,
    ) -> Reason:
        found = (translations or {}).get(locale)
        if found is None:
            return default
        return _reason(verifier, scope, found.reason, found.message, f"{where}.{locale}")

    result: dict[str, LocalizedReasons] = {}
    for locale in locales:
        result[locale] = LocalizedReasons(
            tuple(
                pick(item.translations, reason, locale, f"logic.verdict.disapprove[{i}]")
                for i, (item, (reason, _, _)) in enumerate(
                    zip(verdict.disapprove, disapprovals, strict=True)
                )
            ),
            pick(
                verdict.otherwiseTranslations,
                otherwise if verdict.otherwise else say("otherwise", locale),
                locale,
                "logic.verdict.otherwiseTranslations",
            ),
            tuple(
                pick(item.translations, reason, locale, f"logic.verdict.review[{i}]")
                for i, (item, (reason, _, _)) in enumerate(
                    zip(verdict.review or (), reviews, strict=True)
                )
            ),
        )
    return result
