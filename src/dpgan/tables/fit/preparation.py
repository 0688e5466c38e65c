"""The private reads of a table before training, in order, each charged to the ledger.

1. the noisy row count N̂ (it sets q = L/N̂, the step count and the schema's thresholds);
2. without a schema: two noisy histograms per column (dpgan.tables.inference.infer);
3. the table is mapped into the schema cell by cell (dpgan.tables.reading.conform), never failing on a row;
4. a noisy count, per kind of repair, of the rows that needed one (sensitivity √5 for the five
   kinds, noise 2σ·√5: one Gaussian event at 2σ), so the user hears about unknown categories or
   words in numeric columns without any row deciding whether the fit runs.
They share one base σ (dpgan.privacy.preprocessing.plan_preprocessing), so that together they
cost the preprocessing share of ε. With a hand schema the marginals model adds one more release
after them, on its own share: each numeric column's histogram on a public grid, whose quantiles
cut the schema's bins (dpgan.tables.fit.quantile_cells). A condition's DP frequencies, when needed, are one more event
at the same σ, read later by dpgan.tables.codec.conditioning.

No unit decides a public fact (dpgan.privacy.unit_rule): nothing here refuses a table for what its
rows hold, and a table with no rows (its header only: the columns are public) is not refused
either, since the pair (no rows, one row) would then differ in whether the fit runs. It goes
through the same releases: N̂ (clamped to ≥ 1, it divides), the DP schema from all-zero counts
(every column then generated as `(other)` unless the noise says otherwise), zero repairs; the
small-table note warns when N̂·ε is small. Only a table with no columns is refused (structure),
and the non-private opt-out (`schema_from_data_without_dp`) still refuses a table with no rows:
it reads the domain off the rows, and its output already says the guarantee excludes the schema.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger, check_epsilon_delta
from dpgan.privacy.calibration import FitBudget, ShareTarget
from dpgan.privacy.epsilon_range import check_target_epsilon
from dpgan.privacy.mechanisms import noisy_indicator_sums
from dpgan.privacy.partition_selection import second_release
from dpgan.privacy.preprocessing import (
    REPAIR_COUNT_SCALE,
    ROW_COUNT_SCALE,
    TARGET_HISTOGRAM_SCALE,
    PreprocessingPlan,
    plan_preprocessing,
    private_row_count,
)
from dpgan.privacy.releases import charge_gaussian
from dpgan.tables.fit.quantile_cells import counted, release_cells
from dpgan.tables.fit.row_sample import RowBudget, draw_row_sample, model_sample, read_rate, sampled_rows
from dpgan.tables.inference.column_kinds import CLASS_CELLS, CLASS_HISTOGRAM_SCALE, PublicHints
from dpgan.tables.inference.domain import SecondChance
from dpgan.tables.inference.infer import infer_schema_private, infer_schema_without_privacy
from dpgan.tables.reading.conform import (
    INFINITE_VALUE,
    MISSING_IN_COMPLETE,
    NOT_A_NUMBER,
    OUT_OF_BOUNDS,
    REASONS,
    UNKNOWN_CATEGORY,
    conform,
)
from dpgan.tables.schema.datetimes import CELLS
from dpgan.tables.schema.hierarchy import Hierarchy
from dpgan.tables.schema.keys import key_specs
from dpgan.tables.schema.table import Schema, with_keys

CLASS_EVENT = "schema: each column's cell classes (null, whole, fractional, text, code, date/time formats)"
SCHEMA_EVENT = "schema: each column's values (grid bins or categories)"
REPAIR_EVENT = "cells mapped into the schema (noisy count per kind)"
TARGET_AGAIN_EVENT = "schema: the target's values again (second chance)"
HIERARCHY_EVENT = "schema: code hierarchies, one histogram per level"
# The target's second chance, when its first release kept fewer than two values: a class of
# TARGET_CLASS_SHARE of N̂ is then released with probability 0.95, spending at most TARGET_SECOND_SHARE
# more of ε (the cap binds on small tables; the GAN's σ is calibrated on what is left). Images and
# series use the same release for their label sets (dpgan.privacy.partition_selection)
TARGET_CLASS_SHARE = 0.05
TARGET_SECOND_SHARE = 0.05
# below this many rows × ε, noise is likely to swamp what the model can learn
SMALL_TABLE_ROWS_TIMES_EPSILON = 2000.0
# a repair count is reported when it clears this many of its noise standard deviations
REPAIR_REPORT_SIGMAS = 3.0


@dataclass
class Prepared:
    """What training reads: the public or DP schema, the conformed rows, and N̂."""

    schema: Schema
    frame: pd.DataFrame
    rows: int
    plan: PreprocessingPlan
    repairs: dict[str, float] | None = None  # noisy rows per repair kind
    notes: list[str] = field(default_factory=list)
    read_rate: float = 1.0  # `frame` is a Poisson sample of the rows at this rate (dpgan.tables.fit.row_sample)
    spent_share: float = 0.0  # the share of ε the ledger reaches after these releases


def preprocessing_events(
    columns: int,
    *,
    infer: bool,
    has_target: bool,
    count_repairs: bool,
    needs_prior: bool,
    hierarchy_levels: int = 0,
) -> dict[float, int]:
    """The Gaussian events the plan pays for, by noise scale: the row count, the histograms (the
    target's at 0.35 of the noise; a code hierarchy's levels at the base σ), the prior, the repairs."""
    events: Counter[float] = Counter({ROW_COUNT_SCALE: 1, 1.0: int(needs_prior)})
    if infer:
        events[CLASS_HISTOGRAM_SCALE] += columns
        events[1.0] += columns - int(has_target) + hierarchy_levels
        events[TARGET_HISTOGRAM_SCALE] += int(has_target)
    events[REPAIR_COUNT_SCALE] += int(count_repairs)
    return {scale: count for scale, count in events.items() if count}


def plan_for(
    columns: Sequence[str],
    *,
    hints: PublicHints,
    infer: bool,
    count_repairs: bool,
    needs_prior: bool,
    budget: FitBudget,
    fraction: float,
) -> PreprocessingPlan:
    """The base σ of steps 1–4 for a table with these (public) columns, `fraction` of the fit's
    `budget`: shared by the in-memory path and the streamed one (dpgan.tables.fit.stream_preparation),
    so both release at the same σ."""
    return plan_preprocessing(
        budget=budget,
        fraction=fraction,
        events=preprocessing_events(
            len(columns),
            infer=infer,
            has_target=hints.target is not None,
            count_repairs=count_repairs,
            needs_prior=needs_prior,
            hierarchy_levels=hints.hierarchy_levels(columns),
        ),
        keyed_histograms=hints.keyed_histograms(columns) if infer else 0,
    )


def prepare_table(
    data: pd.DataFrame,
    *,
    schema: Schema | None,
    hints: PublicHints,
    strict: bool,
    without_dp: bool,
    keep_identifiers: bool,
    budget: FitBudget,
    fraction: float,
    needs_prior: bool,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    row_budget: RowBudget | None = None,
    quantile_cells: bool = False,
) -> Prepared:
    """Run steps 1–4 of the module docstring on `data` at `fraction` of the fit's `budget`, adding
    each event to `ledger`. With `row_budget` (the marginals model's), the reads after N̂ take the
    Poisson sample of dpgan.tables.fit.row_sample when N̂ exceeds it: the DP schema's counts, and
    the conformed rows when the model for the released schema reads them (its rows; the GAN's are all).
    With `quantile_cells` (the marginals model on a hand schema), a last release cuts the schema's
    numeric bins at DP quantiles of the conformed rows (dpgan.tables.fit.quantile_cells)."""
    infer = schema is None and not without_dp
    count_repairs = not strict and not (schema is None and without_dp)
    plan = plan_for(
        [str(c) for c in data.columns],
        hints=hints,
        infer=infer,
        count_repairs=count_repairs,
        needs_prior=needs_prior,
        budget=budget,
        fraction=fraction,
    )
    rows, count_entry = private_row_count(len(data), plan.sigma(ROW_COUNT_SCALE), rng)
    ledger.add(count_entry)
    sample = None if row_budget is None or without_dp else draw_row_sample(rows, row_budget(schema), rng)
    sampled = data if sample is None else sample.coins().frame(data)
    notes: list[str] = []
    if schema is None:
        if infer:
            second_cap = target_second_cap(budget, fraction)
            schema, notes = learn_schema(
                sampled, hints=hints, plan=plan, rows=sampled_rows(rows, sample), ledger=ledger, rng=rng,
                second_cap=second_cap,
            )  # fmt: skip
        else:
            schema, notes = infer_schema_without_privacy(data, hints, keep_identifiers=keep_identifiers)
            data = data[schema.names]
    read = model_sample(sample, row_budget, schema)
    conformed = conform(data if read is None else sampled, schema, strict=strict)
    repairs = None
    if count_repairs:
        repairs, repaired = release_read_repairs(conformed.repairs.sum(axis=0), read_rate(read), plan, ledger, rng)
        notes += repaired
    notes += small_table_notes(rows, budget.epsilon, plan.sigma(ROW_COUNT_SCALE))
    spent = fraction
    if quantile_cells:
        counts = counted(schema, [conformed.frame])
        schema, spent = release_cells(counts, budget=budget, fraction=fraction, ledger=ledger, rng=rng)
    return Prepared(schema, conformed.frame, rows, plan, repairs, notes, read_rate(read), spent)


def release_read_repairs(
    sums: np.ndarray, rate: float, plan: PreprocessingPlan, ledger: PrivacyLedger, rng: np.random.Generator
) -> tuple[dict[str, float], list[str]]:
    """Step 4 on rows read at `rate` (a Poisson sample below 1): the noisy repair counts
    (`release_repairs`), as counts of the table (÷ rate: post-processing), and their notes."""
    repairs = release_repairs(sums, plan, ledger, rng)
    if rate != 1.0:
        repairs = {reason: value / rate for reason, value in repairs.items()}
    return repairs, repair_notes(repairs, plan.sigma(REPAIR_COUNT_SCALE) / rate)


def release_repairs(
    sums: np.ndarray, plan: PreprocessingPlan, ledger: PrivacyLedger, rng: np.random.Generator
) -> dict[str, float]:
    """Step 4: the noisy count of rows per kind of repair, from the exact counts (the column sums
    of the rows' 0/1 repair indicators; a streamed fit adds them up batch by batch)."""
    repair_sigma = plan.sigma(REPAIR_COUNT_SCALE)
    noisy = noisy_indicator_sums(sums, repair_sigma, rng)
    charge_gaussian(ledger, REPAIR_EVENT, repair_sigma, note=f"{len(REASONS)} counts, sensitivity √{len(REASONS)}")
    return {reason: float(value) for reason, value in zip(REASONS, noisy)}


def small_table_notes(rows: int, epsilon: float, sigma: float) -> list[str]:
    """The note on a small table, from the noisy row count N̂ and its noise std `sigma`: a table with
    no row at all reads as "about 80 rows" too, so the note says how far off the count may be."""
    if rows * epsilon >= SMALL_TABLE_ROWS_TIMES_EPSILON:
        return []
    return [
        f"the table has about {rows:,} rows (a noisy count, give or take {sigma:,.0f}; it may hold far fewer, "
        f"even none): at ε={epsilon:g} the noise is likely to swamp what the model can learn; expect poor utility "
        "(more rows or a larger ε help)"
    ]


def learn_schema(
    data: pd.DataFrame,
    *,
    hints: PublicHints,
    plan: PreprocessingPlan,
    rows: int,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    second_cap: ShareTarget | None = None,
) -> tuple[Schema, list[str]]:
    """The schema from two noisy histograms per column (dpgan.tables.inference.infer), charged to
    `ledger` (before the release: the charges read only the plan); with `second_cap`, the target's
    second chance (`target_second_chance`)."""
    sigma, target_sigma = plan.sigma(), plan.sigma(TARGET_HISTOGRAM_SCALE)
    charge_schema(ledger, plan, data.shape[1], hints, [str(c) for c in data.columns])
    return infer_schema_private(
        data,
        hints=hints,
        noise_multiplier=sigma,
        target_noise_multiplier=target_sigma,
        threshold_delta=plan.threshold_delta,
        estimated_rows=rows,
        rng=rng,
        second_chance=None if second_cap is None else target_second_chance(ledger, second_cap, rows, rng),
    )


def target_second_cap(budget: FitBudget, fraction: float) -> ShareTarget:
    """Where the target's second chance may take the ledger: the preprocessing share of the fit's
    ε plus TARGET_SECOND_SHARE (the in-memory and the streamed path read this one rule)."""
    return budget.at(fraction + TARGET_SECOND_SHARE)


def target_second_chance(
    ledger: PrivacyLedger, cap: ShareTarget, rows: float, rng: np.random.Generator
) -> SecondChance:
    """The target's second chance (dpgan.privacy.partition_selection.second_release, the release the
    image and series label sets use): its values present counted again with fresh noise, σ₂ chosen so
    that a class of TARGET_CLASS_SHARE·N̂ rows is released with probability 0.95 unless that would take
    the ledger past `cap`, charged to `ledger` as its own event with its threshold's δ."""

    def again(exact: np.ndarray, first: np.ndarray, sigma: float, per_key_delta: float) -> tuple[np.ndarray, ...]:
        second = second_release(
            exact,
            first,
            sigma,
            target_units=max(TARGET_CLASS_SHARE * rows, 2.0),
            threshold_delta=per_key_delta,
            cap=cap,
            ledger=ledger,
            rng=rng,
            event=TARGET_AGAIN_EVENT,
            note="the target's value counts again (fresh noise), combined with the first: it kept fewer than two",
        )
        return second.counts, second.released

    return again


def charge_schema(
    ledger: PrivacyLedger, plan: PreprocessingPlan, columns: int, hints: PublicHints, names: Sequence[str] = ()
) -> None:
    """The ledger events of a schema learned from two noisy histograms per column (`names`: the
    columns, whose code hierarchies add one histogram per level)."""
    sigma, target_sigma = plan.sigma(), plan.sigma(TARGET_HISTOGRAM_SCALE)
    others = columns - int(hints.target is not None)
    cells = f"{CLASS_CELLS + CELLS} cells each, one per row"
    charge_gaussian(ledger, CLASS_EVENT, plan.sigma(CLASS_HISTOGRAM_SCALE), count=columns, note=cells)
    note = (
        "numeric: bins of a public grid (integer columns: with their whole numbers, sentinel codes and others "
        "above a threshold) and, on a table large enough for the finest grid, a second release of 1,024 fine cells "
        "a grid bin over the range the grid found (a third of this Gaussian: the parts' 1/σ² add to this one); other "
        "kinds: values above a threshold (its failure δ added); dates and times: bins of a public calendar grid (a "
        "timestamp written with a zone: and, at a tenth of this Gaussian, one cell per public zone writing); every "
        "histogram has a public null cell"
    )
    charge_gaussian(ledger, SCHEMA_EVENT, sigma, count=others, extra_delta=plan.threshold_delta, note=note)
    if hints.target is not None:
        charge_gaussian(ledger, f"schema: the target's values ({hints.target})", target_sigma, note=note)
    levels = hints.hierarchy_levels(names)
    if levels:
        charge_gaussian(
            ledger, HIERARCHY_EVENT, sigma, count=levels,
            note="each row in at most one cell of a level (sensitivity 1 each); prefix cells above a threshold "
            "(its δ inside the values' entry)",
        )  # fmt: skip


def buy_schema(
    data: pd.DataFrame,
    *,
    epsilon: float,
    delta: float,
    accountant: str,
    target: str | None = None,
    categorical: Sequence[str] = (),
    bounds: Mapping[str, tuple[float, float]] | None = None,
    categories: Mapping[str, Sequence[str]] | None = None,
    seed: int | None = None,
    hierarchies: Mapping[str, Hierarchy | dict] | None = None,
    keys: Sequence[str] | Mapping[str, str] | None = None,
) -> tuple[Schema, list[str]]:
    """`dpgan schema`: spend all of (ε, δ) on the row count and the column histograms, and return
    the schema with those ledger events inside it, so that a fit with it counts them too."""
    check_epsilon_delta(epsilon, delta)
    check_target_epsilon(epsilon)
    budget = FitBudget(epsilon, delta, accountant)  # the command's one budget, from the user's numbers
    if not isinstance(data, pd.DataFrame):
        raise InputError("data must be a pandas DataFrame")
    specs = key_specs(keys, list(data.columns))  # key columns: dropped unread, declared in the schema
    data = data.drop(columns=[k.name for k in specs])
    if data.shape[1] == 0:  # no columns: public structure; no rows is not refused (dpgan.privacy.unit_rule)
        raise InputError("the table has no columns besides its keys: nothing to learn from")
    hints = PublicHints(
        target, tuple(categorical), dict(bounds or {}), {k: tuple(v) for k, v in (categories or {}).items()},
        {k: v if isinstance(v, Hierarchy) else Hierarchy.from_dict(v, k) for k, v in (hierarchies or {}).items()},
    )  # fmt: skip
    hints.check(data.columns)
    names = [str(c) for c in data.columns]
    plan = plan_preprocessing(
        budget=budget,
        fraction=1.0,
        events=preprocessing_events(
            data.shape[1],
            infer=True,
            has_target=target is not None,
            count_repairs=False,
            needs_prior=False,
            hierarchy_levels=hints.hierarchy_levels(names),
        ),  # fmt: skip
        keyed_histograms=hints.keyed_histograms(names),
    )
    rng = np.random.default_rng(seed if seed is not None else secrets.randbits(64))
    ledger = PrivacyLedger()
    rows, count_entry = private_row_count(len(data), plan.sigma(ROW_COUNT_SCALE), rng)
    ledger.add(count_entry)
    schema, notes = learn_schema(data, hints=hints, plan=plan, rows=rows, ledger=ledger, rng=rng)
    spent = ledger.epsilon(delta, accountant)
    source = (
        f"learned with DP by `dpgan schema` (ε={spent:.4g}, δ={delta:g}, {accountant}); its ledger is below and a "
        "fit with this schema counts it. Edits are free: this file is public once released."
    )
    schema = with_keys(schema, specs)
    return replace(schema, source=source, ledger=tuple(e.to_dict() for e in ledger.entries)), notes


# a repair's reason (dpgan.tables.reading.conform.REASONS) as the cell a person would say a row had
REPAIR_PHRASES = {
    UNKNOWN_CATEGORY: "an unknown category",
    MISSING_IN_COMPLETE: "a missing value in a complete column",
    NOT_A_NUMBER: "text in a numeric column",
    INFINITE_VALUE: "an infinite value",
    OUT_OF_BOUNDS: "a value outside the bounds (clamped)",
}


def repair_noise_std(preprocessing_noise_multiplier: float) -> float:
    """The noise std of each released repair count (`release_repairs`: k counts at σ·√k)."""
    return preprocessing_noise_multiplier * REPAIR_COUNT_SCALE * float(np.sqrt(len(REASONS)))


def noticeable_repairs(repairs: dict[str, float], std: float) -> dict[str, int]:
    """The repairs whose noisy count clears REPAIR_REPORT_SIGMAS noise stds, rounded (never negative,
    since they clear a positive floor): what a person should hear about, as ReleasedTally.noticeable."""
    return {r: int(round(c)) for r, c in repairs.items() if c > REPAIR_REPORT_SIGMAS * std}


def repairs_summary(repairs: dict[str, float], std: float) -> str:
    """One line for a person, as ReleasedTally.describe: 'about 240 rows had a cell with an unknown
    category; the other repairs: none beyond the noise (±30)'."""
    shown = noticeable_repairs(repairs, std)
    floor = f"none beyond the noise (±{REPAIR_REPORT_SIGMAS * std:,.0f} rows)"
    if not shown:
        return floor
    line = "; ".join(f"about {c:,} rows had a cell with {REPAIR_PHRASES.get(r, r)}" for r, c in shown.items())
    return line + (f"; the other repairs: {floor}" if len(shown) < len(repairs) else "")


def repair_notes(repairs: dict[str, float], sigma: float) -> list[str]:
    """One line per kind of repair whose noisy count is clearly above its noise."""
    shown = noticeable_repairs(repairs, sigma * float(np.sqrt(len(REASONS))))
    # the words are saved in model.json: "dpgan.tables.conform" (now dpgan.tables.reading.conform) stays
    # until a change that may alter seeded model files (issue 50's moves keep them byte for byte)
    return [
        f"about {count:,} rows (noisy count) had a cell with {REPAIR_PHRASES.get(reason, reason)}: mapped into "
        "the schema (dpgan.tables.conform)"
        for reason, count in shown.items()
    ]
