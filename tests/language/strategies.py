"""Hypothesis strategies that build `.insp` ASTs of every kind (other test modules import them).

Every tree they build can be written by the formatter and read back unchanged, so
`parse(format_module(tree)) == tree` must hold: names are never keywords, numbers are never
negative (a minus is a Unary), an `else if` is always alone in its `otherwise`, comments start
with `#` and have no trailing spaces.
"""

from __future__ import annotations

import string
from dataclasses import replace

from hypothesis import strategies as st

from inspectlang import ast

#: Words the grammar treats as keywords somewhere; generated names avoid all of them.
KEYWORDS = frozenset(
    (
        *("template", "settings", "variable", "product", "consumer", "image", "input"),
        *("feature", "on", "off", "check", "verdict", "option", "validate", "require"),
        *("disapprove", "approve", "otherwise", "when", "set", "to", "if", "else", "of"),
        *("where", "or", "and", "not", "in", "true", "false"),
    )
)
QUANTIFIER_KINDS = ("count", "any", "all", "sum")
EVENTS = (
    "inspection created",
    "inspection started",
    "input set",
    "image uploaded",
    "image processed",
    "validation passed",
    "validation failed",
    "damage declared",
    "finish",
)
UNITS = ("hours", "days", "minutes", "meters", "km", "MB", "KB")
BINARY_OPERATORS = ("or", "and", "=", "!=", "<", "<=", ">", ">=", "in", "+", "-", "*", "/")

names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda word: word not in KEYWORDS and word not in QUANTIFIER_KINDS
)
locales = st.sampled_from(("en_US", "es_AR", "pt_BR", "fr_FR"))

_TEXT_ALPHABET = st.characters(
    blacklist_categories=["Cs"], blacklist_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
)
texts = st.text(alphabet=_TEXT_ALPHABET, max_size=20)
_COMMENT_ALPHABET = string.ascii_letters + string.digits + " #:\"'\\.,()-_áñ€"
comments = st.text(alphabet=_COMMENT_ALPHABET, max_size=30).map(lambda body: ("# " + body).rstrip())
comment_lists = st.lists(comments, max_size=2).map(tuple)
trailing_comments = st.none() | comments

integers = st.integers(min_value=0, max_value=10**12)
floats = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)
numbers = integers | floats

literals = st.one_of(
    numbers.map(ast.Literal), texts.map(ast.Literal), st.booleans().map(ast.Literal)
)
leaf_expressions = st.one_of(literals, names.map(ast.Name))


