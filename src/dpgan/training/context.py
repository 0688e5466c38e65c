"""What every private release of one fit shares: the ledger, the budget's shares, the random generator.

A fit spends one (ε, δ) in several releases: the data kind's (unit counts, a DP schema or shape,
the label set), each plug-in's (anchors, label models, a label guide, a Gaussian base), then the
GAN's steps on what is left. The releases before the GAN are calibrated to cumulative shares of ε
(`FitBudget.at`: the ledger's ε after this release reaches that share), so the context keeps
the share the releases so far have reached: a release asks `target(share)` for its own, and the
pipeline moves `spent_share` on after it (dpgan.fit). The last word is always the ledger's: the
GAN's σ is calibrated on what the ledger has committed, and the fit checks the ledger at the end.

The random generator is the fit's one source of randomness for NumPy-side draws (and seeds for the
torch generators of each part), created before anything is read, so a seeded fit is reproducible.
"""

from __future__ import annotations

import secrets

import numpy as np
import torch

from dpgan.devices import seeded_generator
from dpgan.errors import BudgetError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.privacy.calibration import FitBudget, ShareTarget


class FitContext:
    """The fit's one budget (the facade's `FitBudget`, held, not copied), the ledger, the share of ε
    the releases so far reach and the random generator of one fit."""

    def __init__(
        self, budget: FitBudget, ledger: PrivacyLedger, rng: np.random.Generator, spent_share: float = 0.0
    ) -> None:
        """A context around a ledger and a generator, the releases so far reaching `spent_share` of
        ε (the tables open their ledger with a schema's purchase and draw from the facade's rng)."""
        self.budget, self.ledger, self.rng = budget, ledger, rng
        self.spent_share = spent_share  # the share of ε the releases so far reach (releases before the GAN)

    @classmethod
    def open(cls, budget: FitBudget) -> FitContext:
        """A new fit's context: an empty ledger, and the generator from the seed (OS entropy without
        one); seeded, the networks' initial weights are seeded too."""
        rng = np.random.default_rng(budget.seed if budget.seed is not None else secrets.randbits(64))
        if budget.seed is not None:
            torch.manual_seed(budget.seed)  # the networks' initial weights
        return cls(budget, PrivacyLedger(budget=budget.ledger_budget()), rng)

    def target(self, share: float) -> ShareTarget:
        """The target of a release of `share` of ε after those made so far."""
        return self.budget.at(self.spent_share + share)

    def spend(self, share: float) -> None:
        """A release of `share` of ε was made (the ledger holds its entry)."""
        self.spent_share += share

    def torch_generator(self) -> torch.Generator:
        """A torch generator on the fit's device, seeded from the fit's random generator."""
        return seeded_generator(int(self.rng.integers(0, 2**63 - 1)))

    def epsilon_spent(self) -> float:
        return self.ledger.epsilon(self.budget.delta, self.budget.accountant)

    def check_spent(self) -> None:
        """The fit's final check: the ledger's ε is within the target (a failure is a bug, never data)."""
        spent = self.epsilon_spent()
        if spent > self.budget.epsilon * (1 + 1e-9):
            raise BudgetError(f"internal error: the ledger spent ε={spent:.4f} > target {self.budget.epsilon}")


__all__ = ["FitContext"]
