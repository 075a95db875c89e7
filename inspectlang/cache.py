"""Where inspectlang keeps files between processes: the parser Lark builds from the grammar
(`inspectlang.parser_cache`), checked when read (the grammar's hash, the versions of Lark and
Python), so a stale file is simply rebuilt.

The directory is private to the user (`$XDG_CACHE_HOME/inspectlang`, else `~/.cache/inspectlang`,
mode 0700): the file is a pickle, trusted the way Python trusts its own `.pyc` files, so it must
not live in a shared place such as the temp directory.
"""

from __future__ import annotations

import os


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
