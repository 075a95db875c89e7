"""The Lark parser, kept on disk ready to use between processes.

`Lark(cache=...)` keeps the analysed grammar, and a fresh process then still deserializes it
into Lark's objects and builds the contextual lexer (~11 ms), and compiles the regular
expression of each parser state's lexer the first time that state lexes (28 of them, ~12 ms,
for `car_easy.insp`). This module keeps instead the parser as built, pickled whole, with the
lexer of every state already compiled: loading it takes ~6 ms (unpickling ~4.5, making the
callbacks ~1.2), and the first parse compiles nothing.

- The file is `Lark`'s own objects, so its name holds the versions of Lark and Python, and its
  first line the hash of the grammar and the options: a file that does not match, or that cannot
  be read, is replaced by a new one.
- The parse callbacks are not kept: they are made at load from the live transformer (as with
  Lark's cache), so a change to `inspectlang.tree_builder` needs no new file.
- A compiled regular expression is kept as the program `re` compiles its pattern to, given back
  to CPython's `_sre.compile` (what `re.compile` ends with, which checks the program). Where
  `re` has no such private parts, the file keeps no compiled lexer and each state compiles its
  own on first use, as Lark does.

The file is a pickle in the user's private cache directory (`inspectlang.cache`), trusted as
Python trusts its own `.pyc` files.
"""

from __future__ import annotations

import copyreg
import hashlib
import importlib
import io
import logging
import pickle
import pkgutil
import re
import sys
import types
from typing import IO, Any

import lark
from lark import Lark
from lark.parsers import lalr_analysis

from inspectlang import cache

#: CPython's private parts of `re` that turn a pattern into its program and back.
_sre: Any
try:
    _sre = importlib.import_module("_sre")
    _compiler: Any = importlib.import_module("re._compiler")
    _parser: Any = importlib.import_module("re._parser")
except ImportError:  # not CPython: lexers are compiled on first use, as Lark does
    _sre = None


_log = logging.getLogger(__name__)


def parser(package: str, grammar: str, **options: Any) -> Lark:
    """`Lark.open_from_package(package, grammar, **options)`, loaded from the cache file when it
    holds this parser, else built and written to it."""
    key = _key(pkgutil.get_data(package, grammar) or b"", options)
    path = _path()
    if path is not None:
        loaded = _load(path, key)
        if loaded is not None:
            return loaded
    built = Lark.open_from_package(package, grammar, **options)
    if path is None:
        return built
    # Through Lark's own saving and loading, as its cache does: the parser then names terminals
    # with plain strings where the analysis left the grammar's tokens (`Token`, whose `__eq__`
    # is Python code), in the parse table's keys among others (a warm parse 8% slower).
    data = io.BytesIO()
    built.save(data)
    data.seek(0)
    built = Lark.load(data)
    _save(built, path, key)
    return built


def _path() -> str | None:
    python = "{}.{}".format(*sys.version_info)
    return cache.file_path(f"parser-lark-{lark.__version__}-python-{python}.pickle")


def _key(grammar: bytes, options: dict[str, Any]) -> bytes:
    """What the file must have been written for: the grammar, the options (an object option by
    its class), this module, the versions and the format of `re`'s programs."""
    described = [
        f"{name}={value!r}"
        if value is None or isinstance(value, bool | int | str)
        else f"{name}:{type(value).__module__}.{type(value).__qualname__}"
        for name, value in sorted(options.items())
    ]
    magic = getattr(_sre, "MAGIC", None)
    parts = [lark.__version__, sys.version, str(magic), *described]
    digest = hashlib.sha256(grammar)
    digest.update(_own_source())
    digest.update("\n".join(parts).encode())
    return digest.hexdigest().encode()


def _own_source() -> bytes:
    """This module's text, part of the key: what the file holds changes with it (a file written
    before a change to the pickling still loaded, and its parser parsed 12% slower)."""
    try:
        with open(__file__, "rb") as file:
            return file.read()
    except OSError:  # shipped without its source: the versions alone key the file
        return b""


