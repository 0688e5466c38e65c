"""Membership inference with shadow models (Stadler et al., "Synthetic Data – Anonymisation
Groundhog Day", USENIX Security 2022; first circulated as "…a privacy mirage").

For each target record t, the attacker (who knows the synthesizer's recipe and holds reference
data R from the same population) trains the synthesizer on n_shadow training sets drawn from R,
each once without t and once with t replacing a random row (equal sizes, so the row count tells
nothing), and samples n_syn_sets synthetic tables from every fit. Each table is summarised by the
naive and correlation features, and a random forest learns "was t in the training set?". It is
tested on fresh fits on sets drawn from the real training table (without t / with t).

Reported per target and averaged: accuracy, TPR, FPR, Adv = TPR − FPR, AUC, the mean probability
of the right answer P_fake, and the privacy gain PG = (P_real − P_fake)/2 with P_real = 1 (on the
raw table the target's presence is certain): PG = 0 is a complete leak, 0.25 no leak at all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpgan.errors import InputError
from dpgan.evaluation.attacks.config import AttackConfig
from dpgan.evaluation.attacks.progress import Progress
from dpgan.evaluation.attacks.shadow import attack_model_probabilities, labelled, pair_positions, summarise_targets
from dpgan.evaluation.attacks.synthesizers import SynthesizerFactory
from dpgan.evaluation.tables.attacks.encoding import AttackEncoder
from dpgan.evaluation.tables.attacks.features import table_features

STAGE = "attacks: membership (shadow models)"


def training_pairs(
    source: pd.DataFrame, target: pd.DataFrame, size: int, runs: int, rng: np.random.Generator
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """`runs` pairs (without t, with t): a random set of `size` rows, and the same with t replacing one row."""
    pairs = []
    for chosen, keep in pair_positions(len(source), size, runs, rng):
        out = source.iloc[chosen].reset_index(drop=True)
        with_target = pd.concat([out.iloc[keep], target], ignore_index=True)
        pairs.append((out, with_target.astype(out.dtypes.to_dict(), errors="ignore")))
    return pairs


def shadow_membership_attack(
    reference: pd.DataFrame,
    test_pool: pd.DataFrame,
    targets: list[tuple[str, pd.DataFrame]],
    *,
    factory: SynthesizerFactory,
    encoder: AttackEncoder,
    config: AttackConfig,
    schema: Any = None,
    rng: np.random.Generator,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the attack for every (label, one-row frame) target; `test_pool` must not contain them.

    `reference` is the attacker's data R (the holdout), `test_pool` the table fresh test fits are drawn
    from (the real training table minus the targets), `factory` builds the synthesizer to attack.
    """
    size = min(config.shadow_train_size, len(reference), len(test_pool))
    if size < 2:
        raise InputError("the shadow-model attack needs at least 2 reference and 2 training rows")
    fits_per_target = 2 * (config.n_shadow + config.n_test_runs)
    total = fits_per_target * len(targets)
    done = 0
    if progress:
        progress(STAGE, 0, total)

    def synthetic_features(data: pd.DataFrame) -> list[np.ndarray]:
        nonlocal done
        synth = factory(rows=len(data), seed=int(rng.integers(2**31)))
        synth.fit(data, schema=schema)
        tables = [synth.sample(config.syn_rows, seed=int(rng.integers(2**31))) for _ in range(config.n_syn_sets)]
        done += 1
        if progress:
            progress(STAGE, done, total)
        return [table_features(t, encoder) for t in tables]

    per_target = []
    for label, target in targets:
        X_train, y_train = labelled(training_pairs(reference, target, size, config.n_shadow, rng), synthetic_features)
        X_test, y_test = labelled(training_pairs(test_pool, target, size, config.n_test_runs, rng), synthetic_features)
        p_in = attack_model_probabilities(X_train, y_train, X_test, trees=config.attack_trees, rng=rng)
        per_target.append((label, y_test, p_in))

    out = summarise_targets(per_target)
    out["settings"] = {
        "targets": len(targets),
        "training_set_rows": size,
        "shadow_sets": config.n_shadow,
        "test_runs": config.n_test_runs,
        "synthetic_sets_per_fit": config.n_syn_sets,
        "synthetic_rows": config.syn_rows,
        "fits": total,
        "features": "naive + correlations",
        "attack_model": f"random forest ({config.attack_trees} trees)",
    }
    out["note"] = (
        "Accuracy ≈ 0.5 and privacy_gain ≈ 0.25: the synthetic data does not reveal whether the target "
        "was trained on; accuracy ≈ 1 and privacy_gain ≈ 0: it does. auc/roc pool the test guesses of all "
        "targets. An accuracy near 0.5 is no proof of DP."
    )
    return out
