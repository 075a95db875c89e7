"""Where inspectlang keeps files between processes: Lark's analysed grammar (`inspectlang.parser`)
and the compiled initializers of `inspectlang.records`, both derived from the package's own files
and checked against them when read, so a stale file is simply rebuilt.

The directory is private to the user (`$XDG_CACHE_HOME/inspectlang`, else `~/.cache/inspectlang`,
mode 0700): the files are a pickle and marshalled code, trusted the way Python trusts its own
`.pyc` files, so they must not live in a shared place such as the temp directory.
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