def _load(path: str, key: bytes) -> Lark | None:
    try:
        with open(path, "rb") as file:
            if file.readline() != key + b"\n":
                return None
            unpickler = _Unpickler(file)
            built: Lark = unpickler.load()
        built._prepare_callbacks()
    except FileNotFoundError:
        return None
    except Exception:  # a damaged file, or one Lark's classes no longer read: write a new one
        _log.debug("cannot read the parser in %s", path, exc_info=True)
        return None
    unpickler.callbacks.update(built._callbacks)
    built._callbacks = unpickler.callbacks
    _log.debug("parser loaded from %s", path)
    return built


def _save(built: Lark, path: str, key: bytes) -> None:
    if _sre is not None:
        for lexer in _state_lexers(built):
            lexer.scanner  # noqa: B018  (compiles the state's lexer now, to keep it compiled)

    def content(file: IO[bytes]) -> None:
        file.write(key + b"\n")
        _Pickler(file, built).dump(built)

    if cache.write(path, content):
        _log.debug("parser saved to %s", path)


def _state_lexers(built: Lark) -> set[Any]:
    """The lexer of each parser state, and the one of all terminals (syntax errors use it)."""
    lexer = built.parser.lexer
    lexer = getattr(lexer, "lexer", lexer)  # the contextual lexer under the postlexer
    return {*lexer.lexers.values(), lexer.root_lexer}


class _Pickler(pickle.Pickler):
    """Pickles a built `Lark`, but its callbacks (made again at load) and what pickle cannot
    take as it is: the `re` module the lexers keep, Lark's `Shift` and `Reduce` (compared by
    identity) and compiled patterns."""

    def __init__(self, file: IO[bytes], built: Lark) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._made_at_load = {
            id(built._callbacks): "callbacks",
            id(built._parse_tree_builder): "tree builder",
        }

    def persistent_id(self, obj: Any) -> str | None:
        return self._made_at_load.get(id(obj))

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.ModuleType):
            return importlib.import_module, (obj.__name__,)
        if isinstance(obj, lalr_analysis.Action):
            return getattr, (lalr_analysis, obj.name)
        if isinstance(obj, re.Pattern) and _sre is not None:
            return _compiled, _program(obj)
        cls: Any = type(obj)
        if (
            cls.__module__.startswith("lark.")
            and cls.__reduce_ex__ is object.__reduce_ex__
            and cls.__reduce__ is object.__reduce__
            and cls.__setattr__ is object.__setattr__
            and not hasattr(cls, "__setstate__")
        ):
            state = obj.__getstate__()
            if isinstance(state, dict):  # no slots
                return _NEW_OBJECT, (cls,), state, None, None, _set_attributes
        return NotImplemented


#: What pickle writes as its own opcode for `cls.__new__(cls)` (its default for any object).
_NEW_OBJECT: Any = copyreg.__dict__["__newobj__"]


def _set_attributes(obj: Any, attributes: dict[str, Any]) -> None:
    """Sets a loaded object's attributes one by one, as its `__init__` does: pickle's default
    (updating its `__dict__`) gives objects whose attributes Python reads on its slow path, and
    the parse reads the lexers', the parser's and the rules' on every token (a warm parse 4%
    slower)."""
    for name, value in attributes.items():
        setattr(obj, name, value)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes]) -> None:
        super().__init__(file)
        #: The parser's callbacks, filled once it is loaded.
        self.callbacks: dict[Any, Any] = {}

    def persistent_load(self, pid: Any) -> Any:
        if pid == "callbacks":
            return self.callbacks
        if pid == "tree builder":
            return None
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


def _program(pattern: re.Pattern[str]) -> tuple[Any, ...]:
    """The arguments of `_sre.compile` that give `pattern` again: what `re.compile` passes it."""
    parsed = _parser.parse(pattern.pattern, pattern.flags)
    code = [int(word) for word in _compiler._code(parsed, pattern.flags)]
    groups = parsed.state.groupdict
    names: list[str | None] = [None] * parsed.state.groups
    for name, index in groups.items():
        names[index] = name
    flags = pattern.flags | parsed.state.flags
    return pattern.pattern, flags, code, parsed.state.groups - 1, groups, tuple(names)


def _compiled(pattern: str, flags: int, *program: Any) -> re.Pattern[str]:
    try:
        compiled: re.Pattern[str] = _sre.compile(pattern, flags, *program)
    except Exception:  # a program this `re` does not take: compile the pattern
        return re.compile(pattern, flags)
    return compiled
