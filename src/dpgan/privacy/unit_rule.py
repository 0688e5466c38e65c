"""The rule every reader follows: no unit decides a public fact.

A unit is what the guarantee protects: a row of a table, a series (or an entity with all its
series), an image. The DP argument compares two inputs that differ in one unit, and it covers only
what reaches the output through a mechanism in the ledger. Anything else that depends on the data
is a free bit: whether the fit runs at all (a refusal), a type or an order chosen from all the
units (one series with text times re-ordering every other series), the code path taken (streamed
or not), a count printed in a message. So every reader (tables: dpgan.tables.reading.conform and
dpgan.tables.fit.preparation; series: dpgan.sequences.codec; images: dpgan.images; Parquet:
dpgan.tables.reading.parquet_source) does only three things:

1. **Refuse on public inputs only**: the column names, the declared schema or shape, the dtype of
   an array the caller built, the path and its layout, the settings. A refusal never depends on a
   unit's value, and its message names columns, files and declared shapes, never a value or a
   count of units (`public_refusal`).
2. **Map each unit by a rule that reads that unit alone**: keep it (repaired where the rule says
   so), or drop it with a reason from a list fixed before any unit is read (`UnitTally`). A rule
   of one unit is 1-stable: a neighbouring input stays a neighbouring input after it, so the DP
   guarantee of everything trained on the kept units carries over. An order or a type is decided
   per unit (each series' times by that series' cells), or by public metadata, never across units.
3. **Release the tally once, with DP** (`release_tally`): the vector (kept, dropped per reason)
   is a histogram in which every unit sits in exactly one cell, so adding or removing one unit
   moves it by 1 in L2; its Gaussian release is one ledger event at σ. The noisy kept count sets
   the sampling rate and the schedule (N̂); the dropped counts go to the report. An input with no
   readable unit is not refused either: the fit runs on none, and its noisy count says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgan.errors import InputError

if TYPE_CHECKING:  # the accountants load only when a tally is released: a reader's refusals stay light
    from dpgan.privacy.accounting import PrivacyLedger
    from dpgan.privacy.calibration import ShareTarget

# a dropped count is named in a report when it clears this many noise standard deviations
REPORT_SIGMAS = 3.0


def public_refusal(message: str) -> InputError:
    """The error of a refusal decided by public inputs only (rule 1). `message` names columns,
    files, settings or declared shapes; callers raise the returned error."""
    return InputError(message)


@dataclass
class UnitTally:
    """How many units a reader kept, and how many it dropped per reason (private: released only
    through `release_tally`). `reasons` is public and fixed before reading: the reasons this
    reader can drop a unit for, in the order of the released vector."""

    reasons: tuple[str, ...]
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(set(self.reasons)) != len(self.reasons):
            raise ValueError("the reasons must be distinct")

    def keep(self, count: int = 1) -> None:
        self.kept += int(count)

    def drop(self, reason: str, count: int = 1) -> None:
        """`count` units dropped for `reason` (one of `reasons`)."""
        if reason not in self.reasons:
            raise ValueError(f"{reason!r} is not one of this reader's reasons")
        if count:
            self.dropped[reason] = self.dropped.get(reason, 0) + int(count)

    def merge(self, other: UnitTally) -> None:
        """Add another tally of the same reader (a second batch of the same input)."""
        if other.reasons != self.reasons:
            raise ValueError("tallies of different readers cannot be merged")
        self.kept += other.kept
        for reason, count in other.dropped.items():
            self.drop(reason, count)

    @property
    def total_dropped(self) -> int:
        return int(sum(self.dropped.values()))

    def vector(self) -> np.ndarray:
        """(kept, dropped for each reason): each unit in exactly one cell."""
        return np.array([self.kept, *(self.dropped.get(r, 0) for r in self.reasons)], dtype=np.float64)


@dataclass(frozen=True)
class ReleasedTally:
    """The noisy tally: what a report may show and what the schedule may use."""

    unit: str  # singular, for messages: "series", "image", "row", "entity"
    units: str  # plural
    kept: float
    dropped: dict[str, float]
    noise_multiplier: float

    @property
    def estimated_units(self) -> float:
        """N̂: the noisy kept count, at least 1 (it divides: q = L/N̂)."""
        return max(float(self.kept), 1.0)

    @property
    def estimated_dropped(self) -> float:
        """The noisy dropped counts summed, at least 0."""
        return max(float(sum(self.dropped.values())), 0.0)

    def noticeable(self) -> dict[str, int]:
        """The reasons whose noisy count clears REPORT_SIGMAS noise stds, rounded: what a person
        should hear about (smaller counts are indistinguishable from none)."""
        floor = REPORT_SIGMAS * self.noise_multiplier
        return {r: int(round(c)) for r, c in self.dropped.items() if c > floor}

    def to_dict(self) -> dict[str, Any]:
        """Saved in the training record: rounded, never negative (noise can push a count below 0)."""
        return {
            "unit": self.unit,
            "units": self.units,
            "kept": int(round(max(self.kept, 0.0))),
            "dropped": {r: int(round(max(c, 0.0))) for r, c in self.dropped.items()},
            "noise_std": self.noise_multiplier,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReleasedTally:
        """Back from `to_dict` (a saved training record; its counts already rounded)."""
        dropped = {str(r): float(c) for r, c in dict(data["dropped"]).items()}
        unit = str(data["unit"])
        return cls(unit, str(data.get("units", unit)), float(data["kept"]), dropped, float(data["noise_std"]))

    def describe(self) -> str:
        """One line for a person: 'about 6,880 series kept; dropped: about 50 (incomplete)'."""
        line = f"about {int(round(max(self.kept, 0.0))):,} {self.units} kept"
        shown = self.noticeable()
        if shown:
            line += "; dropped: " + ", ".join(f"about {c:,} ({r})" for r, c in shown.items())
        else:
            line += f"; none dropped beyond the noise (±{REPORT_SIGMAS * self.noise_multiplier:.0f})"
        return line


def none_usable_note(released: ReleasedTally, advice: str) -> str | None:
    """A warning when the noisy kept count does not clear REPORT_SIGMAS noise stds: the fit ran on
    units indistinguishable from none. Post-processing of the released count (no new read); the
    caller adds `advice` that fits its kind's public facts. None when the count clears the floor."""
    if released.kept >= REPORT_SIGMAS * released.noise_multiplier:
        return None
    return (
        f"the DP count of readable {released.units} (about {max(released.kept, 0.0):.0f}, noise std "
        f"{released.noise_multiplier:.0f}) is indistinguishable from none: few {released.units} for this ε, "
        f"or few could be read ({advice})"
    )