def _compound(children: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    quantifier_with_condition = st.builds(
        ast.Quantifier,
        kind=st.sampled_from(("count", "any", "all", "filter")),
        variable=names,
        collection=children,
        condition=children,
    )
    quantifier_sum = st.builds(
        ast.Quantifier,
        kind=st.sampled_from(("sum", "map")),
        variable=names,
        collection=children,
        value=children,
    )
    plain_count = st.builds(
        ast.Quantifier, kind=st.just("count"), variable=st.none(), collection=children
    )
    return st.one_of(
        st.builds(ast.Binary, st.sampled_from(BINARY_OPERATORS), children, children),
        st.builds(ast.Unary, st.sampled_from(("not", "-")), children),
        st.builds(ast.Attribute, children, names),
        st.builds(ast.Call, names, st.lists(children, max_size=3).map(tuple)),
        st.builds(ast.ListExpr, st.lists(children, max_size=3).map(tuple)),
        quantifier_with_condition,
        quantifier_sum,
        plain_count,
        st.builds(ast.Conditional, children, children, children),
    )


expressions: st.SearchStrategy[ast.Expr] = st.recursive(leaf_expressions, _compound, max_leaves=8)

quantities = st.builds(ast.Quantity, numbers, st.sampled_from(UNITS))
sizes = st.builds(ast.Size, integers, integers)
property_values = st.one_of(expressions, quantities, sizes)

property_keys = st.lists(names, min_size=1, max_size=3).map(" ".join).filter(
    lambda key: not key.startswith("option ")
) | st.sampled_from(("type", "label", "max attempts", "valid when", "asked at", "for image"))


def _commented(strategy: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """Add own-line and trailing comments to a node that can carry them."""
    return st.tuples(strategy, comment_lists, trailing_comments).map(
        lambda parts: _with_comments(*parts)
    )


def _with_comments(node: object, before: tuple[str, ...], trailing: str | None) -> object:
    return replace(node, comments=before, trailing_comment=trailing)  # type: ignore[type-var]


modifiers = st.builds(
    ast.Modifier,
    st.sampled_from(
        ("required", "optional", "not run", "minimum confidence", "within", "minimum size")
    )
    | st.lists(names, min_size=1, max_size=2).map(" ".join),
    st.none() | numbers | quantities | sizes,
)

#: `reason LOCALE: "TEXT"` lines under a verdict line (issue 25).
reason_translations = st.lists(
    _commented(
        st.builds(
            ast.Property, st.just("reason"), st.tuples(st.builds(ast.Literal, texts)), locales
        )
    ),
    max_size=2,
).map(tuple)

items = st.one_of(
    _commented(
        st.builds(
            ast.Property,
            property_keys,
            st.lists(property_values, min_size=1, max_size=3).map(tuple),
            st.none() | locales,
        )
    ),
    _commented(st.builds(ast.Flag, st.lists(names, min_size=1, max_size=3).map(" ".join))),
    _commented(st.builds(ast.Option, names, texts, st.none() | locales)),
    _commented(st.builds(ast.Validate, names, st.lists(modifiers, max_size=3).map(tuple))),
    _commented(st.builds(ast.FeatureUse, names)),
    _commented(st.builds(ast.Require, st.lists(names, min_size=1, max_size=3).map(tuple))),
    _commented(st.builds(ast.Disapprove, texts, expressions, translations=reason_translations)),
    _commented(st.builds(ast.Review, texts, expressions, translations=reason_translations)),
    _commented(st.builds(ast.Approve, expressions)),
    _commented(st.builds(ast.Otherwise, texts, translations=reason_translations)),
)
item_lists = st.lists(items, max_size=4).map(tuple)

set_statements = _commented(st.builds(ast.SetStatement, names, expressions))


def _if_statements(
    statements: st.SearchStrategy[ast.Statement],
) -> st.SearchStrategy[ast.Statement]:
    bodies = st.lists(statements, min_size=1, max_size=3).map(tuple)
    else_if = st.builds(
        ast.IfStatement,
        expressions,
        bodies,
        st.just(()) | bodies,
        st.just(True),
        comments=comment_lists,
        trailing_comment=trailing_comments,
    ).map(lambda node: (node,))
    return st.builds(
        ast.IfStatement,
        expressions,
        bodies,
        st.just(()) | bodies | else_if,
        comments=comment_lists,
        trailing_comment=trailing_comments,
    )


statements: st.SearchStrategy[ast.Statement] = st.recursive(
    set_statements,  # type: ignore[arg-type]
    _if_statements,
    max_leaves=6,
)

event_specs = st.builds(
    ast.EventSpec, st.sampled_from(EVENTS), st.none() | names, st.none() | names
)

declarations = st.one_of(
    _commented(st.builds(ast.IncludeDecl, texts)),
    _commented(st.builds(ast.TemplateDecl, texts, item_lists)),
    _commented(st.builds(ast.SettingsDecl, item_lists)),
    _commented(
        st.builds(ast.VariableDecl, names, st.sampled_from(("numeric", "text")), expressions)
    ),
    _commented(st.builds(ast.ProductDecl, item_lists)),
    _commented(st.builds(ast.ConsumerDecl, item_lists)),
    _commented(st.builds(ast.ImageDecl, names, item_lists)),
    _commented(st.builds(ast.InputDecl, names, item_lists)),
    _commented(st.builds(ast.FeatureDecl, names, st.booleans())),
    _commented(st.builds(ast.RuleDecl, event_specs, st.lists(statements, max_size=3).map(tuple))),
    _commented(st.builds(ast.CheckDecl, names, item_lists)),
    _commented(st.builds(ast.VerdictDecl, item_lists)),
)

modules = st.builds(ast.Module, st.lists(declarations, max_size=5).map(tuple), comment_lists)


@st.composite
def mutated(draw: st.DrawFn, texts: list[str], alphabet: st.SearchStrategy[str]) -> str:
    """One of `texts` with a few characters or lines deleted, inserted or repeated (the
    inserted characters drawn from `alphabet`): the slips of an author typing."""
    lines = draw(st.sampled_from(texts)).splitlines(keepends=True) or [""]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("delete", "insert", "duplicate", "drop line", "copy line")))
        index = draw(st.integers(0, len(lines) - 1))
        line = lines[index]
        column = draw(st.integers(0, len(line)))
        if kind == "delete":
            lines[index] = line[:column] + line[column + 1 :]
        elif kind == "insert":
            lines[index] = line[:column] + draw(alphabet) + line[column:]
        elif kind == "duplicate":
            lines[index] = line[:column] + line[column : column + 3] * 2 + line[column + 3 :]
        elif kind == "drop line" and len(lines) > 1:
            del lines[index]
        else:
            lines.insert(draw(st.integers(0, len(lines))), line)
    return "".join(lines)
