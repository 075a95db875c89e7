"""`inspectlang.records.record` behaves as the `dataclass(slots=True)` it stands for: the same
class declared both ways gives the same fields, initializer, equality, hash, repr, frozenness,
copies and pickles."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from inspectlang import ast
from inspectlang.records import record


def _declare(decorator: Any) -> tuple[Any, Any]:
    @decorator(frozen=True)
    class Point:
        """A frozen class with positional, defaulted, keyword-only and uncompared fields."""

        x: int
        y: int = 0
        tags: tuple[str, ...] = field(default=(), kw_only=True)
        where: str = field(default="", compare=False, repr=False, kw_only=True)

    @decorator()
    class Bag:
        """A mutable class with factories and a field the initializer does not take."""

        name: str
        items: list[int] = field(default_factory=list)
        seen: dict[str, int] = field(default_factory=dict, init=False)
        count: int = field(default=0, init=False)

    return Point, Bag


def _dataclass(frozen: bool = False) -> Any:
    return dataclass(frozen=frozen, slots=True)


OURS = _declare(record)
THEIRS = _declare(_dataclass)


def _calls(point: type, bag: type) -> list[Any]:
    return [
        point(1),
        point(1, 2, tags=("a",), where="here"),
        point(x=3, y=4),
        bag("b"),
        bag("c", [1, 2]),
    ]


def _shape(cls: Any) -> list[tuple[Any, ...]]:
    return [(f.name, f.init, f.kw_only, f.compare, f.repr) for f in dataclasses.fields(cls)]


def test_fields_and_initializer_agree() -> None:
    for ours, theirs in zip(OURS, THEIRS, strict=True):
        assert [
            (f.name, f.init, f.kw_only, f.compare, f.repr) for f in dataclasses.fields(ours)
        ] == [(f.name, f.init, f.kw_only, f.compare, f.repr) for f in dataclasses.fields(theirs)]
        assert ours.__slots__ == theirs.__slots__
        assert ours.__match_args__ == theirs.__match_args__
    for made, expected in zip(_calls(*OURS), _calls(*THEIRS), strict=True):
        assert repr(made) == repr(expected)
        assert dataclasses.asdict(made) == dataclasses.asdict(expected)
    first, second = OURS[1]("a"), OURS[1]("a")
    assert first.items is not second.items  # a new list per instance, as default_factory says
    assert first.seen == {} and first.count == 0


def test_equality_and_hash_agree() -> None:
    point = OURS[0]
    assert point(1, where="a") == point(1, where="b")  # `where` is not compared
    assert point(1) != point(2)
    assert point(1) != THEIRS[0](1)  # another class, as dataclass's __eq__
    assert point(1).__eq__(object()) is NotImplemented
    assert hash(point(1, 2, tags=("t",))) == hash(THEIRS[0](1, 2, tags=("t",)))
    assert OURS[1].__hash__ is None and THEIRS[1].__hash__ is None
    assert hash(ast.Name("a")) == hash(("a",))


def test_frozen_and_mutable() -> None:
    point = OURS[0](1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    bag = OURS[1]("b")
    bag.count += 1
    assert bag.count == 1


def test_copies_pickles_and_replace() -> None:
    point = OURS[0](1, 2, tags=("a",), where="w")
    assert copy.copy(point) == point and copy.deepcopy(point) == point
    again = pickle.loads(pickle.dumps(ast.Name("n", span=ast.Span(1, 2, 1, 3))))
    assert again == ast.Name("n") and again.span == ast.Span(1, 2, 1, 3)
    moved = dataclasses.replace(point, y=5)
    assert (moved.x, moved.y, moved.tags, moved.where) == (1, 5, ("a",), "w")


def test_errors_dataclass_gives_at_declaration() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @record
        class Wrong:
            """A field without a default after one with."""

            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError):
        OURS[0]()  # x is required
    with pytest.raises(TypeError):
        OURS[0](1, 2, ("a",))  # tags is keyword-only


def test_keyword_only_classes_agree() -> None:
    """`kw_only=True` on the class, as `dataclass`'s: every field keyword-only, positional
    arguments refused alike (the validations' entries are declared so)."""

    def declare(decorator: Any) -> Any:
        @decorator
        class Entry:
            name: str
            label: str = "x"

        return Entry

    ours = declare(record(frozen=True, kw_only=True))
    theirs = declare(dataclass(frozen=True, slots=True, kw_only=True))
    assert _shape(ours) == _shape(theirs)
    assert ours.__match_args__ == theirs.__match_args__
    assert repr(ours(name="a")) == repr(theirs(name="a"))
    with pytest.raises(TypeError):
        ours("a")
    with pytest.raises(TypeError):
        theirs("a")
