"""`inspectlang.records.record` behaves as the `dataclass(slots=True)` it stands for: the same
class declared both ways gives the same fields, initializer, equality, hash, repr, frozenness,
copies and pickles."""

from __future__ import annotations

import copy
import dataclasses
import marshal
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from typing import Any, ClassVar

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


#: Declares a record in a fresh process and prints what it builds and how many initializers it
#: compiled (none when the kept code served).
_FRESH = """
import dataclasses
import inspectlang.records as records
@records.record(frozen=True)
class Cell:
    row: int
    label: str = dataclasses.field(default="x", kw_only=True)
print(repr(Cell(2, label="b")), repr(Cell(row=3)), len(records._new), sep="|")
"""
_BUILT = ["Cell(row=2, label='b')", "Cell(row=3, label='x')"]
_KEPT = f"records-{sys.implementation.cache_tag}.marshal"


def _fresh(cache_home: Path) -> tuple[list[str], int]:
    done = subprocess.run(
        [sys.executable, "-c", _FRESH],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "XDG_CACHE_HOME": str(cache_home)},
    )
    *built, compiled = done.stdout.strip().split("|")
    return built, int(compiled)


def test_initializers_are_kept_between_processes(tmp_path: Path) -> None:
    """The first process compiles the initializer and keeps its code in the private cache
    directory; the next one builds the same objects from the kept code, compiling nothing."""
    assert _fresh(tmp_path) == (_BUILT, 1)
    assert (tmp_path / "inspectlang" / _KEPT).exists()
    assert _fresh(tmp_path) == (_BUILT, 0)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not marshal",
        b"\x00\x00\x00\x00garbage",
        MAGIC_NUMBER + b"garbage",
        MAGIC_NUMBER + marshal.dumps(["a list"]),
        MAGIC_NUMBER + marshal.dumps({"src": 1}),
    ],
    ids=["empty", "text", "another python", "damaged", "not a dict", "not code"],
)
def test_a_damaged_initializer_file_is_compiled_again(tmp_path: Path, content: bytes) -> None:
    """A kept file that is empty, of another Python or not the codes `marshal` wrote is read as
    no codes: the initializer is compiled again and the file written anew, never an error."""
    kept = tmp_path / "inspectlang" / _KEPT
    kept.parent.mkdir(mode=0o700)
    kept.write_bytes(content)
    assert _fresh(tmp_path) == (_BUILT, 1)
    assert _fresh(tmp_path) == (_BUILT, 0)


def test_class_variables_markers_and_refusals_agree() -> None:
    """`ClassVar` annotations are no fields, `KW_ONLY` makes the fields after it keyword-only,
    a mutable default is refused, as `dataclass` does; an `InitVar` is refused (a record has
    none)."""

    def declare(decorator: Any) -> Any:
        @decorator
        class Row:
            kind: ClassVar[str] = "row"
            name: str
            _: dataclasses.KW_ONLY
            size: int = 0

        return Row

    ours = declare(record(frozen=True))
    theirs = declare(dataclass(frozen=True, slots=True))
    assert (
        _shape(ours)
        == _shape(theirs)
        == [("name", True, False, True, True), ("size", True, True, True, True)]
    )
    assert ours.kind == "row" and ours.__slots__ == theirs.__slots__
    assert repr(ours("a", size=2)) == repr(theirs("a", size=2))
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field items"):

        @record
        class Listed:
            items: list[int] = []

    with pytest.raises(TypeError, match="InitVar"):

        @record
        class Initialized:
            seed: dataclasses.InitVar[int]


@pytest.mark.parametrize("damaged", [b"garbage", marshal.dumps("not code")])
def test_a_damaged_kept_code_is_compiled_again(tmp_path: Path, damaged: bytes) -> None:
    assert _fresh(tmp_path) == (_BUILT, 1)
    kept = tmp_path / "inspectlang" / _KEPT
    codes = marshal.loads(kept.read_bytes()[len(MAGIC_NUMBER) :])
    kept.write_bytes(MAGIC_NUMBER + marshal.dumps(dict.fromkeys(codes, damaged)))
    assert _fresh(tmp_path) == (_BUILT, 1)
    assert _fresh(tmp_path) == (_BUILT, 0)


def test_the_kept_file_is_started_again_when_full(tmp_path: Path) -> None:
    """Sources no process needs any more (renamed fields, classes of old versions) do not
    pile up: past the limit the file keeps only what the last process compiled."""
    kept = tmp_path / "inspectlang" / _KEPT
    kept.parent.mkdir(mode=0o700)
    old = {f"def __init__(self, old_{n}):\n    pass\n": b"" for n in range(1000)}
    kept.write_bytes(MAGIC_NUMBER + marshal.dumps(old))
    assert _fresh(tmp_path) == (_BUILT, 1)
    assert len(marshal.loads(kept.read_bytes()[len(MAGIC_NUMBER) :])) == 1
    assert _fresh(tmp_path) == (_BUILT, 0)
