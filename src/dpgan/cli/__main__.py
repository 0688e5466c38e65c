"""`python -m dpgan.cli ...`: the same command line as the `dpgan` script."""

from __future__ import annotations

import sys

from dpgan.cli.app import main

if __name__ == "__main__":
    sys.exit(main())
