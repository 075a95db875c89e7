"""Template pages: the list, the `.insp` editor (diagnostics as you type from the compiler's
JSON diagnostics, one-click suggestions, format, template tests, save as a new revision under
the API's rules after a review of what it changes: the semantic diff against the saved
revision and the tests' results), revisions with a diff between any two, a simulate panel, and
starting from a built-in."""

from __future__ import annotations

import difflib
import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from litestar import Request, get, post
from litestar.params import FromPath, FromQuery

from inspectlang.builtins import ALIAS_TABLE, builtin_source, get_builtin_by_id
from inspectlang.diagnostics import TemplateError
from inspectlang.formatter import format_source
from inspectlang.includes import IncludeResolver
from runtime import new_object_id
from runtime.cli import ScriptError, Simulation, summary
from runtime.errors import InspectionError
from runtime.explain import explain
from runtime.program import load_program
from runtime.proofs.cases import CasesError, case_lines, read_cases
from server import routing
from server.common import in_thread
from server.dashboard import labels
from server.dashboard.editor_words import SimulationWords, Words
from server.dashboard.starter_events import starter_events
from server.dashboard.web import (
    PREFIX,
    Member,
    NotFound,
    app_services,
    member_locale,
    nav,
    redirect,
    render,
    require,
    signed_in,
)
from server.errors import ApiError, ServerError
from server.templates import service as templates

if TYPE_CHECKING:
    from server.templates.tables import TemplateRevisionRecord

#: The simulate panel's starting script: create, start and finish with nothing uploaded.
DEFAULT_EVENTS = {
    "events": [
        {
            "event": "create",
            "body": {
                "locale": "en_US",
                "delivery": {"channel": "email", "destination": "someone@example.com"},
            },
        },
        {"event": "start"},
        {"event": "finish"},
    ]
}
STARTER = """template "My template"
    type: custom
    locales: en_US

variable score: numeric = 100

check good_score
    valid when: score > 50

verdict
    disapprove "The score is too low" when not checks.good_score
"""
#: Longest events script the simulate panel runs.
MAX_SCRIPT_CHARS = 200_000


def _builtin_choices() -> list[dict[str, str]]:
    """Each built-in to start from, by its name (a catalog message: the page says it in its
    language, as the template list and the consumer's pages do)."""
    choices = []
    for by_type in ALIAS_TABLE.values():
        for builtin_id in by_type.values():
            manifest = get_builtin_by_id(builtin_id)
            if manifest is not None:
                choices.append({"id": builtin_id, "label": manifest.name})
    return choices


def _builtin_copy(builtin_id: str) -> str | None:
    """A built-in's source as the start of a new template: renamed, without its fixed id."""
    for alias, by_type in ALIAS_TABLE.items():
        for inspection_type, found in by_type.items():
            if found == builtin_id:
                source = builtin_source(alias, inspection_type)
                source = re.sub(
                    r'^(template\s+")([^"]*)(")', r"\1\2 (copy)\3", source, count=1, flags=re.M
                )
                return re.sub(r'^\s+id:\s*"[0-9a-f]+"\s*\n', "", source, count=1, flags=re.M)
    return None


# --- diagnostics ---------------------------------------------------------------------------------


def diagnostics_of(
    source: str,
    now: datetime,
    machine: frozenset[str] | None = None,
    includes: IncludeResolver | None = None,
) -> list[dict[str, Any]]:
    """The API's diagnostics for `source` (empty when it would be saved), each with the source
    line and a caret under its span for display. With `machine` (the validations this
    deployment decides), a source that compiles gets the save's `W900` warnings. `includes`:
    the company's shared files (`templates.CompanyFiles`), as the save reads them."""
    try:
        manifest = templates.compile_template(
            source, template_id=new_object_id(), created_at=now, now=now, includes=includes
        )
    except ApiError as error:
        found = list(error.errors or [{"message": error.description, "line": 1, "column": 1}])
        return [_with_caret(item, source) for item in found]
    if machine is None:
        return []
    warnings = routing.person_routed_warnings(manifest.to_api(with_logic=False), machine)
    return [_with_caret({**w, **routing.locate(source, w)}, source) for w in warnings]


