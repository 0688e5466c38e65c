"""The one release an image fit makes before the GAN: how many images there are, per label.

Every image holds one label (or none, for an unlabelled set), so adding or removing one image
changes one count by 1: the vector of counts has L2 sensitivity 1 and its Gaussian release is one
event at σ. What it buys:
- the image count N̂ (the sum of the released counts), which sets the Poisson rate q = L/N̂ and the
  number of steps, so neither reads the exact N;
- the label shares the generator draws its labels from (a public prior replaces them when given);
- with no public class list, the label set itself, by Gaussian partition selection: only labels
  present in the data have a count, and a label is released when its noisy count clears
  τ = 1 + σ·Φ⁻¹(1 − δ_τ), so a label that only the added image holds (count 1) is released with
  probability ≤ δ_τ, which the ledger adds to δ (`extra_delta`). Images whose label is not released
  are dropped. With a public class list the counts of all its classes are released (absent ones
  included) and there is no threshold; images whose label is not in the list are dropped.
The label names and the kept images follow from the released values only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgan.errors import InputError
from dpgan.privacy.accounting import LedgerEntry, PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts, set_union_threshold

LABELS_EVENT = "image count per label"
LABEL_SET_EVENT = "image count per label (Gaussian partition selection of the label set)"
THRESHOLD_DELTA = 0.1  # of δ: the chance that a label only one image holds is released
MIN_SHARE = 1e-3  # floor on a released share, so that G still draws a rare released label


@dataclass(frozen=True)
class ReleasedLabels:
    """What the release gives: the label names (public or released), their noisy counts, and the
    image count N̂. `names` is () for an unlabelled set."""

    names: tuple[str, ...]
    counts: np.ndarray
    total: float
    source: str  # "public", "dp" or "none"

    @property
    def shares(self) -> np.ndarray:
        counts = np.maximum(self.counts, 0.0)
        shares = counts + MIN_SHARE * max(float(counts.sum()), 1.0)
        return shares / shares.sum()


def release_labels(
    label_names: list[str] | None,
    codes: np.ndarray | None,
    images: int,
    *,
    classes: tuple[str, ...] | None,
    target: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> ReleasedLabels:
    """One Gaussian release of the per-label image counts (module docstring), in `ledger`.

    `label_names`/`codes` are the data's labels (names of codes 0..K-1), None for unlabelled
    images; `classes` the public class list, if any."""
    if codes is None:
        sigma = target.sigma(1.0, 1, ledger.entries)
        noisy = noisy_counts(np.array([float(images)]), sigma, rng)
        ledger.add(LedgerEntry(LABELS_EVENT, sigma, count=1, note="the image count; one image changes it by 1"))
        return ReleasedLabels((), np.zeros(0), max(float(noisy[0]), 1.0), "none")
    assert label_names is not None
    present = np.bincount(codes, minlength=len(label_names)).astype(np.float64)
    if classes is not None:
        by_name = dict(zip(label_names, present))
        counts = np.array([by_name.get(name, 0.0) for name in classes])
        sigma = target.sigma(1.0, 1, ledger.entries)
        noisy = noisy_counts(counts, sigma, rng)
        note = "counts of the public classes; one image changes one count by 1"
        ledger.add(LedgerEntry(LABELS_EVENT, sigma, count=1, note=note))
        return ReleasedLabels(tuple(classes), noisy, max(float(np.maximum(noisy, 0).sum()), 1.0), "public")
    threshold_delta = THRESHOLD_DELTA * target.delta
    pending = LedgerEntry("label threshold", 1.0, count=0, extra_delta=threshold_delta)
    sigma = target.sigma(1.0, 1, [*ledger.entries, pending])
    threshold = set_union_threshold(sigma, threshold_delta)
    held = present > 0  # labels absent from the data have no count: never released
    noisy = noisy_counts(present[held], sigma, rng)
    note = f"counts of the labels present; released above τ={threshold:.4g}, extra δ for a label one image holds"
    ledger.add(LedgerEntry(LABEL_SET_EVENT, sigma, count=1, extra_delta=threshold_delta, note=note))
    names = [name for name, h in zip(label_names, held) if h]
    kept = [(name, c) for name, c in zip(names, noisy) if c > threshold]
    if len(kept) < 2:
        raise InputError(
            "fewer than two labels are frequent enough to release with DP at this ε; give the class list "
            "(classes=[...] or --classes A,B,...)"
        )
    counts = np.array([c for _, c in kept])
    return ReleasedLabels(tuple(n for n, _ in kept), counts, max(float(counts.sum()), 1.0), "dp")


def kept_codes(label_names: list[str], codes: np.ndarray, released: ReleasedLabels) -> tuple[np.ndarray, np.ndarray]:
    """(mask of images whose label was released, their codes in the released order)."""
    position = {name: i for i, name in enumerate(released.names)}
    mapped = np.array([position.get(name, -1) for name in label_names], dtype=np.int64)
    new = mapped[codes]
    return new >= 0, new[new >= 0]


__all__ = ["LABELS_EVENT", "LABEL_SET_EVENT", "ReleasedLabels", "kept_codes", "release_labels"]
