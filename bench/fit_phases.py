"""Run the command line in this process with its phases logged: the child side of
bench/calibration_speed.py and bench/interrupt_latency.py.

    python fit_phases.py LOG -- fit small.csv --epsilon 1 --out m ...

Every binding of the functions below (in the module that defines them and in every module that
imported them by name, or the class that holds them) is wrapped so that entering and leaving it
appends `seconds enter|exit PHASE NAME` to LOG (seconds since this process started, flushed at
once). Only the outermost call of a phase is logged, so a calibration's nested searches count once.
The wrappers add a few microseconds per call; nothing else in dpgan changes.
"""

from __future__ import annotations

import faulthandler
import functools
import importlib
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

START = time.monotonic()

# phase → (module, attribute or Class.method) pairs; every σ or share search a fit can make
PHASES: dict[str, list[tuple[str, str]]] = {
    "calibration": [
        ("dpgan.privacy.calibration", "calibrate_noise_multiplier"),
        ("dpgan.privacy.calibration", "max_steps"),
        ("dpgan.privacy.calibration", "sigma_and_steps"),
        ("dpgan.privacy.calibration", "analytic_gaussian_sigma"),
        ("dpgan.privacy.preprocessing", "plan_preprocessing"),
        ("dpgan.privacy.feature_release", "calibrate_feature_release"),
    ],
    "accounting": [("dpgan.privacy.accounting", "epsilon_of")],
    "releases": [("dpgan.model", "release_plugins"), ("dpgan.tables.fit.kind", "TableKind.release_data")],
    "training": [("dpgan.training.dp_critic", "train_dp_critic")],
    "save": [("dpgan.serialization", "write_model_dir")],
    "report": [("dpgan.privacy.accounting", "PrivacyLedger.report")],
    "sample": [
        ("dpgan.synthesizers.tabular", "TabularSynthesizer.sample"),
        ("dpgan.synthesizers.tabular", "TabularSynthesizer.sample_to"),
    ],
    "write": [("dpgan.tables.reading.table_io", "write_table"), ("dpgan.tables.reading.table_io", "write_chunks")],
}


def _logger(path: str) -> Callable[[str, str, str], None]:
    handle = open(path, "a", buffering=1)  # noqa: SIM115 (open for the life of the process)

    def log(event: str, phase: str, name: str) -> None:
        handle.write(f"{time.monotonic() - START:.4f} {event} {phase} {name}\n")

    return log


def _wrap(original: Callable[..., Any], phase: str, name: str, log: Callable[[str, str, str], None], depth: dict):
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        outer = depth.get(phase, 0) == 0
        depth[phase] = depth.get(phase, 0) + 1
        if outer:
            log("enter", phase, name)
        try:
            return original(*args, **kwargs)
        finally:
            depth[phase] -= 1
            if outer:
                log("exit", phase, name)

    return wrapper


def install(path: str) -> None:
    """Wrap every phase's functions wherever they are bound (missing ones are skipped)."""
    log, depth = _logger(path), {}
    for phase, targets in PHASES.items():
        for module_name, attribute in targets:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            owner_name, _, method = attribute.rpartition(".")
            owner = getattr(module, owner_name) if owner_name else module
            original = getattr(owner, method, None)
            if original is None:
                continue
            wrapped = _wrap(original, phase, attribute, log, depth)
            setattr(owner, method, wrapped)
            if owner_name:
                continue
            for other in list(sys.modules.values()):  # `from module import name` bindings
                if other is not None and other is not module and getattr(other, method, None) is original:
                    setattr(other, method, wrapped)


def main() -> int:
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # where a slow interrupt is stuck (stderr)
    log_path, separator, *argv = sys.argv[1:]
    assert separator == "--", "usage: fit_phases.py LOG -- dpgan arguments"
    import dpgan.synthesizers  # noqa: F401 (load the modules whose bindings are wrapped)
    import dpgan.tables.fit.kind  # noqa: F401
    import dpgan.training.strategies  # noqa: F401
    from dpgan.cli.app import main as dpgan_main

    install(log_path)
    _logger(log_path)("enter", "process", "main")
    return dpgan_main(argv)


if __name__ == "__main__":
    sys.exit(main())
