"""`@record`: a slotted dataclass whose methods are not compiled when its module is imported.

`@dataclass(frozen=True, slots=True)` writes up to six methods per class as Python source and
compiles each one (`exec`) at import; for the ~55 classes of the AST and the checker that was
the largest share of a cold compile after importing pydantic and Lark (`inspectlang.ast`: 13.8
ms to import with `dataclass`, 2.4 ms with `record`; benchmarks/bench_compile.py compares the
whole cold start in its variant `plain_dataclasses`, which swaps this module for `dataclass`).
`@record(frozen=True)` is that decorator with the same results:

- `dataclass` itself still reads the fields (`field(...)` with `default`, `default_factory`,
  `kw_only`, `compare`, `repr`, `hash`, `init`), makes `__slots__` and `__match_args__`, so
  `dataclasses.fields`, `replace`, `is_dataclass` and `asdict` work as before;
- `__eq__`, `__hash__` (frozen classes; `None` otherwise), `__repr__` and the frozen
  `__setattr__`/`__delattr__` are small closures over the field names, compiled once for all
  classes, with `dataclass`'s semantics;
- `__init__` is written and compiled on the class's first instantiation: the source
  `dataclass` writes, except that a frozen class's fields are set through their slots' own
  setters rather than `object.__setattr__` (the same effect, a little faster per node); a
  class never instantiated in a process never pays for it (until then `inspect.signature` of
  the class reads `(*args, **kwargs)`; mypy reads the fields, through `dataclass_transform`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from types import MemberDescriptorType
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")
_MISSING: Any = dataclasses.MISSING


@overload
def record(cls: type[_T], /) -> type[_T]: ...


@overload
def record(*, frozen: bool = False, kw_only: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field,))
def record(cls: type[_T] | None = None, /, *, frozen: bool = False, kw_only: bool = False) -> Any:
    """`@dataclass(slots=True)` (`@record`) or `@dataclass(frozen=True, slots=True)`
    (`@record(frozen=True)`), `kw_only` as `dataclass`'s, without compiling methods at
    import."""

    def wrap(cls: type[_T]) -> type[_T]:
        return _make(cls, frozen, kw_only)

    return wrap if cls is None else wrap(cls)


def _make(cls: type[_T], frozen: bool, kw_only: bool) -> type[_T]:
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=True, kw_only=kw_only)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    _check_order(cls, fields)
    compared = tuple(f.name for f in fields if f.compare)
    key: Callable[[Any], Any] = attrgetter(*compared) if compared else lambda _: ()
    shown = tuple(f.name for f in fields if f.repr)

    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    def __repr__(self: Any) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({values})"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        initializer = _initializer(cls, fields, frozen)
        type.__setattr__(cls, "__init__", initializer)
        initializer(self, *args, **kwargs)

    methods: dict[str, Any] = {"__init__": __init__, "__eq__": __eq__, "__repr__": __repr__}
    if frozen:
        methods.update(_frozen_methods(cls, fields))
    else:
        methods["__hash__"] = None
    for name, method in methods.items():
        if method is not None:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
        type.__setattr__(cls, name, method)
    return cls


def _frozen_methods(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    """`__hash__`, `__setattr__`, `__delattr__` and the pickling pair of a frozen class, as
    `dataclass` defines them."""
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    # The hash of the tuple of the fields, as `dataclass`'s (attrgetter of one name gives the
    # value itself, not a tuple).
    get = attrgetter(*hashed) if hashed else lambda _: ()
    hash_key: Callable[[Any], Any] = (lambda self: (get(self),)) if len(hashed) == 1 else get
    names = frozenset(f.name for f in fields)
    order = tuple(f.name for f in fields)

    def __hash__(self: Any) -> int:
        return hash(hash_key(self))

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in order]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(order, state, strict=True):
            object.__setattr__(self, name, value)

    return {
        "__hash__": __hash__,
        "__setattr__": __setattr__,
        "__delattr__": __delattr__,
        "__getstate__": __getstate__,
        "__setstate__": __setstate__,
    }


def _check_order(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """`dataclass`'s import-time error for a field without a default after one with."""
    seen_default = False
    for f in fields:
        if not f.init or f.kw_only:
            continue
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            seen_default = True
        elif seen_default:
            message = f"non-default argument {f.name!r} follows default argument"
            raise TypeError(f"{cls.__name__}: {message}")
        if f.name == "self":
            raise TypeError(f"{cls.__name__}: a field cannot be named 'self'")


def _initializer(
    cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool
) -> Callable[..., None]:
    """The `__init__` `dataclass` would write for `cls`, compiled now."""
    namespace: dict[str, Any] = {"_set": object.__setattr__, "_factory": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f in fields:
        name = f.name
        has_factory = f.default_factory is not _MISSING
        if has_factory:
            namespace[f"_factory_{name}"] = f.default_factory
        if f.default is not _MISSING:
            namespace[f"_default_{name}"] = f.default
        if f.init:
            if has_factory:
                parameter = f"{name}=_factory"
                value = f"_factory_{name}() if {name} is _factory else {name}"
            elif f.default is not _MISSING:
                parameter, value = f"{name}=_default_{name}", name
            else:
                parameter, value = name, name
            (keyword if f.kw_only else positional).append(parameter)
        elif has_factory:
            value = f"_factory_{name}()"
        elif f.default is not _MISSING:
            value = f"_default_{name}"
        else:
            continue
        if not frozen:
            assignment = f"self.{name} = {value}"
        elif isinstance(slot := getattr(cls, name, None), MemberDescriptorType):
            # The slot's own setter: what `object.__setattr__` ends up calling, without
            # looking the name up (a large template builds tens of thousands of nodes).
            namespace[f"_set_{name}"] = slot.__set__
            assignment = f"_set_{name}(self, {value})"
        else:
            assignment = f"_set(self, {name!r}, {value})"
        body.append(f"    {assignment}")
    parameters = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({parameters}) -> None:\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, namespace)  # our own source, made of field names only
    initializer: Callable[..., None] = namespace["__init__"]
    initializer.__qualname__ = f"{cls.__qualname__}.__init__"
    return initializer


class _Factory:
    """The default of a parameter whose field has a `default_factory` (as in `dataclass`)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()
