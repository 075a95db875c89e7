"""Where inspectlang keeps files between processes: the parser Lark builds from the grammar
(`inspectlang.parser_cache`) and the code of the records' initializers (`inspectlang.records`),
each checked when read (the grammar's hash, Python's bytecode number), so a stale file is simply
rebuilt.

The directory is private to the user (`$XDG_CACHE_HOME/inspectlang`, else `~/.cache/inspectlang`,
mode 0700): the files are a pickle and `marshal`'s code, trusted the way Python trusts its own
`.pyc` files, so they must not live in a shared place such as the temp directory.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from typing import IO

_log = logging.getLogger(__name__)


def directory() -> str | None:
    """The cache directory, created when missing; None when it cannot be (no cache then: a
    slower start, nothing else)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "inspectlang")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return path


def file_path(name: str) -> str | None:
    """The path of the cache file `name`; None when there is no cache directory."""
    found = directory()
    return None if found is None else os.path.join(found, name)


def write(path: str, content: Callable[[IO[bytes]], object]) -> bool:
    """Writes a cache file whole: `content` writes it under a temporary name of this process,
    renamed into place when done, so a reader (another process) finds the old file or the new
    one, never half of one. False when it cannot be written (nothing is lost then but the next
    process's head start; the temporary file is removed)."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as file:
            content(file)
        os.replace(temporary, path)
    except Exception:  # a full disk, a read-only home, what a writer cannot encode
        _log.debug("cannot write %s", path, exc_info=True)
        with contextlib.suppress(OSError):
            os.remove(temporary)
        return False
    return True
