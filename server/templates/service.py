"""Templates: compile and store custom templates as immutable revisions; find the manifest an
inspection is created from; cache the runtime program of each manifest.

A custom template's id is assigned by the server (24 random hex characters) when it is created
and kept across revisions; an `id:` in the source is replaced, so ids never collide between
companies or with built-ins. Each revision's manifest is stored under its one identity,
`logic.revision` (`inspectlang.manifest.revision_of`: the content hash without the timestamps),
and inspections point at that key: a new revision never changes an old inspection. The times a
template object shows are its record's, so a revision stored again under an existing key (the
same content) still shows when it was made.
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from cachetools import LRUCache, cached
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from inspectlang.builtins import (
    ALIAS_TABLE,
    builtin_source,
    builtin_templates,
    get_builtin,
    get_builtin_by_id,
)
from inspectlang.compiler import compile_source, timestamp
from inspectlang.diagnostics import TemplateError
from inspectlang.includes import IncludeResolver, check_shared_file
from inspectlang.manifest import ALIASES, INSPECTION_TYPES, Template, revision_of, with_revision
from runtime import Program, load_program, new_object_id
from runtime.errors import InvalidProgram
from runtime.proofs.cases import CasesError, Report, read_cases, run_cases
from server.boundary import name_problem
from server.db import Database
from server.errors import ApiError
from server.templates.tables import (
    SharedFileRecord,
    TemplateManifestRecord,
    TemplateRecord,
    TemplateRevisionRecord,
)

#: A template id as the spec shows them: 24 lowercase hex characters.
TEMPLATE_ID = re.compile(r"[0-9a-f]{24}")
#: Longest template source accepted, in characters (the compiler has its own limit too).
MAX_SOURCE_CHARS = 200_000
#: How many compiled programs and parsed manifests stay in memory.
CACHE_SIZE = 512

TEMPLATE_KINDS = ("created", "built-in")


#: Parsed manifests by content key, the least recently used dropped past `CACHE_SIZE` (values
#: never change for a key). cachetools objects are not thread-safe: every access holds
#: `_cache_lock`, which `cached` takes too. (Programs have one cache, the runtime's, by
#: revision: `runtime.load_program`.)
_manifests: LRUCache[str, Template] = LRUCache(maxsize=CACHE_SIZE)
_cache_lock = threading.Lock()
#: Manifest keys known to be committed in each database (engine): no insert needed for them.
_stored_builtins: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def manifest_key(manifest: Template) -> str:
    """The key a manifest is stored under: its revision, the one manifest identity (the
    compiler and `with_revision` set `logic.revision` to `revision_of`, so nothing is hashed
    again here; a manifest without one gets it computed the same way)."""
    return manifest.logic.revision or revision_of(manifest)


def program_for(key: str, manifest: Template) -> Program:
    """The runtime program of a stored manifest (`key`), compiled once per revision by the
    runtime's cache."""
    return load_program(manifest)


def template_not_found() -> ApiError:
    return ApiError.of("not_found_template", "No template with that id.")


# --- names -------------------------------------------------------------------------------------


def name_key(name: str) -> str:
    """Names are unique per company regardless of case and spacing."""
    return " ".join(name.split()).casefold()


# --- template tests ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateTests:
    """A revision's template tests as a save receives them: the cases (checked; None: the
    body sent none, so a revision keeps the previous revision's), and whether a failing case
    refuses the save."""

    cases: list[dict[str, Any]] | None
    must_pass: bool = False

    def document(self) -> dict[str, Any] | None:
        """What the revision stores: `{"cases": [...]}`, or None for no cases."""
        return {"cases": self.cases} if self.cases else None


