"""The `inspectlang` command's machinery and the language's own subcommands.

Each package registers its subcommands with a `register(subparsers)` function; the program is
composed where every package may be named, at the top layer: `server.main` (the `inspectlang`
script, `python -m server`) adds the runtime's `simulate` and the server's `serve`, `worker`,
`admin` and `outbox` to the language's commands below. `python -m inspectlang` runs the
language's commands alone, so the language works without the runtime or the server. A command's
module is imported only when that command runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: Adds one package's subcommands to the parser; each registered parser sets `handler` (a
#: function from the parsed arguments to an exit code).
Registration = Callable[[Any], None]


def _language(subparsers: Any) -> None:
    from inspectlang import commands

    commands.register(subparsers)


def _language_server(subparsers: Any) -> None:
    from inspectlang.lsp import command

    command.register(subparsers)


#: The language's commands: command -> its registration.
LANGUAGE_COMMANDS: dict[str, Registration] = {
    "check": _language,
    "compile": _language,
    "decompile": _language,
    "fmt": _language,
    "lsp": _language_server,
}


def build_parser(
    command: str | None, commands: Mapping[str, Registration] = LANGUAGE_COMMANDS
) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inspectlang",
        description="Template language, rules engine and service for inspections.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = commands.get(command) if command is not None else None
    registrations = [chosen] if chosen is not None else list(dict.fromkeys(commands.values()))
    for register in registrations:
        register(subparsers)
    return parser


def main(
    argv: Sequence[str] | None = None, commands: Mapping[str, Registration] = LANGUAGE_COMMANDS
) -> int:
    """Run one subcommand of `commands` (the language's own by default); its exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if not a.startswith("-")), None)
    parser = build_parser(command, commands)
    args = parser.parse_args(args_list)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        code = int(handler(args))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`inspectlang simulate ... | head`): stop quietly, as `cat` does.
        # Python would otherwise report the pipe again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a program the pipe stopped
    return code


if __name__ == "__main__":
    raise SystemExit(main())
