"""LOGAN, white box (Hayes et al., PoPETs 2019): the critic ranks its own training records higher.

A released dpgan model has no critic by design. The white-box attacker of Hayes et al. holds the
critic of a GAN trained on the private data, so this attack trains a stand-in: the model's recipe
fitted on (a sample of) the real training table. Its critic scores those training records
(members) and as many holdout records (non-members); the top-n guess (n = number of members) is
scored by precision, and the score itself by ROC AUC. An overfitted critic puts its members on
top; a DP critic cannot single them out.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan.errors import InputError
from dpgan.evaluation.attacks.config import AttackConfig
from dpgan.evaluation.attacks.progress import Progress
from dpgan.evaluation.attacks.results import skipped
from dpgan.evaluation.attacks.scoring import membership_scores
from dpgan.evaluation.attacks.synthesizers import SynthesizerFactory
from dpgan.evaluation.tables.attacks.dcr import sample_rows
from dpgan.tables.reading.conform import validate_table

STAGE = "attacks: LOGAN (white-box critic)"
Scorer = Callable[[pd.DataFrame], np.ndarray]


def critic_scorer(synthesizer: Any) -> Scorer | None:
    """D(x) of a fitted synthesizer's in-memory critic on its own encoding; None if it has no critic."""
    critic = getattr(synthesizer, "critic_for_evaluation", None)
    encoder = getattr(synthesizer, "encoder", None)
    if critic is None or encoder is None:
        return None
    schema = getattr(synthesizer, "schema", None)

    def score(frame: pd.DataFrame) -> np.ndarray:
        if schema is not None:
            frame = validate_table(frame, schema)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = torch.as_tensor(np.asarray(encoder.encode(frame), dtype=np.float32))
        if isinstance(critic, torch.nn.Module):
            critic.eval()
        with torch.no_grad():
            return np.asarray(critic(x), dtype=np.float64).reshape(-1)

    return score


def logan_from_scores(members: pd.DataFrame, non_members: pd.DataFrame, score: Scorer) -> dict[str, Any]:
    """Top-n precision and ROC of a record scorer (higher: "member")."""
    return membership_scores(score(members), score(non_members))


def logan_attack(
    real_train: pd.DataFrame,
    holdout: pd.DataFrame,
    *,
    factory: SynthesizerFactory,
    config: AttackConfig,
    schema: Any = None,
    rng: np.random.Generator,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train the stand-in on a sample of `real_train`, score it against an equal-size holdout sample."""
    n = min(config.logan_train_size or len(real_train), len(real_train), len(holdout))
    if n < 1:
        raise InputError("LOGAN needs training and holdout rows")
    members = sample_rows(real_train, n, rng).reset_index(drop=True)
    non_members = sample_rows(holdout, n, rng).reset_index(drop=True)
    if progress:
        progress(STAGE, 0, 1)
    synth = factory(rows=n, seed=int(rng.integers(2**31)))
    synth.fit(members, schema=schema)
    if progress:
        progress(STAGE, 1, 1)
    score = critic_scorer(synth)
    if score is None:
        return skipped("the synthesizer keeps no critic (critic_for_evaluation) to score records with")
    out: dict[str, Any] = {"skipped": False}
    out.update(logan_from_scores(members, non_members, score))
    out["settings"] = {"training_rows": n}
    out["note"] = (
        "top_n_precision ≈ 0.5 and AUC ≈ 0.5: the critic of a model trained with this recipe does not "
        "rank its training records above unseen ones; near 1: it memorised them. The released model has "
        "no critic: this is what an attacker holding one would learn."
    )
    return out
