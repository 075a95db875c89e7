"""`check NAME` declarations (global validations): each `valid when` condition, and the order
they are computed in (a check after every check it refers to; a cycle is E033)."""

from __future__ import annotations

from inspectlang import ast, identifiers
from inspectlang.checker.checked import CheckedCheck
from inspectlang.checker.context import Run
from inspectlang.checker.declarations import first_declared
from inspectlang.checker.expressions import constant_boolean
from inspectlang.diagnostics import did_you_mean
from inspectlang.property_values import first_given, norm, span_of
from inspectlang.vocabulary import MAX_CHECKS

CHECK_PROPERTIES = ("name", "description", "valid when")
#: A check's flags: `for information` says it is shown and decides nothing on purpose (no
#: verdict line, rule or let need read it; W017 reports an unread check without it).
CHECK_FLAGS = ("for information",)


def declare_checks(run: Run) -> None:
    """Every check (at most MAX_CHECKS): names into the scope first (a check may refer to a
    later one), then each condition."""
    report, properties, scope = run.reporter.report, run.properties, run.scope
    decls = run.declared(ast.CheckDecl)
    if not run.reporter.limit(len(decls), MAX_CHECKS, "checks", run.last_span(decls)):
        return
    unique: list[ast.CheckDecl] = []
    for decl in decls:
        if decl.name in scope.checks:
            report(
                "E012",
                f"check `{decl.name}` is declared twice",
                span_of(decl),
                notes=(first_declared(decls, decl),),
            )
            continue
        scope.checks[decl.name] = identifiers.check_id(run.template.template_id, decl.name)
        unique.append(decl)
    for decl in unique:
        informational = check_flags(run, decl)
        props = properties.properties(
            tuple(item for item in decl.items if not isinstance(item, ast.Flag)),
            CHECK_PROPERTIES,
            f"check `{decl.name}`",
            translatable=("name", "description"),
        )
        translations: dict[str, dict[str, str]] = {}
        for key, prop in props.items():
            field_name, _, locale = key.partition(" ")
            if field_name in ("name", "description") and locale and prop.locale:
                text = properties.text_value(prop)
                if text is not None and locale != properties.locales[0]:
                    translations.setdefault(locale, {})[field_name] = text
        condition = props.get("valid when")
        scope.used_checks = {}
        if condition is None:
            report("E011", f"check `{decl.name}` needs `valid when: CONDITION`", span_of(decl))
            continue
        value = properties.single(condition, "condition")
        if value is None or isinstance(value, ast.Quantity | ast.Size):
            continue
        node = run.expressions.condition(value, "`valid when`")
        constant = constant_boolean(value)
        if constant is not None:
            run.reporter.warn(
                "W001",
                f"check `{decl.name}` is always {'valid' if constant else 'invalid'}",
                value.span,
            )
        run.template.checks.append(
            CheckedCheck(
                scope.checks[decl.name],
                decl.name,
                first_given(properties.text_value(props.get("name")), default=decl.name),
                properties.text_value(props.get("description")) or "",
                node,
                list(scope.used_checks),
                decl.span,
                translations,
                informational,
            )
        )


def check_flags(run: Run, decl: ast.CheckDecl) -> bool:
    """Whether a check is marked `for information`; any other flag is E010."""
    informational = False
    for item in decl.items:
        if not isinstance(item, ast.Flag):
            continue
        words = norm(item.words)
        if words in CHECK_FLAGS:
            informational = True
            continue
        run.reporter.report(
            "E010",
            f"unknown flag `{item.words}` in check `{decl.name}`",
            item.span,
            did_you_mean(words, CHECK_FLAGS),
            notes=("a check takes `name:`, `description:`, `valid when:` and `for information`",),
        )
    return informational


def order_checks(run: Run) -> None:
    """Checks in dependency order (source order otherwise); cycles are reported (E033)."""
    checks = run.template.checks
    by_key = {check.key: check for check in checks}
    ordered: list[CheckedCheck] = []
    state: dict[str, int] = {}  # 1: being visited, 2: done
    reported: set[frozenset[str]] = set()

    def visit(key: str, path: list[str]) -> None:
        state[key] = 1
        for dependency in by_key[key].depends:
            if dependency not in by_key:
                continue
            if state.get(dependency) == 1:
                cycle = [*path[path.index(dependency) :], dependency]
                if frozenset(cycle) not in reported:
                    reported.add(frozenset(cycle))
                    run.reporter.report(
                        "E033",
                        "checks refer to each other in a cycle: " + " -> ".join(cycle),
                        span_of(by_key[dependency]),
                    )
            elif dependency not in state:
                visit(dependency, [*path, dependency])
        state[key] = 2
        ordered.append(by_key[key])

    for check in checks:
        if check.key not in state:
            visit(check.key, [check.key])
    run.template.checks = ordered