def _with_caret(item: dict[str, Any], source: str) -> dict[str, Any]:
    if item.get("file") not in (None, "<template>"):
        # A problem inside an included shared file: its place is named, not shown.
        where = f"{item['file']}:{item.get('line', 1)}:{item.get('column', 1)}"
        message = f"in the shared file {where}: {item.get('message', '')}"
        return {**item, "message": message, "severity": item.get("severity", "error"),
                "sourceLine": "", "caret": ""}  # fmt: skip
    lines = source.splitlines()
    line = int(item.get("line") or 1)
    column = max(int(item.get("column") or 1), 1)
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    end_line = int(item.get("endLine") or line)
    end_column = int(item.get("endColumn") or column)
    width = end_column - column if end_line == line and end_column > column else 1
    return {
        **item,
        "severity": item.get("severity", "error"),
        "sourceLine": text,
        "caret": " " * (column - 1) + "^" * width,
    }


# --- pages ---------------------------------------------------------------------------------------


@get("/templates", opt=nav(labels._("Templates"), "templates.view", 30))
async def template_list(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "templates.view")
    app = app_services(request)
    found = await in_thread(
        templates.list_templates, app.db, member.actor.company_id, inspection_type=None, kind=None
    )
    shared = await in_thread(templates.list_shared_files, app.db, member.actor.company_id)
    return render(
        request,
        "templates.html",
        {
            "created": [t for t in found if t.get("type") == "created"],
            "builtins": [t for t in found if t.get("type") != "created"],
            "shared": shared,
        },
        member=member,
    )


@get("/templates/shared")
async def shared_file(request: Request[Any, Any, Any], name: FromQuery[str] = "") -> Any:
    """One of the company's shared files (`include "NAME"`), or an empty one to write."""
    member = signed_in(request)
    require(member, "templates.view")
    app = app_services(request)
    name = name.strip()
    try:
        source = await in_thread(templates.get_shared_file, app.db, member.actor.company_id, name)
    except ApiError:
        return _shared_page(request, member, name=name, source="", exists=False)
    return _shared_page(request, member, name=name, source=source)


def _shared_page(
    request: Request[Any, Any, Any],
    member: Member,
    *,
    name: str,
    source: str,
    diagnostics: list[dict[str, Any]] | None = None,
    error: str | None = None,
    saved: bool = False,
    empty: bool = False,
    exists: bool = True,
    deleted: str | None = None,
    status_code: int = 200,
) -> Any:
    return render(
        request,
        "shared_file.html",
        {"name": name, "source": source, "diagnostics": diagnostics or [], "error": error,
         "saved": saved, "empty": empty, "exists": exists and bool(name), "deleted": deleted},
        member=member,
        status_code=status_code,
    )  # fmt: skip


@post("/templates/shared", status_code=200)
async def save_shared_file(request: Request[Any, Any, Any]) -> Any:
    """Save a shared file (the API's rules); templates pick it up when they are saved again."""
    member = signed_in(request)
    require(member, "templates.edit")
    app = app_services(request)
    form = await request.form()
    name = str(form.get("name", "")).strip()
    source = str(form.get("source", "")).replace("\r\n", "\n")
    if not source.strip():
        return _shared_page(
            request, member, name=name, source=source, status_code=400, empty=True, exists=False
        )
    try:
        await in_thread(
            templates.save_shared_file, app.db, member.actor.company_id, name, source, app.clock()
        )
    except ApiError as error:
        found = [_with_caret({**item, "file": None}, source) for item in (error.errors or [])]
        return _shared_page(
            request, member, name=name, source=source, diagnostics=found,
            error=error.description, status_code=error.status, exists=False,
        )  # fmt: skip
    return _shared_page(request, member, name=name, source=source, saved=True)


