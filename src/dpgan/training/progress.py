"""The progress callback of a fit: (step, total, ε spent so far), cheap enough to leave on.

The ε shown is the ledger's own accountant's, never a looser bound capped at the target; how
often it is refreshed is set by what a refresh costs (StepReporter's docstring).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from dpgan.privacy.ledger import PrivacyLedger
from dpgan.privacy.ledger_entry import LedgerEntry

if TYPE_CHECKING:
    from dpgan.privacy.calibration import FitBudget
    from dpgan.privacy.composition import IncrementalAccountant

# what a user passes to fit(progress=...): (step, total, ε so far); the loops' own ProgressFn takes the step
FitProgressFn = Callable[[int, int, float], None]


class StepReporter:
    """Calls the user's progress function with (step, total, ε spent so far).

    The ε is the ledger's own accountant's, computed incrementally (dpgan.privacy.accounting.
    IncrementalAccountant: the composed PLD is kept and only the new steps are composed in), at
    the first step, then every REFRESH_SECONDS or, if longer, every COST_FACTOR times the last
    refresh's own duration (so the refreshes stay within 1/COST_FACTOR of the fit's time), and at
    the last step. Between the first and the last, PLD uses a grid 10× coarser than the ledger's
    (itself widened at small σ: a fixed 1e-3 was thousands of times finer than the ledger's at
    ε = 1e5 and took minutes, issue 49): about 10× faster, and since dp-accounting rounds
    pessimistically, still an upper bound (at most 0.3 % above the fine value, measured in
    bench/results/progress_accounting.md). The last value uses the ledger's own grid.
    """

    REFRESH_SECONDS = 2.0
    COST_FACTOR = 100.0
    PROGRESS_COARSENING = 10.0  # × the ledger's grid (1e-4, widened at small σ: pld_discretization)

    def __init__(
        self,
        progress: FitProgressFn | None,
        total: int,
        step: LedgerEntry,
        ledger: PrivacyLedger,
        budget: FitBudget,
    ) -> None:
        self.progress, self.total, self.ledger = progress, total, ledger
        self.step, self.prior, self.budget = step, list(ledger.entries), budget
        self.last_refresh = -math.inf
        self.last_cost = 0.0  # seconds the last refresh took (the first's one-off set-up left out)
        self.clock: Callable[[], float] = time.monotonic  # tests inject a clock
        self._running: IncrementalAccountant | None = None

    def __call__(self, step: int) -> None:
        if self.progress is None:
            return
        now = self.clock()
        interval = max(self.REFRESH_SECONDS, self.COST_FACTOR * self.last_cost)
        if step != 1 and step != self.total and now - self.last_refresh < interval:
            return
        if step == self.total:  # every step is charged: the ledger's own ε, which the fit then reuses
            spent = self.ledger.epsilon(self.budget.delta, self.budget.accountant)
        else:
            if self._running is None:
                # imported on the first refresh: the accountant's dp-accounting is a fit's, not a load's
                from dpgan.privacy.composition import IncrementalAccountant
                from dpgan.privacy.pld_accounting import coarsened, pld_discretization

                grid = coarsened(pld_discretization([*self.prior, self.step]), self.PROGRESS_COARSENING)
                budget = self.budget
                coarse = grid if budget.accountant == "pld" else None
                self._running = IncrementalAccountant(
                    self.prior, self.step, delta=budget.delta, accountant=budget.accountant, discretization=coarse
                )
            spent = self._running.epsilon_after(step)
        self.last_refresh = self.clock()
        if step != 1:  # the first call also builds the accountant: a one-off cost
            self.last_cost = self.last_refresh - now
        self.progress(step, self.total, spent)
