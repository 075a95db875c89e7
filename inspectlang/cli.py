"""The `inspectlang` command: one entry point, subcommands registered by the package that owns them.

Language commands (check, compile, decompile, fmt) live in `inspectlang.commands`, the language
server (lsp) in `inspectlang.lsp`; `simulate` in
`runtime.cli`; `serve`, `worker` and `admin` in `server.cli`. Those are imported only when their
command runs, so the language works without the runtime or the server installed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: command -> "module" that defines `register(subparsers)`; each registered parser sets
#: `handler` (a function from the parsed arguments to an exit code).
COMMAND_MODULES: dict[str, str] = {
    "check": "inspectlang.commands",
    "compile": "inspectlang.commands",
    "decompile": "inspectlang.commands",
    "fmt": "inspectlang.commands",
    "lsp": "inspectlang.lsp.command",
    "simulate": "runtime.cli",
    "serve": "server.cli",
    "worker": "server.cli",
    "admin": "server.cli",
    "outbox": "server.cli",
}


def build_parser(command: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inspectlang",
        description="Template language, rules engine and service for inspections.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = sorted(set(COMMAND_MODULES.values()))
    if command in COMMAND_MODULES:
        modules = [COMMAND_MODULES[command]]
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            if command in COMMAND_MODULES:
                raise
            continue  # an optional part that is not installed: its commands are not listed
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if not a.startswith("-")), None)
    parser = build_parser(command)
    args = parser.parse_args(args_list)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return int(handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
