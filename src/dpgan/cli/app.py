"""The entry point: parse, run the command under the thread policy, and turn every error into one
line on stderr with a non-zero exit (no traceback, no exception text that could quote data)."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Sequence

from dpgan.cli.parser import build_parser
from dpgan.errors import DPGanError, DPGanWarning
from dpgan.threads import describe_threads, fit_threads, resolve_threads


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """dpgan's own warnings as one line each on stderr; other libraries' warnings are not the user's concern."""
    if issubclass(category, DPGanWarning):
        print(f"dpgan: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error already printed as one line
        return int(exit_.code or 0)
    try:
        computes = hasattr(args, "threads")  # the commands that train, sample, evaluate or audit
        threads = resolve_threads(args.threads) if computes else 1
        with warnings.catch_warnings(), fit_threads(threads) if computes else contextlib.nullcontext(1) as started:
            if getattr(args, "verbose", False):
                print(describe_threads(threads, started), file=sys.stderr)
            warnings.showwarning = show_warning
            warnings.simplefilter("default", DPGanWarning)
            return int(args.func(args))
    except DPGanError as exc:
        print(f"dpgan: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpgan: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # last resort: one line, no traceback, no exception text (it may quote data)
        if os.environ.get("DPGAN_DEBUG"):
            raise
        print(f"dpgan: error: unexpected {type(exc).__name__} (DPGAN_DEBUG=1 shows where)", file=sys.stderr)
        return 1
