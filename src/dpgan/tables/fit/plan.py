"""The fit of a tabular synthesizer, read by read: what is charged to the ledger, and where.

A table runs through the one fit pipeline (dpgan.fit) as `TableKind`
(dpgan.tables.fit.kind; streamed: `StreamedTableKind`, dpgan.tables.fit.streamed), started by
dpgan.tables.fit.run (step 1, then the pipeline): steps 2-4 are the kind's data releases, step 5
its plug-ins (dpgan.tables.fit.plugins), step 6 its strategy (dpgan.training.strategies) and, with
a selection, its finish. This module holds what goes in and what comes out: the facade's settings
(`FitSettings`, with the one `FitBudget`) and the released model (`FittedTable`). The flow goes
down, never back: facade → dpgan.synthesizers.table_runs → run → dpgan.fit → kind → preparation,
plug-ins, strategy → dpgan.privacy.

Flow (every read of the private table is a ledger event, and `PrivacyLedger` refuses any event
that would take it past the target (ε, δ)):

1. the ledger opens with the schema's own DP purchase, if its file records one (public otherwise);
   a purchase of half of ε or more is refused before the data is touched;
2. `prepare_table` (dpgan.tables.fit.preparation): the noisy row count, the schema's DP histograms when no
   schema is given (or nothing, on the non-private `schema_from_data_without_dp` path, which the
   report then says), the DP count of repaired cells; charged at `fraction` of ε;
3. the encoder is built from the public (or DP) schema only; a public table for the warm start
   (dpgan.tables.fit.public_data) is encoded with it, strictly, and read by nothing else: no
   ledger entry depends on it, and the loop pre-trains G and the critic on it without noise;
4. the condition's value frequencies: the schema's public ones, else a DP histogram at the
   preprocessing σ (`build_condition`), charged here;
5. the optional extras, each trained with DP-SGD up to its cumulative share of ε, in this order:
   the auxiliary classifier (conditional recipes with a classifier loss), the label model
   (categorical target), the marginal anchor (noisy one-way marginals), the 2-way anchor (noisy
   tables of every pair of columns, dpgan.statistics.tables.pair_marginals);
6. σ and the step count for the GAN from what is left (`sigma_and_steps` composes the ledger's
   entries so far), then the recipe's loop: DP on the critic (Poisson batches) or on the
   generator (dtgan-g's shard critics); each step is charged by the loop as it runs;
   with `select_checkpoints` (dpgan.training.selection): the rows were split after step 3 (each
   record held out by a keyed hash of itself; the extras and the GAN read the training part), the
   selection's pure ε-DP releases are reserved before σ is calibrated (so σ leaves room for
   them), G's average is kept at K steps, and the exponential mechanism on the held-out part picks
   the released generator(s), charged to the reservation;
7. a last check that the ledger stays within ε, which would be an internal error.

Data-parallel (dpgan.privacy.distributed): with a process group of K ranks every rank runs this
whole flow in lockstep on the same table with the same `rng` (its seed broadcast by the facade),
so each preprocessing release, extra and ledger entry is made once, identically, on every rank;
only the critic's clipped sums are split and all-reduced before the noise. Rank 0 alone writes
the checkpoint; the training record says the `world_size`.

Random draws: `rng` seeds the torch generator first, then serves the preprocessing noise, the
condition prior, the anchor, the 2-way anchor and dtgan-g's shard key, in that order (with a
selection: its held-out key right after encoding, and the selection's Gumbel noise after
training); network weights come from
torch's global RNG (seeded and forked by the facade when the user gives a seed). Keep that order:
seeded samples are compared bit for bit across refactors.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import torch

from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget
from dpgan.recipes import MARGINALS, Recipe
from dpgan.tables.codec.conditioning import Condition
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.fit.options import class_target, default_examples_cap
from dpgan.tables.sampling.label_model import LabelModel
from dpgan.tables.sampling.rows import RowPostProcessor, TableSampler
from dpgan.tables.schema.table import Schema
from dpgan.tables.settings import TableSettings
from dpgan.training.config import TrainingConfig

# share of ε for the reads before training when the domain is bought with DP (row count, one
# histogram per column, the repair count); with a schema only the row count and repairs: 1 %.
# 0.25 (was 0.1) chosen on the validation splits of the bench tables (bench/RESULTS.md §10)
NO_SCHEMA_PREPROCESSING_FRACTION = 0.25


@dataclass(frozen=True)
class FitSettings:
    """The synthesizer's settings a fit reads (the facade's constructor arguments, checked)."""

    recipe: Recipe
    config: TrainingConfig
    table: TableSettings  # the codec's, plug-ins' and selection's (dpgan.tables.settings)
    budget: FitBudget  # the facade's one object (ε, δ, accountant, fixed σ, seed), held down the spine, not copied
    epochs_given: bool  # σ is calibrated for exactly these epochs (or they cap a fixed σ's run)
    preprocessing_fraction: float | None
    schema_from_data_without_dp: bool
    condition_column: str | None
    # no model named, a target named and its kind left to the DP schema: the GAN (`recipe`) unless
    # the released schema makes the target a class, then the marginals model (`resolved`)
    default_on_release: bool = False
    examples_given: bool = False  # the user's `max_examples`: the marginals model's row budget too

    @classmethod
    def of(cls, synth: Any) -> FitSettings:
        """A TabularSynthesizer's settings, as its fit reads them."""
        return cls(
            recipe=synth.recipe,
            config=synth.config,
            table=synth.settings,
            budget=synth.budget,
            epochs_given=synth.epochs_given,
            preprocessing_fraction=synth.preprocessing_fraction,
            schema_from_data_without_dp=synth.schema_from_data_without_dp,
            condition_column=synth.condition_column,
            default_on_release=synth.default_on_release,
            examples_given=synth.examples_given,
        )

    def resolved(self, schema: Schema) -> FitSettings:
        """The settings once the schema is released: the default model for its target (the
        marginals model for a class, else the GAN), chosen from public facts and the DP schema
        (post-processing), before any later read. Unchanged unless the choice was left to it."""
        if not self.default_on_release:
            return self
        if not class_target(schema):
            return replace(self, default_on_release=False)
        config = replace(self.config, max_examples=self.marginals_rows)
        return replace(self, recipe=MARGINALS, config=config, default_on_release=False)

    @property
    def marginals_rows(self) -> int:
        """The marginals model's row budget: the user's `max_examples`, else its default."""
        if self.recipe.name == MARGINALS.name or self.examples_given:
            return self.config.max_examples
        return default_examples_cap(MARGINALS)

    def row_budget(self, schema: Schema | None) -> int:
        """The rows a read after N̂ may take (dpgan.tables.fit.row_sample; 0: all): the marginals
        model's budget when it is the model for `schema` (None: before the schema is released,
        when the default may still become it), 0 for the GAN, which reads every row."""
        settings = self if schema is None else self.resolved(schema)
        if settings.recipe.name == MARGINALS.name or settings.default_on_release:
            return settings.marginals_rows
        return 0

    @property
    def seeded(self) -> bool:
        """Whether the user gave a seed (the training record says so)."""
        return self.budget.seed is not None

    def identity(self) -> dict[str, Any]:
        """The settings as the resume checkpoint's identity digests them: the flat fields older
        checkpoints hold (ε, δ, accountant, σ and `seeded`; the seed itself is the identity's
        `fit_seed`), so a checkpoint written before the budget was one object still resumes."""
        values = asdict(self)
        values.pop("default_on_release")  # resolved before any checkpoint is taken
        values.pop("examples_given")  # the config holds what it set
        budget = values.pop("budget")
        seed = budget.pop("seed")
        return {**values, **budget, "seeded": seed is not None}

    def preprocessing_share(self, infer_schema: bool) -> float:
        """The share of ε for the releases before training: the user's, or the default for a
        schema bought with DP (`infer_schema`) or for the row count alone."""
        return self.preprocessing_fraction or (NO_SCHEMA_PREPROCESSING_FRACTION if infer_schema else 0.01)


@dataclass
class FittedTable:
    """What a fit releases (and a model file holds), plus the critic kept in memory only."""

    ledger: PrivacyLedger
    schema: Schema
    encoder: TableEncoder
    generator: torch.nn.Module
    condition: Condition | None
    label_model: LabelModel | None
    training: dict[str, Any]
    # for white-box attack evaluation: never saved (invariant 7)
    critic_for_evaluation: torch.nn.Module | None = None

    def sampler(self, noise_dim: int) -> TableSampler:
        """Rows from the released models (dpgan.tables.sampling.rows: post-processing, free)."""
        return TableSampler(self.generator, self.encoder, self.condition, noise_dim, self.post_processors)

    @property
    def post_processors(self) -> tuple[RowPostProcessor, ...]:
        """The released models that rewrite generated rows, in the order sampling applies them."""
        return () if self.label_model is None else (self.label_model,)
