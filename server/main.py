"""The `inspectlang` program, composed: the language's commands, the runtime's `simulate` and
the server's `serve`, `worker`, `admin` and `outbox`. The server is the top layer, the one
package that may name the other two, so the composition lives here (`pyproject.toml` points the
`inspectlang` script at `main`; `python -m server` runs it too). Each package's module is
imported only when one of its commands runs, so `inspectlang check` loads no server code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspectlang import cli


def _runtime(subparsers: Any) -> None:
    from runtime import cli as runtime_cli

    runtime_cli.register(subparsers)


def _proofs(subparsers: Any) -> None:
    from runtime.proofs import cli as proofs_cli

    proofs_cli.register(subparsers)


def _template_tests(subparsers: Any) -> None:
    from runtime.proofs import cli as proofs_cli

    proofs_cli.register_test(subparsers)


def _diff(subparsers: Any) -> None:
    from runtime.proofs import cli as proofs_cli

    proofs_cli.register_diff(subparsers)


def _server(subparsers: Any) -> None:
    from server import cli as server_cli

    server_cli.register(subparsers)


#: Every command of the program -> the package registration that adds it.
COMMANDS: dict[str, cli.Registration] = {
    **cli.LANGUAGE_COMMANDS,
    "simulate": _runtime,
    "verify": _proofs,
    "test": _template_tests,
    "diff": _diff,
    "serve": _server,
    "worker": _server,
    "admin": _server,
    "outbox": _server,
}


def main(argv: Sequence[str] | None = None) -> int:
    """The `inspectlang` command: run one of `COMMANDS`; its exit code."""
    return cli.main(argv, COMMANDS)