def template_tests(document: Any, *, must_pass: bool = False) -> TemplateTests:
    """The cases of a `tests` document (`runtime.proofs.cases.read_cases`; None: none sent);
    one that is not a tests document is 400 `invalid_body` naming `tests` with what is wrong
    and where."""
    if document is None:
        return TemplateTests(None, must_pass)
    try:
        cases = read_cases(document)
    except CasesError as error:
        raise ApiError.of(
            "invalid_body",
            'tests must be {"cases": [...]} as in NAME.tests.json (docs/language.md).',
            [{"field": "tests", "message": str(error)}],
        ) from None
    return TemplateTests(cases, must_pass)


def run_template_tests(manifest: Template, tests: TemplateTests | None) -> Report | None:
    """Run the cases against the compiled revision; with `must_pass`, a failing case is 422
    `template_tests_failed` naming each failing case and its problems (nothing is stored)."""
    if tests is None or not tests.cases:
        return None
    report = run_cases(load_program(manifest), tests.cases)
    if tests.must_pass and not report.passed:
        failing = [
            {"field": "tests", "case": case.name, "index": index,
             "message": "; ".join(case.texts), "problems": case.texts,
             "failures": [problem.to_json() for problem in case.problems]}
            for index, case in enumerate(report.cases)
            if not case.passed
        ]  # fmt: skip
        raise ApiError.of(
            "template_tests_failed",
            f"{len(failing)} of {len(report.cases)} template test(s) fail; nothing was saved.",
            failing,
        )
    return report


def _with_tests(
    data: dict[str, Any], document: dict[str, Any] | None, report: Report | None
) -> dict[str, Any]:
    if document is not None:
        data["tests"] = document
    if report is not None:
        data["testResults"] = report.to_json()
    return data


# --- compiling ---------------------------------------------------------------------------------


def compile_template(
    source: str,
    *,
    template_id: str,
    created_at: datetime,
    now: datetime,
    includes: IncludeResolver | None = None,
) -> Template:
    """Compile `.insp` source into a custom template manifest with the server's id and times.
    `includes` resolves its `include` lines (the company's shared files: `CompanyFiles`); the
    manifest holds what they declare, so it never changes when a shared file does.

    422 `invalid_template` with every diagnostic in `errors` when it does not compile.
    """
    if not source.strip():
        raise ApiError(
            "invalid_template", 422, "The template source is empty.", [_empty_source_error()]
        )
    if len(source) > MAX_SOURCE_CHARS:
        raise ApiError(
            "invalid_template",
            422,
            f"The template source is longer than {MAX_SOURCE_CHARS} characters.",
        )
    try:
        compiled = compile_source(source, now=now, includes=includes)
    except TemplateError as error:
        raise ApiError(
            "invalid_template",
            422,
            f"The template does not compile: {len(error.diagnostics)} problem(s).",
            error.to_list(),
        ) from None
    why = name_problem(compiled.name)
    if why is not None:
        line = next((n for n, text in enumerate(source.splitlines(), 1) if "template" in text), 1)
        raise ApiError(
            "invalid_template",
            422,
            f"The template's name {why}: a name is one line of printable text.",
            [{"code": "invalid_name", "severity": "error", "message": f"the name {why}",
              "line": line, "column": 1}],
        )  # fmt: skip
    # The server's id replaces the compiler's derived one; the revision hash is recomputed so
    # that it covers the id (the runtime caches programs by revision).
    manifest = with_revision(
        compiled.model_copy(
            update={
                "id": template_id,
                "type": "created",
                "createdAt": timestamp(created_at),
                "updatedAt": timestamp(now),
            }
        )
    )
    # Saving also loads the program: anything the runtime would refuse is refused now, with a
    # position, rather than answering 201 and then failing every create.
    try:
        load_program(manifest)
    except InvalidProgram as error:
        raise ApiError(
            "invalid_template",
            422,
            "The template compiles but the runtime cannot run it.",
            [_runtime_refusal(manifest, error)],
        ) from None
    return manifest


