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

from runtime.explain import Explanation, SeenValue
from runtime.proofs.cases import CasesError
from server.dashboard import labels
from server.templates.service import MAX_SOURCE_CHARS
from server.web import i18n
from server.web.history import damage_text, reason_text
from server.web.validations import validation_label
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


#: The simulate panel's problems with the events script itself (`template_pages.simulate`).
SCRIPT_PROBLEMS = {
    "too_long": _("The events script is too long."),
    "not_json": _("The events are not JSON: line %(line)s, column %(column)s."),
    "not_object": _('The events must be an object: {"events": [...]}'),
    "no_events": _("The script needs an events list (the first event is create)."),
    "not_created": _("No inspection was created: start with a create event."),
}
#: A validation's state in the simulation's explanation.
VALIDATION_STATES = {
    "pending": _("pending"),
    "valid": _("valid"),
    "not_valid": _("not valid"),
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


class SimulationWords(Words):
    """The simulate panel in the page's language: the runtime gives each step's codes and values
    (`runtime.cli.summary`) and the explanation (`runtime.explain.Explanation`); the sentences
    are here. `inspectlang simulate` keeps its own English lines (`runtime.cli._line`,
    `runtime.explain.render_text`)."""

    def script_problem(self, code: str, **values: Any) -> str:
        return self.say(SCRIPT_PROBLEMS[code], **values)

    def event_problem(self, index: int, event: Any, code: str, name: Any = None) -> str:
        """An event the runtime could not read (`ScriptError.code`; "unreadable" for a field
        of the wrong form)."""
        kind = event.get("event") if isinstance(event, dict) else None
        message = EVENT_PROBLEMS.get(code, EVENT_PROBLEMS["unreadable"])
        return self.say(message, event=index, kind=_shown(kind), name=_shown(name))

    def step(self, step: Mapping[str, Any]) -> str:
        """One step line: the event as written in the script, then where the inspection stands
        (or why the event was refused)."""
        head = f"#{step['step']} {_shown(step.get('event'))}"
        refused = step.get("refused")
        if isinstance(refused, Mapping):
            code = str(refused.get("code"))
            why = self.say(REFUSALS[code]) if code in REFUSALS else code
            return self.say(_("%(event)s: refused, %(why)s"), event=head, why=why)
        if "status" not in step:
            return head
        return self.say(
            _("%(event)s: %(status)s, %(verdict)s"),
            event=head,
            status=self.status(step["status"]),
            verdict=self.verdict(step["veredict"]),
        )

    def explanation(self, found: Explanation, source: str) -> str:
        """The explanation's text, section by section, as `render_text` lays it out."""
        lines = source.splitlines()
        said = [
            self.say(
                _("Verdict: %(verdict)s (%(status)s)"),
                verdict=self.verdict(found.veredict),
                status=self.status(found.status),
            )
        ]
        said += [
            "  " + self.say(_("reason: %(reason)s"), reason=reason) for reason in found.reasons
        ]
        said += [
            "  "
            + self.say(
                _("waits for a person because: %(why)s"), why=reason_text(reason, self.locale)
            )
            for reason in found.reviewReasons
        ]
        if found.machine is not None:
            said.append(
                "  "
                + self.say(
                    _("the rules' suggestion: %(verdict)s (%(reasons)s)"),
                    verdict=self.verdict(found.machine.get("veredict")),
                    reasons=self.listed(found.machine.get("reasons")),
                )
            )
        for lacking in found.missing:
            message = (
                _("Missing photo: %(label)s")
                if lacking.kind == "photo"
                else _("Missing input: %(label)s")
            )
            said.append(self.say(message, label=lacking.label))
        if found.verdict:
            said.append(self.say(_("Verdict lines:")))
        for item in found.verdict:
            if item.kind == "disapprove":
                line = "  " + self.say(
                    _("disapprove “%(reason)s” (line %(line)s): %(holds)s"),
                    reason=item.label,
                    line=_line_of(item.span),
                    holds=self.holds(item.holds),
                )
            else:
                line = "  " + self.say(
                    _("approve when (line %(line)s): %(holds)s"),
                    line=_line_of(item.span),
                    holds=self.holds(item.holds),
                )
                if item.holds is not True:
                    line += " · " + self.say(_("otherwise “%(reason)s”"), reason=item.label)
            if item.decided:
                line += " · " + self.say(_("decided the verdict"))
            said.append(line)
            said += self.seen(item.values, lines)
        if found.checks:
            said.append(self.say(_("Checks:")))
        for item in found.checks:
            result = _("passes") if item.holds else _("fails")
            line = "  " + self.say(
                _("%(check)s (line %(line)s): %(result)s"),
                check=item.label,
                line=_line_of(item.span),
                result=self.say(result),
            )
            if item.informational:
                line += " · " + self.say(_("for information"))
            said.append(line)
            said += self.seen(item.values, lines)
        if found.validations:
            said.append(self.say(_("Validations:")))
        for v in found.validations:
            state = "pending" if not v.reported else ("valid" if v.valid else "not_valid")
            facts = [self.say(_("threshold %(threshold)s"), threshold=self.value(v.threshold))]
            if v.confidence is not None:
                facts.insert(
                    0, self.say(_("confidence %(confidence)s"), confidence=self.value(v.confidence))
                )
            if v.required:
                facts.append(self.say(_("required")))
            said.append(
                "  "
                + self.say(
                    _("%(photo)s, %(validation)s: %(state)s (%(facts)s)"),
                    photo=side_word(v.side, self.locale),
                    validation=validation_label(v.validation, self.locale),
                    state=self.say(VALIDATION_STATES[state]),
                    facts=", ".join(facts),
                )
            )
        if found.rules:
            said.append(self.say(_("Rules that ran:")))
        for rule in found.rules:
            said.append(
                "  "
                + self.say(
                    _("on %(event)s (line %(line)s): %(count)s run(s), sets %(names)s"),
                    event=rule.on,
                    line=_line_of(rule.span),
                    count=len(rule.events),
                    names=", ".join(rule.sets) or "-",
                )
            )
        if found.variables:
            values = ", ".join(f"{k} = {self.value(v)}" for k, v in found.variables.items())
            said.append(self.say(_("Variables: %(values)s"), values=values))
        for error in found.ruleErrors:
            said.append(
                self.say(
                    _("A rule could not be evaluated at line %(line)s: %(source)s"),
                    line=_line_of(error.get("span") or []),
                    source=_shown(error.get("source")),
                )
            )
        return "\n".join(said)

    def holds(self, holds: bool | None) -> str:
        if holds is None:
            return self.say(_("not known"))
        return self.say(_("holds") if holds else _("does not hold"))

    def seen(self, values: list[SeenValue], lines: list[str]) -> list[str]:
        """Each value a condition read, named by its own text in the source (or by its line)."""
        said = []
        for value in values:
            span = value.span
            text = ""
            if len(span) == 4 and span[0] == span[2] and 0 < span[0] <= len(lines):
                text = lines[span[0] - 1][span[1] - 1 : span[3] - 1]
            if not text or text.startswith('include "'):
                text = self.say(_("a value at line %(line)s"), line=_line_of(span))
            # A value never given reads `missing`, as `inspectlang simulate` says it.
            shown = self.say(_("missing")) if value.value is None else self.value(value.value)
            said.append(f"      {text} = {shown}")
        return said


def _line_of(span: Any) -> Any:
    return span[0] if span and span[0] else "-"


def _shown(value: Any) -> str:
    """What the author wrote, as written (text without quotes, anything else as JSON)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
