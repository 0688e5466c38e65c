"""Black-box audit: a membership canary seen only through released generators.

The auditor trains the recipe's real training loop (`train_dp_critic`, or `train_dp_generator` for
dtgan-g) many times on a small table of public random rows, half of the runs with one extra
record, the canary (an outlier: every numeric position at the top of its bin). It sees only each
released generator and scores it by how close its samples come to the canary (minus the mean
distance of the nearest samples, in the encoded space). Threshold on half of the runs,
Clopper–Pearson bound on the other half; the claim is dpgan's accountant for the run (T steps at
σ, Poisson at q = B/N).

This is what an outsider holding a released model can check, and it is weak: a GAN rarely puts
samples on one training record, and each run costs a training, so the number of trials (and with
it the largest certifiable ε, about log(R/3.69)) stays small. Expect ε_lb ≈ 0 even for generous
budgets; that says the attack found nothing, not that the claim is tight.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import torch

from dpgan.evaluation.audit.experiment import Audit, ablated, claimed_epsilon, score_worlds, two_world_audit
from dpgan.evaluation.audit.target import AuditTarget, public_rows
from dpgan.models.output_spans import TANH
from dpgan.privacy.accounting import ONE_OF_SHARDS, POISSON, PrivacyLedger
from dpgan.training.dp_critic import train_dp_critic
from dpgan.training.dp_generator import train_dp_generator

BLACK_BOX_ROWS = 64  # the small table the runs are trained on
BLACK_BOX_BATCH = 32
BLACK_BOX_STEPS = 60
SAMPLES = 500  # generated rows per released generator
NEAREST = 5  # the score averages the distances of this many nearest samples
Progress = Callable[[int, int], None]


def _canary(target: AuditTarget, rng: np.random.Generator) -> torch.Tensor:
    """A public row pushed to the edge of the domain: every numeric position at +1."""
    encoder = target.encoder()
    row = torch.from_numpy(encoder.encode(public_rows(target.schema, 1, rng)))
    for span in encoder.spans:
        if span.activation == TANH:
            row[0, span.start] = 1.0
    return row


def _release(
    target: AuditTarget,
    data: torch.Tensor,
    *,
    sample_rate: float,
    sigma: float,
    clip: float,
    steps: int,
    generator: torch.Generator,
):
    """Train the recipe's loop once on `data` (`steps` private steps at rate `sample_rate`, the same
    in both worlds) and return the released generator."""
    config = replace(
        target.config,
        batch_size=BLACK_BOX_BATCH,
        max_grad_norm=clip,
        n_critic=min(target.config.n_critic, 2),
    )
    encoder = target.encoder()
    if target.recipe.dp_on == "generator":
        result = train_dp_generator(
            data,
            encoder.spans,
            config,
            noise_multiplier=sigma,
            steps=steps,
            generator=generator,
            shard_key=bytes(torch.randint(256, (32,), generator=generator).tolist()),
            ledger=PrivacyLedger() if sigma > 0 else None,  # the audit's own runs, on public rows
            condition=target.condition,
        )
    else:
        result = train_dp_critic(
            data,
            encoder.spans,
            config,
            sample_rate=sample_rate,
            expected_batch_size=float(BLACK_BOX_BATCH),
            noise_multiplier=sigma,
            steps=steps,
            generator=generator,
            ledger=PrivacyLedger() if sigma > 0 else None,
            condition=target.condition,
        )
    return result.generator


def _score(target: AuditTarget, generator_net, canary: torch.Tensor, generator: torch.Generator) -> float:
    """Minus the mean distance from the canary to its nearest generated rows (higher: "IN")."""
    z = torch.randn(SAMPLES, target.config.noise_dim, generator=generator)
    onehot = None
    if target.condition is not None:
        onehot = target.condition.one_hot(target.condition.draw(SAMPLES, generator))
    with torch.no_grad():
        rows = generator_net.sample_encoded(z, onehot)
    distances = (rows - canary).norm(dim=1)
    return -float(distances.topk(NEAREST, largest=False).values.mean())


def audit_black_box(
    target: AuditTarget,
    *,
    trials: int,
    rows: int = BLACK_BOX_ROWS,
    steps: int = BLACK_BOX_STEPS,
    ablate: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    progress: Progress | None = None,
) -> Audit:
    """ε_lb from `trials` released generators per world: trained on `rows` public rows (OUT) or on
    them and the canary (IN), `steps` private steps each."""
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
    encoder = target.encoder()
    table = torch.from_numpy(encoder.encode(public_rows(target.schema, rows, rng)))
    canary = _canary(target, rng)
    sigma, clip = ablated(target.noise_multiplier, target.config.max_grad_norm, ablate)
    on_generator = target.recipe.dp_on == "generator"
    # q is a public constant of the mechanism, the same in both worlds (B over the OUT table's size)
    sample_rate = 1.0 / target.config.num_discriminators if on_generator else min(1.0, BLACK_BOX_BATCH / rows)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)  # network initialisation, reproducible and private to the audit

        def scorer_for(world: str) -> Callable[[], float]:
            data = table if world == "out" else torch.cat([table, canary])

            def score() -> float:
                released = _release(
                    target, data, sample_rate=sample_rate, sigma=sigma, clip=clip, steps=steps, generator=generator
                )
                return _score(target, released, canary, generator)

            return score

        scores = score_worlds(trials, scorer_for, progress, every=1)
    sampling = ONE_OF_SHARDS if on_generator else POISSON
    return two_world_audit(
        scores,
        audited=(
            f"released generators of {steps}-step {target.recipe.name} runs on {rows} public random rows "
            f"(B = {BLACK_BOX_BATCH}) with / without an outlier canary, scored by the distance of their "
            f"{SAMPLES} samples to it (black box)"
        ),
        epsilon_claimed=claimed_epsilon(target.noise_multiplier, sample_rate, steps, target.delta, sampling),
        delta=target.delta,
        alpha=alpha,
        seed=seed,
        steps=steps,
        sample_rate=sample_rate,
        details={
            "mean_score": {"out": float(scores["out"].mean()), "in": float(scores["in"].mean())},
            "run_noise_multiplier": sigma,
            "run_max_grad_norm": clip,
        },
    )