def _runtime_refusal(manifest: Template, error: InvalidProgram) -> dict[str, Any]:
    """A diagnostic (E039) at the source span of the deepest IR node on the refusal's path."""
    line, column, end_line, end_column = _span_on_path(manifest.logic.model_dump(), error.path)
    return {
        "code": "E039",
        "severity": "error",
        "message": f"the runtime cannot run this: {error.message}",
        "line": line,
        "column": column,
        "endLine": end_line,
        "endColumn": end_column,
    }


def _span_on_path(logic: Any, path: str) -> tuple[int, int, int, int]:
    """Follow `logic.checks[0].valid.left` through the IR; the last span met (else line 1)."""
    span: tuple[int, int, int, int] = (1, 1, 1, 1)
    node: Any = {"logic": logic}
    for name, index in re.findall(r"([A-Za-z_]+)|\[(\d+)\]", path):
        node = node.get(name) if name and isinstance(node, dict) else node
        if index and isinstance(node, list) and int(index) < len(node):
            node = node[int(index)]
        found = node.get("span") if isinstance(node, dict) else None
        if isinstance(found, list) and len(found) == 4 and all(isinstance(x, int) for x in found):
            span = (found[0], found[1], found[2], found[3])
    return span


def _empty_source_error() -> dict[str, Any]:
    return {
        "code": "E011",
        "severity": "error",
        "message": "missing template header",
        "line": 1,
        "column": 1,
    }


# --- storage -----------------------------------------------------------------------------------


def store_manifest(session: Session, key: str, manifest: Template, now: datetime) -> None:
    """Insert a manifest under its content key unless it is already there (race-free)."""
    values = {
        "key": key,
        "template_id": manifest.id,
        "manifest": manifest.to_api(),
        "created_at": now,
    }
    table = cast(Any, TemplateManifestRecord).__table__
    dialect = session.get_bind().dialect.name
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    session.execute(insert(table).values(**values).on_conflict_do_nothing(index_elements=["key"]))
    with _cache_lock:
        _manifests[key] = manifest


@cached(_manifests, key=lambda session, key: key, lock=_cache_lock)
def load_manifest(session: Session, key: str) -> Template:
    """The manifest stored under `key` (cached: manifests never change)."""
    record = session.get(TemplateManifestRecord, key)
    if record is None:
        raise ApiError.of("internal_error", "A stored template revision is missing.")
    return Template.from_api(record.manifest)


def _api(manifest: Template, record: TemplateRecord | None, with_logic: bool) -> dict[str, Any]:
    data = manifest.to_api(with_logic=with_logic)
    if record is not None:
        data["revision"] = record.latest_revision
        # The stored manifest is shared by every revision with the same content: the record
        # knows when this template was created and last revised.
        data["createdAt"] = timestamp(record.created_at)
        data["updatedAt"] = timestamp(record.updated_at)
    return data


def _find_record(session: Session, company_id: str, template_id: str) -> TemplateRecord | None:
    record = session.get(TemplateRecord, template_id)
    if record is None or record.company_id != company_id:
        return None
    return record


def _check_name_free(session: Session, company_id: str, name: str, template_id: str | None) -> None:
    statement = select(TemplateRecord).where(
        cast(Any, TemplateRecord.company_id) == company_id,
        cast(Any, TemplateRecord.name_key) == name_key(name),
    )
    existing = session.execute(statement).scalars().first()
    if existing is not None and existing.id != template_id:
        raise _name_taken(name)
    if any(name_key(builtin.name) == name_key(name) for builtin in builtin_templates()):
        raise _name_taken(name)


def _name_taken(name: str) -> ApiError:
    return ApiError(
        "template_name_taken",
        409,
        f"The company already has a template named {name!r} (or it is a built-in's name).",
    )


