"""How many CPU threads a fit's PyTorch and NumPy use: the cores other jobs leave free, re-read as
the fit runs, unless the user fixes the number.

Why not torch's default (one thread per core). dpgan's networks are small (a few 128-wide layers;
the image critic's convolutions on 8×8 to 28×28 images), so an intra-op thread has little work per
operation and mostly waits at the next barrier. When another process holds a core, every barrier
waits for a descheduled thread: the default Adult fit ran at 1.39 s per step on two threads of a
2-core machine at load 3.5–5 and 0.083 s on one (a 31-minute demo instead of 72 s). On an idle
machine the second thread does help (about 1.15× per step, 1.3× on the whole demo: bench/threads.py,
bench/results/threads.md). So the default ("auto") uses the cores that other processes leave idle:

- before the fit, and then every RECHECK_SECONDS from the training loops' step callbacks
  (`recheck`), it reads the machine's busy time (/proc/stat) minus this process's own
  (/proc/self/stat) over the last interval: the cores other jobs use;
- it sets torch's intra-op threads to the free cores, rounded, at least 1 and at most AUTO_CAP
  (measured gains stop at 2 cores here; more is not measured). A job that starts on the other core
  halfway through a fit moves it to one thread within RECHECK_SECONDS.
Where /proc is not there (macOS, Windows) auto means AUTO_FALLBACK threads.

A fixed number (`threads=`, `--threads N`, `DPGAN_THREADS=N`) is used as given. The setting is
process state (torch.set_num_threads, BLAS pools via threadpoolctl), so a fit sets it on entry and
restores the caller's on exit (`fit_threads`). It changes speed only: the numbers a seeded fit
draws are the same, and its results equal up to the floating-point order of a reduction split
across threads.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from dpgan.errors import InputError

ENVIRONMENT = "DPGAN_THREADS"
AUTO = "auto"
MAX_THREADS = 1024
AUTO_CAP = 4
AUTO_FALLBACK = 1
RECHECK_SECONDS = 2.0
FIRST_SAMPLE_SECONDS = 0.2


def resolve_threads(threads: int | str | None) -> int | None:
    """The thread count a fit uses: `threads` if given, else $DPGAN_THREADS, else None (auto:
    the free cores, re-read as the fit runs). "auto" is accepted in both places."""
    source = "threads"
    if threads is None:
        threads = os.environ.get(ENVIRONMENT, "").strip() or AUTO
        source = ENVIRONMENT
    if isinstance(threads, str):
        if threads.strip().lower() == AUTO:
            return None
        try:
            threads = int(threads)
        except ValueError:
            raise InputError(f"{source} must be 'auto' or a whole number from 1 to {MAX_THREADS}") from None
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise InputError(f"{source} must be 'auto' or a whole number from 1 to {MAX_THREADS}")
    return threads


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class FreeCores:
    """The cores other processes leave idle, from /proc/stat (all CPUs' busy and total ticks) and
    /proc/self/stat (this process's own user and system ticks), over the interval since the last
    reading."""

    def __init__(self) -> None:
        self.cores = _cores()
        self.last = self._read()

    @staticmethod
    def _read() -> tuple[float, float, float] | None:
        try:
            fields = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
            own = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, ValueError, IndexError):
            return None
        total = sum(fields[:8])  # user nice system idle iowait irq softirq steal
        busy = total - fields[3] - fields[4]
        return busy, total, float(own[11]) + float(own[12])  # utime, stime (fields 14, 15)

    @property
    def available(self) -> bool:
        return self.last is not None

    def free(self) -> float | None:
        """Free cores since the last reading (None without /proc, or when no time has passed)."""
        now = self._read()
        if now is None or self.last is None:
            return None
        busy, total, own = (a - b for a, b in zip(now, self.last))
        self.last = now
        if total <= 0:
            return None
        per_core = total / (os.cpu_count() or 1)  # /proc/stat sums every CPU: the ticks of one core
        others = max(busy - own, 0.0) / per_core
        return max(self.cores - others, 0.0)


class Governor:
    """Auto threads: the free cores, rounded, in [1, AUTO_CAP], re-read every RECHECK_SECONDS."""

    def __init__(self, meter: FreeCores | None = None, clock=time.monotonic) -> None:
        self.meter = meter if meter is not None else FreeCores()
        self.clock = clock  # tests inject both
        self.threads = AUTO_FALLBACK
        self.next_check = 0.0
        self.changes = 0

    def start(self) -> int:
        if self.meter.available:
            time.sleep(FIRST_SAMPLE_SECONDS)  # this process is idle now: the busy time is others'
            self.threads = self._choose(self.meter.free())
        self.next_check = self.clock() + RECHECK_SECONDS
        return self.threads

    def _choose(self, free: float | None) -> int:
        if free is None:
            return self.threads
        return int(min(max(round(free), 1), AUTO_CAP, self.meter.cores))

    def recheck(self) -> None:
        now = self.clock()
        if now < self.next_check or not self.meter.available:
            return
        self.next_check = now + RECHECK_SECONDS
        chosen = self._choose(self.meter.free())
        if chosen != self.threads:
            import torch

            torch.set_num_threads(chosen)
            self.threads, self.changes = chosen, self.changes + 1


_current: Governor | None = None


def recheck() -> None:
    """Called by the training loops after each step: an auto fit re-reads the free cores at most
    every RECHECK_SECONDS (a clock read otherwise); a fixed setting does nothing."""
    if _current is not None:
        _current.recheck()


# read by OpenMP, MKL and OpenBLAS when they load: how a process that has not imported PyTorch yet
# (the CLI, which checks its arguments first) gets its thread count
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@contextlib.contextmanager
def fit_threads(threads: int | None) -> Iterator[int]:
    """Run the body with `threads` intra-op threads for PyTorch and the BLAS pools (None: auto,
    module docstring), then restore the caller's. Yields the starting count.

    With PyTorch loaded, torch.set_num_threads and threadpoolctl set it. Without (the command line
    loads PyTorch only after its arguments are checked), the thread variables of OpenMP, MKL and
    OpenBLAS are set for the body instead, which those libraries read when they load, and restored
    after it."""
    global _current
    outer = _current
    governor = Governor() if threads is None else None
    count = governor.start() if governor is not None else int(threads)  # type: ignore[arg-type]
    _current = governor
    if "torch" not in sys.modules:
        saved = {name: os.environ.get(name) for name in _THREAD_VARIABLES}
        os.environ.update({name: str(count) for name in _THREAD_VARIABLES})
        try:
            yield count
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            _current = outer
        return
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        with threadpool_limits(limits=count):
            yield count
    finally:
        torch.set_num_threads(before)
        _current = outer


def describe_threads(threads: int | None, started: int) -> str:
    """One line for --verbose: what was chosen and how to change it."""
    if threads is None:
        return (
            f"CPU threads: auto, {started} now (the cores other jobs leave free, re-read every "
            f"{RECHECK_SECONDS:g} s; --threads N or {ENVIRONMENT}=N fixes it, and makes seeded reruns "
            "bit-identical: a different count may round differently)"
        )
    return f"CPU threads: {threads} (fixed; --threads auto or unset {ENVIRONMENT} to follow the free cores)"


__all__ = [
    "AUTO",
    "ENVIRONMENT",
    "FreeCores",
    "Governor",
    "describe_threads",
    "fit_threads",
    "recheck",
    "resolve_threads",
]
