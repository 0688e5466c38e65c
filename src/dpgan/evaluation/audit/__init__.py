"""Privacy audit: an empirical lower bound on ε, to set next to the ε dpgan claims.

`audit_model(MODEL_DIR)` audits a saved model's configuration (its settings only: the audit never
reads private data, nor the model's weights); `audit_config(epsilon=...)` audits a configuration
that was never fitted. Three modes:
- "step" (default): white-box canary gradients through the real private step (Jagielski et al.
  2020; Clopper–Pearson bound), many independent trials (`whitebox.audit_critic_step`; dtgan-g:
  its clip-and-noise hook, `whitebox.audit_generator_hook`);
- "one-run": Steinke, Nasr and Jagielski's (2023) audit of one run of the configuration's whole
  schedule of critic steps with many canaries (`whitebox.audit_one_run`);
- "black-box": a membership canary seen only through released generators of small runs
  (`blackbox.audit_black_box`); weak by nature, it usually certifies ε_lb ≈ 0.
`ablate="noise"` or `"clipping"` switches noise or clipping off in the audited step while the claim
keeps the configured σ: a control that shows the audit can fail.

Kinds: table models in every mode; sequence and image models (the DP-critic recipes: every image
recipe but the noise-layer ones, which have no DP-SGD critic step) in the step mode, with a canary
through their own critic (an LSTM or MLP over series, a conv or MLP over images;
dpgan.evaluation.audit.units). Anything else is refused in one line that names what is audited.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

from dpgan.errors import InputError
from dpgan.evaluation.audit.experiment import ABLATIONS
from dpgan.evaluation.audit.result import AuditResult
from dpgan.evaluation.audit.target import AuditTarget, from_model_dir, from_settings
from dpgan.evaluation.audit.whitebox import audit_critic_step, audit_generator_hook, audit_one_run
from dpgan.tables.schema.table import Schema

MODES = ("step", "one-run", "black-box")
DEFAULT_TRIALS = {"step": 10_000, "black-box": 30}
MAX_TRIALS = {"step": 1_000_000, "black-box": 2_000}
MIN_TRIALS = 10
MAX_STEP_CALLS = 20_000_000  # trials × steps × 2 worlds: beyond this a run takes days
DEFAULT_CONFIDENCE = 0.95

__all__ = ["ABLATIONS", "MODES", "AuditResult", "AuditTarget", "audit_config", "audit_model", "run_audit"]


def audit_model(path: str | Path, **options) -> AuditResult:
    """Audit the configuration of the saved model at `path` (see `run_audit` for the options)."""
    return run_audit(from_model_dir(path), **options)


def audit_config(
    *,
    epsilon: float,
    delta: float = 1e-5,
    recipe: str = "dp-gan",
    rows: int = 32561,
    batch_size: int | None = None,
    epochs: float | None = None,
    schema: Schema | str | Path | None = None,
    accountant: str = "pld",
    **options,
) -> AuditResult:
    """Audit a configuration that was never fitted; σ is calibrated by dpgan's accountant."""
    if isinstance(schema, (str, Path)):
        schema = Schema.from_json(schema)
    target = from_settings(
        epsilon=epsilon,
        delta=delta,
        recipe=recipe,
        rows=rows,
        batch_size=batch_size,
        epochs=epochs,
        schema=schema,
        accountant=accountant,
    )
    return run_audit(target, **options)