def create_template(
    db: Database,
    company_id: str,
    source: str,
    now: datetime,
    tests: TemplateTests | None = None,
) -> dict[str, Any]:
    """Compile and store a new custom template (revision 1) with its template tests, run; the
    template object (with `tests` and `testResults` when it has cases)."""
    template_id = new_object_id()
    manifest = compile_template(
        source,
        template_id=template_id,
        created_at=now,
        now=now,
        includes=CompanyFiles(db, company_id),
    )
    report = run_template_tests(manifest, tests)
    document = tests.document() if tests is not None else None
    key = manifest_key(manifest)
    with db.session(immediate=True) as session:
        _check_name_free(session, company_id, manifest.name, None)
        store_manifest(session, key, manifest, now)
        record = TemplateRecord(
            id=template_id,
            company_id=company_id,
            name=manifest.name,
            name_key=name_key(manifest.name),
            inspection_type=manifest.inspectionType,
            latest_revision=1,
            manifest_key=key,
            created_at=now,
            updated_at=now,
        )
        session.add(record)
        session.flush()
        session.add(
            TemplateRevisionRecord(
                template_id=template_id,
                number=1,
                source=source,
                manifest_key=key,
                tests=document,
                created_at=now,
            )
        )
        _commit_or_name_taken(session, manifest.name)
    return _with_tests(_api(manifest, record, with_logic=False), document, report)


def revise_template(
    db: Database,
    company_id: str,
    template_id: str,
    source: str,
    now: datetime,
    tests: TemplateTests | None = None,
) -> dict[str, Any]:
    """Store a new revision of a custom template with its template tests (None: the previous
    revision's), run; existing inspections keep their revision. The answer adds `changes`,
    and `tests` and `testResults` when the revision has cases."""
    with db.session(immediate=True) as session:
        record = _find_record(session, company_id, template_id)
        if record is None:
            if get_builtin_by_id(template_id) is not None:
                raise ApiError(
                    "template_not_editable", 409, "Built-in templates cannot be changed."
                )
            raise template_not_found()
        record = session.execute(
            select(TemplateRecord)
            .where(cast(Any, TemplateRecord.id) == template_id)
            .with_for_update()
        ).scalar_one()
        manifest = compile_template(
            source,
            template_id=template_id,
            created_at=record.created_at,
            now=now,
            includes=CompanyFiles(db, company_id),
        )
        if manifest.inspectionType != record.inspection_type:
            raise ApiError(
                "template_type_changed",
                409,
                f"A revision cannot change the inspection type ({record.inspection_type} to "
                f"{manifest.inspectionType}); create a new template instead.",
            )
        _check_name_free(session, company_id, manifest.name, template_id)
        if tests is None or tests.cases is None:
            kept = _latest_revision(session, record).tests
            must_pass = tests is not None and tests.must_pass
            tests = template_tests(kept or {"cases": []}, must_pass=must_pass)
        report = run_template_tests(manifest, tests)
        document = tests.document() if tests is not None else None
        previous = load_manifest(session, record.manifest_key)
        key = manifest_key(manifest)
        store_manifest(session, key, manifest, now)
        record.latest_revision += 1
        record.name = manifest.name
        record.name_key = name_key(manifest.name)
        record.manifest_key = key
        record.updated_at = now
        session.add(record)
        session.add(
            TemplateRevisionRecord(
                template_id=template_id,
                number=record.latest_revision,
                source=source,
                manifest_key=key,
                tests=document,
                created_at=now,
            )
        )
        _commit_or_name_taken(session, manifest.name)
    # After the commit: the solver's seconds never hold the template's row.
    saved = {**_api(manifest, record, with_logic=False), "changes": changes(previous, manifest)}
    return _with_tests(saved, document, report)


