"""`inspectlang lsp`: start the Language Server on standard input and output."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    lsp = subparsers.add_parser(
        "lsp", help="run the Language Server for .insp files over stdio (for editors)"
    )
    lsp.set_defaults(handler=run_lsp)


def run_lsp(args: argparse.Namespace) -> int:
    try:
        from inspectlang.lsp.server import main
    except ImportError as error:  # pygls is the optional `lsp` extra
        print(
            f"inspectlang lsp needs pygls ({error.name} is not installed): "
            "pip install 'inspectlang[lsp]'",
            file=sys.stderr,
        )
        return 2
    return main()