def run_audit(
    target: AuditTarget,
    *,
    mode: str = "step",
    trials: int | None = None,
    steps: int | None = None,
    sample_rate: float | None = None,
    ablate: str | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> AuditResult:
    """Run one audit of `target` and return its record.

    `trials`: independent trials per world (step: default 10,000; black-box: default 30 trainings);
    the one-run mode has a single trial. `steps`: private steps per trial (step: default 1;
    one-run: default the configuration's T). `sample_rate`: Poisson rate of the audited steps
    (step: default 1, the canary in every batch, which gives the audit its power; one-run: default
    the configuration's q). `confidence` = 1 − α of the bound.
    """
    _check_options(target, mode, trials, steps, sample_rate, ablate, confidence, seed)
    alpha = 1.0 - confidence
    started = time.perf_counter()
    on_generator = target.recipe.dp_on == "generator"
    if mode == "step":
        trials = DEFAULT_TRIALS["step"] if trials is None else trials
        options = {"trials": trials, "steps": steps or 1, "ablate": ablate, "alpha": alpha, "seed": seed}
        if on_generator:
            audit = audit_generator_hook(target, progress=progress, **options)
        else:
            audit = audit_critic_step(target, sample_rate=sample_rate or 1.0, progress=progress, **options)
    elif mode == "one-run":
        audit = audit_one_run(
            target, steps=steps, sample_rate=sample_rate, ablate=ablate, alpha=alpha, seed=seed, progress=progress
        )
    else:
        from dpgan.evaluation.audit.blackbox import audit_black_box

        trials = DEFAULT_TRIALS["black-box"] if trials is None else trials
        audit = audit_black_box(target, trials=trials, ablate=ablate, alpha=alpha, seed=seed, progress=progress)
    result = AuditResult(
        mode=mode,
        recipe=target.recipe.name,
        source=target.source,
        audited=audit.audited,
        epsilon_claimed=audit.epsilon_claimed,
        epsilon_lower_bound=audit.epsilon_lower_bound,
        confidence=confidence,
        delta=target.delta,
        ceiling=audit.ceiling,
        trials=audit.trials,
        steps=audit.steps,
        sample_rate=audit.sample_rate,
        noise_multiplier=target.noise_multiplier,
        max_grad_norm=target.config.max_grad_norm,
        model_epsilon=target.epsilon,
        ablate=ablate,
        seconds=time.perf_counter() - started,
        details=audit.details,
    )
    result.notes = _notes(result, target)
    return result


def _notes(result: AuditResult, target: AuditTarget) -> list[str]:
    notes = []
    if result.ablate == "noise":
        notes.append(
            "negative control: the audited step ran WITHOUT noise (σ = 0) while the claim keeps the configured σ; "
            "the bound is expected to exceed the claim"
        )
    elif result.ablate == "clipping":
        notes.append(
            "negative control: the audited step ran WITHOUT clipping (C → 10⁶·C, same noise std) while the claim "
            "keeps σ; the bound is expected to exceed the claim"
        )
    if result.epsilon_claimed >= result.ceiling:
        notes.append(
            f"the claim ({result.epsilon_claimed:.2f}) is at or above the largest bound these trials can certify "
            f"({result.ceiling:.2f}): this audit cannot refute it; use more trials or canaries"
        )
    if result.mode == "black-box":
        notes.append(
            "black-box audits of released generators are weak (a GAN rarely reproduces one training record, and "
            "each trial is a training run): ε_lb ≈ 0 is the usual outcome and says only that this attack found nothing"
        )
    if result.mode == "step" and target.recipe.dp_on == "generator":
        notes.append(
            "dtgan-g: the hook is fed the worst case its analysis allows (every row's gradient flipped by one record "
            "through its shard's critic); the shard amplification of the full run (q = 1/N_d) is not audited"
        )
    if target.config.microbatches and result.mode != "black-box":
        notes.append(
            "microbatches: the step adds noise 2σC for sensitivity 2C; a canary in its own column moves the sum by "
            "about C only, so the audit checks the noise and clipping, not that the factor 2 is needed"
        )
    if result.mode in ("step", "one-run") and result.sample_rate == 1.0 and result.steps < target.steps:
        notes.append(
            f"audited {result.steps} step(s) with the canary in every batch; the whole training ran {target.steps} "
            f"steps at q = {target.sample_rate:.4g} (its ε composes those steps, each amplified by Poisson sampling)"
        )
    return notes


def _check_options(
    target: AuditTarget,
    mode: str,
    trials: int | None,
    steps: int | None,
    sample_rate: float | None,
    ablate: str | None,
    confidence: float,
    seed: int,
) -> None:
    """One clear InputError for every option that cannot run, before any work is done."""
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if ablate is not None and ablate not in ABLATIONS:
        raise InputError(f"ablate must be one of {', '.join(ABLATIONS)}, not {ablate!r}")
    if not (isinstance(confidence, float) and 0.5 <= confidence < 1.0):
        raise InputError(f"confidence must be a number in [0.5, 1), not {confidence!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, not {seed!r}")
    if trials is not None:
        if mode == "one-run":
            raise InputError("the one-run audit has a single trial: use --steps or the canaries, not --trials")
        if isinstance(trials, bool) or not isinstance(trials, int) or not MIN_TRIALS <= trials <= MAX_TRIALS[mode]:
            raise InputError(f"trials must be an integer from {MIN_TRIALS} to {MAX_TRIALS[mode]:,} for mode {mode}")
    if steps is not None:
        if mode == "black-box":
            raise InputError("the black-box audit runs fixed small trainings: --steps does not apply")
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise InputError(f"steps must be a positive integer, not {steps!r}")
        if mode == "step" and 2 * (trials or DEFAULT_TRIALS["step"]) * steps > MAX_STEP_CALLS:
            raise InputError(f"trials × steps is too large (at most {MAX_STEP_CALLS // 2:,})")
        if mode == "one-run" and steps > MAX_STEP_CALLS:
            raise InputError(f"steps must be at most {MAX_STEP_CALLS:,}")
    if sample_rate is not None:
        if mode == "black-box" or target.recipe.dp_on == "generator":
            raise InputError("--sample-rate applies to the step and one-run audits of critic recipes")
        if not (isinstance(sample_rate, (int, float)) and math.isfinite(sample_rate) and 0 < sample_rate <= 1):
            raise InputError(f"sample rate must be in (0, 1], not {sample_rate!r}")
    if mode != "step" and target.units is not None:
        raise InputError(
            f"--mode {mode} audits table models; a {target.kind} model is audited in --mode step (its critic's step)"
        )
    if mode == "one-run" and target.recipe.dp_on == "generator":
        raise InputError("the one-run audit puts canaries through the critic step: dtgan-g has none (use --mode step)")