def preview_revision(
    db: Database,
    company_id: str,
    template_id: str | None,
    source: str,
    now: datetime,
    tests: TemplateTests | None,
) -> dict[str, Any]:
    """What saving `source` (and `tests`) would answer, without storing anything: `changes`
    against the template's latest revision (when `template_id` names one) and `testResults`.
    A source that does not compile is the save's 422 `invalid_template`."""
    includes = CompanyFiles(db, company_id)
    previous: Template | None = None
    created_at = now
    if template_id:
        with db.session() as session:
            record = _find_record(session, company_id, template_id)
            if record is None:
                raise template_not_found()
            previous = load_manifest(session, record.manifest_key)
            created_at = record.created_at
    manifest = compile_template(
        source,
        template_id=template_id or new_object_id(),
        created_at=created_at,
        now=now,
        includes=includes,
    )
    report = run_template_tests(manifest, tests)
    answer: dict[str, Any] = {}
    if previous is not None:
        answer["changes"] = changes(previous, manifest)
    if report is not None:
        answer["testResults"] = report.to_json()
    return answer


def changes(previous: Template, manifest: Template) -> dict[str, Any]:
    """What the new revision approves that the previous one refused, and the reverse
    (`inspectlang diff`, docs/api.md): `{equivalent, differences: [...]}`, each difference with
    an example inspection as events files for both revisions."""
    from runtime.proofs.diff import difference

    return difference(load_program(previous), load_program(manifest)).to_json()


def revisions(
    db: Database, company_id: str, template_id: str
) -> list[TemplateRevisionRecord] | None:
    """Every revision of the company's template, oldest first; None when it is not theirs."""
    with db.session() as session:
        record = session.get(TemplateRecord, template_id)
        if record is None or record.company_id != company_id:
            return None
        statement = (
            select(TemplateRevisionRecord)
            .where(cast(Any, TemplateRevisionRecord.template_id) == template_id)
            .order_by(cast(Any, TemplateRevisionRecord.number))
        )
        return list(session.execute(statement).scalars())


def _commit_or_name_taken(session: Session, name: str) -> None:
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise _name_taken(name) from None


# --- reading -----------------------------------------------------------------------------------


def _validated_filters(inspection_type: str | None, kind: str | None) -> None:
    if inspection_type is not None and inspection_type not in INSPECTION_TYPES:
        raise ApiError(
            "invalid_filter",
            400,
            f"inspectionType must be one of {', '.join(INSPECTION_TYPES)}.",
            [{"field": "inspectionType", "message": "unknown inspection type"}],
        )
    if kind is not None and kind not in TEMPLATE_KINDS:
        raise ApiError(
            "invalid_filter",
            400,
            "type must be `created` or `built-in`.",
            [{"field": "type", "message": "unknown template type"}],
        )


def list_templates(
    db: Database, company_id: str, *, inspection_type: str | None, kind: str | None
) -> list[dict[str, Any]]:
    """The company's templates (latest revision each, oldest first), then the built-ins."""
    _validated_filters(inspection_type, kind)
    result: list[dict[str, Any]] = []
    if kind in (None, "created"):
        statement = select(TemplateRecord).where(cast(Any, TemplateRecord.company_id) == company_id)
        if inspection_type is not None:
            statement = statement.where(
                cast(Any, TemplateRecord.inspection_type) == inspection_type
            )
        statement = statement.order_by(
            cast(Any, TemplateRecord.created_at), cast(Any, TemplateRecord.id)
        )
        with db.session() as session:
            for record in session.execute(statement).scalars():
                manifest = load_manifest(session, record.manifest_key)
                result.append(_api(manifest, record, with_logic=False))
    if kind in (None, "built-in"):
        result.extend(
            builtin.to_api(with_logic=False)
            for builtin in builtin_templates()
            if inspection_type in (None, builtin.inspectionType)
        )
    return result


def get_template(
    db: Database, company_id: str, template_id: str, *, with_logic: bool = False
) -> dict[str, Any]:
    """One template object (the latest revision of a custom template); 404 otherwise."""
    if not TEMPLATE_ID.fullmatch(template_id):
        raise template_not_found()
    with db.session() as session:
        record = _find_record(session, company_id, template_id)
        if record is not None:
            data = _api(load_manifest(session, record.manifest_key), record, with_logic)
            return _with_tests(data, _latest_revision(session, record).tests, None)
    builtin = get_builtin_by_id(template_id)
    if builtin is None:
        raise template_not_found()
    return builtin.to_api(with_logic=with_logic)


