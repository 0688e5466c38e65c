"""A date, timestamp or time-of-day column to and from the generator's output.

The column is a number on its linear scale (days, or seconds: dpgan.tables.schema.datetimes), coded
exactly as a continuous column of the same public range and bins (NumericTransform: a bin softmax
and a position), so every table model learns it through the numeric path. The calendar's structure
is added where the bins cannot carry it: a date or timestamp also gets a softmax over the day of the
week, and a timestamp one over the hour of the day, hidden categoricals that the model learns
jointly with every other column. A sampled value is then moved to the nearest day of its sampled
weekday inside its sampled bin (where the bin spans a week or more), and a timestamp's hour is set
to its sampled hour (minutes and seconds kept). Everything here is a function of the public spec
and of generated rows: no state is fitted on private rows.

Sampled values come back as the input had them: text in the column's format, or a datetime64
column (with its time zone) for typed input; a time of day as text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpgan.models.output_spans import SOFTMAX
from dpgan.tables.codec.column_transforms import ColumnTransform, NumericTransform, sample_categories
from dpgan.tables.schema.columns import ColumnSpec
from dpgan.tables.schema.datetimes import (
    SECONDS_PER_DAY,
    TIME,
    TIMESTAMP,
    column_values,
    day_first_of,
    write_values,
)

WEEKDAYS = 7
HOURS = 24
_THURSDAY = 3  # 1970-01-01, Monday = 0


def weekday_of_day(days: np.ndarray) -> np.ndarray:
    """Monday = 0 … Sunday = 6 of whole days since 1970-01-01."""
    return ((days.astype(np.int64) + _THURSDAY) % WEEKDAYS).astype(np.int64)


class DatetimeTransform(ColumnTransform):
    """A temporal column: a NumericTransform on its scale, then the weekday and hour softmaxes."""

    def __init__(self, spec: ColumnSpec, dtype: str | None = None) -> None:
        super().__init__(spec, dtype)
        self.numeric = NumericTransform(
            ColumnSpec(spec.name, "continuous", min=spec.min, max=spec.max, bins=spec.bins, nullable=spec.nullable)
        )
        self.calendar = [] if spec.kind == TIME else [WEEKDAYS] + ([HOURS] if spec.kind == TIMESTAMP else [])

    @property
    def value_modes(self) -> int:  # type: ignore[override]
        return self.spec.bins

    @property
    def activations(self) -> list[tuple[str, int]]:
        return self.numeric.activations + [(SOFTMAX, width) for width in self.calendar]

    def span_value_modes(self) -> list[int]:
        """The numeric part's modes carry values; the calendar softmaxes do not."""
        return self.numeric.span_value_modes() + [0] * len(self.calendar)

    def units(self, series: pd.Series) -> np.ndarray:
        """The column on its scale: conformed rows are already numbers; sampled rows (text or
        datetime64) are read back by the public cell rule."""
        if pd.api.types.is_numeric_dtype(series.dtype):
            return series.to_numpy(dtype=np.float64, na_value=np.nan)
        fmt = str(self.spec.format)
        return column_values(series, self.spec.kind, day_first_of(fmt), fmt)

    def encode(self, series: pd.Series) -> np.ndarray:
        units = self.units(series)
        blocks = [self.numeric.encode(pd.Series(units))]
        missing = np.isnan(units)
        days = np.floor(np.nan_to_num(units) / (SECONDS_PER_DAY if self.spec.kind == TIMESTAMP else 1.0))
        parts = [weekday_of_day(days)]
        if self.spec.kind == TIMESTAMP:
            parts.append(((np.nan_to_num(units) - days * SECONDS_PER_DAY) // 3600).astype(np.int64) % HOURS)
        for width, codes in zip(self.calendar, parts):
            one_hot = np.zeros((len(units), width), dtype=np.float32)
            one_hot[np.arange(len(units)), codes] = 1.0
            one_hot[missing] = 1.0 / width  # a null row has no weekday: every one alike
            blocks.append(one_hot)
        return np.concatenate(blocks, axis=1).astype(np.float32)

    def decode(self, block: np.ndarray, rng: np.random.Generator) -> pd.Series:
        width = self.numeric.width
        units = self.numeric.decode(block[:, :width], rng).to_numpy(dtype=np.float64, na_value=np.nan)
        drawn = []
        start = width
        for size in self.calendar:
            drawn.append(sample_categories(block[:, start : start + size], rng))
            start += size
        if self.spec.kind != TIME:
            units = self._with_calendar(units, drawn)
        spec = self.spec
        return write_values(units, spec.kind, str(spec.format), spec.timezone, spec.resolution, spec.name)

    def _with_calendar(self, units: np.ndarray, drawn: list[np.ndarray]) -> np.ndarray:
        """Each value moved to its drawn hour, then to the nearest day of its drawn weekday inside its
        bin and the public range (kept where no such day is there)."""
        day_length = SECONDS_PER_DAY if self.spec.kind == TIMESTAMP else 1.0
        present = ~np.isnan(units)
        values = np.nan_to_num(units)
        days = np.floor(values / day_length)
        within = values - days * day_length  # seconds into the day (timestamps), 0..1 (dates)
        if self.spec.kind == TIMESTAMP:
            within = drawn[1] * 3600.0 + np.mod(within, 3600.0)
        else:
            within = np.zeros_like(within)
        low, high = self._bin_bounds(values)
        delta = (drawn[0] - weekday_of_day(days)) % WEEKDAYS
        best = days.copy()
        best_distance = np.full(len(days), np.inf)
        for shift in (delta, delta - WEEKDAYS):
            candidate = days + shift
            moment = candidate * day_length + within
            inside = (moment >= low) & (moment <= high)
            distance = np.abs(shift)
            better = inside & (distance < best_distance)
            best = np.where(better, candidate, best)
            best_distance = np.where(better, distance, best_distance)
        moved = best * day_length + within
        fallback = days * day_length + within  # no day of that weekday in the bin: the hour alone
        out = np.where(np.isfinite(best_distance), moved, np.clip(fallback, self.spec.min, self.spec.max))
        return np.where(present, out, np.nan)

    def _bin_bounds(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bounds, on the column's scale, of the bin each value lies in."""
        bins = self.spec.bins
        index = np.minimum(np.floor(self.numeric._to_unit(values) * bins), bins - 1)
        return self.numeric._from_unit(index / bins), self.numeric._from_unit((index + 1) / bins)