@post("/templates/shared/delete", status_code=200)
async def delete_shared_file(request: Request[Any, Any, Any]) -> Any:
    """Delete a shared file (the API's rules): saved templates keep what they included."""
    member = signed_in(request)
    require(member, "templates.edit")
    app = app_services(request)
    form = await request.form()
    name = str(form.get("name", "")).strip()
    try:
        await in_thread(templates.delete_shared_file, app.db, member.actor.company_id, name)
    except ApiError as error:
        return _shared_page(
            request, member, name=name, source="", error=error.description,
            status_code=error.status, exists=False,
        )  # fmt: skip
    return _shared_page(request, member, name="", source="", deleted=name, exists=False)


def _editor(
    request: Request[Any, Any, Any],
    member: Member,
    *,
    source: str,
    template: dict[str, Any] | None,
    diagnostics: list[dict[str, Any]] | None = None,
    message: str | None = None,
    error: str | None = None,
    status_code: int = 200,
    builtin: bool = False,
    tests: str | None = None,
) -> Any:
    if tests is None:
        saved = (template or {}).get("tests")
        tests = json.dumps(saved, indent=2, ensure_ascii=False) if saved and not builtin else ""
    return render(
        request,
        "editor.html",
        {
            "source": source,
            "tests": tests,
            "template": template,
            "diagnostics": diagnostics or [],
            "message": message,
            "error": error,
            "builtin": builtin,
            "builtins": _builtin_choices(),
            "events": json.dumps(
                starter_script(source, datetime.now(UTC), _shared_files(request, member)),
                indent=2,
            ),
        },
        member=member,
        status_code=status_code,
    )


@get("/templates/new")
async def new_template(request: Request[Any, Any, Any], start: FromQuery[str] = "") -> Any:
    member = signed_in(request)
    require(member, "templates.view")
    source = (_builtin_copy(start) if start else None) or STARTER
    return _editor(request, member, source=source, template=None)


@get("/templates/{template_id:str}")
async def edit_template(request: Request[Any, Any, Any], template_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "templates.view")
    app = app_services(request)
    try:
        template = templates.get_template(app.db, member.actor.company_id, template_id)
    except ApiError:
        raise NotFound(f"template {template_id}") from None
    if template.get("type") != "created":
        copy = _builtin_copy(template_id) or ""
        return _editor(request, member, source=copy, template=template, builtin=True)
    source = templates.get_template_source(app.db, member.actor.company_id, template_id)
    return _editor(request, member, source=source, template=template)


async def _json_body(request: Request[Any, Any, Any]) -> dict[str, Any]:
    try:
        data = json.loads(await request.body() or b"{}")
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ApiError.of("malformed_json", "The body must be a JSON object.")
    return data


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name, "")
    if not isinstance(value, str) or "\x00" in value:
        raise ApiError.of("invalid_body", f"`{name}` must be text.")
    return value


@post("/templates/check", status_code=200)
async def check(request: Request[Any, Any, Any]) -> dict[str, Any]:
    member = signed_in(request)
    require(member, "templates.view")
    source = _text(await _json_body(request), "source")
    app = app_services(request)
    machine = routing.machine_validations(app.settings, app.analyzers)
    shared = _shared_files(request, member)
    found = await in_thread(diagnostics_of, source, app.clock(), machine, shared)
    return {"diagnostics": found}


def _shared_files(request: Request[Any, Any, Any], member: Member) -> IncludeResolver:
    """The company's shared files: what the editor's `include` lines read, as a save does."""
    return templates.CompanyFiles(app_services(request).db, member.actor.company_id)