def get_template_source(db: Database, company_id: str, template_id: str) -> str:
    """The `.insp` source of a custom template's latest revision."""
    with db.session() as session:
        record = _find_record(session, company_id, template_id)
        if record is None:
            raise template_not_found()
        return str(_latest_revision(session, record).source)


def _latest_revision(session: Session, record: TemplateRecord) -> TemplateRevisionRecord:
    """The template's latest revision row (its source and tests)."""
    statement = select(TemplateRevisionRecord).where(
        cast(Any, TemplateRevisionRecord.template_id) == record.id,
        cast(Any, TemplateRevisionRecord.number) == record.latest_revision,
    )
    revision: TemplateRevisionRecord = session.execute(statement).scalar_one()
    return revision


def source_of(db: Database, manifest_key: str, template_id: str) -> str | None:
    """The source an inspection ran: its revision's (by the manifest it was made with), or the
    built-in file of a built-in template; None when neither is known."""
    with db.session() as session:
        revision = (
            session.execute(
                select(TemplateRevisionRecord).where(
                    cast(Any, TemplateRevisionRecord.manifest_key) == manifest_key
                )
            )
            .scalars()
            .first()
        )
    if revision is not None:
        return str(revision.source)
    for alias, by_type in ALIAS_TABLE.items():
        for inspection_type, builtin_id in by_type.items():
            if builtin_id == template_id:
                return builtin_source(alias, inspection_type)
    return None


def resolve_for_inspection(
    session: Session, company_id: str, reference: Any, inspection_type: str
) -> tuple[str, Template]:
    """The (content key, manifest) a new inspection of `inspection_type` is created from.

    `reference` is the body's `templateId`: an alias (`easy`, `deep`, `damage`) or a 24-hex id of
    one of the company's templates or a built-in. Only reads: a built-in manifest is stored by
    `ensure_stored` in the transaction that creates the inspection, so the inspection keeps its
    revision even when a later release changes the built-in.
    """
    if not isinstance(reference, str) or not reference:
        raise ApiError.of(
            "invalid_template_id", "templateId is required: a 24-hex template id or an alias."
        )
    manifest: Template | None
    if reference in ALIASES:
        if inspection_type not in ALIASES[reference]:
            raise ApiError.of(
                "invalid_template_id",
                f"The alias {reference!r} is not available for {inspection_type} inspections.",
            )
        manifest = get_builtin(reference, inspection_type)
        if manifest is None:
            raise template_not_found()
    elif not TEMPLATE_ID.fullmatch(reference):
        raise ApiError.of(
            "invalid_template_id",
            "templateId must be 24 hexadecimal characters or an alias (easy, deep, damage).",
        )
    else:
        record = _find_record(session, company_id, reference)
        if record is not None:
            manifest = load_manifest(session, record.manifest_key)
            _check_type(manifest, inspection_type)
            remember_stored(session, record.manifest_key)
            return record.manifest_key, manifest
        manifest = get_builtin_by_id(reference)
        if manifest is None:
            raise template_not_found()
    _check_type(manifest, inspection_type)
    return manifest_key(manifest), manifest


def ensure_stored(session: Session, key: str, manifest: Template, now: datetime) -> None:
    """Store the manifest under `key` in this transaction unless it is known to be stored."""
    if key not in _stored_builtins.setdefault(session.get_bind(), set()):
        store_manifest(session, key, manifest, now)


def remember_stored(session: Session, key: str) -> None:
    """After a commit that stored (or found) the manifest `key`: skip its insert from now on."""
    _stored_builtins.setdefault(session.get_bind(), set()).add(key)


