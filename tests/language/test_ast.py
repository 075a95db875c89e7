"""The AST nodes behave as `@dataclass(frozen=True, slots=True)` classes: immutable, compared
by value without their spans, hashable, copied and pickled."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from inspectlang import ast

NODE_CLASSES = sorted(
    (
        cls
        for cls in vars(ast).values()
        if isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == ast.__name__
    ),
    key=lambda cls: cls.__name__,
)

WHERE = ast.Span(3, 5, 3, 9)


def sample() -> ast.Property:
    value = ast.Binary("+", ast.Name("a", span=WHERE), ast.Literal(1.5), span=WHERE)
    return ast.Property(
        "maximum", (value,), "es_AR", span=WHERE, comments=("# why",), trailing_comment="# end"
    )


def test_every_node_class_is_a_slotted_dataclass_with_a_docstring() -> None:
    assert len(NODE_CLASSES) > 30
    for cls in NODE_CLASSES:
        assert cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("), cls
        assert "__dict__" not in dir(cls), cls
        assert cls.__init__.__qualname__ == f"{cls.__name__}.__init__"


def test_signature_keeps_positional_fields_and_keyword_only_spans() -> None:
    parameters = inspect.signature(ast.Property).parameters
    assert list(parameters) == [
        "key",
        "values",
        "locale",
        "span",
        "key_span",
        "comments",
        "trailing_comment",
    ]
    assert parameters["locale"].default is None
    assert parameters["span"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["span"].default == ast.NO_SPAN
    assert ast.Property.__match_args__ == ("key", "values", "locale")
    with pytest.raises(TypeError):
        ast.Property("key", (), None, WHERE)  # type: ignore[misc]


def test_equality_and_hash_ignore_spans_but_not_comments() -> None:
    node = sample()
    moved = dataclasses.replace(node, span=ast.NO_SPAN, key_span=WHERE)
    assert node == moved and hash(node) == hash(moved)
    assert node != dataclasses.replace(node, comments=())
    assert node != dataclasses.replace(node, locale=None)
    assert ast.Name("a") != ast.Literal("a")
    assert ast.Name("a").__eq__(("a",)) is NotImplemented
    assert hash(ast.Name("a")) == hash(("a",))


def test_repr_shows_the_fields_dataclass_would_show() -> None:
    assert repr(ast.Literal(1, span=WHERE)) == "Literal(value=1)"
    assert repr(ast.Require(("plate",), field_spans=(WHERE,))) == (
        "Require(fields=('plate',), comments=(), trailing_comment=None)"
    )
    assert repr(WHERE) == "Span(line=3, column=5, end_line=3, end_column=9)"


def test_nodes_are_frozen() -> None:
    node = sample()
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.key = "minimum"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del node.key  # type: ignore[misc]
    # An attribute that is no field is refused too: on Python 3.11 with a TypeError, because the
    # generated `__setattr__` calls `super()` with the class that `slots=True` replaced.
    with pytest.raises((dataclasses.FrozenInstanceError, TypeError)):
        node.unknown = 1  # type: ignore[attr-defined]


def test_nodes_pickle_and_copy_with_their_spans() -> None:
    node = sample()
    for twin in (pickle.loads(pickle.dumps(node)), copy.deepcopy(node), copy.copy(node)):
        assert twin == node
        assert twin.span == WHERE
        assert twin.values[0].left.span == WHERE  # type: ignore[union-attr]


def test_pattern_matching_by_position_and_keyword() -> None:
    match sample():
        case ast.Property("maximum", (ast.Binary("+", ast.Name("a"), _),), locale="es_AR"):
            matched = True
        case _:
            matched = False
    assert matched
