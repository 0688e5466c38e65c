"""The privacy ledger a default fit on UCI Adult (bundled schema) writes before its GAN steps, without training.

Mirrors the fit's budget plan (dpgan.tables.fit.run.fit_table): the same functions
(plan_preprocessing, build the condition's DP prior, calibrate each DP-SGD classifier and the
marginals to their cumulative share of ε) with the same settings, at N = 32,561 rows (the fit
uses a noisy count, within a few rows).
Used by the accounting benches; nothing here reads the data.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpgan import Schema, datasets
from dpgan.privacy.accounting import LedgerEntry
from dpgan.privacy.calibration import FitBudget
from dpgan.tables.fit.preparation import REPAIR_EVENT, preprocessing_events

try:
    from dpgan.privacy.calibration import calibrate_noise_multiplier
except ImportError:  # timing the code before calibration had its own module (bench/calibration_time.py)
    from dpgan.privacy.accounting import calibrate_noise_multiplier  # type: ignore[attr-defined,no-redef]
from dpgan.privacy.preprocessing import REPAIR_COUNT_SCALE, ROW_COUNT_SCALE, plan_preprocessing
from dpgan.recipes import get_recipe
from dpgan.statistics.tables.marginals import MARGINALS_EVENT, MarginalAnchor
from dpgan.tables.codec.encoder import TableEncoder, public_dtypes
from dpgan.tables.settings import TableSettings
from dpgan.training.config import TrainingConfig
from dpgan.training.schedule import epochs_schedule, gan_schedule_for

ADULT_ROWS = 32_561


@dataclass(frozen=True)
class GanPlan:
    """What _fit hands to calibrate_noise_multiplier for the GAN: the prior and the step template."""

    prior: tuple[LedgerEntry, ...]
    sample_rate: float
    steps: int
    sampling: str

    def sigma(self, epsilon: float, delta: float = 1e-5, accountant: str = "pld") -> float:
        """The GAN's σ as _fit calibrates it: prior + T steps land on (ε, δ)."""
        return calibrate_noise_multiplier(
            sample_rate=self.sample_rate,
            steps=self.steps,
            epsilon=epsilon,
            delta=delta,
            accountant=accountant,
            prior=self.prior,
            sampling=self.sampling,
        )


def adult_gan_plan(recipe: str, epsilon: float, accountant: str, delta: float = 1e-5) -> GanPlan:
    """Ledger entries before the GAN and the GAN's (q, T, sampling) for a default fit of `recipe`."""
    cfg = TrainingConfig(**get_recipe(recipe).overrides)
    table = TableSettings(**get_recipe(recipe).plugins)
    schema = Schema.from_json(datasets.adult_schema_path())
    rows = ADULT_ROWS
    conditional = get_recipe(recipe).conditional
    condition = schema.target if conditional else None
    needs_prior = condition is not None and not schema[condition].frequencies
    fraction = 0.01  # schema given: _fit's default preprocessing share
    events = preprocessing_events(
        len(schema.columns), infer=False, has_target=False, count_repairs=True, needs_prior=needs_prior
    )
    plan = plan_preprocessing(budget=FitBudget(epsilon, delta, accountant), fraction=fraction, events=events)
    prior: list[LedgerEntry] = [
        LedgerEntry("row count", plan.sigma(ROW_COUNT_SCALE)),
        LedgerEntry(REPAIR_EVENT, plan.sigma(REPAIR_COUNT_SCALE)),
    ]
    if needs_prior:
        prior.append(LedgerEntry(f"condition frequencies ({condition})", plan.noise_multiplier))

    def share(sample_rate: float, steps: int, budget_fraction: float) -> float:
        return calibrate_noise_multiplier(
            sample_rate=sample_rate,
            steps=steps,
            epsilon=min(0.9, budget_fraction) * epsilon,
            delta=delta,
            accountant=accountant,
            prior=prior,
        )

    spent = fraction
    if table.classifier_loss_weight > 0 and condition is not None:
        spent += table.classifier_budget_fraction
        aux = epochs_schedule(cfg.batch_size, cfg.max_sample_rate, table.classifier_epochs, rows)
        q, steps = aux.sample_rate, aux.steps
        prior.append(LedgerEntry("DP-SGD on the auxiliary classifier", share(q, steps, spent), q, steps))
    if table.label_model and schema.target is not None:
        spent += table.label_model_budget_fraction
        plan = epochs_schedule(
            table.label_model_batch_size, table.label_model_max_sample_rate, table.label_model_epochs, rows
        )
        q, steps = plan.sample_rate, plan.steps
        prior.append(LedgerEntry("DP-SGD on the label model", share(q, steps, spent), q, steps))
    if table.marginal_anchor:
        spent += table.marginal_budget_fraction
        encoder = TableEncoder(schema, public_dtypes(schema))
        releases = MarginalAnchor.releases(encoder.spans, condition)
        prior.append(LedgerEntry(MARGINALS_EVENT, share(1.0, releases, spent), count=releases))
    gan = gan_schedule_for(cfg, rows, get_recipe(recipe).dp_on)
    return GanPlan(tuple(prior), gan.sample_rate, gan.steps, gan.sampling)