def _check_type(manifest: Template, inspection_type: str) -> None:
    if manifest.inspectionType != inspection_type:
        raise ApiError.of(
            "wrong_template_provided",
            f"The template is for {manifest.inspectionType} inspections, not {inspection_type}.",
        )


# --- shared files ------------------------------------------------------------------------------


class CompanyFiles:
    """The company's shared files as the compiler's include resolver: `include "NAME"` reads the
    company's file NAME; another company's files are never found (E043)."""

    def __init__(self, db: Database, company_id: str) -> None:
        self.db = db
        self.company_id = company_id

    def source(self, name: str) -> str | None:
        with self.db.session() as session:
            record = _shared_record(session, self.company_id, name)
            return None if record is None else str(record.source)

    def filename(self, name: str) -> str:
        return name

    def names(self) -> list[str]:
        return [str(item["name"]) for item in list_shared_files(self.db, self.company_id)]


def _shared_record(session: Session, company_id: str, name: str) -> SharedFileRecord | None:
    statement = select(SharedFileRecord).where(
        cast(Any, SharedFileRecord.company_id) == company_id,
        cast(Any, SharedFileRecord.name) == name,
    )
    return session.execute(statement).scalars().first()


def shared_file_not_found() -> ApiError:
    return ApiError.of("not_found_shared_file", "No shared file with that name.")


def save_shared_file(
    db: Database, company_id: str, name: str, source: str, now: datetime
) -> dict[str, Any]:
    """Create or replace a shared file; 422 `invalid_shared_file` with its diagnostics when it is
    not one (syntax, a bad name, a declaration only a template may hold). Saved templates keep
    what they included: a template picks up the change when it is saved again."""
    if len(source) > MAX_SOURCE_CHARS:
        raise ApiError(
            "invalid_shared_file",
            422,
            f"The shared file is longer than {MAX_SOURCE_CHARS} characters.",
        )
    problems = check_shared_file(source, name)
    if problems:
        raise ApiError(
            "invalid_shared_file",
            422,
            f"The shared file is not valid: {len(problems)} problem(s).",
            [d.to_dict() for d in problems],
        )
    table = cast(Any, SharedFileRecord).__table__
    with db.session(immediate=True) as session:
        # One statement, so two saves of a new name at once never collide (the later wins).
        dialect = session.get_bind().dialect.name
        insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
        statement = insert(table).values(
            company_id=company_id, name=name, source=source, created_at=now, updated_at=now
        )
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["company_id", "name"],
                set_={"source": source, "updated_at": now},
            )
        )
        session.commit()
        record = _shared_record(session, company_id, name)
        if record is None:  # deleted between the upsert and this read
            raise shared_file_not_found()
        return _shared_api(record)


def _shared_api(record: SharedFileRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "createdAt": timestamp(record.created_at),
        "updatedAt": timestamp(record.updated_at),
    }


def get_shared_file(db: Database, company_id: str, name: str) -> str:
    """The source of one of the company's shared files; 404 otherwise."""
    with db.session() as session:
        record = _shared_record(session, company_id, name)
        if record is None:
            raise shared_file_not_found()
        return str(record.source)


def delete_shared_file(db: Database, company_id: str, name: str) -> None:
    """Delete one of the company's shared files; 404 `not_found_shared_file` otherwise. The
    manifests of saved templates are self-contained, so none of them changes."""
    with db.session(immediate=True) as session:
        record = _shared_record(session, company_id, name)
        if record is None:
            raise shared_file_not_found()
        session.delete(record)
        session.commit()


def list_shared_files(db: Database, company_id: str) -> list[dict[str, Any]]:
    """The company's shared files (name and times), by name."""
    statement = (
        select(SharedFileRecord)
        .where(cast(Any, SharedFileRecord.company_id) == company_id)
        .order_by(cast(Any, SharedFileRecord.name))
    )
    with db.session() as session:
        return [_shared_api(record) for record in session.execute(statement).scalars()]