@post("/templates/format", status_code=200)
async def format_template(request: Request[Any, Any, Any]) -> dict[str, Any]:
    member = signed_in(request)
    require(member, "templates.view")
    source = _text(await _json_body(request), "source")
    try:
        return {"source": format_source(source), "diagnostics": []}
    except TemplateError as error:
        return {"source": None, "diagnostics": [_with_caret(d, source) for d in error.to_list()]}


@post("/templates/save", status_code=200)
async def save(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "templates.edit")
    app = app_services(request)
    form = await request.form()
    source = str(form.get("source", "")).replace("\r\n", "\n")
    tests_text = str(form.get("tests", "")).replace("\r\n", "\n")
    template_id = str(form.get("template_id", ""))
    now = app.clock()
    company_id = member.actor.company_id
    try:
        # The form's tests field is the revision's whole set: blank is none.
        tests = _form_tests(tests_text, Words(member_locale(request, member)))
        if template_id:
            saved = await in_thread(
                templates.revise_template, app.db, company_id, template_id, source, now, tests
            )
        else:
            saved = await in_thread(
                templates.create_template, app.db, company_id, source, now, tests
            )
    except UnreadableTests as error:
        current = _current(app, company_id, template_id)
        return _editor(
            request, member, source=source, template=current, error=str(error), status_code=400,
            tests=tests_text,
        )  # fmt: skip
    except ApiError as error:
        found, problems = _refusal(error, source)
        words = Words(member_locale(request, member))
        english = " ".join([error.description, *problems])
        said = words.refused_save(error.code, english, has_lines=bool(found))
        return _editor(
            request, member, source=source, template=_current(app, company_id, template_id),
            diagnostics=found, error=said, status_code=error.status, tests=tests_text,
        )  # fmt: skip
    return redirect(f"{PREFIX}/templates/{saved['_id']}?saved=1")


def _current(app: Any, company_id: str, template_id: str) -> dict[str, Any] | None:
    """The template a refused save was revising, to show the editor again (None: a new one)."""
    if not template_id:
        return None
    try:
        return templates.get_template(app.db, company_id, template_id)
    except ApiError:
        return None


def _refusal(error: ApiError, source: str) -> tuple[list[dict[str, Any]], list[str]]:
    """A refused save's diagnostics of the source (with carets), and its other problems (the
    tests field's, which have no line) as text."""
    items = error.errors or []
    found = [_with_caret(item, source) for item in items if "line" in item]
    return found, [str(item.get("message", "")) for item in items if "line" not in item]


class UnreadableTests(ServerError):
    """The editor's tests field is not a tests document: why, in the page's words (`str`)."""


def _form_tests(text: str, words: Words) -> templates.TemplateTests:
    """The editor's tests field as a save's tests: blank is no cases; text that is not a tests
    document is `UnreadableTests`, worded from `read_cases`' code (the API's 400 `invalid_body`
    says the same in English)."""
    if not text.strip():
        return templates.TemplateTests([])
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnreadableTests(words.not_json(error)) from None
    try:
        return templates.TemplateTests(read_cases(document))
    except CasesError as error:
        raise UnreadableTests(words.unreadable_tests(error)) from None


def review_before_save(
    db: Any,
    company_id: str,
    template_id: str,
    source: str,
    tests_text: str,
    now: datetime,
    locale: str,
) -> dict[str, Any]:
    """What the editor shows before a save: the save's diagnostics when the source does not
    compile (or the tests' problem), else `changes` against the saved revision (when there is
    one), `testResults` with each case's line in the tests field (`at`), a failing case's
    problems in the words of `locale` (`texts`) and the decisions no case exercised
    (`missedTexts`), and each difference's example in a few facts, each with its words
    (`text`)."""
    words = Words(locale)
    try:
        tests = _form_tests(tests_text, words)
        answer = templates.preview_revision(db, company_id, template_id or None, source, now, tests)
    except UnreadableTests as error:
        return {"problem": str(error)}
    except ApiError as error:
        found, problems = _refusal(error, source)
        if found:
            return {"diagnostics": found}
        english = " ".join([error.description, *problems])
        return {"problem": words.refused_save(error.code, english, has_lines=False)}
    starts = case_lines(tests_text)
    if "testResults" in answer:
        missed = answer["testResults"]["uncoveredDecisions"]
        answer["testResults"]["missedTexts"] = [words.decision(item) for item in missed]
    for index, case in enumerate(answer.get("testResults", {}).get("cases", [])):
        case["at"] = starts[index] if index < len(starts) else None
        case["texts"] = [words.case_problem(failure) for failure in case["failures"]]
    for difference in answer.get("changes", {}).get("differences", []):
        example = difference.get("example")
        if example is not None:
            facts = example_facts(example["new"]["events"])
            difference["facts"] = [{**fact, "text": words.fact(fact)} for fact in facts]
    return answer


