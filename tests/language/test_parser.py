"""Unit tests of the parser: every construct of docs/design/syntax.md, spans, comments, and every
syntax diagnostic code with its position."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from inspectlang import ast
from inspectlang.ast import (
    Approve,
    Attribute,
    Binary,
    Call,
    CheckDecl,
    ConsumerDecl,
    Disapprove,
    EventSpec,
    FeatureDecl,
    FeatureUse,
    Flag,
    IfStatement,
    ImageDecl,
    InputDecl,
    ListExpr,
    Literal,
    Modifier,
    Module,
    Name,
    Option,
    Otherwise,
    ProductDecl,
    Property,
    Quantifier,
    Quantity,
    Require,
    RuleDecl,
    SetStatement,
    SettingsDecl,
    Size,
    Span,
    TemplateDecl,
    Unary,
    Validate,
    VariableDecl,
    VerdictDecl,
)
from inspectlang.diagnostics import Diagnostic, TemplateError
from inspectlang.parser import MAX_NESTING, MAX_SOURCE_BYTES, parse, parse_with_diagnostics

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "docs" / "design" / "syntax.md").read_text(encoding="utf-8")
EXAMPLE = EXAMPLE.split("```\n", 2)[1].split("```")[0]


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def expr(text: str) -> ast.Expr:
    """The expression of a `valid when:` property."""
    module = parse(f"check c\n    valid when: {text}\n")
    check = module.declarations[0]
    assert isinstance(check, CheckDecl)
    item = check.items[0]
    assert isinstance(item, Property)
    value = item.values[0]
    assert not isinstance(value, Quantity | Size)
    return value


def items_of(text: str) -> tuple[ast.Item, ...]:
    declaration = parse(text).declarations[0]
    assert not isinstance(declaration, VariableDecl | FeatureDecl | RuleDecl)
    return declaration.items


def only_diagnostic(text: str) -> Diagnostic:
    _module, diagnostics = parse_with_diagnostics(text, "t.insp")
    assert len(diagnostics) == 1, diagnostics
    return diagnostics[0]


def where(diagnostic: Diagnostic) -> tuple[str, int, int]:
    return diagnostic.code, diagnostic.span.line, diagnostic.span.column


# --------------------------------------------------------------------------------------------
# The full example
# --------------------------------------------------------------------------------------------

EXPECTED_EXAMPLE = Module(
    (
        TemplateDecl(
            "Motor insurance",
            (
                Property("type", (Name("car"),)),
                Property(
                    "id",
                    (Literal("65a1f0c2b3d4e5f601234567"),),
                    trailing_comment="# optional: derived from the name when omitted",
                ),
                Property(
                    "locales",
                    (Name("en_US"), Name("es_AR")),
                    trailing_comment="# the first one is the default",
                ),
            ),
            comments=("# Motor insurance: photos of the car, mileage and a damage score.",),
        ),
        SettingsDecl(
            (
                Property("max attempts", (Literal(3),)),
                Property("link expires after", (Quantity(48, "hours"),)),
                Property("inspection expires after", (Quantity(7, "days"),)),
                Property("minimum confidence", (Literal(80),)),
                Property("photo age limit", (Quantity(24, "hours"),)),
                Property("photo distance limit", (Quantity(500, "meters"),)),
                Property("minimum photo size", (Size(800, 600),)),
            )
        ),
        VariableDecl("score", "numeric", Literal(100)),
        VariableDecl("risk", "text", Literal("low")),
        ProductDecl((Require(("plate", "year")),)),
        ConsumerDecl((Require(("email",)),)),
        ImageDecl(
            "front",
            (
                Property(
                    "side",
                    (Literal("front"),),
                    trailing_comment="# optional: defaults to the image name",
                ),
                Property(
                    "id",
                    (Literal("image_1b4e28ba-2fa1-41d2-883f-0016d3cca427"),),
                    trailing_comment="# optional: derived when omitted",
                ),
                Property("label", (Literal("Front of the car"),)),
                Property("label", (Literal("Frente del auto"),), "es_AR"),
                Validate("plate", (Modifier("required"), Modifier("minimum confidence", 85))),
                Validate("color"),
                Validate("damage", (Modifier("optional"),)),
                Validate("recaptured", (Modifier("not run"),)),
                Validate("complete"),
                FeatureUse("damage_declaration"),
            ),
        ),
        InputDecl(
            "mileage",
            (
                Property("type", (Name("numeric"),)),
                Property("label", (Literal("Mileage"),)),
                Property("label", (Literal("Kilometraje"),), "es_AR"),
                Property("help", (Literal("As shown on the dashboard"),)),
                Property("help", (Literal("Como figura en el tablero"),), "es_AR"),
                Property("asked at", (Name("create"), Name("update"))),
                Flag("required"),
                Property("minimum", (Literal(0),)),
                Property("maximum", (Literal(500000),)),
                Flag("whole number"),
            ),
        ),
        InputDecl(
            "use",
            (
                Property("type", (Name("select"),)),
                Property("label", (Literal("Use"),)),
                Option("private", "Private"),
                Option("private", "Particular", "es_AR"),
                Option("commercial", "Commercial"),
            ),
        ),
        InputDecl(
            "plate_photo_note",
            (
                Property("type", (Name("text"),)),
                Property("for image", (Name("front"),), trailing_comment="# a per-image input"),
                Property("label", (Literal("Anything unusual about the plate?"),)),
                Property("asked at", (Name("update"),)),
                Property("maximum length", (Literal(200),)),
            ),
        ),
        FeatureDecl("damage_declaration", True),
        FeatureDecl("video_call", False),
        RuleDecl(EventSpec("inspection created"), (SetStatement("risk", Literal("low")),)),
        RuleDecl(
            EventSpec("damage declared"),
            (
                IfStatement(
                    Binary("=", Attribute(Name("damage"), "severity"), Literal("minor")),
                    (SetStatement("score", Binary("-", Name("score"), Literal(10))),),
                    (
                        IfStatement(
                            Binary("=", Attribute(Name("damage"), "severity"), Literal("severe")),
                            (SetStatement("score", Binary("-", Name("score"), Literal(40))),),
                            (SetStatement("score", Binary("-", Name("score"), Literal(20))),),
                            is_else_if=True,
                        ),
                    ),
                ),
            ),
        ),
        RuleDecl(
            EventSpec("validation failed", "plate", "front"),
            (SetStatement("risk", Literal("high")),),
        ),
        CheckDecl(
            "plate_matches",
            (
                Property("name", (Literal("Plate matches"),)),
                Property(
                    "description",
                    (Literal("The declared plate matches the plate read from the front photo"),),
                ),
                Property(
                    "valid when",
                    (
                        Binary(
                            "=",
                            Call("lower", (Attribute(Name("car"), "plate"),)),
                            Call(
                                "lower",
                                (
                                    Attribute(
                                        Attribute(Attribute(Name("images"), "front"), "plate"),
                                        "result",
                                    ),
                                ),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        VerdictDecl(
            (
                Disapprove(
                    "The plate does not match the declared one",
                    Unary("not", Attribute(Name("checks"), "plate_matches")),
                ),
                Disapprove("Too much damage", Binary("<", Name("score"), Literal(60))),
                Approve(Quantifier("all", "i", Name("images"), Attribute(Name("i"), "approved"))),
                Otherwise("Some photos were not approved"),
            )
        ),
    )
)


def test_the_full_example_of_syntax_md_parses_to_the_expected_tree() -> None:
    module = parse(EXAMPLE, "example.insp")
    assert module == EXPECTED_EXAMPLE
    assert module.filename == "example.insp"


def test_parse_with_diagnostics_of_a_good_file_has_no_diagnostics() -> None:
    module, diagnostics = parse_with_diagnostics(EXAMPLE)
    assert diagnostics == []
    assert module == EXPECTED_EXAMPLE


def test_windows_line_endings_and_a_missing_final_newline_parse_the_same() -> None:
    assert parse(EXAMPLE.replace("\n", "\r\n").rstrip()) == EXPECTED_EXAMPLE


def test_a_byte_order_mark_is_ignored() -> None:
    assert parse("\ufeff" + EXAMPLE) == EXPECTED_EXAMPLE


def test_blank_lines_with_spaces_and_comments_at_any_indentation_do_not_open_blocks() -> None:
    text = (
        "image front\n"
        "    validate plate\n"
        "        \n"
        "# a comment at column 1 inside the body\n"
        "            # and one far to the right\n"
        "    validate color\n"
        "  \n"
        "verdict\n"
        "    approve when true\n"
        "        "
    )
    module = parse(text)
    assert module == Module(
        (
            ImageDecl(
                "front",
                (
                    Validate("plate"),
                    Validate(
                        "color",
                        comments=(
                            "# a comment at column 1 inside the body",
                            "# and one far to the right",
                        ),
                    ),
                ),
            ),
            VerdictDecl((Approve(Literal(True)),)),
        )
    )


def test_an_empty_file_is_an_empty_module() -> None:
    assert parse("") == Module(())
    assert parse("# only a comment\n\n") == Module((), ("# only a comment",))


# --------------------------------------------------------------------------------------------
# Spans
# --------------------------------------------------------------------------------------------


def test_spans_are_one_based_with_an_exclusive_end() -> None:
    module = parse(
        src("""
        image front
            label es_AR: "Frente"
            validate plate, within 24 hours
        """)
    )
    image = module.declarations[0]
    assert isinstance(image, ImageDecl)
    assert image.span == Span(1, 1, 3, 36)
    assert image.name_span == Span(1, 7, 1, 12)
    label, validate = image.items
    assert isinstance(label, Property) and isinstance(validate, Validate)
    assert label.span == Span(2, 5, 2, 26)
    assert label.key_span == Span(2, 5, 2, 16)
    assert label.values[0].span == Span(2, 18, 2, 26)
    assert validate.name_span == Span(3, 14, 3, 19)
    assert validate.modifiers[0].span == Span(3, 21, 3, 36)


def test_expression_spans_cover_their_operands() -> None:
    value = expr("lower(car.plate) = x")
    assert isinstance(value, Binary)
    assert value.span == Span(2, 17, 2, 37)
    assert isinstance(value.left, Call)
    assert value.left.span == Span(2, 17, 2, 33)
    assert value.left.function_span == Span(2, 17, 2, 22)
    plate = value.left.arguments[0]
    assert isinstance(plate, Attribute)
    assert plate.name_span == Span(2, 27, 2, 32)


def test_rule_and_require_spans() -> None:
    module = parse(
        src("""
        product
            require plate, year

        on validation failed plate of front
            set risk to "high"
        """)
    )
    product, rule = module.declarations
    assert isinstance(product, ProductDecl) and isinstance(rule, RuleDecl)
    require = product.items[0]
    assert isinstance(require, Require)
    assert require.field_spans == (Span(2, 13, 2, 18), Span(2, 20, 2, 24))
    assert rule.event.span == Span(4, 4, 4, 36)
    assert rule.event.target_span == Span(4, 22, 4, 27)
    assert rule.event.of_image_span == Span(4, 31, 4, 36)
    statement = rule.body[0]
    assert isinstance(statement, SetStatement)
    assert statement.name_span == Span(5, 9, 5, 13)


# --------------------------------------------------------------------------------------------
# Items
# --------------------------------------------------------------------------------------------


def test_property_values_lists_quantities_and_sizes() -> None:
    assert items_of(
        src("""
        settings
            accepts: "image/jpeg", "application/pdf"
            maximum size: 5 MB
            photo age limit: 1.5 hours
            minimum photo size: 800x600
            earliest: date("2020-01-01")
            asked at: create
        """)
    ) == (
        Property("accepts", (Literal("image/jpeg"), Literal("application/pdf"))),
        Property("maximum size", (Quantity(5, "MB"),)),
        Property("photo age limit", (Quantity(1.5, "hours"),)),
        Property("minimum photo size", (Size(800, 600),)),
        Property("earliest", (Call("date", (Literal("2020-01-01"),)),)),
        Property("asked at", (Name("create"),)),
    )


def test_multi_word_keys_are_exact_and_locales_are_split_off() -> None:
    assert items_of(
        src("""
        input x
            maximum   length: 3
            label pt_BR: "Rótulo"
            help en_US: "Help"
            option private es_AR: "Particular"
        """)
    ) == (
        Property("maximum length", (Literal(3),)),
        Property("label", (Literal("Rótulo"),), "pt_BR"),
        Property("help", (Literal("Help"),), "en_US"),
        Option("private", "Particular", "es_AR"),
    )


def test_flags_and_keywords_as_plain_words() -> None:
    assert items_of(
        src("""
        input x
            required
            whole number
            email
            type: set
        """)
    ) == (
        Flag("required"),
        Flag("whole number"),
        Flag("email"),
        Property("type", (Name("set"),)),
    )


def test_every_validate_modifier() -> None:
    items = items_of(
        src("""
        image front
            validate date, required, within 24 hours
            validate distance, optional, within 500 meters
            validate recaptured, not run, minimum confidence 90
            validate complete, minimum size 1024 x 768
        """)
    )
    assert items == (
        Validate("date", (Modifier("required"), Modifier("within", Quantity(24, "hours")))),
        Validate("distance", (Modifier("optional"), Modifier("within", Quantity(500, "meters")))),
        Validate("recaptured", (Modifier("not run"), Modifier("minimum confidence", 90))),
        Validate("complete", (Modifier("minimum size", Size(1024, 768)),)),
    )


def test_empty_bodies_are_allowed_for_item_declarations() -> None:
    module = parse('template "T"\nsettings\nverdict\ncheck c\n')
    assert module == Module((TemplateDecl("T"), SettingsDecl(), VerdictDecl(), CheckDecl("c")))


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("inspection created", EventSpec("inspection created")),
        ("inspection started", EventSpec("inspection started")),
        ("input set", EventSpec("input set")),
        ("input set mileage", EventSpec("input set", "mileage")),
        ("image uploaded", EventSpec("image uploaded")),
        ("image uploaded front", EventSpec("image uploaded", "front")),
        ("image processed back", EventSpec("image processed", "back")),
        ("validation passed", EventSpec("validation passed")),
        ("validation passed plate", EventSpec("validation passed", "plate")),
        ("validation failed of front", EventSpec("validation failed", None, "front")),
        ("validation failed plate of front", EventSpec("validation failed", "plate", "front")),
        ("damage declared", EventSpec("damage declared")),
        ("finish", EventSpec("finish")),
        ("something odd", EventSpec("something odd")),
    ],
)
def test_every_event(header: str, expected: EventSpec) -> None:
    rule = parse(f"on {header}\n    set a to 1\n").declarations[0]
    assert isinstance(rule, RuleDecl)
    assert rule.event == expected


def test_nested_if_else_if_else() -> None:
    rule = parse(
        src("""
        on finish
            if a
                if b
                    set x to 1
                else
                    set x to 2
            else if c
                set x to 3
            else if d
                set x to 4
            set y to 5
        """)
    ).declarations[0]
    assert isinstance(rule, RuleDecl)
    one, two, three, four, five = (Literal(n) for n in range(1, 6))
    assert rule.body == (
        IfStatement(
            Name("a"),
            (IfStatement(Name("b"), (SetStatement("x", one),), (SetStatement("x", two),)),),
            (
                IfStatement(
                    Name("c"),
                    (SetStatement("x", three),),
                    (IfStatement(Name("d"), (SetStatement("x", four),), is_else_if=True),),
                    is_else_if=True,
                ),
            ),
        ),
        SetStatement("y", five),
    )


def test_a_rule_without_statements_is_allowed() -> None:
    assert parse("on finish\n") == Module((RuleDecl(EventSpec("finish"), ()),))


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------

a, b, c = Name("a"), Name("b"), Name("c")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a or b and c", Binary("or", a, Binary("and", b, c))),
        ("(a or b) and c", Binary("and", Binary("or", a, b), c)),
        ("not a and b", Binary("and", Unary("not", a), b)),
        ("not a = b", Unary("not", Binary("=", a, b))),
        ("not not a", Unary("not", Unary("not", a))),
        ("a = b + c", Binary("=", a, Binary("+", b, c))),
        ("a in b", Binary("in", a, b)),
        ("a != b", Binary("!=", a, b)),
        ("a <= b", Binary("<=", a, b)),
        ("a >= b", Binary(">=", a, b)),
        ("a < b < c", Binary("<", Binary("<", a, b), c)),
        ("a - b - c", Binary("-", Binary("-", a, b), c)),
        ("a - (b - c)", Binary("-", a, Binary("-", b, c))),
        ("a + b * c", Binary("+", a, Binary("*", b, c))),
        ("a / b * c", Binary("*", Binary("/", a, b), c)),
        ("-a * b", Binary("*", Unary("-", a), b)),
        ("-a.b", Unary("-", Attribute(a, "b"))),
        ("- -a", Unary("-", Unary("-", a))),
        ("a.b.c", Attribute(Attribute(a, "b"), "c")),
        ("(a + b).c", Attribute(Binary("+", a, b), "c")),
        (
            '[1, 2.5, "x", true, false]',
            ListExpr((Literal(1), Literal(2.5), Literal("x"), Literal(True), Literal(False))),
        ),
        ("[]", ListExpr(())),
        ("f()", Call("f", ())),
        ("min(a, b, 3)", Call("min", (a, b, Literal(3)))),
        ("count(a)", Quantifier("count", None, a)),
        ("count(i in a where i.ok)", Quantifier("count", "i", a, Attribute(Name("i"), "ok"))),
        (
            "any(i in a.b where i = 1)",
            Quantifier("any", "i", Attribute(a, "b"), Binary("=", Name("i"), Literal(1))),
        ),
        ("all(i in a where not i)", Quantifier("all", "i", a, Unary("not", Name("i")))),
        (
            "sum(d in damages of d.percentage)",
            Quantifier("sum", "d", Name("damages"), value=Attribute(Name("d"), "percentage")),
        ),
        ("(\n  a\n  or b)", Binary("or", a, b)),
    ],
)
def test_expression_precedence_and_forms(text: str, expected: ast.Expr) -> None:
    assert expr(text) == expected


@pytest.mark.parametrize(
    ("written", "value"),
    [
        (r'"plain"', "plain"),
        (r'"say \"hi\""', 'say "hi"'),
        (r'"back\\slash"', "back\\slash"),
        (r'"two\nlines"', "two\nlines"),
        (r'"^\d{3}$"', "^\\d{3}$"),
        (r'"# not a comment"', "# not a comment"),
        (r'""', ""),
    ],
)
def test_text_escapes(written: str, value: str) -> None:
    assert expr(written) == Literal(value)


def test_numbers_keep_their_kind() -> None:
    assert expr("100") == Literal(100)
    assert isinstance(expr("100").value, int)  # type: ignore[union-attr]
    assert expr("2.50") == Literal(2.5)
    assert isinstance(expr("2.0").value, float)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a andy", "unexpected `andy`"),
        ("a order", "unexpected `order`"),
        ("a inside", "unexpected `inside`"),
    ],
)
def test_regression_a_keyword_is_never_the_prefix_of_a_longer_word(
    text: str, expected: str
) -> None:
    diagnostic = only_diagnostic(f"check c\n    valid when: {text}\n")
    assert diagnostic.code == "E001"
    assert diagnostic.message.startswith(expected)


def test_words_that_start_with_a_keyword_are_names() -> None:
    assert expr("notable and truex or orange") == Binary(
        "or", Binary("and", Name("notable"), Name("truex")), Name("orange")
    )
    rule = parse("on finish\n    set settle to iffy\n").declarations[0]
    assert isinstance(rule, RuleDecl)
    assert rule.body == (SetStatement("settle", Name("iffy")),)


def test_keywords_are_plain_names_where_no_keyword_fits() -> None:
    assert expr("images.image") == Attribute(Name("images"), "image")


# --------------------------------------------------------------------------------------------
# Comments
# --------------------------------------------------------------------------------------------


def test_comments_attach_to_the_next_node_or_end_the_line() -> None:
    module = parse(
        src("""
        # header 1

        # header 2
        image front  # the front
            # before label
            label: "x"  # after label
        # before rule
        on finish
            # before if
            if a  # after if
                set x to 1
            # before else
            else  # on else
                # first in else
                set x to 2
            # before else if? no: a statement
            set y to 3

        # the end
        #   of the file
        """)
    )
    image, rule = module.declarations
    assert image == ImageDecl(
        "front",
        (
            Property(
                "label",
                (Literal("x"),),
                comments=("# before label",),
                trailing_comment="# after label",
            ),
        ),
        comments=("# header 1", "# header 2"),
        trailing_comment="# the front",
    )
    assert rule == RuleDecl(
        EventSpec("finish"),
        (
            IfStatement(
                a,
                (SetStatement("x", Literal(1)),),
                (
                    SetStatement(
                        "x", Literal(2), comments=("# before else", "# on else", "# first in else")
                    ),
                ),
                comments=("# before if",),
                trailing_comment="# after if",
            ),
            SetStatement("y", Literal(3), comments=("# before else if? no: a statement",)),
        ),
        comments=("# before rule",),
    )
    assert module.final_comments == ("# the end", "#   of the file")


def test_comments_before_else_if_attach_to_it() -> None:
    rule = parse(
        src("""
        on finish
            if a
                set x to 1
            # second chance
            else if b  # b case
                set x to 2
        """)
    ).declarations[0]
    assert isinstance(rule, RuleDecl)
    first = rule.body[0]
    assert isinstance(first, IfStatement)
    assert first.otherwise == (
        IfStatement(
            b,
            (SetStatement("x", Literal(2)),),
            is_else_if=True,
            comments=("# second chance",),
            trailing_comment="# b case",
        ),
    )


def test_a_comment_inside_a_multi_line_expression_is_kept() -> None:
    check = parse(
        src("""
        check c
            valid when: (a  # first
                or b)  # second
        """)
    ).declarations[0]
    assert isinstance(check, CheckDecl)
    assert check.items[0].trailing_comment == "# first # second"


# --------------------------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------------------------


def test_e001_unexpected_token_says_what_was_expected() -> None:
    diagnostic = only_diagnostic("image front\n    validate plate,, required\n")
    assert where(diagnostic) == ("E001", 2, 20)
    assert diagnostic.message == "unexpected `,`; expected one of: `not`, a name"
    assert diagnostic.filename == "t.insp"


def test_e001_at_the_end_of_a_line_names_the_expected_tokens() -> None:
    diagnostic = only_diagnostic("check c\n    valid when: a =\n")
    assert where(diagnostic) == ("E001", 2, 20)
    assert diagnostic.message.startswith("unexpected end of line; expected one of: `(`, `-`")
    assert "a name" in diagnostic.message and "a number" in diagnostic.message


def test_e001_unexpected_character() -> None:
    diagnostic = only_diagnostic("check c\n    valid when: a @ b\n")
    assert where(diagnostic) == ("E001", 2, 19)
    assert diagnostic.message == "unexpected character `@`"
    assert (diagnostic.span.end_line, diagnostic.span.end_column) == (2, 20)


def test_e001_unknown_declaration_keyword_suggests_the_closest_one() -> None:
    diagnostic = only_diagnostic('templat "x"\n')
    assert where(diagnostic) == ("E001", 1, 1)
    assert "`template`" in diagnostic.message and "`verdict`" in diagnostic.message
    assert diagnostic.suggestion == "template"
    settle = only_diagnostic("on finish\n    sett x to 1\n")
    assert where(settle) == ("E001", 2, 5)
    # The statement keywords the grammar accepts there, whichever they are (`if`, `set`...).
    assert settle.message.startswith("unexpected `sett`; expected one of: `")
    assert "`if`" in settle.message and "`set`" in settle.message
    assert settle.suggestion == "set"
    assert only_diagnostic("zzz\n").suggestion is None


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("sum(i in a where i)", 28, "write `sum(x in LIST of ...)` with one name before `in`"),
        ("any(i in a of i)", 28, "write `any(x in LIST where ...)` with one name before `in`"),
        ("all(1 in a where i)", 28, "write `all(x in LIST where ...)` with one name before `in`"),
        (
            "count(i in a where i, 2)",
            30,
            "write `count(x in LIST where ...)` with one name before `in`",
        ),
        (
            "lower(i in a where i)",
            30,
            "`where` is only used in count, any, all, filter (where), sum and map (of)",
        ),
    ],
)
def test_e001_badly_shaped_quantifiers(text: str, column: int, message: str) -> None:
    diagnostic = only_diagnostic(f"check c\n    valid when: {text}\n")
    assert where(diagnostic) == ("E001", 2, column)
    assert diagnostic.message == message


def test_e001_an_event_takes_one_target() -> None:
    diagnostic = only_diagnostic("on input set a b\n    set x to 1\n")
    assert where(diagnostic) == ("E001", 1, 16)
    assert diagnostic.message == "`on input set` takes at most one name after it"


@pytest.mark.parametrize(
    ("text", "position", "note"),
    [
        ("settings\n    max attempts 3\n", (2, 18), "a property needs `:` between its name"),
        ("image front:\n    validate plate\n", (1, 12), "no `:` after a block header"),
        ("on finish\n    if a:\n        set x to 1\n", (2, 9), "no `:` after a block header"),
        ("check c\n    valid when: a == b\n", (2, 20), "`=` already compares: there is no `==`"),
        ("check c\n    valid when: a && b\n", (2, 19), "write `and` instead of `&&`"),
        ("check c\n    valid when: a || b\n", (2, 19), "write `or` instead of `||`"),
        ("check c\n    valid when: a = 'x'\n", (2, 21), "texts are written in double quotes"),
    ],
)
def test_e001_hints_for_common_mistakes(text: str, position: tuple[int, int], note: str) -> None:
    diagnostic = only_diagnostic(text)
    assert where(diagnostic) == ("E001", *position)
    assert len(diagnostic.notes) == 1
    assert diagnostic.notes[0].startswith(note)


def test_no_hint_where_none_applies() -> None:
    assert only_diagnostic("check c\n    valid when: a = = b\n").notes == ()


def test_e002_tabs() -> None:
    diagnostic = only_diagnostic("image front\n\tvalidate plate\n")
    assert where(diagnostic) == ("E002", 2, 1)
    assert "tabs" in diagnostic.message


def test_e002_dedent_to_no_open_level() -> None:
    diagnostic = only_diagnostic("on finish\n    if a\n        set x to 1\n  set y to 2\n")
    assert where(diagnostic) == ("E002", 4, 1)
    assert "indented by 2 spaces" in diagnostic.message


def test_e002_unexpected_indentation() -> None:
    diagnostic = only_diagnostic('image front\n    validate plate\n        label: "x"\n')
    assert where(diagnostic) == ("E002", 3, 1)
    assert diagnostic.message == "unexpected indentation"


def test_e002_missing_block() -> None:
    diagnostic = only_diagnostic("on finish\n    if a\n    set y to 2\n")
    assert where(diagnostic) == ("E002", 3, 5)
    assert diagnostic.message == "expected an indented block (indent it by 4 spaces)"


def test_e002_a_file_that_starts_indented() -> None:
    module, diagnostics = parse_with_diagnostics('    type: car\ntemplate "x"\n')
    assert [where(d) for d in diagnostics] == [("E002", 1, 1)]
    assert module == Module((TemplateDecl("x"),))


def test_e003_unterminated_text() -> None:
    diagnostic = only_diagnostic('template "Motor\n    type: car\n')
    assert where(diagnostic) == ("E003", 1, 10)
    assert diagnostic.span.end_column == 16
    assert "unterminated text" in diagnostic.message


def test_regression_long_lines_that_are_no_key_or_an_unclosed_text_still_get_diagnostics() -> None:
    # These once backtracked for seconds; the possessive repeats of KEY and TEXT read them once.
    unclosed = only_diagnostic('image a\n    label: "' + "x" * 200_000 + "\n")
    assert where(unclosed) == ("E003", 2, 12)
    flag = parse("image a\n    " + "word " * 2_000 + "\n").declarations[0]
    assert isinstance(flag, ImageDecl)
    assert flag.items == (Flag(" ".join(["word"] * 2_000)),)


@pytest.mark.parametrize(
    "deep",
    [
        "(" * 500 + "a" + ")" * 500,
        "[" * 500 + "]" * 500,
        "not " * 500 + "a",
        "-" * 500 + "a",
        " + ".join(["a"] * 500),
        ".".join(["a"] * 500),
        "f(" * 40 + "-" * 40 + "a" + ")" * 40,
        "not " * 10 + "(" + " + ".join(["a"] * 60) + ")",  # only the tree is too deep
    ],
)
def test_e004_nesting_too_deep_is_refused_without_recursion_error(deep: str) -> None:
    diagnostic = only_diagnostic(f"check c\n    valid when: {deep}\n")
    assert diagnostic.code == "E004"
    assert diagnostic.span.line == 2
    assert diagnostic.message == f"expression nested more than {MAX_NESTING} levels deep"


def test_e004_blocks_nested_too_deep() -> None:
    lines = ["on finish"]
    for level in range(1, 80):
        lines.append("    " * level + "if a")
    lines.append("    " * 80 + "set x to 1")
    diagnostic = only_diagnostic("\n".join(lines) + "\n")
    assert where(diagnostic) == ("E004", MAX_NESTING + 1, 1)
    assert diagnostic.message == f"blocks nested more than {MAX_NESTING} levels deep"


def test_nesting_at_the_limit_is_accepted() -> None:
    depth = MAX_NESTING - 1
    value = expr("(" * depth + "a" + ")" * depth)
    assert value == a
    chain = expr(" + ".join(["a"] * MAX_NESTING))
    assert isinstance(chain, Binary)


def test_e005_file_too_large() -> None:
    big = "# padding\n" * (MAX_SOURCE_BYTES // 10 + 1)
    module, diagnostics = parse_with_diagnostics(big, "big.insp")
    assert module is None
    assert [where(d) for d in diagnostics] == [("E005", 1, 1)]
    assert diagnostics[0].message == (
        f"the template is {len(big)} bytes; the limit is {MAX_SOURCE_BYTES} bytes"
    )


def test_recovery_two_bad_declarations_give_two_diagnostics_and_keep_the_rest() -> None:
    text = src("""
        template "T"
            type: car

        image front
            validate plate,, required

        variable score: numeric = 100

        check broken
            valid when: a = = b

        verdict
            approve when score > 50
        """)
    module, diagnostics = parse_with_diagnostics(text, "t.insp")
    assert [where(d) for d in diagnostics] == [("E001", 5, 20), ("E001", 10, 21)]
    assert module == Module(
        (
            TemplateDecl("T", (Property("type", (Name("car"),)),)),
            VariableDecl("score", "numeric", Literal(100)),
            VerdictDecl((Approve(Binary(">", Name("score"), Literal(50))),)),
        )
    )
    with pytest.raises(TemplateError) as raised:
        parse(text, "t.insp")
    assert [d.code for d in raised.value.diagnostics] == ["E001", "E001"]
    assert raised.value.source == text
    assert "t.insp:5:20: error[E001]" in raised.value.render()


def test_recovery_keeps_real_positions_in_later_declarations() -> None:
    text = 'check a\n    valid when: (\n\ncheck b\n    valid when: "open\n'
    module, diagnostics = parse_with_diagnostics(text)
    assert [where(d) for d in diagnostics] == [("E001", 2, 17), ("E003", 5, 17)]
    assert diagnostics[0].message == "`(` is never closed"
    assert module == Module(())


def test_an_unclosed_bracket_is_reported_where_it_opens_and_later_declarations_parse() -> None:
    text = "check a\n    valid when: f([1, (2)\n\nverdict\n    approve when true\n"
    module, diagnostics = parse_with_diagnostics(text)
    assert [where(d) for d in diagnostics] == [("E001", 2, 19)]
    assert diagnostics[0].message == "`[` is never closed"
    assert module == Module((VerdictDecl((Approve(Literal(True)),)),))


# --------------------------------------------------------------------------------------------
# The parser object
# --------------------------------------------------------------------------------------------


def test_parsing_from_several_threads_gives_the_same_trees() -> None:
    results: list[Module] = []

    def work() -> None:
        for _ in range(5):
            results.append(parse(EXAMPLE))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 20
    assert all(result == EXPECTED_EXAMPLE for result in results)


#: Prints what the parser gives for a file: a clean one, and one with syntax errors (a character
#: no terminal takes, a token the parser does not expect, an unclosed bracket), so the loaded
#: parser is checked on its lexers, the lexer of all terminals and the recovery path.
PARSE_AND_PRINT = (
    "import sys; "
    "from inspectlang.parser import parse_with_diagnostics; "
    "text = open(sys.argv[1]).read(); "
    "print(repr(parse_with_diagnostics(text))); "
    "print(repr(parse_with_diagnostics(text + sys.argv[2])))"
)
BROKEN = "check c\n    valid when: a $ b\n\nlet x = (1 +\n\nvariable v numeric = 1\nlet = 2\n"


def _parse_in_fresh_process(tmp_path: Path) -> str:
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", PARSE_AND_PRINT, str(tmp_path / "t.insp"), BROKEN],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=environment,
    )
    return done.stdout


def test_fresh_processes_write_then_load_the_parser_in_a_private_directory(
    tmp_path: Path,
) -> None:
    from inspectlang.parser_cache import FILE_NAME

    (tmp_path / "t.insp").write_text(EXAMPLE, encoding="utf-8")
    built = _parse_in_fresh_process(tmp_path)
    assert "Module(" in built and "E00" in built
    directory = tmp_path / "cache" / "inspectlang"
    assert directory.stat().st_mode & 0o777 == 0o700
    # Nothing but the parser is kept there, written by the first process only.
    assert sorted(path.name for path in directory.iterdir()) == [FILE_NAME]
    written = (directory / FILE_NAME).stat().st_mtime_ns
    assert _parse_in_fresh_process(tmp_path) == built
    assert (directory / FILE_NAME).stat().st_mtime_ns == written


@pytest.mark.parametrize("damage", ["empty", "another key", "cut short"])
def test_a_parser_file_that_does_not_match_is_replaced(tmp_path: Path, damage: str) -> None:
    from inspectlang.parser_cache import FILE_NAME

    (tmp_path / "t.insp").write_text(EXAMPLE, encoding="utf-8")
    built = _parse_in_fresh_process(tmp_path)
    path = tmp_path / "cache" / "inspectlang" / FILE_NAME
    whole = path.read_bytes()
    key, content = whole.split(b"\n", 1)
    damaged = {
        "empty": b"",
        "another key": b"0" * len(key) + b"\n" + content,
        "cut short": key + b"\n" + content[: len(content) // 2],
    }
    path.write_bytes(damaged[damage])
    assert _parse_in_fresh_process(tmp_path) == built
    rewritten = path.read_bytes()  # written again whole (a pickle's bytes vary with hashing)
    assert rewritten.split(b"\n", 1)[0] == key and len(rewritten) > len(whole) * 0.9
    written = path.stat().st_mtime_ns
    assert _parse_in_fresh_process(tmp_path) == built
    assert path.stat().st_mtime_ns == written  # and loaded, not built, by the next process


def test_parses_in_threads_each_keep_their_own_state() -> None:
    """The parser's callbacks hold no state: each parse has its own (file, comments, line
    offset of the recovery path, nesting depths), so parses in threads run at once, with no
    lock, and never see each other's. Files with a syntax error take the recovery path (one
    declaration at a time, lines shifted) while clean ones parse whole."""
    import concurrent.futures

    def source(index: int) -> str:
        broken = "check broken\n    valid when: (1 +\n\n" if index % 2 else ""
        return (
            f'# file {index}\ntemplate "T{index}"\n    type: car\n\n{broken}'
            f"variable v{index}: numeric = {index}  # v{index}\n"
        )

    def parsed(index: int) -> tuple[int, str, tuple[str, ...], int, list[str]]:
        module, diagnostics = parse_with_diagnostics(source(index), f"f{index}.insp")
        assert module is not None
        variable = module.declarations[-1]
        assert isinstance(variable, ast.VariableDecl)
        return (
            index,
            module.filename,
            (variable.name, variable.trailing_comment or ""),
            variable.span.line,
            [d.filename for d in diagnostics],
        )

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(parsed, range(40)))
    for index, filename, (name, comment), line, diagnostic_files in results:
        assert filename == f"f{index}.insp"
        assert (name, comment) == (f"v{index}", f"# v{index}")
        assert line == (8 if index % 2 else 5)
        assert diagnostic_files == ([f"f{index}.insp"] if index % 2 else [])


def test_a_lone_surrogate_through_the_python_api_is_a_diagnostic() -> None:
    """A Python `str` may hold a lone surrogate no file can; `check_source` and
    `compile_source` answered `UnicodeEncodeError` (from hashing the ids)."""
    from inspectlang.compiler import check_source, compile_source

    source = 'template "T"\n    type: car\n\nverdict\n    approve when "a\ud800" = "b"\n'
    (found,) = check_source(source)
    assert (found.code, found.span.line, found.span.column) == ("E001", 5, 20)
    assert "U+D800" in found.message
    with pytest.raises(TemplateError) as refused:
        compile_source(source)
    assert [d.code for d in refused.value.diagnostics] == ["E001"]
    module, diagnostics = parse_with_diagnostics('template "\udfff"\n')
    assert module is None and [d.code for d in diagnostics] == ["E001"]
