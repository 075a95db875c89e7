"""`python -m server ...`: the whole `inspectlang` program, for environments without its script."""

import sys

from server.main import main

if __name__ == "__main__":
    sys.exit(main())