def example_facts(script: dict[str, Any]) -> list[dict[str, Any]]:
    """An example inspection (an events file) in a few facts, for the page to word: each value
    it was created or updated with (`name`, `value`), each photo it sent with its results
    (`photo`, `results`: `validation` and its confidence or result), each damage it declared
    (`damage`: the body)."""
    facts: list[dict[str, Any]] = []
    for event in script.get("events", []):
        kind = event.get("event")
        body = event.get("body") if isinstance(event.get("body"), dict) else {}
        if kind in ("create", "update", "update_product"):
            inputs = body.get("inputs")
            for item in inputs if isinstance(inputs, list) else []:
                if isinstance(item, dict):
                    name = str(item.get("input", item.get("identifier")))
                    facts.append({"name": name, "value": item.get("value")})
            for key, value in body.items():
                if key not in ("inputs", "locale", "delivery") and isinstance(value, dict):
                    facts.extend(
                        {"name": f"{key}.{field}", "value": item} for field, item in value.items()
                    )
        elif kind == "image":
            results = [
                {
                    "validation": str(r.get("validation")),
                    "result": r.get("confidence", r.get("result")),
                }
                for r in event.get("validations", [])
                if isinstance(r, dict)
            ]
            facts.append({"photo": str(event.get("image")), "results": results})
        elif kind == "damage":
            facts.append({"damage": body})
    return facts


def _result_of(item: dict[str, Any]) -> Any:
    """A validation result's confidence, else its result (a color read, a text)."""
    return item.get("confidence", item.get("result"))


