"""`python -m inspectlang ...`: the `inspectlang` command, for environments without its script."""

import sys

from inspectlang.cli import main

if __name__ == "__main__":
    sys.exit(main())
