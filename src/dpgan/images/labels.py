"""The releases an image fit makes before the GAN: the image shape (PNG folders only), and one
histogram of how many images it kept per label and dropped per reason.

The unit is one image with its label (dpgan.privacy.unit_rule). Every public fact the fit needs
from the images comes out of these releases, so none is decided by one image:

**The tally** (`release_labels`, always; one ledger event at σ). Each image sits in exactly one
cell: its label's cell if kept (one cell "kept" for an unlabelled set), else the cell of the
reason it was dropped for (the reader's reasons, e.g. "pixels outside [0, 1]", "unreadable PNG",
"another shape", and "label not in the class list" with a public class list; all fixed before
any image is read). Adding or removing one image moves one cell by 1, so the vector has L2
sensitivity 1 and its Gaussian release is one event. What it buys:
- the image count N̂ (the sum of the kept cells), which sets the Poisson rate q = L/N̂ and the
  number of steps, so neither reads the exact N;
- the label shares the generator draws its labels from (a public prior replaces them when given);
- the dropped counts per reason, for the training record and the report (`ReleasedTally`);
- with no public class list, the label set itself, by Gaussian partition selection: only labels
  present in the data have a cell, and a label is released when its noisy count clears
  τ = 1 + σ·Φ⁻¹(1 − δ_τ), so a label that only the added image holds (count 1) is released with
  probability ≤ δ_τ, which the ledger adds to δ (`extra_delta`). Images whose label is not
  released are dropped (their cells are not published, so they are not in the dropped counts).
  With a public class list the cells of all its classes are released (absent ones included) and
  there is no threshold. The reason cells are public keys: always released, no threshold.
Refusing because the DP release kept fewer than two labels is post-processing of a DP output.

**The shape** (`release_shape`, a PNG folder read without a declared shape; its own event before
the tally). A folder may hold PNGs of several (C, H, W); the shape to train at is chosen by
Gaussian partition selection over the shapes present (one image in one shape's count, τ and
extra δ as for labels), the released shape with the largest noisy count. The images of other
shapes are then dropped and counted in the tally. An array's shape, or a declared one, is public
and costs nothing.

Label names and their order, the shape and the kept images follow from released values and
public inputs only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import ShareTarget
from dpgan.privacy.mechanisms import noisy_counts, set_union_threshold
from dpgan.privacy.partition_selection import RELEASE_PROBABILITY, needs_second_chance, second_release
from dpgan.privacy.releases import charge_gaussian, threshold_pending
from dpgan.privacy.unit_rule import ReleasedTally, UnitTally, release_tally

LABELS_EVENT = "image count (kept per label, dropped per reason)"
LABEL_SET_EVENT = "image count (kept per label, dropped per reason; Gaussian partition selection of the label set)"
SHAPE_EVENT = "image count per shape (Gaussian partition selection of the image shape)"
CLASS_REASON = "label not in the class list"
THRESHOLD_DELTA = 0.1  # of δ: the chance that a label only one image holds is released
SHAPE_THRESHOLD_DELTA = 0.05  # of δ: the chance that a shape only one image holds is released
MIN_SHARE = 1e-3  # floor on a released share, so that G still draws a rare released label
# the label set's second chance (dpgan.privacy.partition_selection): a label of this many images is
# released with probability 0.95 when the first release kept fewer than two, spending at most
# SECOND_LABEL_SHARE more of ε (public settings, chosen on validation data: bench/RESULTS.md §19)
LABEL_TARGET_IMAGES = 100.0
SECOND_LABEL_SHARE = 0.10
LABEL_SET_AGAIN_EVENT = "image count per label again (second chance for the label set)"


def _noise_stream(rng: np.random.Generator) -> np.random.Generator:
    """A generator for one release's noise, spawned from `rng` by one draw: the fit's own stream
    then moves on by the same amount however many cells (labels, shapes present) the release has,
    so a seeded fit's later draws do not depend on that count."""
    return np.random.default_rng(int(rng.integers(0, 2**63 - 1)))


