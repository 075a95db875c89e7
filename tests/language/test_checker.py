"""The checker on modules built by hand (no parser) and on source: what each bad input gets,
with its exact position, message and suggestion."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspectlang import ast, ir
from inspectlang.checker import check_module
from inspectlang.compiler import check_source, compile_module, compile_source
from inspectlang.diagnostics import CODES, Diagnostic, TemplateError
from inspectlang.manifest import Template
from inspectlang.parser import parse, parse_with_diagnostics

from . import strategies

S = ast.Span
HEADER = ast.TemplateDecl("T", (ast.Property("type", (ast.Name("car"),)),), span=S(1, 1, 2, 14))
VERDICT = ast.VerdictDecl((), span=S(20, 1, 20, 8))
SOURCE_HEADER = 'template "T"\n    type: car\n'
SOURCE_VERDICT = "verdict\n    approve when all(i in images where i.approved)\n"


def check(*declarations: ast.Declaration) -> list[Diagnostic]:
    """The diagnostics of the declarations under a header and an empty verdict (whose W004,
    tested by its conformance vector, is left out)."""
    module = ast.Module((HEADER, *declarations, VERDICT), filename="hand.insp")
    return [d for d in check_module(module)[1] if d.code != "W004"]


def only(diagnostics: list[Diagnostic]) -> Diagnostic:
    assert len(diagnostics) == 1, [d.render() for d in diagnostics]
    return diagnostics[0]


def source_diagnostics(body: str) -> list[Diagnostic]:
    return check_source(SOURCE_HEADER + body + SOURCE_VERDICT, "t.insp")


def test_a_minimal_hand_built_module_is_valid() -> None:
    checked, diagnostics = check_module(ast.Module((HEADER, VERDICT)))
    assert [d.code for d in diagnostics] == ["W004"]  # an empty verdict approves everything
    assert checked is not None
    assert checked.inspection_type == "car"
    assert checked.name == "T"
    assert checked.parameters == {"maxAttempts": 3, "minConfidence": 80}


def test_unknown_variable_in_a_check_suggests_the_close_name() -> None:
    variable = ast.VariableDecl("score", "numeric", ast.Literal(1), span=S(3, 1, 3, 30))
    condition = ast.Binary(
        ">", ast.Name("scor", span=S(5, 17, 5, 21)), ast.Literal(1), span=S(5, 17, 5, 25)
    )
    check_decl = ast.CheckDecl(
        "c", (ast.Property("valid when", (condition,), span=S(5, 5, 5, 25)),), span=S(4, 1, 5, 25)
    )
    found = [d for d in check(variable, check_decl) if d.severity == "error"]
    diagnostic = only(found)
    assert diagnostic.code == "E020"
    assert diagnostic.message == "unknown name `scor`"
    assert diagnostic.suggestion == "score"
    assert (diagnostic.span.line, diagnostic.span.column) == (5, 17)
    assert diagnostic.filename == "hand.insp"


def test_type_mismatch_in_set_names_both_types() -> None:
    variable = ast.VariableDecl("score", "numeric", ast.Literal(1))
    statement = ast.SetStatement("score", ast.Literal("high", span=S(7, 18, 7, 24)))
    rule = ast.RuleDecl(ast.EventSpec("finish"), (statement,))
    diagnostic = only(check(variable, rule))
    assert diagnostic.code == "E023"
    assert diagnostic.message == "cannot set numeric variable `score` to a text"
    assert diagnostic.span == S(7, 18, 7, 24)


def test_the_checked_model_carries_ir_with_types_and_spans() -> None:
    variable = ast.VariableDecl("score", "numeric", ast.Literal(100))
    value = ast.Binary(
        "-",
        ast.Name("score", span=S(4, 18, 4, 23)),
        ast.Literal(10, span=S(4, 26, 4, 28)),
        span=S(4, 18, 4, 28),
    )
    rule = ast.RuleDecl(
        ast.EventSpec("finish"), (ast.SetStatement("score", value, span=S(4, 5, 4, 28)),)
    )
    checked, diagnostics = check_module(ast.Module((HEADER, variable, rule, VERDICT)))
    assert [d.code for d in diagnostics] == ["W004"]  # the empty VERDICT
    assert checked is not None
    assert checked.rules[0].event == "finish"
    assert checked.rules[0].body == (
        ir.SetStatement(
            "score",
            ir.Binary(
                "-",
                ir.Variable("score", "number", (4, 18, 4, 23)),
                ir.Literal(10, "number", (4, 26, 4, 28)),
                "number",
                (4, 18, 4, 28),
            ),
            (4, 5, 4, 28),
        ),
    )
    # and the manifest's JSON form of it (docs/design/ir.md)
    assert [ir.to_json(statement) for statement in checked.rules[0].body] == [
        {
            "op": "set",
            "name": "score",
            "value": {
                "op": "binary",
                "operator": "-",
                "left": {"op": "var", "name": "score", "type": "number", "span": [4, 18, 4, 23]},
                "right": {"op": "literal", "value": 10, "type": "number", "span": [4, 26, 4, 28]},
                "type": "number",
                "span": [4, 18, 4, 28],
            },
            "span": [4, 5, 4, 28],
        }
    ]


def test_all_errors_of_a_file_are_reported_in_one_run_in_source_order() -> None:
    found = source_diagnostics(
        "image front\n    validate plates\ninput km\n    type: numerik\nfeature video_cal: on\n"
    )
    assert [(d.code, d.span.line, d.suggestion) for d in found] == [
        ("E026", 4, "plate"),
        ("E019", 6, "numeric"),
        ("E027", 7, "video_call"),
    ]


def test_cycle_message_names_the_whole_cycle() -> None:
    found = source_diagnostics(
        "check a\n    valid when: checks.b\ncheck b\n    valid when: checks.a\n"
    )
    diagnostic = only(found)
    assert diagnostic.code == "E033"
    assert diagnostic.message == "checks refer to each other in a cycle: a -> b -> a"


def test_checks_are_ordered_after_what_they_refer_to() -> None:
    module_source = (
        SOURCE_HEADER
        + "check c\n    valid when: checks.b and checks.a\n"
        + "check b\n    valid when: checks.a\n"
        + "check a\n    valid when: 1 < 2\n"
        + SOURCE_VERDICT
    )

    template = compile_source(module_source)
    assert [check.key for check in template.logic.checks] == ["a", "b", "c"]


def test_event_subject_outside_its_event_says_where_it_exists() -> None:
    found = source_diagnostics("check c\n    valid when: validation.valid\n")
    diagnostic = only(found)
    assert diagnostic.code == "E036"
    assert "`on validation passed` or `on validation failed`" in diagnostic.message


def test_warnings_do_not_stop_compilation() -> None:

    source = SOURCE_HEADER + "variable unused: numeric = 1\n" + SOURCE_VERDICT
    assert [d.code for d in check_source(source)] == ["W002"]
    assert [d.severity for d in check_source(source)] == ["warning"]
    assert compile_source(source).variables[0].name == "unused"


def test_validation_defaults_take_the_template_minimum_confidence() -> None:

    template = compile_source(
        SOURCE_HEADER
        + "settings\n    minimum confidence: 65\n"
        + "image front\n    validate plate\n    validate color, minimum confidence 90\n"
        + SOURCE_VERDICT
    )
    validations = next(iter(template.logic.images.values())).validations
    assert validations["plate"].minConfidence == 65
    assert validations["color"].minConfidence == 90


def test_a_hand_built_module_with_absurd_sizes_is_refused_without_crashing() -> None:
    images = tuple(ast.ImageDecl(f"i{n}", span=S(n + 3, 1, n + 3, 8)) for n in range(150))
    diagnostic = only(check(*images))
    assert diagnostic.code == "E037"
    assert diagnostic.message == "too many images: 150 (at most 100)"


def test_deep_expression_built_by_hand_is_refused_not_a_recursion_error() -> None:
    expr: ast.Expr = ast.Literal(True, span=S(5, 1, 5, 5))
    for _ in range(5000):
        expr = ast.Unary("not", expr, span=S(5, 1, 5, 5))
    check_decl = ast.CheckDecl("c", (ast.Property("valid when", (expr,)),))
    codes = {d.code for d in check(check_decl)}
    assert codes == {"E004"}


def test_locale_written_in_the_key_is_understood() -> None:
    header = ast.TemplateDecl(
        "T",
        (
            ast.Property("type", (ast.Name("car"),)),
            ast.Property("locales", (ast.Name("en_US"), ast.Name("es_AR"))),
        ),
    )
    image = ast.ImageDecl(
        "front",
        (
            ast.Property("label", (ast.Literal("Front"),)),
            ast.Property("label es_AR", (ast.Literal("Frente"),)),
        ),
    )
    checked, diagnostics = check_module(ast.Module((header, image, VERDICT)))
    assert [d.code for d in diagnostics] == ["W004"]  # the empty VERDICT
    assert checked is not None
    assert checked.images[0].labels == {"": "Front", "es_AR": "Frente"}


def test_built_in_kind_refuses_required_create_inputs_but_created_allows_them() -> None:
    body = "input n\n    type: text\n    required\n"
    source = SOURCE_HEADER + body + SOURCE_VERDICT
    assert check_source(source, template_kind="created") == []
    diagnostic = only(check_source(source, template_kind="built-in"))
    assert diagnostic.code == "E031"


def test_deeply_nested_ifs_built_by_hand_are_refused_not_a_recursion_error() -> None:
    variable = ast.VariableDecl("x", "numeric", ast.Literal(0))
    statement: ast.Statement = ast.SetStatement("x", ast.Literal(1))
    for _ in range(3000):
        statement = ast.IfStatement(ast.Binary("<", ast.Name("x"), ast.Literal(1)), (statement,))
    rule = ast.RuleDecl(ast.EventSpec("finish"), (statement,))
    assert [d.code for d in check(variable, rule)] == ["E004"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.modules)
def test_any_module_gets_diagnostics_or_a_manifest_never_an_exception(module: ast.Module) -> None:
    checked, diagnostics = check_module(module)
    assert all(d.code in CODES for d in diagnostics)
    if checked is None:
        assert any(d.severity == "error" for d in diagnostics)
        with pytest.raises(TemplateError):
            compile_module(module)
    else:
        template = compile_module(module)
        assert Template.from_api(template.to_api()) == template


EXAMPLE_LINES = (
    (Path(__file__).resolve().parents[2] / "docs/design/syntax.md")
    .read_text(encoding="utf-8")
    .split("```\n", 2)[1]
    .split("```")[0]
    .splitlines(keepends=True)
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["delete", "duplicate", "swap"]),
            st.integers(0, len(EXAMPLE_LINES) - 1),
            st.integers(0, len(EXAMPLE_LINES) - 1),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_example_lines_get_diagnostics_never_an_exception(
    mutations: list[tuple[str, int, int]],
) -> None:
    lines = list(EXAMPLE_LINES)
    for action, first, second in mutations:
        first, second = first % len(lines), second % len(lines)
        if action == "delete" and len(lines) > 1:
            del lines[first]
        elif action == "duplicate":
            lines.insert(second, lines[first])
        else:
            lines[first], lines[second] = lines[second], lines[first]
    source = "".join(lines)
    diagnostics = check_source(source, "mutated.insp")
    assert all(d.code in CODES and d.span.line >= 0 for d in diagnostics)
    if any(d.severity == "error" for d in diagnostics):
        with pytest.raises(TemplateError):
            compile_source(source)
    else:
        assert compile_source(source).name == "Motor insurance"


def test_notes_say_what_was_meant() -> None:
    found = source_diagnostics(
        "input km\n    type: numeric\n    maximum length: 3\n"
        'check adult\n    valid when: consumer.birthdate < "2000-01-01"\n'
    )
    assert [(d.code, d.notes) for d in found] == [
        ("E017", ("a numeric input takes: `minimum`, `maximum`, `whole number`",)),
        ("E023", ('write `date("2000-01-01")` for a date',)),
    ]
    check_input = source_diagnostics("input ok\n    type: check\n    minimum: 1\n")
    assert check_input[0].notes == ("a check input has no properties of its own",)


def test_absurd_literals_are_refused() -> None:
    long_text = ast.Literal("x" * 10_001, span=S(5, 17, 5, 10_020))
    huge = ast.Literal(1e16, span=S(6, 17, 6, 22))
    many = ast.ListExpr(tuple(ast.Literal(1) for _ in range(10_001)), span=S(7, 17, 7, 30))
    checks = [
        ast.CheckDecl(
            f"c{index}",
            (ast.Property("valid when", (ast.Binary("=", value, value, span=value.span),)),),
        )
        for index, value in enumerate((long_text, huge, many))
    ]
    found = [(d.code, d.span.line, d.message) for d in check(*checks)]
    assert found == [
        ("E037", 5, "text longer than 10000 characters"),
        ("E037", 5, "text longer than 10000 characters"),
        ("E019", 6, "numbers are limited to 1e+15"),
        ("E019", 6, "numbers are limited to 1e+15"),
        ("E037", 7, "a list has at most 10000 items"),
        ("E037", 7, "a list has at most 10000 items"),
    ]


def test_w005_only_where_a_divisor_is_no_literal_number() -> None:
    """The divisor check skips expressions whose every divisor is a literal number (issue 26):
    what it still finds, in a rule's statements, nested calls and after an `and`, and what it
    never warns about (a literal divisor, negative or not)."""
    source = (
        'template "T"\n'
        "    type: car\n"
        "input km\n"
        "    type: numeric\n"
        "    minimum: 0\n"
        "variable ratio: numeric = 0\n"
        "on input set km\n"
        "    set ratio to ratio + mod(inputs.km, 3) / -4 + 1 / inputs.km\n"
        "    set ratio to mod(ratio, abs(inputs.km))\n"
        "verdict\n"
        '    disapprove "x" when ratio / 2 > 1 and 1 / (ratio - 1) > 0\n'
    )
    found = [(d.code, d.span.line, d.span.column) for d in check_source(source)]
    assert [f for f in found if f[0] == "W005"] == [
        ("W005", 8, 55),
        ("W005", 9, 29),
        ("W005", 11, 48),
    ]


def test_the_parser_tells_the_checker_whether_a_module_may_divide_by_a_non_literal() -> None:
    """`ast.Module.divides` lets the W005 walk skip a module whose divisors are all literal
    numbers; a module built by hand may divide (it is walked), and so may one the parser read
    declaration by declaration after a syntax error."""
    literal = 'template "T"\n    type: car\nlet a = 1 / 2 + mod(3, -4)\n'
    assert not parse(literal).divides
    assert parse(literal + "let b = mod(3, a)\n").divides
    assert parse(literal + "let b = a / (1 + 1)\n").divides
    assert ast.Module(()).divides
    broken = (
        'template "T"\n    type: car\ninput km\n    type: numeric\n'
        "let b = 1 / inputs.km\nlet c = )\n"
    )
    module, diagnostics = parse_with_diagnostics(broken)
    assert diagnostics and module is not None and module.divides
    assert [d.code for d in check_source(broken) if d.code == "W005"] == ["W005"]