def release_tally(
    tally: UnitTally,
    *,
    unit: str,
    units: str,
    event: str,
    target: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    extra_cells: Sequence[float] = (),
    extra_note: str = "",
    extra_delta: float = 0.0,
) -> tuple[ReleasedTally, np.ndarray]:
    """One Gaussian release of (kept, dropped per reason[, extra cells]), σ calibrated so that the
    ledger reaches `target`, charged to `ledger` as `event`. `extra_cells` are more cells of the
    same histogram (a reader that splits its kept units further, e.g. by label): the caller must
    make sure each unit counts in exactly one cell overall, kept units in the extra cells *or* in
    `tally.kept`. `extra_delta` is the δ of a threshold the caller applies to the extra cells
    (Gaussian partition selection of keys not known in advance): σ is calibrated with it in the
    ledger, and the event carries it. Returns the released tally and the noisy extra cells."""
    from dpgan.privacy.accounting import LedgerEntry
    from dpgan.privacy.mechanisms import noisy_counts

    cells = np.concatenate([tally.vector(), np.asarray(extra_cells, dtype=np.float64)])
    pending = [LedgerEntry("threshold", 1.0, count=0, extra_delta=extra_delta)] if extra_delta else []
    sigma = target.sigma(1.0, 1, [*ledger.entries, *pending])
    note = f"{units} kept and dropped per reason; one {unit} is in one count"
    entry = LedgerEntry(
        event, sigma, count=1, extra_delta=extra_delta, note=note + (f"; {extra_note}" if extra_note else "")
    )
    ledger.add(entry)
    noisy = noisy_counts(cells, sigma, rng)
    width = 1 + len(tally.reasons)
    released = ReleasedTally(
        unit=unit,
        units=units,
        kept=float(noisy[0]),
        dropped={r: float(c) for r, c in zip(tally.reasons, noisy[1:width])},
        noise_multiplier=sigma,
    )
    return released, noisy[width:]


__all__ = ["REPORT_SIGMAS", "ReleasedTally", "UnitTally", "none_usable_note", "public_refusal", "release_tally"]