@dataclass(frozen=True)
class ReleasedLabels:
    """What the release gives: the label names (public or released), their noisy counts, the image
    count N̂ and the released tally (kept and dropped per reason). `names` is () for an unlabelled set."""

    names: tuple[str, ...]
    counts: np.ndarray
    total: float
    source: str  # "public", "dp" or "none"
    tally: ReleasedTally
    second_chance: bool = False  # the label set needed the second release (its share is then spent)

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
    reasons: tuple[str, ...] = (),
    dropped: dict[str, int] | None = None,
    classes: tuple[str, ...] | None,
    target: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    second_cap: ShareTarget | None = None,
    empty_advice: Callable[[ReleasedTally], str] | None = None,
    label_counts: np.ndarray | None = None,
) -> ReleasedLabels:
    """One Gaussian release of the image tally (module docstring), in `ledger`.

    `label_names`/`codes` are the kept images' labels (names of codes 0..K-1), None for unlabelled
    images, and `images` their number; `reasons`/`dropped` the reader's drops (private counts,
    released here); `classes` the public class list, if any. `empty_advice` gives, from the
    released tally, what the refusal for too few released labels adds when a dropped count stands
    out of the noise (e.g. float pixels outside [0, 1]: then the labels are not the only problem).
    `label_counts` (one per name) replaces `codes` when the images were counted in blocks
    (dpgan.images.stream_fit): the same counts, without holding a code per image."""
    tally = UnitTally(
        reasons + ((CLASS_REASON,) if classes is not None and (codes is not None or label_counts is not None) else ())
    )
    noise = _noise_stream(rng)
    for reason, count in (dropped or {}).items():
        tally.drop(reason, count)
    if codes is None and label_counts is None:
        tally.keep(images)
        released, _ = release_tally(
            tally, unit="image", units="images", event=LABELS_EVENT, target=target, ledger=ledger, rng=noise
        )
        return ReleasedLabels((), np.zeros(0), released.estimated_units, "none", released)
    assert label_names is not None
    if label_counts is not None:
        present = np.asarray(label_counts, dtype=np.float64)
    else:
        assert codes is not None
        present = np.bincount(codes, minlength=len(label_names)).astype(np.float64)
    if classes is not None:
        by_name = dict(zip(label_names, present))
        counts = np.array([by_name.get(name, 0.0) for name in classes])
        tally.drop(CLASS_REASON, int(present.sum() - counts.sum()))
        released, noisy = release_tally(
            tally,
            unit="image",
            units="images",
            event=LABELS_EVENT,
            target=target,
            ledger=ledger,
            rng=noise,
            extra_cells=counts,
            extra_note="kept images counted per class of the public list",
        )
        released = replace(released, kept=float(np.maximum(noisy, 0).sum()))
        return ReleasedLabels(tuple(classes), noisy, released.estimated_units, "public", released)
    threshold_delta = THRESHOLD_DELTA * target.delta
    held = present > 0  # labels absent from the data have no cell: never released
    released, noisy = release_tally(
        tally,
        unit="image",
        units="images",
        event=LABEL_SET_EVENT,
        target=target,
        ledger=ledger,
        rng=noise,
        extra_cells=present[held],
        extra_note="kept images counted per label present; a label is released above τ, extra δ for a label "
        "one image holds",
        extra_delta=threshold_delta,
    )
    threshold = set_union_threshold(released.noise_multiplier, threshold_delta)
    names = [name for name, h in zip(label_names, held) if h]
    kept = [(name, c) for name, c in zip(names, noisy) if c > threshold]
    second = second_cap is not None and needs_second_chance([c for _, c in kept], threshold)
    if second:  # decided by the first release's output only (never by how many labels are present)
        assert second_cap is not None
        again = second_release(
            present[held],
            noisy,
            released.noise_multiplier,
            target_units=LABEL_TARGET_IMAGES,
            threshold_delta=threshold_delta,
            cap=second_cap,
            ledger=ledger,
            rng=noise,
            event=LABEL_SET_AGAIN_EVENT,
            note=f"the label counts again (fresh noise), combined with the first; a label with "
            f"{LABEL_TARGET_IMAGES:g} images is released with probability {RELEASE_PROBABILITY:g}",
        )
        first_kept = {name for name, _ in kept}
        kept = [(name, c) for name, c, r in zip(names, again.counts, again.released) if r or name in first_kept]
    released = replace(released, kept=float(sum(c for _, c in kept)))
    if len(kept) < 2:
        # what the release shows was dropped, with the caller's advice for it (post-processing)
        dropped = f"; {empty_advice(released)}" if empty_advice is not None and released.noticeable() else ""
        raise InputError(
            "fewer than two labels are frequent enough to release with DP at this ε (a decision on the DP "
            f"release only: {released.describe()}); give the class list (classes=[...] or --classes A,B,...), "
            f"or fit unconditionally if the images carry no labels{dropped}"
        )
    counts = np.array([c for _, c in kept])
    return ReleasedLabels(tuple(n for n, _ in kept), counts, released.estimated_units, "dp", released, second)


def kept_codes(label_names: list[str], codes: np.ndarray, released: ReleasedLabels) -> tuple[np.ndarray, np.ndarray]:
    """(mask of images whose label was released, their codes in the released order)."""
    position = {name: i for i, name in enumerate(released.names)}
    mapped = np.array([position.get(name, -1) for name in label_names], dtype=np.int64)
    new = mapped[codes]
    return new >= 0, new[new >= 0]


def release_shape(
    counts: dict[tuple[int, int, int], int],
    *,
    target: ShareTarget,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
) -> tuple[int, int, int]:
    """The image shape to train at, by Gaussian partition selection over the shapes present
    (module docstring): the released shape with the largest noisy count. Refuses when none is
    released, a decision on the DP release only."""
    threshold_delta = SHAPE_THRESHOLD_DELTA * target.delta
    pending = threshold_pending(threshold_delta)
    sigma = target.sigma(1.0, 1, [*ledger.entries, pending])
    threshold = set_union_threshold(sigma, threshold_delta)
    keys = sorted(counts)  # a public order (by shape), so the noise each key draws is not data-ordered
    note = f"images per (C, H, W) present; released above τ={threshold:.4g}, extra δ for a shape one image holds"
    charge_gaussian(ledger, SHAPE_EVENT, sigma, extra_delta=threshold_delta, note=note)
    noisy = noisy_counts(np.array([counts[k] for k in keys], dtype=np.float64), sigma, _noise_stream(rng))
    released = [(c, k) for k, c in zip(keys, noisy) if c > threshold]
    if not released:
        raise InputError(
            "no image shape is common enough to release with DP at this ε (a decision on the DP release only); "
            "declare it: ImageSynthesizer(image_shape=(C, H, W)), read_images(path, shape=...) or --image-shape CxHxW"
        )
    return max(released)[1]


__all__ = [
    "CLASS_REASON",
    "LABELS_EVENT",
    "LABEL_SET_AGAIN_EVENT",
    "LABEL_SET_EVENT",
    "LABEL_TARGET_IMAGES",
    "SECOND_LABEL_SHARE",
    "SHAPE_EVENT",
    "ReleasedLabels",
    "kept_codes",
    "release_labels",
    "release_shape",
]
