"""`record` and `frozen_record`: `@dataclass(slots=True)` and `@dataclass(frozen=True,
slots=True)` for the classes created while `inspectlang.compiler` is imported, at a fraction of
the import cost.

`dataclass` writes six small functions per frozen class (three per mutable one) and compiles each
with its own `exec`; for the forty-odd AST and checker classes that was the largest part of the
compiler's own import time. Here `dataclass` only collects the fields and makes the slots, so the
classes stay real dataclasses (`dataclasses.fields`, `replace`, `is_dataclass`, `__match_args__`
and pattern matching work). Equality, hash, repr and immutability are shared functions that give
the results `dataclass`'s would, and `define_initializers` compiles the `__init__` of every class
made since its last call in one `exec`, written as `dataclass` writes it (same signature,
defaults and annotations). A module that makes records calls it before it creates an instance,
and at its end. Even one `compile` of all the AST's initializers costs about 2.5 ms, so the
compiled code is kept in `inspectlang.cache`'s directory, the way Python keeps `.pyc` files, and
reused when the source it was compiled from is the same text.

Not supported, and refused when the class is made: `__post_init__`, `init=False` fields. Not
supported either: `InitVar` pseudo-fields (no class of the package has one). `ClassVar`
annotations are fine: they are not fields.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields
from operator import attrgetter
from types import CodeType
from typing import Any, TypeVar, dataclass_transform

from inspectlang import cache

_Class = TypeVar("_Class")

#: Classes made by `record` or `frozen_record` whose `__init__` is not compiled yet, and whether
#: they are frozen.
_PENDING: list[tuple[type, bool]] = []
#: Held while `_PENDING` changes: two threads may import two modules at once.
_LOCK = threading.Lock()

#: Attribute of a record class: the function giving the tuple of its compared fields' values.
_COMPARED = "__record_compared__"
#: Attribute of a record class: the names of the fields its repr shows.
_SHOWN = "__record_shown__"


class _Factory:
    """The default of a parameter whose field has a `default_factory` (shown as `<factory>`,
    as `dataclass` shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _values_of(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function of a record giving the tuple of its `names` fields (`attrgetter` gives a bare
    value for one name)."""
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda record: (get(record),)
    if not names:
        return lambda record: ()
    return attrgetter(*names)


def _eq(self: Any, other: object) -> object:
    if other.__class__ is self.__class__:
        compared = getattr(self.__class__, _COMPARED)
        return compared(self) == compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(getattr(self.__class__, _COMPARED)(self))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(self, _SHOWN))
    return f"{self.__class__.__qualname__}({shown})"


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list[object]:
    """Pickling and copying state of a frozen record (the setter below bypasses the freeze)."""
    return [getattr(self, item.name) for item in fields(self)]


def _setstate(self: Any, state: list[object]) -> None:
    for item, value in zip(fields(self), state, strict=True):
        object.__setattr__(self, item.name, value)


def _make(cls: type[_Class], frozen: bool) -> type[_Class]:
    if "__post_init__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: a record has no __post_init__")
    made = dataclass(init=False, repr=False, eq=False, slots=True)(cls)
    items = fields(made)  # type: ignore[arg-type]
    if any(not item.init for item in items):
        raise TypeError(f"{cls.__name__}: every field of a record is an __init__ parameter")
    methods: dict[str, object] = {
        _COMPARED: staticmethod(_values_of(tuple(item.name for item in items if item.compare))),
        _SHOWN: tuple(item.name for item in items if item.repr),
        "__eq__": _eq,
        "__repr__": _repr,
        "__hash__": None,  # as dataclass: a mutable class with value equality is unhashable
    }
    if frozen:
        methods |= {
            "__hash__": _hash,
            "__setattr__": _frozen_setattr,
            "__delattr__": _frozen_delattr,
            "__getstate__": _getstate,
            "__setstate__": _setstate,
        }
    for name, method in methods.items():
        if name not in made.__dict__:  # as dataclass, a method the class writes is kept
            setattr(made, name, method)
    with _LOCK:
        _PENDING.append((made, frozen))
    return made


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[_Class]) -> type[_Class]:
    """`@dataclass(slots=True)`; call `define_initializers` before making an instance."""
    return _make(cls, frozen=False)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen_record(cls: type[_Class]) -> type[_Class]:
    """`@dataclass(frozen=True, slots=True)`; call `define_initializers` before making an
    instance."""
    return _make(cls, frozen=True)


def define_initializers() -> None:
    """Compile the `__init__` of every class made since the last call, in one `exec`."""
    with _LOCK:
        pending = list(_PENDING)
        _PENDING.clear()
    if not pending:
        return
    lines: list[str] = []
    namespace: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    for number, (cls, frozen) in enumerate(pending):
        parameters: list[str] = []
        keyword_only: list[str] = []
        body: list[str] = []
        for item in fields(cls):
            name = item.name
            parameter, value = name, name
            if item.default_factory is not MISSING:
                namespace[f"_factory{number}_{name}"] = item.default_factory
                parameter += "=_FACTORY"
                value = f"_factory{number}_{name}() if {name} is _FACTORY else {name}"
            elif item.default is not MISSING:
                namespace[f"_default{number}_{name}"] = item.default
                parameter += f"=_default{number}_{name}"
            (keyword_only if item.kw_only else parameters).append(parameter)
            body.append(
                f"    _set(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}"
            )
        if keyword_only:
            parameters += ["*", *keyword_only]
        lines += [f"def _init{number}(self, {', '.join(parameters)}):", *(body or ["    pass"])]
    first = pending[0][0]
    name = "".join(c if c.isalnum() or c in "._" else "_" for c in first.__qualname__)
    exec(_compiled("\n".join(lines), f"{first.__module__}.{name}"), namespace)
    for number, (cls, _) in enumerate(pending):
        function = namespace[f"_init{number}"]
        function.__name__ = "__init__"
        function.__qualname__ = f"{cls.__qualname__}.__init__"
        function.__module__ = cls.__module__
        function.__annotations__ = {item.name: item.type for item in fields(cls)}
        function.__annotations__["return"] = None
        cls.__init__ = function  # type: ignore[misc]


def _compiled(source: str, name: str) -> CodeType:
    """`compile(source)`, kept between processes in the cache directory under `name` (the first
    class's, with its module) and reused only when it was compiled from the same source text by
    the same interpreter (`sys.version`). Written unless Python itself is told not to write
    bytecode (`PYTHONDONTWRITEBYTECODE`)."""
    directory = cache.directory() if sys.implementation.cache_tag else None
    path = None
    if directory is not None:
        path = os.path.join(directory, f"records-{name}.{sys.implementation.cache_tag}.marshal")
        try:
            with open(path, "rb") as file:
                version, stored, code = marshal.load(file)
            if version == sys.version and stored == source and isinstance(code, CodeType):
                return code
        except (OSError, ValueError, EOFError, TypeError):
            pass  # missing, unreadable or from another source: compiled again below
    code = compile(source, f"<records of {name}>", "exec")
    if path is not None and not sys.dont_write_bytecode:
        partial = f"{path}.{os.getpid()}"
        try:
            with open(partial, "wb") as file:
                marshal.dump((sys.version, source, code), file)
            os.replace(partial, path)
        except OSError:
            pass
    return code