@post("/templates/review", status_code=200)
async def review(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """The review the editor shows before a save (`review_before_save`); nothing is stored."""
    member = signed_in(request)
    require(member, "templates.edit")
    data = await _json_body(request)
    source, tests_text = _text(data, "source"), _text(data, "tests")
    template_id = _text(data, "template_id")
    app = app_services(request)
    company_id = member.actor.company_id
    locale = member_locale(request, member)
    return await in_thread(
        review_before_save, app.db, company_id, template_id, source, tests_text, app.clock(), locale
    )


def _revisions(app: Any, company_id: str, template_id: str) -> list[TemplateRevisionRecord]:
    found = templates.revisions(app.db, company_id, template_id)
    if found is None:
        raise NotFound(f"template {template_id}")
    return found


@get("/templates/{template_id:str}/revisions")
async def revisions(
    request: Request[Any, Any, Any],
    template_id: FromPath[str],
    a: FromQuery[int] = 0,
    b: FromQuery[int] = 0,
) -> Any:
    member = signed_in(request)
    require(member, "templates.view")
    app = app_services(request)
    found = await in_thread(_revisions, app, member.actor.company_id, template_id)
    numbers = [revision.number for revision in found]
    b = b if b in numbers else numbers[-1]
    a = a if a in numbers else max(numbers[0], b - 1)
    by_number = {revision.number: revision for revision in found}
    diff = list(
        difflib.unified_diff(
            str(by_number[a].source).splitlines(),
            str(by_number[b].source).splitlines(),
            fromfile=f"revision {a}",
            tofile=f"revision {b}",
            lineterm="",
        )
    )
    return render(
        request,
        "revisions.html",
        {"template_id": template_id, "revisions": found, "a": a, "b": b, "diff": diff},
        member=member,
    )


def starter_script(
    source: str, now: datetime, includes: IncludeResolver | None = None
) -> dict[str, Any]:
    """The simulate panel's first script: made for the template when its source compiles (it
    then passes: `starter_events`), else the plain create, start, finish."""
    if not source.strip() or diagnostics_of(source, now, includes=includes):
        return DEFAULT_EVENTS
    try:
        manifest = templates.compile_template(
            source, template_id=new_object_id(), created_at=now, now=now, includes=includes
        )
    except ApiError:
        return DEFAULT_EVENTS
    return starter_events(manifest, now.date())


def simulate_source(
    source: str,
    script: dict[str, Any],
    now: datetime,
    includes: IncludeResolver | None = None,
    locale: str = "en_US",
) -> dict[str, Any]:
    """Run an events script against the source: steps (the runtime's codes and values), their
    lines, verdict and explanation in `locale`'s words (or the diagnostics when it does not
    compile, or the script's problem)."""
    words = SimulationWords(locale)
    found = diagnostics_of(source, now, includes=includes)
    if found:
        return {"diagnostics": found}
    manifest = templates.compile_template(
        source, template_id=new_object_id(), created_at=now, now=now, includes=includes
    )
    program = load_program(manifest)
    events = script.get("events")
    if not isinstance(events, list) or not events:
        return {"problem": words.script_problem("no_events")}
    simulation = Simulation(program, script)
    steps: list[dict[str, Any]] = []
    for index, event in enumerate(events, start=1):
        try:
            if not isinstance(event, dict):
                raise ScriptError("each event is an object", "not_an_object")
            simulation.apply(event)
            steps.append(summary(index, event, simulation.state))
        except InspectionError as error:
            steps.append({**summary(index, event, simulation.state), "refused": error.to_dict()})
        except ScriptError as error:
            problem = words.event_problem(index, event, error.code, error.name)
            return {"problem": problem, "steps": steps, "lines": _lines(words, steps)}
        except (KeyError, TypeError, ValueError):
            problem = words.event_problem(index, event, "unreadable")
            return {"problem": problem, "steps": steps, "lines": _lines(words, steps)}
    if simulation.state is None:
        return {"problem": words.script_problem("not_created")}
    explanation = explain(program, simulation.state, words.locale)
    return {
        "steps": steps,
        "lines": _lines(words, steps),
        "veredict": simulation.state.veredict,
        "status": simulation.state.status,
        "explanation": words.explanation(explanation, source),
    }


def _lines(words: SimulationWords, steps: list[dict[str, Any]]) -> list[str]:
    return [words.step(step) for step in steps]


@post("/templates/simulate", status_code=200)
async def simulate(request: Request[Any, Any, Any]) -> dict[str, Any]:
    member = signed_in(request)
    require(member, "templates.simulate")
    words = SimulationWords(member_locale(request, member))
    data = await _json_body(request)
    source = _text(data, "source")
    events_text = _text(data, "events")
    if len(events_text) > MAX_SCRIPT_CHARS:
        return {"problem": words.script_problem("too_long")}
    try:
        script = json.loads(events_text)
    except json.JSONDecodeError as error:
        return {"problem": words.script_problem("not_json", line=error.lineno, column=error.colno)}
    if not isinstance(script, dict):
        return {"problem": words.script_problem("not_object")}
    clock, shared = app_services(request).clock(), _shared_files(request, member)
    return await in_thread(simulate_source, source, script, clock, shared, words.locale)


ROUTES: list[Any] = [
    template_list,
    shared_file,
    save_shared_file,
    delete_shared_file,
    new_template,
    check,
    format_template,
    save,
    review,
    simulate,
    revisions,
    edit_template,
]
