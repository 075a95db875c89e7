"""`inspectlang.records`: classes that behave as `@dataclass(slots=True)` and
`@dataclass(frozen=True, slots=True)` ones, compared with real dataclasses of the same shape."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import marshal
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from inspectlang.records import define_initializers, frozen_record, record

ROOT = Path(__file__).resolve().parents[2]


@record
class Account:
    """A mutable record with defaults and factories."""

    name: str
    tags: list[str] = field(default_factory=list)
    limit: int = 10
    note: str = field(default="", compare=False, repr=False)
    owner: str | None = field(default=None, kw_only=True)


@dataclass(slots=True)
class AccountDataclass:
    """The same shape as `Account`, made by `dataclass`."""

    name: str
    tags: list[str] = field(default_factory=list)
    limit: int = 10
    note: str = field(default="", compare=False, repr=False)
    owner: str | None = field(default=None, kw_only=True)


@frozen_record
class Point:
    """A frozen record."""

    x: int
    y: int = 0


@frozen_record
class Pickled:
    """A frozen record at module level, so pickle finds its class."""

    value: tuple[int, ...]
    label: str = field(default="", compare=False)


define_initializers()


def test_signature_fields_and_match_args_are_those_of_dataclass() -> None:
    assert str(inspect.signature(Account)) == str(inspect.signature(AccountDataclass))
    assert Account.__match_args__ == AccountDataclass.__match_args__
    assert [f.name for f in dataclasses.fields(Account)] == [
        "name",
        "tags",
        "limit",
        "note",
        "owner",
    ]
    assert Account.__slots__ == AccountDataclass.__slots__
    assert dataclasses.is_dataclass(Account) and dataclasses.is_dataclass(Point)


def test_mutable_record_equality_repr_and_factories() -> None:
    first, second = Account("a"), Account("a", note="other")
    assert first == second  # `note` is not compared
    assert first.tags is not second.tags  # a fresh list per instance
    first.tags.append("x")
    assert first != second
    shown = repr(AccountDataclass("a", ["t"], 3, owner="o")).removeprefix("AccountDataclass")
    assert repr(Account("a", ["t"], 3, owner="o")) == "Account" + shown
    assert Account("a").__eq__(AccountDataclass("a")) is NotImplemented
    first.limit = 5  # mutable
    assert first.limit == 5
    assert Account.__hash__ is None
    with pytest.raises(TypeError):
        hash(first)
    with pytest.raises(AttributeError):
        first.unknown = 1  # type: ignore[attr-defined]
    assert dataclasses.replace(first, name="b").tags == ["x"]


def test_frozen_record_hash_freeze_and_copies() -> None:
    point = Point(1, 2)
    assert point == Point(1, 2) and point != Point(2, 1)
    assert hash(point) == hash((1, 2))
    assert repr(point) == "Point(x=1, y=2)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.y  # type: ignore[misc]
    value = Pickled((1, 2), "label")
    for twin in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
        assert twin == value and twin.label == "label"


def test_what_records_do_not_support_is_refused() -> None:
    with pytest.raises(TypeError, match="__post_init__"):

        @record
        class WithPostInit:
            """Refused."""

            value: int

            def __post_init__(self) -> None:
                pass

    with pytest.raises(TypeError, match="__init__ parameter"):

        @record
        class WithoutInit:
            """Refused."""

            value: int = field(default=0, init=False)

    define_initializers()  # nothing pending: the refused classes were never queued


def test_a_method_the_class_writes_is_kept() -> None:
    @frozen_record
    class Shown:
        """Writes its own repr, as a dataclass may."""

        value: int

        def __repr__(self) -> str:
            return "shown"

    define_initializers()
    assert repr(Shown(1)) == "shown"
    assert Shown(1) == Shown(1)


CACHE_PROBE = """
import builtins
compiled = []
real = builtins.compile
def spy(source, filename, *args, **kwargs):
    if str(filename).startswith("<records of inspectlang."):
        compiled.append(filename)
    return real(source, filename, *args, **kwargs)
builtins.compile = spy
from inspectlang.parser import parse
module = parse('template "t"\\n    type: car\\n')
print(len(compiled), module.declarations[0].name)
"""


def _probe(cache: Path, *, write_bytecode: bool) -> tuple[int, str]:
    environment = {
        key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"
    }
    environment["XDG_CACHE_HOME"] = str(cache)
    if not write_bytecode:
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", CACHE_PROBE],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=environment,
    )
    count, name = done.stdout.split()
    return int(count), name


def test_compiled_initializers_are_kept_between_processes_and_checked(tmp_path: Path) -> None:
    assert _probe(tmp_path, write_bytecode=False)[1] == "t"
    assert not list((tmp_path / "inspectlang").glob("records-*"))  # nothing written
    first, _ = _probe(tmp_path, write_bytecode=True)
    directory = tmp_path / "inspectlang"
    assert first > 0 and directory.stat().st_mode & 0o777 == 0o700
    # inspectlang.ast compiles Span alone (NO_SPAN is made right after it), then the others.
    span_file, nodes_file = (
        next(directory.glob(f"records-inspectlang.ast.{name}.*")) for name in ("Span", "Literal")
    )
    assert _probe(tmp_path, write_bytecode=True) == (0, "t")  # all from the cache
    span_file.write_bytes(b"not marshal data")  # damaged: compiled again and rewritten
    assert _probe(tmp_path, write_bytecode=True) == (1, "t")
    assert _probe(tmp_path, write_bytecode=True) == (0, "t")
    version, stored, code = marshal.loads(nodes_file.read_bytes())
    nodes_file.write_bytes(marshal.dumps((version, stored + "\n", code)))  # another source
    assert _probe(tmp_path, write_bytecode=True) == (1, "t")
    nodes_file.write_bytes(marshal.dumps(("another Python", stored, code)))
    assert _probe(tmp_path, write_bytecode=True) == (1, "t")
