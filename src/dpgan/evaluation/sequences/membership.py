"""Shadow-model membership inference on series (Stadler et al., USENIX Security 2022, for issue 15).

The tabular attack (dpgan.evaluation.tables.attacks.membership) asked on series: for a target series
t, the attacker, who knows the synthesizer's recipe and holds reference series R from the same
population, trains the synthesizer on `n_shadow` sets of `size` series drawn from R, each once
without t and once with t replacing a random series (equal sizes: the count tells nothing), and
summarises every synthetic set by features. A random forest learns "was t in the training set?" from
those features and is tested on fresh fits on sets drawn from `test_pool` (the real training series
minus the targets). The pairs, the attack model and the scores are the tabular attack's own, shared
(dpgan.evaluation.attacks.shadow: `pair_positions`, `labelled`, `attack_model_probabilities`,
`summarise_targets`): accuracy, TPR, FPR, Adv = TPR − FPR, AUC (pooled over targets), P_success and
the privacy gain PG (0: a complete leak, 0.25: none).

Features of one synthetic set S for target t (`series_set_features`), in the units given:
- the distances from t to the series of S, Euclidean on the flattened series and (`dtw=True`) by
  dynamic time warping (dpgan.evaluation.sequences.metrics.dtw_matrix): the NEAREST smallest and the
  DISTANCE_QUANTILES. A synthesizer that copies or over-fits t puts a series near t;
- with labels: the share of S carrying t's label and the same distance summary within that label;
- naive summaries (Stadler's F_Naive for series): per-step mean and standard deviation of S and
  its lag-1 autocorrelation (an outlier target shifts them when the synthesizer follows its data).

Targets: given, or by default the `n_targets` reference series most isolated from the rest (largest
mean Euclidean distance to their 5 nearest reference neighbours, the tabular rule of
dpgan.evaluation.attacks.targets.most_isolated): Stadler et al. found outliers carry most of the
risk. Default targets, and any exact copies of them, are removed from the reference, so no "without"
set holds them; given targets must appear in neither the reference nor the test pool (an InputError
otherwise). The result names targets by position only: no series value reaches it.

The synthesizer under attack is a callable `fit_sample(values, labels, *, n, seed) -> (values,
labels)`: fit on (size, T, F) series (labels None when the attack has none) and return n synthetic
series (and labels). Each fit is asked for `n_syn_sets · synthetic_size` series at once, split into
`n_syn_sets` sets (equal in law to sampling the sets one by one from the fitted model). A DP
Gaussian, a short DP GAN or a non-private control all plug in; bench/attacks_series.py runs it on
the water district-days:

    python bench/attacks_series.py --systems gaussian --epsilons inf 3

Cost: `n_targets · 2 · (n_shadow + n_test_runs)` fits. A result near chance is no proof of DP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpgan.errors import InputError
from dpgan.evaluation.attacks.config import check_positive_int
from dpgan.evaluation.attacks.progress import Progress
from dpgan.evaluation.attacks.shadow import attack_model_probabilities, labelled, pair_positions, summarise_targets
from dpgan.evaluation.attacks.targets import ISOLATION_NEIGHBOURS, most_isolated
from dpgan.evaluation.sequences.metrics import autocorrelation, dtw_matrix
from dpgan.training.progress_bar import quiet_fits

STAGE = "attacks: membership on series (shadow models)"
NEAREST = 3  # the smallest distances kept as features
DISTANCE_QUANTILES = (0.01, 0.05, 0.1, 0.25, 0.5)
TARGET_RULE = (
    f"the reference series with the largest mean Euclidean distance to their {ISOLATION_NEIGHBOURS} "
    "nearest reference neighbours (removed from the reference)"
)


class SeriesFitSample(Protocol):
    """The synthesizer under attack: fit on series (and labels), return n synthetic ones."""

    def __call__(
        self, values: np.ndarray, labels: np.ndarray | None, *, n: int, seed: int
    ) -> tuple[np.ndarray, np.ndarray | None]: ...


@dataclass(frozen=True)
class SeriesData:
    """Series (N, T, F) and their labels (N,) or None: one training or synthetic set."""

    values: np.ndarray
    labels: np.ndarray | None

    def __len__(self) -> int:
        return len(self.values)


def series_training_pairs(
    source: SeriesData,
    target: np.ndarray,
    target_label: Any,
    size: int,
    runs: int,
    rng: np.random.Generator,
) -> list[tuple[SeriesData, SeriesData]]:
    """`runs` pairs (without t, with t): `size` random series of `source`, and the same with t
    (and its label) replacing one of them: the tabular `training_pairs` on arrays."""
    pairs = []
    for chosen, keep in pair_positions(len(source), size, runs, rng):
        values = source.values[chosen]
        with_values = np.concatenate([values[keep], target[None]])
        if source.labels is None:
            pairs.append((SeriesData(values, None), SeriesData(with_values, None)))
            continue
        labels = source.labels[chosen]
        with_labels = np.concatenate([labels[keep], np.asarray([target_label])])
        pairs.append((SeriesData(values, labels), SeriesData(with_values, with_labels)))
    return pairs


def distance_summary(distances: np.ndarray) -> np.ndarray:
    """The NEAREST smallest distances (the largest repeated when there are fewer) and the quantiles."""
    ordered = np.sort(np.asarray(distances, dtype=np.float64))
    smallest = ordered[np.minimum(np.arange(NEAREST), len(ordered) - 1)]
    return np.concatenate([smallest, np.quantile(ordered, DISTANCE_QUANTILES)])


def series_set_features(
    synthetic: SeriesData, target: np.ndarray, target_label: Any = None, *, dtw: bool = True
) -> np.ndarray:
    """One fixed-length vector summarising a synthetic set for target t (the module docstring's list)."""
    values = synthetic.values
    flat = values.reshape(len(values), -1)
    euclidean = np.linalg.norm(flat - target.reshape(1, -1), axis=1)
    parts = [distance_summary(euclidean)]
    if dtw:
        parts.append(distance_summary(dtw_matrix(target[None], values)[0]))
    if synthetic.labels is not None:
        same = np.asarray(synthetic.labels).astype(str) == str(target_label)
        parts.append(np.array([same.mean()]))
        # no series of t's label: as far as the farthest series of any label (a fixed-length stand-in)
        within = euclidean[same] if same.any() else euclidean.max(keepdims=True)
        parts.append(distance_summary(within))
    parts += [values.mean(axis=0).ravel(), values.std(axis=0).ravel(), autocorrelation(values, 1)[:, 0]]
    return np.concatenate(parts)


def shadow_membership_series(
    reference: np.ndarray,
    test_pool: np.ndarray,
    targets: np.ndarray | None = None,
    *,
    fit_sample: SeriesFitSample,
    rng: np.random.Generator,
    reference_labels: np.ndarray | None = None,
    test_pool_labels: np.ndarray | None = None,
    target_labels: np.ndarray | None = None,
    n_targets: int = 3,
    n_shadow: int = 6,
    n_test_runs: int = 2,
    n_syn_sets: int = 5,
    size: int = 300,
    synthetic_size: int | None = None,
    attack_trees: int = 100,
    dtw: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the attack for every target and return the tabular attack's fields plus its settings.

    `reference` (the attacker's series) and `test_pool` (the real training series without the
    targets) are (N, T) or (N, T, F) arrays, `targets` a (k, T[, F]) array or None for the default
    rule; labels are all given or all omitted (`target_labels` only with given targets). `size` is
    the series per training set (capped by both pools), `synthetic_size` the series per synthetic
    set (None: `size`).
    """
    reference_set = _series_set(reference, reference_labels, "reference")
    pool = _series_set(test_pool, test_pool_labels, "test_pool")
    shape = reference_set.values.shape[1:]
    if pool.values.shape[1:] != shape:
        raise InputError(f"test_pool series have shape {pool.values.shape[1:]}, the reference's {shape}")
    if (reference_set.labels is None) != (pool.labels is None):
        raise InputError("give labels for both the reference and the test pool, or for neither")
    if not callable(fit_sample):
        raise InputError("fit_sample must be a callable fit_sample(values, labels, *, n, seed)")
    for name, value in (
        ("n_shadow", n_shadow),
        ("n_test_runs", n_test_runs),
        ("n_syn_sets", n_syn_sets),
        ("size", size),
        ("attack_trees", attack_trees),
    ):
        check_positive_int(value, name)
    if synthetic_size is not None:
        check_positive_int(synthetic_size, "synthetic_size")

    if targets is None:
        if target_labels is not None:
            raise InputError("target_labels needs targets: default targets take the reference's labels")
        check_positive_int(n_targets, "n_targets")
        reference_set, target_set, names = _default_targets(reference_set, n_targets)
    else:
        target_set = _series_set(targets, target_labels, "targets")
        if target_set.values.shape[1:] != shape:
            raise InputError(f"targets have shape {target_set.values.shape[1:]}, the reference's {shape}")
        if (target_set.labels is None) != (reference_set.labels is None):
            raise InputError("give target_labels exactly when the reference and test pool have labels")
        if _holds_any(reference_set.values, target_set.values).any():
            raise InputError("reference holds a target series: the sets without the target must not contain it")
        names = [f"target {i}" for i in range(len(target_set))]
    if _holds_any(pool.values, target_set.values).any():
        raise InputError("test_pool holds a target series: the sets without the target must not contain it")

    size = min(size, len(reference_set), len(pool))
    if size < 2:
        raise InputError("the shadow-model attack needs at least 2 reference and 2 test-pool series")
    syn_size = synthetic_size or size
    total = 2 * (n_shadow + n_test_runs) * len(target_set)
    done = 0
    if progress:
        progress(STAGE, 0, total)

    def features_for(target: np.ndarray, label: Any) -> Any:
        def synthetic_features(data: SeriesData) -> list[np.ndarray]:
            nonlocal done
            values, labels = _fitted_sample(fit_sample, data, n_syn_sets * syn_size, int(rng.integers(2**31)), shape)
            done += 1
            if progress:
                progress(STAGE, done, total)
            sets = [slice(i * syn_size, (i + 1) * syn_size) for i in range(n_syn_sets)]
            return [
                series_set_features(
                    SeriesData(values[s], None if labels is None else labels[s]), target, label, dtw=dtw
                )
                for s in sets
            ]

        return synthetic_features

    per_target = []
    for name, target, label in zip(names, target_set.values, _labels_or_none(target_set), strict=True):
        features = features_for(target, label)
        X_train, y_train = labelled(series_training_pairs(reference_set, target, label, size, n_shadow, rng), features)
        X_test, y_test = labelled(series_training_pairs(pool, target, label, size, n_test_runs, rng), features)
        p_in = attack_model_probabilities(X_train, y_train, X_test, trees=attack_trees, rng=rng)
        per_target.append((name, y_test, p_in))

    out = summarise_targets(per_target)
    out["settings"] = {
        "targets": len(target_set),
        "target_rule": TARGET_RULE if targets is None else "given",
        "training_set_series": size,
        "shadow_sets": n_shadow,
        "test_runs": n_test_runs,
        "synthetic_sets_per_fit": n_syn_sets,
        "synthetic_series": syn_size,
        "fits": total,
        "features": "distances to the target (Euclidean"
        + (", DTW" if dtw else "")
        + (", within its label, label share" if reference_set.labels is not None else "")
        + ") + per-step mean and std + lag-1 autocorrelation",
        "attack_model": f"random forest ({attack_trees} trees)",
    }
    out["note"] = (
        "Accuracy ≈ 0.5 and privacy_gain ≈ 0.25: the synthetic series do not reveal whether the target "
        "series was trained on; accuracy ≈ 1 and privacy_gain ≈ 0: they do. auc/roc pool the test guesses "
        "of all targets. An accuracy near 0.5 is no proof of DP."
    )
    return out


def _series_set(values: Any, labels: Any, name: str) -> SeriesData:
    """Checked float64 (N, T, F) series and their labels; messages name the argument, never a value."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array of series") from None
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3:
        raise InputError(f"{name} must be an (N, T) or (N, T, F) array of series, not {array.ndim}-dimensional")
    if len(array) == 0 or array.shape[1] == 0 or array.shape[2] == 0:
        raise InputError(f"{name} holds no series")
    if not np.isfinite(array).all():
        raise InputError(f"{name} holds a missing or infinite value")
    if labels is None:
        return SeriesData(array, None)
    labels = np.asarray(labels)
    if labels.ndim != 1 or len(labels) != len(array):
        raise InputError(f"{name} needs one label per series ({len(array)}), got shape {labels.shape}")
    return SeriesData(array, labels)


def _holds_any(pool: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """For each pool series: is it an exact copy of one of the targets?"""
    flat, wanted = pool.reshape(len(pool), -1), targets.reshape(len(targets), -1)
    return np.array([(row == wanted).all(axis=1).any() for row in flat], dtype=bool)


def _default_targets(reference: SeriesData, k: int) -> tuple[SeriesData, SeriesData, list[str]]:
    """The k most isolated reference series (TARGET_RULE), and the reference without them or copies."""
    if len(reference) < k + 2:
        raise InputError(f"n_targets={k} leaves fewer than 2 reference series for the shadow sets")
    picked = most_isolated(reference.values.reshape(len(reference), -1), k)
    targets = SeriesData(reference.values[picked], None if reference.labels is None else reference.labels[picked])
    keep = ~_holds_any(reference.values, targets.values)
    rest = SeriesData(reference.values[keep], None if reference.labels is None else reference.labels[keep])
    return rest, targets, [f"reference series (position {i})" for i in picked]


def _labels_or_none(data: SeriesData) -> Sequence[Any]:
    return [None] * len(data) if data.labels is None else list(data.labels)


def _fitted_sample(
    fit_sample: SeriesFitSample, data: SeriesData, n: int, seed: int, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray | None]:
    """Fit on one training set and check what comes back: n series of the data's shape (and labels).
    The fit shows no bar of its own (the attack's stage bar counts the fits)."""
    given_labels = None if data.labels is None else data.labels.copy()
    with quiet_fits():
        values, labels = fit_sample(data.values.copy(), given_labels, n=n, seed=seed)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 2 and shape[1] == 1:
        values = values[:, :, None]
    if values.shape != (n, *shape):
        raise InputError(f"fit_sample returned series of shape {values.shape}, expected {(n, *shape)}")
    if not np.isfinite(values).all():
        raise InputError("fit_sample returned a missing or infinite value")
    if data.labels is None:
        return values, None
    if labels is None or np.asarray(labels).shape != (n,):
        raise InputError(f"fit_sample must return one label per synthetic series ({n})")
    return values, np.asarray(labels)


__all__ = [
    "SeriesFitSample",
    "SeriesData",
    "distance_summary",
    "series_set_features",
    "series_training_pairs",
    "shadow_membership_series",
]
