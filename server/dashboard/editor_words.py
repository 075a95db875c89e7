"""What the template editor's review says of template tests and of a revision's difference, in
the page's language.

The runtime answers codes and values (`runtime.proofs.cases.Problem` for a failing case,
`CasesError` for a tests field that is not a tests document, the facts of an example inspection);
the sentences are here, as catalog messages of the domain `dashboard`, with coded values in
words (`labels.STATUSES` and `VERDICTS`, `server.web.words`). What the author wrote (a case's
name, an event's kind, a reason the template gives, an input's name) is shown as written, so it
can be found in the tests field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from babel import numbers as babel_numbers
from babel.support import NullTranslations

from runtime.proofs.cases import CasesError
from server.dashboard import labels
from server.templates.service import MAX_SOURCE_CHARS
from server.web import i18n
from server.web.history import damage_text
from server.web.words import side_word, value_word


def _(message: str) -> str:
    """Marks a message for the catalog extraction; translated when shown."""
    return message


#: A failing case's problem, by `Problem.code` (`event_invalid` by its `reason`, below).
CASE_PROBLEMS = {
    "start_invalid": _(
        "The case's start, %(start)s, is not a date and time like 2024-05-01T12:00:00Z."
    ),
    "event_refused": _("Event %(event)s (%(kind)s) was refused: %(error)s."),
    "status_differs": _("Status %(actual)s, expected %(expected)s."),
    "veredict_differs": _("Verdict %(actual)s, expected %(expected)s."),
    "reasons_differ": _("The reasons were %(actual)s; expected exactly %(expected)s."),
    "reason_missing": _("The reason %(reason)s is missing; the reasons were %(actual)s."),
}
#: An event the runtime could not read, by the problem's `reason` (`ScriptError.code`).
EVENT_PROBLEMS = {
    "unknown_input": _(
        "Event %(event)s (%(kind)s) names an input the template does not have: %(name)s."
    ),
    "unknown_image": _(
        "Event %(event)s (%(kind)s) names a photo not uploaded before it: %(name)s."
    ),
    "create_first": _(
        "Event %(event)s (%(kind)s) comes before the create: the first event is a create."
    ),
    "unknown_event": _(
        "Event %(event)s is %(name)s, not create, update, update_product, start, image, "
        "validation, damage, finish or expire."
    ),
    "unreadable": _(
        "Event %(event)s (%(kind)s) has a field of the wrong form (a date, a number of minutes)."
    ),
}
#: Why the runtime refused an event, by the API's error code (another code is shown as itself:
#: docs/runtime.md lists them all).
REFUSALS = {
    "wrong_template_provided": _("the template is for another type of inspection"),
    "input_value_not_provided": _("a required input is missing"),
    "invalid_input_value": _("an input's value breaks its validation"),
    "invalid_body": _("a field is missing or of the wrong type"),
    "invalid_locale": _("the locale is not of the form es_AR"),
    "inspection_not_editable": _("the inspection can no longer be changed"),
    "invalid_status_transition": _("the inspection's status does not allow it"),
    "image_not_found": _("the photo is not part of the inspection"),
    "max_attempts_exceeded": _("the photo has no attempts left"),
    "unknown_validation": _("the photo does not run that validation"),
    "invalid_validation_result": _(
        "the result is malformed or its confidence is not from 0 to 100"
    ),
    "feature_not_enabled": _("the template does not enable it"),
    "update_inputs_missing": _("a required update input is still missing"),
    "unknown_field": _("the product has no such field"),
}
#: What a tests field gets wrong, by `CasesError.code`.
TESTS_FILE_PROBLEMS = {
    "not_a_tests_document": _('The template tests are {"cases": [...]} and nothing else.'),
    "too_many_cases": _("At most %(limit)s cases, not %(count)s."),
    "case_not_object": _('A case is an object: {"name": ..., "events": [...], "expect": {...}}.'),
    "case_without_name": _("A case needs a name."),
    "events_empty": _("Its events are a list of at least one event."),
    "too_many_events": _("At most %(limit)s events in a case, not %(count)s."),
    "event_not_object": _("Event %(event)s is not an object."),
    "photo_side": _(
        "The %(side)s of the photo of event %(event)s is a whole number of pixels "
        "from 1 to %(limit)s."
    ),
    "too_much_in_all": _(
        "The cases hold more than %(events)s events or %(megapixels)s megapixels of photos in all."
    ),
    "expect_empty": _("Its expect states a status, a verdict (veredict) or reasons."),
    "unknown_expectation": _("Its expect states %(expected)s, not %(expectation)s."),
    "not_text": _("Its %(key)s is a text."),
    "not_texts": _("Its %(key)s is a list of texts."),
}
SIDES = {"width": _("width"), "height": _("height")}
#: A refused save or review, by the API error's code (another code keeps the API's English).
#: `invalid_template` with diagnostics shows them at their lines; without, the source is too long.
REFUSED_SAVES = {
    "invalid_template": _("The template cannot be saved: the problems are shown at their lines."),
    "source_too_long": _("The template source is longer than %(limit)s characters."),
    "not_found_template": _("This template no longer exists: it may have been deleted."),
    "template_not_editable": _("Built-in templates cannot be changed: save a copy as a new one."),
    "template_type_changed": _(
        "A revision cannot change the inspection type: save it as a new template instead."
    ),
    "template_name_taken": _("Another template of the company already has that name."),
}
#: A decision no case exercised, by `Decision.kind` (`runtime.proofs.cases.DECISION_TEXTS`).
DECISIONS = {
    "disapprove": _("the disapprove line %(line)s holding"),
    "review": _("the review line %(line)s holding"),
    "approve": _("the approve line %(line)s approving"),
    "approve_by_default": _("an approval (no disapprove line holding)"),
    "otherwise": _("the approve line %(line)s not holding (otherwise)"),
    "then": _("the if at line %(line)s true"),
    "else": _("the if at line %(line)s false (its else)"),
    "check_true": _("the check %(check)s (line %(line)s) valid"),
    "check_false": _("the check %(check)s (line %(line)s) not valid"),
}


class Words:
    """The editor's words in one locale."""

    def __init__(self, locale: str) -> None:
        self.locale = i18n.choose_locale(locale)
        self.translations: NullTranslations = i18n.translations(self.locale)

    def say(self, message: str, **values: Any) -> str:
        return (
            self.translations.gettext(message) % values
            if values
            else self.translations.gettext(message)
        )

    def label(self, table: Mapping[str, str]) -> Callable[[str], str]:
        return labels.labeller(self.translations, dict(table))

    def listed(self, texts: Any) -> str:
        """The template's own reasons, each quoted; "no reasons" for none."""
        if not isinstance(texts, list) or not texts:
            return self.say(_("no reasons"))
        return "; ".join(f"“{text}”" for text in texts)

    def status(self, status: Any) -> str:
        return self.label(labels.STATUSES)(status) if status else self.say(_("no inspection"))

    def verdict(self, verdict: Any) -> str:
        return self.label(labels.VERDICTS)(verdict or "not_defined")

    def case_problem(self, failure: Mapping[str, Any]) -> str:
        """One item of a case's `failures` as a sentence."""
        code = str(failure.get("code"))
        values = {key: value for key, value in failure.items() if key != "code"}
        if code == "event_invalid":
            message = EVENT_PROBLEMS.get(str(values.get("reason")), EVENT_PROBLEMS["unreadable"])
            return self.say(message, event=values.get("event"), kind=_shown(values.get("kind")),
                            name=_shown(values.get("name")))  # fmt: skip
        if code == "event_refused":
            error = str(values.get("error"))
            why = self.say(REFUSALS[error]) if error in REFUSALS else error
            return self.say(CASE_PROBLEMS[code], event=values.get("event"),
                            kind=_shown(values.get("kind")), error=why)  # fmt: skip
        if code in ("status_differs", "veredict_differs"):
            word = self.status if code == "status_differs" else self.verdict
            return self.say(
                CASE_PROBLEMS[code],
                actual=word(values.get("actual")),
                expected=word(values.get("expected")),
            )
        if code == "reasons_differ":
            return self.say(CASE_PROBLEMS[code], actual=self.listed(values.get("actual")),
                            expected=self.listed(values.get("expected")))  # fmt: skip
        if code == "reason_missing":
            return self.say(CASE_PROBLEMS[code], reason=f"“{values.get('reason')}”",
                            actual=self.listed(values.get("actual")))  # fmt: skip
        return self.say(CASE_PROBLEMS["start_invalid"], start=_shown(values.get("start")))

    def decision(self, decision: Mapping[str, Any]) -> str:
        """An item of `uncoveredDecisions` as the page says it."""
        message = DECISIONS[str(decision.get("kind"))]
        return self.say(message, line=decision.get("line"), check=decision.get("check"))

    def unreadable_tests(self, error: CasesError) -> str:
        """A tests field that is not a tests document, with the case it is in."""
        values = dict(error.values)
        if "side" in values:
            values["side"] = self.say(SIDES[str(values["side"])])
        problem = self.say(TESTS_FILE_PROBLEMS[error.code], **values)
        if error.case is None:
            return problem
        if error.name is None:
            return self.say(
                _("Case %(number)s: %(problem)s"), number=error.case + 1, problem=problem
            )
        return self.say(_("Case %(number)s (%(name)s): %(problem)s"),
                        number=error.case + 1, name=error.name, problem=problem)  # fmt: skip

    def refused_save(self, code: str, english: str, *, has_lines: bool) -> str:
        """A save or review the API refused with `code` (its `english` description when the
        code has no words here); `has_lines`: the refusal's diagnostics are shown at their lines."""
        if code == "invalid_template" and not has_lines:
            return self.say(REFUSED_SAVES["source_too_long"], limit=self.value(MAX_SOURCE_CHARS))
        return self.say(REFUSED_SAVES[code]) if code in REFUSED_SAVES else english

    def not_json(self, error: json.JSONDecodeError) -> str:
        return self.say(_("The template tests are not JSON: line %(line)s, column %(column)s."),
                        line=error.lineno, column=error.colno)  # fmt: skip

    def value(self, value: Any) -> str:
        """A value an example inspection sends: a coded one in words, a number in the page's
        locale, yes or no, other text quoted as written."""
        if isinstance(value, bool):
            return self.say(_("yes") if value else _("no"))
        if isinstance(value, (int, float)):
            return babel_numbers.format_decimal(value, format="#,##0.##", locale=self.locale)
        if value is None:
            return self.say(_("none"))
        if isinstance(value, str):
            return value_word(value, self.locale) or f"“{value}”"
        if isinstance(value, list):
            return ", ".join(self.value(item) for item in value)
        return json.dumps(value, ensure_ascii=False)

    def fact(self, fact: Mapping[str, Any]) -> str:
        """A fact of an example inspection (`template_pages.example_facts`) as the page says it."""
        if "photo" in fact:
            results = [
                self.say(
                    _("%(validation)s: %(result)s"),
                    validation=result["validation"],
                    result=self.value(result["result"]),
                )
                for result in fact["results"]
            ]
            photo = side_word(str(fact["photo"]), self.locale)
            if not results:
                return self.say(_("photo %(photo)s"), photo=photo)
            return self.say(_("photo %(photo)s (%(results)s)"), photo=photo,
                            results="; ".join(results))  # fmt: skip
        if "damage" in fact:
            found = damage_text({"damage": fact["damage"]}, self.locale)
            return self.say(_("a damage declared: %(damage)s"), damage=found or self.value(None))
        return self.say(
            _("%(name)s = %(value)s"), name=fact["name"], value=self.value(fact["value"])
        )


def _shown(value: Any) -> str:
    """What the author wrote, as written (text without quotes, anything else as JSON)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
