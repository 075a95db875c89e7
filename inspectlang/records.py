"""`@record`: a slotted dataclass whose methods are not compiled when its module is imported.

`@dataclass(frozen=True, slots=True)` writes up to six methods per class as Python source and
compiles each one (`exec`) at import; for the ~55 classes of the AST and the checker that was
the largest share of a cold compile after importing pydantic and Lark (`inspectlang.ast`: 13.8
ms to import with `dataclass`, 2.4 ms with `record`; benchmarks/bench_compile.py compares the
whole cold start in its variant `plain_dataclasses`, which swaps this module for `dataclass`).
`@record(frozen=True)` is that decorator with the same results:

- the fields are read as `dataclass` reads them (`field(...)` with `default`,
  `default_factory`, `kw_only`, `compare`, `repr`, `hash`, `init`; `ClassVar` and `KW_ONLY`),
  and the class gets `__slots__`, `__match_args__` and `dataclass`'s own attributes, so
  `dataclasses.fields`, `replace`, `is_dataclass` and `asdict` work as before; `dataclass`
  itself is not called, as it tests every annotation's text with regular expressions;
- `__eq__`, `__hash__` (frozen classes; `None` otherwise), `__repr__` and the frozen
  `__setattr__`/`__delattr__` are small closures over the field names, compiled once for all
  classes, with `dataclass`'s semantics;
- `__init__` is written on the class's first instantiation: the source `dataclass` writes,
  except that a frozen class's fields are set through their slots' own setters rather than
  `object.__setattr__` (the same effect, a little faster per node); a class never
  instantiated in a process never pays for it (until then `inspect.signature` of the class
  reads `(*args, **kwargs)`; mypy reads the fields, through `dataclass_transform`). Its code is
  kept between processes in inspectlang's cache directory (`inspectlang.cache`), as Python keeps
  a module's in its `.pyc` file, keyed by the source and this Python's bytecode number.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import importlib.util
import marshal
import sys
import types
from collections.abc import Callable
from operator import attrgetter
from types import MemberDescriptorType
from typing import IO, Any, TypeVar, dataclass_transform, overload

from inspectlang import cache

_T = TypeVar("_T")
_MISSING: Any = dataclasses.MISSING
#: What marks a `dataclasses.Field` as a field proper (not a `ClassVar` or an `InitVar`).
_FIELD: Any = dataclasses.__dict__["_FIELD"]


@dataclasses.dataclass(init=False, repr=False, eq=False)
class _Parameters:
    """Gives every record its `__dataclass_params__`: `dataclass`'s, with the methods it writes
    turned off (a record writes its own)."""


_PARAMS: Any = _Parameters.__dataclass_params__  # type: ignore[attr-defined]


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
    cls = _slotted(cls, kw_only)
    fields = tuple(cls.__dataclass_fields__.values())  # type: ignore[attr-defined]
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


def _slotted(cls: type[_T], kw_only: bool) -> type[_T]:
    """`cls` made again with `__slots__` for its fields and `dataclass`'s attributes
    (`__dataclass_fields__`, `__dataclass_params__`, `__match_args__`), the fields read as
    `dataclass` reads them: the annotations of the class body in order, after those of record
    bases; a `field(...)` or plain default; `ClassVar` and the `KW_ONLY` marker are no fields.

    `dataclass(slots=True)` gives the same class, but it tests every annotation (text, under
    `from __future__ import annotations`) against `ClassVar`, `InitVar` and `KW_ONLY` with
    regular expressions and the module's globals (127 us a class against 34 here, in a loop;
    the 65 classes of a cold compile 4.5 ms against 2.3, the collector off)."""
    fields: dict[str, dataclasses.Field[Any]] = {}
    inherited_slots: set[str] = set()
    for base in cls.__mro__[-1:0:-1]:
        fields.update(base.__dict__.get("__dataclass_fields__", {}))
        slots = base.__dict__.get("__slots__", ())
        inherited_slots.update((slots,) if isinstance(slots, str) else slots)
    namespace = dict(cls.__dict__)
    for name, annotation in namespace.get("__annotations__", {}).items():
        kind = _kind(annotation)
        if kind == "classvar":
            continue
        if kind == "kw_only":
            kw_only = True
            continue
        if kind == "initvar":
            raise TypeError(f"{cls.__name__}: a record has no InitVar fields ({name!r})")
        default = namespace.pop(name, _MISSING)
        spec: dataclasses.Field[Any] = (
            default
            if isinstance(default, dataclasses.Field)
            else dataclasses.field(default=default)
        )
        if spec.default.__class__.__hash__ is None:  # list, dict, set: as `dataclass` refuses
            message = f"mutable default {type(spec.default)} for field {name} is not allowed"
            raise ValueError(f"{message}: use default_factory")
        spec.name, spec.type = name, annotation
        spec._field_type = _FIELD  # type: ignore[attr-defined]
        if spec.kw_only is _MISSING:
            spec.kw_only = kw_only
        fields[name] = spec
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = tuple(name for name in fields if name not in inherited_slots)
    namespace["__qualname__"] = cls.__qualname__
    namespace["__dataclass_fields__"] = fields
    namespace["__dataclass_params__"] = _PARAMS
    namespace.setdefault(
        "__match_args__", tuple(f.name for f in fields.values() if f.init and not f.kw_only)
    )
    metaclass: Any = type(cls)
    made: type[_T] = metaclass(cls.__name__, cls.__bases__, namespace)
    return made


def _kind(annotation: Any) -> str:
    """What `dataclass` makes of an annotation ("classvar", "kw_only", "initvar" or "field"),
    here by the name it starts with (the text of an annotation, or its object's `repr`)."""
    if annotation is dataclasses.KW_ONLY:
        return "kw_only"
    if isinstance(annotation, dataclasses.InitVar):
        return "initvar"
    text = annotation if isinstance(annotation, str) else repr(annotation)
    head = text.split("[", 1)[0].removeprefix("typing.").removeprefix("dataclasses.")
    return {"ClassVar": "classvar", "KW_ONLY": "kw_only", "InitVar": "initvar"}.get(head, "field")


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
    exec(_compiled(source), namespace)  # our own source, made of field names only
    initializer: Callable[..., None] = namespace["__init__"]
    initializer.__qualname__ = f"{cls.__qualname__}.__init__"
    return initializer


def _compiled(source: str) -> types.CodeType:
    """The code of an initializer's source, from the codes kept between processes when they
    hold it (compiling one takes ~0.1 ms, 4 ms for the 44 a cold compile of `car_easy.insp`
    makes; reading one back ~0.02), else compiled now and kept when the process ends."""
    global _kept
    if _kept is None:
        _kept = _load_kept()
    kept = _kept.get(source)
    if kept is not None:
        with contextlib.suppress(EOFError, ValueError, TypeError):
            code = marshal.loads(kept)
            if isinstance(code, types.CodeType):
                return code
    code = compile(source, "<record initializer>", "exec")
    if not _new:
        atexit.register(_save_kept)
    _kept[source] = _new[source] = marshal.dumps(code)
    return code


#: The initializers' codes by source, as `marshal` writes them (each read when first needed):
#: those of the file, and those compiled by this process (`_new`).
_kept: dict[str, bytes] | None = None
_new: dict[str, bytes] = {}


def _kept_path() -> str | None:
    return cache.file_path(f"records-{sys.implementation.cache_tag}.marshal")


def _load_kept() -> dict[str, bytes]:
    """The file's codes (`marshal`'s format, as `.pyc` files are, behind this Python's
    bytecode number); none when it is missing, damaged or for another Python."""
    path = _kept_path()
    try:
        with open(path or "", "rb") as file:
            if file.read(len(_MAGIC)) != _MAGIC:
                return {}
            kept = marshal.load(file)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {
        source: code
        for source, code in kept.items()
        if isinstance(source, str) and isinstance(code, bytes)
    }


def _save_kept() -> None:
    """Adds this process's new codes to the file (read again: another process may have added
    its own), written whole and renamed into place. Nothing is lost when it cannot be written
    but the next process's head start."""
    path = _kept_path()
    if path is None or not _new:
        return
    kept = _load_kept()
    if len(kept) + len(_new) > _MOST_KEPT:  # sources no process needs any more: start again
        kept = {}
    kept.update(_new)

    def content(file: IO[bytes]) -> None:
        file.write(_MAGIC)
        marshal.dump(kept, file)

    if cache.write(path, content):
        _new.clear()


_MAGIC = importlib.util.MAGIC_NUMBER
#: The most initializers the file keeps (inspectlang's own classes make ~70; classes declared
#: by tests or by programs add theirs, and renamed fields leave their old sources behind).
_MOST_KEPT = 1000


class _Factory:
    """The default of a parameter whose field has a `default_factory` (as in `dataclass`)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()
