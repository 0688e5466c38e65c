"""How many CPU threads a fit's PyTorch and NumPy use: one by default, more only when asked.

Why one. dpgan's networks are small (a few 128-wide layers; the image critic's convolutions on
8×8 to 28×28 images), so an intra-op thread has little work per operation and mostly waits at the
next barrier. When another process holds a core, every barrier waits for a descheduled thread:
the default Adult fit ran at 1.39 s per step on two threads of a loaded 2-core machine and 0.083 s
on one (a 31-minute demo instead of 72 s). bench/threads.py measures the choice on idle and loaded
machines (bench/results/threads.md); a user with a quiet many-core machine and a large image fit may
ask for more (`threads=`, `--threads`, or `DPGAN_THREADS`).

The setting is process state (torch.set_num_threads, BLAS pools via threadpoolctl), so a fit sets
it on entry and restores the caller's on exit (`fit_threads`): a notebook that asked for 8 threads
gets them back after the fit. It changes speed only: the numbers a seeded fit draws and computes
are the same, up to the floating-point order of a reduction split across threads.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import torch

from dpgan.errors import InputError

ENVIRONMENT = "DPGAN_THREADS"
DEFAULT_THREADS = 1
MAX_THREADS = 1024


def resolve_threads(threads: int | None) -> int:
    """The thread count a fit uses: `threads` if given, else $DPGAN_THREADS, else DEFAULT_THREADS."""
    source = "threads"
    if threads is None:
        text = os.environ.get(ENVIRONMENT, "").strip()
        if not text:
            return DEFAULT_THREADS
        source = ENVIRONMENT
        try:
            threads = int(text)
        except ValueError:
            raise InputError(f"{ENVIRONMENT} must be a whole number from 1 to {MAX_THREADS}") from None
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise InputError(f"{source} must be a whole number from 1 to {MAX_THREADS}")
    return threads


@contextlib.contextmanager
def fit_threads(threads: int) -> Iterator[None]:
    """Run the body with `threads` intra-op threads for PyTorch and the BLAS pools, then restore."""
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads):
            yield
    finally:
        torch.set_num_threads(before)


def describe_threads(threads: int) -> str:
    """One line for --verbose: what was chosen and how to change it."""
    return (
        f"CPU threads: {threads} (torch and BLAS; --threads N or {ENVIRONMENT}=N to change; "
        f"default {DEFAULT_THREADS}: small networks thrash on more when the machine is busy)"
    )


__all__ = ["DEFAULT_THREADS", "ENVIRONMENT", "describe_threads", "fit_threads", "resolve_threads"]
