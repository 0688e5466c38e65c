"""Command line: a thin layer over the library. Errors print one line on stderr, no traceback.

Every argument is checked before PyTorch, pandas or the data are loaded, and a model's destination
before any private row is read: a typo costs a second, not a wasted fit and its budget.

- app.py: the entry point (`main`), the thread policy and the one-line errors;
- parser.py: every command and its options; options.py: the option groups commands share;
- arguments.py: the flags' checks and parsers; output.py: progress bars and printed numbers;
- fit.py (`fit`, `schema`), evaluate.py (`evaluate`, `audit`), commands.py (`sample`, `inspect`,
  `privacy`): each hands the command to the data kind's registration (dpgan.kinds), whose own
  commands and fit flags are in tables.py, series.py and images.py; demo.py (`demo`, the tables').

Nothing outside this package imports it (tests/test_import_rules.py), so the library and the
evaluation never depend on the command line.
"""

from __future__ import annotations

from dpgan.cli.app import main
from dpgan.cli.parser import build_parser

__all__ = ["build_parser", "main"]
