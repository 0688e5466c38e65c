"""A fit's DP checkpoint selection, step by step (dpgan.training.selection has the mechanism):
the held-out part of the rows, the ledger reservation made before σ is calibrated, and the choice
among G's snapshots after training, charged to that reservation.

Privacy: each record is held out by a keyed hash of its own encoding, so adding or removing one
record moves no other record across the split; the GAN and the extras read only the training part,
the exponential mechanism only the held-out part, and the two are composed one after the other in
the ledger (parallel composition would be tighter; it is not claimed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from dpgan.privacy.accounting import PrivacyLedger, Reservation
from dpgan.privacy.calibration import FitBudget
from dpgan.privacy.releases import pure_dp_event_entry
from dpgan.tables.codec.conditioning import Condition
from dpgan.tables.codec.encoder import TableEncoder
from dpgan.tables.settings import TableSettings
from dpgan.training.config import TrainingConfig
from dpgan.training.gan_loop import generator_for
from dpgan.training.selection import (
    SCORE_RANGE,
    SELECTION_EVENT,
    SnapshotKeeper,
    heldout_mask,
    released_generator,
    select_snapshots,
)


@dataclass
class Holdout:
    """The two parts of the encoded table for a DP selection (dpgan.training.selection)."""

    training: torch.Tensor
    heldout: torch.Tensor

    @staticmethod
    def training_rows(rows: int, settings: TableSettings) -> int:
        """The training part's expected size from the DP row count and the public rate (no new read)."""
        return max(1, int(round(rows * (1.0 - settings.selection_holdout))))


def split_heldout(encoded: torch.Tensor, settings: TableSettings, rng: np.random.Generator) -> Holdout:
    """Each record held out with probability h by a keyed hash of its own encoding; the key is
    drawn here from the fit's RNG (only when selection is on) and never saved."""
    mask = torch.from_numpy(heldout_mask(encoded.cpu().numpy(), settings.selection_holdout, rng.bytes(32)))
    return Holdout(training=encoded[~mask], heldout=encoded[mask])


@dataclass
class Selection:
    """A reserved selection: its ledger reservation, ε, and the snapshots the loop fills."""

    reservation: Reservation
    epsilon: float
    keeper: SnapshotKeeper


def reserve_selection(ledger: PrivacyLedger, cfg: TableSettings, budget: FitBudget) -> Selection:
    """Q pure (ε_sel/Q)-DP releases, ε_sel = selection_budget_fraction·ε of the fit's `budget`,
    reserved in the ledger."""
    epsilon = cfg.selection_budget_fraction * budget.epsilon
    note = (
        f"exponential mechanism (Gumbel report-noisy-max) over {cfg.select_checkpoints} snapshots of G, "
        f"{cfg.select_top} round(s) at ε={epsilon / cfg.select_top:.4g} each; utility: Brier score of 2-way "
        f"marginals summed over held-out records (each in [-1, 1], range {SCORE_RANGE:g}); pure ε-DP, "
        "accounted as binary randomized response (its dominating pair)"
    )
    entry = pure_dp_event_entry(SELECTION_EVENT, epsilon / cfg.select_top, note=note)
    return Selection(ledger.reserve(entry, cfg.select_top), epsilon, SnapshotKeeper(cfg.select_checkpoints))


def select_released(
    selection: Selection,
    holdout: Holdout,
    encoder: TableEncoder,
    condition: Condition | None,
    config: TrainingConfig,
    cfg: TableSettings,
    torch_gen: torch.Generator,
    rng: np.random.Generator,
) -> tuple[torch.nn.Module, dict[str, Any]]:
    """The DP choice among the snapshots (charged to its reservation) and what the model records."""
    steps_states = selection.keeper.candidates()
    states = [state for _, state in steps_states]

    def build() -> torch.nn.Module:
        return generator_for(config, encoder.spans, condition)

    chosen = select_snapshots(
        states,
        build,
        holdout.heldout,
        encoder.spans,
        epsilon=selection.epsilon,
        top=cfg.select_top,
        samples=cfg.selection_samples,
        noise_dim=config.noise_dim,
        condition=condition,
        generator=torch_gen,
        rng=rng,
    )
    for _ in chosen:
        selection.reservation.charge()
    record = {
        "candidates": len(states),
        "snapshot_steps": [step for step, _ in steps_states],
        "chosen_steps": [steps_states[k][0] for k in chosen],
        "epsilon": selection.epsilon,
        "heldout_rate": cfg.selection_holdout,
        "score": "Brier score of the 2-way marginals of the discretised columns",
    }
    return released_generator(chosen, states, build), record
