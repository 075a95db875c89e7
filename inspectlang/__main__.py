"""`python -m inspectlang ...`: the language's commands (check, compile, decompile, fmt, lsp); the
whole program, with `simulate`, `serve` and the rest, is `python -m server` (`server.main`)."""

import sys

from inspectlang.cli import main

if __name__ == "__main__":
    sys.exit(main())
