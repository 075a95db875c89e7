"""The Lark parser, its analysed grammar kept between processes by Lark's own cache.

`Lark(cache=path)` writes the analysed grammar and parse table once and loads them in later
processes, checked against the grammar's and the options' hash and Lark's version: a file that
does not match, or cannot be read, is rebuilt and written again. The file lives in inspectlang's
private cache directory (`inspectlang.cache`), not the shared temporary directory Lark would
choose, since it is a pickle.

Until issue 38 this module kept a pickle of the whole built parser with every lexer's regular
expression compiled (through CPython's private `_sre.compile`): a cold start counted 2.7% more
instructions with Lark's own cache (valgrind, 2,638M against 2,569M for a fresh process that
imports the compiler and compiles `car_easy.insp`), under the 10% a person could notice, so the
plain tool is used.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import lark
from lark import Lark

from inspectlang import cache

#: The cache file's name: Lark pickles its own objects, so the versions of Lark and Python.
FILE_NAME = (
    f"parser-lark-{lark.__version__}-python-{sys.version_info[0]}.{sys.version_info[1]}.cache"
)


def parser(package: str, grammar: str, **options: Any) -> Lark:
    """`Lark.open_from_package(package, grammar, **options)` with Lark's cache in inspectlang's
    cache directory, when there is one."""
    directory = cache.directory()
    path: str | bool = False if directory is None else os.path.join(directory, FILE_NAME)
    return Lark.open_from_package(package, grammar, cache=path, **options)
